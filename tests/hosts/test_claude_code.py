"""The gate inside the real Claude Code (`claude -p`, stream-json output) against a scripted Messages API.

Each scenario function runs the CLI and returns what happened (the test functions assert on it); the
capture script tests/hosts/capture_claude_code.py runs the same functions to record the hook payloads.
"""
from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import pytest

from claude_server import ApiError, ClaudeServer, Request, ScriptItem, bash, edit, newest_user_text, text, \
    tool_results, tool_use
from conftest import (
    FORGET, assert_switch_reported, capture_hooks, cli_path, hook_calls, HostWorld, relay_line, restore_advice,
    run_cli)

pytestmark = pytest.mark.hosts

PROMPT = "add(2, 3) should be 5. Fix calc.py."
WRONG, RIGHT = "a - b", "a + b"
SETTINGS = Path(".claude") / "settings.json"
# A StopFailure hook is sent SIGTERM as soon as `claude -p` shuts down: a command that does not ignore
# it dies before Python has started. The shell's ignored TERM is inherited by donegate.
STOP_FAILURE = "trap '' TERM; donegate hook stop-failure --host claude-code"


@dataclass
class Run:
    """One `claude -p --output-format stream-json` run: the process, its events, its hook calls and its
    agent-loop model requests."""
    done: subprocess.CompletedProcess
    events: list[dict]
    calls: list[dict]
    requests: list[Request] = field(default_factory=list)  # the agent-loop requests of this run

    @property
    def session_id(self) -> str:
        return next(e["session_id"] for e in self.events if e.get("type") == "system" and e.get("subtype") == "init")

    def hooks(self, event: str) -> list[dict]:
        return [c for c in self.calls if c["argv"][:2] == ["hook", event]]

    def stop_exits(self) -> list[int]:
        return [c["exit"] for c in self.hooks("stop")]

    def notices(self) -> str:
        """What the person sees from the hooks: the text of the system events other than the init."""
        return "\n".join(str(e.get("content") or e.get("text") or "") for e in self.events
                         if e.get("type") == "system" and e.get("subtype") not in ("init", "hook_started"))

    def after_refusal(self) -> list[str]:
        """The model requests that carried a stop hook's refusal."""
        return [newest_user_text(r) for r in self.requests if "Stop hook feedback" in newest_user_text(r)]


def set_stop_failure_hook(world: HostWorld, command: str | None = None) -> None:
    """Replace the StopFailure entry `donegate install` wrote with `command` (if given)."""
    settings = world.repo / SETTINGS
    data = json.loads(settings.read_text())
    if command is not None:
        data["hooks"]["StopFailure"] = [{"hooks": [{"type": "command", "command": command or STOP_FAILURE}]}]
        settings.write_text(json.dumps(data, indent=2) + "\n")


def gated(world: HostWorld, *, commit: bool = True, stop_failure: str | None = None) -> Path:
    """The project with the gate installed for Claude Code (committed unless told otherwise); returns the
    hook-call log. `stop_failure` replaces the installed StopFailure command."""
    world.project()
    world.install("claude-code")
    set_stop_failure_hook(world, stop_failure)
    if commit:
        world.commit("install the gate")
    return capture_hooks(world)


def claude_env(world: HostWorld, server: ClaudeServer, mode: str) -> dict[str, str]:
    tmp = world.tmp / "claude-tmp"
    tmp.mkdir(mode=0o700, exist_ok=True)
    env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-ant-scripted",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "CLAUDE_CODE_MAX_RETRIES": "0",
           "CLAUDE_CODE_TMPDIR": str(tmp)}
    if mode == "bypassPermissions":
        env["IS_SANDBOX"] = "1"  # root may bypass permissions only in a sandbox
    return env


def claude(world: HostWorld, server: ClaudeServer, log: Path, *flags: str, prompt: str = PROMPT,
           mode: str = "bypassPermissions", cwd: Path | None = None, output: str = "stream-json") -> Run:
    """Run `claude -p PROMPT` in the world against `server` (its script already loaded); `output="text"`
    prints only the model's last words, as a script would read them (no events)."""
    first, before = len(server.agent_requests), len(hook_calls(log))
    shown = ["--output-format", "stream-json", "--verbose"] if output == "stream-json" else ["--output-format", output]
    argv = [str(cli_path("claude-code")), "-p", prompt, *shown, "--permission-mode", mode, *flags]
    done = run_cli(argv, world, cwd=cwd, env=claude_env(world, server, mode), timeout=120)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return Run(done, events, hook_calls(log)[before:], server.agent_requests[first:])


def play(world: HostWorld, log: Path, script: Iterable[ScriptItem], *flags: str, **options: Any) -> Run:
    with ClaudeServer(script) as server:
        return claude(world, server, log, *flags, **options)


def status(world: HostWorld) -> subprocess.CompletedProcess:
    return world.donegate("status", check=False)


def calc(world: HostWorld) -> str:
    return str(world.repo / "calc.py")


# -- the scenarios ---------------------------------------------------------------------------------
def relay(request: Request) -> list:
    """The model doing what the gate's relay request asks (`claude -p` shows the person only its last words):
    its last message carries the hand-over's line."""
    return [text(f"I could not make the check pass.\n{relay_line(newest_user_text(request))}")]


def fix_after_refusal(world: HostWorld) -> Run:
    log = gated(world)
    return play(world, log, [[text("Fixing add."), edit(calc(world), WRONG, "a * b")], [text("Done, add is fixed.")],
                             [edit(calc(world), "a * b", RIGHT)], [text("Fixed for real.")]])


def budget(world: HostWorld) -> Run:
    log = gated(world)
    wrong = [WRONG, "a * b", "a ** b", "a // b", "a % b"]
    script: list[ScriptItem] = []
    for old, new in zip(wrong, wrong[1:]):
        script += [[edit(calc(world), old, new)], [text("Done.")]]
    return play(world, log, [*script, relay])


def no_change(world: HostWorld) -> Run:
    log = gated(world)
    return play(world, log, [[edit(calc(world), WRONG, "a * b")], [text("Done.")], [text("Done, as I said.")]])


def protected_test(world: HostWorld, seen: dict[str, str]) -> Run:
    """An Edit of the test through the Edit tool, then the same change made with `sed -i`."""
    log = gated(world)

    def after_edit(request: Request) -> list:
        seen["test after Edit"] = world.read("tests/test_calc.py")
        seen["Edit result"] = json.dumps(tool_results(request))
        return [bash("sed -i 's/== 5/== -1/' tests/test_calc.py")]

    return play(world, log, [[edit(str(world.repo / "tests/test_calc.py"), "== 5", "== -1")], after_edit,
                             [text("Done.")], [text("Done.")]])


def chat_only(world: HostWorld) -> Run:
    log = gated(world)
    return play(world, log, [[text("add() subtracts; shall I change it to a + b?")]],
                prompt="What does add() in calc.py do?")


def committed_fix(world: HostWorld) -> Run:
    log = gated(world)
    return play(world, log, [[bash("sed -i 's/a - b/a * b/' calc.py && git commit -q -am 'fix add'")],
                             [text("Done, committed.")], [text("Done.")]])


def add_dir_cd(world: HostWorld, seen: dict[str, str]) -> Run:
    """`cd` into a folder outside the repository (given with --add-dir), then work in the repository."""
    log = gated(world)
    notes = world.tmp / "work" / "notes"
    notes.mkdir()
    test = str(world.repo / "tests" / "test_calc.py")

    def after_test_edit(request: Request) -> list:
        seen["test after Edit"] = world.read("tests/test_calc.py")
        seen["Edit result"] = json.dumps(tool_results(request))
        return [edit(calc(world), WRONG, "a * b")]

    return play(world, log, [[bash(f"cd {notes}")], [edit(test, "== 5", "== -1")], after_test_edit,
                             [text("Done.")], [text("Done.")]], "--add-dir", str(notes))


WORKTREE = "fix-add"


def worktree_tool(world: HostWorld) -> Run:
    """EnterWorktree (a deferred tool: ToolSearch loads it first), then a wrong fix inside the worktree."""
    log = gated(world)
    return play(world, log, [[tool_use("ToolSearch", query="select:EnterWorktree")],
                             [tool_use("EnterWorktree", name=WORKTREE)],
                             [bash("sed -i 's/a - b/a * b/' calc.py")], [text("Done.")], [text("Done.")]])


def worktree_session(world: HostWorld, commit: bool) -> Run:
    """`claude -w NAME`: the session runs in a new worktree made from HEAD."""
    log = gated(world, commit=commit)
    return play(world, log, [[bash("sed -i 's/a - b/a * b/' calc.py")], [text("Done.")], [text("Done.")]],
                "-w", WORKTREE)


def resumed(world: HostWorld) -> tuple[Run, Run]:
    """A run cut short by the turn limit right after a wrong fix (no Stop fires), then `--resume`."""
    log = gated(world)
    with ClaudeServer([[edit(calc(world), WRONG, "a * b")]]) as server:
        first = claude(world, server, log, "--max-turns", "1")
        server.then([text("All done.")], [text("All done, really.")])
        second = claude(world, server, log, "--resume", first.session_id, prompt="Are you done?")
    return first, second


def forked(world: HostWorld) -> tuple[Run, Run]:
    """A refused and handed-over wrong fix, then `--resume ID --fork-session` where the model only talks."""
    log = gated(world)
    with ClaudeServer([[edit(calc(world), WRONG, "a * b")], [text("Done.")], [text("Done.")]]) as server:
        first = claude(world, server, log)
        server.then([text("All done.")], [text("All done, really.")])
        second = claude(world, server, log, "--resume", first.session_id, "--fork-session", prompt="Are you done?")
    return first, second


def no_verify_commit(world: HostWorld) -> Run:
    """acceptEdits mode (Bash needs the person's approval; in -p nobody can give it)."""
    log = gated(world)
    return play(world, log, [[edit(calc(world), WRONG, "a * b")], [bash("git commit --no-verify -am x")],
                             [text("Done.")], [text("Done.")]], mode="acceptEdits")


def stop_failure(world: HostWorld, command: str | None = None) -> Run:
    """An edit, then the API fails for every request (no retries): the turn ends in StopFailure."""
    log = gated(world, stop_failure=command)
    return play(world, log, [[edit(calc(world), WRONG, "a * b")], ApiError(500, "api_error", "scripted outage")])


# What an agent can do to the gate from its shell, in ways no path in a command names (findings 1-3)
SWITCH_OFF = ("python3 -c \"import json, pathlib; p = pathlib.Path('.cl' + 'aude/settings.json'); "
              "d = json.loads(p.read_text()); d['disableAllHooks'] = True; p.write_text(json.dumps(d))\"")
ENV_FILE = ("python3 -c \"import json, pathlib; pathlib.Path('.cl' + 'aude/settings.local.json').write_text("
            "json.dumps({'env': {'DONEGATE_VERIFY_COMMAND': 'true'}}))\"")


def gate_undone(world: HostWorld, undo: str, *then: ScriptItem) -> tuple[Run, Run]:
    """A wrong fix, committed, then `undo` from the shell, and "Done."; then a second session playing `then`
    (by default it only talks)."""
    log = gated(world)
    with ClaudeServer([[bash(f"sed -i 's/a - b/a * b/' calc.py && git commit -qam fix && {undo}")],
                       [text("Done.")], [text("Done, as I said.")]]) as server:
        first = claude(world, server, log)
        server.then(*(then or ([text("Nothing to do: add is fixed.")], [text("Nothing to do.")])))
        second = claude(world, server, log, prompt="Is add fixed?")
    return first, second


# -- the tests ---------------------------------------------------------------------------------------
def test_a_wrong_fix_is_refused_and_the_model_gets_the_failing_lines(world):
    run = fix_after_refusal(world)
    assert run.done.returncode == 0, run.done.stderr
    assert run.stop_exits() == [2, 0]
    refusals = run.after_refusal()
    assert len(refusals) == 1 and "test_add" in refusals[0] and "attempt 1 of 3" in refusals[0]
    assert world.check_runs() == 2
    assert run.hooks("stop")[-1]["stdout"].strip() == "", "the right fix ends verified, without a notice"
    assert world.read("calc.py").endswith(f"return {RIGHT}\n")


def test_three_refusals_then_the_work_is_handed_over_unverified(world):
    run = budget(world)
    assert run.done.returncode == 0, run.done.stderr
    assert run.stop_exits() == [2, 2, 2, 0]
    assert [("attempt %d of 3" % n) in t for n, t in enumerate(run.after_refusal()[:3], 1)] == [True] * 3
    assert world.check_runs() == 4
    shown = [e for e in run.events if e.get("type") == "system" and e.get("subtype") == "informational"]
    assert shown and "HANDED OVER UNVERIFIED" in shown[-1]["content"] and "retry budget" in shown[-1]["content"]
    # stream-json shows the person the hook's words, so nothing is relayed and the budget is all the work's
    assert not [t for t in run.after_refusal() if "request 1 of" in t]
    after = status(world)
    assert after.returncode == 1 and "unverified" in after.stdout, after.stdout + after.stderr


def test_a_stop_without_a_new_edit_after_a_refusal_hands_over_at_once(world):
    run = no_change(world)
    assert run.stop_exits() == [2, 0]
    assert world.check_runs() == 1, "nothing changed after the failed check, so it must not run again"
    assert "nothing changed since the last failed check" in run.notices()


def test_a_test_file_edit_is_denied_and_a_shell_edit_of_it_is_refused_at_the_stop(world):
    seen: dict[str, str] = {}
    run = protected_test(world, seen)
    assert "== 5" in seen["test after Edit"], "the Edit of the protected test must not happen"
    assert "tests/test_calc.py is protected" in seen["Edit result"]
    assert run.stop_exits()[0] == 2
    assert "tests/test_calc.py" in run.after_refusal()[0]
    assert world.check_runs() == 0, "a changed protected test is refused before the check runs"


def test_a_chat_only_turn_is_not_checked(world):
    run = chat_only(world)
    assert run.done.returncode == 0, run.done.stderr
    assert run.stop_exits() == [0] and run.hooks("stop")[0]["stdout"].strip() == ""
    assert world.check_runs() == 0
    assert len(run.requests) == 1


def test_a_committed_wrong_fix_is_refused(world):
    run = committed_fix(world)
    assert world.git("log", "-1", "--format=%s").strip() == "fix add"
    assert world.git("status", "--porcelain").strip() == ""
    assert run.stop_exits()[0] == 2
    assert "test_add" in run.after_refusal()[0]


def test_cd_into_an_added_folder_keeps_the_repository_gated(world):
    seen: dict[str, str] = {}
    run = add_dir_cd(world, seen)
    notes = str(world.tmp / "work" / "notes")
    assert run.hooks("stop") and run.hooks("stop")[0]["payload"]["cwd"] == notes, "the session was in the folder"
    assert "== 5" in seen["test after Edit"], "an Edit of the repository's test by absolute path must be denied"
    assert "is protected" in seen["Edit result"]
    assert run.stop_exits()[0] == 2, f"the wrong fix must be refused, not: {run.hooks('stop')[0]['stdout']}"
    assert "test_add" in run.after_refusal()[0]


def test_a_wrong_fix_in_a_worktree_entered_mid_session_is_refused(world):
    run = worktree_tool(world)
    tree = world.repo / ".claude" / "worktrees" / WORKTREE
    assert (tree / "calc.py").read_text().endswith("return a * b\n"), "the fix was made inside the worktree"
    assert run.hooks("stop")[0]["payload"]["cwd"] == str(tree)
    assert run.stop_exits()[0] == 2, f"the wrong fix must be refused, not: {run.hooks('stop')[0]['stdout']}"
    assert "test_add" in run.after_refusal()[0]


def test_a_plain_claude_p_run_gets_the_hand_over_in_the_models_last_words(world):
    """`claude -p` with text output shows the person only the model's last words: the hand-over is relayed
    there, within the budget of 3 (one refusal for the work's failure, one request; the line comes back)."""
    log = gated(world)
    with ClaudeServer([[edit(calc(world), WRONG, "a * b")], [text("Done.")], [text("Done, as I said.")], relay]) as server:
        run = claude(world, server, log, output="text")
    assert run.done.returncode == 0, run.done.stderr
    assert run.stop_exits() == [2, 2, 0]
    assert "attempt 1 of 2" in run.after_refusal()[0] and "request 1 of 2" in run.after_refusal()[1]
    assert "HANDED OVER UNVERIFIED" in run.done.stdout and world.check_runs() == 1


def test_a_worktree_session_with_committed_settings_is_gated(world):
    run = worktree_session(world, commit=True)
    tree = world.repo / ".claude" / "worktrees" / WORKTREE
    assert run.hooks("session-start")[0]["payload"]["cwd"] == str(tree)
    assert run.stop_exits() == [2, 0]
    assert "test_add" in run.after_refusal()[0]


def test_a_worktree_session_without_committed_settings_runs_no_hook_and_doctor_says_so(world):
    run = worktree_session(world, commit=False)
    tree = world.repo / ".claude" / "worktrees" / WORKTREE
    assert (tree / "calc.py").read_text().endswith("return a * b\n")
    assert not (tree / SETTINGS).exists()
    assert run.calls == [], "the worktree has no .claude/settings.json, so no hook runs"
    assert world.check_runs() == 0
    doctor = world.donegate("doctor", check=False)
    assert "NOT active" in doctor.stdout, doctor.stdout


def test_a_resumed_session_keeps_its_baseline(world):
    first, second = resumed(world)
    assert first.hooks("stop") == [], "a run ended by the turn limit fires no Stop"
    starts = second.hooks("session-start")
    assert [c["payload"]["source"] for c in starts] == ["resume"]
    assert starts[0]["payload"]["session_id"] == first.session_id
    assert second.stop_exits() == [2, 0], "the wrong fix from the first run is refused in the resumed run"
    assert "test_add" in second.after_refusal()[0]
    assert world.check_runs() == 1


def test_a_forked_session_does_not_end_the_parents_refused_change_silently(world):
    first, second = forked(world)
    assert first.stop_exits() == [2, 0]
    fork_start = second.hooks("session-start")[0]["payload"]
    assert fork_start["source"] == "fork" and fork_start["session_id"] != first.session_id
    fork_stops = [c for c in second.hooks("stop") if c["payload"]["session_id"] == fork_start["session_id"]]
    loud = [c for c in fork_stops if c["exit"] == 2 or "NOT verified" in c["stdout"] or "UNVERIFIED" in c["stdout"]]
    assert loud, f"'All done.' with the parent's failing change passed silently: {[c['stdout'] for c in fork_stops]}"
    after = status(world)
    assert after.returncode == 1 and "unverified" in after.stdout, after.stdout + after.stderr


def test_a_no_verify_commit_in_accept_edits_mode_does_not_run_without_approval(world):
    run = no_verify_commit(world)
    rewrite = run.hooks("pre-tool-use")[-1]
    assert rewrite["payload"]["tool_input"]["command"] == "git commit --no-verify -am x"
    spec = json.loads(rewrite["stdout"])["hookSpecificOutput"]
    assert spec["updatedInput"]["command"] == "git commit -am x"
    assert world.git("log", "-1", "--format=%s").strip() != "x", \
        "the rewritten commit ran without the person's approval (the hook's allow skipped the prompt)"
    denied = [e for e in run.events if e.get("type") == "system" and e.get("subtype") == "permission_denied"]
    assert denied and denied[0]["tool_name"] == "Bash"


def test_an_api_error_after_an_edit_is_recorded_as_an_unverified_end(world):
    """The promise holds whether or not the StopFailure hook lives to record the error: `claude -p` sends its
    process group a SIGTERM about 20 ms after starting it, and the installed command's `trap '' TERM` (pinned
    in tests/test_hosts.py) wins that race only when the machine is not too busy to start a shell. So the
    test asserts what the person sees either way, and the error's words when the hook got through; the
    hook's record of a recorded StopFailure call is pinned in tests/test_host_payloads.py."""
    run = stop_failure(world)
    assert run.done.returncode == 1
    assert run.hooks("stop") == [], "an API error ends the turn without a Stop"
    after = status(world)
    assert after.returncode == 1 and "unverified" in after.stdout, after.stdout + after.stderr
    failures = run.hooks("stop-failure")
    if failures:
        assert failures[0]["payload"]["hook_event_name"] == "StopFailure"
        assert failures[0]["payload"]["error"] == "server_error"
        assert "ended with an error" in after.stdout and "server_error" in after.stdout, after.stdout
    else:
        assert "without a stop decision" in after.stdout, after.stdout


def test_the_check_runs_without_the_model_key_and_writes_no_bytecode(world):
    """Claude Code passes its own environment (ANTHROPIC_API_KEY included) to its hooks; the check the gate
    runs must see neither the key nor a chance to reuse stale bytecode."""
    log = gated(world)
    seen = world.tmp / "check-env"
    script = world.repo / "verify.sh"
    script.write_text(script.read_text().replace("exec ", f"env > '{seen}'\nexec ", 1))
    world.commit("the check records its environment")
    run = play(world, log, [[edit(calc(world), WRONG, "a * b")], [text("Done.")],
                            [edit(calc(world), "a * b", RIGHT)], [text("Fixed.")]])
    assert run.stop_exits() == [2, 0]
    env = seen.read_text()
    assert "sk-ant-scripted" not in env and "ANTHROPIC_API_KEY" not in env
    assert "PYTHONDONTWRITEBYTECODE=1" in env
    assert not list(world.repo.rglob("*.pyc")), "the check wrote bytecode into the repository"


# -- what an agent can do to the gate itself ---------------------------------------------------------

REWRITE = "printf '#!/bin/sh\\nexit 0\\n' > verify.sh"


def rewritten_check(world: HostWorld, seen: dict[str, str]) -> Run:
    """A wrong fix and verify.sh rewritten to `exit 0` by a shell redirect; after the refusal the agent runs the
    refusal's own advice as one Bash command, then makes the right fix."""
    log = gated(world)

    def follow_the_advice(request: Request) -> list:
        seen["advice"] = restore_advice(newest_user_text(request))
        return [bash(seen["advice"])]

    def after_the_advice(request: Request) -> list:
        seen["advice result"] = json.dumps(tool_results(request))
        return [edit(calc(world), "a * b", RIGHT)]

    return play(world, log, [[edit(calc(world), WRONG, "a * b"), bash(REWRITE)], [text("Done, all checks pass.")],
                             follow_the_advice, after_the_advice, [text("Restored the check and fixed add.")]])


def stripped_settings(world: HostWorld) -> Run:
    """The gate installed but its settings not committed; the agent commits a right fix and tidies up with
    `git stash -u`, which takes the uncommitted settings file with it."""
    log = gated(world, commit=False)
    return play(world, log, [[edit(calc(world), WRONG, RIGHT)], [bash("git commit -q -m 'fix add' calc.py && git stash -u -q")],
                             [text("Done, committed and tidied up.")], [text("Done.")]])


def test_a_check_rewritten_by_a_redirect_is_refused_and_the_advice_to_restore_it_runs(world):
    seen: dict[str, str] = {}
    run = rewritten_check(world, seen)
    assert run.done.returncode == 0, run.done.stderr
    assert run.stop_exits() == [2, 0]
    refusal = run.after_refusal()[0]
    assert "verify.sh" in refusal and "changed in this session" in refusal, refusal
    assert "denied" not in seen["advice result"].lower() and "is protected" not in seen["advice result"], seen
    assert world.read("verify.sh") == world.git("show", "HEAD:verify.sh"), "the operator's check is back"
    assert world.check_runs() == 1, "only the operator's check ran, once, on the right fix"
    assert status(world).returncode == 0


def test_stashing_the_uncommitted_hook_settings_is_refused_and_status_says_the_hooks_are_gone(world):
    run = stripped_settings(world)
    assert run.done.returncode == 0, run.done.stderr
    assert not (world.repo / SETTINGS).exists(), "the stash took the settings"
    assert run.stop_exits()[0] == 2 and "hooks in .claude/settings.json" in run.after_refusal()[0]
    assert world.check_runs() == 0
    after = status(world)
    assert after.returncode == 1 and "hooks in .claude/settings.json are gone" in after.stdout, after.stdout
    assert "claude-code  not installed" in world.donegate("doctor", check=False).stdout


def test_a_long_check_budget_gets_a_stop_hook_limit_the_host_accepts_and_keeps(world):
    """With a 900 s budget, install writes a Stop hook limit past it; Claude Code loads that settings file and
    runs the gate as before (a refusal, then a pass), and doctor finds no limit too short."""
    world.env["DONEGATE_VERIFY_TIMEOUT"] = "900"
    run = fix_after_refusal(world)
    assert run.stop_exits() == [2, 0], run.done.stderr
    limit = json.loads((world.repo / SETTINGS).read_text())["hooks"]["Stop"][0]["hooks"][0]["timeout"]
    assert limit >= 930
    assert "hook timeout" not in world.donegate("doctor", check=False).stdout


def test_a_stop_hook_limit_shorter_than_the_check_is_cut_by_the_host_and_doctor_says_so(world):
    """A settings file whose Stop hook limit (2 s) is shorter than a slow check (4 s): Claude Code ends the hook
    and the turn with nothing shown; doctor names the limit, `install` writes one that fits, and the same
    turn is then refused."""
    log = gated(world)
    settings = json.loads((world.repo / SETTINGS).read_text())
    settings["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 2
    (world.repo / SETTINGS).write_text(json.dumps(settings, indent=2) + "\n")
    script = world.repo / "verify.sh"
    script.write_text(script.read_text().replace("\n", "\nsleep 4\n", 1))
    world.commit("a slow check, a short limit")
    doctor = world.donegate("doctor", check=False).stdout
    assert "hook timeout claude-code" in doctor and "WARNING" in doctor, doctor
    cut = play(world, log, [[edit(calc(world), WRONG, "a * b")], [text("Done.")]])
    assert cut.done.returncode == 0 and len(cut.requests) == 2, "the host ended the hook and the turn"
    assert "test_add" not in cut.notices()
    world.install("claude-code")
    assert "hook timeout" not in world.donegate("doctor", check=False).stdout
    run = play(world, log, [[edit(calc(world), "a * b", "a ** b")], [text("Done.")], [edit(calc(world), "a ** b", RIGHT)],
                            [text("Fixed.")]])
    assert run.stop_exits() == [2, 0] and "test_add" in run.after_refusal()[0]


def test_a_switch_beside_the_hooks_leaves_the_work_unverified_and_doctor_says_so(world):
    """`"disableAllHooks": true` written beside the gate's entries: whether or not the host still runs this
    session's Stop hook, nothing ends verified: a stop that runs is refused as disarmed, `status` exits 1
    naming the settings file, `doctor` says the arming moved, and the next session (which runs no hook) does not
    make it verified."""
    first, second = gate_undone(world, SWITCH_OFF)
    assert first.done.returncode == 0, first.done.stderr
    assert json.loads(world.read(str(SETTINGS)))["disableAllHooks"] is True
    assert all(code == 2 for code in first.stop_exits()[:1]), first.stop_exits()
    assert world.check_runs() == 0 or first.stop_exits(), "no check passes a disarmed gate"
    assert second.hooks("stop") == [], "the host honours the switch in the next session"
    assert_switch_reported(world, ".claude/settings.json", "moved")


def test_an_environment_file_beside_the_hooks_does_not_choose_the_check(world):
    """`.claude/settings.local.json` giving the hooks DONEGATE_VERIFY_COMMAND=true: this session's stop is
    refused as disarmed; in the next session Claude Code hands the hooks that setting, and the gate still runs
    the operator's verify.sh, which refuses the wrong fix."""
    first, second = gate_undone(world, ENV_FILE, [bash("sed -i 's/a [*] b/a ** b/' calc.py")], [text("Done.")],
                                [text("Done.")])
    assert first.stop_exits()[0] == 2 and "settings.local.json" in first.after_refusal()[0], first.after_refusal()
    stop_env = second.hooks("stop")[0]["env"]
    assert stop_env.get("DONEGATE_VERIFY_COMMAND") == "true", "the host passes the file's env to the hooks"
    assert second.stop_exits()[0] == 2 and "test_add" in second.after_refusal()[0], second.after_refusal()
    assert status(world).returncode == 1


def test_a_deleted_state_folder_is_not_a_fresh_start(world):
    """A committed wrong fix, then the gate's state folder deleted: the stop finds no record of the session's
    start, so the check judges the tree and refuses it; `status` exits 1, in this session and after the next."""
    first, second = gate_undone(world, FORGET)
    assert first.stop_exits()[0] == 2 and "test_add" in first.after_refusal()[0], first.after_refusal()
    assert status(world).returncode == 1
    assert "UNVERIFIED" in second.hooks("stop")[0]["stdout"], "the next session carries the unverified work on"
    assert status(world).returncode == 1

