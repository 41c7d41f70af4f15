"""A scripted OpenAI chat-completions API, for the two hosts that speak it: Qwen Code (`--auth-type openai`)
and GitHub Copilot CLI (its own-provider mode, COPILOT_PROVIDER_BASE_URL). `POST .../chat/completions`
answers one scripted turn as a stream of chat.completion.chunk events: the turn's text, then at most one tool
call, then the finish reason and the usage. Each turn is a `Reply`, or a callable that gets the request and
returns one. A request that offers no tools is not an agent turn (a side request) and is answered "ok"
without taking a turn. When the script runs out, the model says "done" and calls no tool."""
from __future__ import annotations

import itertools
import json
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Union

from scripted import Request, ScriptedServer

MODEL = "scripted-model"
_ids = itertools.count(1)


@dataclass(frozen=True)
class Reply:
    """One model turn: what it says, and the one tool it calls (name and arguments), if any."""
    text: str = ""
    tool: str | None = None
    args: dict | None = None


def say(text: str) -> Reply:
    return Reply(text)


def call(tool: str, **args: Any) -> Reply:
    return Reply("", tool, args)


Turn = Union[Reply, Callable[[Request], Reply]]


def _chunks(reply: Reply) -> list[str]:
    ident, now = f"chatcmpl-{next(_ids)}", int(time.time())

    def chunk(delta: dict, finish: str | None = None, **extra: Any) -> str:
        return "data: " + json.dumps({"id": ident, "object": "chat.completion.chunk", "created": now, "model": MODEL,
                                      "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}) + "\n\n"

    out = [chunk({"role": "assistant", "content": ""})]
    if reply.text:
        out.append(chunk({"content": reply.text}))
    if reply.tool:
        out.append(chunk({"tool_calls": [{"index": 0, "id": f"call_{next(_ids)}", "type": "function",
                                          "function": {"name": reply.tool, "arguments": json.dumps(reply.args or {})}}]}))
    out.append(chunk({}, "tool_calls" if reply.tool else "stop"))
    usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    out.append("data: " + json.dumps({"id": ident, "object": "chat.completion.chunk", "created": now, "model": MODEL,
                                      "choices": [], "usage": usage}) + "\n\n")
    return out + ["data: [DONE]\n\n"]


class ChatServer(ScriptedServer):
    """Answers agent turns from `turns`, in order; `turns_asked` lists the requests that took one."""

    def __init__(self, turns: Iterable[Turn] = ()) -> None:
        super().__init__()
        self.turns: list[Turn] = list(turns)
        self.turns_asked: list[Request] = []

    def handle(self, request: Request) -> tuple[int, dict[str, str], Iterable[str | bytes]]:
        path = request.path.split("?", 1)[0].rstrip("/")
        if request.method == "POST" and path.endswith("/chat/completions"):
            body = request.body if isinstance(request.body, dict) else {}
            if body.get("tools"):
                self.turns_asked.append(request)
                turn = self.turns.pop(0) if self.turns else say("done")
                reply = turn(request) if callable(turn) else turn
            else:
                reply = say("ok")
            return 200, {"Content-Type": "text/event-stream"}, _chunks(reply)
        if request.method == "GET" and path.endswith("/models"):
            return 200, {"Content-Type": "application/json"}, [json.dumps({"object": "list", "data": [
                {"id": MODEL, "object": "model", "owned_by": "scripted"}]})]
        return 404, {"Content-Type": "application/json"}, [json.dumps({"error": {"message": "not scripted"}})]


def last_user_text(request: Request) -> str:
    """The text of the last user message a request carries (a refusal the host sent back arrives as one)."""
    messages = (request.body or {}).get("messages") or []
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else "\n".join(
                p.get("text", "") for p in content or () if isinstance(p, dict))
    return ""
