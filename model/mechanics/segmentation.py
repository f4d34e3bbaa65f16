"""Cutting a straight flexible body into rigid segments: where each segment sits, what it
weighs, which segment holds a point, and the first bending frequency of the chain on its
supports (used to set the Rayleigh damping). Build-time helpers (NumPy floats in, out).

Body frame of the undeformed body: origin at its centre, x along its length; segment ``k``
(of ``m``) spans ``x in [-L/2 + k L/m, -L/2 + (k+1) L/m]``.
"""

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg

from .flexible import BeamChain, planar_deformation
from .beam import planar_stiffness


def segment_centres(length: float, segments: int) -> np.ndarray:
    """x of each segment's centre in the body frame (m)."""
    return -length / 2.0 + (np.arange(segments) + 0.5) * length / segments


def segment_inertia(mass: float, length: float, segments: int, area: float, inertia_z: float) -> float:
    """In-plane inertia of one segment about its centre, ``(M/m) (L_s^2/12 + Izz/A)`` (kg m^2)."""
    segment_length = length / segments
    return mass / segments * (segment_length**2 / 12.0 + inertia_z / area)


def holding_segment(x: float, length: float, segments: int) -> int:
    """Index of the segment that holds body-frame abscissa ``x`` (ends go to the end segments;
    a point on a cut goes to the segment on its +x side)."""
    return int(np.clip(np.floor((x + length / 2.0) / (length / segments)), 0, segments - 1))


def linear_chain_matrices(chain: BeamChain, masses: Sequence[float], inertias: Sequence[float]):
    """Stiffness and mass matrices of a free straight chain, linearised about the undeformed
    state, on its own coordinates ``(x, y, theta)`` per segment."""
    count = len(chain.segments)
    local = BeamChain(**{**{f: getattr(chain, f) for f in chain.__dataclass_fields__}, "segments": tuple(range(count))})
    q0 = jnp.stack([segment_centres(float(chain.element_length) * count, count), jnp.zeros(count), jnp.zeros(count)],
                   axis=1).reshape(-1)
    jacobian = np.asarray(jax.jacfwd(lambda q: planar_deformation(local, q).reshape(-1))(q0)).reshape(count - 1, 3, -1)
    element = np.asarray(planar_stiffness(local.stiffness()))
    stiffness = np.einsum("eai,ab,ebj->ij", jacobian, element, jacobian)
    mass = np.diag(np.stack([masses, masses, inertias], axis=1).reshape(-1))
    return stiffness, mass


def support_rows(count: int, supports: Sequence[tuple[int, float, float, bool]]) -> np.ndarray:
    """Linear constraint rows for supports ``(segment, local x, local y, clamped)``: a pin fixes
    the point's translation, a clamp also the segment's rotation."""
    rows = []
    for segment, px, py, clamped in supports:
        base = 3 * segment
        for row in ([1.0, 0.0, -py], [0.0, 1.0, px]) + (([0.0, 0.0, 1.0],) if clamped else ()):
            full = np.zeros(3 * count)
            full[base : base + 3] = row
            rows.append(full)
    return np.asarray(rows).reshape(-1, 3 * count)


def natural_frequencies(stiffness: np.ndarray, mass: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Elastic natural frequencies (rad/s, ascending) with the constraint ``rows``; rigid-body
    modes (relative eigenvalue below 1e-9) are dropped."""
    basis = scipy.linalg.null_space(rows) if rows.size else np.eye(stiffness.shape[0])
    eigen = scipy.linalg.eigh(basis.T @ stiffness @ basis, basis.T @ mass @ basis, eigvals_only=True)
    return np.sqrt(eigen[eigen > 1e-9 * eigen.max()])


def frequency_coefficient(chain: BeamChain, masses, inertias, supports) -> float:
    """``c = omega_1 / sqrt(E Izz / mu)`` (1/m^2) of the chain on ``supports``. With
    ``segments = 1`` there is no elastic mode and ``c`` is 1 (no damping is applied then)."""
    if len(chain.segments) < 2:
        return 1.0
    stiffness, mass = linear_chain_matrices(chain, masses, inertias)
    omega = natural_frequencies(stiffness, mass, support_rows(len(chain.segments), supports))
    return float(omega[0] / np.sqrt(float(chain.modulus * chain.inertia_z / chain.mass_per_length)))
