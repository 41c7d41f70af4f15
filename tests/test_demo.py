"""The five demo scenarios end the way the design predicts, on a temporary copy, leaving the checkout alone."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from donegate.demo import play, scenario_names
from donegate.trajectory import terminal_status, tool_calls
from donegate.trajectory_io import validate_checked

ROOT = Path(__file__).resolve().parent.parent

# scenario -> (terminal status, exit of the last stop, the gate's exits in order, first word of the last line)
PREDICTED = {
    "fix-bugs": ("verified", "passed", ["check_failed", "passed"], "VERIFIED"),
    "scope-conflict": ("yielded_unverified", "no_change", ["check_failed", "no_change"], "HANDED OVER"),
    "edit-tests": ("blocked", "no_change", ["protected", "no_change"], "REFUSED"),
    "syntax-error": ("verified", "passed", ["syntax_error", "passed"], "VERIFIED"),
    "chat-only": ("completed", "not_gated", ["not_gated"], "NOT VERIFIED"),
}
BYTECODE = ["bytecode-written", "bytecode-off"]
CASES = [pytest.param(name, mode, id=f"{name}-{mode}") for name in PREDICTED for mode in BYTECODE]


def checkout_state() -> tuple[str, list[str]]:
    """`git status --porcelain` of the checkout, and every file under demo/ (ignored ones included)."""
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    demo = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "demo").rglob("*"))
    return status, demo


class Played:
    def __init__(self, run, lines, before, after):
        self.run, self.lines, self.before, self.after = run, lines, before, after


@pytest.fixture(scope="module")
def played():
    """Each scenario played once per bytecode setting (PYTHONDONTWRITEBYTECODE unset, then set)."""
    cache: dict[tuple[str, str], Played] = {}

    def get(name: str, mode: str) -> Played:
        if (name, mode) not in cache:
            with pytest.MonkeyPatch.context() as mp:
                for var in [v for v in os.environ if v.startswith("DONEGATE_")]:
                    mp.delenv(var)
                if mode == "bytecode-written":
                    mp.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
                else:
                    mp.setenv("PYTHONDONTWRITEBYTECODE", "1")
                lines: list[str] = []
                before = checkout_state()
                run = play(name, out=lines.append)
                after = checkout_state()
            cache[name, mode] = Played(run, lines, before, after)
        return cache[name, mode]

    yield get
    for entry in cache.values():
        shutil.rmtree(entry.run.workdir, ignore_errors=True)


def test_every_scenario_has_a_prediction():
    assert scenario_names() == sorted(PREDICTED)


@pytest.mark.parametrize("name, mode", CASES)
def test_scenario_ends_with_the_status_and_exit_the_design_predicts(played, name, mode):
    run = played(name, mode).run
    assert (run.status, run.exit) == PREDICTED[name][:2]
    assert run.as_expected


@pytest.mark.parametrize("name, mode", CASES)
def test_scenario_takes_the_predicted_path_through_the_gate(played, name, mode):
    run = played(name, mode).run
    assert [v.exit for v in run.verdicts] == PREDICTED[name][2]


@pytest.mark.parametrize("name, mode", CASES)
def test_last_printed_line_states_the_outcome(played, name, mode):
    p = played(name, mode)
    word = PREDICTED[name][3]
    assert p.lines[-1] == p.run.last_line
    assert p.lines[-1].startswith(f"{word}: ")
    assert p.lines[-1].endswith(f"(status {PREDICTED[name][0]}).")


@pytest.mark.parametrize("name, mode", CASES)
def test_scenario_trajectory_validates_and_records_the_predicted_ending(played, name, mode):
    run = played(name, mode).run
    result = validate_checked(run.trajectory)
    assert result.ok, result.problems
    assert terminal_status(result) == run.status == PREDICTED[name][0]


@pytest.mark.parametrize("name, mode", CASES)
def test_playing_leaves_the_checkout_untouched(played, name, mode):
    p = played(name, mode)
    assert p.after == p.before
    assert not Path(p.run.workdir).resolve().is_relative_to(ROOT)


def test_scope_conflict_makes_no_edit_after_the_block(played):
    run = played("scope-conflict", "bytecode-written").run
    result = validate_checked(run.trajectory)
    gate_at = min(e.seq for e in result.events if e.type == "gate_decision")
    edits_after = [c for c in tool_calls(result) if c.tool in ("edit", "write") and c.requested.seq > gate_at]
    assert edits_after == []
    assert "HANDED OVER UNVERIFIED" in run.verdicts[-1].message


def test_donegate_demo_command_plays_fix_bugs_and_exits_0(tmp_path):
    uv = shutil.which("uv")
    command = ([uv, "run", "--no-sync", "donegate"] if uv else
               [sys.executable, "-c", "import sys; from donegate.cli import main; sys.exit(main())"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("DONEGATE_")}
    env["TMPDIR"] = str(tmp_path)
    done = subprocess.run([*command, "demo", "fix-bugs"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().splitlines()[-1].startswith("VERIFIED: ")
    assert list(tmp_path.glob("donegate-demo-*")) == []


def test_syntax_error_last_line_says_the_work_was_verified_after_repair():
    run = play("syntax-error", out=None)
    try:
        assert run.last_line.startswith("VERIFIED") and "syntax error" in run.last_line and "repaired" in run.last_line
    finally:
        shutil.rmtree(run.workdir, ignore_errors=True)


def test_the_goal_recording_shows_what_the_readme_and_chapter_08_say():
    """demo/hosts/claude-code/goal.json (tests/hosts/capture_goal.py): a judge doing what its prompt asks refuses a
    bare claim and is met by a passing run after the fix; a test weakened first meets it too, on wrong code; the
    gate refuses that stop and the turn ends right."""
    goal = json.loads((ROOT / "demo" / "hosts" / "claude-code" / "goal.json").read_text())
    runs = {(r["scenario"], r["gate"]): r for r in goal["runs"]}
    ok = {key: [json.loads(a)["ok"] for a in r["judge"]["answered"]] for key, r in runs.items()}
    bare, weak = "a claim with no test run", "a test weakened, then a passing run"
    assert ok[bare, False] == [False, True] and "a + b" in runs[bare, False]["calc.py"]
    assert ok[weak, False] == [True] and "a * b" in runs[weak, False]["calc.py"] and "== 6" in runs[weak, False]["test"]
    assert [s["exit"] for s in runs[weak, True]["stops"]] == [2, 0] and ok[weak, True][0] is True
    assert "a + b" in runs[weak, True]["calc.py"] and "== 5" in runs[weak, True]["test"]
    assert all(r["judge"]["tools"] == [] for r in goal["runs"])
