"""Write the files that make this checkout a plugin marketplace for Claude Code and Codex CLI and hold the gate's
Gemini CLI extension (appendix 91): .claude-plugin/marketplace.json, .agents/plugins/marketplace.json and
plugins/<host>/. Run it after a change to the hooks `install` writes; tests/test_plugins.py fails until then.

    uv run python tools/write_plugins.py
"""
from __future__ import annotations

from pathlib import Path

from donegate.plugins import checkout_files, write_files

ROOT = Path(__file__).resolve().parent.parent

if __name__ == "__main__":
    for path in write_files(ROOT, checkout_files()):
        print(f"wrote {path.relative_to(ROOT)}")
