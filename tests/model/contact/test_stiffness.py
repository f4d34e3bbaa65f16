import math

import numpy as np
import pytest

from model import (
    damping_from_adams,
    damping_to_adams,
    effective_modulus,
    hertz_pin_stiffness,
    palmgren_stiffness,
    stiffness_from_adams,
    stiffness_to_adams,
)


def test_unit_conversion_to_mm():
    # 2.5e8 N/m^1.5 -> divide by 1000^1.5 -> about 7.9e3 N/mm^1.5.
    assert float(stiffness_to_adams(2.5e8, 1.5)) == pytest.approx(7905.7, rel=1e-4)


@pytest.mark.parametrize("exponent", [1.0, 10.0 / 9.0, 1.5, 2.2])
def test_round_trip(exponent):
    assert float(stiffness_from_adams(stiffness_to_adams(3.7e9, exponent), exponent)) == pytest.approx(
        3.7e9, rel=1e-12
    )
    assert float(damping_from_adams(damping_to_adams(123.0))) == pytest.approx(123.0, rel=1e-12)


def test_damping_conversion():
    assert float(damping_to_adams(1000.0)) == pytest.approx(1.0)


def test_effective_modulus_steel():
    # 1/E* = 2 (1 - 0.09) / 207e9
    assert float(effective_modulus(207e9, 0.3, 207e9, 0.3)) == pytest.approx(207e9 / 1.82, rel=1e-12)


def test_hertz_pin_by_hand():
    # Flores slider-crank: R_b = 10 mm, c = 0.5 mm -> R_j = 9.5 mm, R* = 10*9.5/0.5 mm = 0.19 m.
    e_star = 207e9 / 1.82
    expected = 4.0 / 3.0 * e_star * math.sqrt(0.19)
    assert float(hertz_pin_stiffness(e_star, 10e-3, 0.5e-3)) == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(6.61e10, rel=1e-3)


def test_palmgren():
    # 7.86e4 l^(8/9) N/mm^(10/9) with l = 10 mm, converted to SI by 1000^(10/9).
    k_mm = 7.86e4 * 10.0 ** (8.0 / 9.0)
    assert float(palmgren_stiffness(0.010)) == pytest.approx(k_mm * 1000.0 ** (10.0 / 9.0), rel=1e-12)
    assert float(stiffness_to_adams(palmgren_stiffness(0.010), 10.0 / 9.0)) == pytest.approx(k_mm, rel=1e-12)
    # Harris: delta = 3.84e-5 Q^0.9 / l^0.8 (mm, N) inverts to 8.06e4.
    assert 3.84e-5 ** (-10.0 / 9.0) == pytest.approx(8.06e4, rel=2e-3)
    np.testing.assert_allclose(palmgren_stiffness(0.01, 8.06e4) / palmgren_stiffness(0.01), 8.06 / 7.86)
