"""The finite-bearing force table: its grid, its normalisation and its generation.

The Reynolds solution's force coefficients ``G(eps, beta, L/D)`` (:mod:`.reynolds`) are
tabulated once, offline, and interpolated at run time (:mod:`.finite_bearing`). So that
cubic interpolation is accurate with few nodes, the table stores

    g = G (1 - eps^2)^(5/2) (1 + lambda^2) / lambda^2

on nodes uniform in ``u = -ln(1 - eps)``, ``beta`` and ``ln(lambda)``: ``(1 - eps^2)^(-5/2)``
is the strongest singularity of the film force as ``eps -> 1`` (the squeeze term of the
short and long bearings) and ``lambda^2 / (1 + lambda^2)`` carries the short-bearing
``L^3`` scaling for small ``L/D`` and the long-bearing ``L`` scaling for large ``L/D``.

One table per film supply condition of :mod:`.reynolds` (:data:`SUPPLY_CONDITIONS`):
``"maximum_gap"``, the film held at ambient pressure along the line of largest gap (the
published tables' convention, Raimondi & Boyd 1958), and ``"none"``, the film governed by
the complementarity condition alone. Regenerate both (each about 11 min on two CPU cores)::

    python -m model.lubrication.table maximum_gap none
"""

import os
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from tqdm import tqdm

from .reynolds import solve_reynolds

SUPPLY_CONDITIONS = ("maximum_gap", "none")
TABLE_PATHS = {
    "maximum_gap": Path(__file__).with_name("finite_bearing_table.npz"),
    "none": Path(__file__).with_name("finite_bearing_table_no_supply.npz"),
}
MAX_ECCENTRICITY_RATIO = 0.98
ECCENTRICITY_NODES = 20
ATTITUDE_NODES = 36  # beta, periodic
LENGTH_RATIO_RANGE = (1.0 / 8.0, 4.0)
LENGTH_RATIO_NODES = 9
SOLVER_GRID = dict(n_circumferential=120, n_axial=16)


def eccentricity_coordinate(eps):
    """``u = -ln(1 - eps)``: stretches the table towards the wall, where the force is steep."""
    return -jnp.log1p(-eps)


def singular_factor(eps):
    """``(1 - eps^2)^(-5/2)``, the table's normalisation in ``eps``."""
    return (1.0 - eps**2) ** -2.5


def length_factor(length_ratio):
    """``lambda^2 / (1 + lambda^2)``, the table's normalisation in ``L/D``."""
    return length_ratio**2 / (1.0 + length_ratio**2)


def table_nodes() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(u, beta, ln lambda)`` node coordinates."""
    u = np.linspace(0.0, -np.log1p(-MAX_ECCENTRICITY_RATIO), ECCENTRICITY_NODES)
    beta = np.arange(ATTITUDE_NODES) * 2.0 * np.pi / ATTITUDE_NODES
    log_lambda = np.linspace(np.log(LENGTH_RATIO_RANGE[0]), np.log(LENGTH_RATIO_RANGE[1]), LENGTH_RATIO_NODES)
    return u, beta, log_lambda


def normalised_coefficients(eps, beta, length_ratio, supply: str = "maximum_gap", **solver_options):
    """The tabulated quantity ``g`` at one point, from the Reynolds solver, for a film
    ``supply`` of :data:`SUPPLY_CONDITIONS`."""
    options = {**SOLVER_GRID, "supply_at_maximum_film": supply == "maximum_gap", **solver_options}
    coefficients = solve_reynolds(eps, beta, length_ratio, **options).force_coefficients
    return coefficients / (singular_factor(eps) * length_factor(length_ratio))


def build_table(supply: str = "maximum_gap") -> dict[str, np.ndarray]:
    """Solve every node (``vmap`` over ``eps`` and ``beta``, one ``L/D`` at a time)."""
    if supply not in SUPPLY_CONDITIONS:
        raise ValueError(f"unknown film supply {supply!r}; expected one of {SUPPLY_CONDITIONS}")
    u, beta, log_lambda = table_nodes()
    eps = -np.expm1(-u)
    grid_eps, grid_beta = np.meshgrid(eps, beta, indexing="ij")
    solve = jax.jit(jax.vmap(lambda e, b, lam: normalised_coefficients(e, b, lam, supply), in_axes=(0, 0, None)))
    slices = [solve(grid_eps.ravel(), grid_beta.ravel(), np.exp(ll)) for ll in tqdm(log_lambda, desc=f"table {supply}")]
    values = np.stack([np.asarray(values).reshape(*grid_eps.shape, 2) for values in slices])
    return dict(u=u, beta=beta, log_length_ratio=log_lambda, values=values)


def main(supplies: list[str]) -> None:
    """Build and store the tables of the given supply conditions (atomically)."""
    for supply in supplies:
        start = time.perf_counter()
        table = build_table(supply)
        path = TABLE_PATHS[supply]
        partial = path.with_name(path.stem + ".partial.npz")
        np.savez_compressed(partial, supply=supply, **table)
        os.replace(partial, path)
        print(f"wrote {path} {table['values'].shape} in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main(sys.argv[1:] or list(SUPPLY_CONDITIONS))
