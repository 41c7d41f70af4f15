"""The environment check names what is missing with a fix, and never raises."""
import importlib.metadata
from pathlib import Path

from donegate import setup
from donegate.setup import Check, CheckList, check_environment, check_package, check_python, find_repository

ROOT = Path(__file__).resolve().parent.parent


def by_name(checks: CheckList) -> dict[str, Check]:
    return {c.name: c for c in checks}


def fake_repository(folder: Path, *subfolders: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text('[project]\nname = "donegate"\n')
    for name in subfolders:
        (folder / name).mkdir()
    return folder


def test_this_repository_passes_its_own_checks():
    checks = by_name(check_environment(ROOT / "chapters"))
    for name in ("python", "donegate", "jupyterlab", "nbgrader", "ipywidgets", "matplotlib", "nbclient",
                 "unidiff", "nbdev", "chapters/"):
        assert checks[name].ok, checks[name]


def test_a_missing_package_is_reported_with_the_sync_fix():
    check = check_package("no-such-distribution-for-donegate")
    assert check.ok is False
    assert check.found == "not installed"
    assert "uv sync" in check.fix


def test_a_package_older_than_its_minimum_is_reported():
    check = check_package("ipywidgets", minimum="99.0")
    assert check.ok is False
    assert "need >= 99.0" in check.found


def test_a_python_older_than_311_is_reported():
    assert check_python((3, 10, 12), "/usr/bin/python3").ok is False
    assert check_python((3, 11, 0), "/usr/bin/python3").ok is True


def test_missing_git_is_a_missing_item_not_an_exception(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    git = by_name(check_environment(ROOT))["git"]
    assert git.ok is False
    assert "install git" in git.fix


def test_folders_missing_from_the_repository_are_named_with_a_fix(tmp_path):
    repo = fake_repository(tmp_path / "copy", "chapters")
    checks = by_name(check_environment(repo))
    assert checks["chapters/"].ok is True
    assert checks["labs/"].ok is False and checks["labs/"].fix
    assert checks["solutions/"].ok is False


def test_a_package_imported_from_another_copy_is_flagged(tmp_path):
    repo = fake_repository(tmp_path / "other-clone", "chapters", "labs", "solutions")
    donegate = by_name(check_environment(repo))["donegate"]
    assert donegate.ok is False
    assert str(repo) in donegate.fix


def test_the_repository_is_found_from_a_nested_folder_and_not_from_outside(tmp_path):
    repo = fake_repository(tmp_path / "repo", "chapters")
    (repo / "chapters" / "deep").mkdir()
    assert find_repository(repo / "chapters" / "deep") == repo.resolve()
    assert find_repository(tmp_path) is None


def test_a_pyproject_of_another_project_is_not_the_repository(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "something-else"\n')
    assert find_repository(tmp_path) is None


def test_a_check_that_crashes_becomes_a_missing_item(monkeypatch):
    def broken(name):
        raise RuntimeError("metadata store is corrupt")

    monkeypatch.setattr(importlib.metadata, "version", broken)
    checks = check_environment(ROOT)
    nbdev = by_name(checks)["nbdev"]
    assert nbdev.ok is False
    assert "metadata store is corrupt" in nbdev.found


def test_every_missing_item_carries_a_fix(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(setup, "KEY_PACKAGES", ("no-such-distribution-for-donegate",))
    checks = check_environment(tmp_path)
    assert checks.missing
    assert all(c.fix for c in checks.missing)


def test_the_table_shows_each_item_and_the_fix_of_a_missing_one():
    checks = CheckList([Check("python", True, "3.12.1"), Check("git", False, "not on PATH", fix="install git")])
    text = checks.table()
    assert "ok       python" in text
    assert "MISSING  git" in text and "fix: install git" in text
    assert checks.summary() == "1 of 2 checks need a fix: git."


def test_the_html_table_escapes_what_it_shows():
    checks = CheckList([Check("x", False, "<script>", fix="run `uv sync`")])
    shown = checks._repr_html_()
    assert "<script>" not in shown and "&lt;script&gt;" in shown
    assert "<code>uv sync</code>" in shown
