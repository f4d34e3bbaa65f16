"""docs/api.md: every public name of ``model`` and ``pipelines`` is documented, and every
```python block runs as written, in order, in one namespace (from the repository root)."""

import re
from pathlib import Path

import pytest

import model
import pipelines
from tests.test_readme import python_blocks

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "api.md"
SUBPACKAGES = {"contact", "geometry", "integrate", "lubrication", "mechanics", "metrics", "metrics_spatial"}


def test_every_public_name_is_documented():
    text = API.read_text()
    public = [name for name in dir(model) if not name.startswith("_") and name not in SUBPACKAGES]
    public += pipelines.__all__
    missing = [name for name in public if not re.search(rf"[`.]{name}\b", text)]
    assert not missing, f"docs/api.md does not mention {missing}"


def test_the_blocks_compile():
    blocks = python_blocks(API)
    assert blocks
    for block in blocks:
        compile(block, str(API), "exec")


@pytest.mark.slow
@pytest.mark.validation
def test_the_blocks_run(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(ROOT)
    namespace = {"__name__": "api_docs"}
    for block in python_blocks(API):
        exec(compile(block, str(API), "exec"), namespace)
    # the forward-mode slope against a central difference of the batched metric, over 4 % of
    # the clearance: the solver's noise (rtol 1e-6) stays well under the difference
    jnp, step = namespace["jnp"], 2e-5
    below, above = namespace["jax"].vmap(namespace["peak_force"])(jnp.array([0.5e-3 - step, 0.5e-3 + step]))
    assert float(namespace["slope"]) == pytest.approx(float(above - below) / (2 * step), rel=2e-2)
