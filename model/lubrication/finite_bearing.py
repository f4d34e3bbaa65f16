"""Finite-length journal bearing for any ``L/D``: the Reynolds solution through its table.

The force is ``F = (3 mu R^3 L / c^2) M G(eps, beta, L/D)`` (:mod:`.reynolds`) with
``M = sqrt((eps w)^2 + (2 eps_dot)^2)`` and ``beta = atan2(eps w, 2 eps_dot)``: the
Swift-Stieber (Reynolds) cavitation solution is positively homogeneous in the motion, so
three dimensionless inputs cover every speed, viscosity and size. ``G`` is read from the
table of :mod:`.table` by tricubic (Catmull-Rom, C1) interpolation: 64 table values per
evaluation, O(1) and differentiable in every input. Beyond the table's ``eps`` the
normalised values are held, so the force keeps the ``(1 - eps^2)^(-5/2)`` growth; beyond
its ``L/D`` range the short-bearing ``L^3`` (long-bearing ``L``) scaling is kept.
"""

import functools

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .film import FilmMotion
from .table import TABLE_PATH, eccentricity_coordinate, length_factor, singular_factor

Scalar = float | Float[Array, ""]


@functools.cache
def load_table() -> dict[str, np.ndarray]:
    """The table (numpy arrays), read once per process."""
    with np.load(TABLE_PATH) as data:
        return {key: np.asarray(data[key]) for key in data.files}


def _catmull_rom(fraction: Float[Array, ""]) -> Float[Array, "4"]:
    """Weights of the nodes ``i-1, i, i+1, i+2`` at ``i + fraction`` (Catmull & Rom 1974)."""
    t = fraction
    return 0.5 * jnp.stack([-t**3 + 2 * t**2 - t, 3 * t**3 - 5 * t**2 + 2, -3 * t**3 + 4 * t**2 + t, t**3 - t**2])


def _stencil(coordinate, nodes: np.ndarray, periodic: bool):
    """Indices of the four nodes around ``coordinate`` and their weights (uniform nodes)."""
    spacing = nodes[1] - nodes[0]
    position = (coordinate - nodes[0]) / spacing
    if periodic:
        position = jnp.mod(position, len(nodes))
        base = jnp.floor(position)
        indices = (base.astype(int) + jnp.arange(-1, 3)) % len(nodes)
    else:
        position = jnp.clip(position, 0.0, len(nodes) - 1.0)
        base = jnp.clip(jnp.floor(position), 0.0, len(nodes) - 2.0)
        indices = jnp.clip(base.astype(int) + jnp.arange(-1, 3), 0, len(nodes) - 1)
    return indices, _catmull_rom(position - base)


def tabulated_coefficients(eps, beta, length_ratio) -> Float[Array, "2"]:
    """``G(eps, beta, L/D)`` by tricubic interpolation of the stored table."""
    table = load_table()
    i_l, w_l = _stencil(jnp.log(length_ratio), table["log_length_ratio"], periodic=False)
    i_e, w_e = _stencil(eccentricity_coordinate(eps), table["u"], periodic=False)
    i_b, w_b = _stencil(beta, table["beta"], periodic=True)
    values = jnp.asarray(table["values"])[i_l[:, None, None], i_e[None, :, None], i_b[None, None, :]]
    normalised = jnp.einsum("i,j,k,ijkc->c", w_l, w_e, w_b, values)
    return normalised * singular_factor(eps) * length_factor(length_ratio)


def motion_magnitude_and_angle(motion: FilmMotion) -> tuple[Float[Array, ""], Float[Array, ""]]:
    """``M`` (1/s) and ``beta`` (rad), with finite gradients when the film is at rest."""
    wedge, squeeze = motion.wedge_rate, 2.0 * motion.squeeze_rate
    squared = wedge**2 + squeeze**2
    moving = squared > 0.0
    magnitude = jnp.where(moving, jnp.sqrt(jnp.where(moving, squared, 1.0)), 0.0)
    angle = jnp.arctan2(jnp.where(moving, wedge, 0.0), jnp.where(moving, squeeze, 1.0))
    return magnitude, angle


def finite_bearing_force(
    motion: FilmMotion, viscosity: Scalar, radius: Scalar, clearance: Scalar, length: Scalar
) -> tuple[Float[Array, ""], Float[Array, ""]]:
    """``(F_r, F_t)`` (N) on the journal along ``n`` and ``t``; SI arguments as in
    :func:`.short_bearing.short_bearing_force`."""
    magnitude, angle = motion_magnitude_and_angle(motion)
    coefficients = tabulated_coefficients(motion.eccentricity_ratio, angle, length / (2.0 * radius))
    force = 3.0 * viscosity * radius**3 * length / clearance**2 * magnitude * coefficients
    return force[0], force[1]
