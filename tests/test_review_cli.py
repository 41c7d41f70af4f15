"""`donegate review --diff PATCH --findings FINDINGS.json [--report-dir DIR]`, run as the installed console script."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

REVIEW = Path(__file__).resolve().parent.parent / "demo" / "review"
DONEGATE = Path(sys.executable).parent / "donegate"
PATCH1, PATCH2 = REVIEW / "0001-bulk-discount.patch", REVIEW / "0002-fix-discount-boundary.patch"


def review(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(DONEGATE), "review", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_a_kept_p0_or_p1_blocks_with_exit_1_and_lists_kept_and_dropped(tmp_path):
    done = review("--diff", PATCH1, "--findings", REVIEW / "findings-0001-mixed.json", "--report-dir", tmp_path / "r",
                  cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "kept (6)" in done.stdout and "dropped (5)" in done.stdout
    for reason in ("not in the diff", "not added", "evidence does not match", "wrong path", "malformed finding"):
        assert reason in done.stdout
    assert "BLOCKED" in done.stdout and "verified P1 at shop/pricing.py:15" in done.stdout


def test_only_low_severity_true_findings_pass_with_exit_0(tmp_path):
    done = review("--diff", PATCH2, "--findings", REVIEW / "findings-0002-minor.json", "--report-dir", tmp_path / "r",
                  cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASSED" in done.stdout


def test_a_hallucinated_p0_does_not_block_a_good_change(tmp_path):
    done = review("--diff", PATCH2, "--findings", REVIEW / "findings-0002-hallucinated-p0.json",
                  "--report-dir", tmp_path / "r", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "evidence does not match" in done.stdout


def test_findings_that_are_not_json_block_with_exit_1(tmp_path):
    done = review("--diff", PATCH2, "--findings", REVIEW / "findings-invalid.json", "--report-dir", tmp_path / "r",
                  cwd=tmp_path)
    assert done.returncode == 1
    assert "not JSON" in done.stdout and "BLOCKED" in done.stdout


def test_a_missing_findings_file_blocks_with_exit_1(tmp_path):
    done = review("--diff", PATCH2, "--findings", tmp_path / "none.json", "--report-dir", tmp_path / "r", cwd=tmp_path)
    assert done.returncode == 1
    assert "does not exist" in done.stdout and "BLOCKED" in done.stdout


def test_findings_of_the_wrong_shape_block_with_exit_1(tmp_path):
    (tmp_path / "list.json").write_text(json.dumps([{"path": "shop/pricing.py", "line": 15}]))
    done = review("--diff", PATCH2, "--findings", tmp_path / "list.json", "--report-dir", tmp_path / "r", cwd=tmp_path)
    assert done.returncode == 1 and "invalid" in done.stdout


def test_a_missing_diff_exits_2_with_a_clear_message(tmp_path):
    done = review("--diff", tmp_path / "nope.patch", "--findings", REVIEW / "findings-0002-minor.json", cwd=tmp_path)
    assert done.returncode == 2
    assert "nope.patch does not exist" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "review-report").exists()


def test_a_folder_as_the_diff_exits_2(tmp_path):
    done = review("--diff", tmp_path, "--findings", REVIEW / "findings-0002-minor.json", cwd=tmp_path)
    assert done.returncode == 2 and "cannot read the diff" in done.stderr


def test_a_file_that_is_not_a_diff_exits_2(tmp_path):
    done = review("--diff", REVIEW / "findings-invalid.json", "--findings", REVIEW / "findings-0002-minor.json",
                  cwd=tmp_path)
    assert done.returncode == 2 and "unified diff" in done.stderr and "Traceback" not in done.stderr


def test_missing_arguments_are_an_argparse_error_with_exit_2(tmp_path):
    done = review("--diff", PATCH2, cwd=tmp_path)
    assert done.returncode == 2 and "--findings" in done.stderr


def test_the_default_report_dir_is_review_report_in_the_current_folder(tmp_path):
    done = review("--diff", PATCH2, "--findings", REVIEW / "findings-0002-minor.json", cwd=tmp_path)
    assert done.returncode == 0
    assert sorted(p.name for p in (tmp_path / "review-report").iterdir()) == ["review.json", "review.md", "review.sha256"]


def test_acceptance_keeps_exactly_the_true_findings_and_writes_hashed_reports(tmp_path):
    out = tmp_path / "report"
    done = review("--diff", PATCH1, "--findings", REVIEW / "findings-0001-mixed.json", "--report-dir", out, cwd=tmp_path)
    assert done.returncode == 1
    record = json.loads((out / "review.json").read_text())
    kept = {(f["source"], f["path"], f["line"], f["severity"]) for f in record["kept"]}
    assert kept == {
        ("reviewer", "shop/pricing.py", 15, "P1"), ("reviewer", "shop/pricing.py", 6, "P0"),
        ("reviewer", "shop/pricing.py", 14, "P2"), ("reviewer", "tests/test_pricing.py", 20, "P3"),
        ("secrets", "shop/pricing.py", 6, "P0"), ("lint", "shop/pricing.py", 14, "P2"),
    }
    for name in ("review.json", "review.md"):
        digest = hashlib.sha256((out / name).read_bytes()).hexdigest()
        assert f"{digest}  {name}" in (out / "review.sha256").read_text()
        assert f"{out / name} sha256 {digest}" in done.stdout


def test_review_is_listed_in_help_without_importing_unidiff_to_start():
    probe = ("import sys, donegate.cli; donegate.cli.build_parser(); "
             "print('donegate.review' in sys.modules, 'unidiff' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False False", done.stderr
    assert "review" in subprocess.run([str(DONEGATE), "--help"], capture_output=True, text=True, timeout=60).stdout
