"""The stop hook's quick path (donegate.quickstop): a recorded answer is replayed only while everything
the gate's answer depended on is unchanged, and only answers that wrote nothing are recorded.

Most tests call `stop_hook` in this process on a real temporary repository. `record_stop` is wrapped to
count the stops the gate itself decided; a replayed stop never reaches it.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gitrepo import GitRepo

from donegate import quickstop
from donegate.realhosts import run_hook
from donegate.stopgate import default_state_dir
from donegate.treestate import find_repo

DONEGATE = Path(sys.executable).with_name("donegate")


@pytest.fixture(autouse=True)
def hermetic(hermetic_gate):
    """Every test runs in the isolated environment of conftest.hermetic_gate."""


class Repo(GitRepo):
    """A repository whose acceptance command counts its runs; `stop()` is one stop through stop_hook."""

    session = "session-1"

    def env(self, **extra: str) -> dict[str, str]:
        return {**os.environ, "DONEGATE_STATE_DIR": str(self.state),
                "DONEGATE_VERIFY_COMMAND": f"echo run >> '{self.marker}'", **extra}

    def payload(self, **fields) -> bytes:
        return json.dumps({"session_id": self.session, "cwd": str(self.root), "hook_event_name": "Stop",
                           "last_assistant_message": "Done.", **fields}).encode()

    def start(self, **extra: str) -> None:
        answer = run_hook("session-start", self.payload(hook_event_name="SessionStart"), "claude-code", self.env(**extra))
        assert answer.exit_code == 0, answer

    settled = 0

    def settle(self) -> None:
        """Age every file, and let git refresh its index once, as time would between two stops: git
        rewrites its index at every status while an entry is as new as the index, and a moving index is
        never recorded. Each call goes further back (10 s, 12 s, ...), so that an aged edit never gets
        the very stat data git holds for the old content (which git would take for "unchanged")."""
        Repo.settled += 1
        old = time.time() - 8 - 2 * Repo.settled
        for folder, dirs, files in os.walk(self.root):
            dirs[:] = [d for d in dirs if d != ".git"]
            for name in (*dirs, *files):
                os.utime(os.path.join(folder, name), (old, old), follow_symlinks=False)
        self.git("status")
        assert self.git("status", "--porcelain") == self.git("status", "--porcelain")

    def memos(self) -> list[Path]:
        folder = self.state / "quick"
        return sorted(p for p in folder.iterdir() if not p.name.endswith(".tmp")) if folder.exists() else []


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Repo:
    repo = Repo(tmp_path / "repo", tmp_path / "state", tmp_path / "runs.marker")
    repo.root.mkdir()
    repo.git("init", "-q")
    repo.write("app.py", "VALUE = 1\n")
    repo.write("tests/test_app.py", "def test_value():\n    assert True\n")
    repo.settle()  # git keeps rewriting an index whose entries are as new as it is
    repo.commit("start")
    monkeypatch.chdir(repo.root)
    return repo


@pytest.fixture
def stops(monkeypatch, capsys):
    """stops(repo, active=True, **env) -> (who answered: "gate" or "replay", exit code, stdout, stderr)."""
    decided = []
    original = quickstop.record_stop

    def counting(*args, **kwargs):
        decided.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(quickstop, "record_stop", counting)

    def stop(repo: Repo, active: bool | None = True, host: str = "claude-code", **env: str):
        before = len(decided)
        code = quickstop.stop_hook(host, repo.payload(stop_hook_active=active), repo.env(**env))
        out = capsys.readouterr()
        return ("gate" if len(decided) > before else "replay"), code, out.out, out.err

    return stop


@pytest.fixture
def verified(repo, stops) -> Repo:
    """A session whose change passed its check, then one already-verified stop that the gate answered
    and recorded: the next identical stop is a replay."""
    repo.start()
    repo.write("app.py", "VALUE = 2\n")
    repo.write("notes/todo.txt", "untracked note\n")
    assert stops(repo, active=False)[:2] == ("gate", 0)   # the check runs and passes: the next stop's answer recorded
    assert repo.runs() == 1
    repo.settle()
    assert stops(repo)[:2] == ("gate", 0)                 # already verified, another flag: recorded
    assert [m.name[-1] for m in repo.memos()] == ["f", "t"]
    return repo


# -- replay -------------------------------------------------------------------------------------

def test_an_unchanged_already_verified_stop_is_replayed_with_the_gate_s_exact_answer(verified, stops):
    gate_answer = run_hook("stop", verified.payload(stop_hook_active=True), "claude-code", verified.env())
    assert gate_answer.verdict.exit == "already_verified"
    who, code, out, err = stops(verified)
    assert who == "replay"
    assert (code, out, err) == (gate_answer.exit_code, gate_answer.stdout + ("\n" if gate_answer.stdout else ""),
                                gate_answer.stderr + ("\n" if gate_answer.stderr else ""))
    assert stops(verified)[0] == "replay"
    assert verified.runs() == 1


def test_a_stop_that_ran_the_check_or_blocked_is_never_recorded(repo, stops):
    repo.start()
    repo.write("app.py", "VALUE = 2\n")
    failing = {"DONEGATE_VERIFY_COMMAND": "echo 'FAILED test_value' && exit 1"}
    assert stops(repo, active=False, **failing)[:2] == ("gate", 2)
    assert stops(repo, **failing)[:2] == ("gate", 0)  # no change since the failure: handed over, state written
    assert repo.memos() == []


# -- a pass records the next stop's answer ----------------------------------------------------------

def clock_step(after: Path, probe: Path) -> None:
    """Let the file system's clock move past `after`'s last change (one step of it: a few ms at most), so that
    the stop's fence is later than every file written so far, as it is when an agent stops."""
    limit = after.stat().st_ctime_ns
    probe.touch()
    while probe.stat().st_mtime_ns <= limit:
        os.utime(probe)


@pytest.fixture
def passed(repo, stops, monkeypatch) -> Repo:
    """A session whose change (and 300 untracked files) passed its check just now: no file aged, no wait. The
    user's settings folders arm the gate too: a HOME of its own, so no other program writes there meanwhile."""
    monkeypatch.setenv("HOME", str(repo.state.parent / "home"))
    repo.start()
    for i in range(300):
        repo.write(f"notes/n{i:03d}.txt", f"note {i}\n")
    repo.write("app.py", "VALUE = 2\n")
    clock_step(repo.root / "app.py", repo.state / "probe")
    assert stops(repo, active=False)[:2] == ("gate", 0)  # the check runs and passes
    assert repo.runs() == 1
    return repo


def test_a_pass_records_the_answer_of_the_next_stop_of_its_tree(passed, stops):
    """The stop right after a pass, less than 2 s later, is replayed: the gate said what it will answer."""
    gate_answer = run_hook("stop", passed.payload(stop_hook_active=False), "claude-code", passed.env())
    assert gate_answer.verdict.exit == "already_verified"
    who, code, out, err = stops(passed, active=False)
    assert who == "replay"
    assert (code, out, err) == (gate_answer.exit_code, gate_answer.stdout + ("\n" if gate_answer.stdout else ""),
                                gate_answer.stderr + ("\n" if gate_answer.stderr else ""))
    assert passed.runs() == 1


def test_asking_the_next_stop_s_answer_neither_counts_a_stop_nor_runs_the_check(passed):
    lines = (passed.state / "stops.log").read_text().split("\n")
    assert [line.split("\t")[-1] for line in lines if line] == ["passed"]
    assert passed.runs() == 1


def test_a_check_that_writes_a_listed_file_is_run_once_and_nothing_is_recorded(repo, stops):
    """Asked again after the pass, the gate meets a tree no check ran on: it refuses rather than run the check a
    second time, that refusal is neither counted nor kept, and the next stop is the gate's."""
    writing = {"DONEGATE_VERIFY_COMMAND": f"echo run >> '{repo.marker}' && echo '# by the check' >> app.py"}
    repo.start(**writing)  # the check is fixed when the session starts
    repo.write("app.py", "VALUE = 2\n")
    assert stops(repo, active=False, **writing)[:2] == ("gate", 0)
    assert repo.runs() == 1 and repo.memos() == []
    assert [line.split("\t")[-1] for line in (repo.state / "stops.log").read_text().splitlines()] == ["passed"]
    assert not (repo.state / "errors").exists() or not any((repo.state / "errors").iterdir())
    assert stops(repo, active=False, **writing)[0] == "gate" and repo.runs() == 2


PASSED_CHANGES = {
    "untracked file touched": lambda r: os.utime(r.root / "notes/n007.txt"),
    "untracked file edited": lambda r: r.write("notes/n007.txt", "note 8\n"),
    "untracked file added": lambda r: r.write("notes/new.txt", "new\n"),
    "untracked file removed": lambda r: (r.root / "notes/n007.txt").unlink(),
    "changed tracked file touched": lambda r: os.utime(r.root / "app.py"),
    "changed tracked file edited": lambda r: r.write("app.py", "VALUE = 3\n"),
    "clean tracked file touched": lambda r: os.utime(r.root / "tests/test_app.py"),
    "tracked file removed": lambda r: (r.root / "tests/test_app.py").unlink(),
    "arming layer added": lambda r: r.write(".claude/settings.local.json", '{"disableAllHooks": true}'),
    "new prompt (gate state rewritten)": lambda r: run_hook("user-prompt", r.payload(), "claude-code", r.env()),
    "gate state altered": lambda r: open(quickstop.quick_session_file(r.env(), r.session, str(r.root)), "a").write(" "),
    "gate stamp removed": lambda r: [p.unlink() for p in (r.state / "stamps").iterdir()],
}


@pytest.mark.parametrize("change", PASSED_CHANGES)
def test_after_a_pass_any_change_goes_back_to_the_gate(passed, stops, change):
    assert stops(passed, active=False)[0] == "replay"
    PASSED_CHANGES[change](passed)
    assert stops(passed, active=False)[0] == "gate"


def test_a_skipped_stop_is_never_replayed_so_every_skip_is_recorded(verified, stops):
    for _ in range(3):
        assert stops(verified, DONEGATE_SKIP="1")[:2] == ("gate", 0)
    assert len((verified.state / "skips.jsonl").read_text().splitlines()) == 3


def test_a_quiet_stop_at_the_baseline_is_replayed(repo, stops):
    repo.start()
    assert stops(repo, active=False)[:2] == ("gate", 0)
    assert stops(repo, active=False)[:2] == ("replay", 0)
    assert repo.runs() == 0


def test_a_new_stretch_at_an_already_verified_state_writes_nothing_so_it_is_replayed(verified, stops):
    assert stops(verified, active=False)[0] == "gate"
    assert stops(verified, active=False)[0] == "replay"


# -- everything the answer depended on ------------------------------------------------------------

def _same_size_edit(repo: Repo, rel: str) -> None:
    text = repo.read(rel)
    repo.write(rel, text.replace(text[-2], "9" if text[-2] != "9" else "8"))
    assert len(repo.read(rel)) == len(text) and repo.read(rel) != text


CHANGES = {
    "tracked file edited (same size)": lambda r: _same_size_edit(r, "app.py"),
    "untracked file edited (same size)": lambda r: _same_size_edit(r, "notes/todo.txt"),
    "untracked file added": lambda r: r.write("notes/more.txt", "another\n"),
    "untracked file deleted": lambda r: (r.root / "notes/todo.txt").unlink(),
    "clean tracked file edited": lambda r: r.write("tests/test_app.py", "def test_value():\n    assert False\n"),
    "change staged": lambda r: r.git("add", "app.py"),
    "change committed": lambda r: r.commit("done"),
    "mode changed": lambda r: (r.root / "app.py").chmod(0o755),
    "symlink added": lambda r: os.symlink("app.py", r.root / "link"),
    "ignore rule hides a file": lambda r: r.write(".git/info/exclude", "notes/\n"),
    "git config changed": lambda r: r.git("config", "status.showUntrackedFiles", "no"),
}


@pytest.mark.parametrize("change", CHANGES)
def test_any_change_to_the_tree_goes_back_to_the_gate(verified, stops, change):
    CHANGES[change](verified)
    assert stops(verified)[0] == "gate"


@pytest.mark.parametrize("change, waits", [("tracked file edited (same size)", False), ("untracked file deleted", False),
                                           ("ignore rule hides a file", False), ("clean tracked file edited", True),
                                           ("untracked file added", True)])
def test_a_moved_listed_path_goes_to_the_gate_before_git_status_ends(verified, stops, monkeypatch, change, waits):
    """What the memo lists (the paths git listed, the rules) is looked at while git status runs: if any of it moved,
    the stop cannot replay, so the gate is loaded at once rather than after git ends. Only a change git alone
    can see (a clean tracked file edited, a new file) makes the replay wait for git status."""
    waited, status = [], quickstop.Reading.status
    monkeypatch.setattr(quickstop.Reading, "status", lambda self: waited.append(1) or status(self))
    CHANGES[change](verified)
    assert stops(verified)[0] == "gate"
    assert bool(waited) is waits


@pytest.mark.parametrize("layer, text", [(".claude/settings.local.json", '{"env": {"DONEGATE_VERIFY_COMMAND": "true"}}'),
                                         (".gemini/settings.json", '{"hooksConfig": {"enabled": false}}'),
                                         (".github/hooks/other.json", '{"version": 1}')])
def test_a_settings_layer_that_arms_the_gate_changed_goes_back_to_the_gate(verified, stops, layer, text):
    """A layer beside the hooks changed after a verified stop, one git ignores (as it does a local settings file),
    so the tree is the same: no replay; the gate decides, and refuses the stop as disarmed."""
    verified.write(".git/info/exclude", f"{layer}\n")
    assert stops(verified)[0] == "gate"
    verified.settle()
    assert stops(verified)[0] == "gate" and stops(verified)[0] == "replay"
    verified.write(layer, text)
    who, code, out, err = stops(verified)
    assert (who, code) == ("gate", 2) and "settings that arm the gate" in out + err


def test_a_retargeted_symlink_goes_back_to_the_gate(verified, stops):
    os.symlink("app.py", verified.root / "link")
    assert stops(verified)[0] == "gate"  # a new state: checked, passed
    verified.settle()
    assert stops(verified)[0] == "gate"  # already verified: recorded
    assert stops(verified)[0] == "replay"
    (verified.root / "link").unlink()
    os.symlink("tests/test_app.py", verified.root / "link")
    assert stops(verified)[0] == "gate"


def test_an_edit_hidden_by_skip_worktree_goes_back_to_the_gate(verified, stops):
    verified.git("update-index", "--skip-worktree", "tests/test_app.py")
    assert stops(verified)[0] == "gate"  # the flagged file is part of the state now: checked, passed
    verified.settle()
    assert stops(verified)[0] == "gate"  # already verified: recorded
    assert stops(verified)[0] == "replay"
    verified.write("tests/test_app.py", "def test_value():\n    assert 1 == 2\n")
    assert verified.git("status", "--porcelain") == " M app.py\n?? notes/\n"  # git status does not see it
    assert stops(verified)[0] == "gate"


@pytest.mark.parametrize("setting", [{"DONEGATE_PROTECT_MODE": "pristine"}, {"DONEGATE_SKIP": "1"},
                                     {"DONEGATE_VERIFY_COMMAND": "true"}, {"GIT_DIR": ".git"}])
def test_another_setting_goes_back_to_the_gate(verified, stops, setting):
    assert stops(verified, **setting)[0] == "gate"


def test_a_new_prompt_goes_back_to_the_gate(verified, stops):
    assert run_hook("user-prompt", verified.payload(), "claude-code", verified.env()).exit_code == 0
    assert stops(verified)[0] == "gate"


def test_another_session_flag_or_host_goes_back_to_the_gate(verified, stops):
    assert stops(verified, active=None)[0] == "gate"
    assert stops(verified, host="codex")[0] == "gate"
    verified.session = "session-2"
    assert stops(verified)[0] == "gate"


def test_another_session_s_pass_changes_the_stamp_and_goes_back_to_the_gate(verified, stops):
    other = Repo(verified.root, verified.state, verified.marker)
    other.session = "session-2"
    other.start()
    verified.write("app.py", "VALUE = 3\n")
    assert stops(other, active=False)[:2] == ("gate", 0)  # session 2 passes VALUE = 3: the stamp is rewritten
    verified.write("app.py", "VALUE = 2\n")
    assert stops(verified)[0] == "gate"


def test_nothing_is_recorded_when_the_tree_moves_while_the_gate_decides(verified, stops, monkeypatch):
    """The recorded key is read before the gate runs and again after; if they differ, the answer may be
    about another tree, so it is not kept."""
    import donegate.realhosts
    for memo in verified.memos():
        memo.unlink()
    original = donegate.realhosts.run_hook

    def run_hook_while_a_file_changes(*args, **kwargs):
        answer = original(*args, **kwargs)
        verified.write("notes/todo.txt", "written during the stop\n")
        return answer

    monkeypatch.setattr(donegate.realhosts, "run_hook", run_hook_while_a_file_changes)
    assert stops(verified)[:2] == ("gate", 0)
    assert verified.memos() == []


def test_a_damaged_memo_is_ignored_and_recorded_anew(verified, stops):
    memo = verified.memos()[-1]  # the flag-true stop's
    whole = quickstop.unpack(memo.read_bytes())
    for damaged in (b"12:not a memo", b"\x00\xff garbage", quickstop.pack([*whole[:10], b"9:cut"]),
                    quickstop.pack([*whole[:10], quickstop.pack([b"a", b"b"])])):
        memo.write_bytes(damaged)
        assert stops(verified)[0] == "gate"
        assert stops(verified)[0] == "replay"


def test_a_forged_memo_for_another_tree_is_not_replayed(verified, stops):
    data = verified.memos()[-1].read_bytes()
    verified.write("app.py", "VALUE = 99\n")
    verified.memos()[-1].write_bytes(data)
    who, code, *_ = stops(verified)
    assert (who, code) == ("gate", 0)
    assert verified.runs() == 2  # the gate ran the check on the new content


def test_a_memo_the_gate_did_not_seal_is_not_replayed(verified, stops):
    """A memo for this very tree, built as the quick path builds it but with another answer, is no memo without
    the seal under the state folder's key; sealed with that key it would be replayed, so the seal is what stops it."""
    memo = verified.memos()[-1]
    data = memo.read_bytes()
    items = quickstop.unpack(data[:-35])
    items[6], items[7] = b"0", b"FORGED: verified"
    forged = quickstop.pack(items)
    memo.write_bytes(forged + data[-35:])  # the old seal: not this content's
    who, code, out, _ = stops(verified)
    assert who == "gate" and "FORGED" not in out
    key = (verified.state / quickstop.SEAL_FILE).read_bytes()
    memo.write_bytes(forged + quickstop.pack([quickstop.quick_seal(key, forged)]))
    who, code, out, _ = stops(verified)
    assert who == "replay" and "FORGED" in out


@pytest.mark.parametrize("size", [0, 1, 32, 63, 64, 65, 200])
def test_quick_seal_is_keyed_blake2b(size):
    import hashlib
    key, data = os.urandom(size), os.urandom(size * 7 + 3)
    expected = hashlib.blake2b(data, key=key if size <= 64 else hashlib.blake2b(key).digest(), digest_size=32)
    assert quickstop.quick_seal(key, data) == expected.digest()
    assert quickstop.quick_seal(key + b"x", data) != expected.digest() != quickstop.quick_seal(key, data + b"x")


def test_the_memo_s_seal_key_is_the_gate_s():
    from donegate.realhosts import SEAL_KEY
    assert quickstop.SEAL_FILE == SEAL_KEY


# -- racy git: the fence --------------------------------------------------------------------------

def test_a_file_as_new_as_the_fence_is_keyed_by_what_it_holds(tmp_path):
    """Stat data taken in the clock step of the fence, or later, may not show a second write in that step:
    such a file is keyed by a digest of its content, an older one by its stat data."""
    old, young = tmp_path / "old.txt", tmp_path / "young.txt"
    old.write_text("A\n")
    clock_step(old, tmp_path / "probe")
    tmp, fence = quickstop.fence_file(str(tmp_path / "quick" / "memo"))
    young.write_text("A\n")
    paths = [os.fsencode(old), os.fsencode(young)]
    key = quickstop.fenced_stats(paths, fence)
    assert key.split(b"\0")[0] == quickstop.stat_data(paths[:1])[0] and key.split(b"\0")[1].startswith(b"#")
    young.write_text("B\n")  # same size, maybe the same clock step: the digest shows it
    assert quickstop.fenced_stats(paths, fence) != key
    young.write_text("A\n")
    assert quickstop.fenced_stats(paths, fence) == key
    old.write_text("B\n")
    assert quickstop.fenced_stats(paths, fence) != key


def test_the_key_holds_ctime_and_inode_so_a_restored_mtime_does_not_hide_an_edit(verified):
    path = verified.root / "notes/todo.txt"
    before = quickstop.stat_data([os.fsencode(path)])[0]
    st = path.stat()
    path.write_text("untracked NOTE\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_mtime_ns == st.st_mtime_ns and path.stat().st_size == st.st_size
    assert quickstop.stat_data([os.fsencode(path)])[0] != before


# -- the pieces ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    '{"session_id": "s", "cwd": "/x", "stop_hook_active": true}', ' \n{"a": [1, 2.5, -3e2, null, "\\u00e9"]}\r\n',
    '{"n": NaN, "i": -Infinity}', '{"a": {"b": [false]}}', '[]', '"text"', '12'])
def test_parse_payload_reads_what_json_loads_reads(text):
    ours, theirs = quickstop.parse_payload(text.encode()), json.loads(text.encode())
    assert json.dumps(ours) == json.dumps(theirs)


@pytest.mark.parametrize("raw", [b"", b"  ", b"{", b'{"a": 1} x', b'{"a": 1}{}', b"\xff\xfe{}", b"{'a': 1}",
                                 b'{"a": 1,}', b"\x0b{}"])
def test_parse_payload_refuses_what_json_loads_refuses(raw):
    with pytest.raises(ValueError):
        json.loads(raw)
    with pytest.raises(ValueError):
        quickstop.parse_payload(raw)


@pytest.mark.parametrize("env", [{}, {"DONEGATE_STATE_DIR": "~/gate-state"}, {"XDG_STATE_HOME": "/tmp/xdg"},
                                 {"DONEGATE_STATE_DIR": "", "XDG_STATE_HOME": ""}])
def test_the_state_folder_is_the_gate_s(env):
    assert quickstop.quick_state_dir(env) == str(default_state_dir(env))


def test_the_repository_is_the_gate_s(repo, tmp_path):
    (repo.root / "deep/er").mkdir(parents=True)
    for start in (repo.root, repo.root / "deep/er", repo.root / "missing/folder"):
        assert quickstop.quick_top(str(start)) == str(find_repo(start))
    outside = tmp_path / "outside"
    outside.mkdir()
    assert (quickstop.quick_top(str(outside)) is None) == (find_repo(outside) is None)


def test_pack_and_unpack_round_trip_and_refuse_damage():
    items = [b"", b"a:b", b"\0\n12:", bytes(range(256))]
    assert quickstop.unpack(quickstop.pack(items)) == items
    with pytest.raises(ValueError):
        quickstop.unpack(quickstop.pack(items)[:-1])
    with pytest.raises(ValueError):
        quickstop.unpack(b"x:abc")


def test_flagged_paths_reads_skip_worktree_and_assume_unchanged_tags():
    listing = b"H a.py\0S b.py\0h c d.py\0s e.py\0H S.py\0"
    assert quickstop.flagged_paths(listing) == [b"b.py", b"c d.py", b"e.py"]
    assert quickstop.flagged_paths(b"S first.py\0H x\0") == [b"first.py"]


@pytest.mark.parametrize("args, host", [(["hook", "stop"], "claude-code"), (["hook", "stop", "--host", "codex"], "codex"),
                                        (["hook", "stop", "--host=gemini"], "gemini"), (["hook", "stop", "-h"], None),
                                        (["hook", "session-start"], None), (["check", "x.ipynb"], None), ([], None)])
def test_only_a_stop_takes_the_quick_path(args, host):
    assert quickstop.hook_host(args) == host


def test_the_memo_is_private_and_its_name_is_safe(repo, stops):
    repo.session = "../../../../etc/passwd\n"
    repo.start()
    stops(repo, active=False)
    stops(repo, active=False)
    [memo] = repo.memos()
    assert memo.parent == repo.state / "quick"
    assert (memo.stat().st_mode & 0o777, memo.parent.stat().st_mode & 0o777) == (0o600, 0o700)
    assert stops(repo, active=False)[0] == "replay"


# -- as installed -------------------------------------------------------------------------------------

def test_the_console_script_replays_without_importing_the_gate(repo, monkeypatch):
    """End to end, with no file aged and no wait: `donegate hook stop` as a host runs it. The replayed stop
    prints what the gate printed and never imports donegate.hosts (-X importtime lists every import)."""
    monkeypatch.setenv("HOME", str(repo.state.parent / "home"))  # a HOME of its own, as in `passed`
    env = {**repo.env(), "PYTHONPROFILEIMPORTTIME": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)

    def hook(active: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([str(DONEGATE), "hook", "stop"], input=repo.payload(stop_hook_active=active),
                              cwd=repo.root, env=env, capture_output=True, timeout=60)

    repo.start()
    repo.write("app.py", "VALUE = 2\n")
    first = hook(False)
    assert first.returncode == 0 and repo.runs() == 1
    second, third = hook(False), hook(False)  # at once: the pass recorded the next stop's answer
    imports = [[line.split("|")[-1].strip() for line in done.stderr.decode().splitlines() if "import time" in line]
               for done in (first, second, third)]
    assert "donegate.hosts" in imports[0] and "donegate.hosts" not in imports[1] + imports[2]
    assert "json" not in imports[2] and "subprocess" not in imports[2]
    assert (third.returncode, third.stdout) == (second.returncode, second.stdout) == (0, b"")
    assert repo.runs() == 1
    assert len(repo.memos()) == 1


def test_the_console_script_still_runs_every_other_command(repo):
    done = subprocess.run([str(DONEGATE), "hook", "stop", "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "usage" in done.stdout
    done = subprocess.run([str(DONEGATE), "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip()


# -- the tool hook's quick path ----------------------------------------------------------------------

@pytest.mark.parametrize("text", ["session-1", "../../../../etc/passwd\n", "é-ok__a  b", "", "a" * 80, "_x_", "--"])
def test_the_quick_session_key_is_the_gate_s(text):
    from donegate.stopgate import safe_key
    assert quickstop.quick_safe_key(text) == safe_key(text)


def test_the_quick_state_file_is_the_gate_s(repo):
    from donegate.stopgate import session_files
    repo.start()
    quick = quickstop.quick_session_file(repo.env(), repo.session, str(repo.root))
    assert quick == str(session_files(repo.state, repo.root, repo.session)[0]) and os.path.exists(quick)


def test_the_quick_tool_marker_is_the_gate_s(repo):
    from donegate.realhosts import tool_marker
    assert quickstop.quick_tool_marker(repo.env(), repo.session) == str(tool_marker(repo.state, repo.session))


def tool_calls(repo: Repo, other: Path) -> list[tuple[str, dict]]:
    """Tool calls of every kind the policy judges, and plain ones, in the repository and beside it."""
    here = str(repo.root)
    patch = "*** Begin Patch\n*** Update File: {0}\n@@\n-a\n+b\n*** End Patch\n"
    return [
        ("Edit", {"file_path": f"{here}/app.py", "old_string": "1", "new_string": "2"}),
        ("Edit", {"file_path": "app.py", "old_string": "1", "new_string": "2"}),
        ("Write", {"file_path": f"{here}/src/new_module.py", "content": "x = 1\n"}),
        ("Write", {"file_path": f"{here}/tests/test_app.py", "content": "def test_value(): pass\n"}),
        ("Write", {"file_path": f"{here}/tests/test_brand_new.py", "content": "def test_new(): pass\n"}),
        ("Write", {"file_path": f"{here}/lib/conftest.py", "content": "\n"}),
        ("Write", {"file_path": f"{here}/verify.sh", "content": "exit 0\n"}),
        ("Write", {"file_path": f"{here}/.claude/settings.json", "content": "{}"}),
        ("Write", {"file_path": f"{here}/.gemini/settings.json", "content": "{}"}),
        ("Write", {"file_path": f"{other}/app.py", "content": "VALUE = 3\n"}),
        ("Write", {"file_path": "/etc/hostname-not-ours", "content": "x"}),
        ("NotebookEdit", {"notebook_path": f"{here}/book.ipynb", "new_source": "1"}),
        ("Bash", {"command": "python -m pytest -q"}),
        ("Bash", {"command": "ls -la && cat app.py"}),
        ("Bash", {"command": "chmod -x verify.sh"}),
        ("Bash", {"command": "rm verify.sh"}),
        ("Bash", {"command": "git update-index --skip-worktree app.py"}),
        ("Bash", {"command": "git commit --no-verify -qam wip"}),
        ("Bash", {"command": "git commit -n -qam wip"}),
        ("Bash", {"command": "git status"}),
        ("apply_patch", {"command": patch.format("app.py")}),
        ("apply_patch", {"command": patch.format("tests/test_app.py")}),
        ("apply_patch", {"command": patch.format(f"{other}/app.py")}),
        ("Read", {"file_path": f"{here}/verify.sh"}),
        ("Edit", {}),
        ("Edit", {"file_path": 7}),
    ]


@pytest.mark.parametrize("host", ["claude-code", "codex", "gemini"])
@pytest.mark.parametrize("setting", [{}, {"DONEGATE_PROTECT": "src/**"}, {"DONEGATE_PROTECT_MODE": "off"},
                                     {"DONEGATE_MAX_BLOCKS": "abc"}, {"DONEGATE_VERIFY_COMMAND": "true"}])
def test_a_quick_tool_answer_is_always_the_gate_s_own(repo, make_other, host, setting):
    """Every call goes to both: the quick path either steps aside (None) or gives exactly the gate's
    answer. And it does answer the plain calls, or it would buy nothing."""
    other = make_other()
    repo.start()
    env = repo.env(**setting)
    quick_answers = 0
    for cwd in (repo.root, repo.root / "tests", other, repo.root.parent):
        for tool, data in tool_calls(repo, other):
            raw = json.dumps({"session_id": repo.session, "cwd": str(cwd), "tool_name": tool,
                              "tool_input": data}).encode()
            marker = Path(quickstop.quick_tool_marker(env, repo.session))
            marker.unlink(missing_ok=True)
            quick = quickstop.quick_tool(host, raw, env)
            marked = marker.exists()
            full = run_hook("pre-tool-use", raw, host, env)
            assert marked == (quick is not None)  # a quick allow marks the session as the gate's allow does
            assert quick is None or quick == (full.exit_code, full.stdout, full.stderr), (cwd, tool, data, full)
            quick_answers += quick is not None
    assert (quick_answers > 0) == ("DONEGATE_PROTECT" not in str(setting) and "MAX_BLOCKS" not in str(setting)
                                   and "PROTECT_MODE" not in str(setting))


@pytest.fixture
def make_other(tmp_path):
    def make() -> Path:
        other = GitRepo(tmp_path / "other", tmp_path / "state", tmp_path / "other.marker")
        other.root.mkdir()
        other.git("init", "-q")
        other.write("app.py", "VALUE = 1\n")
        other.commit("start")
        return other.root
    return make


def test_a_tree_without_the_session_s_baseline_goes_to_the_gate_which_takes_it(repo, make_other):
    other = make_other()
    repo.start()
    raw = json.dumps({"session_id": repo.session, "cwd": str(repo.root), "tool_name": "Write",
                      "tool_input": {"file_path": f"{other}/app.py", "content": "VALUE = 3\n"}}).encode()
    assert quickstop.quick_tool("claude-code", raw, repo.env()) is None
    assert run_hook("pre-tool-use", raw, "claude-code", repo.env()).exit_code == 0
    assert quickstop.quick_tool("claude-code", raw, repo.env()) == (0, "", "")  # gated now: plain from here on


def test_the_console_script_answers_a_plain_tool_call_without_importing_the_gate(repo):
    env = {**repo.env(), "PYTHONPROFILEIMPORTTIME": "1"}
    repo.start()

    def call(path: str) -> subprocess.CompletedProcess:
        raw = json.dumps({"session_id": repo.session, "cwd": str(repo.root), "tool_name": "Write",
                          "tool_input": {"file_path": path, "content": "x\n"}})
        return subprocess.run([str(DONEGATE), "hook", "pre-tool-use"], input=raw.encode(), cwd=repo.root, env=env,
                              capture_output=True, timeout=60)

    plain, protected = call(str(repo.root / "src" / "new.py")), call(str(repo.root / "tests" / "test_app.py"))
    imported = [[line.split("|")[-1].strip() for line in d.stderr.decode().splitlines() if "import time" in line]
                for d in (plain, protected)]
    assert (plain.returncode, plain.stdout) == (0, b"")
    assert "donegate.hosts" not in imported[0] and "re" not in imported[0] and "json" not in imported[0]
    assert "donegate.hosts" in imported[1]
    assert json.loads(protected.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


# -- one reading of the tree per stop ------------------------------------------------------------------

def test_the_quick_path_reads_git_status_exactly_as_the_gate_does():
    from donegate.treestate import SHORTCUTS_OFF, FLAGGED_ARGS, STATUS_ARGS
    assert (quickstop.STATUS, quickstop.FLAGGED, quickstop.SHORTCUTS_OFF) == (STATUS_ARGS, FLAGGED_ARGS, SHORTCUTS_OFF)


@pytest.fixture
def git_log(tmp_path):
    """A `git` first on PATH that logs its subcommand to a file, then runs the real git."""
    import shutil
    real = shutil.which("git")
    folder = tmp_path / "bin"
    folder.mkdir()
    log = tmp_path / "git.log"
    (folder / "git").write_text(f'#!/bin/sh\n[ "$1" = -C ] && echo "$@" | sed "s/^-C [^ ]* //; s/-c [^ ]* //g; '
                                f's/ .*//" >> {log}\nexec {real} "$@"\n')  # the subcommand, past -C and -c
    (folder / "git").chmod(0o755)

    def calls(since: int = 0) -> list[str]:
        return log.read_text().splitlines()[since:] if log.exists() else []

    return str(folder), calls


def test_a_stop_that_runs_the_check_reads_the_tree_once(repo, git_log):
    """The quick path's reading is the gate's: git status runs once, before the decision, and not again after
    the check (the stamp is the state the check ran on), nor to record: the stat data of the listed paths
    show whether anything moved. A replay runs git status alone (no ls-files left running at its exit)."""
    folder, calls = git_log
    env = {**repo.env(), "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}
    repo.start()

    def stop(active: bool) -> subprocess.CompletedProcess:
        return subprocess.run([str(DONEGATE), "hook", "stop"], input=repo.payload(stop_hook_active=active),
                              cwd=repo.root, env=env, capture_output=True, timeout=60)

    repo.write("app.py", "VALUE = 2\n")
    seen = len(calls())
    assert stop(False).returncode == 0 and repo.runs() == 1
    checking = calls(seen)
    assert (checking.count("status"), checking.count("ls-files")) == (1, 1), checking
    repo.settle()
    seen = len(calls())
    assert stop(True).returncode == 0 and repo.runs() == 1
    recording = calls(seen)
    assert (recording.count("status"), len(recording)) == (1, 2), recording
    seen = len(calls())
    assert stop(True).returncode == 0
    assert calls(seen) == ["status"]


def test_a_tool_call_forgets_the_session_s_recorded_stops_in_that_tree(verified, capsys):
    """The agent is about to write: the next stop is the gate's to decide, and the quick path then loads
    the gate while git reads, instead of after a replay that could not match."""
    assert verified.memos()
    raw = json.dumps({"session_id": verified.session, "cwd": str(verified.root), "tool_name": "Edit",
                      "tool_input": {"file_path": str(verified.root / "app.py"), "old_string": "2",
                                     "new_string": "3"}}).encode()
    assert quickstop.tool_hook("claude-code", raw, verified.env()) == 0
    capsys.readouterr()
    assert verified.memos() == []


@pytest.mark.parametrize("argv, broken", [(["hook", "stop", "--host", "codex"], "stop_hook"),
                                          (["hook", "pre-tool-use", "--host", "gemini"], "tool_hook")])
def test_a_fault_of_the_gate_s_own_refuses_rather_than_exits_1(monkeypatch, capsys, argv, broken):
    """Exit 1 is a hook error that every host reads as "go ahead": whatever goes wrong inside the hook
    command itself ends in exit 2 with the cause on stderr."""
    import donegate.quickstop as quickstop

    def fault(*args, **kwargs):
        raise NameError("name 'typed_payload' is not defined")

    monkeypatch.setattr(quickstop, broken, fault)
    assert quickstop.main(argv) == 2
    assert "refuses rather than allow" in capsys.readouterr().err



@pytest.fixture
def user_git(tmp_path, monkeypatch) -> Path:
    """git's user folder ($XDG_CONFIG_HOME/git, HOME too) inside tmp_path, before the session starts."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL")
    (tmp_path / "config" / "git").mkdir(parents=True)
    return tmp_path / "config" / "git"


def test_a_rule_in_git_s_user_files_goes_back_to_the_gate(user_git, verified, stops):
    """After a verified stop, the user's attributes and configuration (outside the tree) give a clean tracked file
    a filter that cleans an edit of it back to the committed bytes: git status is as before. The memo lists those
    files among the gate's (its snapshot reads them), and git's refresh of its index moves the index file too:
    either way the stop is the gate's, which sees the change and runs the check."""
    (user_git / "attributes").write_text("tests/test_app.py filter=back\n")
    (user_git / "config").write_text('[filter "back"]\n\tclean = tr X T\n')
    verified.write("tests/test_app.py", verified.read("tests/test_app.py").replace("True", "Xrue"))
    assert "test_app" not in verified.git("status", "--porcelain")
    assert stops(verified)[0] == "gate" and verified.runs() == 2
