"""A step-size controller that bounds the step by the contact period while a joint is open.

The bound's purpose (measured in ``docs/integration.md``) is to stop the
controller from taking a long free-flight step straight into an impact, which the error
estimate then rejects, sometimes several times. Inside a contact the tolerance resolves
the contact's own time scale, and a fixed bound estimated at a penetration of 1 % of the
clearance is far too short for resting stiff contact at nanometre penetration (there it
cost Tsit5 2-17x the steps for no gain in accuracy). So the bound applies only to a step
that starts with some clearance joint in free flight, open by more than the penetration
at which ``T_c`` is estimated (1 % of its clearance), and it lets the step fly until the
joint would reach its wall at the current closing speed.
"""

from __future__ import annotations

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..mechanics.interface import AbstractMechanism, traced_once
from .step_guard import AbstractWrappedController
from .timescales import REFERENCE_PENETRATION_SHARE, contact_periods


@traced_once  # called from the controller's init and every step of diffrax's three traces
def open_joint_step_bound(mechanism: AbstractMechanism, flat_state: Float[Array, " n"], share: float) -> Float[Array, ""]:
    """The longest step (s) allowed from ``flat_state``: over the clearance joints in free
    flight (gap > 1 % of c), the smallest of ``max(share T_c, gap / closing speed)``, with
    ``T_c`` from :func:`model.contact_periods` and an opening joint's time to contact
    infinite; ``inf`` when no joint is in free flight. A sliced joint's gap and closing
    speed are its deepest slice's. Not differentiated: step sizes carry no gradient (as
    diffrax's own step factor)."""
    penetration, closing_speed = mechanism.contact_kinematics(flat_state)
    gap = -penetration
    clearances = jnp.stack([joint.clearance for joint in mechanism.clearance_joints])
    in_flight = gap > REFERENCE_PENETRATION_SHARE * clearances
    time_to_contact = jnp.where(closing_speed > 0.0, gap / jnp.where(closing_speed > 0.0, closing_speed, 1.0), jnp.inf)
    bounds = jnp.maximum(share * contact_periods(mechanism).astype(flat_state.dtype), time_to_contact)
    bound = jnp.min(jnp.where(in_flight, bounds, jnp.inf))
    return jax.lax.stop_gradient(bound)


class OpenJointStepBound(AbstractWrappedController):
    """Wraps an adaptive controller (a ``diffrax.PIDController``) and clips every step that
    starts with an open clearance joint to :func:`open_joint_step_bound`.

    ``args`` of the solve must be the mechanism
    (:class:`~model.mechanics.interface.AbstractMechanism`) and the state its flat vector.
    """

    controller: diffrax.AbstractAdaptiveStepSizeController
    share: float = eqx.field(static=True)

    def init(self, terms, t0, t1, y0, dt0, args, func, error_order):
        next_t1, state = self.controller.init(terms, t0, t1, y0, dt0, args, func, error_order)
        return jnp.minimum(next_t1, t0 + open_joint_step_bound(args, y0, self.share)), state

    def adapt_step_size(self, t0, t1, y0, y1_candidate, args, y_error, error_order, controller_state):
        keep_step, next_t0, next_t1, made_jump, state, result = self.controller.adapt_step_size(
            t0, t1, y0, y1_candidate, args, y_error, error_order, controller_state
        )
        next_start = jnp.where(keep_step, y1_candidate, y0)
        next_t1 = jnp.minimum(next_t1, next_t0 + open_joint_step_bound(args, next_start, self.share))
        return keep_step, next_t0, next_t1, made_jump, state, result


__all__ = ["OpenJointStepBound", "open_joint_step_bound"]
