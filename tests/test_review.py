"""donegate.review: added lines, the verifier's rules, checks, reports and the gate (DESIGN 2.5)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from donegate.review import (Finding, ScriptedReviewer, added_lines, evidence_matches, gate, lint_check, run_review,
                             run_tests, secret_scan, verify, write_reports)

REVIEW = Path(__file__).resolve().parent.parent / "demo" / "review"
PATCH1 = (REVIEW / "0001-bulk-discount.patch").read_text()
PATCH2 = (REVIEW / "0002-fix-discount-boundary.patch").read_text()
PRICING, TESTS = "shop/pricing.py", "tests/test_pricing.py"


def finding(line: int, evidence: str, path: str = PRICING, severity: str = "P1") -> dict:
    return {"path": path, "line": line, "severity": severity, "message": "a problem", "evidence": evidence}


class Reviewer:
    """A reviewer that returns a fixed output, or raises it."""

    name = "fixed"

    def __init__(self, output):
        self.output = output

    def review(self, diff_text):
        if isinstance(self.output, Exception):
            raise self.output
        return self.output


# --- added_lines on the shipped patches ------------------------------------------------------------

def test_added_lines_of_patch_1_are_exactly_the_plus_lines_with_new_line_numbers():
    added = added_lines(PATCH1)
    assert sorted(added) == [(PRICING, n) for n in (4, 5, 6, 10, 13, 14, 15, 16, 17)] + [(TESTS, n) for n in (17, 18, 19, 20)]
    assert added[(PRICING, 15)] == "    if quantity > BULK_THRESHOLD:"
    assert added[(TESTS, 17)] == ""


def test_added_lines_of_patch_2_are_exactly_the_plus_lines_with_new_line_numbers():
    added = added_lines(PATCH2)
    assert sorted(added) == [(PRICING, n) for n in (3, 4, 8, 16)] + [(TESTS, n) for n in (21, 22, 23, 24, 25)]
    assert added[(PRICING, 8)] == 'TAX_SERVICE_KEY = os.environ.get("TAX_SERVICE_KEY", "")'


def test_added_lines_leave_out_context_and_removed_lines():
    added = added_lines(PATCH1)
    assert (PRICING, 12) not in added  # context: raise ValueError(...)
    assert "    return unit_price * quantity" not in added.values()  # removed


def test_text_that_is_not_a_diff_is_an_error_not_an_empty_result():
    with pytest.raises(ValueError, match="unified diff"):
        added_lines("Looks good to me!")


# --- the verifier: each hallucination kind is dropped with its reason -------------------------------

def test_a_finding_on_an_added_line_with_matching_evidence_is_kept():
    checked = verify([finding(15, "if quantity > BULK_THRESHOLD:")], PATCH1)
    assert [(f.path, f.line) for f in checked.kept] == [(PRICING, 15)] and not checked.dropped


def test_a_line_outside_every_hunk_is_dropped_as_not_in_the_diff():
    checked = verify([finding(42, "return net / len(lines)")], PATCH1)
    assert not checked.kept
    assert checked.dropped[0].kind == "not_in_diff" and checked.dropped[0].reason.startswith("not in the diff")


def test_a_context_line_is_dropped_as_not_added_even_with_matching_evidence():
    checked = verify([finding(12, 'raise ValueError("quantity must not be negative")')], PATCH1)
    assert not checked.kept
    assert checked.dropped[0].kind == "not_added" and "not added" in checked.dropped[0].reason


def test_evidence_that_is_not_on_the_added_line_is_dropped_as_a_mismatch():
    checked = verify([finding(16, "total = total * BULK_DISCOUNT")], PATCH1)
    assert not checked.kept
    assert checked.dropped[0].kind == "evidence_mismatch" and "does not match" in checked.dropped[0].reason


def test_evidence_from_another_added_line_does_not_count():
    checked = verify([finding(16, "if quantity > BULK_THRESHOLD:")], PATCH1)
    assert [d.kind for d in checked.dropped] == ["evidence_mismatch"]


def test_a_path_the_diff_does_not_change_is_dropped_as_wrong_path_with_a_hint():
    checked = verify([finding(4, "BULK_THRESHOLD = 10", path="pricing.py")], PATCH1)
    assert not checked.kept
    assert checked.dropped[0].kind == "wrong_path"
    assert "shop/pricing.py:4" in checked.dropped[0].reason


def test_a_dot_slash_path_is_the_same_path():
    assert verify([finding(15, "if quantity > BULK_THRESHOLD:", path="./shop/pricing.py")], PATCH1).kept


@pytest.mark.parametrize("raw", [
    None, "P0 somewhere", [1, 2],
    finding("15", "if quantity"), finding(0, "if quantity"), finding(True, "if quantity"),
    finding(15, "if quantity", severity="critical"), finding(15, "   "),
    {"path": PRICING, "line": 15, "severity": "P1", "evidence": "if quantity"},
])
def test_a_malformed_finding_is_dropped_not_raised(raw):
    checked = verify([raw], PATCH1)
    assert not checked.kept
    assert checked.dropped[0].kind == "malformed" and checked.dropped[0].reason.startswith("malformed finding")


def test_the_matching_rule_strips_both_sides_and_is_otherwise_exact():
    assert evidence_matches("  if quantity > BULK_THRESHOLD:  ", "    if quantity > BULK_THRESHOLD:")
    assert not evidence_matches("if quantity >  BULK_THRESHOLD:", "    if quantity > BULK_THRESHOLD:")
    assert not evidence_matches("IF QUANTITY", "    if quantity > BULK_THRESHOLD:")
    assert not evidence_matches("", "anything")


# --- deterministic checks --------------------------------------------------------------------------

def test_secret_scan_finds_the_aws_key_on_its_added_line_as_p0():
    check = secret_scan(PATCH1)
    assert [(f.path, f.line, f.severity, f.source) for f in check.findings] == [(PRICING, 6, "P0", "secrets")]


def test_secret_scan_ignores_the_removed_key_and_the_environment_lookup():
    assert secret_scan(PATCH2).findings == () and secret_scan(PATCH2).status == "passed"


def test_secret_scan_finds_a_literal_password():
    diff = "--- a/app.py\n+++ b/app.py\n@@ -1,1 +1,2 @@\n x = 1\n+db_password = \"hunter22\"\n"
    assert [(f.line, f.severity) for f in secret_scan(diff).findings] == [(2, "P0")]


def test_lint_finds_the_debug_print_in_library_code_only():
    assert [(f.path, f.line, f.severity) for f in lint_check(PATCH1).findings] == [(PRICING, 14, "P2")]


def test_tests_not_given_are_not_run_never_passed_and_a_crash_is_a_failure():
    def crash() -> int:
        raise RuntimeError("no pytest")

    assert run_tests(None).status == "not_run"
    assert run_tests(lambda: 0).status == "passed"
    assert run_tests(lambda: 1).status == "failed"
    assert run_tests(crash).status == "failed"


# --- the gate --------------------------------------------------------------------------------------

def test_gate_blocks_on_a_verified_p1():
    review = run_review(PATCH2, Reviewer({"findings": [finding(16, "if quantity >= BULK_THRESHOLD:")]}))
    assert not gate(review).passed and gate(review).exit_code == 1


def test_gate_passes_verified_p2_and_p3_findings():
    review = run_review(PATCH2, Reviewer({"findings": [finding(16, "if quantity >= BULK_THRESHOLD:", severity="P2"),
                                                       finding(8, "os.environ.get", severity="P3")]}))
    assert len(review.kept) == 2 and gate(review).passed and gate(review).exit_code == 0


def test_gate_ignores_a_dropped_p0():
    review = run_review(PATCH2, ScriptedReviewer(REVIEW / "findings-0002-hallucinated-p0.json"))
    assert [d.finding.severity for d in review.dropped] == ["P0"]
    assert gate(review).passed


def test_gate_blocks_on_failed_tests():
    review = run_review(PATCH2, Reviewer({"findings": []}), tests=lambda: 1)
    assert not gate(review).passed


def test_an_empty_findings_list_is_a_usable_answer_and_passes():
    assert gate(run_review(PATCH2, Reviewer({"findings": []}))).passed


@pytest.mark.parametrize("output", [[], {"issues": []}, {"findings": "none"}, "Looks good to me", None])
def test_gate_fails_closed_on_reviewer_output_of_the_wrong_shape(output):
    review = run_review(PATCH2, Reviewer(output))
    assert review.reviewer_error and "invalid" in review.reviewer_error
    assert not gate(review).passed


def test_gate_fails_closed_on_a_findings_file_that_is_not_json():
    review = run_review(PATCH2, ScriptedReviewer(REVIEW / "findings-invalid.json"))
    assert "not JSON" in review.reviewer_error and not gate(review).passed


def test_gate_fails_closed_on_a_missing_findings_file(tmp_path):
    review = run_review(PATCH2, ScriptedReviewer(tmp_path / "missing.json"))
    assert "unavailable" in review.reviewer_error and not gate(review).passed


def test_gate_fails_closed_on_a_reviewer_that_raises():
    review = run_review(PATCH2, Reviewer(TimeoutError("model did not answer")))
    assert "unavailable" in review.reviewer_error and not gate(review).passed


# --- reports ---------------------------------------------------------------------------------------

def test_reports_are_written_with_the_sha256_of_their_bytes(tmp_path):
    review = run_review(PATCH1, ScriptedReviewer(REVIEW / "findings-0001-mixed.json"))
    written = write_reports(review, gate(review), tmp_path / "out")
    assert {r.path.name for r in written.values()} == {"review.json", "review.md"}
    for r in written.values():
        assert r.sha256 == hashlib.sha256(r.path.read_bytes()).hexdigest()
    listed = dict(reversed(line.split("  ")) for line in (tmp_path / "out" / "review.sha256").read_text().splitlines())
    assert listed == {r.path.name: r.sha256 for r in written.values()}


def test_the_json_report_records_the_decision_the_diff_hash_and_every_dropped_reason(tmp_path):
    review = run_review(PATCH1, ScriptedReviewer(REVIEW / "findings-0001-mixed.json"))
    record = json.loads(write_reports(review, gate(review), tmp_path)["json"].path.read_text())
    assert record["decision"] == "blocked" and record["exit_code"] == 1
    assert record["diff_sha256"] == hashlib.sha256(PATCH1.encode()).hexdigest()
    assert sorted(d["kind"] for d in record["dropped"]) == sorted(
        ["not_in_diff", "not_added", "evidence_mismatch", "wrong_path", "malformed"])


def test_reports_do_not_repeat_the_leaked_key(tmp_path):
    review = run_review(PATCH1, ScriptedReviewer(REVIEW / "findings-0001-mixed.json"))
    written = write_reports(review, gate(review), tmp_path)
    assert all("AKIAIOSFODNN7EXAMPLE" not in r.path.read_text() for r in written.values())


# --- acceptance ------------------------------------------------------------------------------------

def test_acceptance_the_mixed_findings_keep_exactly_the_true_ones(tmp_path):
    review = run_review(PATCH1, ScriptedReviewer(REVIEW / "findings-0001-mixed.json"))
    kept = {(f.source, f.path, f.line, f.severity) for f in review.kept}
    assert kept == {
        ("reviewer", PRICING, 15, "P1"), ("reviewer", PRICING, 6, "P0"), ("reviewer", PRICING, 14, "P2"),
        ("reviewer", TESTS, 20, "P3"), ("secrets", PRICING, 6, "P0"), ("lint", PRICING, 14, "P2"),
    }
    assert len(review.kept) == 6 and len(review.dropped) == 5
    written = write_reports(review, gate(review), tmp_path)
    assert written["json"].path.is_file() and written["markdown"].path.is_file()
