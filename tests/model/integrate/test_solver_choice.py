"""``solver = "auto"`` with flexible bodies: the beam elements' fastest rate against the
time scale the run resolves."""

from pathlib import Path

import numpy as np
import pytest

from model.integrate.solver_choice import (
    AUTO_SOLVER, EXPLICIT_STABILITY, STIFF_AUTO_SOLVER, auto_solver, choose_solver, resolved_period,
    stiff_cost_per_period, structural_rate,
)
from pipelines.build import build_mechanism, solver_settings
from pipelines.config import load_mechanism

from ..mechanics.beam_fixtures import MODULUS, SECTION, beam

CONFIGS = Path(__file__).resolve().parents[3] / "configs"


def test_rule_weighs_explicit_steps_against_stiff_steps_with_their_jacobian():
    assert choose_solver(0.0, 1e-4, 10) == AUTO_SOLVER  # rigid mechanism
    assert choose_solver(1e7, float("inf"), 10) == AUTO_SOLVER  # nothing to resolve
    period, coordinates = 1e-4, 60
    break_even = EXPLICIT_STABILITY * stiff_cost_per_period(coordinates) / period
    assert choose_solver(0.5 * break_even, period, coordinates) == AUTO_SOLVER
    assert choose_solver(2.0 * break_even, period, coordinates) == STIFF_AUTO_SOLVER
    assert choose_solver(2.0 * break_even, period, 4 * coordinates) == AUTO_SOLVER  # a dearer Jacobian
    # a tighter tolerance costs the order-3 stiff solver more steps, not the explicit one
    assert choose_solver(2.0 * break_even, period, coordinates, rtol=1e-3 / 2.0**5) == AUTO_SOLVER
    assert STIFF_AUTO_SOLVER == "ros34pw2"


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


# The faster of Tsit5 and ROS34PW2 at each element count and rtol in the study
# (docs/integration.md, "Flexible bodies": one run, pinned to one core, 2026-12-05; run
# times in s, Tsit5 / ROS34PW2). m = 5: 0.019 / 0.015, 0.019 / 0.018, 0.019 / 0.024,
# 0.020 / 0.042, 0.022 / 0.083 at rtol 1e-2, 3e-3, 1e-3, 1e-4, 1e-5; m = 10: ROS34PW2 at
# 1e-2 to 1e-4 (0.031-0.089 against 0.099-0.101), Tsit5 at 1e-5 (0.099 against 0.168);
# m = 20: ROS34PW2 at every rtol (0.081-0.448 against 0.535-0.539).
RTOLS = (1e-2, 3e-3, 1e-3, 1e-4, 1e-5)
MEASURED_WINNER = {
    **{(5, rtol): STIFF_AUTO_SOLVER if rtol > 1e-3 else AUTO_SOLVER for rtol in RTOLS},
    **{(10, rtol): STIFF_AUTO_SOLVER if rtol > 1e-5 else AUTO_SOLVER for rtol in RTOLS},
    **{(20, rtol): STIFF_AUTO_SOLVER for rtol in RTOLS},
}


@pytest.mark.parametrize("elements", [5, 10, 20])
def test_flexible_flores_takes_the_solver_the_study_found_faster(elements):
    """The flexible-rod Flores slider-crank, 1.5 ms window: the rule's choice is the faster
    solver of the study at every element count and tolerance."""
    config = load_mechanism(CONFIGS / "flores_flexible.toml", [f"bodies.conrod.flexible.segments={elements}"])
    mechanism = build_mechanism(config)
    assert auto_solver(mechanism) == MEASURED_WINNER[elements, 1e-3]
    for rtol in RTOLS:
        assert auto_solver(mechanism, rtol) == MEASURED_WINNER[elements, rtol], rtol


def test_shipped_flexible_slider_crank_at_its_rtol_takes_tsit5():
    # 24 ms at rtol 1e-6 (m = 10), pinned: Tsit5 22,299 steps in 1.66 s, ROS34PW2 15,581
    # steps in 2.28 s (docs/flexible.md)
    config = load_mechanism(CONFIGS / "flores_flexible.toml")
    assert config.simulation.rtol == 1e-6
    assert solver_settings(config).solver == AUTO_SOLVER
    assert solver_settings(config, rtol=1e-3).solver == STIFF_AUTO_SOLVER
