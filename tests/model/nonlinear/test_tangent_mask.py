"""Which state coordinates the tangent vectors of the exponents may move."""

import numpy as np

from model.nonlinear.mechanism import tangent_mask
from pipelines.build import build_mechanism
from pipelines.config import load_mechanism

from tests.helpers import FLORES


def test_the_mask_leaves_out_the_drivers_work_and_prescribed_coordinates():
    """Joint engine: ``[z, zd, memory, work, prescribed]``: the free coordinates, their rates
    and the impact memory move; the work (a quadrature) and the crank's prescribed angle (a
    known function of time) do not. Absolute engine: everything but the work."""
    config = load_mechanism(FLORES)
    joint = build_mechanism(config, "joint")
    state = joint.initial_state()
    mask = np.asarray(tangent_mask(joint, joint.flatten(state)))
    size, joints, drivers = state.z.shape[0], state.impact_memory.shape[0], state.prescribed.shape[0]
    assert drivers == 1 and size == 2
    np.testing.assert_array_equal(mask, [1.0] * (2 * size + joints) + [0.0] + [0.0] * drivers)
    absolute = build_mechanism(config, "absolute")
    flat = absolute.flatten(absolute.initial_state())
    mask = np.asarray(tangent_mask(absolute, flat))
    assert mask[-1] == 0.0 and (mask[:-1] == 1.0).all()
