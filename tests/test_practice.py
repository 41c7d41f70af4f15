"""Each teaching chapter's exercises and questionnaire (appendix 87, donegate.practice): the bank is well formed,
every item is shown by its chapter, a model answer stays hidden until the learner has written their own, what is
done is recorded beside the passes and counted by `donegate progress`, and the chapter states the time it takes."""
from __future__ import annotations

import importlib.util
import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from donegate.practice import KINDS, Item, Practice, done_items, load_bank, practice_counts, questionnaire, record_done
from donegate.progress import format_progress, load_passes, record_pass

ROOT = Path(__file__).resolve().parent.parent
BANK = ROOT / "chapters" / "practice"
TEACHING = sorted(p for p in (ROOT / "chapters").glob("0[1-9]_*.ipynb"))


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def text(path: Path, kind: str) -> str:
    return "\n".join("".join(c["source"]) for c in cells(path) if c["cell_type"] == kind)


def by_chapter() -> dict[str, list[Path]]:
    chapters: dict[str, list[Path]] = {}
    for path in TEACHING:
        chapters.setdefault(path.name[:2], []).append(path)
    return chapters


def test_the_bank_loads_and_each_file_holds_its_own_chapter_s_items():
    bank = load_bank(BANK)
    assert len(bank) >= 6 * len(by_chapter())
    for path in sorted(BANK.glob("*.json")):
        assert (ROOT / "chapters" / f"{path.stem}.ipynb").is_file(), f"{path.name} names no chapter"
        for key in json.loads(path.read_text(encoding="utf-8")):
            assert bank[key].chapter == path.stem[:2], f"{key} sits in {path.name}"


@pytest.mark.parametrize("number", sorted(by_chapter()))
def test_every_teaching_chapter_ends_with_exercises_and_a_questionnaire(number):
    """At least two exercises (one predict-then-run, one to write code) and four questions per chapter; every
    item is shown by its own notebook, the exercises one by one and the questions through questionnaire(...)."""
    parts = by_chapter()[number]
    items = [i for i in load_bank(BANK).values() if i.chapter == number]
    kinds = {i.kind for i in items}
    assert {"predict", "code"} <= kinds, f"chapter {number} needs a predict-then-run and a code exercise: {kinds}"
    assert sum(not i.is_exercise for i in items) >= 4, f"chapter {number} has fewer than four questions"
    shown = "\n".join(text(p, "code") for p in parts)
    for item in items:
        if item.is_exercise:
            assert re.search(rf'Practice\.load\("{item.item_id}"[,)]', shown), f"{item.item_id} is not shown by chapter {number}"
        else:
            assert f'questionnaire("{item.group}")' in shown, f"the questionnaire {item.group} is not shown"


def test_every_item_names_a_section_of_its_chapter():
    """An item's section is a numbered heading of the notebook its file belongs to (where to read again)."""
    wrong = []
    for path in sorted(BANK.glob("*.json")):
        headings = re.findall(r"^#+ (\d+)\.", text(ROOT / "chapters" / f"{path.stem}.ipynb", "markdown"), re.M)
        for key, item in json.loads(path.read_text(encoding="utf-8")).items():
            if item.get("section", "") not in headings:
                wrong.append((key, item.get("section")))
    assert not wrong, f"items whose section is no numbered heading of their chapter: {wrong}"


def test_a_model_answer_is_revealed_only_after_an_attempt_and_marks_the_item_done(tmp_path):
    progress = tmp_path / "progress.json"
    record_pass("lab01-fail-open-hooks", datetime(2026, 3, 2, 9, tzinfo=timezone.utc), 22, 22, progress)
    item = Item("02-q1", "question", "Why did rm -rf get through?", "The crashed guard was skipped.", 2, "5")
    form = Practice(item, progress_path=progress)
    for empty in ("", "   ", "no idea"):
        assert "Write your own answer first" in form.reveal(empty) and not form.revealed
    assert done_items(progress) == {}
    assert form.reveal("the guard crashed and was skipped") == item.model and form.revealed
    assert list(done_items(progress)) == ["02-q1"]
    assert [p.assignment for p in load_passes(progress)] == ["lab01-fail-open-hooks"], "a mark lost a pass"
    first = done_items(progress)["02-q1"]
    record_done("02-q1", datetime(2030, 1, 1, tzinfo=timezone.utc), progress)
    assert done_items(progress)["02-q1"] == first, "doing an item again keeps the first time"


def test_a_code_exercise_counts_any_line_as_an_attempt(tmp_path):
    item = Item("02-e9", "code", "Write a hook.", "def hook(...): ...", 5, "5")
    form = Practice(item, progress_path=tmp_path / "p.json")
    assert "Write your own" in form.reveal("\n  \n") and form.reveal("x = 1") == item.model


def test_the_page_never_shows_a_model_answer_before_the_learner_asks():
    """The text a static render shows (and the widget before its button is pressed) holds the prompt only."""
    pytest.importorskip("ipywidgets")
    for item in load_bank(BANK).values():
        form = Practice(item)
        bundle = form._repr_mimebundle_()
        assert item.model not in bundle["text/plain"]
        assert form._out.value == "" and form._button.disabled
    group = next(i.group for i in load_bank(BANK).values() if not i.is_exercise)
    q = questionnaire(group, BANK)
    assert all(f.item.model not in q._repr_mimebundle_()["text/plain"] for f in q.forms)


def test_the_button_waits_for_an_attempt_and_the_reveal_names_the_section(tmp_path):
    pytest.importorskip("ipywidgets")
    item = Item("02-q1", "question", "Why?", "Because.", 2, "6")
    form = Practice(item, progress_path=tmp_path / "p.json")
    form.widget
    assert form._button.disabled
    form._box.value = "because the guard crashed"
    assert not form._button.disabled
    form._button.click()
    assert "Because." in form._out.value and "section 6" in form._out.value


def test_a_bad_item_is_refused_with_its_id():
    with pytest.raises(ValueError, match="02-q7.*kind"):
        Item("02-q7", "essay", "Why?", "Because.", 2)
    with pytest.raises(ValueError, match="02-q7.*model"):
        Item("02-q7", "question", "Why?", " ", 2)
    assert set(KINDS) == {"predict", "code", "question"}


def test_progress_shows_how_much_practice_each_chapter_has_done(tmp_path):
    progress = tmp_path / "progress.json"
    items = [i for i in load_bank(BANK).values() if i.chapter == "02"]
    record_done(items[0].item_id, path=progress)
    counts = practice_counts(done_items(progress), BANK)
    exercises = sum(i.is_exercise for i in items)
    questions = len(items) - exercises
    done_ex = int(items[0].is_exercise)
    assert counts["02"] == {"exercises": (done_ex, exercises), "questions": (1 - done_ex, questions)}
    shown = format_progress([], {"02": "Hooks"}, datetime(2026, 3, 3, tzinfo=timezone.utc), progress, counts)
    assert f"exercises {done_ex} of {exercises}, questions {1 - done_ex} of {questions}" in shown


def test_each_chapter_states_the_practice_time_its_items_add_up_to():
    spec = importlib.util.spec_from_file_location("reading_times", ROOT / "tools" / "reading_times.py")
    reading = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reading)
    wrong = {p.name: (reading.stated_practice(p), reading.practice(p)) for p in TEACHING
             if reading.practice(p) is not None and reading.stated_practice(p) != reading.practice(p)}
    assert not wrong, f"(stated, summed) practice minutes; run `uv run python tools/reading_times.py --write`: {wrong}"


FURTHER = ["priority", "read", "time", "task", "keep as evidence"]
PRIORITIES = ("must", "should", "optional")


def further_reading(path: Path) -> list[list[str]]:
    """The rows of the chapter's Further reading table (its header checked)."""
    body = text(path, "markdown").split("## Further reading", 1)
    assert len(body) == 2, f"{path.name} has no Further reading section"
    rows = [l.strip().strip("|").split("|") for l in body[1].splitlines() if l.strip().startswith("|")]
    rows = [[c.strip() for c in r] for r in rows]
    assert rows and [c.lower() for c in rows[0]] == FURTHER, f"{path.name}: the table's header is {rows[:1]}"
    return [r for r in rows[2:]]


@pytest.mark.parametrize("path", TEACHING, ids=lambda p: p.stem)
def test_further_reading_gives_priority_time_link_task_and_evidence(path):
    """Each row: a priority (must, should, optional), a link (a public https address, or a notebook beside this one,
    which works in chapters/ and in the learner's copy in work/chapters/ alike), minutes, the reading task and
    what to keep as evidence of having done it."""
    rows = further_reading(path)
    assert len(rows) >= 2
    for row in rows:
        assert len(row) == 5 and all(row), f"{path.name}: an empty cell in {row}"
        priority, read, minutes, task, evidence = row
        assert priority.lower().startswith(PRIORITIES), f"{path.name}: priority {priority!r}"
        assert re.fullmatch(r"(about )?\d+(-\d+)? min(utes)?", minutes), f"{path.name}: time {minutes!r}"
        links = re.findall(r"\]\(([^)\s]+)\)", read)
        assert links, f"{path.name}: no link in {read!r}"
        for link in links:
            if link.startswith("https://"):
                continue
            target = link.split("#", 1)[0]
            assert "/" not in target and (path.parent / target).is_file(), f"{path.name}: {link} is not a sibling notebook"


def test_a_predict_item_runs_its_code_only_when_the_learner_asks_after_predicting(tmp_path, capsys):
    """Run All builds the form and runs nothing: the code to predict runs when the button shows the model answer,
    printing and displaying into the form's output area (in a kernel; here, onto stdout); a second press runs it
    afresh. The browser test sees it in the page."""
    pytest.importorskip("ipywidgets")
    ran = []

    def what_happens():
        ran.append(1)
        print("printed by the code")
        return "its value"

    form = Practice(Item("02-e9", "predict", "Predict what it prints.", "It prints a line.", 2, "4"),
                    progress_path=tmp_path / "p.json", then=what_happens)
    form._repr_mimebundle_()
    form._button.click()  # disabled: nothing written yet
    assert ran == [] and "printed" not in capsys.readouterr().out
    form._box.value = "it prints something"
    form._button.click()
    assert ran == [1] and "It prints a line." in form._out.value
    shown = capsys.readouterr().out
    assert "printed by the code" in shown and "its value" in shown
    form._button.click()
    assert ran == [1, 1]


def test_every_predict_item_hands_its_code_to_the_form_and_no_cell_runs_it_first():
    """In every teaching chapter, a "predict, then run" item's cell defines the code as a function and gives it to
    Practice.load(..., then=...); no other cell of the chapter calls that function."""
    predict = {key for key, item in load_bank(BANK).items() if item.kind == "predict"}
    seen = set()
    for path in TEACHING:
        for cell in cells(path):
            found = re.search(r'Practice\.load\("([^"]+)"(, then=(\w+))?\)', "".join(cell["source"]))
            if found and found.group(1) in predict:
                assert found.group(3), f"{path.name}: {found.group(1)} runs its code in a cell of its own"
                seen.add(found.group(1))
    assert seen == predict


def test_a_model_answer_shows_its_code_as_code():
    """Code in a model answer is fenced in the bank and shown in a <pre> block, indentation kept; no item shows a
    code line as prose (with stray backticks, or flush left)."""
    from donegate.practice import model_html
    shown = model_html("```\ndef f(x):\n    return x\n```\nIt returns `x`.")
    assert "<pre" in shown and "    return x" in shown and "```" not in shown and "<code>x</code>" in shown
    for key, item in load_bank(BANK).items():
        prose = re.sub(r"```.*?```", "", item.model, flags=re.S)
        assert not re.search(r"^(def |class |\s{4}\S)", prose, re.M), f"{key}: code outside a fence"
        assert "```" not in model_html(item.model), key


def _top_level_nodes(tree):
    """Every node of a cell outside the functions it defines (a function's own work is its business)."""
    import ast

    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        todo += [child for child in ast.iter_child_nodes(node) if not isinstance(child, (ast.FunctionDef, ast.Lambda))]


def test_no_chapter_removes_a_folder_its_exercises_may_still_need():
    """A chapter's scratch folder goes when the kernel stops (atexit), never in a cell: an exercise run again after
    Run All finds it. A cell may remove only a folder it made itself."""
    import ast

    for path in TEACHING:
        for cell in cells(path):
            source = "".join(cell["source"])
            if cell["cell_type"] != "code" or "#| export" in source or "rmtree" not in source:
                continue
            own, removed = set(), []
            for node in _top_level_nodes(ast.parse(source)):
                if isinstance(node, ast.Assign) and re.search(r"mkdtemp|^play\(", ast.unparse(node.value)):
                    own |= {t.id for t in node.targets if isinstance(t, ast.Name)}
                if isinstance(node, ast.Call) and ast.unparse(node.func) == "shutil.rmtree" and node.args:
                    removed.append(ast.unparse(node.args[0]).split(".")[0])
            for target in removed:
                assert target in own, f"{path.name}: a cell removes {target}, which later cells may still use"
