"""The output columns of a spatial flexible body on a statically deflected cantilever:
the midpoint's distance from the chord and the section loads against beam theory."""

from types import SimpleNamespace

import jax.numpy as jnp
import numpy as np
import pytest

from pipelines.flexible_outputs import flexible_summary, flexible_columns
from tests.model.mechanics.beam_fixtures import LENGTH, MODULUS, SECTION
from tests.model.mechanics.spatial.test_beams import ELEMENTS, linearised, spatial_beam, tip_load, turned

FORCE = np.array([0.0, -10.0, 5.0])  # N at the tip


@pytest.fixture(scope="module")
def deflected():
    mechanism = spatial_beam()
    stiffness, _ = linearised(mechanism)
    twist = np.zeros(stiffness.shape[0])
    twist[6:] = np.linalg.solve(stiffness[6:, 6:], tip_load(stiffness.shape[0] - 6, FORCE))
    x = turned(mechanism.initial_positions, jnp.asarray(twist))[None, :]
    zeros = jnp.zeros((1, 6 * mechanism.num_bodies))
    trajectory = SimpleNamespace(t=jnp.zeros(1), x=x, v=zeros, vdot=zeros)
    return mechanism, flexible_columns(mechanism, trajectory)


@pytest.mark.slow  # 5 CPU s, most of it compiling
def test_midpoint_deflection_from_the_chord(deflected):
    """Tip-loaded cantilever: ``w(L/2) - w(L)/2 = -P L^3 / (16 E I)`` (the shear term is
    linear in x and leaves the chord); square section, so the loads' resultant sets it."""
    _, columns = deflected
    expected = np.linalg.norm(FORCE) * LENGTH**3 / (16 * MODULUS * SECTION["izz"])
    assert columns["s.deflection"][0] == pytest.approx(expected, rel=1e-5)


def test_section_loads_and_their_peaks(deflected):
    mechanism, columns = deflected
    cuts = (np.arange(ELEMENTS) + 0.5) * LENGTH / ELEMENTS
    resultant = np.array([columns[f"s.bending_moment_{k}"][0] for k in range(ELEMENTS)])
    np.testing.assert_allclose(resultant, np.linalg.norm(FORCE) * (LENGTH - cuts), rtol=1e-5)
    summary = flexible_summary(mechanism, columns, np.zeros(1))
    assert summary["s.max_abs_bending_moment"] == pytest.approx(np.linalg.norm(FORCE) * (LENGTH - cuts[0]), rel=1e-5)
    # (the axial force is second order in the deflection, and so are the terms this linear
    # solution leaves out: not checked here)
