"""Archard wear of a bushing accumulated over the accepted steps of a solve.

On every accepted step ``[t0, t1]`` the wear rate of each angle bin,
``dh_k/dt = k_w p_k(t) |v_t(t)|`` (:class:`model.contact.wear.ArchardWear`), is integrated
by the three-point Gauss-Legendre rule on the step's dense output (exact for a rate of
degree five in time), and added to the running depths. The bushing's profile does not
change during a solve: the wear of a run updates the joint's worn geometry for the next
one (the iterative procedure of Flores 2009 and Mukras et al. 2010).

Reduced in the solver state as :mod:`model.integrate.peaks` reduces the contact peaks, the
depths neither enter the state vector nor its error norm: hundreds of bins would otherwise
dilute the step-size controller's root-mean-square error and take part in every implicit
solver's Jacobian. Pure JAX: ``jit``, ``vmap`` and derivatives go through it.

A planar revolute clearance joint wears on one row of angle bins; a spatial cylindrical
clearance joint on one row per slice (``slices x bins``): each slice's solid normal force
and the slip speed at its contact point wear its row under the Hertz pressure of the
slice's share ``L / N`` of the bearing length (the slicing of Tian et al. 2009; axially
uneven wear of a misaligned journal, Zhang et al. 2023).
"""

from __future__ import annotations

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ..contact.normal import normal_force
from ..contact.wear import ArchardWear
from ..geometry.cylindrical import safe_length
from ..mechanics.forces import joint_kinematics, worn_contact
from ..mechanics.interface import AbstractMechanism
from ..mechanics.spatial.forces import cylinder_kinematics, worn_slices
from ..mechanics.spatial.joints import CylindricalClearanceJoint
from ..mechanics.tree import TreeMechanism
from .wrapped_solver import AbstractDelegatingSolver

_GAUSS_NODES, _GAUSS_WEIGHTS = np.polynomial.legendre.leggauss(3)


class WearAccumulation(eqx.Module):
    """The wear reduced so far (SI units)."""

    depth: Float[Array, "*slices bins"]  # m, per angle bin of the bushing (per slice and bin: cylindrical)
    load_distance: Float[Array, ""]  # N m: int F |v_t| dt, so that the worn volume is k_w times it


def wear_rates(wear: ArchardWear, mechanism: AbstractMechanism, t, flat_state: Float[Array, " n"]
               ) -> tuple[Float[Array, "*slices bins"], Float[Array, ""]]:
    """``(dh/dt (m/s) per bin (per slice and bin for a cylindrical joint), F |v_t| (W))`` of
    the worn joint at ``(t, flat_state)``, zero before ``wear.start_time``. ``F`` is the solid
    contact's normal force (an oil film's share of the load wears nothing); a cylindrical
    joint's ``F |v_t|`` is the sum over its slices."""
    joint = mechanism.clearance_joints[wear.joint]
    # the joint engine's state is joint coordinates: the contact reads the absolute motion
    state = mechanism.absolute_state(flat_state) if isinstance(mechanism, TreeMechanism) else mechanism.unflatten(flat_state)
    if isinstance(joint, CylindricalClearanceJoint):
        rate, power = _slice_rates(wear, mechanism, joint, state)
    else:
        rate, power = _planar_rates(wear, joint, state)
    on = (t >= wear.start_time).astype(flat_state.dtype)
    return on * rate, on * power


def _planar_rates(wear: ArchardWear, joint, state) -> tuple[Float[Array, " bins"], Float[Array, ""]]:
    kin = joint_kinematics(joint, state.q, state.qd)
    force = normal_force(joint.contact_law(), kin.penetration, kin.normal_rate, state.impact_memory[wear.joint])
    _, angle = worn_contact(joint, state.q, kin)
    rate = wear.depth_rate(force, kin.slip_velocity, angle, joint.effective_modulus, joint.bearing_radius,
                           joint.clearance)
    return rate, force * jnp.abs(kin.slip_velocity)


def _slice_rates(wear: ArchardWear, mechanism, joint: CylindricalClearanceJoint, state
                 ) -> tuple[Float[Array, "slices bins"], Float[Array, ""]]:
    """Archard per slice: slice ``k`` (force ``F_k``, slip speed ``|v_k|`` at its contact
    point, contact angle from the bearing's ``u`` axis) wears its row of bins over the
    axial length ``L / N``."""
    start = sum(j.slices for j in mechanism.cylindrical_joints[:wear.joint])
    kin, frame = cylinder_kinematics(joint, state.x, state.v)
    memory = state.impact_memory[start:start + joint.slices]
    force = normal_force(joint.slice_law(), kin.penetration, kin.normal_rate, memory)
    _, angle = worn_slices(joint, kin, frame)
    speed = safe_length(kin.slip)
    per_slice = eqx.tree_at(lambda law: law.length, wear, wear.length / joint.slices)
    rate = jax.vmap(lambda f, v, a: per_slice.depth_rate(f, v, a, joint.effective_modulus, joint.bearing_radius,
                                                         joint.clearance))(force, speed, angle)
    return rate, jnp.sum(force * speed)


def depth_shape(wear: ArchardWear, mechanism: AbstractMechanism) -> tuple[int, ...]:
    """The shape of the worn joint's depth profile: ``(bins,)``, or ``(slices, bins)`` for a
    cylindrical clearance joint."""
    joint = mechanism.clearance_joints[wear.joint]
    if isinstance(joint, CylindricalClearanceJoint):
        return (joint.slices, wear.resolution)
    return (wear.resolution,)


def wear_after_step(accumulated: WearAccumulation, wear: ArchardWear, mechanism: AbstractMechanism, interpolation,
                    t0, t1) -> WearAccumulation:
    """``accumulated`` plus the wear of the step ``[t0, t1]`` whose dense output is
    ``interpolation`` (``evaluate(t) -> flat state``), by Gauss-Legendre quadrature."""
    h = t1 - t0
    times = t0 + 0.5 * h * (1.0 + jnp.asarray(_GAUSS_NODES, h.dtype))
    weights = 0.5 * h * jnp.asarray(_GAUSS_WEIGHTS, h.dtype)
    depth_rates, powers = jax.vmap(lambda t: wear_rates(wear, mechanism, t, interpolation.evaluate(t)))(times)
    return WearAccumulation(accumulated.depth + jnp.tensordot(weights, depth_rates, axes=1),
                            accumulated.load_distance + weights @ powers)


class WearTracking(AbstractDelegatingSolver):
    """Wraps a diffrax solver and carries a :class:`WearAccumulation` in its solver state,
    so that it reduces exactly the accepted steps (diffrax keeps a step's solver state only
    when the step is accepted). ``args`` of the solve must be the mechanism (planar
    ``Mechanism``, ``TreeMechanism`` or ``SpatialMechanism``) and the state its flat vector; read the
    result with ``SaveAt(solver_state=True)`` and :meth:`split`."""

    solver: diffrax.AbstractSolver
    wear: ArchardWear

    def init(self, terms, t0, t1, y0, args):
        zero = jnp.zeros((), jnp.result_type(y0))
        return self.solver.init(terms, t0, t1, y0, args), WearAccumulation(
            jnp.zeros(depth_shape(self.wear, args), zero.dtype), zero)

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        inner_state, accumulated = solver_state
        y1, y_error, dense_info, inner_state, result = self.solver.step(
            terms, t0, t1, y0, args, inner_state, made_jump)
        interpolation = self.solver.interpolation_cls(t0=t0, t1=t1, **dense_info)
        accumulated = wear_after_step(accumulated, self.wear, args, interpolation, t0, t1)
        return y1, y_error, dense_info, (inner_state, accumulated), result

    @staticmethod
    def split(solver_state) -> tuple:
        """``(the wrapped solver's state, WearAccumulation)`` of a final solver state."""
        return solver_state[0], solver_state[1]
