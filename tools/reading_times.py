"""How long each chapter takes, measured from the notebook instead of guessed, and the sentence that says so.

A chapter is read and run: its prose at WORDS_PER_MINUTE, its code at CODE_LINES_PER_MINUTE (reading a line of
code, running it and looking at what it printed takes longer than a sentence). The estimate is rounded to the
minute. Each chapter states it in its first cell ("**How long.** About N minutes." or "**Time:** about N
minutes."); tests/test_notebooks.py checks that every stated time is this estimate.

    uv run python tools/reading_times.py           # print words, code lines, estimate and the stated time
    uv run python tools/reading_times.py --write   # put the estimates into the chapters
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORDS_PER_MINUTE = 200
CODE_LINES_PER_MINUTE = 15
STATED = re.compile(r"(\*\*(?:How long|Time)[^*]*\*\*[^0-9*]*?[Aa]bout )(\d+)( minutes)")
PRACTICE_STATED = re.compile(r"([Aa]bout )(\d+)( more for the exercises)")


def measure(path: Path) -> tuple[int, int, int]:
    """(words of prose, non-blank code lines, estimated minutes rounded to the minute) of one chapter."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    words = sum(len("".join(c["source"]).split()) for c in cells if c["cell_type"] == "markdown")
    code = sum(1 for c in cells if c["cell_type"] == "code" for line in "".join(c["source"]).splitlines() if line.strip())
    minutes = words / WORDS_PER_MINUTE + code / CODE_LINES_PER_MINUTE
    return words, code, max(1, round(minutes))


def stated(path: Path) -> int | None:
    """The time the chapter's first cell states, if it states one."""
    first = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"])
    found = STATED.search(first)
    return int(found.group(2)) if found else None


def practice(path: Path) -> int | None:
    """The minutes of the chapter's exercises and questionnaire (None: it has none)."""
    bank = ROOT / "chapters" / "practice" / f"{path.stem}.json"
    if not bank.is_file():
        return None
    return sum(item["minutes"] for item in json.loads(bank.read_text(encoding="utf-8")).values())


def stated_practice(path: Path) -> int | None:
    """The practice time the chapter's first cell states, if it states one."""
    found = PRACTICE_STATED.search("".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"]))
    return int(found.group(2)) if found else None


def chapters() -> list[Path]:
    return sorted((ROOT / "chapters").glob("0[0-9]_*.ipynb"))


def write(path: Path, minutes: int) -> bool:
    """Put `minutes` (and the practice time) into the chapter's stated time; False if it states none."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    first = "".join(nb["cells"][0]["source"])
    new = STATED.sub(lambda m: f"{m.group(1)}{minutes}{m.group(3)}", first, count=1)
    done = practice(path)
    if done is not None:
        new = PRACTICE_STATED.sub(lambda m: f"{m.group(1)}{done}{m.group(3)}", new, count=1)
    if new == first:
        return False
    nb["cells"][0]["source"] = new.splitlines(keepends=True)
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return True


def main(argv: list[str]) -> int:
    for path in chapters():
        words, code, minutes = measure(path)
        if "--write" in argv:
            write(path, minutes)
        print(f"{path.name:40} {words:6} words {code:5} code lines  about {minutes:3} min  stated {stated(path)}"
              f"  practice {practice(path)} (stated {stated_practice(path)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
