"""Strip outputs and execution counts from notebooks, keeping every cell's metadata.

Usage: uv run python tools/clean_notebooks.py [PATH ...]   (default: chapters solutions labs)
Folders are searched for *.ipynb; grading fixtures are left as they are (they are submissions).
"""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ("chapters", "solutions", "labs")


def notebooks(paths: list[str]) -> list[Path]:
    found: list[Path] = []
    for raw in paths or [str(ROOT / d) for d in DEFAULT]:
        p = Path(raw)
        if p.is_dir():
            found += [q for q in sorted(p.rglob("*.ipynb")) if ".ipynb_checkpoints" not in q.parts]
        elif p.suffix == ".ipynb":
            found.append(p)
    return found


def clean(path: Path) -> bool:
    """Clear outputs and counts in place; return True if the file changed."""
    before = path.read_text(encoding="utf-8")
    nb = nbformat.reads(before, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    nb.metadata.pop("widgets", None)
    after = nbformat.writes(nb) + "\n"
    if after != before:
        path.write_text(after, encoding="utf-8")
        return True
    return False


if __name__ == "__main__":
    changed = [p for p in notebooks(sys.argv[1:]) if clean(p)]
    for p in changed:
        print(f"cleaned {p}")
    print(f"{len(changed)} notebook(s) changed")
