"""Regenerate the Gemini CLI hook-payload fixtures in demo/hosts/gemini/ by running the real `gemini -p`
against the scripted server, the way tests/hosts/test_gemini.py does, with a logging `donegate` on PATH.

    uv run python tests/hosts/capture_gemini.py            # every scenario
    uv run python tests/hosts/capture_gemini.py budget     # one of them

Each fixture is one hook call a line: {"argv": [...], "env": {...}, "payload": {...}}, with the world's
HOME replaced by /home/user and its temporary folder by /work (so the repository is /work/work/repo);
session ids and timestamps are kept. The budget scenario runs with DONEGATE_MAX_BLOCKS=5 so the gate
refuses all five wrong fixes whatever its counting does: the sequence then holds five refusals and the
continuations Gemini makes after each (BeforeAgent with the refusal as its prompt, AfterAgent with
stop_hook_active false after the tool call), ending in a hand-over.
"""
from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from conftest import ROOT, HostWorld
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

OUT = ROOT / "demo" / "hosts" / "gemini"
# name -> (script, prompt, extra environment for the run)
SCENARIOS: dict[str, tuple[Callable, str, dict[str, str]]] = {
    "fix-after-refusal": (fix_after_refusal, PROMPT, {}),
    "budget": (five_wrong_fixes, PROMPT, {"DONEGATE_MAX_BLOCKS": "5"}),
    "test-edit-denied": (protected_edits, PROMPT, {}),
    "chat-only": (chat_only, CHAT_PROMPT, {}),
}


def neutral(world: HostWorld, data: object) -> object:
    """`data` with the world's paths made neutral: HOME -> /home/user, the temporary folder -> /work."""
    text = json.dumps(data, ensure_ascii=False)
    for real, shown in ((world.home, "/home/user"), (world.tmp, "/work")):
        for form in {str(real), str(real.resolve())}:
            text = text.replace(form, shown)
    return json.loads(text)


def capture(name: str) -> Path:
    """Play one scenario in a fresh world and write its hook calls to demo/hosts/gemini/NAME.jsonl."""
    script, prompt, env = SCENARIOS[name]
    tmp = Path(tempfile.mkdtemp(prefix=f"gemini-capture-{name}-"))
    try:
        world = HostWorld(tmp)
        log = gated(world)
        run = gemini(world, script(world), log, prompt=prompt, env=env)
        if run.done.returncode != 0:
            raise SystemExit(f"{name}: gemini exited {run.done.returncode}\n{run.done.stderr}")
        lines = [json.dumps(neutral(world, {"argv": c["argv"], "env": c["env"], "payload": c["payload"]}),
                            ensure_ascii=False) for c in run.calls]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def main(names: list[str]) -> int:
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        print(f"unknown scenario(s) {', '.join(unknown)}; the scenarios are: {', '.join(SCENARIOS)}", file=sys.stderr)
        return 2
    for name in names or list(SCENARIOS):
        path = capture(name)
        print(f"wrote {path} ({len(path.read_text().splitlines())} hook calls)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
