"""A planar mechanism integrated in the joint coordinates of its kinematic tree.

:class:`TreeMechanism` wraps the absolute description (:class:`~model.mechanics.mechanism.Mechanism`:
bodies, joints, clearance joints, drivers, every parameter an array leaf) with its static
:class:`~.topology.Topology`, and implements the integrators' interface
(:class:`~model.mechanics.interface.AbstractMechanism`) on the state
``[z, zd, impact memory, driver work, prescribed coordinates]``. Reading a parameter
(``masses``, ``clearance_joints``, ``body_names``, ...) reads the absolute description, so
the dotted-path setters of sweeps, fits and designs write the same leaves either way.
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
from jaxtyping import Array, Float

from ..absolute import Evaluation
from ..dynamics import State
from ..mechanism import Mechanism
from ..interface import AbstractMechanism
from .dynamics import (TreeState, absolute_state, evaluate, flatten_state, prescribed_rates, project_state,
                       unflatten_state, vector_field)
from .kinematics import joint_coordinates, tree_motion
from .mechanism_tree import tree_topology
from .outputs import absolute_outputs
from .topology import Topology


class TreeMechanism(AbstractMechanism):
    """``absolute`` integrated in joint coordinates (see the module docstring).

    The only constraint rows are the cut joints' (ideal joints that close loops,
    :attr:`Topology.cuts`): without them :meth:`project` returns the state unchanged. The
    outputs (trajectories, joint reactions) come from the tree's own evaluation
    (:meth:`outputs`), in the absolute description's form; the ideal-joint twin
    (:meth:`idealised`) is again a :class:`TreeMechanism`, its closed loops cut.
    """

    dimension: ClassVar[int] = 2

    absolute: Mechanism
    topology: Topology = eqx.field(static=True)

    # the interface's data: the absolute description's
    masses = property(lambda self: self.absolute.masses)
    clearance_joints = property(lambda self: self.absolute.clearance_joints)
    drivers = property(lambda self: self.absolute.drivers)
    metrics_window = property(lambda self: self.absolute.metrics_window)
    body_names = property(lambda self: self.absolute.body_names)
    clearance_names = property(lambda self: self.absolute.clearance_names)
    driver_names = property(lambda self: self.absolute.driver_names)
    joint_names = property(lambda self: self.absolute.joint_names)

    def __getattr__(self, name: str):
        # parameters and names of the absolute description; never private names, which
        # jax and equinox probe for protocols
        if name.startswith("_") or name in ("absolute", "topology"):
            raise AttributeError(name)
        return getattr(self.absolute, name)

    @property
    def second_order_size(self) -> int:
        """The free joint coordinates: the flat state begins ``[z, zd, ...]``."""
        return self.topology.size

    @property
    def constrained(self) -> bool:
        """Whether there are cut joints: a tree's joint coordinates satisfy its own joints
        by construction, so without cuts a solve does not project (nor re-evaluate the
        field after a projection); with cuts it projects onto their rows."""
        return bool(self.topology.cuts)

    def idealised(self, with_offsets: bool = False) -> "TreeMechanism":
        """The ideal-joint twin (every clearance joint an ideal revolute joint, with
        ``with_offsets`` held at its initial eccentricity) on this engine: the pins that
        close loops are cut (:func:`~.mechanism_tree.tree_topology`)."""
        twin = self.absolute.idealised(with_offsets)
        return type(self)(twin, tree_topology(twin))

    def _sizes(self) -> tuple[int, int, int, int]:
        return (self.topology.size, self.absolute.memory_size, len(self.topology.speed_drivers),
                self.topology.rate_size)

    def initial_state(self) -> TreeState:
        """The absolute engine's consistent initial state (positions projected onto the
        joints with each clearance joint held ideal at its initial eccentricity, velocities
        from the drivers) in joint coordinates."""
        start = self.absolute.initial_state()
        (z, p), (zd, _) = jax.jvp(lambda q: joint_coordinates(self.absolute, self.topology, q), (start.q,),
                                  (start.qd,))
        return TreeState(z, zd, start.impact_memory, start.driver_work, p)

    def flatten(self, state: TreeState) -> Float[Array, "... n"]:
        return flatten_state(state)

    def unflatten(self, flat: Float[Array, "... n"]) -> TreeState:
        return unflatten_state(flat, *self._sizes())

    def vector_field(self, t, state: TreeState) -> TreeState:
        return vector_field(self.absolute, self.topology, state)

    def project_state(self, t, state: TreeState, iterations: int = 1) -> TreeState:
        """``state`` onto the cut joints' rows (:func:`~.dynamics.project_state`); the
        identity without cuts (a tree's coordinates satisfy its joints by construction)."""
        return project_state(self.absolute, self.topology, state, iterations)

    def project(self, t, flat: Float[Array, " n"], iterations: int = 1) -> Float[Array, " n"]:
        """:meth:`project_state` on the flat state; without cuts the identity, without the
        round trip through the state."""
        if not self.topology.cuts:
            return flat
        return self.flatten(self.project_state(t, self.unflatten(flat), iterations))

    def absolute_state(self, flat: Float[Array, " n"]) -> State:
        """The absolute coordinates, velocities, impact memory and driver work of ``flat``."""
        return self.state_absolute(self.unflatten(flat))

    def state_absolute(self, state: TreeState) -> State:
        """:meth:`absolute_state` of the state pytree."""
        return absolute_state(self.absolute, self.topology, state)

    def outputs(self, t, state: TreeState) -> tuple[State, Evaluation]:
        """The absolute state of ``state`` and what a trajectory reports there at time ``t``
        (s), from the tree's evaluation (:func:`~.outputs.absolute_outputs`): the absolute
        accelerations, contact state, driver torques, the multipliers of every ideal
        joint's rows and the constraint violation."""
        out = evaluate(self.absolute, self.topology, state)
        return (State(out.q, out.qd, state.impact_memory, state.driver_work),
                absolute_outputs(self.absolute, t, out.q, out.qdd, out.contact, out.driver_torques, out.joint_forces))

    def state_contact_kinematics(self, state: TreeState) -> Float[Array, "2 joints"]:
        return self.absolute.state_contact_kinematics(self.state_absolute(state))

    def state_contact_values(self, state: TreeState) -> Float[Array, "3 joints"]:
        return self.absolute.state_contact_values(self.state_absolute(state))

    def body_accelerations(self, flat: Float[Array, " n"], flat_rate: Float[Array, " n"]
                           ) -> Float[Array, "bodies 2"]:
        # qdd = J zdd + c by the recursion (the speed drivers' pdd is zero)
        state, rate = self.unflatten(flat), self.unflatten(flat_rate)
        qdd = tree_motion(self.absolute, self.topology, state.z, state.zd, state.prescribed,
                          prescribed_rates(self.absolute, self.topology), zdd=rate.zd, order=1).convective
        return qdd.reshape(-1, 3)[:, :2]
