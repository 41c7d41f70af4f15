"""The real Codex CLI (`codex exec`) drives the gate as `donegate install --host codex` writes it, against a
scripted Responses API on 127.0.0.1. Each test is one scenario in a fresh world: the project, the installed
hooks and the trust records Codex needs before it runs them (`donegate install --host codex --trust`), then
one `codex exec`."""
from __future__ import annotations

import json
import queue
import re
import subprocess
import threading
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import pytest

from codex_server import CodexServer, Item, Request, Turn, apply_patch, codex_home, exec_command, message, \
    update_file
from conftest import (
    FORGET, assert_switch_reported, capture_hooks, cli_path, hook_calls, HostWorld, relay_line, restore_advice,
    run_cli)

from donegate.doctor import codex_hook_keys

pytestmark = pytest.mark.hosts

WRONG = "    return a - b"
PROMPT = "add(2, 3) should be 5. Fix calc.py."


@dataclass
class Run:
    """One `codex exec --json` run: the process, the model requests it made and the hook calls it made."""
    done: subprocess.CompletedProcess
    requests: list[Request]
    calls: list[dict]
    events: list[dict] = field(default_factory=list)

    def stops(self) -> list[dict]:
        return [c for c in self.calls if c["argv"][:2] == ["hook", "stop"]]

    def texts(self) -> list[str]:
        return [r.text() for r in self.requests]


def project_trust(root: Path) -> str:
    """The config.toml table that trusts a project (and none of its hooks)."""
    return f'\n[projects.{json.dumps(str(root))}]\ntrust_level = "trusted"\n'


def gated(world: HostWorld, trust: str = "hooks") -> Path:
    """The project with the gate installed for Codex and committed, trusted as `trust` says; returns the
    hook-call log. "hooks": `donegate install --host codex --trust` (the project and every hook);
    "project": the project only; "stale": trusted, then the hook commands changed; "none": no trust."""
    world.project()
    world.install("codex", *(["--trust"] if trust in ("hooks", "stale") else []))
    hooks = world.repo / ".codex" / "hooks.json"
    if trust == "stale":  # the same gate started another way: another command, another hash
        hooks.write_text(hooks.read_text().replace('"donegate hook', '"env donegate hook'))
    if trust == "project":
        config = world.home / ".codex" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(project_trust(world.repo))
    world.commit("install the gate")
    return capture_hooks(world)


def codex_exec(world: HostWorld, turns: Iterable[Turn], log: Path, *, prompt: str = PROMPT) -> Run:
    """Run `codex exec --json PROMPT` in the world against a server that plays `turns`."""
    with CodexServer(turns) as server:
        codex_home(world, server)
        return session(world, server, log, prompt=prompt)


def session(world: HostWorld, server: CodexServer, log: Path, *, prompt: str = PROMPT) -> Run:
    """One `codex exec --json PROMPT` against `server` (its turns loaded, ~/.codex/config.toml pointing at it): the
    model requests and hook calls of this run only."""
    first, before = len(server.responses), len(hook_calls(log))
    done = run_cli([str(cli_path("codex")), "exec", "--json", prompt], world, timeout=120)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return Run(done, server.responses[first:], hook_calls(log)[before:], events)


def listed_hooks(world: HostWorld) -> list[dict]:
    """The project's hooks as Codex itself lists them (`codex app-server`, JSON-RPC `hooks/list`): key,
    currentHash, trustStatus ... for each."""
    server = subprocess.Popen([str(cli_path("codex")), "app-server"], cwd=world.repo, env=world.env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in server.stdout], daemon=True).start()

    def ask(ident: int, method: str, params: dict) -> dict:
        server.stdin.write(json.dumps({"id": ident, "method": method, "params": params}) + "\n")
        server.stdin.flush()
        while True:
            answer = json.loads(lines.get(timeout=30))
            if answer.get("id") == ident:
                return answer["result"]

    try:
        ask(1, "initialize", {"clientInfo": {"name": "donegate-tests", "version": "1"}})
        server.stdin.write(json.dumps({"method": "initialized"}) + "\n")
        return ask(2, "hooks/list", {"cwds": [str(world.repo)]})["data"][0]["hooks"]
    finally:
        server.stdin.close()
        server.terminate()
        server.wait(timeout=30)


def patch_add(old: str, new: str) -> Item:
    return apply_patch(update_file("calc.py", old, new))


def hooks_line(world: HostWorld) -> str:
    """What `donegate doctor` says about the Codex hooks."""
    doctor = world.donegate("doctor", check=False)
    return next(line for line in doctor.stdout.splitlines() if line.startswith("hooks") and " codex " in line)


def agent_messages(run: Run) -> list[str]:
    return [e["item"]["text"] for e in run.events
            if e.get("type") == "item.completed" and e["item"].get("type") == "agent_message"]


# -- the scenarios (capture_codex.py plays them too) ---------------------------------------------------
def fix_after_refusal(world: HostWorld) -> Run:
    """A wrong fix, a refused stop, the right fix, a stop that passes."""
    log = gated(world)
    return codex_exec(world, [[patch_add(WRONG, "    return a * b")], [message("Fixed: add() works now.")],
                              [patch_add("    return a * b", "    return a + b")], [message("Fixed for real.")]],
                      log)


WRONG_FIXES = ("    return a * b", "    return a - b + 1", "    return b - a", "    return a ** b")


def relay(request: Request) -> list[Item]:
    """The model doing what the gate's relay request asks: its last message ends with the hand-over's line."""
    return [message(f"I could not make the check pass.\n{relay_line(request.text())}")]


def budget(world: HostWorld) -> Run:
    """Three wrong fixes, each followed by a stop: two refusals, then the gate hands the work over, relayed
    through the model's last message (the one thing `codex exec` shows the person) with the budget's last
    refusal (DONEGATE_MAX_BLOCKS=3 counts the relay request too)."""
    log = gated(world)
    turns: list[Turn] = []
    for old, new in zip((WRONG, *WRONG_FIXES[:2]), WRONG_FIXES[:3]):
        turns += [[patch_add(old, new)], [message("Fixed.")]]
    return codex_exec(world, [*turns, relay], log)


def protected_test_edit(world: HostWorld, seen: list[str] | None = None) -> Run:
    """apply_patch on the test is denied; a sed -i on it goes through and is refused at the stop; the model
    restores the test and fixes the code."""
    log = gated(world)
    test = "tests/test_calc.py"

    def after_the_denial(request: Request) -> list[Item]:
        if seen is not None:
            seen.append(world.read(test))
        return [exec_command(f"sed -i 's/== 5/== -1/' {test}")]

    turns: list[Turn] = [[apply_patch(update_file(test, "    assert add(2, 3) == 5", "    assert add(2, 3) == -1"))],
                         after_the_denial, [message("The test passes now.")],
                         [exec_command(f"git checkout -- {test}")],
                         [patch_add(WRONG, "    return a + b")], [message("Restored the test and fixed add().")]]
    return codex_exec(world, turns, log)


def chat_only(world: HostWorld) -> Run:
    """A question answered without touching a file."""
    log = gated(world)
    return codex_exec(world, [[message("calc.add subtracts; the test expects a sum.")]], log,
                      prompt="What does calc.add do? Do not change anything.")


# -- the tests ---------------------------------------------------------------------------------------
def test_a_wrong_fix_is_refused_and_the_model_gets_the_failing_lines(world):
    run = fix_after_refusal(world)

    assert run.done.returncode == 0, run.done.stderr
    assert [c["exit"] for c in run.stops()] == [2, 0]
    assert [c["payload"]["stop_hook_active"] for c in run.stops()] == [False, True]
    texts = run.texts()
    assert len(texts) == 4
    assert "test_add" not in texts[1] and "test_add" in texts[2]  # the request after the refused stop
    assert "attempt 1 of 2" in texts[2]  # a relayed run keeps the budget's last refusal for the hand-over
    assert world.read("calc.py") == "def add(a, b):\n    return a + b\n"
    assert world.check_runs() == 2
    assert agent_messages(run) == ["Fixed: add() works now.", "Fixed for real."]
    assert world.donegate("status", check=False).returncode == 0
    assert "installed" in hooks_line(world) and "NOT active" not in hooks_line(world)


def test_three_refusals_then_the_work_is_handed_over_unverified(world):
    run = budget(world)

    stops = run.stops()
    assert [c["exit"] for c in stops] == [2, 2, 2, 0]  # three refusals in all: the budget, the relay included
    assert [c["payload"]["stop_hook_active"] for c in stops] == [False, True, True, True]
    for attempt, text in zip((1, 2), run.texts()[2::2]):
        assert f"attempt {attempt} of 2" in text and "test_add" in text
    assert "UNVERIFIED" in run.texts()[6] and "request 1 of 1" in run.texts()[6]
    handover = json.loads(stops[-1]["stdout"])["systemMessage"]
    assert "HANDED OVER UNVERIFIED" in handover and "retry budget is spent" in handover
    assert world.check_runs() == 3, "the relay runs no check"
    assert len(run.requests) == 7  # the relayed hand-over ends the run: no further model request
    # what the person sees: exit 0 and the last agent message, which now carries the hand-over
    assert run.done.returncode == 0
    said = agent_messages(run)
    assert said[:3] == ["Fixed."] * 3 and "HANDED OVER UNVERIFIED" in said[-1] and "retry budget is spent" in said[-1]
    assert run.events[-1]["type"] == "turn.completed"
    # and a script asks the gate
    status = world.donegate("status", check=False)
    assert status.returncode == 1, status.stdout + status.stderr
    assert "unverified" in status.stdout


def test_a_stop_without_a_new_edit_after_a_refusal_hands_over_at_once(world):
    log = gated(world)
    run = codex_exec(world, [[patch_add(WRONG, "    return a * b")], [message("Fixed.")],
                             [message("I am sure it is fixed.")], relay], log)

    stops = run.stops()
    assert [c["exit"] for c in stops] == [2, 2, 0]
    handover = json.loads(stops[-1]["stdout"])["systemMessage"]
    assert "HANDED OVER UNVERIFIED" in handover and "nothing changed since the last failed check" in handover
    assert "nothing changed since the last failed check" in agent_messages(run)[-1]
    assert world.check_runs() == 1
    assert len(run.requests) == 4
    assert run.done.returncode == 0
    status = world.donegate("status", check=False)
    assert status.returncode == 1 and "unverified" in status.stdout, status.stdout + status.stderr


def test_a_test_file_edit_is_denied_and_a_shell_edit_of_it_is_refused_at_the_stop(world):
    seen: list[str] = []
    run = protected_test_edit(world, seen)
    original = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"

    pre = [c for c in run.calls if c["argv"][:2] == ["hook", "pre-tool-use"]]
    assert pre[0]["payload"]["tool_name"] == "apply_patch"
    assert json.loads(pre[0]["stdout"])["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert seen == [original]  # the denied patch did not touch the file
    texts = run.texts()
    assert "tests/test_calc.py is protected" in texts[1]  # the reason reached the model
    stops = run.stops()
    assert stops[0]["exit"] == 2
    assert "Protected files changed" in texts[3] and "tests/test_calc.py (edited)" in texts[3]
    assert [c["exit"] for c in stops] == [2, 0]
    assert world.read("tests/test_calc.py") == original
    assert world.check_runs() == 1  # the refusal for the edited test runs no check


def test_a_chat_only_turn_is_not_checked(world):
    run = chat_only(world)

    assert run.done.returncode == 0
    assert [c["exit"] for c in run.stops()] == [0]
    assert world.check_runs() == 0
    assert len(run.requests) == 1
    assert world.donegate("status", check=False).returncode == 0


def test_a_committed_wrong_fix_is_refused(world):
    log = gated(world)
    run = codex_exec(world, [[exec_command("sed -i 's/a - b/a * b/' calc.py && git commit -qam 'fix add'")],
                             [message("Fixed and committed.")],
                             [patch_add("    return a * b", "    return a + b")], [message("Fixed for real.")]],
                     log)

    assert "fix add" in world.git("log", "--format=%s", "-3")
    stops = run.stops()
    assert [c["exit"] for c in stops] == [2, 0]
    assert "test_add" in run.texts()[2]
    assert world.check_runs() == 2


def test_the_trust_hashes_are_the_ones_codex_computes(world):
    world.project()
    world.install("codex")
    with CodexServer() as server:
        config = codex_home(world, server)
        assert listed_hooks(world) == []  # an untrusted project's hooks are not even listed
        config.write_text(config.read_text() + project_trust(world.repo))
        listed = {h["key"]: h for h in listed_hooks(world)}
        hooks = json.loads((world.repo / ".codex" / "hooks.json").read_text())
        assert dict(codex_hook_keys(world.repo, hooks)) == {k: h["currentHash"] for k, h in listed.items()}
        assert {h["trustStatus"] for h in listed.values()} == {"untrusted"}
        world.install("codex", "--trust")
        assert {h["key"]: h["trustStatus"] for h in listed_hooks(world)} == {k: "trusted" for k in listed}
    assert sorted(k.rsplit(":", 3)[1] for k in listed) == ["pre_tool_use", "session_start", "stop",
                                                           "user_prompt_submit"]


@pytest.mark.parametrize("trust", ["none", "project", "stale"])
def test_hooks_codex_does_not_trust_do_not_run(world, trust):
    """Installed but not active: without the project's trust Codex loads no project configuration (and says
    so on stderr); with the project trusted but no hook record, or a record for another command, it skips
    the hooks without a word. A wrong fix then ends unchecked."""
    log = gated(world, trust)
    run = codex_exec(world, [[patch_add(WRONG, "    return a * b")], [message("Fixed.")]], log)

    assert run.done.returncode == 0
    assert run.calls == []
    assert world.check_runs() == 0
    assert "return a * b" in world.read("calc.py")
    warned = "Untrusted project-local configuration is disabled" in run.done.stderr
    assert warned == (trust == "none")
    assert "installed but NOT active" in hooks_line(world)


# -- what an agent can do to the gate itself ---------------------------------------------------------

def rewritten_check(world: HostWorld, seen: dict[str, str]) -> Run:
    """A wrong fix and verify.sh rewritten to `exit 0` by a shell redirect; after the refusal the agent runs the
    refusal's advice as one command, then makes the right fix."""
    log = gated(world)

    def follow_the_advice(request: Request) -> list[Item]:
        seen["advice"] = restore_advice(request.text())
        return [exec_command(seen["advice"])]

    turns: list[Turn] = [[patch_add(WRONG, "    return a * b"), exec_command("printf '#!/bin/sh\\nexit 0\\n' > verify.sh")],
                         [message("Fixed: all checks pass.")], follow_the_advice,
                         [patch_add("    return a * b", "    return a + b")], [message("Restored the check and fixed add().")]]
    return codex_exec(world, turns, log)


def test_a_check_rewritten_by_a_redirect_is_refused_and_the_advice_to_restore_it_runs(world):
    seen: dict[str, str] = {}
    run = rewritten_check(world, seen)
    assert run.done.returncode == 0, run.done.stderr
    assert [c["exit"] for c in run.stops()] == [2, 0]
    assert "verify.sh" in seen["advice"] and "changed in this session" in run.texts()[2]
    assert world.read("verify.sh") == world.git("show", "HEAD:verify.sh"), "the operator's check is back"
    assert world.check_runs() == 1, "only the operator's check ran, once, on the right fix"
    assert world.donegate("status", check=False).returncode == 0


def test_a_script_the_check_runs_rewritten_by_a_redirect_is_refused_and_put_back(world):
    """verify.sh hands the work to scripts/test.sh; the agent writes `exit 0` into that script with a redirect.
    The stop refuses without running the agent's version, its advice puts the script back, and the right fix
    then passes the operator's check."""
    log = gated(world)
    (world.repo / "scripts").mkdir()
    script = world.repo / "scripts" / "test.sh"
    script.write_text((world.repo / "verify.sh").read_text().replace('"$0")"', '"$0")/.."'))
    script.chmod(0o755)
    (world.repo / "verify.sh").write_text("#!/bin/sh\nexec \"$(dirname \"$0\")/scripts/test.sh\"\n")
    world.commit("the check lives in scripts/test.sh")
    seen: dict[str, str] = {}

    def follow_the_advice(request: Request) -> list[Item]:
        seen["advice"] = restore_advice(request.text())
        return [exec_command(seen["advice"])]

    run = codex_exec(world, [[patch_add(WRONG, "    return a * b"), exec_command("printf '#!/bin/sh\\nexit 0\\n' > scripts/test.sh")],
                             [message("Fixed: all checks pass.")], follow_the_advice,
                             [patch_add("    return a * b", "    return a + b")], [message("Restored it and fixed add().")]], log)
    assert run.done.returncode == 0, run.done.stderr
    assert [c["exit"] for c in run.stops()] == [2, 0]
    assert "scripts/test.sh" in seen["advice"] and "scripts/test.sh, which verify.sh runs" in run.texts()[2]
    assert script.read_text() == world.git("show", "HEAD:scripts/test.sh"), "the operator's script is back"
    assert world.check_runs() == 1, "only the operator's check ran, once, on the right fix"
    assert world.donegate("status", check=False).returncode == 0


def test_a_long_check_budget_gets_a_stop_hook_limit_the_host_accepts_and_keeps(world):
    """With a 900 s budget, install writes a Stop hook limit past it; Codex trusts and runs those hooks as before
    (a refusal, then a pass), and doctor finds no limit too short."""
    world.env["DONEGATE_VERIFY_TIMEOUT"] = "900"
    run = fix_after_refusal(world)
    assert [c["exit"] for c in run.stops()] == [2, 0], run.done.stderr
    limit = json.loads((world.repo / ".codex" / "hooks.json").read_text())["hooks"]["Stop"][0]["hooks"][0]["timeout"]
    assert limit >= 930
    assert "hook timeout" not in world.donegate("doctor", check=False).stdout


def test_removing_the_hook_settings_is_refused_and_status_says_the_hooks_are_gone(world):
    """The right fix, then the agent removes .codex/hooks.json with a shell command: the stop Codex still runs
    (it read its hooks at the start) is refused, and `status` says the hooks are gone."""
    log = gated(world)
    run = codex_exec(world, [[patch_add(WRONG, "    return a + b"), exec_command("rm .codex/hooks.json")],
                             [message("Fixed, and tidied up.")], [message("Done.")]], log)
    stops = run.stops()
    assert stops and stops[0]["exit"] == 2, [c["exit"] for c in stops]
    assert "hooks in .codex/hooks.json" in run.texts()[2]
    assert world.check_runs() == 0
    status = world.donegate("status", check=False)
    assert status.returncode == 1 and "hooks in .codex/hooks.json are gone" in status.stdout, status.stdout


# -- what an agent can do to the gate from its shell, in ways no path in a command names (findings 1-3) -------
# Codex's own switch: the `hooks` feature (`codex features list`), off in the project's .codex/config.toml, which
# Codex reads for a trusted project; the file Codex loads into its own environment, and so its hooks': ~/.codex/.env
SWITCH_OFF = ("python3 -c \"import pathlib; pathlib.Path('.co' + 'dex/config.toml').write_text("
              "'[features]\\nhooks = false\\n')\"")
ENV_FILE = ("python3 -c \"import os, pathlib; pathlib.Path(os.environ['HOME'], '.co' + 'dex', '.env').write_text("
            "'DONEGATE_VERIFY_COMMAND=true\\n')\"")


def gate_undone(world: HostWorld, undo: str, *then: Turn) -> tuple[Run, Run]:
    """A wrong fix, committed, then `undo` from the shell, and "Done."; then a second `codex exec` playing `then`
    (by default it only talks)."""
    log = gated(world)
    with CodexServer([[exec_command(f"sed -i 's/a - b/a * b/' calc.py && git commit -qam fix && {undo}")],
                      [message("Done.")], [message("Done, as I said.")]]) as server:
        codex_home(world, server)
        first = session(world, server, log)
        server.turns[:] = then or ([message("Nothing to do: add is fixed.")], [message("Nothing to do.")])
        second = session(world, server, log, prompt="Is add fixed?")
    return first, second


def status(world: HostWorld) -> subprocess.CompletedProcess:
    return world.donegate("status", check=False)


def test_a_switch_beside_the_hooks_leaves_the_work_unverified_and_doctor_says_so(world):
    """`[features] hooks = false` written into .codex/config.toml beside the gate's unchanged hooks.json: Codex
    still runs this session's Stop hook (it read its hooks at the start), which refuses as disarmed, naming the
    file; `status` exits 1 naming it, `doctor` says the arming moved, and the next session, which runs no hook at
    all, does not make it verified."""
    first, second = gate_undone(world, SWITCH_OFF)
    assert first.done.returncode == 0, first.done.stderr
    assert tomllib.loads(world.read(".codex/config.toml"))["features"]["hooks"] is False
    features = run_cli([str(cli_path("codex")), "features", "list"], world).stdout
    assert re.search(r"^hooks\s+\w+\s+false$", features, re.M), "the key is Codex's own switch for hooks"
    assert first.stops()[0]["exit"] == 2 and "(.codex/config.toml)" in first.texts()[2], first.texts()[2:]
    assert world.check_runs() == 0, "no check runs at a disarmed gate"
    assert second.calls == [] and second.done.returncode == 0, "Codex honours the switch in the next session"
    assert_switch_reported(world, ".codex/config.toml")


def test_an_environment_file_beside_the_hooks_does_not_choose_the_check(world):
    """~/.codex/.env giving DONEGATE_VERIFY_COMMAND=true (Codex loads it into its own environment as it starts):
    this session's stop is refused as disarmed; in the next session Codex hands the hooks that setting, and the
    gate still runs the operator's verify.sh, which refuses a new wrong edit."""
    first, second = gate_undone(world, ENV_FILE, [exec_command("sed -i 's/a [*] b/a ** b/' calc.py")],
                                [message("Done.")], [message("Done.")])
    assert first.stops()[0]["exit"] == 2 and "~/.codex/.env" in first.texts()[2], first.texts()[2:]
    stop_env = second.stops()[0]["env"]
    assert stop_env.get("DONEGATE_VERIFY_COMMAND") == "true", "Codex passes the file's setting to its hooks"
    assert second.stops()[0]["exit"] == 2 and "test_add" in second.texts()[2], second.texts()[2:]
    assert world.check_runs() == 1, "the operator's check ran, in the second session"
    assert status(world).returncode == 1


def test_a_deleted_state_folder_is_not_a_fresh_start(world):
    """A committed wrong fix, then the gate's state folder deleted: the stop finds no record of the session's
    start, so the check judges the tree and refuses it; `status` exits 1, in this session and after the next."""
    first, second = gate_undone(world, FORGET)
    assert first.stops()[0]["exit"] == 2 and "test_add" in first.texts()[2], first.texts()[2:]
    assert status(world).returncode == 1
    assert "UNVERIFIED" in second.stops()[0]["stdout"], "the next session carries the unverified work on"
    assert status(world).returncode == 1
