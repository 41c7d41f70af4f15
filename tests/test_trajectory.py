"""The contract of donegate.trajectory (DESIGN 2.2): writer, artifacts, schema, loader, queries, timeline."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from datetime import datetime, timezone
from pathlib import Path

import pytest

from donegate.hooks import Decision, HookRegistry
from donegate.trajectory import (
    STATUSES,
    ArtifactError,
    ArtifactStore,
    RunFinishedError,
    claims_by_turn,
    counts_as_passed,
    decisions_by_hook,
    default_artifact_dir,
    failed_calls,
    format_timeline,
    make_preview,
    promises_by_turn,
    record_output,
    status_label,
    successful_calls,
    terminal_status,
)
from donegate.trajectory_io import EVENT_SCHEMA, DurableWriter, load_checked, plot_timeline, schema_problem, validate_checked

FAILING_LINE = "tests/test_pricing.py::test_bulk_discount_is_capped FAILED"


def long_test_log() -> str:
    """A test log whose only failing line sits far past the first 4,000 characters."""
    passing = "".join(f"tests/test_pricing.py::test_unit_price[SKU-{i:03d}] PASSED\n" for i in range(120))
    assert len(passing) > 6000
    return passing + FAILING_LINE + "\n" + "".join(f"tests/test_tax.py::test_rate[{i}] PASSED\n" for i in range(60))


@pytest.fixture
def path(tmp_path) -> Path:
    return tmp_path / "run.jsonl"


@pytest.fixture
def writer(path) -> DurableWriter:
    return DurableWriter(path, run_id="r-test", task_id="t-test")


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def finished_run(path: Path, status: str = "verified") -> DurableWriter:
    """A small complete run with one tool call, one hook decision and one verification."""
    w = DurableWriter(path, run_id="r-full", task_id="t-full")
    w.run_started("fix the cap")
    w.turn_started()
    w.model_reply("Running the tests.", promises=["Bash"])
    w.tool_requested("Bash", {"command": "pytest"}, call_id="c1")
    w.hook_decision("before_tool_call", "guard", "allow", "", tool_name="Bash")
    w.tool_completed("c1", "Bash", long_test_log(), exit_code=1)
    w.model_reply("All tests pass.", claims=["all tests pass"])
    w.verification_result("pytest", 0 if status == "verified" else 1, "ok\n")
    w.run_finished(status, "done")
    return w


def rewrite(path: Path, edit) -> None:
    """Replace the file's lines (with their newlines) by edit(lines)."""
    kept = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(edit(kept)), encoding="utf-8")


# --- the writer ------------------------------------------------------------------------------------

def test_events_are_numbered_1_2_3_in_file_order(writer, path):
    writer.run_started("task")
    writer.turn_started()
    writer.model_reply("hello")
    writer.run_finished("completed", "done")
    assert [e["seq"] for e in lines(path)] == [1, 2, 3, 4]


def test_every_event_carries_the_envelope_of_the_format(writer, path):
    writer.run_started("task", {"model": "scripted"})
    writer.turn_started()
    event = lines(path)[1]
    assert list(event) == ["v", "run_id", "task_id", "seq", "ts", "type", "turn", "payload"]
    assert (event["v"], event["run_id"], event["task_id"], event["type"], event["turn"]) == (
        1, "r-test", "t-test", "turn_started", 1)
    assert lines(path)[0]["turn"] is None


def test_timestamps_are_utc_iso_8601_with_a_trailing_z(path):
    moment = datetime(2026, 11, 29, 23, 30, 0, 123456, tzinfo=timezone.utc)
    w = DurableWriter(path, task_id="t", clock=lambda: moment)
    w.run_started("task")
    assert lines(path)[0]["ts"] == "2026-11-29T23:30:00.123456Z"


def test_an_event_is_in_the_file_as_soon_as_emit_returns(writer, path):
    writer.run_started("task")
    writer.turn_started()
    assert len(lines(path)) == 2


def test_writing_after_run_finished_raises(writer, path):
    writer.run_finished("verified", "check passed")
    with pytest.raises(RunFinishedError, match="already finished"):
        writer.model_reply("one more thing")
    assert len(lines(path)) == 1


def test_a_second_run_finished_raises(writer, path):
    writer.run_finished("verified", "check passed")
    with pytest.raises(RunFinishedError):
        writer.run_finished("failed", "changed my mind")
    assert [e["type"] for e in lines(path)] == ["run_finished"]


def test_an_unknown_status_is_refused_and_uses_no_seq(writer, path):
    with pytest.raises(ValueError, match="payload.status"):
        writer.run_finished("passed", "looks fine")
    writer.run_finished("verified", "check passed")
    assert [e["seq"] for e in lines(path)] == [1]


def test_an_unknown_event_type_is_refused(writer, path):
    with pytest.raises(ValueError, match="type"):
        writer.emit("tool_done", {})
    assert not path.read_text()


def test_a_payload_that_is_not_json_is_refused(writer):
    with pytest.raises(ValueError, match="not plain JSON"):
        writer.emit("turn_started", {"when": datetime.now()}, turn=1)


def test_the_writer_never_appends_to_an_existing_file(path):
    path.write_text("precious\n")
    with pytest.raises(FileExistsError, match="already exists"):
        DurableWriter(path, task_id="t")
    assert path.read_text() == "precious\n"


def test_fsync_terminal_forces_the_file_to_disk_at_run_finished(writer, monkeypatch):
    synced = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    writer.run_started("task")
    writer.turn_started()
    assert synced == []
    writer.run_finished("completed", "done")
    assert synced


def test_fsync_always_forces_every_event_to_disk(path, monkeypatch):
    w = DurableWriter(path, task_id="t", fsync="always")
    synced = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    w.run_started("task")
    w.turn_started()
    assert len(synced) == 2


def test_an_exception_inside_the_with_block_is_recorded_as_a_failed_run(path):
    with pytest.raises(KeyError):
        with DurableWriter(path, task_id="t") as w:
            w.run_started("task")
            raise KeyError("command")
    last = lines(path)[-1]
    assert last["type"] == "run_finished" and last["payload"]["status"] == "failed"
    assert "KeyError" in last["payload"]["reason"]


def test_a_verification_cannot_pass_with_a_nonzero_exit_code(writer):
    with pytest.raises(ValueError, match="exit_code"):
        writer.verification_result("pytest", 1, "1 failed", passed=True)


# --- outputs and artifacts -------------------------------------------------------------------------

def test_record_output_keeps_preview_sha256_size_and_ref(tmp_path):
    log = long_test_log()
    out = record_output(log, ArtifactStore(tmp_path / "a"))
    assert set(out) == {"preview", "sha256", "size", "artifact_ref"}
    assert out["size"] == len(log.encode())
    assert out["artifact_ref"] == "sha256:" + out["sha256"]


def test_the_failing_line_past_the_preview_is_in_the_stored_bytes(tmp_path):
    store = ArtifactStore(tmp_path / "a")
    out = record_output(long_test_log(), store, preview_chars=4000)
    assert FAILING_LINE not in out["preview"]
    assert FAILING_LINE in store.read(out["artifact_ref"]).decode()


def test_a_preview_fits_the_limit_and_says_what_was_cut():
    text = "x" * 10_000
    preview = make_preview(text, 4000, "sha256:" + "a" * 64)
    assert len(preview) <= 4000
    assert "characters cut" in preview and "sha256:" + "a" * 64 in preview


def test_a_short_output_is_its_own_preview(tmp_path):
    assert record_output("3 passed\n", ArtifactStore(tmp_path))["preview"] == "3 passed\n"


def test_an_artifact_is_named_by_its_hash_and_stored_once(tmp_path):
    store = ArtifactStore(tmp_path / "a")
    first, second = store.put(b"same bytes"), store.put(b"same bytes")
    assert first == second
    assert [p.name for p in (tmp_path / "a").iterdir()] == [first[len("sha256:"):]]


def test_verify_artifact_recomputes_the_hash_and_catches_an_edit(tmp_path):
    store = ArtifactStore(tmp_path / "a")
    ref = store.put(b"1 failed, 89 passed")
    assert store.verify_artifact(ref)
    os.chmod(store.path_for(ref), 0o644)
    store.path_for(ref).write_bytes(b"90 passed")
    assert not store.verify_artifact(ref)


def test_reading_an_edited_artifact_raises(tmp_path):
    store = ArtifactStore(tmp_path / "a")
    ref = store.put(b"1 failed")
    os.chmod(store.path_for(ref), 0o644)
    store.path_for(ref).write_bytes(b"0 failed")
    with pytest.raises(ArtifactError, match="changed"):
        store.read(ref)


def test_a_missing_artifact_does_not_verify(tmp_path):
    assert not ArtifactStore(tmp_path).verify_artifact("sha256:" + "0" * 64)


def test_a_stored_artifact_is_read_only(tmp_path):
    store = ArtifactStore(tmp_path / "a")
    ref = store.put(b"1 failed, 89 passed")
    assert store.path_for(ref).stat().st_mode & 0o777 == 0o444


def test_storing_never_overwrites_an_edited_artifact(tmp_path):
    store = ArtifactStore(tmp_path)
    ref = store.put(b"original")
    os.chmod(store.path_for(ref), 0o644)
    store.path_for(ref).write_bytes(b"edited")
    with pytest.raises(ArtifactError):
        store.put(b"original")
    assert store.path_for(ref).read_bytes() == b"edited"


def test_the_writer_stores_outputs_next_to_the_trajectory_by_default(writer, path):
    writer.tool_completed("c1", "Bash", "output", exit_code=0)
    ref = lines(path)[0]["payload"]["output"]["artifact_ref"]
    assert default_artifact_dir(path) == path.parent / "run.artifacts"
    assert (path.parent / "run.artifacts" / ref[len("sha256:"):]).is_file()


# --- the schema ------------------------------------------------------------------------------------

def test_the_schema_is_json_schema_2020_12_and_valid():
    import jsonschema
    assert EVENT_SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(EVENT_SCHEMA)


def test_every_event_the_writer_wrote_matches_the_schema(path):
    finished_run(path)
    assert [schema_problem(e) for e in lines(path)] == [None] * len(lines(path))


def test_the_schema_rejects_an_inlined_output(path):
    finished_run(path)
    event = next(e for e in lines(path) if e["type"] == "tool_completed")
    event["payload"]["output"] = long_test_log()
    assert "payload.output" in schema_problem(event)


def broken_copies(event: dict):
    """Copies of `event` with one thing wrong each: a missing, mistyped or out-of-range field."""
    yield {k: v for k, v in event.items() if k != "seq"}
    yield {**event, "seq": 0}
    yield {**event, "seq": True}
    yield {**event, "v": 2}
    yield {**event, "turn": -1}
    yield {**event, "turn": "1"}
    yield {**event, "ts": "2026-11-29 23:30:00"}
    yield {**event, "type": "tool_done"}
    yield {**event, "run_id": ""}
    yield {**event, "payload": []}
    for key, value in event["payload"].items():
        yield {**event, "payload": {k: v for k, v in event["payload"].items() if k != key}}
        yield {**event, "payload": {**event["payload"], key: {"unexpected": "shape"} if not isinstance(value, dict)
                                    else "unexpected text"}}


def test_the_writers_fast_check_agrees_with_jsonschema(path):
    finished_run(path)
    events = lines(path)
    events.append({**events[-2], "payload": {**events[-2]["payload"], "exit_code": 1, "passed": True}})
    corpus = events + [broken for event in events for broken in broken_copies(event)]
    verdicts = [(schema_problem(e) is None, schema_problem(e, fast=True) is None) for e in corpus]
    assert all(ref == fast for ref, fast in verdicts), [e for e, (r, f) in zip(corpus, verdicts) if r != f][:2]
    assert sum(ref for ref, _ in verdicts) == len(events) - 1


# --- the loader ------------------------------------------------------------------------------------

def test_load_returns_what_the_writer_wrote(path):
    finished_run(path)
    result = load_checked(path)
    assert result.ok, result.problems
    assert [e.to_dict() for e in result.events] == lines(path)
    assert [e.line for e in result.events] == list(range(1, 10))


def test_load_reports_a_seq_gap_at_its_line(path):
    finished_run(path)
    rewrite(path, lambda ls: ls[:3] + ls[4:])
    first = load_checked(path).first_problem
    assert (first.line, first.kind) == (4, "seq_gap")
    assert "event 4 is missing" in first.message


def test_load_reports_a_repeated_seq(path):
    finished_run(path)
    rewrite(path, lambda ls: ls[:3] + ls[2:])
    first = load_checked(path).first_problem
    assert (first.line, first.kind) == (4, "seq_repeat")


def test_load_reports_a_torn_last_line_and_keeps_every_event_before_it(path):
    w = DurableWriter(path, task_id="t")
    for _ in range(5):
        w.turn_started()
    with open(path, "a") as f:
        f.write('{"v": 1, "seq": 6, "ty')
    result = load_checked(path)
    assert result.torn
    assert (result.first_problem.line, result.first_problem.kind) == (6, "torn_line")
    assert "5 complete events before it are kept" in result.first_problem.message
    assert [e.seq for e in result.events] == [1, 2, 3, 4, 5]


def test_a_malformed_line_in_the_middle_is_reported_and_the_rest_kept(path):
    finished_run(path)
    rewrite(path, lambda ls: ls[:2] + ["{not json\n"] + ls[3:])
    result = load_checked(path)
    assert (result.first_problem.line, result.first_problem.kind) == (3, "bad_json")
    assert not result.torn
    assert len(result.events) == 8


def test_a_complete_last_line_without_a_newline_is_kept_without_complaint(path):
    finished_run(path)
    path.write_text(path.read_text().rstrip("\n"))
    assert load_checked(path).ok


def test_load_reports_an_event_after_run_finished(path):
    finished_run(path)
    rewrite(path, lambda ls: ls + [ls[2].replace('"seq":3', '"seq":10')])
    first = load_checked(path).first_problem
    assert (first.line, first.kind) == (10, "after_terminal")


def test_load_reports_a_second_run_finished(path):
    finished_run(path)
    rewrite(path, lambda ls: ls + [ls[-1].replace('"seq":9', '"seq":10')])
    assert load_checked(path).first_problem.kind == "second_terminal"


def test_load_reports_a_run_without_run_finished(writer, path):
    writer.run_started("task")
    result = load_checked(path)
    assert [p.kind for p in result.problems] == ["unfinished"]
    assert result.status is None and "UNFINISHED" in status_label(result.status)


def test_load_reports_an_event_from_another_run(path):
    finished_run(path)
    rewrite(path, lambda ls: ls[:4] + [ls[4].replace('"r-full"', '"r-other"')] + ls[5:])
    first = load_checked(path).first_problem
    assert (first.line, first.kind) == (5, "run_mismatch")


def test_load_of_a_file_that_is_not_jsonl_names_line_1(path):
    path.write_text("Tests passed!\nAll good.\n")
    first = load_checked(path).first_problem
    assert (first.line, first.kind) == (1, "bad_json")


def test_load_names_the_field_that_breaks_the_schema(path):
    finished_run(path)
    rewrite(path, lambda ls: ls[:-1] + [ls[-1].replace('"verified"', '"passed"')])
    first = load_checked(path).first_problem
    assert first.kind == "schema" and first.line == 9 and "payload.status" in first.message


def test_validate_finds_a_tampered_artifact_at_the_event_that_names_it(path):
    finished_run(path)
    ref = lines(path)[5]["payload"]["output"]["artifact_ref"]
    artifact = default_artifact_dir(path) / ref[len("sha256:"):]
    os.chmod(artifact, 0o644)
    artifact.write_text(long_test_log().replace("FAILED", "PASSED"))
    assert load_checked(path).ok
    first = validate_checked(path).first_problem
    assert (first.line, first.kind) == (6, "artifact_tampered")


def test_validate_reports_a_missing_artifact(path, tmp_path):
    finished_run(path)
    first = validate_checked(path, artifacts=tmp_path / "elsewhere").first_problem
    assert first.kind == "artifact_missing" and first.line == 6


# --- queries ---------------------------------------------------------------------------------------

def test_a_successful_call_is_a_completion_matched_to_its_request(writer, path):
    writer.tool_requested("Bash", {"command": "ls"}, call_id="c1")
    writer.tool_completed("c1", "Bash", "a.py\n", exit_code=0)
    writer.tool_completed("c9", "search_kb", "no request for this one")
    writer.tool_requested("Read", {"file_path": "a.py"}, call_id="c2")
    writer.tool_completed("c2", "Read", "print(1)\n")
    assert [c.call_id for c in successful_calls(load_checked(path))] == ["c1", "c2"]


def test_failed_calls_include_completions_with_a_nonzero_exit(writer, path):
    writer.tool_requested("Bash", {"command": "pytest"}, call_id="c1")
    writer.tool_completed("c1", "Bash", "1 failed", exit_code=1)
    writer.tool_requested("Bash", {"command": "rm -rf /"}, call_id="c2")
    writer.tool_failed("c2", "Bash", "refused by no_rm_rf")
    assert [c.call_id for c in failed_calls(load_checked(path))] == ["c1", "c2"]
    assert successful_calls(load_checked(path)) == []


def test_decisions_are_grouped_by_hook_in_order(writer, path):
    writer.hook_decision("before_tool_call", "guard", "allow", "", tool_name="Bash")
    writer.hook_decision("on_stop", "gate", "block", "tests fail")
    writer.hook_decision("before_tool_call", "guard", "deny", "rm -rf", tool_name="Bash")
    grouped = decisions_by_hook(load_checked(path))
    assert {hook: [e.payload["action"] for e in events] for hook, events in grouped.items()} == {
        "guard": ["allow", "deny"], "gate": ["block"]}


def test_claims_and_promises_are_collected_per_turn(writer, path):
    writer.turn_started()
    writer.model_reply("I searched the knowledge base.", claims=["refund approved"], promises=["search_kb"])
    writer.turn_started()
    writer.model_reply("Done.", claims=["tests pass"])
    result = load_checked(path)
    assert claims_by_turn(result) == {1: ["refund approved"], 2: ["tests pass"]}
    assert promises_by_turn(result) == {1: ["search_kb"], 2: []}


def test_terminal_status_is_the_run_finished_status(path):
    finished_run(path, status="yielded_unverified")
    assert terminal_status(load_checked(path)) == "yielded_unverified"


def test_only_verified_counts_as_passed():
    assert [s for s in STATUSES if counts_as_passed(s)] == ["verified"]
    assert not counts_as_passed(None)


def test_yielded_unverified_is_shown_as_unverified_and_never_as_passed(path):
    finished_run(path, status="yielded_unverified")
    text = format_timeline(validate_checked(path))
    assert "UNVERIFIED" in status_label("yielded_unverified")
    assert "pass" not in status_label("yielded_unverified").lower()
    assert "UNVERIFIED" in text.split("run_finished")[1]
    assert not re.search(r"\bpassed\b", text.split("run_finished")[1], re.IGNORECASE)


# --- hooks into the trajectory ---------------------------------------------------------------------

def test_hook_decisions_become_hook_decision_events_in_the_current_turn(writer, path):
    registry = HookRegistry(recorder=writer.recorder())
    registry.register("guard", "before_tool_call",
                      lambda p: Decision.deny("no rm -rf") if "rm -rf" in p["tool_input"]["command"] else None,
                      matcher="Bash", on_error="closed")
    writer.turn_started()
    registry.run("before_tool_call", {"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}})
    event = lines(path)[-1]
    assert (event["type"], event["turn"]) == ("hook_decision", 1)
    assert {k: event["payload"][k] for k in ("hook", "action", "reason", "tool_name")} == {
        "hook": "guard", "action": "deny", "reason": "no rm -rf", "tool_name": "Bash"}


def test_hook_errors_become_hook_error_events(writer, path):
    registry = HookRegistry(recorder=writer.recorder(turn=3))
    registry.register("audit", "before_tool_call", lambda p: p["tool_input"]["command"], on_error="open")
    registry.run("before_tool_call", {"tool_name": "Edit", "tool_input": {"file_path": "a.py"}})
    event = lines(path)[-1]
    assert (event["type"], event["turn"], event["payload"]["policy"]) == ("hook_error", 3, "open")
    assert "KeyError" in event["payload"]["cause"]


# --- the timeline ----------------------------------------------------------------------------------

def test_the_timeline_has_four_lanes_and_shows_the_terminal_status(path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    finished_run(path, status="yielded_unverified")
    fig = plot_timeline(load_checked(path))
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["model", "tools", "hooks", "verification"]
    texts = " ".join(t.get_text() for t in ax.texts)
    assert "UNVERIFIED" in texts and "passed" not in texts.lower()
    plt.close(fig)


# --- the acceptance test: a writer killed with SIGKILL ---------------------------------------------

CHILD = textwrap.dedent("""
    import json, sys
    from donegate.trajectory_io import DurableWriter

    path, mode = sys.argv[1], sys.argv[2]
    writer = DurableWriter(path, run_id="r-killed", task_id="count")
    writer.run_started("count until killed")
    announced = False
    while True:
        writer.turn_started()
        writer.model_reply("still counting " * 20, claims=[str(writer.seq)])
        if mode == "torn" and writer.seq == 21:
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps({"v": 1, "run_id": "r-killed", "seq": 22})[:30])
                f.flush()
            print("ready", flush=True)
            sys.stdin.read()
        if mode == "free" and writer.seq >= 100 and not announced:
            print("ready", flush=True)
            announced = True
""")


def write_until_killed(tmp_path: Path, mode: str) -> Path:
    """Run CHILD in a real process, wait until it reports ready through its stdout pipe, SIGKILL it."""
    script, path = tmp_path / "child.py", tmp_path / f"killed-{mode}.jsonl"
    script.write_text(CHILD)
    child = subprocess.Popen([sys.executable, str(script), str(path), mode], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready = child.stdout.readline()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    assert ready == "ready\n", child.stderr.read()
    assert child.returncode == -signal.SIGKILL
    return path


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="SIGKILL is POSIX only")
def test_a_writer_killed_mid_line_loads_with_the_torn_line_reported_and_every_complete_event(tmp_path):
    result = load_checked(write_until_killed(tmp_path, "torn"))
    assert [(p.line, p.kind) for p in result.problems] == [(22, "torn_line"), (None, "unfinished")]
    assert [e.seq for e in result.events] == list(range(1, 22))


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="SIGKILL is POSIX only")
def test_a_writer_killed_while_writing_freely_loses_no_complete_event(tmp_path):
    path = write_until_killed(tmp_path, "free")
    result = load_checked(path)
    complete = path.read_bytes().count(b"\n")
    assert complete >= 100
    assert [e.seq for e in result.events] == list(range(1, complete + 1))
    assert {p.kind for p in result.problems} <= {"torn_line", "unfinished"}
    assert "unfinished" in {p.kind for p in result.problems}


def test_validating_an_event_does_not_build_the_iri_grammar():
    """The full schema check imports jsonschema; rfc3987-syntax's IRI parsers (seconds to build, and the event
    schema has no `iri` format) are not built for it, so `donegate audit` does not wait for them."""
    import subprocess
    import sys
    probe = ("import sys\nfrom donegate.trajectory_io import schema_problem\n"
             "print(schema_problem({'type': 'nonsense'}) is not None, 'rfc3987_syntax.syntax_helpers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "False"]


def test_the_trajectory_imports_its_appendix_module_only_where_it_uses_it():
    """donegate.trajectory_io (appendix 98) imports donegate.trajectory and fills its seams; the trajectory never
    imports it back, so importing the trajectory does not import it and there is no import cycle."""
    import subprocess
    import sys
    probe = "import sys, donegate.trajectory; print('donegate.trajectory_io' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False"]
