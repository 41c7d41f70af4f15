"""A scripted Anthropic Messages API for Claude Code: `POST /v1/messages` answered from a script as a
stream of server-sent events, the way the real API streams a reply.

A reply is a list of content blocks (`text(...)`, `tool_use(...)` and the helpers `edit`, `write`,
`bash`), or an `ApiError`, or a callable that gets the request and returns one of those (to look at
what the model was sent). Only the agent loop's requests (those offering tools) take the script's
replies in order; every other model call Claude Code makes (a title, a summary, a quick check with a
small model) gets a short harmless text and leaves the script alone. When the script is used up every
further agent-loop request gets `DONE_TEXT`, so a run always ends.
"""
from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence, Union

from scripted import Request, ScriptedServer, sse

DONE_TEXT = "All done."
SIDE_TEXT = "ok"


@dataclass(frozen=True)
class ApiError:
    """An error answer for one agent-loop request: `status` with the API's error body."""
    status: int = 529
    kind: str = "overloaded_error"
    message: str = "Overloaded"
    repeat: bool = True  # answer every later agent-loop request with it too (retries included)


Block = dict[str, Any]
Reply = Union[list[Block], ApiError]
ScriptItem = Union[Reply, Callable[[Request], Reply]]

_ids = itertools.count(1)


def text(words: str) -> Block:
    return {"type": "text", "text": words}


def tool_use(tool: str, /, **arguments: Any) -> Block:
    return {"type": "tool_use", "id": f"toolu_{next(_ids):04d}", "name": tool, "input": arguments}


def edit(path: str, old: str, new: str) -> Block:
    return tool_use("Edit", file_path=str(path), old_string=old, new_string=new)


def write(path: str, content: str) -> Block:
    return tool_use("Write", file_path=str(path), content=content)


def bash(command: str) -> Block:
    return tool_use("Bash", command=command, description="run a command")


def is_messages_call(request: Request) -> bool:
    return request.method == "POST" and request.path.split("?")[0] == "/v1/messages"


def is_agent_loop(request: Request) -> bool:
    """The main agent loop offers the model its tools; side calls (titles, summaries) offer none."""
    body = request.body if isinstance(request.body, dict) else {}
    return is_messages_call(request) and any(t.get("name") == "Bash" for t in body.get("tools") or ())


GOAL_JUDGE = "You are evaluating a stop-condition hook"  # how /goal's judge request opens its system prompt


def is_goal_judge(request: Request) -> bool:
    """The request /goal sends at a stop: no tools, the transcript, and a system prompt asking for a verdict as
    JSON ({"ok": bool, "reason": str}); any other reply is an evaluator error to Claude Code."""
    system = (request.body or {}).get("system") if isinstance(request.body, dict) else None
    blocks = system if isinstance(system, list) else [{"text": system}] if isinstance(system, str) else []
    return any(GOAL_JUDGE in str(b.get("text", "")) for b in blocks if isinstance(b, dict))


def tool_results(request: Request) -> list[dict]:
    """The tool_result blocks of the newest user message of a request (what the last tool calls returned)."""
    messages = (request.body or {}).get("messages") or []
    users = [m for m in messages if m.get("role") == "user"]
    content = users[-1].get("content") if users else None
    return [b for b in content if b.get("type") == "tool_result"] if isinstance(content, list) else []


def newest_user_text(request: Request) -> str:
    """All the text of the newest user message (tool results and hook feedback included), as one string."""
    messages = (request.body or {}).get("messages") or []
    users = [m for m in messages if m.get("role") == "user"]
    return json.dumps(users[-1].get("content"), ensure_ascii=False) if users else ""


def _events(model: str, blocks: Sequence[Block]) -> list[str]:
    """The event stream of one reply: message_start, each block's start/delta/stop, message_delta, message_stop."""
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    message = {"id": f"msg_{next(_ids):04d}", "type": "message", "role": "assistant", "model": model,
               "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {"input_tokens": 10, "output_tokens": 1}}
    events: list[tuple[str, Any]] = [("message_start", {"type": "message_start", "message": message})]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}),
                   ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
                   ("content_block_stop", {"type": "content_block_stop", "index": index})]
    events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                  "usage": {"output_tokens": 5}}),
               ("message_stop", {"type": "message_stop"})]
    return sse(events)


def _whole(model: str, blocks: Sequence[Block]) -> str:
    """The same reply as one JSON message, for a request that did not ask for a stream."""
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    return json.dumps({"id": f"msg_{next(_ids):04d}", "type": "message", "role": "assistant", "model": model,
                       "content": list(blocks), "stop_reason": stop, "stop_sequence": None,
                       "usage": {"input_tokens": 10, "output_tokens": 5}})


class ClaudeServer(ScriptedServer):
    """The scripted Messages API. `agent_requests` are the agent-loop requests, in order; request i got
    the script's reply i (the first one is the user's prompt, each later one carries tool results or
    the stop hook's feedback)."""

    def __init__(self, script: Iterable[ScriptItem] = (), verdicts: Iterable = ()) -> None:
        super().__init__()
        self.script: list[ScriptItem] = list(script)
        self.agent_requests: list[Request] = []
        self.sticky_error: ApiError | None = None
        self.verdicts: list = list(verdicts)  # the goal judge's replies (or functions of its request), in order
        self.judge_requests: list[Request] = []

    def then(self, *items: ScriptItem) -> "ClaudeServer":
        """Add replies to the script (for a second run against the same server)."""
        self.script.extend(items)
        return self

    @property
    def side_requests(self) -> list[Request]:
        return [r for r in self.requests if is_messages_call(r) and r not in self.agent_requests]

    def handle(self, request: Request) -> tuple[int, dict[str, str], Iterable[str | bytes]]:
        if not is_messages_call(request):  # count_tokens and anything else: a minimal, valid answer
            return 200, {"Content-Type": "application/json"}, [json.dumps({"input_tokens": 10})]
        body = request.body if isinstance(request.body, dict) else {}
        model = str(body.get("model") or "claude-scripted")
        if is_goal_judge(request):
            self.judge_requests.append(request)
            verdict = self.verdicts.pop(0) if self.verdicts else SIDE_TEXT
            verdict = verdict(request) if callable(verdict) else verdict  # a judge that reads the request
            return self._reply(model, [text(verdict)], bool(body.get("stream")))
        if not is_agent_loop(request):
            return self._reply(model, [text(SIDE_TEXT)], bool(body.get("stream")))
        self.agent_requests.append(request)
        reply = self._next(request)
        if isinstance(reply, ApiError):
            error = {"type": "error", "error": {"type": reply.kind, "message": reply.message}}
            return reply.status, {"Content-Type": "application/json", "x-should-retry": "false"}, [json.dumps(error)]
        return self._reply(model, reply, bool(body.get("stream")))

    def _next(self, request: Request) -> Reply:
        if self.sticky_error is not None:
            return self.sticky_error
        item: ScriptItem = self.script.pop(0) if self.script else [text(DONE_TEXT)]
        reply = item(request) if callable(item) else item
        if isinstance(reply, ApiError) and reply.repeat:
            self.sticky_error = reply
        return reply

    @staticmethod
    def _reply(model: str, blocks: Sequence[Block], stream: bool) -> tuple[int, dict[str, str], list[str]]:
        if stream:
            return 200, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}, _events(model, blocks)
        return 200, {"Content-Type": "application/json"}, [_whole(model, blocks)]
