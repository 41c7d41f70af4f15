"""The stop gate's contract (DESIGN 2.7), each rule pinned on a real temporary git repository.

Every repository is built here with git init/add/commit. Its acceptance script `verify.sh` appends a
line to a marker file outside the repository each time it runs (so a test can count runs) and passes
iff `status.txt` says what the protected file `tests/expected.txt` says ("ok").
"""
from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gitrepo import GitRepo

from donegate.realhosts import SessionGate, mark_tool_call, note_started, session_started
from donegate.stopgate import Settings, StopGate
from donegate.treestate import FLAGGED_ARGS, STATUS_ARGS, ExactGate, GateError, blob_id, git, snapshot

PY = sys.executable

STATUS_CHECK = """\
if [ "$(cat status.txt)" = "$(cat tests/expected.txt)" ]; then
  echo "ok: status.txt matches tests/expected.txt"
  exit 0
fi
echo "FAIL: status.txt says '$(cat status.txt)', tests/expected.txt wants '$(cat tests/expected.txt)'"
exit 1
"""

UNITTEST_CHECK = f"""\
{shlex.quote(PY)} -m unittest discover -s tests -v
code=$?
i=0
while [ $i -lt 60 ]; do echo "log line $i"; i=$((i + 1)); done
exit $code
"""

PYTEST_CHECK = f"exec {shlex.quote(PY)} -m pytest -q -p no:cacheprovider tests\n"

UNITTEST_TEST = """\
import unittest

from app import STATUS


class StatusTest(unittest.TestCase):
    def test_status_is_ok(self):
        self.assertEqual(STATUS, "ok")
"""

PYTEST_TEST = 'from app import STATUS\n\n\ndef test_status_is_ok():\n    assert STATUS == "ok"\n'

# The conftest.py hole: a hook that turns every failing test report into a pass.
CHEATING_CONFTEST = """\
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        report.outcome = "passed"
"""


class Repo(GitRepo):
    """A real git repository in a temporary folder, with a marker file counting its check's runs."""

    def settings(self, **overrides) -> Settings:
        return Settings(state_dir=self.state, **overrides)

    def gate(self, session: str = "session-1", **overrides) -> StopGate:
        return StopGate(self.root, session, self.settings(**overrides))

    def session_gate(self, session: str = "session-1", **overrides) -> SessionGate:
        """The gate as the real hosts run it (appendix 95)."""
        return SessionGate(self.root, session, self.settings(**overrides))

    def exact_gate(self, session: str = "session-1", **overrides) -> ExactGate:
        """The gate reading the tree state exactly (appendix 94), as `donegate hook` does."""
        return ExactGate(self.root, session, self.settings(**overrides))

    def started(self, session: str = "session-1", exact: bool = False, **overrides) -> StopGate:
        gate = (self.exact_gate if exact else self.gate)(session, **overrides)
        gate.start()
        return gate


@pytest.fixture(autouse=True)
def hermetic(hermetic_gate):
    """Every test runs in the isolated environment of conftest.hermetic_gate."""


@pytest.fixture
def make_repo(tmp_path):
    """make_repo(name, check=..., files={...}): a committed repository whose verify.sh runs `check`."""

    def make(name: str = "repo", check: str = STATUS_CHECK, files: dict[str, str] | None = None) -> Repo:
        repo = Repo(tmp_path / name, tmp_path / "state", tmp_path / f"{name}.marker")
        repo.root.mkdir()
        repo.git("init", "-q")
        repo.write("status.txt", "bad\n")
        repo.write("tests/expected.txt", "ok\n")
        repo.write("notes.txt", "notes\n")
        repo.write("app.py", 'STATUS = "bad"\n')
        repo.write("verify.sh", f"#!/bin/sh\necho run >> {shlex.quote(str(repo.marker))}\n{check}")
        repo.path("verify.sh").chmod(0o755)
        for rel, text in (files or {}).items():
            repo.write(rel, text)
        repo.commit("start")
        return repo

    return make


@pytest.fixture
def repo(make_repo) -> Repo:
    return make_repo()


def fix(repo: Repo) -> None:
    repo.write("status.txt", "ok\n")


def still_broken(repo: Repo, n: int) -> None:
    """A new change that does not fix anything (so each stop has something new to check)."""
    repo.write("status.txt", f"bad {n}\n")


# -- what counts as a change -------------------------------------------------------------------

def test_commit_does_not_bypass_the_gate(repo):
    gate = repo.started()
    still_broken(repo, 1)
    repo.commit("half a fix")
    assert repo.git("status", "--porcelain") == ""
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit) == ("block", "check_failed")
    assert "status.txt" in verdict.changed
    assert repo.runs() == 1


def test_sed_in_place_on_a_tracked_file_counts_as_a_change(repo):
    gate = repo.started()
    subprocess.run(["sed", "-i", "s/bad/mad/", "status.txt"], cwd=repo.root, check=True)
    assert repo.read("status.txt") == "mad\n"
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit, verdict.changed) == ("block", "check_failed", ("status.txt",))
    assert repo.runs() == 1


def test_read_only_session_in_an_already_dirty_repository_is_not_gated(repo):
    still_broken(repo, 1)
    repo.write("scratch.txt", "untracked before the session\n")
    gate = repo.started()
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.status, verdict.exit) == ("allow", "completed", "not_gated")
    assert repo.runs() == 0


def test_resume_keeps_the_first_baseline(repo):
    repo.started()
    still_broken(repo, 1)
    resumed = repo.gate()
    resumed.start(source="resume")
    verdict = resumed.on_stop(False)
    assert (verdict.action, verdict.exit) == ("block", "check_failed")
    assert repo.runs() == 1


# -- the pass stamp ----------------------------------------------------------------------------

def passed_once(repo: Repo, prepare=lambda: None) -> StopGate:
    """A gate whose first stop passed; `prepare` shapes the tree that passed (so the next edit changes
    a path that already differs from HEAD, not a new one)."""
    gate = repo.started()
    prepare()
    fix(repo)
    assert gate.on_stop(False).exit == "passed"
    assert repo.runs() == 1
    return gate


def test_identical_verified_tree_is_not_rerun(repo):
    gate = passed_once(repo)
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.status, verdict.exit) == ("allow", "verified", "already_verified")
    assert repo.runs() == 1


def test_a_stop_that_needs_no_check_writes_nothing_even_when_it_starts_a_stretch(repo):
    """An already-verified stop, or one back at the baseline, ends its stretch at once: the next stop
    starts its own, so nothing is saved (and donegate.quickstop may replay such a stop)."""
    gate = passed_once(repo)
    files = (gate.state_path, gate.stamp_path)
    before = [(p.read_bytes(), p.stat().st_mtime_ns) for p in files]
    assert gate.on_stop(False).exit == "already_verified"
    repo.git("checkout", "--", "status.txt")
    assert gate.on_stop(False).exit == "not_gated"
    assert [(p.read_bytes(), p.stat().st_mtime_ns) for p in files] == before


def test_pass_stamp_is_invalidated_by_content(repo):
    gate = passed_once(repo, lambda: repo.write("notes.txt", "draft 1\n"))
    repo.write("notes.txt", "draft 2\n")
    assert gate.on_stop(False).exit == "passed"
    assert repo.runs() == 2


def test_pass_stamp_is_invalidated_by_file_mode(repo):
    gate = passed_once(repo, lambda: repo.write("notes.txt", "draft 1\n"))
    repo.path("notes.txt").chmod(0o755)
    assert gate.on_stop(False).exit == "passed"
    assert repo.runs() == 2


def test_pass_stamp_is_invalidated_by_symlink_target(repo):
    os.symlink("notes.txt", repo.path("current"))
    repo.commit("a link")

    def retarget(target: str) -> None:
        repo.path("current").unlink()
        os.symlink(target, repo.path("current"))

    gate = passed_once(repo, lambda: retarget("app.py"))
    retarget("status.txt")
    assert gate.on_stop(False).exit == "passed"
    assert repo.runs() == 2


def test_pass_stamp_sees_every_untracked_file_with_no_cap(repo):
    def many() -> None:
        for i in range(300):
            repo.write(f"extra/f{i:03d}.txt", "x\n")

    gate = passed_once(repo, many)
    repo.write("extra/f299.txt", "y\n")
    assert gate.on_stop(False).exit == "passed"
    assert repo.runs() == 2


def test_what_the_check_writes_where_git_ignores_it_is_not_a_change(make_repo):
    """The tree is read once per stop, before the check: a report the check writes into an ignored folder
    leaves the stamped state as it was (after a pass) and the failed one too (no change: hand over)."""
    for check, first, second in ((STATUS_CHECK, fix, "already_verified"), (STATUS_CHECK, None, "no_change")):
        repo = make_repo(f"repo-{second}", check="mkdir -p reports; date +%s%N >> reports/check.log\n" + check,
                         files={".gitignore": "reports/\n"})
        gate = repo.started()
        (first or (lambda r: still_broken(r, 1)))(repo)
        assert gate.on_stop(False).exit == ("passed" if first else "check_failed")
        assert repo.path("reports/check.log").exists()
        assert gate.on_stop(True).exit == second
        assert repo.runs() == 1


def test_a_state_the_check_itself_changed_is_checked_again_never_stamped(make_repo):
    """A check that changes a file git sees (here: it rewrites app.py after the tests ran) leaves a state no
    check ran on. The stamp is the state the check ran on, so the next stop runs the check again."""
    repo = make_repo(check=STATUS_CHECK.replace("  exit 0", "  echo 'STATUS = \"patched\"' >> app.py; exit 0", 1))
    gate = repo.started()
    fix(repo)
    assert gate.on_stop(False).exit == "passed"
    assert "patched" in repo.path("app.py").read_text()
    assert gate.on_stop(True).exit == "passed", "the patched state was never checked: it must not read as verified"
    assert repo.runs() == 2


# -- armed / disarmed --------------------------------------------------------------------------

def test_deleting_verify_sh_blocks(repo):
    gate = repo.started()
    fix(repo)
    repo.path("verify.sh").unlink()
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit) == ("block", "disarmed")
    assert "deleted" in verdict.message


def test_removing_the_run_bit_of_verify_sh_blocks(repo):
    gate = repo.started()
    fix(repo)
    repo.path("verify.sh").chmod(0o644)
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit) == ("block", "disarmed")
    assert repo.runs() == 0


def test_an_edited_verify_sh_blocks_without_running_even_when_the_edit_looks_harmless(repo):
    """The check is the operator's: any change to it in the session is a disarmed stop, not a pass with a
    warning (which a host may not show), and the agent's version of it is never run."""
    gate = repo.started()
    fix(repo)
    with repo.path("verify.sh").open("a") as f:
        f.write("# an extra line\n")
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit) == ("block", "disarmed")
    assert "changed in this session" in verdict.message and repo.runs() == 0


def test_a_script_verify_sh_runs_or_sources_is_the_check_too(make_repo):
    """verify.sh runs scripts/check.sh and sources scripts/env.sh by name (and names app.py only as data): a
    session that rewrites either script to pass is disarmed and its version never runs; putting the script
    back and fixing the work passes; app.py stays the agent's to change."""
    for victim in ("scripts/check.sh", "scripts/env.sh"):
        repo = make_repo(victim.split("/")[1].replace(".", "-"), check=". scripts/env.sh\n./scripts/check.sh  # app.py\n",
                         files={"scripts/check.sh": "#!/bin/sh\n" + STATUS_CHECK, "scripts/env.sh": "CHECKED=1\n"})
        repo.path("scripts/check.sh").chmod(0o755)
        repo.commit("the check's scripts")
        gate = SessionGate(repo.root, "session-1", repo.settings())
        gate.start()
        still_broken(repo, 1)
        assert gate.on_stop(False).exit == "check_failed" and repo.runs() == 1
        repo.write(victim, "#!/bin/sh\nexit 0\n")
        verdict = gate.on_stop(True)
        assert (verdict.action, verdict.exit) == ("block", "disarmed"), verdict
        assert victim in verdict.message and "git checkout" in verdict.message and repo.runs() == 1
        repo.git("checkout", "HEAD", "--", victim)
        fix(repo)
        repo.write("app.py", 'STATUS = "ok"\n')
        assert gate.on_stop(True).exit == "passed" and repo.runs() == 2


def test_unedited_verify_sh_passes_without_a_warning(repo):
    gate = repo.started()
    fix(repo)
    verdict = gate.on_stop(False)
    assert verdict.exit == "passed" and verdict.warnings == ()


# -- protected tests ---------------------------------------------------------------------------

def test_editing_a_protected_test_blocks_and_names_it(repo):
    gate = repo.started()
    repo.write("tests/expected.txt", "bad\n")
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.status, verdict.exit) == ("block", "blocked", "protected")
    assert "tests/expected.txt (edited)" in verdict.message
    assert repo.runs() == 0


def test_deleting_a_protected_test_blocks(repo):
    gate = repo.started()
    fix(repo)
    repo.path("tests/expected.txt").unlink()
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit) == ("block", "protected")
    assert "tests/expected.txt (deleted)" in verdict.message


def test_chmod_of_a_protected_test_blocks(repo):
    gate = repo.started()
    fix(repo)
    repo.path("tests/expected.txt").chmod(0o755)
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit) == ("block", "protected")
    assert "tests/expected.txt (mode changed 100644 -> 100755)" in verdict.message


def test_adding_a_new_test_file_is_allowed(repo):
    gate = repo.started()
    fix(repo)
    repo.write("tests/test_more.py", "def test_more():\n    assert True\n")
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit) == ("allow", "passed")
    assert "tests/test_more.py" in verdict.changed


def test_adding_a_conftest_blocks(repo):
    gate = repo.started()
    fix(repo)
    repo.write("tests/conftest.py", CHEATING_CONFTEST)
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit) == ("block", "protected")
    assert "tests/conftest.py (added conftest.py" in verdict.message
    assert repo.runs() == 0


def test_protect_mode_off_lets_an_edited_test_through(repo):
    gate = repo.started(protect_mode="off")
    repo.write("tests/expected.txt", "bad\n")
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit) == ("allow", "passed")


def test_pristine_mode_runs_the_check_against_the_baseline_copy_of_an_edited_test(repo):
    gate = repo.started(protect_mode="pristine")
    repo.write("tests/expected.txt", "bad\n")
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit) == ("block", "check_failed")
    assert "wants 'ok'" in verdict.message
    assert repo.read("tests/expected.txt") == "bad\n"
    assert repo.runs() == 1


def test_pristine_mode_restores_an_uncommitted_test_as_it_was_at_the_session_start(repo):
    repo.write("tests/expected.txt", "good\n")
    repo.started()
    repo.write("tests/expected.txt", "bad\n")
    gate = repo.gate(protect_mode="pristine")
    repo.write("status.txt", "good\n")
    assert gate.on_stop(False).exit == "passed"
    repo.write("status.txt", "bad\n")
    verdict = gate.on_stop(False)
    assert verdict.exit == "check_failed" and "wants 'good'" in verdict.message


@pytest.fixture
def pytest_repo(make_repo) -> Repo:
    return make_repo(check=PYTEST_CHECK, files={"pytest.ini": "[pytest]\n", "tests/test_app.py": PYTEST_TEST})


def test_added_conftest_turns_a_failing_check_green_when_protection_is_off(pytest_repo):
    gate = pytest_repo.started(protect_mode="off")
    pytest_repo.write("tests/conftest.py", CHEATING_CONFTEST)
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit) == ("allow", "passed")


@pytest.mark.parametrize("mode", ["block", "pristine"])
def test_a_nested_repository_under_a_protected_path_is_not_a_blob_to_keep(repo, mode):
    """An untracked repository inside tests/ (a fixture, a vendored project) is one entry in the tree state,
    identified by its own tree state: taking the baseline must not try to read it as a file, pristine mode
    leaves it be, and an edit inside it is a change to a protected path, which block mode refuses."""
    nested = repo.path("tests/fixtures/upstream")
    nested.mkdir(parents=True)
    GitRepo(nested, repo.state, repo.marker).git("init", "-q")
    (nested / "README").write_text("upstream\n")
    gate = repo.started(exact=True, protect_mode=mode)
    (nested / "README").write_text("changed upstream\n")
    fix(repo)
    verdict = gate.on_stop(False)
    if mode == "block":
        assert (verdict.action, verdict.exit) == ("block", "protected"), verdict.message
        assert "tests/fixtures/upstream/ (edited)" in verdict.message
    else:
        assert (verdict.action, verdict.exit) == ("allow", "passed"), verdict.message


def test_pristine_mode_removes_an_added_conftest_in_the_copy(pytest_repo):
    gate = pytest_repo.started(protect_mode="pristine")
    pytest_repo.write("tests/conftest.py", CHEATING_CONFTEST)
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit) == ("block", "check_failed")
    assert "test_status_is_ok" in verdict.message
    assert pytest_repo.path("tests/conftest.py").exists()


def test_an_edit_hidden_with_skip_worktree_still_counts(repo):
    gate = repo.started(exact=True)
    still_broken(repo, 1)
    repo.git("update-index", "--skip-worktree", "status.txt")
    assert repo.git("status", "--porcelain") == ""
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit) == ("block", "check_failed")
    assert repo.runs() == 1


def hide_a_cheating_conftest(repo: Repo) -> None:
    repo.write("tests/conftest.py", CHEATING_CONFTEST)
    with repo.path(".git/info/exclude").open("a") as f:
        f.write("tests/conftest.py\n")


def test_a_conftest_hidden_by_git_info_exclude_still_blocks(pytest_repo):
    gate = pytest_repo.started()
    pytest_repo.write("app.py", 'STATUS = "nearly"\n')
    hide_a_cheating_conftest(pytest_repo)
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit) == ("block", "protected")
    assert "tests/conftest.py" in verdict.message


def test_pristine_mode_removes_a_conftest_hidden_by_git_info_exclude(pytest_repo):
    gate = pytest_repo.started(protect_mode="pristine")
    pytest_repo.write("app.py", 'STATUS = "nearly"\n')
    hide_a_cheating_conftest(pytest_repo)
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit) == ("block", "check_failed")


# -- attempts ----------------------------------------------------------------------------------

def test_stop_hook_active_never_lets_a_failing_stop_through(repo):
    gate = repo.started()
    still_broken(repo, 1)
    assert gate.on_stop(False).blocks
    still_broken(repo, 2)
    verdict = gate.on_stop(True)
    assert (verdict.action, verdict.exit) == ("block", "check_failed")
    assert repo.runs() == 2


def test_attempt_count_goes_on_across_stop_hook_active(repo):
    gate = repo.started()
    attempts = []
    for n, flag in enumerate((False, True, True), 1):
        still_broken(repo, n)
        attempts.append(gate.on_stop(flag).attempt)
    assert attempts == [1, 2, 3]


def test_stop_hook_active_false_starts_a_new_count(repo):
    gate = repo.started()
    for n, flag in enumerate((False, True), 1):
        still_broken(repo, n)
        gate.on_stop(flag)
    still_broken(repo, 3)
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.attempt) == ("block", 1)


def test_new_prompt_starts_a_new_count(repo):
    gate = repo.started()
    for n in (1, 2):
        still_broken(repo, n)
        gate.on_stop(None)
    gate.new_prompt()
    still_broken(repo, 3)
    verdict = gate.on_stop(None)
    assert (verdict.action, verdict.attempt) == ("block", 1)


def test_host_that_never_sends_the_flag_is_bounded_by_max_blocks(repo):
    settings = Settings.from_env({"DONEGATE_MAX_BLOCKS": "2", "DONEGATE_STATE_DIR": str(repo.state)})
    gate = StopGate(repo.root, "no-flag", settings)
    gate.start()
    verdicts = []
    for n in (1, 2, 3):
        still_broken(repo, n)
        verdicts.append(gate.on_stop(None))
    assert [v.action for v in verdicts] == ["block", "block", "allow"]
    last = verdicts[-1]
    assert (last.status, last.exit) == ("yielded_unverified", "budget")
    assert "HANDED OVER UNVERIFIED" in last.message
    assert repo.runs() == 3


def test_stop_with_no_change_since_a_failure_hands_over_without_running_the_check(repo):
    gate = repo.started()
    still_broken(repo, 1)
    assert gate.on_stop(None).blocks
    verdict = gate.on_stop(None)
    assert (verdict.action, verdict.status, verdict.exit) == ("allow", "yielded_unverified", "no_change")
    assert "HANDED OVER UNVERIFIED" in verdict.message
    assert repo.runs() == 1


def test_max_blocks_zero_reports_and_never_blocks(repo):
    gate = repo.started(max_blocks=0)
    still_broken(repo, 1)
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.status, verdict.exit) == ("allow", "yielded_unverified", "report_only")
    assert repo.runs() == 1


def test_disarmed_blocks_count_against_the_budget_and_hand_over_as_blocked(repo):
    gate = repo.started(max_blocks=2)
    repo.path("verify.sh").unlink()
    verdicts = []
    for n in (1, 2, 3):
        still_broken(repo, n)
        verdicts.append(gate.on_stop(None))
    assert [(v.action, v.exit) for v in verdicts] == [("block", "disarmed"), ("block", "disarmed"),
                                                      ("allow", "budget")]
    assert verdicts[-1].status == "blocked" and "REFUSED" in verdicts[-1].message


def test_protected_block_with_no_new_change_hands_over_as_blocked(repo):
    gate = repo.started()
    repo.write("tests/expected.txt", "bad\n")
    assert gate.on_stop(False).exit == "protected"
    verdict = gate.on_stop(True)
    assert (verdict.action, verdict.status, verdict.exit) == ("allow", "blocked", "no_change")
    assert "REFUSED" in verdict.message
    assert repo.runs() == 0


# -- the block message -------------------------------------------------------------------------

def test_block_message_is_tagged_as_from_the_acceptance_check_not_the_user(repo):
    gate = repo.started()
    still_broken(repo, 1)
    message = gate.on_stop(False).message
    assert message.startswith("[donegate] Message from the acceptance check, not from the user.")


def test_block_message_shows_the_failure_naming_lines_before_the_tail(make_repo):
    repo = make_repo(check=UNITTEST_CHECK, files={"tests/test_app.py": UNITTEST_TEST})
    gate = repo.started()
    repo.write("app.py", 'STATUS = "nearly"\n')
    message = gate.on_stop(False).message
    fail_line = "FAIL: test_status_is_ok (test_app.StatusTest"
    assert fail_line in message
    assert message.index(fail_line) < message.index("Last 30 lines of the output:")
    assert "log line 59" in message
    assert fail_line not in message[message.index("Last 30 lines of the output:"):]


# -- syntax errors -----------------------------------------------------------------------------

def test_syntax_error_in_a_changed_python_file_blocks_before_the_check_runs(repo):
    gate = repo.started()
    fix(repo)
    repo.write("app.py", 'STATUS = "ok"\n\ndef broken(:\n    pass\n')
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit) == ("block", "syntax_error")
    assert "app.py, line 3: SyntaxError" in verdict.message
    assert repo.runs() == 0


# -- the recorded bypass -----------------------------------------------------------------------

def test_skip_allows_says_skipped_records_a_row_and_does_not_run_the_check(repo):
    settings = Settings.from_env({"DONEGATE_SKIP": "1", "DONEGATE_STATE_DIR": str(repo.state)})
    gate = StopGate(repo.root, "skipper", settings)
    gate.start()
    still_broken(repo, 1)
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit) == ("allow", "skipped")
    assert "SKIPPED" in verdict.message
    rows = [json.loads(line) for line in (repo.state / "skips.jsonl").read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["repo"] == str(repo.root) and rows[0]["session"] == "skipper"
    assert repo.runs() == 0


# -- the ledger --------------------------------------------------------------------------------

def ledger_gate(repo: Repo, tmp_path: Path, **env: str) -> StopGate:
    settings = Settings.from_env({"DONEGATE_STATE_DIR": str(repo.state),
                                  "DONEGATE_LEDGER_DIR": str(tmp_path / "ledger" / "rows"), **env})
    gate = StopGate(repo.root, "ledger", settings)
    gate.start()
    return gate


def test_ledger_is_off_unless_asked_for(repo, tmp_path):
    gate = ledger_gate(repo, tmp_path)
    for n, flag in enumerate((False, True, False), 1):
        still_broken(repo, n)
        assert gate.on_stop(flag).blocks
    assert not (tmp_path / "ledger").exists()
    assert not list(repo.state.rglob("ledger.jsonl"))


def ledger_rows(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "ledger" / "rows" / "ledger.jsonl").read_text().splitlines()]


def test_ledger_writes_one_row_per_stretch_not_per_retry(repo, tmp_path):
    gate = ledger_gate(repo, tmp_path, DONEGATE_LEDGER="1")
    for n, flag in enumerate((False, True, None), 1):
        still_broken(repo, n)
        assert gate.on_stop(flag, claim="all tests pass").blocks
    assert len(ledger_rows(tmp_path)) == 1
    still_broken(repo, 4)
    assert gate.on_stop(False, claim="really done").blocks
    rows = ledger_rows(tmp_path)
    assert [r["claim"] for r in rows] == ["all tests pass", "really done"]


def test_ledger_row_has_the_promised_fields(repo, tmp_path):
    gate = ledger_gate(repo, tmp_path, DONEGATE_LEDGER="1")
    still_broken(repo, 1)
    gate.on_stop(False, claim="all tests pass")
    (row,) = ledger_rows(tmp_path)
    assert set(row) == {"ts", "repo", "exit_code", "claim", "evidence_demanded", "actual"}
    assert (row["repo"], row["exit_code"], row["claim"], row["evidence_demanded"]) == (
        str(repo.root), 1, "all tests pass", "./verify.sh")
    assert isinstance(row["actual"], list), "actual is a list of lines, the row format the peer gate publishes"
    assert row["actual"][0].startswith("FAIL: status.txt says 'bad 1'")


def test_a_ledger_row_of_a_check_that_names_no_failure_keeps_the_end_of_its_output(make_repo, tmp_path):
    repo = make_repo(check="echo one\necho two\nexit 3\n")
    gate = ledger_gate(repo, tmp_path, DONEGATE_LEDGER="1")
    still_broken(repo, 1)
    assert gate.on_stop(False, claim="done").blocks
    (row,) = ledger_rows(tmp_path)
    assert row["actual"] == ["one", "two"] and row["exit_code"] == 3


def test_ledger_file_is_0600_in_a_0700_directory(repo, tmp_path):
    gate = ledger_gate(repo, tmp_path, DONEGATE_LEDGER="1")
    still_broken(repo, 1)
    gate.on_stop(False)
    folder = tmp_path / "ledger" / "rows"
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(folder / "ledger.jsonl").st_mode) == 0o600


# -- private state, hostile session ids --------------------------------------------------------

HOSTILE_IDS = ["../../../etc/passwd", "a/b", "..", "x" * 5000, "a_b", "a.b", "a b", "a:b", "a;b", "a\\b"]


def test_hostile_session_ids_stay_inside_the_state_dir(repo, tmp_path):
    sessions = repo.state.resolve() / "sessions"
    for session in HOSTILE_IDS:
        gate = repo.started(session)
        still_broken(repo, 1)
        gate.on_stop(False)
        assert gate.state_path.resolve().parent == sessions
        assert len(gate.state_path.name) < 255
    assert sorted(p.name for p in tmp_path.iterdir()) == ["repo", "repo.marker", "state"]


def test_different_session_ids_never_share_a_state_file(repo):
    paths = {repo.started(session).state_path for session in HOSTILE_IDS}
    assert len(paths) == len(HOSTILE_IDS)
    assert len(list((repo.state / "sessions").iterdir())) == len(HOSTILE_IDS)


def test_state_dir_and_its_files_are_private(repo):
    repo.write("tests/expected.txt", "ok\n\n")  # a dirty protected file: the baseline keeps a copy of it
    gate = repo.started(ledger=True)
    still_broken(repo, 1)
    assert gate.on_stop(False).blocks
    fix(repo)
    assert gate.on_stop(True).exit == "passed"
    folders = [repo.state, *(p for p in repo.state.rglob("*") if p.is_dir())]
    files = [p for p in repo.state.rglob("*") if p.is_file()]
    assert {p.parent.name for p in files} >= {"sessions", "stamps", "blobs", "state"}
    assert {str(p): oct(stat.S_IMODE(os.stat(p).st_mode)) for p in folders} == {str(p): "0o700" for p in folders}
    assert {str(p): oct(stat.S_IMODE(os.stat(p).st_mode)) for p in files} == {str(p): "0o600" for p in files}


# -- repository A and B ------------------------------------------------------------------------

def test_change_in_repo_a_never_runs_a_check_on_a_stop_in_repo_b(make_repo):
    a, b = make_repo("a"), make_repo("b")
    a.started("shared")
    in_b = b.started("shared")
    still_broken(a, 1)
    verdict = in_b.on_stop(False)
    assert (verdict.action, verdict.status, verdict.exit) == ("allow", "completed", "not_gated")
    assert (a.runs(), b.runs()) == (0, 0)


def test_a_stop_in_a_repo_the_session_never_started_in_takes_a_late_baseline_and_gates_what_is_uncommitted(make_repo):
    """The session's start was not seen in B (it began elsewhere): B's baseline is taken late, clean at
    HEAD, so B's uncommitted break is checked, by B's check alone, and the person is told why."""
    a, b = make_repo("a"), make_repo("b")
    a.started("shared")
    note_started(b.state, "shared")  # the gate saw the session start (in A)
    mark_tool_call(b.state, "shared")  # the session has made a tool call that can write
    still_broken(a, 1)
    still_broken(b, 1)
    verdict = b.session_gate("shared").on_stop(False)
    assert (verdict.action, verdict.status, verdict.exit) == ("block", "yielded_unverified", "check_failed")
    assert (a.runs(), b.runs()) == (0, 1)
    assert any("middle of it" in w for w in verdict.warnings)
    fix(b)
    verdict = b.session_gate("shared").on_stop(True)
    assert (verdict.action, verdict.exit) == ("allow", "passed")


def test_a_session_met_late_that_made_no_tool_call_is_not_gated_on_changes_that_are_not_its_own(make_repo):
    """The peer gate's "unmarked dirty session": the tree is dirty, but the session (met here only in its
    middle) has made no tool call that can write, so the changes are someone else's."""
    b = make_repo("b")
    note_started(b.state, "chat")  # it started elsewhere
    still_broken(b, 1)
    verdict = b.session_gate("chat").on_stop(False)
    assert (verdict.action, verdict.status, verdict.exit) == ("allow", "completed", "not_gated")
    assert b.runs() == 0 and "no tool call that can write" in verdict.message
    mark_tool_call(b.state, "chat")
    still_broken(b, 2)
    assert b.session_gate("chat").on_stop(True).exit == "check_failed" and b.runs() == 1


def test_a_late_baseline_at_a_clean_tree_changes_nothing(make_repo):
    b = make_repo("b")
    note_started(b.state, "late")
    verdict = b.session_gate("late").on_stop(False)
    assert (verdict.action, verdict.status, verdict.exit) == ("allow", "completed", "not_gated")
    assert b.runs() == 0 and not verdict.warnings


# -- a state the gate cannot vouch for: missing, never started, altered ---------------------------

def committed_wrong_fix(repo: Repo, session: str = "s") -> SessionGate:
    """A session started, then its wrong fix committed: the tree is clean at a broken HEAD."""
    gate = repo.session_gate(session)
    gate.start()
    still_broken(repo, 1)
    repo.commit("a wrong fix")
    return gate


def test_a_deleted_state_folder_fails_closed_the_check_judges_the_tree(make_repo):
    """The agent commits a wrong fix and deletes the gate's state folder: the stop finds no state and no record
    of the session's start, so it cannot take HEAD for the start; the check runs on the tree and refuses."""
    import shutil
    repo = make_repo()
    committed_wrong_fix(repo)
    shutil.rmtree(repo.state)
    verdict = repo.session_gate("s").on_stop(True)
    assert (verdict.action, verdict.exit, repo.runs()) == ("block", "check_failed", 1)
    assert any("no record of this session's start" in w for w in verdict.warnings)
    code, line = repo.session_gate("s").status()
    assert code == 1 and "no record of this session's start" in line
    fix(repo)
    repo.commit("the right fix")
    assert repo.session_gate("s").on_stop(True).exit == "passed"
    assert repo.session_gate("s").status()[0] == 0


def test_a_stop_that_comes_before_its_session_start_costs_one_check_not_a_refusal(make_repo):
    """A host whose SessionStart runs after (or without) the first stop: nothing changed, the check passes,
    so the stop is verified; a start that comes after it keeps the state."""
    repo = make_repo(check="exit 0")
    verdict = repo.session_gate("racing").on_stop(False)
    assert (verdict.action, verdict.status, verdict.exit, repo.runs()) == ("allow", "verified", "passed", 1)
    gate = repo.session_gate("racing")
    gate.start()
    assert gate.on_stop(True).exit == "already_verified" and repo.runs() == 1


@pytest.mark.parametrize("key", ["baseline_digest", "baseline", "last_failure", "blocks", "end", "armed",
                                 "arming", "hooks", "check_scripts", "unvouched", "source", "seal"])
def test_a_state_file_changed_outside_the_gate_is_not_trusted(make_repo, key):
    """Any field of the session's state changed, added or removed by hand (a generated set: every field the
    state has): the stop does not trust it; the check runs on the committed wrong fix and refuses."""
    repo = make_repo()
    gate = committed_wrong_fix(repo)
    path = gate.state_path
    state = json.loads(path.read_text())
    now = snapshot(repo.root)
    forged = {"baseline_digest": now.digest, "baseline": now.to_json(), "last_failure": None, "blocks": 0,
              "end": None, "armed": False, "arming": {}, "hooks": {}, "check_scripts": [], "unvouched": None,
              "source": "startup"}
    if key == "seal":
        state["seal"] = "0" * 64
    else:
        state[key] = forged[key] if state.get(key) != forged[key] else "changed"
    path.write_text(json.dumps(state))
    verdict = repo.session_gate("s").on_stop(True)
    assert verdict.action == "block" and repo.runs() == 1, (key, verdict)
    assert any("changed outside the gate" in w for w in verdict.warnings)


def test_a_forged_stamp_or_start_note_is_not_trusted(make_repo):
    """The record of trees that passed, and the note that a session started, are sealed too: a stamp written by
    hand for the broken tree does not settle its stop, and a start note written by hand does not make a
    session met late out of one the gate never saw start."""
    repo = make_repo()
    gate = committed_wrong_fix(repo)
    gate.stamp_path.parent.mkdir(parents=True, exist_ok=True)
    gate.stamp_path.write_text(json.dumps({"digests": [snapshot(repo.root).digest], "command": "./verify.sh"}))
    assert repo.session_gate("s").on_stop(True).exit == "check_failed" and repo.runs() == 1
    still_broken(repo, 2)
    (repo.state / "started" / "stranger").write_text("started")
    assert not session_started(repo.state, "stranger")
    verdict = repo.session_gate("stranger").on_stop(False)
    assert verdict.action == "block" and repo.runs() == 2


def test_a_state_folder_deleted_between_sessions_leaves_the_next_session_unvouched_in_a_gated_repository(make_repo):
    """The repository was gated before (its git folder holds the gate's id) but the state folder holds nothing
    of it: the next session's start cannot be vouched for, so its stops run the check even if it changes
    nothing."""
    import shutil
    repo = make_repo()
    committed_wrong_fix(repo, "first")
    shutil.rmtree(repo.state)
    gate = repo.session_gate("second")
    gate.start()
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit, repo.runs()) == ("block", "check_failed", 1)
    assert repo.session_gate("second").status()[0] == 1


def test_the_core_gate_takes_its_baseline_at_a_stop_whose_start_it_never_saw(make_repo):
    """Chapter 07's StopGate alone: no late baseline (that is appendix 95's SessionGate), so what was
    uncommitted before this first stop is not the session's; what comes after it is."""
    b = make_repo("b")
    still_broken(b, 1)
    gate = b.gate("core")
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit, b.runs()) == ("allow", "not_gated", 0)
    still_broken(b, 2)
    assert gate.on_stop(True).exit == "check_failed" and b.runs() == 1


TREESTATE_NAMES = ("FLAGGED_ARGS", "STATUS_ARGS", "GateError", "Identity", "TreeState", "blob_id", "file_identity",
                   "find_repo", "git", "git_dir", "git_finish", "git_start", "snapshot")
SHARED_NAMES = ("GateError", "Identity", "TreeState", "blob_id", "find_repo", "git")  # chapter 07's, used by 94


def test_the_tree_state_module_builds_on_the_gate_and_the_gate_imports_nothing_of_it():
    """donegate.treestate (appendix 94) hardens what chapter 07's donegate.stopgate built: it imports the gate and
    nothing else of the library, the gate imports nothing of it, and every name that lived in either before is
    importable from treestate, the gate's own names being the very same objects there."""
    import ast

    import donegate.stopgate as stopgate
    import donegate.treestate as treestate

    def imported(module) -> list[str]:
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        found = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and (n.level or "donegate" in (n.module or ""))]
        return found + [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
                        if a.name.startswith("donegate")]

    assert imported(treestate) == ["stopgate"]
    assert not any("treestate" in name for name in imported(stopgate))
    assert all(hasattr(treestate, name) for name in TREESTATE_NAMES)
    assert all(getattr(stopgate, name) is getattr(treestate, name) for name in SHARED_NAMES)


# -- the tree state as git gives it (appendix 94, donegate.treestate) --------------------------------

def test_the_exact_gate_uses_a_reading_already_taken_for_one_stop_only(repo):
    """Appendix 94's ExactGate fills StopGate.read_tree: git's output already read for a stop (appendix 93's quick
    path hands it over) decides that stop, and the next one asks git again."""
    gate = repo.started(exact=True)
    gate.reading = (git(repo.root, *STATUS_ARGS), git(repo.root, *FLAGGED_ARGS))  # read before the fix
    fix(repo)
    assert (gate.on_stop(False).exit, gate.reading, repo.runs()) == ("not_gated", None, 0)
    assert (gate.on_stop(True).exit, repo.runs()) == ("passed", 1)


def test_the_same_reading_handed_in_again_is_made_into_a_state_once(repo, monkeypatch):
    """The quick path asks the same stop again on the same reading (appendix 93): the state made of it is reused,
    not parsed and hashed again; another reading, even of equal bytes, is read afresh."""
    from donegate import treestate
    made, real = [], treestate.snapshot
    monkeypatch.setattr(treestate, "snapshot", lambda *a, **k: made.append(1) or real(*a, **k))
    gates = [repo.started(exact=True) for _ in range(3)]
    reading = (git(repo.root, *STATUS_ARGS), git(repo.root, *FLAGGED_ARGS))
    made.clear()
    states = []
    for gate, handed in zip(gates, (reading, reading, (bytes(bytearray(reading[0])), reading[1]))):
        gate.reading = handed
        states.append(gate.read_tree())
    assert len(made) == 2 and states[0] is states[1] and states[2] == states[0]


def test_git_missing_is_a_gate_error_that_says_so(repo, monkeypatch):
    monkeypatch.setenv("PATH", str(repo.root / "no-such-folder"))
    with pytest.raises(GateError, match="git is not installed or not on PATH"):
        snapshot(repo.root)


def test_a_failing_git_command_is_a_gate_error_carrying_git_s_message(tmp_path):
    with pytest.raises(GateError, match="rev-parse HEAD failed in .*not a git repository"):
        git(tmp_path, "rev-parse", "HEAD")


@pytest.mark.parametrize("algorithm", ["sha1", "sha256"])
def test_blob_ids_are_git_s_own_in_sha1_and_sha256_repositories(tmp_path, algorithm):
    repo = Repo(tmp_path / "repo", tmp_path / "state", tmp_path / "marker")
    repo.root.mkdir()
    repo.git("init", "-q", f"--object-format={algorithm}")
    repo.write("app.py", 'STATUS = "bad"\n')
    repo.commit("start")
    repo.write("app.py", 'STATUS = "ok"\n')
    repo.write("new.txt", "new\n")
    entries = snapshot(repo.root).entries
    for path in ("app.py", "new.txt"):
        assert entries[path] == ("100644", repo.git("hash-object", path).strip())
        assert blob_id(repo.path(path).read_bytes(), algorithm) == entries[path][1]


def test_an_edit_to_a_file_with_an_odd_name_reruns_the_check(repo):
    """git status -z gives paths as they are; quoted, a name with a space, a newline or a non-ASCII letter
    would be looked up under the wrong name and its edits never seen."""
    odd = "odd name \u00fc\n.txt"
    gate = passed_once(repo, lambda: repo.write(odd, "draft 1\n"))
    repo.write(odd, "draft 2\n")
    assert gate.on_stop(False).exit == "passed"
    assert repo.runs() == 2


def test_a_staged_rename_counts_as_a_delete_and_an_add(repo):
    gate = repo.started()
    repo.git("mv", "notes.txt", "renamed.txt")
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit) == ("block", "check_failed")
    assert {"notes.txt", "renamed.txt"} <= set(verdict.changed)


def test_an_unmerged_path_counts_as_a_change(repo):
    repo.git("checkout", "-q", "-b", "theirs")
    repo.write("notes.txt", "theirs\n")
    repo.commit("theirs")
    repo.git("checkout", "-q", "-")
    repo.write("notes.txt", "ours\n")
    repo.commit("ours")
    gate = repo.started()
    merge = subprocess.run(["git", "merge", "-q", "theirs"], cwd=repo.root, capture_output=True, text=True)
    assert merge.returncode != 0 and "<<<<<<<" in repo.read("notes.txt")
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit) == ("block", "check_failed")
    assert "notes.txt" in verdict.changed


def test_a_change_to_git_s_config_counts_as_a_change(repo):
    """With core.fileMode=false git no longer reports a chmod; the rule change itself is a change."""
    gate = repo.started(exact=True)
    repo.git("config", "core.fileMode", "false")
    repo.path("notes.txt").chmod(0o755)
    assert repo.git("status", "--porcelain") == ""
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit) == ("block", "check_failed")
    assert ".git/config" in verdict.changed


def test_a_rule_change_seen_from_a_linked_worktree_counts(repo):
    """A linked worktree shares info/exclude with its repository: git_dir follows .git (a file there) to it."""
    worktree = repo.root.parent / "worktree"
    repo.git("worktree", "add", "-q", str(worktree))
    gate = ExactGate(worktree, "session-1", repo.settings())
    gate.start()
    repo.path(".git/info").mkdir(exist_ok=True)
    with repo.path(".git/info/exclude").open("a") as f:
        f.write("scratch/\n")
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit) == ("block", "check_failed")
    assert ".git/info/exclude" in verdict.changed


# -- time budget and settings ------------------------------------------------------------------

def test_verify_timeout_is_a_failure_and_is_enforced(make_repo):
    repo = make_repo(check="sleep 30\nexit 0\n")
    settings = Settings.from_env({"DONEGATE_VERIFY_TIMEOUT": "1", "DONEGATE_STATE_DIR": str(repo.state)})
    gate = StopGate(repo.root, "slow", settings)
    gate.start()
    fix(repo)
    began = time.monotonic()
    verdict = gate.on_stop(False)
    took = time.monotonic() - began
    assert (verdict.action, verdict.exit, verdict.exit_code) == ("block", "check_failed", None)
    assert "a timeout" in verdict.message
    assert took < 1 + 5


@pytest.mark.parametrize("name, value", [
    ("DONEGATE_MAX_BLOCKS", "-1"),
    ("DONEGATE_MAX_BLOCKS", "three"),
    ("DONEGATE_MAX_BLOCKS", "2.5"),
    ("DONEGATE_VERIFY_TIMEOUT", "0"),
    ("DONEGATE_VERIFY_TIMEOUT", "-5"),
    ("DONEGATE_VERIFY_TIMEOUT", "soon"),
    ("DONEGATE_VERIFY_TIMEOUT", "nan"),
    ("DONEGATE_VERIFY_TIMEOUT", "inf"),
    ("DONEGATE_PROTECT_MODE", "strict"),
])
def test_settings_from_env_rejects_nonsense_naming_the_variable(name, value, tmp_path):
    with pytest.raises(GateError, match=name):
        Settings.from_env({name: value, "DONEGATE_STATE_DIR": str(tmp_path)})


def test_settings_from_env_reads_every_variable(tmp_path):
    settings = Settings.from_env({
        "DONEGATE_VERIFY_COMMAND": "make check", "DONEGATE_MAX_BLOCKS": "0", "DONEGATE_VERIFY_TIMEOUT": "2.5",
        "DONEGATE_PROTECT": "spec/**, *.golden", "DONEGATE_PROTECT_MODE": "Pristine", "DONEGATE_SKIP": "yes",
        "DONEGATE_LEDGER": "true", "DONEGATE_STATE_DIR": str(tmp_path / "s"),
        "DONEGATE_LEDGER_DIR": str(tmp_path / "l")})
    assert settings == Settings(verify_command="make check", max_blocks=0, verify_timeout=2.5,
                                protect=("spec/**", "*.golden"), protect_mode="pristine", skip=True, ledger=True,
                                state_dir=tmp_path / "s", ledger_dir=tmp_path / "l")


def test_ledger_actual_names_the_failing_test_not_a_banner(pytest_repo, tmp_path):
    gate = ledger_gate(pytest_repo, tmp_path, DONEGATE_LEDGER="1")
    pytest_repo.write("app.py", 'STATUS = "nearly"\n')
    assert gate.on_stop(False, claim="all tests pass").blocks
    (row,) = ledger_rows(tmp_path)
    assert row["actual"][0].startswith("FAILED tests/test_app.py::test_status_is_ok"), row["actual"]


def test_a_return_to_the_baseline_clears_the_last_failure(repo):
    gate = repo.started()
    original = repo.path("status.txt").read_text()
    still_broken(repo, 1)
    assert gate.on_stop(False).exit == "check_failed"
    repo.write("status.txt", original)
    assert gate.on_stop(True).exit == "not_gated"
    still_broken(repo, 1)   # the same broken state as before, reached again after a revert: checked again
    verdict = gate.on_stop(True)
    assert (verdict.action, verdict.exit) == ("block", "check_failed")
    assert repo.runs() == 2


# -- the acceptance script as a shell runs it; what a missing check is -----------------------------

def test_a_verify_sh_without_a_shebang_runs_as_a_shell_would_run_it(make_repo):
    repo = make_repo()
    repo.write("verify.sh", f"echo run >> {shlex.quote(str(repo.marker))}\n{STATUS_CHECK}")  # no #! line
    repo.commit("a script without #!")
    gate = repo.started()
    fix(repo)
    verdict = gate.on_stop(False)
    assert (verdict.exit, repo.runs()) == ("passed", 1), verdict.message


@pytest.mark.parametrize("how, said", [("chmod", "was not executable when the session started"),
                                       ("symlink", "is a symlink")])
def test_a_check_the_operator_committed_is_not_called_one_the_agent_wrote(make_repo, how, said):
    repo = make_repo()
    if how == "chmod":
        repo.path("verify.sh").chmod(0o644)
    else:
        repo.path("verify.sh").rename(repo.path("check.sh"))
        os.symlink("check.sh", repo.path("verify.sh"))
    repo.commit("the check, as the operator left it")
    gate = repo.started()
    fix(repo)
    verdict = gate.on_stop(False)
    assert verdict.exit == "no_check"
    assert said in verdict.message and "appeared during this session" not in verdict.message


@pytest.mark.parametrize("variable", ["BASH_ENV", "ENV"])
def test_a_shell_startup_file_named_in_the_environment_does_not_run_before_the_check(tmp_path, monkeypatch, variable):
    """A host that loads a `.env` into its hooks' environment hands the check BASH_ENV (or ENV, which POSIX
    shells read): a file it names would run before verify.sh and could end it with success. The check's shell
    reads neither."""
    from donegate.stopgate import run_check
    (tmp_path / "planted.sh").write_text("exit 0\n")
    monkeypatch.setenv(variable, str(tmp_path / "planted.sh"))
    (tmp_path / "verify.sh").write_text("#!/bin/bash\necho the real check failed\nexit 1\n")
    (tmp_path / "verify.sh").chmod(0o755)
    shell = ["bash", "./verify.sh"] if variable == "BASH_ENV" else ["bash", "--posix", "-i", "./verify.sh"]
    run = run_check(shell, tmp_path, 30)
    assert not run.passed and "the real check failed" in run.output


def test_a_check_written_during_the_session_is_named_so(make_repo):
    repo = make_repo()
    repo.git("rm", "-q", "verify.sh")
    repo.commit("no check")
    gate = repo.started()
    repo.write("verify.sh", "#!/bin/sh\nexit 0\n")
    repo.path("verify.sh").chmod(0o755)
    assert "appeared during this session" in gate.on_stop(False).message


def test_what_a_session_plants_in_python_s_user_site_cannot_pass_the_check(tmp_path, monkeypatch):
    """The session writes, outside the repository, a `usercustomize.py` and a `.pth` file into Python's user
    site (a fake `app` module that says "ok"), and sets a startup file: the check's Python loads none of them."""
    from donegate.stopgate import run_check
    python = str(Path(sys.base_prefix) / "bin" / "python3")  # not a virtual environment's: they skip the user site
    home = tmp_path / "home"
    site_dir = Path(subprocess.run([python, "-c", "import site; print(site.getusersitepackages())"],
                                   env={**os.environ, "HOME": str(home)}, capture_output=True, text=True).stdout.strip())
    site_dir.mkdir(parents=True)
    (site_dir / "usercustomize.py").write_text("import sys, types\nsys.modules['app'] = types.SimpleNamespace(STATUS='ok')\n")
    (site_dir / "planted.pth").write_text("import os; os.environ['PLANTED'] = 'yes'\n")
    startup = tmp_path / "startup.py"
    startup.write_text("import app\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PYTHONSTARTUP", str(startup))
    check = [python, "-c", "import os, sys\nimport app\nassert app.STATUS == 'ok'\nassert 'PLANTED' not in os.environ"]
    run = run_check(check, tmp_path, 30)
    assert not run.passed and "ModuleNotFoundError" in run.output


@pytest.mark.parametrize("how", ["excludes", "attributes", "config", "info-attributes", "include"])
def test_a_rule_in_git_s_user_files_that_hides_a_change_counts(repo, monkeypatch, tmp_path, how):
    """git reads rules from outside the repository too: the user's configuration (GIT_CONFIG_GLOBAL, or ~/.gitconfig
    and $XDG_CONFIG_HOME/git/config), its default ignore and attributes files, and those a configuration names.
    A session that writes one to hide its change (an untracked file ignored, a modified file cleaned back by
    a filter) changes the tree as much as the change itself: the check runs and refuses it."""
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL")
    if how == "include":
        (home / ".gitconfig").write_text("[include]\n\tpath = more.cfg\n")  # relative: beside the file that includes it
    gate = repo.started(exact=True)
    if how == "excludes":  # a new file the check reads (it fails), hidden from git status
        repo.write("extra.py", "broken(\n")
        (home / ".config" / "git" / "ignore").write_text("extra.py\n")
    elif how == "attributes":  # an edit git status cleans back to the committed content
        repo.path("notes.txt").write_text("NOTES\n")  # committed: "notes\n", the same size
        (home / ".config" / "git" / "attributes").write_text("notes.txt filter=lower\n")
        (home / ".gitconfig").write_text('[filter "lower"]\n\tclean = tr A-Z a-z\n')
    elif how == "info-attributes":  # the repository's own attributes file, in its git folder, and a user's filter
        repo.path("notes.txt").write_text("NOTES\n")
        repo.path(".git/info").mkdir(exist_ok=True)
        repo.path(".git/info/attributes").write_text("notes.txt filter=lower\n")
        (home / ".config" / "git" / "config").write_text('[filter "lower"]\n\tclean = tr A-Z a-z\n')
    elif how == "include":  # a file the user's configuration already included at the start, now naming an excludes file
        repo.write("extra.py", "broken(\n")
        (home / "hide").write_text("extra.py\n")
        (home / "more.cfg").write_text(f"[core]\n\texcludesFile = {home / 'hide'}\n")
    else:  # a configuration that names its own excludes file
        repo.write("extra.py", "broken(\n")
        (home / "hide").write_text("extra.py\n")
        (home / ".gitconfig").write_text(f"[core]\n\texcludesFile = {home / 'hide'}\n")
    assert repo.git("status", "--porcelain") == ""
    verdict = gate.on_stop(False)
    assert (verdict.action, verdict.exit) == ("block", "check_failed"), verdict
