"""Regenerate demo/hosts/codex/*.jsonl: the hook calls the real Codex CLI makes in four scenarios of
test_codex.py, one JSON line per call ({"argv", "env", "payload"}), paths made neutral (the scenario's
work folder is /work, its HOME /home/user, this checkout /src/donegate); session and turn ids are kept.

    uv run python tests/hosts/capture_codex.py [SCENARIO ...]
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from conftest import ROOT, HostWorld, cli_path  # noqa: E402
from test_codex import Run, budget, chat_only, fix_after_refusal, protected_test_edit  # noqa: E402

SCENARIOS: dict[str, Callable[[HostWorld], Run]] = {
    "fix-after-refusal": fix_after_refusal,
    "budget": budget,
    "test-edit-denied": protected_test_edit,
    "chat-only": chat_only,
}
OUT = ROOT / "demo" / "hosts" / "codex"


def neutral(value: Any, world: HostWorld) -> Any:
    """`value` with the world's temporary paths and this checkout's path replaced by fixed ones."""
    text = json.dumps(value, ensure_ascii=False)
    for path, fixed in ((world.home, "/home/user"), (world.tmp / "work", "/work"), (ROOT, "/src/donegate")):
        text = text.replace(str(path), fixed)
    return json.loads(text)


def capture(name: str) -> Path:
    """Play one scenario in a fresh world and write its hook calls."""
    with tempfile.TemporaryDirectory(prefix=f"codex-{name}-") as tmp:
        world = HostWorld(Path(tmp))
        run = SCENARIOS[name](world)
        if run.done.returncode != 0 or not run.calls:
            raise SystemExit(f"{name}: codex exited {run.done.returncode} with {len(run.calls)} hook call(s)\n"
                             f"{run.done.stderr}")
        lines = [neutral({"argv": c["argv"], "env": c["env"], "payload": c["payload"]}, world) for c in run.calls]
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}.jsonl"
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return path


def main(names: list[str]) -> int:
    cli_path("codex")  # fails with the install hint when the pinned CLI is missing
    for name in names or list(SCENARIOS):
        if name not in SCENARIOS:
            print(f"unknown scenario {name!r}; choose from {', '.join(SCENARIOS)}", file=sys.stderr)
            return 2
        path = capture(name)
        print(f"wrote {path.relative_to(ROOT)} ({len(path.read_text().splitlines())} hook calls)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
