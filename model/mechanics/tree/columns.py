"""How a tree's Jacobian splits at its childless free joints, in the plane and in space.

A free joint whose body has no children (:func:`~.topology.decoupled_joints`: a flexible
body's segment held by beam elements only, a rocker held by clearance joints only, a ball
in its socket) moves its one body in the ground frame, its velocities the body's own
(planar ``(xdot, ydot, thetadot)``, spatial the twist). Its columns of ``J`` are an
identity block on its body's rows and its block of ``H = J^T M J`` is its body's mass
matrix (planar ``diag(m, m, I)``, spatial ``diag(m I_3, R J R^T)``), coupled to nothing
else. So ``J`` is the coupled block ``J_c`` (the recursion's, the other velocities'
columns on the other bodies' rows) and identity blocks, up to the order of rows and
columns, and ``H`` is block diagonal: its coupled block is factorised by
:func:`~model.mechanics.linalg.spd_solve` and the free joints' blocks inverted directly
(Golub & Van Loan 2013, §4.2: a block-diagonal system is as many independent ones).
Only the products with ``J_c`` and the inverse of a body's mass matrix differ between
the dimensions; they are passed in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from ..linalg import spd_solve
from .topology import Topology, coupled_rates, decoupled_joints


class Columns(NamedTuple):
    """How ``J`` splits (static): the childless free joints' velocities and bodies and the
    other (coupled) velocities and bodies, with their rows (``per`` rows a body: 3 planar,
    6 spatial)."""

    per: int  # rows (and a free joint's velocities) per body
    coupled: np.ndarray  # the coupled velocities
    coupled_bodies: np.ndarray  # the bodies they move
    coupled_rows: np.ndarray  # those bodies' rows
    free: np.ndarray  # the free joints' velocities
    free_bodies: np.ndarray  # the free joints' bodies
    free_rows: np.ndarray  # those bodies' rows
    velocities: np.ndarray  # [coupled, free] back in the order of the velocities
    rows: np.ndarray  # [coupled_rows, free_rows] back in the order of the rows


def tree_columns(topology: Topology, num_bodies: int, sizes: dict[str, tuple[int, int]]) -> Columns:
    """:class:`Columns` of the tree ``topology`` of ``num_bodies`` bodies (``sizes``:
    :data:`~.topology.PLANAR_SIZES` or :data:`~.topology.SPATIAL_SIZES`)."""
    per = sizes["free"][1]
    joints = decoupled_joints(topology)
    index = lambda values: np.asarray(values, dtype=int)  # noqa: E731
    body_rows = lambda bodies: (per * bodies[:, None] + np.arange(per)).reshape(-1)  # noqa: E731
    free_bodies = index([joint.body for joint in joints])
    coupled_bodies = index([b for b in range(num_bodies) if b not in set(free_bodies.tolist())])
    coupled, free = index(coupled_rates(topology, sizes)), index([j.rate + k for j in joints for k in range(per)])
    coupled_rows, free_rows = body_rows(coupled_bodies), body_rows(free_bodies)
    return Columns(per, coupled, coupled_bodies, coupled_rows, free, free_bodies, free_rows,
                   np.argsort(np.concatenate([coupled, free])), np.argsort(np.concatenate([coupled_rows, free_rows])))


def split(columns: Columns, values, by_rows: bool):
    """``values`` (velocities or, ``by_rows``, the bodies' rows first) as
    ``(coupled part, free part)``."""
    if by_rows:
        return values[columns.coupled_rows], values[columns.free_rows]
    return values[columns.coupled], values[columns.free]


def coupled_block(columns: Columns, jacobian):
    """``J_c``: the coupled bodies' rows of a recursion's ``jacobian`` whose columns are the
    coupled velocities."""
    return jacobian if not columns.free.size else split(columns, jacobian, True)[0]


def jacobian_times(columns: Columns, coupled_jacobian, rates, times: Callable):
    """``J rates`` (``rates``: velocities x ...), with ``times(J_c, values) = J_c @ values``."""
    if not columns.free.size:
        return times(coupled_jacobian, rates)
    coupled, free = split(columns, rates, False)
    return jnp.concatenate([times(coupled_jacobian, coupled), free])[columns.rows]


def jacobian_transpose_times(columns: Columns, coupled_jacobian, values, transpose_times: Callable):
    """``J^T values`` (``values``: the bodies' rows x ...), with
    ``transpose_times(J_c, rows) = J_c^T @ rows``."""
    if not columns.free.size:
        return transpose_times(coupled_jacobian, values)
    coupled, free = split(columns, values, True)
    return jnp.concatenate([transpose_times(coupled_jacobian, coupled), free])[columns.velocities]


def block_diagonal_solve(columns: Columns, coupled_inertia, free_solve: Callable, rhs):
    """``H^-1 rhs`` (``rhs``: velocities x ...): the coupled block ``coupled_inertia`` by
    :func:`~model.mechanics.linalg.spd_solve` and the free joints' part by ``free_solve``
    (their bodies' mass matrices inverted, on the free rows of ``rhs`` in the order of
    ``columns.free_bodies``), so the factorised system is the size of the coupled
    velocities."""
    if not columns.free.size:
        return spd_solve(coupled_inertia, rhs)
    coupled, free = split(columns, rhs, False)
    if columns.coupled.size:
        coupled = spd_solve(coupled_inertia, coupled)
    return jnp.concatenate([coupled, free_solve(free)])[columns.velocities]
