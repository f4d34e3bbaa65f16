"""Joint-coordinate engine for planar mechanisms (docs/engine.md).

The state carries the coordinates of the joints of a kinematic tree rooted at the ground
(one angle per revolute joint, one slide per prismatic joint, ``x, y, theta`` per body held
only by clearance joints or beam elements) and their rates; clearance joints and beam
elements are force elements. The ideal joints that close loops are cut: their constraint
rows alone are enforced (Schur complement, Baumgarte terms, projection); a tree without
them has no constraint rows and no drift.
"""

from .mechanism import TreeMechanism as TreeMechanism
from .mechanism import tree_mechanism as tree_mechanism
from .topology import Topology as Topology
from .topology import TreeJoint as TreeJoint
from .topology import UnsupportedMechanism as UnsupportedMechanism
from .topology import tree_topology as tree_topology
