"""Measured records: loading and checking a CSV/parquet file, and the sensor low-pass filter.

A record is a time column (s) and signal columns named as in ``timeseries.parquet``
(``slider.ax``, ``slider.x``, ... in SI units) at the record's own sampling rate. Bad data
is refused with one :class:`~pipelines.errors.ConfigError` line naming the data file and
the column: a missing column, a non-numeric value, time that does not increase. Missing
samples (empty cells or NaN in a signal column, or rows without a time) are gaps: they are
skipped by the loss and reported as a warning, not refused.

:func:`estimate_noise` estimates each signal's noise level from the record alone, from the
high-frequency content that a smooth signal does not have (robust differences, see there).

The low-pass filter models a sensor's bandwidth. It is applied to the measured *and* the
simulated signals so both are compared through the same sensor. It is the zero-phase
Butterworth response ``|H(f)|^2 = 1 / (1 + (f / f_c)^(2 n))`` (what forward-backward
filtering with an order-``n`` Butterworth filter gives, cf. ``scipy.signal.filtfilt``)
applied as a mask on the FFT of the signal padded by odd reflection at both ends (so the
FFT's periodic wrap-around sees no jump). It is linear and pure JAX, hence differentiable.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ..errors import ConfigError

PARQUET_SUFFIXES = (".parquet", ".pq")
# Relative spread of the sample intervals below which a record counts as uniformly sampled.
UNIFORM_TOLERANCE = 1e-6
MIN_SAMPLES = 4


@dataclasses.dataclass(frozen=True)
class MeasuredRecord:
    """A checked record: ``times`` (s, strictly increasing) and ``values[sample, signal]`` (SI)."""

    path: Path
    time_column: str
    names: tuple[str, ...]
    times: np.ndarray
    values: np.ndarray  # gaps filled by linear interpolation (for filters and plots)
    valid: np.ndarray  # [sample, signal] False where the record had no value
    warnings: tuple[str, ...] = ()

    @property
    def num_samples(self) -> int:
        return int(self.times.size)

    def sample_interval(self) -> float | None:
        """The constant sample interval (s), or None when the sampling is not uniform."""
        steps = np.diff(self.times)
        interval = float(np.mean(steps))
        return interval if np.max(np.abs(steps - interval)) <= UNIFORM_TOLERANCE * interval else None


def _read_table(path: Path):
    import pandas as pd

    if not path.is_file():
        raise ConfigError(str(path), "", "data file not found")
    try:
        if path.suffix.lower() in PARQUET_SUFFIXES:
            return pd.read_parquet(path)
        return pd.read_csv(path, comment="#", skipinitialspace=True)
    except Exception as error:  # pandas/pyarrow raise many kinds for a malformed file
        raise ConfigError(str(path), "", f"cannot read as {'parquet' if path.suffix.lower() in PARQUET_SUFFIXES else 'CSV'}: {error}") from None


def _numeric_column(table, path: Path, column: str) -> np.ndarray:
    """The column as floats; empty cells and NaN become NaN (gaps); text is refused."""
    import pandas as pd

    if column not in table.columns:
        columns = ", ".join(map(str, table.columns))
        raise ConfigError(str(path), column, f"no such column (columns: {columns})")
    raw = table[column]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64)
    text = np.isnan(values) & raw.notna().to_numpy() & ~raw.astype(str).str.strip().str.lower().isin(("nan", "")).to_numpy()
    infinite = np.isinf(values)
    if text.any() or infinite.any():
        row = int(np.argmax(text | infinite))
        # data rows counted from 1, as a spreadsheet shows them below the header
        raise ConfigError(str(path), column, f"non-numeric or infinite value at data row {row + 1} ({raw.iloc[row]!r})")
    return values


def _fill_gaps(times: np.ndarray, values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Linear interpolation over the gaps of each column (the ends held constant)."""
    filled = values.copy()
    for k in range(values.shape[1]):
        good = valid[:, k]
        filled[~good, k] = np.interp(times[~good], times[good], values[good, k])
    return filled


def load_record(path: str | Path, time_column: str, signals: tuple[str, ...]) -> MeasuredRecord:
    """Read and check a measured record (CSV, or parquet by its suffix)."""
    path = Path(path)
    table = _read_table(path)
    times = _numeric_column(table, path, time_column)
    values = np.stack([_numeric_column(table, path, name) for name in signals], axis=1) if signals else np.zeros((times.size, 0))
    warnings = []
    timed = np.isfinite(times)
    if not timed.all():
        warnings.append(f"{path}: {time_column}: {int((~timed).sum())} row(s) without a time skipped")
        times, values = times[timed], values[timed]
    if times.size < MIN_SAMPLES:
        raise ConfigError(str(path), time_column, f"a record needs at least {MIN_SAMPLES} samples, found {times.size}")
    valid = np.isfinite(values)
    for k, name in enumerate(signals):
        missing = int((~valid[:, k]).sum())
        if missing > valid.shape[0] - MIN_SAMPLES:
            raise ConfigError(str(path), name, f"{missing} of {valid.shape[0]} values are missing; need at least {MIN_SAMPLES}")
        if missing:
            warnings.append(f"{path}: {name}: {missing} missing value(s) (gaps) skipped by the loss")
    if times.size < MIN_SAMPLES:
        raise ConfigError(str(path), time_column, f"a record needs at least {MIN_SAMPLES} samples, found {times.size}")
    steps = np.diff(times)
    if np.any(steps <= 0.0):
        row = int(np.argmax(steps <= 0.0)) + 1
        raise ConfigError(
            str(path), time_column,
            f"time must increase strictly: data row {row + 1} has t = {times[row]!r} s after {times[row - 1]!r} s",
        )
    filled = _fill_gaps(times, values, valid) if not valid.all() else values
    return MeasuredRecord(path, time_column, tuple(signals), times, filled, valid, tuple(warnings))


# Differences of order k turn white noise of std s into noise of std s sqrt(C(2k, k)), while
# they suppress a smooth signal by (2 pi f dt)^k. The lower quartile of |d - median(d)| is
# 0.3186 s for Gaussian d of std s; unlike the median it barely moves when up to a third of
# the differences fall on impact spikes.
NOISE_ORDERS = (1, 2, 3, 4)
NOISE_QUANTILE, GAUSSIAN_QUANTILE = 0.25, 0.31864


def estimate_noise(values: np.ndarray, valid: np.ndarray | None = None) -> np.ndarray:
    """Noise std per column of a uniformly or finely sampled record, from its high-frequency
    content: ``quantile_0.25|Δ^k y - median| / 0.3186 / sqrt(C(2k, k))`` for difference
    orders ``k = 1..4``, the smallest of them (the smooth signal inflates the low orders;
    the lower quartile ignores impact spikes). Cf. the difference-based variance estimators of
    Rice (1984) and Hall, Kay & Titterington (1990), here with a robust scale."""
    from math import comb

    values = np.asarray(values, np.float64)
    valid = np.isfinite(values) if valid is None else np.asarray(valid, bool)
    estimates = np.empty(values.shape[1])
    for k in range(values.shape[1]):
        column = values[valid[:, k], k]
        candidates = []
        for order in NOISE_ORDERS:
            difference = np.diff(column, n=order)
            if difference.size >= 8:
                deviation = np.quantile(np.abs(difference - np.median(difference)), NOISE_QUANTILE)
                candidates.append(deviation / GAUSSIAN_QUANTILE / np.sqrt(comb(2 * order, order)))
        estimates[k] = min(candidates) if candidates else np.nan
    return estimates


class LowPass(eqx.Module):
    """Zero-phase Butterworth low-pass of order ``order`` with cutoff ``cutoff`` (Hz) on
    uniformly sampled columns (sample interval ``interval``, s). Pure JAX, linear."""

    cutoff: float = eqx.field(static=True)
    order: int = eqx.field(static=True)
    interval: float = eqx.field(static=True)

    def gain(self, frequencies):
        """Power gain ``|H(f)|^2`` of the zero-phase filter at ``frequencies`` (Hz)."""
        return 1.0 / (1.0 + (frequencies / self.cutoff) ** (2 * self.order))

    def __call__(self, values: Float[Array, "samples signals"]) -> Float[Array, "samples signals"]:
        values = jnp.asarray(values)
        n = values.shape[0]
        # odd extension: 2 x_0 - x[n-1:0:-1] before, 2 x_{n-1} - x[n-2::-1] after
        before = 2.0 * values[:1] - values[1:][::-1]
        after = 2.0 * values[-1:] - values[:-1][::-1]
        padded = jnp.concatenate([before, values, after], axis=0)
        length = padded.shape[0]
        mask = self.gain(jnp.fft.rfftfreq(length, self.interval))
        filtered = jnp.fft.irfft(jnp.fft.rfft(padded, axis=0) * mask[:, None], n=length, axis=0)
        return filtered[n - 1 : 2 * n - 1]
