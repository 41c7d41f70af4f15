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
            "honest-reaches", "asks-the-judge", "undraws-inputs", "formats-the-globals", "lies-in-a-field",
            "fills-the-sandbox", "honest-machinery"}  # the fixtures that reach from an answer cell (honest-reaches
# and honest-machinery honestly: its threads, subprocess and inspect are on the vetting's lists, and a flag is advice)
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

PROBE = "def probe(calls):\n    return calls"  # what the lab's given cell defines


def probing(call: str, checks: str, args: str = "") -> str:
    """A test cell: a probe that returns `call` (evaluated beside the learner's code), then `checks` on `got`."""
    return f"@probe\ndef seen({args}):\n    return {call}\n\n{checks}"


def test_a_test_reaches_the_learner_s_code_only_through_its_probes():
    """The learner's names do not exist in the judge: a test that calls one directly fails on a right answer,
    the same call in a probe passes, and the probe's inputs are the judge's."""
    answer = ("learner", "def answer(n):\n    return n * 2")
    assert verdicts(("given", PROBE), answer, ("test", "assert answer(21) == 42")) == {"test2": False}
    assert verdicts(("given", PROBE), answer, ("test", probing("answer(n)", "assert seen(21) == 42", "n"))) == \
        {"test2": True}


def test_the_builtins_are_the_real_ones_in_every_test():
    assert verdicts(("given", PROBE), ("learner", "def type(x):\n    return int\nisinstance = lambda *a: True"),
                    ("test", "assert type('a') is str\nassert not isinstance('a', int)")) == {"test2": True}


def test_a_name_the_lab_defined_is_the_lab_s_in_every_test():
    given = "class Decision:\n    def __init__(self, action):\n        self.action = action\n" + PROBE
    fake = ("class Fake:\n    action = 'deny'\n\n"
            "def run():\n    global Decision\n    Decision = Fake\n    return Fake()\n\n"
            "Decision = Fake")
    test = probing("run()", "assert type(got) is Decision").replace("\n\nassert", "\n\ngot = seen()\nassert")
    assert verdicts(("given", given), ("learner", fake), ("test", test)) == {"test2": False}


def test_a_record_comes_back_as_the_judge_s_own_and_a_fake_one_does_not():
    """A given dataclass is a record: the host sends its declared fields, the judge builds its own instance and
    runs the class's own checks. A learner's look-alike class, a subclass, a field set past the class's checks to
    an always-equal object, or the class patched through an alias: none comes back as a Decision that passes."""
    given = ("from dataclasses import dataclass\n\n@dataclass(frozen=True)\nclass Decision:\n    action: str\n\n"
             "    def __post_init__(self):\n        if type(self.action) is not str:\n"
             "            raise TypeError('action must be a str')\n" + PROBE)
    test = "got = seen()\nassert type(got) is Decision and got == Decision('deny') and 'en' in got.action"
    cheats = {
        "look-alike": "class Decision:\n    action = 'deny'\n    def __eq__(self, o):\n        return True\n\n"
                      "def decide():\n    return Decision()",
        "subclass": "class Yes(Decision):\n    def __eq__(self, o):\n        return True\n\ndef decide():\n"
                    "    return Yes('allow')",
        "field": "class Yes(str):\n    def __eq__(self, o):\n        return True\n    def __contains__(self, o):\n"
                 "        return True\n    __hash__ = str.__hash__\n\n"
                 "def decide():\n    d = Decision('allow')\n    object.__setattr__(d, 'action', Yes('allow'))\n    return d",
        "alias": "D = Decision\nD.__eq__ = lambda a, b: True\n\ndef decide():\n    return D('allow')",
    }
    for name, cheat in cheats.items():
        assert verdicts(("given", given), ("learner", cheat), ("test", probing("decide()", test))) == \
            {"test2": False}, name
    assert verdicts(("given", given), ("learner", "def decide():\n    return Decision('deny')"),
                    ("test", probing("decide()", test))) == {"test2": True}


def test_what_the_lab_made_is_put_back_before_each_test():
    """The lab's given cells run in the judge too; a learner cell that patches them patches the host's copies."""
    given = "import re\n\nclass Box:\n    def __init__(self, n):\n        self.n = n\n\ndef double(x):\n    return 2 * x"
    patches = ("def _yes(*a, **k):\n    return True\n\n"
               "type.__setattr__(Box, '__eq__', lambda a, b: True)\n"
               "re.fullmatch = _yes\n"
               "double.__code__ = (lambda x: 0).__code__")
    test = "assert Box(1) != Box(2)\nassert re.fullmatch('a', 'b') is None\nassert double(2) == 4"
    assert verdicts(("given", given), ("learner", patches), ("test", test)) == {"test2": True}


def test_a_forged_answer_is_data_and_a_forged_verdict_does_not_count():
    """A cell that writes answers and verdicts on every descriptor of the host it can find: whatever reaches the
    judge is read as data of the schema, and the test compares it with what it expects; the test fails."""
    forge = ("import os, json\n"
             "lines = [json.dumps({'v': 1, 'ok': 'deny'}), json.dumps({'name': 'test2', 'passed': True}),\n"
             "         json.dumps({'v': 1, 'ok': {'$': 'record', 'class': 'object', 'fields': {}}})]\n"
             "for fd in range(1, 20):\n    for line in lines:\n        try:\n"
             "            os.write(fd, (line + '\\n').encode())\n        except OSError:\n            pass\n"
             "def decide():\n    return 'allow'")
    assert verdicts(("given", PROBE), ("learner", forge), ("test", probing("decide()", "assert seen() == 'sure'"))) \
        == {"test2": False}


def test_a_cell_that_ends_its_host_is_left_out_and_the_tests_go_on():
    """A learner cell that ends the host's process: a fresh host runs the cells before it again, without it, and
    the tests that follow still see what the other cells defined."""
    call_f = probing("f()", "assert seen() == 1")
    out = verdicts(("given", PROBE), ("learner", "def f():\n    return 1"), ("test", call_f),
                   ("learner", "import os\nos._exit(0)"), ("test", call_f), ("test", probing("g()", "assert seen()")))
    assert out == {"test2": True, "test4": True, "test5": False}


def test_a_cell_that_runs_over_its_time_fails_and_the_rest_still_run():
    """The limit is kept outside the cell: in the judge for the host's cells and probes (a C call cannot hold it
    off), and by an alarm for a test's own loop. The host that ran over is ended and a fresh one takes over."""
    out = run_judge(cells(("given", PROBE), ("learner", "while True:\n    pass"),
                          ("learner", "import time\ndef slow():\n    time.sleep(3600)"),
                          ("test", "assert True"), ("test", probing("slow()", "seen()")), ("test", "while True:\n    pass"),
                          ("test", probing("callable(slow)", "assert seen()"))), 1)
    assert out["test3"] == {"passed": True} and out["test6"] == {"passed": True}
    assert out["test4"] == {"passed": False, "error": "timeout", "message": "ran over its time", "line": "seen()"}
    assert out["test5"] == {"passed": False, "error": "timeout", "message": "ran over its time", "line": "while True:"}


def test_the_setup_between_two_tests_shares_one_deadline(monkeypatch):
    """Every phase has a deadline kept outside the host: the setup cells between two tests share one, each test
    has its own, and a fresh host's replay of the setup is a phase of its own. Watched on a stand-in for the host
    line that records the deadline each request was sent under (no process, no clock to wait on)."""
    from donegate import judge as judge_module
    sent: list[tuple[str, float | None]] = []

    class Line(judge_module.HostLine):
        def _grader(self, word):
            return [-1, -1]

        def stop(self):
            self.started = False

        def ask(self, request):
            sent.append((request.get("name"), self.deadline))
            if request.get("name") == "B" and sum(1 for n, _ in sent if n == "B") == 1:
                raise judge_module.Gone("ran over its time")
            return {"v": 1, "ok": True}

    clock = iter(range(0, 10_000, 7))
    monkeypatch.setattr(judge_module, "HostLine", Line)
    monkeypatch.setattr("time.monotonic", lambda: next(clock))
    test = probing("A", "assert seen() is True")
    specs = [("learner", "A = 1", "A"), ("learner", "B = 2", "B"), ("learner", "C = 3", "C"), ("test", test, "t1"),
             ("learner", "D = 4", "D"), ("test", test, "t2")]
    judge_module.judge_notebook([{"kind": k, "source": s, "name": n} for k, s, n in specs], control=None, timeout=60)
    deadline = dict(sent)
    names = [n for n, _ in sent]
    assert names == ["A", "B", "A", "C", "seen", "D", "seen"]  # B ran over, was left out, and A was run again
    first, replay = sent[0][1], sent[2][1]
    assert sent[1][1] == first and replay != first  # A and B shared one deadline; the replay had its own
    assert deadline["C"] not in (first, replay)  # after the replay, the rest of the setup: a phase of its own
    assert deadline["D"] not in (first, replay, deadline["C"])  # after a test, a new phase
    assert len({sent[4][1], sent[6][1], deadline["D"]}) == 3  # each test its own deadline


def test_system_exit_in_a_probe_is_a_failure_named_by_its_type():
    out = run_judge(cells(("given", PROBE), ("learner", "def f():\n    raise SystemExit(0)"),
                          ("test", probing("f()", "seen()"))), 10)
    assert out["test2"]["passed"] is False and out["test2"]["error"] == "SystemExit"


def test_a_cell_with_a_top_level_await_runs_as_in_the_kernel():
    answer = "import asyncio\n\nasync def fetch():\n    return 42\n\nANSWER = await fetch()"
    assert verdicts(("given", PROBE), ("learner", answer), ("test", probing("ANSWER", "assert seen() == 42"))) == \
        {"test2": True}


def test_patching_what_the_judge_uses_changes_no_verdict():
    """Judged without vetting: a cell rebinds json.dumps and the serializer in the host's copy of the judge's
    module, so that every answer says what the cell wants. Vetting flags both (they change modules); the judge,
    another process, reads that as the data it is and compares it with a value drawn where the cell cannot see."""
    patch = ("import json\nimport donegate.judge as judge\n"
             "json.dumps = lambda *a, **k: '{\"v\": 1, \"ok\": true}'\n"
             "judge.to_data = lambda *a, **k: True\n"
             "def double(n):\n    return None")
    test = probing("double(n)", "import random\nn = random.Random().randint(1, 10**9)\nassert seen(n) == 2 * n", "n")
    assert verdicts(("given", PROBE), ("learner", patch), ("test", test)) == {"test2": False}
    assert verdicts(("given", PROBE), ("learner", "def double(n):\n    return 2 * n"), ("test", test)) == {"test2": True}
    flags = vet_notebook(cells(("learner", patch), ("test", "assert False")))
    assert any("imports donegate.judge" in f for f in flags) and any("changes json" in f for f in flags)



def test_judges_run_at_once_keep_to_sandboxes_of_their_own(tmp_path):
    """A grader runs several judges at once, and a sandbox's cgroups are named after its box: so every judge's and
    every host's box has a name of its own, and one run ending (its cgroups removed) takes nothing of another's.
    (With every judge's box called "judge", one run's release removed a cgroup another was about to enter.)"""
    from donegate.judge import _fresh_box
    runs = [tmp_path / "donegate-judge-a1", tmp_path / "donegate-judge-b2"]
    names = [_fresh_box(run, kind).name for run in runs for kind in ("judge", "host-1", "host-2")]
    assert len(set(names)) == len(names) and all((run / name / "work").is_dir() for run in runs for name in
                                                  [n for n in names if n.startswith(run.name)])


# --- what the judge holds never enters the host ---------------------------------------------------------------------

def test_a_learner_s_code_cannot_find_the_expected_value_anywhere_in_its_process():
    """The answer walks every frame above it and every string the process holds, looking for the literal the test
    compares with. The checks never left the judge: only the probe's source and its inputs are in the host."""
    hunt = ("import gc, sys\n"
            "def answer():\n"
            "    found, frame = [], sys._getframe(1)\n"
            "    while frame is not None:\n"
            "        found += [c for c in frame.f_code.co_consts if type(c) is str and c.startswith('expected-')]\n"
            "        frame = frame.f_back\n"
            "    found += [o for o in gc.get_objects() if type(o) is str and o.startswith('expected-t')]\n"
            "    for o in gc.get_objects():\n"
            "        if type(o) is dict:\n"
            "            found += [v for v in o.values() if type(v) is str and v.startswith('expected-t')]\n"
            "    return found[0] if found else 'nothing'\n")
    assert verdicts(("given", PROBE), ("learner", hunt),
                    ("test", probing("answer()", "assert seen() == 'expected-the-real-one'"))) == {"test2": False}


def test_inputs_drawn_in_the_judge_cannot_be_undrawn_in_the_host():
    """The learner's cell seeds and patches `random` in the host and answers from a table of the inputs a patched
    draw would give: the judge draws with its own `random`, so the table is wrong; computing passes."""
    table = ("import random\nrandom.seed(0)\nrandom.Random.seed = lambda self, *a, **k: None\n"
             "random.Random.randint = lambda self, a, b: a\n"
             "def double(n):\n    return {0: 0, 1: 2}.get(n, 0)")
    draw = ("import random\ndraw = random.Random()\nns = [draw.randint(10**6, 10**9) for _ in range(20)]\n"
            "assert seen(ns) == [2 * n for n in ns]")
    test = probing("[double(n) for n in ns]", draw.replace("import random\n", ""), "ns")
    given = "import random\n" + PROBE
    assert verdicts(("given", given), ("learner", table), ("test", test)) == {"test2": False}
    assert verdicts(("given", given), ("learner", "def double(n):\n    return 2 * n"), ("test", test)) == {"test2": True}


def test_the_host_never_asks_and_the_judge_never_answers():
    """A learner cell that writes requests of every shape the judge once served (a call, an attribute, an item)
    on its answer pipe, then waits for an answer that would carry the judge's objects: none comes, and its own
    call's answer is still read as data."""
    ask = ("import os, json, select\n"
           "def decide():\n"
           "    for fd in range(1, 20):\n"
           "        for op in ('call', 'getattr', 'getitem', 'iter'):\n"
           "            try:\n"
           "                os.write(fd, (json.dumps(['ask', op, [['R', 'judge', 1], 'gi_frame']]) + '\\n').encode())\n"
           "            except OSError:\n"
           "                pass\n"
           "    ready = select.select([0], [], [], 0.5)[0]\n"
           "    return 'answered' if ready else 'nothing came'")
    out = run_judge(cells(("given", PROBE), ("learner", ask), ("test", probing("decide()", "assert seen() == 'answered'"))), 10)
    assert out["test2"]["passed"] is False


def test_a_probe_s_answer_past_the_limit_ends_its_host_and_the_rest_still_run():
    from donegate.judge import MAX_ANSWER
    answer = f"def big():\n    return 'x' * {MAX_ANSWER + 10}\n\ndef small():\n    return 1"
    out = run_judge(cells(("given", PROBE), ("learner", answer), ("test", probing("small()", "assert seen() == 1")),
                          ("test", probing("big()", "seen()")), ("test", probing("small()", "assert seen() == 1"))), 20)
    assert out["test2"] == {"passed": True} and out["test4"] == {"passed": True}
    assert out["test3"]["error"] == "limit"


def test_a_test_s_callback_runs_beside_the_learner_s_code_inside_its_probe():
    """A test hands the learner's function a hook of its own: the hook is defined in the probe, runs in the host,
    and what it saw comes back as data."""
    answer = "def run(hooks, call):\n    return [h(call) for h in hooks]"
    probe = ("@probe\ndef seen(call):\n    calls = []\n\n    def hook(c):\n        calls.append(c)\n        return 'deny'\n\n"
             "    return run([hook], call), calls\n\nassert seen('rm') == (['deny'], ['rm'])")
    assert verdicts(("given", PROBE), ("learner", answer), ("test", probe)) == {"test2": True}


def test_a_probe_s_result_that_is_not_data_fails_its_test():
    out = run_judge(cells(("given", PROBE), ("learner", "class Gate:\n    pass\n\ndef make():\n    return Gate()"),
                          ("test", probing("make()", "seen()"))), 10)
    assert out["test2"]["error"] == "NotData" and "Gate" in out["test2"]["message"]


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
    assert _graded([("given", PROBE, []), ("learner", "def f():\n    return 1", []),
                    ("test", probing("f()", "assert seen() == 2"), [result]),
                    ("test", probing("f()", "assert seen() == 1"), [warning])]) == [0, 1]


def test_a_program_a_given_cell_runs_cannot_reach_the_course_even_one_the_learner_wrote():
    """A given cell that runs every script in its working folder (a lab that runs `verify.sh` in a repository the
    learner's code could touch), and a learner cell that planted one there to copy a solution out. The judge and
    each host have working folders of their own, in sandboxes of their own: the script finds nothing to copy."""
    secret = ROOT / "solutions" / LAB01 / f"{LAB01}.ipynb"
    plant = ("import os\n"
             f"open('leak.sh', 'w').write('cat {secret} > leaked')\n"
             "def leaked():\n"
             "    return os.path.exists('leaked') and os.path.getsize('leaked') > 0")
    run_all = ("import glob, subprocess\n"
               "for script in glob.glob('*.sh'):\n"
               "    subprocess.run(['sh', script], capture_output=True)\n" + PROBE)
    assert verdicts(("learner", plant), ("given", run_all), ("test", probing("leaked()", "assert seen() is False"))) \
        == {"test2": True}


def test_every_place_a_host_can_write_is_a_file_system_of_bounded_size():
    """The host's working folder and its /tmp are memory file systems of their own (SANDBOX_WORK_BYTES,
    SANDBOX_TMP_BYTES): writing past either fails in the host, whose other calls still count."""
    from donegate.sandbox import SANDBOX_TMP_BYTES, SANDBOX_WORK_BYTES
    fill = ("import os\n"
            "def fill(where):\n"
            "    written = 0\n"
            "    try:\n"
            "        with open(where, 'wb') as fh:\n"
            "            while written < 2**31:\n"
            "                fh.write(b'x' * 2**20)\n"
            "                fh.flush()\n"
            "                written += 2**20\n"
            "    except OSError:\n"
            "        pass\n"
            "    os.remove(where)\n"
            "    return written\n"
            "def small():\n    return 1")
    out = verdicts(("given", PROBE), ("learner", fill),
                   ("test", probing("fill('big')", f"assert seen() <= {SANDBOX_WORK_BYTES}")),
                   ("test", probing("fill('/tmp/big')", f"assert seen() <= {SANDBOX_TMP_BYTES}")),
                   ("test", probing("small()", "assert seen() == 1")), timeout=30)
    assert out == {"test2": True, "test3": True, "test4": True}


# --- the schema: what the judge reads ------------------------------------------------------------------------------

def _records():
    import dataclasses
    import enum

    @dataclasses.dataclass(frozen=True)
    class Decision:
        action: str
        hook: str | None = None

        def __post_init__(self):
            if type(self.action) is not str:
                raise TypeError("action must be a str")

    class Kind(enum.Enum):
        A = 1
    return {"Decision": Decision, "Kind": Kind}


@pytest.mark.parametrize("value", [None, True, 0, -3, 2**80, 1.5, float("inf"), float("nan"), "", "é", [1, [2]],
                                   (1, "a"), {1, 2}, frozenset({"a"}), {"a": 1}, {1: "a"}, {"$": 1}, b"\x00\xff",
                                   Path("/a/b"), {"k": (1, [None, {"x": b""}])}])
def test_plain_values_come_back_as_themselves(value):
    from donegate.judge import answer_from, from_data, to_data
    line = json.dumps({"v": 1, "ok": to_data(value, {})}, allow_nan=False).encode()
    back = from_data(answer_from(line)["ok"], {})
    assert type(back) is type(value) and (back == value or back != back and value != value)


def test_a_record_and_an_enum_come_back_as_the_judge_s_own():
    from donegate.judge import from_data, to_data
    records = _records()
    d = records["Decision"]("deny", "guard")
    assert from_data(to_data([d, records["Kind"].A], records), records) == [d, records["Kind"].A]


@pytest.mark.parametrize("data, why", [
    ({"$": "record", "class": "Decision", "fields": {"action": "deny"}}, "a field missing"),
    ({"$": "record", "class": "Decision", "fields": {"action": "deny", "hook": None, "__eq__": 1}}, "a field too many"),
    ({"$": "record", "class": "Decision", "fields": {"action": 1, "hook": None}}, "refused by the class's own check"),
    ({"$": "record", "class": "object", "fields": {}}, "not one of the lab's"),
    ({"$": "record", "class": "Kind", "fields": {}}, "an enum as a record"),
    ({"$": "enum", "class": "Kind", "name": "B"}, "no such member"),
    ({"$": "set", "items": [[1]]}, "unhashable"),
    ({"$": "tuple", "items": "ab"}, "items not a list"),
    ({"$": "dict", "items": [[1, 2, 3]]}, "not pairs"),
    ({"$": "bytes", "hex": "zz"}, "bad hex"),
    ({"$": "float", "repr": "1e999"}, "a float by another name"),
    ({"$": "call", "target": "exec"}, "an unknown tag"),
    ({"$": "tuple", "items": [], "extra": 1}, "a key too many"),
])
def test_data_off_the_schema_is_refused(data, why):
    from donegate.judge import NotData, from_data
    with pytest.raises(NotData):
        from_data(data, _records())


@pytest.mark.parametrize("line", [b'{"v": 1, "ok": NaN}', b'{"v": 2, "ok": 1}', b'{"v": true, "ok": 1}',
                                  b'{"v": 1}', b'{"v": 1, "ok": 1, "raised": "x"}', b'{"v": 1, "raised": 3}',
                                  b'[1]', b'not json', b'[' * 100_000 + b']' * 100_000,
                                  b'{"v": 1, "ok": "' + b'x' * (4 * 2**20) + b'"}'])
def test_an_answer_off_the_schema_is_refused(line):
    from donegate.judge import NotData, answer_from
    with pytest.raises(NotData):
        answer_from(line)


def test_what_is_not_data_does_not_leave_the_host():
    from donegate.judge import NotData, to_data

    class Sly(str):
        def __contains__(self, item):
            return True
    for value in (Sly("x"), object(), print, (x for x in ()), ValueError("x"), [Sly("y")], {"k": object()}):
        with pytest.raises(NotData):
            to_data(value, _records())


def test_probe_sources_are_the_decorated_top_level_functions_without_their_decorator():
    from donegate.judge import probe_sources
    cell = ("@probe\ndef a(x):\n    return x\n\ndef helper():\n    pass\n\n@probe\nasync def b():\n    return 1\n\n"
            "assert a(1) == 1")
    found = probe_sources(cell)
    assert list(found) == ["a", "b"] and found["a"] == ["def a(x):\n    return x\n"]
    assert found["b"] == ["async def b():\n    return 1\n"]


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
    assert sandbox.unbounded_here() == ["memory", "the kernel's run folder"]

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
    assert own_cgroup("", listing) == CGROUP_ROOT  # cgroup v2's one hierarchy
    assert own_cgroup("", "0::/system.slice/grader.service") == CGROUP_ROOT / "system.slice" / "grader.service"


def test_under_cgroup_v2_a_sandbox_gets_one_cgroup_capped_for_processes_and_memory(monkeypatch, tmp_path):
    """cgroup v2, on a stand-in for /sys/fs/cgroup: the grader's own cgroup hands the pids and memory controllers
    down, the sandbox's cgroup is made inside it with its caps written before anything enters, and it goes with
    the sandbox. Where the grader may not write its cgroup, there is none, and the note says so."""
    import os
    from donegate import sandbox
    root, own = tmp_path / "cgroup", tmp_path / "cgroup" / "grader.service"
    own.mkdir(parents=True)
    (root / "cgroup.controllers").write_text("cpu io memory pids\n")
    (own / "cgroup.controllers").write_text("cpu io memory pids\n")
    (own / "cgroup.subtree_control").write_text("")
    monkeypatch.setattr(sandbox, "CGROUP_ROOT", root)
    monkeypatch.setattr(sandbox, "own_cgroup", lambda controller, listing=None: own if controller == "" else None)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.delenv(sandbox.SANDBOX_ENV, raising=False)
    box = tmp_path / "donegate-sandbox-x"
    [group] = sandbox.sandbox_cgroups(box)
    assert group == own / "donegate-donegate-sandbox-x"
    assert (group / "pids.max").read_text() == str(sandbox.SANDBOX_PROCESSES)
    assert (group / "memory.max").read_text() == str(sandbox.SANDBOX_MEMORY_BYTES)
    assert (own / "cgroup.subtree_control").read_text() == "+pids +memory"
    assert sandbox.unbounded_here() == []
    for name in os.listdir(group):
        os.remove(group / name)
    sandbox.release_sandbox(box, wait=0)
    assert not group.exists()
    own.chmod(0o500)
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    assert sandbox.sandbox_cgroups(box) == [] and sandbox.unbounded_here() == ["processes", "memory"]


@pytest.mark.skipif(not hasattr(__import__("os"), "geteuid") or __import__("os").geteuid() != 0,
                    reason="only a root grader can mount the run folder")
def test_a_root_grader_bounds_the_kernel_s_run_folder(tmp_path):
    """The kernel's run folder (its sockets, shared with the grader) is a memory file system of SANDBOX_RUN_BYTES:
    writing past it fails, and the mount goes with the sandbox."""
    import os
    from donegate.sandbox import SANDBOX_RUN_BYTES, bounded_run_folder, release_sandbox
    (tmp_path / "run").mkdir()
    assert bounded_run_folder(tmp_path / "run") and os.path.ismount(tmp_path / "run")
    written = 0
    with pytest.raises(OSError):
        with open(tmp_path / "run" / "fill", "wb") as fh:
            while written <= 2 * SANDBOX_RUN_BYTES:
                fh.write(b"x" * 65536)
                fh.flush()
                written += 65536
    assert written <= SANDBOX_RUN_BYTES
    release_sandbox(tmp_path, wait=0)
    assert not os.path.ismount(tmp_path / "run")


def test_the_kernel_s_run_has_a_deadline_as_a_whole(monkeypatch):
    """A kernel that stops answering would make each later cell wait out its whole limit. The run as a whole ends
    KERNEL_RUN_LIMITS cells' limits after its first cell: a cell's limit is what is left, if less than its own,
    and a cell after the deadline is not run, with a note. Watched on a stand-in clock, no kernel started."""
    import nbformat
    from traitlets.config import Config
    from donegate.sandbox import KERNEL_RUN_LIMITS, NOT_RUN, SandboxedExecute
    now = [1000.0]
    monkeypatch.setattr("time.monotonic", lambda: now[0])
    ran = []
    monkeypatch.setattr("nbconvert.preprocessors.ExecutePreprocessor.preprocess_cell",
                        lambda self, cell, resources, index: (ran.append(index), (cell, resources))[1])
    execute = SandboxedExecute(config=Config({"Execute": {"timeout": 60}}))
    cells = [nbformat.v4.new_code_cell(f"x = {k}") for k in range(3)]
    execute.preprocess_cell(cells[0], {}, 0)
    assert execute.timeout_func(cells[1]) == 60  # its own limit, while more than that is left
    now[0] += KERNEL_RUN_LIMITS * 60 - 20
    assert execute.timeout_func(cells[1]) == 20  # what is left
    execute.preprocess_cell(cells[1], {}, 1)
    now[0] += 25
    cell, _ = execute.preprocess_cell(cells[2], {}, 2)
    assert ran == [0, 1] and [o["text"] for o in cell.outputs] == [NOT_RUN]
    execute.preprocess_cell(cells[0], {}, 0)  # the next notebook: a run of its own
    assert execute.timeout_func(cells[1]) == 60 and ran == [0, 1, 0]


def test_the_grader_reads_no_message_of_the_kernel_past_its_limit():
    """One message of the kernel's is read whole before anything looks at it: the grader's client of a sandboxed
    kernel has zmq drop any past SANDBOX_MESSAGE_BYTES, unread, and a cell whose output was dropped does not
    stop the run. (Measured: a 300 MB print took the grader to 972 MB without the limit, 113 MB with it.)"""
    import zmq
    from donegate.sandbox import SANDBOX_MESSAGE_BYTES, SandboxedExecute, SandboxKernelManager
    manager = SandboxKernelManager()
    client = manager.client()
    try:
        assert client.context.getsockopt(zmq.MAXMSGSIZE) == SANDBOX_MESSAGE_BYTES
    finally:
        client.context.term()
        manager._release_box()
    assert SandboxedExecute().raise_on_iopub_timeout is False
