"""The README's Python example runs as written (from the repository root)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def python_blocks(path: Path) -> list[str]:
    """The ```python blocks of a markdown file, in order."""
    return re.findall(r"^```python\n(.*?)^```$", path.read_text(), flags=re.S | re.M)


def test_readme_has_one_python_example_that_compiles():
    (block,) = python_blocks(ROOT / "README.md")
    compile(block, "README.md", "exec")
    assert "jax.grad" in block and "jax.vmap" in block


@pytest.mark.slow
def test_readme_example_runs(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture):
    (block,) = python_blocks(ROOT / "README.md")
    monkeypatch.chdir(ROOT)
    namespace = {"__name__": "readme"}
    exec(compile(block, "README.md", "exec"), namespace)
    force, slope, batch = capsys.readouterr().out.splitlines()
    forces = [float(value) for value in batch.strip("[] N").split()]
    # the same run, alone and in a batch (a batched solve rounds differently: steps differ at the last bits)
    assert float(force.split()[0]) == pytest.approx(forces[2], rel=1e-5)
    # the reverse-mode derivative against a central difference of the batched metric, over 4 %
    # of the clearance: the solver's noise (rtol 1e-8) stays well under the difference
    jnp, peak_force, step = namespace["jnp"], namespace["peak_force"], 2e-5
    below, above, _ = namespace["jax"].vmap(peak_force)(jnp.array([0.5e-3 - step, 0.5e-3 + step, 0.5e-3]))
    assert float(slope.split()[0]) == pytest.approx(float(above - below) / (2 * step), rel=2e-2)
