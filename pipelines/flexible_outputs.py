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
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from model.geometry.quaternion import rotation_matrix
from model.mechanics.flexible import section_loads
from model.mechanics.interface import AbstractMechanism
from model.mechanics.segmentation import holding_segment, segment_centres, segment_masses

# Per flexible body: the SI unit of each column kind (element columns end in ``_k``).
PLANAR_UNITS = {"x": "m", "y": "m", "theta": "rad", "vx": "m/s", "vy": "m/s", "omega": "rad/s", "ax": "m/s^2",
                "ay": "m/s^2", "alpha": "rad/s^2", "deflection": "m"}
PLANAR_ELEMENT_UNITS = {"axial_force": "N", "bending_moment": "N*m"}
SPATIAL_UNITS = {**{axis: "m" for axis in "xyz"}, **{f"v{axis}": "m/s" for axis in "xyz"},
                 **{f"a{axis}": "m/s^2" for axis in "xyz"}, "deflection": "m"}
SPATIAL_ELEMENT_UNITS = {"axial_force": "N", "torque": "N*m", "bending_moment_y": "N*m", "bending_moment_z": "N*m",
                         "bending_moment": "N*m"}


def flexible_units(mechanism: AbstractMechanism) -> dict[str, str]:
    """``{"B.kind": SI unit}`` for every column :func:`flexible_columns` gives."""
    spatial = mechanism.dimension == 3
    units, element_units = (SPATIAL_UNITS, SPATIAL_ELEMENT_UNITS) if spatial else (PLANAR_UNITS, PLANAR_ELEMENT_UNITS)
    named: dict[str, str] = {}
    for chain in mechanism.beam_chains:
        named.update({f"{chain.name}.{kind}": unit for kind, unit in units.items()})
        for k in range(len(chain.segments) - 1):
            named.update({f"{chain.name}.{kind}_{k}": unit for kind, unit in element_units.items()})
    return named


def _point(q, segment: int, local_x: float) -> Float[Array, "n 2"]:
    """Ground-frame position of point ``(local_x, 0)`` of a segment, per sample (n, 2)."""
    x, y, theta = q[:, 3 * segment], q[:, 3 * segment + 1], q[:, 3 * segment + 2]
    return jnp.stack([x + local_x * jnp.cos(theta), y + local_x * jnp.sin(theta)], axis=1)


def _chord_nodes(segments: tuple[int, ...], element_length) -> list[tuple[int, object]]:
    """``(segment, local x)`` of the body's two ends and its midpoint (x = 0 of the
    undeformed body), the points the deflection is measured between. The segments follow
    from the element count alone (the layout scales with the element length, which may be
    a traced value under ``jit``)."""
    elements = len(segments) - 1
    middle = holding_segment(0.0, float(elements), elements)
    centre = float(segment_centres(float(elements), elements)[middle])  # in element lengths
    return [(segments[0], -element_length / 4.0), (segments[-1], element_length / 4.0), (segments[middle], -centre * element_length)]


def midpoint_deflection(q, segments: tuple[int, ...], element_length) -> Float[Array, " n"]:
    """Signed distance (m) of the midpoint from the chord of the end points, per sample."""
    start, end, mid = (_point(q, segment, local) for segment, local in _chord_nodes(segments, element_length))
    chord = end - start
    arm = mid - start
    return (chord[:, 0] * arm[:, 1] - chord[:, 1] * arm[:, 0]) / jnp.linalg.norm(chord, axis=1)


def flexible_columns(mechanism: AbstractMechanism, trajectory) -> dict[str, Float[Array, " n"]]:
    """The columns of the flexible bodies of a planar or spatial mechanism (see the module
    docstring). Pure JAX: the calibration differentiates through them, and under ``jit``
    the columns a caller does not read are never computed."""
    if mechanism.dimension == 3:
        return _spatial_columns(mechanism, trajectory)
    q, qd, qdd = trajectory.q, trajectory.qd, trajectory.qdd
    columns: dict[str, Array] = {}
    for chain in mechanism.beam_chains:
        index = np.asarray(chain.segments)
        weights = jnp.asarray(segment_masses(1.0, len(index) - 1))
        for k, (pos, vel, acc) in enumerate((("x", "vx", "ax"), ("y", "vy", "ay"), ("theta", "omega", "alpha"))):
            for label, values in ((pos, q), (vel, qd), (acc, qdd)):
                columns[f"{chain.name}.{label}"] = values[:, 3 * index + k] @ weights
        columns[f"{chain.name}.deflection"] = midpoint_deflection(q, chain.segments, chain.element_length)
        axial, moment = jax.vmap(lambda q_, qd_: section_loads(chain, q_, qd_))(q, qd)
        for k in range(len(chain.segments) - 1):
            columns[f"{chain.name}.axial_force_{k}"] = axial[:, k]
            columns[f"{chain.name}.bending_moment_{k}"] = moment[:, k]
    return columns


def _spatial_point(x, segment: int, local_x: float) -> Float[Array, "n 3"]:
    """Ground-frame position of point ``(local_x, 0, 0)`` of a spatial segment (n, 3)."""
    block = x[:, 7 * segment : 7 * segment + 7]
    axis = jax.vmap(rotation_matrix)(block[:, 3:])[:, :, 0]
    return block[:, :3] + local_x * axis


def _spatial_columns(mechanism, trajectory) -> dict[str, Array]:
    from model.mechanics.spatial.beams import section_loads as spatial_section_loads

    x, v, a = trajectory.x, trajectory.v, trajectory.vdot
    columns: dict[str, Array] = {}
    for chain in mechanism.beam_chains:
        index = np.asarray(chain.segments)
        weights = jnp.asarray(segment_masses(1.0, len(index) - 1))
        for k, axis in enumerate("xyz"):
            columns[f"{chain.name}.{axis}"] = x[:, 7 * index + k] @ weights
            columns[f"{chain.name}.v{axis}"] = v[:, 6 * index + k] @ weights
            columns[f"{chain.name}.a{axis}"] = a[:, 6 * index + k] @ weights
        elements = len(index) - 1
        start, end, mid = (_spatial_point(x, segment, local)
                           for segment, local in _chord_nodes(chain.segments, chain.element_length))
        chord = (end - start) / jnp.linalg.norm(end - start, axis=1, keepdims=True)
        arm = mid - start
        columns[f"{chain.name}.deflection"] = jnp.linalg.norm(arm - jnp.sum(arm * chord, axis=1, keepdims=True) * chord, axis=1)
        loads = jax.vmap(lambda x_, v_: spatial_section_loads(chain, x_, v_))(x, v)
        for k in range(elements):
            for kind in ("axial_force", "torque", "bending_moment_y", "bending_moment_z"):
                columns[f"{chain.name}.{kind}_{k}"] = loads[kind][:, k]
            columns[f"{chain.name}.bending_moment_{k}"] = jnp.hypot(columns[f"{chain.name}.bending_moment_y_{k}"],
                                                                    columns[f"{chain.name}.bending_moment_z_{k}"])
    return columns


def flexible_summary(mechanism: AbstractMechanism, columns: dict[str, np.ndarray], t) -> dict[str, float]:
    """``B.max_abs_deflection`` (m), ``B.max_abs_bending_moment`` (N m), ``B.max_abs_axial_force`` (N),
    over the output samples at times ``t`` (s) in the metrics' window (``t >= mechanism.metrics_start()``)."""
    summary: dict[str, float] = {}
    counted = np.asarray(t) >= float(mechanism.metrics_start())
    for chain in mechanism.beam_chains:
        name, elements = chain.name, range(len(chain.segments) - 1)
        summary[f"{name}.max_abs_deflection"] = float(np.max(np.abs(columns[f"{name}.deflection"][counted])))
        for kind in ("bending_moment", "axial_force"):
            peaks = [np.max(np.abs(columns[f"{name}.{kind}_{k}"][counted])) for k in elements]
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
