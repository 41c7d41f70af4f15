"""Move the pinned host CLIs to new releases in one command, for a maintainer:

    uv run python tools/bump_hosts.py                       # every host to the registry's latest release
    uv run python tools/bump_hosts.py codex=0.171.0         # one host to a given version
    uv run python tools/bump_hosts.py --no-record           # pins, install and the real-host suite only

Steps, each announced as it starts: ask the npm registry for each version (unless given), write the exact
versions into tests/hosts/package.json and its lock, install them into .cache/hosts (as .ci/run does), run
the real-host suite (`pytest -m hosts`, every CLI required), then record each host's hook calls and
session transcripts again (tests/hosts/capture_*.py), and run the tests that replay the recordings. It
stops at the first step that fails, saying which; `git diff` then shows what moved."""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOSTS = ROOT / "tests" / "hosts"
CACHE = ROOT / ".cache" / "hosts"
PACKAGES = {"claude-code": "@anthropic-ai/claude-code", "codex": "@openai/codex", "gemini": "@google/gemini-cli",
            "qwen": "@qwen-code/qwen-code", "copilot": "@github/copilot"}
CAPTURES = ["capture_claude_code.py", "capture_codex.py", "capture_gemini.py", "capture_qwen.py", "capture_copilot.py",
            "capture_transcripts.py"]


def step(n: int, total: int, what: str) -> None:
    print(f"[{n}/{total}] {what}", flush=True)


def run(*argv: str, cwd: Path = ROOT, env: dict | None = None) -> None:
    done = subprocess.run(argv, cwd=cwd, env={**os.environ, **(env or {})})
    if done.returncode != 0:
        sys.exit(f"tools/bump_hosts.py: `{' '.join(argv)}` failed (exit {done.returncode}); nothing after it ran")


def latest(package: str) -> str:
    done = subprocess.run(["npm", "view", package, "version"], capture_output=True, text=True)
    if done.returncode != 0 or not done.stdout.strip():
        sys.exit(f"tools/bump_hosts.py: the npm registry did not answer for {package}: {done.stderr.strip()}")
    return done.stdout.strip()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pins", nargs="*", metavar="HOST=VERSION", help=f"hosts: {', '.join(PACKAGES)}")
    parser.add_argument("--no-record", action="store_true", help="skip recording the hook calls and transcripts")
    args = parser.parse_args(argv)
    if shutil.which("npm") is None:
        sys.exit("tools/bump_hosts.py: npm is not installed (Debian: apt install nodejs npm)")
    given = dict(pin.split("=", 1) for pin in args.pins if "=" in pin)
    unknown = sorted(set(given) - set(PACKAGES)) + [p for p in args.pins if "=" not in p]
    if unknown:
        sys.exit(f"tools/bump_hosts.py: not HOST=VERSION with a known host: {', '.join(unknown)}")
    total = 5 if args.no_record else 7
    step(1, total, "versions")
    manifest = json.loads((HOSTS / "package.json").read_text())
    pins = manifest["dependencies"]
    for host, package in PACKAGES.items():
        new = given.get(host) or latest(package)
        print(f"      {package}: {pins[package]} -> {new}" if new != pins[package] else f"      {package}: {new} (kept)")
        pins[package] = new
    (HOSTS / "package.json").write_text(json.dumps(manifest, separators=(",", ":")) + "\n")
    step(2, total, "the lock (npm install --package-lock-only)")
    run("npm", "install", "--package-lock-only", "--no-audit", "--no-fund", "--loglevel=error", cwd=HOSTS)
    step(3, total, f"install into {CACHE.relative_to(ROOT)} (npm install from the lock, as .ci/run does)")
    if CACHE.is_symlink():
        CACHE.unlink()
    CACHE.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy(HOSTS / name, CACHE / name)
    run("npm", "install", "--no-audit", "--no-fund", "--loglevel=error", cwd=CACHE)
    step(4, total, "the real-host suite (pytest -m hosts)")
    run(sys.executable, "-m", "pytest", "-q", "-m", "hosts", "tests/hosts", env={"DONEGATE_REQUIRE_HOSTS": "1"})
    if not args.no_record:
        step(5, total, "record the hook calls and transcripts again")
        for script in CAPTURES:
            run(sys.executable, str(HOSTS / script))
        step(6, total, "the tests that replay the recordings")
        run(sys.executable, "-m", "pytest", "-q", "tests/test_host_payloads.py", "tests/test_audit.py",
            "tests/test_transcripts.py")
    step(total, total, "done: review `git diff tests/hosts demo/hosts demo/transcripts`, then commit")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
