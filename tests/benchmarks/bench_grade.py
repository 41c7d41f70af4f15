"""Grading a class: sequential `nbgrader autograde` against `donegate grade`, on the same generated class.

Run on demand (it is not collected by pytest):

    uv run python tests/benchmarks/bench_grade.py [--students 15] [--workers N] [--keep DIR] [--once] [--cluster]

It builds a scratch course (solutions/, labs/ and grading/nbgrader_config.py copied from this checkout),
releases four labs and hands in a class of STUDENTS x 4 submissions: copies of the committed fixtures of
those labs (the correct one, the stub and each mistake, in turn) under new student ids. Then, in the same
run and with the same isolation (the sandbox and the judge are the course's configuration, used by both):

1. `nbgrader autograde LAB --force` for each lab, one after another, in grading/: nbgrader's own way;
2. `donegate grade` on the same class with --workers (default: one per core);
3. the floor: the same submitted notebooks executed with nbclient, each in a fresh kernel, as many at a time as
   donegate's workers, with no grading at all (no sandbox, no judge, no gradebook);
then the three again in the other order (nbgrader, donegate, floor, floor, donegate, nbgrader: a machine that
speeds up or slows down during the run favours none), each time from a fresh release (the gradebook, the graded
notebooks and graded.json removed). `--once` runs each way once.

With `--cluster`, then: `donegate grade --scheduler` on a real Dask cluster on this machine (a scheduler and
one-thread workers, each a process in a folder of its own), with one worker and with two (1, 2, 2, 1; `--once`: 1,
2), and the ratio of their times.

It prints each run's wall time and how busy the cores were during it (from /proc/stat, where there is one),
then the ratios of the totals (nbgrader to donegate; donegate to the floor); it checks that every submission's
score and every test cell's score agree between all the runs, and exits 1 if they do not (0 otherwise; the ratios
are reported, not asserted).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import threading
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


BUSY: list[tuple[float, float]] = []  # (busy core-seconds, wall seconds) of each timed command


def cpu_ticks() -> tuple[int, int]:
    """(all, idle) clock ticks of every core since boot, from /proc/stat (0, 0 where there is none)."""
    try:
        ticks = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return 0, 0
    return sum(ticks), ticks[3] + ticks[4]  # idle and iowait


def run(cmd: list[str], cwd: Path) -> float:
    started, (all0, idle0) = time.monotonic(), cpu_ticks()
    done = subprocess.run(cmd, cwd=cwd, env=env(COURSE), capture_output=True, text=True)
    if done.returncode not in (0, 1):  # donegate grade says 1 when a submission needs a person
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    seconds, (all1, idle1) = time.monotonic() - started, cpu_ticks()
    if all1 > all0:
        BUSY.append((seconds * (os.cpu_count() or 1) * (1 - (idle1 - idle0) / (all1 - all0)), seconds))
    return seconds


def busy(since: int) -> str:
    """How busy the cores were during the timed commands from BUSY[since] on."""
    work, wall = (sum(x) for x in zip(*BUSY[since:])) if BUSY[since:] else (0.0, 0.0)
    return f" (cores busy {100 * work / wall / (os.cpu_count() or 1):.0f}% of the time)" if wall else ""


def release(where: Path) -> None:
    for gone in ("gradebook.db", "autograded", "graded.json"):  # each run grades the whole class
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


def grade_with_nbgrader(where: Path) -> float:
    """nbgrader's own way: `nbgrader autograde LAB --force` for each lab, one after another, in grading/."""
    return sum(run([sys.executable, "-m", "nbgrader", "autograde", lab, "--force"], where / "grading") for lab in LABS)


def grade_with_donegate(where: Path, workers: int | None) -> float:
    return run([str(Path(sys.executable).parent / "donegate"), "grade", *LABS,
                *(["--workers", str(workers)] if workers else [])], where)


def execute_all(where: Path, workers: int) -> int:
    """The floor: every submitted notebook executed by nbclient in a kernel of its own, `workers` at a time, its
    folder as the working directory, errors kept in the outputs (a stub raises); nothing graded or written."""
    from concurrent.futures import ProcessPoolExecutor
    notebooks = sorted((where / "grading" / "submitted").glob("*/*/*.ipynb"))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return sum(pool.map(execute_one, notebooks))


def execute_one(path: Path) -> int:
    import nbformat
    from nbclient import NotebookClient
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=60, allow_errors=True, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return 1


def floor(where: Path, workers: int | None) -> float:
    count = workers or len(os.sched_getaffinity(0))  # as donegate grade's default: one per core
    return run([sys.executable, __file__, "--floor", str(where), "--workers", str(count)], where)


def dask(folder: Path, *args: str, ready: str) -> subprocess.Popen:
    """A `dask` scheduler or worker started as a process in `folder`, returned once it has logged `ready`."""
    folder.mkdir(parents=True, exist_ok=True)
    started = subprocess.Popen([str(Path(sys.executable).parent / "dask"), *args], cwd=folder,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in started.stderr:
        if ready in line:
            started.said = line  # the line that says it is ready (a scheduler's names its address)
            threading.Thread(target=started.stderr.read, daemon=True).start()  # the rest of its log, never a full pipe
            return started
    sys.exit(f"dask {' '.join(args)} ended before it said {ready!r}")


def on_cluster(where: Path, once: bool, record) -> dict[int, list[float]]:
    """`donegate grade --scheduler` with one worker, then two (then two and one again, without `once`)."""
    base = where / "cluster"
    started = [dask(base / "scheduler", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                    ready="Scheduler at:")]
    address = started[0].said.split("Scheduler at:")[1].strip()

    def worker(name: str) -> subprocess.Popen:
        return dask(base / name, "worker", address, "--nthreads", "1", "--host",
                    "127.0.0.1", "--no-dashboard", "--name", name, "--local-directory", str(base / name),
                    ready="Registered to:")
    took: dict[int, list[float]] = {1: [], 2: []}
    try:
        started.append(worker("w1"))
        for count in ([1, 2] if once else [1, 2, 2, 1]):
            if count == 2 and len(started) == 2:
                started.append(worker("w2"))
            if count == 1 and len(started) == 3:
                last = started.pop()
                last.terminate(), last.wait()  # a worker told to stop leaves the scheduler before it ends
            release(where)
            mark = len(BUSY)
            took[count].append(run([str(Path(sys.executable).parent / "donegate"), "grade", *LABS, "--scheduler",
                                    address], where))
            print(f"{f'donegate grade --scheduler, {count} worker(s):':<46}{took[count][-1]:7.1f} s{busy(mark)}",
                  flush=True)
            record()
    finally:
        for process in reversed(started):
            process.terminate(), process.wait()
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=15, help="students per lab (default 15: 60 submissions)")
    parser.add_argument("--workers", type=int, default=None, help="donegate grade --workers (default: one per core)")
    parser.add_argument("--keep", type=Path, help="build the course here and keep it (default: a temporary folder)")
    parser.add_argument("--once", action="store_true",
                        help="each way once (nbgrader, donegate, the floor), not ABC CBA")
    parser.add_argument("--cluster", action="store_true",
                        help="then grade on a Dask cluster on this machine with one worker and with two")
    parser.add_argument("--cluster-only", action="store_true", help="only the runs on a Dask cluster")
    parser.add_argument("--floor", type=Path, help=argparse.SUPPRESS)  # the floor's own process: execute the class
    args = parser.parse_args()
    if args.floor:
        return 0 if execute_all(args.floor, args.workers) else 1
    global COURSE
    where = COURSE = args.keep or Path(tempfile.mkdtemp(prefix="donegate-bench-grade-"))
    course(where)
    handed = hand_in(where, args.students)
    print(f"{len(handed)} submissions ({args.students} students x {len(LABS)} labs) in {where}; "
          f"{os.cpu_count()} cores")
    name = {"nbgrader": "nbgrader autograde, one lab after another",
            "donegate": f"donegate grade{' --workers ' + str(args.workers) if args.workers else ''}",
            "floor": "the floor: nbclient executes them, no grading"}
    order = [] if args.cluster_only else ["nbgrader", "donegate", "floor"]
    order += [] if args.once else order[::-1]
    took, seen, differ = {way: [] for way in name}, {}, []

    def record() -> None:  # this run's scores against the first run's
        nonlocal seen
        now = scores(where)
        differ.extend(sorted(k for k in set(now) | set(seen) if seen and seen.get(k) != now.get(k)))
        seen = seen or now

    for way in order:
        release(where)
        mark = len(BUSY)
        took[way].append(grade_with_nbgrader(where) if way == "nbgrader" else floor(where, args.workers)
                         if way == "floor" else grade_with_donegate(where, args.workers))
        print(f"{name[way] + ':':<46}{took[way][-1]:7.1f} s{busy(mark)}", flush=True)
        if way != "floor":
            record()
    cluster = on_cluster(where, args.once, record) if args.cluster or args.cluster_only else None
    seq, par, bare = sum(took["nbgrader"]), sum(took["donegate"]), sum(took["floor"])
    if order:
        print(f"ratio: {seq / par:.2f}x" + ("" if args.once else
              f" (the two pairs: {took['nbgrader'][0] / took['donegate'][0]:.2f}x and "
              f"{took['nbgrader'][1] / took['donegate'][1]:.2f}x)"))
        print(f"donegate grade against the floor: {par / bare:.2f}x (the same notebooks executed with the same number "
              "of processes, nothing graded)")
    if cluster:
        print(f"on a Dask cluster, one worker against two: {sum(cluster[1]) / sum(cluster[2]):.2f}x (the time with one "
              "worker over the time with two)")
    if differ:
        print(f"scores differ in {len(differ)} place(s), for example {differ[:5]}")
        return 1
    print(f"same scores in every run: {sum(1 for k in seen if len(k) == 2)} submissions and every test cell of each")
    if not args.keep:
        shutil.rmtree(where, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
