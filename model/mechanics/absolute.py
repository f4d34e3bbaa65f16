"""What the planar and the spatial absolute-coordinate engines share, written once.

Both describe every body by absolute coordinates constrained by ideal-joint rows
(Nikravesh 1988), carry the state ``[positions, velocities, impact memory, driver work]``
and start the same way (docs/initial.md): clearance joints held ideal
at their initial eccentricity, positions projected onto those joints, velocities the
closest to the requested ones that the joints, the drivers and the rigid-body motion of
flexible bodies allow. :class:`AbstractAbsoluteMechanism` holds that logic over a few
per-dimension kernels (the constraint rows, their Jacobian and the least-norm correction
onto them, the projection of positions, the quasi-static seat, the static shape of
flexible bodies, the contact slots' normal rates); each engine writes only those kernels.
The equations of motion around the engine's evaluation (:meth:`~AbstractAbsoluteMechanism.vector_field`),
the ideal joints' reactions, the quasi-static seat's passes, the static shape of flexible
bodies and the projection of a step onto the joints
(:meth:`AbstractAbsoluteMechanism.project_state`) are shared the same way.
"""

import abc
import dataclasses
from typing import Any, ClassVar, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import optimistix as optx
from equinox import AbstractVar
from jaxtyping import Array, Float, PyTree

from ..contact.memory import impact_memory_rate
from ..geometry.planar import cross2
from ..window import MetricsWindow
from .flexible import BeamChain
from .interface import AbstractMechanism
from .joints import GROUND
from .start import SEATING_PASSES, STATIC_SHAPE_SCALE, STATIC_SHAPE_STEPS, project_velocities, solve_static


def flatten_state(state: PyTree) -> Float[Array, "... n"]:
    """An absolute engine's state ``(positions, velocities, impact memory, driver work)`` as
    one vector ``[positions, velocities, impact memory, driver work]`` (leading batch axes
    kept)."""
    positions, velocities, memory, work = state
    return jnp.concatenate([positions, velocities, memory, work[..., None]], axis=-1)


class Evaluation(NamedTuple):
    """One evaluation of an absolute engine's equations of motion at one state."""

    # the velocities' rate: planar qdd, spatial [rddot, omegadot] per body (m/s^2, rad/s^2)
    acceleration: Float[Array, " velocities"]
    multipliers: Float[Array, " m"]  # the constraint rows' (Baumgarte's stabilising terms included)
    contact: Any  # the engine's contact state: ContactState, SpatialContactState
    driver_torques: Float[Array, " drivers"]  # N m
    constraint_violation: Float[Array, ""]  # the largest |Phi| (m, rad)


def driver_torques(drivers: tuple, rows: dict[int, int], multipliers: Float[Array, " m"],
                   kept_rows: tuple[int, ...] | None = None) -> Float[Array, " drivers"]:
    """Each driver's torque (N m): a speed driver's is minus the multiplier of its row
    (``rows``: driver index -> constraint row; ``kept_rows``: the rows kept when redundant
    ones were removed, None for all), a torque driver's its own."""
    torques = []
    for index, driver in enumerate(drivers):
        if driver.kind == "constant_speed":
            row = rows[index] if kept_rows is None else kept_rows.index(rows[index])
            torques.append(-multipliers[row])
        else:
            torques.append(driver.torque)
    return jnp.stack(torques) if torques else jnp.zeros((0,), multipliers.dtype)


class AbstractAbsoluteMechanism(AbstractMechanism):
    """A mechanism in absolute coordinates with ideal-joint constraint rows (see the module
    docstring): the planar :class:`~model.mechanics.mechanism.Mechanism` and the spatial
    :class:`~model.mechanics.spatial.SpatialMechanism`."""

    # the state's NamedTuple: (positions, velocities, impact memory, driver work)
    state_type: ClassVar[type]

    gravity: AbstractVar[Float[Array, " dimension"]]  # m/s^2
    initial_positions: AbstractVar[Float[Array, " coords"]]  # before projection

    # the fields both engines carry, keyword-only (after each engine's own)
    baumgarte_alpha: Float[Array, ""] = eqx.field(default_factory=lambda: jnp.asarray(5.0), kw_only=True)
    baumgarte_beta: Float[Array, ""] = eqx.field(default_factory=lambda: jnp.asarray(5.0), kw_only=True)
    # flexible bodies: chains of rigid segments joined by beam elements (flexible.py, spatial/beams.py)
    beam_chains: tuple[BeamChain, ...] = eqx.field(default=(), kw_only=True)
    # "from_drivers": the velocities closest to ``initial_velocity_targets`` (zero when None)
    # that satisfy the ideal joints, drivers and rigid flexible bodies; "zero": at rest
    initial_velocities: str = eqx.field(static=True, default="from_drivers", kw_only=True)
    # per body, ground frame: (vx, vy, omega) planar, (v, omega) spatial (m/s, rad/s)
    initial_velocity_targets: Float[Array, " velocities"] | None = eqx.field(default=None, kw_only=True)
    # "configured": journals at ``initial_eccentricity``; "static": seated under the initial loads
    initial_clearance: str = eqx.field(static=True, default="configured", kw_only=True)
    # "undeformed": flexible bodies start straight; "static": in their static deflected shape
    initial_deformation: str = eqx.field(static=True, default="undeformed", kw_only=True)
    body_names: tuple[str, ...] = eqx.field(static=True, default=(), kw_only=True)
    clearance_names: tuple[str, ...] = eqx.field(static=True, default=(), kw_only=True)
    driver_names: tuple[str, ...] = eqx.field(static=True, default=(), kw_only=True)
    # the ideal joints' names in constraint order (planar: revolute, prismatic, fixed joints)
    joint_names: tuple[str, ...] = eqx.field(static=True, default=(), kw_only=True)
    # the metrics count t >= metrics_window.start(drivers) (s); model/window.py
    metrics_window: MetricsWindow = eqx.field(default_factory=MetricsWindow, kw_only=True)

    # -- kernels each engine writes -----------------------------------------------------

    @property
    @abc.abstractmethod
    def velocity_size(self) -> int:
        """Entries of the velocity vector (3 per planar body, 6 per spatial body)."""

    @property
    @abc.abstractmethod
    def memory_size(self) -> int:
        """Contact slots, one impact memory each."""

    @abc.abstractmethod
    def idealised(self, with_offsets: bool = False) -> "AbstractAbsoluteMechanism":
        """The same mechanism with every clearance joint replaced by its ideal joint; with
        ``with_offsets`` held at its initial eccentricity (and tilt)."""

    @abc.abstractmethod
    def constraint_values(self, positions, t) -> Float[Array, " m"]:
        """``Phi``: the ideal joints' and speed drivers' constraint rows at ``t`` (s)."""

    @abc.abstractmethod
    def constraint_rate(self, positions, velocities, t) -> Float[Array, " m"]:
        """``dPhi/dt`` along ``velocities``."""

    @abc.abstractmethod
    def constraint_correction(self, positions, t):
        """``r -> dv``, the velocity-space step of least kinetic-energy norm removing a
        constraint residual ``r`` to first order, linearised at ``positions``; ``None``
        without constraint rows."""

    @abc.abstractmethod
    def retract(self, positions, step) -> Float[Array, " coords"]:
        """``positions`` moved by a small velocity-space ``step``."""

    @abc.abstractmethod
    def constraint_jacobian(self, positions, t) -> Float[Array, "m velocities"]:
        """``Phi_q`` (planar) or ``Phi_v`` (spatial, against the twists) at ``t`` (s)."""

    @abc.abstractmethod
    def velocity_rhs(self, positions, t) -> Float[Array, " m"]:
        """``-Phi_t``: the right-hand side of the velocity equations at ``t`` (s)."""

    @abc.abstractmethod
    def deformation_rate_rows(self, chain, positions) -> Float[Array, "rows velocities"]:
        """``D``: the element deformation rates of flexible body ``chain`` are ``D v``."""

    @abc.abstractmethod
    def project_positions(self, positions) -> Float[Array, " coords"]:
        """Minimum-norm Gauss-Newton projection of ``positions`` onto the constraints at
        ``t = 0``, a fixed number of steps (differentiable in both modes)."""

    @abc.abstractmethod
    def contact_normal_rates(self, positions, velocities) -> Float[Array, " memory"]:
        """Normal rate (m/s) of every contact slot: what the impact memory starts at."""

    @abc.abstractmethod
    def evaluate(self, t, state: PyTree) -> Evaluation:
        """Accelerations, multipliers, contact state and driver torques at ``(t, state)``."""

    @abc.abstractmethod
    def position_rate(self, positions, velocities) -> Float[Array, " coords"]:
        """``d positions / dt`` (the velocities themselves in the plane; quaternion rates in space)."""

    @abc.abstractmethod
    def contact_normal_accelerations(self, positions, velocities, acceleration) -> Float[Array, " memory"]:
        """``d(delta_dot)/dt`` (m/s^2) of every contact slot along the motion ``(velocities,
        acceleration)``: what the impact memory tracks (``model/contact/memory.py``)."""

    @abc.abstractmethod
    def driver_rate(self, positions, velocities, driver) -> Float[Array, ""]:
        """The relative angular speed (rad/s) of the joint ``driver`` drives, about its axis."""

    @abc.abstractmethod
    def point_position(self, positions, body: int, local_point) -> Float[Array, " dimension"]:
        """Ground-frame position (m) of a point given in ``body``'s frame."""

    @property
    @abc.abstractmethod
    def first_pin(self) -> int:
        """Where, in :meth:`joint_reactions`' order, :meth:`idealised` puts the ideal joint
        that stands for the first clearance joint (the others follow it)."""

    @abc.abstractmethod
    def ideal_joint_rows(self, positions, t, multipliers) -> tuple[tuple, Float[Array, "m velocities"],
                                                                   Float[Array, " m"]]:
        """The ideal joints in constraint order, each with its number of rows, and the
        constraint Jacobian and multipliers over all their rows (the redundant rows an
        engine removed restored, with zero multipliers)."""

    @abc.abstractmethod
    def seat_joints(self, positions, reactions) -> tuple["AbstractAbsoluteMechanism", Any]:
        """The mechanism at ``positions`` with each clearance joint seated where its elastic
        contact carries ``reactions`` (one row of :meth:`joint_reactions` per clearance
        joint: the ideal joint's wrench on the journal), and the engine's report of the seats."""

    # -- written once over the kernels --------------------------------------------------

    def flatten(self, state: PyTree) -> Float[Array, "... n"]:
        """:func:`flatten_state`."""
        return flatten_state(state)

    def unflatten(self, flat: Float[Array, "... n"]) -> PyTree:
        """Inverse of :meth:`flatten` (leading batch axes kept)."""
        positions = self.initial_positions.shape[-1]
        velocities = positions + self.velocity_size
        memory = velocities + self.memory_size
        return self.state_type(flat[..., :positions], flat[..., positions:velocities], flat[..., velocities:memory],
                               flat[..., -1])

    def body_accelerations(self, flat: Float[Array, " n"], flat_rate: Float[Array, " n"]
                           ) -> Float[Array, "bodies dimension"]:
        """The linear part of each body's velocity rate (the velocities of a body begin
        with its centre of mass's, ground frame)."""
        return self.unflatten(flat_rate)[1].reshape(self.num_bodies, -1)[:, : self.dimension]

    def vector_field(self, t, state: PyTree) -> PyTree:
        """``d state / dt``: the positions' rate, the accelerations of :meth:`evaluate`, the
        impact memory's rate at every contact slot (``model/contact/memory.py``) and the
        drivers' power (W), each driver's torque times its joint's relative angular speed."""
        positions, velocities, memory, _ = state
        out = self.evaluate(t, state)
        normal_acceleration = self.contact_normal_accelerations(positions, velocities, out.acceleration)
        memory_rate = impact_memory_rate(out.contact.slice_penetration, out.contact.slice_normal_rate,
                                         normal_acceleration, memory)
        power = sum((out.driver_torques[i] * self.driver_rate(positions, velocities, driver)
                     for i, driver in enumerate(self.drivers)), start=jnp.zeros((), positions.dtype))
        return self.state_type(self.position_rate(positions, velocities), out.acceleration, memory_rate, power)

    def joint_reactions(self, t, positions, multipliers: Float[Array, " m"]) -> Float[Array, "joints wrench"]:
        """The force (N) and moment (N m, about the joint's point on that body), ground
        frame, each ideal joint exerts on its second body ``j``, from the multipliers: a
        joint's rows apply ``-Phi_v^T lambda`` to the velocities (Nikravesh 1988 §6), the force
        on a body's linear rows and the moment about its centre of mass on its angular ones.
        Planar ``[f_x, f_y, m]``, spatial ``[f, m]``; joints in constraint order
        (:meth:`ideal_joint_rows`). A revolute joint's moment about its pin is zero; a joint
        whose second body is the ground reports the wrench on the ground (the opposite of
        body ``i``'s). Rows removed as redundant carry no multiplier, so a redundantly
        constrained loop's share between its joints is the one of the kept rows. The
        multipliers include Baumgarte's stabilising terms."""
        joints, jacobian, multipliers = self.ideal_joint_rows(positions, t, multipliers)
        size, dimension = self.velocity_size // self.num_bodies, self.dimension
        coordinates = self.initial_positions.shape[-1] // self.num_bodies
        cross = cross2 if dimension == 2 else jnp.cross
        reactions, first = [], 0
        for joint, rows in joints:
            generalised = -(multipliers[first : first + rows] @ jacobian[first : first + rows])
            first += rows
            # a pin's offset (a journal held at its eccentricity) puts its point at P_i + offset
            body, point, sign = ((joint.body_j, joint.point_j, 1.0) if joint.body_j != GROUND
                                 else (joint.body_i, joint.point_i + getattr(joint, "offset", 0.0), -1.0))
            block = generalised[size * body : size * (body + 1)]
            force = block[:dimension]
            arm = self.point_position(positions, body, point) - positions[coordinates * body :
                                                                          coordinates * body + dimension]
            reactions.append(sign * jnp.concatenate([force, block[dimension:] - cross(arm, force)]))
        return jnp.stack(reactions) if reactions else jnp.zeros((0, size), positions.dtype)

    def seat(self) -> tuple["AbstractAbsoluteMechanism", Any]:
        """The mechanism with each clearance joint at its quasi-static seat under the load it
        carries as an ideal joint at ``t = 0`` (gravity, loads, drivers and the inertia of
        the initial motion), and the engine's report of the seats (:meth:`seat_joints`).
        Each of ``SEATING_PASSES`` passes (one compiled body, ``lax.scan``) re-solves the
        ideal start with the joints where the previous pass put them, takes the ideal
        joints' wrenches on the journals (:meth:`joint_reactions`) and seats the journals
        under them; the report is the last pass's."""
        def one_pass(mechanism, _):
            pinned, positions, velocities = mechanism.ideal_start(mechanism.initial_positions)
            t, zero = jnp.zeros((), positions.dtype), jnp.zeros((0,), positions.dtype)
            state = self.state_type(positions, velocities, zero, jnp.zeros((), positions.dtype))
            reactions = pinned.joint_reactions(t, positions, pinned.evaluate(t, state).multipliers)
            return mechanism.seat_joints(positions, reactions[self.first_pin : self.first_pin
                                                              + len(self.clearance_joints)])

        mechanism, seats = jax.lax.scan(one_pass, self, None, length=SEATING_PASSES)
        return mechanism, jax.tree_util.tree_map(lambda leaf: leaf[-1], seats)

    def static_shape(self, positions) -> Float[Array, " coords"]:
        """Positions at which every flexible body is in its quasi-static deflected shape at
        ``t = 0``: the ideal joints satisfied (clearance joints held ideal at their initial
        eccentricity and tilt) and no element deformation accelerating
        (:meth:`deformation_accelerations`) under gravity, the applied loads, the contact
        forces at t = 0 and the inertia of the initial (rigid-body) motion, so that the
        elastic forces balance them. The unknowns are the coordinates themselves where they
        add as the velocities do (planar: ``dq/dt = qd``, :attr:`second_order_size`), else a
        small velocity-space step of every body applied to ``positions`` (:meth:`retract`,
        which keeps quaternions unit); the joints fix each body's frame and the deformation
        rows its shape. Gauss–Newton (``optimistix.GaussNewton``,
        minimum-norm steps) from the undeformed assembly, so the rigid motions the equations
        leave free move as little as they can; derivatives with respect to the mechanism's
        parameters are the implicit ones (:func:`~model.mechanics.start.solve_static`)."""
        coordinates = self.second_order_size is not None

        def residual(unknowns, mechanism):
            t = jnp.zeros((), positions.dtype)
            moved = unknowns if coordinates else mechanism.retract(positions, unknowns)
            return jnp.concatenate([mechanism.idealised(with_offsets=True).constraint_values(moved, t),
                                    STATIC_SHAPE_SCALE * mechanism.deformation_accelerations(moved, t)])

        guess = positions if coordinates else jnp.zeros(self.velocity_size, positions.dtype)
        unknowns, _ = solve_static(residual, guess, self, optx.GaussNewton(rtol=1e-12, atol=1e-14), STATIC_SHAPE_STEPS)
        return unknowns if coordinates else self.retract(positions, unknowns)

    def project_state(self, t, state: PyTree, iterations: int = 1) -> PyTree:
        """``state`` moved back onto the constraints at ``t`` (s): the positions by
        ``iterations`` Gauss-Newton steps on ``Phi = 0``, then the velocities onto
        ``dPhi/dt = 0`` by one linear projection, both the correction of least
        kinetic-energy norm (the mass matrix's metric; Bayo & Ledesma 1996, Blajer 2002,
        :meth:`constraint_correction`). The Jacobian is taken once, at the given positions (a
        simplified Gauss-Newton iteration: it converges linearly at a rate of the correction
        times the constraints' curvature, so one step from a violation of micrometres leaves
        roundoff). Impact memory and driver work are kept; the state itself without
        constraint rows. Pure JAX, differentiable."""
        positions, velocities, memory, work = state
        correction = self.constraint_correction(positions, t)
        if correction is None:
            return state
        for _ in range(iterations):
            positions = self.retract(positions, correction(self.constraint_values(positions, t)))
        velocities = velocities + correction(self.constraint_rate(positions, velocities, t))
        return self.state_type(positions, velocities, memory, work)

    def start_velocities(self, positions, t) -> Float[Array, " velocities"]:
        """Velocities at ``t`` (s) of this mechanism (its clearance joints held ideal).

        ``initial_velocities = "from_drivers"``: the velocities closest to
        ``initial_velocity_targets`` (zero when None) that satisfy the velocity equations
        ``Phi_v v = -Phi_t`` and keep every flexible body's deformation rates at zero, so
        that its segments move with the rigid-body velocity field of its frame
        (:func:`model.mechanics.start.project_velocities`). ``"zero"``: at rest."""
        zero = jnp.zeros(self.velocity_size, positions.dtype)
        if self.initial_velocities == "zero":
            return zero
        target = zero if self.initial_velocity_targets is None else self.initial_velocity_targets
        rows = [self.constraint_jacobian(positions, t)]
        rows += [self.deformation_rate_rows(chain, positions) for chain in self.beam_chains]
        rhs = [self.velocity_rhs(positions, t)] + [jnp.zeros(row.shape[0], positions.dtype) for row in rows[1:]]
        return project_velocities(jnp.concatenate(rows), jnp.concatenate(rhs), target)

    def ideal_start(self, positions) -> tuple["AbstractAbsoluteMechanism", Float[Array, " coords"],
                                              Float[Array, " velocities"]]:
        """The mechanism with each clearance joint held ideal at its initial eccentricity,
        ``positions`` projected onto its joints, and its start velocities there."""
        pinned = self.idealised(with_offsets=True)
        start = pinned.project_positions(positions)
        return pinned, start, pinned.start_velocities(start, jnp.zeros((), start.dtype))

    def start(self) -> tuple[PyTree, Any]:
        """The consistent state at ``t = 0`` and the seats' report (:meth:`seat`).

        Positions: the configured ones, projected onto the joints with each clearance joint
        held ideal at its initial eccentricity (with ``initial_clearance = "static"`` first
        moved to its quasi-static seat; with ``initial_deformation = "static"`` every
        flexible body in its static deflected shape); velocities: :meth:`start_velocities`
        for that same constraint set; the impact memory at the current normal rates
        (``model/contact/memory.py``)."""
        mechanism, seats = self, ()
        if self.initial_clearance == "static" and self.clearance_joints:
            mechanism, seats = self.seat()
        if mechanism.initial_deformation == "static" and mechanism.beam_chains:
            mechanism = dataclasses.replace(mechanism,
                                            initial_positions=mechanism.static_shape(mechanism.initial_positions))
        _, positions, velocities = mechanism.ideal_start(mechanism.initial_positions)
        memory = mechanism.contact_normal_rates(positions, velocities)
        return self.state_type(positions, velocities, memory, jnp.zeros((), positions.dtype)), seats

    def initial_state(self) -> PyTree:
        """The consistent state at ``t = 0`` (:meth:`start`)."""
        return self.start()[0]

    def deformation_accelerations(self, positions, t=0.0) -> Float[Array, " rows"]:
        """Second time derivatives of every flexible body's element deformations
        (``D vdot + (dD/dt) v``, m/s^2 and rad/s^2) at ``positions``, moving with the
        start's velocities (:meth:`start_velocities` of the mechanism with its clearance
        joints held ideal: each flexible body with the rigid-body field of its frame) and
        accelerating as the equations of motion say (:meth:`vector_field`): a clearance
        joint pushes only where its journal touches."""
        t = jnp.asarray(t, positions.dtype)
        velocities = self.idealised(with_offsets=True).start_velocities(positions, t)
        state = self.state_type(positions, velocities, self.contact_normal_rates(positions, velocities),
                                jnp.zeros((), positions.dtype))
        position_rate, acceleration = self.vector_field(t, state)[:2]
        rows = []
        for chain in self.beam_chains:
            _, convective = jax.jvp(lambda x: self.deformation_rate_rows(chain, x) @ velocities, (positions,),
                                    (position_rate,))
            rows.append(self.deformation_rate_rows(chain, positions) @ acceleration + convective)
        return jnp.concatenate(rows)
