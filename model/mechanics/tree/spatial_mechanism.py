"""A spatial rigid mechanism integrated in the joint coordinates of its kinematic tree.

:class:`SpatialTreeMechanism` is :class:`~.mechanism.TreeMechanism` (the wrapper of an
absolute description with its static topology, the parameters read from it, no
constraint rows, the state ``[z, zd, impact memory, driver work, prescribed angles]``) on
a :class:`~model.mechanics.spatial.SpatialMechanism`, with the spatial kernels of
:mod:`.spatial_kinematics` and :mod:`.spatial_dynamics`. Its coordinates ``z`` hold unit
quaternions (spherical, axial and free joints), whose rates are not the velocities ``zd``
(:func:`~.spatial_kinematics.coordinate_rate`).
"""

from __future__ import annotations

from typing import ClassVar

from jaxtyping import Array, Float

from ..absolute import Evaluation
from ..spatial.dynamics import SpatialState
from .dynamics import TreeState, prescribed_rates
from .mechanism import TreeMechanism
from .outputs import absolute_outputs
from .spatial_dynamics import absolute_state, body_accelerations, evaluate, project_state, vector_field
from .spatial_kinematics import joint_coordinates, joint_velocities
from .topology import UnsupportedMechanism


class SpatialTreeMechanism(TreeMechanism):
    """``absolute`` (a :class:`~model.mechanics.spatial.SpatialMechanism`) integrated in
    joint coordinates (see the module docstring)."""

    dimension: ClassVar[int] = 3

    @property
    def second_order_size(self) -> int | None:
        """The free coordinates when each is its velocity's integral (no quaternion among
        them); ``None`` otherwise."""
        return self.topology.size if self.topology.size == self.topology.rate_size else None

    def initial_state(self) -> TreeState:
        """The absolute engine's consistent initial state (:meth:`~model.mechanics.absolute.AbstractAbsoluteMechanism.initial_state`)
        in joint coordinates: the inverse kinematics of its positions and the tree's
        velocities whose twists are its velocities."""
        start = self.absolute.initial_state()
        z, p = joint_coordinates(self.absolute, self.topology, start.x)
        zd = joint_velocities(self.absolute, self.topology, z, p, start.v, prescribed_rates(self.absolute, self.topology))
        return TreeState(z, zd, start.impact_memory, start.driver_work, p)

    def vector_field(self, t, state: TreeState) -> TreeState:
        return vector_field(self.absolute, self.topology, state)

    def project_state(self, t, state: TreeState, iterations: int = 1) -> TreeState:
        """``state`` onto the cut joints' independent rows
        (:func:`~.spatial_dynamics.project_state`); the identity without cuts."""
        return project_state(self.absolute, self.topology, state, iterations)

    def idealised(self, with_offsets: bool = False):
        """The ideal-joint twin (:meth:`~model.mechanics.spatial.SpatialMechanism.idealised`)
        on this engine, the loops its clearance joints made ideal close cut; on the absolute
        engine where the joint engine does not apply (:func:`~.mechanism_tree.tree_topology`)."""
        try:
            return super().idealised(with_offsets)
        except UnsupportedMechanism:
            return self.absolute.idealised(with_offsets)

    def outputs(self, t, state: TreeState) -> tuple[SpatialState, Evaluation]:
        """As the planar tree's :meth:`~.mechanism.TreeMechanism.outputs`: the absolute state
        and the twists' rates, contact state, driver torques, every ideal joint's rows'
        multipliers and the constraint violation at time ``t`` (s)."""
        out = evaluate(self.absolute, self.topology, state)
        return (SpatialState(out.x, out.v, state.impact_memory, state.driver_work),
                absolute_outputs(self.absolute, t, out.x, out.vdot, out.contact, out.driver_torques, out.joint_forces))

    def state_absolute(self, state: TreeState) -> SpatialState:
        return absolute_state(self.absolute, self.topology, state)

    def body_accelerations(self, flat: Float[Array, " n"], flat_rate: Float[Array, " n"]
                           ) -> Float[Array, "bodies 3"]:
        return body_accelerations(self.absolute, self.topology, self.unflatten(flat), self.unflatten(flat_rate))

