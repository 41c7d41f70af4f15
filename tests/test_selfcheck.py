"""The learner's self-check (`donegate check`, appendix 84) and the recall schedule (`donegate progress`,
appendix 81).

Grading runs use a tiny nbgrader assignment built here in a temporary DONEGATE_ROOT (so the
self-check is testable on its own) and the real lab01, always on copies in tmp_path.
"""
import html
import json
import re
import os
import shutil
import stat
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import donegate.progress as progress_module
from donegate import selfcheck
from donegate.progress import (
    CURRICULUM, SelfCheckError, chapter_titles, due_label, find_root, load_passes, progress, progress_file,
    progress_rows, record_pass, schedule_note,
)
from donegate.selfcheck import check, course_config, find_assignment, grading_options, read_notebook

ROOT = Path(__file__).resolve().parent.parent
LAB01 = "lab01-fail-open-hooks"
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


# --- a tiny nbgrader assignment -------------------------------------------------------------

def _nbgrader(grade_id, *, solution=False, grade=False, locked=False, points=None):
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def _notebook(answer: str, hidden: bool = True, duplicate_ids: bool = False) -> dict:
    hidden_test = ("### BEGIN HIDDEN TESTS\nassert add(-1, 1) == 0, 'add must handle negative numbers'\n"
                   "### END HIDDEN TESTS") if hidden else ""
    cells = [
        ("markdown", "# Tiny lab\nWrite `add`.", _nbgrader("intro", locked=True)),
        ("code", f"def add(a, b):\n{answer}", _nbgrader("add", solution=True)),
        ("code", "assert add(1, 2) == 3", _nbgrader("test_add_visible", grade=True, locked=True, points=1)),
        ("code", f"assert add(2, 2) == 4\n{hidden_test}".strip(),
         _nbgrader("test_add_visible" if duplicate_ids else "test_add_hidden", grade=True, locked=True, points=2)),
    ]
    out = []
    for i, (kind, source, meta) in enumerate(cells):
        cell = {"cell_type": kind, "id": f"cell-{i}", "metadata": meta, "source": source}
        if kind == "code":
            cell.update(outputs=[], execution_count=None)
        out.append(cell)
    return {"cells": out, "nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                         "language_info": {"name": "python"}}}


SOLUTION = "    ### BEGIN SOLUTION\n    return a + b\n    ### END SOLUTION"
STUB = "    # YOUR CODE HERE\n    raise NotImplementedError()"
HALF_RIGHT = "    return abs(a) + abs(b)"  # passes the visible tests, fails the hidden one


def write_tiny_course(root: Path, assignment: str = "tiny", **kwargs) -> Path:
    """A repository-shaped folder with one nbgrader assignment in solutions/; returns the root."""
    source = root / "solutions" / assignment / f"{assignment}.ipynb"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(json.dumps(_notebook(SOLUTION, **kwargs), indent=1), encoding="utf-8")
    (root / "pyproject.toml").write_text('[project]\nname = "donegate"\n', encoding="utf-8")
    return root


def learner_copy(folder: Path, answer: str, name: str = "tiny.ipynb") -> Path:
    """A learner's notebook: the released stub with `answer` typed into the solution cell."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(_notebook(answer, hidden=False), indent=1), encoding="utf-8")
    return path


def run_check(notebook: Path, root: Path | None, progress_path: Path, now=T0):
    lines: list[str] = []
    result = check(notebook, root=root, now=now, progress_path=progress_path, echo=lines.append)
    return result, "\n".join(lines)


@pytest.fixture(scope="module")
def tiny_root(tmp_path_factory):
    return write_tiny_course(tmp_path_factory.mktemp("tiny-root"))


@pytest.fixture(scope="module")
def half_right(tiny_root, tmp_path_factory):
    folder = tmp_path_factory.mktemp("half-right")
    return run_check(learner_copy(folder, HALF_RIGHT), tiny_root, folder / "progress.json") + (folder,)


@pytest.fixture(scope="module")
def tiny_solution(tiny_root, tmp_path_factory):
    folder = tmp_path_factory.mktemp("tiny-solution")
    return run_check(learner_copy(folder, SOLUTION), tiny_root, folder / "progress.json") + (folder,)


# --- grading the tiny assignment ------------------------------------------------------------

@pytest.mark.grading
def test_hidden_tests_are_graded_even_though_the_learner_never_saw_them(half_right):
    result, _, _ = half_right
    points = {c.name: (c.points, c.max_points) for c in result.cells}
    assert points == {"test_add_visible": (1.0, 1.0), "test_add_hidden": (0.0, 2.0)}


@pytest.mark.grading
def test_a_failing_test_reports_the_last_line_of_its_error(half_right):
    result, output, _ = half_right
    hidden = [c for c in result.cells if c.name == "test_add_hidden"][0]
    assert hidden.reason == "AssertionError: add must handle negative numbers"
    assert "AssertionError: add must handle negative numbers" in output


@pytest.mark.grading
def test_partial_score_exits_one_and_prints_the_total(half_right):
    result, output, _ = half_right
    assert (result.score, result.max_score, result.exit_code) == (1.0, 3.0, 1)
    assert [l for l in output.splitlines() if l.split()[:1] == ["total"]] == ["       total                1 / 3"]


@pytest.mark.grading
def test_partial_score_records_no_pass(half_right):
    result, _, folder = half_right
    assert result.passed_at is None
    assert not (folder / "progress.json").exists()


@pytest.mark.grading
def test_each_stage_prints_one_line(half_right):
    _, output, _ = half_right
    stages = [l.strip()[:5] for l in output.splitlines() if l.strip().startswith("[")]
    assert stages == ["[1/4]", "[2/4]", "[3/4]", "[4/4]"]


@pytest.mark.grading
def test_feedback_page_is_written_next_to_the_notebook(half_right):
    result, _, folder = half_right
    assert result.feedback == folder / "tiny.feedback.html"
    assert "add must handle negative numbers" in result.feedback.read_text(encoding="utf-8")


@pytest.mark.grading
def test_the_feedback_page_names_each_test_with_its_points_and_reason_and_folds_the_sources(half_right):
    """For someone checking alone: tests by name (not 'Test cell'), the terminal's reason, hidden sources folded."""
    result, _, _ = half_right
    page = result.feedback.read_text(encoding="utf-8")
    table = page[page.index('id="donegate-tests"'):page.index("</table>")]
    assert re.search(r"<code>test_add_hidden</code>.*?0\.0 / 2\.0.*?AssertionError: add must handle negative numbers",
                     table, re.S), table
    assert re.search(r"<code>test_add_visible</code>.*?1\.0 / 1\.0.*?passed", table, re.S), table
    assert "Test cell" not in page
    folded = re.findall(r'<details class="donegate-test-source">(.*?)</details>', page, re.S)
    assert len(folded) == 2 and any("negative numbers" in f for f in folded)


def _outside_the_folds(page: str) -> str:
    """The page without its folds (each test's source, and a hidden test's failing line): what shows unopened."""
    return re.sub(r'<details class="donegate-(?:test-source|hidden-line)">.*?</details>', "", page, flags=re.S)


def _text(part: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", part))


@pytest.mark.grading
def test_the_feedback_page_shows_no_line_of_a_hidden_test_before_it_is_unfolded(half_right):
    """The hidden test's source, and the traceback that would quote it, are folded away together; what shows
    above the fold is the test's name, points and reason."""
    result, _, _ = half_right
    page = result.feedback.read_text(encoding="utf-8")
    text = lambda part: html.unescape(re.sub(r"<[^>]+>", "", part))
    assert "assert add(-1, 1) == 0" in text(page), "the hidden test is on the page, for whoever unfolds it"
    shown = text(_outside_the_folds(page))
    assert "add(-1, 1)" not in shown
    assert "AssertionError: add must handle negative numbers" in shown  # the reason, above the fold


@pytest.mark.grading
def test_the_feedback_page_lists_failed_tests_first_and_folds_behind_a_visible_toggle(half_right):
    result, _, _ = half_right
    page = result.feedback.read_text(encoding="utf-8")
    table = page[page.index('id="donegate-tests"'):page.index("</table>")]
    assert table.index("test_add_hidden") < table.index("test_add_visible"), "a failure listed after a pass"
    assert "1 of 2 tests failed; they come first." in page
    assert re.search(r"details\.donegate-test-source > summary \{ display: list-item;", page), \
        "Bootstrap makes a summary a block, which hides its triangle: the page must give it back"
    assert "<summary>Show the test's source and what it printed, hidden tests included" in page
    for name in ("test_add_hidden", "test_add_visible"):  # the table links to the verdict line, outside the fold
        assert f'href="#test-{name}"' in table and f'id="test-{name}"' in _outside_the_folds(page)


@pytest.mark.grading
def test_the_feedback_page_requests_nothing_from_the_network(half_right):
    """No MathJax from a CDN, no script, stylesheet or image from anywhere but the page itself."""
    result, _, _ = half_right
    page = result.feedback.read_text(encoding="utf-8")
    fetched = re.findall(r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*["']?([^"'\s>]+)""", page, re.I)
    assert [url for url in fetched if not url.startswith(("#", "data:"))] == []
    assert "MathJax.Hub" not in page and "cdnjs" not in page


@pytest.mark.grading
def test_the_page_and_the_terminal_name_the_run_and_a_sibling_names_the_latest(half_right):
    """The page says which check made it (run id and time) and the terminal prints the same run with the page's path;
    <stem>.feedback.js names the latest check of the notebook, which a page left open compares with its own run."""
    result, output, folder = half_right
    printed = re.search(r"Feedback page \(run ([0-9a-f]{6}), 2026-03-02 09:00:00 UTC\): (.+)", output)
    assert printed and printed[2] == str(result.feedback), output
    run = printed[1]
    page = result.feedback.read_text(encoding="utf-8")
    assert f'data-run="{run}" data-stamp="tiny.feedback.js"' in page
    assert f"Self-check of tiny.ipynb at 2026-03-02 09:00:00 UTC, run {run}" in _text(_outside_the_folds(page))
    assert '<p class="donegate-stale" id="donegate-stale" hidden></p>' in page and "donegateFeedbackCheck" in page
    stamp = (folder / "tiny.feedback.js").read_text(encoding="utf-8")
    assert json.loads(stamp[stamp.index("(") + 1:stamp.rindex(")")]) == {
        "run": run, "at": "2026-03-02 09:00:00 UTC", "state": "done", "score": "1 / 3"}


@pytest.mark.grading
def test_a_second_check_rewrites_the_page_and_the_sibling_with_a_new_run(tiny_root, tmp_path):
    """A page kept from the first check names a run the sibling no longer names: that is how an open tab knows."""
    mine = learner_copy(tmp_path, HALF_RIGHT)
    first, _ = run_check(mine, tiny_root, tmp_path / "progress.json")
    kept = first.feedback.read_text(encoding="utf-8")
    second, output = run_check(mine, tiny_root, tmp_path / "progress.json", now=T0 + timedelta(minutes=5))
    runs = [re.search(r'data-run="([0-9a-f]+)"', page)[1] for page in (kept, second.feedback.read_text("utf-8"))]
    latest = (tmp_path / "tiny.feedback.js").read_text(encoding="utf-8")
    assert runs[0] != runs[1] and f'"run": "{runs[1]}"' in latest and "09:05:00" in latest
    assert f"Feedback page (run {runs[1]}, 2026-03-02 09:05:00 UTC)" in output


@pytest.mark.grading
def test_a_check_that_breaks_leaves_a_sibling_saying_it_wrote_no_page(tmp_path):
    """A page left open from an earlier check learns that a newer one ran, even when that one wrote no page."""
    root = write_tiny_course(tmp_path / "root", duplicate_ids=True)  # nbgrader refuses duplicate grade ids
    mine = learner_copy(tmp_path / "me", SOLUTION)
    with pytest.raises(SelfCheckError):
        run_check(mine, root, tmp_path / "progress.json")
    assert '"state": "no page"' in (tmp_path / "me" / "tiny.feedback.js").read_text(encoding="utf-8")


@pytest.mark.grading
def test_solution_gets_full_marks_and_exit_zero(tiny_solution):
    result, output, _ = tiny_solution
    assert result.full_marks and result.exit_code == 0
    assert [c.reason for c in result.cells] == ["passed", "passed"]
    assert "Full marks" in output


@pytest.mark.grading
def test_full_marks_record_the_pass_at_the_injected_time(tiny_solution):
    result, _, folder = tiny_solution
    assert result.passed_at == T0
    assert [(p.assignment, p.passed_at, p.score) for p in load_passes(folder / "progress.json")] == [("tiny", T0, 3.0)]


@pytest.mark.grading
def test_failure_of_the_grading_machinery_shows_its_log(tmp_path):
    root = write_tiny_course(tmp_path / "root", duplicate_ids=True)  # nbgrader refuses duplicate grade ids
    mine = learner_copy(tmp_path / "me", SOLUTION)
    with pytest.raises(SelfCheckError) as err:
        run_check(mine, root, tmp_path / "progress.json")
    message = str(err.value)
    assert "grading machinery failed" in message and "during generate" in message
    assert "ValidationError: Duplicate grade id: test_add_visible" in message


@pytest.mark.grading
def test_gradebook_version_read_in_process_matches_alembic():
    import nbgrader.api
    expected = nbgrader.api.get_alembic_version()  # runs the `alembic` program

    class Module:
        __file__ = nbgrader.api.__file__
        get_alembic_version = staticmethod(lambda: "not replaced")

    selfcheck.in_process_gradebook_version(Module)
    assert Module.get_alembic_version() == expected


# --- the real lab01 ---------------------------------------------------------------------------

def _lab01(folder: str) -> Path:
    path = ROOT / folder / LAB01 / f"{LAB01}.ipynb"
    if not path.exists():
        pytest.skip(f"{path.relative_to(ROOT)} does not exist yet")
    return path


@pytest.fixture(scope="module")
def lab01_release(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lab01-release")
    mine = folder / f"{LAB01}.ipynb"
    shutil.copyfile(_lab01("labs"), mine)
    return run_check(mine, None, folder / "progress.json") + (folder,)


@pytest.fixture(scope="module")
def lab01_solution(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lab01-solution")
    mine = folder / f"{LAB01}.ipynb"
    shutil.copyfile(_lab01("solutions"), mine)
    return run_check(mine, None, folder / "progress.json") + (folder,)


@pytest.mark.grading
def test_released_lab01_fails_every_test_and_exits_non_zero(lab01_release):
    result, _, _ = lab01_release
    assert result.cells and all(c.points == 0 for c in result.cells)
    assert all(c.reason != "passed" for c in result.cells)
    assert result.exit_code == 1


@pytest.mark.grading
def test_lab01_solution_gets_full_marks_and_records_the_pass(lab01_solution):
    result, _, folder = lab01_solution
    assert result.full_marks and result.exit_code == 0
    assert [p.assignment for p in load_passes(folder / "progress.json")] == [LAB01]


@pytest.fixture(scope="module")
def lab01_fail_open(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lab01-fail-open")
    mine = folder / f"{LAB01}.ipynb"
    shutil.copyfile(ROOT / "grading" / "fixtures" / "fail-open" / LAB01 / f"{LAB01}.ipynb", mine)
    return run_check(mine, None, folder / "progress.json") + (folder,)


def only_hidden_lines(assignment: str) -> list[str]:
    """The lines of the lab's hidden tests that its released notebook does not show anywhere."""
    released = (ROOT / "labs" / assignment / f"{assignment}.ipynb").read_text(encoding="utf-8")
    hidden = []
    for cell in json.loads((ROOT / "solutions" / assignment / f"{assignment}.ipynb").read_text("utf-8"))["cells"]:
        inside = False
        for line in "".join(cell["source"]).splitlines():
            if line.strip() in selfcheck.HIDDEN_TESTS:
                inside = line.strip() == selfcheck.HIDDEN_TESTS[0]
            elif inside and len(line.strip()) > 12 and line.strip() not in released:
                hidden.append(line.strip())
    return hidden


@pytest.mark.grading
def test_no_hidden_line_reaches_the_terminal_or_the_page_before_it_is_unfolded(lab01_fail_open):
    """The judge reports a failure with the line it stopped at; a hidden test's line is named by its number in the
    terminal and above the folds, the terminal says where to see it, and the page holds it in a fold of its own."""
    result, output, _ = lab01_fail_open
    hidden = only_hidden_lines(LAB01)
    assert len(hidden) > 10 and result.score == 16
    assert [c.name for c in result.cells if ", line " in c.reason and " in a hidden test" in c.reason] == [
        "test_fail_closed_on_exception", "test_fail_closed_on_timeout"]
    assert not [line for line in hidden if line in output], [line for line in hidden if line in output]
    assert selfcheck.HIDDEN_NOTE in output
    page = result.feedback.read_text(encoding="utf-8")
    shown = _text(_outside_the_folds(page))
    assert not [line for line in hidden if line in shown], [line for line in hidden if line in shown]
    folds = re.findall(r'<details class="donegate-hidden-line"><summary>Show the hidden line it stopped at</summary>'
                       r"\n<pre>(.*?)</pre></details>", page, re.S)
    assert len(folds) == 2 and all(html.unescape(line) in hidden for line in folds), folds


# --- notebooks that cannot be checked ---------------------------------------------------------

def test_missing_file_is_named(tmp_path, tiny_root):
    with pytest.raises(SelfCheckError, match="does not exist"):
        check(tmp_path / "nowhere.ipynb", root=tiny_root)


def test_invalid_json_is_named_with_its_position(tmp_path, tiny_root):
    torn = tmp_path / "tiny.ipynb"
    torn.write_text('{"cells": [', encoding="utf-8")
    with pytest.raises(SelfCheckError, match=r"not valid JSON \(line 1, column 12"):
        check(torn, root=tiny_root)


def test_json_that_is_not_a_notebook_is_refused(tmp_path):
    odd = tmp_path / "odd.ipynb"
    odd.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(SelfCheckError, match="not a Jupyter notebook"):
        read_notebook(odd)


def test_a_notebook_without_nbgrader_cells_is_not_a_lab(tmp_path, tiny_root):
    chapter = tmp_path / "tiny.ipynb"
    chapter.write_text(json.dumps({"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# Notes"}]}))
    with pytest.raises(SelfCheckError, match="not a lab or recall notebook"):
        check(chapter, root=tiny_root)


def test_an_unknown_lab_lists_the_known_ones(tmp_path):
    root = write_tiny_course(write_tiny_course(tmp_path / "root"), "other")
    stranger = learner_copy(tmp_path, SOLUTION, "stranger.ipynb")
    nb = read_notebook(stranger)
    for cell in nb["cells"]:
        cell["metadata"]["nbgrader"]["grade_id"] += "-elsewhere"
    stranger.write_text(json.dumps(nb), encoding="utf-8")
    with pytest.raises(SelfCheckError, match="belongs to no known lab.*Known: other, tiny"):
        check(stranger, root=root)


def test_a_renamed_copy_finds_its_lab_by_its_graded_cells(tmp_path, tiny_root):
    copy = learner_copy(tmp_path, STUB, "tiny-Copy1.ipynb")
    assert find_assignment(copy, read_notebook(copy), tiny_root) == "tiny"


def test_a_root_without_solutions_says_the_instructor_grades(tmp_path):
    copy = learner_copy(tmp_path / "me", STUB)
    (tmp_path / "released-only").mkdir()
    with pytest.raises(SelfCheckError, match="no solutions/ folder"):
        check(copy, root=tmp_path / "released-only")


# --- finding the repository and mirroring the grading options --------------------------------

def test_donegate_root_overrides_the_package_location(tmp_path, monkeypatch):
    monkeypatch.setenv("DONEGATE_ROOT", str(tmp_path))
    assert find_root() == tmp_path.resolve()


def test_root_is_found_from_the_package_location(monkeypatch, tmp_path):
    monkeypatch.delenv("DONEGATE_ROOT", raising=False)
    monkeypatch.chdir(tmp_path)
    assert find_root() == ROOT


def test_root_is_found_upward_from_the_current_directory(monkeypatch, tmp_path):
    monkeypatch.delenv("DONEGATE_ROOT", raising=False)
    monkeypatch.setattr(progress_module, "_package_root", lambda: None)
    root = write_tiny_course(tmp_path / "repo")
    (root / "labs" / "tiny").mkdir(parents=True)
    monkeypatch.chdir(root / "labs" / "tiny")
    assert find_root() == root.resolve()


def test_the_course_mirrors_the_instructor_grading_options():
    from traitlets.config.loader import PyFileConfigLoader
    instructor = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT / "grading")).load_config()
    options = grading_options(ROOT)
    assert options["Execute"]["timeout"] == instructor.Execute.timeout
    assert options["OverwriteCells"]["add_missing_cells"] is True
    assert options["CourseDirectory"] == {
        "course_id": instructor.CourseDirectory.course_id,
        "ignore": list(instructor.CourseDirectory.ignore),
    }


def test_the_course_config_never_points_into_the_repository(tmp_path):
    text = course_config(tmp_path / "course", grading_options(ROOT))
    assert str(ROOT) not in text
    assert f"c.CourseDirectory.root = {str(tmp_path / 'course')!r}" in text


def test_a_broken_instructor_config_is_named_not_ignored(tmp_path):
    root = write_tiny_course(tmp_path / "root")
    (root / "grading").mkdir()
    (root / "grading" / "nbgrader_config.py").write_text("c = get_config()\nc.Execute.timeout = \n")
    with pytest.raises(SelfCheckError, match=r"nbgrader_config.py could not be read \(SyntaxError"):
        grading_options(root)


def test_without_an_instructor_config_the_timeout_and_missing_cells_are_still_explicit(tiny_root):
    assert grading_options(tiny_root) == {"Execute": {"timeout": 60}, "OverwriteCells": {"add_missing_cells": True}}


# --- the progress file ------------------------------------------------------------------------

def test_progress_file_follows_the_override_then_xdg_state_home_then_home(monkeypatch, tmp_path):
    monkeypatch.setenv("DONEGATE_PROGRESS_FILE", str(tmp_path / "mine.json"))
    assert progress_file() == tmp_path / "mine.json"
    monkeypatch.delenv("DONEGATE_PROGRESS_FILE")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert progress_file() == tmp_path / "state" / "donegate" / "progress.json"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert progress_file() == tmp_path / "home" / ".local" / "state" / "donegate" / "progress.json"


def test_recording_a_pass_keeps_the_earlier_ones(tmp_path):
    path = tmp_path / "progress.json"
    record_pass("lab01-fail-open-hooks", T0, 22, 22, path)
    record_pass("recall02-hooks", T0 + timedelta(days=1), 5, 5, path)
    record_pass("lab01-fail-open-hooks", T0 + timedelta(days=2), 22, 22, path)
    assert [(p.assignment, p.passed_at) for p in load_passes(path)] == [
        ("lab01-fail-open-hooks", T0), ("recall02-hooks", T0 + timedelta(days=1)),
        ("lab01-fail-open-hooks", T0 + timedelta(days=2))]


def test_progress_folder_and_file_are_private(tmp_path):
    path = tmp_path / "state" / "donegate" / "progress.json"
    record_pass("lab01-fail-open-hooks", T0, 1, 1, path)
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.parent.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_crash_while_writing_leaves_the_old_records_intact(tmp_path, monkeypatch):
    path = tmp_path / "progress.json"
    record_pass("lab01-fail-open-hooks", T0, 1, 1, path)
    before = path.read_bytes()

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(progress_module.json, "dump", crash)
    with pytest.raises(OSError):
        record_pass("recall02-hooks", T0, 1, 1, path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["progress.json", "progress.json.lock"]


def test_a_damaged_progress_file_is_never_overwritten(tmp_path):
    path = tmp_path / "progress.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(SelfCheckError, match="damaged"):
        record_pass("lab01-fail-open-hooks", T0, 1, 1, path)
    assert path.read_text(encoding="utf-8") == "{not json"


# --- what is due --------------------------------------------------------------------------------

def curriculum_root(root: Path, available=(), chapters=("00_start_here", "02_hooks", "81_workbook_progress", "84_workbook_self_check")) -> Path:
    for assignment in available:
        nb = root / "solutions" / assignment / f"{assignment}.ipynb"
        nb.parent.mkdir(parents=True)
        nb.write_text(json.dumps(_notebook(SOLUTION)), encoding="utf-8")
    (root / "chapters").mkdir(parents=True, exist_ok=True)
    for name in chapters:
        heading = {"cell_type": "markdown", "metadata": {}, "source": f"# 0{name[1]} · {name[3:].replace('_', ' ').title()}"}
        (root / "chapters" / f"{name}.ipynb").write_text(json.dumps({"cells": [heading]}), encoding="utf-8")
    return root


def state_of(assignment, now, root, path):
    return {r.assignment: (r.state, r.label) for r in progress_rows(now, root, path)}[assignment]


@pytest.fixture
def chapter02(tmp_path):
    return curriculum_root(tmp_path / "root", available=(LAB01, "recall02-hooks")), tmp_path / "progress.json"


def test_recall_waits_for_its_lab(chapter02):
    root, path = chapter02
    assert state_of("recall02-hooks", T0, root, path) == ("waiting", f"after you pass {LAB01}")
    assert state_of(LAB01, T0, root, path) == ("todo", "not passed yet")


SCHEDULE_LATER = "#2 2026-03-05; #3 2026-03-09; #4 2026-03-23"  # 3, 7 and 21 days after the lab's pass at T0


def test_recall_is_due_1_3_7_and_21_days_after_the_lab_passed(chapter02):
    root, path = chapter02
    record_pass(LAB01, T0, 22, 22, path)
    assert state_of(LAB01, T0 + timedelta(hours=1), root, path) == ("passed", "passed 2026-03-02 09:00 UTC")
    assert state_of("recall02-hooks", T0 + timedelta(hours=19), root, path) == (
        "later", f"#1 due in 5 h (2026-03-03 09:00 UTC); {SCHEDULE_LATER}")
    assert state_of("recall02-hooks", T0 + timedelta(hours=24), root, path) == (
        "due", f"#1 due now (2026-03-03 09:00 UTC); {SCHEDULE_LATER}")


def test_passing_the_lab_again_does_not_postpone_the_recall(chapter02):
    root, path = chapter02
    record_pass(LAB01, T0, 22, 22, path)
    record_pass(LAB01, T0 + timedelta(hours=20), 22, 22, path)
    assert state_of("recall02-hooks", T0 + timedelta(hours=24), root, path)[0] == "due"


def test_each_pass_of_a_recall_is_its_next_repetition_until_all_four_are_done(chapter02):
    root, path = chapter02
    record_pass(LAB01, T0, 22, 22, path)
    record_pass("recall02-hooks", T0 + timedelta(hours=30), 5, 5, path)
    assert state_of("recall02-hooks", T0 + timedelta(days=2), root, path) == (
        "later", "#1 done 2026-03-03 15:00 UTC; #2 due in 24 h (2026-03-05 09:00 UTC); #3 2026-03-09; #4 2026-03-23")
    for days in (3, 7, 21):
        record_pass("recall02-hooks", T0 + timedelta(days=days, hours=1), 5, 5, path)
    state, label = state_of("recall02-hooks", T0 + timedelta(days=30), root, path)
    assert state == "done" and label.count(" done ") == 4 and "early" not in label


def test_a_recall_passed_before_it_is_due_is_recorded_as_early(chapter02):
    root, path = chapter02
    record_pass("recall02-hooks", T0 - timedelta(hours=1), 5, 5, path)
    assert state_of("recall02-hooks", T0, root, path) == (
        "waiting", f"#1 done 2026-03-02 08:00 UTC, early (before the lab); after you pass {LAB01}")
    record_pass(LAB01, T0, 22, 22, path)
    record_pass("recall02-hooks", T0 + timedelta(days=1, hours=2), 5, 5, path)  # #2, due on day 3
    label = state_of("recall02-hooks", T0 + timedelta(days=2), root, path)[1]
    assert label.startswith("#1 done 2026-03-02 08:00 UTC, early (due 2026-03-03); "
                            "#2 done 2026-03-03 11:00 UTC, early (due 2026-03-05); #3 due in 5 days"), label


def test_a_pass_says_what_it_means_for_the_schedule(chapter02):
    root, path = chapter02
    record_pass(LAB01, T0, 22, 22, path)
    assert "recall02-hooks is due 1, 3, 7 and 21 days after you first pass" in schedule_note(LAB01, T0, path)
    record_pass("recall02-hooks", T0 + timedelta(hours=2), 5, 5, path)
    note = schedule_note("recall02-hooks", T0 + timedelta(hours=2), path)
    assert note.startswith("Recall recall02-hooks, repetition 1 of 4: #1 done") and "early (due 2026-03-03)" in note


def test_assignments_without_solutions_are_not_yet_available(chapter02):
    root, path = chapter02
    assert state_of("lab02-evidence-that-survives-truncation", T0, root, path) == ("unavailable", "not yet available")
    assert state_of("recall03-trajectories", T0, root, path) == ("unavailable", "not yet available")


def test_a_recall_after_two_labs_is_due_a_day_after_the_later_one(tmp_path):
    root = curriculum_root(tmp_path / "root", available=("lab06-edited-tests", "lab07-gate-pitfalls", "recall07-verify-loop"))
    path = tmp_path / "progress.json"
    record_pass("lab06-edited-tests", T0, 1, 1, path)
    assert state_of("recall07-verify-loop", T0 + timedelta(days=2), root, path) == ("waiting", "after you pass lab07-gate-pitfalls")
    record_pass("lab07-gate-pitfalls", T0 + timedelta(days=2), 1, 1, path)
    assert state_of("recall07-verify-loop", T0 + timedelta(days=2, hours=23, minutes=20), root, path) == (
        "later", "#1 due in 40 min (2026-03-05 09:00 UTC); #2 2026-03-07; #3 2026-03-11; #4 2026-03-25")


def test_due_labels_round_up():
    assert due_label(T0, T0 - timedelta(hours=4, minutes=1)) == "due in 5 h"
    assert due_label(T0, T0 - timedelta(seconds=30)) == "due in 1 min"
    assert due_label(T0, T0 + timedelta(days=9)) == "due now"
    assert due_label(T0, T0 - timedelta(days=2, seconds=1)) == "due in 3 days"


def test_the_curriculum_names_every_lab_once():
    labs = [lab for step in CURRICULUM for lab in step.labs]
    assert labs == [f"lab0{i}-" + rest for i, rest in enumerate(
        ["fail-open-hooks", "evidence-that-survives-truncation", "promise-vs-action", "averaged-scores",
         "hallucinated-findings", "edited-tests", "gate-pitfalls", "capstone", "stale-claims"], start=1)]


def test_progress_lists_chapters_without_the_appendices(chapter02):
    root, _ = chapter02
    assert chapter_titles(root) == {"00": "Start Here", "02": "Hooks"}


def test_a_chapter_in_parts_is_titled_by_its_parts_in_order(tmp_path):
    root = curriculum_root(tmp_path / "root", chapters=("07_minimal_coding_agent", "07_stop_hook_verify_loop",
                                                        "07_the_gate_at_work", "84_workbook_self_check"))
    assert chapter_titles(root) == {"07": "Minimal Coding Agent / Stop Hook Verify Loop / The Gate At Work"}


def test_progress_prints_chapters_labs_and_what_is_due(chapter02):
    root, path = chapter02
    record_pass(LAB01, T0, 22, 22, path)
    lines: list[str] = []
    progress(now=T0 + timedelta(days=1), root=root, progress_path=path, echo=lines.append)
    text = "\n".join(lines)
    assert "  02  Hooks\n" in text
    assert f"{LAB01}  " in text and "passed 2026-03-02 09:00 UTC" in text
    assert "Due now: recall02-hooks." in text
    assert "91" not in text.split("\n", 2)[2]


def test_a_bare_assert_is_reported_with_the_line_it_checked():
    traceback = [
        "\x1b[0;31m---------------------------------------------------------------------------\x1b[0m",
        "\x1b[0;31mAssertionError\x1b[0m                            Traceback (most recent call last)",
        "Cell \x1b[0;32mIn[12], line 4\x1b[0m\n\x1b[1;32m      2\x1b[0m d \x1b[38;5;241m=\x1b[39m run()\n"
        "\x1b[0;32m----> 4\x1b[0m \x1b[38;5;28;01massert\x1b[39;00m d\x1b[38;5;241m.\x1b[39maction \x1b[38;5;241m==\x1b[39m "
        "\x1b[38;5;124m\"block\"\x1b[39m\n",
        "\x1b[0;31mAssertionError\x1b[0m: ",
    ]
    cell = {"outputs": [{"output_type": "error", "ename": "AssertionError", "evalue": "", "traceback": traceback}]}
    assert selfcheck.reason_for(cell, 0.0, 3.0) == 'AssertionError at: assert d.action == "block"'


def test_a_bare_assert_in_a_hidden_test_is_reported_by_its_line_number():
    """The reason never quotes a hidden test: the line a bare assert failed on is named by its number."""
    source = ("# Hidden tests (3 points)\n### BEGIN HIDDEN TESTS\nd = run()\nassert d.action == \"block\"\n"
              "### END HIDDEN TESTS")
    traceback = ["Cell In[12], line 4\n      3 d = run()\n----> 4 assert d.action == \"block\"\n", "AssertionError: "]
    cell = {"source": source, "outputs": [{"output_type": "error", "ename": "AssertionError", "evalue": "",
                                           "traceback": traceback}]}
    assert selfcheck.reason_for(cell, 0.0, 3.0) == "AssertionError in a hidden test, line 4 of the cell"
    visible = {**cell, "source": source.replace("### BEGIN HIDDEN TESTS\n", "").replace("\n### END HIDDEN TESTS", "")}
    assert selfcheck.reason_for(visible, 0.0, 3.0) == 'AssertionError at: assert d.action == "block"'
    noisy = {"source": source, "outputs": [{"output_type": "stream", "name": "stderr",
                                            "text": "<ipython>:4: UserWarning: old\n  assert d.action == \"block\"\n"}]}
    assert selfcheck.reason_for(noisy, 0.0, 3.0) == "wrote to stderr (a test cell must not): <ipython>:4: UserWarning: old"


def test_a_judged_failure_in_a_hidden_test_never_quotes_its_line():
    """The judge writes `message (at: line)`; when the line is a hidden test's, the reason gives its number and keeps
    the message its author wrote for the learner, and only failed_hidden_line (the page's fold) holds the line."""
    source = ('### BEGIN HIDDEN TESTS\nd = run()\nassert d.action == "deny", f"got {d.action!r}"\n'
              'assert type(d.action) is str and d.action == "deny"\n### END HIDDEN TESTS')
    judged = lambda evalue, source=source: {"source": source, "outputs": [
        {"output_type": "error", "ename": "AssertionError", "evalue": evalue, "traceback": [f"judge: {evalue}"]}]}
    bare = judged('the test failed (at: assert type(d.action) is str and d.action == "deny")')
    assert selfcheck.reason_for(bare, 0.0, 3.0) == "AssertionError in a hidden test, line 4 of the cell"
    assert selfcheck.failed_hidden_line(bare) == 'assert type(d.action) is str and d.action == "deny"'
    said = judged("""got 'allow' (at: assert d.action == "deny", f"got {d.action!r}")""")
    assert selfcheck.reason_for(said, 0.0, 3.0) == "AssertionError in a hidden test, line 3 of the cell: got 'allow'"
    mangled = judged("got 'allow' (at: assert d.action=='deny')")  # a line the learner's copy does not have either
    assert selfcheck.reason_for(mangled, 0.0, 3.0) == "AssertionError in a hidden test: got 'allow'"
    visible = judged(bare["outputs"][0]["evalue"], source="\n".join(source.splitlines()[1:-1]))
    assert selfcheck.reason_for(visible, 0.0, 3.0) == (
        'AssertionError: the test failed (at: assert type(d.action) is str and d.action == "deny")')
    assert selfcheck.failed_hidden_line(visible) == ""


def test_an_assert_with_a_message_is_reported_by_its_message():
    cell = {"outputs": [{"output_type": "error", "ename": "AssertionError", "evalue": "got 'allow'",
                         "traceback": ["----> 4 assert False, \"got 'allow'\""]}]}
    assert selfcheck.reason_for(cell, 0.0, 1.0) == "AssertionError: got 'allow'"


def test_the_old_dotted_names_of_the_grading_classes_still_work():
    """An instructor's nbgrader_config.py written before the sandbox and the judge had modules of their own
    (appendices 82 and 83) names their classes in donegate.selfcheck: nbgrader, importing them by that path,
    gets the very classes the new names give."""
    from traitlets.utils.importstring import import_item
    from donegate import judge, sandbox
    for name, module in [("SandboxedExecute", sandbox), ("SandboxKernelManager", sandbox), ("RepairCells", sandbox),
                         ("JudgeOutside", judge)]:
        assert import_item(f"donegate.selfcheck.{name}") is getattr(module, name)
        assert getattr(module, name).__module__ == module.__name__
    with pytest.raises(AttributeError, match="no_such_name"):
        selfcheck.no_such_name


def test_the_self_check_puts_off_the_iri_grammar_until_an_iri_is_checked():
    """Importing jsonschema (nbformat and nbgrader do) builds rfc3987-syntax's IRI parsers, seconds of work that
    no notebook schema uses. After donegate.selfcheck they are built only when an `iri` format is checked, and
    then the check is the real one."""
    import subprocess
    import sys
    probe = (
        "import sys, donegate.selfcheck, jsonschema, nbgrader.api\n"
        "print('built on import:', 'rfc3987_syntax.syntax_helpers' in sys.modules)\n"
        "v = jsonschema.Draft202012Validator({'format': 'iri'}, format_checker=jsonschema.FormatChecker())\n"
        "print('bad:', [e.message for e in v.iter_errors('http://exa mple.org/')], 'good:', list(v.iter_errors('http://example.org/a')))\n"
        "print('built on use:', 'rfc3987_syntax.syntax_helpers' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["built on import: False", "bad: [\"'http://exa mple.org/' is not a 'iri'\"] good: []",
                   "built on use: True"]
