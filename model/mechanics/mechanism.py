"""A planar mechanism as data: bodies, joints, clearance joints and drivers.

Bodies are described in absolute coordinates ``q = [x_0, y_0, theta_0, x_1, ...]`` (m, rad)
of their centres of mass (Nikravesh). Joints reference bodies by index, with
``GROUND = -1`` for the fixed frame, and points in each body's own frame (m).

Everything a user may sweep, fit or optimise (masses, clearances, stiffnesses,
restitution, friction, speeds) is an array leaf, so a :class:`Mechanism` can be batched
with ``jax.vmap`` and differentiated with ``jax.grad``; the topology and the choice of laws
are static fields.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..contact.normal import ContactLaw
from ..contact.friction import FrictionLaw
from ..contact.stiffness import hertz_pin_stiffness
from ..geometry.worn import WornBore
from ..window import MetricsWindow
from .flexible import BeamChain, PointLoad
from .interface import AbstractMechanism, traced_once

GROUND = -1


class RevoluteJoint(eqx.Module):
    """Ideal pin: point ``P_j`` of body ``j`` coincides with ``P_i`` of body ``i``.

    ``offset`` (m, ground frame) shifts the constraint to ``P_j - P_i = offset``; it is
    used only to place a journal at its initial eccentricity.
    """

    body_i: int = eqx.field(static=True)
    body_j: int = eqx.field(static=True)
    point_i: Float[Array, "2"]
    point_j: Float[Array, "2"]
    offset: Float[Array, "2"] = eqx.field(default_factory=lambda: jnp.zeros(2))


class PrismaticJoint(eqx.Module):
    """Slider: body ``j`` keeps its angle relative to ``i`` and its point ``P_j`` stays on
    the line through ``P_i`` along ``axis`` (unit, body ``i``'s frame)."""

    body_i: int = eqx.field(static=True)
    body_j: int = eqx.field(static=True)
    point_i: Float[Array, "2"]
    point_j: Float[Array, "2"]
    axis: Float[Array, "2"]
    angle: Float[Array, ""]  # theta_j - theta_i to keep (rad)


class FixedJoint(eqx.Module):
    """Weld: ``P_j = P_i`` and ``theta_j - theta_i = angle``."""

    body_i: int = eqx.field(static=True)
    body_j: int = eqx.field(static=True)
    point_i: Float[Array, "2"]
    point_j: Float[Array, "2"]
    angle: Float[Array, ""]


class ClearanceJoint(eqx.Module):
    """Revolute clearance joint: a journal on ``journal_body`` inside a bearing on
    ``bearing_body``, coupled only by contact forces.

    The contact stiffness is derived at evaluation time, so that sweeping the clearance
    with ``stiffness = "hertz"`` keeps the stiffness consistent with the geometry:
    ``K = stiffness_factor * (hertz_pin_stiffness(E*, R_b, c) if hertz else stiffness)``.
    """

    journal_body: int = eqx.field(static=True)
    bearing_body: int = eqx.field(static=True)
    journal_point: Float[Array, "2"]
    bearing_point: Float[Array, "2"]
    bearing_radius: Float[Array, ""]  # R_b (m)
    clearance: Float[Array, ""]  # c = R_b - R_j (m)
    contact: ContactLaw  # its ``stiffness`` is used only when ``hertz`` is False
    friction: FrictionLaw
    effective_modulus: Float[Array, ""]  # E* (Pa), used when ``hertz`` is True
    stiffness_factor: Float[Array, ""]
    initial_eccentricity: Float[Array, "2"]  # journal centre minus bearing centre at t = 0 (m)
    hertz: bool = eqx.field(static=True, default=True)
    lubrication: eqx.Module | None = None  # model.lubrication.Lubrication: oil film, or dry
    # the bushing's wear depth over the angle (model/geometry/worn.py); None: a new bushing
    wear: WornBore | None = None

    @property
    def bodies(self) -> tuple[int, int]:
        """``(journal body, bearing body)``."""
        return self.journal_body, self.bearing_body

    def stiffness(self) -> Float[Array, ""]:
        """Contact stiffness K (N/m^n)."""
        if self.hertz:
            base = hertz_pin_stiffness(self.effective_modulus, self.bearing_radius, self.clearance)
        else:
            base = self.contact.stiffness
        return self.stiffness_factor * base

    def contact_law(self) -> ContactLaw:
        """The contact law with its stiffness resolved."""
        return eqx.tree_at(lambda law: law.stiffness, self.contact, self.stiffness())


class Driver(eqx.Module):
    """Drive on revolute joint ``joint`` (index into ``Mechanism.revolute_joints``).

    ``kind = "constant_speed"``: rheonomic constraint ``theta_j - theta_i = angle + speed t``;
    its multiplier gives the driving torque. ``kind = "constant_torque"``: torque (N m) on
    body ``j`` and its reaction on body ``i``.
    """

    joint: int = eqx.field(static=True)
    kind: str = eqx.field(static=True)
    speed: Float[Array, ""]  # rad/s
    torque: Float[Array, ""]  # N m
    angle: Float[Array, ""]  # theta_j - theta_i at t = 0 (rad)


class Mechanism(AbstractMechanism):
    """A planar mechanism with any number of ideal and clearance joints.

    The integrators' interface (:class:`~model.mechanics.interface.AbstractMechanism`) is
    implemented by the functions of ``dynamics.py`` and ``forces.py``; they import this
    module, so the methods import them when called.
    """

    dimension: ClassVar[int] = 2

    masses: Float[Array, " bodies"]  # kg
    inertias: Float[Array, " bodies"]  # kg m^2 about the centre of mass
    gravity: Float[Array, "2"]  # m/s^2
    initial_positions: Float[Array, " coords"]  # q at t = 0 (before projection)
    revolute_joints: tuple[RevoluteJoint, ...]
    prismatic_joints: tuple[PrismaticJoint, ...]
    fixed_joints: tuple[FixedJoint, ...]
    clearance_joints: tuple[ClearanceJoint, ...]
    drivers: tuple[Driver, ...]
    baumgarte_alpha: Float[Array, ""] = eqx.field(default_factory=lambda: jnp.asarray(5.0))
    baumgarte_beta: Float[Array, ""] = eqx.field(default_factory=lambda: jnp.asarray(5.0))
    # "from_drivers": the velocities closest to ``initial_velocity_targets`` (zero when None)
    # that satisfy the ideal joints, drivers and rigid flexible bodies; "zero": at rest
    initial_velocities: str = eqx.field(static=True, default="from_drivers")
    initial_velocity_targets: Float[Array, " coords"] | None = None  # (vx, vy, omega) per body (m/s, rad/s)
    # "configured": journals at ``initial_eccentricity``; "static": seated under the initial loads
    initial_clearance: str = eqx.field(static=True, default="configured")
    # "undeformed": flexible bodies start straight; "static": in their static deflected shape
    initial_deformation: str = eqx.field(static=True, default="undeformed")
    body_names: tuple[str, ...] = eqx.field(static=True, default=())
    clearance_names: tuple[str, ...] = eqx.field(static=True, default=())
    driver_names: tuple[str, ...] = eqx.field(static=True, default=())
    # the ideal joints' names in constraint order: revolute, then prismatic, then fixed joints
    joint_names: tuple[str, ...] = eqx.field(static=True, default=())
    # Flexible bodies (chains of rigid segments, model/mechanics/flexible.py) and point loads.
    beam_chains: tuple[BeamChain, ...] = ()
    loads: tuple[PointLoad, ...] = ()
    # the metrics count t >= metrics_window.start(drivers) (s); model/window.py
    metrics_window: MetricsWindow = eqx.field(default_factory=MetricsWindow)

    @property
    def num_bodies(self) -> int:
        return self.masses.shape[-1]

    def idealised(self, with_offsets: bool = False) -> "Mechanism":
        """The same mechanism with every clearance joint replaced by an ideal revolute
        joint (bearing body ``i``, journal body ``j``).

        With ``with_offsets`` the pins keep the journals at their initial eccentricity:
        this is the constraint set used to build consistent initial conditions.
        """
        pins = tuple(
            RevoluteJoint(
                body_i=joint.bearing_body,
                body_j=joint.journal_body,
                point_i=joint.bearing_point,
                point_j=joint.journal_point,
                offset=joint.initial_eccentricity if with_offsets else jnp.zeros_like(joint.initial_eccentricity),
            )
            for joint in self.clearance_joints
        )
        names = self.joint_names
        if len(names) == len(self.revolute_joints) + len(self.prismatic_joints) + len(self.fixed_joints):
            count = len(self.revolute_joints)
            names = names[:count] + self.clearance_names + names[count:]
        return dataclasses.replace(
            self, revolute_joints=self.revolute_joints + pins, clearance_joints=(), clearance_names=(),
            joint_names=names,
        )

    def initial_state(self):
        from .dynamics import initial_state

        return initial_state(self)

    @property
    def second_order_size(self) -> int:
        """The coordinates: the flat state is ``[q, qd, impact memory, driver work]`` and
        ``dq/dt = qd`` (:func:`model.mechanics.dynamics.flatten_state`)."""
        return self.initial_positions.shape[-1]

    def flatten(self, state):
        from .dynamics import flatten_state

        return flatten_state(state)

    def unflatten(self, flat):
        from .dynamics import unflatten_state

        return unflatten_state(flat, len(self.clearance_joints))

    @traced_once
    def flat_vector_field(self, t, flat):
        from .dynamics import flat_vector_field

        return flat_vector_field(t, flat, self)

    @traced_once
    def project(self, t, flat, iterations=1):
        from .dynamics import flat_projection

        return flat_projection(t, flat, self, iterations)

    def body_accelerations(self, flat, flat_rate):
        # the rate of the velocities qd is qdd = [x'', y'', theta''] per body
        return self.unflatten(flat_rate).qd.reshape(-1, 3)[:, :2]

    @traced_once
    def contact_kinematics(self, flat):
        from .forces import joint_kinematics

        state = self.unflatten(flat)
        rows = [joint_kinematics(joint, state.q, state.qd) for joint in self.clearance_joints]
        if not rows:
            return jnp.zeros((2, 0), flat.dtype)
        return jnp.stack([jnp.stack([k.penetration for k in rows]), jnp.stack([k.normal_rate for k in rows])])

    @traced_once
    def contact_values(self, flat):
        from .forces import joint_forces, joint_kinematics

        state = self.unflatten(flat)
        if not self.clearance_joints:
            return jnp.zeros((3, 0), flat.dtype)
        rows = []
        for index, joint in enumerate(self.clearance_joints):
            kinematics = joint_kinematics(joint, state.q, state.qd)
            force, _ = joint_forces(joint, state.q, state.qd, kinematics, state.impact_memory[index])
            rows.append(jnp.stack([kinematics.penetration, kinematics.normal_rate, force]))
        return jnp.stack(rows, axis=1)
