"""The constraint derivatives on body frames (model/mechanics/spatial/constraints.py)
against an independent formulation: derivatives of ``Phi`` along the exact rotation of the
quaternions, ``p(s) = exp(s omega / 2) (x) p``, by nested autodiff."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model.geometry.quaternion import quaternion_product
from model.mechanics.spatial.constraints import (acceleration_rhs, all_constraints, constraint_jacobian,
                                                 constraint_rate)
from pipelines.build import build_mechanism
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS


def rotated(x, v, s, bodies):
    """Positions after moving every body for a time ``s`` at constant ``v`` (exactly)."""
    parts = []
    for b in range(bodies):
        position, quaternion = x[7 * b : 7 * b + 3], x[7 * b + 3 : 7 * b + 7]
        velocity, omega = v[6 * b : 6 * b + 3], v[6 * b + 3 : 6 * b + 6]
        speed = jnp.sqrt(omega @ omega)
        turn = jnp.concatenate([jnp.cos(0.5 * s * speed)[None], jnp.sin(0.5 * s * speed) * omega / speed])
        parts += [position + s * velocity, quaternion_product(turn, quaternion)]
    return jnp.concatenate(parts)


@pytest.fixture(scope="module")
def case():
    mechanism = build_mechanism(load_mechanism(CONFIGS / "flores_slider_crank_3d.toml"), "absolute")
    mechanism = eqx.tree_at(lambda m: (m.baumgarte_alpha, m.baumgarte_beta), mechanism,
                            (jnp.asarray(0.0), jnp.asarray(0.0)))
    x = mechanism.initial_state().x
    v = jnp.asarray(np.random.default_rng(1).normal(size=6 * mechanism.num_bodies))  # any velocity
    return mechanism, x, v, jnp.asarray(3e-4)


@pytest.mark.slow  # 7 CPU s, most of it compiling
def test_rate_and_jacobian_match_the_quaternion_path(case):
    mechanism, x, v, t = case
    path = lambda s: all_constraints(mechanism, rotated(x, v, s, mechanism.num_bodies), t + s)  # noqa: E731
    rate = jax.jvp(path, (0.0,), (1.0,))[1]
    np.testing.assert_allclose(constraint_rate(mechanism, x, v, t), rate, rtol=1e-10, atol=1e-12)
    time_rate = jax.jvp(lambda t_: all_constraints(mechanism, x, t_), (t,), (1.0,))[1]
    np.testing.assert_allclose(constraint_jacobian(mechanism, x, t) @ v + time_rate, rate, rtol=1e-10, atol=1e-12)


def test_convective_term_matches_the_quaternion_path(case):
    mechanism, x, v, t = case
    path = lambda s: all_constraints(mechanism, rotated(x, v, s, mechanism.num_bodies), t + s)  # noqa: E731
    second = jax.jvp(lambda s: jax.jvp(path, (s,), (1.0,))[1], (0.0,), (1.0,))[1]
    np.testing.assert_allclose(-acceleration_rhs(mechanism, x, v, t), second, rtol=1e-9, atol=1e-9)


def mixed_case(case):
    """Every joint type (with offsets), the driver and the axial row, at a pose off the
    constraints."""
    import dataclasses

    mechanism, x, v, t = case
    kinds = ("revolute", "spherical", "cylindrical", "prismatic", "fixed")
    joints = tuple(dataclasses.replace(joint, kind=kind, offset=jnp.asarray([1e-3, -2e-3, 5e-4]))
                   for joint, kind in zip(mechanism.joints * 2, kinds))
    mixed = dataclasses.replace(mechanism, joints=joints, kept_rows=None)
    pose = x + 1e-2 * jnp.asarray(np.random.default_rng(2).normal(size=x.shape))
    return mixed, pose, v, t


def test_written_out_derivatives_on_every_joint_type_match_the_quaternion_path(case):
    """The written-out rate and convective term of every row type against nested autodiff
    along the exact quaternion rotation (Baumgarte terms off: ``-gamma`` is ``c``)."""
    mechanism, pose, v, t = mixed_case(case)
    path = lambda s: all_constraints(mechanism, rotated(pose, v, s, mechanism.num_bodies), t + s)  # noqa: E731
    rate = jax.jvp(path, (0.0,), (1.0,))[1]
    second = jax.jvp(lambda s: jax.jvp(path, (s,), (1.0,))[1], (0.0,), (1.0,))[1]
    np.testing.assert_allclose(constraint_rate(mechanism, pose, v, t), rate, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(-acceleration_rhs(mechanism, pose, v, t), second, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("kinds", [("revolute", "spherical", "cylindrical", "prismatic", "fixed")])
def test_written_out_jacobian_equals_automatic_differentiation(case, kinds):
    """``constraint_jacobian`` (rows written out per joint type) against ``jax.jacfwd`` of the
    constraint rows along the bodies' twists, for every joint type, a speed driver and the
    axial row of the cylindrical clearance joint, at a pose off the constraints."""
    import dataclasses

    from model.mechanics.spatial.constraints import Frames, _skew, frame_constraints, frames

    mechanism, x, _, t = case
    joints = tuple(dataclasses.replace(joint, kind=kind, offset=jnp.asarray([1e-3, -2e-3, 5e-4]))
                   for joint, kind in zip(mechanism.joints * 2, kinds))
    mixed = dataclasses.replace(mechanism, joints=joints, kept_rows=None)
    pose = x + 1e-2 * jnp.asarray(np.random.default_rng(2).normal(size=x.shape))
    f = frames(mixed, pose)

    def along(twist):
        blocks = twist.reshape(mixed.num_bodies, 2, 3)
        return frame_constraints(mixed, Frames(f.positions + blocks[:, 0], f.rotations + _skew(blocks[:, 1]) @ f.rotations), t)

    automatic = jax.jacfwd(along)(jnp.zeros(6 * mixed.num_bodies))
    written = constraint_jacobian(mixed, pose, t)
    assert written.shape == automatic.shape and written.shape[0] == 5 + 3 + 4 + 5 + 6 + 1 + 1  # joints, driver, axial
    np.testing.assert_allclose(written, automatic, rtol=0, atol=1e-13)
