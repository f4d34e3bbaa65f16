"""Oil film of a cylindrical clearance joint, slice by slice (docs/lubrication.md).

Each slice ``k`` is a journal-bearing cross-section: its eccentricity ``e_k`` and rate
``de_k/dt`` (in the bearing's cross-section plane, components on the bearing's ``u, w``
axes) and the spins ``omega_J . a_B``, ``omega_B . a_B`` about the bearing axis give the
film motion of :func:`model.lubrication.film_motion` (squeeze rate, and the wedge term
``eps (omega_J + omega_B - 2 gamma_dot)`` of the planar joint). The slice carries

    f_k = F(motion_k; L) / N,

the film's pressure resultant of the configured bearing model for the *whole* bearing
length ``L`` (side leakage is governed by ``L``, not by the slice width ``L/N``) at the
slice's own motion, divided among the ``N`` slices, with the slice's share of the viscous
torques about the bearing axis (:mod:`model.lubrication.friction`). As in the planar
joint, ``f_k`` acts on the journal through the slice's journal-axis point and ``-f_k`` on
the bearing through its bearing-axis point. For an aligned journal all slices share one motion,
so the slices add up to the planar lubricated joint's force for any ``N``; for a tilted
journal each slice sees its own eccentricity, and the forces' axial spread gives the film's
moment. Axial pressure coupling between slices of different eccentricity is ignored (that
needs the Reynolds equation solved over the misaligned film).
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ...geometry.cylindrical import SliceKinematics
from ...lubrication import Lubrication


class SliceFilm(NamedTuple):
    """The film's action per slice (ground frame, SI): ``force`` on the journal through the
    slice's journal-axis point (the bearing gets ``-force`` through its bearing-axis point),
    and the torques on journal and bearing (vectors along the bearing axis)."""

    force: Float[Array, "slices 3"]
    journal_torque: Float[Array, "slices 3"]
    bearing_torque: Float[Array, "slices 3"]


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
) -> SliceFilm:
    """The film's :class:`SliceFilm` of every slice: ``F(motion_k; L) / N`` and the torques'
    ``1/N`` share.

    ``(u, w, a)`` right-handed (positive spin turns ``u`` towards ``w``); angular
    velocities (rad/s) in the ground frame. Saturated near the wall as in the planar joint
    (:mod:`model.lubrication.transition`); dry contact is added by the caller.
    """
    plane = jnp.stack([bearing_u, bearing_w])  # 2 x 3: ground -> cross-section components
    eccentricity = kin.eccentricity @ plane.T
    eccentricity_rate = kin.eccentricity_rate @ plane.T
    spins = (journal_omega @ bearing_axis, bearing_omega @ bearing_axis)

    def one_slice(e, e_rate):
        action = lubrication.action(e, e_rate, *spins, bearing_radius, clearance)
        return action.force, action.journal_torque, action.bearing_torque

    in_plane, journal_torque, bearing_torque = jax.vmap(one_slice)(eccentricity, eccentricity_rate)
    share = 1.0 / eccentricity.shape[0]
    return SliceFilm(share * in_plane @ plane, share * journal_torque[:, None] * bearing_axis,
                     share * bearing_torque[:, None] * bearing_axis)
