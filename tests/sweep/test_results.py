"""The swept paths' columns of the results table keep their values comparable: numbers
(integer settings included) as SI floats, choices as their names."""

import numpy as np

from sweep.results import parameter_column


def test_integer_settings_are_floats_that_compare_with_their_values():
    column = parameter_column([100000, 40, 100000])
    assert column.dtype == np.float64
    assert (column == 100000).tolist() == [True, False, True]


def test_floats_and_choices_and_flags():
    assert parameter_column([1e-4, 2e-4]).dtype == np.float64
    assert parameter_column(["hertz", "lankarani_nikravesh"]).tolist() == ["hertz", "lankarani_nikravesh"]
    flags = parameter_column([True, False])
    assert flags.dtype == bool and flags.tolist() == [True, False]
    # a mixed column cannot be numeric: names stay as written
    assert parameter_column([1.0, "hertz"]).dtype.kind == "U"
