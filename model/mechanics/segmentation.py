"""Cutting a straight flexible body into rigid segments: where each segment sits, what it
weighs, which segment holds a point, and the first bending frequency of the chain on its
supports (used to set the Rayleigh damping). Build-time helpers (NumPy floats in, out).

Body frame of the undeformed body: origin at its centre, x along its length ``L``.
Division of the rigid finite element method (Wittbrodt, Adamiec-Wójcik & Wojciech 2006,
§2.1): the body is first divided into ``m`` elements of length ``L/m`` with nodes
``x_k = -L/2 + k L/m`` (k = 0..m); the elements' flexibility is concentrated between the
nodes, and the mass in ``m + 1`` rigid segments around them: segment ``k`` spans
``[x_k - L/(2m), x_k + L/(2m)]`` cut to the body, so the two end segments have half length.
"""

from collections.abc import Sequence

import numpy as np
import scipy.linalg

from .flexible import BeamChain, node_offsets
from .beam import planar_stiffness


def segment_bounds(length: float, elements: int) -> np.ndarray:
    """``(m + 1, 2)`` start and end x (m) of each segment in the body frame."""
    cuts = -length / 2.0 + (np.arange(elements) + 0.5) * length / elements
    return np.stack([np.r_[-length / 2.0, cuts], np.r_[cuts, length / 2.0]], axis=1)


def segment_centres(length: float, elements: int) -> np.ndarray:
    """x of each segment's centre in the body frame (m)."""
    return segment_bounds(length, elements).mean(axis=1)


def segment_masses(mass: float, elements: int) -> np.ndarray:
    """Mass of each segment, ``M/m`` inside and ``M/(2m)`` at the ends (kg)."""
    return mass * np.diff(segment_bounds(1.0, elements), axis=1)[:, 0]


def segment_inertias(mass: float, length: float, elements: int, area: float, inertia_z: float) -> np.ndarray:
    """In-plane inertia of each segment about its centre, ``m_s (L_s^2/12 + Izz/A)`` (kg m^2):
    the slice of a prismatic bar, length term plus the section's radius of gyration."""
    lengths = np.diff(segment_bounds(length, elements), axis=1)[:, 0]
    return segment_masses(mass, elements) * (lengths**2 / 12.0 + inertia_z / area)


def segment_inertia_tensors(mass: float, length: float, elements: int, area: float, inertia_y: float,
                            inertia_z: float) -> np.ndarray:
    """``(m + 1, 3, 3)`` inertia tensors of the segments about their centres, body axes (x
    along the beam; kg m^2): twist ``m_s (Iyy + Izz)/A``, bending about y and z
    ``m_s (L_s^2/12 + I/A)``."""
    twist = segment_masses(mass, elements) * (inertia_y + inertia_z) / area
    about_y = segment_inertias(mass, length, elements, area, inertia_y)
    about_z = segment_inertias(mass, length, elements, area, inertia_z)
    return np.stack([np.diag(row) for row in np.stack([twist, about_y, about_z], axis=1)])


def holding_segment(x: float, length: float, elements: int) -> int:
    """Index of the segment that holds body-frame abscissa ``x`` (ends go to the end segments;
    a point on a cut, to rounding, goes to the segment on its +x side)."""
    return int(np.clip(np.floor((x + length / 2.0) * elements / length + 0.5 + 1e-9), 0, elements))


def linear_chain_matrices(chain: BeamChain, masses: Sequence[float], inertias: Sequence[float]):
    """Stiffness and mass matrices of a free straight chain, linearised about the undeformed
    state, on its own coordinates ``(x, y, theta)`` per segment.

    Element ``k`` (node offsets ``a`` on segment ``k``, ``b`` on segment ``k + 1``, length
    ``L_e``): ``du = dx_j - dx_i``, ``dv = dy_j - dy_i + b dtheta_j - (a + L_e) dtheta_i``,
    ``dphi = dtheta_j - dtheta_i`` (the first-order terms of :func:`planar_deformation`).
    """
    count = len(chain.segments)
    length = float(chain.element_length)
    offset_i, offset_j = (np.asarray(a) for a in node_offsets(chain))
    jacobian = np.zeros((count - 1, 3, 3 * count))
    for k in range(count - 1):
        i, j = 3 * k, 3 * (k + 1)
        jacobian[k, 0, [i, j]] = -1.0, 1.0
        jacobian[k, 1, [i + 1, i + 2, j + 1, j + 2]] = -1.0, -(offset_i[k] + length), 1.0, offset_j[k]
        jacobian[k, 2, [i + 2, j + 2]] = -1.0, 1.0
    element = np.asarray(planar_stiffness(chain.stiffness()))
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
    """``c = omega_1 / sqrt(E Izz / mu)`` (1/m^2) of the chain on ``supports`` (1 when the
    supports leave no elastic mode: no damping is applied then)."""
    stiffness, mass = linear_chain_matrices(chain, masses, inertias)
    omega = natural_frequencies(stiffness, mass, support_rows(len(chain.segments), supports))
    if omega.size == 0:
        return 1.0
    return float(omega[0] / np.sqrt(float(chain.modulus * chain.inertia_z / chain.mass_per_length)))


def highest_frequency(chain: BeamChain, masses, inertias) -> float:
    """Largest natural frequency (rad/s) of the free chain: the fastest structural time scale
    an explicit integrator has to resolve."""
    stiffness, mass = linear_chain_matrices(chain, masses, inertias)
    return float(natural_frequencies(stiffness, mass, np.zeros((0, stiffness.shape[0])))[-1])
