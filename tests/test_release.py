"""donegate.metrics, the decisions: decide's constraints, the prompt-patch release gate, the registry, the explorer."""
from pathlib import Path

import pytest

from donegate.metrics import (Attempt, Comparison, EvalRun, PromptEdit, PromptPatch, ReleaseDecision,
                              ReleaseRegistry, all_passed, check_boundary_improved, check_holdout_held_out,
                              check_holdout_not_regressed, check_patch_auditable, check_source_cases, decide,
                              load_run, prompt_release_gate, release_explorer, release_verdict, weighted_score)

ROOT = Path(__file__).resolve().parent.parent
EVALS = ROOT / "demo" / "evals"


def good(**change) -> Comparison:
    """A comparison that passes every constraint (+0.20 success, 20 % cheaper), with `change` applied."""
    values = dict(success_before=0.50, success_after=0.70, cost_before=1.00, cost_after=0.80,
                  safety_regressions=(), tests_passed=True)
    values.update(change)
    return Comparison(**values)


def constraint(decision, name):
    return next(c for c in decision.constraints if c.name == name)


def run(name, successes: dict[str, int], attempts: int = 2) -> EvalRun:
    rows = [Attempt(c, i + 1, i < s, 1.0, 1.0, True, True) for c, s in successes.items() for i in range(attempts)]
    return EvalRun(name, tuple(rows))


PATCH = PromptPatch("p", (PromptEdit("be thorough", "be brief"),), ("src-1",))
HOLD_BEFORE, HOLD_AFTER = run("hb", {"h1": 1, "h2": 2}), run("ha", {"h1": 2, "h2": 2})
BOUND_BEFORE, BOUND_AFTER = run("bb", {"src-1": 0}), run("ba", {"src-1": 1})


def gate(patch=PATCH, hb=HOLD_BEFORE, ha=HOLD_AFTER, bb=BOUND_BEFORE, ba=BOUND_AFTER, **kw):
    return prompt_release_gate(patch, holdout_before=hb, holdout_after=ha, boundary_before=bb, boundary_after=ba, **kw)


# decide ---------------------------------------------------------------------------------------------

def test_a_candidate_meeting_every_constraint_is_eligible():
    d = decide(good())
    assert d.eligible and d.failed == ()


def test_every_constraint_is_reported_with_value_threshold_and_sentence():
    d = decide(good())
    assert [c.name for c in d.constraints] == ["no_safety_regressions", "deterministic_tests_passed", "worth_shipping"]
    assert all(c.measured and c.threshold and c.sentence for c in d.constraints)


def test_one_safety_regression_alone_makes_a_candidate_ineligible():
    d = decide(good(safety_regressions=("clean-build-dir",)))
    assert not d.eligible and d.failed == ("no_safety_regressions",)
    assert "clean-build-dir" in constraint(d, "no_safety_regressions").sentence


def test_failed_deterministic_tests_alone_make_a_candidate_ineligible():
    d = decide(good(tests_passed=False))
    assert not d.eligible and d.failed == ("deterministic_tests_passed",)


def test_too_little_gain_alone_makes_a_candidate_ineligible():
    d = decide(good(success_after=0.55, cost_after=0.95))
    assert not d.eligible and d.failed == ("worth_shipping",)


def test_a_huge_success_gain_does_not_buy_a_safety_regression():
    d = decide(good(success_before=0.40, success_after=0.90, cost_after=0.50, safety_regressions=("x",)))
    assert not d.eligible and d.failed == ("no_safety_regressions",)


def test_a_huge_cost_cut_does_not_buy_failed_tests():
    assert not decide(good(cost_after=0.10, tests_passed=False)).eligible


def test_the_success_threshold_is_absolute_percentage_points():
    assert decide(good(success_before=0.60, success_after=0.70, cost_after=1.0)).eligible
    assert not decide(good(success_before=0.60, success_after=0.66, cost_after=1.0)).eligible   # +10 % relative only


def test_a_gain_just_below_ten_points_is_not_enough_without_a_cost_cut():
    assert not decide(good(success_before=0.60, success_after=0.69, cost_after=1.0)).eligible


def test_cost_falling_fifteen_percent_with_success_held_is_enough():
    assert decide(good(success_before=0.60, success_after=0.60, cost_after=0.85)).eligible


def test_cost_falling_less_than_fifteen_percent_is_not_enough():
    assert not decide(good(success_before=0.60, success_after=0.60, cost_after=0.86)).eligible


def test_a_cost_cut_does_not_buy_a_drop_in_success():
    d = decide(good(success_before=0.60, success_after=0.59, cost_after=0.20))
    assert not d.eligible and "dropped" in constraint(d, "worth_shipping").sentence


def test_decide_on_the_demo_rejects_the_candidate_naming_safety_and_accepts_the_fixed_one():
    base, cand, fixed = (load_run(EVALS / f"{n}.json") for n in ("baseline", "candidate", "candidate-fixed"))
    assert decide(cand, base).failed == ("no_safety_regressions",)
    assert decide(fixed, base).eligible


def test_the_weighted_score_approves_the_demo_candidate_that_decide_rejects():
    base, cand = load_run(EVALS / "baseline.json"), load_run(EVALS / "candidate.json")
    from donegate.metrics import compare
    c = compare(cand, base)
    assert weighted_score(c.success_change, c.cost_reduction) > 0 and not decide(cand, base).eligible


# the prompt-patch release gate ----------------------------------------------------------------------

def test_a_complete_patch_that_improves_the_boundary_goes_to_canary():
    assert gate().result == "release_to_canary"


def test_an_empty_patch_is_rejected():
    d = gate(patch=PromptPatch("p", (), ("src-1",)))
    assert d.result == "reject_candidate" and d.failed == ("patch_auditable",)


def test_an_edit_without_old_text_is_not_auditable():
    assert not check_patch_auditable(PromptPatch("p", (PromptEdit("", "new"),), ("s",))).passed


def test_an_edit_that_changes_nothing_is_not_auditable():
    assert not check_patch_auditable(PromptPatch("p", (PromptEdit("same", "same"),), ("s",))).passed


def test_a_patch_without_source_cases_is_rejected():
    d = gate(patch=PromptPatch("p", PATCH.edits, ()))
    assert d.result == "reject_candidate" and d.failed == ("source_cases_recorded",)


def test_a_regressed_holdout_is_rejected():
    d = gate(ha=run("ha", {"h1": 0, "h2": 2}))
    assert d.result == "reject_candidate" and d.failed == ("holdout_not_regressed",)


def test_an_unchanged_holdout_is_not_a_regression():
    assert check_holdout_not_regressed(HOLD_BEFORE, run("same", {"h1": 1, "h2": 2})).passed


def test_a_holdout_measured_on_a_different_case_set_fails_saying_so():
    check = check_holdout_not_regressed(HOLD_BEFORE, run("ha", {"h1": 2}))
    assert not check.passed and "different cases" in check.sentence and "h2" in check.sentence


def test_a_boundary_that_stays_equal_is_not_improved():
    assert not check_boundary_improved(BOUND_BEFORE, run("same", {"src-1": 0})).passed


def test_a_boundary_measured_on_a_different_case_set_fails():
    assert not check_boundary_improved(BOUND_BEFORE, run("ba", {"other": 2})).passed


def test_a_source_case_inside_the_holdout_is_rejected():
    assert not check_holdout_held_out(PATCH, run("h", {"h1": 1, "src-1": 1})).passed


def test_an_empty_set_of_checks_never_passes():
    assert release_verdict([]) == "reject_candidate" and not all_passed([])


def test_an_ineligible_decide_result_rejects_the_patch():
    d = gate(eligibility=decide(good(safety_regressions=("x",))))
    assert d.result == "reject_candidate" and d.failed == ("decide_eligible",)


def test_the_release_gate_never_answers_stable():
    results = {gate().result, gate(patch=PromptPatch("p", (), ())).result, release_verdict([])}
    assert results <= {"release_to_canary", "reject_candidate"}


# the registry ---------------------------------------------------------------------------------------

def test_stable_cannot_be_set_directly():
    reg = ReleaseRegistry("v1")
    with pytest.raises(AttributeError, match="promote"):
        reg.stable = "v2"
    assert reg.stable == "v1"


def test_a_rejected_candidate_cannot_go_to_canary():
    reg = ReleaseRegistry("v1")
    with pytest.raises(ValueError, match="reject_candidate"):
        reg.release_to_canary("v2", gate(patch=PromptPatch("p", (), ())))
    assert reg.canary is None


def test_a_decision_claiming_canary_without_checks_is_refused():
    with pytest.raises(ValueError):
        ReleaseRegistry("v1").release_to_canary("v2", ReleaseDecision("p", "release_to_canary", ()))


def test_release_to_canary_leaves_stable_unchanged():
    reg = ReleaseRegistry("v1")
    reg.release_to_canary("v2", gate())
    assert (reg.stable, reg.canary, reg.history) == ("v1", "v2", [])


def test_promotion_makes_the_canary_stable_and_records_who_when_why():
    reg = ReleaseRegistry("v1")
    reg.release_to_canary("v2", gate())
    record = reg.promote(who="ana", why="canary clean for two days")
    assert (reg.stable, reg.canary) == ("v2", None)
    assert reg.history == [record]
    assert (record.previous, record.promoted, record.who, record.why) == ("v1", "v2", "ana", "canary clean for two days")
    assert record.when.endswith("+00:00")


def test_promotion_without_a_canary_is_refused():
    with pytest.raises(ValueError, match="canary"):
        ReleaseRegistry("v1").promote(who="ana", why="because")


def test_promotion_without_who_or_why_is_refused():
    reg = ReleaseRegistry("v1")
    reg.release_to_canary("v2", gate())
    for who, why in (("", "reason"), ("ana", "  ")):
        with pytest.raises(ValueError):
            reg.promote(who=who, why=why)
    assert reg.stable == "v1"


def test_the_history_cannot_be_edited_through_its_copy():
    reg = ReleaseRegistry("v1")
    reg.release_to_canary("v2", gate())
    reg.promote(who="ana", why="ok")
    reg.history.clear()
    assert len(reg.history) == 1


# the explorer ---------------------------------------------------------------------------------------

def test_the_explorer_starts_with_no_change_and_refuses_it():
    ex = release_explorer(0.6, 1.0)
    assert not ex.decision.eligible and ex.decision.failed == ("worth_shipping",)
    assert "worth_shipping" in ex.html.value


def test_the_explorer_approves_a_ten_point_gain():
    ex = release_explorer(0.6, 1.0)
    ex.success_change.value = 0.10
    assert ex.decision.eligible and "eligible for release" in ex.html.value


def test_the_explorer_shows_the_score_approving_while_the_gate_refuses_a_safety_regression():
    ex = release_explorer(0.6, 1.0)
    ex.success_change.value = 0.30
    ex.cost_reduction.value = 0.40
    ex.safety_regressions.value = 1
    assert ex.score > 0 and ex.decision.failed == ("no_safety_regressions",)
    assert "not eligible: no_safety_regressions" in ex.html.value and "approve" in ex.text()


def test_the_explorer_reacts_to_the_tests_checkbox():
    ex = release_explorer(0.6, 1.0)
    ex.success_change.value = 0.20
    ex.tests_passed.value = False
    assert ex.decision.failed == ("deterministic_tests_passed",)
    assert "not eligible: deterministic_tests_passed" in ex.html.value


def test_the_explorer_shows_its_state_without_a_live_widget_view():
    bundle = release_explorer(0.6, 1.0)._repr_mimebundle_()
    assert "worth_shipping" in bundle["text/html"] and "NOT ELIGIBLE" in bundle["text/plain"]
