"""ISO 286 hole-basis clearance fits: which standard fit delivers a radial clearance band.

ISO 286-1 (limits and fits) builds every tolerance from the *standard tolerance factor*::

    i = 0.45 D^(1/3) + 0.001 D        (um, D in mm)

with ``D`` the geometric mean of the nominal-size step the diameter falls in (the first step,
up to 3 mm, takes D = sqrt(1 * 3) by convention), and grade ``ITn = k_n i`` with
``k = 7, 10, 16, 25, 40, 64, 100`` for IT5..IT11 (ISO 286-1:1988 Annex A, Table 7; the
R5 series). The standard then rounds, and in places keeps values inherited from ISA
Bulletin 25 that its own formula does not reproduce (ISO 286-1 Annex A.3.1 says so: "the
system was not developed from a coherent mathematical base"; e.g. IT7 at 10-18 mm is 18 um
where ``16 i = 17.3``, and the whole first step is off). The tabulated values are the
authoritative ones, so :func:`standard_tolerance` returns the table (ISO 286-1 Table 1) and
:func:`standard_tolerance_formula` the formula (tests check the two agree within the
rounding over 6-500 mm).

Shafts ``c..h`` sit below the zero line with the *upper* deviation ``es`` as fundamental
deviation (ISO 286-1 Table 2; formulas of Annex A Table 11: ``g = -2.5 D^0.34``,
``f = -5.5 D^0.41``, ``e = -11 D^0.41``, ``d = -16 D^0.44``, ``c = -52 D^0.2`` for
D <= 40 mm and ``-(95 + 0.8 D)`` above; again the table governs). Their lower deviation is
``ei = es - IT``. Hole ``H`` has ``EI = 0``, ``ES = IT``. The fit's *diametral* clearance
runs from ``EI - es`` (min) to ``ES - ei`` (max); a clearance joint's *radial* clearance
``c = R_b - R_j`` is half of it.

Sizes 1 um precision, nominal diameters 0 < d <= 500 mm.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

# Upper limits (mm) of the main nominal-size steps of ISO 286-1 up to 500 mm.
MAIN_STEPS_MM = (3, 6, 10, 18, 30, 50, 80, 120, 180, 250, 315, 400, 500)
# Intermediate steps, used by the fundamental deviations a, b, c above 30 mm.
INTERMEDIATE_STEPS_MM = (3, 6, 10, 18, 30, 40, 50, 65, 80, 100, 120, 140, 160, 180, 200, 225, 250, 280, 315,
                         355, 400, 450, 500)

GRADES = (5, 6, 7, 8, 9, 10, 11)
# ITn = multiplier * i for IT5..IT11 (ISO 286-1 Annex A, Table 7).
GRADE_MULTIPLIERS = {5: 7.0, 6: 10.0, 7: 16.0, 8: 25.0, 9: 40.0, 10: 64.0, 11: 100.0}

# Standard tolerances (um) per main step, ISO 286-1:1988 Table 1 (= ISO 286-1:2010 Table 1).
STANDARD_TOLERANCES_UM = {
    5: (4, 5, 6, 8, 9, 11, 13, 15, 18, 20, 23, 25, 27),
    6: (6, 8, 9, 11, 13, 16, 19, 22, 25, 29, 32, 36, 40),
    7: (10, 12, 15, 18, 21, 25, 30, 35, 40, 46, 52, 57, 63),
    8: (14, 18, 22, 27, 33, 39, 46, 54, 63, 72, 81, 89, 97),
    9: (25, 30, 36, 43, 52, 62, 74, 87, 100, 115, 130, 140, 155),
    10: (40, 48, 58, 70, 84, 100, 120, 140, 160, 185, 210, 230, 250),
    11: (60, 75, 90, 110, 130, 160, 190, 220, 250, 290, 320, 360, 400),
}

# Upper deviation es (um) of shafts d..h per main step (ISO 286-1 Table 2 / ISO 286-2).
SHAFT_UPPER_DEVIATIONS_UM = {
    "d": (-20, -30, -40, -50, -65, -80, -100, -120, -145, -170, -190, -210, -230),
    "e": (-14, -20, -25, -32, -40, -50, -60, -72, -85, -100, -110, -125, -135),
    "f": (-6, -10, -13, -16, -20, -25, -30, -36, -43, -50, -56, -62, -68),
    "g": (-2, -4, -5, -6, -7, -9, -10, -12, -14, -15, -17, -18, -20),
    "h": (0,) * 13,
}
# Shaft c uses the intermediate steps.
SHAFT_C_UPPER_DEVIATIONS_UM = (-60, -70, -80, -95, -110, -120, -130, -140, -150, -170, -180, -200, -210, -230,
                               -240, -260, -280, -300, -330, -360, -400, -440, -480)
SHAFT_LETTERS = ("c", "d", "e", "f", "g", "h")

# Hole-basis clearance fits in common use (ISO 286-2; ISO 1829 preferred fits), loosest first.
STANDARD_CLEARANCE_FITS = (
    "H11/c11", "H11/d11", "H10/d10", "H9/d9", "H9/e9", "H8/e8", "H8/f7", "H7/f7", "H7/g6", "H6/g5", "H7/h6",
)


def _step_index(nominal_mm: float, steps: tuple[int, ...]) -> int:
    """Index of the step ``(previous, upper]`` holding ``nominal_mm`` (the first step is (0, 3])."""
    if not 0.0 < nominal_mm <= steps[-1]:
        raise ValueError(f"ISO 286 fits here cover nominal diameters 0 < d <= {steps[-1]} mm, got {nominal_mm:g} mm")
    return bisect.bisect_left(steps, nominal_mm)


def step_geometric_mean(nominal_mm: float, steps: tuple[int, ...] = MAIN_STEPS_MM) -> float:
    """Geometric mean ``D`` (mm) of the step holding ``nominal_mm``; sqrt(1 * 3) for the first step."""
    index = _step_index(nominal_mm, steps)
    lower = 1.0 if index == 0 else steps[index - 1]
    return math.sqrt(lower * steps[index])


def tolerance_factor(geometric_mean_mm: float) -> float:
    """Standard tolerance factor ``i = 0.45 D^(1/3) + 0.001 D`` (um), ``D`` in mm (ISO 286-1 A.3.2.2)."""
    return 0.45 * geometric_mean_mm ** (1.0 / 3.0) + 0.001 * geometric_mean_mm


def standard_tolerance_formula(grade: int, nominal_mm: float) -> float:
    """``ITgrade = k i`` (um, unrounded) from the formula, for IT5..IT11."""
    if grade not in GRADE_MULTIPLIERS:
        raise ValueError(f"tolerance grade IT{grade} not supported; grades: {GRADES}")
    return GRADE_MULTIPLIERS[grade] * tolerance_factor(step_geometric_mean(nominal_mm))


def standard_tolerance(grade: int, nominal_mm: float) -> int:
    """ISO 286-1 Table 1 value of ``ITgrade`` (um) at ``nominal_mm``; the table is authoritative."""
    if grade not in STANDARD_TOLERANCES_UM:
        raise ValueError(f"tolerance grade IT{grade} not supported; grades: {GRADES}")
    return STANDARD_TOLERANCES_UM[grade][_step_index(nominal_mm, MAIN_STEPS_MM)]


def shaft_upper_deviation_formula(letter: str, nominal_mm: float) -> float:
    """Fundamental deviation ``es`` (um, unrounded) of shafts c..h from ISO 286-1 Annex A formulas."""
    steps = INTERMEDIATE_STEPS_MM if letter == "c" else MAIN_STEPS_MM
    D = step_geometric_mean(nominal_mm, steps)
    formulas = {
        "c": lambda: -52.0 * D**0.2 if D <= 40.0 else -(95.0 + 0.8 * D),
        "d": lambda: -16.0 * D**0.44,
        "e": lambda: -11.0 * D**0.41,
        "f": lambda: -5.5 * D**0.41,
        "g": lambda: -2.5 * D**0.34,
        "h": lambda: 0.0,
    }
    if letter not in formulas:
        raise ValueError(f"shaft letter {letter!r} not supported; letters: {SHAFT_LETTERS}")
    return formulas[letter]()


def shaft_upper_deviation(letter: str, nominal_mm: float) -> int:
    """Tabulated fundamental deviation ``es`` (um) of shaft ``letter`` (c..h) at ``nominal_mm``."""
    if letter == "c":
        return SHAFT_C_UPPER_DEVIATIONS_UM[_step_index(nominal_mm, INTERMEDIATE_STEPS_MM)]
    if letter not in SHAFT_UPPER_DEVIATIONS_UM:
        raise ValueError(f"shaft letter {letter!r} not supported; letters: {SHAFT_LETTERS}")
    return SHAFT_UPPER_DEVIATIONS_UM[letter][_step_index(nominal_mm, MAIN_STEPS_MM)]


@dataclass(frozen=True)
class ToleranceZone:
    """Limit deviations (um) of a hole or shaft from the nominal size."""

    name: str  # "H7", "g6"
    upper: int  # ES / es
    lower: int  # EI / ei

    @property
    def tolerance(self) -> int:
        return self.upper - self.lower


def hole_zone(name: str, nominal_mm: float) -> ToleranceZone:
    """Hole ``H<grade>``: ``EI = 0``, ``ES = IT``."""
    letter, grade = name[0], int(name[1:])
    if letter != "H":
        raise ValueError(f"only basic holes H are supported (hole-basis fits), got {name!r}")
    return ToleranceZone(name, standard_tolerance(grade, nominal_mm), 0)


def shaft_zone(name: str, nominal_mm: float) -> ToleranceZone:
    """Shaft ``<c..h><grade>``: ``es`` the fundamental deviation, ``ei = es - IT``."""
    letter, grade = name[0], int(name[1:])
    upper = shaft_upper_deviation(letter, nominal_mm)
    return ToleranceZone(name, upper, upper - standard_tolerance(grade, nominal_mm))


@dataclass(frozen=True)
class Fit:
    """A hole-basis fit at one nominal diameter; clearances are diametral, in um."""

    name: str
    nominal_mm: float
    hole: ToleranceZone
    shaft: ToleranceZone

    @property
    def min_clearance_um(self) -> int:
        return self.hole.lower - self.shaft.upper

    @property
    def max_clearance_um(self) -> int:
        return self.hole.upper - self.shaft.lower

    def radial_clearance_m(self) -> tuple[float, float]:
        """(min, max) radial clearance ``c = (D_hole - d_shaft)/2`` in m."""
        return self.min_clearance_um / 2e6, self.max_clearance_um / 2e6

    def as_dict(self) -> dict:
        low, high = self.radial_clearance_m()
        return {
            "fit": self.name,
            "nominal_diameter_mm": self.nominal_mm,
            "hole": {"zone": self.hole.name, "upper_um": self.hole.upper, "lower_um": self.hole.lower},
            "shaft": {"zone": self.shaft.name, "upper_um": self.shaft.upper, "lower_um": self.shaft.lower},
            "diametral_clearance_um": [self.min_clearance_um, self.max_clearance_um],
            "radial_clearance_m": [low, high],
            "tolerance_sum_um": self.hole.tolerance + self.shaft.tolerance,
        }


def fit(name: str, nominal_mm: float) -> Fit:
    """The fit ``"H7/g6"`` at ``nominal_mm``."""
    hole, _, shaft = name.partition("/")
    return Fit(name, nominal_mm, hole_zone(hole, nominal_mm), shaft_zone(shaft, nominal_mm))


def fits_for_band(
    nominal_diameter: float,
    min_radial_clearance: float,
    max_radial_clearance: float,
    candidates: tuple[str, ...] = STANDARD_CLEARANCE_FITS,
) -> list[dict]:
    """Standard fits at ``nominal_diameter`` (m) with each one's radial clearance range and
    whether it lies inside ``[min_radial_clearance, max_radial_clearance]`` (m).

    Sorted with the fits that deliver the band first, the widest tolerance (the cheapest
    to make) first among them.
    """
    nominal_mm = nominal_diameter * 1e3
    rows = []
    for name in candidates:
        entry = fit(name, nominal_mm).as_dict()
        low, high = entry["radial_clearance_m"]
        entry["within_band"] = bool(low >= min_radial_clearance - 1e-12 and high <= max_radial_clearance + 1e-12)
        rows.append(entry)
    return sorted(rows, key=lambda row: (not row["within_band"], -row["tolerance_sum_um"]))
