"""A spatial mechanism as data: rigid bodies, ideal joints, clearance joints, loads, drivers.

Coordinates per body ``b`` (absolute, Nikravesh 1988 ch. 6): position ``r_b`` (m) of the
centre of mass and a unit quaternion ``p_b`` (scalar first) in ``x = [r_0, p_0, r_1, ...]``
(7 per body); velocities ``v = [rdot_0, omega_0, ...]`` (6 per body) with ``omega`` in the
ground frame. The joints are in ``joints.py``.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from ...geometry.quaternion import rotation_matrix
from ..absolute import AbstractAbsoluteMechanism
from . import forces
from .beams import deformation_rate_rows
from .constraints import (ROWS, all_constraints, body_pose, body_twist, constraint_jacobian, constraint_rate,
                          point_position, position_rate, velocity_rhs)
from .dynamics import SpatialState, constraint_correction, evaluate, project_positions, retract_small, seat_joints
from .forces import contact_normal_accelerations, contact_normal_rates
from .joints import GROUND as GROUND  # re-exported
from .joints import POSITION_SIZE as POSITION_SIZE  # re-exported
from .joints import (VELOCITY_SIZE, CylindricalClearanceJoint, Load, SpatialDriver, SpatialJoint,
                     SphericalClearanceJoint)

class SpatialMechanism(AbstractAbsoluteMechanism):
    """A spatial mechanism of rigid bodies with ideal and clearance joints.

    The per-dimension kernels of :class:`~model.mechanics.absolute.AbstractAbsoluteMechanism`
    are the pure functions of ``constraints.py``, ``forces.py``, ``beams.py`` and
    ``dynamics.py``.
    """

    dimension: ClassVar[int] = 3
    state_type: ClassVar[type] = SpatialState

    masses: Float[Array, " bodies"]
    inertias: Float[Array, "bodies 3 3"]  # body-frame inertia tensors about the centre of mass
    gravity: Float[Array, "3"]
    initial_positions: Float[Array, " coords"]
    joints: tuple[SpatialJoint, ...]
    cylindrical_joints: tuple[CylindricalClearanceJoint, ...]
    spherical_joints: tuple[SphericalClearanceJoint, ...]
    loads: tuple[Load, ...]
    drivers: tuple[SpatialDriver, ...]
    quaternion_restoring_rate: Float[Array, ""] = eqx.field(default_factory=lambda: jnp.asarray(10.0))
    # rows of the constraint vector kept (None: all); set by ``without_redundant_rows``
    kept_rows: tuple[int, ...] | None = eqx.field(static=True, default=None)
    # the rows the ideal twin keeps (its clearance joints made ideal often close a loop
    # redundantly); set at build time, used by ``idealised``
    ideal_kept_rows: tuple[int, ...] | None = eqx.field(static=True, default=None)

    @property
    def memory_size(self) -> int:
        """One impact memory per slice and per spherical joint."""
        return sum(j.slices for j in self.cylindrical_joints) + len(self.spherical_joints)

    @property
    def clearance_joints(self) -> tuple:
        return self.cylindrical_joints + self.spherical_joints

    def idealised(self, with_offsets: bool = False) -> SpatialMechanism:
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

    @property
    def velocity_size(self) -> int:
        return VELOCITY_SIZE * self.num_bodies

    def state_contact_kinematics(self, state: SpatialState) -> Float[Array, "2 joints"]:
        return forces.clearance_kinematics(self, state.x, state.v)

    def state_contact_values(self, state: SpatialState) -> Float[Array, "3 joints"]:
        _, contact = forces.contact_forces(self, state.x, state.v, state.impact_memory)
        return jnp.stack([contact.penetration, contact.normal_rate, contact.normal_force])

    def retract(self, positions, step):
        return retract_small(positions, step, self.num_bodies)

    @property
    def first_pin(self) -> int:
        """The ideal twins of the clearance joints follow the ideal joints (:meth:`idealised`)."""
        return len(self.joints)

    def ideal_joint_rows(self, positions, t, multipliers):
        """Every row of every joint (``constraints.ROWS``), the redundant ones restored."""
        jacobian = constraint_jacobian(dataclasses.replace(self, kept_rows=None), positions, t)
        if self.kept_rows is not None:
            full = jnp.zeros(jacobian.shape[0], positions.dtype)
            multipliers = full.at[jnp.asarray(self.kept_rows, dtype=int)].set(multipliers)
        return [(joint, ROWS[joint.kind]) for joint in self.joints], jacobian, multipliers

    def driver_rate(self, positions, velocities, driver):
        """About the joint's axis on body ``i``."""
        joint = self.joints[driver.joint]
        axis = rotation_matrix(body_pose(positions, joint.body_i)[1]) @ joint.axis_i
        return (body_twist(velocities, joint.body_j)[1] - body_twist(velocities, joint.body_i)[1]) @ axis

    # the kernels that are functions of (mechanism, ...) already; spatial/constraints.py:
    constraint_values, constraint_rate = all_constraints, constraint_rate
    constraint_jacobian, velocity_rhs = constraint_jacobian, velocity_rhs
    point_position, position_rate = staticmethod(point_position), position_rate
    # spatial/dynamics.py (the seat reports each cylindrical joint's CylinderSeat), forces.py:
    evaluate, constraint_correction, project_positions = evaluate, constraint_correction, project_positions
    seat_joints = seat_joints
    contact_normal_rates, contact_normal_accelerations = contact_normal_rates, contact_normal_accelerations
    # spatial/beams.py: the deformation rates of one chain
    deformation_rate_rows = staticmethod(deformation_rate_rows)
