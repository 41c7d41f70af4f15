"""The direction of imports inside src/donegate, pinned by construction.

Every module belongs to a layer (LAYERS). The evidence chain never imports the workbook's machinery, and the gate
never imports the teaching agent or the book's setup. Every import counts: at the top of a module or inside a
function, `import donegate.x`, `from donegate.x import y`, `from donegate import x`, `from .x import y`,
`from . import x`. A module no layer holds fails the test, so a new module has to be placed before it is used.
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIB = ROOT / "src" / "donegate"
PACKAGE = "donegate"

LAYERS: dict[str, set[str]] = {
    # hooks leave evidence -> a trajectory strings it together (kept on disk by trajectory_io) -> verifiers judge
    # it (on cases read by cases) -> metrics count -> review; audit and the transcript readers read a real session
    "evidence": {"hooks", "trajectory", "trajectory_io", "verifiers", "cases", "metrics", "review", "audit", "claims",
                 "transcripts"},
    # the stop gate and what makes it work in the real hosts
    "gate": {"stopgate", "treestate", "realhosts", "hosts", "doctor", "quickstop", "plugins"},
    # the minimal coding agent chapter 07 builds to put gates on, and the player of its scenarios (07 part 3)
    "agent": {"agent", "demo"},
    # the workbook's machinery: quizzes, exercises and questionnaires, progress, the self-check, its sandbox and
    # judge, grading, the command line, the book's setup
    "workbook": {"quiz", "practice", "progress", "selfcheck", "sandbox", "judge", "grading", "cli", "setup"},
    # the package itself and nbdev's index of it
    "package": {"__init__", "_modidx"},
}

# (layer that imports, modules it must never import, why)
RULES: list[tuple[str, set[str], str]] = [
    ("evidence", LAYERS["workbook"], "the evidence chain never imports the workbook's machinery"),
    ("gate", {"agent", "demo", "setup"}, "the gate never imports the teaching agent or the book's setup"),
]


@dataclass(frozen=True)
class Edge:
    """`module` imports `target` at `line` of its file, inside the chapter cell `cell`."""
    module: str
    target: str
    line: int
    cell: str

    def __str__(self) -> str:
        return (f"donegate.{self.module} imports donegate.{self.target} "
                f"(src/donegate/{self.module}.py line {self.line}; edit {self.cell})")


def library_modules(lib: Path = LIB) -> dict[str, Path]:
    """Every module of the package, by name (`__init__` included)."""
    return {p.stem: p for p in sorted(lib.glob("*.py"))}


def _cell_at(lines: list[str], line: int) -> str:
    """The chapter cell an exported line comes from, from the `# %% ../../chapters/NN.ipynb #id` line above it."""
    for text in reversed(lines[:line]):
        if text.startswith("# %% "):
            return text[5:].replace("../../", "")
    return "the module itself"


def _dotted_modules(node: ast.AST, package: str) -> list[str]:
    """The modules of `package` that string constants under `node` name ("donegate.x", "donegate.x.Name")."""
    return [value.value.split(".")[1] for value in ast.walk(node)
            if isinstance(value, ast.Constant) and isinstance(value.value, str)
            and value.value.startswith(package + ".")]


def _dynamic_imports(tree: ast.Module, package: str) -> list[tuple[str, int]]:
    """Imports made by name at run time: `importlib.import_module(...)` or `__import__(...)` of a string constant,
    or of a value taken from a module-level table of such strings (a dict, list or tuple the module defines)."""
    tables = {target.id: node.value for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
              for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
              if isinstance(target, ast.Name) and isinstance(node.value, (ast.Dict, ast.List, ast.Tuple, ast.Set))}
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        if name not in ("import_module", "__import__"):
            continue
        named = _dotted_modules(node.args[0], package)
        named += [m for n in ast.walk(node.args[0]) if isinstance(n, ast.Name) and n.id in tables
                  for m in _dotted_modules(tables[n.id], package)]
        found += [(module, node.lineno) for module in named]
    return found


def imported_modules(source: str, package: str = PACKAGE) -> list[tuple[str, int]]:
    """(module of `package`, line) for each import of one in `source`, wherever it is (top level, a function, a
    class, a try), and each import by name at run time (`importlib.import_module` of a string the module holds).
    `from donegate import x` counts x (a name that is no module counts the package, `__init__`)."""
    tree = ast.parse(source)
    found = _dynamic_imports(tree, package)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == package:
                    found.append((parts[1] if len(parts) > 1 else "__init__", node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level > 1:
                continue  # above the package: not one of its modules
            if node.level == 1:
                parts = [package, *(node.module.split(".") if node.module else [])]
            else:
                parts = (node.module or "").split(".")
            if parts[0] != package:
                continue
            if len(parts) > 1:
                found.append((parts[1], node.lineno))
            else:  # from donegate import x / from . import x
                found += [(alias.name, node.lineno) for alias in node.names]
    return found


def import_edges(lib: Path = LIB) -> list[Edge]:
    """Every import between the package's modules."""
    modules = library_modules(lib)
    edges = []
    for name, path in modules.items():
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for target, line in imported_modules(source):
            target = target if target in modules else "__init__"
            if target != name:
                edges.append(Edge(name, target, line, _cell_at(lines, line)))
    return edges


def layer_of(module: str) -> str | None:
    return next((layer for layer, members in LAYERS.items() if module in members), None)


def violations(edges: list[Edge]) -> list[str]:
    """Each edge a rule forbids, said as which module imports which, where, and the rule."""
    found = []
    for edge in edges:
        for layer, forbidden, why in RULES:
            if layer_of(edge.module) == layer and edge.target in forbidden:
                found.append(f"{edge}: {why}")
    return found


# --- the package ---------------------------------------------------------------------------------------------------

def test_every_module_has_a_layer():
    unplaced = [name for name in library_modules() if layer_of(name) is None]
    assert not unplaced, (f"modules in no layer: {unplaced}; add each to LAYERS in tests/test_layers.py "
                          f"(the evidence chain, the gate, the agent or the workbook)")


def test_no_module_is_in_two_layers():
    seen: dict[str, str] = {}
    twice = []
    for layer, members in LAYERS.items():
        twice += [f"{name} ({seen[name]} and {layer})" for name in members if name in seen]
        seen.update((name, layer) for name in members)
    assert not twice, f"in two layers: {twice}"


def test_the_layer_table_names_only_modules_that_exist():
    stale = sorted(name for members in LAYERS.values() for name in members
                   if name not in library_modules())
    assert not stale, f"the layer table names modules src/donegate does not hold: {stale}; fix the name or remove it"


def test_imports_run_only_in_the_allowed_directions():
    edges = import_edges()
    assert len(edges) > 10  # the reader found the package's imports
    broken = violations(edges)
    assert not broken, "imports against the layers:\n  " + "\n  ".join(broken)


# --- the reader can fail ---------------------------------------------------------------------------------------------

READER_CASES = [
    ("import donegate.selfcheck", [("selfcheck", 1)]),
    ("import donegate.selfcheck as s", [("selfcheck", 1)]),
    ("import donegate", [("__init__", 1)]),
    ("from donegate.selfcheck import defer_iri_grammar", [("selfcheck", 1)]),
    ("from donegate import grading, hooks", [("grading", 1), ("hooks", 1)]),
    ("from .quiz import Quiz", [("quiz", 1)]),
    ("from . import cli as c", [("cli", 1)]),
    ("def f():\n    if True:\n        from donegate.judge import run_judge", [("judge", 3)]),
    ("class A:\n    def m(self):\n        import donegate.sandbox", [("sandbox", 3)]),
    ("try:\n    from .progress import record_pass\nexcept ImportError:\n    pass", [("progress", 2)]),
    ("import json\nfrom pathlib import Path\nfrom .. import other", []),
    ("import importlib\nm = importlib.import_module('donegate.judge')", [("judge", 2)]),
    ("MOVED = {'A': 'donegate.sandbox'}\ndef __getattr__(n):\n    import importlib\n"
     "    return getattr(importlib.import_module(MOVED[n]), n)", [("sandbox", 4)]),
    ("def load(target):\n    return importlib.import_module(target.partition(':')[0])", []),
]


@pytest.mark.parametrize("source, expected", READER_CASES, ids=[c[0].splitlines()[-1].strip() for c in READER_CASES])
def test_the_reader_finds_every_form_of_import(source, expected):
    assert sorted(imported_modules(source)) == sorted(expected)


def test_a_function_level_import_up_the_layers_is_named_with_its_line(tmp_path):
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "selfcheck.py").write_text("X = 1\n")
    (tmp_path / "setup.py").write_text("Y = 1\n")
    (tmp_path / "trajectory.py").write_text(
        "# %% ../../chapters/03_trajectories.ipynb #tj-1\nimport json\n\n\ndef validate():\n"
        "    from donegate.selfcheck import X\n    return X\n")
    (tmp_path / "stopgate.py").write_text("# %% ../../chapters/07.ipynb #sg\nfrom . import setup\n")
    (tmp_path / "hooks.py").write_text("from .trajectory import validate\n")  # down the chain: allowed
    broken = violations(import_edges(tmp_path))
    assert broken == [
        "donegate.stopgate imports donegate.setup (src/donegate/stopgate.py line 2; edit chapters/07.ipynb #sg): "
        "the gate never imports the teaching agent or the book's setup",
        "donegate.trajectory imports donegate.selfcheck (src/donegate/trajectory.py line 6; edit "
        "chapters/03_trajectories.ipynb #tj-1): the evidence chain never imports the workbook's machinery",
    ]


# --- one direction (DESIGN section 1) ------------------------------------------------------------------------------
#
# A module's place comes from the notebook that exports it (`#| default_exp NAME`): chapters 00-09 teach, notebooks
# 80 and up are the appendix. Nothing here lists modules by name, so a module added tomorrow is held to the same rules.

CHAPTERS = ROOT / "chapters"
DEFAULT_EXP = re.compile(r"^#\|\s*default_exp\s+(\w+)", re.M)


def exporting_notebooks(chapters: Path = CHAPTERS) -> dict[str, int]:
    """Module name -> the number of the notebook that exports it (its `#| default_exp`)."""
    found = {}
    for nb in sorted(chapters.glob("[0-9][0-9]_*.ipynb")):
        for cell in json.loads(nb.read_text(encoding="utf-8"))["cells"]:
            hit = DEFAULT_EXP.search("".join(cell["source"])) if cell["cell_type"] == "code" else None
            if hit:
                found[hit.group(1)] = int(nb.name[:2])
                break
    return found


def import_graph(edges: list[Edge]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.module, set()).add(edge.target)
        graph.setdefault(edge.target, set())
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every group of modules that reach each other through imports (Tarjan's strongly connected components of
    two or more modules, or one that imports itself), each said as one cycle through all of it, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1 or v in graph.get(v, ()):
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(_cycle_through(group, graph) for group in groups)


def _cycle_through(group: set[str], graph: dict[str, set[str]]) -> list[str]:
    """A closed walk inside `group` from its first module back to it, visiting every member at least once."""
    start = min(group)
    walk, here = [start], start
    for goal in sorted(group - {start}) + [start]:
        # shortest path from here to goal inside the group (breadth first)
        back, frontier = {here: None}, [here]
        while goal not in back:
            frontier = [w for v in frontier for w in sorted(graph[v] & group) if w not in back and not back.update({w: v})]
        path, v = [], goal
        while v != here:
            path.append(v)
            v = back[v]
        walk += reversed(path)
        here = goal
    return walk


def private_uses(source: str, package: str = PACKAGE) -> list[tuple[str, str, int]]:
    """(module, name, line) for each underscore name `source` takes from another module of `package`: imported by
    name (`from .x import _y`) or reached as an attribute of an imported module (`from . import x; x._y`)."""
    tree = ast.parse(source)
    found, aliases = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level <= 1:
            parts = ([package, *(node.module.split(".") if node.module else [])] if node.level == 1
                     else (node.module or "").split("."))
            if parts[0] != package:
                continue
            for alias in node.names:
                if len(parts) > 1 and alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append((parts[1], alias.name, node.lineno))
                elif len(parts) == 1:
                    aliases[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == package and len(parts) > 1 and alias.asname:
                    aliases[alias.asname] = parts[1]
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")):
            continue
        value = node.value
        if isinstance(value, ast.Name) and value.id in aliases:
            found.append((aliases[value.id], node.attr, node.lineno))
        elif (isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == package):
            found.append((value.attr, node.attr, node.lineno))  # donegate.x._y
    return sorted(found, key=lambda f: f[2])


def inherited_private_uses(source: str, package: str = PACKAGE) -> list[tuple[str, str, int]]:
    """(class, name, line) for each underscore name a class reaches on itself (`self._y`) that neither it nor its
    module defines, where the class's base comes from another module of `package`: such a name is the base's
    private one. A method counts whether it is written in the class or attached to it later (nbdev's style:
    `def _m(self: Class)` then `Class.m = _m`)."""
    tree = ast.parse(source)
    foreign = {alias.asname or alias.name for node in ast.walk(tree)
               if isinstance(node, ast.ImportFrom) and node.level <= 1
               and (node.level == 1 or (node.module or "").split(".")[0] == package)
               for alias in node.names}
    found = []
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        if not any(isinstance(b, ast.Name) and b.id in foreign for b in cls.bases):
            continue
        functions = [n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        functions += [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.args.args
                      and isinstance(n.args.args[0].annotation, ast.Name) and n.args.args[0].annotation.id == cls.name]
        own = {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        own |= {t.id for n in cls.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}
        own |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
                and isinstance(n.value, ast.Name) and n.value.id == cls.name}
        for f in functions:
            me = f.args.args[0].arg if f.args.args else "self"
            own |= {n.attr for n in ast.walk(f) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
                    and isinstance(n.value, ast.Name) and n.value.id == me}
        for f in functions:
            me = f.args.args[0].arg if f.args.args else "self"
            found += [(cls.name, n.attr, n.lineno) for n in ast.walk(f)
                      if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == me
                      and n.attr.startswith("_") and not n.attr.startswith("__") and n.attr not in own]
    return sorted(set(found), key=lambda f: (f[2], f[1]))


def private_members(source: str, class_name: str) -> set[str]:
    """The underscore names a class of `source` holds: methods written in it, names assigned in its body, and
    methods attached to it later in its module (`Class._m = _m`)."""
    tree = ast.parse(source)
    found = set()
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name):
        found |= {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        found |= {t.id for n in cls.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                  for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}
    found |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
              and isinstance(n.value, ast.Name) and n.value.id == class_name}
    return {name for name in found if name.startswith("_") and not name.startswith("__")}


def imported_from(tree: ast.Module, package: str = PACKAGE) -> dict[str, tuple[str, str]]:
    """Each name a module takes from another module of `package` by `from ... import`: name -> (module, name)."""
    origin = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level <= 1:
            parts = ([package, *(node.module.split(".") if node.module else [])] if node.level == 1
                     else (node.module or "").split("."))
            if parts[0] == package and len(parts) > 1:
                origin.update({alias.asname or alias.name: (parts[1], alias.name) for alias in node.names})
    return origin


def overridden_privates(source: str, base_source: Callable[[str, str], str | None],
                        package: str = PACKAGE) -> list[tuple[str, str]]:
    """(class, name) for each underscore method a class of `source` writes over, where its base comes from another
    module of `package` and holds that name: overriding a private method depends on it as much as calling it.
    `base_source(module, class)` gives the base module's source (None if unknown)."""
    tree = ast.parse(source)
    origin = imported_from(tree, package)
    found = []
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for base in (b.id for b in cls.bases if isinstance(b, ast.Name) and b.id in origin):
            held = _private_members_up(*origin[base], base_source, package)
            found += [(cls.name, m) for m in sorted(private_members(source, cls.name) & held)]
    return found


def _private_members_up(module: str, name: str, base_source: Callable[[str, str], str | None], package: str,
                        seen: frozenset = frozenset()) -> set[str]:
    """The underscore names class `name` of `module` holds, and those of the classes it builds on, up the chain."""
    text = base_source(module, name)
    if text is None or (module, name) in seen:
        return set()
    held = private_members(text, name)
    tree = ast.parse(text)
    origin = imported_from(tree, package)
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name):
        for base in cls.bases:
            if isinstance(base, ast.Name):
                up = origin.get(base.id, (module, base.id))
                held |= _private_members_up(*up, base_source, package, seen | {(module, name)})
    return held


def test_a_subclass_uses_only_its_base_s_public_names():
    modules = library_modules()
    sources = {name: path.read_text(encoding="utf-8") for name, path in modules.items()}
    taken = []
    for name, source in sources.items():
        taken += [f"donegate.{name}.{cls} reaches its base's {private} (src/donegate/{name}.py line {line})"
                  for cls, private, line in inherited_private_uses(source)]
        taken += [f"donegate.{name}.{cls} writes over its base's {private}"
                  for cls, private in overridden_privates(source, lambda module, _: sources.get(module))]
    assert not taken, ("a subclass in another module uses its base's private names; make the seam public in the "
                       "chapter that offers it:\n  " + "\n  ".join(taken))


def test_the_subclass_reader_finds_a_base_s_private_name_and_not_its_own():
    source = ("from .stopgate import StopGate\n\n\nclass SessionGate(StopGate):\n    def start(self):\n"
              "        self._mine = 1\n        return self._load(), self._mine, self._helper()\n\n"
              "    def _helper(self):\n        return 2\n\n\n"
              "def _settle(self: SessionGate):\n    return self._settled()\n\n\nSessionGate.settle = _settle\n"
              "class Local:\n    def f(self):\n        return self._x\n")
    assert inherited_private_uses(source) == [("SessionGate", "_load", 7), ("SessionGate", "_settled", 14)]


def test_writing_over_a_base_s_private_method_is_found_and_a_public_one_is_not():
    base = ("class StopGate:\n    def _decide(self):\n        return 1\n\n    def decide(self):\n        return 2\n\n\n"
            "def _run(self: StopGate):\n    return 3\n\n\nStopGate._run = _run\n")
    sub = ("from .stopgate import StopGate\n\n\nclass SessionGate(StopGate):\n    def _decide(self):\n        return 4\n\n"
           "    def decide(self):\n        return 5\n\n    def _own(self):\n        return 6\n\n\n"
           "def _run(self: SessionGate):\n    return 7\n\n\nSessionGate._run = _run\n")
    assert overridden_privates(sub, lambda module, name: base if (module, name) == ("stopgate", "StopGate") else None) \
        == [("SessionGate", "_decide"), ("SessionGate", "_run")]
    middle = "from .stopgate import StopGate\n\n\nclass ExactGate(StopGate):\n    def read_tree(self):\n        return 8\n"
    sources = {("stopgate", "StopGate"): base, ("treestate", "ExactGate"): middle}
    on_middle = sub.replace("from .stopgate import StopGate", "from .treestate import ExactGate").replace(
        "SessionGate(StopGate)", "SessionGate(ExactGate)")
    assert overridden_privates(on_middle, lambda module, name: sources.get((module, name))) \
        == [("SessionGate", "_decide"), ("SessionGate", "_run")], "the chain of bases is followed"


def test_no_module_imports_a_module_that_imports_it_back():
    found = circles(import_graph(import_edges()))
    assert not found, ("import circles (each module reaches the next; break each with a seam the later notebook "
                       "fills, DESIGN section 1):\n  " + "\n  ".join(" -> ".join(c) for c in found))


def test_a_teaching_chapter_never_imports_an_appendix_module():
    place = exporting_notebooks()
    assert len(place) > 20 and min(place.values()) < 10 <= max(place.values())
    reverse = [f"{edge} (chapter {place[edge.module]:02d} reaching into appendix {place[edge.target]:02d})"
               for edge in import_edges()
               if edge.module in place and edge.target in place
               and place[edge.module] < 80 <= place[edge.target]]
    assert not reverse, ("a teaching chapter's module imports an appendix's; offer a seam in the chapter and "
                         "assemble one level up (DESIGN section 1):\n  " + "\n  ".join(reverse))


def test_every_module_is_exported_by_a_numbered_notebook():
    place = exporting_notebooks()
    missing = sorted(name for name in library_modules() if name not in place and name not in ("__init__", "_modidx"))
    assert not missing, f"modules no chapter or appendix exports: {missing}"


def test_no_module_uses_another_modules_private_names():
    taken = []
    for name, path in library_modules().items():
        if name == "_modidx":
            continue
        for target, private, line in private_uses(path.read_text(encoding="utf-8")):
            if target != name:
                taken.append(f"donegate.{name} uses donegate.{target}.{private} (src/donegate/{name}.py line {line})")
    assert not taken, "private names used across modules (make them public, or keep the use inside):\n  " + \
        "\n  ".join(taken)


# --- the circle and private-name readers can fail ----------------------------------------------------------------------

def test_circles_are_found_through_function_level_imports_and_named(tmp_path):
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "a.py").write_text("from .b import x\n")
    (tmp_path / "b.py").write_text("def f():\n    from donegate.c import y\n")
    (tmp_path / "c.py").write_text("import donegate.a as a\n")
    (tmp_path / "d.py").write_text("from . import a\n")  # reaches the circle, is not in it
    (tmp_path / "e.py").write_text("from .e import z\n")  # imports itself
    assert circles(import_graph(import_edges(tmp_path))) == [["a", "b", "c", "a"]]


def test_two_circles_sharing_a_module_are_one_group_said_as_one_walk():
    graph = {"hosts": {"doctor", "plugins", "realhosts"}, "doctor": {"hosts"}, "plugins": {"doctor", "hosts"},
             "realhosts": {"hosts"}, "stopgate": set()}
    (walk,) = circles(graph)
    assert walk[0] == walk[-1] == "doctor" and set(walk) == {"doctor", "hosts", "plugins", "realhosts"}
    assert all(b in graph[a] for a, b in zip(walk, walk[1:]))
    assert circles({"a": {"b"}, "b": set()}) == []


PRIVATE_CASES = [
    ("from .trajectory import _open, close", [("trajectory", "_open", 1)]),
    ("from donegate.selfcheck import _one_line", [("selfcheck", "_one_line", 1)]),
    ("from . import trajectory as tj\ntj._close(w)", [("trajectory", "_close", 2)]),
    ("import donegate.realhosts as rh\nrh._gates.clear()", [("realhosts", "_gates", 2)]),
    ("import donegate\ndonegate.progress._now()", [("progress", "_now", 2)]),
    ("from . import trajectory\nx = trajectory.__name__\nself._own = 1", []),
    ("from .trajectory import __all__, load", []),
]


@pytest.mark.parametrize("source, expected", PRIVATE_CASES, ids=[c[0].splitlines()[-1] for c in PRIVATE_CASES])
def test_the_private_name_reader_finds_each_form(source, expected):
    assert private_uses(source) == expected


def test_the_notebook_reader_places_a_module_by_its_notebook(tmp_path):
    def notebook(name: str, first: str) -> None:
        cells = [{"cell_type": "markdown", "source": ["#| default_exp nope"], "metadata": {}},
                 {"cell_type": "code", "source": [first], "metadata": {}, "outputs": [], "execution_count": None}]
        (tmp_path / name).write_text(json.dumps({"cells": cells}))

    notebook("03_trajectories.ipynb", "#| default_exp trajectory\n")
    notebook("98_trajectory_io.ipynb", "#|  default_exp  trajectory_io")
    notebook("01_prose_only.ipynb", "print('no export')")
    assert exporting_notebooks(tmp_path) == {"trajectory": 3, "trajectory_io": 98}
