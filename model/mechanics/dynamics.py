"""Equations of motion in absolute coordinates and consistent initial conditions.

``[M Phi_q^T; Phi_q 0] [qdd; lambda] = [Q; gamma]`` (Nikravesh 1988), solved
at every evaluation; clearance joints enter ``Q`` as contact forces only.
"""

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import optimistix as optx
from jaxtyping import Array, Bool, Float

from .constraints import (acceleration_rhs, constraint_jacobian, constraint_rate, constraints, driver_rows,
                          point_position, velocity_rhs)
from .flexible import deformation_rate_rows
from .forces import (ContactState, contact_forces, gravity_and_torques, joint_kinematics, normal_accelerations,
                     structural_and_load_forces)
from ..contact.memory import impact_memory_rate
from ..geometry.vectors import times_transpose
from .mechanism import GROUND, Mechanism
from .start import (SEATING_PASSES, STATIC_SHAPE_SCALE, STATIC_SHAPE_STEPS, project_velocities, seated_eccentricity,
                    solve_static)


class State(NamedTuple):
    """ODE state: coordinates (m, rad), velocities, one impact memory per clearance joint
    (m/s, see ``model/contact/memory.py``) and the work done by the drivers (J)."""

    q: Float[Array, " coords"]
    qd: Float[Array, " coords"]
    impact_memory: Float[Array, " joints"]
    driver_work: Float[Array, ""]


class Evaluation(NamedTuple):
    """Everything one evaluation of the equations of motion produces."""

    qdd: Float[Array, " coords"]
    multipliers: Float[Array, " m"]
    contact: ContactState
    driver_torques: Float[Array, " drivers"]
    constraint_violation: Float[Array, ""]


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
    rows = driver_rows(mechanism)
    torques = [
        -multipliers[rows[i]] if driver.kind == "constant_speed" else driver.torque
        for i, driver in enumerate(mechanism.drivers)
    ]
    driver_torques = jnp.stack(torques) if torques else jnp.zeros((0,), q.dtype)
    return Evaluation(qdd, multipliers, contact, driver_torques, violation)


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


# Above this size the unrolled factorisation costs more to compile than LAPACK costs to run.
UNROLLED_CHOLESKY_MAX = 16


Pattern = tuple[tuple[bool, ...], ...]


def spd_solve(matrix: Float[Array, "m m"], rhs: Float[Array, " m"], pattern: Pattern | None = None
              ) -> Float[Array, " m"]:
    """Solve ``matrix x = rhs`` for a small symmetric positive definite ``matrix``.

    Cholesky ``L L^T`` unrolled into scalar operations (the size is static), which
    vectorises across a ``vmap`` batch instead of calling LAPACK once per member. Up to
    ``UNROLLED_CHOLESKY_MAX`` rows; LAPACK above. ``pattern`` (static; True where an entry
    may be nonzero) lets the factorisation skip the structural zeros of a sparse matrix
    and of its factor (the fill-in is found symbolically, George & Liu 1981 ch. 2).
    """
    if matrix.shape[0] > UNROLLED_CHOLESKY_MAX:
        return jnp.linalg.solve(matrix, rhs)
    return _unrolled_spd_solve(pattern, matrix, rhs)


def _factor_pattern(pattern: Pattern | None, size: int) -> list[list[bool]]:
    """Where the Cholesky factor of a matrix with nonzeros ``pattern`` may be nonzero."""
    nonzero = [[pattern is None or bool(pattern[i][j]) for j in range(size)] for i in range(size)]
    for j in range(size):
        for i in range(j + 1, size):
            nonzero[i][j] = nonzero[i][j] or any(nonzero[i][k] and nonzero[j][k] for k in range(j))
    return nonzero


def _cholesky_factor(matrix, pattern: Pattern | None = None) -> list[list]:
    """The lower factor ``L`` of ``matrix = L L^T``, as nested lists of scalars (``None``
    where ``pattern`` makes an entry a structural zero)."""
    size = matrix.shape[0]
    nonzero = _factor_pattern(pattern, size)
    lower = [[None] * size for _ in range(size)]

    def dot(i, j):
        return sum(lower[i][k] * lower[j][k] for k in range(j) if lower[i][k] is not None and lower[j][k] is not None)

    for j in range(size):
        lower[j][j] = jnp.sqrt(matrix[j, j] - dot(j, j))
        for i in range(j + 1, size):
            if nonzero[i][j]:
                lower[i][j] = (matrix[i, j] - dot(i, j)) / lower[j][j]
    return lower


def _cholesky_substitute(lower: list[list], rhs) -> Float[Array, " m"]:
    """``(L L^T)^-1 rhs`` by forward then backward substitution: linear in ``rhs``."""
    size = len(lower)
    forward = []
    for i in range(size):
        forward.append((rhs[i] - sum(lower[i][k] * forward[k] for k in range(i) if lower[i][k] is not None))
                       / lower[i][i])
    solution = [None] * size
    for i in reversed(range(size)):
        solution[i] = (forward[i] - sum(lower[k][i] * solution[k] for k in range(i + 1, size) if lower[k][i] is not None)
                       ) / lower[i][i]
    return jnp.stack(solution)


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def _unrolled_spd_solve(pattern, matrix, rhs):
    return _cholesky_substitute(_cholesky_factor(matrix, pattern), rhs)


@_unrolled_spd_solve.defjvp
def _unrolled_spd_solve_jvp(pattern, primals, tangents):
    # d x = A^-1 (d b - d A x) with the primal factor: differentiating the unrolled
    # factorisation instead triples its scalar graph, and XLA's compile time grows faster
    # than the graph (forward mode through the spatial slider-crank compiled for 95 s).
    # The tangent is linear in (d A, d b), so reverse mode transposes it.
    matrix, rhs = primals
    matrix_tangent, rhs_tangent = tangents
    lower = _cholesky_factor(matrix, pattern)
    solution = _cholesky_substitute(lower, rhs)
    return solution, _cholesky_substitute(lower, rhs_tangent - matrix_tangent @ solution)


def _normal_rates(mechanism: Mechanism, q, qd):
    kinematics = [joint_kinematics(joint, q, qd) for joint in mechanism.clearance_joints]
    return jnp.stack([k.normal_rate for k in kinematics]) if kinematics else jnp.zeros((0,), q.dtype)


def vector_field(t, state: State, mechanism: Mechanism) -> State:
    """``d state / dt``, in diffrax's ``(t, y, args)`` signature."""
    out = evaluate(mechanism, t, state)
    normal_acceleration = normal_accelerations(mechanism, state.q, state.qd, out.qdd)
    memory_rate = impact_memory_rate(
        out.contact.penetration, out.contact.normal_rate, normal_acceleration, state.impact_memory
    )
    power = sum(
        (out.driver_torques[i] * _relative_omega(mechanism, state.qd, driver.joint) for i, driver in enumerate(mechanism.drivers)),
        start=jnp.zeros((), state.q.dtype),
    )
    return State(state.qd, out.qdd, memory_rate, power)


def flatten_state(state: State) -> Float[Array, "... n"]:
    """``state`` as one vector ``[q, qd, impact_memory, driver_work]`` (leading batch axes kept)."""
    return jnp.concatenate([state.q, state.qd, state.impact_memory, state.driver_work[..., None]], axis=-1)


def unflatten_state(flat: Float[Array, "... n"], joints: int) -> State:
    """Inverse of :func:`flatten_state` for a mechanism with ``joints`` clearance joints."""
    coords = (flat.shape[-1] - joints - 1) // 2
    return State(flat[..., :coords], flat[..., coords : 2 * coords], flat[..., 2 * coords : 2 * coords + joints],
                 flat[..., -1])


def flat_vector_field(t, flat: Float[Array, " n"], mechanism: Mechanism) -> Float[Array, " n"]:
    """:func:`vector_field` on :func:`flatten_state` vectors: what the integrators step.

    One array instead of a four-leaf pytree makes every stage combination, error norm and
    interpolation of a step one XLA kernel instead of four; on a CPU, where a step's cost is
    kernel launches, that was 9 % of a refilling-lanes sweep (32 lanes, Flores).
    """
    return flatten_state(vector_field(t, unflatten_state(flat, len(mechanism.clearance_joints)), mechanism))


def project_state(mechanism: Mechanism, t, state: State, iterations: int = 1) -> State:
    """``state`` moved back onto the constraints: positions onto ``Phi(q, t) = 0`` by
    ``iterations`` Gauss-Newton steps, then velocities onto ``Phi_q qd + Phi_t = 0`` by one
    linear projection, both in the metric of the mass matrix (Bayo & Ledesma 1996; Blajer
    2002): ``dq = -M^-1 Phi_q^T (Phi_q M^-1 Phi_q^T)^-1 Phi``, the correction of least
    kinetic-energy norm, and likewise ``dqd`` from the velocity residual. The Jacobian is
    taken once, at the given positions (a simplified Gauss-Newton iteration: it converges
    linearly at a rate of the correction times the constraints' curvature, so one step
    from a violation of micrometres leaves roundoff). Impact memory and driver work are
    kept. Pure JAX, differentiable; the state itself when there are no constraints.
    """
    q, qd = state.q, state.qd
    if not constraints(mechanism, q, t).size:
        return state
    inverse_mass = 1.0 / mass_diagonal(mechanism)
    jacobian = constraint_jacobian(mechanism, q, t)
    weighted = jacobian * inverse_mass
    schur = times_transpose(weighted, jacobian)

    def correction(residual):
        return weighted.T @ spd_solve(schur, residual)

    for _ in range(iterations):
        q = q - correction(constraints(mechanism, q, t))
    qd = qd - correction(constraint_rate(mechanism, q, qd, t))
    return State(q, qd, state.impact_memory, state.driver_work)


def flat_projection(t, flat: Float[Array, " n"], mechanism: Mechanism, iterations: int = 1) -> Float[Array, " n"]:
    """:func:`project_state` on :func:`flatten_state` vectors."""
    state = unflatten_state(flat, len(mechanism.clearance_joints))
    return flatten_state(project_state(mechanism, t, state, iterations))


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


def start_velocities(pinned: Mechanism, q0, t0) -> Float[Array, " coords"]:
    """Velocities at ``t0`` of the mechanism ``pinned`` (clearance joints held ideal).

    ``"from_drivers"``: the velocities closest to the requested ones
    (``initial_velocity_targets``, zero when None) that satisfy ``Phi_q qd = -Phi_t`` and keep
    every flexible body's deformation rates at zero, so that its segments move with the
    rigid-body velocity field of its frame (:func:`model.mechanics.start.project_velocities`).
    ``"zero"``: at rest.
    """
    if pinned.initial_velocities == "zero":
        return jnp.zeros_like(q0)
    target = jnp.zeros_like(q0) if pinned.initial_velocity_targets is None else pinned.initial_velocity_targets
    rows = [constraint_jacobian(pinned, q0, t0)] + [deformation_rate_rows(chain, q0) for chain in pinned.beam_chains]
    rhs = [velocity_rhs(pinned, q0, t0)] + [jnp.zeros(row.shape[0], q0.dtype) for row in rows[1:]]
    return project_velocities(jnp.concatenate(rows), jnp.concatenate(rhs), target)


def _ideal_start(mechanism: Mechanism, q) -> tuple[Mechanism, Float[Array, " coords"], Float[Array, " coords"]]:
    """Positions projected from ``q`` and velocities with each clearance joint held ideal at
    its initial eccentricity, and that ideal mechanism."""
    pinned = mechanism.idealised(with_offsets=True)
    q0 = project_positions(pinned, q)
    return pinned, q0, start_velocities(pinned, q0, jnp.zeros((), q0.dtype))


def seated(mechanism: Mechanism) -> Mechanism:
    """``mechanism`` with each clearance joint's ``initial_eccentricity`` at its quasi-static
    seat: the journal displaced along the force it presses on the bearing with when the joint
    is ideal (gravity, loads, drivers and the inertia of the initial motion at ``t = 0``), so
    far that the elastic contact force carries it
    (:func:`model.mechanics.start.seated_eccentricity`)."""
    q = mechanism.initial_positions
    first_pin_row = 2 * len(mechanism.revolute_joints)
    for _ in range(SEATING_PASSES):
        pinned, q, qd = _ideal_start(mechanism, q)
        at_rest_memory = jnp.zeros((0,), q.dtype)
        multipliers = evaluate(pinned, jnp.zeros((), q.dtype), State(q, qd, at_rest_memory, jnp.zeros((), q.dtype))).multipliers
        joints = tuple(
            dataclasses.replace(joint, initial_eccentricity=seated_eccentricity(
                joint.contact_law(), joint.clearance, multipliers[first_pin_row + 2 * k : first_pin_row + 2 * k + 2],
                joint.initial_eccentricity))
            for k, joint in enumerate(mechanism.clearance_joints))
        mechanism = dataclasses.replace(mechanism, clearance_joints=joints, initial_positions=q)
    return mechanism


def deformation_accelerations(mechanism: Mechanism, q, t=0.0) -> Float[Array, " rows"]:
    """Second time derivatives of every flexible body's element deformations
    (``d^2 eps / dt^2 = D qdd + (dD/dt) qd``, m/s^2 and rad/s^2) at positions ``q``, moving
    with the start's velocities (:func:`start_velocities` of the mechanism with its
    clearance joints held ideal: each flexible body with the rigid-body field of its frame)
    and accelerating as the equations of motion of ``mechanism`` say: a clearance joint
    pushes only where its journal touches (a centred journal leaves the body free there)."""
    t = jnp.asarray(t, q.dtype)
    qd = start_velocities(mechanism.idealised(with_offsets=True), q, t)
    state = State(q, qd, _normal_rates(mechanism, q, qd), jnp.zeros((), q.dtype))
    qdd = evaluate(mechanism, t, state).qdd
    rows = []
    for chain in mechanism.beam_chains:
        _, convective = jax.jvp(lambda q_: deformation_rate_rows(chain, q_) @ qd, (q,), (qd,))
        rows.append(deformation_rate_rows(chain, q) @ qdd + convective)
    return jnp.concatenate(rows)


def static_shape(mechanism: Mechanism, q) -> Float[Array, " coords"]:
    """Positions at which every flexible body is in its quasi-static deflected shape at
    ``t = 0``: the ideal joints satisfied (clearance joints held ideal at their initial
    eccentricity) and no element deformation accelerating (:func:`deformation_accelerations`)
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
                                STATIC_SHAPE_SCALE * deformation_accelerations(mechanism_, q_, t)])

    return solve_static(residual, q, mechanism, optx.GaussNewton(rtol=1e-12, atol=1e-14), STATIC_SHAPE_STEPS)[0]


def initial_state(mechanism: Mechanism) -> State:
    """Consistent initial state of ``mechanism`` at ``t = 0``.

    Positions: the configured ones, projected onto the constraints of the mechanism with
    each clearance joint held ideal at its initial eccentricity (with
    ``initial_clearance = "static"`` first moved to its quasi-static seat, :func:`seated`;
    with ``initial_deformation = "static"`` every flexible body in its static deflected
    shape, :func:`static_shape`).
    Velocities: :func:`start_velocities` for that same constraint set. The impact memory
    starts at the current normal rate (``model/contact/memory.py``).
    """
    if mechanism.initial_clearance == "static" and mechanism.clearance_joints:
        mechanism = seated(mechanism)
    if mechanism.initial_deformation == "static" and mechanism.beam_chains:
        mechanism = dataclasses.replace(mechanism, initial_positions=static_shape(mechanism, mechanism.initial_positions))
    _, q0, qd0 = _ideal_start(mechanism, mechanism.initial_positions)
    return State(q0, qd0, _normal_rates(mechanism, q0, qd0), jnp.zeros((), q0.dtype))


def kinetic_energy(mechanism: Mechanism, qd) -> Float[Array, ""]:
    """``1/2 qd^T M qd`` (J)."""
    return 0.5 * jnp.sum(mass_diagonal(mechanism) * qd**2)

