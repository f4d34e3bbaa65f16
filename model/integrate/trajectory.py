"""The trajectory a simulation returns, post-processed from the saved states."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, Int

from ..mechanics.dynamics import State, evaluate
from ..mechanics.mechanism import Mechanism
from .peaks import Peaks
from ._diffrax import result_message as result_message  # its codes are Trajectory.result


class Trajectory(eqx.Module):
    """A solved trajectory sampled at the output times (SI units).

    Per-joint arrays have the clearance joints on their last axis (``eccentricity``: the
    last two axes are joint, component).
    """

    t: Float[Array, " times"]
    q: Float[Array, "times coords"]
    qd: Float[Array, "times coords"]
    qdd: Float[Array, "times coords"]
    impact_memory: Float[Array, "times joints"]
    driver_work: Float[Array, " times"]
    eccentricity: Float[Array, "times joints 2"]
    penetration: Float[Array, "times joints"]
    normal_rate: Float[Array, "times joints"]
    slip_velocity: Float[Array, "times joints"]
    normal_force: Float[Array, "times joints"]
    tangential_force: Float[Array, "times joints"]
    driver_torques: Float[Array, "times drivers"]
    constraint_violation: Float[Array, " times"]
    steps: Int[Array, ""]
    rejected_steps: Int[Array, ""]
    result: Int[Array, ""]  # diffrax.RESULTS index; 0 = successful
    # contact peaks reduced over the accepted steps (model/integrate/peaks.py); None when
    # the states came from elsewhere, and the metrics then use the output samples
    peaks: Peaks | None = None


def trajectory_from_states(mechanism: Mechanism, t, states: State, steps=0, rejected_steps=0, result=0,
                           peaks: Peaks | None = None) -> Trajectory:
    """Accelerations, contact forces and driver torques at the saved ``states``: the
    post-processing of :func:`simulate`, also used for states from other integrators."""
    outputs = jax.vmap(lambda t_, y_: evaluate(mechanism, t_, y_))(t, states)
    return Trajectory(
        t=t,
        q=states.q,
        qd=states.qd,
        qdd=outputs.qdd,
        impact_memory=states.impact_memory,
        driver_work=states.driver_work,
        eccentricity=outputs.contact.eccentricity,
        penetration=outputs.contact.penetration,
        normal_rate=outputs.contact.normal_rate,
        slip_velocity=outputs.contact.slip_velocity,
        normal_force=outputs.contact.normal_force,
        tangential_force=outputs.contact.tangential_force,
        driver_torques=outputs.driver_torques,
        constraint_violation=outputs.constraint_violation,
        steps=jnp.asarray(steps),
        rejected_steps=jnp.asarray(rejected_steps),
        result=jnp.asarray(result),
        peaks=peaks,
    )

