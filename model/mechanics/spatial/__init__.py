"""Spatial (3-D) rigid multibody mechanisms with cylindrical and spherical clearance joints."""

from ..absolute import flatten_state
from ..interface import flat_vector_field, initial_state, vector_field
from .dynamics import SpatialState, angular_momentum, evaluate, kinetic_energy
from .mechanism import (GROUND, CylindricalClearanceJoint, Load, SpatialDriver, SpatialJoint, SpatialMechanism,
                        SphericalClearanceJoint)
from .redundancy import redundant_joints, without_redundant_rows
