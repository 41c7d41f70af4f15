"""A scripted OpenAI Responses API for Codex CLI: `POST .../responses` answers one scripted turn as a
server-sent event stream (response.created, output items, text deltas, response.completed with usage);
`GET .../models` (not called by `codex exec` 0.171.0 with a custom provider) answers an empty list. Each
turn is a list of output items, or a callable that gets the request and returns them. When the script
runs out, the model says "done" and stops calling tools.

`codex_home(world, server)` puts the settings that point Codex at the server at the top of the world's
private ~/.codex/config.toml."""
from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any, Callable, Iterable, Union

from scripted import Request, ScriptedServer, sse

# A model slug from Codex's bundled catalog: with it Codex offers its apply_patch (freeform) tool.
MODEL = "gpt-5.5"
PROVIDER = "scripted"
API_KEY_ENV = "SCRIPTED_API_KEY"

Item = dict[str, Any]
Turn = Union[list[Item], Callable[[Request], list[Item]]]
_ids = itertools.count(1)


def message(text: str) -> Item:
    """An assistant message: the model talks and (with no tool call in the turn) ends its turn."""
    return {"type": "message", "role": "assistant", "id": f"msg_{next(_ids)}", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def apply_patch(patch: str) -> Item:
    """A call of Codex's freeform apply_patch tool with the patch text ("*** Begin Patch" ...)."""
    n = next(_ids)
    return {"type": "custom_tool_call", "id": f"ctc_{n}", "call_id": f"call_{n}", "status": "completed",
            "name": "apply_patch", "input": patch}


def exec_command(cmd: str) -> Item:
    """A call of Codex's shell tool, exec_command, running `cmd` in the turn's folder (no PTY)."""
    n = next(_ids)
    return {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "status": "completed",
            "name": "exec_command", "arguments": json.dumps({"cmd": cmd, "tty": False, "yield_time_ms": 30000})}


def update_file(path: str, old: str, new: str) -> str:
    """An apply_patch patch that replaces the line `old` with `new` in `path`."""
    return (f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch\n")


def _events(items: list[Item], response_id: str) -> list[str]:
    """The Responses API stream of one reply holding `items`."""
    base = {"id": response_id, "object": "response", "model": MODEL, "status": "in_progress", "output": []}
    events: list[tuple[str, Any]] = [("response.created", {"type": "response.created", "response": base})]
    for index, item in enumerate(items):
        events.append(("response.output_item.added",
                       {"type": "response.output_item.added", "output_index": index, "item": item}))
        if item["type"] == "message":
            text = item["content"][0]["text"]
            events.append(("response.output_text.delta",
                           {"type": "response.output_text.delta", "item_id": item["id"], "output_index": index,
                            "content_index": 0, "delta": text}))
        events.append(("response.output_item.done",
                       {"type": "response.output_item.done", "output_index": index, "item": item}))
    usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 10,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 110}
    done = {**base, "status": "completed", "output": items, "usage": usage}
    events.append(("response.completed", {"type": "response.completed", "response": done}))
    return sse(events)


class CodexServer(ScriptedServer):
    """Answers Codex's model requests from `turns`, in order; `responses` lists the model requests."""

    def __init__(self, turns: Iterable[Turn] = ()) -> None:
        super().__init__()
        self.turns: list[Turn] = list(turns)

    @property
    def responses(self) -> list[Request]:
        return [r for r in self.requests if r.method == "POST" and r.path.rstrip("/").endswith("/responses")]

    def handle(self, request: Request) -> tuple[int, dict[str, str], Iterable[str | bytes]]:
        path = request.path.split("?", 1)[0].rstrip("/")
        if request.method == "POST" and path.endswith("/responses"):
            turn = self.turns.pop(0) if self.turns else [message("done")]
            items = turn(request) if callable(turn) else turn
            return 200, {"Content-Type": "text/event-stream"}, _events(items, f"resp_{next(_ids)}")
        if request.method == "GET" and path.endswith("/models"):
            return 200, {"Content-Type": "application/json"}, [json.dumps({"models": []})]
        return 404, {"Content-Type": "application/json"}, [json.dumps({"error": {"message": "not scripted"}})]


def tool_outputs(request: Request) -> list[str]:
    """The outputs of earlier tool calls that a model request carries back (function and custom calls)."""
    items = (request.body or {}).get("input") or []
    return [str(i.get("output")) for i in items
            if isinstance(i, dict) and i.get("type") in ("function_call_output", "custom_tool_call_output")]


def config_toml(server_url: str) -> str:
    """The user config that sends Codex's model requests to the scripted server, and nowhere else."""
    return (f'model = "{MODEL}"\n'
            f'model_provider = "{PROVIDER}"\n'
            'approval_policy = "never"\n'
            'sandbox_mode = "danger-full-access"\n'
            'check_for_update_on_startup = false\n'
            '\n'
            '[analytics]\n'
            'enabled = false\n'
            '\n'
            f'[model_providers.{PROVIDER}]\n'
            'name = "scripted"\n'
            f'base_url = "{server_url}/v1"\n'
            f'env_key = "{API_KEY_ENV}"\n'
            'wire_api = "responses"\n'
            'supports_websockets = false\n'
            'request_max_retries = 0\n'
            'stream_max_retries = 0\n'
            'stream_idle_timeout_ms = 60000\n')


def codex_home(world: Any, server: CodexServer) -> Path:
    """Put the settings for `server` at the top of ~/.codex/config.toml in the world's HOME (keeping what
    is there, trust records for one), set the dummy key; returns the file."""
    home = Path(world.home) / ".codex"
    home.mkdir(parents=True, exist_ok=True)
    config = home / "config.toml"
    kept = config.read_text() if config.exists() else ""
    config.write_text(config_toml(server.url) + ("\n" + kept if kept else ""))
    world.env[API_KEY_ENV] = "scripted-dummy-key"
    return config
