"""nbgrader settings for the donegate course.

Run instructor commands from this folder (`cd grading && uv run nbgrader ...`): nbgrader reads
`nbgrader_config.py` from the working directory. Every path below is derived from this file's
location, so a copy of the repository (or of solutions/ + grading/) elsewhere is a course of its own.
"""
from pathlib import Path

c = get_config()  # noqa: F821 (provided by nbgrader's config loader)

ROOT = Path(__file__).resolve().parent.parent

c.CourseDirectory.course_id = "donegate"
c.CourseDirectory.root = str(ROOT)
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "labs"
c.CourseDirectory.submitted_directory = "grading/submitted"
c.CourseDirectory.autograded_directory = "grading/autograded"
c.CourseDirectory.feedback_directory = "grading/feedback"
c.CourseDirectory.db_url = f"sqlite:///{ROOT / 'grading' / 'gradebook.db'}"

# The instructor's commands act on every student, also where the hub's nbgrader settings (grading/hub/) name the
# one learner a Jupyter process belongs to.
c.CourseDirectory.student_id = "*"

# A hanging cell fails after this many seconds instead of stalling a whole grading run.
c.Execute.timeout = 60

# Once the last cell has run, the kernel is stopped at once (killed with its sandbox), not asked to exit
# and waited for: a graceful exit takes 0.3 s a notebook, and a notebook that hangs in its exit (a thread
# left running, a handler that sleeps) would hold grading up to 5 s more. Its outputs are all in by then.
c.Execute.shutdown_kernel = "immediate"

# A learner who deletes a test cell still gets it graded: nbgrader puts it back from the gradebook.
c.OverwriteCells.add_missing_cells = True

# Never copy self-check pages or editor leftovers from solutions/ into the release.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.feedback.html", "*.feedback.js"]

# The learner's code runs in a sandbox (bubblewrap): it cannot read the course (solutions, gradebook,
# other submissions), reach the network, or outlive its kernel. Before the scores are saved, the judge
# decides every test in a process that never ran the learner's code (which runs again, in the sandbox, as a
# host that answers each of the tests' probes with one line of plain data); each test cell's points are its verdict, and the
# vetting only flags a notebook for a person. Otherwise the list is nbgrader 0.9's own
# (donegate.sandbox.SANDBOXED_AUTOGRADE, appendix 82; the judge is appendix 83).
c.Autograde.autograde_preprocessors = [
    "donegate.sandbox.SandboxedExecute",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "donegate.judge.JudgeOutside",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]

# Before the cells are overwritten, an honest slip is made gradable: a copy-pasted answer cell (nbgrader
# 0.9.6 stops with KeyError on it) becomes an ordinary cell, a missing answer cell comes back empty
# (donegate.sandbox.SANITIZE, appendix 82). nbgrader's own list otherwise.
c.Autograde.sanitize_preprocessors = [
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.DeduplicateIds",
    "donegate.sandbox.RepairCells",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "nbgrader.preprocessors.OverwriteCells",
    "nbgrader.preprocessors.CheckCellMetadata",
]
