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

    python benchmarks/calibration_coverage.py --records 20 --duration "6 ms"

writes ``outputs/benchmarks/calibration_coverage.json`` and prints the table. Every record
has the same problem structure, so the fit compiles once.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
TRUTH = {"joints.pin.contact.restitution": 0.75, "joints.pin.contact.stiffness": 2.0e10}
SIGNALS = 'data.signals=["slider.x", "slider.ax"]'
RECORD_START, RECORD_INTERVAL = 24e-6, 8e-6
RECORD_SOLVER = ('simulation.solver="dopri8"', "simulation.rtol=1e-9", "simulation.atol=1e-12", 'simulation.output_interval="2 us"')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20)
    parser.add_argument("--duration", default="6 ms", help="simulated time (the record ends just before)")
    parser.add_argument("--noise-fraction", type=float, default=0.02)
    parser.add_argument("--out", default=str(REPO / "outputs" / "benchmarks" / "calibration_coverage.json"))
    args = parser.parse_args()

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
        calibration = load_calibration(config, overrides)
        began = time.perf_counter()
        outcome = calibrate(calibration, calibration.options, progress=False)
        result, best = outcome.fit, outcome.fit.best
        plain = gauss_newton(calibration.paths, outcome.values, result.last.residuals[best],
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


if __name__ == "__main__":
    main()
