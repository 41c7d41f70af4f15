"""The contract of donegate.agent (DESIGN 2.6): scripted and HTTP models, tools in a workspace, hooks, checkpoints."""
from __future__ import annotations

import json
import os
import select
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from donegate.agent import (
    TOOLS,
    Agent,
    ModelError,
    OpenAICompatibleModel,
    ScriptedModel,
    ToolError,
    Workspace,
)
from donegate.hooks import Decision, HookRegistry
from donegate.trajectory import TrajectoryWriter
from donegate.trajectory_io import load_checked, validate_checked


def bash(command: str) -> dict:
    return {"tool": "bash", "input": {"command": command}}


def write(path: str, content: str) -> dict:
    return {"tool": "write", "input": {"file_path": path, "content": content}}


def stop(text: str = "Done.") -> dict:
    return {"text": text}


class Run:
    """One agent run in a temporary project: the agent, its model, registry and trajectory path."""

    def __init__(self, tmp_path: Path, replies, *, name: str = "run", **agent_options) -> None:
        self.project = tmp_path / "project"
        self.project.mkdir(exist_ok=True)
        self.model = replies if hasattr(replies, "reply") else ScriptedModel(replies)
        self.writer = TrajectoryWriter(tmp_path / f"{name}.jsonl", task_id=name)
        self.registry = HookRegistry(recorder=self.writer.recorder())
        self.agent = Agent(self.model, self.project, registry=self.registry, writer=self.writer, **agent_options)

    def events(self, type: str | None = None) -> list:
        events = load_checked(self.writer.path).events
        return [e for e in events if type is None or e.type == type]

    def output_of(self, n: int) -> str:
        """The full output of the n-th completed tool call, read back from the artifact store."""
        ref = self.events("tool_completed")[n].payload["output"]["artifact_ref"]
        return self.writer.artifacts.read(ref).decode()


# -- scripted model -------------------------------------------------------------------------------------------
def test_scripted_replies_drive_tool_calls_in_order_and_the_first_reply_without_tools_ends_the_run(tmp_path):
    run = Run(tmp_path, [
        {"text": "one and two", "tool_calls": [write("log.txt", "1\n"), bash("echo 2 >> log.txt")]},
        {"text": "three", "tool_calls": [bash("echo 3 >> log.txt")]},
        stop("All done."),
        {"text": "never asked", "tool_calls": [write("late.txt", "too late\n")]},
    ])
    result = run.agent.run("count to three")
    assert (result.status, result.iterations) == ("completed", 3)
    assert (run.project / "log.txt").read_text() == "1\n2\n3\n"
    assert [e.payload["tool"] for e in run.events("tool_requested")] == ["write", "bash", "bash"]
    assert run.model.position == 3
    assert not (run.project / "late.txt").exists()


@pytest.mark.parametrize("replies, named", [
    ([stop(), {"txt": "typo"}], "scripted reply 2 "),
    ([stop(), stop(), "just a string"], "scripted reply 3 "),
    ([{"text": "x", "tool_calls": [{"tool": "delete", "input": {}}]}], "scripted reply 1, tool call 1"),
    ([stop(), {"text": "x", "tool_calls": [{"tool": "bash"}]}], "scripted reply 2, tool call 1"),
    ([stop(), {"text": "x", "claims": "all tests pass"}], "scripted reply 2: 'claims'"),
    ([{"text": "x", "tool_calls": None}], "scripted reply 1: 'tool_calls'"),
])
def test_a_malformed_script_entry_raises_value_error_naming_the_reply(replies, named):
    with pytest.raises(ValueError, match=named):
        ScriptedModel(replies)


def test_from_file_reads_a_list_or_an_object_with_replies(tmp_path):
    (tmp_path / "list.json").write_text(json.dumps([stop("a")]))
    (tmp_path / "object.json").write_text(json.dumps({"name": "x", "replies": [stop("b")]}))
    assert ScriptedModel.from_file(tmp_path / "list.json").reply([]).text == "a"
    assert ScriptedModel.from_file(tmp_path / "object.json").reply([]).text == "b"


def test_an_exhausted_script_ends_the_run_as_failed(tmp_path):
    run = Run(tmp_path, [{"text": "looking", "tool_calls": [{"tool": "list", "input": {}}]}])
    result = run.agent.run("look around")
    assert result.status == "failed"
    assert "no reply left" in result.reason
    assert run.events()[-1].payload["status"] == "failed"


# -- workspace and tools ---------------------------------------------------------------------------------------
def test_a_path_outside_the_workspace_is_refused_recorded_as_tool_failed_and_the_run_continues(tmp_path):
    (tmp_path / "secret.txt").write_text("the launch codes\n")
    run = Run(tmp_path, [
        {"text": "peeking", "tool_calls": [{"tool": "read", "input": {"file_path": "../secret.txt"}},
                                           write("inside.txt", "ok\n")]},
        stop(),
    ])
    result = run.agent.run("peek")
    assert result.status == "completed"
    failed = run.events("tool_failed")
    assert [e.payload["call_id"] for e in failed] == ["call_1_1"]
    assert "outside the workspace" in failed[0].payload["error"]
    assert (run.project / "inside.txt").read_text() == "ok\n"
    tool_messages = [m["content"] for m in run.agent.messages if m["role"] == "tool"]
    assert tool_messages[0].startswith("error:") and "launch codes" not in "".join(tool_messages)


@pytest.mark.parametrize("name", ["../x.txt", "/etc/hostname", "link/x.txt", "escape.txt"])
def test_workspace_refuses_every_spelling_of_a_path_outside_it(tmp_path, name):
    root = tmp_path / "root"
    root.mkdir()
    (root / "link").symlink_to(tmp_path)
    (root / "escape.txt").symlink_to(tmp_path / "x.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        Workspace(root).path(name)


def test_edit_requires_an_old_string_that_occurs_exactly_once(tmp_path):
    ws = Workspace(tmp_path)
    (tmp_path / "a.py").write_text("x = 1\nx = 1\ny = 2\n")
    for missing_or_repeated in ("x = 1", "z = 3"):
        with pytest.raises(ToolError, match="exactly once"):
            ws.run("edit", {"file_path": "a.py", "old_string": missing_or_repeated, "new_string": "q = 0"})
    assert (tmp_path / "a.py").read_text() == "x = 1\nx = 1\ny = 2\n"
    ws.run("edit", {"file_path": "a.py", "old_string": "y = 2", "new_string": "y = 3"})
    assert (tmp_path / "a.py").read_text() == "x = 1\nx = 1\ny = 3\n"


def test_bash_timeout_kills_the_whole_process_group_and_returns_124_in_bounded_time(tmp_path):
    ws = Workspace(tmp_path, bash_timeout=0.5)
    started = time.monotonic()
    result = ws.run("bash", {"command": "sleep 30 & echo $! > background.pid; sleep 30; echo never"})
    elapsed = time.monotonic() - started
    assert result.exit_code == 124
    assert elapsed < 10
    assert "never" not in result.output and "timed out" in result.output
    assert background_process_ends(int((tmp_path / "background.pid").read_text()), within=5)


def test_a_process_group_that_is_gone_when_the_timeout_fires_is_not_an_error(tmp_path, monkeypatch):
    real_killpg = os.killpg

    def killpg_then_gone(pgid, sig):  # the group exits on its own just as the timeout fires
        real_killpg(pgid, sig)
        raise ProcessLookupError(3, "No such process")

    monkeypatch.setattr(os, "killpg", killpg_then_gone)
    result = Workspace(tmp_path, bash_timeout=0.2).run("bash", {"command": "sleep 30"})
    assert result.exit_code == 124


def background_process_ends(pid: int, within: float) -> bool:
    """True if the process `pid` (not our child) has ended or ends within `within` seconds (a pidfd turns
    readable when its process terminates; zombies count as ended)."""
    if not hasattr(os, "pidfd_open"):
        pytest.skip("needs os.pidfd_open (Linux) to wait for a process that is not our child")
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], within)[0])
    finally:
        os.close(fd)


def test_bash_returns_the_commands_exit_code_and_output(tmp_path):
    result = Workspace(tmp_path).run("bash", {"command": "echo out; echo err >&2; exit 3"})
    assert (result.exit_code, result.output.split()) == (3, ["out", "err"])


def test_api_key_variables_are_removed_from_the_childs_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-test-github")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-test-secret")
    monkeypatch.setenv("DONEGATE_TEST_VISIBLE", "still-here")
    run = Run(tmp_path, [{"text": "env", "tool_calls": [bash("env")]}, stop()])
    run.agent.run("show the environment")
    output = run.output_of(0)
    assert "DONEGATE_TEST_VISIBLE=still-here" in output
    for name, value in (("OPENAI_API_KEY", "sk-test-openai"), ("GITHUB_TOKEN", "ghp-test-github"),
                        ("AWS_SECRET_ACCESS_KEY", "aws-test-secret")):
        assert name not in output and value not in output


def test_an_edit_keeps_the_files_own_line_endings(tmp_path):
    ws = Workspace(tmp_path)
    (tmp_path / "win.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    ws.run("edit", {"file_path": "win.txt", "old_string": "b\nc", "new_string": "B\nc"})
    assert (tmp_path / "win.txt").read_bytes() == b"a\r\nB\r\nc\r\n"


def test_a_file_tool_that_fails_on_the_file_system_is_a_tool_error_and_the_run_goes_on(tmp_path):
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "notes.txt").write_text("a file, not a folder\n")
    (tmp_path / "project" / "latin1.txt").write_bytes(b"caf\xe9\n")
    run = Run(tmp_path, [
        {"text": "clumsy", "tool_calls": [write(".", "x"), write("notes.txt/inner.txt", "x"),
                                          {"tool": "edit", "input": {"file_path": "latin1.txt", "old_string": "caf",
                                                                     "new_string": "tea"}}]},
        stop(),
    ])
    result = run.agent.run("write things")
    assert result.status == "completed"
    assert [e.payload["call_id"] for e in run.events("tool_failed")] == ["call_1_1", "call_1_2", "call_1_3"]
    assert validate_checked(run.writer.path).ok


def test_a_failing_commands_exit_code_survives_the_clipping_of_its_output(tmp_path):
    run = Run(tmp_path, [{"text": "loud failure", "tool_calls": [bash("seq 1 20000; exit 3")]}, stop()])
    run.agent.run("count and fail")
    message = next(m["content"] for m in run.agent.messages if m["role"] == "tool")
    assert len(message) < 7000 and message.endswith("20000\n\n[exit 3]")


def test_long_bash_output_is_stored_whole_as_an_artifact_and_clipped_for_the_model(tmp_path):
    run = Run(tmp_path, [{"text": "noisy", "tool_calls": [bash("seq 1 20000")]}, stop()])
    run.agent.run("count")
    assert run.output_of(0) == "".join(f"{n}\n" for n in range(1, 20001))
    message = next(m["content"] for m in run.agent.messages if m["role"] == "tool")
    assert len(message) < 7000 and message.endswith("20000\n")


# -- hooks -----------------------------------------------------------------------------------------------------
def test_a_before_tool_call_deny_ends_the_run_as_blocked_and_later_calls_are_not_run(tmp_path):
    run = Run(tmp_path, [
        {"text": "tidy", "tool_calls": [bash("rm -rf victim"), write("later.txt", "x")]},
        {"text": "again", "tool_calls": [write("next-reply.txt", "x")]},
        stop(),
    ])
    (run.project / "victim").mkdir()
    run.registry.register("no_rm_rf", "before_tool_call",
                          lambda p: Decision.deny("no rm -rf") if "rm -rf" in p["tool_input"]["command"] else None,
                          matcher="bash", on_error="closed")
    result = run.agent.run("tidy up")
    assert result.status == "blocked" and "no_rm_rf" in result.reason
    assert (run.project / "victim").is_dir()
    assert not (run.project / "later.txt").exists() and not (run.project / "next-reply.txt").exists()
    assert [e.payload["call_id"] for e in run.events("tool_requested")] == ["call_1_1"]
    assert [e.payload["action"] for e in run.events("hook_decision")] == ["deny"]
    assert run.model.position == 1


def test_after_a_deny_every_tool_call_of_the_reply_still_has_an_answer_in_the_conversation(tmp_path):
    """Chat-completions servers reject a conversation with an unanswered tool call, e.g. when it is resumed."""
    run = Run(tmp_path, [{"text": "three", "tool_calls": [bash("rm -rf x"), bash("true"), write("a.txt", "a")]}])
    run.registry.register("no", "before_tool_call", lambda p: Decision.deny("no"), on_error="closed")
    run.agent.run("x")
    asked = [c["id"] for m in run.agent.messages for c in m.get("tool_calls", [])]
    answered = [m["tool_call_id"] for m in run.agent.messages if m["role"] == "tool"]
    assert asked == answered == ["call_1_1", "call_1_2", "call_1_3"]


def test_an_allow_with_updated_input_runs_the_rewritten_call(tmp_path):
    run = Run(tmp_path, [{"text": "w", "tool_calls": [write("a.txt", "original\n")]}, stop()])
    run.registry.register("rewrite", "before_tool_call",
                          lambda p: Decision.allow("redirect", {**p["tool_input"], "file_path": "b.txt"}),
                          on_error="closed")
    run.agent.run("write")
    assert not (run.project / "a.txt").exists()
    assert (run.project / "b.txt").read_text() == "original\n"


def test_an_on_stop_block_feeds_its_reason_back_as_the_next_user_message_and_the_loop_continues(tmp_path):
    run = Run(tmp_path, [stop("Done."), {"text": "ran", "tool_calls": [bash("echo ran > ran.txt")]}, stop("Done now.")])
    blocks = iter([Decision.block("Run the program first."), None])
    run.registry.register("once", "on_stop", lambda p: next(blocks), on_error="closed")
    result = run.agent.run("do it")
    assert (result.status, result.iterations) == ("completed", 3)
    assert (run.project / "ran.txt").exists()
    first_stop = run.agent.messages.index({"role": "assistant", "content": "Done."})
    assert run.agent.messages[first_stop + 1] == {"role": "user", "content": "Run the program first."}


def test_stop_hook_active_is_false_at_the_first_stop_and_true_after_a_block(tmp_path):
    run = Run(tmp_path, [stop("one"), stop("two"), stop("three")])
    seen = []

    def block_twice(payload):
        seen.append((payload["stop_hook_active"], payload["claim"]))
        return Decision.block("not yet") if len(seen) < 3 else None

    run.registry.register("block_twice", "on_stop", block_twice, on_error="closed")
    assert run.agent.run("stop three times").status == "completed"
    assert seen == [(False, "one"), (True, "two"), (True, "three")]


def test_a_deny_on_stop_is_a_refusal_not_a_pass(tmp_path):
    run = Run(tmp_path, [stop("one"), stop("two")])
    answers = iter([Decision.deny("tests not run"), None])
    run.registry.register("misworded", "on_stop", lambda p: next(answers), on_error="closed")
    result = run.agent.run("stop")
    assert (result.status, result.iterations) == ("completed", 2)
    assert {"role": "user", "content": "tests not run"} in run.agent.messages


def test_an_allowed_stop_ends_with_the_status_stop_status_gives(tmp_path):
    run = Run(tmp_path, [stop()], stop_status=lambda: ("verified", "the check passed"))
    result = run.agent.run("x")
    assert (result.status, result.reason) == ("verified", "the check passed")


def test_max_iterations_ends_the_run_with_status_max_iterations(tmp_path):
    run = Run(tmp_path, [{"text": f"step {n}", "tool_calls": [bash("true")]} for n in range(5)] + [stop()],
              max_iterations=3)
    result = run.agent.run("loop")
    assert (result.status, result.iterations, run.model.position) == ("max_iterations", 3, 3)


# -- checkpoints -----------------------------------------------------------------------------------------------
class CheckpointSpy(ScriptedModel):
    """A script that, before each reply, notes the iteration the checkpoint file holds (None: no file yet)."""

    def __init__(self, replies, checkpoint: Path) -> None:
        super().__init__(replies)
        self.checkpoint, self.seen = checkpoint, []

    def reply(self, messages, tools=()):
        self.seen.append(json.loads(self.checkpoint.read_text())["iteration"] if self.checkpoint.exists() else None)
        return super().reply(messages, tools)


def test_the_checkpoint_is_written_after_each_iteration(tmp_path):
    checkpoint = tmp_path / "checkpoint.json"
    spy = CheckpointSpy([{"text": "a", "tool_calls": [bash("true")]}, {"text": "b", "tool_calls": [bash("true")]},
                         stop("first"), stop("second")], checkpoint)
    run = Run(tmp_path, spy, checkpoint=checkpoint)
    blocks = iter([Decision.block("again"), None])
    run.registry.register("once", "on_stop", lambda p: next(blocks), on_error="closed")
    run.agent.run("work")
    assert spy.seen == [None, 1, 2, 3]
    saved = json.loads(checkpoint.read_text())
    assert (saved["iteration"], saved["stops"], saved["model"]) == (4, 2, {"position": 4})
    assert saved["messages"] == run.agent.messages


class Crash(Exception):
    pass


class CrashingScript(ScriptedModel):
    def reply(self, messages, tools=()):
        if self.position == 2:
            raise Crash("the process died")
        return super().reply(messages, tools)


def test_resume_continues_from_the_checkpoint_with_the_scripted_models_position_restored(tmp_path):
    replies = [{"text": f"step {n}", "tool_calls": [bash(f"echo {n} >> steps.log")]} for n in (1, 2, 3)] + [stop()]
    checkpoint = tmp_path / "checkpoint.json"
    crashed = Run(tmp_path, CrashingScript(replies), name="crashed", checkpoint=checkpoint)
    with pytest.raises(Crash):
        crashed.agent.run("three steps")
    crashed.writer.close()
    resumed = Run(tmp_path, replies, name="resumed", checkpoint=checkpoint)
    result = resumed.agent.resume(checkpoint)
    assert (result.status, result.iterations) == ("completed", 4)
    assert (resumed.project / "steps.log").read_text() == "1\n2\n3\n"
    assert resumed.model.position == 4
    assert resumed.events()[0].payload["meta"]["resumed_from"] == str(checkpoint)


# -- every run leaves a valid trajectory -------------------------------------------------------------------------
def _completed(tmp_path):
    return Run(tmp_path, [{"text": "w", "tool_calls": [write("a.txt", "a")]}, stop()])


def _blocked(tmp_path):
    run = Run(tmp_path, [{"text": "x", "tool_calls": [bash("true")]}])
    run.registry.register("no", "before_tool_call", lambda p: Decision.deny("no"), on_error="closed")
    return run


def _failed(tmp_path):
    return Run(tmp_path, [{"text": "x", "tool_calls": [bash("true")]}])


def _max_iterations(tmp_path):
    return Run(tmp_path, [{"text": "x", "tool_calls": [bash("true")]}] * 3, max_iterations=2)


def _blocked_stop_then_tool_error(tmp_path):
    run = Run(tmp_path, [stop(), {"text": "r", "tool_calls": [{"tool": "read", "input": {"file_path": "../x"}}]}, stop()])
    answers = iter([Decision.block("again"), None])
    run.registry.register("once", "on_stop", lambda p: next(answers), on_error="closed")
    return run


@pytest.mark.parametrize("make, status", [(_completed, "completed"), (_blocked, "blocked"), (_failed, "failed"),
                                          (_max_iterations, "max_iterations"),
                                          (_blocked_stop_then_tool_error, "completed")],
                         ids=lambda v: v.__name__.strip("_") if callable(v) else v)
def test_every_run_writes_a_trajectory_that_validates_and_ends_with_run_finished(tmp_path, make, status):
    run = make(tmp_path)
    result = run.agent.run("task")
    checked = validate_checked(result.trajectory)
    assert checked.ok, checked.first_problem
    assert checked.events[-1].type == "run_finished"
    assert checked.events[-1].payload["status"] == result.status == status


# -- the chat-completions model ----------------------------------------------------------------------------------
class ChatServer:
    """A local chat-completions server on 127.0.0.1, port 0: answers each POST with the next canned response
    (status, body bytes) and keeps every request it received (path, headers, decoded body)."""

    def __init__(self, responses) -> None:
        self.responses, self.requests = list(responses), []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                owner.requests.append({"path": self.path, "headers": dict(self.headers), "body": json.loads(raw)})
                status, body = owner.responses.pop(0)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


def completion(message: dict) -> tuple[int, bytes]:
    return 200, json.dumps({"object": "chat.completion", "choices": [{"index": 0, "message": message}]}).encode()


TOOL_CALL = completion({"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_abc", "type": "function",
     "function": {"name": "write", "arguments": json.dumps({"file_path": "hello.txt", "content": "hi\n"})}}]})
FINAL = completion({"role": "assistant", "content": "Wrote hello.txt."})


@pytest.fixture
def chat_server(monkeypatch):
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    servers = []

    def start(*responses) -> ChatServer:
        servers.append(ChatServer(responses))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def test_openai_compatible_model_runs_a_tool_call_then_stops_and_sends_chat_completions_requests(tmp_path, chat_server):
    server = chat_server(TOOL_CALL, FINAL)
    model = OpenAICompatibleModel(server.url, "tiny-model", api_key="sk-local")
    run = Run(tmp_path, model)
    result = run.agent.run("Write hello.txt.")
    assert (result.status, result.iterations, model.calls) == ("completed", 2, 2)
    assert (run.project / "hello.txt").read_text() == "hi\n"
    first, second = server.requests
    assert first["path"] == "/v1/chat/completions"
    assert first["headers"]["Authorization"] == "Bearer sk-local"
    assert first["body"]["model"] == "tiny-model"
    assert [(m["role"], m["content"]) for m in first["body"]["messages"]][1] == ("user", "Write hello.txt.")
    assert first["body"]["messages"][0]["role"] == "system"
    tools = first["body"]["tools"]
    assert [t["function"]["name"] for t in tools] == list(TOOLS)
    assert all(t["type"] == "function" and t["function"]["parameters"]["type"] == "object" for t in tools)
    assistant, tool = second["body"]["messages"][-2:]
    assert assistant["tool_calls"][0]["id"] == "call_abc" and assistant["tool_calls"][0]["function"]["name"] == "write"
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"])["file_path"] == "hello.txt"
    assert tool["role"] == "tool" and tool["tool_call_id"] == "call_abc"
    assert run.events()[-2].payload["reason"] == "Wrote hello.txt."


def test_openai_compatible_model_sends_no_authorization_header_without_an_api_key(chat_server):
    server = chat_server(FINAL)
    OpenAICompatibleModel(server.url, "tiny-model").reply([{"role": "user", "content": "hi"}])
    assert "Authorization" not in server.requests[0]["headers"]


def test_from_env_without_the_variables_raises_model_error_naming_them():
    with pytest.raises(ModelError, match="DONEGATE_MODEL_URL and DONEGATE_MODEL "):
        OpenAICompatibleModel.from_env({})
    with pytest.raises(ModelError, match="set DONEGATE_MODEL to"):
        OpenAICompatibleModel.from_env({"DONEGATE_MODEL_URL": "http://127.0.0.1:9/v1"})


def test_from_env_reads_url_model_and_api_key():
    model = OpenAICompatibleModel.from_env({"DONEGATE_MODEL_URL": "http://127.0.0.1:9/v1/", "DONEGATE_MODEL": "m",
                                            "DONEGATE_MODEL_API_KEY": "k"})
    assert (model.url, model.model, model.api_key) == ("http://127.0.0.1:9/v1/chat/completions", "m", "k")


@pytest.mark.parametrize("response, says", [
    ((500, b'{"error": "boom"}'), "HTTP 500"),
    ((200, b"<html>not json</html>"), "did not answer with JSON"),
    ((200, b'{"choices": []}'), "chat-completions shape"),
    (completion({"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "write", "arguments": "[1, 2]"}}]}),
     "not a JSON object"),
], ids=["http-500", "not-json", "no-choices", "arguments-not-an-object"])
def test_a_server_error_or_an_unusable_reply_gives_model_error(chat_server, response, says):
    server = chat_server(response)
    with pytest.raises(ModelError, match=says):
        OpenAICompatibleModel(server.url, "m").reply([{"role": "user", "content": "hi"}])


def test_a_model_error_from_the_server_ends_the_run_as_failed(tmp_path, chat_server):
    server = chat_server((500, b"overloaded"))
    result = Run(tmp_path, OpenAICompatibleModel(server.url, "m")).agent.run("x")
    assert result.status == "failed" and "HTTP 500" in result.reason


def test_a_local_model_server_is_reached_directly_even_with_a_proxy_set(chat_server, monkeypatch):
    server = chat_server(FINAL)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")   # nothing listens there: a proxied request fails
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    reply = OpenAICompatibleModel(server.url, "tiny-model").reply([{"role": "user", "content": "hi"}])
    assert reply.text == "Wrote hello.txt."


def test_the_system_prompt_says_what_the_gate_s_tag_means():
    """The stop gate's refusal arrives as a user message; the prompt tells the model it is the check's report,
    not the person's instruction, and never a wider task."""
    from donegate.agent import SYSTEM_PROMPT
    from donegate.stopgate import TAG

    assert f"begins with {TAG}" in SYSTEM_PROMPT
    assert "not from the person you work for" in SYSTEM_PROMPT and "never widens the task" in SYSTEM_PROMPT
