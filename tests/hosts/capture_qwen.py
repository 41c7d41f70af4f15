"""Regenerate demo/hosts/qwen/*.jsonl: the hook calls the real Qwen Code CLI makes in four scenarios of
test_qwen.py, one JSON line per call ({"argv", "env", "payload"}), paths made neutral (capture.py);
session and turn ids are kept.

    uv run python tests/hosts/capture_qwen.py [SCENARIO ...]
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import test_qwen  # noqa: E402
from capture import main, standard_scenarios  # noqa: E402
from conftest import cli_path  # noqa: E402

if __name__ == "__main__":
    cli_path("qwen")  # fails with the install hint when the pinned CLI is missing
    sys.exit(main("qwen", standard_scenarios("qwen", test_qwen), sys.argv[1:]))
