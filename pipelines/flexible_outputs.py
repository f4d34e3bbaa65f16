"""Output columns, summary figures and the plot of flexible bodies.

Per flexible body ``B`` (SI): ``B.x, B.y, B.theta`` and their rates and accelerations for
its reference frame — the centre of mass of its segments and their mass-weighted mean angle
(both linear in the segment coordinates, so velocities and accelerations are the same
averages);
``B.deflection``, the transverse displacement of the body's midpoint (x = 0 of the
undeformed body) from the chord of its two end points, positive to the left of the chord
(from the x = -L/2 end to the x = +L/2 end); ``B.axial_force_k`` (tension positive) and
``B.bending_moment_k`` at the cut between segments k and k + 1 (the middle of element k).

On a spatial mechanism: ``B.x, B.y, B.z`` and their
rates and accelerations (the segments' centre of mass); ``B.deflection``, the distance of
the midpoint from the chord (unsigned); per element ``B.axial_force_k``, ``B.torque_k``,
``B.bending_moment_y_k``, ``B.bending_moment_z_k`` (about the section's axes of segment k)
and ``B.bending_moment_k``, their resultant.
"""

from __future__ import annotations

import jax
import numpy as np

from model.geometry.quaternion import rotation_matrix
from model.mechanics.flexible import section_loads
from model.mechanics.interface import AbstractMechanism
from model.mechanics.segmentation import holding_segment, segment_centres, segment_masses


def _point(q, segment: int, local_x: float) -> np.ndarray:
    """Ground-frame position of point ``(local_x, 0)`` of a segment, per sample (n, 2)."""
    x, y, theta = q[:, 3 * segment], q[:, 3 * segment + 1], q[:, 3 * segment + 2]
    return np.stack([x + local_x * np.cos(theta), y + local_x * np.sin(theta)], axis=1)


def _chord_nodes(segments: tuple[int, ...], element_length: float) -> list[tuple[int, float]]:
    """``(segment, local x)`` of the body's two ends and its midpoint (x = 0 of the
    undeformed body), the points the deflection is measured between."""
    elements = len(segments) - 1
    quarter = element_length / 4.0
    middle = holding_segment(0.0, elements * element_length, elements)
    centre = segment_centres(elements * element_length, elements)[middle]
    return [(segments[0], -quarter), (segments[-1], quarter), (segments[middle], -centre)]


def midpoint_deflection(q: np.ndarray, segments: tuple[int, ...], element_length: float) -> np.ndarray:
    """Signed distance (m) of the midpoint from the chord of the end points, per sample."""
    start, end, mid = (_point(q, segment, local) for segment, local in _chord_nodes(segments, element_length))
    chord = end - start
    arm = mid - start
    return (chord[:, 0] * arm[:, 1] - chord[:, 1] * arm[:, 0]) / np.linalg.norm(chord, axis=1)


def flexible_columns(mechanism: AbstractMechanism, trajectory) -> dict[str, np.ndarray]:
    """The columns of the flexible bodies of a planar or spatial mechanism (see the module
    docstring)."""
    if mechanism.dimension == 3:
        return _spatial_columns(mechanism, trajectory)
    q, qd, qdd = (np.asarray(a) for a in (trajectory.q, trajectory.qd, trajectory.qdd))
    columns: dict[str, np.ndarray] = {}
    for chain in mechanism.beam_chains:
        index = np.asarray(chain.segments)
        weights = segment_masses(1.0, len(index) - 1)
        for k, (pos, vel, acc) in enumerate((("x", "vx", "ax"), ("y", "vy", "ay"), ("theta", "omega", "alpha"))):
            for label, values in ((pos, q), (vel, qd), (acc, qdd)):
                columns[f"{chain.name}.{label}"] = values[:, 3 * index + k] @ weights
        columns[f"{chain.name}.deflection"] = midpoint_deflection(q, chain.segments, float(chain.element_length))
        axial, moment = jax.vmap(lambda q_, qd_: section_loads(chain, q_, qd_))(trajectory.q, trajectory.qd)
        for k in range(len(chain.segments) - 1):
            columns[f"{chain.name}.axial_force_{k}"] = np.asarray(axial[:, k])
            columns[f"{chain.name}.bending_moment_{k}"] = np.asarray(moment[:, k])
    return columns


def _spatial_point(x, segment: int, local_x: float) -> np.ndarray:
    """Ground-frame position of point ``(local_x, 0, 0)`` of a spatial segment (n, 3)."""
    block = x[:, 7 * segment : 7 * segment + 7]
    axis = np.asarray(jax.vmap(rotation_matrix)(block[:, 3:]))[:, :, 0]
    return block[:, :3] + local_x * axis


def _spatial_columns(mechanism, trajectory) -> dict[str, np.ndarray]:
    from model.mechanics.spatial.beams import section_loads as spatial_section_loads

    x, v, a = (np.asarray(array) for array in (trajectory.x, trajectory.v, trajectory.vdot))
    columns: dict[str, np.ndarray] = {}
    for chain in mechanism.beam_chains:
        index = np.asarray(chain.segments)
        weights = segment_masses(1.0, len(index) - 1)
        for k, axis in enumerate("xyz"):
            columns[f"{chain.name}.{axis}"] = x[:, 7 * index + k] @ weights
            columns[f"{chain.name}.v{axis}"] = v[:, 6 * index + k] @ weights
            columns[f"{chain.name}.a{axis}"] = a[:, 6 * index + k] @ weights
        elements = len(index) - 1
        start, end, mid = (_spatial_point(x, segment, local)
                           for segment, local in _chord_nodes(chain.segments, float(chain.element_length)))
        chord = (end - start) / np.linalg.norm(end - start, axis=1, keepdims=True)
        arm = mid - start
        columns[f"{chain.name}.deflection"] = np.linalg.norm(arm - np.sum(arm * chord, axis=1, keepdims=True) * chord, axis=1)
        loads = jax.vmap(lambda x_, v_: spatial_section_loads(chain, x_, v_))(trajectory.x, trajectory.v)
        for k in range(elements):
            for kind in ("axial_force", "torque", "bending_moment_y", "bending_moment_z"):
                columns[f"{chain.name}.{kind}_{k}"] = np.asarray(loads[kind][:, k])
            columns[f"{chain.name}.bending_moment_{k}"] = np.hypot(columns[f"{chain.name}.bending_moment_y_{k}"],
                                                                   columns[f"{chain.name}.bending_moment_z_{k}"])
    return columns


def flexible_summary(mechanism: AbstractMechanism, columns: dict[str, np.ndarray]) -> dict[str, float]:
    """``B.max_abs_deflection`` (m), ``B.max_abs_bending_moment`` (N m), ``B.max_abs_axial_force`` (N)."""
    summary: dict[str, float] = {}
    for chain in mechanism.beam_chains:
        name, elements = chain.name, range(len(chain.segments) - 1)
        summary[f"{name}.max_abs_deflection"] = float(np.max(np.abs(columns[f"{name}.deflection"])))
        for kind in ("bending_moment", "axial_force"):
            peaks = [np.max(np.abs(columns[f"{name}.{kind}_{k}"])) for k in elements]
            summary[f"{name}.max_abs_{kind}"] = float(max(peaks, default=0.0))
    return summary


def plot_flexible(mechanism: AbstractMechanism, columns: dict[str, np.ndarray], out_dir) -> list[str]:
    """``<B>_deflection.png``: midpoint deflection and the peak bending moment over time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    for chain in mechanism.beam_chains:
        name = chain.name
        t = columns["t"]
        figure, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7, 5))
        top.plot(t * 1e3, columns[f"{name}.deflection"] * 1e6)
        top.set_ylabel("midpoint deflection (µm)")
        moments = [columns[f"{name}.bending_moment_{k}"] for k in range(len(chain.segments) - 1)]
        if moments:
            bottom.plot(t * 1e3, np.max(np.abs(np.stack(moments)), axis=0))
        bottom.set_ylabel("max |bending moment| (N m)")
        bottom.set_xlabel("t (ms)")
        figure.suptitle(f"flexible body {name}")
        path = f"{out_dir}/{name}_deflection.png"
        figure.savefig(path, dpi=120)
        plt.close(figure)
        written.append(path)
    return written
