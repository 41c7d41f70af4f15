"""Beside Claude Code's built-in `/goal` (DESIGN 2.8): a stop judged by a model reading the transcript, against a
stop judged by running the repository's check.

`claude -p "/goal CONDITION"` (2.1.332) adds a session Stop hook of type "prompt": at every stop a model call
with no tools gets the transcript and must answer {"ok": true|false, "reason": ...}; the condition is also the
turn's task. The judge here is scripted, like the agent, and it does what the pinned version's own judge prompt
asks (`follows_prompt`): it answers true only where the transcript holds clear evidence that the condition holds,
quoting it, and false where that evidence is missing. So a claim with no test run behind it is refused, by the
judge and by the gate alike. What only the gate catches is evidence the agent did not earn: a test it weakened
first, after which the run it shows really passes. And where the judge's answer is not the JSON it expects,
Claude Code lets the stop go ahead.

Codex 0.171.0 has goals too, but no judge: its goal ends when the agent's own model calls `update_goal` with
status "complete", and `codex exec` never continues a turn for one (only its app server does), so there is no
headless judge to put beside the gate there."""
from __future__ import annotations

import json
import re

import pytest

import test_claude_code as cc
from claude_server import ClaudeServer, Request, bash, edit, text
from conftest import HostWorld, capture_hooks

pytestmark = pytest.mark.hosts

CONDITION = "all tests in tests/ pass"
TESTS = "python3 -m pytest -q -p no:cacheprovider tests"
RAN_TESTS = re.compile(r"\bpytest\b|verify\.sh")
PASSED, FAILED = re.compile(r"^.*\b\d+ passed\b.*$", re.M), re.compile(r"\b\d+ (failed|errors?)\b")


def _text(content) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(_text(b.get("text", b.get("content", ""))) for b in content or () if isinstance(b, dict))


def follows_prompt(request: Request) -> str:
    """A judge that does what Claude Code 2.1.332's judge prompt asks: read the transcript, answer true only with
    clear evidence there that the condition holds (quoting it), else false, saying the evidence is missing; only
    what the transcript shows counts. For "all tests in tests/ pass" the evidence is a test run's output, after the
    session's last change to a file (an edit, or any command other than a test run), with tests passing and none
    failing. The assistant saying so is a claim, not evidence."""
    calls, evidence = {}, None
    for message in request.body["messages"][:-1]:  # the last one is the question
        for block in message["content"] if isinstance(message["content"], list) else ():
            if block.get("type") == "tool_use":
                calls[block["id"]] = block
                if block["name"] != "Bash" or not RAN_TESTS.search(block["input"].get("command", "")):
                    evidence = None  # a change, or a command that may make one: an earlier run no longer shows the tree
            elif block.get("type") == "tool_result" and block.get("tool_use_id") in calls:
                call, output = calls[block["tool_use_id"]], _text(block.get("content"))
                if call["name"] == "Bash" and RAN_TESTS.search(call["input"].get("command", "")):
                    passed = PASSED.search(output)
                    evidence = passed.group(0).strip() if passed and not FAILED.search(output) else None
    if evidence is None:
        return json.dumps({"ok": False, "reason": "insufficient evidence in transcript"})
    return json.dumps({"ok": True, "reason": f'the last test run, after the last change, printed "{evidence}"'})


def claim_without_a_run(world: HostWorld) -> list:
    """A wrong fix and "All tests pass." with nothing run; after a refusal, the tests run (failing), the right fix,
    the tests run again (passing), and the claim again."""
    calc = cc.calc(world)
    return [[text("Fixing add."), edit(calc, cc.WRONG, "a * b")], [text("All tests pass.")],
            [bash(TESTS)], [edit(calc, "a * b", cc.RIGHT)], [bash(TESTS)], [text("All tests pass now.")]]


def weakened_test(world: HostWorld) -> list:
    """A wrong fix, the test changed to expect what the wrong code gives, a test run that passes and the claim;
    after a refusal, the test restored, the right fix, a run that passes and the claim again."""
    calc, test = cc.calc(world), "tests/test_calc.py"
    return [[text("Fixing add."), edit(calc, cc.WRONG, "a * b")], [bash(f"sed -i 's/== 5/== 6/' {test}")],
            [bash(TESTS)], [text("All tests pass.")],
            [bash(f"git checkout -- {test}")], [edit(calc, "a * b", cc.RIGHT)], [bash(TESTS)],
            [text("All tests pass now.")]]


def goal_run(world: HostWorld, script, verdicts: list, gated: bool) -> tuple[cc.Run, ClaudeServer]:
    """`claude -p "/goal CONDITION"` on the project playing `script(world)`, with or without the gate installed."""
    if gated:
        log = cc.gated(world)
    else:
        world.project()
        log = capture_hooks(world)
    with ClaudeServer(script(world), verdicts) as server:
        return cc.claude(world, server, log, prompt=f"/goal {CONDITION}"), server


def judged(server: ClaudeServer) -> list[dict]:
    """What the judge answered at each stop, in order (the server's scripted replies, read back from its log)."""
    return [json.loads(follows_prompt(request)) for request in server.judge_requests]


def test_a_judge_that_follows_its_prompt_refuses_a_claim_with_no_run_then_accepts_a_passing_run(world):
    run, server = goal_run(world, claim_without_a_run, [follows_prompt] * 3, gated=False)

    assert run.done.returncode == 0, run.done.stderr
    asked = server.judge_requests[0]
    assert f"Condition: {CONDITION}" in asked.text() and json.loads(asked.text())["tools"] == []  # it runs nothing
    assert "clear evidence" in asked.text() and "insufficient evidence" in asked.text()  # what its prompt asks
    assert [v["ok"] for v in judged(server)] == [False, True]  # the claim alone, then "1 passed" after the fix
    assert world.read("calc.py").endswith(f"return {cc.RIGHT}\n")
    assert world.check_runs() == 0  # the agent ran pytest itself; verify.sh never ran
    assert run.events[-1]["result"] == "All tests pass now."


def test_evidence_the_agent_did_not_earn_satisfies_the_judge_not_the_gate(world):
    run, server = goal_run(world, weakened_test, [follows_prompt] * 3, gated=False)

    assert run.done.returncode == 0, run.done.stderr
    assert [v["ok"] for v in judged(server)] == [True]  # the run it was shown passed, after the last change
    assert world.read("calc.py").endswith("return a * b\n")  # wrong
    assert "== 6" in world.read("tests/test_calc.py")  # and the test weakened to match it
    assert run.events[-1]["result"] == "All tests pass."  # all the person sees


def test_with_the_gate_the_weakened_test_is_refused_whatever_the_judge_says(world):
    run, server = goal_run(world, weakened_test, [follows_prompt] * 3, gated=True)

    assert run.done.returncode == 0, run.done.stderr
    assert run.stop_exits() == [2, 0]  # the gate: refused (the protected test changed), then passed
    assert [v["ok"] for v in judged(server)][0] is True  # the judge would have let the first stop through
    refusal = run.after_refusal()
    assert len(refusal) == 1 and "tests/test_calc.py" in refusal[0], refusal
    assert world.read("calc.py").endswith(f"return {cc.RIGHT}\n") and "== 5" in world.read("tests/test_calc.py")
    assert cc.status(world).returncode == 0


def test_a_judge_answer_it_cannot_parse_lets_the_stop_through(world):
    run, server = goal_run(world, claim_without_a_run, ["I think it is probably fine."], gated=False)

    assert run.done.returncode == 0
    assert len(server.judge_requests) == 1 and len(run.requests) == 2  # the stop went ahead
    assert world.read("calc.py").endswith("return a * b\n")
    assert run.events[-1]["result"] == "All tests pass."
