"""A lubricated journal bearing: the film model, the oil and the hand-over to dry contact.

:func:`film_force` is the pressure resultant of one cross-section (a planar joint, or one
axial slice of a spatial one) of length ``L``; :class:`Lubrication` holds the parameters a
clearance joint carries and gives the film's action on journal and bearing
(:class:`FilmAction`: the pressure resultant through the centres and the viscous torques of
:mod:`.friction`).
"""

import functools
from collections.abc import Callable
from typing import NamedTuple

import equinox as eqx
from jaxtyping import Array, Float

from .film import FilmMotion, film_motion, to_plane
from .finite_bearing import finite_bearing_force
from .friction import couette_coefficient, film_torques
from .long_bearing import long_bearing_force
from .short_bearing import short_bearing_force
from .table import SUPPLY_CONDITIONS
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
    supply: str = "maximum_gap",
) -> tuple[Float[Array, ""], Float[Array, ""]]:
    """Film pressure resultant ``(F_r, F_t)`` (N) on the journal along ``n`` and ``t`` of
    ``motion``; it acts through the journal centre.

    ``model``: a key of :data:`BEARING_MODELS`; ``viscosity`` (Pa s), ``radius`` ``R``,
    ``clearance`` ``c`` and ``length`` ``L`` (m). ``transition = (eps_0, eps_1)`` saturates
    the eccentricity (:mod:`.transition`); ``None`` evaluates the film model as it is.
    ``supply`` (a key of :data:`.table.SUPPLY_CONDITIONS`) picks the finite bearing's table;
    the closed forms' half film has no supply line.
    """
    return _force_law(model, supply)(_saturated(motion, transition), viscosity, radius, clearance, length)


def _force_law(model: str, supply: str) -> ForceLaw:
    if model not in BEARING_MODELS:
        raise ValueError(f"unknown bearing model {model!r}; expected one of {tuple(BEARING_MODELS)}")
    if supply not in SUPPLY_CONDITIONS:
        raise ValueError(f"unknown film supply {supply!r}; expected one of {SUPPLY_CONDITIONS}")
    if model == "finite_bearing":
        return functools.partial(finite_bearing_force, supply=supply)
    return BEARING_MODELS[model]


def _saturated(motion: FilmMotion, transition: tuple[Scalar, Scalar] | None) -> FilmMotion:
    return motion if transition is None else saturated_motion(motion, *transition)


class FilmAction(NamedTuple):
    """What the film of one cross-section does to journal and bearing (SI units).

    The journal receives ``force`` through its centre and ``journal_torque``; the bearing
    receives ``-force`` through its centre and ``bearing_torque`` (:mod:`.friction`).
    """

    force: Float[Array, "2"]  # pressure resultant on the journal (N)
    radial: Float[Array, ""]  # its component along n (N)
    tangential: Float[Array, ""]  # its component along t (N)
    journal_torque: Float[Array, ""]  # N m
    bearing_torque: Float[Array, ""]  # N m


class Lubrication(eqx.Module):
    """Lubricant film of a revolute clearance joint (SI units).

    **Fields:** ``model`` (static, a key of :data:`BEARING_MODELS`), ``viscosity`` (Pa s),
    ``length`` (bearing length, m), ``transition_onset`` ``eps_0`` and ``transition_cap``
    ``eps_1`` (eccentricity ratios, ``0 < eps_0 < eps_1 < 1``, :mod:`.transition`),
    ``supply`` (static, a key of :data:`.table.SUPPLY_CONDITIONS`: the finite bearing's film
    is held at ambient pressure along the largest gap, ``"maximum_gap"``, or not, ``"none"``).
    """

    model: str = eqx.field(static=True)
    viscosity: Scalar
    length: Scalar
    transition_onset: Scalar = DEFAULT_TRANSITION_ONSET
    transition_cap: Scalar = default_transition_cap(DEFAULT_TRANSITION_ONSET)
    supply: str = eqx.field(static=True, default="maximum_gap")

    def __check_init__(self):
        _force_law(self.model, self.supply)

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
        return self.action(eccentricity, eccentricity_velocity, journal_omega, bearing_omega, radius,
                           clearance)[1:3]

    def action(
        self,
        eccentricity: Float[Array, "2"],
        eccentricity_velocity: Float[Array, "2"],
        journal_omega: Float[Array, ""],
        bearing_omega: Float[Array, ""],
        radius: Scalar,
        clearance: Scalar,
    ) -> FilmAction:
        """The film's :class:`FilmAction` on journal and bearing from the relative centre
        motion (``e`` in m, ``de/dt`` in m/s, spins in rad/s), saturated near the wall
        (:mod:`.transition`, which also bounds the shear term's ``1/sqrt(1 - eps^2)``)."""
        motion = film_motion(eccentricity, eccentricity_velocity, journal_omega, bearing_omega, clearance)
        saturated = saturated_motion(motion, self.transition_onset, self.transition_cap)
        radial, tangential = _force_law(self.model, self.supply)(saturated, self.viscosity, radius, clearance,
                                                                 self.length)
        force = to_plane(radial, tangential, motion)
        couette = couette_coefficient(self.viscosity, radius, clearance, self.length, saturated.eccentricity_ratio)
        journal_torque, bearing_torque = film_torques(couette, journal_omega - bearing_omega, eccentricity, force)
        return FilmAction(force, radial, tangential, journal_torque, bearing_torque)

    def joint_forces(
        self, film: tuple[Float[Array, ""], Float[Array, ""]], dry_normal: Float[Array, ""], dry_tangential
    ) -> tuple[Float[Array, ""], Float[Array, ""]]:
        """Total ``(F_n, F_t)`` in the engine's convention (the journal receives
        ``-F_n n - F_t t``): dry contact and friction plus the film's pressure resultant
        (a summary of the joint's load: the engine applies the two at different points)."""
        radial, tangential = film
        return dry_normal - radial, dry_tangential - tangential
