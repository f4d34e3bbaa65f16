"""Losses that compare simulated with measured signals, as residual vectors.

Each loss maps the simulated signals at the measurement times (``[samples, signals]``, after
the same low-pass filter as the measurement) to a residual vector ``r``; the fit minimises
``mean(r^2) = sum(r^2) / count``, and the Gauss–Newton uncertainty uses ``dr/dtheta``.

- :class:`TimeDomainLoss` — weighted least squares sample by sample, optionally only inside
  windows (a mask per sample and signal, which also skips gaps in the record). Residuals
  are divided by each signal's noise level (given, or estimated from the record), so
  signals of different units weigh by what they can tell. A signal with an unknown
  constant bias (an accelerometer's offset) has the window mean of its residual removed:
  the bias is profiled out (its least-squares value given the parameters), and the
  Jacobian is that of the projected problem. Best while the
  simulated trajectory still follows the measured one: on impact-dominated records (the
  Flores slider-crank) only the first few impacts, since the motion between impacts is
  chaotic and later impacts shift in time with any parameter change.
- :class:`SpectralLoss` — log power in logarithmically spaced frequency bands per window
  (Hann-windowed periodogram). Insensitive to the timing of individual impacts.
- :class:`PeakLoss` — log ratios of amplitude statistics per window: RMS, mean absolute
  value and the 4- and 16-norms (the 16-norm tracks the peak level, smoothly). Also
  insensitive to timing; describes how hard and how often the joint hits.

All are pure JAX modules (the measured features are array leaves computed once).
"""

from __future__ import annotations

from collections.abc import Sequence

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

LOSS_KINDS = ("time", "spectrum", "peaks")
PEAK_NORMS = (2.0, 1.0, 4.0, 16.0)  # RMS, mean |s|, 4-norm, 16-norm (about the peak)
# Floor of the band power, relative to the largest measured band power of the signal: bands
# far below the signal's level (numerical noise) must not dominate a log-spectral loss.
SPECTRAL_FLOOR = 1e-10


def window_indices(times: np.ndarray, windows: Sequence[tuple[float, float]]) -> list[tuple[int, int]]:
    """``[start, stop)`` sample indices of each window ``(t_from, t_to)`` (record time, s)."""
    return [(int(np.searchsorted(times, low, "left")), int(np.searchsorted(times, high, "right"))) for low, high in windows]


class TimeDomainLoss(eqx.Module):
    """``r[i, k] = sqrt(w_k) (s_sim[i, k] - s_meas[i, k] - b_k) / scale_k`` for the samples
    in the windows, ``b_k`` the profiled bias (zero for signals without one).

    ``mask`` is an array leaf, so a fit on another window reuses the compiled evaluation;
    ``count`` then is the number of residuals that count in that window (kept as an array
    for the same reason)."""

    measured: Float[Array, "samples signals"]
    mask: Float[Array, "samples signals"]  # 1 inside a window and not in a gap, else 0
    scale: Float[Array, " signals"]  # noise level (SI)
    root_weight: Float[Array, " signals"]
    biased: tuple[bool, ...] = eqx.field(static=True, default=())  # per signal: profile out a constant bias

    @property
    def count(self) -> Float[Array, ""]:
        return jnp.sum(self.mask)

    def bias(self, simulated: Float[Array, "samples signals"]) -> Float[Array, " signals"]:
        """The bias ``b_k = mean over the window of (s_meas - s_sim)`` per signal (0 when not biased)."""
        if not any(self.biased):
            return jnp.zeros(self.measured.shape[1])
        mean = jnp.sum((self.measured - simulated) * self.mask, axis=0) / jnp.maximum(jnp.sum(self.mask, axis=0), 1.0)
        return jnp.where(jnp.asarray(self.biased), mean, 0.0)

    def __call__(self, simulated: Float[Array, "samples signals"]) -> Float[Array, " residuals"]:
        residual = (simulated + self.bias(simulated) - self.measured) / self.scale * self.root_weight
        return (residual * self.mask).reshape(-1)

    def with_window(self, mask: Float[Array, "samples signals"]) -> "TimeDomainLoss":
        return eqx.tree_at(lambda loss: loss.mask, self, jnp.asarray(mask, jnp.float64))


def _peak_statistics(values: Float[Array, " n"], scale) -> Float[Array, " stats"]:
    magnitude = jnp.sqrt((values / scale) ** 2 + 1e-30)  # |s|, smooth at 0
    return jnp.stack([jnp.mean(magnitude**p) ** (1.0 / p) for p in PEAK_NORMS])


class PeakLoss(eqx.Module):
    """``r = sqrt(w_k) log(stat_sim / stat_meas)`` per window, signal and statistic."""

    measured_log: Float[Array, "windows signals stats"]
    scale: Float[Array, " signals"]
    root_weight: Float[Array, " signals"]
    slices: tuple[tuple[int, int], ...] = eqx.field(static=True)
    count: float = eqx.field(static=True)

    def statistics(self, values: Float[Array, "samples signals"]) -> Float[Array, "windows signals stats"]:
        return jnp.stack([
            jnp.stack([_peak_statistics(values[start:stop, k], self.scale[k]) for k in range(values.shape[1])])
            for start, stop in self.slices
        ])

    def __call__(self, simulated: Float[Array, "samples signals"]) -> Float[Array, " residuals"]:
        difference = jnp.log(self.statistics(simulated)) - self.measured_log
        return (difference * self.root_weight[None, :, None]).reshape(-1)


class SpectralLoss(eqx.Module):
    """``r = sqrt(w_k) (log P_sim - log P_meas)`` per window, signal and frequency band."""

    measured_log: tuple[Float[Array, "signals bands"], ...]  # per window
    band_matrices: tuple[Float[Array, "bands freqs"], ...]  # mean over the bins of each band
    tapers: tuple[Float[Array, " n"], ...]  # Hann window per window
    floor: tuple[Float[Array, " signals"], ...]
    root_weight: Float[Array, " signals"]
    slices: tuple[tuple[int, int], ...] = eqx.field(static=True)
    count: float = eqx.field(static=True)

    def band_power(self, values: Float[Array, "samples signals"]) -> tuple[Float[Array, "signals bands"], ...]:
        """Mean periodogram power (arbitrary units) per band, per window."""
        powers = []
        for (start, stop), taper, bands in zip(self.slices, self.tapers, self.band_matrices):
            segment = values[start:stop]
            segment = (segment - jnp.mean(segment, axis=0)) * taper[:, None]
            spectrum = jnp.abs(jnp.fft.rfft(segment, axis=0)) ** 2  # [freqs, signals]
            powers.append((bands @ spectrum).T)
        return tuple(powers)

    def log_power(self, values) -> tuple[Float[Array, "signals bands"], ...]:
        return tuple(jnp.log(power + floor[:, None]) for power, floor in zip(self.band_power(values), self.floor))

    def __call__(self, simulated: Float[Array, "samples signals"]) -> Float[Array, " residuals"]:
        return jnp.concatenate([
            ((simulated_log - measured_log) * self.root_weight[:, None]).reshape(-1)
            for simulated_log, measured_log in zip(self.log_power(simulated), self.measured_log)
        ])


def _band_matrix(length: int, interval: float, bands: int, max_frequency: float | None) -> np.ndarray:
    """Averaging matrix from rfft bins to ``bands`` log-spaced bands (empty bands merged away)."""
    frequencies = np.fft.rfftfreq(length, interval)
    low = 2.0 * frequencies[1]  # below two bins the window shape dominates
    high = frequencies[-1] if max_frequency is None else min(max_frequency, frequencies[-1])
    edges = np.geomspace(low, high, bands + 1)
    rows = []
    for lower, upper in zip(edges[:-1], edges[1:]):
        inside = (frequencies >= lower) & (frequencies < upper if upper < high else frequencies <= upper)
        if inside.any():
            rows.append(inside / inside.sum())
    return np.asarray(rows)


def build_loss(
    kind: str,
    times: np.ndarray,
    measured: np.ndarray,
    windows: Sequence[tuple[float, float]],
    scale: np.ndarray,
    weights: np.ndarray,
    interval: float | None = None,
    bands: int = 24,
    max_frequency: float | None = None,
    valid: np.ndarray | None = None,
    biased: Sequence[bool] = (),
) -> TimeDomainLoss | SpectralLoss | PeakLoss:
    """The loss of ``kind`` for a (filtered) measured record.

    ``windows`` are ``(t_from, t_to)`` in record time (s); ``scale`` per signal divides the
    time-domain residuals (noise level, or RMS); ``interval`` (s) is the uniform sample
    interval the spectral loss needs.
    """
    measured = np.asarray(measured, np.float64)
    root_weight = jnp.asarray(np.sqrt(weights), jnp.float64)
    slices = tuple(window_indices(times, windows))
    if kind == "time":
        mask = np.zeros(measured.shape)
        for start, stop in slices:
            mask[start:stop] = 1.0
        if valid is not None:
            mask *= np.asarray(valid, np.float64)
        biased = tuple(bool(b) for b in biased) or (False,) * measured.shape[1]
        return TimeDomainLoss(jnp.asarray(measured), jnp.asarray(mask), jnp.asarray(scale, jnp.float64), root_weight, biased)
    if kind == "peaks":
        loss = PeakLoss(jnp.zeros((len(slices), measured.shape[1], len(PEAK_NORMS))), jnp.asarray(scale, jnp.float64),
                        root_weight, slices, count=float(len(slices) * measured.shape[1] * len(PEAK_NORMS)))
        return eqx.tree_at(lambda l: l.measured_log, loss, jnp.log(loss.statistics(jnp.asarray(measured))))
    if kind == "spectrum":
        if interval is None:
            raise ValueError("the spectral loss needs a uniformly sampled record")
        matrices = tuple(jnp.asarray(_band_matrix(stop - start, interval, bands, max_frequency)) for start, stop in slices)
        tapers = tuple(jnp.asarray(np.hanning(stop - start)) for start, stop in slices)
        count = float(sum(m.shape[0] for m in matrices) * measured.shape[1])
        loss = SpectralLoss((), matrices, tapers, (), root_weight, slices, count)
        power = loss.band_power(jnp.asarray(measured))
        floor = tuple(SPECTRAL_FLOOR * jnp.max(p, axis=1) for p in power)
        loss = SpectralLoss((), matrices, tapers, floor, root_weight, slices, count)
        return SpectralLoss(loss.log_power(jnp.asarray(measured)), matrices, tapers, floor, root_weight, slices, count)
    raise ValueError(f"unknown loss kind {kind!r}; expected one of {LOSS_KINDS}")
