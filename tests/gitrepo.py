"""A real git repository in a temporary folder, for the tests of the stop gate and of the host hooks."""
from __future__ import annotations

import subprocess
from pathlib import Path


class GitRepo:
    """Files written, git run and commits made in `root`; `marker` counts the acceptance check's runs."""

    def __init__(self, root: Path, state: Path, marker: Path) -> None:
        self.root, self.state, self.marker = root, state, marker

    def path(self, rel: str) -> Path:
        return self.root / rel

    def write(self, rel: str, text: str) -> None:
        target = self.root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)

    def read(self, rel: str) -> str:
        return (self.root / rel).read_text()

    def git(self, *args: str) -> str:
        done = subprocess.run(["git", *args], cwd=self.root, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def commit(self, message: str = "work") -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)

    def runs(self) -> int:
        """How many times the acceptance script has run so far."""
        return len(self.marker.read_text().splitlines()) if self.marker.exists() else 0
