"""ISO 286 limits and fits against published table values (ISO 286-1 Tables 1-2, ISO 286-2)."""

import pytest

from pipelines.design import iso286


@pytest.mark.parametrize(
    "zone, upper, lower",
    [
        ("H7", 21, 0),
        ("g6", -7, -20),
        ("f7", -20, -41),
        ("e8", -40, -73),
        ("d9", -65, -117),
        ("c11", -110, -240),
        ("h6", 0, -13),
    ],
)
def test_zones_at_20_mm_match_the_published_tables(zone, upper, lower):
    make = iso286.hole_zone if zone[0].isupper() else iso286.shaft_zone
    limits = make(zone, 20.0)
    assert (limits.upper, limits.lower) == (upper, lower)


def test_fits_at_20_mm_give_published_clearances_and_radial_halves():
    expected = {"H7/g6": (7, 41), "H7/f7": (20, 62), "H8/e8": (40, 106), "H9/d9": (65, 169), "H11/c11": (110, 370)}
    for name, (low, high) in expected.items():
        fit = iso286.fit(name, 20.0)
        assert (fit.min_clearance_um, fit.max_clearance_um) == (low, high), name
        assert fit.radial_clearance_m() == pytest.approx((low / 2e6, high / 2e6))


@pytest.mark.parametrize(
    "nominal, grade, value",
    [(18.0, 7, 18), (18.001, 7, 21), (50.0, 9, 62), (100.0, 9, 87), (10.0, 10, 58), (400.0, 11, 360), (2.0, 7, 10)],
)
def test_step_boundaries_and_table_values(nominal, grade, value):
    assert iso286.standard_tolerance(grade, nominal) == value


def test_formula_reproduces_the_table_within_rounding_above_6_mm():
    # ISO 286-1 A.3.1: the table keeps some ISA values its formula misses (notably up to
    # 6 mm); above 6 mm formula and table agree within the rounding (a few per cent).
    for upper in iso286.MAIN_STEPS_MM[2:]:
        nominal = upper - 0.5
        for grade in iso286.GRADES:
            formula = iso286.standard_tolerance_formula(grade, nominal)
            assert formula == pytest.approx(iso286.standard_tolerance(grade, nominal), rel=0.06), (upper, grade)


def test_tolerance_factor_at_the_20_mm_step():
    D = iso286.step_geometric_mean(20.0)
    assert D == pytest.approx((18 * 30) ** 0.5)
    assert iso286.tolerance_factor(D) == pytest.approx(1.307, abs=1e-3)  # 16 i = 20.9 -> IT7 = 21


def test_fundamental_deviation_formulas_follow_the_table():
    for letter in "defg":
        for upper in iso286.MAIN_STEPS_MM[1:]:
            nominal = upper - 0.5
            formula = iso286.shaft_upper_deviation_formula(letter, nominal)
            assert formula == pytest.approx(iso286.shaft_upper_deviation(letter, nominal), rel=0.06), (letter, upper)
    for upper in iso286.INTERMEDIATE_STEPS_MM[6:]:  # above 40 mm: -(95 + 0.8 D)
        nominal = upper - 0.5
        assert iso286.shaft_upper_deviation_formula("c", nominal) == pytest.approx(
            iso286.shaft_upper_deviation("c", nominal), rel=0.05
        )


def test_fits_for_band_selects_fits_inside_the_band_widest_first():
    rows = iso286.fits_for_band(0.020, 10e-6, 31e-6)
    inside = [row["fit"] for row in rows if row["within_band"]]
    assert inside[0] == "H7/f7"  # radial 10..31 um, exactly the band
    assert "H7/g6" not in inside  # its 3.5 um minimum is below the band
    assert "H8/e8" not in inside  # 53 um maximum is above it
    assert not rows[-1]["within_band"]
    wide = [row for row in iso286.fits_for_band(0.020, 0.0, 0.2e-3) if row["within_band"]]
    assert [row["tolerance_sum_um"] for row in wide] == sorted((row["tolerance_sum_um"] for row in wide), reverse=True)


def test_out_of_range_diameter_is_refused():
    with pytest.raises(ValueError, match="500 mm"):
        iso286.fit("H7/g6", 600.0)
