"""Contact physics and planar multibody dynamics of mechanisms with clearance joints.

Importing this package enables JAX float64 (see ``model/_config.py``).
"""

from . import _config as _config
from .geometry import ContactKinematics, clearance_kinematics, cross2, perp, rotation, safe_normal
from .memory import impact_memory_rate, impact_velocity
