"""The instructor's commands (appendix 86): `donegate release` refuses what would publish uncommitted tests or
erase a learner's work; `donegate grade` grades each submission in a process of its own and ends with a
summary. Each test works on a scratch git course holding lab01 only, through the command line.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.grading

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "grading" / "fixtures"
LAB = "lab01-fail-open-hooks"


def git(course: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(course), "-c", "user.name=I", "-c", "user.email=i@example.org", *args],
                          check=True, capture_output=True, text=True).stdout


def donegate(course: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "DONEGATE_ROOT": str(course), **env}
    return subprocess.run([str(Path(sys.executable).parent / "donegate"), *args], cwd=course, env=environment,
                          capture_output=True, text=True, timeout=600)


def make_course(folder: Path) -> Path:
    course = folder / "course"
    for part in (f"solutions/{LAB}", f"labs/{LAB}"):
        shutil.copytree(ROOT / part, course / part)
    (course / "grading").mkdir()
    shutil.copy(ROOT / "grading" / "nbgrader_config.py", course / "grading")
    (course / ".gitignore").write_text("grading/gradebook.db\ngrading/submitted/\ngrading/autograded/\n"
                                       "grading/logs/\ngrading/backup/\n")
    git(course, "init", "-q")
    git(course, "add", ".")
    git(course, "commit", "-q", "-m", "the course")
    return course


@pytest.fixture
def course(tmp_path) -> Path:
    return make_course(tmp_path)


def edit_hidden_test(course: Path) -> None:
    path = course / "solutions" / LAB / f"{LAB}.ipynb"
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        cell["source"] = [line.replace('assert matches("", "Read") is True', "assert True") for line in cell["source"]]
    path.write_text(json.dumps(nb, indent=1))


def test_release_refuses_uncommitted_solutions_and_changes_nothing(course):
    edit_hidden_test(course)
    lab = (course / "labs" / LAB / f"{LAB}.ipynb").read_bytes()
    run = donegate(course, "release")
    assert run.returncode == 2
    assert "solutions/ has changes that are not committed" in run.stderr and f"solutions/{LAB}/{LAB}.ipynb" in run.stderr
    assert (course / "labs" / LAB / f"{LAB}.ipynb").read_bytes() == lab
    assert not (course / "grading" / "gradebook.db").exists()
    # committed, it releases
    git(course, "commit", "-qam", "a hidden test changed on purpose")
    assert donegate(course, "release").returncode == 0


def test_release_never_erases_a_learners_work_without_being_told_and_keeps_a_copy(course):
    mine = course / "labs" / LAB / f"{LAB}.ipynb"
    committed = mine.read_bytes()
    mine.write_bytes(committed.replace(b"raise NotImplementedError()", b"return True", 1))
    (course / "labs" / LAB / "notes.md").write_text("my notes")
    run = donegate(course, "release", LAB)
    assert run.returncode == 2 and "--overwrite-labs" in run.stderr
    assert f"labs/{LAB}/notes.md" in run.stderr and mine.read_bytes() != committed  # untouched
    run = donegate(course, "release", LAB, "--overwrite-labs")
    assert run.returncode == 0, run.stderr
    [backup] = (course / "grading" / "backup").iterdir()
    assert (backup / "labs" / LAB / "notes.md").read_text() == "my notes"
    assert (backup / "labs" / LAB / f"{LAB}.ipynb").read_bytes() != committed
    assert mine.read_bytes() == committed  # the release is the committed one, byte for byte
    assert git(course, "status", "--porcelain", "--", "labs") == ""  # notes.md went, and was kept first


def test_release_outside_git_and_of_an_unknown_assignment_is_refused(tmp_path, course):
    shutil.rmtree(course / ".git")
    run = donegate(course, "release")
    assert run.returncode == 2 and "not a git checkout" in run.stderr
    run = donegate(make_course(tmp_path / "again"), "release", "lab99-nothing")
    assert run.returncode == 2 and "no assignment lab99-nothing" in run.stderr


def test_grade_before_release_or_without_submissions_says_what_to_do(course):
    run = donegate(course, "grade")
    assert run.returncode == 2 and "nothing to grade" in run.stderr
    shutil.copytree(FIXTURES / "correct" / LAB, course / "grading" / "submitted" / "ada" / LAB)
    run = donegate(course, "grade")
    assert run.returncode == 2 and "donegate release" in run.stderr


CLASS = ["correct", "input-transformer", "kills-grader", "stub"]  # sorted: the stub is graded after the killer


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """A released lab01 and four submissions, one of which kills the process that runs its kernel (graded
    without the sandbox, which would otherwise stop it), through `donegate grade`."""
    course = make_course(tmp_path_factory.mktemp("class"))
    assert donegate(course, "release").returncode == 0
    for student in CLASS:
        shutil.copytree(FIXTURES / student / LAB, course / "grading" / "submitted" / student / LAB)
    return course, donegate(course, "grade", "--workers", "2", DONEGATE_SANDBOX="off")


def test_grade_names_the_submission_that_killed_its_grader_and_grades_the_rest(graded_class):
    course, run = graded_class
    assert run.returncode == 1
    out = run.stdout
    # two at a time (the default on two cores), so the order of the lines is the order they ended in
    assert re.search(rf"\[\d/4\] {LAB} / kills-grader: FAILED: its grading process was killed by SIGKILL", out), out
    assert re.search(rf"\[\d/4\] {LAB} / stub: 0 / 22", out) and re.search(rf"\[\d/4\] {LAB} / correct: 22 / 22", out)
    assert "Graded 3 of 4 submission(s)" in out and "Failed (1), no score recorded:" in out
    assert f"donegate grade {LAB} --students kills-grader" in out
    assert not (course / "grading" / "autograded" / "kills-grader").joinpath(LAB).exists()


def test_grade_summary_names_the_flagged_submission_and_why(graded_class):
    _, run = graded_class
    assert "Flagged for a person (1)" in run.stdout
    assert f"  {LAB} / input-transformer: cell hook_registry line 6: touches .input_transformers_cleanup" in run.stdout


def test_grade_keeps_nbgraders_log_out_of_the_terminal(graded_class):
    course, run = graded_class
    terminal = run.stdout + run.stderr
    assert "[AutogradeApp]" not in terminal and "SAWarning" not in terminal and "Traceback" not in terminal
    [log] = (course / "grading" / "logs").glob("grade-*.log")
    assert "SAWarning" in log.read_text() or "autograde" in log.read_text().lower()


def test_nbgraders_own_autograde_loses_everyone_after_a_submission_that_kills_it(graded_class, tmp_path):
    """The broken version: the same class through `nbgrader autograde '*'` in one process, without the sandbox.
    The killer ends the run, and the stub after it is never graded."""
    course, _ = graded_class
    copy = tmp_path / "copy"
    shutil.copytree(course, copy, ignore=shutil.ignore_patterns("autograded", "gradebook.db", "logs", "correct",
                                                                 "input-transformer"))
    env = {**os.environ, "DONEGATE_SANDBOX": "off", "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", LAB, "--force"], cwd=copy / "grading",
                   env=env, capture_output=True, check=True)
    run = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", "*", "--force"], cwd=copy / "grading",
                         env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == -9
    assert not (copy / "grading" / "autograded" / "stub").exists()


KERNEL_TRICKS = ["input-transformer", "ast-transformer", "post-run-cell", "replaces-run-cell", "rebinds-type"]


def scores_in(run: subprocess.CompletedProcess) -> dict[str, str]:
    """student -> what `donegate grade` printed for them ("19 / 22", "FAILED: ...")."""
    out = {}
    for line in run.stdout.splitlines():
        if line.startswith("  [") and f"] {LAB} / " in line:
            student, _, rest = line.split(f"] {LAB} / ", 1)[1].partition(": ")
            out[student] = rest.rsplit(" (", 1)[0]
    return out


@pytest.fixture(scope="module")
def without_the_defences(tmp_path_factory):
    """The hostile fixtures graded with one defence off at a time, to show each is what stops them: the kernel
    tricks with the judge off (in the sandbox), then two that reach for the course with the sandbox and the
    judge off, each alone (extra-credit writes the whole gradebook, so it goes last)."""
    course = make_course(tmp_path_factory.mktemp("undefended"))
    assert donegate(course, "release").returncode == 0
    for student in [*KERNEL_TRICKS, "correct", "reads-solution", "extra-credit"]:
        shutil.copytree(FIXTURES / student / LAB, course / "grading" / "submitted" / student / LAB)
    tricks = donegate(course, "grade", DONEGATE_JUDGE="off")  # the two others score 0 here: the sandbox is on
    reach = {student: donegate(course, "grade", "--students", student, DONEGATE_JUDGE="off", DONEGATE_SANDBOX="off")
             for student in ("reads-solution", "extra-credit")}
    printed = {s: scores_in(run)[s] for s, run in reach.items()}
    from nbgrader.api import Gradebook
    gradebook = course / "grading" / "gradebook.db"
    wait_for_the_end_of(writers_of(gradebook))  # extra-credit left a process behind that writes it again
    with Gradebook(f"sqlite:///{gradebook}", course_id="donegate") as gb:
        sub = gb.find_submission(LAB, "extra-credit")
        printed["extra-credit in the gradebook"] = f"{sub.score:g} / {sub.max_score:g}"
    return scores_in(tricks), printed


def writers_of(gradebook: Path) -> list[int]:
    """The processes whose command line names `gradebook`: the one the extra-credit fixture leaves behind."""
    found = subprocess.run(["pgrep", "-f", str(gradebook)], capture_output=True, text=True).stdout.split()
    return [int(pid) for pid in found if int(pid) != os.getpid()]


def wait_for_the_end_of(pids: list[int]) -> None:
    """Return once every process of `pids` has ended: an event (the kernel's pidfd), not a deadline."""
    import select
    for pid in pids:
        try:
            handle = os.pidfd_open(pid)
        except ProcessLookupError:
            continue  # already gone
        try:
            select.select([handle], [], [])
        finally:
            os.close(handle)


def test_the_kernel_tricks_get_points_without_the_judge(without_the_defences):
    """In the sandbox but without the judge, every test after the trick's cell passes for the IPython tricks
    (19 of 22), and the two type-checked cells the global type() fools for rebinds-type (2): the judge, not
    the fixture, is what stops them (each is 0 with it: test_grading.py, test_grading_hostile.py)."""
    tricks, _ = without_the_defences
    assert tricks["reads-solution"] == tricks["extra-credit"] == "0 / 22"
    assert {s: v for s, v in tricks.items() if s not in ("reads-solution", "extra-credit")} == {**{t: "19 / 22" for t in KERNEL_TRICKS if t != "rebinds-type"}, "rebinds-type": "2 / 22",
                      "correct": "22 / 22"}


def test_the_course_reaching_fixtures_get_points_without_the_sandbox_and_the_judge(without_the_defences):
    _, reach = without_the_defences
    assert reach["reads-solution"] == "19 / 22"  # the solution's answer cells, run from solutions/ on disk
    earned, _, out_of = reach["extra-credit in the gradebook"].partition(" / ")
    assert float(earned) > float(out_of)  # more than full marks, written into the course's gradebook


# --- a class at once: the same gradebook as nbgrader's own autograde, shards, the report -----------------------

CLASS_LABS = ["lab04-averaged-scores", "recall08-host-answers"]
HONEST = ["averages", "correct", "fail-open", "stub"]  # fixtures of those two that attack nothing: 3 each


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    """A scratch course with two assignments released (once: each test copies it)."""
    course = tmp_path_factory.mktemp("released") / "course"
    for lab in CLASS_LABS:
        for part in (f"solutions/{lab}", f"labs/{lab}"):
            shutil.copytree(ROOT / part, course / part)
    (course / "grading").mkdir()
    shutil.copy(ROOT / "grading" / "nbgrader_config.py", course / "grading")
    shutil.copy(ROOT / "grading" / "mistakes.json", course / "grading")
    git(course, "init", "-q")
    git(course, "add", ".")
    git(course, "commit", "-q", "-m", "the course")
    assert donegate(course, "release").returncode == 0
    return course


def class_course(released: Path, folder: Path, submit: bool = True) -> Path:
    """A copy of the released course and, with `submit`, the honest fixtures of its assignments handed in."""
    course = folder / "course"
    shutil.copytree(released, course)
    for lab in CLASS_LABS if submit else ():
        for student in HONEST:
            if (FIXTURES / student / lab).is_dir():
                shutil.copytree(FIXTURES / student / lab, course / "grading" / "submitted" / student / lab)
    return course


def nbgrader(course: Path, *args: str) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    run = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course / "grading", env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]


def gradebook(course: Path) -> tuple[str, dict]:
    """grades.csv as nbgrader exports it (its rows sorted: nbgrader orders students by name, which fixtures do
    not have, so their order is the gradebook's), and every grade and comment of every submission."""
    from nbgrader.api import Gradebook
    nbgrader(course, "export", "--to", "grades.csv")
    cells = {}
    with Gradebook(f"sqlite:///{course / 'grading' / 'gradebook.db'}", course_id="donegate") as gb:
        for assignment in gb.assignments:
            for sub in assignment.submissions:
                for nb in sub.notebooks:
                    for g in nb.grades:
                        cells[(assignment.name, sub.student.id, g.name)] = (
                            g.auto_score, g.manual_score, g.extra_credit, g.needs_manual_grade)
                    for c in nb.comments:
                        cells[(assignment.name, sub.student.id, c.name, "comment")] = (c.auto_comment, c.manual_comment)
    header, *rows = (course / "grading" / "grades.csv").read_text().splitlines()
    return "\n".join([header, *sorted(rows)]), cells


@pytest.fixture(scope="module")
def one_run(released, tmp_path_factory):
    """The honest class graded by `donegate grade --workers 2` in one run, and by nbgrader alone."""
    ours = class_course(released, tmp_path_factory.mktemp("ours"))
    run = donegate(ours, "grade", "--workers", "2")
    theirs = class_course(released, tmp_path_factory.mktemp("theirs"))
    for lab in CLASS_LABS:
        nbgrader(theirs, "autograde", lab, "--force")
    return ours, run, theirs


def test_a_parallel_run_leaves_the_gradebook_and_grades_csv_nbgrader_leaves(one_run):
    ours, run, theirs = one_run
    assert run.returncode == 0, run.stdout + run.stderr
    assert "6 submission(s), 2 at a time" in run.stdout and "Graded 6 of 6 submission(s)" in run.stdout
    csv_ours, cells_ours = gradebook(ours)
    csv_theirs, cells_theirs = gradebook(theirs)
    assert len(cells_ours) > 30 and cells_ours == cells_theirs
    assert csv_ours == csv_theirs and len(csv_ours.splitlines()) == 1 + 2 * 4  # 4 students, 2 assignments


def test_two_shards_merged_are_the_same_as_one_run(one_run, released, tmp_path):
    """Each shard grades every second submission in a course of its own (as two jobs of a batch system would);
    a third course, released but with nothing graded, merges their grading/ folders."""
    ours, _, _ = one_run
    shards = []
    for k in (1, 2):
        shard = class_course(released, tmp_path / f"shard{k}")
        run = donegate(shard, "grade", "--shard", f"{k}/2")
        assert run.returncode == 0 and "3 submission(s) (shard" in run.stdout, run.stdout + run.stderr
        shards.append(shard / "grading")
    merged = class_course(released, tmp_path / "merged", submit=False)
    run = donegate(merged, "grade", "--merge", *map(str, shards))
    assert run.returncode == 0 and "Merged 6 submission(s) from 2 shard(s)" in run.stdout, run.stdout + run.stderr
    assert gradebook(merged) == gradebook(ours)
    graded = sorted(str(p.relative_to(merged / "grading" / "autograded")) for p in
                    (merged / "grading" / "autograded").glob("*/*/*.ipynb"))
    assert len(graded) == 6 and (merged / "grading" / "report" / "index.html").exists()


def test_a_shard_or_a_merge_that_cannot_be_done_says_why(one_run, tmp_path):
    ours, _, _ = one_run
    run = donegate(ours, "grade", "--shard", "3/2")
    assert run.returncode == 2 and "--shard wants K/N" in run.stderr
    run = donegate(ours, "grade", "--merge", str(tmp_path))
    assert run.returncode == 2 and "no gradebook.db there" in run.stderr
    run = donegate(ours, "grade", "--workers", "0")
    assert run.returncode == 2 and "--workers must be at least 1" in run.stderr


def test_the_class_report_names_the_mistakes_the_class_makes(one_run):
    ours, run, _ = one_run
    page = (ours / "grading" / "report" / "index.html").read_text()
    assert "Class report: grading/report/index.html" in run.stdout
    for png in ("scores.png", "tests.png", "class.png"):
        assert f"src='{png}'" in page and (ours / "grading" / "report" / png).stat().st_size > 10_000
    assert "averages: " in page and "fail-open: " in page  # grading/mistakes.json, by test cell
    assert "Traceback" not in run.stderr and "Warning" not in run.stderr, run.stderr
    assert "http" not in page.replace("http-equiv", "")  # nothing fetched from outside


def test_the_run_times_each_assignment_once_then_grades_the_slowest_first():
    from donegate.grading import _pick
    waiting = [("lab01", "a"), ("lab01", "b"), ("lab04", "a"), ("lab07", "a"), ("lab07", "b")]
    assert _pick(waiting, set(), {}) == 0  # nothing known: the order handed in
    assert waiting[_pick(waiting, {"lab01"}, {"lab01": [2.0]})] == ("lab04", "a")  # an assignment not yet timed
    took = {"lab01": [2.0, 2.2], "lab04": [1.5], "lab07": [6.0]}
    assert waiting[_pick(waiting, {"lab01", "lab04", "lab07"}, took)] == ("lab07", "a")
    # started but not finished yet: as good as the longest, so it is not put off behind known ones
    assert waiting[_pick(waiting, {"lab01", "lab04", "lab07"}, {"lab01": [2.0], "lab04": [1.5]})][0] == "lab07"


def simulated_end(order_by_pick: bool, workers: int = 2) -> tuple[float, float]:
    """A class whose long assignment was handed in last, graded by `workers`: (when the run ends, how long the
    last submission ran alone while the other workers had nothing left)."""
    from donegate.grading import _pick
    length = {"lab01": 2.0, "lab04": 2.5, "lab07": 6.0}
    waiting = [(lab, f"s{n}") for lab in length for n in range(9)]
    tried, took, free = set(), {}, [0.0] * workers
    while waiting:
        worker = min(range(workers), key=free.__getitem__)
        lab, _ = waiting.pop(_pick(waiting, tried, took) if order_by_pick else 0)
        tried.add(lab)
        free[worker] += length[lab]
        took.setdefault(lab, []).append(length[lab])
    return max(free), max(free) - sorted(free)[-2]


def test_longest_first_ends_a_class_on_a_short_submission():
    in_order, alone_in_order = simulated_end(order_by_pick=False)
    longest_first, alone = simulated_end(order_by_pick=True)
    assert alone_in_order > 5.0 and alone <= 2.0  # the tail: most of a lab07 alone, or less than a short one
    assert longest_first < in_order and longest_first - 94.5 / 2 <= 0.5  # a quarter of a second off the ideal


def test_time_left_counts_each_assignment_at_its_own_pace():
    from donegate.grading import time_left
    took = {"lab01": [2.0, 2.0], "lab07": [6.0]}
    waiting = [("lab01", "a"), ("lab07", "a")]
    assert time_left(waiting, [("lab07", 1.0)], took, workers=2) == (2.0 + 6.0 + 5.0) / 2
    assert time_left([("lab09", "a")], [], took, workers=2) == 10.0 / 3  # not seen yet: the mean of all so far
    assert time_left([], [], {}, workers=4) == 0.0


def test_a_run_killed_midway_resumes_and_ends_with_the_scores_of_one_run(one_run, released, tmp_path):
    """The parent of a grading run is killed (SIGKILL: no clean-up of its own) once two submissions are recorded.
    Its graders die with it. Started again, the run keeps what was recorded, grades only the rest, and the
    gradebook and grades.csv are those of a run that was never stopped. `--again` grades everything again."""
    ours, _, _ = one_run
    course = class_course(released, tmp_path)
    environment = {**os.environ, "DONEGATE_ROOT": str(course)}
    run = subprocess.Popen([str(Path(sys.executable).parent / "donegate"), "grade", "--workers", "1"], cwd=course,
                           env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = []
    for line in run.stdout:  # each line comes once its submission is in the gradebook
        seen.append(line)
        if line.startswith("  [2/6]"):
            run.kill()
            break
    run.wait()
    run.stdout.close()
    assert len(json.loads((course / "grading" / "graded.json").read_text())) == 2, seen
    again = donegate(course, "grade", "--workers", "2")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "grading 4 submission(s)" in again.stdout and "2 kept, graded by an earlier run" in again.stdout
    assert "Graded 6 of 6 submission(s)" in again.stdout and "(2 by an earlier run, kept" in again.stdout
    assert gradebook(course) == gradebook(ours)
    fresh = donegate(course, "grade", "--again", "--workers", "2")
    assert fresh.returncode == 0 and "grading 6 submission(s)" in fresh.stdout and "kept" not in fresh.stdout
    assert gradebook(course) == gradebook(ours)
    from nbgrader.api import Gradebook
    from donegate.grading import resumed, submissions
    (gone, *_), found = submissions(course), submissions(course)
    with Gradebook(f"sqlite:///{course / 'grading' / 'gradebook.db'}", course_id="donegate") as gb:
        gb.remove_submission(*gone)  # recorded in graded.json, but not in this gradebook: graded again
    kept, left, _ = resumed(course, found, tmp_path / "log")
    assert left == [gone] and len(kept) == 5


def test_a_grader_ends_with_the_run_that_started_it():
    """A run (here a forked process) starts a grader that calls die_with(run), and the run ends. Once the run is
    reaped, the kernel has sent the grader its signal, so a grader that then reads "go" has outlived its run and
    says so; one that died with it says nothing. The test reads until the pipe closes: an event, not a deadline."""
    from donegate.grading import die_with
    said, tell = os.pipe()
    ready, ready_tell = os.pipe()
    go_read, go = os.pipe()
    run = os.fork()
    if run == 0:
        if os.fork() == 0:  # the grader
            os.close(said), os.close(ready), os.close(go)
            die_with(os.getppid())
            os.write(ready_tell, b"ready")
            os.read(go_read, 2)
            os.write(tell, b"outlived its run")
            os._exit(0)
        os.close(tell), os.close(ready_tell), os.close(go_read)
        os.read(ready, 5)  # the grader is set up: the run ends now
        os._exit(0)
    os.close(tell), os.close(ready_tell), os.close(ready), os.close(go_read)
    os.waitpid(run, 0)
    try:
        os.write(go, b"go")
    except BrokenPipeError:  # the grader is gone already
        pass
    os.close(go)
    with os.fdopen(said, "rb") as heard:
        assert heard.read() == b""


def canvas_download(path: Path, lab: str, students: dict[str, str]) -> Path:
    """A zip as Canvas's Download Submissions gives it: `students` maps a Canvas file-name stem to the fixture it
    hands in; a late one, one handed in twice (a "-1" before the extension) and two files that are no submission."""
    import zipfile
    with zipfile.ZipFile(path, "w") as archive:
        for stem, fixture in students.items():
            name = f"{stem[:-2]}_{lab}-1.ipynb" if stem.endswith("-1") else f"{stem}_{lab}.ipynb"
            archive.write(FIXTURES / fixture / lab / f"{lab}.ipynb", name)
        archive.writestr("readme.txt", "not a submission")
        archive.write(FIXTURES / "correct" / lab / f"{lab}.ipynb", f"{lab}.ipynb")  # no name, no user id
    return path


def test_a_canvas_download_is_collected_graded_and_exported_for_canvas_to_import(released, tmp_path):
    import csv
    lab = CLASS_LABS[0]
    course = class_course(released, tmp_path, submit=False)
    zipped = canvas_download(tmp_path / "submissions.zip", lab, {
        "lovelaceada_1001_5001": "correct", "hoppergrace_LATE_1002_5002": "stub", "turingalan_1003_5003": "averages",
        "hamiltonmargaret_1004_5004-1": "correct"})
    collected = donegate(course, "collect", lab, str(zipped))
    assert collected.returncode == 0, collected.stdout + collected.stderr
    assert f"collected {lab} for 4 student(s)" in collected.stdout
    assert "skipped readme.txt" in collected.stdout and f"skipped {lab}.ipynb" in collected.stdout
    assert sorted(p.name for p in (course / "grading" / "submitted").iterdir()) == ["1001", "1002", "1003", "1004"]
    assert donegate(course, "grade", lab).returncode in (0, 1)
    exported = donegate(course, "export")
    assert exported.returncode == 0, exported.stderr
    header, points, *rows = list(csv.reader((course / "grading" / "grades-canvas.csv").open()))
    assert header == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", lab]
    assert points[0].strip() == "Points Possible" and float(points[5]) > 0
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'grading' / 'gradebook.db'}", course_id="donegate") as gb:
        want = {s.student.id: f"{s.score:g}" for s in gb.find_assignment(lab).submissions}
    assert {row[1]: row[5] for row in rows} == want and len(want) == 4
    assert want["1001"] == points[5] and want["1002"] == "0"  # the solution full marks, the stub none


def dask(folder: Path, *args: str, ready: str, path: str | None = None, **env: str) -> subprocess.Popen:
    """A `dask` command (a scheduler or a worker) started as a process in `folder`, on 127.0.0.1 only, returned once
    it has logged `ready` (an event, not a deadline: if it ends first, the test fails with its log)."""
    folder.mkdir(parents=True, exist_ok=True)
    environment = {**os.environ, "PATH": path or os.environ["PATH"], **env}
    started = subprocess.Popen([str(Path(sys.executable).parent / "dask"), *args], cwd=folder, env=environment,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    said = []
    for line in started.stderr:
        said.append(line)
        if ready in line:
            started.said = line  # the line that says it is ready (a scheduler's names its address)
            threading.Thread(target=started.stderr.read, daemon=True).start()  # the rest of its log, never a full pipe
            return started
    started.wait()
    raise AssertionError("".join(said))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A real Dask scheduler and two workers, each a process in a folder of its own (one thread each, under its
    nanny, as `dask worker` starts them; the first with the sandbox and the judge switched off in its own
    environment), and a third worker whose PATH holds no bwrap: the scheduler's address, and their folders."""
    base = tmp_path_factory.mktemp("cluster")
    scheduler = dask(base / "scheduler", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                     ready="Scheduler at:")
    address, running = scheduler.said.split("Scheduler at:")[1].strip(), [scheduler]
    try:
        off = {"DONEGATE_SANDBOX": "off", "DONEGATE_JUDGE": "off"}
        for name, path, env in (("one", None, off), ("two", None, {}), ("no-sandbox", str(Path(sys.executable).parent), {})):
            running.append(dask(base / name, "worker", address, "--nthreads", "1",
                                "--host", "127.0.0.1", "--no-dashboard", "--name", name, "--local-directory",
                                str(base / name), ready="Registered to:", path=path, **env))
        yield address, base
    finally:
        for process in reversed(running):
            process.terminate()
        for process in running:
            process.wait()


def test_a_dask_cluster_grades_the_class_as_one_machine_does(one_run, released, cluster, tmp_path):
    """Two workers, each in a folder of its own, grade the class from data sent to them; the worker without a
    sandbox refuses and gets nothing. Gradebook, grades.csv, graded notebooks and report are a one-machine run's."""
    ours, _, _ = one_run
    address, folders = cluster
    course = class_course(released, tmp_path)
    run = donegate(course, "grade", "--scheduler", address)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"2 worker(s) of {address} will grade, 2 at a time" in run.stdout, run.stdout
    assert re.search(r"worker tcp://127\.0\.0\.1:\d+ will not grade: bwrap \(bubblewrap\)", run.stdout), run.stdout
    assert "Graded 6 of 6 submission(s)" in run.stdout and run.stdout.count("] lab04-averaged-scores / ") == 3
    assert gradebook(course) == gradebook(ours)
    graded = sorted(p.relative_to(course / "grading" / "autograded") for p in
                    (course / "grading" / "autograded").glob("*/*/*.ipynb"))
    assert graded == sorted(p.relative_to(ours / "grading" / "autograded") for p in
                            (ours / "grading" / "autograded").glob("*/*/*.ipynb")) and len(graded) == 6
    assert (course / "grading" / "report" / "index.html").exists()
    assert not list(folders.rglob("donegate-grade-*"))  # nothing left on the workers


def test_hostile_submissions_graded_on_the_cluster_score_nothing(cluster, tmp_path):
    """The kernel tricks and the two that reach for the course, graded on the cluster: 0 each, as on one machine,
    although one worker's own environment switches the sandbox and the judge off (the run's settings go with each
    submission), and the course's gradebook holds no more than full marks."""
    address, _ = cluster
    course = make_course(tmp_path)
    assert donegate(course, "release").returncode == 0
    for student in [*KERNEL_TRICKS, "correct", "reads-solution", "extra-credit"]:
        shutil.copytree(FIXTURES / student / LAB, course / "grading" / "submitted" / student / LAB)
    run = donegate(course, "grade", "--scheduler", address)
    assert "2 worker(s)" in run.stdout, run.stdout + run.stderr
    scores = {student: said.split(",")[0] for student, said in scores_in(run).items()}
    assert scores == {**{s: "0 / 22" for s in [*KERNEL_TRICKS, "reads-solution", "extra-credit"]}, "correct": "22 / 22"}
    assert "FLAGGED for a person" in scores_in(run)["input-transformer"]  # the vetting ran too
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'grading' / 'gradebook.db'}", course_id="donegate") as gb:
        assert all(s.score <= s.max_score for s in gb.find_assignment(LAB).submissions)


def test_a_worker_refuses_another_grader_or_no_sandbox_and_data_stays_inside_its_folder(tmp_path, monkeypatch):
    import hashlib
    from donegate.grading import GradingError, files_of, grader_digest, worker_refusal, write_files
    assert worker_refusal(grader_digest()) is None
    assert "is not the run's" in worker_refusal(hashlib.sha256(b"another version").hexdigest())
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on it
    assert "bwrap (bubblewrap)" in worker_refusal(grader_digest())
    write_files(tmp_path / "in", {"a.ipynb": b"{}", "data/b.csv": b"1"})
    (tmp_path / "in" / "link").symlink_to("/etc/hostname")
    assert files_of(tmp_path / "in") == {"a.ipynb": b"{}", "data/b.csv": b"1"}  # a link is not followed
    for name in ("../out.ipynb", "/etc/out", "data/../../out", ""):
        with pytest.raises(GradingError):
            write_files(tmp_path / "in", {name: b"x"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]


def test_no_scheduler_at_the_address_is_said_with_what_to_do(monkeypatch):
    from donegate import grading
    monkeypatch.setattr(grading, "SCHEDULER_WAIT", 1)
    with socket.socket() as taken:  # a port nothing listens on
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
    with pytest.raises(grading.GradingError, match=r"no Dask scheduler answered at tcp://127\.0\.0\.1:\d+ within 1 s.*"
                                                   r"`dask scheduler`"):
        grading._connect(f"tcp://127.0.0.1:{port}")
