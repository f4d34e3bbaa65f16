"""What a simulation reports of a state on the joint-coordinate engine, from the tree's own
evaluation: the record of :class:`~model.mechanics.absolute.Evaluation` (accelerations,
contact state, driver torques, the multipliers of every ideal joint and the constraint
violation) over the absolute description the tree wraps.

The multipliers of the description's constraint rows (every ideal joint, tree and cut
alike, the speed drivers, a spatial cylindrical clearance joint's axial hold; the kept
rows where redundant ones were removed) follow from the equations of motion in absolute
coordinates, ``M a - Q = -Phi_v^T lambda`` (Nikravesh 1988, §6), with the tree's
accelerations ``a`` (its evaluation's ``joint_forces``, ``M a - Q``): ``Phi_v^T`` has
independent columns and ``M a - Q`` lies in their span (the tree's generalised forces
``J^T (M a - Q)`` are those of its cut joints' rows alone), so ``lambda`` is the unique
solution of the least-squares problem ``min |Phi_v^T lambda + (M a - Q)|``, solved by its
normal equations (Golub & Van Loan 2013, §5.3). The only Baumgarte (1972) terms in them are
those of the tree's accelerations, on its cut rows; at a state on the joints the
multipliers are the absolute engine's.
"""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, Float

from ...geometry.vectors import times_transpose
from ..absolute import AbstractAbsoluteMechanism, Evaluation
from ..linalg import spd_solve


def ideal_joint_multipliers(description: AbstractAbsoluteMechanism, positions, t,
                            joint_forces: Float[Array, " velocities"]) -> Float[Array, " m"]:
    """``lambda`` (N, N m) of ``Phi_v^T lambda = -joint_forces`` over the constraint rows of
    ``description`` at ``positions`` and time ``t`` (s), ``joint_forces = M a - Q`` (N, N m;
    see the module docstring)."""
    jacobian = description.constraint_jacobian(positions, t)
    if not jacobian.shape[0]:
        return jnp.zeros((0,), positions.dtype)
    return -spd_solve(times_transpose(jacobian, jacobian), jacobian @ joint_forces)


def absolute_outputs(description: AbstractAbsoluteMechanism, t, positions, acceleration, contact,
                     driver_torques: Float[Array, " drivers"], joint_forces: Float[Array, " velocities"]
                     ) -> Evaluation:
    """The :class:`~model.mechanics.absolute.Evaluation` of a tree's evaluation at time
    ``t`` (s): its accelerations, contact state and driver torques, the multipliers of
    :func:`ideal_joint_multipliers` and the constraint violation, the largest ``|Phi|``
    (m, rad) of the description's rows at ``positions`` (zero without rows)."""
    rows = description.constraint_values(positions, t)
    violation = jnp.max(jnp.abs(rows)) if rows.shape[0] else jnp.zeros((), positions.dtype)
    return Evaluation(acceleration, ideal_joint_multipliers(description, positions, t, joint_forces), contact,
                      driver_torques, violation)
