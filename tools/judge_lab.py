"""Run the judge on an assignment's solution and on its released stub with the hidden tests put back.

    uv run python tools/judge_lab.py lab01-fail-open-hooks [more ids ...]

Every test cell must pass on the solution and fail on the stub; the exit status is 1 otherwise. It is what
tests/test_grading.py asserts for every assignment, shown cell by cell.
"""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat

from donegate.judge import judge_cells, run_judge

ROOT = Path(__file__).resolve().parent.parent


def judged(aid: str) -> tuple[dict, dict]:
    """The judge's verdicts on the solution, and on the stub with the solution's test cells put back."""
    solution = nbformat.read(ROOT / "solutions" / aid / f"{aid}.ipynb", as_version=4)
    stub = nbformat.read(ROOT / "labs" / aid / f"{aid}.ipynb", as_version=4)
    tests = {c.metadata["nbgrader"]["grade_id"]: c.source for c in solution.cells
             if c.metadata.get("nbgrader", {}).get("grade") and not c.metadata["nbgrader"].get("solution")}
    for cell in stub.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade_id") in tests and meta.get("grade") and not meta.get("solution"):
            cell.source = tests[meta["grade_id"]]
    return run_judge(judge_cells(solution), 60), run_judge(judge_cells(stub), 60)


def main(ids: list[str]) -> int:
    wrong = 0
    for aid in ids:
        on_solution, on_stub = judged(aid)
        for name in on_solution:
            good, bad = on_solution[name], on_stub.get(name, {"passed": False})
            fine = good["passed"] and not bad["passed"]
            wrong += not fine
            why = "" if good["passed"] else f"  solution: {good.get('error')}: {good.get('message')} (at: {good.get('line')})"
            why += "  stub PASSES" if bad["passed"] else ""
            print(f"{aid:45} {name:40} {'ok' if fine else 'WRONG'}{why}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
