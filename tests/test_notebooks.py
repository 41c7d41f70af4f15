"""Every chapter and every solution notebook runs top to bottom in a fresh kernel."""
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


def runnable() -> list[Path]:
    chapters = sorted((ROOT / "chapters").glob("*.ipynb"))
    solutions = sorted((ROOT / "solutions").glob("*/*.ipynb"))
    return chapters + solutions


@pytest.mark.notebook
@pytest.mark.parametrize("path", runnable(), ids=lambda p: str(p.relative_to(ROOT)))
def test_notebook_runs_top_to_bottom(path, tmp_path, monkeypatch):
    monkeypatch.setenv("DONEGATE_PROGRESS_FILE", str(tmp_path / "progress.json"))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
