"""donegate.metrics, the numbers: each metric on tiny hand-made runs with known answers, and the demo data."""
import json
from pathlib import Path

import pytest

from donegate.metrics import (Attempt, EvalRun, attempt_from_dict, case_diff, deterministic_tests_passed,
                              latency_percentiles, load_run, mean_cost, pass_at_k, pass_hat_k, percentile,
                              safety_regressions, success_rate, summarize, unsafe_cases)

ROOT = Path(__file__).resolve().parent.parent
EVALS = ROOT / "demo" / "evals"


def run(name, rows):
    """rows: (case_id, success, safe) or (case_id, success, safe, cost, latency, tests_passed)."""
    attempts, count = [], {}
    for row in rows:
        case_id, success, safe, *rest = row
        cost, latency, tests = rest if rest else (1.0, 10.0, True)
        count[case_id] = count.get(case_id, 0) + 1
        attempts.append(Attempt(case_id, count[case_id], success, cost, latency, safe, tests))
    return EvalRun(name, tuple(attempts))


def test_success_rate_is_the_share_of_attempts_that_succeeded():
    r = run("r", [("a", True, True), ("a", False, True), ("b", True, True), ("b", True, True)])
    assert success_rate(r) == 0.75


def test_mean_cost_is_the_average_cost_per_attempt():
    r = run("r", [("a", True, True, 1.0, 1, True), ("a", True, True, 2.0, 1, True), ("b", True, True, 6.0, 1, True)])
    assert mean_cost(r) == 3.0


def test_percentile_uses_nearest_rank_not_interpolation():
    assert percentile([1, 2, 3, 4], 50) == 2          # interpolation would give 2.5
    assert percentile([4, 1, 3, 2], 100) == 4


def test_p95_of_one_to_twenty_is_nineteen_by_nearest_rank():
    assert percentile(list(range(1, 21)), 95) == 19    # rank ceil(0.95 * 20) = 19


def test_p95_of_a_small_sample_is_its_largest_value():
    assert percentile([7, 1, 9], 95) == 9              # rank ceil(2.85) = 3


def test_percentile_rounds_the_rank_up():
    assert percentile(list(range(1, 14)), 95) == 13    # rank ceil(12.35) = 13, not 12
    assert percentile([1, 2, 3, 4, 5], 50) == 3        # rank ceil(2.5) = 3


def test_percentile_of_nothing_is_refused():
    with pytest.raises(ValueError):
        percentile([], 50)


def test_latency_percentiles_return_p50_and_p95_of_the_attempts():
    rows = [("c", True, True, 1.0, float(s), True) for s in range(1, 21)]
    assert latency_percentiles(run("r", rows)) == (10.0, 19.0)


def test_pass_hat_k_counts_only_cases_where_all_k_attempts_succeed():
    r = run("r", [("a", True, True)] * 3 + [("b", True, True), ("b", True, True), ("b", False, True)])
    assert pass_hat_k(r, 3) == 0.5


def test_pass_hat_k_uses_the_combinatorial_estimate_when_k_is_below_n():
    r = run("r", [("a", True, True), ("a", True, True), ("a", False, True)])
    assert pass_hat_k(r, 2) == pytest.approx(1 / 3)    # C(2,2)/C(3,2)


def test_pass_at_k_counts_cases_where_any_attempt_succeeds():
    r = run("r", [("a", False, True), ("a", False, True), ("a", True, True), ("b", False, True)] + [("b", False, True)] * 2)
    assert pass_at_k(r, 3) == 0.5


def test_pass_hat_1_and_pass_at_1_equal_the_success_rate():
    r = run("r", [("a", True, True), ("a", False, True), ("b", True, True), ("b", True, True)])
    assert pass_hat_k(r, 1) == pass_at_k(r, 1) == success_rate(r)


def test_pass_hat_k_refuses_k_larger_than_the_attempts_of_a_case():
    with pytest.raises(ValueError, match="needs at least 3"):
        pass_hat_k(run("r", [("a", True, True), ("a", True, True)]), 3)


def test_a_case_with_one_unsafe_attempt_is_unsafe():
    r = run("r", [("a", True, True), ("a", True, False), ("b", True, True)])
    assert unsafe_cases(r) == ("a",)


def test_safety_regressions_are_cases_safe_before_and_unsafe_after():
    base = run("base", [("a", True, True), ("b", True, True), ("c", True, True)])
    cand = run("cand", [("a", True, True), ("b", True, False), ("c", True, False)])
    assert safety_regressions(cand, base) == ("b", "c")


def test_a_case_fixed_elsewhere_does_not_cancel_a_regression():
    base = run("base", [("a", True, False), ("b", True, True)])
    cand = run("cand", [("a", True, True), ("b", True, False)])
    assert safety_regressions(cand, base) == ("b",)


def test_a_case_unsafe_in_both_runs_is_not_a_regression():
    base = run("base", [("a", True, False)])
    cand = run("cand", [("a", True, False)])
    assert safety_regressions(cand, base) == ()


def test_comparing_runs_over_different_cases_is_refused():
    with pytest.raises(ValueError, match="different cases"):
        safety_regressions(run("cand", [("a", True, True)]), run("base", [("b", True, True)]))


def test_deterministic_tests_pass_only_if_they_passed_after_every_attempt():
    good = run("r", [("a", True, True, 1.0, 1.0, True)] * 2)
    bad = run("r", [("a", True, True, 1.0, 1.0, True), ("a", True, True, 1.0, 1.0, False)])
    assert deterministic_tests_passed(good) and not deterministic_tests_passed(bad)


def test_case_diff_reports_successes_safety_and_cost_per_case():
    base = run("base", [("a", False, True, 2.0, 1.0, True), ("a", True, True, 2.0, 1.0, True)])
    cand = run("cand", [("a", True, True, 1.0, 1.0, True), ("a", True, False, 1.0, 1.0, True)])
    (row,) = case_diff(cand, base)
    assert (row.successes_before, row.successes_after, row.safe_before, row.safe_after) == (1, 2, True, False)
    assert (row.cost_before, row.cost_after, row.change) == (2.0, 1.0, "SAFETY REGRESSION")


def test_an_attempt_listed_twice_is_refused():
    a = Attempt("a", 1, True, 1.0, 1.0, True, True)
    with pytest.raises(ValueError, match="listed twice"):
        EvalRun("r", (a, a))


def test_a_success_written_as_text_is_refused_naming_the_field():
    row = {"case_id": "a", "attempt": 1, "success": "yes", "cost": 1, "latency_s": 1, "safe": True, "tests_passed": True}
    with pytest.raises(ValueError, match="success"):
        attempt_from_dict(row)


def test_demo_runs_cover_the_same_twelve_cases_three_attempts_each():
    runs = [load_run(EVALS / f"{n}.json") for n in ("baseline", "candidate", "candidate-fixed")]
    for r in runs:
        assert r.case_ids == runs[0].case_ids and len(r.case_ids) == 12
        assert all(len(a) == 3 for a in r.by_case().values())


def test_demo_candidate_has_exactly_one_safety_regression_and_the_fixed_one_none():
    base, cand, fixed = (load_run(EVALS / f"{n}.json") for n in ("baseline", "candidate", "candidate-fixed"))
    assert safety_regressions(cand, base) == ("clean-build-dir",)
    assert safety_regressions(fixed, base) == ()


def test_summarize_gathers_the_run_level_metrics():
    s = summarize(load_run(EVALS / "baseline.json"))
    assert (s.cases, s.attempts, s.k) == (12, 36, 3)
    assert s.success_rate == pytest.approx(24 / 36) and s.pass_hat_k == pytest.approx(4 / 12)
