"""Equations of motion in absolute coordinates, projection onto the joints, the seat and
static shape of the start (the rest of the start: :mod:`model.mechanics.absolute`).

``[M Phi_q^T; Phi_q 0] [qdd; lambda] = [Q; gamma]`` (Nikravesh 1988), solved
at every evaluation; clearance joints enter ``Q`` as contact forces only.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, NamedTuple

import jax
import jax.numpy as jnp
import optimistix as optx
from jaxtyping import Array, Bool, Float

from .constraints import acceleration_rhs, constraint_jacobian, constraints, driver_rows, point_position
from .forces import contact_forces, gravity_and_torques, normal_accelerations, structural_and_load_forces
from ..contact.memory import impact_memory_rate
from ..geometry.vectors import times_transpose
from .absolute import Evaluation, driver_torques
from .joints import GROUND
from .linalg import spd_solve
from .start import SEATING_PASSES, STATIC_SHAPE_SCALE, STATIC_SHAPE_STEPS, seated_eccentricity, solve_static

if TYPE_CHECKING:
    from .mechanism import Mechanism


class State(NamedTuple):
    """ODE state: coordinates (m, rad), velocities, one impact memory per clearance joint
    (m/s, see ``model/contact/memory.py``) and the work done by the drivers (J)."""

    q: Float[Array, " coords"]
    qd: Float[Array, " coords"]
    impact_memory: Float[Array, " joints"]
    driver_work: Float[Array, ""]


def mass_diagonal(mechanism: Mechanism) -> Float[Array, " coords"]:
    """Diagonal of the mass matrix ``[m, m, J]`` per body."""
    return jnp.stack([mechanism.masses, mechanism.masses, mechanism.inertias], axis=1).reshape(-1)


def _relative_omega(mechanism: Mechanism, qd, joint_index: int):
    joint = mechanism.revolute_joints[joint_index]
    omega = [jnp.zeros((), qd.dtype) if b == GROUND else qd[3 * b + 2] for b in (joint.body_i, joint.body_j)]
    return omega[1] - omega[0]


def evaluate(mechanism: Mechanism, t, state: State) -> Evaluation:
    """Accelerations, multipliers, contact state and driver torques at ``(t, state)``."""
    q, qd = state.q, state.qd
    generalised_contact, contact = contact_forces(mechanism, q, qd, state.impact_memory)
    applied = gravity_and_torques(mechanism, q) + generalised_contact + structural_and_load_forces(mechanism, q, qd)
    inverse_mass = 1.0 / mass_diagonal(mechanism)
    jacobian = constraint_jacobian(mechanism, q, t)
    if jacobian.shape[0]:
        # Schur complement of the augmented system: M is diagonal, so
        # (J M^-1 J^T) lambda = J M^-1 Q - gamma, then M qdd = Q - J^T lambda. The small SPD
        # system is solved by an unrolled Cholesky: batched LAPACK calls dominate the cost
        # of a vmapped sweep on CPU otherwise (docs/BENCHMARKS.md).
        # The two matrix-vector products stay `@`. Written as sums (as the Schur product is)
        # they made the reverse-mode gradients of a 10 ms run of the low-speed slider-crank
        # 13 % off (friction) and of the wrong sign (clearance) against forward mode and
        # finite differences (tests/model/integrate/test_gradients.py); most likely the
        # backward pass, which recomputes the steps, rounded them differently and flipped
        # accept/reject decisions.
        weighted = jacobian * inverse_mass
        schur = times_transpose(weighted, jacobian)
        multipliers = spd_solve(schur, weighted @ applied - acceleration_rhs(mechanism, q, qd, t))
        qdd = inverse_mass * (applied - jacobian.T @ multipliers)
        violation = jnp.max(jnp.abs(constraints(mechanism, q, t)))
    else:
        qdd, multipliers, violation = applied * inverse_mass, jnp.zeros((0,), q.dtype), jnp.zeros((), q.dtype)
    torques = driver_torques(mechanism.drivers, driver_rows(mechanism), multipliers)
    return Evaluation(qdd, multipliers, contact, torques, violation)


def joint_reactions(mechanism: Mechanism, t, q, multipliers: Float[Array, " m"]) -> Float[Array, "joints 3"]:
    """The force (N, ground frame ``x, y``) and moment (N m, about the joint's point on
    that body) each ideal joint exerts on its second body ``j``, from the multipliers
    (Nikravesh 1988 §6: a joint's rows apply ``-Phi_q^T lambda`` to the coordinates).
    Joints in constraint order (revolute, prismatic, fixed: ``Mechanism.joint_names``).
    A revolute joint's moment about its pin is zero; a joint to the ground
    (``j`` the ground) reports the force on the ground, the opposite of body ``i``'s.
    The multipliers include Baumgarte's stabilising terms."""
    jacobian = constraint_jacobian(mechanism, q, t)
    joints = mechanism.revolute_joints + mechanism.prismatic_joints + mechanism.fixed_joints
    sizes = [2] * len(mechanism.revolute_joints) + [2] * len(mechanism.prismatic_joints) + [3] * len(mechanism.fixed_joints)
    reactions, first = [], 0
    for joint, size in zip(joints, sizes):
        generalised = -(multipliers[first : first + size] @ jacobian[first : first + size])
        first += size
        body, point, sign = ((joint.body_j, joint.point_j, 1.0) if joint.body_j != GROUND
                             else (joint.body_i, joint.point_i, -1.0))
        force = generalised[3 * body : 3 * body + 2]
        arm = point_position(q, body, point) - q[3 * body : 3 * body + 2]
        moment = generalised[3 * body + 2] - (arm[0] * force[1] - arm[1] * force[0])
        reactions.append(sign * jnp.concatenate([force, moment[None]]))
    return jnp.stack(reactions) if reactions else jnp.zeros((0, 3), q.dtype)


def vector_field(t, state: State, mechanism: Mechanism) -> State:
    """``d state / dt``, in diffrax's ``(t, y, args)`` signature."""
    out = evaluate(mechanism, t, state)
    normal_acceleration = normal_accelerations(mechanism, state.q, state.qd, out.acceleration)
    memory_rate = impact_memory_rate(
        out.contact.penetration, out.contact.normal_rate, normal_acceleration, state.impact_memory
    )
    power = sum(
        (out.driver_torques[i] * _relative_omega(mechanism, state.qd, driver.joint) for i, driver in enumerate(mechanism.drivers)),
        start=jnp.zeros((), state.q.dtype),
    )
    return State(state.qd, out.acceleration, memory_rate, power)


def constraint_correction(mechanism: Mechanism, q, t):
    """``r -> -M^-1 Phi_q^T (Phi_q M^-1 Phi_q^T)^-1 r``: the step of least kinetic-energy
    norm that removes a constraint residual ``r`` to first order (Bayo & Ledesma 1996;
    Blajer 2002), with the Jacobian taken at ``q``; ``None`` without constraint rows."""
    if not constraints(mechanism, q, t).size:
        return None
    inverse_mass = 1.0 / mass_diagonal(mechanism)
    jacobian = constraint_jacobian(mechanism, q, t)
    weighted = jacobian * inverse_mass
    schur = times_transpose(weighted, jacobian)
    return lambda residual: -(weighted.T @ spd_solve(schur, residual))


class Projection(NamedTuple):
    """Positions projected onto the constraints, and whether the projection converged."""

    positions: Float[Array, " coords"]
    converged: Bool[Array, ""]


def project_onto_constraints(mechanism: Mechanism, q, t=0.0, max_steps: int = 32) -> Projection:
    """Gauss–Newton projection of ``q`` onto ``Phi(q, t) = 0`` (``optimistix.GaussNewton``).

    Each step is the minimum-norm least-squares correction (QR of the constraint Jacobian),
    so a redundant or under-determined set moves the coordinates as little as it can. The
    iteration stops once a step changes ``q`` by less than ``1e-12`` (relative, absolute in
    m or rad); ``converged`` is False when it did not within ``max_steps`` steps.
    """
    t = jnp.asarray(t, q.dtype)
    if not constraints(mechanism, q, t).size:
        return Projection(q, jnp.asarray(True))
    solution = optx.least_squares(
        lambda q_, _: constraints(mechanism, q_, t), optx.GaussNewton(rtol=1e-12, atol=1e-12), q,
        max_steps=max_steps, throw=False,
    )
    residual = jnp.max(jnp.abs(constraints(mechanism, solution.value, t)))
    converged = (solution.result == optx.RESULTS.successful) & (residual < 1e-9)
    return Projection(solution.value, converged)


def project_positions(mechanism: Mechanism, q, t=0.0, iterations: int = 8) -> Float[Array, " coords"]:
    """Minimum-norm Gauss–Newton projection of ``q`` onto ``Phi(q, t) = 0``, as a fixed
    number of steps: the form :func:`initial_state` differentiates (forward and reverse
    mode alike). :func:`project_onto_constraints` runs the same iteration to convergence and
    says whether it got there; the pipelines check configured positions with it first.
    """
    t = jnp.asarray(t, q.dtype)

    def newton_step(q, _):
        residual = constraints(mechanism, q, t)
        correction = jnp.linalg.lstsq(constraint_jacobian(mechanism, q, t), -residual)[0]
        return q + correction, None

    return jax.lax.scan(newton_step, q, None, length=iterations)[0] if constraints(mechanism, q, t).size else q


def seated(mechanism: Mechanism) -> Mechanism:
    """``mechanism`` with each clearance joint's ``initial_eccentricity`` at its quasi-static
    seat: the journal displaced along the force it presses on the bearing with when the joint
    is ideal (gravity, loads, drivers and the inertia of the initial motion at ``t = 0``), so
    far that the elastic contact force carries it
    (:func:`model.mechanics.start.seated_eccentricity`)."""
    q = mechanism.initial_positions
    first_pin_row = 2 * len(mechanism.revolute_joints)
    for _ in range(SEATING_PASSES):
        pinned, q, qd = mechanism.ideal_start(q)
        at_rest_memory = jnp.zeros((0,), q.dtype)
        multipliers = evaluate(pinned, jnp.zeros((), q.dtype), State(q, qd, at_rest_memory, jnp.zeros((), q.dtype))).multipliers
        joints = tuple(
            dataclasses.replace(joint, initial_eccentricity=seated_eccentricity(
                joint.contact_law(), joint.clearance, multipliers[first_pin_row + 2 * k : first_pin_row + 2 * k + 2],
                joint.initial_eccentricity))
            for k, joint in enumerate(mechanism.clearance_joints))
        mechanism = dataclasses.replace(mechanism, clearance_joints=joints, initial_positions=q)
    return mechanism


def static_shape(mechanism: Mechanism, q) -> Float[Array, " coords"]:
    """Positions at which every flexible body is in its quasi-static deflected shape at
    ``t = 0``: the ideal joints satisfied (clearance joints held ideal at their initial
    eccentricity) and no element deformation accelerating
    (:meth:`~model.mechanics.absolute.AbstractAbsoluteMechanism.deformation_accelerations`)
    under gravity, the applied loads, the contact forces at t = 0 and the inertia of the
    initial (rigid-body) motion, so that the elastic forces balance them. The unknowns are all coordinates; the joints fix each body's frame and the
    deformation rows its shape. Gauss–Newton (``optimistix.GaussNewton``, minimum-norm steps)
    from ``q``, the undeformed assembly: the rigid motions the equations leave free move as
    little as they can. Derivatives with respect to the mechanism's parameters are the
    implicit ones (one Gauss–Newton step from the solution held constant).
    """
    def residual(q_, mechanism_):
        t = jnp.zeros((), q_.dtype)
        pinned = mechanism_.idealised(with_offsets=True)
        return jnp.concatenate([constraints(pinned, q_, t),
                                STATIC_SHAPE_SCALE * mechanism_.deformation_accelerations(q_, t)])

    return solve_static(residual, q, mechanism, optx.GaussNewton(rtol=1e-12, atol=1e-14), STATIC_SHAPE_STEPS)[0]


def kinetic_energy(mechanism: Mechanism, qd) -> Float[Array, ""]:
    """``1/2 qd^T M qd`` (J)."""
    return 0.5 * jnp.sum(mass_diagonal(mechanism) * qd**2)

