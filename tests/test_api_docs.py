"""docs/api.md: every public name of ``model`` and ``pipelines`` is documented, and every
```python block runs as written, in order, in one namespace (from the repository root).

The blocks that solve no mechanism (set-up, contact laws, geometry, the Lorenz exponents,
the sampler, a config) run in one test, the set-up and the blocks that solve the Flores
slider-crank (a solve, its forward-mode derivative, a batch: compiles that cost the same
whatever ``t_end``) in a ``slow`` one; each block runs once."""

import re
from pathlib import Path

import pytest

import model
import pipelines
from tests.test_readme import python_blocks

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "api.md"
SUBPACKAGES = {"contact", "geometry", "integrate", "lubrication", "mechanics", "metrics"}


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


# names bound by the blocks that solve the Flores slider-crank, and used by those after them
SOLVING = re.compile(r"\b(crank|trajectory|mechanism|forward|slope)\b")


def test_the_blocks_that_solve_no_mechanism_run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture):
    monkeypatch.chdir(ROOT)
    blocks = [block for block in python_blocks(API) if not SOLVING.search(block)]
    assert len(blocks) >= 5
    namespace = {"__name__": "api_docs"}
    for block in blocks:
        exec(compile(block, str(API), "exec"), namespace)
    capsys.readouterr()
    # the Lorenz system's volume contracts at the constant rate sigma + 1 + beta, so the
    # exponents sum to its negative; the largest is Sprott's (2003) 0.9056
    exponents = [float(value) for value in namespace["result"].exponents]
    assert sum(exponents) == pytest.approx(-(10.0 + 1.0 + 8.0 / 3.0), rel=1e-3)
    assert exponents[0] == pytest.approx(0.906, rel=0.05)
    points = namespace["points"]
    assert points.shape == (4, 2) and (points[:, 0] >= 0.1e-3).all() and (points[:, 1] <= 0.95).all()
    # one point per stratum of each axis (a Latin hypercube)
    assert sorted((4 * (points[:, 1] - 0.5) / 0.45).astype(int).tolist()) == [0, 1, 2, 3]


@pytest.mark.slow
def test_the_blocks_that_solve_the_slider_crank_run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture):
    monkeypatch.chdir(ROOT)
    setup, *others = python_blocks(API)
    solving = [block for block in others if SOLVING.search(block)]
    assert len(solving) >= 3
    namespace = {"__name__": "api_docs"}
    for block in [setup, *solving]:
        exec(compile(block, str(API), "exec"), namespace)
    capsys.readouterr()
    assert int(namespace["trajectory"].result) == 0
    # the forward-mode slope against a central difference of the batched metric, over 4 % of
    # the clearance: the solver's noise (rtol 1e-8) stays well under the difference
    jnp, step = namespace["jnp"], 2e-5
    below, above = namespace["jax"].vmap(namespace["peak_force"])(jnp.array([0.5e-3 - step, 0.5e-3 + step]))
    assert float(namespace["slope"]) == pytest.approx(float(above - below) / (2 * step), rel=2e-2)
