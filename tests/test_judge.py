"""The judge (appendix 83): the tests decided in a process that never ran the learner's code, the learner's cells
run in a host in the sandbox, plain values between the two; and the vetting, which only flags.

Each test runs the judge directly on a handful of cells, without nbgrader: a fraction of a second each.
test_grading.py and test_grading_hostile.py grade the same defences end to end.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from donegate.judge import judge_cells, run_judge, vet_notebook, vet_source

pytestmark = pytest.mark.grading

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "grading" / "fixtures"
LAB01 = "lab01-fail-open-hooks"


def cells(*specs: tuple[str, str]) -> list[dict]:
    return [{"kind": kind, "name": f"{kind}{k}", "source": source} for k, (kind, source) in enumerate(specs)]


def verdicts(*specs: tuple[str, str], timeout: float = 10) -> dict[str, bool]:
    return {name: v["passed"] for name, v in run_judge(cells(*specs), timeout).items()}


def notebook(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def restored(submission: dict, source: dict) -> dict:
    """What nbgrader's OverwriteCells makes of a submission before it runs: every locked cell as the source has it."""
    by_id = {c["metadata"]["nbgrader"]["grade_id"]: c for c in source["cells"] if "nbgrader" in c["metadata"]}
    out = json.loads(json.dumps(submission))
    for cell in out["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("locked") and meta.get("grade_id") in by_id:
            cell["source"] = by_id[meta["grade_id"]]["source"]
    return out


# --- vetting ------------------------------------------------------------------------------------------------

REACHING = {"reads-solution", "copies-classmate", "extra-credit", "leaves-a-daemon", "kills-grader", "input-transformer",
            "ast-transformer", "post-run-cell", "replaces-run-cell", "scores-by-result",
            "honest-reaches"}  # the fixtures that reach from an answer cell (the last one honestly: a flag is advice)
HONEST = sorted([*ROOT.glob("solutions/*/*.ipynb"),
                 *(p for p in FIXTURES.glob("*/*/*.ipynb") if p.parent.parent.name not in REACHING)])


@pytest.mark.parametrize("path", HONEST, ids=lambda p: f"{p.parent.parent.parent.name}/{p.parent.parent.name}/{p.stem}")
def test_no_notebook_without_a_reach_is_flagged(path):
    """Every solution and every committed fixture but the reaching ones (rebinds-type, poisons-source and the
    other tricks that only use files are among these): nothing in them is flagged."""
    assert vet_notebook(judge_cells(notebook(path))) == []


@pytest.mark.parametrize("student", sorted(REACHING))
def test_every_reaching_fixture_is_flagged(student):
    assert vet_notebook(judge_cells(notebook(FIXTURES / student / LAB01 / f"{LAB01}.ipynb")))


REACHES = [
    ("get_ipython().input_transformers_cleanup.append(f)", "get_ipython"),
    ("ip = get_ipython()\nip.events.register('post_run_cell', f)", "get_ipython"),
    ("import IPython\nIPython.get_ipython().ast_transformers.append(t)", "imports IPython"),
    ("from IPython import get_ipython", "imports IPython"),
    ("import builtins\nbuiltins.isinstance = lambda *a: True", "imports builtins"),
    ("__builtins__['type'] = lambda x: int", "__builtins__"),
    ("import sys\nf = sys._getframe(1)", "_getframe"),
    ("import sys\nsys.modules['json'].loads = len", "modules"),
    ("import sys\nsys.settrace(tracer)", "settrace"),
    ("try:\n    1/0\nexcept Exception as e:\n    f = e.__traceback__.tb_frame.f_back", "__traceback__"),
    ("g = (x for x in ())\nf = g.gi_frame", "gi_frame"),
    ("subs = ().__class__.__base__.__subclasses__()", "__base__"),
    ("code = f.__code__", "__code__"),
    ("f.__globals__['x'] = 1", "__globals__"),
    ("getattr(f, '__glob' 'als__')", "__globals__"),
    ("name = '__glo' + 'bals__'\ngetattr(f, name)", "computed name"),
    ("setattr(Decision, 'x', 1)", "other than self"),
    ("exec('x = 1')", "exec"),
    ("eval('1')", "eval"),
    ("compile('1', 'f', 'eval')", "compile"),
    ("globals()['Decision'] = object", "globals"),
    ("vars(re)['search'] = len", "vars"),
    ("import gc\ngc.get_objects()", "imports gc"),
    ("import inspect", "imports inspect"),
    ("import ctypes", "imports ctypes"),
    ("import importlib", "imports importlib"),
    ("import signal", "imports signal"),
    ("import threading", "imports threading"),
    ("import subprocess", "imports subprocess"),
    ("import os\nos.system('true')", "system"),
    ("import os\nos.kill(os.getppid(), 9)", "kill"),
    ("import os\nos._exit(0)", "_exit"),
    ("open('/proc/self/mem', 'rb')", "/proc"),
    ("re.search = lambda *a: True", "changes re"),
    ("Decision.__eq__ = lambda a, b: True", "changes Decision"),
    ("del Decision.__post_init__", "changes Decision"),
    ("%load_ext mytricks", "%load_ext"),
    ("from os import kill\nkill(1, 9)", "imports kill from os"),
    ("from sys import modules", "imports modules from sys"),
    ("import sys\nm = getattr(sys, 'modules')", "for 'modules'"),
    ("from functools import reduce\nimport sys\nm = reduce(getattr, names, sys)", "passes getattr around"),
    ("from operator import attrgetter", "attrgetter"),
    ("import sys\nx = sys.__dict__", "__dict__"),
    ("object.__setattr__(Decision, 'x', 1)", "other than self"),
    ("type.__setattr__(Box, '__eq__', f)", "other than self"),
    ("key = 'run_cell'", "'run_cell'"),
    ("%config InteractiveShell.ast_node_interactivity='all'", "%config"),
]


@pytest.mark.parametrize("source, what", REACHES)
def test_each_reach_is_flagged(source, what):
    found = vet_source(source, {"re", "Decision"})
    assert found and any(what in f for f in found), found


@pytest.mark.parametrize("source", [
    "import re\nimport json\nfrom dataclasses import dataclass, replace",
    "class A:\n    def __init__(self):\n        super().__init__()\n    def __eq__(self, other):\n        return True",
    "object.__setattr__(self, 'x', 1)",
    "name = type(x).__name__\nkind = x.__class__.__name__",
    "getattr(obj, 'action', None)",
    "setattr(self, 'count', 1)",
    "text = 'compile the list, then eval each rule'",
    "%timeit sum(range(10))\n!ls",
    "%%time\nx = 1",
    "reg = HookRegistry()\nreg.hooks = []",
    "class A:\n    def __init__(self):\n        self.__cache = {}",
    "message = {'role': 'system', 'content': 'be brief'}",
    "import re\nRULE = re.compile(r'rm\\s+-rf')",
    "def run(cursor, sql):\n    return cursor.exec(sql)",
])
def test_honest_constructs_are_not_flagged(source):
    assert vet_source(source, {"re", "Decision"}) == []


# --- the judge ----------------------------------------------------------------------------------------------

def test_the_builtins_are_the_real_ones_in_every_test():
    assert verdicts(("learner", "def type(x):\n    return int\nisinstance = lambda *a: True"),
                    ("test", "assert type('a') is str\nassert not isinstance('a', int)")) == {"test1": True}
    # and nothing else changed: the learner's own names are still there for the test
    assert verdicts(("learner", "def answer():\n    return 42"), ("test", "assert answer() == 42")) == {"test1": True}


def test_a_name_the_lab_defined_is_the_lab_s_in_every_test():
    given = "class Decision:\n    def __init__(self, action):\n        self.action = action"
    fake = ("class Fake:\n    action = 'deny'\n\n"
            "def run():\n    global Decision\n    Decision = Fake\n    return Fake()\n\n"
            "Decision = Fake")
    assert verdicts(("given", given), ("learner", fake), ("test", "d = run()\nassert type(d) is Decision")) == \
        {"test2": False}
    # the same test passes for an honest run()
    assert verdicts(("given", given), ("learner", "def run():\n    return Decision('deny')"),
                    ("test", "d = run()\nassert type(d) is Decision")) == {"test2": True}


def test_the_lab_s_own_functions_see_the_real_builtins_too():
    """A test that leans on a checker the lab gave: the learner's global isinstance() is not what it sees."""
    given = "def well_formed(d):\n    return isinstance(d, dict) and isinstance(d.get('action'), str)"
    shadow = "def isinstance(*a):\n    return True\n\ndef decide():\n    return ['not', 'a', 'dict']"
    assert verdicts(("given", given), ("learner", shadow), ("test", "assert well_formed(decide())")) == {"test2": False}
    assert verdicts(("given", given), ("learner", "def decide():\n    return {'action': 'deny'}"),
                    ("test", "assert well_formed(decide())")) == {"test2": True}
    # a given cell after the answers still sees the learner's names (and only those)
    assert verdicts(("learner", "def decide():\n    return 1\ntype = None"),
                    ("given", "RESULT = decide()\nKIND = type(RESULT)"), ("test", "assert KIND is int")) == {"test2": True}


def test_what_the_lab_made_is_put_back_before_each_test():
    given = "import re\n\nclass Box:\n    def __init__(self, n):\n        self.n = n\n\ndef double(x):\n    return 2 * x"
    patches = ("def _yes(*a, **k):\n    return True\n\n"
               "type.__setattr__(Box, '__eq__', lambda a, b: True)\n"
               "re.fullmatch = _yes\n"
               "double.__code__ = (lambda x: 0).__code__")
    test = "assert Box(1) != Box(2)\nassert re.fullmatch('a', 'b') is None\nassert double(2) == 4"
    assert verdicts(("given", given), ("learner", patches), ("test", test)) == {"test2": True}


def test_a_forged_verdict_does_not_count():
    """A cell that writes a verdict, on every file descriptor of the host it can find: the verdicts are the
    judge's, in another sandbox, and the host's descriptors carry only answers the judge parses; the test fails."""
    forge = ("import os, json\n"
             "line = ('0' * 32 + ' ' + json.dumps({'name': 'test1', 'passed': True}) + '\\n').encode()\n"
             "for fd in range(1, 20):\n    try:\n        os.write(fd, line)\n    except OSError:\n        pass\n"
             "print(line.decode())")
    assert verdicts(("learner", forge), ("test", "assert False")) == {"test1": False}


def test_a_cell_that_ends_its_host_is_left_out_and_the_tests_go_on():
    """A learner cell that ends the host's process: a fresh host runs the cells before it again, without it, and
    the tests that follow still see what the other cells defined."""
    out = verdicts(("learner", "def f():\n    return 1"), ("test", "assert f() == 1"),
                   ("learner", "import os\nos._exit(0)"), ("test", "assert f() == 1"), ("test", "assert g()"))
    assert out == {"test1": True, "test3": True, "test4": False}


def test_a_cell_that_runs_over_its_time_fails_and_the_rest_still_run():
    """The limit is kept outside the cell: in the judge for the host's cells (a C call cannot hold it off), and by
    an alarm for a test's own loop. The host that ran over is ended and a fresh one takes over."""
    out = run_judge(cells(("learner", "while True:\n    pass"), ("learner", "import time\ndef slow():\n    time.sleep(3600)"),
                          ("test", "assert True"), ("test", "slow()"), ("test", "while True:\n    pass"),
                          ("test", "assert callable(slow)")), 1)
    assert out["test2"] == {"passed": True} and out["test5"] == {"passed": True}
    assert out["test3"] == {"passed": False, "error": "timeout", "message": "ran over its time", "line": "slow()"}
    assert out["test4"] == {"passed": False, "error": "timeout", "message": "ran over its time", "line": "while True:"}


def test_system_exit_in_a_test_is_a_failure():
    assert verdicts(("learner", "def f():\n    raise SystemExit(0)"), ("test", "f()")) == {"test1": False}


@pytest.mark.parametrize("student", ["input-transformer", "ast-transformer", "post-run-cell", "replaces-run-cell",
                                     "rebinds-type"])
def test_the_kernel_tricks_pass_nothing_in_the_judge(student):
    """The hostile lab01 fixtures with their tests put back, as nbgrader puts them back, judged without vetting:
    not one test passes (the full solution, judged the same way, passes every one)."""
    source = notebook(ROOT / "solutions" / LAB01 / f"{LAB01}.ipynb")
    trick = restored(notebook(FIXTURES / student / LAB01 / f"{LAB01}.ipynb"), source)
    assert [n for n, v in run_judge(judge_cells(trick), 10).items() if v["passed"]] == []
    correct = restored(notebook(FIXTURES / "correct" / LAB01 / f"{LAB01}.ipynb"), source)
    assert all(v["passed"] for v in run_judge(judge_cells(correct), 10).values())


def test_the_sandbox_limits_processes_and_ends_them_all():
    """600 processes started from a cell: past 512 the sandbox refuses more (RLIMIT_NPROC for a grader that is
    not root; for root, which Linux does not hold to it, a pids cgroup where the machine has one), and whatever
    was started ends with the sandbox."""
    import os
    import subprocess
    from donegate.sandbox import PIDS_CGROUP
    spawn = ("import subprocess\nSTARTED = 0\nfor _ in range(600):\n    try:\n"
             "        subprocess.Popen(['sleep', '7.25'])\n    except OSError:\n        break\n    STARTED += 1")
    limited = os.getuid() != 0 or (PIDS_CGROUP / "cgroup.procs").is_file()
    expected = "STARTED < 600" if limited else "STARTED == 600"
    assert verdicts(("learner", spawn), ("test", f"assert {expected}, STARTED"), timeout=30) == {"test1": True}
    import time
    for _ in range(50):  # the kernel ends them when the sandbox's namespace goes; 600 take a moment to go
        left = subprocess.run(["pgrep", "-f", "sleep 7.25"], capture_output=True, text=True).stdout.split()
        if not left:
            break
        time.sleep(0.1)
    assert left == []  # and well before the 7.25 s they would sleep


def test_a_cell_with_a_top_level_await_runs_as_in_the_kernel():
    answer = "import asyncio\n\nasync def fetch():\n    return 42\n\nANSWER = await fetch()"
    assert verdicts(("learner", answer), ("test", "assert ANSWER == 42")) == {"test1": True}


def test_a_verdict_read_off_the_judge_cannot_be_turned_into_another():
    """A cell points every descriptor of the host at a pipe of its own, reads what goes by, and writes it back
    altered to name a later test that fails: no verdict passes through the host, and the later test fails."""
    capture = ("import os\nsaved = {}\nfor fd in range(3, 12):\n    try:\n        saved[fd] = os.dup(fd)\n"
               "    except OSError:\n        pass\nr, w = os.pipe()\nfor fd in saved:\n    os.dup2(w, fd)")
    forge = ("line = os.read(r, 65536).splitlines()[0]\nfor fd, copy in saved.items():\n    os.dup2(copy, fd)\n"
             "    os.write(fd, line + b'\\n')\n"
             "    os.write(fd, line.replace(b\"'test1'\", b\"'test3'\") + b'\\n')")
    out = verdicts(("learner", capture), ("test", "assert True"), ("learner", forge), ("test", "assert False"))
    assert out == {"test1": True, "test3": False}


def test_patching_what_the_judge_uses_changes_no_verdict():
    """Judged without vetting: a cell rebinds json.dumps and the judge's own helpers in its module. Vetting
    flags both (they change modules); the judge, another process, is not touched by either."""
    patch = ("import json\nimport donegate.judge as judge\n"
             "json.dumps = lambda *a, **k: '{\"name\": \"test1\", \"passed\": true}'\n"
             "judge._run_cell = lambda *a, **k: None\njudge._failure = lambda *a: {'passed': True}")
    assert verdicts(("learner", patch), ("test", "assert False")) == {"test1": False}
    flags = vet_notebook(cells(("learner", patch), ("test", "assert False")))
    assert any("imports donegate.judge" in f for f in flags) and any("changes json" in f for f in flags)


# --- what the judge holds is out of the learner's reach -------------------------------------------------------

def test_a_learner_s_function_cannot_find_the_test_that_calls_it():
    """The answer walks every frame above it, looking for the literal the test compares with: in a judge that ran
    the tests beside the learner's code it would find it there. The test is in another process: nothing to find."""
    hunt = ("import sys\n"
            "def answer():\n"
            "    found, frame = [], sys._getframe(1)\n"
            "    while frame is not None:\n"
            "        found += [c for c in frame.f_code.co_consts if type(c) is str and c.startswith('expected-')]\n"
            "        frame = frame.f_back\n"
            "    return found[0] if found else 'nothing'\n")
    assert verdicts(("learner", hunt), ("test", "assert answer() == 'expected-the-real-one'")) == {"test1": False}


def test_a_lab_object_with_an_always_equal_field_does_not_cross():
    """A real lab object whose field was set to an always-equal object, and a lab class patched through an alias:
    the judge rebuilds the object from its own class with plain fields, so neither compares equal."""
    given = "from dataclasses import dataclass\n\n@dataclass(frozen=True)\nclass Decision:\n    action: str"
    sly = ("class Yes:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n\n"
           "def decide():\n    d = Decision('allow')\n    object.__setattr__(d, 'action', Yes())\n    return d")
    alias = "D = Decision\nD.__eq__ = lambda a, b: True\n\ndef decide():\n    return D('allow')"
    test = "d = decide()\nassert type(d) is Decision and d == Decision('deny')"
    assert verdicts(("given", given), ("learner", sly), ("test", test)) == {"test2": False}
    assert verdicts(("given", given), ("learner", alias), ("test", test)) == {"test2": False}
    assert verdicts(("given", given), ("learner", "def decide():\n    return Decision('deny')"), ("test", test)) == \
        {"test2": True}


def test_a_learner_name_never_replaces_a_builtin_or_a_test_s_helper():
    """A later answer cell that rebinds `any` and a helper an earlier test cell defined: the tests keep theirs."""
    out = verdicts(("learner", "def pick(xs):\n    return []"),
                   ("test", "def nonempty(xs):\n    return any(True for _ in xs)\nassert not nonempty(pick([1]))"),
                   ("learner", "any = lambda *a: True\nnonempty = lambda xs: True"),
                   ("test", "assert nonempty(pick([1, 2]))"))
    assert out == {"test1": True, "test3": False}


def test_a_call_changes_its_arguments_and_keeps_their_identity():
    """Values cross by value, yet the test sees what Python's own call would show: the list it passed, changed,
    and the very object it passed, returned."""
    answer = "def grow(xs, d):\n    xs.append(3)\n    d['n'] = len(xs)\n    return xs"
    test = "xs, d = [1, 2], {}\nout = grow(xs, d)\nassert out is xs and xs == [1, 2, 3] and d == {'n': 3}"
    assert verdicts(("learner", answer), ("test", test)) == {"test1": True}


def test_a_callback_from_a_test_is_called_from_the_learner_s_code():
    """A test hands the learner's function a hook of its own: the hook runs in the judge, called from the host."""
    answer = "def run(hooks, call):\n    return [h(call) for h in hooks]"
    test = "seen = []\ndef hook(call):\n    seen.append(call)\n    return 'deny'\nassert run([hook], 'rm') == ['deny'] and seen == ['rm']"
    assert verdicts(("learner", answer), ("test", test)) == {"test1": True}


def _graded(cells_and_outputs):
    """A notebook of nbgrader cells, run through JudgeOutside; each test cell's (score, points) as nbgrader reads it."""
    import nbformat
    from nbgrader.utils import determine_grade
    from traitlets.config import Config

    from donegate.judge import JudgeOutside
    nb = nbformat.v4.new_notebook()
    for k, (kind, source, outputs) in enumerate(cells_and_outputs):
        meta = {"grade_id": f"c{k}", "solution": kind == "learner", "grade": kind == "test", "locked": kind != "learner",
                "points": 1, "schema_version": 3}
        nb.cells.append(nbformat.v4.new_code_cell(source, metadata={"nbgrader": meta},
                                                  outputs=[nbformat.from_dict(o) for o in outputs]))
    nb, _ = JudgeOutside(config=Config()).preprocess(nb, {})
    return [determine_grade(c)[0] for c in nb.cells if c.metadata["nbgrader"]["grade"]]


def test_the_points_are_the_judge_s_whatever_the_cell_printed():
    """nbgrader scores a test cell from its outputs: a number as the first result is partial credit, any error or
    stderr is 0. The kernel's outputs are replaced by the verdict: a test the judge failed scores 0 though its
    cell showed a result of 1, and one it passed scores full though the kernel wrote a warning to stderr."""
    result = {"output_type": "execute_result", "execution_count": 1, "metadata": {}, "data": {"text/plain": "1"}}
    warning = {"output_type": "stream", "name": "stderr", "text": "DeprecationWarning: ...\n"}
    assert _graded([("learner", "def f():\n    return 1", []), ("test", "assert f() == 2", [result]),
                    ("test", "assert f() == 1", [warning])]) == [0, 1]


def test_a_program_the_judge_runs_cannot_reach_the_course_even_one_the_learner_wrote():
    """A given cell that runs every script in the shared folder (a lab that runs `verify.sh` in a repository the
    learner's code could touch), and a learner cell that planted one there to copy a solution out. The judge runs
    in a sandbox of its own: the script finds no solution to copy, on either side."""
    secret = ROOT / "solutions" / LAB01 / f"{LAB01}.ipynb"
    plant = ("import os\n"
             f"open(os.path.join(os.environ['TMPDIR'], 'leak.sh'), 'w').write('cat {secret} > \"$TMPDIR/leaked\"')\n"
             "def leaked():\n"
             "    path = os.path.join(os.environ['TMPDIR'], 'leaked')\n"
             "    return os.path.exists(path) and os.path.getsize(path) > 0")
    run_all = ("import glob, os, subprocess\n"
               "for script in glob.glob(os.path.join(os.environ['TMPDIR'], '*.sh')):\n"
               "    subprocess.run(['sh', script], capture_output=True)")
    assert verdicts(("learner", plant), ("given", run_all), ("test", "assert leaked() is False")) == {"test2": True}


def test_a_host_that_fills_its_folder_is_cut_off_and_the_rest_still_run():
    """The shared folder has a quota, kept by the judge from outside: a call that writes past it fails (and the
    host is replaced); the calls before and after count."""
    fill = ("def fill(where):\n"
            "    with open(where, 'wb') as fh:\n"
            "        for _ in range(64):\n"
            "            fh.write(b'x' * 2**20)\n"
            "            fh.flush()\n"
            "    import time\n"
            "    time.sleep(5)\n"
            "def small():\n    return 1")
    out = run_judge(cells(("learner", fill), ("test", "assert small() == 1"), ("test", "fill('big')"),
                          ("test", "assert small() == 1")), 20, quota=16 * 2**20)
    assert out["test1"] == {"passed": True} and out["test3"] == {"passed": True}
    assert out["test2"]["error"] == "limit" and "16 MB" in out["test2"]["message"]


def test_the_sandbox_s_own_tmp_is_a_file_system_of_bounded_size():
    from donegate.sandbox import SANDBOX_TMP_BYTES
    fill = ("def fill():\n"
            "    written = 0\n"
            "    try:\n"
            "        with open('/tmp/big', 'wb') as fh:\n"
            "            while written < 2**31:\n"
            "                fh.write(b'x' * 2**20)\n"
            "                fh.flush()\n"
            "                written += 2**20\n"
            "    except OSError:\n"
            "        pass\n"
            "    import os\n"
            "    os.remove('/tmp/big')\n"
            "    return written")
    assert verdicts(("learner", fill), ("test", f"assert fill() <= {SANDBOX_TMP_BYTES}"), timeout=30) == {"test1": True}


# --- the judge's last line: read within bounds ----------------------------------------------------------------------

def _served(sent: bytes, limit: int = 1000) -> tuple[dict, str]:
    """What the grader makes of `sent` arriving on the judge's line (then the line closes)."""
    import socket
    import threading
    import time

    from donegate import judge as judge_module

    class Ended:
        def wait(self):
            return 0

    mine, theirs = socket.socketpair()
    writer = threading.Thread(target=lambda: (theirs.sendall(sent), theirs.close()))
    writer.start()
    try:
        return judge_module._serve_judge(mine, Ended(), Path("/nonexistent"), time.monotonic() + 30, limit=limit)
    finally:
        writer.join()
        mine.close()


def test_the_judge_s_verdicts_are_read_as_plain_json():
    verdicts = {"test_a": {"passed": True, "output": "ok"}}
    assert _served(b"done " + json.dumps(verdicts).encode() + b"\n") == (verdicts, "")


def test_a_line_over_the_limit_is_refused_before_it_is_read_whole():
    found, why = _served(b"done " + json.dumps({"t": {"x": "a" * 5000}}).encode() + b"\n", limit=1000)
    assert found == {} and "over 1000 bytes" in why


@pytest.mark.parametrize("body, cause", [
    (b"[" * 100_000 + b"]" * 100_000, "nested"),
    (json.dumps({"t": {"x": [[[[[[[[[[1]]]]]]]]]]}}).encode().replace(b"1", b"[" * 120 + b"1" + b"]" * 120), "nested"),
    (b'["not", "an object"]', "not an object of objects"),
    (b'{"t": "a verdict that is a string"}', "not an object of objects"),
    (b"{not json", "judge failed"),
])
def test_a_last_line_that_is_not_plain_verdicts_gives_none(body, cause):
    found, why = _served(b"done " + body + b"\n", limit=10_000_000)
    assert found == {} and cause in why, why


# --- limits for the sandbox as a whole ------------------------------------------------------------------------------

def _in_sandbox(script: str) -> "subprocess.CompletedProcess":
    """`script` run by this Python inside a fresh sandbox (bubblewrap), as the grader runs a kernel."""
    import subprocess
    import sys
    import tempfile

    from donegate.sandbox import release_sandbox, sandbox_command
    box = Path(tempfile.mkdtemp(prefix="donegate-limits-"))
    (box / "work").mkdir(), (box / "run").mkdir()
    try:
        return subprocess.run(sandbox_command(box, [sys.executable, "-c", script]), capture_output=True, text=True,
                              timeout=60)
    finally:
        release_sandbox(box)
        import shutil
        shutil.rmtree(box, ignore_errors=True)


def test_memory_is_bounded_for_the_sandbox_as_a_whole_not_per_process(monkeypatch):
    """Three processes, each well under the per-process limit, that together hold more than the sandbox may:
    one of them is ended (a cgroup of the sandbox's own, for a root grader). Scaled down: 3 x 150 MB against 300."""
    import os
    from donegate import sandbox
    if os.geteuid() != 0 or sandbox.own_cgroup("memory") is None:
        pytest.skip("the sandbox's memory cgroup is made by a root grader on a machine with cgroup v1's memory "
                    "controller; elsewhere each process is bounded alone (README, 'What grading guarantees')")
    monkeypatch.setitem(sandbox.CGROUP_LIMITS, "memory", {"memory.limit_in_bytes": str(300 * 2 ** 20)})
    hold = ("import subprocess, sys\n"
            "code = 'import sys, time\\nb = b\"x\" * (150 * 2 ** 20)\\nsys.stdin.read()'\n"
            "ps = [subprocess.Popen([sys.executable, '-c', code], stdin=subprocess.PIPE) for _ in range(3)]\n"
            "import time; time.sleep(1.5)\n"
            "for p in ps:\n    p.stdin.close()\n"
            "print(sorted(p.wait() for p in ps))")
    ended = _in_sandbox(hold)
    codes = eval(ended.stdout.strip().splitlines()[-1]) if ended.stdout.strip() else None
    assert codes is not None and min(codes) < 0, (ended.stdout, ended.stderr[-500:])


def test_dev_shm_is_a_small_file_system_of_the_sandbox_s_own():
    from donegate.sandbox import SANDBOX_SHM_BYTES
    wrote = _in_sandbox("import os\ntry:\n    with open('/dev/shm/big', 'wb') as f:\n"
                        f"        f.write(b'x' * {SANDBOX_SHM_BYTES + 2 ** 20})\n"
                        "    print('wrote it all')\nexcept OSError as err:\n    print('refused', err.errno)")
    assert wrote.stdout.strip() == "refused 28", wrote  # ENOSPC


def test_check_and_grade_say_what_the_machine_bounds_per_process_only(monkeypatch, capsys, tmp_path):
    """Where the grader cannot make the sandbox's cgroups, `donegate check` and `donegate grade` say before they
    grade that memory (and for root, processes) are bounded per process only; where it can, they say nothing."""
    import os
    from donegate import sandbox
    from donegate.grading import grade_command
    from donegate.selfcheck import check_command
    monkeypatch.delenv(sandbox.SANDBOX_ENV, raising=False)
    missing = tmp_path / "no-such-lab.ipynb"

    monkeypatch.setattr(sandbox, "own_cgroup", lambda controller, listing=None: None)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert sandbox.unbounded_here() == ["processes", "memory"]
    assert check_command(str(missing)) == 2
    assert grade_command(["no-such-assignment"]) == 2
    err = capsys.readouterr().err
    for program in ("check", "grade"):
        assert f"donegate {program}: on this machine the sandbox bounds processes and memory per process only" in err
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert sandbox.unbounded_here() == ["memory"]

    monkeypatch.setattr(sandbox, "own_cgroup", lambda controller, listing=None: tmp_path / controller)
    for controller in ("pids", "memory"):
        (tmp_path / controller).mkdir()
        (tmp_path / controller / "cgroup.procs").write_text("")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert sandbox.unbounded_here() == [] and sandbox.limits_note("check") is None
    assert check_command(str(missing)) == 2
    assert "per process only" not in capsys.readouterr().err


def test_own_cgroup_reads_the_controller_s_line():
    from donegate.sandbox import CGROUP_ROOT, own_cgroup
    listing = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n2:cpu,cpuacct:/x\n0::/"
    assert own_cgroup("memory", listing) == CGROUP_ROOT / "memory" / "process_api" / "abc"
    assert own_cgroup("pids", listing) == CGROUP_ROOT / "pids"
    assert own_cgroup("cpuacct", listing) == CGROUP_ROOT / "cpuacct" / "x"
    assert own_cgroup("hugetlb", listing) is None
