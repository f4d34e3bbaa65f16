"""Make a synthetic measured record for a calibration config: simulate with known ("true")
parameters, sample the config's signals, add Gaussian noise, write a CSV.

    python -m pipelines.calibration.synthesize configs/calibrate_demo.toml \\
        --truth joints.pin.contact.restitution=0.9 \\
        --truth "joints.pin.contact.stiffness=6.6e10 N/m^1.5" \\
        --noise-fraction 0.02 --seed 0

writes the record to the config's ``data.path`` (or ``--out``): the time column and the
``data.signals`` columns, sampled at the simulation's output interval (or ``--interval``)
for the config's ``t_end`` (or ``--duration``). The noise standard deviation of a signal
is the config's ``data.noise`` when given, else ``--noise-fraction`` times the signal's RMS.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import model

from ..build import build_mechanism, solver_settings
from ..config import load_pipeline_mechanism, parse_override
from ..errors import ClearanceError, ConfigError
from ..io import atomic_path
from ..units import to_si
from .signals import sample_at, signal_units, trajectory_signals


def synthesize(
    config: str | Path,
    truth: dict[str, object],
    noise_fraction: float = 0.02,
    seed: int = 0,
    duration: float | None = None,
    interval: float | None = None,
    time_offset: float = 0.0,
    overrides: tuple[str, ...] = (),
):
    """The synthetic record as a DataFrame (``t`` + signals) and the noise levels used.

    ``truth`` maps dotted mechanism paths to raw values (numbers or unit strings);
    ``time_offset`` (s) is the simulation time of the record's ``t = 0``.
    """
    import pandas as pd

    file = str(config)
    pipeline, base = load_pipeline_mechanism(config, overrides)
    data = pipeline.get("data", {})
    signals = data.get("signals") if isinstance(data, dict) else None
    if not isinstance(signals, list) or not signals:
        raise ConfigError(file, "data.signals", "expected a list of signal names")
    time_column = data.get("time", "t")
    mechanism_config = base.with_values(truth, source="--truth") if truth else base
    mechanism = build_mechanism(mechanism_config)
    units = signal_units(mechanism)
    for name in signals:
        if name not in units:
            raise ConfigError(file, "data.signals", f"unknown signal {name!r}")
    settings = solver_settings(mechanism_config)
    trajectory = jax.jit(model.simulate, static_argnums=1)(mechanism, settings)
    if int(trajectory.result) != 0:
        raise ClearanceError(f"the simulation failed: {model.result_message(int(trajectory.result))}")
    simulated_end = float(trajectory.t[-1])
    interval = settings.output_interval if interval is None else interval
    duration = simulated_end - time_offset if duration is None else duration
    if duration + time_offset > simulated_end * (1 + 1e-9) or time_offset < 0:
        raise ConfigError(file, "simulation.t_end", f"the record ({duration:.6g} s from {time_offset:.6g} s) does not fit in the simulation ({simulated_end:.6g} s)")
    times = np.arange(int(np.floor(duration / interval + 1e-9)) + 1) * interval
    values = np.array(sample_at(trajectory.t, trajectory_signals(mechanism, trajectory, signals), jnp.asarray(times + time_offset)))
    given = data.get("noise", {}) if isinstance(data.get("noise", {}), dict) else dict(zip(signals, data["noise"]))
    rng = np.random.default_rng(seed)
    noise = {}
    for k, name in enumerate(signals):
        if name in given:
            noise[name] = to_si(given[name], units[name], file, f"data.noise.{name}", plain_number_unit=True)
        else:
            noise[name] = noise_fraction * float(np.sqrt(np.mean(values[:, k] ** 2)))
        values[:, k] += noise[name] * rng.standard_normal(times.size)
    frame = pd.DataFrame({time_column: times, **{name: values[:, k] for k, name in enumerate(signals)}})
    return frame, noise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipelines.calibration.synthesize", description=__doc__.splitlines()[0])
    parser.add_argument("config", help="calibration config (its base, [data] and [simulation] are used)")
    parser.add_argument("--truth", action="append", default=[], metavar="PATH=VALUE", help="true parameter value (repeatable)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="PATH=VALUE", help="config override, as for clearance")
    parser.add_argument("--noise-fraction", type=float, default=0.02, help="noise std as a fraction of each signal's RMS (default 0.02)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--duration", default=None, help='record length, e.g. "1.5 ms" (default: to the end of the simulation)')
    parser.add_argument("--interval", default=None, help='sample interval, e.g. "10 us" (default: the simulation output interval)')
    parser.add_argument("--time-offset", default="0 s", help="simulation time of the record's t = 0 (default 0 s)")
    parser.add_argument("--out", default=None, help="CSV to write (default: the config's data.path)")
    args = parser.parse_args(argv)
    try:
        truth = dict(parse_override(expr) for expr in args.truth)
        duration = None if args.duration is None else to_si(args.duration, "time", "--duration", "")
        interval = None if args.interval is None else to_si(args.interval, "time", "--interval", "")
        offset = to_si(args.time_offset, "time", "--time-offset", "", plain_number_unit=True)
        frame, noise = synthesize(args.config, truth, args.noise_fraction, args.seed, duration, interval, offset, tuple(args.overrides))
        if args.out is None:
            from ..config import load_toml

            out = Path(args.config).parent / load_toml(args.config)["data"]["path"]
        else:
            out = Path(args.out)
        with atomic_path(out) as temporary:
            frame.to_csv(temporary, index=False, float_format="%.10g")
    except ClearanceError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {out}: {len(frame)} samples, {frame.iloc[-1, 0] * 1e3:.6g} ms; truth {truth}; noise std {noise}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
