"""A planar mechanism as data: bodies, joints, clearance joints and drivers.

Bodies are described in absolute coordinates ``q = [x_0, y_0, theta_0, x_1, ...]`` (m, rad)
of their centres of mass (Nikravesh). The joints are in ``joints.py``.

Everything a user may sweep, fit or optimise (masses, clearances, stiffnesses,
restitution, friction, speeds) is an array leaf, so a :class:`Mechanism` can be batched
with ``jax.vmap`` and differentiated with ``jax.grad``; the topology and the choice of laws
are static fields.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax.numpy as jnp
from jaxtyping import Array, Float

from . import forces
from .constraints import constraint_jacobian, constraint_rate, point_position, velocity_rhs
from .constraints import constraints as constraint_values
from .dynamics import constraint_correction, evaluate, project_positions
from .flexible import deformation_rate_rows
from .forces import body_omega, contact_normal_rates, normal_accelerations
from .absolute import AbstractAbsoluteMechanism
from .dynamics import State
from .start import seated_eccentricity
from .flexible import PointLoad
from .joints import GROUND as GROUND  # re-exported
from .joints import ClearanceJoint, Driver, FixedJoint, PrismaticJoint, RevoluteJoint

class Mechanism(AbstractAbsoluteMechanism):
    """A planar mechanism with any number of ideal and clearance joints.

    The per-dimension kernels of :class:`~model.mechanics.absolute.AbstractAbsoluteMechanism`
    are the pure functions of ``constraints.py``, ``forces.py`` and ``dynamics.py``.
    """

    dimension: ClassVar[int] = 2
    state_type: ClassVar[type] = State

    masses: Float[Array, " bodies"]  # kg
    inertias: Float[Array, " bodies"]  # kg m^2 about the centre of mass
    gravity: Float[Array, "2"]  # m/s^2
    initial_positions: Float[Array, " coords"]  # q at t = 0 (before projection)
    revolute_joints: tuple[RevoluteJoint, ...]
    prismatic_joints: tuple[PrismaticJoint, ...]
    fixed_joints: tuple[FixedJoint, ...]
    clearance_joints: tuple[ClearanceJoint, ...]
    drivers: tuple[Driver, ...]
    loads: tuple[PointLoad, ...] = ()  # point loads (model/mechanics/flexible.py)

    def idealised(self, with_offsets: bool = False) -> Mechanism:
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

    @property
    def second_order_size(self) -> int:
        """The coordinates: the flat state is ``[q, qd, impact memory, driver work]`` and
        ``dq/dt = qd``."""
        return self.initial_positions.shape[-1]

    @property
    def velocity_size(self) -> int:
        return self.initial_positions.shape[-1]

    @property
    def memory_size(self) -> int:
        """One impact memory per clearance joint."""
        return len(self.clearance_joints)

    def state_contact_kinematics(self, state: State) -> Float[Array, "2 joints"]:
        return forces.contact_kinematics(self, state.q, state.qd)

    def state_contact_values(self, state: State) -> Float[Array, "3 joints"]:
        return forces.contact_values(self, state.q, state.qd, state.impact_memory)

    def seat_joints(self, positions, reactions) -> tuple[Mechanism, tuple]:
        """Each journal displaced along the force it presses on the bearing with, so far
        that the elastic contact force carries it
        (:func:`model.mechanics.start.seated_eccentricity`); no report."""
        joints = tuple(dataclasses.replace(joint, initial_eccentricity=seated_eccentricity(
            joint.contact_law(), joint.clearance, -reaction[:2], joint.initial_eccentricity))
            for joint, reaction in zip(self.clearance_joints, reactions))
        return dataclasses.replace(self, clearance_joints=joints, initial_positions=positions), ()

    @property
    def first_pin(self) -> int:
        """The pins follow the revolute joints (:meth:`idealised`)."""
        return len(self.revolute_joints)

    def ideal_joint_rows(self, positions, t, multipliers):
        """Revolute and prismatic joints two rows each, fixed joints three."""
        joints = ([(joint, 2) for joint in self.revolute_joints + self.prismatic_joints]
                  + [(joint, 3) for joint in self.fixed_joints])
        return joints, constraint_jacobian(self, positions, t), multipliers

    def position_rate(self, positions, velocities):
        return velocities

    def driver_rate(self, positions, velocities, driver):
        joint = self.revolute_joints[driver.joint]
        return body_omega(velocities, joint.body_j) - body_omega(velocities, joint.body_i)

    def retract(self, positions, step):
        return positions + step

    # the kernels that are functions of (mechanism, ...) already; constraints.py:
    constraint_values, constraint_rate = constraint_values, constraint_rate
    constraint_jacobian, velocity_rhs = constraint_jacobian, velocity_rhs
    point_position = staticmethod(point_position)
    # dynamics.py, forces.py, flexible.py (the deformation rates of one chain):
    evaluate, constraint_correction, project_positions = evaluate, constraint_correction, project_positions
    contact_normal_rates, contact_normal_accelerations = contact_normal_rates, normal_accelerations
    deformation_rate_rows = staticmethod(deformation_rate_rows)
