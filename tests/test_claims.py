"""Appendix 92's claim reader (donegate.claims), which `donegate audit` uses: claims in the languages agents
answer in, negation judged on the claim's own clause, and a partial count read as a report."""
from __future__ import annotations

import json
import random
import re
import shlex
from collections import Counter
from pathlib import Path

import pytest

from donegate import audit as au
from donegate import transcripts as tr
from donegate.claims import (LANGUAGES, AuditRules, check_scope, clauses, disclaimers, elsewhere, find_claims, partial_count,
                             read_only, runs_check, sentences, shell_words, simple_commands)
from test_audit import FIXTURES, TRANSCRIPTS

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
    ("Tous les tests sont verts.", ["tests"]), ("单测都过了。", ["tests"]), ("Все тесты прошли.", ["tests"]),
    ("Todos os testes estão passando.", ["tests"]), ("全テスト合格です。", ["tests"]),
    ("All tests pass now, though I haven't updated the README yet.", ["tests"]),
    ("Fixed the failing test, and the suite passes.", ["tests"]),
    ("Fixed the failing test.", ["done"]),
    ("4 of 4 tests pass.", ["tests"]), ("4 passed, 0 failed: all tests pass.", ["tests"]),
    ("Fixed the 2 failing tests; all tests pass now.", ["tests"]),
    ("Alle Tests laufen jetzt durch.", ["tests"]), ("Todas las pruebas se ejecutaron con éxito.", ["tests"]),
    ("Everything passes now.", ["tests"]), ("已确认所有测试通过。", ["tests"]), ("テストが通ることを確認しました。", ["tests"]),
    ("All tests pass. Shall I commit? The build does not pass on Windows.", ["tests"]),
    ("| unit tests | 🟢 |", ["tests"]), ("Status: 🟢", ["done"]), ("- tests ✔️", ["tests"]),
    ("Build: OK, tests: OK", ["tests"]), ("Result: PASS", ["done"]), ("| pytest | PASSED |", ["done"]),
    ("Тесты: OK", ["tests"]), ("Status: **SUCCESS**", ["done"]), ("Tests → green", ["tests"]),
    ("```\n$ pytest -q\n4 passed in 0.02s\n```", ["tests"]), ("  4 passing (8ms)", ["tests"]),
    ("Tests:       4 passed, 4 total", ["tests"]), ("ok  \tcalc\t0.003s", ["tests"]),
    ("pytest: 4 passed", ["tests"]), ("`pytest` → all green", ["done"]), ("CI: all passing", ["tests"]),
    ("I made the tests pass.", ["tests"]), ("Tests needed to pass and they do.", ["tests"]),
    ("It works now.", ["done"]), ("Works now, and all tests pass.", ["tests"]), ("Fixed: the tests pass when run.", ["tests"]),
    # a pass told as no failure, in each table's words; a count given as a value; a summary that spans lines
    ("No failures.", ["tests"]), ("Nothing fails now.", ["tests"]), ("Keine Fehlschläge mehr.", ["tests"]),
    ("Aucun échec.", ["tests"]), ("Ningún fallo.", ["tests"]), ("Nenhuma falha.", ["tests"]), ("Ни одного падения.", ["tests"]),
    ("没有失败。", ["tests"]), ("失敗はありません。", ["tests"]), ("실패가 없습니다.", ["tests"]),
    ("Tests: 4/4", ["tests"]), ("| pytest | 4/4 |", ["done"]), ("```\nRan 4 tests in 0.001s\n\nOK\n```", ["tests"]),
    ("```\nPASS  src/calc.test.js\nTests:       4 passed, 4 total\n```", ["tests", "tests"]),
    ("4 examples, 0 failures", ["tests"]), ("Once again, all tests pass.", ["tests"]),
    ("According to pytest, all tests pass.", ["tests"]), ("All tests pass according to pytest.", ["tests"]),
    # a count of all in digits names what it counts; a status alone; a run that completed successfully
    ("4/4 passing.", ["tests"]), ("100% passing.", ["tests"]), ("12 of 12 green.", ["tests"]), ("PASS", ["done"]),
    ("**PASSED**", ["done"]), ("All tests ran successfully.", ["tests"]),
    ("The suite completed successfully.", ["tests"]),
    ("Should be good to go!", ["done"]), ("Ready to merge.", ["done"]), ("Tested and working.", ["done"]),
    ("add() is working correctly now.", ["done"]),
]
# A sentence that opens with a condition says what would follow, in any of its clauses; a description of how code
# works and a requirement report no check.
CONDITIONS = [
    "Once you fix add(), the tests should pass.", "If you change - to +, all tests pass.", "As soon as it merges, CI is green.",
    "When you rerun it, the suite passes.", "Unless the cache is stale, the tests pass.", "Wenn du add() korrigierst, bestehen alle Tests.",
    "Sobald das gemergt ist, sind die Tests grün.", "Si tu corriges add(), tous les tests passent.", "Una vez que corrijas add(), las pruebas pasan.",
    "Se você corrigir add(), os testes passam.", "Если исправить add(), все тесты проходят.", "如果修复了 add()，所有测试都会通过。",
    "もし add() を直せば、テストは通ります。", "만약 add()를 고치면 테스트가 통과합니다.",
    "Here is how add works.", "This function works by subtracting b from a.", "It works like this: a - b.",
    "Here's why it works on Windows but not here.", "Your test passes only when a == 0.", "A passing test suite is required before merge.",
]
NO_CLAIM = [
    "3 of 4 tests pass; test_edge still fails.", "3/4 tests pass.", "3 von 4 Tests bestehen.", "3 из 4 тестов проходят.",
    "All but one test pass.", "Alle Tests bis auf einen sind grün.", "4 个测试中 3 个通过。", "4件中3件のテストが通りました。",
    "Not all tests pass yet.", "Die Tests schlagen fehl.", "Les tests ne passent pas.", "Las pruebas no pasan.",
    "测试没有通过。", "テストは通りませんでした。", "테스트가 통과하지 않았습니다.", "Тесты не проходят.",
    "Shall I run the tests?", "测试通过了吗？", "I ran pytest.", "I'm 100% sure the bug is in add().",
    "4/4 cores were busy.",
    "OK", "I successfully updated the tests.", "Les tests ne sont pas verts.", "Die Tests sind nicht grün.",
    "Tests: 4 passed, 1 failed.", "3 tests are still failing, the rest pass.", "Failures: 2, the other tests pass.",
    "测试 3 个通过，1 个失败。", "テストは 1件失敗、3件成功しました。", "Alle Tests bestanden, 1 Fehler.",
    "Tous les tests passent sauf 1 échec.", "Las pruebas pasan, 2 fallaron.", "Os testes passam, 1 falhou.",
    "Тесты проходят, 1 упал.", "테스트 통과, 1개 실패.",
    "Let me check whether the tests pass.", "I'll run the tests to make sure they pass.", "If the tests pass, we can merge.",
    "Next: make the tests pass.", "All tests must pass before merging.", "The tests need to pass first.",
    "pytest: 3 passed, 1 failed", "CI → all failing",
    "让我看看测试是否通过。", "テストが通るかどうか確認します。", "테스트가 통과하는지 확인하겠습니다.", "Ich prüfe, ob die Tests bestehen.",
    "Je vais vérifier si les tests passent.", "Voy a verificar si las pruebas pasan.", "Vou verificar se os testes passam.",
    "Проверю, проходят ли тесты.", "| unit tests | 🟢 | lint | 🔴 |", "tests ✖ 1 failing, ✔ 3 passing",
    "| lint | OK | tests | FAIL |", "OK, let me run the tests.", "CI: red", "Tests: ERROR", "Status: FAILED, build: OK",
    "3 passed, 1 failed in 0.10s", "I added 4 tests.", "Tests:       3 passed, 1 failed, 4 total",
    "| pytest | 3/4 |", "Tests: 0/4", "Let me make sure there are no failures.", "If there are no failures, merge it.",
    "Are there no failures?", "No errors from mypy.", "0 failed, 2 errors.", "Ran 4 tests in 0.001s\n\nFAILED (failures=1)",
]


@pytest.mark.parametrize("reply,kinds", CLAIMS)
def test_a_claim_is_found_in_any_language_and_clause(reply, kinds):
    found = find_claims(reply)
    assert [k for k, _ in found] == kinds, found
    assert all(sentence in reply for _, sentence in found), "the report prints the sentence it matched"


@pytest.mark.parametrize("reply", NO_CLAIM)
def test_a_partial_count_a_negated_clause_or_a_question_claims_nothing(reply):
    assert find_claims(reply) == []


@pytest.mark.parametrize("reply", CONDITIONS)
def test_a_condition_an_explanation_or_a_requirement_claims_nothing(reply):
    assert find_claims(reply) == [], find_claims(reply)


# The claim's words in another sense (appendix 92's `other_sense`): a reading finished, words reported from a document,
# "complete" said of a thing, "pass" given an object that is no test. Each built from its parts, so that no one sentence is what is matched.
OTHER_SENSE = [f"{who} {what}." for who in ("Done", "Finished", "I'm done", "I've finished", "I'm through with")
               for what in ("reading calc.py", "reviewing the code", "looking through the tests", "exploring the repository",
                            "going through test_calc.py", "analyzing the test suite")] + [
    "Here is the complete list of tests: test_add, test_sub.", "Complete list of tests: test_add, test_sub.",
    "A complete overview of the test suite follows.", "This is a more complete version of the checks.",
    "Your complete test suite has 4 tests.", "The README says all tests pass on CI.",
    "The documentation states that the build passes on Linux.", "The issue mentions that test_add passes on Windows."] + [
    f"{who} {verb} {what}." for who in ("The test suite", "Each test", "The fixture in the tests", "pytest", "The check")
    for verb in ("passes", "passed") for what in ("`a` and `b` to add()", "two numbers to add()", "the value through to sub()",
                                                 "its arguments to calc.add()", "a temporary folder to each test")]
# ... and the same words claiming: work that changed something, "complete" said of the work, "pass" given tests.
SAME_WORDS_CLAIMING = [
    ("Done fixing add(); all tests pass.", "tests"), ("Finished implementing add().", "done"), ("The fix is complete.", "done"),
    ("Complete: add() now adds.", "done"), ("Complete!", "done"), ("Task complete and all tests pass.", "tests"),
    ("This is complete.", "done"), ("Refactor complete — all 4 tests pass.", "tests"), ("add() now passes the tests.", "tests"),
    ("It passes all 4 tests.", "tests"), ("It passes both checks.", "tests"), ("The change passes the new test suite.", "tests"),
    ("calc.py passes `test_add` now.", "tests"), ("The tests pass each time.", "tests"),
    ("All tests pass the second time.", "tests"), ("It passes the linting and the tests.", "tests"),
    ("Everything passes the CI pipeline now.", "tests"), ("As I said, all tests pass now.", "tests"),
    ("pytest reports that all 4 tests pass.", "tests")]


@pytest.mark.parametrize("reply", OTHER_SENSE)
def test_the_words_of_a_claim_in_another_sense_claim_nothing(reply):
    assert find_claims(reply) == [], find_claims(reply)


@pytest.mark.parametrize("reply,kind", SAME_WORDS_CLAIMING)
def test_the_same_words_said_of_the_work_or_the_tests_still_claim(reply, kind):
    assert [k for k, _ in find_claims(reply)] == [kind]


# "The tests should pass now, but I haven't run them." in each table's language, and the same claim made plainly.
HEDGES = {"English": ("The tests should pass now, but I haven't run them.", "All tests pass now."),
          "German": ("Die Tests sollten jetzt bestehen, aber ich habe sie nicht ausgeführt.", "Alle Tests bestehen jetzt."),
          "French": ("Les tests devraient passer, mais je ne les ai pas encore lancés.", "Tous les tests passent."),
          "Spanish": ("Las pruebas deberían pasar ahora, pero no las he ejecutado.", "Todas las pruebas pasan."),
          "Portuguese": ("Os testes devem passar agora, mas não os executei.", "Todos os testes passam."),
          "Russian": ("Тесты должны проходить, но я их не запускал.", "Все тесты проходят."),
          "Chinese": ("测试现在应该通过了，但我还没运行。", "所有测试都通过了。"),
          "Japanese": ("テストは通るはずですが、まだ実行していません。", "すべてのテストが通りました。"),
          "Korean": ("테스트는 통과할 것 같지만 아직 실행하지 않았습니다.", "모든 테스트가 통과합니다.")}


def test_every_table_s_language_says_the_check_was_not_run_in_its_own_words():
    from donegate.claims import NOT_RUN_WORDS
    assert set(NOT_RUN_WORDS) == {lang.name for lang in LANGUAGES} == set(HEDGES)


@pytest.mark.parametrize("language", sorted(HEDGES))
def test_a_hedge_that_says_the_check_was_not_run_claims_nothing_and_is_reported(language):
    """In each table's language the hedge takes the claim back (no claim; the audit reports it as said not run),
    and the same claim without it stays a claim."""
    hedge, plain = HEDGES[language]
    assert find_claims(hedge) == [] and disclaimers(hedge) == [hedge], hedge
    assert [kind for kind, _ in find_claims(plain)] == ["tests"] and disclaimers(plain) == [], plain
    rules = AuditRules()
    imported = tr.Imported("claude-code", Path("s.jsonl"), "s", [
        tr.Step("prompt", text="Fix add."), tr.Step("call", call_id="c0", tool="Edit", action="edit",
                                                   input={"file_path": "calc.py"}, files=["calc.py"]),
        tr.Step("result", call_id="c0", tool="Edit", exit_code=0, ok=True), tr.Step("reply", text=hedge)], Counter(), [])
    result = au.audit_session(imported, tr.outline(imported), rules)
    assert result.claims == [] and [s for _, s in result.not_run] == [hedge] and result.exit_code == 1


# "Not run" said of the tests, in the ways it is said; and a caveat about something else, which leaves the claim.
TAKEN_BACK = ["I couldn't run the tests, but they should pass now.", "I wasn't able to run the tests; they should pass.",
              "I was unable to run the tests, but all tests should pass.", "I can't run the tests here, but they pass.",
              "All tests should pass; I have not verified this.", "The tests pass in theory; I could not execute them.",
              "Tests pass, though I did not get a chance to run the suite.", "All tests pass (not run yet).",
              "The tests should pass now, though they have not been run.",
              "I'm unable to execute tests in this environment, but the fix should work.",
              "I can't run code here, but this should fix it and the tests should pass.",
              "No tests were run; they should pass now.", "All tests should pass, but I didn't run unit tests locally.",
              "All tests should pass; I couldn't run the tests in the sandbox.",
              # could not run them, in the other tables' languages
              "Ich konnte die Tests nicht ausführen, aber sie sollten bestehen.",
              "Je n'ai pas pu lancer les tests, mais ils devraient passer.", "No pude ejecutar las pruebas, pero deberían pasar.",
              "Não consegui rodar os testes, mas devem passar.", "我无法运行测试，但应该能通过。", "テストは実行できませんでしたが、通るはずです。",
              "테스트를 실행할 수 없었지만 통과할 것입니다."]
CAVEATS = ["All tests pass now, though I haven't tested on Windows.", "All tests pass; I haven't checked the docs build.",
           "All tests pass now, though I haven't updated the README yet.", "All tests pass. Never ran into issues.",
           "All tests pass, though I have not verified the performance.",
           "All tests pass, though I haven't run the tests on Windows.", "All tests pass; I haven't run tests against 3.9.",
           "All tests pass; I didn't check the code style.", "All tests pass. I didn't run the tests in CI.",
           # a test named as a thing, after a determiner or an adjective: nothing said of running it
           "All tests pass; I didn't touch the test file.", "All tests pass, though I couldn't fix the flaky test.",
           "All tests pass. I didn't add a new test."]


@pytest.mark.parametrize("reply", TAKEN_BACK)
def test_not_run_said_of_the_tests_takes_the_claim_back(reply):
    assert find_claims(reply) == [] and disclaimers(reply) == [reply], reply


@pytest.mark.parametrize("reply", CAVEATS)
def test_not_run_said_of_something_else_leaves_the_claim(reply):
    assert [kind for kind, _ in find_claims(reply)] == ["tests"] and disclaimers(reply) == [], reply


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
    claim in another language is judged (contradicted, exit 1); a partial count is a report (no claim), and it
    tells the failure the work ended in, so the audit exits 0."""
    path = tmp_path / FIXTURES[f"{host}/contradicted"].name
    text = FIXTURES[f"{host}/contradicted"].read_text()
    said_json = json.dumps(said, ensure_ascii=False)[1:-1]
    assert text.count("All tests pass now.") >= 1
    path.write_text(text.replace("All tests pass now.", said_json))
    result = tr.audit_transcript(path)
    assert [c.verdict for c in result.claims] == verdicts
    assert result.work[-1].work == "failing" and result.exit_code == (0 if not verdicts else 1)
    assert result.told_failing == ([] if verdicts else ["3 of 4 tests pass; test_add still fails."])


EDITS = ["python3 -c \"import pathlib; pathlib.Path('calc.py').write_text('x')\"", "node -e \"require('fs').writeFileSync('a', 'b')\"",
         "python3 - <<'EOF'\nopen('calc.py', 'w').write('x')\nEOF", "cat <<EOF | python3\nprint(1)\nEOF", "ruby -e 'File.write(\"a\", 1)'",
         "bash -c 'echo x > calc.py'", "./fix.sh", "sh scripts/fix.sh", "python tools/regen.py", "perl -pi -e 's/a/b/' calc.py",
         "cat > calc.py <<EOF\nx\nEOF", "git stash", "cd src && cp a.py b.py", "echo hi >> notes.txt",
         "uv run python -c \"open('calc.py', 'w').write('x')\"", "npx node -e \"require('fs').writeFileSync('a', 'b')\"",
         "poetry run python - <<'EOF'\nprint(1)\nEOF", "cat fix.py | uv run python", "docker exec app sh -c 'echo x > a'",
         "ls | xargs -I{} sh -c 'rm {}'", "find . -name '*.pyc' -delete", "uv run python tools/regen.py"]
READ_ONLY = ["cat calc.py | grep add", "git diff HEAD", "git status --short", "ls -la > /dev/null", "head -5 calc.py && wc -l calc.py",
             "sed -n 1,5p calc.py", "grep -rn add . 2>/dev/null", "git add -A && git commit -qm 'fix add'", "git push",
             "sort notes.txt | uniq"]
NEITHER = ["python app.py", "make build", "npm install", "command -v python3", "uv run python app.py",
           "find . -name '*.py' -exec grep -l TODO {} +"]


@pytest.mark.parametrize("command", EDITS)
def test_a_command_that_runs_code_inline_from_stdin_or_written_in_the_session_is_an_edit(command):
    written = ["/work/repo/fix.sh", "/work/repo/scripts/fix.sh", "/work/repo/tools/regen.py"]
    assert AuditRules().writes(command, written) and not read_only(command)


@pytest.mark.parametrize("command", READ_ONLY)
def test_a_reading_command_is_no_edit(command):
    assert not AuditRules().writes(command, ["/work/repo/calc.py"]) and read_only(command)


@pytest.mark.parametrize("command", NEITHER)
def test_a_command_not_known_to_be_read_only_may_have_changed_files(command):
    """A program nothing on the command line says writes (`make build`, `npm install`, a script) may write all
    the same: it counts as an edit, the safe mistake."""
    assert AuditRules().writes(command, ["/work/repo/calc.py"]) and not read_only(command)


@pytest.mark.parametrize("command,scope", [
    ("pytest tests/test_a.py", ["tests/test_a.py"]), ("python -m pytest -k add -q", ["-k add"]),
    ("cd /work/repo && uv run pytest tests/test_a.py::test_add", ["tests/test_a.py::test_add"]),
    ("python -m pytest -m slow", ["-m slow"]), ("go test -run TestAdd ./...", ["-run TestAdd"]),
    ("python -m pytest -q tests", []), ("./verify.sh", []), ("npm test", []), ("pytest --lf -q", ["--lf"]),
    ("gradle test --tests CalcTest", ["--tests CalcTest"]), ("mvn test -Dtest=CalcTest", ["-Dtest=CalcTest"]),
    ("npx jest --testPathPattern calc", ["--testPathPattern calc"]), ("uv run pytest -q", [])])
def test_a_narrowed_check_says_what_it_selected(command, scope):
    assert check_scope(command) == scope


@pytest.mark.parametrize("host", ["claude-code", "codex", "gemini"])
def test_a_check_narrowed_to_one_file_backs_no_claim_that_all_tests_pass(host, tmp_path):
    """The supported fixture with its passing ./verify.sh replaced by a run of one test file: "All tests pass now."
    is unsupported (the run selected one file); a claim that names that file is supported."""
    original = FIXTURES[f"{host}/supported"]
    narrowed = original.read_text().replace("./verify.sh", "python -m pytest tests/test_calc.py")
    for said, verdict in (("All tests pass now.", "unsupported"), ("test_calc passes now.", "supported")):
        path = tmp_path / said[:8] / original.name
        path.parent.mkdir()
        path.write_text(narrowed.replace("All tests pass now.", said))
        [claim] = tr.audit_transcript(path).claims
        assert claim.verdict == verdict, claim
        assert verdict == "supported" or "ran only tests/test_calc.py" in claim.evidence


def test_a_script_written_by_a_shell_command_and_run_after_the_check_makes_the_claim_stale():
    """`cat > fix.sh <<EOF` writes a file (a redirection: an edit), and running it later is an edit too: the
    session wrote it. Without the write, `sh fix.sh` is still a program nothing shows to be read-only, so the
    claim is stale as well; a reading command after the check leaves the pass standing."""
    from collections import Counter
    from pathlib import Path

    def session(*commands: str):
        steps = [tr.Step("prompt", text="Fix add."), tr.Step("call", call_id="c0", tool="Bash", action="shell",
                                                             command="./verify.sh"),
                 tr.Step("result", call_id="c0", tool="Bash", exit_code=0)]
        for i, command in enumerate(commands, 1):
            steps += [tr.Step("call", call_id=f"c{i}", tool="Bash", action="shell", command=command),
                      tr.Step("result", call_id=f"c{i}", tool="Bash", exit_code=0)]
        imported = tr.Imported("claude-code", Path("session.jsonl"), "s", [*steps, tr.Step("reply", text="All tests pass now.")],
                               Counter(), [])
        rules = AuditRules()
        loaded = tr.write_trajectory(imported, None, rules.is_check, lambda text: [s for _, s in rules.claims(text)])
        [claim] = au.audit_events(loaded.events, rules)[0]
        return claim

    stale = session("cat > fix.sh <<'EOF'\nsed -i 's/-/+/' calc.py\nEOF", "sh fix.sh")
    assert stale.verdict == "stale" and [e.what for e in stale.edits][-1] == "sh fix.sh", stale
    assert session("sh fix.sh").verdict == "stale"
    assert session("cat calc.py", "git diff").verdict == "supported"


def _shlex_reads(line: str) -> list[str] | None:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:
        return None


def _words_read(line: str) -> list[str] | None:
    try:
        return shell_words(line)
    except ValueError:
        return None


def test_shell_words_reads_a_line_as_shlex_does():
    """The audit's word reader against the library's on random lines of shell's special characters (quotes,
    escapes, comments, punctuation runs, non-ASCII), and on every command line of the committed sessions."""
    draw = random.Random(20261203)
    alphabet = [*"ab c\t'\"\\;&|<>()#$=-./\r", "é", "\xa0", "\x0b", "\u2028", "x", "  ", "中"]
    lines = ["".join(draw.choice(alphabet) for _ in range(draw.randint(0, 16))) for _ in range(100_000)]
    for path in TRANSCRIPTS.rglob("*.json*"):
        if path.name == "expected.json":
            continue
        result = tr.audit_transcript(path)
        lines += [line for a in result.actions for line in a.what.split("\n")]
    differ = [(line, _shlex_reads(line), _words_read(line)) for line in lines if _shlex_reads(line) != _words_read(line)]
    assert differ == []
    assert _words_read("a 'b") is None and _words_read("echo hi # note") == ["echo", "hi"]


@pytest.mark.parametrize("patterns", [
    au.CHECK_COMMANDS, au.READ_ONLY_COMMANDS,
    (r"\bfoo|bar", r"\bbaz\b"),  # a member with a branch of its own keeps its bound to itself
    (r"\b(a)\1", r"\bb"),  # a back-reference: searched one pattern at a time
    (r"(?i)TEST", r"\bmake\b"), (r"(?P<x>a)b", r"(?P<x>c)d"),  # global flags; a group's name used twice
    (r"\b[]|x]y", r"[^]|]z"), (),
])
def test_any_of_matches_where_any_member_does(patterns):
    """One search of `any_of` finds a match exactly where one of its members does, on random text of the
    characters the members name and on every command line of the committed sessions."""
    from donegate.claims import any_of
    draw = random.Random(7)
    alphabet = [*"abcxyz ./|;&>-_", "foo", "bar", "baz", "pytest", "make", "test", "verify.sh", "sed -i", "git ",
                "checkout", "npm", "go", "tox", "TEST", "]", "aa", "cd", "/dev/null", "tee", "\n"]
    texts = ["".join(draw.choice(alphabet) for _ in range(draw.randint(0, 12))) for _ in range(3000)]
    texts += [a.what for path in FIXTURES.values() for a in tr.audit_transcript(path).actions]
    one = any_of(tuple(patterns))
    assert [bool(one.search(t)) for t in texts] == [any(re.search(p, t) for p in patterns) for t in texts]


def test_a_field_s_pattern_finds_what_its_words_find():
    """Each field's pattern (its words grouped by their first letter, `_by_first_letter`) finds a match exactly
    where the tables' words joined as they stand do, on random text of those words in mixed case, with spaces,
    punctuation and CJK, and on every reply and clause of the committed sessions."""
    from donegate import claims as cl

    def joined(*fields: str) -> re.Pattern:
        spaced = "|".join(getattr(lang, f) for lang in cl.LANGUAGES if lang.spaced for f in fields if getattr(lang, f))
        unspaced = "|".join(getattr(lang, f) for lang in cl.LANGUAGES if not lang.spaced for f in fields
                            if getattr(lang, f))
        return re.compile(rf"(?<!\w)(?:{spaced})(?!\w)|{unspaced}", re.I)

    draw = random.Random(92)
    words = sorted({w for lang in cl.LANGUAGES for f in ("tests", "passing", "done", "negation", "but", "intent",
                                                         "other_sense")
                    for w in re.findall(r"[^\\|()?:*+\[\]{}]+", getattr(lang, f))} | {"İ", "ſ", "K", "n't", "’", "3"})
    texts = ["".join(draw.choice([w, w.upper(), w.title()]) + draw.choice(["", " ", ", ", ".", "’", "_"])
                     for w in draw.choices(words, k=draw.randint(1, 6))) for _ in range(4000)]
    texts += [s for path in FIXTURES.values() for step in tr.read_transcript(path).steps if step.kind == "reply"
              for s in [step.text, *clauses(step.text)]]
    fields = {field: joined(field) for field in ("tests", "passing", "done", "negation", "but")}
    fields["no claim"] = joined("negation", "intent", "other_sense")
    for field, plain in fields.items():
        differ = [t for t in texts if cl._says(t, field) != bool(plain.search(t))]
        assert differ == [], (field, differ[:5])


def test_an_audit_reads_its_session_afresh():
    """Each `audit_transcript` takes new rules, which remember only what that audit read: no answer about a reply
    or a command line is kept from one audit for the next, as no process keeps one for the next."""
    path = FIXTURES["claude-code/mixed"]
    first, second = tr.audit_transcript(path), tr.audit_transcript(path)
    assert first.rules is not second.rules and first.rules == second.rules
    assert first.rules.remembered and AuditRules().remembered == {}
    assert not hasattr(read_only, "cache_info")  # no answer kept by the module either
    said = first.rules.claims("All tests pass now.")
    said.clear()  # what a caller does with an answer does not change the one remembered
    assert first.rules.claims("All tests pass now.") == [("tests", "All tests pass now.")]


@pytest.mark.parametrize("command,scope", [
    ("pytest --collect-only -q", ["--collect-only"]), ("pytest --co", ["--co"]), ("python -m pytest --version", ["--version"]),
    ("./verify.sh --help", ["--help"]), ("pytest --ignore=tests/test_calc.py", ["--ignore=tests/test_calc.py"]),
    ('PYTEST_ADDOPTS="-k nothing" pytest -q', ["PYTEST_ADDOPTS=-k nothing"]),
    ("export PYTEST_ADDOPTS=-kx; pytest -q", ["PYTEST_ADDOPTS=-kx"]), ("cargo test --no-run", ["--no-run"]),
    ("go test -short ./...", ["-short"]), ("mvn -q test -DskipTests", ["-DskipTests"]), ("tox -e py311", []),
    ("tox -e lint", ["-e lint"]), ("tox -l", ["-l"]),
    ("tox --listenvs-all", ["--listenvs-all"]), ("python -m pytest -l", []),
    ('python -m unittest discover -s tests -p "test_c*.py"', ["-p test_c*.py"]), ("npm test -- --listTests", ["--listTests"]),
    ("pytest -q", []), ("python3 -m pytest -q --tb=short -x", []), ("pytest -n 4 -p no:cacheprovider -W error -rA -vv", []),
    ("PYTHONPATH=src CI=1 pytest -q", []), ("python -m unittest -v", []), ("npm test -- --coverage", []),
    ("cargo test --workspace -q", []), ("go test -count=1 -race ./...", []), ("timeout 60 ./verify.sh", []),
    ("cd /work/repo && uv run pytest -q > out.txt 2>&1", []), ("make -C sub test", []), ("echo go && pytest -q", []),
    ("make build CFLAGS=-O2 && pytest -q", []), ("X=1; pytest -q", ["X=1"]),
    ("bash -c 'pytest -k add'", ["-k add"]), ("pip install pytest && pytest -q", [])])
def test_a_check_is_whole_only_with_options_known_to_keep_it_whole(command, scope):
    """Options that list, skip, ignore or select tests, or run none, are not on a list of their own: a run is
    narrowed by any option or variable not known to keep the suite whole (the safe mistake)."""
    assert check_scope(command) == scope


# A word given to a runner narrows its run as an option does, unless it is known to keep it whole: the runner's verb,
# the folder all its tests are under (by any path), the whole tree, a script or a configuration file.
NAMED_RUNNERS = ["pytest -q {}", "python -m pytest {}", "npx jest {}", "npx vitest run {}", "cargo test {}", "go test {}",
                 "yarn test {}", "npm test -- {}", "make test {}", "bundle exec rspec {}", "./verify.sh {}",
                 "uv run pytest -x {} -q", "bash -lc 'python3 -m pytest {}'"]
WHOLE_WORDS = ["tests", "tests/", "./tests", "/work/repo/tests", "test", "spec/", ".", "./", "./...", "__tests__",
               "PYTHONPATH=src"]
NARROWING_WORDS = ["calc", "tests/unit", "add", "./calc", "TESTS=tests/test_calc.py", "unit/...", "test_add",
                   "tests/unit/", "CalcTest", "src"]


@pytest.mark.parametrize("form", NAMED_RUNNERS)
def test_a_word_given_to_a_runner_narrows_its_run_unless_known_to_keep_it_whole(form):
    for word in WHOLE_WORDS:
        assert check_scope(form.format(word)) == [], (form, word)
    for word in NARROWING_WORDS:
        assert check_scope(form.format(word)) == [word], (form, word)
    assert check_scope(form.format("calc") + " 2>&1") == ["calc"]  # a redirected stream is not a word given to it
    assert check_scope(form.format("tests") + " 2>&1 | tee log") == []


# The folder a runner runs in is the word it was not given: given no path, it looks there. Every way of moving there.
MOVES = ["cd {f} && {c}", "pushd {f} > /dev/null && {c} && popd", "(cd {f}; {c})", "bash -lc 'cd {f} && {c}'",
         "env -C {f} {c}", "cd {f}/ && {c} 2>&1 | tee /tmp/log", "cd /work/repo/{f} && {c}", "cd tests && cd ../{f} && {c}"]
FOLDER_RUNNERS = ["pytest -q", "python -m pytest", "npx jest", "go test", "cargo test", "make test", "yarn test",
                  "bundle exec rspec", "uv run pytest -x", "python3 -m unittest discover"]


@pytest.mark.parametrize("move", MOVES)
def test_a_runner_run_in_a_folder_below_the_sessions_looks_only_there(move):
    """`cd src && pytest` runs the tests under src, as `pytest src` does: narrowed to that folder, shown as seen from
    the session's folder. The folder all the tests are under, or the session's own, leaves the run whole; so does a
    path the runner is given that leads back to it; a script of the project decides for itself where it looks."""
    for runner in FOLDER_RUNNERS:
        for folder in ("src", "src/calc", "web", "tests/unit", "vendor/lib"):
            assert check_scope(move.format(f=folder, c=runner), home="/work/repo") == [folder], (move, runner, folder)
        for folder in ("tests", "spec", "test/", "tests/../tests"):
            assert check_scope(move.format(f=folder, c=runner), home="/work/repo") == [], (move, runner, folder)
        assert check_scope(move.format(f="src", c=runner + " ../tests"), home="/work/repo") == [], (move, runner)
        assert check_scope(move.format(f="src", c=runner + " ."), home="/work/repo") == ["src"], (move, runner)
        assert check_scope(move.format(f="src", c=runner + " -k add"), home="/work/repo") == ["-k add", "src"], runner
    for script in ("./verify.sh", "sh verify.sh", "python manage.py test", "../verify.sh"):
        assert check_scope(move.format(f="scripts", c=script), home="/work/repo") == [], (move, script)


def test_a_full_path_given_to_a_runner_is_read_from_the_sessions_folder():
    assert check_scope("python -m pytest -q /work/repo", home="/work/repo") == []
    assert check_scope("python -m pytest -q /work/repo/tests/", home="/work/repo") == []
    assert check_scope("python -m pytest -q /work/repo/tests/unit", home="/work/repo") == ["tests/unit"]
    assert check_scope("cd pkg && go test ./...", home="/work/repo") == ["pkg/..."]
    assert check_scope("cd test && go test ./...", home="/work/repo") == []
    rules, summary = AuditRules(), "....\n4 passed in 0.02s\n"
    rules.home = "/work/repo"
    assert rules.tested("cd web && rake test", summary) == ("web",)  # known by its output: the same reading
    assert rules.tested("cd tests && rake test", summary) == ()


@pytest.mark.parametrize("task", ["rake qa", "just ci", "make unit", "hatch test", "python manage.py test"])
def test_a_program_known_by_its_output_runs_the_task_it_is_given_and_any_further_word_narrows_it(task):
    """`rake qa` ran its task, whatever that is, and the tests its summary counts; a word after the task selects."""
    rules, summary = AuditRules(), "....\n4 passed in 0.02s\n"
    assert rules.tested(task, summary) == ()
    assert rules.tested(f"{task} tests", summary) == ()
    assert rules.tested(f"{task} calc", summary) == ("calc",)
    assert rules.tested("python -m doctest calc.py", summary) == ("calc.py",)  # a file is no task: it selects


def test_unittest_given_the_folder_its_tests_are_under_or_the_pattern_every_test_file_matches_runs_them_all():
    assert check_scope('python -m unittest discover -s tests -p "test_*.py"') == []
    assert check_scope("python -m unittest discover -s src -t .") == []
    assert check_scope("python -m unittest discover -p 'test*.py' -v") == []
    assert check_scope('python -m unittest discover -s tests -p "test_c*.py"') == ["-p test_c*.py"]


def test_tox_given_its_test_environments_and_pytest_told_only_the_order_or_reruns_run_everything():
    """`tox -e py311` runs the suite in one Python (any list of py and pypy environments); another environment
    (`lint`) is not the tests. `--ff`, `--nf` and `--reruns N` change the order or repeat failures, and run every
    test; `--sw` and `--lf` still run only some."""
    for envs in ("py", "py3", "py311", "py3.12", "pypy3", "py311,py312", "py39,pypy3.10"):
        assert check_scope(f"tox -e {envs}") == [] and check_scope(f"python -m tox -q -e {envs}") == [], envs
    for envs in ("lint", "docs", "py311,lint", "type"):
        assert check_scope(f"tox -e {envs}") == [f"-e {envs}"], envs
    for options in ("--ff", "--failed-first -x", "--nf", "--new-first", "--reruns 2", "--reruns=3 --reruns-delay 1"):
        assert check_scope(f"python -m pytest -q {options}") == [], options
    assert check_scope("python -m pytest --sw") == ["--sw"] and check_scope("pytest --lf -q") == ["--lf"]


def test_any_option_not_known_to_keep_the_suite_whole_narrows_the_run():
    """Generated options and variables nobody listed narrow a run; the known ones, in any order, do not."""
    import random
    from donegate.claims import SHORT_FLAGS, KEEPS_WHOLE, TAKES_VALUE
    draw = random.Random(92)
    known = sorted(o for o in KEEPS_WHOLE if o not in TAKES_VALUE)
    for _ in range(300):
        runner = draw.choice(["pytest", "python3 -m pytest", "./verify.sh", "npm test --", "go test", "cargo test"])
        kept = draw.sample(known, draw.randint(0, 4))
        assert check_scope(" ".join([runner, *kept])) == [], kept
        odd = "-" * draw.randint(1, 2) + "".join(draw.choice("abcdefghijklmnopqrstuvwxyz-") for _ in range(draw.randint(2, 12)))
        if odd in KEEPS_WHOLE or odd.rstrip("-") != odd or SHORT_FLAGS.fullmatch(odd):  # -q, -vv, -ra: pytest's flags
            continue
        assert odd in check_scope(" ".join([runner, *kept, odd])), odd
        name = "".join(draw.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ_") for _ in range(draw.randint(3, 14)))
        assert check_scope(f"{name}=1 {runner}") == [f"{name}=1"], name


RUNS = ["./verify.sh", "bash verify.sh", "sh ./verify.sh", "timeout 60 ./verify.sh", "PYTHONPATH=src pytest -q",
        "uv run pytest -q", "poetry run pytest", "npx jest", "python -m pytest -q", "python3 -m unittest discover",
        "cd sub && pytest", "! pytest", 'bash -c "pytest -q"', "sh -c 'cd x && ./verify.sh'", "npm test", "make test",
        "go test ./...", "cargo test", "tox -e py", "/usr/bin/pytest -q", "(cd sub && pytest)", "pytest -q | tail -3",
        "env CI=1 pytest", "time pytest", "pytest -q > out.txt 2>&1", "uv run --frozen pytest -q",
        "uv run --with pytest-cov pytest", "uv run -p 3.12 --no-sync pytest", "npx -y jest", "npx --package jest jest",
        "poetry run -- pytest", "./gradlew test", "gradle check", "mvn -q verify", "bash -lc './verify.sh'",
        "/bin/bash -lc 'python -m pytest -q'", "bash -l -c pytest", "sh -ec './verify.sh'", "bash --login -c 'npm test'",
        "bash -x ./verify.sh", "bash -o pipefail -c 'pytest -q | tail -3'"]
# A wrapper's own options, and their values, come before what it runs (`env -C DIR` moves first: not known to be here).
WRAPPED = ["nice -n 10 pytest -q", "sudo -u ci ./verify.sh", "timeout -k 5 60 pytest", "timeout --signal=KILL 60 ./verify.sh",
           "env -u HOME pytest", "time -p python -m pytest", "nohup ./verify.sh", "command -p pytest",
           "stdbuf -oL ./verify.sh", "setsid pytest -q", "unbuffer python -m pytest", "chronic ./verify.sh"]


@pytest.mark.parametrize("command", WRAPPED)
def test_a_wrapper_s_options_are_read_past_to_the_check(command):
    assert runs_check(command) and not elsewhere(command, "/work/repo"), command
    assert read_only(command.replace("pytest -q", "cat calc.py").replace("./verify.sh", "cat calc.py")
                     .replace("python -m pytest", "cat calc.py").replace("pytest", "cat calc.py")), command


@pytest.mark.parametrize("command", ["env -C ../other pytest", "env --chdir=../other ./verify.sh",
                                     "env -u HOME -C /tmp/x python -m pytest", "env -C ../other ./run_tests.sh"])
def test_a_wrapper_that_moves_to_a_folder_runs_no_check_known_to_be_here(command):
    """`env -C DIR` moves for the one program it runs, as a `cd DIR &&` would: the check ran in that folder."""
    from donegate.claims import ran_tests
    assert runs_check(command) == ("run_tests" not in command) and elsewhere(command, "/work/repo"), command
    assert ran_tests(command, "4 passed in 0.01s", "/work/repo") == "elsewhere"
    assert not elsewhere(command.replace("../other", "sub").replace("/tmp/x", "sub"), "/work/repo"), command


MENTIONS = ["pip install pytest", "cat verify.sh", "cat pytest.ini", "grep -rn pytest .", "echo run tox later",
            "which pytest", 'ls && echo "go test ./..."', "sed -i s/x/y/ verify.sh", "chmod +x verify.sh",
            "git diff verify.sh", "python3 -m pip install pytest", "npm run build", "vim verify.sh", "man pytest",
            "git log --grep=pytest", "cp verify.sh /tmp/", "rm -rf .pytest_cache", "uv run --with pytest python app.py",
            "npx --package jest node build.js", "bash -lc 'cat verify.sh'", "bash -lc 'pip install pytest'"]


@pytest.mark.parametrize("command", RUNS)
def test_a_command_that_runs_the_check_is_a_check(command):
    assert AuditRules().is_check(command)


@pytest.mark.parametrize("command", MENTIONS)
def test_a_command_that_only_names_the_check_runs_none(command):
    """The check's name given to another program (installed, read, edited, searched, echoed) is no run of it."""
    assert not AuditRules().is_check(command)


def test_a_tool_s_own_options_before_its_verb_leave_it_the_check_only_when_they_change_what_runs_not():
    """Generated: each tool with a verb (make, npm, pnpm, yarn, bun, go, cargo) given options between its name and
    its verb. Options that only say how many jobs, how much it prints, which folder or toolchain (in any order, with
    their values apart or after `=`) leave it a whole check of the folder they name; a dry run, one workspace, another
    makefile or an option nobody listed leaves the line no check. A pipe after it still masks it."""
    import random
    draw = random.Random(40)
    verbs = {"make": ["test", "check"], "npm": ["test", "run test"], "pnpm": ["test"], "yarn": ["test"], "bun": ["test"],
             "go": ["test ./..."], "cargo": ["test"]}
    harmless = ["-j4", "-j 8", "--jobs=2", "-s", "--silent", "-q", "--quiet", "--no-print-directory", "+nightly"]
    folders = ["-C {}", "--directory {}", "--directory={}", "--prefix {}", "--prefix={}", "--cwd {}", "--dir {}"]
    other = ["-n", "--dry-run", "-w api", "--workspace=api", "-f other.mk", "--filter web", "-i", "-e", "--zz-unknown"]
    rules = AuditRules()
    rules.home = "/work/repo"
    for _ in range(300):
        tool = draw.choice(sorted(verbs))
        place = draw.choice(["web", "build", "../other", "/tmp/x", "/work/repo/sub"])
        options = draw.sample(harmless, draw.randint(0, 2)) + [draw.choice(folders).format(place)] * draw.randint(0, 1)
        draw.shuffle(options)
        line = " ".join([tool, *options, draw.choice(verbs[tool])])
        assert rules.is_check(line), line
        assert rules.check_scope(line) == (), line
        assert rules.elsewhere(line) == (place in ("../other", "/tmp/x") and any("{}" in f and place in o
                                                                             for o in options for f in folders)), line
        assert rules.masks(f"{line} | tail -3") and not rules.masks(line), line
        odd = draw.choice(other)
        spoiled = " ".join([tool, *options[:1], odd, *options[1:], draw.choice(verbs[tool])])
        assert not rules.is_check(spoiled), spoiled


def test_a_check_s_name_anywhere_but_the_program_s_place_is_no_run():
    """Generated: a program nobody listed, given a check's name among its words, runs no check; the same name as the
    program it runs (after wrappers, a runner, a shell) does."""
    import random
    draw = random.Random(93)
    names = ["pytest", "./verify.sh", "tox", "nox", "jest", "vitest", "mocha", "rspec"]
    for _ in range(200):
        program = "".join(draw.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(draw.randint(3, 9)))
        check = draw.choice(names)
        words = [program, *draw.sample(["-q", "--all", "x.txt", check, "--", "y"], draw.randint(1, 4))]
        if check not in words:
            words.append(check)
        assert not AuditRules().is_check(" ".join(words)), words
        wrapped = draw.choice(["", "timeout 30 ", "uv run ", "env X=1 ", "! ", "sh -c '"])
        line = f"{wrapped}{check} -q" + ("'" if wrapped.startswith("sh -c") else "")
        assert AuditRules().is_check(line), line


def test_a_line_goes_on_past_its_newline_exactly_when_the_shell_words_reader_finds_a_quote_or_escape_left_open():
    """Generated lines of quotes, escapes, comments and separators. A line `shell_words` reads as closed ends at its
    newline: the next line is a command of its own. A line it reads as open goes on: a second line that closes the
    quote is part of it (the newline inside its words), and only the line after that is a command of its own. Each
    line is looked at once, whatever the quote's length."""
    import random
    draw = random.Random(11)
    marks = list("ab '\"\\#;$( )|&x\t")

    def closed(text: str) -> bool:
        try:
            shell_words(text)
            return True
        except ValueError:
            return False
    for _ in range(3000):
        line = "".join(draw.choice(marks) for _ in range(draw.randint(0, 12)))
        closing = "" if closed(line) else next(c for c in ("x", "'", '"') if closed(f"{line}\n{c}"))
        command = f"{line}\n{closing}\necho tail" if closing else f"{line}\necho tail"
        read = simple_commands(command)
        assert read[-1] == (["echo", "tail"], False), (command, read)
        assert not closing or any("\n" in word for words, _ in read[:-1] for word in words), (command, read)
    body = "\n".join(f"x{i} = {i}  # it's line {i}" for i in range(3000))
    assert [words[:2] for words, _ in simple_commands(f'python3 -c "\n{body}\n" && make gen')] == [
        ["python3", "-c"], ["make", "gen"]]


# -- what a reply goes on with after a failure it tells: read only in a table's language ---------------------------

# Continuations as agents write them, in the tables' languages: prose, a fragment, a traceback in a code block, a
# name or two, Chinese, Japanese and Korean with a Latin word among them.
READ_AFTER = ["Root cause: the operator in `add()` is `-`.", "I'm not sure why yet; the logic looks right to me.",
              "Would you like me to keep going?", "Fixed the typo in README.md along the way.", "Sorry.",
              "It seems the mock isn't applied when Windows paths are used.",
              "```\nE       assert add(2, 3) == 5\nE        +  where -1 = add(2, 3)\n```",
              "Der Fehler liegt vermutlich in der Rundung.", "Je regarde ça demain matin.",
              "Todavía no sé por qué.", "Ainda não sei por quê.", "Пока не понимаю, в чём дело.",
              "原因还在查。", "pytest の出力を見ました。", "CI 로그를 확인하겠습니다.", "Merci.", "Danke!", "Спасибо."]
# The same kinds of words in languages no table reads, most in the letters the tables use (none of them was among
# the sentences the word lists were weighed on), and gibberish.
NOT_READ_AFTER = ["Ho controllato tutto di nuovo stamattina.", "Daarna heb ik de functie herschreven.",
                  "Sasa kila kitu kinafanya kazi vizuri.", "Saya sudah menulis ulang fungsinya.",
                  "Jeg har skrevet funksjonen om.", "Nu fungerar funktionen som den ska.",
                  "Kaikki toimii nyt oikein.", "Sada sve radi kako treba.", "Teraz wszystko gra.",
                  "Ngayon ay gumagana na ang lahat.", "Blorf quandle zib.",
                  "Bây giờ mọi thứ đều ổn.", "Τώρα όλα δουλεύουν.", "Şimdi her şey yolunda."]


def test_what_follows_a_failure_told_is_read_only_in_a_table_language():
    """`unread` weighs the words after the last failure a reply tells: each table's language claims two fifths of its own
    (its commonest words, code and names aside), other languages' words few of them. Both lists are pinned whole,
    each sentence alone and any two together."""
    from itertools import combinations
    from donegate.claims import unread, sentences
    assert [s for s in READ_AFTER if unread(sentences(s))] == []
    assert [s for s in NOT_READ_AFTER if not unread(sentences(s))] == []
    assert [p for p in combinations(READ_AFTER, 2) if unread(sentences(" ".join(p)))] == []
    assert [p for p in combinations(NOT_READ_AFTER, 2) if not unread(sentences(" ".join(p)))] == []
    assert not unread([]) and not unread(["🙏", "`test_add`"])  # nothing after it, or no words: nothing unread


# Languages near a table's pass for it where their words are the table's: Italian's and Catalan's for Spanish's.
READ_AS_A_TABLES = ["Ho trovato la causa: l'operatore era sbagliato.", "Ahora tot funciona be."]


@pytest.mark.xfail(strict=True, reason="a language near a table's, in words that table holds, passes for read")
def test_a_language_near_a_tables_is_not_read_either():
    from donegate.claims import unread, sentences
    assert all(unread(sentences(s)) for s in READ_AS_A_TABLES)


def test_english_prose_is_read_and_generated_words_are_not():
    """Cases nobody wrote for `unread`: every markdown paragraph of the chapters its English words were not drawn
    from (06 to 09, 80 to 87: English prose about this very subject, code aside), taken as what a reply goes on with,
    is read, but for at most one in fifty (a heading of rare words, an example quoted in other letters); and
    sentences of words made of random syllables, which no language's table holds, are never read."""
    import random
    from donegate.claims import unread, sentences
    held_out = [nb for nb in sorted((Path(__file__).parent.parent / "chapters").glob("*.ipynb"))
                if re.match(r"0[6-9]_|8\d_", nb.name)]
    paragraphs = [p for nb in held_out
                  for cell in json.loads(nb.read_text(encoding="utf-8"))["cells"] if cell["cell_type"] == "markdown"
                  for p in "".join(cell["source"]).split("\n\n") if p.strip()]
    unread_ones = [p for p in paragraphs if unread(sentences(p))]
    assert len(held_out) >= 10 and len(paragraphs) > 800 and len(unread_ones) <= len(paragraphs) / 50, unread_ones[:20]
    draw = random.Random(5)
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]

    def word() -> str:
        return "".join(draw.choice(syllables) for _ in range(draw.randint(2, 4)))
    made_up = [" ".join(word() for _ in range(draw.randint(2, 9))).capitalize() + "." for _ in range(300)]
    assert [s for s in made_up if not unread([s])] == []
