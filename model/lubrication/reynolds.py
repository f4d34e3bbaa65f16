"""Finite-difference Reynolds solver for a finite-length journal bearing, with cavitation.

Dimensionless form (derivation in ``docs/lubrication.md``): ``psi`` from the line of
centres, ``Z = 2 z / L`` in ``[-1, 1]``, ``h = 1 - eps cos(psi)``, ``lambda = L/D``::

    d/dpsi (h^3 dP/dpsi) + lambda^-2 d/dZ (h^3 dP/dZ) = -cos(psi + beta)

with ``P = 0`` at the bearing ends ``Z = +-1`` and periodic in ``psi``. The physical
pressure is ``p = (6 mu R^2 / c^2) M P`` and the force on the journal
``F = (3 mu R^3 L / c^2) M G`` with ``M = sqrt((eps w)^2 + (2 eps_dot)^2)``,
``beta = atan2(eps w, 2 eps_dot)`` and the force coefficients
``G = -int int P (cos psi, sin psi) dpsi dZ`` over the whole film. Because cavitation makes
the problem only positively homogeneous in ``(eps w, eps_dot)``, one solution per
``(eps, beta, lambda)`` covers every speed.

Cavitation:

- ``"reynolds"`` (Swift-Stieber): the linear complementarity problem
  ``P >= 0``, ``residual <= 0``, ``P * residual = 0`` solved by projected SOR, the method of
  Christopherson (Proc. Inst. Mech. Eng. 146, 1941); the film ruptures with zero pressure
  gradient, as in the tables of Raimondi & Boyd (ASLE Trans. 1, 1958).
- ``"half_sommerfeld"``: the full-film solution with negative pressures set to zero
  (Gumbel); only for comparisons with the closed forms.

Second-order central differences on a cell-centred periodic grid in ``psi`` and a
vertex grid on the half bearing ``0 <= Z <= 1`` (mirror symmetry at ``Z = 0``), red-black
ordering so that each half sweep is one vectorised update (``jit``/``vmap``-able).
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

CAVITATION_CONDITIONS = ("reynolds", "half_sommerfeld")


class ReynoldsSolution(NamedTuple):
    pressure: Float[Array, "circumferential axial"]  # P on psi_i x Z_j, Z_j = j dZ, j < n_axial
    force_coefficients: Float[Array, "2"]  # G = (G_r, G_t)
    iterations: Float[Array, ""]
    change: Float[Array, ""]  # last relative update (convergence measure)


def grid(n_circumferential: int, n_axial: int) -> tuple[Float[Array, " n"], float, float]:
    """Node angles ``psi_i`` (rad) and the spacings ``(dpsi, dZ)``."""
    dpsi = 2.0 * jnp.pi / n_circumferential
    return jnp.arange(n_circumferential) * dpsi, dpsi, 1.0 / n_axial


def solve_reynolds(
    eccentricity_ratio: Float[Array, ""],
    load_angle: Float[Array, ""],
    length_ratio: Float[Array, ""],
    cavitation: str = "reynolds",
    n_circumferential: int = 120,
    n_axial: int = 20,
    relaxation: float = 1.9,
    tolerance: float = 1e-11,
    max_iterations: int = 40_000,
    supply_at_maximum_film: bool = False,
) -> ReynoldsSolution:
    """Solve the dimensionless Reynolds equation above for ``eps``, ``beta`` (rad), ``L/D``.

    ``tolerance`` bounds the largest SOR update relative to the largest pressure.
    ``supply_at_maximum_film`` holds ``P = 0`` along the line of maximum film thickness
    (``psi = pi``: an axial supply groove at ambient pressure there), the convention of
    Raimondi & Boyd (1958); without it the film is governed by the complementarity alone.
    """
    if cavitation not in CAVITATION_CONDITIONS:
        raise ValueError(f"unknown cavitation condition {cavitation!r}; expected one of {CAVITATION_CONDITIONS}")
    psi, dpsi, dz = grid(n_circumferential, n_axial)
    film = lambda angle: 1.0 - eccentricity_ratio * jnp.cos(angle)  # noqa: E731
    east = film(psi + 0.5 * dpsi) ** 3 / dpsi**2
    west = film(psi - 0.5 * dpsi) ** 3 / dpsi**2
    axial = film(psi) ** 3 / (length_ratio**2 * dz**2)
    centre = (east + west + 2.0 * axial)[:, None]
    source = -jnp.cos(psi + load_angle)[:, None] * jnp.ones((1, n_axial))
    i, j = jnp.meshgrid(jnp.arange(n_circumferential), jnp.arange(n_axial), indexing="ij")
    free = jnp.ones((n_circumferential, n_axial), bool)
    if supply_at_maximum_film:
        if n_circumferential % 2:
            raise ValueError("supply_at_maximum_film needs an even n_circumferential (a node at psi = pi)")
        free = free.at[n_circumferential // 2].set(False)
    colours = (((i + j) % 2 == 0) & free, ((i + j) % 2 == 1) & free)
    project = cavitation == "reynolds"

    def gauss_seidel(pressure):
        beyond = jnp.concatenate([pressure[:, 1:], jnp.zeros((n_circumferential, 1))], axis=1)  # P = 0 at Z = 1
        before = jnp.concatenate([pressure[:, 1:2], pressure[:, :-1]], axis=1)  # mirror at Z = 0
        neighbours = (
            east[:, None] * jnp.roll(pressure, -1, axis=0)
            + west[:, None] * jnp.roll(pressure, 1, axis=0)
            + axial[:, None] * (beyond + before)
        )
        return (neighbours - source) / centre

    def sweep(state):
        pressure, iteration, _ = state
        old = pressure
        for colour in colours:
            relaxed = (1.0 - relaxation) * pressure + relaxation * gauss_seidel(pressure)
            relaxed = jnp.maximum(relaxed, 0.0) if project else relaxed
            pressure = jnp.where(colour, relaxed, pressure)
        change = jnp.max(jnp.abs(pressure - old)) / jnp.maximum(jnp.max(jnp.abs(pressure)), 1e-300)
        return pressure, iteration + 1, change

    def unconverged(state):
        _, iteration, change = state
        return (change > tolerance) & (iteration < max_iterations)

    start = (jnp.zeros((n_circumferential, n_axial)), jnp.asarray(0), jnp.asarray(jnp.inf))
    pressure, iterations, change = jax.lax.while_loop(unconverged, sweep, start)
    pressure = jnp.maximum(pressure, 0.0)  # a no-op for "reynolds"; Gumbel's clipping otherwise
    return ReynoldsSolution(pressure, force_coefficients(pressure, psi, dpsi, dz), iterations, change)


def force_coefficients(pressure, psi, dpsi, dz) -> Float[Array, "2"]:
    """``G = -int_{-1}^{1} int_0^{2 pi} P (cos psi, sin psi) dpsi dZ`` (trapezoid in ``Z``, with
    ``P = 0`` at ``Z = 1``; rectangle rule, spectrally accurate, in the periodic ``psi``)."""
    weights = jnp.full(pressure.shape[1], dz).at[0].set(0.5 * dz)
    axial_integral = 2.0 * (pressure @ weights)  # both halves of the bearing
    return -dpsi * jnp.stack([jnp.sum(axial_integral * jnp.cos(psi)), jnp.sum(axial_integral * jnp.sin(psi))])
