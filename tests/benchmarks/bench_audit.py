"""What `donegate audit` costs against a plain parse of the same file's JSON lines, in the same run.

Run on demand (it is not collected by pytest and asserts nothing about speed):

    uv run python tests/benchmarks/bench_audit.py [--calls 1000] [--output-bytes 1200] [--runs 21]

Measured:

- a generated Claude Code session of CALLS tool calls (edits, shell commands, check runs, each result about
  OUTPUT_BYTES long, a reply with a claim after every tenth call);
- every committed fixture under demo/transcripts/ (the largest printed, and the highest ratio of all).

For each, the same interpreter times, in turns (so that a machine that speeds up or slows down during the run
favours neither): `json.loads` of every line of the file, and what `donegate audit` does with it short of
printing: `format_audit(audit_transcript(path))` (reading the transcript, taking its events, judging every
claim, writing the report). Python's start and the imports are not in either figure. It prints both medians
and their ratio against the goal of at most 2x.

Each audit reads the session afresh, as a new `donegate audit` process does: `audit_transcript` takes new
rules for each call, which have read nothing yet, and the library keeps no reading of one audit for the next
(an answer kept across calls would let every run after the first skip the work the command really does).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from bench_stop_hook import interleaved_medians
from donegate import audit as au
from donegate import transcripts as tr

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPTS = ROOT / "demo" / "transcripts"


def generated_session(path: Path, calls: int, output_bytes: int) -> Path:
    """A Claude Code session (the records it writes for a prompt, tool calls, their results and replies) with
    `calls` tool calls in the proportions of a working session: 2 edits, 1 check, 2 other commands in 5. The check
    is the same command line each time, as in a session under a gate; every other command line is new."""
    session, lines = "bench-session", []

    def record(kind: str, message: dict, n: int) -> None:
        lines.append({"type": kind, "sessionId": session, "uuid": f"u{len(lines)}",
                      "timestamp": f"2026-12-01T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z", "message": message})

    record("user", {"role": "user", "content": "Fix the failing tests in calc.py."}, 0)
    filler = ("x" * 79 + "\n") * max(1, output_bytes // 80)
    for i in range(calls):
        call_id = f"toolu_{i:05d}"
        if i % 5 in (0, 1):
            use = {"name": "Edit", "input": {"file_path": f"/work/repo/src/m{i % 17}.py", "old_string": "a - b",
                                             "new_string": "a + b"}}
            result = "The file has been updated successfully."
        elif i % 5 == 2:
            use = {"name": "Bash", "input": {"command": "./verify.sh", "description": "run the check"}}
            result = ("Exit code 1\n" if i % 3 else "") + filler
        else:
            use = {"name": "Bash", "input": {"command": f"cat src/m{i % 17}.py | head -{20 + i}", "description": "read"}}
            result = filler
        record("assistant", {"role": "assistant", "content": [{"type": "tool_use", "id": call_id, **use}]}, i)
        record("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id,
                                                     "content": result, "is_error": result.startswith("Exit")}]}, i)
        if i % 10 == 9:
            record("assistant", {"role": "assistant", "content": [{"type": "text", "text": "All tests pass now."}]}, i)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def parse(path: Path) -> int:
    with open(path, encoding="utf-8") as f:
        return len([json.loads(line) for line in f if line.strip()])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--output-bytes", type=int, default=1200)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args(argv)
    fixtures = sorted(p for p in TRANSCRIPTS.rglob("*.json*") if p.name != "expected.json")
    largest = max(fixtures, key=lambda p: p.stat().st_size)

    def ratio(path: Path, runs: int) -> tuple[float, float]:
        tr.audit_transcript(path)  # a warm-up: the first call pays for what it loads
        return interleaved_medians(lambda: au.format_audit(tr.audit_transcript(path)), lambda: parse(path), runs)

    with tempfile.TemporaryDirectory(prefix="donegate-bench-audit-") as tmp:
        generated = generated_session(Path(tmp) / "session.jsonl", args.calls, args.output_bytes)
        for name, path in ((f"generated session, {args.calls} tool calls", generated),
                           (f"largest fixture, {largest.relative_to(ROOT)}", largest)):
            claims = len(tr.audit_transcript(path).claims)
            audit_s, parse_s = ratio(path, args.runs)
            print(f"{name}: {path.stat().st_size / 1024:.0f} KiB, {parse(path)} lines, {claims} claim(s)")
            print(f"  json.loads of every line {parse_s * 1000:8.1f} ms")
            print(f"  donegate audit           {audit_s * 1000:8.1f} ms   ratio {audit_s / parse_s:.1f}x "
                  f"(goal <= 2x: {'met' if audit_s <= 2 * parse_s else 'NOT met'})")
    timed = [(path, *ratio(path, args.runs)) for path in fixtures]
    ratios = sorted(((audit_s / parse_s, path) for path, audit_s, parse_s in timed), reverse=True)
    above = [f"{r:.1f}x {p.relative_to(TRANSCRIPTS)}" for r, p in ratios if r > 2]
    excess, worst = max((audit_s - 2 * parse_s, path) for path, audit_s, parse_s in timed)
    print(f"every fixture ({len(fixtures)}): highest ratio {ratios[0][0]:.1f}x ({ratios[0][1].relative_to(TRANSCRIPTS)}), "
          f"median {ratios[len(ratios) // 2][0]:.1f}x; above 2x: {len(above)}; the most any audit takes beyond 2x its "
          f"parse: {excess * 1e6:.0f} us ({worst.relative_to(TRANSCRIPTS)})")
    for line in above[:10]:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
