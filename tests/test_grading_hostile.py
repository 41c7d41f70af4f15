"""Hostile and careless lab01 submissions through the self-check, one check per test so that they spread
over the workers (test_grading.py grades the same fixtures the instructor's way, beside honest classmates).

The hostile ones reach for the course from an answer cell; in the sandbox there is nothing to reach, so each
gets what the stub gets. The same notebooks graded with the sandbox off get what they came for.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from donegate.selfcheck import SelfCheckError, check

pytestmark = pytest.mark.grading

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "grading" / "fixtures"
LAB01 = "lab01-fail-open-hooks"


def run_check(notebook: Path, root, progress_path: Path):
    lines: list[str] = []
    return check(notebook, root=root, progress_path=progress_path, echo=lines.append), "\n".join(lines)


HOSTILE = ["reads-solution", "copies-classmate", "extra-credit", "leaves-a-daemon", "kills-grader", "poisons-source",
           "adds-a-trigger", "rewrites-classmate", "input-transformer", "ast-transformer", "post-run-cell",
           "replaces-run-cell", "rebinds-type"]
KERNEL_TRICKS = ["input-transformer", "ast-transformer", "post-run-cell", "replaces-run-cell", "rebinds-type"]


@pytest.mark.parametrize("student", HOSTILE)
def test_a_hostile_lab01_gets_nothing_from_the_self_check(student, tmp_path):
    """grading/fixtures/<student>: the released stub with an answer cell that reaches for the course (the
    self-check's own course holds the source, a gradebook and the submission), which the kernel's sandbox
    does not have, or reconfigures the kernel the tests run in, which the judge does not trust."""
    mine = tmp_path / f"{LAB01}.ipynb"
    shutil.copyfile(FIXTURES / student / LAB01 / f"{LAB01}.ipynb", mine)
    result, _ = run_check(mine, None, tmp_path / "progress.json")
    assert (result.score, result.exit_code) == (0, 1)
    left = subprocess.run(["pgrep", "-f", "donegate-hostile-daemon"], capture_output=True, text=True).stdout.split()
    assert left == []


@pytest.mark.parametrize("student, score", [("copy-pasted-answer", 22), ("deleted-answer", 2)])
def test_an_honest_slip_nbgrader_cannot_grade_alone_gets_its_honest_score(student, score, tmp_path):
    mine = tmp_path / f"{LAB01}.ipynb"
    shutil.copyfile(FIXTURES / student / LAB01 / f"{LAB01}.ipynb", mine)
    result, _ = run_check(mine, None, tmp_path / "progress.json")
    assert result.score == score


@pytest.mark.parametrize("student", ["reads-solution", "extra-credit", "kills-grader"])
def test_the_fixtures_are_real_attacks_without_the_sandbox(student, tmp_path, monkeypatch):
    """The same notebooks graded with the sandbox and the judge switched off get what they came for: the
    defences, not the fixture, are what stop them."""
    monkeypatch.setenv("DONEGATE_SANDBOX", "off")
    monkeypatch.setenv("DONEGATE_JUDGE", "off")
    notebook = tmp_path / f"{LAB01}.ipynb"
    shutil.copy(FIXTURES / student / LAB01 / f"{LAB01}.ipynb", notebook)
    if student == "kills-grader":
        with pytest.raises(SelfCheckError, match="grading machinery failed"):  # its grader was killed
            run_check(notebook, ROOT, tmp_path / "progress.json")
        return
    score = run_check(notebook, ROOT, tmp_path / "progress.json")[0].score
    assert score >= 15 if student == "reads-solution" else score > 22


@pytest.mark.parametrize("student", KERNEL_TRICKS)
def test_the_kernel_tricks_are_real_attacks_without_the_judge(student, tmp_path, monkeypatch):
    """Graded in the sandbox but without the judge, each kernel trick gets points its stub never earns: every
    test after the trick's cell passes (19 of 22) for the IPython tricks, the type-checked cells the global
    type() fools for the other. The judge, not the fixture, is what stops them."""
    monkeypatch.setenv("DONEGATE_JUDGE", "off")
    notebook = tmp_path / f"{LAB01}.ipynb"
    shutil.copy(FIXTURES / student / LAB01 / f"{LAB01}.ipynb", notebook)
    result = run_check(notebook, None, tmp_path / "progress.json")[0]
    passed = {c.name for c in result.cells if c.passed}
    if student == "rebinds-type":
        assert passed == {"test_first_deny_wins", "test_rm_rf_is_blocked"}
    else:
        assert result.score == 19 and "test_matcher_basics" not in passed
