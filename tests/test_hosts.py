"""The gate inside real agents (DESIGN 2.8): `donegate hook`, `install`, `init`, `doctor` and `ledger`.

Real hook payloads, shaped like the ones Claude Code, Codex CLI and Gemini CLI send, are piped into the
installed console script, run in temporary git repositories with a private state folder. The pure parts
(run_hook, tool_policy, merge_hooks) are also called directly where a subprocess would add nothing.

The acceptance script in the end-to-end tests is the one `donegate init` writes (`git diff --check`), so
a line with trailing whitespace in a tracked file is the breaking edit. The operator adds one line to it
that appends to a marker file outside the repository, so a test can count the check's runs.
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from gitrepo import GitRepo

from donegate.doctor import codex_hook_hash, codex_hook_keys, missing_program
from donegate.hosts import HOSTS, SETTINGS_FILES, HookAnswer, hook_entries, merge_hooks, stop_answer, tool_policy
from donegate.realhosts import run_hook  # chapter 08's run_hook with the real hosts' steps (appendix 95)
from donegate.stopgate import Settings, Verdict
from donegate.treestate import GateError, find_repo

DONEGATE = Path(sys.executable).with_name("donegate")
EXE = "donegate"  # installed settings call it by name, so they can be committed and shared
CLAIM = "Done: the change is complete and all checks pass."
ORIGINAL = 'STATUS = "ok"\n'
FIXED = 'STATUS = "ok"\nx = 1\n'


def broken(n: int = 1) -> str:
    """app.py with a line `git diff --check` rejects (trailing whitespace on line 2); each n differs."""
    return f'STATUS = "ok"\nx = {n}   \n'


@pytest.fixture(autouse=True)
def hermetic(hermetic_gate):
    """Every test runs in the isolated environment of conftest.hermetic_gate."""


def donegate(*args: str, cwd: Path, state: Path, stdin: str | None = None,
             **env: str) -> subprocess.CompletedProcess:
    """Run the installed console script in `cwd` with a private state folder."""
    assert DONEGATE.exists(), f"{DONEGATE} is missing: the package must be installed (uv sync)"
    environment = {**os.environ, "DONEGATE_STATE_DIR": str(state), **env}
    return subprocess.run([str(DONEGATE), *args], cwd=cwd, env=environment, input=stdin,
                          capture_output=True, text=True, timeout=60)


def answer(done: subprocess.CompletedProcess) -> dict | None:
    """The JSON the hook printed on stdout (None if it printed nothing)."""
    return json.loads(done.stdout) if done.stdout.strip() else None


class Repo(GitRepo):
    """A real git repository in a temporary folder, driven through the console script."""

    def run(self, *args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess:
        return donegate(*args, cwd=self.root, state=self.state, stdin=stdin, **env)

    def payload(self, event: str, host: str = "claude-code", **fields) -> dict:
        """A hook payload as the host sends it (common fields first, then the event's own)."""
        return {"session_id": "session-1", "transcript_path": str(self.root.parent / "transcript.jsonl"),
                "cwd": str(self.root), "hook_event_name": HOSTS[host][event], **fields}

    def hook(self, event: str, host: str = "claude-code", env: dict | None = None,
             **fields) -> subprocess.CompletedProcess:
        return self.run("hook", event, "--host", host, stdin=json.dumps(self.payload(event, host, **fields)),
                        **(env or {}))

    def start(self, host: str = "claude-code", source: str = "startup", **env: str) -> subprocess.CompletedProcess:
        return self.hook("session-start", host, env, source=source)

    def stop(self, active: bool = False, host: str = "claude-code", **env: str) -> subprocess.CompletedProcess:
        said = {"prompt": "make the change", "prompt_response": CLAIM} if host == "gemini" \
            else {"last_assistant_message": CLAIM}
        return self.hook("stop", host, env, stop_hook_active=active, **said)

    def count_runs(self) -> None:
        """The operator's edit to the verify.sh init wrote: count each run in the marker file."""
        script = self.root / "verify.sh"
        text = script.read_text()
        assert "set -eu\n" in text
        script.write_text(text.replace("set -eu\n", f"set -eu\necho run >> {shlex.quote(str(self.marker))}\n", 1))


@pytest.fixture
def make_repo(tmp_path):
    """make_repo(name, files={...}): a committed repository holding app.py (and `files`), no verify.sh."""

    def make(name: str = "repo", files: dict[str, str] | None = None) -> Repo:
        repo = Repo(tmp_path / name, tmp_path / "state", tmp_path / f"{name}.marker")
        repo.root.mkdir()
        repo.git("init", "-q")
        repo.write("app.py", ORIGINAL)
        for rel, text in (files or {}).items():
            repo.write(rel, text)
        repo.commit("start")
        return repo

    return make


@pytest.fixture
def repo(make_repo) -> Repo:
    return make_repo(files={"tests/test_x.py": "def test_x():\n    assert 1 + 1 == 2\n"})


@pytest.fixture
def gated(repo):
    """gated(host, install=True, **env): `donegate init` (counting runs), `donegate install`, a session start."""

    def make(host: str = "claude-code", install: bool = True, **env: str) -> Repo:
        done = repo.run("init")
        assert done.returncode == 0, done.stdout + done.stderr
        repo.count_runs()
        if install:
            done = repo.run("install", "--host", host)
            assert done.returncode == 0, done.stdout + done.stderr
        done = repo.start(host, **env)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
        return repo

    return make


@pytest.fixture
def outside(tmp_path) -> Path:
    """A folder that is not inside any git repository."""
    folder = tmp_path / "plain"
    folder.mkdir()
    if find_repo(folder) is not None:
        pytest.skip(f"the temporary folder {folder} is inside a git repository ({find_repo(folder)})")
    return folder


def settings_of(repo: Repo, rel: str = ".claude/settings.json") -> dict:
    return json.loads((repo.root / rel).read_text())


# -- init --------------------------------------------------------------------------------------

def test_init_writes_an_executable_verify_sh_that_passes(repo):
    done = repo.run("init")
    script = repo.root / "verify.sh"
    assert done.returncode == 0, done.stdout
    assert "passed (exit 0)" in done.stdout
    assert script.stat().st_mode & stat.S_IXUSR
    assert subprocess.run(["./verify.sh"], cwd=repo.root, capture_output=True).returncode == 0


def test_init_shows_what_a_block_looks_like(repo):
    done = repo.run("init")
    assert "a failing copy, to show a block" in done.stdout
    assert "FAIL: a check that fails" in done.stdout


def test_init_s_next_step_names_every_host_install_takes(repo):
    from donegate.cli import GATE_HOSTS
    (line,) = [line for line in repo.run("init").stdout.splitlines() if line.startswith("next: ")]
    assert all(host in line for host in GATE_HOSTS), line


def test_init_never_overwrites_an_existing_verify_sh(repo):
    assert repo.run("init").returncode == 0
    script = repo.root / "verify.sh"
    script.write_text(script.read_text() + "echo 'the operator was here'\n")
    mine = script.read_bytes()
    done = repo.run("init")
    assert done.returncode == 0
    assert "never overwrites" in done.stdout
    assert script.read_bytes() == mine


@pytest.mark.parametrize("marker, content, commented, tool", [
    ("pyproject.toml", '[project]\nname = "app"\nversion = "0.1.0"\n', "# python -m pytest -q", "pytest"),
    ("package.json", '{"name": "app", "version": "0.1.0"}\n', "# npm test --silent", "npm"),
])
def test_init_offers_the_detected_stack_s_checks_commented_out(make_repo, marker, content, commented, tool):
    repo = make_repo(files={marker: content})
    done = repo.run("init")
    text = (repo.root / "verify.sh").read_text()
    assert commented in text.splitlines()
    active = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert not any(tool in line for line in active), active
    assert done.returncode == 0, done.stdout
    assert subprocess.run(["./verify.sh"], cwd=repo.root, capture_output=True).returncode == 0


# -- install -----------------------------------------------------------------------------------

def test_install_writes_the_hooks_calling_donegate_by_name(repo):
    done = repo.run("install", "--host", "claude-code")
    assert done.returncode == 0, done.stdout
    hooks = settings_of(repo)["hooks"]
    for name, event in (("SessionStart", "session-start"), ("UserPromptSubmit", "user-prompt"),
                        ("Stop", "stop"), ("PreToolUse", "pre-tool-use"), ("StopFailure", "stop-failure")):
        commands = [h["command"] for entry in hooks[name] for h in entry["hooks"]]
        expected = f"{EXE} hook {event} --host claude-code"
        if event == "stop-failure":  # claude -p sends this hook a SIGTERM as it ends
            expected = f"trap '' TERM; {expected}"
        assert commands == [expected], (name, commands)
    assert "Write" in hooks["PreToolUse"][0]["matcher"] and "Bash" in hooks["PreToolUse"][0]["matcher"]


def test_second_install_changes_nothing_and_says_so(repo):
    assert repo.run("install", "--host", "claude-code").returncode == 0
    path = repo.root / ".claude/settings.json"
    first = path.read_bytes()
    done = repo.run("install", "--host", "claude-code")
    assert done.returncode == 0
    assert "nothing changed" in done.stdout
    assert path.read_bytes() == first


GONE = "/opt/old-env/bin/donegate"  # an environment that was moved or deleted


def test_install_replaces_entries_whose_donegate_no_longer_exists(repo):
    theirs = hook_entries("claude-code", GONE)
    theirs["Stop"].append({"hooks": [{"type": "command", "command": "notify-send 'turn over'"}]})
    repo.write(".claude/settings.json", json.dumps({"hooks": theirs}))
    done = repo.run("install", "--host", "claude-code")
    assert done.returncode == 0, done.stdout
    assert done.stdout.count("replaced") == 5 and GONE in done.stdout
    hooks = settings_of(repo)["hooks"]
    commands = [h["command"] for entries in hooks.values() for e in entries for h in e["hooks"]]
    assert not any(GONE in c for c in commands)
    assert f"{EXE} hook stop --host claude-code" in commands and "notify-send 'turn over'" in commands
    assert "nothing changed" in repo.run("install", "--host", "claude-code").stdout


def test_doctor_calls_hooks_broken_when_their_program_is_gone(repo):
    repo.write(".claude/settings.json", json.dumps({"hooks": hook_entries("claude-code", GONE)}))
    done = repo.run("doctor")
    assert done.returncode == 1
    line = next(l for l in done.stdout.splitlines() if "claude-code" in l)
    assert "BROKEN" in line and GONE in line and "donegate install --host claude-code" in line
    repo.run("install", "--host", "claude-code")
    line = next(l for l in repo.run("doctor").stdout.splitlines() if "claude-code" in l)
    assert line.startswith("hooks        claude-code  installed")


def test_missing_program_finds_absolute_paths_and_names_on_path(tmp_path):
    assert missing_program(f"{EXE} hook stop") is None
    assert missing_program("sh -c true") is None
    assert missing_program(f"{GONE} hook stop") == GONE
    assert missing_program("no-such-program-here hook stop") == "no-such-program-here"
    plain = tmp_path / "not-executable"
    plain.write_text("#!/bin/sh\n")
    assert missing_program(f"{plain} hook stop") == str(plain)
    assert missing_program("'unbalanced") is None


def test_install_keeps_unrelated_hooks_and_settings(repo):
    theirs = {"permissions": {"allow": ["Bash(npm test)"]},
              "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send 'turn over'"}]}],
                        "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "prettier -w"}]}]}}
    repo.write(".claude/settings.json", json.dumps(theirs))
    assert repo.run("install", "--host", "claude-code").returncode == 0
    now = settings_of(repo)
    assert now["permissions"] == theirs["permissions"]
    assert now["hooks"]["PostToolUse"] == theirs["hooks"]["PostToolUse"]
    assert now["hooks"]["Stop"][0] == theirs["hooks"]["Stop"][0]
    assert now["hooks"]["Stop"][1]["hooks"][0]["command"] == f"{EXE} hook stop --host claude-code"


@pytest.mark.parametrize("text", ['{"hooks": {"Stop": [', "[1, 2]", '{"hooks": ["not", "an", "object"]}'],
                         ids=["not-json", "not-an-object", "hooks-not-an-object"])
def test_install_refuses_a_malformed_settings_file_and_leaves_it_untouched(repo, text):
    repo.write(".claude/settings.json", text)
    done = repo.run("install", "--host", "claude-code")
    assert done.returncode == 2
    assert "nothing was changed" in done.stdout
    assert (repo.root / ".claude/settings.json").read_text() == text


def test_install_for_codex_writes_the_same_hooks_into_codex_hooks_json(repo):
    assert repo.run("install", "--host", "codex").returncode == 0
    hooks = settings_of(repo, ".codex/hooks.json")["hooks"]
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "Stop", "PreToolUse"}
    assert hooks["Stop"][0]["hooks"][0]["command"] == f"{EXE} hook stop --host codex"


def test_install_outside_a_repository_exits_2(outside, tmp_path):
    done = donegate("install", "--host", "claude-code", cwd=outside, state=tmp_path / "state")
    assert done.returncode == 2
    assert "not in a git repository" in done.stdout
    assert not (outside / ".claude").exists()


# -- the acceptance sequence: init, install, start, break, stop ---------------------------------

def test_a_breaking_edit_blocks_the_stop_with_the_failing_line(gated):
    repo = gated()
    repo.write("app.py", broken())
    done = repo.stop(active=False)
    assert done.returncode == 2
    assert "app.py:2: trailing whitespace" in done.stderr
    assert "Traceback" not in done.stderr
    out = answer(done)
    assert set(out) == {"decision", "reason"} and out["decision"] == "block"
    assert out["reason"] == done.stderr.strip()
    assert "Message from the acceptance check, not from the user" in out["reason"]
    assert repo.runs() == 1


def test_the_stop_passes_once_the_edit_is_fixed(gated):
    repo = gated()
    repo.write("app.py", broken())
    assert repo.stop(active=False).returncode == 2
    repo.write("app.py", FIXED)
    done = repo.stop(active=True)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert repo.runs() == 2


def test_after_a_pass_three_failing_stops_block_and_the_fourth_hands_over_loudly(gated):
    repo = gated()
    repo.write("app.py", broken())
    assert repo.stop(active=False).returncode == 2
    repo.write("app.py", FIXED)
    assert repo.stop(active=True).returncode == 0
    for attempt in (1, 2, 3):
        repo.write("app.py", broken(10 + attempt))
        done = repo.stop(active=True)
        assert done.returncode == 2, (attempt, done.stdout)
        assert f"attempt {attempt} of 3" in answer(done)["reason"]
    repo.write("app.py", broken(14))
    done = repo.stop(active=True)
    assert done.returncode == 0
    message = answer(done)["systemMessage"]
    assert "the turn ended without passing verification" in message
    assert "retry budget is spent" in message
    assert repo.runs() == 2 + 4


def test_a_stop_with_no_edit_since_the_failed_one_hands_over_without_running_the_check(gated):
    repo = gated()
    repo.write("app.py", broken())
    assert repo.stop(active=False).returncode == 2
    assert repo.runs() == 1
    done = repo.stop(active=True)
    assert done.returncode == 0
    message = answer(done)["systemMessage"]
    assert "the turn ended without passing verification" in message
    assert "NOT verified" in message and "nothing changed since the last failed check" in message
    assert repo.runs() == 1


@pytest.fixture
def armed(repo, outside):
    """A repository with a committed, counting verify.sh and the hooks installed, in which no session has
    started: the session starts in the folder above it (not a repository)."""
    assert find_repo(repo.root.parent) is None
    for args in (("init",), ("install", "--host", "claude-code")):
        done = repo.run(*args)
        assert done.returncode == 0, done.stdout + done.stderr
    repo.count_runs()
    repo.commit("the check")
    parent = str(repo.root.parent)
    done = repo.hook("session-start", cwd=parent, source="startup")
    assert (done.returncode, done.stdout) == (0, "")
    return repo


def test_a_session_that_began_above_the_repository_is_gated_from_its_first_write_there(armed):
    """The file tool names the file by its absolute path while the shell is still in the folder above:
    the tool hook takes the repository's baseline before the write, so the stop checks it."""
    parent = str(armed.root.parent)
    edit = {"file_path": str(armed.root / "app.py"), "old_string": "ok", "new_string": "ok"}
    done = armed.hook("pre-tool-use", cwd=parent, tool_name="Edit", tool_input=edit)
    assert done.returncode == 0 and "deny" not in done.stdout
    armed.write("app.py", broken())
    done = armed.hook("stop", cwd=parent, stop_hook_active=False, last_assistant_message=CLAIM)
    assert done.returncode == 2 and armed.runs() == 1, done.stdout
    armed.write("app.py", FIXED)
    done = armed.hook("stop", cwd=parent, stop_hook_active=True, last_assistant_message=CLAIM)
    assert (done.returncode, armed.runs()) == (0, 2), done.stdout


def test_a_session_that_cds_into_the_repository_and_writes_there_is_gated_at_its_stop(armed):
    """`cd repo && <edit>` from the folder above: no hook names the repository before the write, so the
    stop takes a late baseline (clean at HEAD) and checks what is uncommitted, saying why."""
    parent = str(armed.root.parent)
    command = {"command": f"cd {armed.root.name} && printf 'x = 1   \\n' >> app.py"}
    done = armed.hook("pre-tool-use", cwd=parent, tool_name="Bash", tool_input=command)
    assert done.returncode == 0
    armed.write("app.py", broken())
    done = armed.stop(active=False)
    assert done.returncode == 2 and armed.runs() == 1, done.stdout
    armed.write("app.py", FIXED)
    done = armed.stop(active=True)
    assert (done.returncode, armed.runs()) == (0, 2)
    assert "in the middle of it" in answer(done)["systemMessage"]


def test_a_session_that_began_above_and_made_no_tool_call_leaves_the_person_s_changes_alone(armed):
    """The person's own uncommitted work in a repository the session only talked about (no tool call
    that can write): the stop does not run the check on it."""
    armed.write("app.py", broken())
    done = armed.stop(active=False)
    assert (done.returncode, armed.runs()) == (0, 0), done.stdout
    assert not done.stdout or "not gated" in answer(done).get("systemMessage", "not gated")


def test_a_session_start_seen_in_a_second_repository_takes_its_baseline_there(gated, make_repo):
    """The same session starts again in b (a resume there, say): b's baseline is taken at that start, so
    the person's uncommitted work already in b is not counted as the session's."""
    a = gated()
    b = make_repo("b")
    assert b.run("init").returncode == 0
    b.count_runs()
    b.commit("the check")
    b.write("app.py", broken())  # the person's own, before the session came
    assert a.hook("session-start", cwd=str(b.root), source="resume").returncode == 0
    bash = {"command": "ls"}
    assert a.hook("pre-tool-use", cwd=str(b.root), tool_name="Bash", tool_input=bash).returncode == 0
    done = a.hook("stop", cwd=str(b.root), stop_hook_active=False, last_assistant_message=CLAIM)
    assert (done.returncode, b.runs()) == (0, 0), done.stdout


def test_a_post_tool_use_call_marks_the_session_as_one_that_ran_a_tool(armed):
    """install does not ask for PostToolUse, but where it is called (the peer gate's marker), it counts."""
    armed.write("app.py", broken())
    done = armed.hook("post-tool-use", cwd=str(armed.root.parent), tool_name="Edit", tool_input={})
    assert done.returncode == 0
    assert armed.stop(active=False).returncode == 2 and armed.runs() == 1


def test_another_repository_the_session_writes_to_is_gated_beside_its_own(gated, make_repo):
    """A session of repository A writes into repository B: from that call on, B is gated too, by B's
    own check, and one stop answers for both."""
    a = gated()
    b = make_repo("b")
    for args in (("init",),):
        assert b.run(*args).returncode == 0
    b.count_runs()
    b.commit("the check")
    write = {"file_path": str(b.root / "app.py"), "content": broken()}
    done = a.hook("pre-tool-use", tool_name="Write", tool_input=write)
    assert done.returncode == 0 and "deny" not in done.stdout
    b.write("app.py", broken())
    done = a.stop(active=False)
    assert done.returncode == 2, done.stdout
    assert (a.runs(), b.runs()) == (0, 1)
    b.write("app.py", FIXED)
    done = a.stop(active=True)
    assert (done.returncode, a.runs(), b.runs()) == (0, 0, 2)
    # a protected file of B is B's operator's as well
    test = {"file_path": str(b.root / "tests" / "test_x.py"), "content": "def test_x():\n    pass\n"}
    b.write("tests/test_x.py", "def test_x():\n    assert 1 + 1 == 2\n")
    b.commit("a test")
    done = a.hook("pre-tool-use", tool_name="Write", tool_input=test)
    assert "deny" in done.stdout


def test_the_answer_follows_the_verdict_s_exit_not_the_words_of_its_message():
    quiet = Verdict("allow", "completed", "not_gated", "[donegate] nothing changed since the baseline")
    assert stop_answer("claude-code", quiet) == HookAnswer(0)


def test_a_read_only_turn_stops_silently(gated):
    repo = gated()
    done = repo.stop(active=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert repo.runs() == 0


def test_resume_keeps_the_first_baseline(repo, tmp_path):
    env = {"DONEGATE_STATE_DIR": str(tmp_path / "state")}
    repo.write("verify.sh", "#!/bin/sh\nexec git diff --check\n")
    (repo.root / "verify.sh").chmod(0o755)

    def call(event: str, **fields):
        return run_hook(event, json.dumps(repo.payload(event, **fields)), "claude-code", env)

    assert call("session-start", source="startup").exit_code == 0
    repo.write("app.py", broken())
    assert call("session-start", source="resume").exit_code == 0
    stop = call("stop", stop_hook_active=False, last_assistant_message=CLAIM)
    assert stop.exit_code == 2
    assert "app.py:2: trailing whitespace" in stop.stderr


# -- other hosts -------------------------------------------------------------------------------

def test_codex_blocks_a_stop_like_claude_code(gated):
    repo = gated("codex")
    repo.write("app.py", broken())
    done = repo.stop(active=False, host="codex")
    assert done.returncode == 2
    assert "app.py:2: trailing whitespace" in done.stderr
    assert answer(done) == {"decision": "block", "reason": done.stderr.strip()}


@pytest.mark.parametrize("host, budget", [("codex", 0), ("codex", 1), ("codex", 2), ("codex", 3), ("codex", 5),
                                          ("copilot", 3), ("claude-code", 4)])
def test_on_a_relayed_run_the_refusals_the_person_set_are_all_the_refusals_there_are(gated, host, budget):
    """An agent that keeps making wrong fixes and never repeats the hand-over's line: every stop is refused
    until the budget (DONEGATE_MAX_BLOCKS) is spent, relay requests included, then the turn ends handed over.
    The last refusal of a budget of 2 or more is the relay's; a budget of 1 relays nothing."""
    env = {"DONEGATE_MAX_BLOCKS": str(budget), "CLAUDE_CODE_SESSION_ATTENDED": "0"}
    repo = gated(host, **env)
    answers = []
    for n in range(1, budget + 4):
        repo.write("app.py", broken(n))
        done = repo.hook("stop", host, env, stop_hook_active=True, last_assistant_message="Fixed it.", turn_id="t")
        answers.append(done)
        if done.returncode == 0 and not (answer(done) or {}).get("decision"):
            break
    said = [json.dumps(answer(a)) for a in answers]
    refused = [s for s in said if '"block"' in s or '"deny"' in s] or [a.stderr for a in answers if a.returncode == 2]
    assert len(answers) == budget + 1 and len(refused) == budget, said
    assert "HANDED OVER UNVERIFIED" in said[-1] or budget == 0, said[-1]
    relays = [s for s in said if "request 1 of 1" in s]
    assert len(relays) == (1 if budget >= 2 else 0), said
    if budget >= 2:
        assert f"attempt {budget - 1} of {budget - 1}" in said[-3], said


def test_a_claude_code_run_that_streams_its_events_is_not_relayed(gated, tmp_path):
    """`claude -p --output-format stream-json` prints every hook's words as events: the person sees the
    hand-over, so it is given at once, not asked of the agent (the gate reads the host's command line)."""
    repo = gated()
    repo.write("app.py", broken())
    env = {**os.environ, "DONEGATE_STATE_DIR": str(repo.state), "CLAUDE_CODE_SESSION_ATTENDED": "0"}
    payload = tmp_path / "stop.json"

    def stop(*host_args: str) -> dict:
        payload.write_text(json.dumps(repo.payload("stop", stop_hook_active=True, last_assistant_message="Done.")))
        # a shell with the host's arguments stands for the host; `; :` keeps it from exec'ing the hook in its place
        done = subprocess.run(["sh", "-c", '"$0" hook stop --host claude-code < "$1"; :', str(DONEGATE),
                               str(payload), *host_args], cwd=repo.root, env=env, capture_output=True, text=True)
        return answer(done) or {"stderr": done.stderr}

    assert "attempt 1 of" in json.dumps(stop("-p", "--output-format", "stream-json"))
    handed = stop("-p", "--output-format", "stream-json")
    assert "HANDED OVER UNVERIFIED" in handed.get("systemMessage", ""), handed
    assert "request 1 of" in json.dumps(stop("-p", "--output-format=text")), "a plain -p run is relayed"


def test_a_hand_over_on_codex_is_relayed_in_the_agents_last_message(gated):
    """Headless Codex shows the person no hook output, only the agent's last message: the hand-over is refused
    once more with its line to end on, and the next stop of the turn checks the last message for it; a message
    without it gets the request once more, then the hand-over ends the turn anyway (noting it). A new turn
    drops a pending request (a new turn id, or a new prompt). Claude Code hands over at once where a person
    attends the session, and relays where it says nobody does."""
    repo = gated("codex")
    repo.write("app.py", broken())

    def stop(said: str, turn: str = "turn-1", host: str = "codex", **env: str) -> subprocess.CompletedProcess:
        return repo.hook("stop", host, env, stop_hook_active=True, last_assistant_message=said, turn_id=turn)

    assert stop("Fixed.").returncode == 2  # the check fails: a refusal
    relay = stop("Fixed.")  # nothing changed since: the hand-over, relayed
    assert relay.returncode == 2 and repo.runs() == 1
    request = answer(relay)["reason"]
    line = request.splitlines()[-1]
    assert "HANDED OVER UNVERIFIED" in line and "nothing changed since the last failed check" in line
    assert "request 1 of 2" in request
    status = repo.run("status")
    assert status.returncode == 1 and "unverified" in status.stdout, "the verdict is recorded before the request"
    again = stop("All done, everything passes.")  # the agent did not relay it: asked once more
    assert again.returncode == 2 and "request 2 of 2" in answer(again)["reason"] and repo.runs() == 1
    done = stop(f"I could not finish.\n{line}\nPlease look.")
    assert done.returncode == 0 and "HANDED OVER UNVERIFIED" in answer(done)["systemMessage"]
    assert "did not end with" not in answer(done)["systemMessage"]
    # two requests not honoured: the hand-over ends the turn and says so
    assert "request 1 of 2" in answer(stop("Fixed.", "turn-2"))["reason"]
    assert "request 2 of 2" in answer(stop("Still fine.", "turn-2"))["reason"]
    ended = stop("Really fine.", "turn-2")
    assert ended.returncode == 0 and "did not end with the hand-over's line" in answer(ended)["systemMessage"]
    # a request left pending by a turn that ended another way is dropped: the next turn's starts at 1 again
    assert "request 1 of 2" in answer(stop("Fixed.", "turn-3"))["reason"]
    assert "request 1 of 2" in answer(stop("Fixed.", "turn-4"))["reason"]
    assert repo.runs() == 1
    # Claude Code with a person there shows the systemMessage: no relay; `claude -p` (unattended) is relayed
    assert "HANDED OVER" in answer(stop("Fixed.", host="claude-code"))["systemMessage"]
    assert "request 1 of 2" in answer(stop("Fixed.", host="claude-code", CLAUDE_CODE_SESSION_ATTENDED="0"))["reason"]
    assert repo.hook("user-prompt", "claude-code", None, prompt="Now tidy the README.").returncode == 0
    assert "request 1 of 2" in answer(stop("Fixed.", host="claude-code", CLAUDE_CODE_SESSION_ATTENDED="0"))["reason"]


def test_codex_denies_a_protected_write_like_claude_code(repo):
    done = repo.hook("pre-tool-use", "codex", tool_name="Write",
                     tool_input={"file_path": str(repo.root / "tests/test_x.py"), "content": "def test(): pass\n"})
    spec = answer(done)["hookSpecificOutput"]
    assert (done.returncode, spec["hookEventName"], spec["permissionDecision"]) == (0, "PreToolUse", "deny")
    assert "tests/test_x.py is protected" in spec["permissionDecisionReason"]


def test_gemini_blocks_a_stop_with_exit_0_and_a_deny_decision(gated):
    repo = gated("gemini")
    repo.write("app.py", broken())
    done = repo.stop(active=False, host="gemini")
    assert done.returncode == 0
    out = answer(done)
    assert set(out) == {"decision", "reason"} and out["decision"] == "deny"
    assert "app.py:2: trailing whitespace" in out["reason"]


@pytest.mark.parametrize("target", ["tests/test_x.py", "verify.sh"])
def test_codex_denies_an_apply_patch_to_a_protected_file(repo, target):
    patch = (f"*** Begin Patch\n*** Update File: {repo.root / target}\n@@\n-    assert total == 2\n"
             "+    assert total == 3\n*** End Patch\n")
    done = repo.hook("pre-tool-use", "codex", tool_name="apply_patch", tool_input={"command": patch})
    assert decision_of(answer(done)) == "deny"


def test_gemini_before_tool_deny_is_a_decision_with_a_reason(repo):
    done = repo.hook("pre-tool-use", "gemini", tool_name="write_file",
                     tool_input={"file_path": "verify.sh", "content": "exit 0\n"})
    assert done.returncode == 0
    out = answer(done)
    assert set(out) == {"decision", "reason"} and out["decision"] == "deny"
    assert "verify.sh is protected" in out["reason"]


# -- the tool policy (PreToolUse), through run_hook ----------------------------------------------

def tool_call(repo: Repo, tool: str, host: str = "claude-code", env: dict | None = None, **tool_input) -> dict | None:
    payload = repo.payload("pre-tool-use", host, tool_name=tool, tool_input=tool_input, tool_use_id="toolu_01")
    got = run_hook("pre-tool-use", json.dumps(payload), host, env or {"DONEGATE_STATE_DIR": str(repo.state)})
    assert got.exit_code == 0 and got.stderr == ""
    return json.loads(got.stdout) if got.stdout else None


def decision_of(out: dict | None) -> str:
    """claude-code/codex: the permissionDecision; no output at all means the host decides ("none")."""
    return out["hookSpecificOutput"]["permissionDecision"] if out else "none"


@pytest.mark.parametrize("tool, tool_input", [
    ("Write", {"file_path": "tests/test_x.py", "content": "def test_x(): assert True\n"}),
    ("Edit", {"file_path": "tests/test_x.py", "old_string": "== 2", "new_string": "== 3"}),
    ("Write", {"file_path": "verify.sh", "content": "#!/bin/sh\nexit 0\n"}),
    ("Edit", {"file_path": "verify.sh", "old_string": "git diff --check", "new_string": "true"}),
    ("MultiEdit", {"file_path": "pkg/conftest.py", "edits": []}),
], ids=["write-test", "edit-test", "write-verify", "edit-verify", "conftest"])
def test_writes_to_protected_files_and_verify_sh_are_denied_with_a_reason(repo, tool, tool_input):
    absolute = {**tool_input, "file_path": str(repo.root / tool_input["file_path"])}
    out = tool_call(repo, tool, **absolute)
    spec = out["hookSpecificOutput"]
    assert spec["permissionDecision"] == "deny"
    assert f"{tool_input['file_path']} is protected" in spec["permissionDecisionReason"]


@pytest.mark.parametrize("command", ["git update-index --skip-worktree f", "git update-index --assume-unchanged app.py"])
def test_commands_that_hide_edits_from_git_are_denied(repo, command):
    out = tool_call(repo, "Bash", command=command)
    assert decision_of(out) == "deny"
    assert out["hookSpecificOutput"]["permissionDecisionReason"]


REWRITES = {"deleted": "rm verify.sh", "not-executable": "chmod -x verify.sh",
            "redirect": "printf '#!/bin/sh\\nexit 0\\n' > verify.sh",
            "interpreter": "python3 -c \"import pathlib; pathlib.Path('verify.sh').write_text('#!/bin/sh\\nexit 0\\n')\"",
            "moved-over": "printf '#!/bin/sh\\nexit 0\\n' > fake.sh && chmod +x fake.sh && mv fake.sh verify.sh"}


def restore_advice(reason: str) -> str:
    """The commands a disarmed stop tells the agent to run: the text in the parentheses after 'restore it'."""
    return reason.split("restore it (", 1)[1].split(")", 1)[0]


@pytest.mark.parametrize("how", sorted(REWRITES))
def test_a_check_the_session_changed_never_ends_verified_and_the_advice_to_restore_it_is_allowed(gated, how):
    """However the agent changes verify.sh (a shell redirect, an interpreter, a move over it, as well as rm and
    chmod), the stop compares the script with the session's start and refuses as disarmed, without running
    the agent's version; `status` never says verified and exits 1; the advice in the refusal passes the tool
    hook as one command, and once it has run, the operator's check decides again."""
    repo = gated()
    repo.write("app.py", broken())
    subprocess.run(REWRITES[how], shell=True, cwd=repo.root, check=True)
    done = repo.stop(active=False)
    assert done.returncode == 2, done.stdout + done.stderr
    reason = answer(done)["reason"]
    assert "verify.sh" in reason and "restore it" in reason, reason
    assert repo.runs() == 0, "the agent's version of the check must not run"
    status = repo.run("status")
    assert status.returncode == 1 and "verified" not in status.stdout.replace("unverified", ""), status.stdout
    advice = restore_advice(reason)
    assert decision_of(tool_call(repo, "Bash", command=advice)) == "none", advice
    subprocess.run(advice, shell=True, cwd=repo.root, check=True)
    done = repo.stop(active=True)
    assert done.returncode == 2 and "trailing whitespace" in done.stderr, done.stderr
    assert repo.runs() == 1, "the operator's check runs again once it is restored"
    repo.write("app.py", FIXED)
    assert repo.stop(active=True).returncode == 0
    assert repo.run("status").returncode == 0


def test_a_rewritten_check_spends_the_budget_and_hands_over_unverified_into_the_ledger(gated):
    repo = gated(DONEGATE_LEDGER="1")
    repo.write("app.py", broken())
    (repo.root / "verify.sh").write_text("#!/bin/sh\nexit 0\n")
    for attempt in (1, 2, 3):
        assert repo.stop(active=attempt > 1, DONEGATE_LEDGER="1").returncode == 2
        repo.write("app.py", broken(attempt + 1))
    done = repo.stop(active=True, DONEGATE_LEDGER="1")
    assert done.returncode == 0 and "without passing verification" in answer(done)["systemMessage"]
    (row,) = [json.loads(line) for line in (repo.state / "ledger.jsonl").read_text().splitlines()]
    assert "verify.sh" in " ".join(row["actual"]) and "changed in this session" in " ".join(row["actual"]), row
    assert repo.run("status").returncode == 1


def test_the_hand_over_after_a_refused_rewrite_of_the_check_names_it_and_says_no_check_ran(gated):
    """verify.sh rewritten, the stop refused as disarmed, then a stop with no new change: the hand-over says that
    no check ran and why (the rewritten verify.sh), not that the check failed and was not run again."""
    repo = gated()
    repo.write("app.py", broken())
    (repo.root / "verify.sh").write_text("#!/bin/sh\nexit 0\n")
    assert repo.stop().returncode == 2
    done = repo.stop(active=True)
    message = answer(done)["systemMessage"]
    assert done.returncode == 0 and "no check ran" in message and "verify.sh" in message, message
    assert "last failed check" not in message


def test_commit_no_verify_is_rewritten_to_run_the_commit_hooks(repo):
    out = tool_call(repo, "Bash", command="git commit --no-verify -m x", description="commit")
    spec = out["hookSpecificOutput"]
    assert "permissionDecision" not in spec  # an "allow" would skip the person's own permission prompt
    assert spec["updatedInput"] == {"command": "git commit -m x", "description": "commit"}
    assert "--no-verify" not in spec["updatedInput"]["command"]


@pytest.mark.parametrize("host", ["claude-code", "codex", "gemini"])
def test_an_ordinary_command_is_allowed_by_saying_nothing(repo, host):
    # an explicit "allow" would skip the person's permission prompt (Claude Code) or be rejected (Codex)
    assert tool_call(repo, "Bash", host, command="ls") is None


def test_re_arming_verify_sh_is_allowed(repo):
    assert decision_of(tool_call(repo, "Bash", command="chmod +x verify.sh")) == "none"
    assert decision_of(tool_call(repo, "Bash", command="git checkout -- verify.sh; chmod +x verify.sh")) == "none"


def test_reading_a_protected_file_is_allowed(repo):
    out = tool_call(repo, "Read", file_path=str(repo.root / "tests/test_x.py"))
    assert decision_of(out) == "none"


def test_protect_mode_off_allows_writes_to_tests(repo):
    env = {"DONEGATE_STATE_DIR": str(repo.state), "DONEGATE_PROTECT_MODE": "off"}
    out = tool_call(repo, "Write", env=env, file_path=str(repo.root / "tests/test_x.py"), content="x = 1\n")
    assert decision_of(out) == "none"


def test_tool_policy_names_the_file_relative_to_the_repository(repo):
    payload = {"cwd": str(repo.root / "sub"), "tool_name": "Write",
               "tool_input": {"file_path": "../tests/test_x.py", "content": ""}}
    (repo.root / "sub").mkdir()
    action, reason, updated = tool_policy(payload, Settings(state_dir=repo.state))
    assert (action, updated) == ("deny", None)
    assert reason.startswith("tests/test_x.py is protected")


def test_a_protected_write_is_denied_when_the_cwd_is_reached_through_a_symlink(repo, tmp_path):
    link = tmp_path / "link"
    link.symlink_to(repo.root)
    payload = {"cwd": str(link), "tool_name": "Write",
               "tool_input": {"file_path": str(link / "tests/test_x.py"), "content": ""}}
    assert tool_policy(payload, Settings(state_dir=repo.state))[0] == "deny"


def bash_policy(repo: Repo, command: str) -> tuple[str, str, dict | None]:
    payload = {"cwd": str(repo.root), "tool_name": "Bash", "tool_input": {"command": command}}
    return tool_policy(payload, Settings(state_dir=repo.state))


def test_commit_with_the_short_no_verify_flag_is_rewritten_too(repo):
    action, _, updated = bash_policy(repo, "git commit -n -m x")
    assert action == "allow" and updated == {"command": "git commit -m x"}


def test_the_n_flag_of_another_command_after_a_commit_is_left_alone(repo):
    assert bash_policy(repo, "git commit -m x && head -n 5 log.txt") == ("allow", "", None)


def test_the_no_verify_rewrite_keeps_a_multi_line_commit_message(repo):
    command = "git commit --no-verify -F - <<'EOF'\nfirst line\n\nbody\nEOF"
    _, _, updated = bash_policy(repo, command)
    assert updated["command"] == "git commit -F - <<'EOF'\nfirst line\n\nbody\nEOF"


# -- failing closed ----------------------------------------------------------------------------

BAD_INPUT = [("", "no hook input on stdin"), ("this is not JSON", "not JSON"),
             ('[{"hook_event_name": "Stop"}]', "one JSON object per call")]


@pytest.mark.parametrize("stdin, why", BAD_INPUT, ids=["empty", "not-json", "json-array"])
def test_unreadable_stop_input_blocks_and_says_why(repo, stdin, why):
    done = repo.run("hook", "stop", stdin=stdin)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    out = answer(done)
    assert out["decision"] == "block" and why in out["reason"] and "refuses rather than allow" in out["reason"]


def test_a_bad_setting_blocks_the_stop_and_names_it(gated):
    repo = gated()
    repo.write("app.py", FIXED)
    done = repo.stop(active=False, DONEGATE_MAX_BLOCKS="lots")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    out = answer(done)
    assert out["decision"] == "block" and "DONEGATE_MAX_BLOCKS='lots'" in out["reason"]


@pytest.mark.parametrize("stdin, why", BAD_INPUT, ids=["empty", "not-json", "json-array"])
def test_unreadable_tool_input_denies_and_says_why(repo, stdin, why):
    done = repo.run("hook", "pre-tool-use", stdin=stdin)
    assert done.returncode == 0
    assert "Traceback" not in done.stderr
    spec = answer(done)["hookSpecificOutput"]
    assert spec["permissionDecision"] == "deny" and why in spec["permissionDecisionReason"]


def test_a_bad_setting_denies_the_tool_call_and_names_it(repo):
    done = repo.hook("pre-tool-use", tool_name="Bash", tool_input={"command": "ls"},
                     env={"DONEGATE_PROTECT_MODE": "sometimes"})
    spec = answer(done)["hookSpecificOutput"]
    assert (done.returncode, spec["permissionDecision"]) == (0, "deny")
    assert "DONEGATE_PROTECT_MODE='sometimes'" in spec["permissionDecisionReason"]


def test_an_internal_error_blocks_the_stop(repo, monkeypatch):
    import donegate.realhosts as realhosts

    def broken_gate(*args, **kwargs):
        raise RuntimeError("the disk is on fire")

    monkeypatch.setattr(realhosts, "_gates", broken_gate)
    got = run_hook("stop", json.dumps(repo.payload("stop", stop_hook_active=False)),
                   env={"DONEGATE_STATE_DIR": str(repo.state)})
    assert got.exit_code == 2
    assert json.loads(got.stdout)["decision"] == "block"
    assert "RuntimeError: the disk is on fire" in got.stderr


def test_a_stop_whose_input_is_not_utf8_still_blocks(gated):
    repo = gated()
    repo.write("app.py", broken())
    payload = json.dumps(repo.payload("stop", stop_hook_active=False, last_assistant_message="Done \u00e9"))
    raw = payload.encode().replace("\\u00e9".encode(), b"\xe9")  # a Latin-1 byte where UTF-8 was due
    assert b"\xe9" in raw
    environment = {**os.environ, "DONEGATE_STATE_DIR": str(repo.state), "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run([str(DONEGATE), "hook", "stop"], cwd=repo.root, env=environment, input=raw,
                          capture_output=True, timeout=60)
    assert b"Traceback" not in done.stderr
    assert done.returncode == 2 and json.loads(done.stdout)["decision"] == "block"


def test_a_byte_that_is_not_utf8_in_a_field_is_read_and_the_stop_decided_on_the_tree(gated):
    """One Latin-1 byte in the agent's last message is not a reason to call the whole payload unreadable: the
    stop is decided as any other, on the tree (a right fix passes, its check run)."""
    repo = gated()
    repo.write("app.py", FIXED)
    payload = json.dumps(repo.payload("stop", stop_hook_active=False, last_assistant_message="Done \u00e9"))
    raw = payload.encode().replace("\\u00e9".encode(), b"\xe9")
    environment = {**os.environ, "DONEGATE_STATE_DIR": str(repo.state), "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run([str(DONEGATE), "hook", "stop"], cwd=repo.root, env=environment, input=raw,
                          capture_output=True, timeout=60)
    assert b"Traceback" not in done.stderr and b"not JSON" not in done.stdout + done.stderr
    assert done.returncode == 0


def test_a_payload_nested_past_the_parser_s_depth_is_a_refusal_within_the_budget(repo):
    """A payload nested 100,000 deep makes the JSON reader raise RecursionError: it is refused like any other
    unreadable input, counted against DONEGATE_MAX_BLOCKS, and handed over loudly once the budget is spent,
    never refused forever."""
    deep = '{"session_id": "deep", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    env = {"DONEGATE_STATE_DIR": str(repo.state), "DONEGATE_MAX_BLOCKS": "2"}
    answers = [run_hook("stop", deep, env=env) for _ in range(3)]
    assert [a.exit_code for a in answers[:2]] == [2, 2]
    assert all(json.loads(a.stdout)["decision"] == "block" for a in answers[:2])
    assert "RecursionError" in json.loads(answers[0].stdout)["reason"]
    assert answers[2].exit_code == 0 and "HANDED OVER UNVERIFIED" in answers[2].stdout


def test_a_stop_without_a_session_id_is_an_armed_session_whose_changes_are_checked(repo):
    """A stop payload with no session id, the state folder fresh: not a session met late whose changes are not its
    own, nor a baseline taken now. The gate does not know the session, so it is armed: the uncommitted change
    is checked, and a failing one refused."""
    assert repo.run("init").returncode == 0 and repo.run("install", "--host", "claude-code").returncode == 0
    repo.write("app.py", broken())
    payload = {k: v for k, v in repo.payload("stop", stop_hook_active=False, last_assistant_message=CLAIM).items()
               if k != "session_id"}
    done = repo.run("hook", "stop", stdin=json.dumps(payload))
    out = answer(done)
    assert done.returncode == 2 and out["decision"] == "block", done.stdout + done.stderr
    assert "not gated" not in out["reason"]


def test_a_check_with_crlf_line_endings_is_refused_naming_its_line_endings(repo):
    """verify.sh saved with Windows line endings cannot start ("/bin/sh\\r": no such file): the refusal says
    that, and how to mend it, rather than leave the operator to read "No such file or directory"."""
    assert repo.run("init").returncode == 0
    script = repo.root / "verify.sh"
    script.write_bytes(script.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    repo.commit("the operator's check, saved on Windows")
    assert repo.run("install", "--host", "claude-code").returncode == 0
    assert repo.start().returncode == 0
    repo.write("app.py", FIXED)
    done = repo.stop()
    assert done.returncode == 2
    assert "CRLF" in done.stderr and "verify.sh" in done.stderr and "LF line endings" in done.stderr, done.stderr


@pytest.mark.parametrize("how,said", [("cr", "old Mac (CR) line endings"), ("bom", "byte order mark")])
def test_a_check_whose_script_begins_oddly_is_refused_saying_how(repo, how, said):
    """Line endings of a carriage return alone make the whole script its first line (no interpreter by that name);
    a byte order mark hides the `#!` line, so sh runs the script, whatever it names, and its first line fails as a
    command. Either way the refusal names the cause and the mend, not only "No such file" or "not found"."""
    assert repo.run("init").returncode == 0
    script = repo.root / "verify.sh"
    text = script.read_bytes().replace(b"\r\n", b"\n")
    script.write_bytes(text.replace(b"\n", b"\r") if how == "cr" else b"\xef\xbb\xbf" + text)
    repo.commit("the operator's check, saved by another editor")
    assert repo.run("install", "--host", "claude-code").returncode == 0
    assert repo.start().returncode == 0
    repo.write("app.py", broken())
    done = repo.stop()
    assert done.returncode == 2 and said in done.stderr and "verify.sh" in done.stderr, done.stderr


def test_a_stop_outside_a_git_repository_is_allowed_and_says_nothing_was_gated(outside, tmp_path):
    payload = {"session_id": "s", "cwd": str(outside), "hook_event_name": "Stop", "stop_hook_active": False}
    done = donegate("hook", "stop", cwd=outside, state=tmp_path / "state", stdin=json.dumps(payload))
    assert done.returncode == 0
    assert "not in a git repository; nothing was gated" in answer(done)["systemMessage"]


@pytest.mark.parametrize("args, bad", [(["hook", "finish"], "'finish'"),
                                       (["hook", "stop", "--host", "cursor"], "'cursor'")])
def test_an_unknown_event_or_host_exits_2_naming_it(repo, args, bad):
    done = repo.run(*args, stdin="{}")
    assert done.returncode == 2
    assert bad in done.stderr and ("invalid choice" in done.stderr or "unknown" in done.stderr)
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("event, host, bad", [("finish", "claude-code", "unknown event 'finish'"),
                                              ("stop", "cursor", "unknown host 'cursor'")])
def test_run_hook_refuses_an_unknown_event_or_host(repo, event, host, bad):
    got = run_hook(event, json.dumps({"cwd": str(repo.root)}), host, env={"DONEGATE_STATE_DIR": str(repo.state)})
    assert got.exit_code == 2 and bad in got.stderr


# -- merge_hooks and hook_entries --------------------------------------------------------------

def test_merge_hooks_adds_one_entry_per_event_and_reports_each():
    merged, changes = merge_hooks({}, hook_entries("claude-code", "donegate"))
    assert sorted(merged["hooks"]) == ["PreToolUse", "SessionStart", "Stop", "StopFailure", "UserPromptSubmit"]
    assert all(len(entries) == 1 for entries in merged["hooks"].values())
    assert len(changes) == 5 and all(line.startswith("added ") for line in changes)


def test_merge_hooks_twice_changes_nothing():
    entries = hook_entries("claude-code", "/opt/bin/donegate")
    once, _ = merge_hooks({}, entries)
    twice, changes = merge_hooks(once, entries)
    assert (twice, changes) == (once, [])


def test_merge_hooks_keeps_other_hooks_first_and_does_not_change_its_input():
    theirs = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}, "model": "x"}
    snapshot = json.dumps(theirs, sort_keys=True)
    merged, _ = merge_hooks(theirs, hook_entries("claude-code", "donegate"))
    assert merged["model"] == "x"
    assert [e["hooks"][0]["command"] for e in merged["hooks"]["Stop"]] == \
        ["say done", "donegate hook stop --host claude-code"]
    assert json.dumps(theirs, sort_keys=True) == snapshot


@pytest.mark.parametrize("settings", [{"hooks": []}, {"hooks": {"Stop": {"not": "a list"}}}])
def test_merge_hooks_refuses_a_hooks_entry_of_the_wrong_shape(settings):
    with pytest.raises(GateError):
        merge_hooks(settings, hook_entries("claude-code", "donegate"))


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_the_stop_hook_outlasts_the_default_check_budget(host):
    # seconds on these hosts; their default (60 s) would kill a check that may run 180 s
    assert hook_entries(host, "donegate")["Stop"][0]["hooks"][0]["timeout"] > Settings().verify_timeout


def test_the_gemini_stop_hook_outlasts_the_default_check_budget():
    milliseconds = hook_entries("gemini", "donegate")["AfterAgent"][0]["hooks"][0].get("timeout", 60_000)
    assert milliseconds > Settings().verify_timeout * 1000


def test_gemini_hooks_use_gemini_event_names():
    entries = hook_entries("gemini", "donegate")
    assert set(entries) == {"SessionStart", "BeforeAgent", "AfterAgent", "BeforeTool"}
    assert entries["AfterAgent"][0]["hooks"][0]["command"] == "donegate hook stop --host gemini"


# -- the plugins (appendix 91; tests/test_plugins.py has the rest) --------------------------------------------------------------------

def test_plugin_writes_a_manifest_and_hooks_calling_this_donegate(repo, tmp_path):
    folder = tmp_path / "plugin"
    done = repo.run("install", "--host", "claude-code", "--plugin", str(folder))
    assert done.returncode == 0, done.stdout
    manifest = json.loads((folder / ".claude-plugin/plugin.json").read_text())
    assert manifest["name"] == "donegate"
    hooks = json.loads((folder / "hooks/hooks.json").read_text())["hooks"]
    assert [h["command"] for e in hooks["Stop"] for h in e["hooks"]] == [f"{EXE} hook stop --host claude-code"]
    assert not (repo.root / ".claude").exists()


def test_plugin_for_a_host_without_a_plugin_format_exits_2(repo, tmp_path):
    done = repo.run("install", "--host", "qwen", "--plugin", str(tmp_path / "plugin"))
    assert done.returncode == 2
    assert "claude-code, codex, gemini" in done.stdout
    assert not (tmp_path / "plugin").exists()


# -- doctor ------------------------------------------------------------------------------------

def test_doctor_in_a_fresh_repository_names_the_missing_check(repo):
    done = repo.run("doctor")
    assert done.returncode == 1
    assert "MISSING" in done.stdout and "verify.sh" in done.stdout


def test_doctor_after_setup_says_a_stop_would_run_the_check_on_the_changed_path(gated):
    repo = gated()
    repo.write("app.py", broken())
    done = repo.run("doctor")
    assert done.returncode == 0, done.stdout
    assert "hooks        claude-code  installed" in done.stdout
    assert "run the check on 1 changed path(s): app.py" in done.stdout


def test_doctor_does_not_call_a_symlinked_verify_sh_a_check_because_the_gate_does_not(repo):
    repo.write("checks/verify.sh", "#!/bin/sh\nexit 0\n")
    repo.path("checks/verify.sh").chmod(0o755)
    os.symlink("checks/verify.sh", repo.root / "verify.sh")
    done = repo.run("doctor")
    assert done.returncode == 1 and "check        MISSING" in done.stdout


def test_doctor_says_a_passed_state_runs_again_under_another_check_command(gated):
    repo = gated()
    repo.write("app.py", FIXED)
    assert repo.stop(active=False).returncode == 0
    assert "already passed ./verify.sh" in repo.run("doctor").stdout
    done = repo.run("doctor", DONEGATE_VERIFY_COMMAND="false")
    assert "a stop now   run the check on 1 changed path(s): app.py" in done.stdout


def test_doctor_reports_a_damaged_state_file_instead_of_crashing(gated):
    repo = gated()
    [state_file] = (repo.state / "sessions").glob("*.json")
    state_file.write_text('{"session": "session-1", "baseline"')
    done = repo.run("doctor")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"PROBLEM: the state file {state_file} cannot be used" in done.stdout


@pytest.mark.parametrize("settings", [{"core.checkStat": "minimal"}, {"core.trustctime": "no"}, {"core.ignoreStat": "on"}])
def test_doctor_notes_a_repository_whose_git_compares_stat_data_loosely(gated, settings):
    """With these settings git trusts a file whose size and mtime it remembers, however its content changed; the
    gate then compares every tracked file itself, and doctor says so. Without them it says nothing of it."""
    repo = gated("claude-code")
    assert "git          NOTE" not in repo.run("doctor").stdout
    for key, value in settings.items():
        repo.git("config", key, value)
    done = repo.run("doctor")
    assert "git          NOTE" in done.stdout and key.lower() in done.stdout, done.stdout


@pytest.mark.parametrize("laundered", [False, True])
def test_an_edit_that_keeps_size_and_mtime_is_seen_where_git_compares_stat_data_loosely(repo, laundered):
    """An earlier session left core.checkStat=minimal and core.trustctime=false in the repository's config. This one
    edits app.py, keeps its size, sets its mtime back and (or not) runs git status, which then records the edited
    file's stat data as clean: git lists nothing. The gate compares every tracked file by what it holds there: the
    check runs; after a pass, the same trick is seen by `status`."""
    assert repo.run("init").returncode == 0
    repo.count_runs()
    assert repo.run("install", "--host", "claude-code").returncode == 0
    repo.git("config", "core.checkStat", "minimal")
    repo.git("config", "core.trustctime", "false")
    past = os.stat(repo.root / "app.py").st_mtime_ns - 10**12  # older than the index: git's stat data are trusted
    os.utime(repo.root / "app.py", ns=(past, past))
    repo.git("status")
    assert repo.start().returncode == 0

    def edit(text: str) -> None:
        before = os.stat(repo.root / "app.py")
        repo.write("app.py", text)
        os.utime(repo.root / "app.py", ns=(before.st_atime_ns, before.st_mtime_ns))
        if laundered:
            repo.git("status")  # the agent's own git records the edited file's stat data as clean

    edit(ORIGINAL.replace("ok", "no"))  # the same size
    if laundered:
        assert "app.py" not in repo.git("status", "--porcelain")  # git's own view: nothing changed
    done = repo.stop()
    assert repo.runs() == 1 and "nothing changed" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert repo.run("status").returncode == 0  # the check passed on this tree
    edit(ORIGINAL.replace("ok", "ko"))
    assert repo.run("status").returncode == 1
    repo.stop()  # not the quick path's replay of the pass: the gate looks, and the check runs again
    assert repo.runs() == 2


def test_doctor_outside_a_repository_exits_1(outside, tmp_path):
    done = donegate("doctor", cwd=outside, state=tmp_path / "state")
    assert done.returncode == 1
    assert "NOT a git repository" in done.stdout


# -- ledger ------------------------------------------------------------------------------------

def test_ledger_without_rows_says_how_to_turn_it_on(repo):
    done = repo.run("ledger")
    assert done.returncode == 0
    assert "DONEGATE_LEDGER=1" in done.stdout


def test_ledger_counts_one_caught_false_completion_for_the_repository(gated):
    repo = gated(DONEGATE_LEDGER="1")
    repo.write("app.py", broken())
    assert repo.stop(active=False, DONEGATE_LEDGER="1").returncode == 2
    done = repo.run("ledger")
    assert done.returncode == 0
    assert "1 false completion(s) caught" in done.stdout
    assert f"     1  {repo.root.resolve()}" in done.stdout.splitlines()
    assert CLAIM[:40] in done.stdout


@pytest.mark.parametrize("host, settings_file", sorted(SETTINGS_FILES.items()))
def test_the_agent_may_not_edit_the_file_that_installs_the_hooks(repo, host, settings_file):
    verdict = tool_policy({"tool_name": "Write", "cwd": str(repo.root),
                           "tool_input": {"file_path": settings_file, "content": "{}"}}, Settings(state_dir=repo.state))
    assert verdict[0] == "deny" and settings_file in verdict[1]


@pytest.mark.parametrize("mode", ["pristine", "off"])
def test_the_protect_mode_frees_tests_only_never_the_check_or_the_hook_settings(repo, mode):
    settings = Settings(state_dir=repo.state, protect_mode=mode)

    def decide(name):
        return tool_policy({"tool_name": "Write", "cwd": str(repo.root),
                            "tool_input": {"file_path": name, "content": "x\n"}}, settings)[0]

    assert decide("tests/test_x.py") == "allow"
    assert decide("verify.sh") == "deny"
    assert decide(".claude/settings.json") == "deny"


@pytest.mark.parametrize("tool", ["Read", "Grep", "read", "list"])
def test_reading_a_protected_file_is_not_refused(repo, tool):
    verdict = tool_policy({"tool_name": tool, "cwd": str(repo.root),
                           "tool_input": {"file_path": "tests/test_x.py", "path": "tests"}}, Settings(state_dir=repo.state))
    assert verdict[0] == "allow"


def test_a_new_test_file_may_be_written_but_not_a_new_conftest(repo):
    def decide(name):
        return tool_policy({"tool_name": "Write", "cwd": str(repo.root),
                            "tool_input": {"file_path": name, "content": "def test_more(): pass\n"}},
                           Settings(state_dir=repo.state))[0]
    assert decide("tests/test_new.py") == "allow"        # adding tests is work, as for the stop gate
    assert decide("tests/test_x.py") == "deny"           # an existing test is the operator's
    assert decide("tests/conftest.py") == "deny"         # a conftest changes how every test runs


# -- installed is not running: trust, committed settings, PATH, stops seen ------------------------

def codex_config(home: Path) -> dict:
    import tomllib
    return tomllib.loads((home / ".codex" / "config.toml").read_text())


def test_install_for_codex_without_trust_says_the_hooks_will_not_run(repo, tmp_path):
    done = repo.run("install", "--host", "codex", HOME=str(tmp_path / "home"))
    assert done.returncode == 0
    assert "NOT active yet: Codex does not trust the project" in done.stdout and "--trust" in done.stdout
    doctor = repo.run("doctor", HOME=str(tmp_path / "home"))
    assert doctor.returncode == 1 and "codex        installed but NOT active" in doctor.stdout


def test_install_trust_records_the_codex_project_and_every_hook_hash(repo, tmp_path):
    home = tmp_path / "home"
    done = repo.run("install", "--host", "codex", "--trust", HOME=str(home))
    assert done.returncode == 0 and "NOT active" not in done.stdout, done.stdout
    config = codex_config(home)
    assert config["projects"][str(repo.root)]["trust_level"] == "trusted"
    hooks = json.loads(repo.read(".codex/hooks.json"))
    state = config["hooks"]["state"]
    assert {k: v["trusted_hash"] for k, v in state.items()} == dict(codex_hook_keys(repo.root, hooks))
    assert sorted(k.rsplit(":", 3)[1] for k in state) == ["pre_tool_use", "session_start", "stop", "user_prompt_submit"]
    assert "codex        installed and active" in repo.run("doctor", HOME=str(home)).stdout
    assert repo.run("install", "--host", "codex", "--trust", HOME=str(home)).stdout.count("trusted") == 0


def test_a_changed_codex_hook_loses_its_trust_and_doctor_says_so(repo, tmp_path):
    home = tmp_path / "home"
    repo.run("install", "--host", "codex", "--trust", HOME=str(home))
    path = repo.root / ".codex" / "hooks.json"
    path.write_text(path.read_text().replace('"donegate hook stop', '"env donegate hook stop'))
    doctor = repo.run("doctor", HOME=str(home))
    assert "installed but NOT active" in doctor.stdout and "1 hook(s) are not trusted as written now (stop)" in doctor.stdout


def test_codex_hook_hash_is_the_one_codex_computes():
    """The value the real Codex CLI 0.171.0 lists as currentHash for this hook (tests/hosts/test_codex.py checks
    the function against the live CLI for every installed hook)."""
    hook = {"type": "command", "command": "donegate hook stop --host codex", "timeout": 600}
    assert codex_hook_hash("Stop", None, hook) == codex_hook_hash("Stop", "ignored for Stop", hook)
    assert codex_hook_hash("PreToolUse", "Bash", hook) != codex_hook_hash("PreToolUse", "Bash|apply_patch", hook)
    assert codex_hook_hash("Stop", None, {**hook, "timeout": 601}) != codex_hook_hash("Stop", None, hook)
    identity = ('{"event_name":"stop","hooks":[{"async":false,"command":"donegate hook stop --host codex",'
                '"timeout":600,"type":"command"}]}')
    assert codex_hook_hash("Stop", None, hook) == "sha256:" + hashlib.sha256(identity.encode()).hexdigest()


def test_install_trust_refuses_a_project_the_person_set_untrusted(repo, tmp_path):
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    text = f'[projects."{repo.root}"]\ntrust_level = "untrusted"\n'
    (home / ".codex" / "config.toml").write_text(text)
    done = repo.run("install", "--host", "codex", "--trust", HOME=str(home))
    assert done.returncode == 2 and "untrusted" in done.stdout
    assert (home / ".codex" / "config.toml").read_text() == text


def test_install_trust_records_the_gemini_folder(repo, tmp_path):
    home = tmp_path / "home"
    assert "NOT active yet: Gemini does not trust" in repo.run("install", "--host", "gemini", HOME=str(home)).stdout
    repo.run("install", "--host", "gemini", "--trust", HOME=str(home))
    rules = json.loads((home / ".gemini" / "trustedFolders.json").read_text())
    assert rules == {str(repo.root): "TRUST_FOLDER"}
    assert "gemini       installed and active" in repo.run("doctor", HOME=str(home)).stdout
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({**rules, str(repo.root): "DO_NOT_TRUST"}))
    assert "gemini       installed but NOT active" in repo.run("doctor", HOME=str(home)).stdout


def test_doctor_says_worktree_sessions_need_the_settings_committed(repo):
    repo.run("install", "--host", "claude-code")
    assert "NOT active in worktree sessions (claude -w)" in repo.run("doctor").stdout
    repo.commit("install the gate")
    doctor = repo.run("doctor").stdout
    assert "claude-code  installed and active (.claude/settings.json)\n" in doctor and "worktree sessions" not in doctor


def test_doctor_says_broken_when_donegate_is_not_on_path(repo):
    repo.run("install", "--host", "claude-code")
    bare = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "donegate").exists())
    doctor = repo.run("doctor", PATH=bare)
    assert doctor.returncode == 1 and "BROKEN" in doctor.stdout and "`donegate` is not on PATH" in doctor.stdout


def test_doctor_counts_the_stops_the_gate_answered_here(gated):
    repo = gated()
    assert "stops seen   0" in repo.run("doctor").stdout
    repo.stop()
    repo.stop(active=True)
    assert "stops seen   2" in repo.run("doctor").stdout


def test_doctor_says_a_stop_after_a_failure_with_no_new_change_hands_over_at_once(gated):
    repo = gated()
    repo.write("app.py", broken(1))
    assert repo.stop().returncode == 2
    assert "hand over at once, nothing changed since the last failed check" in repo.run("doctor").stdout
    repo.write("app.py", broken(2))
    assert "run the check on 1 changed path(s)" in repo.run("doctor").stdout



# -- the claim and the ledger in either row form ----------------------------------------------------

def test_the_claim_falls_back_to_the_transcripts_last_assistant_message(gated, tmp_path):
    repo = gated(DONEGATE_LEDGER="1")
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text("\n".join(json.dumps(r) for r in [
        {"type": "user", "message": {"role": "user", "content": "fix it"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "Done, all green."}]}},
        {"type": "system", "subtype": "stop_hook_summary"}]) + "\n")
    repo.write("app.py", broken(1))
    payload = repo.payload("stop", stop_hook_active=False, transcript_path=str(transcript))
    assert repo.run("hook", "stop", stdin=json.dumps(payload), DONEGATE_LEDGER="1").returncode == 2
    (row,) = [json.loads(l) for l in (repo.state / "ledger.jsonl").read_text().splitlines()]
    assert row["claim"] == "Done, all green."


def test_ledger_reads_rows_in_either_form(repo, tmp_path):
    ledger = tmp_path / "rows"
    ledger.mkdir()
    rows = [{"ts": "2026-12-01T00:00:00Z", "repo": "/r", "exit_code": 1, "claim": "done",
             "evidence_demanded": "./verify.sh", "actual": ["FAILED tests/test_a.py::test_a", "1 failed"]},
            {"ts": "2026-12-01T00:00:01Z", "repo": "/r", "exit_code": 1, "claim": "done",
             "evidence_demanded": "./verify.sh", "actual": "FAIL: one string"}]
    (ledger / "ledger.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = repo.run("ledger", DONEGATE_LEDGER_DIR=str(ledger))
    assert done.returncode == 0 and "2 false completion(s)" in done.stdout
    assert "FAILED tests/test_a.py::test_a; 1 failed" in done.stdout and "FAIL: one string" in done.stdout


# -- the gate's own errors refuse at most like a failed check ---------------------------------------

@pytest.mark.parametrize("setting", [{"DONEGATE_MAX_BLOCKS": "abc"}, {"DONEGATE_VERIFY_TIMEOUT": "0"}])
def test_a_bad_setting_refuses_three_stops_then_hands_over_naming_it(gated, setting):
    repo = gated()
    repo.write("app.py", broken(1))
    exits = [repo.stop(active=n > 0, **setting) for n in range(5)]
    assert [d.returncode for d in exits] == [2, 2, 2, 0, 0]
    said = answer(exits[3])["systemMessage"]
    assert "HANDED OVER UNVERIFIED" in said and next(iter(setting)) in said
    assert "attempt 1 of 3" in exits[0].stderr and "the operator can" in exits[0].stderr


def test_the_error_count_lives_in_the_configured_state_folder_and_a_decided_stop_clears_it(gated):
    repo = gated()
    repo.write("app.py", broken(1))
    bad = {"DONEGATE_VERIFY_TIMEOUT": "abc"}
    assert [repo.stop(active=True, **bad).returncode for _ in range(4)] == [2, 2, 2, 0]
    assert [p.parent.name for p in repo.state.rglob("*.json") if "errors" in p.parts] == ["errors"]
    assert repo.stop(active=True).returncode == 2  # decided: the check fails on the broken edit
    assert not list((repo.state / "errors").glob("*.json"))
    again = repo.stop(active=True, **bad)
    assert again.returncode == 2 and "attempt 1 of 3" in again.stderr


def test_a_repository_the_session_s_shell_went_into_is_gated_at_the_stop(gated, make_repo):
    """`cd ../b && <edit>` from the session's repository names no file: the next call, or the stop,
    comes from b's folder, and b is gated from then on with a late baseline (clean at its HEAD)."""
    a = gated()
    b = make_repo("b")
    assert b.run("init").returncode == 0
    b.count_runs()
    b.commit("the check")
    shell = {"command": "cd ../b && printf 'x = 1   \\n' >> app.py"}
    assert a.hook("pre-tool-use", tool_name="Bash", tool_input=shell).returncode == 0
    b.write("app.py", broken())
    done = a.hook("stop", cwd=str(b.root), stop_hook_active=False, last_assistant_message=CLAIM)
    assert done.returncode == 2 and (a.runs(), b.runs()) == (0, 1), done.stdout
    done = a.stop(active=True)  # back in a's folder: b is still the session's
    assert done.returncode == 0 and "nothing changed since the last failed check" in answer(done)["systemMessage"]
    b.write("app.py", FIXED)
    done = a.stop(active=False)
    assert (done.returncode, b.runs()) == (0, 2)


def test_a_damaged_state_file_is_no_state_and_the_check_judges_the_tree(gated):
    """A state file that does not parse (or whose seal does not match) is not the gate's word: the stop reads it
    as no state, unvouched, and runs the check on the tree, which refuses the broken change; a later stop with
    nothing new hands over, saying why."""
    repo = gated()
    repo.git("add", "verify.sh")
    repo.commit("the operator's check")
    (state,) = (repo.state / "sessions").glob("*.json")
    state.write_text("{ not json")
    repo.write("app.py", broken(1))
    first = repo.stop(active=True)
    assert first.returncode == 2 and "attempt 1 of 3" in first.stderr and repo.runs() == 1
    again = repo.stop(active=True)
    assert again.returncode == 0 and "HANDED OVER UNVERIFIED" in again.stdout
    status = repo.run("status")
    assert status.returncode == 1 and "changed outside the gate" in status.stdout


def test_a_lost_state_with_an_uncommitted_check_is_refused_as_undecidable(gated):
    """`donegate init` leaves verify.sh uncommitted; with the state lost, the gate cannot tell the operator's
    check from one the agent wrote, so it refuses and says a person settles it, running nothing."""
    repo = gated()
    (state,) = (repo.state / "sessions").glob("*.json")
    state.write_text("{ not json")
    first = repo.stop(active=True)
    assert first.returncode == 2 and "cannot tell whether the check is the operator's" in first.stderr
    assert repo.runs() == 0


# -- the hooks' own settings ---------------------------------------------------------------------

STRIPS = {"stash": "git commit -qam fix && git stash -u -q", "clean": "git commit -qam fix && git clean -fdq",
          "deleted": "rm .claude/settings.json", "emptied": "printf '{}' > .claude/settings.json"}


@pytest.mark.parametrize("how", sorted(STRIPS))
def test_stripping_the_hook_settings_is_a_disarmed_stop_that_status_and_doctor_report(repo, how):
    """The operator committed verify.sh; install wrote .claude/settings.json, uncommitted. Whatever removes the
    gate's hooks from it (a stash or clean that takes untracked files, rm, a rewrite), the fix passing does not
    end the turn verified: the stop is refused as disarmed, `status` says the hooks are gone and exits 1, and
    `doctor` says they are not installed. `donegate install` puts them back, and the next stop passes."""
    assert repo.run("init").returncode == 0
    repo.count_runs()
    repo.git("add", "verify.sh")
    repo.commit("the operator's check")
    assert repo.run("install", "--host", "claude-code").returncode == 0
    assert repo.start().returncode == 0
    repo.write("app.py", FIXED)
    subprocess.run(STRIPS[how], shell=True, cwd=repo.root, check=True)
    done = repo.stop(active=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "hooks in .claude/settings.json" in answer(done)["reason"] and repo.runs() == 0
    status = repo.run("status")
    assert status.returncode == 1 and "hooks in .claude/settings.json are gone" in status.stdout, status.stdout
    doctor = repo.run("doctor")
    assert "claude-code  not installed" in doctor.stdout and "hooks gone   .claude/settings.json" in doctor.stdout
    assert doctor.returncode == 1
    assert repo.run("install", "--host", "claude-code").returncode == 0
    assert "hooks gone" not in repo.run("doctor").stdout
    assert repo.stop(active=True).returncode == 0 and repo.runs() == 1
    assert repo.run("status").returncode == 0


# -- what arms the gate, fixed at the start ---------------------------------------------------------

ARMING_EDITS = {
    "switch": (".claude/settings.json", lambda old: {**old, "disableAllHooks": True}),
    "gemini-switch": (".gemini/settings.json", lambda old: {**old, "hooksConfig": {"enabled": False}}),
    "local-env": (".claude/settings.local.json", lambda old: {**old, "env": {"DONEGATE_VERIFY_COMMAND": "true"}}),
    **{f"layer:{rel}": (rel, lambda old: {**old, "anything": 1}) for rel in
       (".codex/hooks.json", ".qwen/settings.json", ".github/hooks/other.json")},
}


@pytest.mark.parametrize("edit", sorted(ARMING_EDITS))
def test_a_change_to_a_layer_that_arms_the_gate_is_a_disarmed_stop_that_status_reports(gated, edit):
    """The gate's hook entries untouched, a layer beside them changed in the session: a switch that turns hooks off,
    a local settings file giving the hooks another check, another host's settings. The right fix does not end the
    turn verified: the stop is refused as disarmed, naming the file, and `status` exits 1."""
    repo = gated()
    rel, change = ARMING_EDITS[edit]
    path = repo.root / rel
    old = json.loads(path.read_text()) if path.exists() else {}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(change(old)))
    repo.write("app.py", FIXED)
    done = repo.stop()
    assert done.returncode == 2 and "settings that arm the gate" in answer(done)["reason"], done.stdout + done.stderr
    assert rel in answer(done)["reason"]
    status = repo.run("status")
    assert status.returncode == 1 and rel in status.stdout
    doctor = repo.run("doctor")
    assert doctor.returncode == 1 and "arming moved" in doctor.stdout and rel in doctor.stdout, doctor.stdout


def test_a_check_a_settings_file_gives_the_hooks_is_not_the_operator_s(repo):
    """An earlier session left .claude/settings.local.json giving the hooks DONEGATE_VERIFY_COMMAND=true, and the
    host passes it on (as Claude Code does a settings file's `env`): the gate does not take a file the agent can
    write for the operator's word. It runs verify.sh, and the inherited wrong fix is refused."""
    assert repo.run("init").returncode == 0
    assert repo.run("install", "--host", "claude-code").returncode == 0
    (repo.root / ".claude" / "settings.local.json").write_text(json.dumps({"env": {"DONEGATE_VERIFY_COMMAND": "true"}}))
    assert repo.start(DONEGATE_VERIFY_COMMAND="true").returncode == 0
    repo.write("app.py", broken())
    done = repo.stop(DONEGATE_VERIFY_COMMAND="true")
    assert done.returncode == 2 and "trailing whitespace" in done.stderr, done.stdout + done.stderr
    exported = repo.stop(active=True, DONEGATE_VERIFY_COMMAND="exit 0")  # the operator's own export is theirs
    assert exported.returncode == 0, exported.stdout + exported.stderr


def test_what_a_host_writes_as_the_person_answers_a_prompt_does_not_disarm(gated):
    """Claude Code writes an allowed command into .claude/settings.local.json when the person says "yes, and do
    not ask again": that switches no hook, and the stop is decided on the work."""
    repo = gated()
    (repo.root / ".claude" / "settings.local.json").write_text(json.dumps({"permissions": {"allow": ["Bash(ls)"]}}))
    repo.write("app.py", FIXED)
    assert repo.stop().returncode == 0


@pytest.mark.parametrize("where", [".claude/settings.local.json", ".gemini/settings.json", "~/.claude/settings.json",
                                   "~/.codex/config.toml", "~/.copilot/config.json"])
def test_the_agent_s_own_writes_to_a_layer_that_arms_the_gate_are_refused(repo, tmp_path, where):
    """The tool hook refuses a file edit to any settings layer that arms the gate, the project's or the user's,
    through the quick path and the gate alike (the user's home is a stand-in here)."""
    home = tmp_path / "home"
    home.mkdir()
    full = str(home / where[2:]) if where.startswith("~/") else str(repo.root / where)
    payload = repo.payload("pre-tool-use", tool_name="Write", tool_input={"file_path": full, "content": "{}"},
                           tool_use_id="toolu_01")
    done = repo.run("hook", "pre-tool-use", stdin=json.dumps(payload), HOME=str(home))
    spec = answer(done)["hookSpecificOutput"]
    why = spec["permissionDecisionReason"]
    assert spec["permissionDecision"] == "deny" and ("arms the gate" in why or "installs the hooks" in why), why


# Layers beyond each host's project file: new files in the repository, the user's folder (HOME is a stand-in), a
# folder a host's variable moves the user's or the machine's layers to ("@/" is outside both), the machine's.
MORE_LAYERS = {
    "copilot-repo-settings": ({}, ".github/copilot/settings.json", '{"disableAllHooks": true}'),
    "gemini-dotenv": ({}, ".gemini/.env", "BASH_ENV=/tmp/elsewhere.sh\n"),
    "copilot-user-hooks": ({}, "~/.copilot/hooks/more.json", '{"version": 1, "hooks": {}}'),
    "gemini-untrusted": ({}, "~/.gemini/trustedFolders.json", '{"/": "DO_NOT_TRUST"}'),
    "gemini-extension": ({}, "~/.gemini/extensions/more/hooks/hooks.json", '{"hooks": {}}'),
    "home-dotenv": ({}, "~/.env", "NODE_OPTIONS=--require=/tmp/elsewhere.js\n"),
    "claude-config-dir": ({"CLAUDE_CONFIG_DIR": "@/claude"}, "@/claude/settings.json", '{"disableAllHooks": true}'),
    "codex-home": ({"CODEX_HOME": "@/codex"}, "@/codex/config.toml", "[features]\nhooks = false\n"),
    "copilot-home": ({"COPILOT_HOME": "@/copilot"}, "@/copilot/settings.json", '{"disableAllHooks": true}'),
    "qwen-home": ({"QWEN_HOME": "@/qwen"}, "@/qwen/extensions/more/qwen-extension.json", '{"name": "more"}'),
    "gemini-system-defaults": ({"GEMINI_CLI_SYSTEM_SETTINGS_PATH": "@/etc/settings.json"},
                               "@/etc/system-defaults.json", '{"hooksConfig": {"enabled": false}}'),
    "qwen-system": ({"QWEN_CODE_SYSTEM_SETTINGS_PATH": "@/etc/qwen.json"}, "@/etc/qwen.json", '{"disableAllHooks": true}'),
    "claude-plugin": ({}, "~/.claude/plugins/cache/market/more/1.0.0/hooks/hooks.json", '{"hooks": {}}'),
    "claude-installed-plugins": ({}, "~/.claude/plugins/installed_plugins.json", '{"version": 2, "plugins": {}}'),
    "codex-plugin": ({"CODEX_HOME": "@/codex"}, "@/codex/plugins/cache/market/more/1.0.0/.codex-plugin/plugin.json",
                     '{"name": "more", "hooks": "./more.json"}'),
    "copilot-plugin": ({}, "~/.copilot/installed-plugins/_direct/more/hooks.json", '{"version": 1, "hooks": {}}'),
}


@pytest.mark.parametrize("case", sorted(MORE_LAYERS))
def test_every_layer_a_host_reads_arms_the_gate_where_the_host_reads_it(gated, tmp_path, case):
    """A layer beyond the project's settings files changed in the session: a repository's Copilot settings, a
    .env Gemini CLI loads into its hooks' environment, a user hook file, a folder marked untrusted, a new extension,
    a user folder or machine settings file moved by the host's own variable (read from the environment the hook
    runs in). The stop is refused as disarmed, naming the file; and `status`, run in a shell without the
    variable, reads the layers where the session's start read them and exits 1."""
    moved, where, text = MORE_LAYERS[case]
    home, outside = tmp_path / "home", tmp_path / "outside"
    env = {"HOME": str(home), **{k: v.replace("@", str(outside)) for k, v in moved.items()}}
    repo = gated(**env)
    path = home / where[2:] if where.startswith("~/") else Path(where.replace("@", str(outside))) \
        if where.startswith("@/") else repo.root / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    repo.write("app.py", FIXED)
    done = repo.stop(**env)
    name = where if not where.startswith("@/") else str(path)
    assert done.returncode == 2 and "settings that arm the gate" in answer(done)["reason"], done.stdout + done.stderr
    assert name in answer(done)["reason"], answer(done)["reason"]
    status = repo.run("status", HOME=str(home))
    assert status.returncode == 1 and name in status.stdout, status.stdout


@pytest.mark.parametrize("plugin", ["~/.claude/plugins/cache/donegate/donegate/0.1.0/hooks/hooks.json",
                                    "~/.codex/plugins/cache/donegate/donegate/0.1.0/hooks/hooks.json"])
def test_an_installed_plugin_s_hooks_changed_in_the_session_disarm(gated, tmp_path, plugin):
    """The gate installed as a plugin: the copy the host runs it from is a layer too. Its Stop entry taken out
    in the session (the host would run no gate next time) refuses the stop as disarmed, naming the file."""
    home = tmp_path / "home"
    hooks = home / plugin[2:]
    hooks.parent.mkdir(parents=True)
    hooks.write_text('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "donegate hook stop"}]}]}}')
    repo = gated(HOME=str(home))
    hooks.write_text('{"hooks": {}}')
    repo.write("app.py", FIXED)
    done = repo.stop(HOME=str(home))
    assert done.returncode == 2 and "settings that arm the gate" in answer(done)["reason"], done.stdout + done.stderr
    assert plugin in answer(done)["reason"], answer(done)["reason"]


def test_a_moved_layer_left_as_it_was_does_not_disarm_even_where_status_runs_without_the_variable(gated, tmp_path):
    """The user's Claude Code settings live where CLAUDE_CONFIG_DIR says, and nothing there changes: the right fix
    is verified, and `status` in a shell without the variable agrees (it reads where the start read)."""
    config = tmp_path / "claude"
    config.mkdir()
    (config / "settings.json").write_text('{"env": {"SOMETHING": "1"}}')
    repo = gated(CLAUDE_CONFIG_DIR=str(config))
    repo.write("app.py", FIXED)
    assert repo.stop(CLAUDE_CONFIG_DIR=str(config)).returncode == 0
    status = repo.run("status")
    assert status.returncode == 0, status.stdout


@pytest.mark.parametrize("where", ["@/claude/settings.json", "@/copilot/hooks/new.json", ".github/hooks/new.json",
                                   "~/.gemini/extensions/new/hooks/hooks.json", "@/etc/settings.json"])
def test_the_agent_s_own_writes_to_a_moved_or_new_layer_are_refused(repo, tmp_path, where):
    """The tool hook refuses a file tool's write to a layer where the host's variable moved it (outside any dot
    folder, so the quick path hands it to the gate), and a new file in a layer's folder (a hook file, an extension)."""
    home, outside = tmp_path / "home", tmp_path / "outside"
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": f"{outside}/claude", "COPILOT_HOME": f"{outside}/copilot",
           "GEMINI_CLI_SYSTEM_SETTINGS_PATH": f"{outside}/etc/settings.json"}
    full = str(home / where[2:]) if where.startswith("~/") else where.replace("@", str(outside)) \
        if where.startswith("@/") else str(repo.root / where)
    payload = repo.payload("pre-tool-use", tool_name="Write", tool_input={"file_path": full, "content": "{}"},
                           tool_use_id="toolu_01")
    assert repo.hook("session-start", env=env, source="startup").returncode == 0
    done = repo.run("hook", "pre-tool-use", stdin=json.dumps(payload), **env)
    spec = answer(done)["hookSpecificOutput"]
    assert spec["permissionDecision"] == "deny" and "arms the gate" in spec["permissionDecisionReason"], spec


@pytest.mark.parametrize("where", [".gemini/.env", ".env", "../.env", ".qwen/settings.json:hook", "@claude:env"])
def test_a_gate_setting_a_file_the_agent_can_write_gives_the_hooks_is_not_the_operator_s(tmp_path, where):
    """DONEGATE_VERIFY_COMMAND=true from a file the agent can write, as a host passes it to its hooks: a .env Gemini
    CLI or Qwen Code loads (the repository's, or one above it), a hook entry's own `env`, a settings file where
    CLAUDE_CONFIG_DIR moves the user's. The gate leaves it out; the operator's own export with another value stays."""
    from donegate.realhosts import operator_env
    root, home = tmp_path / "outer" / "repo", tmp_path / "home"
    env = {"DONEGATE_VERIFY_COMMAND": "true", "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    if where == ".qwen/settings.json:hook":
        path, text = root / ".qwen/settings.json", json.dumps({"hooks": {"Stop": [{"hooks": [
            {"type": "command", "command": "donegate hook stop", "env": {"DONEGATE_VERIFY_COMMAND": "true"}}]}]}})
    elif where == "@claude:env":
        path, text = tmp_path / "claude/settings.json", json.dumps({"env": {"DONEGATE_VERIFY_COMMAND": "true"}})
    else:
        path, text = root / where, 'export DONEGATE_VERIFY_COMMAND="true"  # from an earlier session\n'
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    assert "DONEGATE_VERIFY_COMMAND" not in operator_env(env, root, home)
    exported = {**env, "DONEGATE_VERIFY_COMMAND": "./verify.sh --all"}
    assert operator_env(exported, root, home)["DONEGATE_VERIFY_COMMAND"] == "./verify.sh --all"


@pytest.mark.parametrize("where", ["sub/.env", "sub/.gemini/.env", "sub/deeper/.qwen/.env"])
def test_a_gate_setting_from_a_dot_env_where_the_host_started_is_not_the_operator_s(gated, where):
    """Gemini CLI and Qwen Code look for a .env from the folder they start in upward: a session started in a folder
    of the repository loads one an earlier session left there. Its DONEGATE_VERIFY_COMMAND=true reaches the hooks,
    and the stop of a broken change must still run the operator's check and refuse it."""
    repo = gated("gemini")
    start = repo.root / Path(where).parts[0] / ("deeper" if "deeper" in where else "")
    start.mkdir(parents=True, exist_ok=True)
    (repo.root / where).parent.mkdir(parents=True, exist_ok=True)
    (repo.root / where).write_text("DONEGATE_VERIFY_COMMAND=true\n")
    repo.write("app.py", broken())
    done = repo.hook("stop", "gemini", {"DONEGATE_VERIFY_COMMAND": "true"}, stop_hook_active=False,
                     prompt="make the change", prompt_response=CLAIM, cwd=str(start))
    assert (answer(done) or {}).get("decision") in ("block", "deny"), done.stdout + done.stderr
    assert "trailing whitespace" in done.stdout + done.stderr


def test_a_replace_ref_that_shows_git_another_head_does_not_hide_a_change(gated):
    """`git replace HEAD <commit>` with a commit whose tree holds the changed file: git status then reads that tree
    as HEAD's and shows app.py unchanged. The gate reads the repository's own objects (replace refs off): the
    change is seen and the check runs (the check's own git, here `git diff --check`, still sees what it sees)."""
    repo = gated("claude-code")
    repo.write("app.py", FIXED)
    repo.git("add", "app.py")
    tree = repo.git("write-tree").strip()
    commit = repo.git("commit-tree", tree, "-m", "the same message").strip()
    repo.git("replace", "HEAD", commit)
    assert "app.py" not in repo.git("status", "--porcelain")  # git's own view: app.py unchanged
    done = repo.stop()
    assert repo.runs() == 1 and "nothing changed" not in done.stdout + done.stderr, done.stdout + done.stderr


def test_an_fsmonitor_an_earlier_session_configured_does_not_hide_a_change(repo, tmp_path):
    """An earlier session left the repository's config naming an fsmonitor hook that always answers "nothing
    changed": git status lists no edit. The gate runs git with its shortcuts off (SHORTCUTS_OFF): the edit is
    seen and the check runs."""
    assert repo.run("init").returncode == 0
    repo.count_runs()
    assert repo.run("install", "--host", "claude-code").returncode == 0
    liar = tmp_path / "liar.sh"
    liar.write_text("#!/bin/sh\nprintf 'token\\0'\n")
    liar.chmod(0o755)
    repo.git("config", "core.fsmonitor", str(liar))
    repo.git("config", "core.fsmonitorHookVersion", "2")
    repo.git("update-index", "--fsmonitor")
    repo.git("status")  # the index as the hook's answers leave it
    assert repo.start().returncode == 0  # the next session starts with it
    repo.write("app.py", FIXED)
    repo.git("update-index", "--fsmonitor-valid", "app.py")  # as the hook's answers leave it: not looked at
    assert "app.py" not in repo.git("status", "--porcelain")  # git's own view: nothing changed
    done = repo.stop()
    assert repo.runs() == 1 and "nothing changed" not in done.stdout + done.stderr, done.stdout + done.stderr


@pytest.mark.parametrize("moved", [False, True])
def test_codex_s_own_env_file_arms_the_gate_and_its_gate_settings_are_not_the_operator_s(gated, tmp_path, moved):
    """Codex CLI loads ~/.codex/.env (or $CODEX_HOME/.env) into its own environment as it starts, and its hooks
    inherit it: written in the session, the stop is refused as disarmed, naming it; and the DONEGATE_VERIFY_COMMAND
    it gives the next session's hooks is not the operator's."""
    from donegate.realhosts import operator_env
    home = tmp_path / "home"
    env = {"HOME": str(home), **({"CODEX_HOME": str(tmp_path / "codex")} if moved else {})}
    repo = gated("codex", **env)
    dotenv = (tmp_path / "codex" if moved else home / ".codex") / ".env"
    dotenv.parent.mkdir(parents=True, exist_ok=True)
    dotenv.write_text("DONEGATE_VERIFY_COMMAND=true\n")
    repo.write("app.py", FIXED)
    done = repo.stop(host="codex", **env)
    name = str(dotenv) if moved else "~/.codex/.env"
    assert done.returncode == 2 and name in answer(done)["reason"], done.stdout + done.stderr
    assert "DONEGATE_VERIFY_COMMAND" not in operator_env({**env, "DONEGATE_VERIFY_COMMAND": "true"}, repo.root, home)


def test_the_quick_path_knows_every_variable_that_moves_a_layer():
    """The quick tool path spells out the variables that move a settings layer (it does not import the gate):
    the same list as the gate's."""
    from donegate.quickstop import QUICK_ARMING_VARS
    from donegate.realhosts import ARMING_VARS
    assert QUICK_ARMING_VARS == ARMING_VARS


# -- what the check leaves behind ------------------------------------------------------------------

def test_a_check_that_leaves_helpers_holding_its_output_is_answered_and_the_helpers_are_ended(repo, tmp_path):
    """verify.sh passes but leaves two helpers running with its output open: one in its own process group, one
    detached with setsid (a dev server, say). Neither holds the stop (the output goes to a file, not a pipe), and
    neither outlives it: the gate ends the check's group and every process it adopted from the check."""
    marker = f"donegate-leftover-{tmp_path.name}"
    assert repo.run("init").returncode == 0
    script = repo.path("verify.sh")
    script.write_text(script.read_text().replace(
        "set -eu\n", f"set -eu\nsh -c 'sleep 100; : {marker}-a' &\nsetsid sh -c 'sleep 100; : {marker}-b' &\n", 1))
    assert repo.start().returncode == 0
    repo.write("app.py", FIXED)
    done = repo.stop(active=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), done.stdout + done.stderr
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    assert left == [], f"processes the check left are still running: {left}"


# -- payloads of the wrong types --------------------------------------------------------------------

@pytest.mark.parametrize("field, value", [("cwd", 123), ("cwd", None), ("session_id", 5), ("session_id", ["a"]),
                                          ("stop_hook_active", "yes"), ("last_assistant_message", {"text": "done"}),
                                          ("transcript_path", 7)])
def test_a_field_of_the_wrong_type_reads_as_missing_and_the_stop_is_decided(gated, field, value):
    """A host (or a wrapper) sends a field of another type: the stop is decided as if the field were missing
    (`cwd` the hook's own folder, which the host sets to the project; a session id, a session the gate does not
    know, armed), never refused with a TypeError: the broken edit is checked and refused."""
    repo = gated()
    repo.write("app.py", broken())
    payload = {**repo.payload("stop", last_assistant_message=CLAIM), "stop_hook_active": False, field: value}
    done = repo.run("hook", "stop", "--host", "claude-code", stdin=json.dumps(payload))
    assert "Error" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert done.returncode == 2 and json.loads(done.stdout)["decision"] == "block", done.stdout + done.stderr
    if field != "session_id":  # an unknown session's baseline is HEAD: the uncommitted verify.sh counts as changed
        assert "trailing whitespace" in done.stderr, done.stdout + done.stderr


def test_an_unwritable_state_folder_hands_over_at_once_saying_so_not_counting_stops_it_never_saw(repo, tmp_path):
    """The gate cannot decide (a bad setting) and cannot count its refusals either (the errors folder cannot
    be written): it hands over at the first stop, and the message says why, not "4 stops in a row"."""
    assert repo.run("init").returncode == 0
    blocked = tmp_path / "state"
    blocked.mkdir()
    (blocked / "errors").write_text("a file where the gate wants a folder\n")
    done = repo.run("hook", "stop", "--host", "claude-code", stdin=json.dumps(repo.payload("stop")),
                    DONEGATE_MAX_BLOCKS="three")
    said = answer(done)["systemMessage"]
    assert done.returncode == 0 and "HANDED OVER UNVERIFIED" in said
    assert "stops in a row" not in said and "cannot count its refusals" in said, said


def test_a_huge_untracked_file_is_hashed_in_bounded_memory(gated):
    """A 200 MB untracked file (sparse: no disk is used) in the session's changes: the stop hashes it a piece at a
    time, so the hook's peak memory stays far below the file's size."""
    repo = gated()
    repo.write("app.py", FIXED)
    with open(repo.path("data.bin"), "wb") as big:
        big.truncate(200 * 2 ** 20)
    probe = ("import json, resource, subprocess, sys\n"
             "done = subprocess.run(sys.argv[1:], input=sys.stdin.read(), text=True, capture_output=True)\n"
             "print(json.dumps([done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))\n")
    payload = json.dumps({**repo.payload("stop", last_assistant_message=CLAIM), "stop_hook_active": False})
    done = subprocess.run([sys.executable, "-c", probe, str(DONEGATE), "hook", "stop", "--host", "claude-code"],
                          input=payload, cwd=repo.root, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "DONEGATE_STATE_DIR": str(repo.state)})
    code, peak_kib = json.loads(done.stdout)
    assert code == 0, done.stderr
    assert peak_kib < 100 * 1024, f"the stop peaked at {peak_kib // 1024} MiB for a 200 MiB file"


# -- the Stop hook's own time limit ------------------------------------------------------------------

def stop_limit(repo: Repo, host: str) -> float:
    from donegate.doctor import stop_timeouts
    return stop_timeouts(repo.root)[host]


def test_install_writes_a_stop_hook_time_limit_that_outlasts_the_check_s_budget(repo):
    for host in ("claude-code", "codex", "gemini"):
        assert repo.run("install", "--host", host, DONEGATE_VERIFY_TIMEOUT="900").returncode == 0
        assert stop_limit(repo, host) >= 930, host
    assert settings_of(repo, ".gemini/settings.json")["hooks"]["AfterAgent"][0]["hooks"][0]["timeout"] >= 930_000


@pytest.mark.parametrize("host, rel", [("claude-code", ".claude/settings.json"), ("gemini", ".gemini/settings.json")])
def test_doctor_warns_of_a_stop_hook_the_host_would_end_first_and_install_raises_its_limit(repo, host, rel):
    """A Stop hook limit shorter than the check's budget (an operator's edit, or a budget raised after install):
    the host would end the gate mid-check without a word. doctor says so and exits 1; install raises it."""
    assert repo.run("init").returncode == 0
    assert repo.run("install", "--host", host).returncode == 0
    settings = settings_of(repo, rel)
    event = HOSTS[host]["stop"]
    settings["hooks"][event][0]["hooks"][0]["timeout"] = 60_000 if host == "gemini" else 60
    repo.path(rel).write_text(json.dumps(settings))
    doctor = repo.run("doctor", DONEGATE_VERIFY_TIMEOUT="120")
    assert doctor.returncode == 1 and f"hook timeout {host}" in doctor.stdout and "WARNING" in doctor.stdout
    del settings["hooks"][event][0]["hooks"][0]["timeout"]  # none at all: the host's default, 60 s
    repo.path(rel).write_text(json.dumps(settings))
    assert "no time limit" in repo.run("doctor", DONEGATE_VERIFY_TIMEOUT="120").stdout
    done = repo.run("install", "--host", host, DONEGATE_VERIFY_TIMEOUT="120")
    assert done.returncode == 0 and "raised" in done.stdout, done.stdout
    assert stop_limit(repo, host) >= 150
    assert "hook timeout" not in repo.run("doctor", DONEGATE_VERIFY_TIMEOUT="120").stdout


# -- submodules and nested repositories ------------------------------------------------------------

@pytest.mark.parametrize("kind", ["submodule", "nested"])
def test_an_edit_inside_a_submodule_after_a_pass_is_checked_again(repo, make_repo, kind):
    """A pass stamps the tree state; an edit inside a submodule (or an untracked repository of its own) after
    it is a change of that state, so the next stop runs the check instead of calling it already verified."""
    lib = make_repo("lib")
    if kind == "submodule":
        repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib.root), "lib")
        repo.commit("add lib")
    else:
        subprocess.run(["git", "clone", "-q", str(lib.root), str(repo.path("lib"))], check=True)
    assert repo.run("init").returncode == 0
    repo.count_runs()
    assert repo.start().returncode == 0
    repo.write("app.py", FIXED)
    assert repo.stop(active=False).returncode == 0 and repo.runs() == 1
    repo.write("lib/app.py", 'STATUS = "changed after the pass"\n')
    done = repo.stop(active=True)
    assert repo.runs() == 2, "the edit inside lib/ came after the pass: the check must run again"
    assert done.returncode == 0
    repo.write("lib/app.py", 'STATUS = "changed again"\n')
    repo.stop(active=True)
    assert repo.runs() == 3


def test_a_repository_made_again_at_the_same_path_inherits_nothing_from_the_old_one(gated, tmp_path):
    """The old repository's session ends unverified; the folder is deleted and a new repository made at the same
    path. A new session there starts clean: its stops are decided on its own work (no "could not decide",
    no "bad object"), and `status` speaks of it alone."""
    repo = gated()
    repo.write("app.py", broken())
    assert repo.stop(active=False).returncode == 2
    assert repo.run("status").returncode == 1
    shutil.rmtree(repo.root)
    repo.root.mkdir()
    repo.git("init", "-q")
    repo.write("app.py", ORIGINAL)
    repo.write("notes.txt", "a new project\n")
    repo.commit("a new start")
    assert repo.run("status").returncode == 2, "no session has run in the new repository yet"
    assert repo.run("init").returncode == 0
    repo.count_runs()
    repo.payload = lambda event, host="claude-code", **fields: {**Repo.payload(repo, event, host, **fields),
                                                               "session_id": "session-2"}
    assert repo.start().returncode == 0
    repo.write("app.py", FIXED)
    done = repo.stop(active=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), done.stdout + done.stderr
    assert repo.run("status").returncode == 0


def test_status_reads_past_a_damaged_session_file_of_the_repository(gated):
    """A state file that cannot be read belongs to no repository: `status` answers from the readable ones."""
    repo = gated()
    repo.write("app.py", FIXED)
    assert repo.stop(active=False).returncode == 0
    (newest,) = (repo.state / "sessions").glob("*.json")
    (newest.parent / ("damaged--" + newest.name.split("--", 1)[1])).write_text("{not json")
    newest.touch()
    done = repo.run("status")
    assert done.returncode == 0 and "verified" in done.stdout, done.stdout + done.stderr


def test_the_gate_s_own_settings_are_fixed_when_the_session_starts(gated):
    """DONEGATE_VERIFY_COMMAND=true reaching a stop from anywhere (a settings source the gate does not know of)
    is not the session's check: the stop is refused as disarmed, naming the setting; `status` run from a shell
    that sets it judges with what the session's hooks had."""
    repo = gated()
    repo.git("add", "verify.sh")
    repo.commit("the operator's check")
    repo.write("app.py", broken(1))
    stop = repo.stop(active=True, DONEGATE_VERIFY_COMMAND="true")
    assert stop.returncode == 2 and "DONEGATE_VERIFY_COMMAND" in stop.stderr and repo.runs() == 0, stop.stderr
    status = repo.run("status", DONEGATE_VERIFY_COMMAND="true")
    assert status.returncode == 1, status.stdout
    repo.write("app.py", broken(2))
    assert repo.stop(active=True).returncode == 2 and repo.runs() == 1  # the session's own check, which fails


def test_each_gate_event_holds_the_session_s_lock_for_its_whole_call(repo, monkeypatch):
    """Two hooks of one session at once (Copilot CLI fires sessionStart and userPromptSubmitted together) take
    turns: while one of the gate's events is being answered, the session's lock is held; a tool call takes none."""
    import fcntl
    from donegate import realhosts
    held = {}

    def answering(event, *args, **kwargs):
        with open(repo.state / "locks" / realhosts.safe_key("session-1"), "a") as other:
            try:
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held[event] = False
            except BlockingIOError:
                held[event] = True
        return realhosts.HookAnswer(0)

    monkeypatch.setenv("DONEGATE_STATE_DIR", str(repo.state))
    (repo.state / "locks").mkdir(parents=True, exist_ok=True)
    monkeypatch.setattr(realhosts.hosts, "run_hook", answering)
    for event in ("session-start", "user-prompt", "stop", "stop-failure", "pre-tool-use"):
        realhosts.run_hook(event, json.dumps(repo.payload(event)), "claude-code")
    assert held == {"session-start": True, "user-prompt": True, "stop": True, "stop-failure": True,
                    "pre-tool-use": False}


def test_a_prompt_that_comes_before_its_session_s_start_leaves_the_state_to_the_start(gated):
    """Copilot's prompt hook can run before its start hook: the prompt takes no baseline, so the start still
    carries on the unverified work an earlier session left, and says so."""
    repo = gated("copilot")
    repo.git("add", "verify.sh")
    repo.commit("the operator's check")
    repo.write("app.py", broken(1))
    assert repo.stop(active=True, host="copilot").returncode in (0, 2)
    assert repo.stop(active=True, host="copilot").returncode == 0  # handed over, unverified
    later = {"session_id": "session-2"}
    prompt = repo.run("hook", "user-prompt", "--host", "copilot",
                      stdin=json.dumps(repo.payload("user-prompt", "copilot", prompt="Anything left?", **later)))
    assert prompt.returncode == 0 and not list((repo.state / "sessions").glob("session-2-*"))
    start = repo.run("hook", "session-start", "--host", "copilot",
                     stdin=json.dumps(repo.payload("session-start", "copilot", source="new", **later)))
    assert "NOT verified" in start.stdout, start.stdout


SWITCHED_OFF = {  # host: (file, what turns every hook off, merged into the file's JSON or written as TOML)
    "claude-code": (".claude/settings.local.json", {"disableAllHooks": True}),
    "qwen": (".qwen/settings.json", {"disableAllHooks": True}),
    "copilot": (".github/copilot/settings.json", {"disableAllHooks": True}),
    "gemini": (".gemini/settings.json", {"hooksConfig": {"enabled": False}}),
    "codex": (".codex/config.toml", "[features]\nhooks = false\n"),
}


@pytest.mark.parametrize("host", sorted(SWITCHED_OFF))
def test_doctor_says_hooks_switched_off_beside_the_gate_s_entries_are_not_active(repo, tmp_path, host):
    """Each host's own switch, written beside the gate's unchanged hook entries: the next session runs no hook,
    so doctor does not call the hooks active; it names the file and the switch."""
    home = tmp_path / "home"
    assert repo.run("install", "--host", host, "--trust", HOME=str(home)).returncode == 0
    assert f"{host:<12} installed and active" in repo.run("doctor", HOME=str(home)).stdout
    rel, switch = SWITCHED_OFF[host]
    path = repo.root / rel
    if isinstance(switch, str):
        path.write_text(switch)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**(json.loads(path.read_text()) if path.exists() else {}), **switch}))
    doctor = repo.run("doctor", HOME=str(home))
    line = next(l for l in doctor.stdout.splitlines() if l.startswith(f"hooks        {host} "))
    assert doctor.returncode == 1 and "NOT active" in line and rel in line and "switches every hook off" in line, line



def test_a_hash_cache_written_outside_the_gate_is_no_cache(gated):
    """The hash cache pairs stat data with object ids. An entry written outside the gate (a broken file's stat data
    with a passing file's id) would make the broken tree read as the verified one: the cache is sealed like the
    gate's state, and one whose seal does not match is read as empty, so the file is hashed and the check runs."""
    repo = gated()
    repo.git("add", "verify.sh")
    repo.commit("the operator's check")
    repo.write("app.py", FIXED)
    assert repo.stop().returncode == 0 and repo.runs() == 1
    good = repo.git("hash-object", "app.py").strip()
    repo.write("app.py", broken(1))
    st = os.lstat(repo.root / "app.py")
    (state,) = (repo.state / "sessions").glob("*.json")  # named <session>--<repository key>.json
    cache = repo.state / "cache" / f"{state.stem.split('--')[-1]}.json"
    cache.parent.mkdir(exist_ok=True)
    cache.write_text(json.dumps({"app.py": [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, "100644", good]}))
    done = repo.stop()
    assert done.returncode == 2 and repo.runs() == 2, done.stdout + done.stderr


def test_a_relay_request_written_outside_the_gate_is_no_request(gated):
    """The relay keeps the hand-over it asks the agent to repeat, with its verdict. A request rewritten outside the
    gate (its verdict made a pass, its line empty so any message holds it) is not the gate's: the stop is
    decided again on the tree, which is still broken, and nothing is verified."""
    repo = gated("codex")
    repo.write("app.py", broken())

    def stop(said: str) -> subprocess.CompletedProcess:
        return repo.hook("stop", "codex", stop_hook_active=True, last_assistant_message=said, turn_id="turn-1")

    assert stop("Fixed.").returncode == 2
    assert "request 1 of 2" in answer(stop("Fixed."))["reason"]
    (kept,) = (repo.state / "relay").glob("*.json")
    forged = json.loads(kept.read_text())
    forged.pop("seal", None)
    forged["line"] = ""
    forged["verdict"].update(action="allow", status="verified", exit="passed", message="verified")
    kept.write_text(json.dumps(forged))
    done = stop("Fixed.")
    said = json.dumps(answer(done))
    assert "HANDED OVER UNVERIFIED" in said or done.returncode == 2, said
    assert repo.run("status").returncode == 1


@pytest.mark.parametrize("how", ["deleted", "forged"])
def test_the_trees_a_session_has_state_in_are_gated_whatever_its_record_says(gated, make_repo, how):
    """The session's record names its repository. With it deleted, or rewritten outside the gate to name a clean
    clone the agent's shell then stands in, the stop still judges the repository the session has a sealed state
    in: the broken change there is refused, not passed as the clone's clean tree."""
    repo = gated()
    repo.git("add", "verify.sh")
    repo.commit("the operator's check")
    clone = make_repo("clone")
    repo.write("app.py", broken())
    (record,) = (repo.state / "roots").glob("*.json")
    if how == "deleted":
        record.unlink()
    else:
        record.write_text(json.dumps({"root": str(clone.root.resolve()), "worktrees": [], "linked": {}}))
    payload = {**repo.payload("stop", stop_hook_active=False, last_assistant_message=CLAIM), "cwd": str(clone.root)}
    done = donegate("hook", "stop", "--host", "claude-code", cwd=clone.root, state=repo.state, stdin=json.dumps(payload))
    assert done.returncode == 2 and repo.runs() == 1, done.stdout + done.stderr


@pytest.mark.parametrize("host, where", [("gemini", ".env"), ("qwen", ".qwen/.env"), ("claude-code", "settings")])
def test_a_variable_a_file_the_agent_can_write_gives_the_hooks_does_not_reach_the_check(gated, host, where):
    """A host hands its hooks what a .env file or a settings layer's `env` sets. A session leaves a broken change
    and a file that sets a variable the check obeys (git's own configuration, here making `git diff --check`
    accept trailing whitespace); the next session starts with it, and the host passes it on. The check does not
    see it, so the next broken change is refused, not verified."""
    repo = gated(host)
    repo.git("add", "verify.sh")
    repo.commit("the operator's check")
    given = {"GIT_CONFIG_PARAMETERS": "'core.whitespace=-trailing-space'"}
    if where == "settings":
        (repo.root / ".claude" / "settings.local.json").write_text(json.dumps({"env": given}))
    else:
        (repo.root / where).parent.mkdir(exist_ok=True)
        (repo.root / where).write_text("".join(f'{k}="{v}"\n' for k, v in given.items()))
    repo.write("app.py", broken())
    assert repo.stop(host=host).returncode in (0, 2)  # the session ends refused (disarmed, or the check fails)
    said = {"prompt_response": CLAIM} if host == "gemini" else {"last_assistant_message": CLAIM}
    assert repo.hook("session-start", host, given, source="startup", session_id="session-2").returncode == 0
    before = repo.runs()
    repo.write("app.py", broken(2))  # the next session's own broken change
    done = repo.hook("stop", host, given, stop_hook_active=False, session_id="session-2", **said)
    assert repo.runs() == before + 1 and "HANDED OVER" not in done.stdout, done.stdout + done.stderr
    assert "trailing whitespace" in done.stdout + done.stderr, done.stdout + done.stderr


@pytest.mark.parametrize("named", list(HOSTS))
def test_the_calling_host_is_the_one_whose_own_variables_the_hook_has(named):
    from donegate.realhosts import HOST_MARKERS, calling_host
    assert calling_host(named, {}) == named  # nothing says otherwise: the host the command names
    for caller, names in HOST_MARKERS.items():
        for name in names:
            assert calling_host(named, {name: "1"}) == caller, (named, name)
            own = {n: "1" for n in HOST_MARKERS.get(named, ())}
            if own:  # started from another host's shell, it has both hosts' variables
                assert calling_host(named, {**own, name: "1"}) == named
        others = {n: "1" for host, ns in HOST_MARKERS.items() if host not in (caller, named) for n in ns}
        if others:  # two hosts' variables and neither is the named one's: no guess
            assert calling_host(named, {names[0]: "1", **others}) == named
