import pytest

from pipelines.sweeping.plots import display_unit


@pytest.mark.parametrize(
    "unit, values, expected",
    [
        ("m", [1e-4, 5e-4], ("mm", 1e-3)),  # clearances read 0.1 to 0.5 mm, not 0.0005 m
        ("m", [2e-6], ("µm", 1e-6)),
        ("m", [0.3], ("m", 1.0)),
        ("Pa", [2.07e11], ("GPa", 1e9)),
        ("", [0.5, 0.9], ("", 1.0)),  # dimensionless stays as it is
        ("N/m^1.5", [1e9], ("N/m^1.5", 1.0)),  # no smaller unit known: SI
    ],
)
def test_axes_show_values_in_a_readable_unit(unit, values, expected):
    assert display_unit(unit, values) == expected
