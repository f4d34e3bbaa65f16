"""The sweep library depends on ``model`` only: no module under ``sweep/`` imports
``pipelines`` (dependencies point one way, model <- sweep <- pipelines)."""

import ast
from pathlib import Path

SWEEP = Path(__file__).resolve().parents[2] / "sweep"


def imported_modules(path: Path) -> list[str]:
    """Absolute names of every module ``path`` imports, at any depth of its code."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                names.append(node.module or "")
            elif node.level > 1:  # `from ..x import y` leaves the sweep package
                names.append("." * node.level + (node.module or ""))
    return names


def test_sweep_does_not_import_pipelines():
    files = sorted(SWEEP.rglob("*.py"))
    assert len(files) > 5
    offenders = {
        str(path.relative_to(SWEEP.parent)): name
        for path in files
        for name in imported_modules(path)
        if name.split(".")[0] == "pipelines" or name.startswith("..")
    }
    assert offenders == {}


def test_the_check_sees_an_import_inside_a_function(tmp_path):
    module = tmp_path / "module.py"
    module.write_text("def f():\n    from pipelines.errors import ConfigError\n    import pipelines.io\n")
    assert imported_modules(module) == ["pipelines.errors", "pipelines.io"]
