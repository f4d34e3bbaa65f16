"""Kinematics of clearance joints: where the journal is in its bearing, the contact normal,
penetration, contact points and their relative velocity."""

from .planar import ContactKinematics as ContactKinematics
from .planar import clearance_kinematics as clearance_kinematics
from .planar import cross2 as cross2
from .planar import perp as perp
from .planar import rotation as rotation
from .planar import safe_normal as safe_normal
from .worn import WornBore as WornBore
from .worn import bin_angles as bin_angles
