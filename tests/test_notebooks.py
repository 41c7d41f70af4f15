"""Every chapter runs top to bottom in a fresh kernel (the solutions: tests/test_grading.py)."""
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


def test_every_chapter_states_the_time_it_takes_as_measured():
    """The time a chapter's first cell states is tools/reading_times.py's measure of it (prose and code, within
    15 %): a chapter that grows says so. `uv run python tools/reading_times.py --write` puts the measures in."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("reading_times", ROOT / "tools" / "reading_times.py")
    reading = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reading)
    wrong = {}
    for path in reading.chapters():
        minutes, said = reading.measure(path)[2], reading.stated(path)
        if said is None or abs(said - minutes) > max(5, 0.15 * minutes):
            wrong[path.name] = (said, minutes)
    assert len(reading.chapters()) >= 10 and not wrong, f"(stated, measured) minutes: {wrong}"


MAX_CELL_LINES = 40


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
