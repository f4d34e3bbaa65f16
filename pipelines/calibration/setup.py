"""From a calibration config (``configs/calibrate_example.toml`` format) to a ready problem.

Config sections (unknown keys are refused; everything but ``base``, ``[data]`` ``path``/
``signals`` and ``[[fit]]`` ``path``/``initial`` is optional)::

    base = "flores_slider_crank.toml"
    [data]
    path = "measured.csv"          # CSV or parquet, relative to this file's folder
    time = "t"                     # time column (s)
    signals = ["slider.ax"]        # timeseries.parquet column names, SI units
    noise = { "slider.ax" = "300 m/s^2" }  # noise std per signal (default: estimated from the record)
    weights = { "slider.ax" = 1.0 }        # extra weight per signal
    bias = ["slider.ax"]           # signals with an unknown constant offset (profiled out)
    time_offset = "0 ms"           # simulation time = record time + offset (or [[fit]] it)
    lowpass = "5 kHz"              # sensor bandwidth, applied to measured and simulated signals (lowpass_order = 4)
    [loss]
    kind = "time"                  # time | spectrum | peaks
    windows = [["0 ms", "1.5 ms"]] # record-time windows (default: chosen by the continuation)
    bands = 24                     # spectrum: log-spaced bands up to max_frequency (default Nyquist)
    [[fit]]
    path = "joints.pin.contact.restitution"
    initial = 0.6
    bounds = [0.2, 1.0]            # optional (both or none)
    scale = "linear"               # linear | log
    [optimizer]                    # see fit.OptimizerOptions
    name = "levenberg_marquardt"   # levenberg_marquardt | bfgs | lbfgs | adam
    steps = 200
    starts = 4
    strategy = "auto"              # auto | continuation | direct
    [simulation]                   # merged over the base's [simulation]

A fitted mechanism path is set to its initial value before the mechanism is built, so a
base with ``stiffness = "hertz"`` is given a numeric stiffness that the fit can vary.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jax.numpy as jnp
import numpy as np

from ..build import ParameterMap, build_mechanism, solver_settings
from ..config import MechanismConfig, load_pipeline_mechanism
from ..errors import ConfigError
from ..units import to_si
from .data import LowPass, MeasuredRecord, estimate_noise, load_record
from .fit import GRADIENT_MODES, OPTIMIZERS, STRATEGIES, OptimizerOptions
from .loss import LOSS_KINDS, build_loss
from .parameters import SCALES, FitParameter, ParameterTransform
from .problem import TIME_OFFSET_PATH, CalibrationProblem
from .signals import signal_units

TOP_KEYS = ("base", "name", "description", "data", "loss", "fit", "optimizer", "simulation")
DATA_KEYS = ("path", "time", "signals", "noise", "weights", "bias", "time_offset", "lowpass", "lowpass_order")
LOSS_KEYS = ("kind", "windows", "bands", "max_frequency")
FIT_KEYS = ("path", "initial", "bounds", "scale")
OPTIMIZER_KEYS = tuple(field.name for field in dataclasses.fields(OptimizerOptions))


@dataclasses.dataclass
class Calibration:
    """Everything a calibration run needs, validated."""

    config_path: Path
    mechanism_config: MechanismConfig  # the base with the fitted paths at their initial values
    record: MeasuredRecord
    measured: np.ndarray  # the record's signals after the low-pass (what the loss compares)
    parameters: tuple[FitParameter, ...]
    problem: CalibrationProblem
    options: OptimizerOptions
    loss_kind: str
    windows: tuple[tuple[float, float], ...]
    windows_given: bool  # loss.windows set in the config (else the whole record)
    noise: dict[str, float]  # noise std per signal (SI), of the raw record
    noise_estimated: bool  # True when the noise levels were estimated from the record
    biased: tuple[str, ...]  # signals whose constant bias is profiled out
    noise_known: bool
    independent_fraction: float
    gradient_mode: str
    warnings: list[str]

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(p.path for p in self.parameters)


def _table(raw: Mapping, key: str, file: str, allowed: tuple[str, ...], required: bool = False) -> dict:
    value = raw.get(key, {} if not required else None)
    if value is None:
        raise ConfigError(file, key, "required table is missing")
    if not isinstance(value, dict):
        raise ConfigError(file, key, f"expected a table, got {value!r}")
    _known_keys(value, key, file, allowed)
    return value


def _known_keys(table: Mapping, where: str, file: str, allowed: tuple[str, ...]) -> None:
    for key in table:
        if key not in allowed:
            raise ConfigError(file, f"{where}.{key}" if where else key, f"unknown key; allowed keys: {', '.join(allowed)}")


def _quantity(value: Any, unit: str, file: str, key: str) -> float:
    """A number or unit string in the SI unit ``unit`` (a plain number is taken as SI)."""
    return to_si(value, "time" if unit == "s" else unit, file, key, plain_number_unit=True)


def _integer(table: Mapping, key: str, default: int, file: str, where: str, minimum: int = 1) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(file, f"{where}.{key}", f"expected an integer >= {minimum}, got {value!r}")
    return value


def _number(table: Mapping, key: str, default: float | None, file: str, where: str, positive: bool = True) -> float | None:
    value = table.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or (positive and value <= 0):
        raise ConfigError(file, f"{where}.{key}", f"expected a {'positive ' if positive else ''}number, got {value!r}")
    return float(value)


def _per_signal(table: Mapping, key: str, signals: tuple[str, ...], units: Mapping[str, str], file: str, dimensioned: bool) -> dict[str, float]:
    """``noise``/``weights``: a table by signal name, or a list in the order of ``signals``."""
    value = table.get(key)
    if value is None:
        return {}
    if isinstance(value, list):
        if len(value) != len(signals):
            raise ConfigError(file, f"data.{key}", f"expected {len(signals)} values (one per signal), got {len(value)}")
        value = dict(zip(signals, value))
    if not isinstance(value, dict):
        raise ConfigError(file, f"data.{key}", f"expected a table {{signal = value}} or a list, got {value!r}")
    result = {}
    for name, item in value.items():
        if name not in signals:
            raise ConfigError(file, f"data.{key}.{name}", f"not one of data.signals ({', '.join(signals)})")
        converted = _quantity(item, units[name], file, f"data.{key}.{name}") if dimensioned else _number(value, name, None, file, f"data.{key}")
        if not converted > 0:
            raise ConfigError(file, f"data.{key}.{name}", f"must be positive, got {item!r}")
        result[name] = converted
    return result


def _fit_parameters(pipeline: Mapping, base: MechanismConfig, file: str, offset_default: float) -> tuple[list[FitParameter], dict[str, Any]]:
    """The ``[[fit]]`` entries in SI, and the raw initial values to write into the base."""
    entries = pipeline.get("fit")
    if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
        raise ConfigError(file, "fit", "expected one or more [[fit]] tables with a path, e.g. path = \"joints.pin.contact.restitution\"")
    parameters, raw_initial = [], {}
    for index, entry in enumerate(entries):
        where = f"fit.{index}"
        _known_keys(entry, where, file, FIT_KEYS)
        path = entry.get("path")
        if not isinstance(path, str) or not path:
            raise ConfigError(file, f"{where}.path", f"expected a dotted parameter path, got {path!r}")
        if any(p.path == path for p in parameters):
            raise ConfigError(file, f"{where}.path", f"{path!r} is fitted twice")
        scale = entry.get("scale", "linear")
        if scale not in SCALES:
            raise ConfigError(file, f"{where}.scale", f"unknown scale {scale!r}; expected one of {SCALES}")

        if path == TIME_OFFSET_PATH:
            def convert(value, key):
                return _quantity(value, "s", file, key)
        else:
            def convert(value, key):
                try:
                    return base.with_values({path: value}, source=file).si_value(path)
                except ConfigError as error:
                    if error.key == path and error.file == file and "no key" in error.message:
                        raise ConfigError(file, f"{where}.path", f"{path!r} is not a parameter of {base.source}: {error.message}") from None
                    detail = "" if error.key == path else f"{error.key}: "
                    raise ConfigError(file, key, f"{path} = {value!r} is refused: {detail}{error.message}") from None

        if "initial" in entry:
            initial = convert(entry["initial"], f"{where}.initial")
        elif path == TIME_OFFSET_PATH:
            initial = offset_default
        else:
            initial = base.si_value(path)
            if not isinstance(initial, float):
                raise ConfigError(file, f"{where}.initial", f"required: {path} is {initial!r} in the base, not a number")
        if not isinstance(initial, float):
            raise ConfigError(file, f"{where}.initial", f"{path} must be a continuous quantity, got {initial!r}")
        lower = upper = None
        if "bounds" in entry:
            bounds = entry["bounds"]
            if not isinstance(bounds, list) or len(bounds) != 2:
                raise ConfigError(file, f"{where}.bounds", f"expected [lower, upper], got {bounds!r}")
            lower, upper = (convert(b, f"{where}.bounds") for b in bounds)
            if not lower < upper:
                raise ConfigError(file, f"{where}.bounds", f"expected lower < upper, got {bounds!r}")
            if not lower <= initial <= upper:
                raise ConfigError(file, f"{where}.initial", f"{entry.get('initial', initial)!r} is outside the bounds {bounds!r}")
        if scale == "log" and (initial <= 0 or (lower is not None and lower <= 0)):
            raise ConfigError(file, f"{where}.scale", "a log scale needs positive values and bounds")
        parameters.append(FitParameter(path, float(initial), lower, upper, scale))
        if path != TIME_OFFSET_PATH:
            raw_initial[path] = entry.get("initial", initial)
    return parameters, raw_initial


def _windows(loss_table: Mapping, record: MeasuredRecord, file: str) -> tuple[tuple[float, float], ...]:
    windows = loss_table.get("windows")
    if windows is None:
        return ((float(record.times[0]), float(record.times[-1])),)
    if not isinstance(windows, list) or not windows:
        raise ConfigError(file, "loss.windows", f"expected a list of [from, to] pairs, got {windows!r}")
    result = []
    for index, window in enumerate(windows):
        key = f"loss.windows.{index}"
        if not isinstance(window, list) or len(window) != 2:
            raise ConfigError(file, key, f"expected [from, to], got {window!r}")
        low, high = (_quantity(value, "s", file, key) for value in window)
        inside = np.count_nonzero((record.times >= low) & (record.times <= high))
        if not low < high:
            raise ConfigError(file, key, f"expected from < to, got {window!r}")
        if inside < 4:
            raise ConfigError(file, key, f"{window!r} holds {inside} samples of the record ({record.times[0]:.6g} s to {record.times[-1]:.6g} s); need at least 4")
        result.append((low, high))
    return tuple(result)


def load_calibration(path: str | Path, overrides: tuple[str, ...] | list[str] = ()) -> Calibration:
    """Read and validate a calibration config, its base, and its measured record."""
    file = str(path)
    pipeline, base = load_pipeline_mechanism(path, overrides)
    _known_keys(pipeline, "", file, TOP_KEYS)
    data = _table(pipeline, "data", file, DATA_KEYS, required=True)
    loss_table = _table(pipeline, "loss", file, LOSS_KEYS)
    optimizer_table = _table(pipeline, "optimizer", file, OPTIMIZER_KEYS)
    warnings: list[str] = []

    # --- parameters, and the mechanism built at their initial values
    offset = _quantity(data.get("time_offset", 0.0), "s", file, "data.time_offset")
    parameters, raw_initial = _fit_parameters(pipeline, base, file, offset)
    try:
        mechanism_config = base.with_values(raw_initial, source=file) if raw_initial else base
    except ConfigError as error:
        raise ConfigError(file, "fit", f"the initial values are refused together: {error}") from None
    mechanism = build_mechanism(mechanism_config)

    # --- signals and record
    if "path" not in data:
        raise ConfigError(file, "data.path", "required key is missing (the measured record, CSV or parquet)")
    signals = data.get("signals")
    if not isinstance(signals, list) or not signals or not all(isinstance(s, str) for s in signals):
        raise ConfigError(file, "data.signals", f"expected a list of column names such as [\"slider.ax\"], got {signals!r}")
    if len(set(signals)) != len(signals):
        raise ConfigError(file, "data.signals", "a signal is listed twice")
    units = signal_units(mechanism)
    for name in signals:
        if name not in units:
            raise ConfigError(file, "data.signals", f"unknown signal {name!r}; signals: {', '.join(units)}")
    time_column = data.get("time", "t")
    if not isinstance(time_column, str) or not time_column:
        raise ConfigError(file, "data.time", f"expected the time column's name, got {time_column!r}")
    data_path = data["path"]
    if not isinstance(data_path, str) or not data_path:
        raise ConfigError(file, "data.path", f"expected a file name, got {data_path!r}")
    record = load_record(Path(file).parent / data_path, time_column, tuple(signals))

    # --- optimizer (before the settings: it picks the adjoint)
    try:
        options = OptimizerOptions(**optimizer_table)
    except TypeError as error:
        raise ConfigError(file, "optimizer", str(error)) from None
    if options.name not in OPTIMIZERS:
        raise ConfigError(file, "optimizer.name", f"unknown optimizer {options.name!r}; expected one of {OPTIMIZERS}")
    if options.strategy not in STRATEGIES:
        raise ConfigError(file, "optimizer.strategy", f"unknown strategy {options.strategy!r}; expected one of {STRATEGIES}")
    if options.gradient not in GRADIENT_MODES:
        raise ConfigError(file, "optimizer.gradient", f"unknown gradient mode {options.gradient!r}; expected one of {GRADIENT_MODES}")
    for key in ("steps", "starts"):
        _integer(optimizer_table, key, getattr(options, key), file, "optimizer")
    _integer(optimizer_table, "seed", options.seed, file, "optimizer", minimum=0)
    _number(optimizer_table, "learning_rate", options.learning_rate, file, "optimizer")
    _number(optimizer_table, "spread", options.spread, file, "optimizer")
    _number(optimizer_table, "tolerance", options.tolerance, file, "optimizer")
    if options.patience is not None:
        _integer(optimizer_table, "patience", options.patience, file, "optimizer")
    gradient_mode = options.gradient_mode(len(parameters))
    if options.name != "adam" and gradient_mode != "forward":
        raise ConfigError(file, "optimizer.gradient", f"{options.name} takes the residual Jacobian by forward mode: use gradient = \"forward\" (or \"auto\")")
    # At least two outputs per record sample: the simulated signals are interpolated
    # linearly to the record's times (any rate, any offset), and impact spikes last a few
    # samples only.
    record_step = float(np.min(np.diff(record.times)))
    output_interval = min(mechanism_config.simulation.output_interval, record_step / 2.0)
    settings = solver_settings(mechanism_config, adjoint="forward" if gradient_mode == "forward" else "checkpoint",
                               output_interval=output_interval)

    # --- the record must lie inside the simulated time for every allowed offset
    offset_parameter = next((p for p in parameters if p.path == TIME_OFFSET_PATH), None)
    low_offset = offset if offset_parameter is None else (offset_parameter.lower if offset_parameter.bounded else offset_parameter.initial)
    high_offset = offset if offset_parameter is None else (offset_parameter.upper if offset_parameter.bounded else offset_parameter.initial)
    if offset_parameter is not None and not offset_parameter.bounded:
        raise ConfigError(file, f"fit.{parameters.index(offset_parameter)}.bounds", "a fitted time offset needs bounds (the record must stay inside the simulation)")
    simulated_end = (settings.num_outputs - 1) * settings.output_interval
    if record.times[-1] + high_offset > simulated_end * (1 + 1e-9):
        raise ConfigError(
            str(record.path), time_column,
            f"the record is longer than the simulation: it ends at {1e3 * record.times[-1]:.6g} ms"
            f"{f' (+ offset up to {1e3 * high_offset:.6g} ms)' if high_offset else ''}, the simulation at "
            f"{1e3 * simulated_end:.6g} ms (simulation.t_end); shorten the record or raise t_end",
        )
    if record.times[0] + low_offset < 0.0:
        raise ConfigError(str(record.path), time_column, f"the record starts at {record.times[0]:.6g} s (+ offset {low_offset:.6g} s), before the simulation (t = 0)")
    interval = record.sample_interval()
    warnings.extend(record.warnings)

    # --- low-pass, noise, weights, loss
    lowpass = None
    independent_fraction = 1.0
    if data.get("lowpass") is not None:
        cutoff = _quantity(data["lowpass"], "rate", file, "data.lowpass")
        order = _integer(data, "lowpass_order", 4, file, "data")
        if interval is None:
            raise ConfigError(file, "data.lowpass", f"the low-pass filter needs a uniformly sampled record; {record.path} is not")
        if not 0 < cutoff < 0.5 / interval:
            raise ConfigError(file, "data.lowpass", f"cutoff {cutoff:.6g} Hz must be positive and below the record's Nyquist frequency {0.5 / interval:.6g} Hz")
        lowpass = LowPass(cutoff, order, interval)
        independent_fraction = min(1.0, 2.0 * cutoff * interval)
    elif "lowpass_order" in data:
        raise ConfigError(file, "data.lowpass_order", "given without data.lowpass (the cutoff frequency)")
    measured = np.asarray(lowpass(jnp.asarray(record.values))) if lowpass is not None else record.values
    noise = _per_signal(data, "noise", tuple(signals), units, file, dimensioned=True)
    weights = _per_signal(data, "weights", tuple(signals), units, file, dimensioned=False)
    noise_known = len(noise) == len(signals)
    if noise and not noise_known:
        raise ConfigError(file, "data.noise", f"give a noise level for every signal ({', '.join(signals)}) or none")
    biased = data.get("bias", [])
    if not isinstance(biased, list) or any(name not in signals for name in biased):
        raise ConfigError(file, "data.bias", f"expected a list of signals among data.signals ({', '.join(signals)}), got {biased!r}")
    noise_estimated = not noise_known
    if noise_estimated:
        estimated = estimate_noise(record.values, record.valid)
        noise = {}
        for k, name in enumerate(signals):
            if not estimated[k] > 0:
                raise ConfigError(str(record.path), name, "cannot estimate the noise level (the signal is constant); give data.noise for it")
            noise[name] = float(estimated[k])

    kind = loss_table.get("kind", "time")
    if kind not in LOSS_KINDS:
        raise ConfigError(file, "loss.kind", f"unknown loss {kind!r}; expected one of {LOSS_KINDS}")
    windows = _windows(loss_table, record, file)
    # white noise through the low-pass keeps about a share 2 fc dt of its variance
    scale = np.asarray([noise[name] for name in signals]) * np.sqrt(independent_fraction)
    weight = np.asarray([weights.get(name, 1.0) for name in signals])
    if kind == "spectrum" and interval is None:
        raise ConfigError(file, "loss.kind", f"the spectral loss needs a uniformly sampled record; {record.path} is not")
    bands = _integer(loss_table, "bands", 24, file, "loss", minimum=2)
    max_frequency = loss_table.get("max_frequency")
    if max_frequency is not None:
        max_frequency = _quantity(max_frequency, "rate", file, "loss.max_frequency")
    for key in ("bands", "max_frequency"):
        if key in loss_table and kind != "spectrum":
            raise ConfigError(file, f"loss.{key}", f"applies to kind = \"spectrum\" only (kind is {kind!r})")
    if biased and kind != "time":
        raise ConfigError(file, "data.bias", f"applies to kind = \"time\" only (kind is {kind!r})")
    loss = build_loss(kind, record.times, measured, windows, scale, weight, interval, bands, max_frequency,
                      valid=record.valid, biased=[name in biased for name in signals])
    if kind != "time":
        noise_known = False  # the residuals are log ratios, not noise-scaled differences

    mechanism_paths = tuple(p.path for p in parameters if p.path != TIME_OFFSET_PATH)
    for index, parameter in enumerate(parameters):
        if parameter.path != TIME_OFFSET_PATH:
            try:
                ParameterMap(mechanism, [parameter.path], source=file)
            except ConfigError as error:
                raise ConfigError(file, f"fit.{index}.path", f"{parameter.path!r}: {error.message}") from None
    problem = CalibrationProblem(
        mechanism=mechanism,
        mechanism_paths=mechanism_paths,
        transform=ParameterTransform(parameters),
        record_times=jnp.asarray(record.times),
        loss=loss,
        lowpass=lowpass,
        fixed_offset=jnp.asarray(offset, jnp.float64),
        settings=settings,
        signal_names=tuple(signals),
        mechanism_indices=tuple(i for i, p in enumerate(parameters) if p.path != TIME_OFFSET_PATH),
        offset_index=None if offset_parameter is None else parameters.index(offset_parameter),
    )
    return Calibration(
        config_path=Path(path), mechanism_config=mechanism_config, record=record, measured=np.asarray(measured),
        parameters=tuple(parameters), problem=problem, options=options, loss_kind=kind, windows=windows,
        windows_given="windows" in loss_table, noise=noise, noise_estimated=noise_estimated, biased=tuple(biased),
        noise_known=noise_known, independent_fraction=independent_fraction, gradient_mode=gradient_mode, warnings=warnings,
    )
