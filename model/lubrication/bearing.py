"""A lubricated journal bearing: the film model, the oil and the hand-over to dry contact.

:func:`film_force` is the force of one cross-section (a planar joint, or one axial slice
of a spatial one) of length ``L``; :class:`Lubrication` holds the parameters a clearance
joint carries and combines the film with the joint's dry contact and friction forces.
"""

from collections.abc import Callable

import equinox as eqx
from jaxtyping import Array, Float

from .film import FilmMotion, film_motion
from .finite_bearing import finite_bearing_force
from .long_bearing import long_bearing_force
from .short_bearing import short_bearing_force
from .transition import DEFAULT_TRANSITION_ONSET, default_transition_cap, saturated_motion

Scalar = float | Float[Array, ""]
ForceLaw = Callable[..., tuple[Float[Array, ""], Float[Array, ""]]]

BEARING_MODELS: dict[str, ForceLaw] = {
    "short_bearing": short_bearing_force,
    "long_bearing": long_bearing_force,
    "finite_bearing": finite_bearing_force,
}


def film_force(
    model: str,
    motion: FilmMotion,
    viscosity: Scalar,
    radius: Scalar,
    clearance: Scalar,
    length: Scalar,
    transition: tuple[Scalar, Scalar] | None = None,
) -> tuple[Float[Array, ""], Float[Array, ""]]:
    """Film force ``(F_r, F_t)`` (N) on the journal along ``n`` and ``t`` of ``motion``.

    ``model``: a key of :data:`BEARING_MODELS`; ``viscosity`` (Pa s), ``radius`` ``R``,
    ``clearance`` ``c`` and ``length`` ``L`` (m). ``transition = (eps_0, eps_1)`` saturates
    the eccentricity (:mod:`.transition`); ``None`` evaluates the film model as it is.
    """
    if model not in BEARING_MODELS:
        raise ValueError(f"unknown bearing model {model!r}; expected one of {tuple(BEARING_MODELS)}")
    if transition is not None:
        motion = saturated_motion(motion, *transition)
    return BEARING_MODELS[model](motion, viscosity, radius, clearance, length)


class Lubrication(eqx.Module):
    """Lubricant film of a revolute clearance joint (SI units).

    **Fields:** ``model`` (static, a key of :data:`BEARING_MODELS`), ``viscosity`` (Pa s),
    ``length`` (bearing length, m), ``transition_onset`` ``eps_0`` and ``transition_cap``
    ``eps_1`` (eccentricity ratios, ``0 < eps_0 < eps_1 < 1``, :mod:`.transition`).
    """

    model: str = eqx.field(static=True)
    viscosity: Scalar
    length: Scalar
    transition_onset: Scalar = DEFAULT_TRANSITION_ONSET
    transition_cap: Scalar = default_transition_cap(DEFAULT_TRANSITION_ONSET)

    def __check_init__(self):
        if self.model not in BEARING_MODELS:
            raise ValueError(f"unknown bearing model {self.model!r}; expected one of {tuple(BEARING_MODELS)}")

    def film_force(
        self,
        eccentricity: Float[Array, "2"],
        eccentricity_velocity: Float[Array, "2"],
        journal_omega: Float[Array, ""],
        bearing_omega: Float[Array, ""],
        radius: Scalar,
        clearance: Scalar,
    ) -> tuple[Float[Array, ""], Float[Array, ""]]:
        """Saturated film force ``(F_r, F_t)`` (N) on the journal along ``n = e/|e|`` and
        ``t`` (the joint's normal and tangent), from the relative centre motion."""
        motion = film_motion(eccentricity, eccentricity_velocity, journal_omega, bearing_omega, clearance)
        transition = (self.transition_onset, self.transition_cap)
        return film_force(self.model, motion, self.viscosity, radius, clearance, self.length, transition)

    def joint_forces(
        self, film: tuple[Float[Array, ""], Float[Array, ""]], dry_normal: Float[Array, ""], dry_tangential
    ) -> tuple[Float[Array, ""], Float[Array, ""]]:
        """Total ``(F_n, F_t)`` in the engine's convention (the journal receives
        ``-F_n n - F_t t``): dry contact and friction plus the film."""
        radial, tangential = film
        return dry_normal - radial, dry_tangential - tangential
