"""What every layer above the engines needs from a mechanism, planar or spatial.

:func:`model.simulate`, the refilling-lane ensemble, the free-flight step bound, the
non-finite step guard, the exact peak tracking, the metrics, sweeps, fits and designs step
one flat state vector and read a mechanism through :class:`AbstractMechanism` only, so one
implementation of each serves the planar absolute-coordinate
:class:`~model.mechanics.mechanism.Mechanism`, the spatial
:class:`~model.mechanics.spatial.SpatialMechanism` and the joint-coordinate
:class:`~model.mechanics.tree.TreeMechanism`.

The contract is data (``eqx.AbstractVar`` fields every mechanism carries: masses, drivers,
clearance joints, names, metrics window) and staged pure functions over it, in the manner
of MuJoCo MJX (the model a pytree, each stage a function of model and state): an engine
writes the per-dimension kernels (:meth:`AbstractMechanism.vector_field`,
:meth:`~AbstractMechanism.project_state`, the contact rows, the state layout) and inherits
the flat-vector methods the integrators call. The two absolute-coordinate engines share
their vector field, joint reactions and start (projection, start velocities, seat, static
shape) in :class:`model.mechanics.absolute.AbstractAbsoluteMechanism`.

The methods a solve evaluates many times (the vector field, the projection, the contact
kinematics and values) are :func:`traced_once`: one compiled program calls each of them
from several places (the solver's stages, its first-same-as-last start, the peak tracking,
the projection), and diffrax traces its step three times (twice to learn the loop state's
structure, ``eqx.filter_eval_shape``, then for the loop itself).
"""

import abc
from collections.abc import Callable
from typing import ClassVar

import equinox as eqx
from equinox import AbstractVar
from jaxtyping import Array, Float, PyTree

from ..window import MetricsWindow


def traced_once(method: Callable) -> Callable:
    """``method`` as a nested ``eqx.filter_jit``: traced once per mechanism structure and
    argument shapes, its jaxpr reused by every later call in the same process (and lowered
    once per program) instead of traced again at each call site. The numbers are the
    same: XLA inlines the nested call. Python scalars among the arguments (``iterations``)
    are static."""
    return eqx.filter_jit(method)


class AbstractMechanism(eqx.Module):
    """A mechanism the integrators can solve (see the module docstring).

    The state is a pytree of the mechanism's own kind (its coordinates, their rates, one
    impact memory per contact slot, the drivers' work); the integrators step it as the
    flat vector of :meth:`flatten`.
    """

    dimension: ClassVar[int]  # 2: planar, 3: spatial

    masses: AbstractVar[Float[Array, " bodies"]]  # kg, per body
    # ``bodies``, ``clearance``, ``contact``, ``stiffness()`` each (model/mechanics/joints.py)
    clearance_joints: AbstractVar[tuple]
    drivers: AbstractVar[tuple]  # ``joint``, ``kind``, ``speed`` (rad/s), ``torque`` (N m) each
    metrics_window: AbstractVar[MetricsWindow]  # the time window of the summary metrics
    body_names: AbstractVar[tuple[str, ...]]
    clearance_names: AbstractVar[tuple[str, ...]]
    driver_names: AbstractVar[tuple[str, ...]]
    joint_names: AbstractVar[tuple[str, ...]]  # the ideal joints' names, in constraint order

    @property
    def num_bodies(self) -> int:
        """The moving bodies."""
        return self.masses.shape[-1]

    @property
    def second_order_size(self) -> int | None:
        """``n`` when the flat state begins with ``n`` positions whose time derivatives are
        exactly its next ``n`` entries (``[q, dq/dt, ...]``), so that a linearly implicit
        solver may eliminate the positions from its linear systems; ``None`` (here) when
        the layout is otherwise (e.g. quaternions against angular velocities)."""
        return None

    def metrics_start(self) -> Float[Array, ""]:
        """Start (s) of the window the summary metrics count (``self.metrics_window``,
        :class:`model.window.MetricsWindow`; 0 by default)."""
        return self.metrics_window.start(self.drivers)

    @property
    def constrained(self) -> bool:
        """Whether the state carries constraint rows it can drift from (the ideal joints of
        an absolute-coordinate description), so that a solve projects each step's end back
        onto them (:meth:`project`); ``True`` here."""
        return True

    # -- per-engine kernels on the mechanism's own state --------------------------------

    @abc.abstractmethod
    def initial_state(self) -> PyTree:
        """The consistent initial state at ``t = 0``."""

    @abc.abstractmethod
    def flatten(self, state: PyTree) -> Float[Array, "... n"]:
        """``state`` as one vector (leading batch axes kept)."""

    @abc.abstractmethod
    def unflatten(self, flat: Float[Array, "... n"]) -> PyTree:
        """Inverse of :meth:`flatten` (leading batch axes kept)."""

    @abc.abstractmethod
    def vector_field(self, t, state: PyTree) -> PyTree:
        """``d state / dt`` at time ``t`` (s): the equations of motion."""

    @abc.abstractmethod
    def project_state(self, t, state: PyTree, iterations: int = 1) -> PyTree:
        """``state`` moved back onto the ideal joints' constraints at time ``t`` (s):
        ``iterations`` Gauss-Newton steps on the positions, then one linear projection of
        the velocities, in the mass matrix's metric (Bayo & Ledesma 1996; Blajer 2002)."""

    @abc.abstractmethod
    def state_contact_values(self, state: PyTree) -> Float[Array, "3 joints"]:
        """``[penetration (m), normal rate (m/s), normal force (N)]`` per clearance joint
        at ``state``: for a joint with several contact slots (a sliced cylinder), the
        deepest slot's penetration and rate and the resultant force."""

    @abc.abstractmethod
    def state_contact_kinematics(self, state: PyTree) -> Float[Array, "2 joints"]:
        """The first two rows of :meth:`state_contact_values`, without the forces."""

    @abc.abstractmethod
    def body_accelerations(self, flat: Float[Array, " n"], flat_rate: Float[Array, " n"]
                           ) -> Float[Array, "bodies dimension"]:
        """Every body's centre-of-mass acceleration (m/s^2, ground frame) at the flat state
        ``flat`` whose time derivative (:meth:`flat_vector_field`) is ``flat_rate``."""

    # -- what the integrators call, on the flat state: once for every engine -----------

    @traced_once
    def flat_vector_field(self, t, flat: Float[Array, " n"]) -> Float[Array, " n"]:
        """``d flat / dt``: :meth:`vector_field` on :meth:`flatten` vectors.

        One array instead of a pytree of four or five leaves makes every stage
        combination, error norm and interpolation of a step one XLA kernel instead of
        several; on a CPU, where a step's cost is kernel launches, that was 9 % of a
        refilling-lanes sweep (32 lanes, Flores)."""
        return self.flatten(self.vector_field(t, self.unflatten(flat)))

    @traced_once
    def project(self, t, flat: Float[Array, " n"], iterations: int = 1) -> Float[Array, " n"]:
        """:meth:`project_state` on :meth:`flatten` vectors."""
        return self.flatten(self.project_state(t, self.unflatten(flat), iterations))

    @traced_once
    def contact_kinematics(self, flat: Float[Array, " n"]) -> Float[Array, "2 joints"]:
        """``[penetration (m), normal rate (m/s)]`` per clearance joint at the flat state
        (:meth:`state_contact_kinematics`): what the free-flight step bound reads."""
        return self.state_contact_kinematics(self.unflatten(flat))

    @traced_once
    def contact_values(self, flat: Float[Array, " n"]) -> Float[Array, "3 joints"]:
        """:meth:`contact_kinematics` and, as a third row, the joint's normal force (N)
        (:meth:`state_contact_values`)."""
        return self.state_contact_values(self.unflatten(flat))


def flat_vector_field(t, flat: Float[Array, " n"], mechanism: AbstractMechanism) -> Float[Array, " n"]:
    """:meth:`AbstractMechanism.flat_vector_field` in diffrax's ``(t, y, args)`` signature."""
    return mechanism.flat_vector_field(t, flat)


def vector_field(t, state: PyTree, mechanism: AbstractMechanism) -> PyTree:
    """:meth:`AbstractMechanism.vector_field` in diffrax's ``(t, y, args)`` signature."""
    return mechanism.vector_field(t, state)


def initial_state(mechanism: AbstractMechanism) -> PyTree:
    """:meth:`AbstractMechanism.initial_state`: the consistent state of ``mechanism`` at ``t = 0``."""
    return mechanism.initial_state()
