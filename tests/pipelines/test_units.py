"""Quantity strings -> SI floats, and the errors for bad ones."""

import math

import pytest

from pipelines.errors import ConfigError
from pipelines.units import quantity_to_si, si_unit, stiffness_unit, to_si


@pytest.mark.parametrize(
    "value, dimension, expected",
    [
        ("0.5 mm", "length", 5e-4),
        ("207 GPa", "pressure", 207e9),
        ("5000 rpm", "angular_velocity", 5000 * 2 * math.pi / 60),
        ("1.0e-4 kg*m^2", "inertia", 1e-4),
        ("6.6e10 N/m^1.5", stiffness_unit(1.5), 6.6e10),
        ("24 ms", "time", 0.024),
        ("10 us", "time", 1e-5),
        ("0 deg", "angle", 0.0),
        ("90 deg", "angle", math.pi / 2),
        ("1 mm/s", "velocity", 1e-3),
        ("5 kN", "force", 5000.0),
        ("-9.81 m/s^2", "acceleration", -9.81),
        (0.9, "dimensionless", 0.9),
        (1, "dimensionless", 1.0),
        ("0.5", "dimensionless", 0.5),
    ],
)
def test_converts_to_si(value, dimension, expected):
    assert quantity_to_si(value, dimension) == pytest.approx(expected, rel=1e-12)


def test_ten_microseconds_is_exact():
    assert to_si("10 us", "time", "f.toml", "simulation.output_interval") == 1e-5


def test_stiffness_unit_follows_the_exponent():
    assert stiffness_unit(1.5) == "N/m^1.5"
    assert quantity_to_si("1e5 N/m^1.1", stiffness_unit(1.1)) == pytest.approx(1e5)
    assert si_unit("length") == "m"


@pytest.mark.parametrize(
    "value, dimension, fragment",
    [
        (0.5, "length", "missing unit"),
        ("0.5", "length", "missing unit"),
        (0.3, "angle", "missing unit"),
        ("5 kg", "length", "wrong dimension"),
        ("6.6e10 N/m", stiffness_unit(1.5), "wrong dimension"),
        ("6.6e10 N/m^1.5", stiffness_unit(10 / 9), "wrong dimension"),
        ("2 m", "angle", "wrong dimension"),
        ("30 deg", "dimensionless", "expected a plain number"),
        ("0.5 mmm", "length", "cannot parse"),
        ("mm", "length", "no number"),
        ("", "length", "no number"),
        ("5 mm +", "length", "cannot parse"),
        (True, "dimensionless", "expected a quantity"),
        ([1, 2], "length", "expected a quantity"),
        ("1e999 m", "length", "not a finite number"),
    ],
)
def test_bad_values_name_file_and_key(value, dimension, fragment):
    with pytest.raises(ConfigError) as caught:
        to_si(value, dimension, "mech.toml", "joints.pin.clearance")
    message = str(caught.value)
    assert message.startswith("mech.toml: joints.pin.clearance: ")
    assert fragment in message
    assert "\n" not in message


def test_plain_number_in_si_unit_when_allowed():
    assert to_si(5.0, "rate", "f", "k", plain_number_unit=True) == 5.0
    assert to_si("5 1/s", "rate", "f", "k", plain_number_unit=True) == 5.0
