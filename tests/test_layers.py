"""The direction of imports inside src/donegate, pinned by construction.

Every module belongs to a layer (LAYERS). The evidence chain never imports the workbook's machinery, and the gate
never imports the teaching agent or the book's setup. Every import counts: at the top of a module or inside a
function, `import donegate.x`, `from donegate.x import y`, `from donegate import x`, `from .x import y`,
`from . import x`. A module no layer holds fails the test, so a new module has to be placed before it is used.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

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


def imported_modules(source: str, package: str = PACKAGE) -> list[tuple[str, int]]:
    """(module of `package`, line) for each import of one in `source`, wherever it is (top level, a function, a
    class, a try). `from donegate import x` counts x (a name that is no module counts the package, `__init__`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
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
]


@pytest.mark.parametrize("source, expected", READER_CASES, ids=[c[0].splitlines()[-1].strip() for c in READER_CASES])
def test_the_reader_finds_every_form_of_import(source, expected):
    assert imported_modules(source) == expected


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
