"""What the hooks cost the agent on a large repository: the pre-tool-use hook against a bare interpreter
start, and the stop hook (a stop of a state that already passed, and a stop that runs the check) against
a shell pipeline in the style of other gates and against one `git status -uall`.

Run on demand (it is not collected by pytest and asserts nothing about speed):

    uv run python tests/benchmarks/bench_stop_hook.py [--tracked 20000] [--untracked 2000] [--file-bytes 4000] [--runs 15]

It builds a git repository with TRACKED committed files and UNTRACKED untracked files, takes the gate's
baseline, changes one tracked file, lets one stop run the acceptance command (`true`) so the state is
stamped as passed, then times further stops of that same state:

- gate, in process: ExactGate.on_stop(), chapter 07's StopGate reading the tree as the hook does (appendix 94's
  snapshot, compare with the stamp, answer);
- gate, new process: a fresh Python that imports donegate.treestate (and so the gate) and decides one stop
  (interpreter start-up included);
- `donegate hook stop`, gate deciding: the installed console script fed the host's JSON with no recorded
  answer (the memo removed before each run), so the gate decides and the answer is recorded: what the
  first stop of a state costs;
- `donegate hook stop`, replayed: the same stop once the answer is recorded, which is what a host pays for
  every later stop of that state (donegate.quickstop: git status, the stat data of the paths it lists,
  no gate imported);
- `donegate hook stop`, running the check: the same stop after a new edit each time, so the gate runs the
  acceptance command (`true`, about 1 ms): what the first stop after an edit costs (it also records the answer
  of the next stop of that tree, which the gate gives a second time on the same reading);
- shell pipeline: HEAD + porcelain status + diff against HEAD + one pass hashing every untracked file;
- `git status --porcelain -uall`: one reading of the tree by git alone;
- `donegate hook pre-tool-use`: an Edit of a plain file in the session's repository, answered by the
  quick path, timed in turns with a bare interpreter start (`python -c pass`), whose time it includes.

With --peer COMMAND (another gate's Stop hook, from its public source, given for the measurement and never
committed), that command is fed the same payload and timed in turns with ours: on the stop after a new edit
(both run the repository's check), and on a stop of a state that already passed.

Everything but the acceptance command is measured; the figures are medians over --runs calls.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from donegate.stopgate import Settings
from donegate.treestate import ExactGate

PIPELINE = ("git rev-parse HEAD >/dev/null && git status --porcelain >/dev/null && git diff HEAD >/dev/null "
            "&& git ls-files -o --exclude-standard -z | xargs -0 -r sha256sum >/dev/null")
ONE_STOP = ("import sys; from pathlib import Path; from donegate.stopgate import Settings; "
            "from donegate.treestate import ExactGate; "
            "v = ExactGate(sys.argv[1], 'bench', Settings(verify_command='true', state_dir=Path(sys.argv[2])))"
            ".on_stop(True); sys.exit(0 if v.exit == 'already_verified' else 1)")


def build_repo(root: Path, tracked: int, untracked: int, file_bytes: int = 4000, per_folder: int = 100) -> None:
    """A repository with `tracked` committed files and `untracked` untracked ones of about `file_bytes`
    bytes each (a typical source file), in folders of 100."""
    def write(folder: str, count: int) -> None:
        for i in range(count):
            path = root / folder / f"d{i // per_folder:04d}" / f"f{i % per_folder:03d}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            head = f"# {folder} file {i}\nVALUE = {i}\n"
            path.write_text(head + "x = 1\n" * max(0, (file_bytes - len(head)) // 6))
    root.mkdir(parents=True)
    write("scratch", untracked)      # written first: old enough to be trusted by the hash cache later
    write("src", tracked)
    git = ["git", "-C", str(root)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "src"], check=True)
    subprocess.run([*git, "-c", "user.email=b@example.invalid", "-c", "user.name=bench", "commit", "-q", "-m", "base"],
                   check=True)


def median_seconds(action, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def interleaved_medians(first, second, runs: int) -> tuple[float, float]:
    """The medians of two actions timed in turns (first, second, first, ...)."""
    times = ([], [])
    for _ in range(runs):
        for action, record in ((first, times[0]), (second, times[1])):
            start = time.perf_counter()
            action()
            record.append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])


def checking_stops(run_hook, tool_call, changed: Path, repo: Path, runs: int, peer=None) -> tuple[float, float, float]:
    """Medians of a stop after a new edit (the gate runs the check), of the shell pipeline and of the peer's
    hook (nan without one), in turns. Each edit is made as an agent makes it, after the tool hook's call (not
    timed); the peer meets each edited state after ours."""
    hook_times, pipe_times, peer_times = [], [], []
    base = changed.read_text()
    for n in range(runs):
        tool_call()
        changed.write_text(base + f"EDIT = {n}\n")  # a state the gate has not seen: it runs the check
        for action, record in ((run_hook, hook_times), (peer, peer_times),
                               (lambda: subprocess.run(["sh", "-c", PIPELINE], cwd=repo, check=True), pipe_times)):
            if action is not None:
                start = time.perf_counter()
                action()
                record.append(time.perf_counter() - start)
    changed.write_text(base)
    return (statistics.median(hook_times), statistics.median(pipe_times),
            statistics.median(peer_times) if peer_times else float("nan"))


def tool_hook_times(python: str, repo: Path, env: dict, hook_env: dict, runs: int) -> tuple[float, float]:
    """Medians of `donegate hook pre-tool-use` (a plain Edit, in the session's repository) and of a
    bare interpreter start, in turns."""
    import json
    hook = [str(Path(python).with_name("donegate")), "hook", "pre-tool-use"]
    target = repo / "src" / "d0000" / "f001.py"
    call = json.dumps({"session_id": "bench", "cwd": str(repo), "tool_name": "Edit",
                       "tool_input": {"file_path": str(target), "old_string": "x", "new_string": "y"}})
    done = subprocess.run(hook, input=call, text=True, capture_output=True, env=hook_env, check=True)
    assert (done.returncode, done.stdout) == (0, ""), done
    return interleaved_medians(
        lambda: subprocess.run(hook, input=call, text=True, capture_output=True, env=hook_env, check=True),
        lambda: subprocess.run([python, "-c", "pass"], check=True, env=env), runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tracked", type=int, default=20_000)
    parser.add_argument("--untracked", type=int, default=2_000)
    parser.add_argument("--file-bytes", type=int, default=4000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--peer", metavar="COMMAND", help="another gate's Stop hook command, timed in turns with ours")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="donegate-bench-"))
    try:
        repo, state = work / "repo", work / "state"
        t0 = time.perf_counter()
        build_repo(repo, args.tracked, args.untracked, args.file_bytes)
        print(f"repository: {args.tracked:,} tracked and {args.untracked:,} untracked files of about "
              f"{args.file_bytes:,} bytes "
              f"(built in {time.perf_counter() - t0:.1f} s)")
        import json
        hook = [str(Path(sys.executable).with_name("donegate")), "hook", "stop"]
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as installed: with .pyc
        hook_env = {**env, "DONEGATE_STATE_DIR": str(state), "DONEGATE_VERIFY_COMMAND": "true"}
        start = json.dumps({"session_id": "bench", "cwd": str(repo), "hook_event_name": "SessionStart"})
        subprocess.run([hook[0], "hook", "session-start"], input=start, text=True, capture_output=True, env=hook_env,
                       check=True)  # the hooks' session, armed as a host arms it (its state sealed by the gate)
        # the gate in process and as a new process keep a state folder of their own (theirs is not sealed)
        settings = Settings(verify_command="true", state_dir=work / "state-in-process")
        gate = ExactGate(repo, "bench", settings)
        gate.start()
        changed = repo / "src" / "d0000" / "f000.py"
        changed.write_text(changed.read_text() + "CHANGED = True\n")
        first = gate.on_stop(False)
        assert first.exit == "passed", first
        time.sleep(2.1)  # let the new files age past the hash cache's racy window, as they would between stops
        for _ in range(3):
            assert gate.on_stop(True).exit == "already_verified"
        in_process = median_seconds(lambda: gate.on_stop(True), args.runs)
        python = sys.executable
        one_stop = [python, "-c", ONE_STOP, str(repo), str(settings.state_dir)]
        subprocess.run(one_stop, check=True, env=env)
        new_process = median_seconds(lambda: subprocess.run(one_stop, check=True, env=env), args.runs)
        payload = json.dumps({"session_id": "bench", "cwd": str(repo), "stop_hook_active": True})
        run_hook = lambda: subprocess.run(hook, input=payload, text=True, capture_output=True, env=hook_env, check=True)
        memos = state / "quick"
        run_hook()  # the hooks' session: the edit checked, passed, and the next stop's answer recorded
        run_hook()  # an already-verified stop, replayed
        assert any(memos.iterdir()), "the already-verified stop was not recorded"

        def first_stop():
            shutil.rmtree(memos, ignore_errors=True)
            run_hook()

        deciding = median_seconds(first_stop, args.runs)
        assert any(memos.iterdir()), "the already-verified stop was not recorded"
        # the replay and the pipeline take turns, so that both meet the same load on the machine
        host, pipeline = interleaved_medians(
            run_hook, lambda: subprocess.run(["sh", "-c", PIPELINE], cwd=repo, check=True), args.runs)
        startup = median_seconds(lambda: subprocess.run([python, "-c", "pass"], check=True, env=env), args.runs)
        status_only = median_seconds(lambda: subprocess.run(["git", "status", "--porcelain", "-uall"], cwd=repo,
                                                            check=True, capture_output=True), args.runs)
        edit_call = json.dumps({"session_id": "bench", "cwd": str(repo), "tool_name": "Edit",
                                "tool_input": {"file_path": str(changed), "old_string": "x", "new_string": "y"}})
        tool_call = lambda: subprocess.run([hook[0], "hook", "pre-tool-use"], input=edit_call, text=True,
                                           capture_output=True, env=hook_env, check=True)
        peer = None
        if args.peer:
            (repo / "verify.sh").write_text("#!/bin/sh\nexit 0\n")  # the check the peer runs: the same `true`
            (repo / "verify.sh").chmod(0o755)
            peer = lambda: subprocess.run(["sh", "-c", args.peer], input=payload, text=True, capture_output=True,
                                          cwd=repo, env=env)
            peer_verified = interleaved_medians(run_hook, peer, args.runs)
        checking, piped, peered = checking_stops(run_hook, tool_call, changed, repo, args.runs, peer)
        tool, bare = tool_hook_times(python, repo, env, hook_env, args.runs)
        print(f"median of {args.runs} stops of a state that already passed (acceptance command not run):")
        print(f"  gate, in process                     {in_process * 1000:7.1f} ms")
        print(f"  gate, new process                    {new_process * 1000:7.1f} ms   "
              f"(bare interpreter start-up: {startup * 1000:.1f} ms)")
        print(f"  donegate hook stop, gate deciding    {deciding * 1000:7.1f} ms   (first stop of this state: recorded)")
        print(f"  donegate hook stop, replayed         {host * 1000:7.1f} ms   (every later stop of it)")
        print(f"  shell pipeline                       {pipeline * 1000:7.1f} ms")
        print(f"  ratio replayed / pipeline: {host / pipeline:.2f}; gate deciding / pipeline: {deciding / pipeline:.2f}")
        print(f"  git status --porcelain -uall         {status_only * 1000:7.1f} ms")
        print(f"  goal: the replayed hook <= half the pipeline and <= 1.3x git status: "
              f"{'met' if host <= pipeline / 2 and host <= 1.3 * status_only else 'NOT met'}")
        print(f"median of {args.runs} stops after a new edit (the gate runs the acceptance command, `true`):")
        print(f"  donegate hook stop, running the check {checking * 1000:6.1f} ms   "
              f"(shell pipeline in the same turns: {piped * 1000:.1f} ms; ratio {checking / piped:.2f})")
        print(f"  beyond Python's start, the check and the one reading of the tree by git: "
              f"{(checking - startup - status_only) * 1000:.1f} ms")
        print(f"  more than a stop the gate decides without running the check: {(checking - deciding) * 1000:.1f} ms "
              f"({(checking - deciding) / piped:.2f}x the pipeline)")
        if peer is not None:
            print(f"against the peer's hook ({args.peer}), in turns, same payload:")
            for what, ours, theirs in (("a stop that runs the check", checking, peered),
                                       ("a stop of a state that already passed", *peer_verified)):
                print(f"  {what:<40} ours {ours * 1000:6.1f} ms, peer {theirs * 1000:6.1f} ms: {ours / theirs:.2f}x "
                      f"(goal <= 0.5x: {'met' if ours <= theirs / 2 else 'NOT met'})")
        print(f"median of {args.runs} pre-tool-use calls (an Edit of a plain file), in turns with a bare interpreter:")
        print(f"  donegate hook pre-tool-use          {tool * 1000:7.1f} ms")
        print(f"  bare interpreter start-up           {bare * 1000:7.1f} ms")
        print(f"  the hook's own time                 {(tool - bare) * 1000:7.1f} ms   goal <= 25 ms: "
              f"{'met' if tool - bare <= 0.025 else 'NOT met'}")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
