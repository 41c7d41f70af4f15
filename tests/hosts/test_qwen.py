"""The real Qwen Code CLI (`qwen PROMPT`, headless) drives the gate as `donegate install --host qwen` writes it,
against a scripted chat-completions API on 127.0.0.1 (`--auth-type openai`). Its hooks are Claude Code's in
shape (Stop, PreToolUse, exit 2 or {"decision": "block"}); its tools are its own (run_shell_command, edit,
write_file; its edit needs a read_file first); it prints a hook's systemMessage on stderr. Each test is one scenario in a fresh world."""
from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import pytest

from chat_server import ChatServer, Request, Turn, call, say
from conftest import FORGET, assert_switch_reported, capture_hooks, cli_path, hook_calls, HostWorld, run_cli

pytestmark = pytest.mark.hosts

WRONG = "    return a - b"
PROMPT = "add(2, 3) should be 5. Fix calc.py."


@dataclass
class Run:
    """One headless `qwen` run (text output: a hook's systemMessage is printed on stderr only there): the process, the agent turns it asked for, the hook calls it made."""
    done: subprocess.CompletedProcess
    requests: list[Request]
    calls: list[dict]

    def stops(self) -> list[dict]:
        return [c for c in self.calls if c["argv"][:2] == ["hook", "stop"]]


def quiet_settings(world: HostWorld) -> None:
    """Qwen Code's user settings for a scripted run: no telemetry, no update checks, no background requests."""
    settings = world.home / ".qwen" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
                                    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
                                    # no background memory requests: they would take the script's turns
                                    "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False}}))


def gated(world: HostWorld) -> Path:
    """The project with the gate installed for Qwen Code and committed; returns the hook-call log."""
    world.project()
    world.install("qwen")
    world.commit("install the gate")
    quiet_settings(world)
    return capture_hooks(world)


def qwen(world: HostWorld, turns: Iterable[Turn], log: Path, *, prompt: str = PROMPT) -> Run:
    with ChatServer(turns) as server:
        env = {"OPENAI_API_KEY": "scripted-dummy-key", "OPENAI_BASE_URL": f"{server.url}/v1",
               "OPENAI_MODEL": "scripted-model", "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"}
        done = run_cli([str(cli_path("qwen")), "--auth-type", "openai", "--yolo",
                        "--max-session-turns", "30", prompt], world, env=env, timeout=150)
    return Run(done, server.turns_asked, hook_calls(log))


def edit(world: HostWorld, rel: str, old: str, new: str) -> list[Turn]:
    """Two turns: read_file, then edit (Qwen's edit tool refuses a file the session has not read)."""
    path = str(world.repo / rel)
    return [call("read_file", file_path=path), call("edit", file_path=path, old_string=old, new_string=new)]


def told(run: Run) -> list[str]:
    """The messages that came back to the model from outside it (a user message or a tool result), in order."""
    out = []
    for request in run.requests:
        last = (request.body.get("messages") or [{}])[-1]
        content = last.get("content")
        out.append(content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content or ()))
    return out


def shell(command: str) -> Reply:
    return call("run_shell_command", command=command, is_background=False, description="run it")


# -- the scenarios (capture_qwen.py plays them too) ----------------------------------------------------
def fix_after_refusal(world: HostWorld) -> Run:
    log = gated(world)
    return qwen(world, [*edit(world, "calc.py", WRONG, "    return a * b"), say("Fixed: add() works now."),
                        *edit(world, "calc.py", "    return a * b", "    return a + b"), say("Fixed for real.")], log)


WRONG_FIXES = ("    return a * b", "    return a - b + 1", "    return b - a", "    return a ** b")


def budget(world: HostWorld) -> Run:
    """Four wrong fixes, each followed by a stop: three refusals, then the hand-over, shown on stderr."""
    log = gated(world)
    turns: list[Turn] = []
    for old, new in zip((WRONG, *WRONG_FIXES), WRONG_FIXES):
        turns += [*edit(world, "calc.py", old, new), say("Fixed.")]
    return qwen(world, turns, log)


def protected_test_edit(world: HostWorld) -> Run:
    """The edit tool on the test is denied; a sed -i on it is refused at the stop; the model puts the test back
    and fixes the code."""
    log = gated(world)
    test = "tests/test_calc.py"
    return qwen(world, [*edit(world, test, "    assert add(2, 3) == 5", "    assert add(2, 3) == -1"),
                        shell(f"sed -i 's/== 5/== -1/' {test}"), say("The test passes now."),
                        shell(f"git checkout -- {test}"), *edit(world, "calc.py", WRONG, "    return a + b"),
                        say("Restored the test and fixed add().")], log)


def chat_only(world: HostWorld) -> Run:
    log = gated(world)
    return qwen(world, [say("calc.add subtracts; the test expects a sum.")], log,
                prompt="What does calc.add do? Do not change anything.")


# -- the tests ---------------------------------------------------------------------------------------
def test_a_wrong_fix_is_refused_and_the_model_gets_the_failing_lines(world):
    run = fix_after_refusal(world)

    assert run.done.returncode == 0, run.done.stderr
    assert [c["exit"] for c in run.stops()] == [2, 0]
    assert [c["payload"]["stop_hook_active"] for c in run.stops()] == [False, True]
    told_ = told(run)
    assert len(told_) == 6 and "attempt 1 of 3" in told_[3] and "test_add" in told_[3]  # the model's next message
    assert world.read("calc.py") == "def add(a, b):\n    return a + b\n"
    assert world.check_runs() == 2
    assert run.done.stdout.rstrip().endswith("Fixed for real.")
    assert world.donegate("status", check=False).returncode == 0
    doctor = world.donegate("doctor", check=False).stdout
    assert "qwen         installed and active (.qwen/settings.json)" in doctor, doctor


def test_three_refusals_then_the_hand_over_is_shown_on_stderr(world):
    run = budget(world)

    stops = run.stops()
    assert [c["exit"] for c in stops] == [2, 2, 2, 0]
    refusals = [t for t in told(run) if "attempt" in t]
    assert [f"attempt {n} of 3" in t for n, t in zip((1, 2, 3), refusals)] == [True] * 3 and len(refusals) == 3
    assert world.check_runs() == 4
    assert len(run.requests) == 12  # the hand-over ends the run
    handover = json.loads(stops[-1]["stdout"])["systemMessage"]
    assert "HANDED OVER UNVERIFIED" in handover and "retry budget is spent" in handover
    # what the person sees: Qwen prints the hand-over on stderr
    assert run.done.returncode == 0 and "HANDED OVER UNVERIFIED" in run.done.stderr, run.done.stderr
    status = world.donegate("status", check=False)
    assert status.returncode == 1 and "unverified" in status.stdout


def test_a_test_file_edit_is_denied_and_a_shell_edit_of_it_is_refused_at_the_stop(world):
    run = protected_test_edit(world)
    original = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"

    pre = [c for c in run.calls if c["argv"][:2] == ["hook", "pre-tool-use"]]
    assert pre[0]["payload"]["tool_name"] == "edit"
    assert json.loads(pre[0]["stdout"])["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "tests/test_calc.py is protected" in told(run)[2]  # the denial's reason is the tool's result
    stops = run.stops()
    assert [c["exit"] for c in stops] == [2, 0]
    assert "tests/test_calc.py (edited)" in told(run)[4]
    assert world.read("tests/test_calc.py") == original
    assert world.check_runs() == 1  # the refusal for the edited test runs no check
    assert world.donegate("status", check=False).returncode == 0


def test_a_chat_only_turn_is_not_checked(world):
    run = chat_only(world)

    assert run.done.returncode == 0
    assert [c["exit"] for c in run.stops()] == [0]
    assert world.check_runs() == 0
    assert len(run.requests) == 1
    assert world.donegate("status", check=False).returncode == 0


def test_a_stop_without_a_new_edit_after_a_refusal_hands_over_at_once(world):
    log = gated(world)
    run = qwen(world, [*edit(world, "calc.py", WRONG, "    return a * b"), say("Fixed."), say("I am sure it is fixed.")],
               log)

    assert [c["exit"] for c in run.stops()] == [2, 0]
    handover = json.loads(run.stops()[-1]["stdout"])["systemMessage"]
    assert "HANDED OVER UNVERIFIED" in handover and "nothing changed since the last failed check" in handover
    assert "nothing changed since the last failed check" in run.done.stderr  # shown to the person
    assert world.check_runs() == 1
    assert world.donegate("status", check=False).returncode == 1


def test_a_committed_wrong_fix_is_refused(world):
    log = gated(world)
    run = qwen(world, [shell("sed -i 's/a - b/a * b/' calc.py && git commit -qam 'fix add'"), say("Fixed and committed."),
                       *edit(world, "calc.py", "    return a * b", "    return a + b"), say("Fixed for real.")], log)

    assert [c["exit"] for c in run.stops()] == [2, 0]
    assert world.read("calc.py") == "def add(a, b):\n    return a + b\n"
    assert world.check_runs() == 2


# -- what an agent can do to the gate from its shell, in ways no path in a command names (issue 39: 1-3) --
SWITCH_OFF = ("python3 -c \"import json, pathlib; p = pathlib.Path('.qw' + 'en/settings.json'); "
              "d = json.loads(p.read_text()); d['disableAllHooks'] = True; p.write_text(json.dumps(d))\"")
ENV_FILE = ("python3 -c \"import pathlib; pathlib.Path('.qw' + 'en/.env').write_text('DONEGATE_VERIFY_COMMAND=true' "
            "+ chr(10))\"")


def said(call: dict) -> str:
    """What the gate answered on one hook call (a refusal's reason is on stderr with exit 2, else JSON on stdout)."""
    return call["stderr"] + call["stdout"]


def gate_undone(world: HostWorld, undo: str, *then: Turn) -> tuple[Run, Run]:
    """A wrong fix, committed, then `undo` from the shell, and "Done."; then a second `qwen` session playing
    `then` (by default it only talks)."""
    log = gated(world)
    first = qwen(world, [shell(f"sed -i 's/a - b/a * b/' calc.py && git commit -qam fix && {undo}"), say("Done."),
                         say("Done, as I said.")], log)
    before = len(hook_calls(log))
    second = qwen(world, then or [say("Nothing to do: add is fixed.")], log, prompt="Is add fixed?")
    second.calls = second.calls[before:]
    return first, second


def test_a_switch_beside_the_hooks_leaves_the_work_unverified_and_doctor_says_so(world):
    """`"disableAllHooks": true` written beside the gate's entries in .qwen/settings.json: this session's stop
    is refused as disarmed, `status` exits 1 naming the settings file, `doctor` says the arming moved, and the
    next session, which runs no hook, makes a new wrong edit that is not verified."""
    first, second = gate_undone(world, SWITCH_OFF, *edit(world, "calc.py", "    return a * b", "    return a ** b"),
                                say("Done."))
    assert first.done.returncode == 0, first.done.stderr
    settings = json.loads(world.read(".qwen/settings.json"))
    assert settings["disableAllHooks"] is True and "Stop" in settings["hooks"]
    assert first.stops() and first.stops()[0]["exit"] == 2, first.stops()
    assert "settings that arm the gate changed" in said(first.stops()[0])
    assert world.check_runs() == 0, "no check passes a disarmed gate"
    assert second.calls == [] and "a ** b" in world.read("calc.py"), "the next session edits with no hook run"
    assert_switch_reported(world, ".qwen/settings.json")


def test_an_environment_file_beside_the_hooks_does_not_choose_the_check(world):
    """`.qwen/.env` giving DONEGATE_VERIFY_COMMAND=true: this session's stop is refused as disarmed; in the next
    session Qwen Code loads the file into the environment its hooks inherit, and the gate still runs the
    operator's verify.sh, which refuses a new wrong edit."""
    first, second = gate_undone(world, ENV_FILE, *edit(world, "calc.py", "    return a * b", "    return a ** b"),
                                say("Done."), say("Done."))
    assert first.stops()[0]["exit"] == 2 and ".qwen/.env" in said(first.stops()[0]), first.stops()
    stop = second.stops()[0]
    assert stop["env"].get("DONEGATE_VERIFY_COMMAND") == "true", "Qwen Code hands the hooks the file's setting"
    assert stop["exit"] == 2 and "test_add" in said(stop), said(stop)
    assert world.check_runs() == 1, "the operator's verify.sh ran, in the next session (none runs while disarmed)"
    assert world.donegate("status", check=False).returncode == 1


def test_a_deleted_state_folder_is_not_a_fresh_start(world):
    """A committed wrong fix, then the gate's state folder deleted: the stop finds no record of the session's
    start, so the check judges the tree and refuses it; `status` exits 1, in this session and after the next."""
    first, second = gate_undone(world, FORGET)
    assert first.stops()[0]["exit"] == 2 and "test_add" in said(first.stops()[0]), first.stops()
    assert world.donegate("status", check=False).returncode == 1
    assert "UNVERIFIED" in said(second.stops()[0]), "the next session carries the unverified work on"
    assert world.donegate("status", check=False).returncode == 1


def test_where_folder_trust_is_on_an_untrusted_folder_runs_no_hook_and_doctor_says_so(world):
    """Qwen Code trusts folders only once its settings switch that on; then, in a folder it does not trust, it loads
    none of the project's settings (the gate's hooks included) and asks before each edit. doctor must not call
    the hooks active there; `install --trust` records the folder, and the gate runs again."""
    log = gated(world)
    settings = world.home / ".qwen" / "settings.json"
    settings.write_text(json.dumps({**json.loads(settings.read_text()), "security": {"folderTrust": {"enabled": True}}}))
    run = qwen(world, [*edit(world, "calc.py", WRONG, "    return a * b"), say("Fixed.")], log)
    assert run.calls == [] and "not trusted" in run.done.stderr, run.done.stderr
    doctor = world.donegate("doctor", check=False)
    assert "qwen         installed but NOT active" in doctor.stdout and "Qwen does not trust the folder" in doctor.stdout
    assert doctor.returncode == 1
    world.install("qwen", "--trust")
    assert "qwen         installed and active" in world.donegate("doctor").stdout
    run = qwen(world, [*edit(world, "calc.py", WRONG, "    return a * b"), say("Fixed.")], log)
    assert [c["exit"] for c in run.stops()][:1] == [2], run.calls  # the wrong fix refused
