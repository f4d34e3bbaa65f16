"""Throughput of the lubricated Flores slider-crank in a sweep: refilling lanes against the
dry joint on the same grid and against ``scipy.integrate.solve_ivp`` (LSODA) at matched
accuracy, in one run.

Arms (the CPU may be shared: the timed arms are interleaved, repeat by repeat, and the
report's main result is their ratios):

1. **lubricated**: a viscosity x clearance grid of ``configs/flores_lubricated.toml``
   through :func:`model.solve_ensemble` (refilling lanes, as ``clearance sweep`` runs it),
   with the config's solver and tolerances; the peak pin force and peak slider
   acceleration of each point are reduced inside the compiled function;
2. **dry**: the same clearances (each repeated once per viscosity, so the same number of
   points) on ``configs/flores_slider_crank.toml``, same solver and tolerances;
3. **scipy**: LSODA on the same lubricated model's compiled vector field and Jacobian
   (``benchmarks/scipy_peer.py``), one ``solve_ivp`` call per point, at the loosest rtol
   (decades) whose largest relative error in the two peaks over the grid is no larger than
   ours.

Errors are measured against a tight reference of every lubricated point (Dopri8,
rtol 1e-11, atol 1e-14, through the same lanes). Compilation is excluded from the timings.

Run from the repository root::

    python benchmarks/lubrication_throughput.py                 # 16 points, 3 ms (a quarter revolution)
    python benchmarks/lubrication_throughput.py --quick         # smoke run: 4 points, 1 ms
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import scipy_peer  # noqa: E402

import model  # noqa: E402
from pipelines.build import ParameterMap  # noqa: E402

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
LUBRICATED = REPOSITORY / "configs" / "flores_lubricated.toml"
DRY = REPOSITORY / "configs" / "flores_slider_crank.toml"
VISCOSITY, CLEARANCE = "joints.pin.lubrication.viscosity", "joints.pin.clearance"
PEAKS = ("peak pin force", "peak slider acceleration")


def grid(viscosities: int, clearances: int) -> np.ndarray:
    """(viscosity Pa s, clearance m) points: 25-400 cP (log) x 0.1-0.5 mm."""
    mu = np.geomspace(0.025, 0.4, viscosities)
    c = np.linspace(0.1e-3, 0.5e-3, clearances)
    return np.stack(np.meshgrid(mu, c, indexing="ij"), axis=-1).reshape(-1, 2)


def peaks(mechanism, trajectory) -> jnp.ndarray:
    """Peak pin force (N) and peak |slider x-acceleration| (m/s^2) over the output samples."""
    slider_ax = 3 * mechanism.body_names.index("slider")
    return jnp.stack([jnp.max(trajectory.normal_force[:, 0]), jnp.max(jnp.abs(trajectory.qdd[:, slider_ax]))])


def ensemble_function(config, paths, lanes, **settings_changes):
    """Compiled ``values [points, len(paths)] -> (peaks [points, 2], steps, result)``."""
    mechanism, settings = scipy_peer.load_flores(config, **settings_changes)
    parameters = ParameterMap(mechanism, paths)

    @jax.jit
    def run(values):
        mechanisms = jax.vmap(parameters.apply, (None, 0))(mechanism, values)
        solution = model.solve_ensemble(mechanisms, settings, lanes)
        return solution.map_points(peaks, mechanisms), solution.steps, solution.result

    return run, mechanism, settings, parameters


def timed(function, *args) -> tuple[float, object]:
    start = time.perf_counter()
    result = jax.block_until_ready(function(*args))
    return time.perf_counter() - start, result


def relative_error(values: np.ndarray, reference: np.ndarray) -> float:
    return float(np.max(np.abs(values - reference) / np.abs(reference)))


def scipy_arm(mechanism, settings, parameters, points, rtol, field):
    """Peaks of every point with LSODA at ``rtol`` (atol scaled like ours); seconds."""
    results, seconds, steps = [], 0.0, 0
    for values in points:
        member = parameters.apply(mechanism, values)
        solved = scipy_peer.solve_with_scipy(member, settings, "LSODA", rtol, rtol * settings.atol / settings.rtol,
                                             field=field)
        results.append(np.asarray(peaks(member, solved["trajectory"])) if solved["success"] else [np.inf] * 2)
        seconds += solved["seconds"]
        steps += solved["steps"]
    return np.asarray(results), seconds, steps


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--viscosities", type=int, default=4)
    parser.add_argument("--clearances", type=int, default=4)
    parser.add_argument("--t-end", type=float, default=3e-3, help="s (default 3 ms, a quarter revolution)")
    parser.add_argument("--lanes", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="smoke run: 2 x 2 points, 1 ms, 1 repeat")
    parser.add_argument("--out", default=str(REPOSITORY / "outputs" / "benchmarks" / "lubrication_throughput"))
    args = parser.parse_args(argv)
    if args.quick:
        args.viscosities, args.clearances, args.t_end, args.repeats = 2, 2, 1e-3, 1
    points = grid(args.viscosities, args.clearances)
    common = dict(t_end=args.t_end)
    log = lambda message: print(message, flush=True)  # noqa: E731

    lubricated, mechanism, settings, parameters = ensemble_function(LUBRICATED, (VISCOSITY, CLEARANCE), args.lanes, **common)
    dry, *_ = ensemble_function(DRY, (CLEARANCE,), args.lanes, **common)
    reference_run, *_ = ensemble_function(LUBRICATED, (VISCOSITY, CLEARANCE), args.lanes, solver="dopri8",
                                          rtol=1e-11, atol=1e-14, **common)
    compile_seconds = {}
    for name, function, values in (("lubricated", lubricated, points), ("dry", dry, points[:, 1:]),
                                   ("reference", reference_run, points)):
        compile_seconds[name], _ = timed(function, values)
        log(f"compiled and ran {name}: {compile_seconds[name]:.1f} s")
    _, (reference, _, reference_result) = timed(reference_run, points)
    assert np.all(np.asarray(reference_result) == 0), "reference solve failed"
    reference = np.asarray(reference)
    _, (ours, our_steps, our_result) = timed(lubricated, points)
    assert np.all(np.asarray(our_result) == 0)
    our_error = relative_error(np.asarray(ours), reference)
    log(f"ours ({settings.solver}, rtol {settings.rtol:g}): largest relative error in the peaks {our_error:.2e}")

    field = scipy_peer.compile_field(mechanism, with_jacobian=True)
    scan = []
    for rtol in (1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9):
        values, seconds, steps = scipy_arm(mechanism, settings, parameters, points, rtol, field)
        error = relative_error(values, reference)
        scan.append({"rtol": rtol, "error": error, "seconds": seconds, "steps": steps})
        log(f"LSODA rtol {rtol:.0e}: error {error:.2e} (ours {our_error:.2e}), {seconds:.2f} s, {steps} steps")
        if error <= our_error:
            break
    matched = scan[-1]

    runs = []
    for repeat in range(args.repeats):  # interleaved: each repeat times every arm once
        t_lub, _ = timed(lubricated, points)
        t_dry, (_, dry_steps, dry_result) = timed(dry, points[:, 1:])
        _, t_scipy, _ = scipy_arm(mechanism, settings, parameters, points, matched["rtol"], field)
        runs.append({"lubricated": t_lub, "dry": t_dry, "scipy": t_scipy})
        log(f"repeat {repeat}: lubricated {t_lub:.2f} s, dry {t_dry:.2f} s, LSODA {t_scipy:.2f} s")
    ratios = {"lubricated / dry": float(np.median([r["lubricated"] / r["dry"] for r in runs])),
              "LSODA / lubricated": float(np.median([r["scipy"] / r["lubricated"] for r in runs]))}
    report = {
        "points": len(points), "t_end": args.t_end, "lanes": args.lanes, "solver": settings.solver,
        "rtol": settings.rtol, "atol": settings.atol, "our_error": our_error, "lsoda_matched": matched,
        "lsoda_scan": scan, "matched": matched["error"] <= our_error,
        "steps": {"lubricated": int(np.sum(our_steps)), "dry": int(np.sum(dry_steps)), "lsoda": matched["steps"]},
        "compile_seconds": compile_seconds, "runs": runs, "median_ratios": ratios,
    }
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "lubrication_throughput.json").write_text(json.dumps(report, indent=2))
    log(f"{len(points)} points, t_end {args.t_end * 1e3:g} ms; median ratios over {args.repeats} interleaved repeats: "
        + ", ".join(f"{k} {v:.2f}" for k, v in ratios.items())
        + f"; steps lubricated {report['steps']['lubricated']}, dry {report['steps']['dry']}, LSODA {matched['steps']}"
        + f"; LSODA matched at rtol {matched['rtol']:.0e}: {report['matched']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
