"""Regenerate demo/hosts/copilot/*.jsonl: the hook calls the real Copilot CLI makes in four scenarios of
test_copilot.py, one JSON line per call ({"argv", "env", "payload"}), paths made neutral (capture.py);
session and turn ids are kept.

    uv run python tests/hosts/capture_copilot.py [SCENARIO ...]
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import test_copilot  # noqa: E402
from capture import main, standard_scenarios  # noqa: E402
from conftest import cli_path  # noqa: E402

if __name__ == "__main__":
    cli_path("copilot")  # fails with the install hint when the pinned CLI is missing
    sys.exit(main("copilot", standard_scenarios("copilot", test_copilot), sys.argv[1:]))
