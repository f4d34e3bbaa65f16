"""Sampling designs in the unit cube: Latin hypercube strata, Sobol' balance, log scaling."""

import numpy as np
import pytest

from sweep.design import scale_unit_samples, unit_samples


def test_latin_hypercube_has_one_sample_per_stratum():
    samples = unit_samples("lhs", 3, 20, seed=0)
    for column in samples.T:
        np.testing.assert_array_equal(np.sort(np.floor(column * 20)), np.arange(20))


def test_sobol_power_of_two_is_balanced():
    samples = unit_samples("sobol", 2, 32, seed=1)
    # every dyadic half and quarter of each axis holds exactly its share of the points
    for column in samples.T:
        np.testing.assert_array_equal(np.bincount(np.floor(column * 4).astype(int), minlength=4), [8, 8, 8, 8])


def test_log_sampling_maps_the_unit_interval_onto_the_bounds():
    mapped = scale_unit_samples(np.array([0.0, 0.5, 1.0]), (1e-5, 1e-3), "log")
    assert mapped == pytest.approx([1e-5, 1e-4, 1e-3])
