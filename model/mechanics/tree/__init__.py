"""Joint-coordinate engine for planar rigid mechanisms (docs/engine.md).

The state carries the coordinates of the joints of a kinematic tree rooted at the ground
(one angle per revolute joint, one slide per prismatic joint, ``x, y, theta`` per body held
only by clearance joints) and their rates; clearance joints are force elements that cut the
loops, so a tree has no constraint rows, no Baumgarte terms and no drift.
"""

from .mechanism import TreeMechanism as TreeMechanism
from .mechanism import tree_mechanism as tree_mechanism
from .topology import Topology as Topology
from .topology import TreeJoint as TreeJoint
from .topology import UnsupportedMechanism as UnsupportedMechanism
from .topology import tree_topology as tree_topology
