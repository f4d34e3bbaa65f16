"""Oil film of a cylindrical clearance joint, slice by slice (docs/lubrication.md).

Each slice ``k`` is a journal-bearing cross-section: its eccentricity ``e_k`` and rate
``de_k/dt`` (in the bearing's cross-section plane, components on the bearing's ``u, w``
axes) and the spins ``omega_J . a_B``, ``omega_B . a_B`` about the bearing axis give the
film motion of :func:`model.lubrication.film_motion` (squeeze rate, and the wedge term
``eps (omega_J + omega_B - 2 gamma_dot)`` of the planar joint). The slice carries

    f_k = F(motion_k; L) / N,

the film force of the configured bearing model for the *whole* bearing length ``L``
(side leakage is governed by ``L``, not by the slice width ``L/N``) at the slice's own
motion, divided among the ``N`` slices. For an aligned journal all slices share one motion,
so the slices add up to the planar lubricated joint's force for any ``N``; for a tilted
journal each slice sees its own eccentricity, and the forces' axial spread gives the film's
moment. Axial pressure coupling between slices of different eccentricity is ignored (that
needs the Reynolds equation solved over the misaligned film).
"""

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ...geometry.cylindrical import SliceKinematics
from ...lubrication import Lubrication, film_force, film_motion, to_plane


def slice_film_forces(
    lubrication: Lubrication,
    kin: SliceKinematics,
    bearing_u: Float[Array, "3"],
    bearing_w: Float[Array, "3"],
    bearing_axis: Float[Array, "3"],
    journal_omega: Float[Array, "3"],
    bearing_omega: Float[Array, "3"],
    bearing_radius,
    clearance,
) -> Float[Array, "slices 3"]:
    """Film force on the journal (N, ground frame) of every slice, ``F(motion_k; L) / N``.

    ``(u, w, a)`` right-handed (positive spin turns ``u`` towards ``w``); angular
    velocities (rad/s) in the ground frame. Saturated near the wall as in the planar joint
    (:mod:`model.lubrication.transition`); dry contact is added by the caller.
    """
    plane = jnp.stack([bearing_u, bearing_w])  # 2 x 3: ground -> cross-section components
    eccentricity = kin.eccentricity @ plane.T
    eccentricity_rate = kin.eccentricity_rate @ plane.T
    spins = (journal_omega @ bearing_axis, bearing_omega @ bearing_axis)
    transition = (lubrication.transition_onset, lubrication.transition_cap)

    def one_slice(e, e_rate):
        motion = film_motion(e, e_rate, *spins, clearance)
        radial, tangential = film_force(lubrication.model, motion, lubrication.viscosity, bearing_radius,
                                        clearance, lubrication.length, transition)
        return to_plane(radial, tangential, motion)

    in_plane = jax.vmap(one_slice)(eccentricity, eccentricity_rate) / eccentricity.shape[0]
    return in_plane @ plane
