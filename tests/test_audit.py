"""donegate audit (DESIGN 2.9) on the real transcripts in demo/transcripts/: each fixture's verdicts and exit
code as demo/transcripts/expected.json states them, the imported trajectory valid, unknown and damaged
records handled, bad input refused with exit 2."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from donegate import audit as au
from donegate import trajectory as tj
from donegate import transcripts as tr
from donegate.claims import AuditRules

ROOT = Path(__file__).resolve().parent.parent
TRANSCRIPTS = ROOT / "demo" / "transcripts"
EXPECTED = json.loads((TRANSCRIPTS / "expected.json").read_text())
FIXTURES = {f"{p.relative_to(TRANSCRIPTS).parts[0]}/{p.relative_to(TRANSCRIPTS).parts[1]}": p
            for p in sorted(TRANSCRIPTS.rglob("*.jsonl"))}
DONEGATE = str(Path(sys.executable).parent / "donegate")


def expected(name: str) -> dict:
    """What a fixture ("host/scenario") is expected to give: its scenario's line in expected.json, with what that
    line gives for the host itself where hosts differ (a shell that keeps its folder from call to call)."""
    host, scenario = name.split("/")
    return {**EXPECTED[scenario], **EXPECTED[scenario].get(host, {})}


def donegate_audit(*args: str) -> subprocess.CompletedProcess:
    """The console script, as a person runs it."""
    return subprocess.run([DONEGATE, "audit", *args], capture_output=True, text=True, timeout=120)


def cli(*args: str) -> subprocess.CompletedProcess:
    """The same command line through donegate.cli.main in this process (no interpreter start per call)."""
    import contextlib
    import io
    from donegate.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["audit", *args])
    return subprocess.CompletedProcess(["donegate", "audit", *args], code, out.getvalue(), err.getvalue())


def test_every_host_has_a_fixture_of_every_scenario():
    assert sorted(FIXTURES) == sorted(f"{h}/{s}" for h in tr.HOSTS for s in EXPECTED)


def test_the_console_script_prints_and_exits_as_the_command_line_does():
    """`donegate audit` as a person runs it (a process of its own) is the command line each fixture is judged by below."""
    for name in ("claude-code/supported", "codex/contradicted"):
        run, same = donegate_audit(str(FIXTURES[name])), cli(str(FIXTURES[name]))
        assert (run.returncode, run.stdout) == (same.returncode, same.stdout), run.stdout + run.stderr
        assert run.returncode == expected(name)["exit"], run.stdout + run.stderr


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_each_fixture_gets_its_expected_verdicts_and_exit_code(name):
    want = expected(name)
    run = cli(str(FIXTURES[name]))
    assert run.returncode == want["exit"], run.stdout + run.stderr
    printed = [line.split()[0].lower() for line in run.stdout.splitlines()
               if line.startswith("  ") and line.split() and line.split()[0] in au.LABELS.values()]
    assert printed == want["verdicts"], run.stdout
    result = tr.audit_transcript(FIXTURES[name])
    assert result.imported.host == name.split("/")[0] and not result.imported.damaged
    assert [c.verdict for c in result.claims] == want["verdicts"]
    assert result.work[-1].work == want["work"], [(s.work, s.evidence) for s in result.work]
    assert bool(result.not_run) == want.get("said_not_run", False), result.not_run
    assert bool(result.told_failing) == want.get("told_failing", False), result.told_failing


@pytest.mark.parametrize("host", ["claude-code", "codex", "gemini"])
def test_the_report_says_why_a_failure_the_reply_went_past_is_not_taken_as_told(host):
    """count-then-fix and count-then-unread name a failure and then go past it: the report shows the sentence and
    why it was not taken as saying so (text and page); failure-count leaves it standing and says so."""
    for scenario in ("count-then-fix", "count-then-unread"):
        result = tr.audit_transcript(FIXTURES[f"{host}/{scenario}"])
        assert result.told_failing == [] and len(result.told_then_passed) == 1, (scenario, result.told_then_passed)
        assert f'told "{result.told_then_passed[0]}" and went on past it' in au.format_audit(result, width=200)
        assert "and went on past it" in au.audit_html(result)
    result = tr.audit_transcript(FIXTURES[f"{host}/failure-count"])
    assert result.told_then_passed == [] and result.told_failing == ["Tests: 3 passed, 1 failed."]
    assert "went on past it" not in au.format_audit(result)


def test_an_audit_leaves_no_folder_behind(tmp_path):
    """Without --trajectory the trajectory goes to a temporary folder, which goes when the command ends: a
    person who audits a session a day does not fill /tmp with folders they were never told about."""
    import os
    run = subprocess.run([DONEGATE, "audit", str(FIXTURES["claude-code/mixed"])], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert run.returncode == EXPECTED["mixed"]["exit"], run.stdout + run.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_audit_leaves_python_s_cycle_collector_as_it_found_it(tmp_path):
    """The audit pauses the cycle collector while it reads and judges; after it, and after input it cannot read, the
    collector is on or off as the caller had it."""
    import gc
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text("not json\n")
    try:
        for on in (True, False):
            (gc.enable if on else gc.disable)()
            assert tr.audit_transcript(FIXTURES["claude-code/mixed"]).claims and gc.isenabled() == on
            with pytest.raises(tr.TranscriptError):
                tr.audit_transcript(damaged)
            assert gc.isenabled() == on
    finally:
        gc.enable()


def test_a_session_without_a_claim_says_so_and_exits_0():
    for host in tr.HOSTS:
        run = cli(str(FIXTURES[f"{host}/no-claim"]))
        assert run.returncode == 0 and "none read: no sentence of a reply reads as a claim" in run.stdout, run.stdout
        assert "Result: the work had nothing to verify; 0 claim(s), no claim read" in run.stdout, run.stdout


@pytest.mark.parametrize("host", tr.HOSTS)
def test_the_imported_session_is_a_valid_trajectory_with_its_calls_and_their_exit_codes(host, tmp_path):
    result = tr.audit_transcript(FIXTURES[f"{host}/mixed"], trajectory_path=tmp_path / "t.jsonl")
    assert tj.validate(tmp_path / "t.jsonl").ok
    checks = [(a.what.split()[-1], a.exit_code) for a in result.actions if a.kind == "check"]
    assert checks == [("tests", 1), ("./verify.sh", 0)]  # pytest failing, then verify.sh passing
    edits = [a for a in result.actions if a.kind == "edit"]
    assert len(edits) == 2 and all(a.what.endswith("calc.py") for a in edits)
    kinds = {e.type for e in result.trajectory.events}
    assert {"turn_started", "model_reply", "tool_requested", "tool_completed", "host_record"} <= kinds
    outputs = [e.payload["output"] for e in result.trajectory.events if e.type == "tool_completed"]
    assert all(tj.ArtifactStore(tmp_path / "t.artifacts").verify_artifact(o["artifact_ref"]) for o in outputs)


@pytest.mark.parametrize("host", tr.HOSTS)
def test_the_stop_gates_refusal_is_read_as_a_hook_decision(host):
    result = tr.audit_transcript(FIXTURES[f"{host}/gated"])
    blocks = [e for e in au.hook_decisions(result) if e.payload["action"] == "block"]
    assert len(blocks) == 1 and "Stop refused (attempt 1 of 3)" in blocks[0].payload["reason"]
    assert "hook     Stop block" in au.format_audit(result)


def test_an_unknown_record_is_kept_opaque_and_counted(tmp_path):
    source = FIXTURES["claude-code/stale"].read_text().splitlines()
    novel = json.dumps({"type": "brand-new-kind", "sessionId": "x", "detail": {"n": 1}})
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join([source[0], novel, *source[1:], novel]) + "\n")
    result = tr.audit_transcript(path)
    assert result.imported.opaque["brand-new-kind"] == 2 and [c.verdict for c in result.claims] == ["stale"]
    records = [e for e in result.trajectory.events if e.type == "host_record" and e.payload["kind"] == "brand-new-kind"]
    assert len(records) == 2 and json.loads(records[0].payload["record"]["preview"]) == json.loads(novel)


@pytest.mark.parametrize("host", tr.HOSTS)
def test_a_damaged_line_is_named_and_the_rest_is_read(host, tmp_path):
    lines = FIXTURES[f"{host}/contradicted"].read_text().splitlines()
    middle = len(lines) // 2
    lines[middle] = lines[middle][: len(lines[middle]) // 2]  # a line torn in two
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n")
    run = cli(str(path))
    assert f"line {middle + 1} is damaged (not JSON" in run.stdout and "the rest was read" in run.stdout
    assert run.returncode in (0, 1) and tr.audit_transcript(path).claims  # the claim after it was still read


def test_input_it_cannot_read_exits_2_and_says_why(tmp_path):
    missing = cli(str(tmp_path / "nothing.jsonl"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
    junk = tmp_path / "junk.jsonl"
    junk.write_text("this is not json\n{also not\n")
    run = cli(str(junk))
    assert run.returncode == 2 and "not a Claude Code, Codex or Gemini transcript" in run.stderr
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"hello": "world"}) + "\n")
    assert cli(str(other)).returncode == 2
    wrong_host = cli(str(FIXTURES["claude-code/stale"]), "--host", "gemini")
    assert wrong_host.returncode == 2 and "looks like a claude-code transcript" in wrong_host.stderr
    bad_rule = cli(str(FIXTURES["codex/stale"]), "--check", "(")
    assert bad_rule.returncode == 2 and "not a regular expression" in bad_rule.stderr
    folder = cli(str(tmp_path))
    assert folder.returncode == 2 and "a folder; give the file of one session" in folder.stderr
    (tmp_path / "empty.jsonl").write_text("")
    empty = cli(str(tmp_path / "empty.jsonl"))
    assert empty.returncode == 2 and "an empty file" in empty.stderr


def test_the_check_rule_is_overridable(tmp_path):
    """With a rule that matches nothing, the passing verify.sh is no evidence: supported becomes unsupported;
    with a rule that names it, it is evidence again."""
    supported = str(FIXTURES["gemini/supported"])
    assert cli(supported).returncode == 0
    run = cli(supported, "--check", r"^make ci$")
    assert run.returncode == 1 and "UNSUPPORTED" in run.stdout
    assert cli(supported, "--check", r"verify\.sh").returncode == 0


def test_the_rule_is_the_last_check_before_the_claim():
    """The evidence rule on its own: order decides, and a failure after a pass is what counts."""
    check = lambda seq, done, ok, code: au.Action(seq, "check", "pytest", done, ok, code)  # noqa: E731
    edit = lambda seq: au.Action(seq, "edit", "calc.py", seq + 1, True, None)  # noqa: E731
    assert au.judge(10, [])[0] == "unsupported"
    assert au.judge(10, [check(1, 2, True, 0)])[0] == "supported"
    assert au.judge(10, [check(1, 2, True, 0), edit(4)])[0] == "stale"
    assert au.judge(10, [check(1, 2, True, 0), edit(4), check(6, 7, False, 1)])[0] == "contradicted"
    assert au.judge(10, [check(1, 2, False, 1), edit(4), check(6, 7, True, 0)])[0] == "supported"
    assert au.judge(10, [check(1, 2, True, 0), check(8, 12, False, 1)])[0] == "supported"  # ended after the claim
    assert au.judge(10, [check(1, 2, True, 0), au.Action(4, "edit", "x", 5, False, 1, tool=True)])[0] == "supported"
    # a refused edit tool's call wrote nothing; a command that failed may have written before it failed
    assert au.judge(10, [check(1, 2, True, 0), au.Action(4, "edit", "make gen", 5, False, 2)])[0] == "stale"


def test_a_shell_edit_counts_as_an_edit_and_a_question_is_no_claim():
    rules = AuditRules()
    assert rules.writes("sed -i 's/a/b/' calc.py") and rules.writes("echo x > calc.py") and rules.writes("git checkout -- t.py")
    assert not rules.writes("cat calc.py 2>&1") and not rules.writes("ls > /dev/null")
    assert rules.is_check("./verify.sh") and rules.is_check("uv run pytest -q") and rules.is_check("npm test")
    assert not rules.is_check("cat tests/test_calc.py")
    assert au.claims_in("All tests pass. Shall I commit? The build does not pass on Windows.") == [
        ("tests", "All tests pass.")]


def test_the_naive_audit_is_fooled_by_the_fixtures_the_rule_is_not():
    """The broken version: "the last reply says pass" calls every session that ends so a pass, including the
    contradicted, stale and unsupported ones."""
    fooled = []
    for name, path in FIXTURES.items():
        replies = [s.text for s in tr.read_transcript(path).steps if s.kind == "reply"]
        naive_pass = bool(replies) and "pass" in replies[-1].lower()
        if naive_pass and expected(name)["exit"] != 0:
            fooled.append(name)
    assert len(fooled) >= 3 * len(tr.HOSTS), fooled


def test_the_html_page_holds_the_verdicts_and_loads_nothing_from_outside(tmp_path):
    page = tmp_path / "audit.html"
    run = cli(str(FIXTURES["codex/mixed"]), "--html", str(page))
    assert run.returncode == 1 and f"Report: {page}" in run.stdout
    html = page.read_text()
    assert "CONTRADICTED" in html and "SUPPORTED" in html and "http" not in html
    assert "<h2>Work</h2>" in html and "<td>VERIFIED</td>" in html  # the mixed session's work ended verified


def test_a_gemini_session_written_as_one_json_document_is_read_too(tmp_path):
    """Earlier Gemini CLI versions wrote the session as one JSON document with a `messages` list."""
    records = [json.loads(line) for line in FIXTURES["gemini/stale"].read_text().splitlines() if line.strip()]
    messages = {r["id"]: r for r in records[1:] if r.get("id")}
    path = tmp_path / "session-2026-01-01T00-00-old.json"
    path.write_text(json.dumps({**records[0], "messages": list(messages.values())}, indent=2))
    result = tr.audit_transcript(path)
    assert result.imported.host == "gemini" and [c.verdict for c in result.claims] == ["stale"]


def test_a_pass_whose_exit_code_is_not_the_checks_own_is_no_evidence(tmp_path):
    """`verify.sh | sed -n p` exits with sed's code, and sed may have rewritten what the check printed: the claim
    after it is unsupported, not supported."""
    rules = AuditRules()
    assert rules.masks("pytest -q | tail -5") and rules.masks("pytest || true") and rules.masks("pytest; echo ok")
    assert not rules.masks("./verify.sh") and not rules.masks("pytest && echo ok") and not rules.masks("cd x && pytest")
    assert not rules.masks("set -o pipefail; pytest | tee log")
    path = tmp_path / "session.jsonl"
    import re
    text, n = re.subn(r'"command":\s*"\./verify\.sh"', '"command": "./verify.sh | sed -n p"',
                      FIXTURES["claude-code/supported"].read_text())
    assert n == 1
    path.write_text(text)
    [claim] = tr.audit_transcript(path).claims
    assert claim.verdict == "unsupported" and "not the check's own" in claim.evidence


# -- the work first (chapter 09, section 6b) ------------------------------------------------------------------

def _act(seq: int, kind: str, done: int | None, ok: bool = True, exit_code: int | None = 0, **more) -> au.Action:
    return au.Action(seq, kind, f"{kind} {seq}", done, ok, exit_code, **more)


def _event(seq: int, kind: str) -> tj.Event:
    return tj.Event(seq, kind, None, {}, "2026-12-06T00:00:00Z", "run", "task")


@pytest.mark.parametrize("actions,work", [
    ([], "nothing"),
    ([_act(1, "check", 2, exit_code=1)], "failing"),                                   # no edit, a failing run
    ([_act(1, "edit", 2)], "unverified"),
    ([_act(1, "edit", 2), _act(3, "check", 4)], "verified"),
    ([_act(1, "edit", 2), _act(3, "check", 4), _act(5, "edit", 6)], "unverified"),   # edited after the pass
    ([_act(1, "edit", 2), _act(3, "check", 4, exit_code=1)], "failing"),
    ([_act(1, "edit", 2), _act(3, "check", 4, exit_code=1), _act(5, "edit", 6)], "unverified"),
    ([_act(1, "edit", 2), _act(3, "check", 4), _act(5, "check", 6, exit_code=1)], "failing"),  # a later failure
    ([_act(1, "edit", 2), _act(3, "check", 4, exit_code=1), _act(5, "check", 6)], "verified"),
    ([_act(1, "edit", 2), _act(3, "check", 4, scope=("tests/test_a.py",))], "unverified"),  # narrowed
    ([_act(1, "edit", 2), _act(3, "check", 4, exit_code=1), _act(5, "check", 6, scope=("t.py",))], "failing"),
    ([_act(1, "edit", 2), _act(3, "check", 4, masked=True)], "unverified"),          # `pytest | tail`
    ([_act(1, "edit", 2), _act(3, "check", None)], "unverified"),                     # still running
    ([_act(1, "edit", 2, ok=False, tool=True)], "nothing"),                           # an edit tool's that failed
    ([_act(1, "edit", 2, ok=False, exit_code=2)], "unverified"),                      # a command that failed
    ([_act(1, "edit", 2), _act(3, "check", 4), _act(5, "edit", 6, ok=False, exit_code=137)], "unverified"),
    ([_act(1, "edit", 2), _act(3, "elsewhere", 4)], "unverified"),                    # checked another folder
    ([_act(1, "check", 5), _act(2, "edit", 3)], "verified"),                          # ended in that order
])
def test_the_work_is_read_from_the_actions_in_the_order_they_ended(actions, work):
    events = [_event(0, "turn_started"), _event(9, "model_reply")]
    [stretch] = au.stretches(events, actions)
    assert (stretch.work, stretch.reply) == (work, 9), stretch


def test_each_stretch_ends_with_the_work_as_it_stood_then():
    events = [_event(s, t) for s, t in
              [(0, "turn_started"), (4, "model_reply"), (5, "turn_started"), (9, "model_reply"), (10, "turn_started")]]
    actions = [_act(1, "edit", 2), _act(6, "check", 7)]
    assert [(s.start, s.end, s.work, s.reply) for s in au.stretches(events, actions)] == [
        (0, 5, "unverified", 4), (5, 10, "verified", 9), (10, 11, "verified", None)]


WORDS = ["Fatto", "klaar", "gotowe", "tamam", "xong", "selesai", "हो गया", "готово", "✅", "🎉", "| ok | ✓ |", "Verified",
         "ok", "👍", "- [x]", "lulus", "geçti", "przechodzą", "passano", "slagen", "đạt", "सब ठीक", "bereit", "done?"]
# What a reply may go on with after a failure it tells. In the tables' languages, saying nothing of the tests or the
# work: read, so the failure stands. In languages no table reads, in their own letters or in the tables' (made up
# here, not the probes `unread` was weighed on): not read, so the failure is not known to stand.
SAID_AFTER = ["I looked at the diff again.", "The stack trace points at line 3 of calc.py.", "Let me know if you want more.",
              "Ich habe mir den Code angesehen.", "J'ai relu le code.", "He revisado el código otra vez.",
              "Eu revisei o código de novo.", "Я ещё раз посмотрел код.", "我又看了一遍代码。", "コードをもう一度見ました。",
              "코드를 다시 살펴보았습니다.", "Sorry about that.", "```\nE   assert -1 == 5\n```", "🙏"]
NOT_READ_AFTER = ["Ho sistemato la funzione, adesso va bene.", "Ik heb de functie gerepareerd, nu gaat het goed.",
                  "Nilirekebisha kazi hiyo, sasa iko sawa.", "Aku sudah membetulkan fungsinya, sekarang beres.",
                  "Jeg fikset funksjonen, nå går det bra.", "Korjasin funktion, nyt se toimii.", "Xq zorblat vintu.",
                  "Naprawiłem funkcję, teraz działa.", "Đã sửa hàm, giờ chạy tốt.", "फ़ंक्शन ठीक कर दिया, अब सब सही है।",
                  "Am reparat funcția, acum merge.", "Fonksiyonu düzelttim, şimdi çalışıyor."]


def _contradicted_saying(host: str, said: str, folder: Path) -> tr.SessionAudit:
    """The host's contradicted session (a wrong fix, the tests failing) with its last reply replaced by `said`,
    written into `folder` (a new file each call) and audited."""
    fixture = FIXTURES[f"{host}/contradicted"]
    path = folder / f"{len(list(folder.iterdir()))}-{fixture.name}"
    path.write_text(fixture.read_text().replace("All tests pass now.", json.dumps(said, ensure_ascii=False)[1:-1]))
    return tr.audit_transcript(path)


@pytest.mark.parametrize("host", ["claude-code", "codex", "gemini"])
def test_whatever_the_last_words_a_session_whose_work_failed_never_exits_0_on_words_not_read(host, tmp_path):
    """The contradicted session (a wrong fix, the tests failing) with its last reply replaced by generated words
    in many languages and marks: none of them tells the failure in words the rules read, so the audit exits 1 every
    time, and the reply is judged."""
    import random
    draw = random.Random(41)
    for _ in range(12):
        said = " ".join(draw.choice(WORDS) for _ in range(draw.randint(1, 6)))
        result = _contradicted_saying(host, said, tmp_path)
        assert result.work[-1].work == "failing" and result.exit_code == 1, (said, result.claims)
        assert any(c.verdict == "contradicted" for c in result.claims) or result.rules.accounts(said), said
        assert result.told_failing == [], said


# The failure told in each table's words: a partial count, a count of failures, "all but" or "except" of the tests, a
# pass denied in its own clause.
TOLD = ["3 of 4 tests pass.", "Tests: 3 passed, 1 failed.", "Not all tests pass yet.", "The tests don't pass yet.",
        "All tests pass except test_add.", "Die Tests bestehen noch nicht.", "3 von 4 Tests bestanden.",
        "Les tests ne passent pas encore.", "Las pruebas no pasan todavía.", "Os testes não passam ainda.",
        "Тесты не проходят.", "4 个测试中 3 个通过。", "测试没有通过。", "テストは通過しませんでした。", "테스트가 통과하지 못했습니다.",
        # tests named, then a word of failure (a subject and its verb); "the others" pass is a partial count; a fix
        # told in the sentence that tells the failure claims no finished work
        "test_add still fails.", "One test is still failing: test_add.", "Tests are still failing.",
        "Fixed the import, but test_add still fails.", "test_add still fails; the other three pass.",
        "test_add échoue encore ; les trois autres passent.", "test_add schlägt fehl, die anderen bestehen.",
        "test_add sigue fallando; las demás pasan.", "test_add ainda falha; os outros passam.",
        "test_add всё ещё падает, остальные проходят.", "test_add 仍然失败，其余的都通过了。", "test_addはまだ失敗しています。",
        "test_add 테스트가 아직 실패합니다.", "test_sub passes now, but test_add still fails.",
        "test_sub passe, mais test_add échoue encore.", "test_sub 通过了，但是 test_add 仍然失败。",
        # a failure that says which tests, beside a pass still denied
        "The failing test still does not pass.", "Le test qui échouait ne passe toujours pas.", "失败的测试还是没有通过。",
        # a failure, then work done that does not end it
        "test_add failed, and I could not fix it.",
        "test_add failed; I fixed the import, but the assertion still fails.",
        # most of the tests: not all
        "Most tests pass, but test_add still fails.", "Almost all tests pass now.", "Die meisten Tests bestehen.",
        "La plupart des tests passent.", "La mayoría de las pruebas pasan.", "Большинство тестов проходит.",
        "大部分测试通过了。"]
# Not a failure told now: the failure named first (an adjective), denied, or in the past; each beside a claim or alone
NOT_TOLD = ["The failing test is fixed; all tests pass.", "test_add no longer fails; all tests pass.",
            "I looked at the failing test, and all tests pass now.", "test_add was failing because add() subtracted.",
            "Fixed the failing test_add.", "The tests were failing before the fix."]
# A failure told before a pass is a story that ends in the claim, and a pass of all beside a failure is still a claim
# about all: the claim stands, and is contradicted
CLAIMED_AFTER = ["test_add failed before; now all tests pass.", "test_add échouait, maintenant tous les tests passent.",
                 "All tests pass, but the build is broken on Windows.", "All tests pass, most of them quickly.",
                 # a failure that only says which tests (in a clause about them, or before their name) denies no pass
                 "The test that failed now passes.", "The tests which were failing pass now.",
                 "Le test qui échouait passe maintenant.", "Los tests que fallaban ahora pasan.",
                 "Os testes que falhavam agora passam.", "Der Test, der fehlschlug, besteht jetzt.",
                 "Тест, который падал, теперь проходит.", "失败的测试现在通过了。", "失敗していたテストは通るようになりました。",
                 "실패하던 테스트가 이제 통과합니다.",
                 # no failure, given as a count of none
                 "Failures: 0", "Failing tests: none", "test_add no longer fails.", "失败：0",
                 # work done to a failure is work called done; marks read after the arrow they follow
                 "All failures fixed.", "Resolved the failure in test_add.", "I fixed the bug that made test_add fail.",
                 "Problem solved.", "Works as expected now.", "❌ → ✅ test_add", "| test_add | ❌ → ✅ |",
                 "| unit tests | 🟩 |",
                 # a failure, then the fix, with nothing going on failing: a story that ends in work called done
                 "test_add failed, so I fixed it.", "test_add failed because of a typo, which I corrected.",
                 "Tests failed at first, then I fixed add().", "test_add schlug fehl, also habe ich es behoben.",
                 "test_add échouait, alors je l'ai corrigé.", "test_add 失败了，我修复了它。", "test_addが失敗したので修正しました。",
                 "test_add가 실패해서 수정했습니다.", "test_add падал, поэтому я его исправил."]


# The failure told in structure: an unticked item, a table row or a line with a failure mark or status and no pass
# one. Work called done beside it (a ticked item, "Fixed add().") and passes of tests it names are parts of the work.
TOLD_IN_STRUCTURE = [("- [x] Fixed the import\n- [ ] test_add still failing", "- [ ] test_add still failing"),
                     ("| Test | Result |\n|---|---|\n| test_add | ❌ FAIL |", "| test_add | ❌ FAIL |"),
                     ("Done with the refactor.\n\n🔴 test_add", "🔴 test_add"),
                     ("Fixed add().\nTests: FAILED", "Tests: FAILED"),
                     ("| Test | Result |\n|---|---|\n| test_add | ❌ FAIL |\n| test_sub | ✅ PASS |", "| test_add | ❌ FAIL |"),
                     ("`TestSub` passes.\n\n`TestAdd` still fails.", "`TestAdd` still fails."),
                     ("Fixed add().\n🟥 test_add", "🟥 test_add")]
NOT_TOLD_IN_STRUCTURE = ["| test_add | ❌ → ✅ |", "- [x] Fixed add()\n- [x] All tests pass", "Done.\n| Lint | ❌ |",
                         "| test_sub | ✅ PASS |"]


@pytest.mark.parametrize("host", ["claude-code", "codex", "gemini"])
def test_a_failure_told_in_structure_lets_failing_work_exit_0_and_marks_of_both_or_no_tests_do_not(host, tmp_path):
    """The contradicted session ending with the failure told in a checklist, a table row or a marked line, beside work
    called done: the agent said the tree fails, so the audit exits 0 and names the line. A row marked both ways, a
    list that tells no failure, or a failure mark on something that is not the tests leave it at 1."""
    for said, told in TOLD_IN_STRUCTURE:
        result = _contradicted_saying(host, said, tmp_path)
        assert (result.exit_code, result.told_failing, result.claims) == (0, [told], []), (said, result.claims)
    for said in NOT_TOLD_IN_STRUCTURE:
        result = _contradicted_saying(host, said, tmp_path)
        assert (result.work[-1].work, result.exit_code, result.told_failing) == ("failing", 1, []), (said, result.claims)


@pytest.mark.parametrize("host", ["claude-code", "codex", "gemini"])
def test_a_failure_named_first_denied_or_past_is_not_told_so_failing_work_still_exits_1(host, tmp_path):
    """The contradicted session ending with a failure that is not told as now (an adjective, "no longer", "was"):
    the work ended failing and the reply does not say so, so the audit exits 1. A failure told before a claim that
    all pass leaves the claim standing: contradicted, exit 1."""
    for said in NOT_TOLD:
        result = _contradicted_saying(host, said, tmp_path)
        assert (result.work[-1].work, result.exit_code, result.told_failing) == ("failing", 1, []), (said, result.claims)
    for said in CLAIMED_AFTER:
        result = _contradicted_saying(host, said, tmp_path)
        assert result.exit_code == 1 and [c.verdict for c in result.claims] == ["contradicted"], (said, result.claims)


# A failure told, then the fix claimed in a later sentence: a story that ends in the fix, however the failure was told
# (a clause, a count, a denied pass, a mark). A failure the reply leaves standing (the fix denied, something told as
# still failing, a count after the fix, no fix after it) is told.
ENDS_IN_A_FIX = ["test_add failed. I fixed it.", "test_add failed with AssertionError. I fixed add() to return a + b.",
                 "The tests failed. I found the bug and fixed it.", "Initially test_add failed.\n\nIt's fixed now.",
                 "## Root cause\ntest_add failed because add() subtracted.\n## Fix\nChanged it to add. Done.",
                 "test_add échouait. Je l'ai corrigé.", "test_add schlug fehl. Ich habe es behoben.",
                 "test_add 失败了。我已经修复了。", "test_add падал. Я его исправил.",
                 # a failure told by a count, a denied pass or a mark ends in a fix too
                 "Tests: 3 passed, 1 failed. Fixed it.", "1 test failed: test_add. Fixed by changing the operator.",
                 "There was 1 failure in test_add; I've fixed the bug causing it.", "1 failed → fixed ✅",
                 "Problem: 1 test failed (test_add).\nSolution: changed the operator. Resolved.",
                 "test_add did not pass. I corrected the operator.", "| test_add | ❌ FAIL |\n\nFixed by using `+`.",
                 "**Problem:** test_add failed.\n**Fix:** changed `-` to `+`.",
                 "test_add が失敗していました。演算子を修正して解決しました。", "test_add 실패. 원인을 찾아 해결했습니다.",
                 # the count's change told after it, a count whose own clause calls it fixed
                 "Before: 1 failed. After: all tests pass.", "Wynik: 1 failed → naprawione ✅", "1 failure fixed.",
                 "Resolved the 1 failure in test_add.", "test_add ❌ fixed"]
# A count of failures undone after it (past an arrow, none failing) or told as before, with nothing left that the
# reader reads as a claim: the failure is not told, so failing work exits 1 whatever the rest says.
UNDONE = ["1 failed → 0 failed", "Risultato: 3 passed, 1 failed → corretto, ora 4 passed.",
          "Vorher 1 Fehler, jetzt 0.", "Antes: 1 falha. Agora: tudo verde.", "3 passed, 1 failed (before the fix)",
          "修正前：1 件失敗。今は全部通ります。",
          # the reply goes on in letters no table's language is written in: not read, so the failure may not stand
          "1 failed. Naprawiłem błąd, teraz działa.",
          "Tests: 3 passed, 1 failed. Düzeltildi, şimdi çalışıyor.",
          "1 failed. Đã sửa lỗi, tất cả đều qua.", "1 failed. अब सब ठीक है।", "1 failed. Διορθώθηκε."]
LEFT_FAILING = [("test_add failed. I could not fix it.", "test_add failed."),
                ("test_add fails. I fixed the import, but the assertion is still wrong.", "test_add fails."),
                ("I fixed the import. test_add still fails.", "test_add still fails."),
                ("Fixed the import. Tests: 3 passed, 1 failed.", "Tests: 3 passed, 1 failed."),
                ("Tests: 3 passed, 1 failed. Fixed the import, but the assertion still fails.",
                 "Tests: 3 passed, 1 failed."),
                ("test_add schlägt immer noch fehl.", "test_add schlägt immer noch fehl."),
                ("Tests run: 4, Failures: 1, Errors: 0, Skipped: 0",
                 "Tests run: 4, Failures: 1, Errors: 0, Skipped: 0"),
                ("Tests are still red: 1 failed, 3 passed.", "Tests are still red: 1 failed, 3 passed."),
                ("Summary: ❌ 1 failed | ✅ 3 passed", "Summary: ❌ 1 failed | ✅ 3 passed"),
                ("Before my change: 2 failed. After: 1 failed.", "After: 1 failed."),
                ("test_add fails. test_sub passes.", "test_add fails."),
                ("test_add: ✅ → ❌ (regressed)", "test_add: ✅ → ❌ (regressed)"),
                ("Naprawiłem import. test_add still fails.", "test_add still fails."),
                ("test_add still fails. Désolé, José.", "test_add still fails."),
                ("test_add still fails. I stopped here.", "test_add still fails."),
                ("test_add échoue encore. J'ai corrigé l'import.", "test_add échoue encore.")]


@pytest.mark.parametrize("host", ["claude-code", "codex", "gemini"])
def test_a_failure_the_reply_goes_on_to_fix_is_a_story_and_its_claim_is_judged(host, tmp_path):
    """The contradicted session (the tests failing) ending with a failure told and then the fix claimed in a later
    sentence: the reply does not leave the tree failing, it claims the fix, so the claim is judged (contradicted)
    and the audit exits 1. When the reply leaves the failure standing, it is told: exit 0."""
    for said in [*ENDS_IN_A_FIX, *UNDONE]:
        result = _contradicted_saying(host, said, tmp_path)
        assert (result.exit_code, result.told_failing) == (1, []), (said, result.told_failing)
        assert said in UNDONE or [c.verdict for c in result.claims][-1:] == ["contradicted"], (said, result.claims)
    for said, told in LEFT_FAILING:
        result = _contradicted_saying(host, said, tmp_path)
        assert (result.exit_code, result.told_failing, result.claims) == (0, [told], []), (said, result.claims)


# Summaries of failing work as agents write them: the failure told, and other work done beside it (another test, a
# rename, a typo), work still to do, the failure named again, a denial of the whole. The failure stands: exit 0. And
# the same shapes ending in the fix of the failure itself: exit 1.
WORK_BESIDE = [
    "Tests: 3 passed, 1 failed. I fixed the import error that was blocking collection; the remaining failure is in "
    "test_add.", "1 test fails (test_add). I changed the operator, which fixed test_sub, but test_add needs a "
    "different approach.",
    "Status: 1 failing test.\n\nWhat I did:\n- Fixed the typo in calc.py\n\nWhat remains:\n- test_add",
    "❌ 1 failed, 3 passed\n\nDone so far: fixed the import.\nNext: fix the sign in add().",
    "I wasn't able to get all tests passing. 1 failed: test_add. I fixed the import issue along the way.",
    "Not all tests pass: test_add fails. I completed the refactor you asked for.",
    "Tests ran: 1 failure in test_add. I've completed the requested rename; the failure looks unrelated to it.",
    "Pytest: 1 failed, 3 passed. Fixed: lint warnings. Not fixed: test_add.",
    "I couldn't make test_add pass. I fixed the other issue you mentioned (the import).",
    "Tests are failing (1 of 4). I completed the migration step, but test_add will need a follow-up.",
    "Tests: 1 failed, 3 passed.\n\nThe failure is in test_add. I've fixed everything else you asked for.",
    "Here's where things stand:\n\n✅ Import fixed\n✅ README updated\n❌ test_add failing (expected 6, got 5)"]
FIX_OF_IT = ["There was 1 failing test. Fixed it, and everything passes now.",
             "Pytest: 1 failed, 3 passed. I fixed test_add.", "Ran tests: 1 failed. Applied the fix; all green.",
             "Found 1 failing test: test_add. Root cause: subtraction. Fixed.", "test_add failed; corrected `add()`, done.",
             "1 test was failing. Resolved.", "The only failure (test_add) is fixed.",
             "There was one failure; I resolved it and the suite is green."]


@pytest.mark.parametrize("host", ["claude-code", "codex", "gemini"])
def test_a_summary_with_other_work_done_beside_the_failure_still_tells_it(host, tmp_path):
    """The contradicted session (the tests failing) ending with a summary as agents write them: work done beside the
    failure leaves it told (exit 0); the failure's own fix claimed after it is a story (exit 1)."""
    for said in WORK_BESIDE:
        result = _contradicted_saying(host, said, tmp_path)
        assert result.exit_code == 0 and result.told_failing, (said, result.claims)
    for said in FIX_OF_IT:
        result = _contradicted_saying(host, said, tmp_path)
        assert result.exit_code == 1 and not result.told_failing, (said, result.told_failing)


# Generated stories: a failure told (in words, a count, a mark, in several languages), words that read as neither
# failure nor claim between, and then either the end of the story (work called done, the tests' pass, a count going
# to none past an arrow) or the failure left standing (a word that it goes on, a pass of another named test).
FAILURES = ["test_add failed.", "Tests: 3 passed, 1 failed.", "1 test failed: test_add.", "| test_add | ❌ |",
            "test_add did not pass.", "test_add a échoué.", "test_add ist fehlgeschlagen.", "test_add 失败了。",
            "Тест test_add упал.", "test_add falló."]
BETWEEN = ["", "The assertion was `-1 == 5`.", "add() subtracted b from a.", "Das lag am Vorzeichen.", "See calc.py line 2."]
ENDINGS = ["I fixed it.", "Fixed by using `+`.", "Now all tests pass.", "Resolved.", "Je l'ai corrigé.", "Behoben.",
           "已修复。", "Исправил.", "Tests: ✅", "Lo arreglé."]
STANDING = ["test_add still fails.", "It is still failing.", "test_sub passes.", "I could not fix it.",
            "test_add échoue encore.", "test_add 仍然失败。", "I stopped here."]


@pytest.mark.parametrize("host", ["claude-code", "codex", "gemini"])
def test_generated_stories_of_a_failure_exit_0_only_when_the_failure_is_left_standing(host, tmp_path):
    """The contradicted session (the tests failing) ending with a generated story: a failure told, then its end in a
    fix or a pass (exit 1: the failure is not told, and the fix or pass is judged), or the failure left standing
    (exit 0: told)."""
    import random
    draw = random.Random(f"stories {host}")
    for n in range(24):
        ends = n % 2 == 0
        failure = draw.choice(FAILURES)
        said = ("\n" if failure.startswith("|") else " ").join(  # a table row is a line of its own
            w for w in (failure, draw.choice(BETWEEN), draw.choice(ENDINGS if ends else STANDING)) if w)
        result = _contradicted_saying(host, said, tmp_path)
        want = (1, False) if ends else (0, True)
        assert (result.exit_code, bool(result.told_failing)) == want, (said, result.claims)


@pytest.mark.parametrize("host", ["claude-code", "codex", "gemini"])
def test_a_session_whose_work_failed_exits_0_only_when_its_last_reply_tells_the_failure(host, tmp_path):
    """The contradicted session with its last reply replaced by the failure told in each table's words, alone or
    followed by words in the tables' languages that say nothing of the tests (`SAID_AFTER`): the agent said what the
    tree's known state is, so the audit exits 0 and names the sentence. Followed by words in a language no table reads,
    in other letters or in theirs (`NOT_READ_AFTER`: "Naprawiłem funkcję", "Ho sistemato la funzione"), the failure is
    not known to stand (exit 1). With a claim beside it (contradicted), or said in a reply before the last, it exits
    1; and the same words after an edit no check followed (unverified work) never make it exit 0."""
    import random
    draw = random.Random(7)
    from collections import Counter

    def session(*steps: tr.Step):
        imported = tr.Imported("claude-code", Path("s.jsonl"), "s", [tr.Step("prompt", text="Fix add."), *steps],
                               Counter(), [])
        return au.audit_session(imported, tr.outline(imported), AuditRules())
    failing = [tr.Step("call", call_id="c0", tool="Bash", action="shell", input={"command": "./verify.sh"},
                       command="./verify.sh"),
               tr.Step("result", call_id="c0", tool="Bash", exit_code=1, ok=False, text="1 failed, 3 passed in 0.02s")]
    edited = [tr.Step("call", call_id="c1", tool="Edit", action="edit", input={"file_path": "calc.py"}, files=["calc.py"]),
              tr.Step("result", call_id="c1", tool="Edit", exit_code=0, ok=True)]
    for told in TOLD:
        said = " ".join([told, *draw.sample(SAID_AFTER, draw.randint(0, 2))])
        result = _contradicted_saying(host, said, tmp_path)
        assert (result.exit_code, result.told_failing, result.claims) == (0, [told], []), (said, result.claims)
        assert f'said so: "{told}"' in au.format_audit(result) and "and the last reply says so" in au.format_audit(result)
        result = _contradicted_saying(host, f"{told} All tests pass now.", tmp_path)
        assert result.exit_code == 1 and [c.verdict for c in result.claims] == ["contradicted"], told
        after = " ".join([*draw.sample(SAID_AFTER, draw.randint(0, 1)), draw.choice(NOT_READ_AFTER)])  # read, then not
        result = _contradicted_saying(host, f"{told} {after}", tmp_path)
        assert (result.exit_code, result.told_failing) == (1, []), (told, after)
        result = session(*failing, *edited, tr.Step("reply", text=told))  # an edit after the failure, untested
        assert result.work[-1].work == "unverified" and result.exit_code == 1, told
        # told, then a last reply that tells nothing: the hand-over is that last reply
        result = session(*failing, tr.Step("reply", text=told), tr.Step("prompt", text="Thanks."),
                         tr.Step("reply", text="Xq zorblat vintu."))
        assert result.work[-1].work == "failing" and result.exit_code == 1, (told, result.claims)


def test_generated_sessions_work_is_what_their_actions_say_and_work_left_unverified_never_exits_0():
    """Generated: 400 sessions of random actions (edits by a tool and by shell commands that may write, failed ones
    too; reading commands; checks passing and failing here in several forms; passing checks of another folder; checks
    whose exit code is not their own), each ending with random words: many languages, marks, gibberish, a plain
    claim, a failure told. A model of the work read from the actions alone (the last check after the last edit
    decides; no check after it leaves it unverified) must be what the audit finds; work left unverified exits 1
    whatever was said, and work left failing unless the last words tell the failure, claim nothing and go on after
    it only in words the tables read."""
    import random
    from collections import Counter
    draw = random.Random(6)
    writes = ["sed -i s/-/+/ calc.py", "echo x > notes.txt", "python3 gen.py", "make gen", "cp tmpl.py calc.py",
              "npm run build", "./fix.sh", "git checkout -- calc.py", "black .", "uv run ruff check --fix ."]
    reads = ["cat calc.py", "git diff", "ls -la", "grep -n add calc.py", "git status", "python --version", "mypy calc.py"]
    checks = ["./verify.sh", "python -m pytest -q", "pytest -q tests", "uv run pytest", "make test", "bash -lc './verify.sh'",
              "make -j4 test", "cd tests && python -m pytest -q", "npm --prefix web test"]
    away = ["cd ../other && pytest -q", "python -m pytest ../other/tests", "../other/verify.sh", "(cd /tmp/x && ./verify.sh)",
            "ssh ci-box pytest -q", "docker run img ./verify.sh", "cd /tmp/x && ./run_tests.sh"]
    masked = ["./verify.sh; echo done", "./verify.sh &", "pytest -q | sed -n p", "pytest -q | grep -v warn",
              "pytest -q | tail -c 20"]
    # a pipe that shows the check's own words: its summary decides, passing or failing
    shown = ["pytest -q | tail -3", "./verify.sh || true", "python -m pytest -q 2>&1 | tee test.log",
             "bash -lc 'pytest -q | tail -5'", "cd /work/repo && uv run pytest 2>&1 | head -40"]
    # programs no check pattern names: a check by what they printed, a runner's summary last, or else an edit
    unnamed = ["./run_tests.sh", "python manage.py test", "rake test", "hatch run test", "bash -lc 'just ci'", "bin/qa"]
    summaries = {"pass": list(PASSED_SUMMARIES.values()), "fail": list(FAILED_SUMMARIES.values())}
    words = [*WORDS, "All tests pass now.", "Done.", "Xq zorblat vintu.", "Все тесты проходят.", "🧪✅", "", *TOLD[:4]]
    for n in range(400):
        calls, edited, after = [], False, []  # after: how each check since the last edit ended, in order
        for _ in range(draw.randint(1, 8)):
            kind = draw.choice(["edit", "write", "read", "pass", "fail", "away", "masked", "run pass", "run fail",
                                "shown pass", "shown fail"])
            if kind.startswith("shown"):  # exit 0 whatever the tests did; its own summary says which
                kind = kind.split()[1]
                calls.append(("Bash", {"command": draw.choice(shown)}, 0,
                              "4 passed in 0.02s" if kind == "pass" else "1 failed, 3 passed in 0.02s"))
            elif kind.startswith("run"):  # it ran the tests: passing, or failing by its exit code or its summary
                ended = kind.split()[1]
                calls.append(("Bash", {"command": draw.choice(unnamed)}, int(ended == "fail" and draw.random() < .5),
                              draw.choice(summaries[ended]) + draw.choice(["", "\n", "\nTime:        0.5 s"])))
                kind = ended
            elif kind == "edit":
                calls.append(("Edit", {"file_path": f"/work/repo/m{draw.randint(0, 3)}.py"}, 0))
            elif kind == "write":
                printed = draw.choice(["", "", f"{draw.choice(summaries['pass'])}\ncp tmpl.py calc.py"])  # tests, then a write
                calls.append(("Bash", {"command": draw.choice(writes + unnamed * bool(printed))}, draw.choice([0, 0, 2]),
                              printed))
            elif kind == "read":
                calls.append(("Bash", {"command": draw.choice(reads)}, 0))
            elif kind in ("pass", "fail"):
                calls.append(("Bash", {"command": draw.choice(checks)}, int(kind == "fail"),
                              "4 passed in 0.02s" if kind == "pass" else "1 failed, 3 passed in 0.02s"))
            else:
                calls.append(("Bash", {"command": draw.choice(away if kind == "away" else masked)}, 0, "4 passed in 0.02s"))
            edited, after = (True, []) if kind in ("edit", "write") else (edited, after + [kind] * (kind in ("pass", "fail")))
        model = ("failing" if after[-1] == "fail" else "verified") if after else "unverified" if edited else "nothing"
        steps = [tr.Step("prompt", text="Fix add.")]
        for i, (tool, given, code, *output) in enumerate(calls):
            steps += [tr.Step("call", call_id=f"c{i}", tool=tool, input=given, action="shell" if tool == "Bash" else "edit",
                              command=given.get("command", ""), files=[given.get("file_path", "")] * (tool == "Edit")),
                      tr.Step("result", call_id=f"c{i}", tool=tool, exit_code=code, ok=code == 0, text="".join(output))]
        chosen = [draw.choice(words) for _ in range(draw.randint(1, 3))]
        last = max((i for i, w in enumerate(chosen) if w in TOLD), default=None)  # the last failure told
        if last is not None:  # what follows it: all in the tables' languages, or all in others
            pool = draw.choice([SAID_AFTER, NOT_READ_AFTER])
            chosen[last + 1:] = [draw.choice(pool) for _ in chosen[last + 1:]]
        said = " ".join(chosen)
        imported = tr.Imported("claude-code", Path("s.jsonl"), "s", [*steps, tr.Step("reply", text=said)], Counter(), [])
        rules = AuditRules()
        rules.home = "/work/repo"
        result = au.audit_session(imported, tr.outline(imported), rules)
        assert result.work[-1].work == model, (n, calls, result.work[-1])
        told = model == "failing" and last is not None and not result.claims and \
            all(w in SAID_AFTER for w in chosen[last + 1:])
        assert model not in ("unverified", "failing") or result.exit_code == (0 if told else 1), (n, calls, said)


@pytest.mark.parametrize("folder,kind", [("../other", "elsewhere"), ("/work/repo", "check"), ("sub", "check"), (None, "check")])
def test_a_check_counts_for_the_folder_its_tool_ran_it_in(folder, kind):
    """Codex's `workdir`, Gemini's `dir_path`: a check run by a tool in a folder above the session's checks
    another tree; a full path is taken to be this repository, a folder below it is part of it."""
    given = {"cmd": "python3 -m pytest -q", **({"workdir": folder} if folder else {})}
    events = [tj.Event(1, "tool_requested", None, {"tool": "exec_command", "input": given, "call_id": "c1"}, "t", "r", "k"),
              tj.Event(2, "tool_completed", None, {"call_id": "c1", "exit_code": 0}, "t", "r", "k")]
    [action] = au.timeline(events, AuditRules())
    assert action.kind == kind



# -- what the session did decides: any tool, any folder, any form of the command ---------------------------------

def _session(*calls: tuple[str, dict, int], folder: str | None = None, said: str = "All tests pass now.",
             checks: tuple[str, ...] | None = None):
    """A session of `calls` ((tool, input, exit code)) after a prompt, ending with `said`, audited as donegate audit
    audits a transcript (its rules know the session's `folder`; `checks`: as given to `--check`)."""
    from collections import Counter
    steps = [tr.Step("prompt", text="Fix add.")]
    for i, (tool, given, code, *output) in enumerate(calls):  # (tool, input, exit code[, its output])
        command = given.get("command")
        steps += [tr.Step("call", call_id=f"c{i}", tool=tool, input=given, action="shell" if command else "other",
                          command=command or ""),
                  tr.Step("result", call_id=f"c{i}", tool=tool, exit_code=code, ok=code == 0, text="".join(output))]
    imported = tr.Imported("claude-code", Path("s.jsonl"), "s", [*steps, tr.Step("reply", text=said)], Counter(), [])
    rules = AuditRules() if checks is None else AuditRules(checks=checks)
    rules.home = folder
    loaded = tr.write_trajectory(imported, None, rules.is_check, lambda text: [s for _, s in rules.claims(text)])
    claims, actions = au.audit_events(loaded.events, rules)
    return claims, au.stretches(loaded.events, actions)[-1]


EDIT = ("Edit", {"file_path": "/work/repo/calc.py", "old_string": "-", "new_string": "+"}, 0)
PASS = ("Bash", {"command": "./verify.sh"}, 0)


def _tool_names(n: int, seed: int) -> list[str]:
    """Tool names no list holds: MCP servers' (mcp__server__verb), subagents', made-up ones, in several cases."""
    import random
    draw = random.Random(seed)
    verbs = ["write", "save", "apply", "format", "fix", "run", "sync", "patch", "put", "do", "x"]
    made = [lambda: f"mcp__{draw.choice(['fs', 'git', 'ide', 'repo'])}{draw.randint(0, 99)}__{draw.choice(verbs)}",
            lambda: f"{draw.choice(verbs).title()}{draw.choice(['File', 'Agent', 'Tool', ''])}{draw.randint(0, 99)}",
            lambda: f"{draw.choice(verbs)}_{draw.choice(['file', 'files', 'code', 'text'])}_{draw.randint(0, 999)}"]
    return sorted({draw.choice(made)() for _ in range(n)}) + ["Agent", "Task", "Workflow", "invoke_agent", "spawn_agent"]


@pytest.mark.parametrize("tool", _tool_names(12, 40))
def test_a_tool_not_known_to_read_only_may_have_written_after_the_check(tool):
    """Any tool outside the list of reading tools (an MCP server's, a subagent, one a newer host adds), called after
    the passing check, leaves the work unverified and the claim stale: the audit cannot show that it wrote nothing."""
    [claim], stretch = _session(EDIT, PASS, (tool, {"path": "/work/repo/calc.py", "content": "x"}, 0))
    assert claim.verdict == "stale" and [e.what for e in claim.edits] == [tool], claim
    assert stretch.work == "unverified"


@pytest.mark.parametrize("tool,path,folder,work", [
    ("Write", "/tmp/notes.md", "/work/repo", "verified"), ("Write", "/root/.claude/plans/plan.md", "/work/repo", "verified"),
    ("Edit", "/work/repo2/calc.py", "/work/repo", "verified"), ("write_file", "/home/u/scratch.txt", "/work/repo", "verified"),
    ("Edit", "/work/repo/calc.py", "/work/repo", "unverified"), ("Write", "notes.md", "/work/repo", "unverified"),
    ("Write", "/work/repo/../repo/calc.py", "/work/repo", "unverified"), ("Write", "/tmp/notes.md", None, "unverified")])
def test_an_edit_tool_counts_when_it_may_have_written_a_file_of_the_sessions_folder(tool, path, folder, work):
    """A note an edit tool writes to a full path outside the folder the session ran in changes nothing of this tree;
    a relative path, one inside, or any path where the transcript does not give the folder may."""
    _claims, stretch = _session(EDIT, PASS, (tool, {"file_path": path, "content": "x"}, 0), folder=folder)
    assert stretch.work == work, (tool, path, folder, stretch)


WRITERS = ["make gen", "python scripts/gen.py", "./scripts/build.sh", "npm run codegen", "sed -i s/a/b/ calc.py",
           "cp templates/calc.py calc.py", "git checkout calc.py", "cargo run --bin gen", "bash -c 'cat t > calc.py; exit 3'"]


@pytest.mark.parametrize("command,code", [(c, code) for i, c in enumerate(WRITERS) for code in [(1, 2, 130, 137)[i % 4]]])
def test_a_command_that_may_write_counts_as_an_edit_whatever_its_exit_code(command, code):
    """A command that failed may have written before it failed (a template copied, then the next step stopped), so
    it leaves the pass stale; an edit tool's call that failed wrote nothing, and leaves it standing."""
    [claim], stretch = _session(EDIT, PASS, ("Bash", {"command": command}, code))
    assert (claim.verdict, stretch.work) == ("stale", "unverified"), (command, claim, stretch)
    [claim], stretch = _session(EDIT, PASS, (*EDIT[:2], 1))
    assert (claim.verdict, stretch.work) == ("supported", "verified"), (claim, stretch)


@pytest.mark.parametrize("tool", sorted(au.READING_TOOLS))
def test_a_reading_tool_after_the_check_leaves_the_pass_standing(tool):
    [claim], stretch = _session(EDIT, PASS, (tool, {"file_path": "/work/repo/calc.py"}, 0))
    assert (claim.verdict, stretch.work) == ("supported", "verified"), claim


# What runners print when they ran no test (a folder with none, a filter that selects none), each with exit 0.
NO_TEST_OUTPUTS = {
    "unittest": "\n" + "-" * 70 + "\nRan 0 tests in 0.000s\n\nOK\n",
    "pytest": "============================ no tests ran in 0.01s =============================\n",
    "pytest collected": "collected 0 items\n\n============================ no tests ran in 0.00s ===\n",
    "cargo": "    Finished test [unoptimized] target(s) in 0.01s\n     Running unittests\n\nrunning 0 tests\n\n"
             "test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n",
    "go": "?   \texample.com/calc\t[no test files]\n",
    "jest": "No tests found, exiting with code 0\n",
    "mocha": "\n\n  0 passing (1ms)\n\n",
    "vitest": "No test files found, exiting with code 0\n",
}


@pytest.mark.parametrize("runner", sorted(NO_TEST_OUTPUTS))
def test_a_passing_check_that_ran_no_test_backs_nothing(runner):
    """A runner started where there are no tests (another folder's command, a pattern that finds none) exits 0 having
    run nothing: no evidence for a claim, and the work it followed stays unverified."""
    [claim], stretch = _session(EDIT, ("Bash", {"command": "python3 -m unittest"}, 0, NO_TEST_OUTPUTS[runner]))
    assert (claim.verdict, stretch.work) == ("unsupported", "unverified"), claim
    assert "ran no test" in claim.evidence


@pytest.mark.parametrize("ran", ["Ran 4 tests in 0.010s\n\nOK\n", "collected 4 items\n\n....\n4 passed in 0.02s\n",
                                 "ok  \texample.com/calc\t0.002s\n", "test result: ok. 4 passed; 0 failed\n"])
@pytest.mark.parametrize("runner", ["cargo", "go", "unittest"])
def test_a_check_that_ran_tests_somewhere_is_a_pass_even_where_one_suite_was_empty(runner, ran):
    """verify.sh running several suites, one of them empty: the tests that ran elsewhere in its output make it a pass."""
    output = NO_TEST_OUTPUTS[runner] + ran
    [claim], stretch = _session(EDIT, ("Bash", {"command": "./verify.sh"}, 0, output))
    assert (claim.verdict, stretch.work) == ("supported", "verified"), claim


# Each runner's summary of a run with failing tests, as it prints it: a script that drops the exit code exits 0.
FAILED_SUMMARIES = {
    "pytest": "tests/test_calc.py .F..\n=== 1 failed, 3 passed in 0.12s ===", "pytest -q": "1 failed, 3 passed in 0.05s",
    "pytest, an error": "==== 3 passed, 1 error in 0.20s ====", "unittest": "Ran 4 tests in 0.001s\n\nFAILED (failures=1)",
    "go": "--- FAIL: TestAdd (0.00s)\n    calc_test.go:9: got -1\nFAIL\nFAIL\tcalc\t0.003s",
    "cargo": "running 4 tests\ntest add ... FAILED\ntest result: FAILED. 3 passed; 1 failed; 0 ignored",
    "jest": "Tests:       1 failed, 3 passed, 4 total\nTime:        0.5 s", "vitest": " Tests  1 failed | 3 passed (4)",
    "mocha": "  3 passing (8ms)\n  1 failing\n\n  1) add:", "rspec": "Finished in 0.01 seconds\n4 examples, 1 failure",
    "phpunit": "There was 1 failure:\n\nFAILURES!\nTests: 4, Assertions: 4, Failures: 1.",
    "dotnet": "Failed!  - Failed:     1, Passed:     3, Skipped:     0, Total:     4", "tap": "# tests 4\n# pass  3\n# fail  1"}
# Passing runs whose output holds the word elsewhere: a test's name, a log line, a count of none.
PASSED_OUTPUTS = ["tests/test_auth.py::test_failed_login PASSED\n4 passed in 0.10s", "4 passed, 1 xfailed in 0.2s",
                  "WARNING: retry after connection failed\n4 passed in 1.0s", "Tests:       4 passed, 4 total",
                  "test result: ok. 4 passed; 0 failed; 0 ignored", "Ran 4 tests in 0.001s\n\nOK (expected failures=1)",
                  "ok  \tcalc\t0.002s", "4 examples, 0 failures", "  4 passing (9ms)", "# tests 4\n# pass  4\n# fail  0"]


@pytest.mark.parametrize("runner", sorted(FAILED_SUMMARIES))
def test_a_check_that_exits_0_while_its_output_reports_failures_failed(runner):
    """The check's result is its exit code and its own report, and both must say pass."""
    [claim], stretch = _session(EDIT, ("Bash", {"command": "./verify.sh"}, 0, FAILED_SUMMARIES[runner]))
    assert (claim.verdict, stretch.work) == ("contradicted", "failing"), (runner, claim, stretch)
    assert "reports failing tests" in claim.evidence


@pytest.mark.parametrize("output", PASSED_OUTPUTS)
def test_a_word_of_failure_outside_a_runners_summary_leaves_a_pass_standing(output):
    [claim], stretch = _session(EDIT, ("Bash", {"command": "./verify.sh"}, 0, output))
    assert (claim.verdict, stretch.work) == ("supported", "verified"), (output, claim, stretch)


# Each runner's summary of a passing run, as it prints it last.
PASSED_SUMMARIES = {
    "pytest": "collected 4 items\n\ntests/test_calc.py ....\n4 passed in 0.02s", "unittest": "....\n---\nRan 4 tests in 0.001s\n\nOK",
    "django": "Creating test database for alias 'default'...\n....\nRan 4 tests in 0.004s\n\nOK\nDestroying test database...",
    "go": "ok  \texample.com/calc\t0.002s", "cargo": "running 4 tests\ntest result: ok. 4 passed; 0 failed; 0 ignored",
    "jest": "Tests:       4 passed, 4 total\nTime:        0.5 s", "vitest": " Test Files  1 passed (1)\n      Tests  4 passed (4)",
    "mocha": "  4 passing (9ms)", "rspec": "Finished in 0.01 seconds\n4 examples, 0 failures",
    "minitest": "4 runs, 4 assertions, 0 failures, 0 errors, 0 skips", "ctest": "100% tests passed, 0 tests failed out of 4",
    "phpunit": "OK (4 tests, 4 assertions)", "dotnet": "Passed!  - Failed:     0, Passed:     4, Skipped:     0, Total:     4",
    "tap": "# tests 4\n# pass  4\n# fail  0", "bazel": "//:calc_test PASSED in 0.1s\nExecuted 1 out of 1 test: 1 test passes."}


# Lines that pass a check's output on as the runner printed it, or some of its last or first lines (`{c}`: the check).
SHOWN = ["{c} | tail -{n}", "{c} 2>&1 | tail -n {n}", "{c} | head -{m}", "{c} 2>&1 | tee test.log", "{c} | cat",
         "{c} || true", "{c} 2>&1 | tail -n +1 | head -n {m}", "cd /work/repo && {c} | tail -{n}", "{c} |& tail -{n}",
         "source .venv/bin/activate && {c} 2>&1 | tail -{n}", "bash -lc '{c} | tail -{n}'", "{c} || :"]
# Lines whose output may not be the runner's words: a rewriting filter, a byte cut, another file, a second program.
RESHOWN = ["{c} | sed s/failed/passed/", "{c} | grep -o '[0-9]* passed.*'", "{c} | tail -c {n}",
           "{c} | tail -{n} old.log",
           "{c} | awk '{{print}}'", "{c}; echo done", "echo '4 passed in 0.01s'; {c} | tail -0", "{c} | tail -n 0",
           "{c} | cut -c 1-80", "{c} | tail -{n} &", "! {c} | tail -{n}", "{c} | head -c {m}"]


def test_a_masked_run_whose_line_shows_the_runners_own_summary_is_judged_by_that_summary():
    """`pytest -q 2>&1 | tail -5` exits with tail's code, but what it shows is pytest's own summary: a pass that
    counts every test (pytest, unittest, jest, rspec, ctest, phpunit) backs the claim, a failure contradicts it.
    A line that may rewrite what the runner printed, or shows other words, stays no evidence; so does a summary
    printed once per package (go, cargo), where a cut can keep a later `ok` after an earlier FAIL."""
    import random
    draw = random.Random(13)
    checks = ["python -m pytest -q", "pytest", "./verify.sh", "uv run pytest -x", "npx jest", "python3 -m unittest"]
    counted = ["pytest", "unittest", "jest", "rspec", "ctest", "phpunit"]
    for form in SHOWN:
        for _ in range(3):
            line = form.format(c=draw.choice(checks), n=draw.randint(1, 40), m=draw.randint(40, 400))
            runner = draw.choice(counted)
            [claim], stretch = _session(EDIT, ("Bash", {"command": line}, 0, PASSED_SUMMARIES[runner]),
                                        folder="/work/repo")
            assert (claim.verdict, stretch.work) == ("supported", "verified"), (line, runner, claim.evidence)
            failed = FAILED_SUMMARIES.get(runner, FAILED_SUMMARIES["pytest -q"])
            [claim], stretch = _session(EDIT, ("Bash", {"command": line}, 0, failed), folder="/work/repo")
            assert (claim.verdict, stretch.work) == ("contradicted", "failing"), (line, runner, claim.evidence)
        for runner in ("go", "cargo"):  # one summary per package or binary
            line = form.format(c=draw.choice(checks), n=1, m=300)
            [claim], stretch = _session(EDIT, ("Bash", {"command": line}, 0, PASSED_SUMMARIES[runner]),
                                        folder="/work/repo")
            assert (claim.verdict, stretch.work) == ("unsupported", "unverified"), (line, runner, claim.evidence)
    for form in RESHOWN:
        for _ in range(3):
            line = form.format(c=draw.choice(checks), n=draw.randint(1, 40), m=draw.randint(40, 400))
            [claim], stretch = _session(EDIT, ("Bash", {"command": line}, 0, PASSED_SUMMARIES[draw.choice(counted)]),
                                        folder="/work/repo")
            assert (claim.verdict, stretch.work) == ("unsupported", "unverified"), (line, claim.evidence)
    plain = au.Rules()  # chapter 09's own rules take no masked pass
    assert plain.own_exit_code("pytest -q | tail -5", PASSED_SUMMARIES["pytest"]) is None


# A line that ends by printing the check's own exit code (`{c}`: the check; `{e}`: the words around the code).
ECHOED = ["{c}; echo \"{e}$?\"", "{c}; echo {e}$?", "{c} 2>&1 | tail -{n}; echo \"{e}${{PIPESTATUS[0]}}\"",
          "cd /work/repo && {c}; echo \"{e}$?\"", "bash -lc '{c}; echo \"{e}$?\"'"]


def test_a_line_that_prints_the_checks_own_exit_code_last_is_judged_by_that_code():
    """`npm test; echo "exit: $?"` ends with `echo`'s exit code, but prints the check's: 0 backs the claim whatever
    the runner printed before it (unless its summary reports failures), and any other code contradicts it. A code
    that is not the check's (`$?` after a pipe), or a line printed after the code, leaves the run no evidence."""
    import random
    draw = random.Random(14)
    checks = ["python -m pytest -q", "./verify.sh", "npm test", "go test ./...", "cargo test", "make test"]
    for form in ECHOED:
        for _ in range(4):
            words = draw.choice(["exit: ", "EXIT=", "Exit code: ", "status "])
            line = form.format(c=draw.choice(checks), e=words, n=draw.randint(1, 30))
            ran = draw.choice([*PASSED_SUMMARIES.values(), "> calc@1.0.0 test\n> node --test", ""])
            host = draw.choice(["", "Process Group PGID: 9785\n</untrusted_context>\n"])  # Gemini's fields after it
            [claim], stretch = _session(EDIT, ("Bash", {"command": line}, 0, f"{ran}\n{words}0\n{host}"),
                                        folder="/work/repo")
            assert (claim.verdict, stretch.work) == ("supported", "verified"), (line, ran, claim.evidence)
            failed = draw.choice(list(FAILED_SUMMARIES.values()))
            [claim], stretch = _session(EDIT, ("Bash", {"command": line}, 0, f"{failed}\n{words}1\n"),
                                        folder="/work/repo")
            assert (claim.verdict, stretch.work) == ("contradicted", "failing"), (line, failed, claim.evidence)
            broken = f"ImportError: no module named calc\n{words}2\n"  # no summary: the printed code says it failed
            [claim], stretch = _session(EDIT, ("Bash", {"command": line}, 0, broken), folder="/work/repo")
            assert (claim.verdict, stretch.work) == ("contradicted", "failing"), (line, claim.evidence)
            [claim], stretch = _session(EDIT, ("Bash", {"command": line}, 0, f"{ran}\n{words}0\nmore\n"),
                                        folder="/work/repo")
            assert (claim.verdict, stretch.work) == ("unsupported", "unverified"), (line, ran, claim.evidence)
    for line in ("python -m pytest -q | tail -3; echo \"exit: $?\"", "python -m pytest -q; echo exit: $? done; ls"):
        [claim], stretch = _session(EDIT, ("Bash", {"command": line}, 0, "4 passed in 0.02s\nexit: 0\n"),
                                    folder="/work/repo")
        assert (claim.verdict, stretch.work) == ("unsupported", "unverified"), (line, claim.evidence)


def _unnamed_runners(n: int, seed: int) -> list[str]:
    """Command lines that run one program no check pattern names (a script of the repository, a task runner's verb, a
    framework's own command, a wrapper), in the forms a host records them: after a `cd` into the repository, given
    to a shell with `-lc`, with options that select nothing."""
    import random
    draw = random.Random(seed)
    name = lambda: draw.choice(["run_tests", "runtests", "ci", "qa", "all_checks", "t", "check-all", "test_all"])
    verb = lambda: draw.choice(["spec", "ci", "unit", "qa", "all", "tests"])
    forms = [lambda: f"./{name()}.sh", lambda: f"bash scripts/{name()}.sh", lambda: f"python3 {name()}.py",
             lambda: "python manage.py test", lambda: f"rake {verb()}", lambda: f"just {verb()}",
             lambda: f"hatch run {verb()}", lambda: f"bin/{name()}", lambda: f"node scripts/{name()}.js",
             lambda: f"make {verb()}", lambda: f"xvfb-run ./{name()}.sh", lambda: f"tools/{name()} -v"]
    lines = {draw.choice(forms)() for _ in range(n)}
    return sorted(lines | {f"cd /work/repo && {line}" for line in draw.sample(sorted(lines), 3)}
                  | {f"bash -lc '{line}'" for line in draw.sample(sorted(lines), 3)})


def test_chapter_09s_plain_rule_counts_a_program_alone_whose_last_word_is_the_runners_summary():
    """The chapter's own `Rules.tested`: pytest's and unittest's summaries, the program alone on its line, nothing printed
    after a pass; `--check` names the only checks."""
    plain = au.Rules()
    assert plain.tested("./run_tests.sh", "....\n4 passed in 0.02s\n") == ()
    assert plain.tested("python manage.py test", "Ran 4 tests in 0.001s\n\nOK\n") == ()
    assert plain.tested("./run_tests.sh", "1 failed, 3 passed in 0.1s\n") == ()  # a failing check
    assert plain.tested("cd ../x; ./run_tests.sh", "4 passed in 0.02s") is None
    assert plain.tested("make all", "4 passed in 0.02s\ncp templates/calc.py.in calc.py\n") == "then"  # went on after
    assert plain.tested("./run_tests.sh | tail -1", "4 passed in 0.02s") is None
    assert plain.tested("./run_tests.sh", "Generated calc.py") is None
    assert plain.tested("", "4 passed in 0.02s") is None  # a tool with no command line (an MCP server's) ran nothing
    assert au.Rules(checks=(r"make ci",)).tested("./run_tests.sh", "4 passed in 0.02s") is None


@pytest.mark.parametrize("runner", sorted(PASSED_SUMMARIES))
def test_a_program_no_pattern_names_that_ran_the_tests_is_a_check(runner):
    """What a program did decides, not its name: a command that may have written, whose output ends with a test
    runner's own summary, ran the tests. Passing, it verifies the work; exiting non-zero, or reporting failures, it
    leaves the work failing, as a check named on the list would."""
    for command in _unnamed_runners(14, len(runner)):
        call = ("Bash", {"command": command}, 0, PASSED_SUMMARIES[runner])
        [claim], stretch = _session(EDIT, call, folder="/work/repo")
        assert (claim.verdict, stretch.work) == ("supported", "verified"), (command, runner, claim)
        [claim], stretch = _session(EDIT, call[:2] + (1, PASSED_SUMMARIES[runner]), folder="/work/repo")
        assert (claim.verdict, stretch.work) == ("contradicted", "failing"), (command, runner, claim)
        [claim], stretch = _session(EDIT, call, ("Bash", {"command": command}, 0, "Generated calc.py"), folder="/work/repo")
        assert (claim.verdict, stretch.work) == ("stale", "unverified"), (command, runner, claim)  # no summary: an edit


@pytest.mark.parametrize("runner", sorted(FAILED_SUMMARIES))
def test_a_program_no_pattern_names_whose_output_reports_failures_failed(runner):
    for command in _unnamed_runners(6, len(runner)):
        [claim], stretch = _session(EDIT, ("Bash", {"command": command}, 0, FAILED_SUMMARIES[runner]), folder="/work/repo")
        assert (claim.verdict, stretch.work) == ("contradicted", "failing"), (command, runner, claim)


@pytest.mark.parametrize("spoil", ["{c} | tail -5", "{c}; echo done", "{c} && make gen", "make gen; {c}", "{c} &",
                                   "! {c}", "{c} || true", "cd ../other && {c}", "cd /tmp && {c}", "bash -lc 'cd .. && {c}'",
                                   "{c} ../other/tests", "cd $(mktemp -d) && {c}"])
def test_a_program_that_ran_the_tests_counts_only_as_far_as_its_line_shows_the_summary_to_be_its_own(spoil):
    """A pipe, a second program, the background, a negation: the summary need not be the line's last word, nor its
    exit code the runner's. Another folder's run checks another tree. Each leaves the work unverified."""
    for command in [c for c in _unnamed_runners(8, len(spoil)) if not c.startswith(("cd ", "bash -lc"))]:
        line = spoil.format(c=command)  # (the plain forms: a line already in a folder or a shell is taken as it is)
        _claims, stretch = _session(EDIT, ("Bash", {"command": line}, 0, PASSED_SUMMARIES["pytest"]), folder="/work/repo")
        assert stretch.work == "unverified", (line, stretch)


@pytest.mark.parametrize("after", ["cp templates/calc.py.in calc.py", "python3 tools/gen.py --write", "./gen.sh",
                                   "Generating calc.py from its template", "sed -i 's/+/-/' calc.py", "All checks done."])
def test_a_program_that_printed_more_after_the_summary_may_have_written_after_its_tests(after):
    """`make` echoes each command of its recipe: a line after the runner's summary is work done after the tests, so the
    program stays an edit that may have written. What runners and hosts print after a summary leaves it a check."""
    for command in ("make all", "just build", "./ci.sh"):
        output = f"{PASSED_SUMMARIES['pytest']}\n{after}\n"
        [claim], stretch = _session(EDIT, ("Bash", {"command": command}, 0, output), folder="/work/repo")
        assert (claim.verdict, stretch.work) == ("unsupported", "unverified"), (command, after, claim)
        assert claim.evidence.endswith(f"{command} ran the tests, then went on: may have written"), claim.evidence
    for trailer in ("Time:        0.5 s\nRan all test suites.", "Total Test time (real) =   0.01 sec", "\n\n", "====",
                    "ok  \tcalc/sub\t0.003s\n?   \tcalc/cmd\t[no test files]", "Randomized with seed 1234",
                    "Process Group PGID: 11531\n</untrusted_context>", "make[1]: Leaving directory '/work/repo'"):
        output = f"{PASSED_SUMMARIES['pytest']}\n{trailer}\n"
        [claim], stretch = _session(EDIT, ("Bash", {"command": "make all"}, 0, output), folder="/work/repo")
        assert (claim.verdict, stretch.work) == ("supported", "verified"), (trailer, claim)


@pytest.mark.parametrize("command", ["ssh ci-box pytest -q", "docker run --rm img python -m pytest", "podman run img npm test",
                                     "kubectl exec pod-1 -- pytest", "vagrant ssh -c ./verify.sh", "docker compose run app pytest",
                                     "bash -lc 'ssh build pytest'"])
def test_a_program_given_a_check_to_run_runs_it_where_it_decides(command):
    """Another machine, an image's copy of the code: the runner's summary it prints is no check of this tree."""
    [claim], stretch = _session(EDIT, ("Bash", {"command": command}, 0, PASSED_SUMMARIES["pytest"]), folder="/work/repo")
    assert (claim.verdict, stretch.work) == ("unsupported", "unverified"), (command, claim)


@pytest.mark.parametrize("command", ["python3 -c 'print(\"4 passed in 0.01s\")'", "node -e 'console.log(1)'",
                                     "cat .pytest_log", "tail -3 test.log", "echo '4 passed in 0.01s'",
                                     "python3 - <<'EOF'\nprint('4 passed in 0.01s')\nEOF"])
def test_printed_words_are_no_run_of_the_tests(command):
    """Code given inline or on a program's input prints what it is told to, and a reading program shows an old run:
    neither ran the tests."""
    [claim], stretch = _session(EDIT, ("Bash", {"command": command}, 0, PASSED_SUMMARIES["pytest"]), folder="/work/repo")
    assert (claim.verdict, stretch.work) == ("unsupported", "unverified"), (command, claim)


def test_a_program_that_ran_the_tests_selects_by_its_words_and_is_not_the_operators_once_the_session_wrote_it():
    """`python manage.py test calc.tests.AddTest` ran one test class; a script the session wrote, then ran, is not the
    operator's check; running the same script again changes nothing of it; `--check` names the only check."""
    django = PASSED_SUMMARIES["django"]
    [claim], stretch = _session(EDIT, ("Bash", {"command": "python manage.py test calc.tests.AddTest"}, 0, django))
    assert (claim.verdict, stretch.work) == ("unsupported", "unverified") and "ran only" in claim.evidence, claim
    run = ("Bash", {"command": "./run_tests.sh"}, 0, PASSED_SUMMARIES["pytest"])
    [claim], stretch = _session(EDIT, run, EDIT, run)
    assert (claim.verdict, stretch.work) == ("supported", "verified"), claim
    wrote = ("Bash", {"command": "chmod +x run_tests.sh && sed -i 's/-q//' run_tests.sh"}, 0)
    [claim], stretch = _session(wrote, EDIT, run)
    assert (claim.verdict, stretch.work) == ("unsupported", "unverified") and "changed the check" in claim.evidence
    [claim], stretch = _session(EDIT, run, checks=(r"^make ci$",))
    assert (claim.verdict, stretch.work) == ("unsupported", "unverified"), claim


def _looks_only(n: int, seed: int) -> list[tuple[str, str]]:
    """(a command that only looks at the code, the same told to write): checkers and formatters, run directly or
    through a runner (whether that runner would find the tool is not the audit's question), with the options that
    keep them looking, or writing."""
    import random
    draw = random.Random(seed)
    runs = ["{}", "uv run {}", "poetry run {}", "npx {}", "python -m {}", "timeout 60 {}"]
    tools = [("mypy calc.py", "mypy calc.py > calc.pyi"), ("ruff check .", "ruff check --fix ."),
             ("ruff format --check .", "ruff format ."), ("black --check -q .", "black -q ."),
             ("isort --diff calc.py", "isort calc.py"), ("eslint src", "eslint --fix src"),
             ("prettier --check .", "prettier --write ."), ("eslint .", "eslint --init"),
             ("flake8 --max-line-length 100", "flake8 > report.txt"),
             ("pylint calc.py", "pylint calc.py --output=lint.txt"), ("tsc --noEmit", "tsc --declaration"),
             ("mypy --strict .", "mypy --junit-xml report.xml ."), ("gofmt -l .", "gofmt -d -w ."),
             ("bandit -r src", "bandit -r src -o bandit.json")]
    found = set()
    for _ in range(n):
        run, (looks, writes) = draw.choice(runs), draw.choice(tools)
        found.add((run.format(looks), run.format(writes)))
    return sorted(found)


@pytest.mark.parametrize("looks,writes", _looks_only(24, 3))
def test_a_checker_that_only_looks_leaves_the_pass_standing_and_one_told_to_write_does_not(looks, writes):
    [claim], stretch = _session(EDIT, PASS, ("Bash", {"command": looks}, 0), folder="/work/repo")
    assert (claim.verdict, stretch.work) == ("supported", "verified"), (looks, claim)
    [claim], stretch = _session(EDIT, PASS, ("Bash", {"command": writes}, 0), folder="/work/repo")
    assert (claim.verdict, stretch.work) == ("stale", "unverified"), (writes, claim)


@pytest.mark.parametrize("program", ["python3", "node", "npm", "cargo", "make", "terraform", "gh", "whatever-tool"])
def test_a_question_to_any_program_changes_nothing_but_any_work_it_is_given_may(program):
    for question in ("--version", "-V", "--help", "-h"):
        [claim], stretch = _session(EDIT, PASS, ("Bash", {"command": f"{program} {question}"}, 0), folder="/work/repo")
        assert stretch.work == "verified", (program, question, claim)
    for work in ("version patch", "run", "build", "gen", "help"):
        [claim], stretch = _session(EDIT, PASS, ("Bash", {"command": f"{program} {work}"}, 0), folder="/work/repo")
        assert stretch.work == "unverified", (program, work, claim)


def test_a_package_managers_report_changes_nothing_but_its_other_verbs_and_a_redirect_may():
    """`pip list`, `npm ls`, `cargo tree`, ... (every entry of `QUERIES`, with an option or a name) read the
    environment and print: the pass stands. The same report redirected into a file, and the same tools' verbs that
    install, update or remove, may have changed the tree."""
    from donegate.claims import QUERIES
    for query in sorted(QUERIES):
        for command in (" ".join(query), " ".join(query) + " --json", " ".join(query) + " pytest"):
            [claim], stretch = _session(EDIT, PASS, ("Bash", {"command": command}, 0), folder="/work/repo")
            assert stretch.work == "verified", (command, claim.evidence)
        [claim], stretch = _session(EDIT, PASS, ("Bash", {"command": " ".join(query) + " > deps.txt"}, 0),
                                    folder="/work/repo")
        assert stretch.work == "unverified", (query, claim.evidence)
    for command in ("npm install", "npm update", "npm ci", "pip download pytest", "uv sync",
                    "uv lock", "cargo update", "cargo build", "go get example.com/x", "go mod tidy", "poetry lock",
                    "npm run lint", "npm version patch", "uv pip compile pyproject.toml -o reqs.txt"):
        [claim], stretch = _session(EDIT, PASS, ("Bash", {"command": command}, 0), folder="/work/repo")
        assert stretch.work == "unverified", (command, claim.evidence)


@pytest.mark.parametrize("command,work", [
    ("env | grep PATH", "verified"), ("printenv HOME", "verified"), ("FOO=1", "verified"), ("ps aux | grep pytest", "verified"),
    ("git -C /work/repo status", "verified"), ("git -c color.ui=never diff HEAD", "verified"), ("git stash list", "verified"),
    ("sha256sum calc.py", "verified"), ("sort calc.py | uniq", "verified"), ("sed -n 1,5p calc.py", "verified"),
    ("git stash", "unverified"), ("git -C . checkout -- calc.py", "unverified"), ("env python3 gen.py", "unverified"),
    ("sort -o calc.py calc.py", "unverified"), ("uniq calc.py calc2.py", "unverified"), ("tree -o tree.txt", "unverified"),
    ("sed -i.bak s/+/-/ calc.py", "unverified"), ("bash -lc 'cat calc.py'", "verified"),
    ("/bin/bash -lc 'git status && git diff'", "verified"), ("sh -c 'ls -la | head'", "verified"),
    ("bash -lc 'cat calc.py > calc2.py'", "unverified"), ("bash -lc 'ls' > files.txt", "unverified"),
    ("zsh -ec 'python3 gen.py'", "unverified"), ("awk '/def /' calc.py", "verified"),
    ("awk -F: -v n=2 'NR <= n { print $1 }' calc.py", "verified"), ("awk '$2 > 1 || /add/' calc.py", "verified"),
    ("awk '{ print > \"calc.py\" }' x", "unverified"), ("awk 'BEGIN { system(\"python3 gen.py\") }'", "unverified"),
    ("awk '{ print | \"sh\" }' cmds", "unverified"), ("gawk -i inplace '{ sub(/-/, \"+\") } 1' calc.py", "unverified"),
    ("awk -f fix.awk calc.py", "unverified"), ("awk '@include \"w.awk\"' x", "unverified"),
    ("diff <(git show HEAD:calc.py) calc.py", "verified"), ("cat <(ls) <(git status -s)", "verified"),
    ("diff <(python3 gen.py) calc.py", "unverified"), ("tee >(cat > calc.py) < x", "unverified")])
def test_a_reading_program_reads_unless_told_to_write_and_git_is_read_past_its_options(command, work):
    """After the passing check: a reading program, a git verb that reads (past `-C PATH`, `-c KEY=VALUE`), variables
    set alone, an awk program that only prints, a process substitution of a reading command change nothing; the same
    programs told to write a file (`sort -o`, `uniq IN OUT`, `sed -i`, awk's `print >`, `system()`) may have."""
    _claims, stretch = _session(EDIT, PASS, ("Bash", {"command": command}, 0), folder="/work/repo")
    assert stretch.work == work, (command, stretch)


@pytest.mark.parametrize("command,work", [
    ("bash -c 'cd ../other && python3 -m pytest -q'", "unverified"), ("sh -c \"cd /tmp/x && ./verify.sh\"", "unverified"),
    ("python -m pytest -q ../other/tests", "unverified"), ("pytest /work/other/tests", "unverified"),
    ("sh ../other/verify.sh", "unverified"), ("cd sub && bash -c 'cd .. && ./verify.sh'", "verified"),
    ("bash -c './verify.sh'", "verified"), ("python -m pytest -q tests/ --junitxml /tmp/report.xml", "verified"),
    ("pytest /work/repo/tests", "verified"), ("make -C ../lib && ./verify.sh", "verified"),
    ("mkdir -p ../out && python -m pytest -q", "verified"), ("git -C ../other stash && ./verify.sh", "verified"),
    ("gradle -p ../other test", "unverified"), ("./gradlew --project-dir=/work/other check", "unverified"),
    ("../other/verify.sh", "unverified"), ("/work/other/verify.sh", "unverified"), ("/work/repo/verify.sh", "verified"),
    ("scripts/../verify.sh", "verified"), ("../other/.venv/bin/pytest -q", "verified"), ("/usr/bin/pytest -q", "verified"),
    ("~/.local/bin/pytest", "verified"), ("node_modules/.bin/jest", "verified")])
def test_a_check_counts_where_its_shell_line_and_its_paths_take_it(command, work):
    """A check given a path outside the session's folder, run by a shell given a line that goes there, or a project's
    script run by its path from another folder (`../other/verify.sh`), checked another tree; an option's value (a
    report file) is not where it runs, nor is the `bin` folder a test runner is installed in."""
    _claims, stretch = _session(EDIT, ("Bash", {"command": command}, 0), folder="/work/repo")
    assert stretch.work == work, (command, stretch)


AWAY = ["../other", "/tmp/w", "~", '"$(mktemp -d)"', "$(mktemp -d)", "`mktemp -d`", "$WORKDIR"]  # no place here
CHECKS = ["./verify.sh", "python -m pytest -q", "npm test"]


def _moves(away: list[str], forms: list[str]) -> list[str]:
    """Every place in `away` in every form (a check given as {c} in it), the checks taken in turn."""
    return [form.format(a=a, c=CHECKS[i % len(CHECKS)]) for i, (a, form) in enumerate(
        (a, form) for a in away for form in forms)]


@pytest.mark.parametrize("command", _moves(AWAY, ["cd {a} && {c}", "(cd {a}; {c})", "pushd {a} && {c}; popd",
                                                  "cd {a} && cd sub && {c}"]))
def test_a_check_run_in_a_folder_not_known_to_be_the_sessions_backs_nothing(command):
    """A check that ran in another folder, or one the audit cannot name (a variable, a command's output), checked
    no tree known to be this one."""
    _claims, stretch = _session(EDIT, ("Bash", {"command": command}, 0), folder="/work/repo")
    assert stretch.work == "unverified", (command, stretch)


def _claude_records(cwds: list[str], command: str, tmp_path: Path) -> Path:
    """A Claude Code session file: the fix, then `command` passing, each record written in the folder `cwds`
    gives it (the session's own first), as Claude Code writes the folder its shell is in on every record."""
    records, at = [], iter(cwds)

    def record(kind: str, content, cwd: str) -> None:
        records.append({"type": kind, "sessionId": "s", "uuid": f"u{len(records)}", "cwd": cwd,
                        "timestamp": "2026-12-01T10:00:00.000Z", "message": {"role": kind, "content": content}})
    home = next(at)
    record("user", "Fix add().", home)
    calls = [("Edit", {"file_path": f"{home}/calc.py", "old_string": "-", "new_string": "+"}, "updated"),
             ("Bash", {"command": command}, "....\n4 passed in 0.02s")]
    for i, (tool, given, output) in enumerate(calls):
        cwd = next(at, home)
        record("assistant", [{"type": "tool_use", "id": f"t{i}", "name": tool, "input": given}], cwd)
        record("user", [{"type": "tool_result", "tool_use_id": f"t{i}", "content": output}], cwd)
    record("assistant", [{"type": "text", "text": "All tests pass now."}], home)
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.parametrize("where, work, command", [
    (where, work, command) for where, work in [("/work/repo", "verified"), ("/work/repo/tests/unit", "unverified"),
                                                ("/work/repo/sub", "unverified"), ("/work/other", "unverified"),
                                                ("/work/repo/../other", "unverified"), ("/tmp/w", "unverified")]
    for command in CHECKS if not (command == "./verify.sh" and where.startswith("/work/repo/"))])
def test_a_claude_code_call_runs_in_the_folder_its_record_names(where, work, command, tmp_path):
    """Claude Code's shell keeps a folder a `cd` moved it to (inside the project) for the calls after, and writes
    the folder it is in on every record: a runner given no path from a subfolder ran that subfolder's tests only, a
    check made from another folder checked another tree. The session's own folder is the first record's. (A script
    of the project run from a subfolder decides for itself where it looks, as on one line: `cd sub && ./verify.sh`.)"""
    result = tr.audit_transcript(_claude_records(["/work/repo", "/work/repo", where], command, tmp_path))
    assert (result.work[-1].work, result.exit_code) == (work, 0 if work == "verified" else 1), (where, command)


# (An unquoted `$(...)` after the check reads as a subshell there, whose exit code would be the line's: the safe side.)
@pytest.mark.parametrize("command", _moves([a for a in AWAY if not a.startswith("$(")], [
    "(cd {a} && make) && {c}", "pushd {a}; popd; {c}", "cd {a}; cd -; {c}", "{c} && cd {a}"]) + [
    'cd "$(git rev-parse --show-toplevel)" && ./verify.sh', "cd $(git rev-parse --show-toplevel) && npm test",
    "(cd tests && python -m pytest -q)"] + [
    form.format(p=place, c=check) for place in (".", "/work/repo", "tests") for check in CHECKS
    for form in ("pushd {p} && {c} && popd", "pushd {p} > /dev/null && {c} && popd > /dev/null")])
def test_a_check_run_back_in_the_sessions_folder_counts(command):
    """A subshell's `cd` ends with it, `popd` and `cd -` come back (and change no file: `pytest && popd` is the check's
    own exit code), a `cd` after the check moves nothing it ran, and the repository's top (`git rev-parse --show-toplevel`) is the session's repository."""
    _claims, stretch = _session(EDIT, ("Bash", {"command": command}, 0), folder="/work/repo")
    assert stretch.work == "verified", (command, stretch)


def _writes_elsewhere(n: int, seed: int) -> list[str]:
    """Commands that change files only under one full path outside /work/repo (`{0}` marks it): redirections,
    `tee`, copies, links, removals, in many forms. A look-alike sibling (`/work/repo-old`) is outside too."""
    import random
    draw = random.Random(seed)
    forms = ["echo {word} > {{0}}/run{n}.log", "ls -la >> {{0}}/listing{n}.txt 2>&1", "cat calc.py | tee {{0}}/calc{n}.txt",
             "cp calc.py tests/test_calc.py {{0}}/", "rm -rf {{0}}/build{n}", "mkdir -p {{0}}/x{n} && touch {{0}}/x{n}/stamp",
             "ln -sf /work/repo/calc.py {{0}}/calc{n}.py", "git diff > {{0}}/fix{n}.patch", "cp -r src {{0}}/src{n} && ls {{0}}"]
    return sorted({draw.choice(forms).format(word=draw.choice(["done", "ok", "1"]), n=draw.randint(0, 99))
                   for _ in range(n)})


@pytest.mark.parametrize("command", _writes_elsewhere(10, 7))
@pytest.mark.parametrize("place", ["/tmp", "/var/tmp/run", "/work/repo-old", "/home/me/scratch"])
def test_a_command_that_writes_only_outside_the_repository_leaves_the_pass_standing(command, place):
    """After the passing check, a command whose every written file is a full path outside the folder the session
    ran in leaves the work verified. The same command writing in the repository (a full path in it, a relative
    path, `~`), or in a session whose folder is not known, may have changed the work."""
    outside = command.format(place)
    [claim], stretch = _session(EDIT, PASS, ("Bash", {"command": outside}, 0), folder="/work/repo")
    assert (claim.verdict, stretch.work) == ("supported", "verified"), (outside, claim)
    [claim], stretch = _session(EDIT, PASS, ("Bash", {"command": outside}, 0), folder=None)
    assert (claim.verdict, stretch.work) == ("stale", "unverified"), (outside, claim)
    for inside in ("/work/repo/out", "out", "~/repo"):
        [claim], stretch = _session(EDIT, PASS, ("Bash", {"command": command.format(inside)}, 0), folder="/work/repo")
        assert (claim.verdict, stretch.work) == ("stale", "unverified"), (command.format(inside), claim)


@pytest.mark.parametrize("command", ["mv calc.py /tmp/", "cp /tmp/calc.py calc.py", "touch", "cp -t /tmp calc.py",
                                     "echo x > $TMPDIR/log", "python3 tools/gen.py > /tmp/out", "tee /tmp/a calc.py",
                                     "rsync -a /tmp/x/ .", "ln -s /tmp/a b"])
def test_a_command_that_may_change_a_file_of_the_repository_is_an_edit_even_beside_outside_paths(command):
    """A move takes its source away, a copy or a link into the repository writes there, a path that is not a full
    one may be inside, and a program not known to change only what it names may write anywhere."""
    [claim], stretch = _session(EDIT, PASS, ("Bash", {"command": command}, 0), folder="/work/repo")
    assert (claim.verdict, stretch.work) == ("stale", "unverified"), (command, claim)


@pytest.mark.parametrize("command", ["./verify.sh &", "! ./verify.sh", "(./verify.sh &)", "nohup ./verify.sh > log &",
                                     "cd . && ! python3 -m pytest -q", "python -m pytest -q & wait", "bash -c '! pytest'",
                                     "./verify.sh && sed -i 's/+/-/' calc.py", "python -m pytest -q && black ."])
def test_a_check_whose_exit_code_is_not_its_own_backs_nothing(command):
    """In the background the command line ends at once with 0; negated, a failing suite exits 0; followed on its line
    by a command that may write, the pass is not about the tree the line left: no evidence."""
    [claim], stretch = _session(EDIT, ("Bash", {"command": command}, 0))
    assert claim.verdict == "unsupported" and "not the check's own" in claim.evidence, claim
    assert stretch.work == "unverified"


@pytest.mark.parametrize("command", ["! ./verify.sh", "python -m pytest -q && black .", "pytest -q | grep FAIL"])
def test_a_check_whose_line_exits_non_zero_for_another_command_contradicts_nothing(command):
    """The same lines exiting 1 while the check's own output reports a pass (`!` of a passing suite, black failing
    after it, grep finding no failure): the exit code is not the check's, so the claim is unsupported, as the work is
    unverified, not contradicted."""
    [claim], stretch = _session(EDIT, ("Bash", {"command": command}, 1, "4 passed in 0.02s"))
    assert claim.verdict == "unsupported" and "not the check's own" in claim.evidence, claim
    assert stretch.work == "unverified"


@pytest.mark.parametrize("command", ["./verify.sh && git add -A && git commit -qm fix", "./verify.sh 2>&1",
                                     "cd tests && pytest -q && cd ..", "[ ! -f x ] && ./verify.sh", "pytest -q &> log"])
def test_a_check_followed_only_by_reading_commands_on_its_line_still_counts(command):
    [claim], stretch = _session(EDIT, ("Bash", {"command": command}, 0))
    assert (claim.verdict, stretch.work) == ("supported", "verified"), claim


@pytest.mark.parametrize("command,home,work", [
    ("cd /tmp && ./verify.sh", "/work/repo", "unverified"), ("cd /work/other && pytest -q", "/work/repo", "unverified"),
    ("pytest -q --rootdir=/srv/x", "/work/repo", "unverified"), ("cd /work/repo2 && ./verify.sh", "/work/repo", "unverified"),
    ("cd .. && cd repo && ./verify.sh", "/work/repo", "verified"), ("cd /work/repo/tests/.. && ./verify.sh", "/work/repo", "verified"),
    ("cd /work/repo && ./verify.sh", "/work/repo", "verified"), ("cd /tmp && ./verify.sh", None, "verified")])
def test_a_full_path_counts_for_the_repository_only_inside_the_folder_the_session_ran_in(command, home, work):
    """Where the transcript says where the session ran (Claude Code's cwd, Codex's session_meta), a check in a full
    path outside it checks another tree; where it does not (Gemini), a full path is taken to be the repository."""
    _claims, stretch = _session(EDIT, ("Bash", {"command": command}, 0), folder=home)
    assert stretch.work == work, stretch


@pytest.mark.parametrize("host", ["claude-code", "codex", "gemini"])
def test_the_reader_keeps_the_folder_the_session_ran_in_and_the_audit_judges_full_paths_from_it(host, tmp_path):
    """Claude Code and Codex record the session's folder; Gemini CLI names it in its own folder for the project and in
    the full paths its tool calls give. A check run from a full path outside it is no evidence about this tree."""
    original = FIXTURES[f"{host}/supported"]
    where = original.relative_to(TRANSCRIPTS / host / "supported")  # Gemini: .gemini/tmp/<project>/chats/...
    assert tr.read_transcript(original).folder == "/work/repo"
    for folder, verdict in (("/tmp", "unsupported"), ("/work/repo", "supported"), ("/work/repo/sub", "supported")):
        path = tmp_path / folder.strip("/").replace("/", "-") / where
        path.parent.mkdir(parents=True)
        path.write_text(original.read_text().replace("./verify.sh", f"cd {folder} && ./verify.sh"))
        result = tr.audit_transcript(path)
        assert [c.verdict for c in result.claims] == [verdict], (folder, result.claims)
        assert result.exit_code == (0 if verdict == "supported" else 1)


@pytest.mark.parametrize("folder,verdict", [("/tmp", "unsupported"), ("/work/repo", "supported"), ("sub", "supported")])
def test_codex_s_working_folder_for_a_command_is_read_from_the_transcript(folder, verdict, tmp_path):
    """Codex's exec_command names the folder it runs in (`workdir`) beside the command line: the reader keeps it."""
    original = FIXTURES["codex/supported"]
    text = original.read_text()
    mark = '{\\"cmd\\": \\"./verify.sh\\",'
    assert mark in text
    path = tmp_path / original.name
    path.write_text(text.replace(mark, mark[:-1] + f', \\"workdir\\": \\"{folder}\\",'))
    [call] = [s for s in tr.read_transcript(path).steps if s.kind == "call" and "verify" in s.command]
    assert call.input.get("workdir") == folder
    assert [c.verdict for c in tr.audit_transcript(path).claims] == [verdict]


def test_gemini_s_folder_is_the_one_on_its_paths_that_bears_the_project_s_name(tmp_path):
    """~/.gemini/tmp/<name>/chats/: the folder named <name> (a -N suffix aside) on the full paths the calls give;
    none when no path, or more than one folder, bears that name."""
    steps = [tr.Step("call", tool="write_file", input={"file_path": "/srv/app/src/app/calc.py"}),
             tr.Step("call", tool="read_file", input={"absolute_path": "/srv/app/README.md"})]
    chats = tmp_path / ".gemini" / "tmp" / "app-2" / "chats"
    assert tr.gemini_folder(chats / "session-1.jsonl", steps[1:]) == "/srv/app"
    assert tr.gemini_folder(chats / "session-1.jsonl", steps) is None  # /srv/app and /srv/app/src/app
    assert tr.gemini_folder(tmp_path / "session-1.jsonl", steps[1:]) is None  # not where Gemini keeps them


@pytest.mark.parametrize("change", [
    ("Write", {"file_path": "/work/repo/verify.sh", "content": "#!/bin/sh\nexit 0\n"}, 0),
    ("Bash", {"command": "sed -i 's/pytest/true/' verify.sh"}, 0),
    ("Bash", {"command": "cat > verify.sh <<'EOF'\nexit 0\nEOF"}, 0)])
def test_a_pass_of_a_check_the_session_changed_is_no_evidence(change):
    """The check is the operator's: its script written or edited in the session (by a tool or by the shell), the pass
    that follows backs nothing, and the work is unverified."""
    [claim], stretch = _session(EDIT, change, ("Bash", {"command": "./verify.sh"}, 0))
    assert claim.verdict == "unsupported" and "changed the check's own script" in claim.evidence, claim
    assert stretch.work == "unverified"


@pytest.mark.parametrize("command", ["pip install pytest", "cat verify.sh", "grep -rn pytest .", "echo tox",
                                     "which pytest", "python3 -m pip install pytest"])
def test_a_command_that_only_names_the_check_backs_no_claim(command):
    [claim], stretch = _session(EDIT, ("Bash", {"command": command}, 0))
    assert claim.verdict != "supported" and stretch.work == "unverified", claim


@pytest.mark.parametrize("cwd", ["repo", "", "./work/repo"])
def test_a_folder_the_transcript_gives_as_no_full_path_says_nowhere(cwd, tmp_path):
    """A session record whose `cwd` is not a full path names no folder: a check run from a full path is then taken
    to be this repository, as where none is recorded, and the audit reads on (it raised on mixing paths)."""
    original = FIXTURES["claude-code/supported"]
    import re
    text = re.sub(r'"cwd": ?"/work/repo"', f'"cwd": "{cwd}"', original.read_text())
    path = tmp_path / original.name
    path.write_text(text.replace("./verify.sh", "cd /tmp && ./verify.sh"))
    result = tr.audit_transcript(path)
    assert result.imported.folder is None and [c.verdict for c in result.claims] == ["supported"]


def test_the_plot_draws_a_pass_that_ran_no_test_as_an_empty_circle():
    """A check that passed having run nothing is not drawn as the filled circle of a real pass."""
    from collections import Counter

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    for output, filled in (("Ran 0 tests in 0.000s\n\nOK\n", False), ("4 passed in 0.02s\n", True)):
        rules = AuditRules()
        imported = tr.Imported("claude-code", Path("s.jsonl"), "s", [
            tr.Step("prompt", text="Fix add."),
            tr.Step("call", call_id="c0", tool="Bash", input={"command": "./verify.sh"}, action="shell",
                    command="./verify.sh"),
            tr.Step("result", call_id="c0", tool="Bash", exit_code=0, ok=True, text=output)], Counter(), [])
        ax = au.plot_audit(au.audit_session(imported, tr.outline(imported), rules))
        [check] = [c for c in ax.collections if len(c.get_offsets()) and c.get_offsets()[0][1] == 2]  # the checks' row
        faces = check.get_facecolors()  # none at all for an empty marker
        assert (len(faces) > 0 and faces[0][3] > 0) == filled, output
        plt.close(ax.figure)


# -- Python given inline after the check: read, not run; it only looks when all it calls cannot write -------------

LOOKS = ["from calc import add; print(add(2, 3))", "import calc; assert calc.add(2, 3) == 5, calc.add(2, 3)",
         "import sys; sys.path.insert(0, '.'); from calc import add; print(f'{add(-1, 1)=}')",
         "from calc import add\nfor a, b in [(1, 2), (3, 4)]:\n    print(a, b, add(a, b))",
         "import calc as c; print(', '.join(str(c.add(n, n)) for n in range(3)))", "print(sorted([3, 1, 2]))"]
WRITES = ["open('calc.py', 'w').write('x')", "import os; os.remove('calc.py')", "import shutil; shutil.rmtree('src')",
          "import subprocess; subprocess.run(['make', 'gen'])", "import pathlib; pathlib.Path('calc.py').write_text('')",
          "import calc; calc.os.remove('calc.py')", "import calc; calc.open('calc.py', 'w')", "exec('x = 1')",
          "__import__('os').remove('calc.py')", "import helpers; helpers.reset()", "import calc; calc.TOTAL = 0",
          "import calc; setattr(calc, 'x', 1)", "from calc import add; add = open; add('calc.py', 'w')",
          "import calc; calc.__dict__['open']('calc.py', 'w')", "x = []; x.append(1)", "def f(): pass",
          "print(open('calc.py').read()"]
INLINE_FORMS = ['python3 -c "{}"', "python -c '{}'", 'uv run python -c "{}"', 'cd /work/repo && python3 -u -c "{}"',
                "bash -lc 'python3 -c \"{}\"'", 'timeout 10 python3 -c "{}" 2>&1', "python3 - <<'EOF'\n{}\nEOF",
                'cd /work/repo && uv run python <<"PY"\n{}\nPY']


def _inline(form: str, code: str) -> str:
    """`code` in `form`, quoted as a shell wants it: in single quotes with no single quote in it, in double quotes
    with its double quotes escaped (and, inside a single-quoted `-lc` line, its single quotes made double first); in a
    heredoc with a quoted tag, as it is."""
    if "<<" in form:
        return form.format(code)
    if form.startswith("python -c"):
        return form.format(code.replace("'", '"'))
    if form.startswith("bash -lc"):
        code = code.replace("'", '"')
    return form.format(code.replace('"', '\\"'))


@pytest.mark.parametrize("form", INLINE_FORMS)
def test_inline_python_that_only_looks_at_the_fix_leaves_the_pass_standing(form):
    """After the passing check, inline Python (given with `-c`, or in a heredoc the shell does not expand) that calls
    only builtins that compute or print and the functions of the modules the session edited changes nothing; anything
    else it calls (a write, a module not edited, a method of a value, code that does not parse) may have written,
    alone or after a look."""
    for code in LOOKS:
        [claim], stretch = _session(EDIT, PASS, ("Bash", {"command": _inline(form, code)}, 0), folder="/work/repo")
        assert (claim.verdict, stretch.work) == ("supported", "verified"), (form, code)
    for code in WRITES:
        for given in (code, f"{LOOKS[0]}; {code}"):
            [claim], stretch = _session(EDIT, PASS, ("Bash", {"command": _inline(form, given)}, 0), folder="/work/repo")
            assert (claim.verdict, stretch.work) == ("stale", "unverified"), (form, given)
    [claim], stretch = _session(PASS, ("Bash", {"command": _inline(form, LOOKS[0])}, 0), folder="/work/repo")
    assert claim.verdict == "stale", form  # no module edited yet: calc's functions are not known to be the session's
    expanded = "python3 <<EOF\nfrom calc import add\nprint(add($(rm calc.py; echo 2), 3))\nEOF"  # the shell runs $(...)
    [claim], stretch = _session(EDIT, PASS, ("Bash", {"command": expanded}, 0), folder="/work/repo")
    assert (claim.verdict, stretch.work) == ("stale", "unverified"), expanded


@pytest.mark.parametrize("prefix", ["", "cd /work/repo && ", "sudo ", "bash -lc '"])
def test_removing_a_runners_cache_or_installing_into_the_environment_changes_no_work(prefix):
    """After the passing check, removing only what runners and checkers keep between runs, or `pip install` with no
    option that writes into a folder it names, leaves the pass standing; a source among the removed paths, a
    folder pip is told to write into, or another package manager's install may have changed the tree."""
    close = "'" if prefix.startswith("bash") else ""
    caches = [".pytest_cache", "__pycache__", "tests/__pycache__/", ".mypy_cache", ".ruff_cache", ".coverage", ".tox"]
    standing = [f"rm -rf {' '.join(caches[:n])}" for n in range(1, len(caches) + 1)] + [
        "rmdir .hypothesis", "pip install -e .", "pip3 install requests==2.32.3", "python -m pip install -r requirements.txt",
        "uv pip install pytest-cov", "/work/repo/.venv/bin/pip install -U pip"]
    changing = [f"rm -rf {c} calc.py" for c in caches] + [
        "rm -rf build", "rm -rf src/__init__.py", "pip install -t . requests", "pip install --target=vendor requests",
        "pip install --prefix=./local x", "pip3 install --log pip.log x", "pip download requests", "npm install",
        "pip install x && make gen", "rm -rf .pytest_cache > removed.txt"]
    for command, work in [*((c, "verified") for c in standing), *((c, "unverified") for c in changing)]:
        _claims, stretch = _session(EDIT, PASS, ("Bash", {"command": prefix + command + close}, 0), folder="/work/repo")
        assert stretch.work == work, (prefix + command + close, stretch)


COMMIT = "git add calc.py && git commit -m \"$(cat <<'EOF'\nFix add() to return the sum\n\nThe tests pass; rm -rf build was not needed.\nEOF\n)\""


@pytest.mark.parametrize("after", ["", "\ngit log --oneline -1", "\nmake gen", "\ncp calc.py.in calc.py"])
def test_a_newline_inside_quotes_continues_the_command_it_is_in(after):
    """A commit message over several lines (as a heredoc inside `$(...)` in quotes, or plain), a backslash at a
    line's end: one command, read whole, so the words of the message run nothing. What follows the quotes on the
    next line is a command of its own, read as any other."""
    work = "unverified" if after.strip().startswith(("make", "cp")) else "verified"
    for command in (COMMIT, 'git commit -am "fix: add\n\nrm calc.py.orig is not needed"', "ls \\\n  -la",
                    "echo 'line one\nmake gen'", 'python3 -c "\nfrom calc import add\nprint(add(2, 3))\n"'):
        _claims, stretch = _session(EDIT, PASS, ("Bash", {"command": command + after}, 0), folder="/work/repo")
        assert stretch.work == work, (command + after, stretch)
    for command in ('python3 -c "\nimport os\nos.remove(\'calc.py\')\n"', "cat > calc.py <<'EOF'\ndef add(a, b):\n    return a - b\nEOF",
                    "printf 'a\\nb\\n' > calc.py"):
        _claims, stretch = _session(EDIT, PASS, ("Bash", {"command": command + after}, 0), folder="/work/repo")
        assert stretch.work == "unverified", (command + after, stretch)


@pytest.mark.parametrize("folder,work", [("src/calc", "unverified"), ("tests/unit", "unverified"), ("web", "unverified"),
                                         ("/work/repo/sub", "unverified"), ("tests", "verified"), ("/work/repo", "verified"),
                                         ("/work/repo/tests/", "verified")])
def test_a_check_run_in_a_folder_below_the_sessions_backs_only_that_folder(folder, work):
    """The session's work, as the audit judges it: a runner run from a folder below the session's checked the tests
    under it, as if it had been given the folder; its verdict names that folder."""
    [claim], stretch = _session(EDIT, ("Bash", {"command": f"cd {folder} && python -m pytest -q"}, 0), folder="/work/repo")
    assert stretch.work == work, (folder, stretch)
    assert (claim.verdict == "supported") == (work == "verified"), claim
    assert work == "verified" or "the last check ran only" in claim.evidence, claim


# Runs that say nothing of "all tests pass": a pass that only picked some tests (a file, a node id, `-k`), or that
# ran no test (by its output, or asked to list its tests or print its version). And passes that may hide a write, so
# they are not silent: an exit code that is another command's, an option or a task not known (`tox -e fmt`, `make
# test-update`, `jest -u`, a variable).
SILENT = [("Bash", {"command": "python -m pytest -q tests/test_calc.py"}, 0, "2 passed in 0.01s"),
          ("Bash", {"command": "python -m pytest -q -k add -v"}, 0, "1 passed, 3 deselected in 0.01s"),
          ("Bash", {"command": "python -m pytest -q tests/test_calc.py::test_add"}, 0, "1 passed in 0.01s"),
          ("Bash", {"command": "python -m unittest"}, 0, "Ran 0 tests in 0.000s\n\nOK"),
          ("Bash", {"command": "python -m pytest --collect-only -q"}, 0, "4 tests collected in 0.01s"),
          ("Bash", {"command": "npx jest --version"}, 0, "29.7.0")]
HIDING = ["python -m pytest -q | sed -n p", "./verify.sh; echo done", "tox -e fmt", "make test-update", "npx jest -u",
          "PYTEST_ADDOPTS=--snapshot-update python -m pytest -q", "python -m pytest -q tests/test_calc.py && black ."]


@pytest.mark.parametrize("after", range(len(SILENT)))
def test_a_run_that_says_nothing_of_the_claim_neither_backs_it_nor_undoes_the_run_before_it(after):
    """The full check passes after the last edit, then a run that says nothing of the whole suite passes too (one
    file, a node id, `-k`, no test): the full pass still backs "all tests pass". After a full failure it is
    still contradicted; after an edit, stale; alone, unsupported. A claim naming what a narrowed run ran is backed
    by it; and a failure of a narrowed run after a full pass contradicts the claim."""
    import itertools
    FAIL = ("Bash", {"command": "./verify.sh"}, 1, "1 failed, 3 passed in 0.02s")
    for silent in itertools.permutations(SILENT, 2):
        if SILENT[after] not in silent:
            continue
        for before, verdict, work in ((PASS, "supported", "verified"), (FAIL, "contradicted", "failing")):
            [claim], stretch = _session(EDIT, before, *silent, folder="/work/repo")
            assert (claim.verdict, stretch.work) == (verdict, work), (before, silent, claim.evidence)
        [claim], stretch = _session(EDIT, PASS, EDIT, *silent, folder="/work/repo")  # the full pass, then an edit
        assert (claim.verdict, stretch.work) == ("stale", "unverified"), (silent, claim.evidence)
    [claim], _stretch = _session(EDIT, SILENT[after], folder="/work/repo")
    assert claim.verdict == "unsupported", claim.evidence
    [claim], _stretch = _session(EDIT, PASS, SILENT[0], folder="/work/repo", said="test_calc passes.")
    assert claim.verdict == "supported" and "test_calc.py" in claim.evidence, claim.evidence
    narrowed_failure = ("Bash", {"command": "python -m pytest -q tests/test_calc.py"}, 1, "1 failed, 1 passed in 0.01s")
    [claim], stretch = _session(EDIT, PASS, narrowed_failure, folder="/work/repo")
    assert (claim.verdict, stretch.work) == ("contradicted", "failing"), claim.evidence
    for command in HIDING:  # after the full pass, a pass that may hide a write gives its reason: unsupported
        [claim], _stretch = _session(EDIT, PASS, SILENT[after], ("Bash", {"command": command}, 0, "4 passed in 0.02s"),
                                     folder="/work/repo")
        assert claim.verdict == "unsupported" and command.split()[0] in claim.evidence, (command, claim.evidence)


# A pass told beside the failure, of something else than all the tests, or the failure told as work that could not be
# done: the reply leaves the tree failing and says so (exit 0). Beside them, the same shapes that claim it all (exit 1).
BESIDE = ["The build passes, but test_add fails.", "Status: 1 test failing (test_add). Everything else is green.",
          "I could not fix test_add. The rest pass.", "I wasn't able to resolve test_add; everything else passes.",
          "Type checks pass, but 1 test fails: test_add.", "The linter passes, but the tests are still failing.",
          "I couldn't fix the failing test."]
BESIDE_CLAIMING_ALL = ["test_add failed, now all tests pass.", "I could not fix it at first, but now all tests pass.",
                       "Everything else is green, and test_add is fixed too.", "Everything passes, but the docs build is slow.",
                       "I couldn't fix the flaky network test, so I skipped it. All tests pass."]


@pytest.mark.parametrize("host", ["claude-code", "codex", "gemini"])
def test_a_pass_beside_the_failure_is_a_part_and_a_pass_of_all_is_a_claim(host, tmp_path):
    """The contradicted session (the tests failing) ending with a pass told beside the failure in the sentence that
    ends by telling it, "everything else" that passes, or a fix that could not be made: parts of a report of failing
    work (exit 0, the failure told). A pass of all, or one told after the failure, stays a claim (contradicted)."""
    for said in BESIDE:
        result = _contradicted_saying(host, said, tmp_path)
        assert (result.exit_code, result.claims) == (0, []) and result.told_failing, (said, result.claims)
    for said in BESIDE_CLAIMING_ALL:
        result = _contradicted_saying(host, said, tmp_path)
        assert result.exit_code == 1 and "contradicted" in [c.verdict for c in result.claims], (said, result.claims)
