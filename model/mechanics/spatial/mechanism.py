"""A spatial mechanism as data: rigid bodies, ideal joints, clearance joints, loads, drivers.

Coordinates per body ``b`` (absolute, Nikravesh 1988 ch. 6): position ``r_b`` (m) of the
centre of mass and a unit quaternion ``p_b`` (scalar first) in ``x = [r_0, p_0, r_1, ...]``
(7 per body); velocities ``v = [rdot_0, omega_0, ...]`` (6 per body) with ``omega`` in the
ground frame. Joints reference bodies by index, ``GROUND = -1``, points in each body's frame
(origin at its centre of mass), axes in each body's frame (the builder converts the
ground-frame axes of the input at t = 0).
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from ...contact.friction import FrictionLaw
from ...contact.normal import ContactLaw
from ...contact.stiffness import hertz_pin_stiffness, palmgren_stiffness
from ...geometry.quaternion import rotate_by_vector
from ...lubrication import Lubrication
from ...window import MetricsWindow
from ..flexible import BeamChain
from ..interface import AbstractMechanism, traced_once

GROUND = -1
POSITION_SIZE = 7
VELOCITY_SIZE = 6


class SpatialJoint(eqx.Module):
    """Ideal joint between bodies ``i`` and ``j`` (``kind``: revolute | spherical | cylindrical |
    prismatic | fixed).

    ``axis_i``/``axis_j``: the joint axis in each body's frame; ``reference_i``/``reference_j``:
    a unit vector normal to it in each body's frame, equal in the ground frame at t = 0 (the
    zero of the relative angle). ``relative``: ``conj(p_i) (x) p_j`` at t = 0, kept by
    prismatic and fixed joints. ``offset`` (m, body ``i``'s frame) shifts ``P_j - P_i`` to
    ``R_i offset`` (the initial eccentricity of an idealised clearance joint).
    """

    kind: str = eqx.field(static=True)
    body_i: int = eqx.field(static=True)
    body_j: int = eqx.field(static=True)
    point_i: Float[Array, "3"]
    point_j: Float[Array, "3"]
    axis_i: Float[Array, "3"]
    axis_j: Float[Array, "3"]
    reference_i: Float[Array, "3"]
    reference_j: Float[Array, "3"]
    relative: Float[Array, "4"]
    offset: Float[Array, "3"] = eqx.field(default_factory=lambda: jnp.zeros(3))


class CylindricalClearanceJoint(eqx.Module):
    """Journal on ``journal_body`` in a bearing on ``bearing_body`` (Tian et al. 2009;
    Yao, Chen, Wang & Liu): contact by ``slices`` discs along the contact length.

    ``bearing_axis``/``bearing_u``/``bearing_w``: the bearing's axis and its cross-section axes
    in the bearing body's frame; ``journal_axis`` in the journal body's frame.
    ``stiffness`` of ``contact`` is the whole joint's (``palmgren``: derived from the length).
    """

    journal_body: int = eqx.field(static=True)
    bearing_body: int = eqx.field(static=True)
    slices: int = eqx.field(static=True)
    axial_fixed: bool = eqx.field(static=True)
    palmgren: bool = eqx.field(static=True)
    journal_point: Float[Array, "3"]
    bearing_point: Float[Array, "3"]
    journal_axis: Float[Array, "3"]
    bearing_axis: Float[Array, "3"]
    bearing_u: Float[Array, "3"]
    bearing_w: Float[Array, "3"]
    length: Float[Array, ""]  # m
    bearing_radius: Float[Array, ""]  # m
    clearance: Float[Array, ""]  # m
    contact: ContactLaw
    friction: FrictionLaw
    initial_eccentricity: Float[Array, "2"]  # in the bearing's (u, w) axes (m)
    lubrication: Lubrication | None = None  # oil film per slice (model.mechanics.spatial.lubrication)
    stiffness_factor: Float[Array, ""] = eqx.field(default_factory=lambda: jnp.asarray(1.0))  # scales K
    # the journal's rotation at t = 0 relative to the bearing, about the bearing's (u, w) axes (rad)
    initial_tilt: Float[Array, "2"] = eqx.field(default_factory=lambda: jnp.zeros(2))

    @property
    def bodies(self) -> tuple[int, int]:
        """``(journal body, bearing body)``."""
        return self.journal_body, self.bearing_body

    def stiffness(self) -> Float[Array, ""]:
        """The whole joint's stiffness K (N/m^n), times ``stiffness_factor``."""
        return self.stiffness_factor * (palmgren_stiffness(self.length) if self.palmgren else self.contact.stiffness)

    def slice_law(self) -> ContactLaw:
        """The contact law of one slice: stiffness ``K / N``."""
        return eqx.tree_at(lambda law: law.stiffness, self.contact, self.stiffness() / self.slices)

    def tilted_bearing_frame(self) -> tuple[Float[Array, "3"], Float[Array, "3"]]:
        """The bearing's axis and ``u`` axis turned by ``initial_tilt`` (bearing body's frame):
        the rotation vector ``theta_u u + theta_w w`` applied by Rodrigues' formula. The ideal
        joint that holds the journal at t = 0 keeps the journal's axis along the first."""
        rotation = self.initial_tilt[0] * self.bearing_u + self.initial_tilt[1] * self.bearing_w
        return rotate_by_vector(self.bearing_axis, rotation), rotate_by_vector(self.bearing_u, rotation)

    def slice_positions(self) -> Float[Array, " slices"]:
        """``z_k = -l/2 + (k + 1/2) l / N`` (m)."""
        k = jnp.arange(self.slices, dtype=float)
        return -0.5 * self.length + (k + 0.5) * self.length / self.slices


class SphericalClearanceJoint(eqx.Module):
    """Ball on ``ball_body`` in a socket on ``socket_body``: point contact (Flores et al. 2006)."""

    ball_body: int = eqx.field(static=True)
    socket_body: int = eqx.field(static=True)
    ball_point: Float[Array, "3"]
    socket_point: Float[Array, "3"]
    socket_radius: Float[Array, ""]
    clearance: Float[Array, ""]
    contact: ContactLaw
    friction: FrictionLaw
    initial_eccentricity: Float[Array, "3"]
    stiffness_factor: Float[Array, ""] = eqx.field(default_factory=lambda: jnp.asarray(1.0))  # scales K
    # stiffness = "hertz": K from the effective modulus (Pa) and the radii, whatever they are set to
    hertz: bool = eqx.field(static=True, default=False)
    effective_modulus: Float[Array, ""] = eqx.field(default_factory=lambda: jnp.asarray(0.0))

    @property
    def bodies(self) -> tuple[int, int]:
        """``(ball body, socket body)``."""
        return self.ball_body, self.socket_body

    def stiffness(self) -> Float[Array, ""]:
        """Contact stiffness K (N/m^n), times ``stiffness_factor``. With ``hertz``, the Hertz
        stiffness of the ball (radius ``R_s - c``) in the socket ``R_s``: ``K = 4/3 E*
        sqrt(R)``, ``R = R_s (R_s - c) / c`` (Hertz 1882; Johnson, *Contact Mechanics*, 1985,
        §4.2, the concave radius negative; Flores et al. 2006), the equivalent radius of
        :func:`~model.contact.stiffness.hertz_pin_stiffness`, recomputed from the current
        radius and clearance."""
        if self.hertz:
            base = hertz_pin_stiffness(self.effective_modulus, self.socket_radius, self.clearance)
        else:
            base = self.contact.stiffness
        return self.stiffness_factor * base

    def contact_law(self) -> ContactLaw:
        """The contact law with its stiffness resolved."""
        return eqx.tree_at(lambda law: law.stiffness, self.contact, self.stiffness())


class Load(eqx.Module):
    """Constant applied load: a force (N, ground frame) at body point ``point`` (m, body
    frame) or a torque (N m, ground frame); ``enabled`` (0 or 1) switches it."""

    body: int = eqx.field(static=True)
    kind: str = eqx.field(static=True)  # force | torque
    point: Float[Array, "3"]
    value: Float[Array, "3"]
    enabled: Float[Array, ""]


class SpatialDriver(eqx.Module):
    """Drive on the revolute joint ``joint`` (index into ``SpatialMechanism.joints``):
    ``constant_speed`` (angle ``angle + speed t``; the multiplier is the torque) or
    ``constant_torque`` (``torque`` on body ``j`` about the axis, reaction on ``i``)."""

    joint: int = eqx.field(static=True)
    kind: str = eqx.field(static=True)
    speed: Float[Array, ""]
    torque: Float[Array, ""]
    angle: Float[Array, ""]


class SpatialMechanism(AbstractMechanism):
    """A spatial mechanism of rigid bodies with ideal and clearance joints.

    The integrators' interface (:class:`~model.mechanics.interface.AbstractMechanism`) is
    implemented by the functions of ``dynamics.py`` and ``forces.py``; they import this
    module, so the methods import them when called.
    """

    dimension: ClassVar[int] = 3

    masses: Float[Array, " bodies"]
    inertias: Float[Array, "bodies 3 3"]  # body-frame inertia tensors about the centre of mass
    gravity: Float[Array, "3"]
    initial_positions: Float[Array, " coords"]
    joints: tuple[SpatialJoint, ...]
    cylindrical_joints: tuple[CylindricalClearanceJoint, ...]
    spherical_joints: tuple[SphericalClearanceJoint, ...]
    loads: tuple[Load, ...]
    drivers: tuple[SpatialDriver, ...]
    baumgarte_alpha: Float[Array, ""] = eqx.field(default_factory=lambda: jnp.asarray(5.0))
    baumgarte_beta: Float[Array, ""] = eqx.field(default_factory=lambda: jnp.asarray(5.0))
    quaternion_restoring_rate: Float[Array, ""] = eqx.field(default_factory=lambda: jnp.asarray(10.0))
    # flexible bodies: chains of rigid segments joined by beam elements (spatial/beams.py)
    beam_chains: tuple[BeamChain, ...] = ()
    # "from_drivers": the velocities closest to ``initial_velocity_targets`` (zero when None)
    # that satisfy the ideal joints, drivers and rigid flexible bodies; "zero": at rest
    initial_velocities: str = eqx.field(static=True, default="from_drivers")
    initial_velocity_targets: Float[Array, " velocities"] | None = None  # (v, w) per body, ground frame (m/s, rad/s)
    # "configured": journals at ``initial_eccentricity``; "static": seated under the initial loads
    initial_clearance: str = eqx.field(static=True, default="configured")
    # "undeformed": flexible bodies straight; "static": in their static deflected shape at t = 0
    initial_deformation: str = eqx.field(static=True, default="undeformed")
    body_names: tuple[str, ...] = eqx.field(static=True, default=())
    joint_names: tuple[str, ...] = eqx.field(static=True, default=())
    clearance_names: tuple[str, ...] = eqx.field(static=True, default=())
    driver_names: tuple[str, ...] = eqx.field(static=True, default=())
    # rows of the constraint vector kept (None: all); set by ``without_redundant_rows``
    kept_rows: tuple[int, ...] | None = eqx.field(static=True, default=None)
    # the rows the ideal twin keeps (its clearance joints made ideal often close a loop
    # redundantly); set at build time, used by ``idealised``
    ideal_kept_rows: tuple[int, ...] | None = eqx.field(static=True, default=None)
    # the metrics count t >= metrics_window.start(drivers) (s); model/window.py
    metrics_window: MetricsWindow = eqx.field(default_factory=MetricsWindow)

    @property
    def num_bodies(self) -> int:
        return self.masses.shape[-1]

    @property
    def memory_size(self) -> int:
        """One impact memory per slice and per spherical joint."""
        return sum(j.slices for j in self.cylindrical_joints) + len(self.spherical_joints)

    @property
    def clearance_joints(self) -> tuple:
        return self.cylindrical_joints + self.spherical_joints

    def idealised(self, with_offsets: bool = False) -> "SpatialMechanism":
        """Clearance joints replaced by ideal ones: a cylindrical clearance joint by a
        cylindrical joint (``axial_fixed``: a revolute joint), a spherical one by a
        spherical joint, keeping the independent rows found at build time
        (``ideal_kept_rows``). ``with_offsets`` keeps the initial eccentricities and a
        cylindrical journal's initial tilt."""
        extra = []
        for joint in self.cylindrical_joints:
            offset = joint.initial_eccentricity[0] * joint.bearing_u + joint.initial_eccentricity[1] * joint.bearing_w
            axis, reference = joint.tilted_bearing_frame() if with_offsets else (joint.bearing_axis, joint.bearing_u)
            extra.append(SpatialJoint(
                "revolute" if joint.axial_fixed else "cylindrical", joint.bearing_body, joint.journal_body,
                joint.bearing_point, joint.journal_point, axis, joint.journal_axis,
                reference, joint.bearing_u, jnp.array([1.0, 0.0, 0.0, 0.0]),
                offset if with_offsets else jnp.zeros(3), ))
        for joint in self.spherical_joints:
            extra.append(SpatialJoint(
                "spherical", joint.socket_body, joint.ball_body, joint.socket_point, joint.ball_point,
                jnp.array([0.0, 0.0, 1.0]), jnp.array([0.0, 0.0, 1.0]), jnp.array([1.0, 0.0, 0.0]),
                jnp.array([1.0, 0.0, 0.0]), jnp.array([1.0, 0.0, 0.0, 0.0]),
                joint.initial_eccentricity if with_offsets else jnp.zeros(3)))
        return dataclasses.replace(self, joints=self.joints + tuple(extra), cylindrical_joints=(),
                                   spherical_joints=(), clearance_names=(), kept_rows=self.ideal_kept_rows,
                                   ideal_kept_rows=None)

    def initial_state(self):
        from .dynamics import initial_state

        return initial_state(self)

    def flatten(self, state):
        from .dynamics import flatten_state

        return flatten_state(state)

    def unflatten(self, flat):
        from .dynamics import unflatten_state

        return unflatten_state(flat, self.num_bodies, self.memory_size)

    @traced_once
    def flat_vector_field(self, t, flat):
        from .dynamics import flat_vector_field

        return flat_vector_field(t, flat, self)

    @traced_once
    def project(self, t, flat, iterations=1):
        from .dynamics import flat_projection

        return flat_projection(t, flat, self, iterations)

    def body_accelerations(self, flat, flat_rate):
        # the rate of the velocities v = [rdot, omega] per body; rdot's is the acceleration
        return self.unflatten(flat_rate).v.reshape(-1, 2, 3)[:, 0, :]

    @traced_once
    def contact_kinematics(self, flat):
        from .forces import clearance_kinematics

        state = self.unflatten(flat)
        return clearance_kinematics(self, state.x, state.v)

    @traced_once
    def contact_values(self, flat):
        from .forces import contact_forces

        state = self.unflatten(flat)
        _, contact = contact_forces(self, state.x, state.v, state.impact_memory)
        return jnp.stack([contact.penetration, contact.normal_rate, contact.normal_force])
