"""Redundant constraint rows: detection at build time and removal for the ideal twin.

A user-given constraint set is checked by the rank of ``Phi_v`` at the initial pose
(singular values above ``RANK_TOLERANCE`` times the largest); a rank deficiency is an error
naming the joints whose rows are dependent. The ideal twin of a clearance mechanism
(clearance joints replaced by ideal ones) is often redundant by construction (a spatial
revolute joint closing a planar loop repeats two out-of-plane rows); there the dependent
rows are dropped greedily in row order: a row is kept iff it raises the rank of the rows
kept so far. The kept set is exact for the pose where it is computed and stays valid as long
as the mechanism stays away from singular poses (the same assumption as the planar engine).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from .constraints import ROWS, constraint_jacobian

if TYPE_CHECKING:
    from .mechanism import SpatialMechanism

RANK_TOLERANCE = 1e-9


def _rank(matrix) -> int:
    if matrix.shape[0] == 0:
        return 0
    values = np.linalg.svd(np.asarray(matrix), compute_uv=False)
    return int(np.sum(values > RANK_TOLERANCE * max(values[0], 1.0)))


def independent_rows(jacobian) -> list[int]:
    """Greedy choice of linearly independent rows of ``jacobian`` (row order)."""
    jacobian = np.asarray(jacobian)
    kept = []
    for row in range(jacobian.shape[0]):
        if _rank(jacobian[kept + [row]]) == len(kept) + 1:
            kept.append(row)
    return kept


def row_owners(mechanism: SpatialMechanism) -> list[str]:
    """The joint (or driver) name of each constraint row."""
    names = list(mechanism.joint_names) + [f"joint {i}" for i in range(len(mechanism.joint_names), len(mechanism.joints))]
    owners = [names[i] for i, joint in enumerate(mechanism.joints) for _ in range(ROWS[joint.kind])]
    owners += [f"driver on {names[d.joint]}" for d in mechanism.drivers if d.kind == "constant_speed"]
    clearance = list(mechanism.clearance_names) + ["clearance joint"] * len(mechanism.cylindrical_joints)
    owners += [f"{clearance[i]} (axial)" for i, j in enumerate(mechanism.cylindrical_joints) if j.axial_fixed]
    return owners


def redundant_joints(mechanism: SpatialMechanism, x) -> list[str]:
    """Names of the joints owning dependent rows at pose ``x`` (empty when independent)."""
    jacobian = np.asarray(constraint_jacobian(mechanism, x, 0.0))
    kept = set(independent_rows(jacobian))
    owners = row_owners(mechanism)
    return sorted({owners[row] for row in range(jacobian.shape[0]) if row not in kept})


def without_redundant_rows(mechanism: SpatialMechanism, x) -> SpatialMechanism:
    """``mechanism`` with only independent constraint rows at pose ``x``."""
    full = dataclasses.replace(mechanism, kept_rows=None)
    rows = independent_rows(constraint_jacobian(full, x, 0.0))
    return dataclasses.replace(mechanism, kept_rows=tuple(rows))
