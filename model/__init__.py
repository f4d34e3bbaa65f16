"""Contact physics and multibody dynamics of mechanisms with clearance joints, in pure JAX.

Subpackages, one concern each:

- :mod:`model.contact` — normal and friction force laws, the impact-velocity memory,
  contact stiffness, the one-dimensional impact study;
- :mod:`model.geometry` — clearance-joint kinematics;
- :mod:`model.mechanics` — the mechanism as data, constraints, forces, equations of motion;
- :mod:`model.integrate` — solvers, ``simulate``, the refilling-lane ensemble, step control;
- :mod:`model.lubrication` — hydrodynamic journal-bearing forces and their hand-over to
  dry contact;
- :mod:`model.metrics` — summary metrics of a trajectory.

Importing this package enables JAX float64 and changes nothing else; :func:`configure`
applies the package's tuned XLA CPU flags (``model/_config.py``, docs/api.md).
"""

from . import _config as _config
from ._config import configure as configure
from .contact import FRICTION_LAWS as FRICTION_LAWS
from .contact import NORMAL_FORCE_LAWS as NORMAL_FORCE_LAWS
from .contact import AbstractFrictionLaw as AbstractFrictionLaw
from .contact import AbstractNormalLaw as AbstractNormalLaw
from .contact import ContactLaw as ContactLaw
from .contact import FrictionLaw as FrictionLaw
from .contact import adams_damping_max as adams_damping_max
from .contact import cubic_step as cubic_step
from .contact import damping_from_adams as damping_from_adams
from .contact import damping_to_adams as damping_to_adams
from .contact import effective_modulus as effective_modulus
from .contact import friction_coefficient as friction_coefficient
from .contact import friction_force as friction_force
from .contact import haversine_step as haversine_step
from .contact import hertz_contact_period as hertz_contact_period
from .contact import hertz_pin_stiffness as hertz_pin_stiffness
from .contact import hysteresis_factor as hysteresis_factor
from .contact import hysteresis_restitution as hysteresis_restitution
from .contact import impact_memory_rate as impact_memory_rate
from .contact import impact_velocity as impact_velocity
from .contact import normal_force as normal_force
from .contact import obtained_restitution as obtained_restitution
from .contact import palmgren_stiffness as palmgren_stiffness
from .contact import simulate_impact as simulate_impact
from .contact import stiffness_from_adams as stiffness_from_adams
from .contact import stiffness_to_adams as stiffness_to_adams
from .contact import ArchardWear as ArchardWear
from .geometry import ContactKinematics as ContactKinematics
from .geometry import clearance_kinematics as clearance_kinematics
from .geometry import cross2 as cross2
from .geometry import perp as perp
from .geometry import rotation as rotation
from .geometry import safe_normal as safe_normal
from .geometry import WornBore as WornBore
from .integrate import AUTO_SOLVER as AUTO_SOLVER
from .integrate import SOLVERS as SOLVERS
from .integrate import EnsembleSolution as EnsembleSolution
from .integrate import OpenJointStepBound as OpenJointStepBound
from .integrate import NonFiniteStepsCarryNoGradient as NonFiniteStepsCarryNoGradient
from .integrate import RejectNonFinite as RejectNonFinite
from .integrate import Rodas4 as Rodas4
from .integrate import Rodas5P as Rodas5P
from .integrate import Ros34PW2 as Ros34PW2
from .integrate import SolverSettings as SolverSettings
from .integrate import SpatialTrajectory as SpatialTrajectory
from .integrate import Trajectory as Trajectory
from .integrate import contact_periods as contact_periods
from .integrate import open_joint_step_bound as open_joint_step_bound
from .integrate import relative_solve_cost as relative_solve_cost
from .integrate import resolve_solver as resolve_solver
from .integrate import result_message as result_message
from .integrate import simulate as simulate
from .integrate import simulate_ensemble as simulate_ensemble
from .integrate import simulate_with_wear as simulate_with_wear
from .integrate import WearAccumulation as WearAccumulation
from .integrate import LIFE_METRICS as LIFE_METRICS
from .integrate import LifeHistory as LifeHistory
from .integrate import LifeSchedule as LifeSchedule
from .integrate import service_life as service_life
from .integrate import simulate_life as simulate_life
from .integrate import solve as solve
from .integrate import solve_ensemble as solve_ensemble
from .lubrication import BEARING_MODELS as BEARING_MODELS
from .lubrication import Lubrication as Lubrication
from .lubrication import film_force as film_force
from .lubrication import film_motion as film_motion
from .lubrication import solve_reynolds as solve_reynolds
from .mechanics import GROUND as GROUND
from .mechanics import AbstractMechanism as AbstractMechanism
from .mechanics import ClearanceJoint as ClearanceJoint
from .mechanics import Driver as Driver
from .mechanics import FixedJoint as FixedJoint
from .mechanics import Mechanism as Mechanism
from .mechanics import PrismaticJoint as PrismaticJoint
from .mechanics import RevoluteJoint as RevoluteJoint
from .mechanics import State as State
from .mechanics import TreeMechanism as TreeMechanism
from .mechanics import tree_mechanism as tree_mechanism
from .mechanics import evaluate as evaluate
from .mechanics import initial_state as initial_state
from .mechanics import kinetic_energy as kinetic_energy
from .mechanics import vector_field as vector_field
from .metrics import Regime as Regime
from .metrics import regimes as regimes
from .metrics import StartTransient as StartTransient
from .metrics import start_transient as start_transient
from .metrics import summary_metrics as summary_metrics
from .window import MetricsWindow as MetricsWindow
