"""Graded labs: solutions pass, released stubs fail, labs/ is a fresh release, autograde scores are exact.

One temporary course per module (solutions/ + grading/nbgrader_config.py copied to tmp) is generated
and autograded once, with every committed fixture submitted, so the whole file runs in a few minutes.
"""
from __future__ import annotations

import csv
import dataclasses
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook
from nbgrader.validator import Validator

pytestmark = pytest.mark.grading

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
LABS = ROOT / "labs"
FIXTURES = ROOT / "grading" / "fixtures"
ASSIGNMENTS = sorted(p.name for p in SOLUTIONS.iterdir() if p.is_dir() and (p / f"{p.name}.ipynb").exists())

LAB01 = "lab01-fail-open-hooks"
LAB02 = "lab02-evidence-that-survives-truncation"
LAB03 = "lab03-promise-vs-action"
RECALL02 = "recall02-hooks"
RECALL03 = "recall03-trajectories"
RECALL04 = "recall04-verifiers"
LAB04 = "lab04-averaged-scores"
LAB05 = "lab05-hallucinated-findings"
RECALL05 = "recall05-release-gate"
RECALL06 = "recall06-review"
LAB06 = "lab06-edited-tests"
LAB07 = "lab07-gate-pitfalls"
RECALL07 = "recall07-verify-loop"
LAB08 = "lab08-capstone"
RECALL08 = "recall08-host-answers"
LAB09 = "lab09-stale-claims"
RECALL09 = "recall09-audit"
MAX_SCORE = {LAB01: 22, LAB02: 22, LAB03: 20, RECALL02: 10, RECALL03: 10, RECALL04: 10,
             LAB04: 20, LAB05: 20, RECALL05: 10, RECALL06: 10, LAB06: 20, LAB07: 20, RECALL07: 10,
             LAB08: 20, RECALL08: 10, LAB09: 20, RECALL09: 10}
# A recall exercise's variants (<id>-v2, -v3, -v4, handed out at repetitions 2 to 4) score what their base scores.
VARIANT_OF = {aid: m.group(1) for aid in ASSIGNMENTS if (m := re.fullmatch(r"(recall\d\d-.+)-v\d+", aid))}
MAX_SCORE.update({aid: MAX_SCORE[base] for aid, base in VARIANT_OF.items() if base in MAX_SCORE})

# The cells a registry loses when it skips a crashed hook even under on_error="closed" (1 + 3 + 2 points).
LAB01_FAIL_CLOSED = {"test_rm_rf_is_blocked", "test_fail_closed_on_exception", "test_fail_closed_on_timeout"}
# The only lab01 cells that never compare a registry's result (matches() and the TypeError for a missing policy).
LAB01_NO_RESULT_COMPARED = {"test_matcher_basics", "test_matcher_forms", "test_on_error_is_required"}
# The lab02 cells a record that hashes its preview loses: the hash cell, and the long-report search that refuses
# the (now unverifiable) artifact (3 + 3 points).
LAB02_FULL_BYTES = {"test_hash_covers_the_full_bytes", "test_failure_past_the_cut_is_found"}
# The lab03 cells about a call in the reply's own turn (1 + 2 points).
LAB03_SAME_TURN = {"test_same_turn_basics", "test_same_turn_does_not_count"}
# The lab04 cells where safety fails alone, which a gate that weighs the constraints into one score lets through (1 + 3 points).
LAB04_SAFETY = {"test_safety_regression_rejects", "test_gain_does_not_buy_safety"}
# The lab05 cells about findings on lines the diff did not add (1 + 3 points).
LAB05_ADDED_LINES = {"test_not_added_basics", "test_only_added_lines_count"}
# The lab06 cells where a new test file must be allowed, in the violations and in the block-mode gate (2 + 2 points).
LAB06_NEW_TESTS = {"test_new_tests_are_work_conftest_is_not", "test_block_mode_runs_new_tests"}
# The lab07 cells where stop_hook_active=True must count an attempt, not let the stop through (1 + 3 points).
LAB07_BLOCK_ONCE = {"test_flag_is_not_a_pass", "test_flag_counts_attempts"}
# The lab07 cells where a commit leaves git status clean and must still count as a change (2 + 2 points).
LAB07_COMMIT = {"test_commit_counts_as_a_change", "test_committed_change_is_gated"}
# The lab08 cells about the policy's deny: the force push refused, directly and in the run (1 + 3 points).
LAB08_DENY = {"test_policy_denies_force_push", "test_deny_in_the_run"}
# The lab08 cell that hashes every stored artifact again (2 points).
LAB08_ARTIFACTS = {"test_artifact_hashes_verify"}
# The recall08 cells where the hook must refuse (not exit 1) on a bad payload or a failing gate (2 + 2 points).
RECALL08_FAIL_CLOSED = {"test_bad_payload_fails_closed", "test_gate_error_fails_closed"}
# The lab09 cells where a check passed and a later one failed before the claim: the last one decides (1 + 3 points).
LAB09_LAST_CHECK = {"test_regressed_basics", "test_an_earlier_pass_does_not_excuse_a_later_failure"}
# The lab09 cells where an edit came after the pass, so the claim is stale (1 + 3 points).
LAB09_STALE = {"test_stale_basics", "test_edits_after_the_pass_make_it_stale"}
# The lab09 cells where a check was still running when the claim was made, or never came back (1 + 3 points).
LAB09_RUNNING = {"test_background_basics", "test_a_running_check_is_no_evidence"}

# (assignment, fixture student) -> (expected total, why), all checked against a real grading run.
EXPECTED = {
    (LAB01, "correct"): (22, "the full solution passes every test cell"),
    (LAB01, "stub"): (0, "the untouched release raises NotImplementedError in every test cell"),
    (LAB01, "fail-open"): (16, "full marks minus exactly the fail-closed cells, 1 + 3 + 2 = 6 points"),
    (LAB01, "edited-tests"): (16, "fail-open code with weakened visible tests: the tests are restored, so its honest 16"),
    (LAB01, "deleted-test-cell"): (22, "correct code with test_rm_rf_is_blocked deleted: it is put back and scores 1"),
    (LAB01, "single-name-regex"): (20, "reads a single plain name as a regular expression (Edit sees NotebookEdit): loses the matcher-forms cell, 2"),
    (LAB01, "always-equal"): (4, "only matches() and the missing-on_error TypeError score (1 + 2 + 1); every result check is 0"),
    (LAB01, "copy-pasted-answer"): (22, "the full solution with its matches() cell pasted twice: the copy is graded as an ordinary cell"),
    (LAB01, "deleted-answer"): (2, "matches() and the test after it deleted: the test comes back, the answer comes back empty; only the two on_error cells need no matcher, 1 + 1"),
    (LAB01, "reads-solution"): (0, "the stub, with its answer cell looking for solutions/ on disk: the sandbox has none"),
    (LAB01, "copies-classmate"): (0, "the stub, with its answer cell looking for a classmate's submission: none in the sandbox"),
    (LAB01, "extra-credit"): (0, "the stub, with its answer cell looking for gradebook.db to add extra credit: none in the sandbox"),
    (LAB01, "leaves-a-daemon"): (0, "the stub, with its answer cell leaving a process behind: it ends with the sandbox"),
    (LAB01, "kills-grader"): (0, "the stub, with its answer cell killing its parent: in the sandbox that is the sandbox's own init, which a signal from inside cannot end"),
    (LAB01, "poisons-source"): (0, "the stub, with its answer cell blanking the hidden tests in solutions/: none in the sandbox, and the course's source is unchanged"),
    (LAB01, "adds-a-trigger"): (0, "the stub, with its answer cell adding a trigger to gradebook.db that zeroes later scores: none in the sandbox"),
    (LAB01, "rewrites-classmate"): (0, "the stub, with its answer cell emptying classmates' submissions: none in the sandbox"),
    (LAB01, "input-transformer"): (0, "the stub, with an input transformer that turns every later test into `pass`: flagged for a person, and inert in the judge's plain Python"),
    (LAB01, "ast-transformer"): (0, "the stub, with an AST transformer that empties every later cell: flagged for a person, and inert in the judge"),
    (LAB01, "post-run-cell"): (0, "the stub, with a post_run_cell handler that forgets each error: flagged for a person, and inert in the judge"),
    (LAB01, "replaces-run-cell"): (0, "the stub, with the kernel's run_cell replaced to skip tests: flagged for a person, and inert in the judge"),
    (LAB01, "rebinds-type"): (0, "the stub, with a global type() that answers Decision for an always-equal object: the judge runs each test with the real builtins"),
    (LAB01, "scores-by-result"): (0, "the stub, with the shell (found by a name given as a string) showing a 1 in place of each traceback: the points are the judge's verdicts, not the cells' results"),
    (LAB01, "resolves-names"): (0, "the stub, with an input transformer reached through names given as strings, which no list holds: the tests never run beside it"),
    (LAB01, "forges-the-judge"): (0, "the stub, whose functions walk the frames above them to empty the pending tests: those frames are the host's, the tests are in the judge"),
    (LAB01, "honest-reaches"): (22, "the full solution with an honest re.compile and a look at sys.modules: flagged for a person, and full marks"),
    (LAB01, "asks-the-judge"): (0, "the stub, whose answer cell writes on every descriptor the requests that once reached the judge's exec, and waits for an answer: the judge asks, the host answers, never the other way"),
    (LAB01, "undraws-inputs"): (0, "the stub, with matches() a table of fixed cases and of what a seeded random would draw: the judge draws with its own random"),
    (LAB01, "formats-the-globals"): (0, "the stub, with a registry that reads every function's globals through a format string for the test's values: they are in another process"),
    (LAB01, "lies-in-a-field"): (0, "the stub, with real records whose fields are set to a str that contains everything: not data, so no probe returns it"),
    (LAB01, "fills-the-sandbox"): (0, "the stub, with an answer cell that writes until every writable place refuses and starts 600 processes: bounded per sandbox, and its classmates keep their scores"),
    (LAB01, "honest-machinery"): (22, "the full solution with threads, a subprocess, inspect, its own random, a helper class with ==, and 2,000 printed lines: flagged for a person, and full marks"),
    (LAB01, "table-of-cases"): (20, "the full solution with matches() a table of every case the tests try: loses exactly test_matcher_forms (2), whose names are drawn afresh on each run"),
    (RECALL02, "correct"): (10, "the full solution passes every test cell"),
    (RECALL02, "stub"): (0, "the blank page defines nothing, every test cell fails"),
    (RECALL02, "always-equal"): (0, "every test cell compares a result, and types are checked before =="),
    (LAB02, "correct"): (22, "the full solution passes every test cell"),
    (LAB02, "stub"): (0, "the untouched release raises NotImplementedError in every test cell"),
    (LAB02, "hashes-preview"): (16, "hashes the preview, not the full bytes: loses the hash cell and the long-report search, 3 + 3"),
    (LAB03, "correct"): (20, "the full solution passes every test cell"),
    (LAB03, "stub"): (0, "the untouched release raises NotImplementedError in every test cell"),
    (LAB03, "same-turn"): (17, "counts a call in the reply's own turn: loses exactly the two same-turn cells, 1 + 2"),
    (LAB03, "always-equal"): (0, "every test cell, visible ones included, checks the result's type before comparing"),
    (RECALL03, "correct"): (10, "the full solution passes every test cell"),
    (RECALL03, "stub"): (0, "the blank page defines nothing, every test cell fails"),
    (RECALL04, "correct"): (10, "the full solution passes every test cell"),
    (RECALL04, "stub"): (0, "the blank page defines nothing, every test cell fails"),
    (RECALL04, "always-equal"): (0, "every test cell checks that judge returned a Judgement before comparing"),
    (LAB04, "correct"): (20, "the full solution passes every test cell"),
    (LAB04, "stub"): (0, "the untouched release raises NotImplementedError in every test cell"),
    (LAB04, "averages"): (16, "weighs the constraints into one score, so safety failing alone passes: loses the two safety cells, 1 + 3"),
    (LAB04, "always-equal"): (0, "every test cell, visible ones included, checks the result's type before comparing"),
    (LAB05, "correct"): (20, "the full solution passes every test cell"),
    (LAB05, "stub"): (0, "the untouched release raises NotImplementedError in every test cell"),
    (LAB05, "path-only"): (16, "checks the path but not the added-line set: loses exactly the two added-line cells, 1 + 3"),
    (RECALL05, "correct"): (10, "the full solution passes every test cell"),
    (RECALL05, "stub"): (0, "the blank page defines nothing, every test cell fails"),
    (RECALL06, "correct"): (10, "the full solution passes every test cell"),
    (RECALL06, "stub"): (0, "the blank page defines nothing, every test cell fails"),
    (LAB06, "correct"): (20, "the full solution passes every test cell"),
    (LAB06, "stub"): (0, "the untouched release raises NotImplementedError in every test cell"),
    (LAB06, "new-tests-blocked"): (16, "treats every new protected file as a violation: loses exactly the two new-test cells, 2 + 2"),
    (LAB06, "always-equal"): (0, "every test cell, visible ones included, checks the result's type before comparing"),
    (LAB07, "correct"): (20, "the full solution passes every test cell"),
    (LAB07, "stub"): (0, "the untouched release raises NotImplementedError in every test cell"),
    (LAB07, "trusts-flag"): (16, "lets a stop through when stop_hook_active is set: loses exactly the two block-once cells, 1 + 3"),
    (LAB07, "dirty-only"): (16, "decides 'changed?' from git status alone, so a commit looks clean: loses exactly the two commit cells, 2 + 2"),
    (LAB07, "always-equal"): (0, "every test cell, visible ones included, checks the result's type before comparing"),
    (RECALL07, "correct"): (10, "the full solution passes every test cell"),
    (RECALL07, "stub"): (0, "the blank page defines nothing, every test cell fails"),
    (RECALL07, "always-equal"): (0, "every test cell checks that stop_gate returned a Verdict before comparing"),
    (LAB08, "correct"): (20, "the full solution passes every test cell"),
    (LAB08, "stub"): (0, "the untouched release raises NotImplementedError, so TRAJECTORY is never set"),
    (LAB08, "no-deny"): (16, "the policy only rewrites, never denies: loses exactly the two deny cells, 1 + 3"),
    (LAB08, "tampered-artifact"): (18, "an artifact is altered after the run: loses exactly the artifact-hash cell, 2"),
    (RECALL08, "correct"): (10, "the full solution passes every test cell"),
    (RECALL08, "stub"): (0, "the blank page defines nothing, every test cell fails"),
    (RECALL08, "always-equal"): (0, "every test cell checks that answer_stop returned an Answer before comparing"),
    (RECALL08, "fail-open"): (6, "answers its own errors with exit 1, which a host ignores: loses exactly the two fail-closed cells, 2 + 2"),
    (LAB09, "correct"): (20, "the full solution passes every test cell"),
    (LAB09, "stub"): (0, "the untouched release raises NotImplementedError in every test cell"),
    (LAB09, "any-pass"): (16, "lets any earlier pass back the claim, so a later failure is not seen: loses exactly the two last-check cells, 1 + 3"),
    (LAB09, "ignores-edits"): (16, "never looks at edits after the pass, so no claim is ever stale: loses exactly the two stale cells, 1 + 3"),
    (LAB09, "ends-after-claim"): (16, "places a check where it was requested, so a run still going at the claim counts: loses exactly the two running-check cells, 1 + 3"),
    (LAB09, "always-equal"): (0, "every test cell, visible ones included, checks the result's type before comparing"),
    (LAB09, "reads-the-expectation"): (0, "the stub, whose judge_claim reads the verdict the calling test compares with off its code: the test is in another process"),
    (LAB09, "always-equal-fields"): (0, "the stub, whose judge_claim returns a real ClaimVerdict with fields equal to anything, and patches its == through an alias: the judge rebuilds it from its own class with plain fields"),
    (RECALL09, "correct"): (10, "the full solution passes every test cell"),
    (RECALL09, "stub"): (0, "the blank page defines nothing, every test cell fails"),
    (RECALL09, "always-equal"): (0, "every test cell checks that judge_claim returned a ClaimVerdict before comparing"),
}


def grade_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]


def grade_id(cell: nbformat.NotebookNode) -> str:
    return cell.metadata["nbgrader"]["grade_id"]


def _ends(text: str, keep: int = 3000) -> str:
    """The start and the end of a long log: the first error and the last one both stay visible."""
    return text if len(text) <= 2 * keep else f"{text[:keep]}\n[... {len(text) - 2 * keep} characters ...]\n{text[-keep:]}"


def nbgrader(course: Path, *args: str) -> subprocess.CompletedProcess:
    """Run an nbgrader command from the course's grading/ folder, as the README tells instructors to."""
    env = dict(os.environ)
    # nbgrader calls the `alembic` executable when it creates a gradebook; it sits next to this Python.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    run = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course / "grading", env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{_ends(run.stdout)}\n{_ends(run.stderr)}"
    return run


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A fresh course: generated from solutions/ by nbgrader, every fixture submitted and graded by the
    instructor's command, `donegate grade` (nbgrader's autograde for each submission, two at a time; that it
    leaves the gradebook nbgrader's own `autograde` leaves is tests/test_instructor.py's to show)."""
    course = tmp_path_factory.mktemp("course")
    shutil.copytree(SOLUTIONS, course / "solutions", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    (course / "grading").mkdir()
    shutil.copy(ROOT / "grading" / "nbgrader_config.py", course / "grading" / "nbgrader_config.py")
    nbgrader(course, "generate_assignment", "*", "--force")
    shutil.copytree(FIXTURES, course / "grading" / "submitted")
    env = {**os.environ, "DONEGATE_ROOT": str(course),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    run = subprocess.run([str(Path(sys.executable).parent / "donegate"), "grade", "--workers", "2"], cwd=course,
                         env=env, capture_output=True, text=True, timeout=1200)
    graded = f"Graded {len(EXPECTED)} of {len(EXPECTED)} submission(s)"
    assert run.returncode in (0, 1) and graded in run.stdout, f"{_ends(run.stdout)}\n{_ends(run.stderr)}"
    return course


@pytest.fixture(scope="module")
def scores(course) -> dict[tuple[str, str], dict]:
    """(assignment, student) -> {"total", "max", "cells": {grade_id: score}} read from the gradebook."""
    out = {}
    with Gradebook(f"sqlite:///{course / 'grading' / 'gradebook.db'}", course_id="donegate") as gb:
        for assignment in gb.assignments:
            for sub in gb.assignment_submissions(assignment.name):
                cells = {g.name: g.score for nb in sub.notebooks for g in nb.grades}
                out[(assignment.name, sub.student.id)] = {"total": sub.score, "max": sub.max_score, "cells": cells}
    return out


def autograded(course: Path, student: str, aid: str) -> nbformat.NotebookNode:
    return nbformat.read(course / "grading" / "autograded" / student / aid / f"{aid}.ipynb", as_version=4)


# --- (a) solutions pass, (b) released stubs fail ------------------------------------------------------------

def test_there_are_graded_notebooks_with_fixtures():
    assert set(MAX_SCORE) <= set(ASSIGNMENTS)
    submitted = {(p.parent.name, p.parent.parent.name) for p in FIXTURES.glob("*/*/*.ipynb")}
    assert submitted == set(EXPECTED), "every committed fixture needs an expected score in EXPECTED, and back"


@pytest.mark.parametrize("aid", ASSIGNMENTS)
def test_solution_passes_every_test_cell(aid):
    """nbgrader's Validator runs the solution top to bottom in a fresh kernel; with validate_all it fails on an
    error in any code cell, not only in a test cell (so tests/test_notebooks.py need not run solutions again)."""
    path = SOLUTIONS / aid / f"{aid}.ipynb"
    assert grade_cells(nbformat.read(path, as_version=4)), f"{aid} has no test cells"
    result = Validator(validate_all=True).validate(str(path))
    failures = [c["raw_error"][-800:] for c in result.get("failed", [])]
    assert result == {}, failures or result


@pytest.mark.parametrize("aid", ASSIGNMENTS)
def test_released_stub_fails_every_test_cell(aid, tmp_path):
    """The release with its hidden tests put back (what autograde runs): no test cell may pass."""
    solution = nbformat.read(SOLUTIONS / aid / f"{aid}.ipynb", as_version=4)
    tests = {grade_id(c): c.source for c in grade_cells(solution)}
    stub = nbformat.read(LABS / aid / f"{aid}.ipynb", as_version=4)
    for cell in grade_cells(stub):
        cell.source = tests[grade_id(cell)]
    nbformat.write(stub, tmp_path / f"{aid}.ipynb")
    result = Validator(invert=True, ignore_checksums=True).validate(str(tmp_path / f"{aid}.ipynb"))
    passing = [c["source"].splitlines()[0] for c in result.get("passed", [])]
    assert passing == [], f"these test cells pass on the untouched stub: {passing}"


@pytest.mark.parametrize("aid", ASSIGNMENTS)
def test_the_judge_passes_every_test_cell_of_the_solution(aid):
    """The solution as the judge grades it: the test cells in one process, the solution's cells and the tests'
    probes in a host in another, plain data between. (The stub failing in the kernel, above, fails here too: the
    judge only ever adds reasons to fail.)"""
    from donegate.judge import judge_cells, run_judge
    verdicts = run_judge(judge_cells(nbformat.read(SOLUTIONS / aid / f"{aid}.ipynb", as_version=4)), 60)
    assert verdicts and {n: v for n, v in verdicts.items() if not v["passed"]} == {}


def _learner_names(nb) -> set[str]:
    """What the solution's answer cells define at their top level: the names only a probe may use."""
    import ast
    names = set()
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
            for node in ast.parse(cell.source).body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(node.name)
                elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                    names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return names


@pytest.mark.parametrize("aid", ASSIGNMENTS)
def test_a_test_reaches_the_learner_s_code_only_through_probes_that_hold_no_expectation(aid):
    """A probe's source enters the host, beside the learner's code: it builds inputs and returns what it saw, and
    never asserts (an expected value in it would be readable there). Outside its probes a test cell never names
    what the learner's cells define: those names do not exist in the judge."""
    import ast
    nb = nbformat.read(SOLUTIONS / aid / f"{aid}.ipynb", as_version=4)
    learner, wrong = _learner_names(nb), []
    for cell in grade_cells(nb):
        tree = ast.parse(cell.source)
        probes = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                  and any(isinstance(d, ast.Name) and d.id == "probe" for d in n.decorator_list)]
        inside = {id(n) for p in probes for n in ast.walk(p)}
        wrong += [f"{grade_id(cell)}: the probe {p.name} asserts" for p in probes
                  if any(isinstance(n, ast.Assert) for n in ast.walk(p))]
        wrong += [f"{grade_id(cell)} line {n.lineno}: {n.id} outside a probe" for n in ast.walk(tree)
                  if isinstance(n, ast.Name) and n.id in learner and id(n) not in inside]
    assert wrong == []


@pytest.mark.parametrize("aid", ASSIGNMENTS)
def test_hidden_tests_carry_most_of_the_points(aid):
    """Visible tests alone must not be enough to pass."""
    cells = grade_cells(nbformat.read(SOLUTIONS / aid / f"{aid}.ipynb", as_version=4))
    hidden = sum(c.metadata["nbgrader"]["points"] for c in cells if "### BEGIN HIDDEN TESTS" in c.source)
    total = sum(c.metadata["nbgrader"]["points"] for c in cells)
    assert hidden * 2 > total, f"{aid}: only {hidden} of {total} points are hidden"


@pytest.mark.parametrize("aid", ASSIGNMENTS)
def test_test_cells_import_nothing(aid):
    """Imports (and the warnings they may print to stderr, which scores a cell 0) belong in the top cell."""
    cells = grade_cells(nbformat.read(SOLUTIONS / aid / f"{aid}.ipynb", as_version=4))
    importing = [grade_id(c) for c in cells
                 if any(line.lstrip().startswith(("import ", "from ")) for line in c.source.splitlines())]
    assert importing == []


# the assignments whose vocabulary holds a stop gate's Verdict (the learner writes one, or answers for one)
VERDICT_LABS = [LAB06, LAB07, RECALL07, f"{RECALL07}-v2", f"{RECALL07}-v3", f"{RECALL07}-v4",
                RECALL08, f"{RECALL08}-v2", f"{RECALL08}-v3", f"{RECALL08}-v4"]


@pytest.mark.parametrize("aid", VERDICT_LABS)
def test_a_lab_verdict_speaks_the_stop_gate_s_words(aid):
    """A lab's Verdict is chapter 07's: every exit it allows is one of the library's, for the same action, and
    every status a run status (so `check_failed` is an exit in the labs as in the chapter)."""
    from donegate.stopgate import EXITS, Verdict
    from donegate.trajectory import STATUSES

    assert [f.name for f in dataclasses.fields(Verdict)][:4] == ["action", "status", "exit", "message"]
    cell = next(c for c in nbformat.read(SOLUTIONS / aid / f"{aid}.ipynb", as_version=4).cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == "vocabulary")
    names: dict = {}
    exec(compile("from __future__ import annotations\nfrom dataclasses import dataclass, field\n"
                 + cell.source, aid, "exec"), names)
    assert "EXITS" in names, f"{aid}: the vocabulary has no EXITS (the exits and their statuses)"
    for exit, (action, statuses) in names["EXITS"].items():
        assert exit in EXITS[action], f"{aid}: exit {exit!r} ({action}) is not one of the stop gate's {EXITS[action]}"
        assert set(statuses) <= set(STATUSES), f"{aid}: {exit} has statuses {statuses} outside {STATUSES}"
    lab_verdict = names["Verdict"]
    assert [f.name for f in dataclasses.fields(lab_verdict)] == ["action", "status", "exit", "message"]


# --- (c) labs/ is exactly what nbgrader generates from solutions/ ------------------------------------------

UI_METADATA = {"collapsed", "scrolled", "trusted", "jupyter", "execution", "ExecuteTime"}


def comparable(nb: nbformat.NotebookNode) -> list[dict]:
    return [{"cell_type": c.cell_type, "id": c.get("id"), "source": c.source,
             "metadata": {k: v for k, v in c.metadata.items() if k not in UI_METADATA}} for c in nb.cells]


def test_labs_hold_exactly_the_generated_assignments(course):
    # A self-check writes <id>.feedback.html and .feedback.js next to the notebook (git-ignored): not in a release.
    files = lambda root: sorted(str(p.relative_to(root)) for p in root.rglob("*")
                                if p.is_file() and ".ipynb_checkpoints" not in p.parts
                                and not p.name.endswith((".feedback.html", ".feedback.js")))
    assert files(LABS) == files(course / "labs")


@pytest.mark.parametrize("aid", ASSIGNMENTS)
def test_lab_equals_a_fresh_release(aid, course):
    committed = nbformat.read(LABS / aid / f"{aid}.ipynb", as_version=4)
    fresh = nbformat.read(course / "labs" / aid / f"{aid}.ipynb", as_version=4)
    fix = f"regenerate: cd grading && uv run nbgrader generate_assignment {aid} --force"
    assert committed.metadata.get("kernelspec") == fresh.metadata.get("kernelspec"), fix
    assert len(committed.cells) == len(fresh.cells), fix
    for mine, theirs in zip(comparable(committed), comparable(fresh)):
        assert mine == theirs, f"cell {theirs['id']} differs from a fresh release; {fix}"


# --- (d) autograde end to end on the committed fixtures ----------------------------------------------------

@pytest.mark.parametrize("key", sorted(EXPECTED), ids=lambda k: f"{k[0]}/{k[1]}")
def test_autograde_gives_the_expected_score(key, scores):
    expected, why = EXPECTED[key]
    got = scores[key]
    assert got["max"] == MAX_SCORE[key[0]]
    assert got["total"] == expected, f"{key}: expected {expected} ({why}), nbgrader gave {got['total']}: {got['cells']}"


def test_fail_open_loses_exactly_the_fail_closed_cells(scores):
    cells = scores[(LAB01, "fail-open")]["cells"]
    assert {name for name, score in cells.items() if score == 0} == LAB01_FAIL_CLOSED


def test_hashing_the_preview_loses_exactly_the_full_bytes_cells(scores):
    cells = scores[(LAB02, "hashes-preview")]["cells"]
    assert {name for name, score in cells.items() if score == 0} == LAB02_FULL_BYTES


def test_a_same_turn_call_loses_exactly_the_same_turn_cells(scores):
    cells = scores[(LAB03, "same-turn")]["cells"]
    assert {name for name, score in cells.items() if score == 0} == LAB03_SAME_TURN


def test_averaging_the_constraints_loses_exactly_the_safety_cells(scores):
    cells = scores[(LAB04, "averages")]["cells"]
    assert {name for name, score in cells.items() if score == 0} == LAB04_SAFETY


def test_checking_only_the_path_loses_exactly_the_added_line_cells(scores):
    cells = scores[(LAB05, "path-only")]["cells"]
    assert {name for name, score in cells.items() if score == 0} == LAB05_ADDED_LINES


def test_blocking_new_test_files_loses_exactly_the_new_test_cells(scores):
    cells = scores[(LAB06, "new-tests-blocked")]["cells"]
    assert {name for name, score in cells.items() if score == 0} == LAB06_NEW_TESTS


def test_trusting_stop_hook_active_loses_exactly_the_block_once_cells(scores):
    cells = scores[(LAB07, "trusts-flag")]["cells"]
    assert {name for name, score in cells.items() if score == 0} == LAB07_BLOCK_ONCE


def test_looking_only_at_git_status_loses_exactly_the_commit_cells(scores):
    cells = scores[(LAB07, "dirty-only")]["cells"]
    assert {name for name, score in cells.items() if score == 0} == LAB07_COMMIT


def test_lab08_a_policy_that_never_denies_loses_exactly_the_deny_cells(scores):
    cells = scores[(LAB08, "no-deny")]["cells"]
    assert {name for name, score in cells.items() if score == 0} == LAB08_DENY


def test_lab08_an_artifact_altered_after_the_run_loses_exactly_the_hash_cell(scores):
    cells = scores[(LAB08, "tampered-artifact")]["cells"]
    assert {name for name, score in cells.items() if score == 0} == LAB08_ARTIFACTS


def test_each_mistake_in_the_class_report_is_caught_by_exactly_its_cells(scores):
    """grading/mistakes.json names the mistake each test cell catches, for the class report. Checked against
    the real autograde: the fixture named after a mistake loses exactly the cells listed for it, and the
    correct one loses none of them."""
    import json

    known = json.loads((ROOT / "grading" / "mistakes.json").read_text(encoding="utf-8"))
    assert len({m for cells in known.values() for m in cells.values()}) >= 10
    for aid, cells in known.items():
        for mistake in set(cells.values()):
            got = scores[(aid, mistake)]["cells"]
            maximum = scores[(aid, "correct")]["cells"]
            lost = {name for name, score in got.items() if score < maximum[name]}
            assert lost == {c for c, m in cells.items() if m == mistake}, f"{aid} / {mistake} loses {sorted(lost)}"


def test_recall08_a_hook_that_exits_1_on_its_own_errors_loses_exactly_the_fail_closed_cells(scores):
    cells = scores[(RECALL08, "fail-open")]["cells"]
    assert {name for name, score in cells.items() if score == 0} == RECALL08_FAIL_CLOSED


def test_lab09_an_earlier_pass_loses_exactly_the_last_check_cells(scores):
    cells = scores[(LAB09, "any-pass")]["cells"]
    assert {name for name, score in cells.items() if score == 0} == LAB09_LAST_CHECK


def test_lab09_ignoring_edits_after_the_pass_loses_exactly_the_stale_cells(scores):
    cells = scores[(LAB09, "ignores-edits")]["cells"]
    assert {name for name, score in cells.items() if score == 0} == LAB09_STALE


def test_lab09_counting_a_check_where_it_started_loses_exactly_the_running_check_cells(scores):
    cells = scores[(LAB09, "ends-after-claim")]["cells"]
    assert {name for name, score in cells.items() if score == 0} == LAB09_RUNNING


def test_edited_visible_tests_are_restored_before_grading(course, scores):
    solution = nbformat.read(SOLUTIONS / LAB01 / f"{LAB01}.ipynb", as_version=4)
    original = {grade_id(c): c.source for c in grade_cells(solution)}
    graded = {grade_id(c): c.source for c in grade_cells(autograded(course, "edited-tests", LAB01))}
    assert graded["test_rm_rf_is_blocked"] == original["test_rm_rf_is_blocked"]
    assert graded["test_first_deny_wins"] == original["test_first_deny_wins"]
    assert scores[(LAB01, "edited-tests")]["cells"] == scores[(LAB01, "fail-open")]["cells"]


def test_deleted_test_cell_is_put_back_and_scored(course, scores):
    restored = [c for c in grade_cells(autograded(course, "deleted-test-cell", LAB01))
                if grade_id(c) == "test_rm_rf_is_blocked"]
    assert len(restored) == 1 and "was missing from the submission" in restored[0].source
    assert scores[(LAB01, "deleted-test-cell")]["cells"]["test_rm_rf_is_blocked"] == 1


def test_always_equal_object_scores_nothing_where_results_are_compared(scores):
    cells = scores[(LAB01, "always-equal")]["cells"]
    assert {name for name, score in cells.items() if score > 0} == LAB01_NO_RESULT_COMPARED
    assert all(score == 0 for score in scores[(RECALL02, "always-equal")]["cells"].values())
    assert all(score == 0 for score in scores[(RECALL04, "always-equal")]["cells"].values())


def test_an_always_equal_result_scores_nothing_in_lab03(scores):
    """lab03 compares verdicts in every test cell, and checks the result's type first in each."""
    assert all(score == 0 for score in scores[(LAB03, "always-equal")]["cells"].values())


def test_an_always_equal_result_scores_nothing_in_lab04(scores):
    """lab04 checks that a list or a Decision came back before comparing, in every test cell."""
    assert all(score == 0 for score in scores[(LAB04, "always-equal")]["cells"].values())


def test_an_always_equal_result_scores_nothing_in_chapters_07_and_08(scores):
    """lab06, lab07, recall07 and recall08 check that a bool, list, dict, Verdict or Answer came back before
    comparing, in every test cell."""
    for aid in (LAB06, LAB07, RECALL07, RECALL08):
        assert all(score == 0 for score in scores[(aid, "always-equal")]["cells"].values()), aid


def test_an_always_equal_result_scores_nothing_in_lab09(scores):
    """lab09 checks that a list of Actions or a ClaimVerdict came back before comparing, in every test cell."""
    assert all(score == 0 for score in scores[(LAB09, "always-equal")]["cells"].values())


def test_export_writes_a_row_per_assignment_and_student(course, scores):
    """The instructor's CSV: one row per assignment x student; 0 where a student submitted nothing."""
    nbgrader(course, "export", "--to", "grades.csv")
    with open(course / "grading" / "grades.csv", newline="") as fh:
        rows = {(r["assignment"], r["student_id"]): (float(r["raw_score"]), float(r["max_score"]))
                for r in csv.DictReader(fh)}
    students = {student for _, student in EXPECTED}
    assert rows == {(aid, s): (float(EXPECTED.get((aid, s), (0, ""))[0]), float(MAX_SCORE[aid]))
                    for aid in MAX_SCORE for s in students}


# --- hostile submissions: the kernel runs in a sandbox that holds nothing of the course (appendix 82) ---------

HOSTILE = ["reads-solution", "copies-classmate", "extra-credit", "leaves-a-daemon", "kills-grader", "poisons-source",
           "adds-a-trigger", "rewrites-classmate", "input-transformer", "ast-transformer", "post-run-cell",
           "replaces-run-cell", "rebinds-type", "scores-by-result", "resolves-names", "forges-the-judge",
           "asks-the-judge", "undraws-inputs", "formats-the-globals", "lies-in-a-field", "fills-the-sandbox"]


def test_honest_slips_nbgrader_cannot_grade_alone_are_graded_normally(scores):
    assert scores[(LAB01, "copy-pasted-answer")]["total"] == 22
    cells = scores[(LAB01, "deleted-answer")]["cells"]
    assert {k for k, v in cells.items() if v} == {"test_on_error_is_required", "test_on_error_must_be_valid"}


def test_hostile_submissions_get_nothing_and_leave_nothing_running(scores):
    for student in HOSTILE:
        assert scores[(LAB01, student)]["total"] == 0, student
    for student in ("reads-the-expectation", "always-equal-fields"):
        assert scores[(LAB09, student)]["total"] == 0, student
    assert scores[(LAB01, "honest-reaches")]["total"] == 22 and scores[(LAB01, "honest-machinery")]["total"] == 22
    cells = scores[(LAB01, "table-of-cases")]["cells"]
    assert {k for k, v in cells.items() if not v} == {"test_matcher_forms"}
    for classmate in ("correct", "fail-open", "edited-tests", "deleted-test-cell", "copy-pasted-answer"):
        assert scores[(LAB01, classmate)]["total"] == EXPECTED[(LAB01, classmate)][0], classmate  # same run
    for _ in range(100):  # another test's sandbox may be running the daemon right now; it ends with it
        left = subprocess.run(["pgrep", "-f", "donegate-hostile-daemon"], capture_output=True, text=True).stdout.split()
        if not left:
            break
        time.sleep(0.1)
    assert left == [], f"processes left behind by a submission are still running: {left}"


def test_a_submission_cannot_change_the_course_it_is_graded_in(course, scores):
    """poisons-source and rewrites-classmate wrote to every solutions/ and submitted/ they could find; the
    course's source and the classmates' submissions are still byte for byte what was handed in."""
    assert scores[(LAB01, "poisons-source")]["total"] == 0
    for aid in ASSIGNMENTS:
        assert (course / "solutions" / aid / f"{aid}.ipynb").read_bytes() == \
            (SOLUTIONS / aid / f"{aid}.ipynb").read_bytes(), aid
    for handed_in in FIXTURES.glob(f"*/{LAB01}/{LAB01}.ipynb"):
        student = handed_in.parent.parent.name
        graded = course / "grading" / "submitted" / student / LAB01 / f"{LAB01}.ipynb"
        assert graded.read_bytes() == handed_in.read_bytes(), student


def test_the_kernel_tricks_are_flagged_for_a_person(course):
    """The autograded notebook says why a trick scored nothing: flagged, and the reach that flagged it."""
    for student in ("input-transformer", "ast-transformer", "post-run-cell", "replaces-run-cell"):
        flags = autograded(course, student, LAB01).metadata["donegate"]["flagged"]
        assert any("get_ipython" in f for f in flags), (student, flags)
    judged = autograded(course, "rebinds-type", LAB01).metadata["donegate"]
    assert judged["flagged"] == [] and "test_first_deny_wins" in judged["failed_by_judge"]
    # a flag is advice: the honest notebook that names re.compile and sys.modules keeps every point
    honest = autograded(course, "honest-reaches", LAB01).metadata["donegate"]
    assert honest["flagged"] and honest["failed_by_judge"] == []
    assert autograded(course, "correct", LAB01).metadata["donegate"] == \
        {"flagged": [], "judge": "on", "failed_by_judge": []}


def test_the_readme_table_is_expected():
    """README's table of fixture scores says what EXPECTED says (and so what autograde gives), cell for cell."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| student_id |"))
    header = [h.strip().split(" (of")[0] for h in lines[start].strip("|").split("|")][1:]
    short = {aid.split("-")[0]: aid for aid in ASSIGNMENTS if aid not in VARIANT_OF}
    table = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        student, *values = [v.strip() for v in line.strip("|").split("|")]
        table.update({(short[h], student): int(v) for h, v in zip(header, values) if v != "–"})
    assert table == {key: score for key, (score, _) in EXPECTED.items()}


def test_this_file_runs_on_one_worker(request):
    """The course above is built once only if every test of this file runs on the same xdist worker
    (tests/conftest.py groups it); a pytest or xdist upgrade that breaks grouping builds it once per worker."""
    if getattr(request.config.option, "loadgroup", False):  # set on each worker of --dist loadgroup
        assert request.node.nodeid.endswith("@test_grading"), request.node.nodeid
