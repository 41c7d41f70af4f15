"""The hook calls the real hosts made, replayed on the gate (DESIGN 2.8).

Each file in demo/hosts/<host>/ is the sequence of hook calls one real CLI made in one scenario of the
real-host suite (tests/hosts/), captured by a logging stand-in for `donegate` (tests/hosts/capture_*.py
writes them again): the arguments, the host's session variables and the JSON payload, with the
temporary folders replaced by neutral ones. Here each sequence is fed to `run_hook` in a real temporary
git repository, with the edits the model made in between done again, so every fact the real hosts
showed is pinned without starting a CLI.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from donegate.doctor import captured_calls
from donegate.realhosts import run_hook
from donegate.quickstop import quick_tool

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "demo" / "hosts"
EVENTS = {"SessionStart", "UserPromptSubmit", "BeforeAgent", "PreToolUse", "BeforeTool", "Stop", "AfterAgent",
          "StopFailure", "sessionStart", "userPromptSubmitted", "preToolUse", "agentStop"}
WRONG = ["def add(a, b):\n    return a - b + %d\n" % n for n in range(1, 9)]
RIGHT = "def add(a, b):\n    return a + b\n"


@pytest.fixture(autouse=True)
def hermetic(hermetic_gate):
    """Every test runs in the isolated environment of conftest.hermetic_gate."""


class Replay:
    """A committed project (calc.add wrong, its test, verify.sh counting its runs) standing where the real
    session's repository stood; `play` sends the fixture's hook calls, with their paths moved here, in order."""

    def __init__(self, tmp: Path, name: str) -> None:
        self.base = tmp / "w"
        self.calls = [c for c in captured_calls(FIXTURES / f"{name}.jsonl", self.base) if c["name"] in EVENTS]
        self.repo = Path(next(c for c in self.calls if c["event"] == "session-start")["payload"]["cwd"])
        self.state = tmp / "state"
        self.marker = tmp / "runs"
        self.repo.mkdir(parents=True)
        self.write("calc.py", "def add(a, b):\n    return a - b\n")
        self.write("tests/test_calc.py", "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
        self.write("verify.sh", f"#!/bin/sh\ncd \"$(dirname \"$0\")\"\necho run >> '{self.marker}'\n"
                                f"exec '{sys.executable}' -m pytest -q -p no:cacheprovider tests\n")
        (self.repo / "verify.sh").chmod(0o755)
        (self.base / "notes").mkdir()
        self.git("init", "-q")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "start")
        self.answers: list = []
        self.quick = 0  # tool calls the quick path answered

    def write(self, rel: str, text: str, where: Path | None = None) -> None:
        path = (where or self.repo) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def git(self, *args: str, cwd: Path | None = None) -> str:
        done = subprocess.run(["git", *args], cwd=cwd or self.repo, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def runs(self) -> int:
        return len(self.marker.read_text().splitlines()) if self.marker.exists() else 0

    def play(self, before: dict[int, Callable[[], None]] | None = None) -> list:
        """Send every call in order, doing `before[i]()` first where given; returns (event, answer) pairs."""
        for i, call in enumerate(self.calls):
            if before and i in before:
                before[i]()
            env = {**call["env"], "DONEGATE_STATE_DIR": str(self.state)}
            raw = json.dumps(call["payload"])
            quick = quick_tool(call["host"], raw.encode(), env) if call["event"] == "pre-tool-use" else None
            answer = run_hook(call["event"], raw, call["host"], env=env)
            # the tool hook's quick path answers the real hosts' calls as the gate does, or leaves them to it
            assert quick is None or quick == (answer.exit_code, answer.stdout, answer.stderr), (call, answer)
            self.quick += quick is not None
            self.answers.append((call["name"], answer))
        return self.answers

    def indexes(self, event: str) -> list[int]:
        return [i for i, c in enumerate(self.calls) if c["payload"]["hook_event_name"] == event]

    def status(self, capsys) -> tuple[int, str]:
        from donegate.realhosts import status_command
        os.environ["DONEGATE_STATE_DIR"] = str(self.state)  # hermetic_gate's monkeypatch restores it
        code = status_command(str(self.repo))
        return code, capsys.readouterr().out


def stop_verdicts(answers) -> list:
    return [a.verdict for event, a in answers if event in ("Stop", "AfterAgent")]


# -- fact 2: Gemini's continuations are one stretch ----------------------------------------------

def test_gemini_refusals_are_counted_across_its_continuations(tmp_path):
    """Real sequence: BeforeAgent (user prompt), then per refusal AfterAgent with stop_hook_active false and a
    BeforeAgent whose prompt is the gate's own refusal. Five new wrong fixes: 3 refusals, then a hand-over."""
    replay = Replay(tmp_path, "gemini/budget")
    stops = replay.indexes("AfterAgent")
    assert len(stops) >= 5
    edits = {i: (lambda n=n: replay.write("calc.py", WRONG[n])) for n, i in enumerate(stops[:-1])}
    verdicts = stop_verdicts(replay.play(edits))
    assert [v.attempt for v in verdicts[:3]] == [1, 2, 3]
    assert [v.action for v in verdicts] == ["block"] * 3 + ["allow"] * (len(verdicts) - 3)
    assert verdicts[3].exit == "budget" and verdicts[3].status == "yielded_unverified"
    assert "HANDED OVER UNVERIFIED" in json.loads(replay.answers[-1][1].stdout)["systemMessage"]


def test_a_new_user_prompt_on_gemini_still_starts_a_new_stretch(tmp_path):
    replay = Replay(tmp_path, "gemini/budget")
    stops = replay.indexes("AfterAgent")
    edits = {i: (lambda n=n: replay.write("calc.py", WRONG[n])) for n, i in enumerate(stops[:-1])}
    replay.play(edits)
    call = replay.calls[replay.indexes("BeforeAgent")[0]]
    payload = {**call["payload"], "prompt": "Now make add() handle floats too."}
    env = {"DONEGATE_STATE_DIR": str(replay.state)}
    assert run_hook("user-prompt", json.dumps(payload), "gemini", env=env).exit_code == 0
    replay.write("calc.py", WRONG[7])
    stop = replay.calls[stops[0]]["payload"]
    verdict = run_hook("stop", json.dumps(stop), "gemini", env=env).verdict
    assert (verdict.action, verdict.attempt) == ("block", 1)


# -- fact 1: the repository is the session's, not the shell's -------------------------------------

def test_after_cd_into_an_added_folder_the_test_edit_is_denied_and_the_stop_gated(tmp_path):
    """Claude Code sent cwd = the --add-dir folder after the agent's `cd`."""
    replay = Replay(tmp_path, "claude-code/add-dir-cd")
    stops = replay.indexes("Stop")
    answers = replay.play({stops[0]: lambda: replay.write("calc.py", WRONG[0])})
    tool_answers = [a for e, a in answers if e == "PreToolUse"]
    edits = [i for i in replay.indexes("PreToolUse") if replay.calls[i]["payload"]["tool_name"] == "Edit"]
    assert edits and all(replay.calls[i]["payload"]["cwd"].endswith("/notes") for i in edits)
    denied = [json.loads(a.stdout)["hookSpecificOutput"]["permissionDecision"] for a in tool_answers[1:] if a.stdout]
    assert "deny" in denied
    first = stop_verdicts(answers)[0]
    assert (first.action, first.exit) == ("block", "check_failed")
    assert replay.runs() == 1


def test_work_in_a_worktree_the_session_went_into_is_gated(tmp_path):
    """Claude Code's worktree: the session's cwd becomes .claude/worktrees/NAME, a linked worktree."""
    replay = Replay(tmp_path, "claude-code/worktree")
    tool = replay.indexes("PreToolUse")[0]
    worktree = Path(replay.calls[tool]["payload"]["cwd"])

    def enter() -> None:
        replay.git("worktree", "add", "-q", "-b", "fix-add", str(worktree))

    def wrong_fix() -> None:
        replay.write("calc.py", "def add(a, b):\n    return a * b\n", where=worktree)

    answers = replay.play({tool: enter, replay.indexes("Stop")[0]: wrong_fix})
    first = stop_verdicts(answers)[0]
    assert (first.action, first.exit) == ("block", "check_failed")
    assert "test_add" in first.message


def test_a_session_whose_start_was_missed_uses_the_project_dir(tmp_path):
    replay = Replay(tmp_path, "claude-code/add-dir-cd")
    replay.calls = [c for c in replay.calls if c["payload"]["hook_event_name"] != "SessionStart"]
    stops = replay.indexes("Stop")
    first = stop_verdicts(replay.play({stops[0]: lambda: replay.write("calc.py", WRONG[0])}))[0]
    assert (first.action, first.exit) == ("block", "check_failed")  # from notes/, by CLAUDE_PROJECT_DIR


# -- fact 6: a fork does not start clean on its parent's refused change ---------------------------

def test_a_forked_session_carries_its_parents_unverified_change(tmp_path, capsys):
    replay = Replay(tmp_path, "claude-code/fork")
    first_stop = replay.indexes("Stop")[0]
    answers = replay.play({first_stop: lambda: replay.write("calc.py", WRONG[0])})
    starts = [a for e, a in answers if e == "SessionStart"]
    assert json.loads(starts[1].stdout)["systemMessage"].startswith("[donegate] The last session here")
    last = stop_verdicts(answers)[-1]
    assert last.status == "yielded_unverified" and last.exit == "no_change"
    assert "HANDED OVER UNVERIFIED" in json.loads(answers[-1][1].stdout)["systemMessage"]
    code, out = replay.status(capsys)
    assert code == 1 and out.startswith("unverified")


# -- fact 7: an end without a stop is recorded -----------------------------------------------------

def test_a_stop_failure_is_recorded_and_status_says_unverified(tmp_path, capsys):
    replay = Replay(tmp_path, "claude-code/stop-failure")
    failure = replay.indexes("StopFailure")[0]
    replay.play({failure: lambda: replay.write("calc.py", WRONG[0])})
    code, out = replay.status(capsys)
    assert code == 1
    assert "unverified" in out and "error" in out and "server_error" in out


def test_a_turn_that_ends_without_any_stop_is_unverified(tmp_path, capsys):
    """--max-turns: no Stop and no StopFailure; the edit is there, the turn was opened by a prompt."""
    replay = Replay(tmp_path, "claude-code/stop-failure")
    replay.calls = [c for c in replay.calls if c["payload"]["hook_event_name"] != "StopFailure"]
    replay.play()
    replay.write("calc.py", WRONG[0])
    code, out = replay.status(capsys)
    assert code == 1 and "without a stop decision" in out


def test_status_after_a_verified_turn_exits_0(tmp_path, capsys):
    replay = Replay(tmp_path, "claude-code/fix-after-refusal")
    stops = replay.indexes("Stop")
    answers = replay.play({stops[0]: lambda: replay.write("calc.py", WRONG[0]),
                           stops[-1]: lambda: replay.write("calc.py", RIGHT)})
    assert stop_verdicts(answers)[-1].exit == "passed"
    code, out = replay.status(capsys)
    assert code == 0 and out.startswith("verified")


def test_status_after_a_chat_only_turn_exits_0(tmp_path, capsys):
    replay = Replay(tmp_path, "claude-code/chat-only")
    replay.play()
    assert replay.runs() == 0
    assert replay.status(capsys)[0] == 0


def test_status_where_no_session_ran_exits_2(tmp_path, capsys):
    replay = Replay(tmp_path, "claude-code/chat-only")
    code, out = replay.status(capsys)
    assert code == 2 and "no gated session" in out


# -- the other hosts' sequences, as captured --------------------------------------------------------

@pytest.mark.parametrize("name", ["codex/fix-after-refusal", "gemini/fix-after-refusal",
                                  "claude-code/fix-after-refusal"])
def test_a_wrong_fix_is_refused_and_the_right_one_passes(tmp_path, name):
    replay = Replay(tmp_path, name)
    stop_event = "AfterAgent" if name.startswith("gemini") else "Stop"
    stops = replay.indexes(stop_event)
    verdicts = stop_verdicts(replay.play({stops[0]: lambda: replay.write("calc.py", WRONG[0]),
                                          stops[-1]: lambda: replay.write("calc.py", RIGHT)}))
    assert verdicts[0].exit == "check_failed" and verdicts[-1].exit == "passed"
    assert replay.runs() == 2


@pytest.mark.parametrize("name", ["codex/test-edit-denied", "gemini/test-edit-denied",
                                  "claude-code/protected-test"])
def test_the_hosts_own_file_tool_on_a_test_is_denied(tmp_path, name):
    replay = Replay(tmp_path, name)
    answers = replay.play()
    tools = [(c["payload"], a) for c, (e, a) in zip(replay.calls, answers) if e in ("PreToolUse", "BeforeTool")]
    on_test = [a for p, a in tools if "test_calc.py" in json.dumps(p.get("tool_input"))
               and p.get("tool_name") not in ("Bash", "run_shell_command", "exec_command", "shell")]
    assert on_test, "the fixture holds a file-tool call on the test"
    for answer in on_test:
        out = json.loads(answer.stdout)
        assert "deny" in (out.get("decision"), out.get("hookSpecificOutput", {}).get("permissionDecision"))


# -- facts 8 and 9: the check's environment --------------------------------------------------------

def test_the_check_runs_without_model_keys_and_without_writing_bytecode(tmp_path, monkeypatch):
    from donegate.stopgate import run_check
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.setenv(name, "sk-secret")
    seen = run_check("env", tmp_path, 10).output
    assert "sk-secret" not in seen and "PYTHONDONTWRITEBYTECODE=1" in seen


def test_two_same_size_edits_within_a_second_are_both_checked_afresh(tmp_path, monkeypatch):
    """A stale .pyc (same size, same second) made a correct fix fail; the check writes no bytecode."""
    from donegate.stopgate import run_check
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    (tmp_path / "m.py").write_text("X = 1\n")
    check = f"'{sys.executable}' -c 'import m; assert m.X == 2, m.X'"
    first = run_check(check, tmp_path, 30)
    stamp = os.stat(tmp_path / "m.py")
    (tmp_path / "m.py").write_text("X = 2\n")
    os.utime(tmp_path / "m.py", ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # same size, same time
    assert not first.passed and run_check(check, tmp_path, 30).passed


# -- deliver 4: the gate that hosts run stays light ----------------------------------------------

def test_the_gate_depends_on_no_agent_and_no_book_setup():
    import donegate.realhosts as realhosts
    import donegate.stopgate as stopgate
    import donegate.treestate as treestate
    for module in (treestate, stopgate, realhosts):
        source = Path(module.__file__).read_text()
        assert "donegate.agent" not in source and "donegate.setup" not in source and not hasattr(module, "play")
    code = ("import sys, donegate.realhosts; "
            "print(sorted(m for m in sys.modules if m.startswith('donegate')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert eval(done.stdout) == ["donegate", "donegate.hosts", "donegate.realhosts", "donegate.stopgate",
                                 "donegate.treestate"]


@pytest.mark.parametrize("echo", ["{refusal}", "<hook_prompt id=\"stop:1\">{escaped}</hook_prompt>",
                                  "The stop hook said:\n{refusal}"])
def test_the_gates_own_refusal_sent_back_as_a_prompt_does_not_reset_the_count(tmp_path, echo):
    """However a host wraps the refusal it feeds back (as is, escaped inside a tag, quoted), it is no new prompt;
    a short real prompt that happens to occur in the refusal text still is."""
    import html
    replay = Replay(tmp_path, "claude-code/fix-after-refusal")
    replay.calls = replay.calls[:2]  # SessionStart, UserPromptSubmit
    replay.play()
    env = {"DONEGATE_STATE_DIR": str(replay.state)}
    stop = {**replay.calls[1]["payload"], "hook_event_name": "Stop", "stop_hook_active": False}
    attempts = []
    for n in range(3):
        replay.write("calc.py", WRONG[n])
        verdict = run_hook("stop", json.dumps(stop), "claude-code", env=env).verdict
        attempts.append(verdict.attempt)
        prompt = echo.format(refusal=verdict.message, escaped=html.escape(verdict.message))
        run_hook("user-prompt", json.dumps({**replay.calls[1]["payload"], "prompt": prompt}), "claude-code", env=env)
    assert attempts == [1, 2, 3]
    run_hook("user-prompt", json.dumps({**replay.calls[1]["payload"], "prompt": "Fix"}), "claude-code", env=env)
    replay.write("calc.py", WRONG[4])
    assert run_hook("stop", json.dumps(stop), "claude-code", env=env).verdict.attempt == 1


# -- fact 5: a rewrite carries no permission decision -----------------------------------------------

def test_the_no_verify_rewrite_leaves_the_permission_to_the_host(tmp_path):
    """The real Claude Code call, in acceptEdits mode: `git commit --no-verify -am x` through Bash."""
    replay = Replay(tmp_path, "claude-code/no-verify")
    answers = replay.play()
    commits = [(c["payload"], a) for c, (e, a) in zip(replay.calls, answers)
               if e == "PreToolUse" and "--no-verify" in str(c["payload"]["tool_input"].get("command"))]
    assert commits and commits[0][0]["permission_mode"] == "acceptEdits"
    spec = json.loads(commits[0][1].stdout)["hookSpecificOutput"]
    assert spec["updatedInput"]["command"] == "git commit -am x"
    assert "permissionDecision" not in spec


def test_the_quick_tool_path_answers_most_real_tool_calls(tmp_path):
    """Across every recording, most of the real hosts' tool calls are plain and answered at once."""
    answered = total = 0
    for fixture in sorted(FIXTURES.glob("*/*.jsonl")):
        replay = Replay(tmp_path / fixture.parent.name / fixture.stem, f"{fixture.parent.name}/{fixture.stem}")
        replay.play()
        answered += replay.quick
        total += sum(1 for c in replay.calls if c["event"] == "pre-tool-use")
    assert total > 30 and answered >= total // 2, (answered, total)


# -- Qwen Code and Copilot CLI -----------------------------------------------------------------------

def test_qwen_s_empty_prompts_between_tool_calls_do_not_restart_the_budget(tmp_path):
    """Qwen Code sends UserPromptSubmit with prompt "" on each continuation after a tool call (and the refusal as
    the prompt after a refused stop): neither is a person asking, so four wrong fixes are still 3 refusals and a
    hand-over."""
    replay = Replay(tmp_path, "qwen/budget")
    stops = [i for i, c in enumerate(replay.calls) if c["event"] == "stop"]
    prompts = [c["payload"].get("prompt") for c in replay.calls if c["event"] == "user-prompt"]
    assert "" in prompts  # the recording holds the empty continuations this test is about
    edits = {i: (lambda n=n: replay.write("calc.py", WRONG[n])) for n, i in enumerate(stops)}
    verdicts = stop_verdicts(replay.play(edits))
    assert [v.action for v in verdicts] == ["block"] * 3 + ["allow"]
    assert verdicts[-1].exit == "budget"


def test_copilot_s_camel_case_payloads_are_read_and_its_refusal_is_json_on_exit_0(tmp_path):
    replay = Replay(tmp_path, "copilot/fix-after-refusal")
    stops = [i for i, c in enumerate(replay.calls) if c["event"] == "stop"]
    assert "session_id" not in replay.calls[stops[0]]["payload"]  # sessionId, transcriptPath ...
    answers = replay.play({stops[0]: lambda: replay.write("calc.py", WRONG[0]), stops[1]: lambda: replay.write("calc.py", RIGHT)})
    first, second = [a for e, a in answers if e == "agentStop"]
    assert first.exit_code == 0 and json.loads(first.stdout)["decision"] == "block"
    assert (first.verdict.exit, second.verdict.status) == ("check_failed", "verified")
    tool = next(a for e, a in answers if e == "preToolUse")
    assert tool.exit_code == 0  # an edit of calc.py: allowed


@pytest.mark.parametrize("name, edit_during", [("claude-code/fix-after-refusal", True), ("claude-code/chat-only", False)])
def test_status_is_1_when_the_tree_changed_after_the_last_verified_state(tmp_path, capsys, name, edit_during):
    """A passing stop (or a turn that changed nothing), then a file changed outside any gated turn (a job the
    session left running, say): the tree as it is now is no state the check passed on, so status is 1, naming
    the change; a script reading the exit code does not see success."""
    replay = Replay(tmp_path, name)
    stops = replay.indexes("Stop")
    replay.play({stops[-1]: lambda: replay.write("calc.py", RIGHT)} if edit_during else {})
    assert replay.status(capsys)[0] == 0
    replay.write("calc.py", WRONG[0])
    code, out = replay.status(capsys)
    assert code == 1 and out.startswith("unverified") and "calc.py" in out
