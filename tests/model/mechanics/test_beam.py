"""The Timoshenko element and the segmented cantilever against beam theory."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

from model.mechanics.beam import planar_stiffness, section_properties, timoshenko_stiffness
from model.mechanics import flat_vector_field, flatten_state, initial_state
from model.mechanics.segmentation import (
    holding_segment, linear_chain_matrices, natural_frequencies, segment_bounds, support_rows,
)

from .beam_fixtures import (
    DENSITY, EI, KGA, LENGTH, MASS, MODULUS, SECTION, SHEAR_FACTOR, SHEAR_MODULUS, beam, timoshenko_frequencies,
)

TIP_FORCE = -10.0
ELEMENT_COUNTS = (5, 10, 20, 40)


def element(length=0.05):
    return timoshenko_stiffness(MODULUS, SHEAR_MODULUS, SECTION["area"], SECTION["iyy"], SECTION["izz"],
                                SECTION["ixx"], length, SHEAR_FACTOR, SHEAR_FACTOR)


def test_element_is_the_exact_timoshenko_cantilever():
    """Tip load P on the element clamped at node i: v = P L^3/(3EI) + P L/(kGA), phi = P L^2/(2EI)."""
    length = 0.05
    v, phi = np.linalg.solve(np.asarray(planar_stiffness(element(length)))[1:, 1:], [1.0, 0.0])
    assert v == pytest.approx(length**3 / (3 * EI) + length / KGA, rel=1e-12)
    assert phi == pytest.approx(length**2 / (2 * EI), rel=1e-12)  # K26 < 0 with phi_z = dv/dx
    full = np.asarray(element(length))
    np.testing.assert_allclose(full, full.T)
    assert np.all(np.linalg.eigvalsh(full) > 0.0)


def test_circle_and_tube_sections():
    tube = section_properties("tube", outer_diameter=0.02, inner_diameter=0.0)
    circle = section_properties("circle", diameter=0.02)
    assert tube == pytest.approx(circle)
    assert circle["izz"] == pytest.approx(np.pi * 0.02**4 / 64)


def test_segments_follow_the_rigid_finite_element_division():
    """m elements: m + 1 segments, half-length ones at the ends, cuts at the element
    midpoints; a point on a cut goes to the segment on its +x side."""
    bounds = segment_bounds(LENGTH, 4)
    np.testing.assert_allclose(np.diff(bounds, axis=1)[:, 0], LENGTH / 4 * np.array([0.5, 1, 1, 1, 0.5]))
    np.testing.assert_allclose(bounds[1:, 0], bounds[:-1, 1])
    assert [holding_segment(x, LENGTH, 4) for x in (-0.15, -0.1125, -0.1124, 0.0, 0.15)] == [0, 1, 1, 2, 4]


def static_tip_deflection(elements: int) -> float:
    """Tip deflection from Newton iterations on the full nonlinear equations of motion at rest."""
    mechanism = beam(elements, tip_force=(0.0, TIP_FORCE))
    x = flatten_state(initial_state(mechanism))
    n = 6 * (elements + 1)

    @jax.jit
    def newton(x):
        residual = lambda y: flat_vector_field(0.0, x.at[:n].set(y), mechanism)[:n]
        return x.at[:n].add(-jnp.linalg.solve(jax.jacfwd(residual)(x[:n]), residual(x[:n])))

    for _ in range(3):
        x = newton(x)
    last = 3 * elements
    return float(x[last + 1] + np.sin(x[last + 2]) * LENGTH / elements / 4.0)


@pytest.mark.slow
def test_static_tip_load_gives_the_timoshenko_deflection_at_any_division():
    """Neighbouring elements share their node, so the chain is a beam of exact Timoshenko
    elements: under a tip load only the geometric nonlinearity (~(v/L)^2) remains."""
    theory = TIP_FORCE * (LENGTH**3 / (3 * EI) + LENGTH / KGA)
    for elements in (5, 20):
        assert static_tip_deflection(elements) == pytest.approx(theory, rel=1e-5)


def clamped_rows(elements: int) -> np.ndarray:
    return support_rows(elements + 1, [(0, -LENGTH / elements / 4, 0.0, True)])


def linear_model(elements: int, supports: str = "clamped"):
    mechanism = beam(elements, supports=supports)
    return linear_chain_matrices(mechanism.beam_chains[0], np.asarray(mechanism.masses), np.asarray(mechanism.inertias))


def orders(errors) -> np.ndarray:
    """Observed convergence orders between successive doublings of the element count."""
    errors = np.abs(np.asarray(errors))
    return np.log2(errors[:-1] / errors[1:])


def test_uniform_load_converges_at_second_order():
    """Uniform load q lumped on the segments, linear statics: tip deflection against
    ``q L^4/(8 EI) + q L^2/(2 kGA)`` (Timoshenko & Gere 1972)."""
    q = -10.0  # N/m
    theory = q * (LENGTH**4 / (8 * EI) + LENGTH**2 / (2 * KGA))
    errors = []
    for elements in ELEMENT_COUNTS:
        stiffness, _ = linear_model(elements)
        basis = scipy.linalg.null_space(clamped_rows(elements))
        load = np.zeros(3 * (elements + 1))
        load[1::3] = q * LENGTH * np.diff(segment_bounds(1.0, elements), axis=1)[:, 0]
        u = basis @ np.linalg.solve(basis.T @ stiffness @ basis, basis.T @ load)
        errors.append((u[-2] + u[-1] * LENGTH / elements / 4) / theory - 1.0)
    np.testing.assert_allclose(orders(errors), 2.0, atol=0.05)
    assert abs(errors[2]) < 1e-3


def test_linear_chain_matches_the_linearised_equations_of_motion():
    """Frequencies of the chain's own linear matrices equal those of the Jacobian of the full
    vector field at rest (two independent formulations: Baumgarte modes are real)."""
    elements = 7
    mechanism = beam(elements)
    stiffness, mass = linear_model(elements)
    expected = natural_frequencies(stiffness, mass, clamped_rows(elements))
    x = flatten_state(initial_state(mechanism))
    n = 6 * (elements + 1)
    jacobian = jax.jit(jax.jacfwd(lambda y: flat_vector_field(0.0, x.at[:n].set(y), mechanism)[:n]))(x[:n])
    eigen = np.linalg.eigvals(np.asarray(jacobian))
    found = np.sort(np.abs(eigen.imag[eigen.imag > 1.0]))
    np.testing.assert_allclose(found, expected, rtol=1e-6)


@pytest.fixture(scope="module")
def frequency_errors() -> dict[str, np.ndarray]:
    """Relative errors (rows: m = 5, 10, 20, 40) of the first three bending frequencies
    against the exact Timoshenko beam and of the first axial one against ``pi/2 c/L``
    (clamped-free) or ``pi c/L`` (free-free), ``c = sqrt(E/rho)``."""
    wave = np.sqrt(MODULUS / DENSITY) / LENGTH
    reference = {"clamped": (timoshenko_frequencies("clamped"), np.pi / 2 * wave),
                 "free": (timoshenko_frequencies("free"), np.pi * wave)}
    errors = {f"{s} {k}": [] for s in reference for k in ("bending", "axial")}
    for elements in ELEMENT_COUNTS:
        stiffness, mass = linear_model(elements, "free")
        rows = {"clamped": clamped_rows(elements), "free": np.zeros((0, 3 * (elements + 1)))}
        for supports, (bending, axial) in reference.items():
            omega = natural_frequencies(stiffness, mass, rows[supports])
            errors[f"{supports} bending"].append(omega[:3] / bending - 1.0)
            errors[f"{supports} axial"].append(np.min(np.abs(omega / axial - 1.0)))
    return {key: np.asarray(value) for key, value in errors.items()}


def test_frequencies_within_two_percent_at_twenty_elements(frequency_errors):
    for key, errors in frequency_errors.items():
        assert np.all(np.abs(errors[ELEMENT_COUNTS.index(20)]) < 0.02), key


def test_frequencies_converge_at_second_order(frequency_errors):
    for key, errors in frequency_errors.items():
        observed = orders(errors)  # rows: 5 -> 10, 10 -> 20, 20 -> 40
        assert np.all(observed > 1.5) and np.all(np.abs(observed[1:] - 2.0) < 0.1), (key, observed)


def test_timoshenko_reference_tends_to_euler_bernoulli():
    """The reference itself: for a slender beam (Timoshenko correction ~ (r/L)^2) it tends
    to the Euler-Bernoulli roots 1.8751, 4.6941, 7.8548 (clamped-free) and 4.7300, 7.8532,
    10.9956 (free-free; Blevins 1979, Table 8-1)."""
    scale = np.sqrt(EI / (DENSITY * SECTION["area"])) / LENGTH**2
    for supports, roots in (("clamped", (1.8751, 4.6941, 7.8548)), ("free", (4.7300, 7.8532, 10.9956))):
        ratio = timoshenko_frequencies(supports) / (np.asarray(roots) ** 2 * scale)
        assert np.all(ratio < 1.0) and np.all(ratio > 0.97)
        assert np.all(np.diff(ratio) < 0.0)  # shear and rotary inertia matter more for higher modes
