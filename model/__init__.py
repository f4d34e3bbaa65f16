"""Contact physics and planar multibody dynamics of mechanisms with clearance joints.

Importing this package enables JAX float64 (see ``model/_config.py``).
"""

from . import _config as _config
from .geometry import ContactKinematics, clearance_kinematics, cross2, perp, rotation, safe_normal
from .memory import impact_memory_rate, impact_velocity
from .contact import (
    NORMAL_FORCE_LAWS,
    ContactLaw,
    adams_damping_max,
    hysteresis_factor,
    normal_force,
    step,
)
from .friction import FRICTION_LAWS, FrictionLaw, friction_coefficient, friction_force, haversine
from .impact1d import (
    hertz_contact_period,
    hysteresis_restitution,
    obtained_restitution,
    simulate_impact,
)
from .stiffness import (
    damping_from_adams,
    damping_to_adams,
    effective_modulus,
    hertz_pin_stiffness,
    palmgren_stiffness,
    stiffness_from_adams,
    stiffness_to_adams,
)
from .mechanism import GROUND, ClearanceJoint, Driver, FixedJoint, Mechanism, PrismaticJoint, RevoluteJoint
from .dynamics import State, evaluate, initial_state, kinetic_energy, vector_field
from .rosenbrock import Rodas4, Rodas5P
from .simulate import SOLVERS, SolverSettings, Trajectory, result_message, simulate, solve
from .ensemble import EnsembleSolution, simulate_ensemble, solve_ensemble
from .metrics import Regime, regimes, summary_metrics
from .timescales import contact_periods, relative_solve_cost
from .step_bound import OpenJointStepBound, open_joint_step_bound
from .step_guard import RejectNonFinite
from .solver_choice import AUTO_SOLVER, resolve_solver
from .lubrication import BEARING_MODELS, Lubrication, film_force, film_motion, solve_reynolds
