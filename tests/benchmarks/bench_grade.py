"""Grading a class: sequential `nbgrader autograde` against `donegate grade`, on the same generated class.

Run on demand (it is not collected by pytest):

    uv run python tests/benchmarks/bench_grade.py [--students 15] [--workers N] [--keep DIR]

It builds a scratch course (solutions/, labs/ and grading/nbgrader_config.py copied from this checkout),
releases four labs and hands in a class of STUDENTS x 4 submissions: copies of the committed fixtures of
those labs (the correct one, the stub and each mistake, in turn) under new student ids. Then, in the same
run and with the same isolation (the sandbox and the judge are the course's configuration, used by both):

1. `nbgrader autograde LAB --force` for each lab, one after another, in grading/: nbgrader's own way;
2. the gradebook and graded notebooks are removed, the labs released again, and `donegate grade` grades
   the same class with --workers (default: one per core).

It prints both wall times and their ratio, checks that every submission's score and every test cell's
score agree between the two, and exits 1 if they do not (0 otherwise; the ratio is reported, not asserted).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COURSE = ROOT  # the scratch course, once built
LABS = ["lab01-fail-open-hooks", "lab04-averaged-scores", "lab06-edited-tests", "lab07-gate-pitfalls"]
HONEST = {"correct", "stub", "fail-open", "edited-tests", "single-name-regex", "averages", "always-equal",
          "new-tests-blocked", "trusts-flag", "dirty-only"}  # the fixtures that attack nothing


def course(where: Path) -> Path:
    for folder in ("solutions", "labs"):
        shutil.copytree(ROOT / folder, where / folder)
    (where / "grading").mkdir()
    shutil.copy(ROOT / "grading" / "nbgrader_config.py", where / "grading")
    subprocess.run(["git", "init", "-q"], cwd=where, check=True)
    subprocess.run(["git", "add", "-A"], cwd=where, check=True)
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-q", "-m",
                    "course"], cwd=where, check=True)
    return where


def hand_in(where: Path, students: int) -> list[tuple[str, str, str]]:
    """(lab, student, fixture) for each generated submission, copied into grading/submitted/."""
    fixtures = ROOT / "grading" / "fixtures"
    out = []
    for lab in LABS:
        kinds = sorted(p.parent.name for p in fixtures.glob(f"*/{lab}") if p.parent.name in HONEST)
        for n in range(students):
            kind = kinds[n % len(kinds)]
            student = f"s{n + 1:03d}"
            shutil.copytree(fixtures / kind / lab, where / "grading" / "submitted" / student / lab)
            out.append((lab, student, kind))
    return out


def env(where: Path) -> dict[str, str]:
    e = dict(os.environ, DONEGATE_ROOT=str(where))
    e["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), e.get("PATH", "")])
    return e


def run(cmd: list[str], cwd: Path) -> float:
    started = time.monotonic()
    done = subprocess.run(cmd, cwd=cwd, env=env(COURSE), capture_output=True, text=True)
    if done.returncode not in (0, 1):  # donegate grade says 1 when a submission needs a person
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return time.monotonic() - started


def release(where: Path) -> None:
    for gone in ("gradebook.db", "autograded"):
        path = where / "grading" / gone
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    for lab in LABS:
        run([sys.executable, "-m", "nbgrader", "generate_assignment", lab, "--force"], where / "grading")


def scores(where: Path) -> dict:
    from nbgrader.api import Gradebook
    out = {}
    with Gradebook(f"sqlite:///{where / 'grading' / 'gradebook.db'}", course_id="donegate") as gb:
        for lab in LABS:
            for sub in gb.find_assignment(lab).submissions:
                out[(lab, sub.student.id)] = sub.score
                for nb in sub.notebooks:
                    out.update({(lab, sub.student.id, g.name): g.score for g in nb.grades})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=15, help="students per lab (default 15: 60 submissions)")
    parser.add_argument("--workers", type=int, default=None, help="donegate grade --workers (default: one per core)")
    parser.add_argument("--keep", type=Path, help="build the course here and keep it (default: a temporary folder)")
    args = parser.parse_args()
    global COURSE
    where = COURSE = args.keep or Path(tempfile.mkdtemp(prefix="donegate-bench-grade-"))
    course(where)
    handed = hand_in(where, args.students)
    print(f"{len(handed)} submissions ({args.students} students x {len(LABS)} labs) in {where}; "
          f"{os.cpu_count()} cores")
    release(where)
    seq = sum(run([sys.executable, "-m", "nbgrader", "autograde", lab, "--force"], where / "grading") for lab in LABS)
    nbgrader_scores = scores(where)
    print(f"nbgrader autograde, one lab after another: {seq:7.1f} s")
    release(where)
    workers = ["--workers", str(args.workers)] if args.workers else []
    par = run([str(Path(sys.executable).parent / "donegate"), "grade", *LABS, *workers], where)
    donegate_scores = scores(where)
    print(f"donegate grade{' --workers ' + str(args.workers) if args.workers else ''}:                {par:7.1f} s")
    print(f"ratio: {seq / par:.2f}x")
    differ = sorted(k for k in set(nbgrader_scores) | set(donegate_scores)
                    if nbgrader_scores.get(k) != donegate_scores.get(k))
    submissions = sum(1 for k in nbgrader_scores if len(k) == 2)
    if differ:
        print(f"scores differ in {len(differ)} place(s), for example {differ[:5]}")
        return 1
    print(f"same scores: {submissions} submissions and every test cell of each")
    if not args.keep:
        shutil.rmtree(where, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
