"""`donegate trajectory show|validate|schema`, run as the installed console script."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from donegate.cli import main
from donegate.trajectory import TrajectoryWriter, default_artifact_dir

DONEGATE = Path(sys.executable).parent / "donegate"


def donegate(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(DONEGATE), *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def written_run(path: Path, status: str = "verified") -> Path:
    """A trajectory written by the library: two turns, a long tool output, hooks, a verification."""
    w = TrajectoryWriter(path, run_id="r-cli", task_id="cap-discount")
    w.run_started("cap the bulk discount")
    w.turn_started()
    w.model_reply("Running the tests.", promises=["Bash"])
    w.tool_requested("Bash", {"command": "pytest -v"}, call_id="c1")
    w.hook_decision("before_tool_call", "no_rm_rf", "allow", "", tool_name="Bash")
    w.tool_completed("c1", "Bash", "tests/test_x.py::test_a PASSED\n" * 300 + "tests/test_x.py::test_b FAILED\n",
                     exit_code=1)
    w.model_reply("All tests pass.", claims=["all tests pass"])
    w.stop_requested("the model says it is done")
    w.verification_result("pytest -v", 1, "1 failed\n")
    w.hook_decision("on_stop", "acceptance_check", "block", "the acceptance check failed")
    w.run_finished(status, "stop budget spent; the check still fails")
    return path


@pytest.fixture
def run_file(tmp_path) -> Path:
    return written_run(tmp_path / "run.jsonl")


def edit_lines(path: Path, edit) -> None:
    path.write_text("".join(edit(path.read_text().splitlines(keepends=True))))


def output(done: subprocess.CompletedProcess) -> str:
    return done.stdout + done.stderr


def test_the_console_script_is_installed_next_to_python():
    assert DONEGATE.is_file()


def test_validate_of_a_library_written_trajectory_exits_0(run_file, tmp_path):
    done = donegate("trajectory", "validate", str(run_file), cwd=tmp_path)
    assert done.returncode == 0, output(done)
    assert done.stdout.startswith(f"valid: {run_file}")
    assert "artifacts checked by hash" in done.stdout


def test_validate_names_a_seq_gap_by_line(run_file, tmp_path):
    edit_lines(run_file, lambda ls: ls[:4] + ls[5:])
    done = donegate("trajectory", "validate", str(run_file), cwd=tmp_path)
    assert done.returncode == 1
    assert "first problem: line 5: seq jumps from 4 to 6: event 5 is missing" in done.stdout


def test_validate_names_a_tampered_artifact_by_line(run_file, tmp_path):
    ref = json.loads(run_file.read_text().splitlines()[5])["payload"]["output"]["artifact_ref"]
    artifact = default_artifact_dir(run_file) / ref.removeprefix("sha256:")
    os.chmod(artifact, 0o644)
    artifact.write_text(artifact.read_text().replace("FAILED", "PASSED"))
    done = donegate("trajectory", "validate", str(run_file), cwd=tmp_path)
    assert done.returncode == 1
    assert "first problem: line 6: tool_completed: artifact sha256:" in done.stdout
    assert "has been changed since it was stored" in done.stdout


def test_validate_of_a_file_that_is_not_json_names_line_1(tmp_path):
    notes = tmp_path / "notes.jsonl"
    notes.write_text("All 90 tests pass.\nDone.\n")
    done = donegate("trajectory", "validate", str(notes), cwd=tmp_path)
    assert done.returncode == 1
    assert "first problem: line 1: not valid JSON" in done.stdout


def test_validate_names_a_torn_last_line(run_file, tmp_path):
    edit_lines(run_file, lambda ls: ls[:-1] + [ls[-1][:25]])
    done = donegate("trajectory", "validate", str(run_file), cwd=tmp_path)
    assert done.returncode == 1
    assert "first problem: line 11: torn last line" in done.stdout
    assert "10 complete events before it are kept" in done.stdout


def test_validate_of_a_missing_file_exits_2_and_says_so(tmp_path):
    done = donegate("trajectory", "validate", "nowhere.jsonl", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("donegate trajectory validate: nowhere.jsonl does not exist.")
    assert "Traceback" not in done.stderr


def test_validate_looks_for_artifacts_where_it_is_told(run_file, tmp_path):
    moved = tmp_path / "kept-elsewhere"
    default_artifact_dir(run_file).rename(moved)
    missing = donegate("trajectory", "validate", str(run_file), cwd=tmp_path)
    assert missing.returncode == 1 and "is missing" in missing.stdout and "--artifacts DIR" in missing.stdout
    found = donegate("trajectory", "validate", str(run_file), "--artifacts", str(moved), cwd=tmp_path)
    assert found.returncode == 0, output(found)


def test_show_prints_one_row_per_event_with_seq_time_turn_and_type(run_file, capsys):
    assert main(["trajectory", "show", str(run_file)]) == 0
    shown = capsys.readouterr().out
    rows = [line.split() for line in shown.splitlines() if line[:4].strip().isdigit()]
    assert [int(r[0]) for r in rows] == list(range(1, 12))
    assert rows[3][2:4] == ["1", "tool_requested"] and re.fullmatch(r"\d\d:\d\d:\d\d\.\d{3}", rows[3][1])
    assert "result: VERIFIED" in shown


def test_show_of_a_yielded_unverified_run_says_unverified_loudly_and_never_passed(tmp_path, capsys):
    path = written_run(tmp_path / "handed-over.jsonl", status="yielded_unverified")
    assert main(["trajectory", "show", str(path)]) == 0
    ending = capsys.readouterr().out.split("run_finished", 1)[1]
    assert "UNVERIFIED" in ending and "####" in ending
    assert "passed" not in ending.lower()


def test_show_of_a_damaged_file_lists_its_problems_and_exits_1(run_file, capsys):
    edit_lines(run_file, lambda ls: ls[:-1] + [ls[-1][:25]])
    assert main(["trajectory", "show", str(run_file)]) == 1
    shown = capsys.readouterr().out
    assert "UNFINISHED" in shown and "line 11: torn last line" in shown


def test_show_of_a_missing_file_exits_2(tmp_path):
    done = donegate("trajectory", "show", "nowhere.jsonl", cwd=tmp_path)
    assert done.returncode == 2 and "does not exist" in done.stderr


def test_show_or_validate_without_a_file_exits_2_and_asks_for_one(capsys):
    assert main(["trajectory", "validate"]) == 2
    assert "which file?" in capsys.readouterr().err


def test_schema_prints_the_event_schema_as_json(tmp_path):
    done = donegate("trajectory", "schema", cwd=tmp_path)
    assert done.returncode == 0
    assert json.loads(done.stdout)["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_trajectory_is_listed_in_the_help(tmp_path):
    done = donegate("--help", cwd=tmp_path)
    assert done.returncode == 0 and "trajectory" in done.stdout


def test_importing_the_trajectory_modules_imports_neither_matplotlib_nor_jsonschema():
    probe = ("import sys, donegate.trajectory, donegate.trajectory_io; "
             "print(sorted(m for m in ('matplotlib', 'jsonschema', 'nbformat', 'ipywidgets') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr
