"""Accuracy checks of the model against closed forms, independent runs and known truths:
the restitution each contact law delivers (case ``restitution``), the dry against the
lubricated slider-crank (case ``lubrication``), the slicing convergence of the cylindrical
clearance joint (case ``slicing``), the coverage of the calibration's intervals (case ``calibration``) and the
Lyapunov spectrum against lyapax (case ``lyapunov-peer``)::

    python -m benchmarks.accuracy --list
    python -m benchmarks.accuracy --case slicing

docs/contact_models.md, docs/lubrication.md, docs/spatial.md and docs/calibration.md record
the results.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import shutil
import tempfile
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import equinox as eqx  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from benchmarks import harness  # noqa: E402
from model import NORMAL_FORCE_LAWS, ContactLaw, obtained_restitution  # noqa: E402
from model.contact.friction import FrictionLaw  # noqa: E402
from model.contact.stiffness import palmgren_stiffness  # noqa: E402
from model.geometry.quaternion import axis_angle_quaternion  # noqa: E402
from model.mechanics.spatial import GROUND, CylindricalClearanceJoint  # noqa: E402
from model.mechanics.spatial.forces import cylindrical_contact  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------- restitution
matplotlib.use("Agg")


TABLE_RESTITUTIONS = (0.3, 0.5, 0.7, 0.9, 0.99)


KELVIN_VOIGT_DAMPING = 1e3  # N s/m (kelvin_voigt ignores e)


PENETRATION_MAX = 1e-4  # m (adams_impact d_max)


def obtained_curve(model: str, restitutions: np.ndarray) -> np.ndarray:
    law = ContactLaw(model, stiffness=1e9, exponent=1.5, damping=KELVIN_VOIGT_DAMPING, penetration_max=PENETRATION_MAX)
    run = jax.jit(jax.vmap(lambda e: obtained_restitution(eqx.tree_at(lambda c: c.restitution, law, e))))
    return np.asarray(run(jnp.asarray(restitutions)))


def restitution(argv=None) -> int:
    """Obtained vs nominal coefficient of restitution for every normal contact force law.

    1-D impact of 1 kg on 1 kg at 1 m/s, K = 1e9 N/m^1.5, n = 1.5 (``model/contact/impact1d.py``).
    Prints a Markdown table (nominal e = 0.3, 0.5, 0.7, 0.9, 0.99) and writes the plot
    ``docs/figures/restitution.png``. Run from the repository root::

        .venv/bin/python -m benchmarks.accuracy --case restitution
    """
    parser = argparse.ArgumentParser(description=restitution.__doc__.splitlines()[0])
    parser.add_argument("--plot", default="docs/figures/restitution.png")
    args = parser.parse_args(argv)

    table_es = np.array(TABLE_RESTITUTIONS)
    curve_es = np.linspace(0.1, 1.0, 46)
    rows, curves = {}, {}
    for model in NORMAL_FORCE_LAWS:
        rows[model] = obtained_curve(model, table_es)
        curves[model] = obtained_curve(model, curve_es)

    print("| law | " + " | ".join(f"e = {e:g}" for e in table_es) + " | max abs error |")
    print("|---|" + "---:|" * (len(table_es) + 1))
    for model, values in rows.items():
        cells = " | ".join(f"{v:.4f}" for v in values)
        print(f"| {model} | {cells} | {np.max(np.abs(values - table_es)):.4f} |")

    fig, ax = plt.subplots(figsize=(6.5, 5.5))
    ax.plot([0, 1], [0, 1], color="0.6", lw=1, ls="--", label="obtained = nominal")
    for model, values in curves.items():
        ax.plot(curve_es, values, lw=1.6, label=model)
    ax.set_xlabel("nominal coefficient of restitution e")
    ax.set_ylabel("obtained e (separation / approach speed)")
    ax.set_title("1-D impact, 1 kg on 1 kg, 1 m/s, K = 1e9 N/m^1.5, n = 1.5", fontsize=9)
    ax.set_xlim(0.1, 1.0)
    ax.set_ylim(0.0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    path = Path(args.plot)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130)
    print(f"\nplot: {path}")


# ---------------------------------------------------------------------- lubrication
matplotlib.use("Agg")


LUBRICATION_RUNS = {"dry": "flores_slider_crank", "lubricated": "flores_lubricated"}


CLEARANCE_MM = 0.5


CRANK_SPEED = 5000 * 2 * np.pi / 60  # rad/s


def lubrication(argv=None) -> int:
    """Dry against lubricated Flores slider-crank: journal orbits, pin force and slider
    acceleration from the two ``simulate`` outputs, in one figure (docs/lubrication.md).

        PYTHONPATH=$PWD python -m pipelines.cli simulate configs/flores_slider_crank.toml
        PYTHONPATH=$PWD python -m pipelines.cli simulate configs/flores_lubricated.toml
        PYTHONPATH=$PWD python -m benchmarks.accuracy --case lubrication
    """
    parser = argparse.ArgumentParser(description=lubrication.__doc__.splitlines()[0])
    parser.add_argument("--outputs", type=Path, default=Path("outputs/simulate"))
    parser.add_argument("--figure", type=Path, default=Path("docs/figures/lubrication/dry_vs_lubricated.png"))
    args = parser.parse_args(argv)
    runs = {label: pd.read_parquet(args.outputs / name / "timeseries.parquet") for label, name in LUBRICATION_RUNS.items()}
    figure, (orbit, force, acceleration) = plt.subplots(1, 3, figsize=(15, 4.6))
    circle = np.linspace(0, 2 * np.pi, 400)
    orbit.plot(CLEARANCE_MM * np.cos(circle), CLEARANCE_MM * np.sin(circle), "k--", lw=1, label="clearance circle")
    for (label, data), colour in zip(runs.items(), ("tab:red", "tab:blue")):
        crank_angle = np.degrees(CRANK_SPEED * data["t"])
        orbit.plot(1e3 * data["pin.ex"], 1e3 * data["pin.ey"], color=colour, lw=0.8, label=label)
        force.plot(crank_angle, 1e-3 * data["pin.normal_force"], color=colour, lw=0.8, label=label)
        acceleration.plot(crank_angle, 1e-3 * data["slider.ax"], color=colour, lw=0.8, label=label)
        print(f"{label}: peak pin force {data['pin.normal_force'].max():.4g} N, "
              f"peak |slider a| {data['slider.ax'].abs().max():.4g} m/s^2, "
              f"max e/c {np.hypot(data['pin.ex'], data['pin.ey']).max() / (CLEARANCE_MM * 1e-3):.3f}")
    orbit.set(xlabel="e_x (mm)", ylabel="e_y (mm)", title="journal orbit", aspect="equal")
    force.set(xlabel="crank angle (deg)", ylabel="pin normal force (kN)", title="pin force (film + contact)")
    acceleration.set(xlabel="crank angle (deg)", ylabel="slider a_x (km/s^2)", title="slider acceleration")
    for axis in (orbit, force, acceleration):
        axis.legend(fontsize=8)
    figure.tight_layout()
    args.figure.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(args.figure, dpi=110)
    print(f"wrote {args.figure}")


# ---------------------------------------------------------------------- slicing
LENGTH = 0.040  # m


CLEARANCE = 1e-3  # m


EXPONENT = 10.0 / 9.0


LOAD = 1000.0  # N, at the centre, along -y (case 4)


TORQUE = 10.0  # N m, about +x (case 4)


EDGE_POSE = (-2e-6, 2e-4)  # (centre penetration m, tilt rad): the last quarter touches


ALIGNED_PENETRATION = 3e-6  # m


SLICES = (1, 2, 3, 5, 10, 20, 40)


def pin_joint(slices: int) -> CylindricalClearanceJoint:
    """The load cases' pin in its fixed bushing (elastic Palmgren law, no friction)."""
    return CylindricalClearanceJoint(
        journal_body=0, bearing_body=GROUND, slices=slices, axial_fixed=True, palmgren=True,
        journal_point=jnp.zeros(3), bearing_point=jnp.zeros(3), journal_axis=jnp.array([0.0, 0.0, 1.0]),
        bearing_axis=jnp.array([0.0, 0.0, 1.0]), bearing_u=jnp.array([1.0, 0.0, 0.0]),
        bearing_w=jnp.array([0.0, 1.0, 0.0]), length=jnp.asarray(LENGTH), bearing_radius=jnp.asarray(0.011),
        clearance=jnp.asarray(CLEARANCE), contact=ContactLaw("hertz", stiffness=0.0, exponent=EXPONENT),
        friction=FrictionLaw("none"), initial_eccentricity=jnp.zeros(2))


def _pose(penetration, tilt):
    """The pin's coordinates: centre ``c + penetration`` below the bearing axis, tilted by
    ``tilt`` about x (slice z then penetrates ``penetration + z sin(tilt)``)."""
    quaternion = axis_angle_quaternion(jnp.array([1.0, 0.0, 0.0]), tilt)
    return jnp.concatenate([jnp.array([0.0, -(CLEARANCE + penetration), 0.0]), quaternion])


@functools.partial(jax.jit, static_argnums=0)
def contact_at(slices: int, penetration, tilt):
    """``(generalised force on the pin [f, tau], F_a, F_b, peak slice penetration)`` at the pose."""
    joint = pin_joint(slices)
    x = _pose(penetration, tilt)
    generalised, summary, _ = cylindrical_contact(joint, x, jnp.zeros(6), jnp.ones(slices), jnp.zeros(6))
    return generalised, summary[4], summary[5], summary[2]


@functools.partial(jax.jit, static_argnums=0)
def balanced_pose(slices: int) -> tuple[jax.Array, jax.Array]:
    """Pose (centre penetration m, tilt rad) where the contact balances load case 4:
    contact force along +y equal to ``LOAD``, contact moment about x equal to ``-TORQUE``.
    Newton in scaled unknowns (um, mrad) from the aligned line-contact guess."""
    def residual(unknowns):
        generalised = contact_at(slices, unknowns[0] * 1e-6, unknowns[1] * 1e-3)[0]
        return jnp.stack([(generalised[1] - LOAD) / LOAD, (generalised[3] + TORQUE) / (LOAD * LENGTH)])

    def step(unknowns, _):
        update = jnp.linalg.solve(jax.jacfwd(residual)(unknowns), residual(unknowns))
        return unknowns - update, None

    guess = jnp.stack([1e6 * (LOAD / palmgren_stiffness(LENGTH)) ** (1.0 / EXPONENT), jnp.zeros(())])
    solution = jax.lax.scan(step, guess, None, length=40)[0]
    return solution[0] * 1e-6, solution[1] * 1e-3


def _wedge_integrals(centre_penetration, slope):
    """``S = (K/l) int f dz`` and ``Z = (K/l) int z f dz`` over the contact length for the
    penetration ``delta(z) = centre_penetration + slope z`` (slope > 0), ``f = delta^n`` where
    positive: with ``u = delta``, ``int u^n dz = u^(n+1) / ((n+1) s)`` and ``int z u^n dz =
    [u^(n+2)/(n+2) - delta_0 u^(n+1)/(n+1)] / s^2``."""
    stiffness = float(palmgren_stiffness(LENGTH)) / LENGTH
    n, s, d0 = EXPONENT, slope, centre_penetration
    upper, lower = max(d0 + s * LENGTH / 2, 0.0), max(d0 - s * LENGTH / 2, 0.0)
    force = (upper ** (n + 1) - lower ** (n + 1)) / ((n + 1) * s)
    moment = ((upper ** (n + 2) - lower ** (n + 2)) / (n + 2) - d0 * (upper ** (n + 1) - lower ** (n + 1)) / (n + 1)) / s**2
    return stiffness * force, stiffness * moment


def wedge_end_forces(centre_penetration, tilt) -> tuple[float, float]:
    """Continuum end forces (N) of the tilted pin: ``F_a, F_b = S/2 -+ Z/l`` (the slices'
    penetration is exactly ``delta_0 + z sin(tilt)``; their axial positions ``z cos(tilt)``
    differ from ``z`` by 2e-8 here)."""
    force, moment = _wedge_integrals(centre_penetration, np.sin(tilt))
    return abs(0.5 * force - moment / LENGTH), abs(0.5 * force + moment / LENGTH)


def continuum_balanced_pose() -> tuple[float, float]:
    """Load case 4 balanced by the continuum line contact: ``S = LOAD``, ``Z = TORQUE``
    (scipy ``fsolve`` on the closed-form integrals)."""
    from scipy.optimize import fsolve

    def residual(unknowns):
        force, moment = _wedge_integrals(unknowns[0] * 1e-6, unknowns[1] * 1e-3)
        return [force / LOAD - 1.0, moment / (LOAD * LENGTH) - TORQUE / (LOAD * LENGTH)]

    solution = fsolve(residual, [2.0, 0.1], xtol=1e-12)
    return solution[0] * 1e-6, solution[1] * 1e-3


def continuum_peak(centre_penetration, tilt) -> float:
    """The penetration at end b (m): the continuum's peak."""
    return centre_penetration + np.sin(tilt) * LENGTH / 2


def slice_peak(centre_penetration, tilt, slices: int) -> float:
    """The deepest slice centre's penetration, at ``z = l/2 - l/(2N)``: the slicing samples
    the wedge at the slice centres, a first-order lag behind the end."""
    return centre_penetration + np.sin(tilt) * (LENGTH / 2 - LENGTH / (2 * slices))


@dataclasses.dataclass
class Row:
    slices: int
    aligned_force: float  # N, resultant of the aligned case
    edge_end_a: float  # N
    edge_end_b: float  # N
    edge_peak_penetration: float  # m
    loaded_peak_penetration: float  # m (nan: no balanced pose)
    loaded_end_a: float  # N
    loaded_end_b: float  # N


def row(slices: int) -> Row:
    aligned = contact_at(slices, ALIGNED_PENETRATION, 0.0)
    edge = contact_at(slices, *EDGE_POSE)
    loaded = contact_at(slices, *balanced_pose(slices)) if slices > 1 else [np.nan] * 4
    return Row(slices, float(jnp.linalg.norm(aligned[0][:3])), float(edge[1]), float(edge[2]), float(edge[3]),
               float(loaded[3]), float(loaded[1]), float(loaded[2]))


def aligned_law() -> float:
    """The whole-length law at the aligned penetration (N)."""
    return float(palmgren_stiffness(LENGTH)) * ALIGNED_PENETRATION**EXPONENT


def errors(rows: list[Row]) -> dict[str, np.ndarray]:
    """Relative errors against the continuum: the aligned force against the whole-length
    law, the edge case's end forces and peak penetration, the loaded case's peak penetration."""
    end_a, end_b = wedge_end_forces(*EDGE_POSE)
    edge_peak, loaded_peak = continuum_peak(*EDGE_POSE), continuum_peak(*continuum_balanced_pose())
    error = lambda values, exact: np.abs(np.asarray(values) - exact) / abs(exact)
    return {"aligned": error([r.aligned_force for r in rows], aligned_law()),
            "edge_end_a": error([r.edge_end_a for r in rows], end_a),
            "edge_end_b": error([r.edge_end_b for r in rows], end_b),
            "edge_peak_penetration": error([r.edge_peak_penetration for r in rows], edge_peak),
            "loaded_peak_penetration": error([r.loaded_peak_penetration for r in rows], loaded_peak)}


def observed_order(slices, error) -> float:
    """Least-squares slope of ``-log(error)`` against ``log(N)``."""
    return float(-np.polyfit(np.log(slices), np.log(error), 1)[0])


def slicing(argv=None) -> int:
    """Slicing convergence of the cylindrical clearance joint: how many slices does a tilted
    journal need?

    The joint is the pin in a fixed bushing of the load cases (Yao, Chen, Wang & Liu; 40 mm
    contact length, 1 mm clearance, Palmgren stiffness, elastic law ``K delta^(10/9)`` shared
    as ``K/N`` by the ``N`` slices). Three cases, each evaluated by the engine's own contact
    routine (``model.mechanics.spatial.forces.cylindrical_contact``):

    - **aligned**: the journal parallel to the bearing, 3 um into the wall: every slice has the
      same penetration, so the slices add up to the whole-length law for any ``N``.
    - **edge (pose given)**: the journal tilted by 0.2 mrad about x with its centre 2 um short of
      the wall: only the last quarter of the length touches (a wedge of penetration rising to
      2 um at end b). End forces ``F_a, F_b`` and the peak slice penetration against the
      continuum (closed-form integrals of the wedge, :func:`wedge_end_forces`).
    - **tilted (loads given)**: load case 4 (1000 N at the centre, 10 N m about x): the pose
      ``(y, theta)`` that balances the loads is solved for each ``N`` (Newton on the force and
      moment balance). The end forces are then fixed by statics for every ``N`` (two
      unknowns, two balance equations); what converges is the pose, reported as the peak slice
      penetration, against the continuum pose (the same balance with the closed-form
      integrals, :func:`continuum_balanced_pose`). One slice cannot carry a moment: N = 1 has no
      balanced pose.

    Run from the repository root::

        PYTHONPATH=$PWD python -m benchmarks.accuracy --case slicing [--slices 1 2 3 5 10 20 40]

    Prints a Markdown table (relative errors against the continuum) and the observed orders.
    """
    parser = argparse.ArgumentParser(description=slicing.__doc__.split("\n\n")[0])
    parser.add_argument("--slices", type=int, nargs="+", default=list(SLICES))
    args = parser.parse_args(argv)
    rows = [row(n) for n in args.slices]
    error = errors(rows)
    end_a, end_b = wedge_end_forces(*EDGE_POSE)
    pose = continuum_balanced_pose()
    print(f"continuum: edge F_a = {end_a:.6g} N, F_b = {end_b:.6g} N, peak penetration "
          f"{continuum_peak(*EDGE_POSE) * 1e6:.6g} um; loaded pose {pose[0] * 1e6:.6g} um, {pose[1] * 1e3:.6g} mrad, "
          f"peak penetration {continuum_peak(*pose) * 1e6:.6g} um; aligned law {aligned_law():.6g} N\n")
    print("| N | aligned: force error | edge: F_a (N) | F_b (N) | F_a error | F_b error | peak pen. error "
          "| loaded: peak pen. (um) | error | F_a, F_b (N) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for k, r in enumerate(rows):
        print(f"| {r.slices} | {error['aligned'][k]:.1e} | {r.edge_end_a:.3f} | {r.edge_end_b:.3f} | "
              f"{error['edge_end_a'][k]:.2e} | {error['edge_end_b'][k]:.2e} | {error['edge_peak_penetration'][k]:.2e} | "
              f"{r.loaded_peak_penetration * 1e6:.4f} | {error['loaded_peak_penetration'][k]:.2e} | "
              f"{r.loaded_end_a:.2f}, {r.loaded_end_b:.2f} |")
    tail = [k for k, n in enumerate(args.slices) if n >= 5]
    if len(tail) >= 2:
        tail_slices = np.array(args.slices)[tail]
        for name in ("edge_end_a", "edge_end_b", "edge_peak_penetration", "loaded_peak_penetration"):
            print(f"observed order ({name}, N >= 5): {observed_order(tail_slices, error[name][tail]):.2f}")


# ---------------------------------------------------------------------- calibration
TRUTH = {"joints.pin.contact.restitution": 0.75, "joints.pin.contact.stiffness": 2.0e10}


SIGNALS = 'data.signals=["slider.x", "slider.ax"]'


RECORD_START, RECORD_INTERVAL = 24e-6, 8e-6


RECORD_SOLVER = ('simulation.solver="dopri8"', "simulation.rtol=1e-9", "simulation.atol=1e-12", 'simulation.output_interval="2 us"')


def calibration(argv=None) -> int:
    """Coverage of the calibration's 95 % intervals over synthetic records (not a test).

    One "true" trajectory of the Flores slider-crank (e = 0.75, K = 2.0e10 N/m^1.5) is made
    with another solver, tolerance and output grid than the fit uses (Dopri8, rtol 1e-9,
    outputs every 2 us; the fit: Tsit5, rtol 1e-6), sampled at 8 us from 24 us on; each record
    adds its own realisation of 2 % Gaussian noise. Every record is calibrated with the
    default path (``clearance calibrate`` on configs/calibrate_example.toml with slider.x and
    slider.ax) and the script counts how often the reported 95 % interval contains the truth,
    for the intervals the tool reports (Newey–West plus the solver's systematic error) and, for
    comparison, the Newey–West part alone and the plain Gauss–Newton intervals
    (``s^2 (J^T J)^-1``).

        python -m benchmarks.accuracy --case calibration --records 20 --duration "6 ms"

    writes ``outputs/benchmarks/calibration_coverage.json`` and prints the table. Every record
    has the same problem structure, so the fit compiles once.
    """
    parser = argparse.ArgumentParser(description=calibration.__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20)
    parser.add_argument("--duration", default="6 ms", help="simulated time (the record ends just before)")
    parser.add_argument("--noise-fraction", type=float, default=0.02)
    parser.add_argument("--out", default=str(REPO / "outputs" / "benchmarks" / "calibration_coverage.json"))
    args = parser.parse_args(argv)

    from pipelines.calibration.run import calibrate
    from pipelines.calibration.setup import load_calibration
    from pipelines.calibration.synthesize import synthesize
    from pipelines.calibration.uncertainty import gauss_newton
    from pipelines.units import to_si

    t_end = to_si(args.duration, "time", "--duration", "")
    folder = Path(tempfile.mkdtemp(prefix="coverage-"))
    for name in ("flores_slider_crank.toml", "calibrate_example.toml"):
        shutil.copy(REPO / "configs" / name, folder / name)
    config = folder / "calibrate_example.toml"
    # the record's clock is the simulation's: the offset is given (0), not estimated
    overrides = [f'simulation.t_end="{args.duration}"', SIGNALS, 'data.time_offset="0 s"']
    truth = {"joints.pin.contact.restitution": 0.75, "joints.pin.contact.stiffness": "2.0e10 N/m^1.5"}
    clean, _ = synthesize(config, truth, noise_fraction=0.0, duration=t_end - RECORD_START - RECORD_INTERVAL,
                          interval=RECORD_INTERVAL, time_offset=RECORD_START, overrides=(*overrides, *RECORD_SOLVER))
    clean["t"] += RECORD_START
    signals = [c for c in clean.columns if c != "t"]
    levels = {name: args.noise_fraction * float(np.sqrt(np.mean(clean[name] ** 2))) for name in signals}
    rng = np.random.default_rng(2024)
    paths = list(TRUTH)
    rows = []
    for record in range(args.records):
        frame = clean.copy()
        for name in signals:
            frame[name] += levels[name] * rng.standard_normal(len(frame))
        frame.to_csv(folder / "measured.csv", index=False)
        problem = load_calibration(config, overrides)
        began = time.perf_counter()
        outcome = calibrate(problem, problem.options, progress=False)
        result, best = outcome.fit, outcome.fit.best
        plain = gauss_newton(problem.paths, outcome.values, result.last.residuals[best],
                             _jacobian_x(outcome), float(outcome.problem.loss.count), False)
        row = {"record": record, "seconds": time.perf_counter() - began, "window": list(outcome.windows[0]),
               "converged": bool(result.converged[best]), "remaining_step": _remaining_step(outcome).tolist(),
               "solver_shift": None if outcome.uncertainty.solver_shift is None else outcome.uncertainty.solver_shift.tolist()}
        for i, path in enumerate(paths):
            value, std, std_plain = outcome.values[i], outcome.uncertainty.std[i], plain.std[i]
            std_noise = outcome.uncertainty.noise_std[i]
            row[path] = {"value": float(value), "std": float(std), "std_noise": float(std_noise),
                         "std_gauss_newton": float(std_plain),
                         "covered": bool(abs(value - TRUTH[path]) <= 1.96 * std),
                         "covered_noise": bool(abs(value - TRUTH[path]) <= 1.96 * std_noise),
                         "covered_gauss_newton": bool(abs(value - TRUTH[path]) <= 1.96 * std_plain)}
        rows.append(row)
        print(json.dumps(row), flush=True)
        summary = _summary(rows, paths, args)  # after every record, so a stopped run leaves its results
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(summary, indent=1))
    for path in paths:
        print(f"{path}: 95 % interval coverage {100 * summary['coverage'][path]:.0f} % (reported: Newey–West and solver), "
              f"{100 * summary['coverage_noise_only'][path]:.0f} % (Newey–West alone), "
              f"{100 * summary['coverage_gauss_newton'][path]:.0f} % (plain Gauss–Newton); "
              f"RMS error / mean reported std {summary['rmse_over_std'][path]:.2f}")
    print(f"wrote {out}")


def _summary(rows: list[dict], paths: list[str], args) -> dict:
    return {
        "records": len(rows), "duration": args.duration, "noise_fraction": args.noise_fraction, "truth": TRUTH,
        "coverage": {path: float(np.mean([r[path]["covered"] for r in rows])) for path in paths},
        "coverage_noise_only": {path: float(np.mean([r[path]["covered_noise"] for r in rows])) for path in paths},
        "coverage_gauss_newton": {path: float(np.mean([r[path]["covered_gauss_newton"] for r in rows])) for path in paths},
        "rmse_over_std": {path: float(np.sqrt(np.mean([(r[path]["value"] - TRUTH[path]) ** 2 for r in rows]))
                                      / np.mean([r[path]["std"] for r in rows])) for path in paths},
        "seconds_per_record": float(np.mean([r["seconds"] for r in rows[1:]] or [rows[0]["seconds"]])),
        "rows": rows,
    }


def _remaining_step(outcome) -> np.ndarray:
    """The Gauss–Newton step ``-(J^T J)^+ J^T r`` left at the reported optimum (physical units):
    zero at a converged least-squares optimum."""
    result, best = outcome.fit, outcome.fit.best
    scale = np.abs(outcome.values)  # columns in relative units: J^T J spans 20 decades in SI
    jacobian = _jacobian_x(outcome) * scale[None, :]
    return -scale * (np.linalg.pinv(jacobian.T @ jacobian) @ (jacobian.T @ result.last.residuals[best]))


def _jacobian_x(outcome) -> np.ndarray:
    """dr/dx at the best start (the same conversion as pipelines.calibration.run)."""
    import jax.numpy as jnp

    result, best = outcome.fit, outcome.fit.best
    transform = outcome.problem.transform
    derivative = np.asarray(transform.derivative(jnp.asarray(result.final_points[best])))
    return result.last.jacobian[best] / derivative[None, :]


# ---------------------------------------------------------------------- lyapunov-peer
LORENZ_SIGMA, LORENZ_BETA = 10.0, 8.0 / 3.0


def _lorenz(t, y, rho):
    x, y_, z = y
    return jnp.stack([LORENZ_SIGMA * (y_ - x), x * (rho - z) - y_, x * y_ - LORENZ_BETA * z])


def lyapunov_peer(argv=None) -> int:
    """The Lorenz spectrum over a batch of rho by model.nonlinear.lyapunov_exponents and by
    lyapax (an independent JAX Benettin/QR code), in the same run: exponents and the
    batched cost per trajectory (docs/nonlinear.md). Needs ``pip install lyapax``.

        PYTHONPATH=$PWD python -m benchmarks.accuracy --case lyapunov-peer
    """
    parser = argparse.ArgumentParser(description=lyapunov_peer.__doc__.splitlines()[0])
    parser.add_argument("--rhos", type=int, default=7, help="values of rho from 25 to 31 (odd: 28 is one)")
    parser.add_argument("--time", type=float, default=500.0, help="counted time (after 50 discarded)")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    try:
        import lyapax
        from lyapax.adaptive import diffrax_adaptive_step
    except ImportError:
        print("lyapax is not installed: pip install lyapax")
        return 2
    import diffrax

    from model.nonlinear import lyapunov_exponents

    rhos = jnp.linspace(25.0, 31.0, args.rhos)
    transient, interval, start = 50.0, 1.0, jnp.array([1.0, 1.0, 20.0])
    counted = int(args.time / interval)

    def ours(rho):
        return lyapunov_exponents(_lorenz, start, rho, t0=0.0, interval=interval, num_intervals=counted,
                                  num_exponents=3, transient_intervals=int(transient / interval),
                                  stepsize_controller=diffrax.PIDController(rtol=1e-8, atol=1e-10),
                                  adjoint=diffrax.ForwardMode()).exponents

    def theirs(rho):
        problem = lyapax.ode_problem(lambda y: _lorenz(0.0, y, rho), start, dt=interval,
                                     integrator=diffrax_adaptive_step(rtol=1e-8, atol=1e-10, max_steps=100_000))
        return lyapax.lyapunov_spectrum(problem, n_steps=counted, t_transient=transient).exponents

    arms = {}
    for name, function in (("clearance", ours), (f"lyapax {getattr(lyapax, '__version__', '')}".strip(), theirs)):
        batched = jax.jit(jax.vmap(function))
        arms[name] = functools.partial(lambda f: jax.block_until_ready(f(rhos)), batched)
    timings = harness.interleaved(arms, repeats=args.repeats)
    print(harness.timing_table(timings))
    print(f"\nper trajectory (best wall / {args.rhos}): "
          + ", ".join(f"{name} {t.best / args.rhos:.3g} s" for name, t in timings.items()))
    results = {name: np.asarray(t.result) for name, t in timings.items()}
    rows = []
    for index, rho in enumerate(np.asarray(rhos)):
        rows.append([f"{rho:.3g}", *[" / ".join(f"{value:.4g}" for value in result[index]) for result in results.values()]])
    print()
    print(harness.markdown_table(["rho", *[f"{name}: spectrum (1/time)" for name in results]], rows))
    largest = np.stack([result[:, 0] for result in results.values()])
    print(f"\nlargest exponent, largest difference over rho: {np.max(np.abs(largest[0] - largest[1])):.3g}")


CASES = {"restitution": restitution, "lubrication": lubrication, "slicing": slicing, "calibration": calibration,
         "lyapunov-peer": lyapunov_peer}

if __name__ == "__main__":
    raise SystemExit(harness.main(CASES, __doc__))
