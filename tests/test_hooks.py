"""The contract of donegate.hooks (DESIGN 2.1): events, decisions, matchers, the registry, command hooks, settings."""
from __future__ import annotations

import json
import sys
import threading

import pytest

from donegate.hooks import (
    EVENTS,
    HOST_ALIASES,
    CommandHook,
    Decision,
    HookRegistry,
    Matcher,
    canonical_event,
    load_settings,
    parse_command_output,
)

BASH_LS = {"tool_name": "Bash", "tool_input": {"command": "ls"}}


def bash(command: str) -> dict:
    return {"tool_name": "Bash", "tool_input": {"command": command}}


def python_hook(code: str, timeout: float = 10) -> CommandHook:
    """A command hook running `code` with this interpreter: portable, no shell involved."""
    return CommandHook([sys.executable, "-c", code], timeout=timeout)


def deny_all(reason: str = "no"):
    return lambda payload: Decision.deny(reason)


def crash(payload):
    return payload["tool_input"]["missing_key"]


# --- events -------------------------------------------------------------------------------------

def test_events_are_the_seven_moments_of_the_loop_in_order():
    assert EVENTS == ("session_start", "user_input", "before_turn", "before_tool_call",
                      "after_tool_call", "after_turn", "on_stop")


def test_host_event_names_map_to_our_events():
    assert HOST_ALIASES == {"PreToolUse": "before_tool_call", "PostToolUse": "after_tool_call",
                            "Stop": "on_stop", "SessionStart": "session_start",
                            "UserPromptSubmit": "user_input"}
    assert [canonical_event(n) for n in ("PreToolUse", "Stop", "on_stop")] == [
        "before_tool_call", "on_stop", "on_stop"]


def test_unknown_event_is_a_value_error_naming_the_known_events():
    with pytest.raises(ValueError) as err:
        canonical_event("PreToolCall")
    assert "PreToolCall" in str(err.value)
    assert all(event in str(err.value) for event in EVENTS)


# --- decisions ----------------------------------------------------------------------------------

def test_decision_rejects_an_unknown_action():
    with pytest.raises(ValueError, match="allow, deny, ask, block"):
        Decision("approve", "looks fine")


def test_decision_helpers_build_each_action():
    assert Decision.allow() == Decision("allow", "")
    assert Decision.deny("r") == Decision("deny", "r")
    assert Decision.ask("r") == Decision("ask", "r")
    assert Decision.block("r") == Decision("block", "r")
    assert Decision.allow("r", {"command": "x"}).updated_input == {"command": "x"}


# --- matchers -----------------------------------------------------------------------------------

@pytest.mark.parametrize("pattern", ["*", "", None])
def test_star_or_empty_matcher_matches_every_tool(pattern):
    m = Matcher(pattern)
    assert all(m.matches(t) for t in ("Bash", "Edit", "mcp__x__y"))


def test_pipe_separated_names_match_exactly_those_names():
    m = Matcher("Edit|Write")
    assert (m.kind, m.matches("Edit"), m.matches("Write")) == ("names", True, True)
    assert not m.matches("NotebookEdit")
    assert not m.matches("MultiEdit")


def test_comma_separated_names_match_exactly_those_names():
    m = Matcher("Edit, Write")
    assert (m.kind, m.matches("Write"), m.matches("NotebookEdit")) == ("names", True, False)


def test_a_single_plain_name_is_an_exact_name_so_edit_does_not_match_notebookedit():
    m = Matcher("Edit")
    assert m.kind == "names"
    assert m.matches("Edit") and not m.matches("NotebookEdit") and not m.matches("MultiEdit")
    assert not m.matches("Write")


@pytest.mark.parametrize("pattern", ["my-tool", "my_tool", "Tool2", " Edit ", "Edit ,Write"])
def test_names_of_the_plain_alphabet_with_dashes_digits_and_spaces_are_exact(pattern):
    m = Matcher(pattern)
    assert m.kind == "names"
    assert not m.matches("x" + sorted(m.names)[0])


def test_one_character_outside_the_name_alphabet_makes_an_unanchored_regex():
    m = Matcher("Edit.*")
    assert m.kind == "regex"
    assert m.matches("Edit") and m.matches("NotebookEdit") and m.matches("MultiEdit")
    assert not m.matches("Write")
    assert Matcher("mcp__.*").matches("mcp__git__commit") and Matcher("Notebook").kind == "names"


def test_an_anchored_regex_matches_only_the_exact_name():
    m = Matcher("^Edit$")
    assert m.matches("Edit") and not m.matches("NotebookEdit")


def test_parenthesised_alternatives_are_a_regex_not_a_name_list():
    assert Matcher("(Edit|Write)").matches("NotebookEdit")


def test_an_invalid_regex_matcher_is_a_value_error():
    with pytest.raises(ValueError, match="regular expression"):
        Matcher("Edit(")


def test_a_name_list_with_an_empty_name_is_a_value_error():
    with pytest.raises(ValueError, match="empty name"):
        Matcher("Edit|")


def test_a_matcher_on_a_non_tool_event_is_refused():
    with pytest.raises(ValueError, match="tool events only"):
        HookRegistry().register("h", "on_stop", deny_all(), matcher="Bash", on_error="closed")


def test_a_star_hook_on_a_non_tool_event_runs_without_a_tool_name():
    reg = HookRegistry()
    reg.register("keep_going", "on_stop", lambda p: Decision.block("tests are red"), on_error="closed")
    assert reg.run("Stop", {"session_id": "s"}) == Decision("block", "tests are red", hook="keep_going")


def test_a_hook_whose_matcher_rejects_the_tool_does_not_run():
    reg = HookRegistry()
    reg.register("edit_only", "before_tool_call", deny_all(), matcher="^Edit$", on_error="closed")
    assert reg.run("before_tool_call", {"tool_name": "NotebookEdit", "tool_input": {}}).action == "allow"
    assert reg.run("before_tool_call", {"tool_name": "Edit", "tool_input": {}}).action == "deny"


# --- the registry: order, short-circuit, rewrites -------------------------------------------------

def test_hooks_run_in_registration_order():
    seen = []
    reg = HookRegistry()
    for name in ("third", "first", "second"):
        reg.register(name, "before_tool_call", lambda p, n=name: seen.append(n), on_error="open")
    reg.run("before_tool_call", BASH_LS)
    assert seen == ["third", "first", "second"]


def test_the_first_non_allow_short_circuits_and_names_its_hook():
    ran = []
    reg = HookRegistry()
    reg.register("ok", "before_tool_call", lambda p: ran.append("ok"), on_error="closed")
    reg.register("guard", "before_tool_call", deny_all("not today"), on_error="closed")
    reg.register("later", "before_tool_call", lambda p: ran.append("later"), on_error="closed")
    decision = reg.run("before_tool_call", BASH_LS)
    assert decision == Decision("deny", "not today", hook="guard")
    assert ran == ["ok"]


def test_updated_input_is_seen_by_the_next_hook_and_carried_by_the_final_allow():
    seen = []
    reg = HookRegistry()
    reg.register("prefix", "before_tool_call",
                 lambda p: Decision.allow("", {"command": "timeout 60 " + p["tool_input"]["command"]}),
                 on_error="closed")
    reg.register("quiet", "before_tool_call",
                 lambda p: Decision.allow("", {"command": p["tool_input"]["command"] + " -q"}),
                 on_error="closed")
    reg.register("look", "before_tool_call", lambda p: seen.append(p["tool_input"]["command"]),
                 on_error="closed")
    decision = reg.run("before_tool_call", bash("pip install x"))
    assert seen == ["timeout 60 pip install x -q"]
    assert (decision.action, decision.updated_input) == ("allow", {"command": "timeout 60 pip install x -q"})


def test_a_guard_after_a_rewrite_judges_the_rewritten_input():
    reg = HookRegistry()
    reg.register("alias", "before_tool_call",
                 lambda p: Decision.allow("", {"command": "rm -rf build"}), on_error="closed")
    reg.register("guard", "before_tool_call",
                 lambda p: Decision.deny("rm") if "rm -rf" in p["tool_input"]["command"] else None,
                 on_error="closed")
    assert reg.run("before_tool_call", bash("cleanup")).hook == "guard"


def test_an_all_allow_run_without_rewrites_has_no_updated_input():
    reg = HookRegistry()
    reg.register("quiet", "before_tool_call", lambda p: None, on_error="closed")
    decision = reg.run("before_tool_call", BASH_LS)
    assert (decision.action, decision.updated_input, decision.hook) == ("allow", None, None)


def test_run_never_modifies_the_callers_payload():
    payload = bash("ls")
    reg = HookRegistry()
    reg.register("rewrite", "before_tool_call", lambda p: Decision.allow("", {"command": "pwd"}), on_error="closed")
    reg.register("meddle", "before_tool_call", lambda p: p["tool_input"].update(command="rm -rf /"),
                 on_error="closed")
    reg.run("before_tool_call", payload)
    assert payload == bash("ls")


def test_run_accepts_host_event_names():
    reg = HookRegistry()
    reg.register("guard", "before_tool_call", deny_all(), on_error="closed")
    assert reg.run("PreToolUse", BASH_LS).action == "deny"


def test_a_tool_event_payload_without_a_tool_name_is_refused():
    with pytest.raises(ValueError, match="tool_name"):
        HookRegistry().run("before_tool_call", {"tool_input": {"command": "ls"}})


def test_two_hooks_cannot_share_a_name():
    reg = HookRegistry()
    reg.register("guard", "before_tool_call", deny_all(), on_error="closed")
    with pytest.raises(ValueError, match="already registered"):
        reg.register("guard", "on_stop", deny_all(), on_error="closed")


# --- failure policy -----------------------------------------------------------------------------

def test_on_error_must_be_given():
    with pytest.raises(TypeError, match="on_error"):
        HookRegistry().register("guard", "before_tool_call", deny_all())


def test_on_error_other_than_open_or_closed_is_refused_with_the_choice_explained():
    with pytest.raises(ValueError) as err:
        HookRegistry().register("guard", "before_tool_call", deny_all(), on_error="ignore")
    message = str(err.value)
    assert "'open'" in message and "'closed'" in message and "guards" in message


def test_a_fail_open_hook_that_raises_is_skipped_and_recorded():
    reg = HookRegistry()
    reg.register("crashy", "before_tool_call", crash, on_error="open")
    reg.register("guard", "before_tool_call", deny_all("later hook still runs"), on_error="closed")
    assert reg.run("before_tool_call", BASH_LS) == Decision("deny", "later hook still runs", hook="guard")
    assert reg.errors == [{"type": "hook_error", "event": "before_tool_call", "hook": "crashy",
                           "cause": "raised KeyError: 'missing_key'", "policy": "open", "tool_name": "Bash"}]


def test_a_fail_open_crash_alone_lets_the_call_through():
    reg = HookRegistry()
    reg.register("crashy", "before_tool_call", crash, on_error="open")
    assert reg.run("before_tool_call", BASH_LS).action == "allow"


def test_a_fail_closed_hook_that_raises_denies_naming_the_hook_and_the_cause():
    reg = HookRegistry()
    reg.register("no_rm_rf", "before_tool_call", crash, on_error="closed")
    decision = reg.run("before_tool_call", bash("rm -rf /"))
    assert (decision.action, decision.hook) == ("deny", "no_rm_rf")
    assert "no_rm_rf" in decision.reason and "KeyError" in decision.reason
    assert [e["hook"] for e in reg.errors] == ["no_rm_rf"]


def test_a_fail_closed_failure_on_stop_blocks():
    reg = HookRegistry()
    reg.register("verify", "on_stop", crash, on_error="closed")
    assert reg.run("on_stop", {"tool_input": {}}).action == "block"


def test_a_fail_closed_hook_over_its_time_budget_denies():
    release = threading.Event()
    reg = HookRegistry()
    reg.register("slow", "before_tool_call", lambda p: release.wait(5), on_error="closed", timeout=0.05)
    try:
        decision = reg.run("before_tool_call", BASH_LS)
    finally:
        release.set()
    assert (decision.action, decision.hook) == ("deny", "slow")
    assert "time budget" in decision.reason
    assert "time budget" in reg.errors[0]["cause"]


def test_a_fail_open_hook_over_its_time_budget_is_skipped():
    release = threading.Event()
    reg = HookRegistry()
    reg.register("slow", "before_tool_call", lambda p: release.wait(5), on_error="open", timeout=0.05)
    try:
        decision = reg.run("before_tool_call", BASH_LS)
    finally:
        release.set()
    assert decision.action == "allow"
    assert reg.errors[0]["policy"] == "open"


def test_a_hook_within_its_time_budget_decides_normally():
    reg = HookRegistry()
    reg.register("quick", "before_tool_call", deny_all("quick no"), on_error="closed", timeout=5)
    assert reg.run("before_tool_call", BASH_LS) == Decision("deny", "quick no", hook="quick")


@pytest.mark.parametrize("garbage", ["yes", True, {"action": "allow"}, 0])
def test_a_fail_closed_hook_returning_garbage_denies(garbage):
    reg = HookRegistry()
    reg.register("sloppy", "before_tool_call", lambda p: garbage, on_error="closed")
    decision = reg.run("before_tool_call", BASH_LS)
    assert (decision.action, decision.hook) == ("deny", "sloppy")
    assert "expected a Decision or None" in reg.errors[0]["cause"]


# --- ask ----------------------------------------------------------------------------------------

def asking(payload):
    return Decision.ask("download?")


def test_ask_without_a_confirmer_is_denied_saying_why():
    reg = HookRegistry()
    reg.register("confirm", "before_tool_call", asking, on_error="closed")
    decision = reg.run("before_tool_call", BASH_LS)
    assert (decision.action, decision.hook) == ("deny", "confirm")
    assert "no confirmer" in decision.reason


def test_ask_confirmed_continues_to_later_hooks():
    asked = []
    reg = HookRegistry(confirm=lambda decision, payload: asked.append(decision.hook) or True)
    reg.register("confirm", "before_tool_call", asking, on_error="closed")
    reg.register("guard", "before_tool_call", deny_all("still no"), on_error="closed")
    assert reg.run("before_tool_call", BASH_LS) == Decision("deny", "still no", hook="guard")
    assert asked == ["confirm"]


def test_ask_confirmed_with_nothing_after_it_allows():
    reg = HookRegistry(confirm=lambda decision, payload: True)
    reg.register("confirm", "before_tool_call", asking, on_error="closed")
    assert reg.run("before_tool_call", BASH_LS).action == "allow"


@pytest.mark.parametrize("answer", [False, "sure", 1, None])
def test_ask_is_denied_unless_the_confirmer_answers_true(answer):
    reg = HookRegistry(confirm=lambda decision, payload: answer)
    reg.register("confirm", "before_tool_call", asking, on_error="closed")
    assert reg.run("before_tool_call", BASH_LS).action == "deny"


def test_ask_is_denied_when_the_confirmer_raises():
    def broken_confirmer(decision, payload):
        raise RuntimeError("no terminal")
    reg = HookRegistry(confirm=broken_confirmer)
    reg.register("confirm", "before_tool_call", asking, on_error="closed")
    decision = reg.run("before_tool_call", BASH_LS)
    assert decision.action == "deny" and "no terminal" in decision.reason


# --- recorder -----------------------------------------------------------------------------------

def test_the_recorder_receives_each_decision_and_each_error():
    records = []
    reg = HookRegistry(recorder=records.append)
    reg.register("crashy", "before_tool_call", crash, on_error="open")
    reg.register("ok", "before_tool_call", lambda p: Decision.allow("fine"), on_error="closed")
    reg.register("guard", "before_tool_call", deny_all("no"), on_error="closed")
    reg.run("before_tool_call", BASH_LS)
    assert records == [
        {"type": "hook_error", "event": "before_tool_call", "hook": "crashy",
         "cause": "raised KeyError: 'missing_key'", "policy": "open", "tool_name": "Bash"},
        {"type": "hook_decision", "event": "before_tool_call", "hook": "ok", "action": "allow",
         "reason": "fine", "tool_name": "Bash"},
        {"type": "hook_decision", "event": "before_tool_call", "hook": "guard", "action": "deny",
         "reason": "no", "tool_name": "Bash"},
    ]


def test_a_fail_closed_failure_is_recorded_as_an_error_then_a_decision():
    records = []
    reg = HookRegistry(recorder=records.append)
    reg.register("guard", "before_tool_call", crash, on_error="closed")
    reg.run("before_tool_call", BASH_LS)
    assert [(r["type"], r.get("action"), r.get("policy")) for r in records] == [
        ("hook_error", None, "closed"), ("hook_decision", "deny", None)]


# --- command hooks ------------------------------------------------------------------------------

def test_a_command_hook_exiting_2_denies_a_tool_call_with_stderr_as_the_reason():
    hook = python_hook("import sys; print('refusing rm -rf', file=sys.stderr); sys.exit(2)")
    reg = HookRegistry()
    reg.register("guard", "PreToolUse", hook, matcher="Bash", on_error="closed")
    assert reg.run("PreToolUse", bash("rm -rf /")) == Decision("deny", "refusing rm -rf", hook="guard")


def test_exit_2_on_stop_blocks():
    assert parse_command_output("on_stop", 2, "", "tests failed\n") == Decision("block", "tests failed")


def test_a_command_hook_receives_the_host_payload_on_stdin():
    echo = ("import json, sys; d = json.load(sys.stdin); "
            "print(json.dumps({'decision': 'block', 'reason': json.dumps(d, sort_keys=True)}))")
    reg = HookRegistry()
    reg.register("echo", "before_tool_call", python_hook(echo), on_error="closed")
    decision = reg.run("before_tool_call", {"tool_name": "Bash", "tool_input": {"command": "ls"},
                                            "session_id": "s1"})
    received = json.loads(decision.reason)
    assert received["hook_event_name"] == "PreToolUse"
    assert (received["tool_name"], received["tool_input"], received["session_id"]) == (
        "Bash", {"command": "ls"}, "s1")
    assert "cwd" in received and "transcript_path" in received


def test_a_command_hook_with_empty_stdout_allows():
    reg = HookRegistry()
    reg.register("silent", "before_tool_call", python_hook("import sys; sys.stdin.read()"), on_error="closed")
    assert reg.run("before_tool_call", BASH_LS).action == "allow"


def test_a_shell_string_command_hook_runs_through_the_shell():
    python = f'"{sys.executable}"'
    hook = CommandHook(f'{python} -c "import sys" && {python} -c "import sys; sys.exit(2)"')
    assert hook({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}}).action == "deny"


def test_permission_decision_under_hook_specific_output_is_read():
    out = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                             "permissionDecisionReason": "no network"}})
    assert parse_command_output("before_tool_call", 0, out, "") == Decision("deny", "no network")


def test_permission_decision_at_top_level_is_read():
    out = json.dumps({"permissionDecision": "ask", "reason": "sure?"})
    assert parse_command_output("before_tool_call", 0, out, "") == Decision("ask", "sure?")


def test_permission_decision_wins_over_the_older_decision_field():
    out = json.dumps({"decision": "approve", "hookSpecificOutput": {"permissionDecision": "deny"}})
    assert parse_command_output("before_tool_call", 0, out, "").action == "deny"


@pytest.mark.parametrize("event, action", [("before_tool_call", "deny"), ("on_stop", "block")])
def test_the_older_decision_block_refuses(event, action):
    out = json.dumps({"decision": "block", "reason": "tests are red"})
    assert parse_command_output(event, 0, out, "") == Decision(action, "tests are red")


def test_updated_input_from_a_command_hook_rewrites_the_call():
    out = json.dumps({"hookSpecificOutput": {"permissionDecision": "allow",
                                             "updatedInput": {"command": "ls -la"}}})
    reg = HookRegistry()
    reg.register("rewrite", "before_tool_call", python_hook(f"print({out!r})"), on_error="closed")
    assert reg.run("before_tool_call", BASH_LS).updated_input == {"command": "ls -la"}


@pytest.mark.parametrize("stdout", ["OK!", "[1, 2]", '{"decision": "maybe"}',
                                    '{"permissionDecision": "yes"}', '{"updatedInput": "ls"}'])
def test_unusable_stdout_is_a_hook_error(stdout):
    reg = HookRegistry()
    reg.register("chatty", "before_tool_call", python_hook(f"print({stdout!r})"), on_error="closed")
    decision = reg.run("before_tool_call", BASH_LS)
    assert (decision.action, decision.hook) == ("deny", "chatty")
    assert reg.errors and reg.errors[0]["hook"] == "chatty"


def test_a_command_exiting_1_is_a_hook_error_not_a_refusal():
    reg = HookRegistry()
    reg.register("broken", "before_tool_call",
                 python_hook("import sys; print('boom', file=sys.stderr); sys.exit(1)"), on_error="open")
    assert reg.run("before_tool_call", BASH_LS).action == "allow"
    assert reg.errors[0]["cause"] == "command exited 1: boom"


def test_a_command_past_its_timeout_is_killed_and_is_a_hook_error():
    reg = HookRegistry()
    reg.register("hangs", "before_tool_call", python_hook("import time; time.sleep(30)", timeout=0.5),
                 on_error="closed")
    decision = reg.run("before_tool_call", BASH_LS)
    assert (decision.action, decision.hook) == ("deny", "hangs")
    assert "timed out" in reg.errors[0]["cause"]


def test_a_command_that_cannot_start_is_a_hook_error():
    reg = HookRegistry()
    reg.register("ghost", "before_tool_call", CommandHook(["/nonexistent/donegate-hook"]), on_error="closed")
    assert reg.run("before_tool_call", BASH_LS).action == "deny"
    assert "could not start" in reg.errors[0]["cause"]


# --- settings -----------------------------------------------------------------------------------

def guard_settings(tmp_path) -> dict:
    script = tmp_path / "guard.py"
    script.write_text("import json, sys\n"
                      "call = json.load(sys.stdin)\n"
                      "if 'rm -rf' in call['tool_input'].get('command', ''):\n"
                      "    print('no rm -rf', file=sys.stderr); sys.exit(2)\n")
    command = f'"{sys.executable}" "{script}"'
    return {"permissions": {"allow": []},
            "hooks": {"PreToolUse": [{"matcher": "Bash",
                                      "hooks": [{"type": "command", "command": command, "timeout": 10}]}]}}


def test_load_settings_registers_command_hooks_under_our_event_names(tmp_path):
    reg = load_settings(guard_settings(tmp_path), on_error="closed")
    [hook] = reg.hooks
    assert (hook.event, hook.matcher, hook.on_error, hook.handler.timeout) == (
        "before_tool_call", Matcher("Bash"), "closed", 10)
    assert hook.name.startswith("PreToolUse[0].hooks[0]")


def test_loaded_settings_hooks_decide(tmp_path):
    reg = load_settings(guard_settings(tmp_path), on_error="closed")
    assert reg.run("before_tool_call", bash("rm -rf build")).reason == "no rm -rf"
    assert reg.run("before_tool_call", {"tool_name": "Read", "tool_input": {"command": "rm -rf"}}).action == "allow"


def test_load_settings_reads_a_json_file_path(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(guard_settings(tmp_path)))
    assert len(load_settings(path, on_error="closed").hooks) == 1


def test_load_settings_adds_to_a_given_registry_after_its_hooks(tmp_path):
    reg = HookRegistry()
    reg.register("first", "before_tool_call", lambda p: None, on_error="open")
    assert load_settings(guard_settings(tmp_path), on_error="closed", registry=reg) is reg
    assert [h.name for h in reg.hooks][0] == "first" and len(reg.hooks) == 2


def test_load_settings_requires_on_error(tmp_path):
    with pytest.raises(TypeError, match="on_error"):
        load_settings(guard_settings(tmp_path))
    with pytest.raises(ValueError, match="'open' or 'closed'"):
        load_settings(guard_settings(tmp_path), on_error="skip")


@pytest.mark.parametrize("settings, key", [
    ({"hook": {}}, "'hooks'"),
    ({"hooks": []}, "'hooks'"),
    ({"hooks": {"PreToolUSE": []}}, "hooks.PreToolUSE"),
    ({"hooks": {"PreToolUse": {"matcher": "Bash"}}}, "hooks.PreToolUse"),
    ({"hooks": {"PreToolUse": ["Bash"]}}, "hooks.PreToolUse[0]"),
    ({"hooks": {"PreToolUse": [{"matcher": 3, "hooks": []}]}}, "hooks.PreToolUse[0].matcher"),
    ({"hooks": {"PreToolUse": [{"matcher": "Bash("}]}}, "hooks.PreToolUse[0].matcher"),
    ({"hooks": {"PreToolUse": [{"matcher": "Bash"}]}}, "hooks.PreToolUse[0].hooks"),
    ({"hooks": {"Stop": [{"matcher": "Bash", "hooks": []}]}}, "hooks.Stop[0].matcher"),
    ({"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "ok?"}]}]}}, "hooks.Stop[0].hooks[0].type"),
    ({"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}}, "hooks.Stop[0].hooks[0].command"),
    ({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": "3m"}]}]}},
     "hooks.Stop[0].hooks[0].timeout"),
])
def test_malformed_settings_are_a_value_error_naming_the_bad_key(settings, key):
    with pytest.raises(ValueError) as err:
        load_settings(settings, on_error="closed")
    assert key in str(err.value)


def test_a_settings_file_that_is_not_json_is_a_value_error(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text("{hooks: }")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_settings(path, on_error="closed")


def test_malformed_settings_register_nothing(tmp_path):
    settings = guard_settings(tmp_path)
    settings["hooks"]["Stop"] = [{"hooks": [{"type": "command"}]}]
    reg = HookRegistry()
    with pytest.raises(ValueError):
        load_settings(settings, on_error="closed", registry=reg)
    assert reg.hooks == []
