"""Record the real Claude Code hook payloads of the scenarios in test_claude_code.py as fixtures for the
library's unit tests: demo/hosts/claude-code/<scenario>.jsonl, one hook call a line
({"argv": [...], "env": {...}, "payload": {...}}), with the temporary paths made neutral (the folder
holding the repository becomes /work, HOME becomes /home/user; session ids are kept).

Run from the checkout: `uv run python tests/hosts/capture_claude_code.py [SCENARIO ...]` (default: all).
It needs the pinned CLI in .cache/hosts (see tests/hosts/conftest.py) and nothing but 127.0.0.1.
"""
from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

import test_claude_code as scenarios  # noqa: E402
from conftest import ROOT, HostWorld, hook_calls  # noqa: E402

OUT = ROOT / "demo" / "hosts" / "claude-code"

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


def mangled(path: Path) -> str:
    """How Claude Code names a project folder after its path (~/.claude/projects/-tmp-x-work-repo)."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(path))


def neutral(value: Any, world: HostWorld) -> Any:
    """`value` with the world's temporary paths replaced by stable ones, in every string it holds."""
    if isinstance(value, dict):
        return {k: neutral(v, world) for k, v in value.items()}
    if isinstance(value, list):
        return [neutral(v, world) for v in value]
    if not isinstance(value, str):
        return value
    for old, new in ((mangled(world.tmp / "work"), "-work"), (str(world.tmp / "work"), "/work"),
                     (str(world.home), "/home/user"), (str(world.tmp), "/tmp/host-test")):
        value = value.replace(old, new)
    return value


def capture(name: str) -> Path:
    with tempfile.TemporaryDirectory(prefix="capture-claude-") as tmp:
        world = HostWorld(Path(tmp))
        SCENARIOS[name](world)
        calls = hook_calls(world.tmp / "hook-calls.jsonl")
        lines = [json.dumps(neutral({"argv": c["argv"], "env": c["env"], "payload": c["payload"]}, world),
                            ensure_ascii=False) for c in calls]
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def main(names: list[str]) -> int:
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        print(f"unknown scenario(s): {', '.join(unknown)}; choose from {', '.join(SCENARIOS)}", file=sys.stderr)
        return 2
    for name in names or list(SCENARIOS):
        path = capture(name)
        print(f"{path.relative_to(ROOT)}: {len(path.read_text().splitlines())} hook call(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
