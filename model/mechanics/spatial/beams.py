"""Beam elements of spatial flexible bodies: all six deformations of the element of
:mod:`model.mechanics.beam` between neighbouring rigid segments.

Element ``k`` joins node ``i`` on segment ``k`` and node ``j`` on segment ``k + 1`` (offsets
along the segments' x axes from :func:`model.mechanics.flexible.node_offsets`), clamped at
``i`` in the frame of segment ``k`` (x along the beam, y and z the section's axes):

- displacement ``R_i^T (p_j - p_i) - (L_e, 0, 0)``: axial, and the two transverse ones;
- rotation ``2 s (x, y, z)`` of the relative quaternion ``q_i^* q_j = (s, x, y, z)``, i.e.
  ``sin(angle) axis``: twist and the two bending rotations. It is ``angle axis`` to third
  order in the element's small relative rotation, and it does not depend on the sign of
  either quaternion.

The forces are the gradient of ``1/2 d^T K d`` plus the stiffness-proportional damping
``beta K d_dot`` (as in the planar chain), in the engine's velocity space ``[f, tau]``
(ground frame): the deformation is differentiated along a twist ``(dr, dtheta)`` of the
segments, the positions moved by ``dr`` and the quaternions turned by ``dtheta`` (first
order is all the derivative needs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ...geometry.quaternion import quaternion_product, rotation_matrix
from ..flexible import BeamChain, node_offsets
from .joints import POSITION_SIZE, VELOCITY_SIZE

if TYPE_CHECKING:
    from .mechanism import SpatialMechanism

_CONJUGATE = np.array([1.0, -1.0, -1.0, -1.0])  # NumPy: a JAX array here would start JAX's backend at import


def _segment_poses(chain: BeamChain, x) -> tuple[Float[Array, "segments 3"], Float[Array, "segments 4"]]:
    blocks = x.reshape(-1, POSITION_SIZE)[jnp.asarray(chain.segments)]
    return blocks[:, :3], blocks[:, 3:]


def _deformation(chain: BeamChain, positions, quaternions) -> Float[Array, "elements 6"]:
    rotations = jax.vmap(rotation_matrix)(quaternions)
    offset_i, offset_j = node_offsets(chain)
    node_i = positions[:-1] + offset_i[:, None] * rotations[:-1, :, 0]
    node_j = positions[1:] + offset_j[:, None] * rotations[1:, :, 0]
    local = jnp.einsum("eji,ej->ei", rotations[:-1], node_j - node_i)
    displacement = local - jnp.stack([chain.element_length, 0.0, 0.0]).astype(local.dtype)
    relative = jax.vmap(quaternion_product)(quaternions[:-1] * _CONJUGATE, quaternions[1:])
    rotation = 2.0 * relative[:, :1] * relative[:, 1:]
    return jnp.concatenate([displacement, rotation], axis=1)


def spatial_deformation(chain: BeamChain, x) -> Float[Array, "elements 6"]:
    """Element deformations ``(u, v, w, phi_x, phi_y, phi_z)`` (m, rad), in each element's
    node-i frame."""
    return _deformation(chain, *_segment_poses(chain, x))


def _twisted(chain: BeamChain, x):
    """The deformation as a function of a twist ``[dr, dtheta]`` (segments x 6, ground frame)."""
    positions, quaternions = _segment_poses(chain, x)

    def deformation(twist):
        turn = jnp.concatenate([jnp.ones_like(twist[:, :1]), 0.5 * twist[:, 3:]], axis=1)
        return _deformation(chain, positions + twist[:, :3], jax.vmap(quaternion_product)(turn, quaternions))

    return deformation


def _segment_twists(chain: BeamChain, v) -> Float[Array, "segments 6"]:
    return v.reshape(-1, VELOCITY_SIZE)[jnp.asarray(chain.segments)]


def deformation_rate_rows(chain: BeamChain, x) -> Float[Array, "rows velocities"]:
    """``D = d(deformation)/d(twist)`` over the whole velocity vector, one row per element
    deformation: ``D v = 0`` holds exactly when every segment of the chain moves with one
    rigid-body velocity field."""
    zero = jnp.zeros((len(chain.segments), VELOCITY_SIZE), x.dtype)
    local = jax.jacfwd(lambda twist: _twisted(chain, x)(twist).reshape(-1))(zero)
    bodies = x.shape[-1] // POSITION_SIZE
    full = jnp.zeros((local.shape[0], bodies, VELOCITY_SIZE), x.dtype).at[:, jnp.asarray(chain.segments)].set(local)
    return full.reshape(local.shape[0], -1)


def element_loads(chain: BeamChain, x, v) -> Float[Array, "elements 6"]:
    """End loads ``K (d + beta d_dot)`` (N, N m) that hold each element's node j deformed."""
    deformation = _twisted(chain, x)
    zero = jnp.zeros((len(chain.segments), VELOCITY_SIZE), x.dtype)
    strain, rate = jax.jvp(deformation, (zero,), (_segment_twists(chain, v),))
    return (strain + chain.rayleigh_beta() * rate) @ chain.stiffness()


def chain_forces(chain: BeamChain, x, v) -> Float[Array, " velocities"]:
    """Elastic and damping forces ``[f, tau]`` of the chain's elements on its segments:
    ``-(d d / d twist)^T`` of the :func:`element_loads`."""
    zero = jnp.zeros((len(chain.segments), VELOCITY_SIZE), x.dtype)
    _, pullback = jax.vjp(_twisted(chain, x), zero)
    per_segment = -pullback(element_loads(chain, x, v))[0]
    slots = (VELOCITY_SIZE * jnp.asarray(chain.segments)[:, None] + jnp.arange(VELOCITY_SIZE)).reshape(-1)
    return jnp.zeros_like(v).at[slots].add(per_segment.reshape(-1))


def beam_forces(mechanism: SpatialMechanism, x, v) -> Float[Array, " velocities"]:
    """The forces of every flexible body's elements."""
    return sum((chain_forces(chain, x, v) for chain in mechanism.beam_chains), start=jnp.zeros_like(v))


def strain_energy(mechanism: SpatialMechanism, x) -> Float[Array, ""]:
    """``1/2 sum d^T K d`` over every element (J)."""
    total = jnp.zeros((), x.dtype)
    for chain in mechanism.beam_chains:
        deformation = spatial_deformation(chain, x)
        total = total + 0.5 * jnp.sum(deformation * (deformation @ chain.stiffness()))
    return total


def section_loads(chain: BeamChain, x, v) -> dict[str, Float[Array, " elements"]]:
    """Axial force (N, tension positive), torque and the bending moments about the section's
    y and z axes (N m) at the middle of each element (the cut between two segments), from
    the element clamped at i with end loads ``(N, V_y, V_z, T, M_y, M_z)`` at j:
    ``M_z(L/2) = M_z + V_y L/2``, ``M_y(L/2) = M_y - V_z L/2``."""
    loads = element_loads(chain, x, v)
    half = chain.element_length / 2.0
    return {"axial_force": loads[:, 0], "torque": loads[:, 3],
            "bending_moment_y": loads[:, 4] - loads[:, 2] * half, "bending_moment_z": loads[:, 5] + loads[:, 1] * half}
