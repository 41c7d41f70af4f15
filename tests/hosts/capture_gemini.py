"""Regenerate the Gemini CLI hook-payload fixtures in demo/hosts/gemini/ by running the real `gemini -p`
against the scripted server, the way tests/hosts/test_gemini.py does, with a logging `donegate` on PATH.

    uv run python tests/hosts/capture_gemini.py            # every scenario
    uv run python tests/hosts/capture_gemini.py budget     # one of them

Each fixture is one hook call a line: {"argv": [...], "env": {...}, "payload": {...}}, with the world's
paths made neutral (capture.py); session ids and timestamps are kept. The budget scenario runs with DONEGATE_MAX_BLOCKS=5 so the gate
refuses all five wrong fixes whatever its counting does: the sequence then holds five refusals and the
continuations Gemini makes after each (BeforeAgent with the refusal as its prompt, AfterAgent with
stop_hook_active false after the tool call), ending in a hand-over.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from capture import main
from conftest import HostWorld
from test_gemini import (
    CHAT_PROMPT,
    PROMPT,
    chat_only,
    five_wrong_fixes,
    fix_after_refusal,
    gated,
    gemini,
    protected_edits,
)

# name -> (script, prompt, extra environment for the run)
SCENARIOS: dict[str, tuple[Callable, str, dict[str, str]]] = {
    "fix-after-refusal": (fix_after_refusal, PROMPT, {}),
    "budget": (five_wrong_fixes, PROMPT, {"DONEGATE_MAX_BLOCKS": "5"}),
    "test-edit-denied": (protected_edits, PROMPT, {}),
    "chat-only": (chat_only, CHAT_PROMPT, {}),
}


def scenario(name: str) -> Callable[[HostWorld], object]:
    script, prompt, env = SCENARIOS[name]

    def play(world: HostWorld) -> object:
        run = gemini(world, script(world), gated(world), prompt=prompt, env=env)
        if run.done.returncode != 0:
            raise SystemExit(f"{name}: gemini exited {run.done.returncode}\n{run.done.stderr}")
        return run
    return play


if __name__ == "__main__":
    sys.exit(main("gemini", {name: scenario(name) for name in SCENARIOS}, sys.argv[1:]))
