"""Regenerate demo/hosts/qwen/*.jsonl: the hook calls the real Qwen Code CLI makes in four scenarios of
test_qwen.py, one JSON line per call ({"argv", "env", "payload"}), paths made neutral (capture.py);
session and turn ids are kept.

    uv run python tests/hosts/capture_qwen.py [SCENARIO ...]
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from capture import main  # noqa: E402
from conftest import HostWorld, cli_path  # noqa: E402
from test_qwen import Run, budget, chat_only, fix_after_refusal, protected_test_edit  # noqa: E402


def exited_cleanly(scenario: Callable[[HostWorld], Run]) -> Callable[[HostWorld], Run]:
    def play(world: HostWorld) -> Run:
        run = scenario(world)
        if run.done.returncode != 0:
            raise SystemExit(f"qwen exited {run.done.returncode}\n{run.done.stderr}")
        return run
    return play


SCENARIOS: dict[str, Callable[[HostWorld], Run]] = {
    "fix-after-refusal": exited_cleanly(fix_after_refusal),
    "budget": exited_cleanly(budget),
    "test-edit-denied": exited_cleanly(protected_test_edit),
    "chat-only": exited_cleanly(chat_only),
}

if __name__ == "__main__":
    cli_path("qwen")  # fails with the install hint when the pinned CLI is missing
    sys.exit(main("qwen", SCENARIOS, sys.argv[1:]))
