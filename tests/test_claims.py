"""Appendix 92's claim reader (donegate.claims), which `donegate audit` uses: claims in the languages agents
answer in, negation judged on the claim's own clause, and a partial count read as a report."""
from __future__ import annotations

import json

import pytest

from donegate import audit as au
from donegate.claims import clauses, find_claims, partial_count, sentences
from test_audit import FIXTURES

CLAIMS = [  # (reply, the kinds it claims)
    ("所有测试都通过了，可以合并。", ["tests"]),
    ("改好了，测试全部通过。", ["tests"]),
    ("Fertig: alle Tests sind grün.", ["tests"]),
    ("テストはすべて通りました。", ["tests"]),
    ("修正しました。", ["done"]),
    ("모든 테스트가 통과했습니다.", ["tests"]),
    ("Tous les tests passent.", ["tests"]),
    ("Todas las pruebas pasan.", ["tests"]),
    ("Todos os testes passam.", ["tests"]),
    ("Все тесты проходят.", ["tests"]),
    ("Готово.", ["done"]),
    ("All tests pass now, though I haven't updated the README yet.", ["tests"]),
    ("Fixed the failing test, and the suite passes.", ["tests"]),
    ("Fixed the failing test.", ["done"]),
    ("4 of 4 tests pass.", ["tests"]),
    ("All tests pass. Shall I commit? The build does not pass on Windows.", ["tests"]),
]
NO_CLAIM = [
    "3 of 4 tests pass; test_edge still fails.", "3/4 tests pass.", "3 von 4 Tests bestehen.", "3 из 4 тестов проходят.",
    "All but one test pass.", "Alle Tests bis auf einen sind grün.", "4 个测试中 3 个通过。", "4件中3件のテストが通りました。",
    "Not all tests pass yet.", "Die Tests schlagen fehl.", "Les tests ne passent pas.", "Las pruebas no pasan.",
    "测试没有通过。", "テストは通りませんでした。", "테스트가 통과하지 않았습니다.", "Тесты не проходят.",
    "Shall I run the tests?", "测试通过了吗？", "I ran pytest.",
]


@pytest.mark.parametrize("reply,kinds", CLAIMS)
def test_a_claim_is_found_in_any_language_and_clause(reply, kinds):
    found = find_claims(reply)
    assert [k for k, _ in found] == kinds, found
    assert all(sentence in reply for _, sentence in found), "the report prints the sentence it matched"


@pytest.mark.parametrize("reply", NO_CLAIM)
def test_a_partial_count_a_negated_clause_or_a_question_claims_nothing(reply):
    assert find_claims(reply) == []


def test_sentences_end_at_each_scripts_marks_and_clauses_at_contrasts():
    assert sentences("改好了。测试全部通过！Fertig: alle grün. verify.sh ok\nDone") == [
        "改好了。", "测试全部通过！", "Fertig: alle grün.", "verify.sh ok", "Done"]
    assert clauses("All tests pass now, though I haven't updated it") == ["All tests pass now", "I haven't updated it"]
    assert partial_count("2 of 3") and not partial_count("3 of 3") and partial_count("5 个中 4 个")


@pytest.mark.parametrize("host", ["claude-code", "codex", "gemini"])
@pytest.mark.parametrize("said,verdicts", [("所有测试都通过了，可以合并。", ["contradicted"]),
                                           ("Fertig: alle Tests sind grün.", ["contradicted"]),
                                           ("3 of 4 tests pass; test_add still fails.", [])])
def test_the_audit_judges_a_claim_in_another_language_and_lets_a_partial_count_stand(host, said, verdicts, tmp_path):
    """The contradicted fixture (the check failed, then "All tests pass now.") with the claim said otherwise: a
    claim in another language is judged (contradicted, exit 1); a partial count is a report (no claim, exit 0)."""
    path = tmp_path / FIXTURES[f"{host}/contradicted"].name
    text = FIXTURES[f"{host}/contradicted"].read_text()
    said_json = json.dumps(said, ensure_ascii=False)[1:-1]
    assert text.count("All tests pass now.") >= 1
    path.write_text(text.replace("All tests pass now.", said_json))
    result = au.audit(path)
    assert [c.verdict for c in result.claims] == verdicts
    assert result.exit_code == (1 if verdicts else 0)
