"""``clearance calibrate CONFIG``: fit contact parameters to a measured record.

Writes ``calibration.json`` (contract: ``parameters``, ``initial``, ``loss``, ``history``,
``converged``; plus uncertainty, correlation, per-start results, warnings, timings) and the
plots ``loss_history.png``, ``signals.png`` and ``correlation.png``. A fit whose residuals
are inconsistent with the record's noise (``calibration/goodness.py``) is written as usual,
marked ``"misfit": true``, and ends with one ``error:`` line and exit status 3. See
docs/calibration.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

import jax.numpy as jnp
import numpy as np

from ..io import default_output_dir, write_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--optimizer", choices=("levenberg_marquardt", "bfgs", "lbfgs", "adam"), default=None,
                        help="override [optimizer] name")
    parser.add_argument("--strategy", choices=("auto", "continuation", "direct"), default=None,
                        help="override [optimizer] strategy (auto: continuation in the horizon unless loss.windows are given)")
    parser.add_argument("--steps", type=int, default=None, help="override [optimizer] steps")
    parser.add_argument("--starts", type=int, default=None, help="override [optimizer] starts")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    from ..calibration import load_calibration, report
    from ..calibration.run import calibrate
    from ..calibration.signals import signal_units
    from ..errors import ConfigError, MisfitError

    calibration = load_calibration(args.config, args.overrides)
    changes = {key: value for key, value in (("name", args.optimizer), ("steps", args.steps), ("starts", args.starts),
                                             ("strategy", args.strategy)) if value is not None}
    for key in ("steps", "starts"):
        if key in changes and changes[key] < 1:
            raise ConfigError("--" + key, "", f"expected an integer >= 1, got {changes[key]}")
    options = dataclasses.replace(calibration.options, **changes)
    if options.name != "adam" and calibration.gradient_mode != "forward":
        raise ConfigError(str(args.config), "optimizer.gradient", f"{options.name} needs gradient = \"forward\"")
    out = default_output_dir("calibrate", args.config, args.out)
    paths = calibration.paths
    outcome = calibrate(calibration, options, progress=not args.no_progress)
    result, problem, windows, stages, strategy = outcome.fit, outcome.problem, outcome.windows, outcome.continuation, outcome.strategy
    best, best_x, uncertainty, physical = result.best, outcome.values, outcome.uncertainty, outcome.physical
    time_domain = calibration.loss_kind == "time"
    warnings = list(calibration.warnings) + uncertainty.warnings
    if not result.converged[best]:
        warnings.append(f"the best start did not converge: {result.reasons[best]}")
    solutions = np.array([physical(u) for u in result.final_points])
    finite = np.isfinite(result.losses)
    if finite.sum() > 1:
        close = np.abs(result.losses[finite] - result.losses[best]) <= 0.05 * result.losses[best] + 1e-300
        distinct = int(np.sum(~close))
        if distinct:
            warnings.append(f"{distinct} of {int(finite.sum())} starts ended in other local minima (loss > 1.05 x best): the loss landscape is rough; see docs/calibration.md")

    initial = dict(zip(paths, (p.initial for p in calibration.parameters)))
    summary = {
        "parameters": dict(zip(paths, best_x.tolist())),
        "fit_optimum": dict(zip(paths, outcome.fit_optimum.tolist())),
        "initial": initial,
        "loss": float(result.losses[best]),
        "history": result.histories[best],
        "converged": bool(result.converged[best]),
        "uncertainty": uncertainty.as_dict(),
        "correlation": {"paths": list(paths), "matrix": uncertainty.correlation.tolist()},
        "warnings": warnings,
        "best_start": best,
        "starts": [
            {
                "initial": dict(zip(paths, physical(result.start_points[s]).tolist())),
                "parameters": dict(zip(paths, solutions[s].tolist())),
                "loss": float(result.losses[s]),
                "converged": bool(result.converged[s]),
                "reason": result.reasons[s],
                "steps": int(result.steps_taken[s]),
                "history": result.histories[s],
            }
            for s in range(len(result.losses))
        ],
        "optimizer": {**dataclasses.asdict(options), "gradient": calibration.gradient_mode, "strategy": strategy},
        "loss_function": {
            "kind": calibration.loss_kind,
            "windows": [list(w) for w in windows],
            "residuals": float(problem.count),
            "noise_scaled": calibration.noise_known,
        },
        "time_offset": outcome.offsets,
        "stages": None if stages is None else [stage.as_dict(physical) for stage in stages.stages],
        "predictable_window": None if stages is None else list(stages.window),
        "start_screen": None if stages is None else stages.screen,
        "evaluations": result.evaluations,
        "first_evaluation_seconds": result.first_call_seconds,
        "fit_seconds": result.fit_seconds,
        "misfit": outcome.misfit,
        "goodness_of_fit": None if outcome.goodness is None else outcome.goodness.as_dict(),
        # the whole record, when the continuation kept a shorter window (null otherwise)
        "record_goodness_of_fit": None if outcome.record_goodness is None else outcome.record_goodness.as_dict(),
    }
    records = [_record_summary(calibration, setup, model, prediction, best, time_domain)
               for setup, model, prediction in zip(calibration.records, problem.records, result.last.predictions)]
    if len(records) == 1:
        summary.update(records[0])  # data, noise, bias, solver at the top level
    else:
        summary["records"] = {setup.name: record for setup, record in zip(calibration.records, records)}
    write_json(out / "calibration.json", summary)

    report.plot_loss_history(result.histories, best, out / "loss_history.png")
    for index, (setup, model) in enumerate(zip(calibration.records, problem.records)):
        units = signal_units(model.mechanism)
        initial_signals = stages.initial_signals[index] if stages is not None else result.first.predictions[index].signals[0]
        record_windows = windows if setup.name is None or stages is None else [(setup.record.times[0] + low, setup.record.times[0] + high) for low, high in windows]
        report.plot_signals(
            setup.record.times, model.signal_names, [units[n] for n in model.signal_names], setup.record.values, setup.measured,
            initial_signals, result.last.predictions[index].signals[best], record_windows, model.lowpass is not None,
            out / ("signals.png" if setup.name is None else f"signals_{setup.name}.png"),
            misfit=bool(outcome.misfit),
        )
    report.plot_correlation(paths, uncertainty.correlation, out / "correlation.png")

    for path, value, std in zip(paths, best_x, uncertainty.std):
        print(f"{path} = {value:.6g} ± {std:.2g} (initial {initial[path]:.6g})")
    print(f"loss {result.losses[best]:.6g}, converged: {bool(result.converged[best])}, "
          f"{result.evaluations} evaluations in {result.fit_seconds:.1f} s; wrote {out}/calibration.json")
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if outcome.goodness is not None:
        print(f"goodness of fit: {outcome.goodness.describe()}")
        whole = outcome.record_goodness
        if whole is not None:
            low, high = windows[0]
            print(f"goodness of fit over the whole record (the fit kept {1e3 * low:.4g}-{1e3 * high:.4g} ms): "
                  f"{whole.describe()}")
        if outcome.misfit:
            where = "" if whole is None or not whole.misfit else (
                f"the fit follows only {1e3 * windows[0][0]:.4g}-{1e3 * windows[0][1]:.4g} ms of the record, over all of it: ")
            described = whole.describe() if whole is not None and whole.misfit else outcome.goodness.describe()
            raise MisfitError(
                f"{args.config}: misfit: the fitted model does not describe the record within its noise "
                f"({where}{described}); the values and intervals in {out}/calibration.json are not "
                "to be trusted. Try initial values or bounds nearer the truth, more starts (optimizer.starts), "
                "or check the model, the signals and data.noise; compare them in signals.png")
    return 0


def _record_summary(calibration, setup, model, prediction, best: int, time_domain: bool) -> dict:
    """One record's part of calibration.json: its data, noise levels, biases and solver run."""
    fitted_signals = jnp.asarray(prediction.signals[best])
    return {
        "data": {
            "path": str(setup.record.path),
            "signals": list(model.signal_names),
            "samples": setup.record.num_samples,
            "t_first": float(setup.record.times[0]),
            "t_last": float(setup.record.times[-1]),
            "lowpass": None if model.lowpass is None else {"cutoff": model.lowpass.cutoff, "order": model.lowpass.order},
            "time_offset": setup.offset if isinstance(setup.offset, float) else "fitted (" + setup.offset_path + ")",
        },
        "noise": {
            "given": not setup.noise_estimated,
            "record": setup.noise,
            "fit": ({name: float(v) for name, v in zip(model.signal_names, np.asarray(model.loss.scale) / np.sqrt(setup.independent_fraction))}
                    if time_domain else None),
        },
        "bias": ({name: float(b) for name, b, on in zip(model.signal_names, np.asarray(model.loss.bias(fitted_signals)), model.loss.biased) if on}
                 if time_domain else {}),
        "solver": {
            "name": model.settings.solver,
            "t_end": model.settings.t_end,
            "steps": float(prediction.steps[best]),
            "status": "ok" if bool(prediction.ok[best]) else "failed",
        },
    }
