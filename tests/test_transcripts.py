"""The transcript readers (appendix 97, donegate.transcripts): each host's quirks that the end-to-end audit of
tests/test_audit.py would only show as a wrong verdict, pinned on the reader itself."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from donegate import transcripts as tr

ROOT = Path(__file__).resolve().parent.parent
TRANSCRIPTS = ROOT / "demo" / "transcripts"
FIXTURES = {f"{p.relative_to(TRANSCRIPTS).parts[0]}/{p.relative_to(TRANSCRIPTS).parts[1]}": p
            for p in sorted(TRANSCRIPTS.rglob("*.jsonl"))}


def records_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_claude_code_s_stop_hook_summary_is_the_gate_s_allow():
    """Claude Code writes a stop_hook_summary after each Stop hook. The refusal's (hookErrors filled) stays opaque,
    since its feedback already came as a user message; the one without hookErrors is the gate letting it end."""
    path = FIXTURES["claude-code/gated"]
    summaries = [r for r in records_of(path) if r.get("subtype") == "stop_hook_summary"]
    assert [bool(r.get("hookErrors")) for r in summaries] == [True, False]
    imported = tr.read_transcript(path)
    assert [(s.tool, s.action) for s in imported.steps if s.kind == "hook"] == [("Stop", "block"), ("Stop", "allow")]
    [allow] = [s for s in imported.steps if s.kind == "hook" and s.action == "allow"]
    assert "donegate hook stop --host claude-code" in allow.text


def test_an_older_codex_local_shell_call_is_a_shell_call(tmp_path):
    """Earlier Codex versions wrote the shell call as a local_shell_call item (its argv inside an action) and its
    exit code as "Exit code: N"."""
    records = [
        {"timestamp": "2025-06-01T10:00:00Z", "type": "session_meta", "payload": {"id": "old-session"}},
        {"timestamp": "2025-06-01T10:00:01Z", "type": "response_item",
         "payload": {"type": "local_shell_call", "call_id": "c1", "status": "completed",
                     "action": {"type": "exec", "command": ["bash", "-lc", "./verify.sh"]}}},
        {"timestamp": "2025-06-01T10:00:02Z", "type": "response_item",
         "payload": {"type": "local_shell_call_output", "call_id": "c1", "output": "Exit code: 1\n1 failed"}},
    ]
    path = tmp_path / "rollout-2025-06-01T10-00-00-old-session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    imported = tr.read_transcript(path)
    assert imported.host == "codex" and imported.session_id == "old-session"
    [call] = [s for s in imported.steps if s.kind == "call"]
    [result] = [s for s in imported.steps if s.kind == "result"]
    assert (call.action, call.command) == ("shell", "bash -lc ./verify.sh")
    assert (result.tool, result.exit_code, result.ok) == ("local_shell_call", 1, False)


def test_codex_s_display_copies_are_not_read_twice():
    """Codex writes each item again as an item_completed event message, for its display: calls and replies are
    read once, from the response items, and the copies are kept opaque."""
    path = FIXTURES["codex/mixed"]
    records = records_of(path)
    copies = [r for r in records if r["type"] == "event_msg" and r["payload"].get("type") == "item_completed"]
    calls = [r for r in records if r["type"] == "response_item"
             and r["payload"].get("type") in ("function_call", "custom_tool_call")]
    assert len(calls) == 4 and len(copies) > len(calls)  # the fixture does copy every call
    imported = tr.read_transcript(path)
    assert [s.call_id for s in imported.steps if s.kind == "call"] == [r["payload"]["call_id"] for r in calls]
    assert [s.text for s in imported.steps if s.kind == "reply"] == [
        "The tests pass. Tidying add() up as well.", "Now all tests pass."]
    assert imported.opaque["event_msg/item_completed"] == len(copies)


def test_a_gemini_message_written_again_replaces_the_first():
    """Gemini writes a model message again, under the same id, once its tool calls have results: the last version
    is read, at the first one's place, so each call is read once and with its output."""
    path = FIXTURES["gemini/stale"]
    ids = [r["id"] for r in records_of(path) if r.get("id") and r.get("type")]
    assert len(ids) > len(set(ids))  # the fixture does write messages twice
    imported = tr.read_transcript(path)
    calls = [s.call_id for s in imported.steps if s.kind == "call"]
    results = [s for s in imported.steps if s.kind == "result"]
    assert len(calls) == len(set(calls)) == 3 and [r.call_id for r in results] == calls
    assert all(r.text for r in results)  # the first version of a message has no results yet
    assert [(s.kind, s.action) for s in imported.steps if s.kind in ("call", "reply")] == [
        ("call", "edit"), ("call", "shell"), ("call", "edit"), ("reply", "")]


def test_a_trajectory_s_time_never_runs_backwards(tmp_path):
    """A step without a time, with one that is not a time, or with one earlier than the step before takes the time
    of the step before."""
    steps = [tr.Step("prompt", "2026-01-01T10:00:05Z", text="fix it"), tr.Step("reply", "2026-01-01T10:00:01Z", text="a"),
             tr.Step("reply", None, text="b"), tr.Step("reply", "soon", text="c"),
             tr.Step("reply", "2026-01-01T10:00:09+00:00", text="d")]
    imported = tr.Imported("claude-code", tmp_path / "s.jsonl", "s", steps, Counter(), [])
    loaded = tr.write_trajectory(imported, tmp_path / "t.jsonl")
    assert loaded.ok
    times = [e.ts for e in loaded.events if e.type in ("turn_started", "model_reply")]
    assert times == ["2026-01-01T10:00:05.000000Z"] * 4 + ["2026-01-01T10:00:09.000000Z"]


def test_only_the_rules_handed_in_mark_checks_and_claims(tmp_path):
    """write_trajectory decides neither what a check is nor what a claim is: without rules no call is a check and
    no reply holds a claim; with them, the calls and replies they accept are marked."""
    imported = tr.read_transcript(FIXTURES["codex/mixed"])

    def marks(loaded):
        kinds = [e.payload["input"]["donegate"]["kind"] for e in loaded.events if e.type == "tool_requested"]
        claims = [c for e in loaded.events if e.type == "model_reply" for c in e.payload.get("claims") or ()]
        return kinds, claims

    bare = marks(tr.write_trajectory(imported, tmp_path / "bare.jsonl"))
    assert bare == (["edit", "shell", "edit", "shell"], [])
    ruled = marks(tr.write_trajectory(imported, tmp_path / "ruled.jsonl", is_check=lambda c: "verify.sh" in c,
                                      claims_of=lambda text: [text] if "pass" in text else []))
    assert ruled == (["edit", "shell", "edit", "check"],
                     ["The tests pass. Tidying add() up as well.", "Now all tests pass."])


def test_a_command_still_running_is_not_back_and_its_later_exit_is_the_calls():
    """Each host's "still running" answer is no result: Codex's "Process running with session ID N" (its exit
    comes from the write_stdin poll of session N), Claude Code's background Bash (its exit comes from the task
    notification), Gemini's is_background (no result ever comes back in the session file)."""
    for host, later in (("codex", True), ("claude-code", True), ("gemini", False)):
        imported = tr.read_transcript(FIXTURES[f"{host}/running"])
        [slow] = [s for s in imported.steps if s.kind == "call" and s.command.startswith("sleep 3")]
        results = [s for s in imported.steps if s.kind == "result" and s.call_id == slow.call_id]
        assert imported.opaque["still running"] == 1, (host, imported.opaque)
        assert [(r.exit_code, r.ok) for r in results] == ([(0, True)] if later else []), (host, results)
        if later:  # the result comes after the reply that claimed while the check ran
            replies = [i for i, s in enumerate(imported.steps) if s.kind == "reply" and "All tests pass now." in s.text]
            assert replies and replies[0] < imported.steps.index(results[0]), host


def test_the_trajectory_in_memory_is_the_one_written(tmp_path):
    """`write_trajectory(imported, None, ...)` (what `donegate audit` judges) builds the very events the written
    and loaded trajectory holds, on every committed fixture, with `donegate audit`'s rules; the written one is valid."""
    from donegate.claims import AuditRules
    rules = AuditRules()
    claims_of = lambda text: [s for _, s in rules.claims(text)]  # noqa: E731
    for name, path in FIXTURES.items():
        imported = tr.read_transcript(path)
        kept = tr.write_trajectory(imported, None, rules.is_check, claims_of)
        written = tr.write_trajectory(imported, tmp_path / f"{name.replace('/', '-')}.jsonl", rules.is_check, claims_of)
        assert written.ok, (name, written.problems)
        shape = lambda events: [(e.seq, e.type, e.turn, e.ts, json.dumps(e.payload, sort_keys=True))  # noqa: E731
                                for e in events]
        assert shape(kept.events) == shape(written.events), name
        assert kept.problems == [] and not list(tmp_path.glob("donegate-memory-*"))


def test_the_outline_is_the_trajectory_without_its_envelope(tmp_path):
    """What `donegate audit` judges (`outline`) holds, on every committed fixture, the events of the written
    trajectory: the same seqs, types, turns and payloads, each output its text (an opaque record as it was read)
    where the trajectory names it by hash; and the audit of the one gives the verdicts and the timeline of the audit of the other."""
    import hashlib

    from donegate import audit as au
    from donegate.claims import AuditRules
    rules = AuditRules()
    claims_of = lambda text: [s for _, s in rules.claims(text)]  # noqa: E731
    for name, path in FIXTURES.items():
        imported = tr.read_transcript(path)
        sketches = tr.outline(imported, rules.is_check, claims_of)
        written = tr.write_trajectory(imported, tmp_path / f"{name.replace('/', '-')}.jsonl", rules.is_check, claims_of)
        assert [(s.seq, s.type, s.turn) for s in sketches] == [(e.seq, e.type, e.turn) for e in written.events], name
        for sketch, event in zip(sketches, written.events):
            kept = {k: v for k, v in event.payload.items() if k not in ("output", "record")}
            assert {k: v for k, v in sketch.payload.items() if k not in ("output", "record")} == kept, (name, sketch.seq)
            for key in ("output", "record"):
                if isinstance(event.payload.get(key), dict):
                    raw = sketch.payload[key]  # an output's text; an opaque record as it was read
                    text = (raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)).encode("utf-8")
                    assert hashlib.sha256(text).hexdigest() == event.payload[key]["sha256"], (name, sketch.seq)
        judged = tr.audit_transcript(path)
        from_file = tr.audit_transcript(path, trajectory_path=tmp_path / f"{name.replace('/', '-')}-audited.jsonl")
        assert judged.claims == from_file.claims and judged.actions == from_file.actions, name
        assert [e.seq for e in au.hook_decisions(judged)] == [e.seq for e in au.hook_decisions(from_file)], name


def _loads_each_line(text: str) -> tuple[list, list]:
    """The reading `read_lines` must equal: `json.loads` of each line, lines ending at a newline only."""
    records, damaged = [], []
    for number, line in enumerate(text.split("\n"), 1):
        if line.strip():
            try:
                records.append((number, json.loads(line)))
            except ValueError as error:
                damaged.append((number, f"not JSON ({error.msg} at column {error.colno})"))
    return records, damaged


def test_a_line_is_read_as_json_loads_reads_it(tmp_path):
    """Records and damaged lines (with the library's own message) as `json.loads` gives them, on lines drawn
    from pieces of JSON: whole records, torn ones, two on one line, stray spaces, a BOM, a trailing comma."""
    import random
    draw = random.Random(20261203)
    pieces = ['{"type": "user", "n": 1}', '{"a": [1, 2', ']}', ' ', '\t', '\r', '"text\u2028more"', '{"b": "x"}',
              ',', '\ufeff', '[]', 'null', '{"c": {"d": "\\u00e9"}}', '}', '{', '"', '1e5', 'nul', '\u3000']
    lines = ["".join(draw.choice(pieces) for _ in range(draw.randint(0, 3))) for _ in range(3000)]
    path = tmp_path / "drawn.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    records, damaged = tr.read_lines(path)
    assert (records, damaged) == _loads_each_line(path.read_text(encoding="utf-8"))
    assert records and damaged


def test_a_line_separator_inside_a_reply_leaves_the_record_whole(tmp_path):
    """U+2028 and U+0085 inside a JSON string (as Node writes them) end no line: the reply is read whole."""
    path = tmp_path / "session.jsonl"
    said = "All tests pass now.\u2028Nothing else changed.\x85Done."
    record = {"type": "assistant", "sessionId": "s", "timestamp": "2026-12-01T10:00:00.000Z",
              "message": {"role": "assistant", "content": [{"type": "text", "text": said}]}}
    path.write_text(json.dumps({"type": "user", "sessionId": "s", "timestamp": "2026-12-01T10:00:00.000Z",
                                "message": {"role": "user", "content": "Fix it."}}) + "\n"
                    + json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    imported = tr.read_transcript(path)
    assert imported.damaged == []
    assert [s.text for s in imported.steps if s.kind == "reply"] == [said]
