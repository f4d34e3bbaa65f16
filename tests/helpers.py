"""Helpers shared by the test modules: where the shipped configs are, and small config
files written into a test's temporary folder."""

import shutil
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
CONFIGS = REPOSITORY / "configs"
FLORES = CONFIGS / "flores_slider_crank.toml"

SWEEP = """base = "{base}"
[sweep]
{sweep}
{parameters}
[simulation]
{simulation}
"""

CLEARANCE_RANGE = 'path = "joints.pin.clearance"\nrange = ["0.1 mm", "0.5 mm"]'
RESTITUTION_RANGE = 'path = "joints.pin.contact.restitution"\nrange = [0.5, 0.95]'


def write_sweep(tmp_path: Path, sweep: str, *parameters: str, name: str = "sweep.toml", base: Path = FLORES,
                simulation: str = 't_end = "2 ms"') -> Path:
    """A sweep config beside a copy of its ``base`` mechanism (the Flores slider-crank by
    default); each parameter is the body of a [[sweep.parameters]] table, ``simulation``
    the body of its [simulation] table."""
    shutil.copy(base, tmp_path)
    path = tmp_path / name
    tables = "\n".join(f"[[sweep.parameters]]\n{body}" for body in parameters)
    path.write_text(SWEEP.format(base=base.name, sweep=sweep, parameters=tables, simulation=simulation))
    return path


def write_variant(tmp_path: Path, config: Path, old: str, new: str, name: str,
                  bases: tuple[str, ...] = ("flores_slider_crank.toml",)) -> Path:
    """``config`` with its text ``old`` (which must occur) replaced by ``new``, written as
    ``name`` beside copies of the shipped configs ``bases`` it refers to."""
    for base in bases:
        shutil.copy(CONFIGS / base, tmp_path / base)
    text = config.read_text()
    assert old in text
    path = tmp_path / name
    path.write_text(text.replace(old, new))
    return path


def flores_restitution_objective(solver: str):
    """``objective(restitution, adjoint="checkpoint")`` of the Rosenbrock gradient checks:
    the Flores slider-crank solved with ``solver`` over 0.3 ms (the first impact, onset
    ~0.22 ms) at rtol 1e-10 with a 2 us step cap through the 60 us contact (the error
    control does not see the sensitivities; docs/integration.md, Gradients), scored as the
    sum of squared penetrations (x 1e8) plus the slider's final velocity."""
    import dataclasses

    import jax.numpy as jnp

    import model
    from pipelines.build import ParameterMap, build_mechanism, solver_settings
    from pipelines.config import load_mechanism

    config = load_mechanism(FLORES)
    mechanism = build_mechanism(config)
    settings = solver_settings(config, solver=solver, t_end=3e-4, output_interval=1e-5, rtol=1e-10, atol=1e-13,
                               dtmax=2e-6)
    parameters = ParameterMap(mechanism, ["joints.pin.contact.restitution"])

    def objective(restitution, adjoint="checkpoint"):
        trajectory = model.simulate(parameters.apply(mechanism, [restitution]),
                                    dataclasses.replace(settings, adjoint=adjoint))
        return jnp.sum(trajectory.penetration**2) * 1e8 + trajectory.qd[-1, -3]

    return objective


def central_differences(function, x0, relative_step: float):
    """Central differences of the scalar ``function`` at the vector ``x0``, one compiled
    evaluation pair per component, step ``relative_step * |x0[i]|``."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    value = jax.jit(function)
    gradient = []
    for i in range(x0.size):
        h = relative_step * abs(float(x0[i]))
        e = jnp.zeros_like(x0).at[i].set(h)
        gradient.append((float(value(x0 + e)) - float(value(x0 - e))) / (2 * h))
    return np.asarray(gradient)


def ball_in_socket(contact: str, simulation: str = "") -> str:
    """A spatial config: a 2 kg steel ball in a 10 mm spherical socket with 0.1 mm clearance,
    fixed to ground; ``contact`` is the body of its [joints.contact] table, ``simulation``
    that of a [simulation] table (none if empty)."""
    text = f"""name = "ball"
dimension = 3
[materials.steel]
youngs_modulus = "207 GPa"
poisson_ratio = 0.3
[[bodies]]
name = "ball"
mass = "2 kg"
inertia = ["1e-4 kg*m^2", "1e-4 kg*m^2", "1e-4 kg*m^2"]
position = ["0 m", "0 m", "0 m"]
[[joints]]
name = "socket"
type = "spherical_clearance"
bodies = ["ball", "ground"]
socket_radius = "10 mm"
clearance = "0.1 mm"
materials = ["steel", "steel"]
[joints.contact]
{contact}
"""
    return text + (f"[simulation]\n{simulation}\n" if simulation else "")


def check_lanes_and_clearance_gradient(base, settings) -> None:
    """Refilling lanes give each point's single solve to the solver's tolerance (the lanes
    step with the lean explicit stage loop, which rounds differently), and the derivative of
    the first clearance joint's peak force with respect to ``joints.pin.clearance``, reverse
    mode (``jax.grad``) through the solve, matches central differences of it. ``settings``
    at rtol 1e-8: the solver's noise over the 1e-7 m step stays below 1e-4 of the slope."""
    import jax
    import jax.numpy as jnp
    import pytest

    import model
    from pipelines.build import ParameterMap

    parameters = ParameterMap(base, ["joints.pin.clearance"])
    values = jnp.asarray([[2e-4], [5e-4], [3e-4]])

    @jax.jit
    def peak_forces(values):
        mechanisms = jax.vmap(parameters.apply, (None, 0))(base, values)
        return model.simulate_ensemble(mechanisms, settings, lanes=2).peaks.max_normal_force[:, 0]

    @jax.jit
    def single(value):
        return model.simulate(parameters.apply(base, value), settings).peaks.max_normal_force[0]

    lanes = peak_forces(values)
    for k in range(values.shape[0]):
        assert float(lanes[k]) == pytest.approx(float(single(values[k])), rel=1e-7)
    derivative = jax.jit(jax.grad(lambda value: single(value[None])))(values[1, 0])
    step = 1e-7  # m
    central = (single(values[1] + step) - single(values[1] - step)) / (2 * step)
    assert float(derivative) == pytest.approx(float(central), rel=1e-3)
