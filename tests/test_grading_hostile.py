"""Hostile and careless lab01 submissions through the self-check, one check per test so that they spread
over the workers (test_grading.py grades the same fixtures the instructor's way, beside honest classmates).

The hostile ones reach for the course from an answer cell, or reconfigure the kernel the tests run in; in the
sandbox there is nothing to reach, and the judge does not trust the kernel, so each gets what the stub gets.
test_instructor.py grades the same notebooks with the sandbox or the judge off: then they get what they came for.
"""
from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from donegate.selfcheck import check

pytestmark = pytest.mark.grading

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "grading" / "fixtures"
LAB01 = "lab01-fail-open-hooks"


def run_check(notebook: Path, root, progress_path: Path):
    lines: list[str] = []
    return check(notebook, root=root, progress_path=progress_path, echo=lines.append), "\n".join(lines)


# One fixture per way of attacking the self-check's own layout: the checkout's solutions/ beside the learner's
# notebook, its throw-away course on disk, its forked grader, a process that outlives the kernel, the kernel
# reconfigured, a builtin rebound. Every hostile fixture (these and the seven others of the same kinds) is graded
# in test_grading.py through the same sandbox and judge, and in test_instructor.py without them.
HOSTILE = ["reads-solution", "poisons-source", "kills-grader", "leaves-a-daemon", "input-transformer", "rebinds-type"]


def daemons_left(wait: float = 10) -> list[str]:
    """The hostile daemons still running after `wait` seconds at most: one another test's sandbox is running
    at this moment ends with it; one that outlived its sandbox sleeps two minutes."""
    for _ in range(int(wait * 10)):
        left = subprocess.run(["pgrep", "-f", "donegate-hostile-daemon"], capture_output=True, text=True).stdout.split()
        if not left:
            break
        time.sleep(0.1)
    return left


@pytest.mark.parametrize("student", HOSTILE)
def test_a_hostile_lab01_gets_nothing_from_the_self_check(student, tmp_path):
    """grading/fixtures/<student>: the released stub with an answer cell that reaches for the course (the
    self-check's own course holds the source, a gradebook and the submission), which the kernel's sandbox
    does not have, or reconfigures the kernel the tests run in, which the judge does not trust."""
    mine = tmp_path / f"{LAB01}.ipynb"
    shutil.copyfile(FIXTURES / student / LAB01 / f"{LAB01}.ipynb", mine)
    result, _ = run_check(mine, None, tmp_path / "progress.json")
    assert (result.score, result.exit_code) == (0, 1)
    if student == "leaves-a-daemon":
        assert daemons_left() == []


@pytest.mark.parametrize("student, score", [("copy-pasted-answer", 22), ("deleted-answer", 2)])
def test_an_honest_slip_nbgrader_cannot_grade_alone_gets_its_honest_score(student, score, tmp_path):
    mine = tmp_path / f"{LAB01}.ipynb"
    shutil.copyfile(FIXTURES / student / LAB01 / f"{LAB01}.ipynb", mine)
    result, _ = run_check(mine, None, tmp_path / "progress.json")
    assert result.score == score
