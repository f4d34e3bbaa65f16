"""``solver = "auto"`` with flexible bodies: the beam elements' fastest rate against the
time scale the run resolves."""

from pathlib import Path

import numpy as np
import pytest

from model.integrate.solver_choice import (
    AUTO_SOLVER, STIFF_AUTO_SOLVER, STIFFNESS_THRESHOLD, choose_solver, resolved_period, structural_rate,
)
from pipelines.build import build_mechanism, solver_settings
from pipelines.config import load_mechanism

from ..mechanics.beam_fixtures import MODULUS, SECTION, beam

CONFIGS = Path(__file__).resolve().parents[3] / "configs"


def test_rule_compares_the_rate_with_the_resolved_period():
    assert choose_solver(0.0, 1e-4) == AUTO_SOLVER  # rigid mechanism
    assert choose_solver(1e7, float("inf")) == AUTO_SOLVER  # nothing to resolve
    period = 1e-4
    assert choose_solver(0.5 * STIFFNESS_THRESHOLD / period, period) == AUTO_SOLVER
    assert choose_solver(2.0 * STIFFNESS_THRESHOLD / period, period) == STIFF_AUTO_SOLVER


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
