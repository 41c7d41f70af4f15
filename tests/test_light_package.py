"""The light package (DESIGN 2.8, 6): the wheel alone, installed into an empty environment, is the gate.

The wheel is built from this checkout (`uv build --no-build-isolation --offline`: hatchling comes from the
locked environment, nothing is downloaded) and installed by itself into a fresh virtual environment. The
hook calls the real hosts made (demo/hosts/) are then sent to that environment's `donegate hook` in one
repository and to the workbook's gate (in this process) in a twin repository, with the same edits in
between: every answer must agree. `install`, `doctor`, `status` and `audit` run from it too, and a
command of the workbook says what to install instead of failing on an import.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from donegate.cli import COMMANDS, WORKBOOK_MODULES
from donegate.doctor import captured_calls
from donegate.realhosts import run_hook

ROOT = Path(__file__).resolve().parent.parent
HOSTS = ROOT / "demo" / "hosts"
TRANSCRIPTS = ROOT / "demo" / "transcripts"
EVENTS = {"session-start", "user-prompt", "stop", "pre-tool-use"}  # the events `install` asks every host for
WRONG = ["def add(a, b):\n    return a - b + %d\n" % n for n in range(1, 9)]
RIGHT = "def add(a, b):\n    return a + b\n"


@pytest.fixture(autouse=True)
def hermetic(hermetic_gate):
    """Every test runs in the isolated environment of conftest.hermetic_gate."""


@pytest.fixture(scope="module")
def light(tmp_path_factory) -> Path:
    """The bin folder of a fresh virtual environment holding the wheel and nothing else."""
    uv = shutil.which("uv")
    if uv is None:
        pytest.fail("uv is not on PATH: it builds and installs the wheel (.ci/run installs it)")
    tmp = tmp_path_factory.mktemp("light")

    def run(*args) -> None:
        done = subprocess.run([uv, *map(str, args)], cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 0, f"uv {' '.join(map(str, args))}:\n{done.stdout}{done.stderr}"

    run("build", "--wheel", "--no-build-isolation", "--offline", "-q", "-o", tmp / "dist")
    (wheel,) = (tmp / "dist").glob("donegate-*.whl")
    run("venv", "-q", "--offline", "--python", sys.executable, tmp / "venv")
    run("pip", "install", "-q", "--offline", "--python", tmp / "venv" / "bin" / "python", wheel)
    return tmp / "venv" / "bin"


def gate_env(state: Path, extra: dict | None = None) -> dict:
    return {**os.environ, "DONEGATE_STATE_DIR": str(state), **(extra or {})}


def test_the_wheel_requires_nothing_and_its_environment_holds_nothing_else(light):
    site = next((light.parent / "lib").glob("python*/site-packages"))
    installed = sorted(p.name for p in site.iterdir() if not p.name.startswith(("_virtualenv", "__pycache__")))
    assert [n for n in installed if not n.startswith("donegate")] == [], installed
    dist = next(site.glob("donegate-*.dist-info"))
    assert "Requires-Dist" not in (dist / "METADATA").read_text()
    probe = subprocess.run([light / "python", "-c", "import importlib.util as u; import sys; "
                            f"print([m for m in {list(WORKBOOK_MODULES)!r} if u.find_spec(m)])"],
                           capture_output=True, text=True)
    assert probe.stdout.strip() == "[]", probe  # the workbook really is absent there
    worded = subprocess.run([light / "python", "-c", "from donegate.trajectory_io import read_events; problems = []; "
                             "read_events(b'{\"v\": 1}\\n', problems); print(problems[0].message)"],
                            capture_output=True, text=True)
    assert worded.returncode == 0 and "does not match the event schema" in worded.stdout, worded  # no jsonschema needed


def test_the_workbook_modules_are_the_workbook_dependency_group():
    import tomllib
    group = tomllib.loads((ROOT / "pyproject.toml").read_text())["dependency-groups"]["workbook"]
    names = sorted(spec.split(">")[0].split("=")[0].split("[")[0].strip() for spec in group)
    assert names == sorted(WORKBOOK_MODULES)


class Twin:
    """A committed project (calc.add wrong, its test, a verify.sh that checks it with grep) standing where a
    real session's repository stood, under `base`."""

    def __init__(self, base: Path, calls: list[dict], repo: Path) -> None:
        self.base, self.calls, self.repo = base, calls, repo
        repo.mkdir(parents=True)
        (base / "notes").mkdir(exist_ok=True)
        self.write("calc.py", "def add(a, b):\n    return a - b\n")
        self.write("tests/test_calc.py", "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
        self.write("verify.sh", "#!/bin/sh\ncd \"$(dirname \"$0\")\"\n"
                                "grep -q 'return a + b$' calc.py || { echo 'FAILED tests/test_calc.py::test_add'; exit 1; }\n")
        (repo / "verify.sh").chmod(0o755)
        for args in (("init", "-q"), ("add", "-A"), ("commit", "-q", "-m", "start")):
            subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)

    def write(self, rel: str, text: str) -> None:
        (self.repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (self.repo / rel).write_text(text)


def shape(code: int, stdout: str) -> tuple:
    """What a host acts on in an answer: the exit code and the decision fields of its JSON."""
    data = json.loads(stdout) if stdout.strip() else {}
    specific = data.get("hookSpecificOutput") or {}
    return (code, data.get("decision"), data.get("continue"), specific.get("permissionDecision"),
            "systemMessage" in data, "HANDED OVER UNVERIFIED" in json.dumps(data))


SCENARIOS = sorted(f"{p.parent.name}/{p.stem}" for p in HOSTS.glob("*/*.jsonl")
                   if p.stem in ("fix-after-refusal", "budget", "chat-only", "protected-test", "test-edit-denied"))


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_wheel_answers_every_recorded_host_call_as_the_workbook_gate_does(light, tmp_path, name):
    answers = {}
    for side in ("wheel", "workbook"):
        base = tmp_path / side
        calls = [c for c in captured_calls(HOSTS / f"{name}.jsonl", base) if c["event"] in EVENTS]
        repo = Path(next(c for c in calls if c["event"] == "session-start")["payload"]["cwd"])
        twin, state, got = Twin(base, calls, repo), tmp_path / f"{side}-state", []
        stops = [i for i, c in enumerate(calls) if c["event"] == "stop"]
        for i, call in enumerate(calls):
            if i in stops and not name.endswith("chat-only"):
                twin.write("calc.py", RIGHT if i == stops[-1] and "fix" in name else WRONG[stops.index(i)])
            env = {**call["env"], "DONEGATE_STATE_DIR": str(state)}
            raw = json.dumps(call["payload"])
            if side == "wheel":
                done = subprocess.run([light / "donegate", "hook", call["event"], "--host", call["host"]],
                                      input=raw, capture_output=True, text=True, env=gate_env(state, call["env"]))
                got.append(shape(done.returncode, done.stdout))
            else:
                answer = run_hook(call["event"], raw, call["host"], env=env)
                got.append(shape(answer.exit_code, answer.stdout))
        status = subprocess.run([light / "donegate", "status", "--repo", repo], capture_output=True, text=True,
                                env=gate_env(state))
        answers[side] = (got, status.returncode)
    assert answers["wheel"] == answers["workbook"]
    got, status = answers["wheel"]
    blocked = [a for a in got if a[1] in ("block", "deny") or a[3] == "deny"]  # Gemini refuses a stop with deny
    if name.endswith(("fix-after-refusal", "budget", "protected-test", "test-edit-denied")):
        assert blocked, got  # the replay reached the gate's refusals, not only its allows
    if name.endswith("fix-after-refusal"):
        assert status == 0
    if name.endswith("budget"):
        assert status == 1 and any(a[5] for a in got)


def test_install_doctor_init_status_and_ledger_run_from_the_wheel(light, tmp_path):
    repo, state, home = tmp_path / "repo", tmp_path / "state", tmp_path / "home"
    repo.mkdir()
    home.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    env = gate_env(state, {"HOME": str(home), "PATH": f"{light}{os.pathsep}{os.environ['PATH']}"})

    def donegate(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([light / "donegate", *args], cwd=repo, capture_output=True, text=True, env=env)

    assert donegate("init").returncode == 0 and (repo / "verify.sh").exists()
    for host in ("claude-code", "codex", "gemini"):
        done = donegate("install", "--host", host, "--trust")
        assert done.returncode == 0, done.stderr
    doctor = donegate("doctor")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert doctor.stdout.count("installed and active") == 3, doctor.stdout  # `donegate` on PATH is the wheel's
    assert donegate("status").returncode == 2  # no session seen here yet
    assert donegate("ledger").returncode == 0


@pytest.mark.parametrize("host", ["claude-code", "codex", "gemini"])
def test_the_audit_from_the_wheel_gives_the_expected_verdicts(light, tmp_path, host):
    """The wheel's `donegate audit` command on one session, then the wheel's own audit on every scenario of the host,
    in one process of the wheel's environment (a process per scenario would pay for Python's start each time)."""
    expected = json.loads((TRANSCRIPTS / "expected.json").read_text())
    paths = {scenario: str(next((TRANSCRIPTS / host / scenario).rglob("*.json*"))) for scenario in expected}
    done = subprocess.run([light / "donegate", "audit", paths["supported"], "--html", tmp_path / "supported.html"],
                          capture_output=True, text=True)
    assert done.returncode == 0 and "SUPPORTED" in done.stdout, (done.stdout, done.stderr)
    assert (tmp_path / "supported.html").stat().st_size > 0
    every = ("import contextlib, io, json, sys\nfrom donegate.transcripts import audit_command\n"
             "paths, out = json.loads(sys.argv[1]), sys.argv[2]\ncodes = {}\n"
             "for name, path in paths.items():\n"
             "    with contextlib.redirect_stdout(io.StringIO()):\n"
             "        codes[name] = audit_command(path, html=f'{out}/{name}.html')\n"
             "print(json.dumps(codes))\n")
    done = subprocess.run([light / "python", "-c", every, json.dumps(paths), str(tmp_path)], capture_output=True,
                          text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    codes = json.loads(done.stdout.splitlines()[-1])
    assert codes == {scenario: {**want, **want.get(host, {})}["exit"] for scenario, want in expected.items()}
    assert all((tmp_path / f"{scenario}.html").stat().st_size > 0 for scenario in expected)


RUNS = {"check": ["labs/lab01-fail-open-hooks/lab01-fail-open-hooks.ipynb"], "start": ["lab01"],
        "release": ["lab01-fail-open-hooks", "--overwrite-labs"], "recall": ["recall02"], "trajectory": ["validate", "demo/trajectories/verified-fix.jsonl"],
        "review": ["--diff", "demo/review/0001-bulk-discount.patch", "--findings", "demo/review/findings-0001-mixed.json"],
        "demo": ["chat-only"], "collect": ["lab04-averaged-scores", "submissions.zip"]}
# what each command needs to get to its work in a checkout; the gate's commands have tests of their own above
TRIED = """import sys
from donegate.cli import COMMANDS, build_parser, load
args = vars(build_parser().parse_args(sys.argv[1:]))
try:
    code = load(COMMANDS[args.pop("_command")].target)(**args)
except ModuleNotFoundError as missing:
    print("needs", missing.name)
    sys.exit(3)
"""


def test_a_command_says_it_needs_the_workbook_exactly_when_it_does(light, tmp_path):
    """Each command of the workbook is run from the wheel, past the check that would stop it, in a clone of this
    checkout: one that gets through on the standard library must be marked light (`workbook=False`), and one
    that does not must be marked as the workbook's, whatever the list of modules says."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", ROOT, clone], check=True)
    for name, command in COMMANDS.items():
        if name in ("hook", "install", "init", "doctor", "ledger", "status", "audit"):
            continue
        done = subprocess.run([light / "python", "-c", TRIED, name, *RUNS.get(name, [])], cwd=clone,
                              capture_output=True, text=True, timeout=120)
        needs = done.returncode == 3 or "No module named" in done.stderr  # `lab` starts JupyterLab as a child
        assert needs == command.workbook, (name, done.returncode, done.stdout[-800:], done.stderr[-800:])
        assert needs or done.returncode == 0, (name, done.stdout[-800:], done.stderr[-800:])  # it did its work


def test_a_workbook_command_from_the_wheel_says_what_to_install(light, tmp_path):
    for name, command in COMMANDS.items():
        if not command.workbook:
            continue
        done = subprocess.run([light / "donegate", name, *RUNS.get(name, [])],
                              cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 2, (name, done)
        assert "this donegate is the gate alone" in done.stderr and "uv run donegate" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
