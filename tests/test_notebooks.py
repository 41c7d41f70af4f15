"""Every chapter runs top to bottom in a fresh kernel (the solutions: tests/test_grading.py)."""
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


def runnable() -> list[Path]:
    """The chapters. The solutions run top to bottom in tests/test_grading.py, under nbgrader's Validator with
    validate_all (an error in any cell fails there), so they are not run twice."""
    return sorted((ROOT / "chapters").glob("*.ipynb"))


@pytest.mark.notebook
@pytest.mark.parametrize("path", runnable(), ids=lambda p: str(p.relative_to(ROOT)))
def test_notebook_runs_top_to_bottom(path, tmp_path, monkeypatch):
    monkeypatch.setenv("DONEGATE_PROGRESS_FILE", str(tmp_path / "progress.json"))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors


@pytest.mark.parametrize("path", sorted((ROOT / "solutions").glob("recall*/recall*.ipynb")), ids=lambda p: p.parent.name)
def test_a_recall_brief_names_what_to_build_in_about_80_words(path):
    """Recall is recall: the brief names the functions to write (each one the answer defines) in at most about
    80 words, instead of restating the rules the hidden tests check."""
    import ast
    import json

    cells = {c["id"]: "".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]}
    brief = cells["brief"].split("\n", 1)[1]
    assert len(brief.split()) <= 85, f"{path.parent.name}: the brief has {len(brief.split())} words"
    answer = cells["answer"].replace("### BEGIN SOLUTION", "").replace("### END SOLUTION", "")
    defined = [n.name for n in ast.parse(answer).body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]
    named = [name for name in defined if f"`{name}(" in brief]
    assert named, f"{path.parent.name}: the brief names none of {defined}"


def _recall_pages(exercise: str) -> dict[str, tuple[str, set[str]]]:
    """variant id -> (its brief, the sources of its visible test cells), for an exercise and its variants."""
    import json

    pages = {}
    for path in sorted((ROOT / "solutions").glob(f"{exercise}*/*.ipynb")):
        from donegate.progress import recall_family

        if recall_family(path.stem) != exercise:
            continue
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        brief = next("".join(c["source"]) for c in cells if c.get("id") == "brief")
        visible = {"".join(c["source"]) for c in cells
                   if c.get("metadata", {}).get("nbgrader", {}).get("grade") and "HIDDEN TESTS" not in "".join(c["source"])}
        pages[path.stem] = (brief, visible)
    return pages


def _recall_exercises() -> list[str]:
    from donegate.progress import CURRICULUM

    return [step.recall for step in CURRICULUM if step.recall]


def test_every_chapter_from_02_has_a_recall_exercise():
    from donegate.progress import CURRICULUM

    assert [s.chapter for s in CURRICULUM if s.recall] == [f"{n:02d}" for n in range(2, 10)]


@pytest.mark.parametrize("exercise", _recall_exercises())
def test_each_repetition_of_a_recall_exercise_is_its_own_variant(exercise):
    """Four versions (the exercise and -v2 .. -v4), whose briefs differ and which share no visible test: the fourth
    repetition is not a memory of the first page. (Each passes with its solution and fails as a stub:
    tests/test_grading.py runs every assignment, variants included.)"""
    from donegate.progress import VARIANTS

    pages = _recall_pages(exercise)
    assert sorted(pages) == sorted([exercise] + [f"{exercise}-v{n}" for n in range(2, VARIANTS + 1)])
    briefs = [brief for brief, _ in pages.values()]
    assert len(set(briefs)) == len(briefs), f"{exercise}: two variants have the same brief"
    seen: dict[str, str] = {}
    for variant, (_, visible) in pages.items():
        assert visible, f"{variant} has no visible test"
        for source in visible:
            assert source not in seen, f"{variant} repeats a visible test of {seen.get(source)}"
            seen[source] = variant


HEADING = re.compile(r"^# (Visible|Hidden) tests?: (.+?) \((\d+) points?\)\.?$")


@pytest.mark.parametrize("path", sorted((ROOT / "solutions").glob("recall*/recall*.ipynb")), ids=lambda p: p.parent.name)
def test_a_recall_test_cell_names_its_case_in_a_heading(path):
    """Every test cell of a recall exercise opens with "# Visible test: <case> (N points)" or "# Hidden tests: ...",
    the line the feedback shows; the case is named, and its points agree with the cell's."""
    import json

    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        grading = cell.get("metadata", {}).get("nbgrader", {})
        if not grading.get("grade"):
            continue
        first = "".join(cell["source"]).splitlines()[0]
        found = HEADING.match(first)
        assert found, f"{path.stem} {grading['grade_id']}: {first!r}"
        assert float(found.group(3)) == grading["points"], f"{path.stem} {grading['grade_id']}: points differ"


def test_every_chapter_states_the_time_it_takes_as_measured():
    """The time a chapter's first cell states is tools/reading_times.py's measure of it (prose and code), to the
    minute: a chapter that grows says so. `uv run python tools/reading_times.py --write` puts the measures in."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("reading_times", ROOT / "tools" / "reading_times.py")
    reading = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reading)
    wrong = {}
    for path in reading.chapters():
        minutes, said = reading.measure(path)[2], reading.stated(path)
        if said != minutes:
            wrong[path.name] = (said, minutes)
    assert len(reading.chapters()) >= 10 and not wrong, f"(stated, measured) minutes: {wrong}"


MAX_CELL_LINES = 40


def test_no_wrapped_line_of_a_list_item_turns_into_a_numbered_item():
    """A bullet's text wrapped so that a line begins "08) makes ..." or "3. The ..." renders as a numbered list
    inside the bullet. Every notebook's markdown is checked; the broken version of chapter 09's section 9 fails."""
    import re
    found = []
    for path in sorted(ROOT.glob("chapters/*.ipynb")) + sorted(ROOT.glob("solutions/**/*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            lines = cell.source.split("\n") if cell.cell_type == "markdown" else []
            for before, line in zip(lines, lines[1:]):
                if re.match(r"\s*([-*]|\d+[.)])\s", before) or before.startswith("  ") and before.strip():
                    if re.match(r" +\d+[.)](\s|$)", line) and not re.match(r" *\d+[.)]\s", before):
                        found.append(f"{path.name} {cell.get('id')}: {line.strip()[:40]}")
    assert not found, found


def test_no_chapter_code_cell_is_a_wall():
    """A learner follows a class built up across cells, not one that arrives whole: no code cell of chapters
    00-08 is over MAX_CELL_LINES lines (every line counted, `#| export` and blank ones too)."""
    long = {}
    chapters = sorted((ROOT / "chapters").glob("0*.ipynb"))
    for path in chapters:
        for cell in nbformat.read(path, as_version=4).cells:
            lines = len(cell.source.splitlines())
            if cell.cell_type == "code" and lines > MAX_CELL_LINES:
                long[f"{path.name} {cell.get('id')}"] = lines
    assert len(chapters) >= 10 and not long, f"code cells over {MAX_CELL_LINES} lines: {long}"


PARAGRAPH_WORDS = 30  # a markdown cell of at least this many words is prose a reader stops on; a caption is not
MAX_UNEXPLAINED = 60  # code lines in a row without such prose and without anything shown
MAX_UNSEEN = 150  # code lines in a row without anything shown (about six screens), whatever prose lies between


def shows_something(source: str) -> bool:
    """Whether running a code cell shows the reader something: its last statement is an expression (Jupyter
    displays its value, a widget included), or a top-level statement calls print or display."""
    import ast

    try:
        tree = ast.parse("\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))))
    except SyntaxError:
        return False
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        return True
    calls = (node for statement in tree.body if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
             for node in ast.walk(statement))
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("print", "display") for n in calls)


def code_stretches(cells: list) -> tuple[tuple[int, int], tuple[int, int]]:
    """((lines, first cell) of the longest run of code read without a paragraph of prose or an output, and the
    same without an output at all). Code lines are the non-blank ones, nbdev's `#|` directives left out."""
    unexplained = unseen = (0, -1)
    run_unexplained = run_unseen = 0
    start_unexplained = start_unseen = -1
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "markdown":
            if len("".join(cell["source"]).split()) >= PARAGRAPH_WORDS:
                run_unexplained, start_unexplained = 0, -1
            continue
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        lines = sum(1 for line in source.splitlines() if line.strip() and not line.lstrip().startswith("#|"))
        start_unexplained = i if start_unexplained < 0 else start_unexplained
        start_unseen = i if start_unseen < 0 else start_unseen
        run_unexplained += lines
        run_unseen += lines
        if run_unexplained > unexplained[0]:
            unexplained = (run_unexplained, start_unexplained)
        if run_unseen > unseen[0]:
            unseen = (run_unseen, start_unseen)
        if shows_something(source):
            run_unexplained = run_unseen = 0
            start_unexplained = start_unseen = -1
    return unexplained, unseen


def test_no_teaching_chapter_reads_as_a_wall_of_code():
    """A newcomer gives up on screens of code that show nothing: in chapters 00-09, at most MAX_UNEXPLAINED code
    lines in a row without a paragraph of prose or an output, and at most MAX_UNSEEN without an output."""
    import json

    walls = {}
    chapters = sorted((ROOT / "chapters").glob("0[0-9]_*.ipynb"))
    for path in chapters:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        (unexplained, at), (unseen, seen_at) = code_stretches(cells)
        if unexplained > MAX_UNEXPLAINED or unseen > MAX_UNSEEN:
            walls[path.name] = (f"{unexplained} lines from cell {at} without prose or output, "
                                f"{unseen} from cell {seen_at} without output")
    assert len(chapters) >= 10 and not walls, (
        f"walls of code (limits: {MAX_UNEXPLAINED} lines without prose or output, {MAX_UNSEEN} without output; "
        f"show the piece at work, or say what comes): {walls}")


def _cells(*specs: tuple[str, str]) -> list[dict]:
    return [{"cell_type": kind, "source": [text]} for kind, text in specs]


def test_a_stretch_ends_at_an_output_or_a_paragraph_and_not_at_a_caption():
    code = "\n".join(f"x{i} = {i}" for i in range(20))
    paragraph, caption = " ".join(["word"] * PARAGRAPH_WORDS), "Then the next method:"
    assert code_stretches(_cells(("code", code), ("markdown", caption), ("code", code))) == ((40, 0), (40, 0))
    assert code_stretches(_cells(("code", code), ("markdown", paragraph), ("code", code))) == ((20, 0), (40, 0))
    assert code_stretches(_cells(("code", code + "\nx0"), ("code", code))) == ((21, 0), (21, 0))
    assert code_stretches(_cells(("code", "#| export\ndef f():\n    print(1)"), ("code", code))) == ((22, 0), (22, 0))
    assert shows_something("print('hi')\ny = 2") and shows_something("%%time\nf()")
    assert not shows_something("def f():\n    return print(1)") and not shows_something("a = 1")


def test_the_readme_states_each_chapter_s_time_as_the_chapter_does():
    """The README's chapter table gives each chapter the time its first cell states."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("reading_times", ROOT / "tools" / "reading_times.py")
    reading = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reading)
    rows = [line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines() if line.startswith("| 0")]
    wrong = {}
    for path in reading.chapters():
        mine = [r for r in rows if f"`{path.stem}`" in r] or [r for r in rows if r.startswith(f"| {path.name[:2]} ")]
        if len(mine) != 1 or f"| about {reading.stated(path)} min |" not in mine[0]:
            wrong[path.name] = (reading.stated(path), mine)
    assert len(reading.chapters()) >= 10 and not wrong, f"README rows that do not state the chapter's time: {wrong}"


def _reading_times():
    import importlib.util

    spec = importlib.util.spec_from_file_location("reading_times", ROOT / "tools" / "reading_times.py")
    reading = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reading)
    return reading


def test_chapter_00_states_the_shortest_and_the_longest_chapter_as_they_state_themselves():
    """Chapter 00 gives the range of the other teaching chapters' times; it is the range their first cells state."""
    import json
    import re

    reading = _reading_times()
    first = "".join(json.loads((ROOT / "chapters" / "00_start_here.ipynb").read_text(encoding="utf-8"))["cells"][0]["source"])
    said = re.search(r"Chapters 01 to (\d\d) take from about (\d+)[^.]*? to about (\d+)", " ".join(first.split()))
    times = [reading.stated(p) for p in reading.chapters() if not p.name.startswith("00_")]
    assert said, "chapter 00's first cell no longer says how long chapters 01 to 09 take"
    last = max(p.name[:2] for p in reading.chapters())
    assert (said.group(1), int(said.group(2)), int(said.group(3))) == (last, min(times), max(times))


SECTION_REF = r"(?:(part [23](?:'s|,) |appendix (\d\d),? |chapter (\d\d)(?:'s|,) ))?\b[Ss]ections? (\d+(?:\.\d+)?)((?:(?:,| and| or) \d+(?:\.\d+)?)*)"


def _headings(path: Path) -> set[str]:
    import re

    numbers = set()
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "markdown":
            numbers |= {m.group(1) for m in re.finditer(r"^#+ (\d+(?:\.\d+)*)\.? ", cell.source, re.M)}
    return numbers


def test_every_section_a_chapter_names_is_a_heading_where_it_points():
    """"section 10", "part 3, section 5", "appendix 99, section 4": each names a numbered heading of the notebook
    it points to (the chapter itself unless it says another), so a restructure that renumbers says so."""
    import re

    chapters = sorted((ROOT / "chapters").glob("0[0-9]_*.ipynb"))
    wrong = []
    for path in chapters:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "markdown":
                continue
            for m in re.finditer(SECTION_REF, " ".join(cell.source.split())):
                where, appendix, chapter = m.group(1), m.group(2), m.group(3)
                if where and where.startswith("part"):
                    target = ROOT / "chapters" / ("07_stop_hook_verify_loop.ipynb" if "2" in where else "07_the_gate_at_work.ipynb")
                else:
                    number = appendix or chapter
                    target = next((ROOT / "chapters").glob(f"{number}_*.ipynb")) if number else path
                named = [m.group(4)] + re.findall(r"\d+(?:\.\d+)?", m.group(5))
                wrong += [f"{path.name}: {m.group(0)!r} (no {n} in {target.name})" for n in named
                          if n not in _headings(target)]
    assert len(chapters) >= 10 and not wrong, wrong


def test_every_quiz_names_a_section_of_its_chapter_by_number_and_title():
    """A wrong answer says "Read section N ("title") again": N and the title are a heading of the quiz's chapter."""
    import json
    import re

    quizzes = json.loads((ROOT / "chapters" / "quizzes.json").read_text(encoding="utf-8"))
    wrong = {}
    for quiz_id, quiz in quizzes.items():
        titles = set()
        for cell in nbformat.read(ROOT / "chapters" / quiz["chapter"], as_version=4).cells:
            if cell.cell_type == "markdown":
                titles |= {(m.group(1), m.group(2)) for m in re.finditer(r"^#+ (\d+(?:\.\d+)*)\.? (.+)$", cell.source, re.M)}
        named = re.fullmatch(r'(\d+(?:\.\d+)*) \("(.+)"\)', quiz["section"])
        if named is None and quiz["chapter"].startswith("0"):  # a teaching chapter's quiz names its section by number
            wrong[quiz_id] = quiz["section"]
        elif named is not None and (named.group(1), named.group(2)) not in titles:
            wrong[quiz_id] = quiz["section"]
    assert not wrong, f"quizzes naming a section their chapter does not have: {wrong}"
