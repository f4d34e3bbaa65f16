"""Spatial (3-D) rigid multibody mechanisms with cylindrical and spherical clearance joints."""

from .dynamics import (SpatialState, angular_momentum, evaluate, flat_vector_field, flatten_state,
                       initial_state, initial_state_and_seats, kinetic_energy, unflatten_state, vector_field)
from .mechanism import (GROUND, CylindricalClearanceJoint, Load, SpatialDriver, SpatialJoint, SpatialMechanism,
                        SphericalClearanceJoint)
from .redundancy import redundant_joints, without_redundant_rows
