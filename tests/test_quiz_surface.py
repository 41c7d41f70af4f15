"""No quiz of the bank (chapters/quizzes.json) can be answered from its surface: a reader who never opened the
chapter and picks by how the options look does no better than a blind pick.

Features, one value per option: its length (characters, words, distance from the quiz's median), the words it
shares with the question (four ways of counting, and word pairs) and with the other options, its negation, refusal,
hedge, absolute and because/since/so words, whether it opens with yes or no, its punctuation, digits, code and
capitals, and its grammatical fit with the stem (a/an before the blank, "because" after "why", a time after
"when"). Its position is not a feature: the file lists the right option first (tests/test_quiz.py relies on it) and
each learner sees the options shuffled by a seed of their own, so where the right one lands is noise no reader can
use, and a picker on noise would only raise the limit below.

Pickers: for each feature, the option with the most of it, or with the fewest; the direction is learned on the other
quizzes. A small classifier, Gaussian naive Bayes over every feature, is fitted on the other quizzes too. Each answers
every quiz left out in turn (leave-one-out); a tie scores 1/(options tied) when the right one is among them, as a
blind pick among them would. Pairs of features (one, then another for its ties) are left to the classifier: some 700
pair pickers would raise the limit by more than two right answers and see little the classifier does not.

The limit. A blind pick expects sum(1/k) right answers over the bank (12.5 of 41). A fair bank has the same options
with the right one drawn at random in each quiz: SIMULATIONS of them (fixed SEED, so every run draws the same) are
scored by the same pickers, and each one's best excess over a blind pick is kept. The test fails when the bank's best
picker beats a blind pick by more than the LEVEL quantile of those. Taking the best picker in every simulation is what
pays for trying some thirty pickers at once: a fair bank goes over the limit once in a hundred draws, whichever picker
does it. The bank before its rewrite, whose right option was usually the sceptical one and echoed the question least,
had its best picker (the classifier) at 22.5 of 41, 10 over a blind pick, against a limit of 9: fair banks do that
well about 4 times in a thousand. The limit depends on the options, so it is computed on each run (about a second)
and stays right as quizzes are added.
"""
import json
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BANK = ROOT / "chapters" / "quizzes.json"

SMALL = {"that", "this", "what", "which", "with", "from", "does", "have", "when", "whether", "they", "their", "them",
         "then", "than", "would", "should", "could", "into", "because", "since", "your", "there", "were", "been",
         "will", "also", "it's", "its", "the", "and", "for", "are", "was", "not", "but", "you", "has", "had"}
NEGATION = {"no", "not", "nothing", "none", "never", "nobody", "neither", "nor", "cannot", "without", "unless",
            "nowhere"}
REFUSAL = {"refuse", "refuses", "refused", "refusal", "deny", "denies", "denied", "block", "blocks", "blocked",
           "reject", "rejects", "rejected", "fail", "fails", "failed", "veto", "vetoes", "wrong"}
HEDGE = {"may", "might", "maybe", "perhaps", "could", "possibly", "likely", "probably", "some", "sometimes", "often",
         "usually", "partly", "can", "if", "whether", "about", "around", "rare", "rarely"}
ABSOLUTE = {"always", "never", "every", "all", "any", "none", "nothing", "only", "must", "whole", "entirely",
            "exactly", "each", "alone", "completely", "everything", "nobody", "anything", "everyone", "once"}
CAUSAL = {"because", "since", "so", "therefore", "hence", "as"}
SIMULATIONS, SEED, LEVEL = 10_000, 41, 0.99  # see the module's docstring

TIME = {"day", "days", "hour", "hours", "minute", "minutes", "after", "before", "when", "once", "straight", "never"}


def shown(text: str) -> str:
    """Text as the learner sees it: backticks render as code, they are not printed."""
    return text.replace("`", "")


def tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9_]+(?:['’.][a-z0-9_]+)*", shown(text).lower())


def content(words: list[str]) -> set[str]:
    """Words of four letters or more that carry meaning."""
    return {w for w in words if len(w) >= 4 and w not in SMALL}


def stems(words: set[str]) -> set[str]:
    return {w[:5] for w in words}


def pairs(words: list[str]) -> set[tuple[str, str]]:
    return set(zip(words, words[1:]))


def counted(words: list[str], vocabulary: set[str]) -> int:
    return sum(w in vocabulary or (vocabulary is NEGATION and w.endswith("n't")) for w in words)


def option_features(quiz: dict) -> dict[str, list[float]]:
    """Each surface feature, one value per option in the file's order."""
    question, options = quiz["question"], list(quiz["options"])
    q_words = tokens(question)
    q_content, first = content(q_words), (q_words[0] if q_words else "")
    words = [tokens(o) for o in options]
    kept = [content(w) for w in words]
    chars = [len(shown(o)) for o in options]
    ending = question.rstrip(" ?:.").lower().rsplit(" ", 1)[-1]

    def others(i: int, how) -> list[int]:
        return [how(i, j) for j in range(len(options)) if j != i]

    def fit(i: int) -> float:
        """Grammatical fit with the stem: an article's vowel, a why's because, a when's time."""
        start = words[i][0] if words[i] else ""
        if ending in ("a", "an"):
            return float((ending == "an") == (start[:1] in "aeiou"))
        if first == "why":
            return float(start in ("because", "so", "to"))
        if first == "when":
            return float(any(w in TIME or w.isdigit() for w in words[i]))
        return 0.0

    rows = {
        "length in characters": chars,
        "length in words": [len(w) for w in words],
        "distance from the median length": [abs(c - float(np.median(chars))) for c in chars],
        "mean word length": [np.mean([len(t) for t in w]) if w else 0.0 for w in words],
        "words shared with the question": [len(k & q_content) for k in kept],
        "any words shared with the question": [len(set(w) & set(q_words)) for w in words],
        "word pairs shared with the question": [len(pairs(w) & pairs(q_words)) for w in words],
        "stems shared with the question": [len(stems(k) & stems(q_content)) for k in kept],
        "share of its words found in the question": [len(k & q_content) / max(1, len(k)) for k in kept],
        "share of any of its words found in the question": [len(set(w) & set(q_words)) / max(1, len(set(w)))
                                                             for w in words],
        "words shared with the other options": [sum(others(i, lambda a, b: len(kept[a] & kept[b])))
                                                for i in range(len(options))],
        "most words shared with one other option": [max(others(i, lambda a, b: len(kept[a] & kept[b])))
                                                    for i in range(len(options))],
        "stems shared with the other options": [sum(others(i, lambda a, b: len(stems(kept[a]) & stems(kept[b]))))
                                                for i in range(len(options))],
        "options opening with the same word": [sum(others(i, lambda a, b: words[a][:1] == words[b][:1]))
                                               for i in range(len(options))],
        "negation words": [counted(w, NEGATION) for w in words],
        "refusal words": [counted(w, REFUSAL) for w in words],
        "sceptical words (negation or refusal)": [counted(w, NEGATION) + counted(w, REFUSAL) for w in words],
        "hedge words": [counted(w, HEDGE) for w in words],
        "absolute words": [counted(w, ABSOLUTE) for w in words],
        "because, since, so": [counted(w, CAUSAL) for w in words],
        "opens with yes or no": [float(w[:1] in (["yes"], ["no"])) for w in words],
        "colons": [o.count(":") for o in options],
        "a label before a colon": [float(":" in " ".join(shown(o).split()[:3])) for o in options],
        "commas": [o.count(",") for o in options],
        "semicolons": [o.count(";") for o in options],
        "brackets": [o.count("(") for o in options],
        "quotation marks": [len(re.findall(r"[\"“”]|(?<!\w)'|'(?!\w)", o)) for o in options],
        "digits": [sum(ch.isdigit() for ch in o) for o in options],
        "code": [len(re.findall(r"`[^`]+`|\w_\w|\w\.\w|\(\)|\./|--", o)) for o in options],
        "capital letters after the first": [sum(ch.isupper() for ch in o[1:]) for o in options],
        "grammatical fit with the stem": [fit(i) for i in range(len(options))],
    }
    return {name: [float(v) for v in values] for name, values in rows.items()}


class Surface:
    """The bank's features as arrays and what each picker picks, computed once; `scores` then grades every picker
    for any placing of the right options, the real one or a simulated fair bank's."""

    def __init__(self, bank: dict):
        self.ids = list(bank)
        rows = [option_features(bank[i]) for i in self.ids]
        self.names = list(rows[0])
        self.k = np.array([len(bank[i]["options"]) for i in self.ids])
        self.valid = np.arange(self.k.max())[None, :] < self.k[:, None]  # quiz, option
        self.x = np.zeros((*self.valid.shape, len(self.names)))  # quiz, option, feature
        for n, row in enumerate(rows):
            self.x[n, : self.k[n]] = np.array([row[name] for name in self.names]).T
        self.answers = np.array([list(bank[i]["options"]).index(bank[i]["answer"]) for i in self.ids])
        self.chance = float((1 / self.k).sum())
        # picks[feature, most/fewest, quiz, option]: the share of the pick that lands on the option (ties share it)
        self.picks = np.array([[self._extreme(sign * self.x[..., f]) for sign in (1.0, -1.0)]
                               for f in range(len(self.names))])
        centred = self.x - self.x.sum(1, keepdims=True) / self.k[:, None, None]
        self.centred = np.where(self.valid[..., None], centred, 0.0)
        self.pickers = [f"most or fewest: {name}" for name in self.names] + ["naive Bayes on every feature"]

    def _extreme(self, values: np.ndarray) -> np.ndarray:
        held = np.where(self.valid, values, -np.inf)
        top = (held >= held.max(1, keepdims=True) - 1e-9) & self.valid
        return top / top.sum(1, keepdims=True)

    def scores(self, answers: np.ndarray) -> np.ndarray:
        """Leave-one-out number right of every picker (columns; the classifier last) for each placing of the right
        options (rows of `answers`, an option index per quiz)."""
        quiz = np.arange(len(self.ids))[None, :]
        hit = self.picks[:, :, quiz, answers].transpose(2, 0, 1, 3)  # placing, feature, most/fewest, quiz
        trained = hit.sum(-1, keepdims=True) - hit  # what each direction gets right on the other quizzes
        chosen = trained >= trained.max(2, keepdims=True) - 1e-9  # a tie on the others: half a pick each way
        single = ((hit * chosen).sum(2) / chosen.sum(2)).sum(-1)
        return np.concatenate([single, self.bayes(answers)[:, None]], axis=1)

    def bayes(self, answers: np.ndarray) -> np.ndarray:
        """Gaussian naive Bayes with one variance per feature, fitted without the quiz it answers. The features are
        centred within their quiz, so a quiz's wrong options sum to minus its right one and the score is linear."""
        quiz = np.arange(len(self.ids))
        right = self.centred[quiz[None, :], answers]  # placing, quiz, feature
        others = right.sum(1, keepdims=True) - right  # the right options of the other quizzes, summed
        n1, n0 = len(self.ids) - 1, ((self.k - 1).sum() - (self.k - 1))[None, :, None]
        squares = (self.centred ** 2).sum(1)
        squares = squares.sum(0) - squares
        mu1, mu0 = others / n1, -others / n0
        var = (squares[None] - n1 * mu1 ** 2 - n0 * mu0 ** 2) / (n1 + n0 - 2)
        weight = np.where(var > 1e-9, (mu1 - mu0) / np.where(var > 1e-9, var, 1.0), 0.0)
        score = np.where(self.valid[None], np.einsum("qkf,pqf->pqk", self.centred, weight), -np.inf)
        top = score >= score.max(2, keepdims=True) - 1e-9
        return (top[np.arange(len(answers))[:, None], quiz[None, :], answers] / top.sum(2)).sum(1)

    def fair_banks(self, count: int = SIMULATIONS, seed: int = SEED) -> np.ndarray:
        """The best picker's excess over a blind pick in each of `count` fair banks: these options, the right one
        drawn at random in every quiz (a fixed seed, so the limit is the same on every run)."""
        rng, best = np.random.default_rng(seed), []
        for _ in range(0, count, 500):
            answers = (rng.random((500, len(self.ids))) * self.k).astype(int)
            best.append(self.scores(answers).max(1) - self.chance)
        return np.concatenate(best)[:count]


@lru_cache(maxsize=None)
def surface(path: Path = BANK) -> tuple[Surface, float]:
    """The bank's surface and the limit on any picker's excess: the LEVEL quantile of the best one's over fair banks."""
    found = Surface(json.loads(path.read_text(encoding="utf-8")))
    return found, float(np.quantile(found.fair_banks(), LEVEL))


def verdict(found: Surface, limit: float, answers: np.ndarray) -> tuple[float, str]:
    """The best picker's excess over a blind pick for these right options, and a table of the pickers, best first
    (each single picker named with the direction that does best over the whole bank)."""
    scores = found.scores(answers[None])[0]
    quiz = np.arange(len(found.ids))
    whole = found.picks[:, :, quiz, answers].sum(-1)  # feature, most/fewest
    names = [f"{'most' if most >= fewest else 'fewest'}: {name}" for (most, fewest), name in zip(whole, found.names)]
    rows = sorted(zip(scores, names + found.pickers[-1:]), reverse=True)
    table = (f"a blind pick expects {found.chance:.2f} right of {len(found.ids)}; a picker may beat it by {limit:.2f} "
             f"at most (reach {found.chance + limit:.2f}):\n" + "\n".join(f"  {s:5.2f}  {n}" for s, n in rows))
    return float(scores.max() - found.chance), table


def test_no_surface_feature_or_classifier_answers_the_bank_better_than_a_blind_pick():
    found, limit = surface()
    excess, table = verdict(found, limit, found.answers)
    assert excess <= limit, f"the bank's options give their answer away: {table}"


def test_the_surface_test_catches_a_bank_whose_right_option_is_the_longest():
    """The test can fail: with the same options, a bank whose right option is always the longest is caught."""
    found, limit = surface()
    longest = found.x[..., found.names.index("length in characters")]
    excess, table = verdict(found, limit, np.where(found.valid, longest, -1).argmax(1))
    assert excess > limit, table
