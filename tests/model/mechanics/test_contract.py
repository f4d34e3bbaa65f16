"""The mechanism interface is complete and ``model/mechanics`` imports without cycles.

Every concrete engine class implements every abstract field and method of
:class:`model.mechanics.AbstractMechanism` (equinox refuses to instantiate one that does
not), and the import graph of ``model/mechanics`` (module-level imports, the
annotation-only ``if TYPE_CHECKING:`` imports left out) has no cycle, so no import needs to
hide inside a function.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import model.mechanics
from model.mechanics import AbstractAbsoluteMechanism, AbstractMechanism, Mechanism, TreeMechanism
from model.mechanics.spatial import SpatialMechanism
from pipelines.build import build_mechanism
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS
from tests.model.mechanics.spatial.cases import bushing

PACKAGE = Path(model.mechanics.__file__).parent
ROOT = PACKAGE.parent.parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = sorted(_module_name(path) for path in PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("cls", [Mechanism, SpatialMechanism, TreeMechanism])
def test_every_engine_implements_the_whole_interface(cls):
    assert issubclass(cls, AbstractMechanism)
    assert not cls.__abstractmethods__, cls.__abstractmethods__
    assert not cls.__abstractvars__, cls.__abstractvars__


def _planar(engine):
    return build_mechanism(load_mechanism(CONFIGS / "flores_slider_crank.toml"), engine)


@pytest.mark.parametrize("build, cls", [
    (lambda: _planar("absolute"), Mechanism), (lambda: _planar("joint"), TreeMechanism), (bushing, SpatialMechanism),
], ids=["planar", "joint", "spatial"])
def test_every_engine_instantiates_with_the_interface_data(build, cls):
    mechanism = build()
    assert type(mechanism) is cls
    for name in AbstractMechanism.__abstractvars__:
        getattr(mechanism, name)
    assert mechanism.num_bodies == mechanism.masses.shape[-1] > 0
    assert len(mechanism.clearance_joints) > 0
    assert isinstance(mechanism, AbstractAbsoluteMechanism) == (cls is not TreeMechanism)


def _module_level_imports(name: str) -> set[str]:
    """The ``model.mechanics`` modules ``name`` imports when it runs (module level, outside
    ``if TYPE_CHECKING:``), resolved to module names; and a failure for any import inside a
    function."""
    path = PACKAGE.parent.parent / Path(*name.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner = [n for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))]
            assert not inner, f"{name}: import inside {node.name}"
    found = set()
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            if node.module:  # from .module import names (the names may be submodules)
                target = f"{base}.{node.module}"
                found.add(target)
            else:  # from . import submodules
                target = base
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return {module for module in found if module in MODULES and module != name}


def test_the_import_graph_of_model_mechanics_has_no_cycle():
    graph = {name: _module_level_imports(name) for name in MODULES}
    state: dict[str, str] = {}

    def visit(name, path):
        state[name] = "open"
        for target in graph[name]:
            assert state.get(target) != "open", " -> ".join(path + [target])
            if target not in state:
                visit(target, path + [target])
        state[name] = "done"

    for name in MODULES:
        if name not in state:
            visit(name, [name])


def test_each_module_imports_in_a_fresh_interpreter():
    """A fresh interpreter (one subprocess) imports every module of ``model/mechanics``.
    Any of them imported first runs ``model/__init__.py`` first, so one order covers all."""
    script = "import importlib\n" + "".join(f"importlib.import_module({name!r})\n" for name in MODULES)
    subprocess.run([sys.executable, "-c", script], check=True, cwd=ROOT, timeout=300)
