"""Repositories as git defines them (DESIGN 2.7): the gate finds and reads a repository the way git does.

A host (and so its hooks) may run with GIT_DIR and GIT_WORK_TREE set; a git folder may name its work tree
elsewhere (core.worktree); `.git` may be a file (a separate git folder, a submodule); and the agent's shell
may make a linked worktree and commit in it within one command, which no hook names. Each case drives the
installed console script with hook payloads, as tests/test_hosts.py does, in temporary repositories whose
verify.sh fails while app.py holds the word "bad" and counts its runs in a marker file.

Chapter 07's find_repo and git know one layout (a `.git` folder beside the files); appendix 94's GitLayout reads
the others, and the hook command and the CLI put it in chapter 07's seam (`git_layouts`).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from donegate import stopgate, treestate
from donegate.realhosts import run_hook
from donegate.stopgate import find_repo
from donegate.treestate import GIT_LAYOUT, git_layouts, snapshot

DONEGATE = Path(sys.executable).with_name("donegate")
CLAIM = "Done: the change is complete and all checks pass."


@pytest.fixture(autouse=True)
def hermetic(hermetic_gate):
    """Every test runs in the isolated environment of conftest.hermetic_gate."""


def git(*args: str, cwd: Path, **env: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **env})
    assert done.returncode == 0, done.stderr
    return done.stdout


def fill(tree: Path, marker: Path, **env: str) -> None:
    """app.py and a counting verify.sh (it fails while app.py says "bad"), committed with `env` (GIT_DIR...)."""
    (tree / "app.py").write_text("STATUS = 'ok'\n")
    (tree / "verify.sh").write_text(f"#!/bin/sh\necho run >> '{marker}'\n! grep -q bad app.py\n")
    (tree / "verify.sh").chmod(0o755)
    git("add", "-A", cwd=tree, **env)
    git("commit", "-q", "-m", "start", cwd=tree, **env)


class Session:
    """One host session whose hooks run in `where` with `env` (GIT_DIR and the like) and the state folder."""

    def __init__(self, tmp_path: Path, where: Path, marker: Path, **env: str) -> None:
        self.where, self.marker, self.state = where, marker, tmp_path / "state"
        self.env = {**os.environ, "DONEGATE_STATE_DIR": str(self.state), **env}

    def run(self, *args: str, stdin: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([str(DONEGATE), *args], cwd=cwd or self.where, env=self.env, input=stdin,
                              capture_output=True, text=True, timeout=60)

    def hook(self, event: str, host: str = "claude-code", cwd: Path | None = None, **fields) -> subprocess.CompletedProcess:
        payload = {"session_id": "session-1", "cwd": str(cwd or self.where), **fields}
        return self.run("hook", event, "--host", host, stdin=json.dumps(payload))

    def stop(self, host: str = "claude-code", cwd: Path | None = None, active: bool = False) -> subprocess.CompletedProcess:
        said = {"prompt": "fix it", "prompt_response": CLAIM} if host == "gemini" else {"last_assistant_message": CLAIM}
        return self.hook("stop", host, cwd, stop_hook_active=active, **said)

    def runs(self) -> int:
        return len(self.marker.read_text().splitlines()) if self.marker.exists() else 0


def refused(done: subprocess.CompletedProcess, host: str = "claude-code") -> bool:
    if host == "gemini":
        return done.returncode == 0 and json.loads(done.stdout or "{}").get("decision") == "deny"
    return done.returncode == 2 and "Stop refused" in done.stdout


def assert_gated(session: Session, tree: Path, **env: str) -> None:
    """A breaking edit in `tree` is refused at the stop and `status` says unverified; the fix passes."""
    assert session.hook("session-start", source="startup").returncode == 0
    (tree / "app.py").write_text("STATUS = 'bad'\n")
    done = session.stop()
    assert refused(done) and session.runs() == 1, done.stdout + done.stderr
    status = session.run("status")
    assert status.returncode == 1 and "unverified" in status.stdout, status.stdout + status.stderr
    (tree / "app.py").write_text("STATUS = 'fixed'\n")
    done = session.stop(active=True)
    assert done.returncode == 0 and session.runs() == 2, done.stdout + done.stderr
    assert session.run("status").returncode == 0


# -- GIT_DIR, GIT_WORK_TREE, core.worktree, .git files ---------------------------------------------------------

def test_a_repository_named_by_git_dir_and_git_work_tree_is_gated(tmp_path):
    """The host runs with GIT_DIR and GIT_WORK_TREE set (its hooks inherit them): no `.git` in the files' folder."""
    tree, folder = tmp_path / "files", tmp_path / "store.git"
    tree.mkdir()
    git("init", "-q", cwd=tree)
    fill(tree, tmp_path / "marker")
    (tree / ".git").rename(folder)
    env = {"GIT_DIR": str(folder), "GIT_WORK_TREE": str(tree)}
    assert_gated(Session(tmp_path, tree, tmp_path / "marker", **env), tree)


def test_a_git_folder_whose_core_worktree_names_the_files_is_gated_with_git_dir_set(tmp_path):
    """A git folder kept elsewhere names the work tree in its config (core.worktree); the host sets GIT_DIR only."""
    tree, folder = tmp_path / "files", tmp_path / "store.git"
    tree.mkdir()
    git("init", "-q", "--bare", str(folder), cwd=tmp_path)
    git("config", "core.bare", "false", cwd=tmp_path, GIT_DIR=str(folder))
    git("config", "core.worktree", str(tree), cwd=tmp_path, GIT_DIR=str(folder))
    fill(tree, tmp_path / "marker", GIT_DIR=str(folder))
    assert_gated(Session(tmp_path, tree, tmp_path / "marker", GIT_DIR=str(folder)), tree)


def test_a_git_folder_whose_core_worktree_names_another_folder_gates_that_folder(tmp_path):
    """`.git` in `home` with core.worktree = `files`: git in `home` works on `files`, and so does the gate."""
    home, tree = tmp_path / "home", tmp_path / "files"
    home.mkdir(), tree.mkdir()
    git("init", "-q", cwd=home)
    git("config", "core.worktree", str(tree), cwd=home)
    fill(tree, tmp_path / "marker", GIT_DIR=str(home / ".git"))
    with git_layouts():
        assert find_repo(home) == tree.resolve()
    assert_gated(Session(tmp_path, home, tmp_path / "marker"), tree)


def test_a_git_file_whose_core_worktree_names_another_folder_gates_that_folder(tmp_path):
    """A submodule-style `.git` file (gitdir: ...) whose git folder's core.worktree names another folder."""
    home, tree, folder = tmp_path / "home", tmp_path / "files", tmp_path / "modules" / "m"
    home.mkdir(), tree.mkdir(), folder.parent.mkdir()
    git("init", "-q", "--separate-git-dir", str(folder), str(home), cwd=tmp_path)
    git("config", "core.worktree", "../../files", cwd=home)
    fill(tree, tmp_path / "marker", GIT_DIR=str(folder))
    with git_layouts():
        assert find_repo(home) == tree.resolve()
    assert_gated(Session(tmp_path, home, tmp_path / "marker"), tree)


def test_a_separate_git_dir_is_gated_and_found_without_starting_git(tmp_path, monkeypatch):
    """`git init --separate-git-dir`: `.git` is a file pointing at the git folder; as with a submodule whose
    core.worktree names its own folder, the files alone tell, so finding it starts no git."""
    tree = tmp_path / "files"
    git("init", "-q", "--separate-git-dir", str(tmp_path / "sep.git"), str(tree), cwd=tmp_path)
    git("config", "core.worktree", "../files", cwd=tree)  # as git submodule writes it: its own folder
    fill(tree, tmp_path / "marker")
    with monkeypatch.context() as m, git_layouts():
        m.setattr(treestate.subprocess, "run", lambda *a, **k: pytest.fail(f"git started: {a}"))
        assert find_repo(tree / "app.py") == tree.resolve()
        assert GIT_LAYOUT.git_folder(tree.resolve()) is None
    assert_gated(Session(tmp_path, tree, tmp_path / "marker"), tree)


def test_a_plain_repository_is_found_without_starting_git(tmp_path, monkeypatch):
    """The stop hook's speed: a `.git` folder found by walking up costs no git process."""
    tree = tmp_path / "files"
    tree.mkdir()
    git("init", "-q", cwd=tree)
    (tree / "deep").mkdir()
    monkeypatch.setattr(treestate.subprocess, "run", lambda *a, **k: pytest.fail(f"git started: {a}"))
    with git_layouts():
        assert find_repo(tree / "deep") == tree.resolve()
        assert GIT_LAYOUT.git_folder(tree.resolve()) is None


def test_git_dir_meant_for_one_repository_does_not_read_another(tmp_path, monkeypatch):
    """With GIT_DIR naming repository A in the environment, the tree state of repository B is B's."""
    a, b = tmp_path / "a", tmp_path / "b"
    for tree in (a, b):
        tree.mkdir()
        git("init", "-q", cwd=tree)
        fill(tree, tmp_path / "marker")
    (b / "app.py").write_text("STATUS = 'b'\n")
    monkeypatch.setenv("GIT_DIR", str(a / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(a))
    state = snapshot(b.resolve())
    assert state.head == git("rev-parse", "HEAD", cwd=b, GIT_DIR=str(b / ".git")).strip()
    with git_layouts():
        assert "app.py" in state.entries and find_repo(b) == b.resolve()


# -- the seam: chapter 07's plain layout, appendix 94's in the hook command and the CLI --------------------------

def core_worktree_elsewhere(tmp_path: Path) -> tuple[Path, Path]:
    """(home, files): a `.git` folder in `home` whose core.worktree names `files`, with one commit."""
    home, tree = tmp_path / "home", tmp_path / "files"
    home.mkdir(), tree.mkdir()
    git("init", "-q", cwd=home)
    git("config", "core.worktree", str(tree), cwd=home)
    fill(tree, tmp_path / "marker", GIT_DIR=str(home / ".git"))
    return home.resolve(), tree.resolve()


def test_chapter_07_s_plain_layout_is_in_force_outside_git_layouts(tmp_path):
    """Chapter 07's find_repo takes the folder holding `.git`; inside git_layouts it is git's work tree, and the
    hook command, answered in this process, leaves the plain layout in force after it as before."""
    home, tree = core_worktree_elsewhere(tmp_path)
    assert type(stopgate.LAYOUT[0]) is stopgate.PlainLayout and find_repo(home) == home
    with git_layouts():
        assert find_repo(home) == tree and stopgate.LAYOUT[0] is GIT_LAYOUT
    payload = json.dumps({"session_id": "session-1", "cwd": str(home), "source": "startup"})
    assert run_hook("session-start", payload).exit_code == 0
    assert type(stopgate.LAYOUT[0]) is stopgate.PlainLayout and find_repo(home) == home


def test_the_cli_finds_a_repository_as_git_does(tmp_path):
    """`donegate doctor` in a folder whose `.git` names another work tree reports that tree; `donegate init` with
    GIT_DIR and GIT_WORK_TREE set (no `.git` among the files) writes verify.sh among the files."""
    home, tree = core_worktree_elsewhere(tmp_path)
    doctor = Session(tmp_path, home, tmp_path / "marker").run("doctor")
    assert f"repository   {tree}\n" in doctor.stdout, doctor.stdout + doctor.stderr
    files, folder = tmp_path / "named", tmp_path / "named.git"
    files.mkdir()
    git("init", "-q", cwd=files)
    (files / "app.py").write_text("STATUS = 'ok'\n")
    git("add", "-A", cwd=files)
    git("commit", "-q", "-m", "start", cwd=files)
    (files / ".git").rename(folder)
    init = Session(tmp_path, files, tmp_path / "marker", GIT_DIR=str(folder), GIT_WORK_TREE=str(files)).run("init")
    assert (files / "verify.sh").is_file(), init.stdout + init.stderr


# -- a worktree made and entered by one shell command ----------------------------------------------------------

@pytest.fixture
def session(tmp_path) -> Session:
    """A plain repository with a counting verify.sh, and a session started in it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    fill(repo, tmp_path / "marker")
    session = Session(tmp_path, repo, tmp_path / "marker")
    assert session.hook("session-start", source="startup").returncode == 0
    return session


def shell_worktree(session: Session, text: str, name: str = "wt") -> Path:
    """What `git worktree add ../wt && cd ../wt && <edit> && git commit -am ...` does, announced to the tool hook
    as the one Bash command it is (the payload's cwd stays in the repository)."""
    command = f"git worktree add ../{name} && cd ../{name} && echo x >> app.py && git commit -qam fix"
    done = session.hook("pre-tool-use", tool_name="Bash", tool_input={"command": command})
    assert done.returncode == 0 and "deny" not in done.stdout
    tree = session.where.parent / name
    git("worktree", "add", "-q", str(tree), cwd=session.where)
    (tree / "app.py").write_text(text)
    git("commit", "-q", "-am", "fix", cwd=tree)
    return tree


@pytest.mark.parametrize("host", ["claude-code", "gemini"])
def test_a_worktree_made_and_committed_in_by_one_shell_command_is_gated_at_the_stop(session, host):
    """Gemini sends the repository as the cwd after the command: the new worktree is the session's all the same."""
    tree = shell_worktree(session, "STATUS = 'bad'\n")
    done = session.stop(host)
    assert refused(done, host) and session.runs() == 1, done.stdout + done.stderr
    (tree / "app.py").write_text("STATUS = 'fixed'\n")
    git("commit", "-q", "-am", "really fix", cwd=tree)
    done = session.stop(host, active=True)
    assert not refused(done, host) and session.runs() == 2, done.stdout + done.stderr


def test_status_in_the_repository_names_an_unverified_worktree_of_the_session(session):
    """Codex sends the worktree as the cwd and refuses there; `status` run in the repository says so too."""
    tree = shell_worktree(session, "STATUS = 'bad'\n")
    done = session.stop(cwd=tree)
    assert refused(done) and session.runs() == 1, done.stdout
    status = session.run("status")
    assert status.returncode == 1 and str(tree.resolve()) in status.stdout, status.stdout + status.stderr


def test_status_names_a_worktree_made_in_the_session_that_no_stop_judged(session):
    """The turn ended without a stop (a turn limit, say): the new worktree is unverified, not "nothing changed"."""
    tree = shell_worktree(session, "STATUS = 'bad'\n")
    status = session.run("status")
    assert status.returncode == 1 and str(tree.resolve()) in status.stdout and "no stop judged it" in status.stdout


def test_a_worktree_that_was_there_before_the_session_and_left_alone_is_not_gated(tmp_path):
    """The person's own worktree, with their own unfinished commit in it, is not the session's work."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    fill(repo, tmp_path / "marker")
    theirs = tmp_path / "theirs"
    git("worktree", "add", "-q", str(theirs), cwd=repo)
    (theirs / "app.py").write_text("STATUS = 'bad'\n")
    git("commit", "-q", "-am", "the person's own", cwd=theirs)
    session = Session(tmp_path, repo, tmp_path / "marker")
    assert session.hook("session-start", source="startup").returncode == 0
    done = session.stop()
    assert done.returncode == 0 and session.runs() == 0, done.stdout
    assert session.run("status").returncode == 0
    # a commit the session makes there by shell (an empty one: nothing of its own changed) starts from its then HEAD
    git("commit", "-q", "--allow-empty", "-m", "touch", cwd=theirs)
    done = session.stop()
    assert done.returncode == 0 and session.runs() == 0, done.stdout
