"""``solver = "auto"`` with flexible bodies: the beam elements' fastest rate against the
time scale the run resolves."""

from pathlib import Path

import numpy as np
import pytest

from model.integrate.solver_choice import (
    AUTO_SOLVER, EXPLICIT_STABILITY, JACOBIAN_COST_PER_COORDINATE, STIFF_AUTO_SOLVER, STIFF_STEPS_PER_PERIOD,
    auto_solver, choose_solver, resolved_period, structural_rate,
)
from pipelines.build import build_mechanism, solver_settings
from pipelines.config import load_mechanism

from ..mechanics.beam_fixtures import MODULUS, SECTION, beam

CONFIGS = Path(__file__).resolve().parents[3] / "configs"


def test_rule_weighs_explicit_steps_against_stiff_steps_with_their_jacobian():
    assert choose_solver(0.0, 1e-4, 10) == AUTO_SOLVER  # rigid mechanism
    assert choose_solver(1e7, float("inf"), 10) == AUTO_SOLVER  # nothing to resolve
    period, coordinates = 1e-4, 60
    break_even = EXPLICIT_STABILITY * STIFF_STEPS_PER_PERIOD * JACOBIAN_COST_PER_COORDINATE * coordinates / period
    assert choose_solver(0.5 * break_even, period, coordinates) == AUTO_SOLVER
    assert choose_solver(2.0 * break_even, period, coordinates) == STIFF_AUTO_SOLVER
    assert choose_solver(2.0 * break_even, period, 4 * coordinates) == AUTO_SOLVER  # a dearer Jacobian


def test_structural_rate_is_the_axial_chain_frequency_or_its_damping():
    """Undamped: the highest mode of the free chain, close to the axial chain's
    ``2 sqrt(k/m_s)``, ``k = EA m/L`` (the highest mode of a spring-mass chain); damped:
    ``beta omega_max^2`` once that is larger."""
    elements = 10
    undamped = beam(elements, supports="free")
    axial = 2.0 * np.sqrt(MODULUS * SECTION["area"] / float(undamped.beam_chains[0].element_length)
                          / float(undamped.masses[1]))
    assert structural_rate(undamped) == pytest.approx(axial, rel=0.02)
    damped = beam(elements, supports="clamped", damping_ratio=0.05)
    beta = float(damped.beam_chains[0].rayleigh_beta())
    assert beta * axial > 1.0
    assert structural_rate(damped) == pytest.approx(beta * structural_rate(undamped) ** 2, rel=1e-9)


def test_rigid_and_cantilever_configs():
    """No flexible body: Tsit5 as before. The damped cantilever (no contact): its Rayleigh
    rate ~8e7 1/s against a first bending period of 11 ms, stiff by far."""
    rigid = load_mechanism(CONFIGS / "flores_slider_crank.toml")
    assert structural_rate(build_mechanism(rigid)) == 0.0 and solver_settings(rigid).solver == AUTO_SOLVER
    cantilever = load_mechanism(CONFIGS / "flexible_cantilever.toml")
    mechanism = build_mechanism(cantilever)
    assert resolved_period(mechanism) == pytest.approx(1 / 92.1, rel=0.01)
    assert solver_settings(cantilever).solver == STIFF_AUTO_SOLVER


@pytest.mark.parametrize("elements", [5, 10, 20])
def test_flexible_flores_takes_the_solver_the_study_found_faster(elements):
    """The flexible-rod Flores slider-crank, 1.5 ms window (docs/integration.md): Tsit5 at
    its stability bound was faster than Rodas5P at equal accuracy for m = 5, 10 and 20
    (5.2x at m = 20: 5,700 steps of 0.8 ms against 369 of 61 ms)."""
    config = load_mechanism(CONFIGS / "flores_flexible.toml", [f"bodies.conrod.flexible.segments={elements}"])
    assert auto_solver(build_mechanism(config)) == AUTO_SOLVER
