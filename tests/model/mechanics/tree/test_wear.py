"""Worn bushings on the joint-coordinate engine: the Flores slider-crank's pin with a worn
bore, over its first impacts (0.6 ms, rtol 1e-8, atol 1e-13), on both engines: the Archard wear the run
accumulates (model/integrate/wear_tracking.py reads the contact from the absolute motion of
the joint coordinates) and the peaks. Two compiles of the full integrator: ``validation``.
Result: docs/engine.md."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.integrate.life import with_profile
from model.mechanics.tree import TreeMechanism
from pipelines.build import build_mechanism, solver_settings
from pipelines.config import load_mechanism
from tests.helpers import FLORES

pytestmark = [pytest.mark.slow, pytest.mark.validation]

RESOLUTION = 360
T_END = 0.6e-3  # s: the first impact is at 0.227 ms


@pytest.fixture(scope="module")
def runs():
    config = load_mechanism(FLORES)
    settings = solver_settings(config, t_end=T_END, output_interval=T_END / 20, rtol=1e-8, atol=1e-13)
    clearance = float(build_mechanism(config, "absolute").clearance_joints[0].clearance)
    angles = 2 * jnp.pi * jnp.arange(RESOLUTION) / RESOLUTION
    depth = 0.05 * clearance * (1.0 + jnp.cos(angles - 1.0))  # a worn bore, deepest at 1 rad
    law = model.ArchardWear(coefficient=jnp.asarray(8e-14), length=jnp.asarray(0.02), start_time=jnp.asarray(0.0),
                            joint=0, resolution=RESOLUTION)
    simulate = jax.jit(model.simulate_with_wear, static_argnums=1)
    out = {}
    for engine in ("joint", "absolute"):
        worn = with_profile(build_mechanism(config, engine), 0, depth)
        out[engine] = (worn, *simulate(worn, settings, law))
    return out


def test_a_worn_bushing_wears_as_on_the_absolute_engine(runs):
    """The worn volume (the sum of the bins' depths) and the load-distance integral
    ``int F |v_t| dt`` to 1e-6, the deepest bin to 1e-4, every bin to 5e-3 of the deepest,
    the contact peaks to 1e-6. The integrals move by a few 1e-7 with the step sequence at
    this tolerance (the same solve compiled at another XLA optimisation level, so rounded
    otherwise). The bins are the sharpest measure: the contact point sweeps across them
    during an impact and each step's three quadrature points sample it where the step
    sequence puts them, so the two engines' bins part by 2.8e-3 of the deepest at rtol 1e-8
    and by 6e-4 at 1e-10 (docs/engine.md)."""
    tree, joint, joint_wear = runs["joint"]
    _, absolute, absolute_wear = runs["absolute"]
    assert isinstance(tree, TreeMechanism) and tree.clearance_joints[0].wear is not None
    assert int(joint.result) == 0 and int(absolute.result) == 0
    largest = float(jnp.max(absolute_wear.depth))
    assert largest > 0.0
    assert float(joint_wear.load_distance) == pytest.approx(float(absolute_wear.load_distance), rel=1e-6)
    assert float(jnp.sum(joint_wear.depth)) == pytest.approx(float(jnp.sum(absolute_wear.depth)), rel=1e-6)
    assert float(jnp.max(joint_wear.depth)) == pytest.approx(largest, rel=1e-4)
    np.testing.assert_allclose(joint_wear.depth, absolute_wear.depth, rtol=0, atol=5e-3 * largest)
    for field in ("max_normal_force", "max_penetration", "first_impact_time"):
        np.testing.assert_allclose(getattr(joint.peaks, field), getattr(absolute.peaks, field), rtol=1e-6,
                                   err_msg=field)
