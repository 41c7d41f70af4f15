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
HOSTILE = ["reads-solution", "poisons-source", "kills-grader", "leaves-a-daemon", "input-transformer", "rebinds-type",
           "scores-by-result", "resolves-names", "forges-the-judge", "asks-the-judge", "undraws-inputs",
           "formats-the-globals", "lies-in-a-field", "fills-the-sandbox"]


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


@pytest.mark.parametrize("student, lab", [("reads-the-expectation", "lab09-stale-claims"),
                                          ("always-equal-fields", "lab09-stale-claims")])
def test_an_answer_that_only_looks_right_gets_nothing_from_the_self_check(student, lab, tmp_path):
    """lab09's judge_claim reads the verdict off the calling test's code, or returns a real ClaimVerdict whose fields
    equal anything: the test is in another process, and only plain values cross to it."""
    mine = tmp_path / f"{lab}.ipynb"
    shutil.copyfile(FIXTURES / student / lab / f"{lab}.ipynb", mine)
    result, _ = run_check(mine, None, tmp_path / "progress.json")
    assert (result.score, result.exit_code) == (0, 1)


@pytest.mark.parametrize("student, score", [("copy-pasted-answer", 22), ("deleted-answer", 2), ("honest-reaches", 22),
                                            ("honest-machinery", 22)])
def test_an_honest_slip_nbgrader_cannot_grade_alone_gets_its_honest_score(student, score, tmp_path):
    mine = tmp_path / f"{LAB01}.ipynb"
    shutil.copyfile(FIXTURES / student / LAB01 / f"{LAB01}.ipynb", mine)
    result, _ = run_check(mine, None, tmp_path / "progress.json")
    assert result.score == score


STALLS_ITS_EXIT = ("import atexit, signal, time\n"
                   "signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a polite stop is ignored\n"
                   "_ = atexit.register(time.sleep, 120)  # and the exit never ends")


def seconds_to_run(source: str) -> float:
    """How long the course's own Execute (grading/nbgrader_config.py's options, the sandboxed kernel) takes
    to run a one-cell notebook, from starting its kernel to having stopped it."""
    import nbformat
    from traitlets.config import Config
    from donegate.sandbox import SandboxedExecute
    from donegate.selfcheck import grading_options
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    started = time.monotonic()
    SandboxedExecute(config=Config({"Execute": grading_options(ROOT)["Execute"]})).preprocess(nb, {})
    assert nb.cells[0].outputs == []  # the cell ran, without an error
    return time.monotonic() - started


def test_a_kernel_that_will_not_exit_does_not_hold_up_grading():
    """Once its cells have run, the kernel is stopped at once. Asked to exit instead (jupyter_client's default),
    a kernel that ignores SIGTERM and sleeps in its exit holds the grader 2.5 s more: jupyter_client asks, waits
    2.5 s, then sends SIGTERM to the sandbox, which ends it (measured: 3.3 s against 1.1 s for a plain cell;
    stopped at once, 1.0 s for both). A notebook with this cell is also flagged by the judge; this is about time."""
    plain = seconds_to_run("x = 1")
    stalled = seconds_to_run(STALLS_ITS_EXIT)
    assert stalled - plain < 1.2, f"the stalling kernel took {stalled:.1f} s against {plain:.1f} s"


DEEP_OUTPUT = ("ip = get_ipython()\n"
               "pub = ip.display_pub\n"
               "raw = b'{\"data\": {\"application/json\": ' + b'[' * 100000 + b']' * 100000 + b'}, \"metadata\": {}}'\n"
               "pub.session.send(pub.pub_socket, 'display_data', content=raw, parent=pub.parent_header, ident=pub.topic)\n")


def solution_with(source: str, folder: Path) -> Path:
    """lab01's full solution with one more ordinary cell (`source`) after its first answer, saved in `folder`."""
    import json
    nb = json.loads((FIXTURES / "correct" / LAB01 / f"{LAB01}.ipynb").read_text(encoding="utf-8"))
    nb["cells"].insert(5, {"cell_type": "code", "execution_count": None, "id": "one-more-cell", "metadata": {},
                           "outputs": [], "source": source.splitlines(keepends=True)})
    mine = folder / f"{LAB01}.ipynb"
    mine.write_text(json.dumps(nb), encoding="utf-8")
    return mine


def test_an_output_nested_too_deep_to_read_is_a_note_not_a_failed_run(tmp_path):
    """A cell that sends the grader a display 100,000 levels deep (raw bytes, past the kernel's own JSON writer):
    reading it overflows the grader's JSON reader, which used to end the whole autograde run in a RecursionError.
    Now the output is a note in its place, and the notebook is graded: the full solution keeps its 22."""
    result, _ = run_check(solution_with(DEEP_OUTPUT, tmp_path), None, tmp_path / "progress.json")
    assert (result.score, result.exit_code) == (22, 0)


FLOOD_AND_FILL = ("from IPython.display import display\n"
                  "for n in range(5000):\n"
                  "    display(n)\n"
                  "with open('filler', 'wb') as out:\n"
                  "    for _ in range(300):\n"
                  "        out.write(bytes(2 ** 20))\n")


def test_a_flood_of_outputs_and_a_full_disk_end_in_notes_in_the_kernel_s_run(tmp_path):
    """A cell that displays 5,000 outputs and then writes 300 MB into its working folder: the kernel's run keeps
    the cell's first MAX_CELL_OUTPUTS outputs and a note saying so, the folder's quota ends the writing with
    'No space left on device', and the full solution around it keeps its 22."""
    from donegate.sandbox import CUT_OUTPUTS, MAX_CELL_OUTPUTS, SANDBOX_WORK_BYTES
    assert SANDBOX_WORK_BYTES < 300 * 2 ** 20
    result, _ = run_check(solution_with(FLOOD_AND_FILL, tmp_path), None, tmp_path / "progress.json")
    assert (result.score, result.exit_code) == (22, 0)
    page = result.feedback.read_text(encoding="utf-8")
    assert CUT_OUTPUTS.format(MAX_CELL_OUTPUTS) in page
    assert "No space left on device" in page
    assert f">{MAX_CELL_OUTPUTS - 1}<" in page and f">{MAX_CELL_OUTPUTS}<" not in page, "outputs 0 to 999 are kept"
