"""Beside Claude Code's built-in `/goal` (DESIGN 2.8): a stop judged by a model reading the transcript, against a
stop judged by running the repository's check, on the same wrong fix.

`claude -p "/goal CONDITION"` (2.1.332) adds a session Stop hook of type "prompt": at every stop a model call
with no tools gets the transcript and must answer {"ok": true|false, "reason": ...}; the condition is also the
turn's task. The judge here is scripted, like the agent: what is shown is not how well a model judges, but what
each kind of stop can know. The judge reads words ("All tests pass."); the gate runs verify.sh. And where the
judge's answer is not the JSON it expects, Claude Code lets the stop go ahead.

Codex 0.171.0 has goals too, but no judge: its goal ends when the agent's own model calls `update_goal` with
status "complete", and `codex exec` never continues a turn for one (only its app server does), so there is no
headless judge to put beside the gate there."""
from __future__ import annotations

import json

import pytest

import test_claude_code as cc
from claude_server import ClaudeServer, edit, text
from conftest import HostWorld, capture_hooks

pytestmark = pytest.mark.hosts

CONDITION = "all tests in tests/ pass"
MET = json.dumps({"ok": True, "reason": 'The assistant fixed add() and said "All tests pass."'})


def wrong_fix_then_claim(world: HostWorld) -> list:
    """The agent's script: a wrong fix, then the claim; after a refusal, the right fix and the claim again."""
    calc = cc.calc(world)
    return [[text("Fixing add."), edit(calc, cc.WRONG, "a * b")], [text("All tests pass.")],
            [edit(calc, "a * b", cc.RIGHT)], [text("All tests pass now.")]]


def goal_run(world: HostWorld, verdicts: list[str], gated: bool) -> tuple[cc.Run, ClaudeServer]:
    """`claude -p "/goal CONDITION"` on the project, with or without the gate installed."""
    if gated:
        log = cc.gated(world)
    else:
        world.project()
        log = capture_hooks(world)
    with ClaudeServer(wrong_fix_then_claim(world), verdicts) as server:
        return cc.claude(world, server, log, prompt=f"/goal {CONDITION}"), server


def test_a_judge_that_reads_all_tests_pass_ends_the_turn_on_a_wrong_fix(world):
    run, server = goal_run(world, [MET], gated=False)

    assert run.done.returncode == 0, run.done.stderr
    judged = server.judge_requests
    assert len(judged) == 1 and "All tests pass." in judged[0].text()  # the judge read the claim
    assert f"Condition: {CONDITION}" in judged[0].text()
    assert json.loads(judged[0].text())["tools"] == []  # it can run nothing and read no file
    assert len(run.requests) == 2  # the turn ended on the judge's word
    assert world.read("calc.py").endswith("return a * b\n")  # wrong, and no check ever ran
    assert world.check_runs() == 0
    assert run.events[-1]["result"] == "All tests pass."  # all the person sees


def test_a_judge_answer_it_cannot_parse_lets_the_stop_through(world):
    run, server = goal_run(world, ["I think it is probably fine."], gated=False)

    assert run.done.returncode == 0
    assert len(server.judge_requests) == 1 and len(run.requests) == 2  # the stop went ahead
    assert world.read("calc.py").endswith("return a * b\n")
    assert run.events[-1]["result"] == "All tests pass."


def test_with_the_gate_the_same_wrong_fix_is_refused_whatever_the_judge_says(world):
    run, server = goal_run(world, [MET, MET], gated=True)

    assert run.done.returncode == 0, run.done.stderr
    assert run.stop_exits() == [2, 0]  # the gate ran verify.sh: refused, then passed
    refusal = run.after_refusal()
    assert len(refusal) == 1 and "test_add" in refusal[0] and "attempt 1 of 3" in refusal[0]
    assert world.read("calc.py").endswith(f"return {cc.RIGHT}\n")
    assert world.check_runs() == 2
    assert cc.status(world).returncode == 0
