"""The quiz helper: the widget and the data class give the same verdict, with the why."""
import pytest

from donegate.quiz import Quiz

OPTIONS = {
    "Registration order": "Yes: order is policy.",
    "Alphabetical": "No: names carry no priority.",
}


def make() -> Quiz:
    return Quiz("Which hook runs first?", options=OPTIONS, answer="Registration order")


def test_clicking_the_right_option_and_check_shows_correct_with_the_why():
    q = make()
    widget = q.widget
    q._radio.value = "Registration order"
    q._button.click()
    assert q.feedback == "Correct. Yes: order is policy."
    assert "Correct. Yes: order is policy." in q._out.value
    assert widget.children[-1] is q._out


def test_clicking_a_wrong_option_shows_not_quite_with_that_options_why():
    q = make()
    q.widget
    q._radio.value = "Alphabetical"
    q._button.click()
    assert q.feedback.startswith("Not quite.")
    assert "names carry no priority" in q._out.value


def test_check_without_a_choice_asks_for_one():
    q = make()
    assert q.check() is False
    assert "Pick an option" in q.feedback


def test_select_from_code_moves_the_radio_button():
    q = make()
    q.widget
    q.select("Alphabetical")
    assert q._radio.value == "Alphabetical"


@pytest.mark.parametrize(
    "options, answer",
    [({"Only": "why"}, "Only"), (OPTIONS, "Not an option"), ({"A": "", "B": "why"}, "B")],
)
def test_a_badly_written_quiz_is_refused(options, answer):
    with pytest.raises(ValueError):
        Quiz("?", options=options, answer=answer)


def test_unknown_option_is_refused():
    with pytest.raises(ValueError):
        make().select("Nope")


def test_without_widgets_the_quiz_shows_its_question_and_options_as_text():
    bundle = make()._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    text = bundle["text/plain"]
    assert text.startswith("Quiz. Which hook runs first?")
    assert "( ) Registration order" in text and "( ) Alphabetical" in text
