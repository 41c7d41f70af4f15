"""The light package: how big the gate's wheel is and how long it takes to install, against the workbook.

Run on demand (it is not collected by pytest and asserts nothing about speed):

    uv run python tests/benchmarks/bench_wheel.py [--runs 5]

It builds the wheel from this checkout (`uv build --wheel --no-build-isolation --offline`), prints its size,
then installs it RUNS times into a fresh virtual environment, in turns with uv (`uv venv` + `uv pip install
--offline`) and with pip (`python -m venv`, which brings pip, + `pip install --no-index`), and prints each way's median time,
the size of the environment it made and the size of this checkout's `.venv` (the workbook) beside them.
Nothing is downloaded.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def size(path: Path) -> int:
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} kB"


def timed(*commands: list) -> float:
    start = time.perf_counter()
    for command in commands:
        subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    uv = shutil.which("uv") or sys.exit("uv is not on PATH")
    with tempfile.TemporaryDirectory(prefix="donegate-wheel-") as tmp:
        tmp = Path(tmp)
        subprocess.run([uv, "build", "-q", "--wheel", "--no-build-isolation", "--offline", "-o", tmp / "dist"],
                       cwd=ROOT, check=True)
        (wheel,) = (tmp / "dist").glob("*.whl")
        print(f"wheel        {wheel.name}  {mb(wheel.stat().st_size)}", flush=True)
        ways = {
            "uv": lambda venv: timed([uv, "venv", "-q", "--offline", "--python", sys.executable, venv],
                                     [uv, "pip", "install", "-q", "--offline", "--python", venv / "bin" / "python", wheel]),
            "pip": lambda venv: timed([sys.executable, "-m", "venv", venv],
                                      [venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-index",
                                       "--disable-pip-version-check", wheel]),
        }
        times: dict[str, list[float]] = {way: [] for way in ways}
        made: dict[str, int] = {}
        for n in range(runs):  # in turns, so that a machine that slows down during the run favours neither
            for way, install in ways.items():
                venv = tmp / f"{way}-{n}"
                times[way].append(install(venv))
                made[way] = size(venv)
                check = subprocess.run([venv / "bin" / "donegate", "--version"], capture_output=True, text=True)
                assert check.returncode == 0, check.stderr
                shutil.rmtree(venv)
        for way in ways:
            print(f"install      {way:<4} {statistics.median(times[way]):.2f} s median of {runs} "
                  f"(new environment + wheel; the environment is {mb(made[way])})")
        workbook = ROOT / ".venv"
        if workbook.exists():
            print(f"workbook     this checkout's .venv is {mb(size(workbook))}")


if __name__ == "__main__":
    main()
