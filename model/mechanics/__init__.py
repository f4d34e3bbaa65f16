"""Planar multibody mechanics in absolute coordinates: the mechanism as data, ideal-joint
constraints, applied and contact forces, and the equations of motion; ``tree/``: the same
mechanisms in the joint coordinates of their kinematic tree (docs/engine.md)."""

from .constraints import constraint_jacobian as constraint_jacobian
from .constraints import constraints as constraints
from .constraints import point_position as point_position
from .dynamics import Evaluation as Evaluation
from .dynamics import State as State
from .dynamics import evaluate as evaluate
from .absolute import AbstractAbsoluteMechanism as AbstractAbsoluteMechanism
from .absolute import flatten_state as flatten_state
from .interface import flat_vector_field as flat_vector_field
from .interface import initial_state as initial_state
from .dynamics import kinetic_energy as kinetic_energy
from .dynamics import Projection as Projection
from .dynamics import project_onto_constraints as project_onto_constraints
from .dynamics import project_positions as project_positions
from .interface import vector_field as vector_field
from .forces import ContactState as ContactState
from .forces import contact_forces as contact_forces
from .forces import joint_kinematics as joint_kinematics
from .forces import strain_energy as strain_energy
from .forces import structural_and_load_forces as structural_and_load_forces
from .flexible import BeamChain as BeamChain
from .flexible import PointLoad as PointLoad
from .interface import AbstractMechanism as AbstractMechanism
from .mechanism import GROUND as GROUND
from .mechanism import ClearanceJoint as ClearanceJoint
from .mechanism import Driver as Driver
from .mechanism import FixedJoint as FixedJoint
from .mechanism import Mechanism as Mechanism
from .mechanism import PrismaticJoint as PrismaticJoint
from .mechanism import RevoluteJoint as RevoluteJoint
from .tree import TreeMechanism as TreeMechanism
from .tree import tree_mechanism as tree_mechanism
