"""Simulated signals named as the columns of ``timeseries.parquet``, sampled at measurement times.

A signal is an output column of :mod:`pipelines.columns` (the one definition the
timeseries writer uses too), planar or spatial: bodies, clearance joints by kind, drivers,
ideal joints' reactions, flexible bodies. Everything here is pure JAX, so the fit
differentiates through it (also with respect to a time offset between the record and the
simulation, through the linear interpolation).
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from model.mechanics.interface import AbstractMechanism

from ..columns import column_units, output_column


def signal_units(mechanism: AbstractMechanism) -> dict[str, str]:
    """Every signal ``mechanism`` produces, with the SI unit of its values."""
    return column_units(mechanism)


def trajectory_signals(mechanism: AbstractMechanism, trajectory, names: Sequence[str]) -> Float[Array, "times signals"]:
    """The named signals at the trajectory's output times, one column each (SI units)."""
    return jnp.stack([output_column(mechanism, trajectory, name) for name in names], axis=1)


def sample_at(grid: Float[Array, " times"], values: Float[Array, "times signals"], times: Float[Array, " samples"]) -> Float[Array, "samples signals"]:
    """Linear interpolation of each column of ``values`` (given on the increasing ``grid``)
    at ``times`` (s). Differentiable in ``values`` and in ``times``; held constant outside
    the grid (the data loader refuses records that reach outside the simulation)."""
    return jax.vmap(lambda column: jnp.interp(times, grid, column), in_axes=1, out_axes=1)(values)
