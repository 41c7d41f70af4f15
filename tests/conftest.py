"""Shared paths and fixtures for the test suite."""
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Modules whose tests share module-scoped fixtures (a graded course, a JupyterLab server, a played demo):
# with pytest-xdist (`-n auto --dist loadgroup` in pyproject.toml) each stays on one worker, so its
# fixture is built once; every other test is handed to whichever worker is free.
ONE_WORKER = {"test_grading.py", "test_selfcheck.py", "test_browser.py", "test_cli.py", "test_demo.py",
              "test_instructor.py"}


def pytest_itemcollected(item):
    # As each test is collected, before any plugin's pytest_collection_modifyitems: xdist reads the group in
    # its own, and this file, an initial conftest (testpaths), would otherwise be called after it.
    if item.path.name in ONE_WORKER:
        item.add_marker(pytest.mark.xdist_group(item.path.stem))


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture
def hermetic_gate(tmp_path, monkeypatch):
    """No operator settings, no user git config, state folders inside tmp_path, umask 022 (so a 0600 / 0700
    mode a test sees was set by the gate, not inherited). Subprocesses such as the console script inherit it."""
    for name in list(os.environ):
        if name.startswith("DONEGATE_") or name in ("PYTHONIOENCODING", "PYTEST_ADDOPTS", "PYTEST_PLUGINS"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("DONEGATE_STATE_DIR", str(tmp_path / "default-state"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "gate test")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "gate@example.invalid")
    old = os.umask(0o022)
    yield
    os.umask(old)
