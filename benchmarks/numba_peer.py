"""The Flores slider-crank in minimal coordinates, integrated by Dormand-Prince 5(4) with a
PI step-size controller, all compiled by numba: the fastest hand-written peer of our sweep.

Same equations, contact law and impact-velocity memory as ``benchmarks/minimal_peer.py``
(derived in ``docs/minimal_peer.md``): state ``[beta, x, beta', x', m]``, crank driven at
``phi = omega t``. The integrator is Dormand & Prince (1980) with the step-size control of
``diffrax.PIDController`` at our settings (``rtol``, ``atol``, ``pcoeff`` 0.3, ``icoeff``
0.4, safety 0.9, factors 0.2-10; Hairer, Norsett & Wanner 1993, §II.4 for the starting
step); peaks (normal force, penetration) and impacts are read at the accepted steps' ends.
numba is an optional benchmark dependency; the package and its tests never import it.

What it measures (one run, same machine, ``docs/BENCHMARKS.md`` section 1e):

1. one simulation of 2 crank revolutions: time, accepted and rejected steps, and the
   peaks against ours (``model.simulate``, dopri5 at the same tolerances, on the joint-
   coordinate and on the absolute engine);
2. the 256-point (16 clearances x 16 restitutions) and 4,096-point (64 x 64) grids, end to
   end (a fresh interpreter: import, worker processes, solve, results file) on 2 processes,
   against ``clearance sweep benchmarks/flores_sweep_256.toml`` / ``flores_sweep_4096.toml``
   on each engine, warm (one untimed run of each first, as ``benchmarks/same_run_baseline.py``).

Run from the repository root::

    python benchmarks/numba_peer.py --repeats 1           # everything (tens of minutes)
    python benchmarks/numba_peer.py --skip-sweeps         # the single simulation only
    python benchmarks/numba_peer.py --skip-single --grids 64 --jax-cache DIR   # 4,096 points only
    python benchmarks/numba_peer.py --grid 16 --out FILE  # one peer grid (what the timing runs)
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from numba import njit

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))

# Parameters as one float array (numba takes it without boxing):
# r, L, a, m2, J2, m3, omega, c, K, n, chi, v_floor, tau, width
RTOL, ATOL = 1e-6, 1e-9  # configs/flores_slider_crank.toml [simulation]
T_END = 24e-3  # two crank revolutions at 5000 rpm
CLEARANCES = (1e-4, 5e-4)  # benchmarks/flores_sweep_256.toml: the grid's ranges (m)
RESTITUTIONS = (0.5, 0.99)


def parameters(crank) -> np.ndarray:
    """The parameter array of a :class:`benchmarks.minimal_peer.SliderCrank`."""
    return np.array([crank.crank_length, crank.conrod_length, crank.conrod_centre, crank.conrod_mass,
                     crank.conrod_inertia, crank.slider_mass, crank.crank_speed, crank.clearance, crank.stiffness,
                     crank.exponent, crank.hysteresis_factor, crank.impact_velocity_floor, crank.relaxation_time,
                     crank.onset_width])


@njit(cache=True, fastmath=False)
def contact(t, y, p):
    """``(penetration (m), normal rate (m/s), normal force (N), n_x, n_y, e, e')`` pieces
    of the right-hand side: see ``benchmarks/minimal_peer.make_rhs``."""
    r, length, omega, c, stiffness, exponent, chi, floor = p[0], p[1], p[6], p[7], p[8], p[9], p[10], p[11]
    beta, x, beta_rate, x_rate, memory = y[0], y[1], y[2], y[3], y[4]
    phi = omega * t
    cphi, sphi, cb, sb = math.cos(phi), math.sin(phi), math.cos(beta), math.sin(beta)
    ex, ey = r * cphi + length * cb - x, r * sphi + length * sb
    vex = -r * omega * sphi - length * beta_rate * sb - x_rate
    vey = r * omega * cphi + length * beta_rate * cb
    distance = math.sqrt(ex * ex + ey * ey)
    if distance > 1e-15:
        nx, ny = ex / distance, ey / distance
    else:
        nx, ny = 1.0, 0.0
    penetration = distance - c
    normal_rate = vex * nx + vey * ny
    force = 0.0
    if penetration > 0.0:
        force = stiffness * penetration**exponent * (1.0 + chi * normal_rate / max(memory, floor))
        force = max(force, 0.0)
    return penetration, normal_rate, force, nx, ny, vex, vey, distance, cphi, sphi, cb, sb


@njit(cache=True, fastmath=False)
def rhs(t, y, p, out):
    """``out = dy/dt``: Lagrange's equations of ``docs/minimal_peer.md``."""
    r, length, a, m2, j2, m3, omega, tau, width = p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[12], p[13]
    penetration, normal_rate, force, nx, ny, vex, vey, distance, cphi, sphi, cb, sb = contact(t, y, p)
    beta_rate, x_rate, memory = y[2], y[3], y[4]
    aax, aay = -omega * omega * r * cphi, -omega * omega * r * sphi
    beta_acc = (-m2 * a * (-sb * aax + cb * aay) - length * force * (-sb * nx + cb * ny)) / (j2 + m2 * a * a)
    x_acc = force * nx / m3
    aex = aax - length * (beta_acc * sb + beta_rate * beta_rate * cb) - x_acc
    aey = aay + length * (beta_acc * cb - beta_rate * beta_rate * sb)
    normal_acc = aex * nx + aey * ny
    if distance > 1e-15:
        normal_acc += (vex * vex + vey * vey - normal_rate * normal_rate) / distance
    s = -penetration / width
    apart = 1.0 / (1.0 + math.exp(-s)) if s >= 0.0 else math.exp(s) / (1.0 + math.exp(s))
    out[0], out[1], out[2], out[3] = beta_rate, x_rate, beta_acc, x_acc
    out[4] = apart * (normal_acc + (normal_rate - memory) / tau)


# Dormand & Prince (1980) tableau, fifth-order solution and its error estimate
C2, C3, C4, C5 = 1 / 5, 3 / 10, 4 / 5, 8 / 9
A21 = 1 / 5
A31, A32 = 3 / 40, 9 / 40
A41, A42, A43 = 44 / 45, -56 / 15, 32 / 9
A51, A52, A53, A54 = 19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729
A61, A62, A63, A64, A65 = 9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656
B1, B3, B4, B5, B6 = 35 / 384, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84
E1, E3, E4, E5, E6, E7 = 71 / 57600, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40


@njit(cache=True, fastmath=False)
def solve(p, y0, t_end, rtol, atol):
    """Integrate to ``t_end``; returns ``[steps, rejected, max force (N), max penetration (m),
    impacts, first impact time (s)]`` (peaks at the accepted steps' ends)."""
    n = y0.size
    y = y0.copy()
    k1, k2, k3, k4, k5, k6, k7 = np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    stage, y_new = np.empty(n), np.empty(n)
    t = 0.0
    rhs(t, y, p, k1)
    # starting step (Hairer, Norsett & Wanner 1993, II.4)
    d0 = d1 = 0.0
    for i in range(n):
        scale = atol + rtol * abs(y[i])
        d0 += (y[i] / scale) ** 2
        d1 += (k1[i] / scale) ** 2
    d0, d1 = math.sqrt(d0 / n), math.sqrt(d1 / n)
    h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    for i in range(n):
        stage[i] = y[i] + h0 * k1[i]
    rhs(h0, stage, p, k2)
    d2 = 0.0
    for i in range(n):
        d2 += ((k2[i] - k1[i]) / (atol + rtol * abs(y[i]))) ** 2
    d2 = math.sqrt(d2 / n) / h0
    big = max(d1, d2)
    h1 = max(1e-6, h0 * 1e-3) if big <= 1e-15 else (0.01 / big) ** (1 / 5)
    h = min(100 * h0, h1)
    beta1, beta2 = (0.3 + 0.4) / 5.0, -0.3 / 5.0
    previous_inverse = 1.0
    steps = rejected = impacts = 0
    max_force = max_penetration = 0.0
    first_time = math.inf
    values = contact(t, y, p)
    penetration0 = values[0]
    max_penetration, max_force = values[0], values[2]
    while t < t_end:
        h = min(h, t_end - t)
        for i in range(n):
            stage[i] = y[i] + h * A21 * k1[i]
        rhs(t + C2 * h, stage, p, k2)
        for i in range(n):
            stage[i] = y[i] + h * (A31 * k1[i] + A32 * k2[i])
        rhs(t + C3 * h, stage, p, k3)
        for i in range(n):
            stage[i] = y[i] + h * (A41 * k1[i] + A42 * k2[i] + A43 * k3[i])
        rhs(t + C4 * h, stage, p, k4)
        for i in range(n):
            stage[i] = y[i] + h * (A51 * k1[i] + A52 * k2[i] + A53 * k3[i] + A54 * k4[i])
        rhs(t + C5 * h, stage, p, k5)
        for i in range(n):
            stage[i] = y[i] + h * (A61 * k1[i] + A62 * k2[i] + A63 * k3[i] + A64 * k4[i] + A65 * k5[i])
        rhs(t + h, stage, p, k6)
        for i in range(n):
            y_new[i] = y[i] + h * (B1 * k1[i] + B3 * k3[i] + B4 * k4[i] + B5 * k5[i] + B6 * k6[i])
        rhs(t + h, y_new, p, k7)
        error = 0.0
        for i in range(n):
            e = h * (E1 * k1[i] + E3 * k3[i] + E4 * k4[i] + E5 * k5[i] + E6 * k6[i] + E7 * k7[i])
            error += (e / (atol + rtol * max(abs(y[i]), abs(y_new[i])))) ** 2
        error = math.sqrt(error / n)
        inverse = 1.0 / error if error > 0.0 else 1e10
        if error <= 1.0:
            t += h
            steps += 1
            for i in range(n):
                y[i] = y_new[i]
                k1[i] = k7[i]
            values = contact(t, y, p)
            penetration, force = values[0], values[2]
            if penetration > 0.0 and penetration0 <= 0.0:
                impacts += 1
                if first_time == math.inf:
                    first_time = t - h * penetration / (penetration - penetration0)
            penetration0 = penetration
            max_force, max_penetration = max(max_force, force), max(max_penetration, penetration)
            factor = 0.9 * inverse**beta1 * previous_inverse**beta2
            factor = min(10.0, max(0.2, factor))
            previous_inverse = inverse
        else:
            rejected += 1
            factor = min(1.0, max(0.2, 0.9 * inverse**beta1 * previous_inverse**beta2))
        h *= factor
    return np.array([steps, rejected, max_force, max_penetration, impacts, first_time])


def crank(clearance: float | None = None, restitution: float | None = None):
    from benchmarks.minimal_peer import SliderCrank

    base = SliderCrank()
    changes = {k: v for k, v in (("clearance", clearance), ("restitution", restitution)) if v is not None}
    return base.replace(**changes)


def _solve_point(point) -> np.ndarray:
    from benchmarks.minimal_peer import initial_state

    c = crank(*point)
    return solve(parameters(c), initial_state(c), T_END, RTOL, ATOL)


def grid(num: int) -> list[tuple[float, float]]:
    """The ``num x num`` grid of the sweep configs (clearance outer, restitution inner)."""
    return [(c, e) for c in np.linspace(*CLEARANCES, num) for e in np.linspace(*RESTITUTIONS, num)]


def run_grid(num: int, out: pathlib.Path, processes: int = 2) -> None:
    """Solve the grid on ``processes`` worker processes and write the results (``.npy``)."""
    points = grid(num)
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        pool.map(_solve_point, [points[0]] * processes)  # numba's cache loaded in each worker
        start = time.perf_counter()
        rows = pool.map(_solve_point, points, chunksize=max(1, len(points) // (4 * processes)))
        solving = time.perf_counter() - start
    np.save(out, np.column_stack([np.asarray(points), np.asarray(rows)]))
    print(json.dumps({"in_run": len(points) / solving}))


def single(repeats: int = 20) -> dict:
    """One nominal simulation: best time of ``repeats`` and the step counts."""
    from benchmarks.minimal_peer import initial_state

    c = crank()
    p, y0 = parameters(c), initial_state(c)
    solve(p, y0, 1e-4, RTOL, ATOL)  # compile (or load numba's cache)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = solve(p, y0, T_END, RTOL, ATOL)
        times.append(time.perf_counter() - start)
    return {"seconds": min(times), "steps": int(result[0]), "rejected": int(result[1]), "max_normal_force": result[2],
            "max_penetration": result[3], "num_impacts": int(result[4]), "first_impact_time": result[5]}


def ours(engine: str) -> dict:
    """``model.simulate`` on the nominal config, dopri5 at the same tolerances: the solve
    alone (best of 5, compiled), steps and peaks."""
    import jax

    import model
    from pipelines.build import build_mechanism, solver_settings
    from pipelines.config import load_mechanism

    config = load_mechanism(REPOSITORY / "configs" / "flores_slider_crank.toml")
    mechanism = build_mechanism(config, engine)
    settings = solver_settings(config, solver="dopri5", t_end=T_END, rtol=RTOL, atol=ATOL)
    run = jax.jit(model.solve, static_argnums=1)
    jax.block_until_ready(run(mechanism, settings))
    times = []
    for _ in range(5):
        start = time.perf_counter()
        solution = jax.block_until_ready(run(mechanism, settings))
        times.append(time.perf_counter() - start)
    trajectory = model.simulate(mechanism, settings)
    metrics = {k: float(v) for k, v in model.summary_metrics(mechanism, trajectory).items()}
    return {"seconds": min(times), "steps": int(solution.stats["num_accepted_steps"]),
            "rejected": int(solution.stats["num_rejected_steps"]), "max_normal_force": metrics["pin.max_normal_force"],
            "max_penetration": metrics["pin.max_penetration"], "num_impacts": int(metrics["pin.num_impacts"]),
            "first_impact_time": metrics["pin.first_impact_time"]}


def timed(command: list[str]) -> dict:
    """Wall time (s) of ``command`` and the in-run rate it prints (points/s)."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=REPOSITORY, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return {"wall": time.perf_counter() - start, **json.loads(done.stdout.strip().splitlines()[-1])}


GRIDS = {16: "benchmarks/flores_sweep_256.toml", 64: "benchmarks/flores_sweep_4096.toml"}


def sweeps(repeats: int, grids=tuple(GRIDS), cache: pathlib.Path | None = None) -> list[dict]:
    """End to end, warm, medians of ``repeats`` after one untimed run each: the peer's grid
    and ``clearance sweep`` on each engine (wall, and the sweep's in-run rate)."""
    from benchmarks.same_run_baseline import run_sweep

    scratch = pathlib.Path(tempfile.mkdtemp(prefix="numba_peer_"))
    cache = cache or scratch / "jax_cache"
    rows = []
    for num in grids:
        config = GRIDS[num]
        runs: dict[str, list] = {"numba peer": [], "joint engine": [], "absolute engine": []}
        for repeat in range(repeats + 1):
            peer = timed([sys.executable, __file__, "--grid", str(num), "--out", str(scratch / f"peer_{num}.npy")])
            for engine in ("joint", "absolute"):
                result = run_sweep(REPOSITORY, config, [f"simulation.engine={engine}"], scratch / f"{engine}_{num}", cache)
                if repeat:
                    runs[f"{engine} engine"].append(result)
                print(f"  {num * num} points, round {repeat}, {engine} engine: {result['wall']:.1f} s, "
                      f"in-run {result['in_run']:.1f}/s", flush=True)
            if repeat:
                runs["numba peer"].append(peer)
            print(f"  {num * num} points, round {repeat}: peer {peer['wall']:.2f} s, in-run {peer['in_run']:.0f}/s",
                  flush=True)
        for name, results in runs.items():
            rows.append({"points": num * num, "who": name, "wall": statistics.median(r["wall"] for r in results),
                         "in_run": statistics.median(r["in_run"] for r in results)})
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", type=int, help="solve one num x num grid (clearance x restitution) and exit")
    parser.add_argument("--out", type=pathlib.Path)
    parser.add_argument("--skip-sweeps", action="store_true")
    parser.add_argument("--skip-single", action="store_true", help="the sweeps only")
    parser.add_argument("--jax-cache", type=pathlib.Path, help="the sweeps' compilation cache (default: a fresh one)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--grids", type=int, nargs="+", default=list(GRIDS), help="grid sizes (16: 256 points, 64: 4,096)")
    args = parser.parse_args(argv)
    if args.grid:
        run_grid(args.grid, args.out)
        return 0
    if args.skip_single:
        report = {"sweeps": sweeps(args.repeats, args.grids, args.jax_cache)}
        for row in report["sweeps"]:
            print(row)
        return 0
    peer = single()
    print(f"numba peer, one simulation: {peer['seconds'] * 1e3:.2f} ms, {peer['steps']} steps "
          f"({peer['rejected']} rejected), {peer['seconds'] / (peer['steps'] + peer['rejected']) * 1e6:.3f} us/step")
    report = {"peer": peer}
    for engine in ("joint", "absolute"):
        result = ours(engine)
        report[engine] = result
        print(f"ours ({engine} engine, dopri5): {result['seconds'] * 1e3:.2f} ms, {result['steps']} steps "
              f"({result['rejected']} rejected), "
              f"{result['seconds'] / (result['steps'] + result['rejected']) * 1e6:.3f} us/step")
        for key in ("max_normal_force", "max_penetration", "first_impact_time", "num_impacts"):
            relative = (peer[key] - result[key]) / result[key]
            print(f"  {key}: peer {peer[key]:.9g}, ours {result[key]:.9g}, relative difference {relative:.2e}")
    if not args.skip_sweeps:
        report["sweeps"] = sweeps(args.repeats, args.grids, args.jax_cache)
        for row in report["sweeps"]:
            print(row)
    out = REPOSITORY / "outputs" / "benchmarks" / "numba_peer.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
