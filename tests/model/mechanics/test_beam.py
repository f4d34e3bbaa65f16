"""The Timoshenko element and the segmented cantilever against beam theory."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model.mechanics.beam import planar_stiffness, section_properties, timoshenko_stiffness
from model.mechanics.dynamics import flat_vector_field, flatten_state, initial_state
from model.mechanics.segmentation import linear_chain_matrices, natural_frequencies, support_rows

from .beam_fixtures import LENGTH, MODULUS, POISSON, SECTION, SHEAR_FACTOR, beam

SHEAR_MODULUS = MODULUS / (2.0 * (1.0 + POISSON))
EI, KGA = MODULUS * SECTION["izz"], SHEAR_MODULUS * SECTION["area"] / SHEAR_FACTOR
TIP_FORCE = -10.0


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


def static_tip_deflection(segments: int) -> float:
    """Tip deflection from Newton iterations on the full nonlinear equations of motion at rest."""
    mechanism = beam(segments, tip_force=(0.0, TIP_FORCE))
    x = flatten_state(initial_state(mechanism))
    n = 6 * segments

    @jax.jit
    def newton(x):
        residual = lambda y: flat_vector_field(0.0, x.at[:n].set(y), mechanism)[:n]
        return x.at[:n].add(-jnp.linalg.solve(jax.jacfwd(residual)(x[:n]), residual(x[:n])))

    for _ in range(3):
        x = newton(x)
    last = 3 * (segments - 1)
    return float(x[last + 1] + np.sin(x[last + 2]) * LENGTH / segments / 2.0)


def chain_deflection(segments: int) -> float:
    """Exact Timoshenko beam between the first and last segment centres, rigid half-segments
    ``a = L/(2m)`` at the ends: clamped at ``a``, end loads ``P`` and ``P a`` at ``L - a``."""
    a = LENGTH / (2 * segments)
    span = LENGTH - 2 * a
    return TIP_FORCE * ((span**3 / 3 + a * span**2 + a**2 * span) / EI + span / KGA)


@pytest.mark.slow
def test_static_cantilever_converges_to_beam_theory_at_first_order():
    theory = TIP_FORCE * (LENGTH**3 / (3 * EI) + LENGTH / KGA)
    errors = []
    for segments in (5, 10, 20):
        deflection = static_tip_deflection(segments)
        assert deflection == pytest.approx(chain_deflection(segments), rel=1e-5)  # geometric nonlinearity only
        errors.append(abs(deflection / theory - 1.0))
    orders = np.log2(np.asarray(errors[:-1]) / np.asarray(errors[1:]))
    np.testing.assert_allclose(orders, 1.0, atol=0.1)
    assert errors[-1] == pytest.approx(1.5 / 20, rel=0.05)  # leading error -3/(2m)


def eb_cantilever_omega(mode_root: float) -> float:
    mu = 7850.0 * SECTION["area"]
    return mode_root**2 / LENGTH**2 * np.sqrt(EI / mu)


def test_linear_chain_matches_the_linearised_equations_of_motion():
    """Frequencies of the chain's own linear matrices equal those of the Jacobian of the full
    vector field at rest (two independent formulations: Baumgarte modes are real)."""
    segments = 8
    mechanism = beam(segments)
    chain = mechanism.beam_chains[0]
    stiffness, mass = linear_chain_matrices(chain, np.asarray(mechanism.masses), np.asarray(mechanism.inertias))
    rows = support_rows(segments, [(0, -LENGTH / segments / 2, 0.0, True)])
    expected = natural_frequencies(stiffness, mass, rows)
    x = flatten_state(initial_state(mechanism))
    n = 6 * segments
    jacobian = jax.jacfwd(lambda y: flat_vector_field(0.0, x.at[:n].set(y), mechanism)[:n])(x[:n])
    eigen = np.linalg.eigvals(np.asarray(jacobian))
    found = np.sort(np.abs(eigen.imag[eigen.imag > 1.0]))
    np.testing.assert_allclose(found, expected, rtol=1e-6)


@pytest.mark.parametrize("segments", [20])
def test_cantilever_and_free_free_frequencies_against_beam_theory(segments):
    """Euler-Bernoulli roots 1.8751, 4.6941, 7.8548 (clamped-free) and 4.7300, 7.8532,
    10.9956 (free-free; Blevins 1979, Table 8-1); axial clamped-free pi/2 sqrt(E/rho)/L."""
    mechanism = beam(segments, supports="free")
    chain = mechanism.beam_chains[0]
    stiffness, mass = linear_chain_matrices(chain, np.asarray(mechanism.masses), np.asarray(mechanism.inertias))
    free = natural_frequencies(stiffness, mass, np.zeros((0, 3 * segments)))
    clamped = natural_frequencies(stiffness, mass, support_rows(segments, [(0, -LENGTH / segments / 2, 0.0, True)]))
    axial = np.pi / 2 * np.sqrt(MODULUS / 7850.0) / LENGTH
    report = {
        "free-free bending": free[:3] / np.array([eb_cantilever_omega(r) for r in (4.7300, 7.8532, 10.9956)]) - 1,
        "clamped bending": clamped[:3] / np.array([eb_cantilever_omega(r) for r in (1.8751, 4.6941, 7.8548)]) - 1,
        "clamped axial": np.min(np.abs(clamped / axial - 1)),
    }
    print(report)
    # Free-free at m = 20: -0.5 %, -1.6 %, -3.2 % (docs/flexible.md). The clamped chain is
    # stiffer by its rigid half-segment at the clamp, an O(1/m) error: it lies between the
    # cantilever of length L and that of length L - L/(2m) (omega ~ 1/L^2).
    assert np.all(np.abs(report["free-free bending"][:2]) < 0.02)
    shortened = (1.0 - 1.0 / (2 * segments)) ** -2 - 1.0
    assert np.all(report["clamped bending"] > 0.0) and report["clamped bending"][0] < shortened
