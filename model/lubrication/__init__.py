"""Lubricated revolute clearance joints: hydrodynamic film forces and their hand-over to
dry contact (docs/lubrication.md).

- :mod:`.film`: film kinematics of one cross-section (eccentricity ratio, squeeze and
  wedge rates in the line-of-centres frame);
- :mod:`.short_bearing`, :mod:`.long_bearing`: closed forms with half-film cavitation;
- :mod:`.reynolds`: finite-difference Reynolds solver with the Swift-Stieber condition;
- :mod:`.table`, :mod:`.finite_bearing`: its tabulated solution, interpolated at run time,
  one table per film supply condition;
- :mod:`.friction`: the film's viscous torques on journal and bearing;
- :mod:`.transition`: saturation of the film near the wall, dry contact beyond;
- :mod:`.bearing`: :class:`Lubrication`, the parameters a clearance joint carries, and
  :class:`FilmAction`, what the film does to journal and bearing.
"""

from .bearing import BEARING_MODELS, FilmAction, Lubrication, film_force
from .film import FilmMotion, film_motion, to_plane
from .finite_bearing import finite_bearing_force, tabulated_coefficients
from .friction import couette_coefficient, film_torques
from .long_bearing import long_bearing_force
from .reynolds import CAVITATION_CONDITIONS, ReynoldsSolution, solve_reynolds
from .short_bearing import short_bearing_force
from .table import SUPPLY_CONDITIONS
from .transition import DEFAULT_TRANSITION_ONSET, default_transition_cap, saturated_eccentricity

__all__ = [
    "BEARING_MODELS",
    "CAVITATION_CONDITIONS",
    "DEFAULT_TRANSITION_ONSET",
    "FilmAction",
    "FilmMotion",
    "Lubrication",
    "ReynoldsSolution",
    "SUPPLY_CONDITIONS",
    "couette_coefficient",
    "default_transition_cap",
    "film_force",
    "film_torques",
    "film_motion",
    "finite_bearing_force",
    "long_bearing_force",
    "saturated_eccentricity",
    "short_bearing_force",
    "solve_reynolds",
    "tabulated_coefficients",
    "to_plane",
]
