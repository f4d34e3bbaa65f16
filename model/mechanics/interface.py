"""What the integrators need from a mechanism, planar or spatial.

:func:`model.simulate`, the refilling-lane ensemble, the free-flight step bound, the
non-finite step guard and the exact peak tracking step one flat state vector and read the
clearance joints through this interface only, so one implementation of each serves the
planar :class:`~model.mechanics.mechanism.Mechanism` and the spatial
:class:`~model.mechanics.spatial.SpatialMechanism`.

A mechanism also carries, as fields or properties used by the integrators:
``masses`` (kg, per body), ``drivers``, ``metrics_window`` (the time window of the summary
metrics), ``clearance_joints`` (each with ``bodies``, ``clearance``, ``contact`` and
``stiffness()``), and the names ``body_names``, ``clearance_names``.

The methods a solve evaluates many times (the vector field, the projection, the contact
kinematics and values) are :func:`traced_once`: one compiled program calls each of them
from several places (the solver's stages, its first-same-as-last start, the peak tracking,
the projection), and diffrax traces its step three times (twice to learn the loop state's
structure, ``eqx.filter_eval_shape``, then for the loop itself).
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import ClassVar

import equinox as eqx
from jaxtyping import Array, Float, PyTree


def traced_once(method: Callable) -> Callable:
    """``method`` as a nested ``eqx.filter_jit``: traced once per mechanism structure and
    argument shapes, its jaxpr reused by every later call in the same process (and lowered
    once per program) instead of traced again at each call site. The numbers are the
    same: XLA inlines the nested call. Python scalars among the arguments (``iterations``)
    are static."""
    return eqx.filter_jit(method)


class AbstractMechanism(eqx.Module):
    """A mechanism the integrators can solve (see the module docstring).

    The state is a pytree of the mechanism's own kind (its positions, velocities, one
    impact memory per contact slot and the drivers' work); the integrators step it as the
    flat vector of :meth:`flatten`.
    """

    dimension: ClassVar[int]  # 2: planar, 3: spatial

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
    def flat_vector_field(self, t, flat: Float[Array, " n"]) -> Float[Array, " n"]:
        """``d flat / dt``: the equations of motion on the flat state."""

    @abc.abstractmethod
    def project(self, t, flat: Float[Array, " n"], iterations: int = 1) -> Float[Array, " n"]:
        """The flat state moved back onto the ideal joints' constraints at time ``t`` (s):
        ``iterations`` Gauss-Newton steps on the positions, then one linear projection of
        the velocities, in the mass matrix's metric (Bayo & Ledesma 1996; Blajer 2002)."""

    @abc.abstractmethod
    def contact_kinematics(self, flat: Float[Array, " n"]) -> Float[Array, "2 joints"]:
        """``[penetration (m), normal rate (m/s)]`` per clearance joint: for a joint with
        several contact slots (a sliced cylinder), the deepest slot's."""

    @abc.abstractmethod
    def contact_values(self, flat: Float[Array, " n"]) -> Float[Array, "3 joints"]:
        """:meth:`contact_kinematics` and, as a third row, the joint's normal force (N)."""

    @abc.abstractmethod
    def body_accelerations(self, flat: Float[Array, " n"], flat_rate: Float[Array, " n"]
                           ) -> Float[Array, "bodies dimension"]:
        """Every body's centre-of-mass acceleration (m/s^2, ground frame) at the flat state
        ``flat`` whose time derivative (:meth:`flat_vector_field`) is ``flat_rate``."""


def flat_vector_field(t, flat: Float[Array, " n"], mechanism: AbstractMechanism) -> Float[Array, " n"]:
    """:meth:`AbstractMechanism.flat_vector_field` in diffrax's ``(t, y, args)`` signature."""
    return mechanism.flat_vector_field(t, flat)
