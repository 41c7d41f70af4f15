"""A scripted Gemini API for Gemini CLI: `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`
answered from a script as server-sent events, one `GenerateContentResponse` chunk per event.

A reply is a list of parts (`text(...)`, `call(...)` and the helpers `write_file`, `replace`, `shell`),
or a callable that gets the request and returns one. Only the agent loop's requests (those offering
the model its tools) take the script's replies in order; every other call Gemini CLI makes
(countTokens, a non-streamed generateContent for a check or a title, a side stream without tools)
gets a short harmless answer and leaves the script alone. When the script is used up every further
agent-loop request gets `DONE_TEXT`, so a run always ends.
"""
from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from scripted import Request, ScriptedServer, sse

DONE_TEXT = "All done."
SIDE_TEXT = "ok"

Part = dict[str, Any]
Reply = list[Part]
ScriptItem = Reply | Callable[[Request], Reply]

_ids = itertools.count(1)


def text(words: str) -> Part:
    return {"text": words}


def call(name: str, **args: Any) -> Part:
    return {"functionCall": {"id": f"call_{next(_ids):04d}", "name": name, "args": args}}


def write_file(path: str, content: str) -> Part:
    return call("write_file", file_path=str(path), content=content)


def replace(path: str, old: str, new: str) -> Part:
    return call("replace", file_path=str(path), old_string=old, new_string=new, instruction="fix it")


def shell(command: str) -> Part:
    return call("run_shell_command", command=command, description="run a command")


def method(request: Request) -> str:
    """The API method of a request: streamGenerateContent, generateContent, countTokens ... ('' if none)."""
    path = request.path.split("?")[0]
    return path.rsplit(":", 1)[1] if ":" in path.rsplit("/", 1)[-1] else ""


def tool_names(request: Request) -> set[str]:
    body = request.body if isinstance(request.body, dict) else {}
    return {d.get("name") for t in body.get("tools") or () for d in t.get("functionDeclarations") or ()}


def is_agent_loop(request: Request) -> bool:
    """The main agent loop streams with the CLI's tools offered; side calls offer none."""
    return method(request) == "streamGenerateContent" and "run_shell_command" in tool_names(request)


def newest_user_text(request: Request) -> str:
    """All of the newest user turn (its text, tool results and hook feedback), as one JSON string."""
    contents = (request.body or {}).get("contents") or []
    users = [c for c in contents if c.get("role") == "user"]
    return json.dumps(users[-1].get("parts"), ensure_ascii=False) if users else ""


def function_responses(request: Request) -> list[dict]:
    """The functionResponse parts of the newest user turn (what the last tool calls returned)."""
    contents = (request.body or {}).get("contents") or []
    users = [c for c in contents if c.get("role") == "user"]
    parts = users[-1].get("parts") or [] if users else []
    return [p["functionResponse"] for p in parts if isinstance(p, dict) and "functionResponse" in p]


def _chunk(parts: Sequence[Part], finish: str | None) -> dict:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": "gemini-scripted"}


def _events(parts: Sequence[Part]) -> list[str]:
    """The stream of one reply: each part in its own chunk, the last one carrying finishReason STOP."""
    chunks = [_chunk([p], None) for p in parts[:-1]] + [_chunk(parts[-1:], "STOP")]
    return sse((None, c) for c in chunks)


class GeminiServer(ScriptedServer):
    """The scripted Gemini API. `agent_requests` are the agent-loop requests, in order; request i got
    the script's reply i (the first one carries the user's prompt, each later one tool results or the
    AfterAgent hook's refusal as a new user turn)."""

    def __init__(self, script: Iterable[ScriptItem] = ()) -> None:
        super().__init__()
        self.script: list[ScriptItem] = list(script)
        self.agent_requests: list[Request] = []

    @property
    def side_requests(self) -> list[Request]:
        return [r for r in self.requests if r not in self.agent_requests]

    def handle(self, request: Request) -> tuple[int, dict[str, str], Iterable[str | bytes]]:
        kind = method(request)
        if kind == "countTokens":
            return 200, {"Content-Type": "application/json"}, [json.dumps({"totalTokens": 10})]
        if kind not in ("streamGenerateContent", "generateContent"):
            return 404, {"Content-Type": "application/json"}, [json.dumps(
                {"error": {"code": 404, "message": f"not scripted: {request.path}", "status": "NOT_FOUND"}})]
        if not is_agent_loop(request):
            return self._reply([text(SIDE_TEXT)], kind == "streamGenerateContent")
        self.agent_requests.append(request)
        item: ScriptItem = self.script.pop(0) if self.script else [text(DONE_TEXT)]
        return self._reply(item(request) if callable(item) else item, True)

    @staticmethod
    def _reply(parts: Sequence[Part], stream: bool) -> tuple[int, dict[str, str], list[str]]:
        if stream:
            return 200, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}, _events(parts)
        return 200, {"Content-Type": "application/json"}, [json.dumps(_chunk(parts, "STOP"))]
