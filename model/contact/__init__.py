"""Contact physics of one clearance joint: normal force laws, friction laws, the
impact-velocity memory, contact stiffness, and the one-dimensional impact study."""

from .friction import FRICTION_LAWS as FRICTION_LAWS
from .friction import FrictionLaw as FrictionLaw
from .friction import friction_coefficient as friction_coefficient
from .friction import friction_force as friction_force
from .friction import haversine as haversine
from .impact1d import hertz_contact_period as hertz_contact_period
from .impact1d import hysteresis_restitution as hysteresis_restitution
from .impact1d import obtained_restitution as obtained_restitution
from .impact1d import simulate_impact as simulate_impact
from .memory import impact_memory_rate as impact_memory_rate
from .memory import impact_velocity as impact_velocity
from .normal import LAWS_WITHOUT_RESTITUTION as LAWS_WITHOUT_RESTITUTION
from .normal import NORMAL_FORCE_LAWS as NORMAL_FORCE_LAWS
from .normal import ContactLaw as ContactLaw
from .normal import adams_damping_max as adams_damping_max
from .normal import hysteresis_factor as hysteresis_factor
from .normal import normal_force as normal_force
from .normal import step as step
from .stiffness import damping_from_adams as damping_from_adams
from .stiffness import damping_to_adams as damping_to_adams
from .stiffness import effective_modulus as effective_modulus
from .stiffness import hertz_pin_stiffness as hertz_pin_stiffness
from .stiffness import palmgren_stiffness as palmgren_stiffness
from .stiffness import stiffness_from_adams as stiffness_from_adams
from .stiffness import stiffness_to_adams as stiffness_to_adams
