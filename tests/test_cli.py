"""The `donegate` console script: exit codes and the lines a learner reads."""
import json
import os
import re
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from donegate.cli import COMMANDS, Command, arg, main

ROOT = Path(__file__).resolve().parent.parent
LAB01 = "lab01-fail-open-hooks"


def donegate(*args: str, cwd: Path, progress: Path, **env: str) -> subprocess.CompletedProcess:
    """Run the installed console script (or the same entry point through this Python)."""
    script = shutil.which("donegate")
    command = [script] if script else [sys.executable, "-c", "import sys; from donegate.cli import main; sys.exit(main())"]
    environment = {**os.environ, "DONEGATE_PROGRESS_FILE": str(progress), **env}
    environment.pop("DONEGATE_ROOT", None)
    return subprocess.run(command + list(args), cwd=cwd, env=environment, capture_output=True, text=True, timeout=300)


@pytest.fixture
def run(tmp_path):
    return lambda *args, **env: donegate(*args, cwd=tmp_path, progress=tmp_path / "progress.json", **env)


def test_help_lists_both_subcommands(run):
    done = run("--help")
    assert done.returncode == 0
    assert "check" in done.stdout and "progress" in done.stdout and "usage: donegate" in done.stdout


def test_check_help_states_the_exit_codes(run):
    done = run("check", "--help")
    assert done.returncode == 0
    assert "0 full marks" in " ".join(done.stdout.split())


def test_unknown_subcommand_is_an_argparse_error_with_exit_2(run):
    done = run("frobnicate")
    assert done.returncode == 2
    assert "invalid choice: 'frobnicate'" in done.stderr


def test_check_without_a_notebook_is_an_argparse_error_with_exit_2(run):
    done = run("check")
    assert done.returncode == 2
    assert "the following arguments are required: notebook" in done.stderr


def test_no_subcommand_prints_help_and_exits_2(run):
    done = run()
    assert done.returncode == 2
    assert "commands:" in done.stdout


def test_check_of_a_missing_notebook_exits_2_and_says_so(run, tmp_path):
    done = run("check", "nowhere.ipynb")
    assert done.returncode == 2
    assert done.stderr.startswith("donegate check: nowhere.ipynb does not exist.")
    assert "Traceback" not in done.stderr


def test_check_of_a_chapter_exits_2_not_a_lab(run, tmp_path):
    chapter = tmp_path / "02_hooks.ipynb"
    chapter.write_text(json.dumps({"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# Hooks"}]}))
    done = run("check", str(chapter))
    assert done.returncode == 2
    assert "not a lab or recall notebook" in done.stderr


def test_main_returns_the_status_instead_of_exiting():
    assert main(["frobnicate"]) == 2
    assert main(["--version"]) == 0


@pytest.fixture
def later_chapter(tmp_path, monkeypatch):
    """A module a later chapter might export, with one subcommand function."""
    (tmp_path / "later_chapter.py").write_text(
        "def greet(name: str, loud: bool) -> int:\n"
        "    print(('HELLO ' if loud else 'hello ') + name)\n"
        "    return 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield {**COMMANDS, "greet": Command("later_chapter:greet", "say hello",
                                        (arg("name"), arg("--loud", action="store_true")))}
    sys.modules.pop("later_chapter", None)


def test_a_new_subcommand_is_one_table_entry(later_chapter, capsys):
    assert main(["greet", "--loud", "learner"], later_chapter) == 3
    assert capsys.readouterr().out == "HELLO learner\n"


def test_a_subcommand_module_is_imported_only_when_it_runs(later_chapter, capsys):
    assert main(["--help"], later_chapter) == 0
    assert "greet" in capsys.readouterr().out
    assert "later_chapter" not in sys.modules


def test_starting_the_command_line_imports_nothing_heavy():
    probe = ("import sys, donegate.cli, donegate.selfcheck, donegate.progress, donegate.sandbox, donegate.judge; "
             "donegate.cli.build_parser(); "
             "print(sorted(m for m in ('nbgrader', 'nbformat', 'traitlets', 'jsonschema', 'matplotlib', "
             "'ipywidgets', 'nbclient') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr


# --- progress ------------------------------------------------------------------------------------

def _passes(path: Path, **ago: timedelta) -> None:
    now = datetime.now(timezone.utc)
    path.write_text(json.dumps({"version": 1, "passes": [
        {"assignment": a.replace("_", "-"), "passed_at": (now - d).isoformat(), "score": 1, "max_score": 1}
        for a, d in ago.items()]}))


def test_progress_shows_a_recall_due_in_22_hours_two_hours_after_the_lab(run, tmp_path):
    _passes(tmp_path / "progress.json", lab01_fail_open_hooks=timedelta(hours=2))
    done = run("progress")
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: " ".join(line.split()[1:]) for line in done.stdout.splitlines() if line.startswith("        ")}
    assert rows[LAB01].startswith("passed ")
    assert rows["recall02-hooks"].startswith("#1 due in 22 h (")
    assert "Hooks" in done.stdout and "91" not in done.stdout.split("\n", 2)[2]


def test_progress_shows_the_recall_due_now_a_day_after_the_lab(run, tmp_path):
    _passes(tmp_path / "progress.json", lab01_fail_open_hooks=timedelta(hours=25))
    done = run("progress")
    assert "recall02-hooks" in done.stdout and "due now" in done.stdout
    assert "Due now: recall02-hooks." in done.stdout


def test_progress_with_a_damaged_file_exits_2_and_leaves_it_alone(run, tmp_path):
    (tmp_path / "progress.json").write_text("{oops")
    done = run("progress")
    assert done.returncode == 2 and "damaged" in done.stderr
    assert (tmp_path / "progress.json").read_text() == "{oops"


# --- check on the real lab01, on copies -------------------------------------------------------------

def _lab_copy(folder: Path, source: str) -> Path:
    original = ROOT / source / LAB01 / f"{LAB01}.ipynb"
    if not original.exists():
        pytest.skip(f"{original.relative_to(ROOT)} does not exist yet")
    copy = folder / f"{LAB01}.ipynb"
    shutil.copyfile(original, copy)
    return copy


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli-release")
    return donegate("check", str(_lab_copy(folder, "labs")), cwd=folder, progress=folder / "progress.json"), folder


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli-solution")
    return donegate("check", str(_lab_copy(folder, "solutions")), cwd=folder, progress=folder / "progress.json"), folder


@pytest.mark.grading
def test_check_of_the_released_lab_fails_per_test_and_exits_1(released):
    done, _ = released
    assert done.returncode == 1, done.stderr
    tests = [line.split() for line in done.stdout.splitlines() if line.startswith("  FAIL ") or line.startswith("  ok ")]
    assert tests and all(t[0] == "FAIL" and t[2] == "0" for t in tests)
    total = [line.split() for line in done.stdout.splitlines() if line.split()[:1] == ["total"]]
    assert total[0][1] == "0"


@pytest.mark.grading
def test_check_keeps_the_terminal_free_of_nbgrader_logs(released):
    done, _ = released
    assert done.stderr == ""
    assert "[INFO]" not in done.stdout and "Warning" not in done.stdout and "traitlets" not in done.stdout


@pytest.mark.grading
def test_check_writes_feedback_next_to_the_copy_and_records_no_pass(released):
    done, folder = released
    assert (folder / f"{LAB01}.feedback.html").is_file()
    assert not (folder / "progress.json").exists()


@pytest.mark.grading
def test_check_of_the_solution_gets_full_marks_exits_0_and_records_the_pass(solved):
    done, folder = solved
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Full marks." in done.stdout
    recorded = json.loads((folder / "progress.json").read_text())["passes"]
    assert [p["assignment"] for p in recorded] == [LAB01]


@pytest.fixture
def workbook(tmp_path, monkeypatch):
    """A scratch workbook (solutions/ and labs/ of lab01 and recall02 with its variants) that find_root returns."""
    for folder in ("solutions", "labs"):
        for lab in [LAB01] + [p.name for p in (ROOT / folder).glob("recall02-hooks*")]:
            shutil.copytree(ROOT / folder / lab, tmp_path / folder / lab)
    monkeypatch.setenv("DONEGATE_ROOT", str(tmp_path))
    return tmp_path


def test_start_copies_the_release_into_work_and_never_over_the_learner_s_work(workbook, capsys):
    assert main(["start", "lab01"]) == 0
    mine = workbook / "work" / LAB01 / f"{LAB01}.ipynb"
    assert mine.read_bytes() == (workbook / "labs" / LAB01 / f"{LAB01}.ipynb").read_bytes()
    assert f"uv run donegate check work/{LAB01}/{LAB01}.ipynb" in capsys.readouterr().out
    mine.write_text('{"my": "work"}')
    assert main(["start", LAB01]) == 0
    assert mine.read_text() == '{"my": "work"}'
    assert "your work is kept, nothing was copied" in capsys.readouterr().out


def test_start_of_an_unknown_lab_names_the_ones_there_are(workbook, capsys):
    assert main(["start", "lab99"]) == 2
    err = capsys.readouterr().err
    assert "lab99" in err and "lab01, recall02" in err
    assert not (workbook / "work").exists()


def test_work_is_ignored_by_git():
    ignored = subprocess.run(["git", "check-ignore", "-q", "work/lab01-fail-open-hooks/x.ipynb"], cwd=ROOT)
    assert ignored.returncode == 0, "work/ must be in .gitignore: a learner's copies are not tracked files"


def test_lab_serves_the_root_and_prints_the_address_of_your_copy_of_chapter_00(workbook):
    """The address JupyterLab prints is its default URL: `donegate lab` makes it the notebook to open (by default
    the learner's copy of chapter 00), not /lab, the Launcher."""
    from donegate.cli import copy_chapters, lab_arguments

    (workbook / "chapters").mkdir()
    (workbook / "chapters" / "00_start_here.ipynb").write_text('{"cells": []}')
    copy_chapters(workbook)
    args = lab_arguments(workbook, None, None, is_root=False)
    assert args[1:] == ["-m", "jupyterlab", f"--ServerApp.root_dir={workbook}",
                        "--LabApp.default_url=/lab/tree/work/chapters/00_start_here.ipynb"]
    named = lab_arguments(workbook, str(workbook / "work" / "chapters" / "00_start_here.ipynb"), None, is_root=False)
    assert named == args
    assert lab_arguments(workbook, None, 8899, is_root=True)[-2:] == ["--port=8899", "--allow-root"]
    with pytest.raises(FileNotFoundError, match="outside the workbook"):
        lab_arguments(workbook, str(ROOT / "README.md"), None, is_root=False)
    with pytest.raises(FileNotFoundError, match="no such file"):
        lab_arguments(workbook, str(workbook / "nope.ipynb"), None, is_root=False)


def _opened_by_donegate_lab(root: Path, monkeypatch) -> Path:
    """What `donegate lab` (no argument) would open: its JupyterLab command line, caught where it would exec."""
    from donegate import cli

    caught = []
    monkeypatch.chdir(root)
    monkeypatch.setattr(os, "execve", lambda path, args, env: caught.append(args))
    assert cli.lab_command() is None and caught
    address = [a.split("/lab/tree/", 1)[1] for a in caught[0] if "/lab/tree/" in a]
    positional = [a for a in caught[0][3:] if not a.startswith("-")]  # how it was named before the address
    return root / (address or positional)[0]


def _ran(notebook: Path) -> None:
    """What JupyterLab's autosave does after Run All: the notebook is written back with its outputs."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    for n, cell in enumerate(c for c in nb["cells"] if c["cell_type"] == "code"):
        cell["execution_count"] = n + 1
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["ran\n"]}]
    notebook.write_text(json.dumps(nb, indent=1), encoding="utf-8")


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A git checkout of the workbook's chapters, committed with the project's own .gitignore."""
    for name in ("00_start_here.ipynb", "02_hooks.ipynb", "quizzes.json"):
        (tmp_path / "chapters").mkdir(exist_ok=True)
        shutil.copyfile(ROOT / "chapters" / name, tmp_path / "chapters" / name)
    for folder in ("solutions", "labs"):
        shutil.copytree(ROOT / folder / LAB01, tmp_path / folder / LAB01)
    shutil.copyfile(ROOT / ".gitignore", tmp_path / ".gitignore")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
    for step in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "workbook"]):
        subprocess.run(git + step, cwd=tmp_path, check=True, capture_output=True)
    monkeypatch.setenv("DONEGATE_ROOT", str(tmp_path))
    return tmp_path


def test_running_the_chapter_donegate_lab_opens_leaves_git_status_clean(checkout, monkeypatch):
    """A learner runs the chapter `donegate lab` opened, and JupyterLab saves it with its outputs: no tracked
    file changes, so a `git pull` has nothing to conflict with."""
    opened = _opened_by_donegate_lab(checkout, monkeypatch)
    assert opened.name == "00_start_here.ipynb"
    _ran(opened)
    status = subprocess.run(["git", "status", "--porcelain"], cwd=checkout, capture_output=True, text=True, check=True)
    assert status.stdout == "", f"running {opened.relative_to(checkout)} changed tracked files:\n{status.stdout}"
    assert (checkout / "chapters" / "00_start_here.ipynb").read_bytes() == (ROOT / "chapters" / "00_start_here.ipynb").read_bytes()


def test_lab_updates_the_copies_you_only_ran_and_keeps_the_ones_you_changed(checkout, monkeypatch, capsys):
    from donegate.cli import copy_chapters, lab_notes

    first = copy_chapters(checkout)
    assert first.copied == ("00_start_here.ipynb", "02_hooks.ipynb") and not first.updated and not first.kept
    mine = checkout / "work" / "chapters"
    _ran(mine / "00_start_here.ipynb")
    changed = json.loads((mine / "02_hooks.ipynb").read_text(encoding="utf-8"))
    changed["cells"][-1]["source"] = ["my own experiment\n"]
    (mine / "02_hooks.ipynb").write_text(json.dumps(changed), encoding="utf-8")
    assert copy_chapters(checkout) == type(first)(mine), "nothing new in chapters/: nothing to do"
    for name in ("00_start_here.ipynb", "02_hooks.ipynb"):  # a git pull brings a new version of both
        nb = json.loads((checkout / "chapters" / name).read_text(encoding="utf-8"))
        nb["cells"].append({"cell_type": "markdown", "id": "new", "metadata": {}, "source": ["A new section."]})
        (checkout / "chapters" / name).write_text(json.dumps(nb), encoding="utf-8")
    again = copy_chapters(checkout)
    assert again.updated == ("00_start_here.ipynb",) and again.kept == ("02_hooks.ipynb",)
    assert (mine / "00_start_here.ipynb").read_bytes() == (checkout / "chapters" / "00_start_here.ipynb").read_bytes()
    assert "my own experiment" in (mine / "02_hooks.ipynb").read_text(encoding="utf-8")
    notes = "\n".join(lab_notes(checkout, again))
    assert "new version of 00_start_here.ipynb" in notes
    assert "chapters/02_hooks.ipynb has a new version; your copy work/chapters/02_hooks.ipynb" in notes


def test_work_chapters_holds_the_teaching_chapters_and_their_links_reach_the_appendix(tmp_path):
    """The learner's copies are the teaching chapters (00-09) only; the appendix stays in chapters/, and every link
    from a copy to an appendix notebook opens the notebook in chapters/ (JupyterLab resolves it from the copy)."""
    from donegate.cli import copy_chapters

    shutil.copytree(ROOT / "chapters", tmp_path / "chapters")
    copies = copy_chapters(tmp_path)
    teaching = sorted(p.name for p in (ROOT / "chapters").glob("0[0-9]_*.ipynb"))
    assert copies.copied == tuple(teaching) and len(teaching) >= 12
    mine = tmp_path / "work" / "chapters"
    assert sorted(p.name for p in mine.glob("*.ipynb")) == teaching
    links = []
    for copy in mine.glob("*.ipynb"):
        for cell in json.loads(copy.read_text(encoding="utf-8"))["cells"]:
            links += [(copy.name, target) for target in re.findall(r"\]\(([^)#\s]+\.ipynb)", "".join(cell["source"]))]
    appendix = [(name, target) for name, target in links if "../../chapters/" in target]
    assert len(appendix) >= 3, links
    broken = [(name, target) for name, target in links if not (mine / target).resolve().is_file()]
    assert not broken, f"links from work/chapters/ that open nothing: {broken}"
    assert copy_chapters(tmp_path) == type(copies)(mine), "copies that are as made are not copied again"


def test_lab_on_an_appendix_notebook_says_it_is_read_where_it_is(checkout):
    from donegate.cli import copy_chapters, lab_notes

    shutil.copyfile(ROOT / "chapters" / "98_trajectory_io.ipynb", checkout / "chapters" / "98_trajectory_io.ipynb")
    notes = lab_notes(checkout, copy_chapters(checkout), str(checkout / "chapters" / "98_trajectory_io.ipynb"))
    assert any("chapters/98_trajectory_io.ipynb is an appendix notebook, read where it is" in n for n in notes), notes
    assert not (checkout / "work" / "chapters" / "98_trajectory_io.ipynb").exists()


def test_lab_on_a_tracked_chapter_opens_it_and_says_it_is_tracked(checkout):
    from donegate.cli import copy_chapters, lab_notes

    notes = lab_notes(checkout, copy_chapters(checkout), str(checkout / "chapters" / "02_hooks.ipynb"))
    assert any("chapters/02_hooks.ipynb is the tracked chapter" in n and "work/chapters/02_hooks.ipynb" in n
               for n in notes), notes


def test_lab_turns_off_every_part_of_nbgrader_this_environment_installs(workbook):
    from donegate.cli import lab_config

    folder = lab_config(workbook)
    page = json.loads((folder / "labconfig" / "page_config.json").read_text())
    assert page["disabledExtensions"] == {"@jupyter/nbgrader": True}
    server = json.loads((folder / "jupyter_server_config.json").read_text())["ServerApp"]["jpserver_extensions"]
    installed = json.loads((Path(sys.prefix) / "etc" / "jupyter" / "jupyter_server_config.d" / "nbgrader.json")
                           .read_text())["ServerApp"]["jpserver_extensions"]
    assert set(installed) and {name: False for name in installed} == server
    labext = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "@jupyter" / "nbgrader" / "package.json"
    assert json.loads(labext.read_text())["name"] in page["disabledExtensions"]


def test_recall_hands_out_a_blank_copy_per_repetition(workbook, tmp_path, monkeypatch, capsys):
    progress = tmp_path / "progress.json"
    monkeypatch.setenv("DONEGATE_PROGRESS_FILE", str(progress))
    assert main(["recall", "recall02"]) == 0
    first = workbook / "work" / "recall02-hooks" / "1" / "recall02-hooks.ipynb"
    assert first.is_file() and "recall02-hooks, repetition 1 of 4" in capsys.readouterr().out
    first.write_text('{"my": "first try"}')
    _passes(progress, recall02_hooks=timedelta(hours=1))
    assert main(["recall", "recall02-hooks"]) == 0
    second = workbook / "work" / "recall02-hooks" / "2" / "recall02-hooks-v2.ipynb"
    assert second.read_bytes() == (workbook / "labs" / "recall02-hooks-v2" / "recall02-hooks-v2.ipynb").read_bytes()
    assert first.read_text() == '{"my": "first try"}'
    assert main(["recall", "lab01"]) == 2 and "is a lab" in capsys.readouterr().err


def test_each_repetition_hands_out_its_own_variant_and_every_variant_s_pass_counts(workbook, tmp_path, monkeypatch,
                                                                                   capsys):
    """Repetition n hands out variant n (the exercise itself first, then -v2, -v3, -v4, then round again); a pass of
    a variant is a pass of the exercise, in the schedule and in `progress`; the short name names the exercise."""
    from donegate.progress import progress_rows

    progress = tmp_path / "progress.json"
    monkeypatch.setenv("DONEGATE_PROGRESS_FILE", str(progress))
    handed = []
    for n, variant in enumerate(["recall02-hooks", "recall02-hooks-v2", "recall02-hooks-v3", "recall02-hooks-v4",
                                 "recall02-hooks"], start=1):
        assert main(["recall", "recall02"]) == 0
        said = capsys.readouterr().out
        copy = workbook / "work" / "recall02-hooks" / str(n) / f"{variant}.ipynb"
        assert copy.read_bytes() == (workbook / "labs" / variant / f"{variant}.ipynb").read_bytes()
        assert f"from labs/{variant}/ into work/recall02-hooks/{n}/" in said
        assert f"uv run donegate check work/recall02-hooks/{n}/{variant}.ipynb" in said
        handed.append(copy)
        _passes(progress, lab01_fail_open_hooks=timedelta(days=30),
                **{f"recall02_hooks{'' if k == 1 else f'_v{k}'}": timedelta(days=29 - k) for k in range(1, n + 1) if k <= 4})
    row = next(r for r in progress_rows(root=workbook, progress_path=progress) if r.assignment == "recall02-hooks")
    assert row.state == "done" and row.label.count(" done ") == 4
    assert len({p.read_bytes() for p in handed[:4]}) == 4, "two repetitions handed out the same page"


def test_recall_says_what_it_copied_which_repetition_it_is_and_when_it_is_due(workbook, tmp_path, monkeypatch, capsys):
    progress = tmp_path / "progress.json"
    monkeypatch.setenv("DONEGATE_PROGRESS_FILE", str(progress))
    assert main(["recall", "recall02"]) == 0  # before the lab: nothing is due yet
    said = capsys.readouterr().out
    assert "Copied 1 file(s) from labs/recall02-hooks/ into work/recall02-hooks/1/" in said
    assert "labs/1/" not in said and "from memory too" not in said
    assert "recall02-hooks, repetition 1 of 4: not due yet" in said and "marked early (before the lab)" in said
    _passes(progress, lab01_fail_open_hooks=timedelta(hours=2))  # two hours after the lab: due in 22 h
    shutil.rmtree(workbook / "work")
    assert main(["recall", "recall02"]) == 0
    said = capsys.readouterr().out
    assert "recall02-hooks, repetition 1 of 4, due in 22 h (" in said and "still counts, marked early" in said
    _passes(progress, lab01_fail_open_hooks=timedelta(days=4), recall02_hooks=timedelta(days=3))
    assert main(["recall", "recall02"]) == 0  # the second repetition was due a day after the first
    said = capsys.readouterr().out
    assert "into work/recall02-hooks/2/" in said and "recall02-hooks, repetition 2 of 4, due since " in said
    assert "a pass now is on time" in said and "your earlier copy (work/recall02-hooks/1/)" in said


def _start_from(env: dict, monkeypatch, capsys) -> str:
    for name in ("JUPYTER_SERVER_ROOT", "JUPYTER_SERVER_URL", "JPY_PARENT_PID"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(["start", "lab01"]) == 0
    return capsys.readouterr().out


def test_start_says_how_to_open_the_copy_from_where_it_was_typed(workbook, monkeypatch, capsys):
    """JupyterLab's terminals carry JUPYTER_SERVER_ROOT (jupyter_server_terminals), its kernels JPY_PARENT_PID
    (jupyter_client): there the next step is the file browser, not a second JupyterLab."""
    mine = f"work/{LAB01}/{LAB01}.ipynb"
    plain = _start_from({}, monkeypatch, capsys)
    assert f"uv run donegate lab {mine}" in plain
    terminal = _start_from({"JUPYTER_SERVER_ROOT": str(workbook), "JUPYTER_SERVER_URL": "http://localhost:8888/"},
                           monkeypatch, capsys)
    assert "donegate lab" not in terminal and f"file browser (the folder icon on the left): {mine}" in terminal
    above = _start_from({"JUPYTER_SERVER_ROOT": str(workbook.parent)}, monkeypatch, capsys)
    assert f"file browser (the folder icon on the left): {workbook.name}/{mine}" in above
    kernel = _start_from({"JPY_PARENT_PID": "4242"}, monkeypatch, capsys)
    assert "donegate lab" not in kernel and f"file browser (the folder icon on the left): {mine}" in kernel
    elsewhere = _start_from({"JUPYTER_SERVER_ROOT": "/nowhere/else"}, monkeypatch, capsys)
    assert "serves /nowhere/else, which does not hold" in elsewhere and f"uv run donegate lab {mine}" in elsewhere


def test_the_host_choices_are_the_hosts_the_gate_speaks_for():
    from donegate.cli import GATE_HOSTS
    from donegate.hosts import HOSTS
    assert GATE_HOSTS == tuple(HOSTS)
