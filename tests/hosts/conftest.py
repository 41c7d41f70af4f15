"""The real-host suite (DESIGN 2.8, 6): the real Claude Code, Codex CLI, Gemini CLI, Qwen Code and Copilot CLI, at the versions
pinned in tests/hosts/package.json, drive the gate as `donegate install` writes it, against scripted model
servers on 127.0.0.1.

The CLIs live in .cache/hosts/node_modules/.bin (git-ignored; `.ci/run` installs them with `npm install` from the lock) or in
the folder named by DONEGATE_HOSTS_BIN. Where a CLI is missing these tests skip and say why; with
DONEGATE_REQUIRE_HOSTS=1 (set by `.ci/run`) a missing CLI is a failure.

Every scenario runs in a fresh temporary repository with a private HOME, XDG folders and gate state, an
environment without the machine's API keys or proxies, and PATH holding this checkout's `donegate`.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PINNED = json.loads((ROOT / "tests" / "hosts" / "package.json").read_text())["dependencies"]
BIN = Path(os.environ.get("DONEGATE_HOSTS_BIN") or ROOT / ".cache" / "hosts" / "node_modules" / ".bin")
VENV_BIN = Path(sys.executable).parent
CLI_NAMES = {"claude-code": "claude", "codex": "codex", "gemini": "gemini", "qwen": "qwen", "copilot": "copilot"}
PACKAGES = {"claude-code": "@anthropic-ai/claude-code", "codex": "@openai/codex", "gemini": "@google/gemini-cli",
            "qwen": "@qwen-code/qwen-code", "copilot": "@github/copilot"}
# Inherited variables a host run must not see: the machine's keys, proxies and the gate's own settings.
DROPPED_PREFIXES = ("DONEGATE_", "ANTHROPIC_", "CLAUDE_", "OPENAI_", "CODEX_", "GEMINI_", "GOOGLE_", "VERTEX", "QWEN_",
                    "COPILOT_")
DROPPED = {"GH_TOKEN", "GITHUB_TOKEN", "GH_HOST", "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
           "PYTEST_ADDOPTS", "PYTEST_CURRENT_TEST", "VIRTUAL_ENV", "PYTHONPATH"}

pytestmark = pytest.mark.hosts


def cli_path(host: str) -> Path:
    """The installed CLI of `host`, or a skip (a failure in CI) saying how to install it."""
    path = BIN / CLI_NAMES[host]
    if path.exists():
        return path
    why = (f"{CLI_NAMES[host]} ({PACKAGES[host]}@{PINNED[PACKAGES[host]]}) is not installed in {BIN}; "
           "install the pinned CLIs with: mkdir -p .cache/hosts && cp tests/hosts/package*.json .cache/hosts/ "
           "&& npm install --prefix .cache/hosts")
    if os.environ.get("DONEGATE_REQUIRE_HOSTS") == "1":
        pytest.fail(why + " (DONEGATE_REQUIRE_HOSTS=1: the real-host suite must run)")
    pytest.skip(why)


class HostWorld:
    """One scenario's world: a git repository under `tmp/work/repo`, a private HOME and state folder, and
    an environment for the host CLI (`env`) that reaches only 127.0.0.1."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.home = tmp / "home"
        self.state = tmp / "state"
        self.repo = tmp / "work" / "repo"
        self.marker = tmp / "check-runs"
        for folder in (self.home, self.state, self.repo):
            folder.mkdir(parents=True)
        env = {k: v for k, v in os.environ.items() if k not in DROPPED and not k.startswith(DROPPED_PREFIXES)}
        env.update({
            "HOME": str(self.home), "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"), "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "DONEGATE_STATE_DIR": str(self.state),
            "PATH": os.pathsep.join([str(VENV_BIN), str(BIN), os.environ.get("PATH", "/usr/bin:/bin")]),
            "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "host test", "GIT_AUTHOR_EMAIL": "host@example.invalid",
            "GIT_COMMITTER_NAME": "host test", "GIT_COMMITTER_EMAIL": "host@example.invalid",
            "TERM": "dumb", "NO_COLOR": "1", "CI": "true",
        })
        env.pop("GIT_CONFIG_GLOBAL", None)
        self.env = env
        (self.home / ".gitconfig").write_text("[user]\n\tname = host test\n\temail = host@example.invalid\n"
                                              "[init]\n\tdefaultBranch = main\n")

    # -- the repository --------------------------------------------------------------------------
    def git(self, *args: str, cwd: Path | None = None) -> str:
        done = subprocess.run(["git", *args], cwd=cwd or self.repo, env=self.env, capture_output=True, text=True)
        assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
        return done.stdout

    def write(self, rel: str, text: str) -> Path:
        path = self.repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def read(self, rel: str) -> str:
        return (self.repo / rel).read_text()

    def commit(self, message: str = "work") -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)

    def donegate(self, *args: str, cwd: Path | None = None, check: bool = True,
                 **env: str) -> subprocess.CompletedProcess:
        """This checkout's console script, run as the person would, in the world's environment."""
        done = subprocess.run([str(VENV_BIN / "donegate"), *args], cwd=cwd or self.repo, env={**self.env, **env},
                              capture_output=True, text=True, timeout=120)
        if check:
            assert done.returncode == 0, f"donegate {' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
        return done

    def check_runs(self) -> int:
        """How many times the acceptance check ran (verify.sh appends a line to the marker each run)."""
        return len(self.marker.read_text().splitlines()) if self.marker.exists() else 0

    def project(self, files: dict[str, str] | None = None) -> None:
        """A small Python project with a failing-until-fixed test, verify.sh that counts its runs, committed."""
        self.write("calc.py", "def add(a, b):\n    return a - b\n")
        self.write("tests/test_calc.py", "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
        self.write("verify.sh", "#!/bin/sh\nset -u\ncd \"$(dirname \"$0\")\"\n"
                                f"echo run >> '{self.marker}'\n"
                                f"exec '{sys.executable}' -m pytest -q -p no:cacheprovider tests\n")
        (self.repo / "verify.sh").chmod(0o755)
        for rel, text in (files or {}).items():
            self.write(rel, text)
        self.git("init", "-q")
        self.commit("start: add() is wrong")

    def install(self, host: str, *extra: str) -> subprocess.CompletedProcess:
        return self.donegate("install", "--host", host, *extra)


@pytest.fixture
def world(tmp_path) -> HostWorld:
    return HostWorld(tmp_path)


def run_cli(argv: list[str], world: HostWorld, *, cwd: Path | None = None, env: dict | None = None,
            timeout: float = 180, stdin: str | None = None) -> subprocess.CompletedProcess:
    """Run a host CLI to completion in the world (no terminal), with a time limit."""
    return subprocess.run(argv, cwd=cwd or world.repo, env={**world.env, **(env or {})}, capture_output=True,
                          text=True, timeout=timeout, input=stdin if stdin is not None else "")


SHIM = '''#!{python}
"""Stands in front of donegate on PATH: logs each hook call (argv, stdin, the host's session variables,
what donegate answered), then answers exactly as donegate does."""
import json, os, subprocess, sys
data = sys.stdin.buffer.read()
done = subprocess.run([{real!r}, *sys.argv[1:]], input=data, capture_output=True)
keep = {{k: v for k, v in os.environ.items() if k.startswith(("CLAUDE_", "CODEX_", "GEMINI_", "QWEN_", "COPILOT_"))
        and "KEY" not in k and "TOKEN" not in k or k == "DONEGATE_VERIFY_COMMAND"}}
try:
    payload = json.loads(data)
except ValueError:
    payload = data.decode("utf-8", "replace")
with open({log!r}, "a") as f:
    f.write(json.dumps({{"argv": sys.argv[1:], "cwd": os.getcwd(), "env": keep, "payload": payload,
                        "exit": done.returncode, "stdout": done.stdout.decode("utf-8", "replace"),
                        "stderr": done.stderr.decode("utf-8", "replace")}}) + "\\n")
sys.stdout.buffer.write(done.stdout)
sys.stderr.buffer.write(done.stderr)
sys.exit(done.returncode)
'''


def capture_hooks(world: HostWorld) -> Path:
    """Put a logging `donegate` in front of the real one on the world's PATH; returns the log (JSONL, one
    hook call a line). Settings that call `donegate` by name go through it."""
    shim_dir = world.tmp / "shim"
    shim_dir.mkdir(exist_ok=True)
    log = world.tmp / "hook-calls.jsonl"
    shim = shim_dir / "donegate"
    shim.write_text(SHIM.format(python=sys.executable, real=str(VENV_BIN / "donegate"), log=str(log)))
    shim.chmod(0o755)
    world.env["PATH"] = os.pathsep.join([str(shim_dir), world.env["PATH"]])
    return log


def hook_calls(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def relay_line(words: str) -> str:
    """The line a relay request (a hand-over on a run that shows the person no hook output) asks the agent to
    end its turn with."""
    import re
    return re.split(r"\(request \d+ of \d+\):", words, maxsplit=1)[1].strip().splitlines()[0]


def restore_advice(words: str) -> str:
    """The commands a disarmed stop's refusal tells the agent to run to restore the check."""
    return words.split("restore it (", 1)[1].split(")", 1)[0]


# The agent deleting the gate's state folder from its shell, the variable's name split so that no path names it
FORGET = "python3 -c \"import os, shutil; shutil.rmtree(os.environ['DONEGATE_STATE' + '_DIR'])\""


def assert_switch_reported(world: HostWorld, layer: str, doctor_says: str | None = None) -> None:
    """What a switch written beside the gate's hooks leaves, on every host: `status` exits 1 naming the settings
    file, and `doctor` says the arming moved from it (or `doctor_says`)."""
    after = world.donegate("status", check=False)
    assert after.returncode == 1 and layer in after.stdout, after.stdout
    doctor = world.donegate("doctor", check=False).stdout
    assert (doctor_says or f"arming moved {layer}") in doctor, doctor

