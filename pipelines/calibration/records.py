"""One measured record of a calibration config, loaded and checked against its simulation.

A config has one record (``[data]``) or several records of the same mechanism
(``[[data]]``, each with a ``name`` and optional mechanism values of its own in ``set``,
e.g. the crank speed it was measured at). Each record brings its own signals, noise levels,
biases, low-pass and time offset; the fitted mechanism parameters are shared.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

import jax.numpy as jnp
import numpy as np

from ..build import solver_settings
from ..config import MechanismConfig
from ..errors import ConfigError
from ..units import to_si
from .data import LowPass, MeasuredRecord, estimate_noise, load_record
from .loss import build_loss
from .problem import TIME_OFFSET_PATH, RecordModel
from .schema import AUTO, DataTable, LossTable
from .signals import signal_units


@dataclasses.dataclass
class RecordSetup:
    """A checked record and what its part of the loss needs."""

    name: str | None  # None for a single [data] record
    key: str  # where its settings sit in the config: "data" or "data.<name>"
    record: MeasuredRecord
    measured: np.ndarray  # the record's signals after the low-pass (what the loss compares)
    mechanism_config: MechanismConfig  # the base with the record's values and the fitted paths at their initial values
    model: RecordModel  # its part of the problem (offset index and mechanism indices filled in by setup)
    windows: tuple[tuple[float, float], ...]
    noise: dict[str, float]  # noise std per signal (SI), of the raw record
    noise_estimated: bool
    noise_known: bool
    biased: tuple[str, ...]
    independent_fraction: float
    offset: float | str  # fixed offset (s), or "auto"
    offset_range: tuple[float, float]  # offsets (s) that keep the record inside the simulation

    @property
    def offset_path(self) -> str:
        """The parameter path of this record's time offset."""
        return TIME_OFFSET_PATH if self.name is None else f"data.{self.name}.time_offset"

    @property
    def sample_step(self) -> float:
        return float(np.median(np.diff(self.record.times)))


def _windows(loss: LossTable, record: MeasuredRecord, file: str) -> tuple[tuple[float, float], ...]:
    if loss.windows is None:
        return ((float(record.times[0]), float(record.times[-1])),)
    for index, (low, high) in enumerate(loss.windows):
        inside = np.count_nonzero((record.times >= low) & (record.times <= high))
        if inside < 4:
            raise ConfigError(file, f"loss.windows.{index}", f"[{low:g} s, {high:g} s] holds {inside} samples of the record "
                              f"({record.times[0]:.6g} s to {record.times[-1]:.6g} s); need at least 4")
    return tuple(loss.windows)


def _noise(table: DataTable, key: str, record: MeasuredRecord, units: Mapping[str, str], file: str) -> tuple[dict[str, float], bool]:
    """Noise std per signal: given (every signal or none), else estimated from the record."""
    given = table.per_signal("noise")
    if given and len(given) != len(table.signals):
        raise ConfigError(file, f"{key}.noise", f"give a noise level for every signal ({', '.join(table.signals)}) or none")
    if given:
        noise = {}
        for name, value in given.items():
            noise[name] = to_si(value, units[name], file, f"{key}.noise.{name}", plain_number_unit=True)
            if not noise[name] > 0:
                raise ConfigError(file, f"{key}.noise.{name}", f"must be positive, got {value!r}")
        return noise, False
    estimated = estimate_noise(record.values, record.valid)
    for k, name in enumerate(table.signals):
        if not estimated[k] > 0:
            raise ConfigError(str(record.path), name, "cannot estimate the noise level (the signal is constant); give noise for it")
    return {name: float(estimated[k]) for k, name in enumerate(table.signals)}, True


def _check_inside(record: MeasuredRecord, offsets: tuple[float, float], simulated_end: float) -> None:
    """The record must lie inside the simulated time for every offset in ``offsets``."""
    low, high = offsets
    if record.times[-1] + high > simulated_end * (1 + 1e-9):
        shifted = "" if high == 0 else f" (+ offset {'up to ' if low != high else ''}{1e3 * high:.6g} ms)"
        raise ConfigError(
            str(record.path), record.time_column,
            f"the record is longer than the simulation: it ends at {1e3 * record.times[-1]:.6g} ms{shifted}, the simulation "
            f"at {1e3 * simulated_end:.6g} ms (simulation.t_end); shorten the record or raise t_end",
        )
    if record.times[0] + low < 0.0:
        raise ConfigError(str(record.path), record.time_column,
                          f"the record starts at {record.times[0]:.6g} s (+ offset {low:.6g} s), before the simulation (t = 0)")


def check_signal_names(signals: list[str], mechanism, file: str, key: str) -> dict[str, str]:
    """Every recorded signal must be an output of the mechanism (a timeseries.parquet
    column); returns the SI unit of each of the mechanism's signals."""
    units = signal_units(mechanism)
    for signal in signals:
        if signal not in units:
            raise ConfigError(file, key, f"unknown signal {signal!r}; signals: {', '.join(units)}")
    return units


def load_record_setup(table: DataTable, key: str, name: str | None, loss: LossTable, config: MechanismConfig,
                      mechanism, file: str, adjoint: str, fitted_offset: tuple[float, float] | None) -> RecordSetup:
    """Read one record and build its part of the problem (indices into ``x`` left empty).

    ``mechanism``: built from ``config``, its signal names already checked
    (:func:`check_signal_names`); ``fitted_offset``: the bounds of a ``[[fit]]`` on this
    record's offset, if any."""
    units = signal_units(mechanism)
    record = load_record(Path(file).parent / table.path, table.time, tuple(table.signals))
    # At least two outputs per record sample: the simulated signals are interpolated
    # linearly to the record's times (any rate, any offset), and impact spikes last a few
    # samples only.
    record_step = float(np.min(np.diff(record.times)))
    output_interval = min(config.simulation.output_interval, record_step / 2.0)
    settings = solver_settings(config, adjoint=adjoint, output_interval=output_interval)
    simulated_end = (settings.num_outputs - 1) * settings.output_interval

    # offsets that keep the record inside the simulation: t_first + d >= 0, t_last + d <= end
    feasible = (-float(record.times[0]), simulated_end * (1 + 1e-9) - float(record.times[-1]))
    if fitted_offset is not None:
        offset, offset_range = AUTO, fitted_offset
    elif table.time_offset == AUTO:
        offset = AUTO
        offset_range = (feasible[0], max(feasible[0], feasible[1]))  # a record too long for any offset is refused below
    else:
        offset = float(table.time_offset)
        offset_range = (offset, offset)
    _check_inside(record, offset_range, simulated_end)

    interval = record.sample_interval()
    lowpass, independent_fraction = None, 1.0
    if table.lowpass is not None:
        if interval is None:
            raise ConfigError(file, f"{key}.lowpass", f"the low-pass filter needs a uniformly sampled record; {record.path} is not")
        if not table.lowpass < 0.5 / interval:
            raise ConfigError(file, f"{key}.lowpass", f"cutoff {table.lowpass:.6g} Hz must be below the record's Nyquist frequency {0.5 / interval:.6g} Hz")
        lowpass = LowPass(table.lowpass, table.lowpass_order or 4, interval)
        independent_fraction = min(1.0, 2.0 * table.lowpass * interval)
    measured = np.asarray(lowpass(jnp.asarray(record.values))) if lowpass is not None else record.values
    noise, noise_estimated = _noise(table, key, record, units, file)
    if table.bias and loss.kind != "time":
        raise ConfigError(file, f"{key}.bias", f"applies to kind = \"time\" only (kind is {loss.kind!r})")
    if loss.kind == "spectrum" and interval is None:
        raise ConfigError(file, "loss.kind", f"the spectral loss needs a uniformly sampled record; {record.path} is not")
    windows = _windows(loss, record, file)
    weights = table.per_signal("weights")
    # white noise through the low-pass keeps about a share 2 fc dt of its variance
    scale = np.asarray([noise[s] for s in table.signals]) * np.sqrt(independent_fraction)
    built = build_loss(loss.kind, record.times, measured, windows, scale, np.asarray([weights.get(s, 1.0) for s in table.signals]),
                       interval, loss.bands, loss.max_frequency, valid=record.valid, biased=[s in table.bias for s in table.signals])
    fixed = offset if isinstance(offset, float) else 0.5 * (offset_range[0] + offset_range[1])
    model = RecordModel(mechanism, jnp.asarray(record.times), built, lowpass, jnp.asarray(fixed, jnp.float64), settings,
                        tuple(table.signals), (), (), None)
    return RecordSetup(
        name=name, key=key, record=record, measured=np.asarray(measured), mechanism_config=config, model=model, windows=windows,
        noise=noise, noise_estimated=noise_estimated, noise_known=not noise_estimated and loss.kind == "time",
        biased=tuple(table.bias), independent_fraction=independent_fraction, offset=offset, offset_range=offset_range,
    )
