"""Animations of a ``simulate`` run: the mechanism moving, drawn from the run folder.

``simulate`` writes ``geometry.json`` beside ``timeseries.parquet`` (:func:`geometry`: which
body each joint point sits on and where in that body's frame, the clearances, the segments
of each flexible body). :func:`animate_run` redraws the bodies from the timeseries' body
poses: each rigid body as the links between its joint points, joints as markers, a flexible
body as the chain of its segments with the deflection from the chord of its ends magnified,
and beside the mechanism one inset per clearance joint: the journal's centre path
(``J.ex``, ``J.ey``) inside the clearance circle, magnified to the circle's size, with the
contact force as an arrow (length relative to the run's peak). Spatial mechanisms are drawn
in a 3-D view (orientation quaternions scalar first, as in the timeseries).

GIF through matplotlib's Pillow writer; MP4 through ffmpeg when it is installed.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import ClearanceError
from .io import write_json

GEOMETRY_FILE = "geometry.json"
FORMATS = ("gif", "mp4")
DEFLECTION_SHARE = 0.05  # magnified deflection: this share of the body's length at its peak
MAX_MAGNIFICATION = 1000.0
VIEW_AXES = (0, 2, 1)  # ground axes drawn as the 3-D view's x, y, z: the configs' vertical y upwards


def _point(array) -> list[float]:
    return [float(value) for value in np.asarray(array)]


def geometry(mechanism, name: str = "") -> dict:
    """What a drawing needs beyond the timeseries: ``links`` (every joint's two ends as
    ``[body index, point in that body's frame (m)]``, body index -1 for the ground),
    ``clearance`` (per clearance joint its ends and its clearance, m) and ``flexible``
    (each flexible body's segment names, in order along it)."""
    spatial = mechanism.dimension == 3
    links = []
    if spatial:
        for joint in mechanism.joints:
            links.append({"kind": joint.kind, "ends": [[joint.body_i, _point(joint.point_i)], [joint.body_j, _point(joint.point_j)]]})
    else:
        for kind, joints in (("revolute", mechanism.revolute_joints), ("prismatic", mechanism.prismatic_joints),
                             ("fixed", mechanism.fixed_joints)):
            for joint in joints:
                links.append({"kind": kind, "ends": [[joint.body_i, _point(joint.point_i)], [joint.body_j, _point(joint.point_j)]]})
    clearance = []
    for joint_name, joint in zip(mechanism.clearance_names, mechanism.clearance_joints):
        if hasattr(joint, "ball_body"):
            ends = [[joint.ball_body, _point(joint.ball_point)], [joint.socket_body, _point(joint.socket_point)]]
        else:
            ends = [[joint.journal_body, _point(joint.journal_point)], [joint.bearing_body, _point(joint.bearing_point)]]
        clearance.append({"name": joint_name, "ends": ends, "clearance": float(joint.clearance)})
    flexible = {chain.name: [mechanism.body_names[index] for index in chain.segments] for chain in mechanism.beam_chains}
    return {"name": name, "dimension": mechanism.dimension, "bodies": list(mechanism.body_names), "links": links,
            "clearance": clearance, "flexible": flexible}


def write_geometry(out_dir: Path, mechanism, name: str = "") -> Path:
    """``geometry.json`` in ``out_dir`` (written atomically)."""
    path = Path(out_dir) / GEOMETRY_FILE
    write_json(path, geometry(mechanism, name))
    return path


def _rotations(frame: pd.DataFrame, name: str, dimension: int) -> np.ndarray:
    """Rotation matrices (times x d x d) of body ``name``."""
    if dimension == 2:
        theta = frame[f"{name}.theta"].to_numpy()
        c, s = np.cos(theta), np.sin(theta)
        return np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)
    q0, q1, q2, q3 = (frame[f"{name}.q{k}"].to_numpy() for k in range(4))
    return np.stack([
        np.stack([1 - 2 * (q2**2 + q3**2), 2 * (q1 * q2 - q0 * q3), 2 * (q1 * q3 + q0 * q2)], -1),
        np.stack([2 * (q1 * q2 + q0 * q3), 1 - 2 * (q1**2 + q3**2), 2 * (q2 * q3 - q0 * q1)], -1),
        np.stack([2 * (q1 * q3 - q0 * q2), 2 * (q2 * q3 + q0 * q1), 1 - 2 * (q1**2 + q2**2)], -1),
    ], -2)


class _Poses:
    """Body positions and rotations over the sampled frames; world points of body points."""

    def __init__(self, frame: pd.DataFrame, bodies: Sequence[str], dimension: int):
        axes = "xyz"[:dimension]
        self.positions = {name: np.stack([frame[f"{name}.{a}"].to_numpy() for a in axes], -1) for name in bodies}
        self.rotations = {name: _rotations(frame, name, dimension) for name in bodies}
        self.bodies, self.dimension, self.samples = list(bodies), dimension, len(frame)

    def world(self, body: int, point: Sequence[float]) -> np.ndarray:
        """(times x d) ground-frame path of ``point`` fixed to body index ``body``."""
        point = np.asarray(point, float)
        if body < 0:
            return np.broadcast_to(point, (self.samples, self.dimension))
        name = self.bodies[body]
        return self.positions[name] + self.rotations[name] @ point


def _magnified(chain: np.ndarray) -> tuple[np.ndarray, float]:
    """Segment positions (times x segments x d) with their offsets from the chord of the two
    ends magnified so that the largest reaches ``DEFLECTION_SHARE`` of the length."""
    start, end = chain[:, :1], chain[:, -1:]
    chord = end - start
    length = np.linalg.norm(chord, axis=-1, keepdims=True)
    unit = chord / np.where(length > 0, length, 1.0)
    along = np.sum((chain - start) * unit, axis=-1, keepdims=True)
    offset = chain - start - along * unit
    peak = float(np.max(np.linalg.norm(offset, axis=-1)))
    scale = float(np.max(length))
    magnification = min(MAX_MAGNIFICATION, DEFLECTION_SHARE * scale / peak) if peak > 0 else 1.0
    magnification = max(magnification, 1.0)
    return start + along * unit + magnification * offset, magnification


def _frame_indices(times: np.ndarray, frames: int) -> np.ndarray:
    return np.unique(np.linspace(0, len(times) - 1, max(2, min(frames, len(times)))).round().astype(int))


def animate_run(run_dir: str | Path, frames: int = 120, fps: int = 20, fmt: str = "gif",
                progress: bool = True, out_dir: str | Path | None = None) -> Path:
    """Draw ``frames`` frames (evenly spaced in the run's output samples) of the run in
    ``run_dir`` and write ``animation.gif`` (or ``.mp4``) into ``out_dir`` (default
    ``run_dir``). Returns the file."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import animation

    run_dir = Path(run_dir)
    for needed in ("timeseries.parquet", GEOMETRY_FILE):
        if not (run_dir / needed).is_file():
            raise ClearanceError(f"{run_dir}: no {needed}; animate a folder written by `clearance simulate`")
    if frames < 2 or fps < 1:
        raise ClearanceError(f"--frames must be >= 2 and --fps >= 1, got {frames} and {fps}")
    if fmt not in FORMATS:
        raise ClearanceError(f"--format: {fmt!r} is not one of {', '.join(FORMATS)}")
    if fmt == "mp4" and shutil.which("ffmpeg") is None:
        raise ClearanceError("--format mp4 needs ffmpeg on the PATH; use --format gif")
    info = json.loads((run_dir / GEOMETRY_FILE).read_text())
    table = pd.read_parquet(run_dir / "timeseries.parquet")
    picked = _frame_indices(table["t"].to_numpy(), frames)
    frame = table.iloc[picked].reset_index(drop=True)
    dimension, bodies = info["dimension"], info["bodies"]
    poses = _Poses(frame, bodies, dimension)
    segments = {name for chain in info["flexible"].values() for name in chain}

    # ground-frame paths of every joint end, grouped by body for the links
    on_body: dict[int, list[np.ndarray]] = {}
    joint_points, ground_points = [], []
    for joint in info["links"] + info["clearance"]:
        for body, point in joint["ends"]:
            path = poses.world(body, point)
            joint_points.append(path)
            if body < 0:
                ground_points.append(path)
            elif bodies[body] not in segments:
                on_body.setdefault(body, []).append(path)
    rigid_links = [np.stack([poses.positions[bodies[b]]] + paths, axis=1) for b, paths in on_body.items()]
    free_bodies = [np.stack([poses.positions[name]], axis=1) for i, name in enumerate(bodies)
                   if i not in on_body and name not in segments]
    chains = {}
    for name, chain in info["flexible"].items():
        chains[name] = _magnified(np.stack([poses.positions[segment] for segment in chain], axis=1))

    everything = np.concatenate([p.reshape(-1, dimension) for p in
                                 joint_points + [c for c, _ in chains.values()] + list(poses.positions.values())])
    low, high = everything.min(axis=0), everything.max(axis=0)
    span = float(np.max(high - low)) or 1.0
    centre = 0.5 * (low + high)

    clearances = info["clearance"]
    columns = 1 + (1 if clearances else 0)
    fig = plt.figure(figsize=(6.5 + 3.0 * (columns - 1), 5.5))
    if dimension == 3:  # ground y drawn upwards: the plot's axes are (x, z, y)
        ax = fig.add_subplot(1, columns, 1, projection="3d")
        for setter, k in zip((ax.set_xlim, ax.set_ylim, ax.set_zlim), VIEW_AXES):
            setter(centre[k] - 0.6 * span, centre[k] + 0.6 * span)
        ax.set_xlabel("x (m)")
        ax.set_ylabel("z (m)")
        ax.set_zlabel("y (m)")
    else:
        ax = fig.add_subplot(1, columns, 1)
        ax.set_xlim(centre[0] - 0.6 * span, centre[0] + 0.6 * span)
        ax.set_ylim(centre[1] - 0.6 * span, centre[1] + 0.6 * span)
        ax.set_aspect("equal")
        ax.set_xlabel("x (m)")
        ax.set_ylabel("y (m)")
    ax.set_title("mechanism")

    order = VIEW_AXES if dimension == 3 else (0, 1)

    def draw(points, *style, **kwargs):
        return ax.plot(*[points[..., k] for k in order], *style, **kwargs)[0]

    link_lines = [draw(path[0], "-o", color="tab:blue", lw=2.5, ms=3) for path in rigid_links]
    free_dots = [draw(path[0], "s", color="tab:blue", ms=6) for path in free_bodies]
    chain_lines = [draw(c[0], "-", color="tab:green", lw=2.5, label=f"{name}: deflection x {m:.3g}")
                   for name, (c, m) in chains.items()]
    ground_marks = [draw(path[0:1], "^", color="black", ms=9) for path in ground_points]
    clearance_marks = [draw(poses.world(*joint["ends"][1])[0:1], "o", mfc="none", mec="tab:red", ms=11)
                       for joint in clearances]
    if chains:
        ax.legend(loc="upper right", fontsize=8)

    orbit_artists = []
    for k, joint in enumerate(clearances):
        height = 0.8 / max(1, len(clearances))
        inset = fig.add_axes([0.70, 0.9 - (k + 1) * height - 0.02 * k, 0.26, height * 0.8])
        name, c = joint["name"], joint["clearance"]
        ex, ey = (frame[f"{name}.e{a}"].to_numpy() / c for a in "xy")
        force = frame[f"{name}.normal_force"].to_numpy()
        peak = float(np.max(force)) or 1.0
        circle = np.linspace(0.0, 2.0 * np.pi, 200)
        inset.plot(np.cos(circle), np.sin(circle), color="tab:red", lw=1)
        inset.set_xlim(-1.5, 1.5)
        inset.set_ylim(-1.5, 1.5)
        inset.set_aspect("equal")
        inset.set_title(f"{name}: journal orbit (e / c)", fontsize=8)
        inset.set_xlabel("e_x / c (-)", fontsize=7)
        inset.set_ylabel("e_y / c (-)", fontsize=7)
        inset.tick_params(labelsize=6)
        trail, = inset.plot([], [], color="tab:gray", lw=0.8)
        dot, = inset.plot([], [], "o", color="tab:blue", ms=4)
        arrow = inset.annotate("", xy=(0, 0), xytext=(0, 0), arrowprops=dict(arrowstyle="->", color="tab:orange"))
        label = inset.text(-1.45, -1.45, "", fontsize=7)
        orbit_artists.append((ex, ey, force, peak, trail, dot, arrow, label))

    title = fig.suptitle("")
    times = frame["t"].to_numpy()

    def update(i: int):
        artists = []
        for line, path in zip(link_lines, rigid_links):
            _set(line, path[i])
            artists.append(line)
        for dot, path in zip(free_dots, free_bodies):
            _set(dot, path[i])
        for line, (points, _) in zip(chain_lines, chains.values()):
            _set(line, points[i])
        for mark, joint in zip(clearance_marks, clearances):
            _set(mark, poses.world(*joint["ends"][1])[i:i + 1])
        for mark, path in zip(ground_marks, ground_points):
            _set(mark, path[i:i + 1])
        for ex, ey, force, peak, trail, dot, arrow, label in orbit_artists:
            trail.set_data(ex[: i + 1], ey[: i + 1])
            dot.set_data([ex[i]], [ey[i]])
            radius = float(np.hypot(ex[i], ey[i]))
            if force[i] > 0 and radius > 0:
                nx, ny = ex[i] / radius, ey[i] / radius  # the force on the journal points back to the centre
                arrow.xy = (ex[i] - 0.8 * force[i] / peak * nx, ey[i] - 0.8 * force[i] / peak * ny)
                arrow.set_position((ex[i], ey[i]))
                arrow.set_visible(True)
            else:
                arrow.set_visible(False)
            label.set_text(f"F_n = {force[i]:.3g} N")
        title.set_text(f"{info.get('name') or run_dir.name}: t = {times[i] * 1e3:.3f} ms")
        return artists

    def _set(line, points):
        points = np.atleast_2d(points)[:, order]
        line.set_data(points[:, 0], points[:, 1])
        if dimension == 3:
            line.set_3d_properties(points[:, 2])

    movie = animation.FuncAnimation(fig, update, frames=len(times), blit=False)
    out = Path(out_dir or run_dir) / f"animation.{fmt}"
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_name(f".{out.stem}.partial.{fmt}")
    writer = animation.PillowWriter(fps=fps) if fmt == "gif" else animation.FFMpegWriter(fps=fps)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(times), desc="animate", unit="frame")
    movie.save(temporary, writer=writer, progress_callback=(lambda i, n: bar.update(1)) if bar else None)
    if bar:
        bar.close()
    plt.close(fig)
    temporary.replace(out)  # atomic: a reader never sees a half-written file
    return out
