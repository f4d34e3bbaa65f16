"""Time integration of planar and spatial mechanisms alike
(:class:`model.mechanics.interface.AbstractMechanism`): solver registry and settings,
``solve``/``simulate`` with diffrax, the refilling-lane ensemble for batches, Rosenbrock
and Rosenbrock-W solvers, the implicit-stage chord iteration, and the step-size controller wrappers
(free-flight bound, non-finite guard) and the solver wrappers (contact peaks, no gradient
through a non-finite step)."""

from .chord import StageChord as StageChord
from .ensemble import EnsembleSolution as EnsembleSolution
from .ensemble import simulate_ensemble as simulate_ensemble
from .ensemble import solve_ensemble as solve_ensemble
from .rosenbrock import Rodas4 as Rodas4
from .rosenbrock import Rodas5P as Rodas5P
from .rosenbrock_w import Ros34PW2 as Ros34PW2
from .settings import EXPLICIT_SOLVERS as EXPLICIT_SOLVERS
from .settings import IMPLICIT_SOLVERS as IMPLICIT_SOLVERS
from .settings import ROSENBROCK_SOLVERS as ROSENBROCK_SOLVERS
from .settings import SOLVERS as SOLVERS
from .settings import STIFF_SOLVERS as STIFF_SOLVERS
from .settings import SolverSettings as SolverSettings
from .solve import make_controller as make_controller
from .solve import make_solver as make_solver
from .solve import simulate as simulate
from .solve import simulate_with_wear as simulate_with_wear
from .solve import solve as solve
from .solver_choice import AUTO_SOLVER as AUTO_SOLVER
from .solver_choice import auto_solver as auto_solver
from .solver_choice import resolve_solver as resolve_solver
from .step_bound import OpenJointStepBound as OpenJointStepBound
from .step_bound import open_joint_step_bound as open_joint_step_bound
from .step_guard import NonFiniteStepsCarryNoGradient as NonFiniteStepsCarryNoGradient
from .step_guard import RejectNonFinite as RejectNonFinite
from .timescales import contact_periods as contact_periods
from .timescales import relative_solve_cost as relative_solve_cost
from .trajectory import SpatialTrajectory as SpatialTrajectory
from .trajectory import Trajectory as Trajectory
from .trajectory import result_message as result_message
from .trajectory import trajectory_from_states as trajectory_from_states
from .wear_tracking import WearAccumulation as WearAccumulation
from .wear_tracking import WearTracking as WearTracking
from .life import LIFE_METRICS as LIFE_METRICS
from .life import LifeHistory as LifeHistory
from .life import LifeSchedule as LifeSchedule
from .life import service_life as service_life
from .life import simulate_life as simulate_life
