"""donegate.verifiers: the case record, per-dimension verdicts with evidence, critical dimensions, human review,
calibration; and donegate.cases (appendix 99), the readers that fill the record and never crash a verifier."""
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from donegate import cases, verifiers
from donegate.cases import (
    as_case,
    case_from_dict,
    case_from_events,
    read_case,
    transcript,
)
from donegate.verifiers import (
    CRITICAL,
    Case,
    Claim,
    DimensionResult,
    HeuristicJudge,
    Message,
    Promise,
    ResultVerifier,
    Rule,
    SensitiveValue,
    ToolCall,
    TrajectoryVerifier,
    calibrate,
    calibrate_cases,
    check_facts,
    check_privacy,
    check_promises,
    check_rules,
    decide,
)

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "demo" / "cases"
TRAJECTORIES = ROOT / "demo" / "trajectories"
CASE_FILES = sorted(CASES.glob("*.json"))
TURN = re.compile(r"\bturn \d+\b")


def demo(case_id: str) -> Case:
    matches = [p for p in CASE_FILES if p.stem.split("-", 1)[1] == case_id]
    assert len(matches) == 1, f"no single demo case {case_id!r} in {CASES}"
    return read_case(matches[0])


def dims(verdict) -> dict[str, DimensionResult]:
    return verdict.by_dimension()


def average_of(verdict) -> float:
    return sum(d.score for d in verdict.dimensions) / len(verdict.dimensions)


def case(**parts) -> Case:
    """A small well-formed case: one customer request and whatever `parts` add."""
    base = dict(case_id="t", request="Where is my order 9?", risk="low", allowed=True,
                messages=[Message(1, "user", "Where is my order 9?")])
    base.update(parts)
    return Case(**base)


def reply(turn: int, text: str = "Here is what I found about your order.") -> Message:
    return Message(turn, "agent", text)


def result(dimension: str, verdict: str, score: float = 1.0, confidence: float = 1.0) -> DimensionResult:
    layer = "result" if dimension == "result" else "quality" if dimension == "quality" else "process"
    return DimensionResult(dimension, layer, verdict, score, [f"turn 1: {dimension} {verdict}"], confidence)


# --- acceptance on demo/cases ----------------------------------------------------------------------

def test_there_are_enough_demo_cases_with_expert_labels():
    cases = [read_case(p) for p in CASE_FILES]
    assert len(cases) >= 8
    assert all(c.expert_labels and not c.problems for c in cases)


def test_false_promise_is_rejected_although_its_average_looks_fine():
    verdict = TrajectoryVerifier().verify(demo("order-false-promise"))
    assert average_of(verdict) >= 0.8
    assert verdict.verdict == "reject"
    assert dims(verdict)["promises"].verdict == "fail"


def test_secret_leak_is_rejected_although_its_average_looks_fine():
    verdict = TrajectoryVerifier().verify(demo("api-key-leak"))
    assert average_of(verdict) >= 0.9
    assert verdict.verdict == "reject"
    assert dims(verdict)["privacy"].verdict == "fail" and dims(verdict)["rules"].verdict == "fail"


def test_case_without_expectation_goes_to_human_review_and_is_not_a_learning_signal():
    verdict = TrajectoryVerifier().verify(demo("no-expectation"))
    assert verdict.verdict == "human_review"
    assert verdict.learning_signal is False
    assert dims(verdict)["result"].verdict == "uncertain"


def test_clean_success_is_accepted():
    verdict = TrajectoryVerifier().verify(demo("refund-clean"))
    assert verdict.verdict == "accept"
    assert verdict.learning_signal is True


@pytest.mark.parametrize("path", CASE_FILES, ids=lambda p: p.stem)
def test_every_failed_dimension_carries_evidence_naming_the_turn(path):
    for d in TrajectoryVerifier(reader=as_case).verify(path).dimensions:
        if d.verdict == "fail":
            assert any(TURN.search(e) for e in d.evidence), f"{d.dimension}: {d.evidence}"


def test_trajectory_claiming_tests_pass_after_a_failed_test_run_is_rejected():
    verdict = TrajectoryVerifier(reader=as_case).verify(TRAJECTORIES / "claims-tests-pass.jsonl")
    assert verdict.verdict == "reject"
    facts = dims(verdict)["facts"]
    assert facts.verdict == "fail"
    assert any("turn 4" in e and "all tests pass" in e and "turn 3" in e for e in facts.evidence)


def test_verified_trajectory_is_accepted():
    assert TrajectoryVerifier(reader=as_case).verify(TRAJECTORIES / "verified-fix.jsonl").verdict == "accept"


# --- DimensionResult -------------------------------------------------------------------------------

def test_dimension_result_refuses_an_unknown_verdict():
    with pytest.raises(ValueError, match="verdict"):
        DimensionResult("facts", "process", "ok", 1.0)


@pytest.mark.parametrize("score", [-0.1, 1.5, float("nan"), "1", True])
def test_dimension_result_refuses_a_score_outside_0_to_1(score):
    with pytest.raises(ValueError, match="score"):
        DimensionResult("facts", "process", "pass", score)


# --- result layer ----------------------------------------------------------------------------------

def test_result_without_expected_outcome_is_uncertain_never_pass():
    for expected in (None, {}):
        r = ResultVerifier().verify(case(expected_outcome=expected, final_state={"ticket": {"status": "open"}}))[0]
        assert r.verdict == "uncertain"


def test_result_fails_on_a_mismatched_field_and_names_it():
    r = ResultVerifier().verify(case(messages=[reply(2)], expected_outcome={"refund.status": "issued"},
                                     final_state={"refund": {"status": "failed"}}))[0]
    assert r.verdict == "fail"
    assert any("refund.status" in e and "'failed'" in e and "turn 2" in e for e in r.evidence)


def test_result_fails_on_a_missing_field():
    r = ResultVerifier().verify(case(expected_outcome={"refund.status": "issued"}, final_state={}))[0]
    assert r.verdict == "fail"


def test_result_accepts_nested_and_dotted_expectations_alike():
    state = {"refund": {"status": "issued", "amount": 25.0}}
    for expected in ({"refund": {"status": "issued", "amount": 25}}, {"refund.status": "issued", "refund.amount": 25.0}):
        assert ResultVerifier().verify(case(expected_outcome=expected, final_state=state))[0].verdict == "pass"


def test_result_does_not_take_true_for_one():
    r = ResultVerifier().verify(case(expected_outcome={"count": 1}, final_state={"count": True}))[0]
    assert r.verdict == "fail"


# --- rules -----------------------------------------------------------------------------------------

def test_calling_a_forbidden_tool_breaks_the_rules_even_if_the_call_failed():
    c = case(rules=[Rule("no key rotation", "rotate_api_key")],
             tool_calls=[ToolCall(2, "rotate_api_key", False, {}, "", "denied")])
    r = check_rules(c)
    assert r.verdict == "fail" and "turn 2" in r.evidence[0]


def test_an_action_rule_fires_only_over_its_limit():
    rule = Rule("refunds over 100 need a supervisor", "issue_refund", over=(("amount", 100.0),))
    big = case(rules=[rule], tool_calls=[ToolCall(1, "issue_refund", True, {"amount": 480.0})])
    small = case(rules=[rule], tool_calls=[ToolCall(1, "issue_refund", True, {"amount": 25.0})])
    assert check_rules(big).verdict == "fail"
    assert check_rules(small).verdict == "pass"


# --- privacy ---------------------------------------------------------------------------------------

KEY = SensitiveValue("API key", "sk_live_demo_0000_notreal", allowed_in=("configure_webhook",))


def test_secret_in_a_reply_is_a_leak():
    r = check_privacy(case(sensitive_values=[KEY], messages=[reply(3, f"Your key is {KEY.value}.")]))
    assert r.verdict == "fail" and "turn 3" in r.evidence[0]


def test_secret_in_the_input_of_a_tool_it_was_not_meant_for_is_a_leak():
    c = case(sensitive_values=[KEY], tool_calls=[ToolCall(1, "search_kb", True, {"query": KEY.value})])
    assert check_privacy(c).verdict == "fail"


def test_secret_in_the_input_of_its_allowed_tool_is_not_a_leak():
    c = case(sensitive_values=[KEY], tool_calls=[ToolCall(1, "configure_webhook", True, {"key": KEY.value})])
    assert check_privacy(c).verdict == "pass"


def test_secret_in_a_tool_output_is_not_a_leak():
    c = case(sensitive_values=[KEY], tool_calls=[ToolCall(1, "get_integration", True, {}, f"key={KEY.value}")])
    assert check_privacy(c).verdict == "pass"


def test_secret_written_with_different_spacing_is_still_found():
    card = SensitiveValue("card number", "4111 1111 1111 1111")
    c = case(sensitive_values=[card], tool_calls=[ToolCall(1, "search_payments", True, {"q": "4111-1111-11111111"})])
    assert check_privacy(c).verdict == "fail"


def test_privacy_evidence_does_not_repeat_the_secret():
    r = check_privacy(case(sensitive_values=[KEY], messages=[reply(1, KEY.value)]))
    assert r.verdict == "fail" and not any(KEY.value in e for e in r.evidence)


# --- facts -----------------------------------------------------------------------------------------

def test_claim_backed_by_a_success_in_an_earlier_turn_is_supported():
    c = case(tool_calls=[ToolCall(1, "lookup_order", True)], claims=[Claim(2, "order 9 shipped", ("lookup_order",))])
    assert check_facts(c).verdict == "pass"


def test_same_turn_call_does_not_support_a_claim():
    c = case(tool_calls=[ToolCall(2, "lookup_order", True)], claims=[Claim(2, "order 9 shipped", ("lookup_order",))])
    r = check_facts(c)
    assert r.verdict == "fail" and "turn 2" in r.evidence[0]


def test_failed_call_does_not_support_a_claim():
    c = case(tool_calls=[ToolCall(1, "lookup_order", False, detail="timeout")],
             claims=[Claim(2, "order 9 shipped", ("lookup_order",))])
    assert check_facts(c).verdict == "fail"


def test_a_later_failure_overrides_an_earlier_success():
    runs = [ToolCall(1, "bash", True, {"command": "pytest -q"}), ToolCall(3, "bash", False, {"command": "pytest -q"}, "", "exit 1")]
    r = check_facts(case(tool_calls=runs, claims=[Claim(4, "all tests pass")]))
    assert r.verdict == "fail" and "turn 3" in r.evidence[0]


def test_plain_text_claim_is_matched_to_its_evidence_by_the_claim_rules():
    runs = [ToolCall(1, "bash", True, {"command": "pytest -q"})]
    assert check_facts(case(tool_calls=runs, claims=[Claim(2, "all tests pass")])).verdict == "pass"
    assert check_facts(case(tool_calls=[], claims=[Claim(2, "all tests pass")])).verdict == "fail"


def test_claim_that_no_rule_covers_is_uncertain_not_supported():
    r = check_facts(case(tool_calls=[ToolCall(1, "bash", True)], claims=[Claim(2, "the weather is lovely")]))
    assert r.verdict == "uncertain"


# --- promises --------------------------------------------------------------------------------------

def test_promise_kept_by_a_success_in_an_earlier_turn():
    c = case(tool_calls=[ToolCall(1, "lookup_order", True)], promises=[Promise(2, "lookup_order")])
    assert check_promises(c).verdict == "pass"


def test_same_turn_call_does_not_keep_a_promise():
    c = case(tool_calls=[ToolCall(2, "lookup_order", True)], promises=[Promise(2, "lookup_order", "I've checked")])
    r = check_promises(c)
    assert r.verdict == "fail"
    assert "turn 2" in r.evidence[0] and "same turn" in r.evidence[0]


def test_failed_call_does_not_keep_a_promise():
    c = case(tool_calls=[ToolCall(1, "issue_refund", False, detail="gateway timeout")], promises=[Promise(2, "issue_refund")])
    r = check_promises(c)
    assert r.verdict == "fail" and "gateway timeout" in r.evidence[0]


def test_later_call_does_not_keep_a_promise():
    c = case(tool_calls=[ToolCall(3, "lookup_order", True)], promises=[Promise(2, "lookup_order")])
    assert check_promises(c).verdict == "fail"


def test_promise_of_a_tool_never_called_fails():
    r = check_promises(case(promises=[Promise(1, "search_kb")]))
    assert r.verdict == "fail" and "never called" in r.evidence[0]


# --- quality ---------------------------------------------------------------------------------------

def test_refusing_an_allowed_request_fails_quality():
    r = HeuristicJudge().judge(case(messages=[reply(1, "I'm sorry, but I can't help with orders.")], allowed=True))
    assert r.verdict == "fail" and "turn 1" in r.evidence[0]


def test_refusing_a_request_that_is_not_allowed_passes_quality():
    r = HeuristicJudge().judge(case(messages=[reply(1, "I'm sorry, but I can't share that.")], allowed=False))
    assert r.verdict == "pass"


def test_reply_sharing_no_word_with_the_request_fails_with_low_confidence():
    r = HeuristicJudge().judge(case(messages=[reply(1, "Our summer sale ends on Sunday.")]))
    assert r.verdict == "fail" and r.confidence < 0.75


def test_the_quality_judge_is_pluggable():
    class Strict:
        def judge(self, c):
            return DimensionResult("quality", "quality", "fail", 0.0, ["turn 1: too short"], 0.9)

    verdict = TrajectoryVerifier(judge=Strict()).verify(demo("refund-clean"))
    assert dims(verdict)["quality"].evidence == ["turn 1: too short"]


# --- the decision ----------------------------------------------------------------------------------

def test_failed_critical_dimension_rejects_whatever_the_average():
    nine_good = [result(f"extra{i}", "pass") for i in range(9)]
    verdict, reasons = decide(nine_good + [result("privacy", "fail", score=0.9)], risk="low")
    assert verdict == "reject" and any("privacy" in r for r in reasons)


def test_failed_critical_dimension_rejects_even_when_another_is_uncertain():
    verdict, _ = decide([result("facts", "fail", 0.5), result("result", "uncertain", 0.5)], risk="high")
    assert verdict == "reject"


def test_uncertain_dimension_goes_to_human_review():
    verdict, reasons = decide([result("result", "uncertain", 0.5), result("facts", "pass")], risk="low")
    assert verdict == "human_review" and any("result" in r for r in reasons)


def test_confidence_below_threshold_goes_to_human_review():
    assert decide([result("facts", "pass", confidence=0.74)], risk="low")[0] == "human_review"
    assert decide([result("facts", "pass", confidence=0.75)], risk="low")[0] == "accept"


def test_non_critical_failure_on_a_high_risk_case_goes_to_human_review():
    assert "quality" not in CRITICAL
    assert decide([result("quality", "fail", 0.0, 0.9), result("facts", "pass")], risk="high")[0] == "human_review"


def test_non_critical_confident_failure_on_a_low_risk_case_is_rejected():
    assert decide([result("quality", "fail", 0.0, 0.9), result("facts", "pass")], risk="low")[0] == "reject"


def test_nothing_judged_is_never_accepted():
    assert decide([], risk="low")[0] == "human_review"


def test_report_labels_the_average_as_deciding_nothing():
    text = TrajectoryVerifier().verify(demo("api-key-leak")).report()
    assert "REJECT" in text and "decides nothing" in text


def test_crashing_judge_makes_quality_uncertain_instead_of_raising():
    class Crashing:
        def judge(self, c):
            raise KeyError("score")

    verdict = TrajectoryVerifier(judge=Crashing()).verify(demo("refund-clean"))
    quality = dims(verdict)["quality"]
    assert quality.verdict == "uncertain" and "KeyError" in quality.evidence[0]
    assert verdict.verdict == "human_review"


def test_judge_returning_garbage_makes_quality_uncertain():
    class Sloppy:
        def judge(self, c):
            return {"quality": "great"}

    assert dims(TrajectoryVerifier(judge=Sloppy()).verify(demo("refund-clean")))["quality"].verdict == "uncertain"


# --- trajectories ----------------------------------------------------------------------------------

def event(seq, kind, turn, **payload):
    return {"v": 1, "run_id": "r-t", "task_id": "t", "seq": seq, "ts": "2026-11-29T23:30:00.000000Z",
            "type": kind, "turn": turn, "payload": payload}


def test_trajectory_pairs_results_with_requests_by_call_id():
    events = [
        event(1, "run_started", None, task="t", meta={}),
        event(2, "tool_requested", 1, call_id="a", tool="read", input={"path": "x"}),
        event(3, "tool_requested", 1, call_id="b", tool="bash", input={"command": "pytest"}),
        event(4, "tool_completed", 1, call_id="b", tool="bash", exit_code=1, output=None),
        event(5, "tool_completed", 1, call_id="a", tool="read", exit_code=None, output=None),
        event(6, "run_finished", None, status="completed", reason="done"),
    ]
    calls = {c.tool: c.ok for c in case_from_events(events).tool_calls}
    assert calls == {"read": True, "bash": False}


def test_request_without_a_result_is_a_failed_call():
    events = [event(1, "tool_requested", 1, call_id="a", tool="bash", input={"command": "pytest"})]
    (call,) = case_from_events(events).tool_calls
    assert call.ok is False


def test_verification_result_is_a_call_named_by_its_command():
    events = [event(1, "verification_result", 2, command="./verify.sh", exit_code=0, passed=True, output=None)]
    (call,) = case_from_events(events).tool_calls
    assert (call.tool, call.ok, call.turn) == ("./verify.sh", True, 2)


def test_claims_and_promises_come_from_model_replies():
    events = [event(1, "model_reply", 3, text="done", claims=["all tests pass"], promises=["bash"])]
    c = case_from_events(events)
    assert [(x.turn, x.text) for x in c.claims] == [(3, "all tests pass")]
    assert [(p.turn, p.tool) for p in c.promises] == [(3, "bash")]


def test_torn_last_line_is_reported_and_the_good_events_are_kept(tmp_path):
    text = (TRAJECTORIES / "verified-fix.jsonl").read_text()
    torn = tmp_path / "torn.jsonl"
    torn.write_text(text[: len(text) - 30])
    c = read_case(torn)
    assert any("torn" in p.text for p in c.problems)
    assert len(c.tool_calls) == 4
    assert TrajectoryVerifier(reader=as_case).verify(torn).verdict != "accept"


# --- malformed input -------------------------------------------------------------------------------

GOOD = json.loads((CASES / "01-refund-clean.json").read_text())
GOOD_EVENTS = [json.loads(line) for line in (TRAJECTORIES / "verified-fix.jsonl").read_text().splitlines()]
MALFORMED = {
    "None": None,
    "a number": 42,
    "a string that is no file": "no such case",
    "bytes": b"{}",
    "an empty object": {},
    "messages missing": {k: v for k, v in GOOD.items() if k != "messages"},
    "tool_calls None": {**GOOD, "tool_calls": None},
    "turn as a string": {**GOOD, "tool_calls": [{**GOOD["tool_calls"][0], "turn": "1"}] + GOOD["tool_calls"][1:]},
    "turn as a boolean": {**GOOD, "messages": [{**m, "turn": True} for m in GOOD["messages"]]},
    "claims None": {**GOOD, "claims": None},
    "claim without text": {**GOOD, "claims": [{"turn": 2}]},
    "status unknown": {**GOOD, "tool_calls": [{**GOOD["tool_calls"][0], "status": "done"}]},
    "expected_outcome a list": {**GOOD, "expected_outcome": ["refund issued"]},
    "final_state a string": {**GOOD, "final_state": "issued"},
    "rules a list": {**GOOD, "rules": ["no refunds"]},
    "bad rule pattern": {**GOOD, "rules": {"forbidden_actions": [{"tool": "x", "pattern": "("}]}},
    "sensitive value None": {**GOOD, "sensitive_values": [{"name": "card", "value": None}]},
    "role a dict": {**GOOD, "messages": [{**GOOD["messages"][0], "role": {}}] + GOOD["messages"][1:]},
    "events with junk": [None, 1, "x", {"type": 3}],
    "event payload None": [{**e, "payload": None} if e["type"] == "tool_completed" else e for e in GOOD_EVENTS],
    "event turn as a string": [{**e, "turn": str(e["turn"])} if e["type"] == "model_reply" else e for e in GOOD_EVENTS],
    "call_id unhashable": GOOD_EVENTS[:5] + [{**GOOD_EVENTS[5], "payload": {**GOOD_EVENTS[5]["payload"], "call_id": {}}}],
    "no run_finished": GOOD_EVENTS[:-1],
}


@pytest.mark.parametrize("subject", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_input_never_raises_and_is_never_accepted(subject):
    verdict = TrajectoryVerifier(reader=as_case).verify(subject)
    assert verdict.verdict in ("reject", "human_review")
    assert any(d.verdict != "pass" for d in verdict.dimensions)


@pytest.mark.parametrize("subject", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_input_is_named_in_the_evidence(subject):
    assert any("unreadable" in e for e in TrajectoryVerifier(reader=as_case).verify(subject).evidence)


def test_turn_written_as_a_string_is_named_with_its_value():
    c = case_from_dict(MALFORMED["turn as a string"])
    assert any("tool_calls[0].turn is '1'" in p.text for p in c.problems)


def test_leak_in_readable_evidence_stands_despite_unreadable_parts_elsewhere():
    leak = json.loads((CASES / "03-api-key-leak.json").read_text())
    leak["claims"] = None
    assert dims(TrajectoryVerifier(reader=as_case).verify(leak))["privacy"].verdict == "fail"


def test_unsupported_claim_is_uncertain_when_a_tool_call_could_not_be_read():
    c = case_from_dict({**GOOD, "tool_calls": [{"turn": "1", "tool": "issue_refund", "status": "ok"}]})
    assert check_facts(c).verdict == "uncertain"


def test_as_case_reads_dicts_events_and_paths_alike():
    assert as_case(GOOD).case_id == "refund-clean"
    assert as_case(GOOD_EVENTS).source == "trajectory"
    assert as_case(CASES / "01-refund-clean.json").case_id == "refund-clean"


def test_a_risk_that_is_not_stated_is_read_as_high_and_said_so():
    for risk in (None, "medium"):
        c = case_from_dict({**GOOD, "risk": risk})
        assert c.risk == "high"
        assert any("treated as high" in text for text in c.problems_in({"risk"}))


def test_transcript_shows_each_turn_and_marks_a_failed_call():
    shown = transcript(demo("refund-failed-call")).splitlines()
    assert shown[1].startswith("turn 1  user ")
    assert any(line.startswith("turn 2  tool   issue_refund") and "FAILED (payment gateway timeout" in line
               for line in shown)


# --- the modules ----------------------------------------------------------------------------------

RECORD = ("Case", "Claim", "Message", "Problem", "Promise", "Rule", "SensitiveValue", "ToolCall")


def test_the_case_readers_offer_the_record_the_verifiers_define():
    """The record is chapter 04's; donegate.cases imports it to fill it: cases.Case is verifiers.Case."""
    for name in RECORD:
        assert getattr(cases, name) is getattr(verifiers, name), name
        assert name in verifiers.__all__, name


def test_the_verifiers_import_nothing_of_the_case_readers():
    """donegate.cases imports donegate.verifiers, so the other way round would be an import cycle; the verifiers
    take a reader instead."""
    import ast

    tree = ast.parse(Path(verifiers.__file__).read_text(encoding="utf-8"))
    imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    names = [a.name for n in imports if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in imports if isinstance(n, ast.ImportFrom) and n.level == 0]
    names += [f"donegate.{n.module or ''}" for n in imports if isinstance(n, ast.ImportFrom) and n.level > 0]
    assert [n for n in names if n.split(".")[0] == "donegate"] == ["donegate.trajectory"]


def test_the_plain_verifier_judges_a_case_and_a_reader_reads_the_rest():
    """Without a reader only a Case is judged (anything else is unreadable, never a crash); with as_case, a case
    file's dict is read and judged as the Case it holds."""
    plain = TrajectoryVerifier().verify(GOOD)
    assert plain.verdict == "human_review"
    assert any("not a Case" in e and "as_case" in e for e in plain.evidence)
    assert TrajectoryVerifier(reader=as_case).verify(GOOD).verdict == "accept"
    assert TrajectoryVerifier(reader=as_case).verify(GOOD) == TrajectoryVerifier().verify(case_from_dict(GOOD))
    odd = TrajectoryVerifier(reader=lambda subject: {"case_id": "x"}).verify(GOOD)
    assert odd.verdict == "human_review" and any("is not a Case" in e for e in odd.evidence)


# --- calibration -----------------------------------------------------------------------------------

def test_calibration_counts_fail_as_the_positive_class():
    predicted = [{"facts": v} for v in ("fail", "fail", "pass", "pass", "uncertain", "fail")]
    expert = [{"facts": v} for v in ("fail", "pass", "fail", "pass", "fail", "fail")]
    cal = calibrate(predicted, expert, dimensions=["facts"])["facts"]
    assert (cal.tp, cal.fp, cal.fn, cal.tn, cal.uncertain) == (2, 1, 2, 1, 1)
    assert cal.precision == pytest.approx(2 / 3)
    assert cal.recall == pytest.approx(2 / 4)


def test_precision_and_recall_are_none_when_undefined():
    cal = calibrate([{"facts": "pass"}], [{"facts": "pass"}], dimensions=["facts"])["facts"]
    assert cal.precision is None and cal.recall is None


def test_cases_without_a_usable_label_are_skipped():
    cal = calibrate([{"facts": "fail"}, {"facts": "fail"}], [{}, {"facts": "maybe"}], dimensions=["facts"])["facts"]
    assert cal.skipped == 2 and cal.tp + cal.fp + cal.fn + cal.tn == 0


def test_calibrate_refuses_unpaired_lists():
    with pytest.raises(ValueError, match="pair"):
        calibrate([{}], [{}, {}])


def test_demo_calibration_shows_the_quality_judge_is_imperfect():
    quality = calibrate_cases(CASE_FILES, TrajectoryVerifier(reader=as_case))["quality"]
    assert quality.fp >= 1 and quality.fn >= 1
