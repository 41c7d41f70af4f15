"""Record the real Claude Code hook payloads of the scenarios in test_claude_code.py as fixtures for the
library's unit tests: demo/hosts/claude-code/<scenario>.jsonl, one hook call a line
({"argv": [...], "env": {...}, "payload": {...}}), with the temporary paths made neutral (capture.py).

Run from the checkout: `uv run python tests/hosts/capture_claude_code.py [SCENARIO ...]` (default: all).
It needs the pinned CLI in .cache/hosts (see tests/hosts/conftest.py) and nothing but 127.0.0.1.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

import test_claude_code as scenarios  # noqa: E402
from capture import main  # noqa: E402
from conftest import HostWorld  # noqa: E402

SCENARIOS: dict[str, Callable[[HostWorld], Any]] = {
    "fix-after-refusal": scenarios.fix_after_refusal,
    "budget": scenarios.budget,
    "no-change": scenarios.no_change,
    "protected-test": lambda world: scenarios.protected_test(world, {}),
    "chat-only": scenarios.chat_only,
    "committed-fix": scenarios.committed_fix,
    "add-dir-cd": lambda world: scenarios.add_dir_cd(world, {}),
    "worktree": scenarios.worktree_tool,
    "worktree-session": lambda world: scenarios.worktree_session(world, commit=True),
    "resume": scenarios.resumed,
    "fork": scenarios.forked,
    "no-verify": scenarios.no_verify_commit,
    # with a StopFailure command that outlives the SIGTERM `claude -p` sends it at exit
    "stop-failure": lambda world: scenarios.stop_failure(world, scenarios.STOP_FAILURE),
}


if __name__ == "__main__":
    sys.exit(main("claude-code", SCENARIOS, sys.argv[1:]))
