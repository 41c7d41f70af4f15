"""The quiz helper: the widget and the data class give the same verdict, with the why; the data lives in
chapters/quizzes.json, and each learner sees the options in an order of their own."""
import ast
import json
import re
from pathlib import Path

import pytest

from donegate.quiz import Quiz, as_html, learner_id, option_order, quiz_file

ROOT = Path(__file__).resolve().parent.parent
QUIZZES = json.loads((ROOT / "chapters" / "quizzes.json").read_text(encoding="utf-8"))
OPTIONS = {
    "Registration order": "Yes: order is policy.",
    "Alphabetical": "Names carry no priority.",
}


def make(learner: str = "ada") -> Quiz:
    return Quiz("Which hook runs first?", options=OPTIONS, answer="Registration order",
                section='8 ("Order is policy")', quiz_id="t-1", learner=learner)


def click(q: Quiz, option: str) -> None:
    q.widget
    q._choices[option].value = True
    q._button.click()


def letter(q: Quiz, option: str) -> str:
    return "ABCDEFGHIJ"[q.order.index(option)]


def test_clicking_the_right_option_and_check_says_it_is_right_with_the_why():
    q = make()
    click(q, "Registration order")
    assert q.feedback == f"{letter(q, 'Registration order')} is right. Order is policy."
    assert f"<b>{letter(q, 'Registration order')} is right.</b> Order is policy." in q._out.value
    assert q.widget.children[-1] is q._out


def test_a_wrong_option_says_so_with_its_why_and_the_section_to_read_again():
    q = make()
    click(q, "Alphabetical")
    assert q.feedback == (f'{letter(q, "Alphabetical")} is not the answer. Names carry no priority. '
                          'Read section 8 ("Order is policy") again.')
    assert "Names carry no priority" in q._out.value


@pytest.mark.parametrize("why, shown", [
    ("No: names carry no priority.", "Names carry no priority."),
    ("no, names carry no priority.", "Names carry no priority."),
    ("Names carry no priority.", "Names carry no priority."),
    ("Nothing orders them but registration.", "Nothing orders them but registration."),
    ("Yes: order is policy.", "Order is policy."),
])
def test_the_verdict_reads_right_whatever_the_why_starts_with(why, shown):
    """The verdict names the option; a why written as a reply ("No: ...") would answer it twice."""
    q = Quiz("Which hook runs first?", options={"Registration order": "Yes: it is.", "Alphabetical": why},
             answer="Registration order" if not why.startswith("Yes") else "Alphabetical", quiz_id="t-2", learner="ada")
    q.select("Alphabetical")
    q.check()
    assert q.feedback.startswith(f"{letter(q, 'Alphabetical')} is ") and q.feedback.endswith(shown)


def test_no_quiz_of_the_bank_answers_its_verdict_twice():
    for quiz_id in QUIZZES:
        q = Quiz.load(quiz_id, folder=ROOT / "chapters", learner="ada")
        for option in q.order:
            q.select(option)
            q.check()
            after = q.feedback[len(q.verdict):].strip()
            assert q.verdict and not re.match(r"(yes|no)\b\s*[:,.;]", after, re.I), (quiz_id, q.feedback)
            assert not re.match(r"(Not quite|Correct)\.", q.feedback), (quiz_id, q.feedback)


def test_an_option_is_one_click_target_its_text_included():
    """Clicking an option's text picks it: each option is a checkbox whose label holds the letter and the text
    (a click on a label ticks its box), not a small button beside text that ignores clicks."""
    q = make()
    rows = q.widget.children[1:-2]
    assert [row.description for row in rows] == [f"{letter(q, o)}. {o}" for o in q.order]
    assert all(type(row).__name__ == "Checkbox" and "donegate-quiz-option" in row._dom_classes for row in rows)
    rows[q.order.index("Alphabetical")].value = True
    assert q.selected == "Alphabetical"


def test_clicking_the_picked_option_again_keeps_it_picked():
    q = make()
    click(q, "Alphabetical")
    q._choices["Alphabetical"].value = False
    assert q.selected == "Alphabetical" and q._choices["Alphabetical"].value is True


def test_an_option_with_code_shows_it_as_code():
    q = Quiz("Which policy?", options={"`on_error=\"closed\"`": "Yes: it denies.", "none": "No: it must be said."},
             answer="`on_error=\"closed\"`", quiz_id="t-3", learner="ada")
    box = q.widget.children[1 + q.order.index("`on_error=\"closed\"`")]
    assert box.description_allow_html and "<code>on_error=&quot;closed&quot;</code>" in box.description
    plain = q.widget.children[1 + q.order.index("none")]
    assert not plain.description_allow_html and plain.description.endswith(". none")


def test_one_choice_at_a_time_and_select_from_code_moves_the_buttons():
    q = make()
    click(q, "Alphabetical")
    q.select("Registration order")
    assert {o: b.value for o, b in q._choices.items()} == {"Registration order": True, "Alphabetical": False}
    assert q.check() is True


def test_check_without_a_choice_asks_for_one():
    q = make()
    assert q.check() is False
    assert "Pick an option" in q.feedback


@pytest.mark.parametrize(
    "options, answer",
    [({"Only": "why"}, "Only"), (OPTIONS, "Not an option"), ({"A": "", "B": "why"}, "B")],
)
def test_a_badly_written_quiz_is_refused(options, answer):
    with pytest.raises(ValueError):
        Quiz("?", options=options, answer=answer, learner="ada")


def test_unknown_option_is_refused():
    with pytest.raises(ValueError):
        make().select("Nope")


def test_nothing_on_the_page_before_check_tells_the_answer():
    """The widget's state before a click holds the question and the options, never a why or the answer's mark."""
    for quiz_id in QUIZZES:
        q = Quiz.load(quiz_id, folder=ROOT / "chapters", learner="ada")
        shown = [q.widget.children[0].value] + [row.description for row in q.widget.children[1:-2]] + [q._out.value]
        page = " ".join(shown)
        assert not any(why in page for why in (as_html(w) for w in q.options.values())), quiz_id
        assert q._out.value == "" and not any(b.value for b in q._choices.values()), quiz_id


def test_each_learner_keeps_one_order_and_learners_differ():
    orders = {learner: option_order(list("ABCD"), f"{learner}\0q") for learner in ("ada", "grace", "alan", "edsger")}
    assert all(option_order(list("ABCD"), f"{learner}\0q") == order for learner, order in orders.items())
    assert len({tuple(o) for o in orders.values()}) > 1
    assert all(sorted(o) == list("ABCD") for o in orders.values())


def test_the_right_option_is_not_where_the_author_put_it():
    """Authors list the right option first; for a learner it lands first only as often as chance says."""
    assert all(next(iter(data["options"])) == data["answer"] for data in QUIZZES.values()), \
        "the data file was rewritten: this test's premise (answers first) no longer holds; check the order another way"
    for learner in ("ada", "grace", "alan"):
        first = sum(Quiz.load(i, folder=ROOT / "chapters", learner=learner).order[0] == QUIZZES[i]["answer"]
                    for i in QUIZZES)
        assert first < len(QUIZZES) * 0.6, (learner, first)


def test_the_learner_id_comes_from_the_environment_or_a_file_made_once(tmp_path, monkeypatch):
    monkeypatch.setenv("DONEGATE_LEARNER", "student-17")
    assert learner_id() == "student-17"
    monkeypatch.delenv("DONEGATE_LEARNER")
    monkeypatch.setenv("DONEGATE_PROGRESS_FILE", str(tmp_path / "state" / "progress.json"))
    made = learner_id()
    assert re.fullmatch(r"[0-9a-f]{16}", made) and (tmp_path / "state" / "learner-id").read_text().strip() == made
    assert learner_id() == made


def test_every_quiz_is_named_by_one_chapter_cell_and_no_cell_shows_an_answer():
    named = []
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            source = "".join(cell["source"])
            if cell["cell_type"] != "code" or "#| export" in source:
                continue
            for quiz_id in re.findall(r'Quiz\.load\("([^"]+)"', source):
                named.append(quiz_id)
                assert QUIZZES[quiz_id]["chapter"] == path.name, quiz_id
            tree = ast.parse(source)
            tried = {id(n) for t in ast.walk(tree) if isinstance(t, ast.Try) for b in t.body for n in ast.walk(b)}
            built = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "Quiz"
                     and id(n) not in tried]  # a quiz built in the cell (one built to show a refusal is tried)
            assert not built, (path.name, source[:200])
            assert not any(why in source for data in QUIZZES.values() for why in data["options"].values())
    assert set(named) == set(QUIZZES), "a quiz in quizzes.json that no chapter loads, or a load of no quiz"


def test_a_copy_of_a_chapter_in_work_chapters_finds_the_workbook_s_quizzes(tmp_path, monkeypatch):
    """`donegate lab` runs the learner's copies in work/chapters/: the quizzes come from the workbook they are in."""
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "quizzes.json").write_text(json.dumps({"t-9": {
        "question": "?", "options": {"a": "Yes: a.", "b": "No: b."}, "answer": "a", "chapter": "x.ipynb"}}))
    (tmp_path / "work" / "chapters").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "work" / "chapters")
    monkeypatch.delenv("DONEGATE_QUIZZES", raising=False)
    assert quiz_file() == tmp_path / "chapters" / "quizzes.json"
    assert Quiz.load("t-9", learner="ada").answer == "a"


def test_a_wrong_id_or_a_missing_file_says_what_to_do(tmp_path):
    with pytest.raises(KeyError, match="02-q2"):
        Quiz.load("02-nope", folder=ROOT / "chapters")
    with pytest.raises(FileNotFoundError, match="DONEGATE_QUIZZES"):
        quiz_file(tmp_path)


def test_code_in_backticks_is_rendered_as_code():
    assert as_html("use `a|b` <now>") == "use <code>a|b</code> &lt;now&gt;"
    assert as_html("one ` alone") == "one ` alone"


def test_without_widgets_the_quiz_shows_its_question_and_options_in_the_learner_s_order():
    q = make()
    bundle = q._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    text = bundle["text/plain"]
    assert text.startswith("Quiz. Which hook runs first?")
    assert [line.split(". ", 1)[1] for line in text.splitlines()[1:3]] == q.order



# Surface cues: what would let a learner answer without reading the chapter. tests/test_quiz_surface.py holds every
# rule for picking an option by its surface (and a classifier on all of them) to chance; this one bounds length.

def shown(option: str) -> str:
    """An option as the learner sees it (backticks are rendered as code, not printed)."""
    return option.replace("`", "")


def test_no_right_option_is_much_longer_than_the_wrong_ones():
    """The right option is at most 1.3 times as long as the longest wrong option of its quiz: a third longer
    is about one clause more, the most that a careful wording needs and less than the eye notices at once."""
    too_long = {}
    for quiz_id, data in QUIZZES.items():
        right = len(shown(data["answer"]))
        wrong = max(len(shown(o)) for o in data["options"] if o != data["answer"])
        if right > 1.3 * wrong:
            too_long[quiz_id] = round(right / wrong, 2)
    assert not too_long, f"right option / longest wrong option, over 1.3: {too_long}"


def test_wrong_feedback_starts_with_the_misconception_not_with_no():
    """A wrong option's why names the misconception it answers, first: the widget's verdict ("A is not the
    answer.") already says no, so a why that opens with "No:" spends its first words saying it again. Each quiz
    names the section that a wrong answer sends the learner back to."""
    starts_with_no = [(quiz_id, why[:30]) for quiz_id, data in QUIZZES.items()
                      for option, why in data["options"].items()
                      if option != data["answer"] and re.match(r"No[:,.;]", why)]
    assert not starts_with_no
    assert all(data.get("section", "").strip() for data in QUIZZES.values())


def test_a_why_that_opens_with_yes_or_no_agrees_with_its_option():
    """A why that opens with "Yes" belongs to the right option, and not to an option that itself opens with "No": the
    why of a right option "No: the reply was written before the lookup ran" must not start "Yes:", which reads as
    the opposite of the option it explains."""
    clashes = []
    for quiz_id, data in QUIZZES.items():
        for option, why in data["options"].items():
            said, opens = re.match(r"(yes|no)\b", why.strip(), re.I), re.match(r"(yes|no)\b", option.strip(), re.I)
            if said and (said[1].lower() == "yes") != (option == data["answer"]):
                clashes.append((quiz_id, option[:30], why[:30]))
            elif said and opens and said[1].lower() != opens[1].lower():
                clashes.append((quiz_id, option[:30], why[:30]))
    assert not clashes
