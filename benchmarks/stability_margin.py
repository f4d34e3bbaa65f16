"""Is the explicit solver's step set by stability or by accuracy? The stability margin of
every accepted Tsit5 step, and what it says about the stiff path.

An implicit solver can beat an explicit one only where the explicit step is held down by
its stability region rather than by its error estimate. For each accepted step
``(t_n, y_n, h_n)`` of a Tsit5 solve this script takes the eigenvalues ``lambda`` of the
Jacobian ``df/dy`` at ``y_n`` and the largest step Tsit5 could take along each of them
and stay stable,

    h_stab = min_lambda  r(arg lambda) / |lambda|,   r(theta) = sup{r : |R(r e^{i theta})| <= 1 + eps},

where ``R(z) = 1 + z b^T (I - z A)^{-1} 1`` is Tsit5's stability function (Hairer &
Wanner, *Solving ODEs II*, IV.2; tableau from ``diffrax``). The step's **margin** is
``h_stab / h_n``: near 1 the step sits on the stability boundary (the problem is stiff at
this tolerance, an L-stable method could step further); well above 1 the step is set by
accuracy, and an implicit method of similar order must take as many steps while paying a
Jacobian and a linear solve on each. Eigenvalues in the right half plane (growing modes of
the dynamics, e.g. constraint drift) are taken on the imaginary axis. ``eps = 1e-3``
(``GROWTH_TOLERANCE``): Tsit5's region leaves the imaginary axis at 0.48 but grows there
only by 1e-4 per step at |z| = 1 (3e-3 at 1.5), which accuracy, not stability, limits; a
growth of 0.1 % per step puts the boundary at 1.25 on the axis and leaves it at 3.5 on the
negative real axis.

Run from the repository root::

    .venv/bin/python benchmarks/stability_margin.py [--cases ...] [--rtols 1e-6]

Prints a Markdown table and writes ``outputs/benchmarks/stability_margin.json`` and the
figure ``docs/figures/stability_margin.png`` (margin of every step against time).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from dataclasses import replace

import diffrax
import jax
import jax.numpy as jnp
import numpy as np

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))
sys.path.insert(0, str(REPOSITORY / "benchmarks"))
import model  # noqa: E402
import scipy_peer  # noqa: E402
import stiff_variants  # noqa: E402
import work_precision  # noqa: E402
from diffrax._solver.tsit5 import _tsit5_tableau  # noqa: E402
from model.mechanics.dynamics import flat_vector_field, flatten_state  # noqa: E402
from model.integrate.solve import make_controller, make_solver  # noqa: E402

ATOL_PER_RTOL = work_precision.ATOL_PER_RTOL
AT_BOUNDARY = 1.5  # margin below which a step counts as held by stability
GROWTH_TOLERANCE = 1e-3  # |R| - 1 per step that still counts as stable (see the module docstring)


def stability_function(z: np.ndarray) -> np.ndarray:
    """Tsit5's ``R(z) = 1 + z b^T (I - zA)^{-1} 1`` for complex ``z`` (any shape).

    ``A`` is strictly lower triangular (explicit), so ``(I - zA)^{-1} = sum_k (zA)^k`` ends
    at ``k = stages - 1`` and ``R`` is the polynomial ``1 + sum_k (b^T A^k 1) z^(k+1)``."""
    tableau = _tsit5_tableau
    stages = len(tableau.c) + 1
    a = np.zeros((stages, stages))
    for row, coefficients in enumerate(tableau.a_lower, start=1):
        a[row, : len(coefficients)] = coefficients
    b = np.asarray(tableau.b_sol)
    coefficients = [b @ np.linalg.matrix_power(a, k) @ np.ones(stages) for k in range(stages)]
    z = np.asarray(z, complex)
    return 1 + sum(c * z ** (k + 1) for k, c in enumerate(coefficients))


def stability_radius(angles: np.ndarray, r_max: float = 10.0, samples: int = 4000) -> np.ndarray:
    """``r(theta)``: distance from 0 to the first point of ``|R| > 1 + GROWTH_TOLERANCE``
    along each ray."""
    radii = np.linspace(r_max / samples, r_max, samples)
    unstable = np.abs(stability_function(radii[None, :] * np.exp(1j * angles[:, None]))) > 1 + GROWTH_TOLERANCE
    first = np.where(unstable.any(axis=1), unstable.argmax(axis=1), samples - 1)
    return radii[np.maximum(first - 1, 0)]


def accepted_steps(mechanism, settings, rtol: float):
    """``(t, y)`` at every accepted Tsit5 step of the case, with the model's controller."""
    settings = replace(settings, solver="tsit5", rtol=rtol, atol=ATOL_PER_RTOL * rtol)
    solution = diffrax.diffeqsolve(
        diffrax.ODETerm(flat_vector_field), make_solver(settings), 0.0, settings.t_end, None,
        flatten_state(model.initial_state(mechanism)), args=mechanism, saveat=diffrax.SaveAt(steps=True),
        stepsize_controller=make_controller(mechanism, settings), max_steps=settings.max_steps,
    )
    count = int(solution.stats["num_accepted_steps"])
    return np.asarray(solution.ts[: count]), np.asarray(solution.ys[: count])


def jacobian_eigenvalues(mechanism, ts: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Eigenvalues (1/s) of ``df/dy`` at every saved state but the last."""
    jacobian = jax.jit(jax.vmap(jax.jacfwd(lambda t, y: flat_vector_field(t, y, mechanism), argnums=1)))
    return np.linalg.eigvals(np.asarray(jacobian(jnp.asarray(ts[:-1]), jnp.asarray(ys[:-1]))))


def stability_margins(eigenvalues: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """``h_stab / h`` per step, from each step's Jacobian eigenvalues (rows) and size (s)."""
    # the left half plane only: growing modes are limited by accuracy, not stability
    angles = np.clip(np.abs(np.angle(eigenvalues)), np.pi / 2, np.pi)
    grid = np.linspace(np.pi / 2, np.pi, 181)
    radius = np.interp(angles, grid, stability_radius(grid))
    magnitude = np.abs(eigenvalues)
    stable_step = np.min(np.where(magnitude > 0, radius / np.where(magnitude > 0, magnitude, 1.0), np.inf), axis=1)
    return stable_step / steps


def in_contact(mechanism, ys: np.ndarray) -> np.ndarray:
    """Steps that start with any clearance joint penetrated."""
    joints = len(mechanism.clearance_joints)
    contact = jax.vmap(lambda y: model.evaluate(mechanism, 0.0, model.mechanics.dynamics.unflatten_state(y, joints)).contact)(
        jnp.asarray(ys[:-1]))
    return np.asarray(contact.penetration > 0).any(axis=1)


def load(name: str):
    if name in work_precision.CASES:
        return work_precision.load_case(work_precision.CASES[name])
    overrides = stiff_variants.VARIANTS[name]
    return scipy_peer.load_flores(stiff_variants.CONFIG, overrides, t_end=0.002, output_interval=1e-4,
                                  max_steps=2_000_000)


def study(name: str, rtol: float) -> tuple[dict, dict]:
    """The case's summary row and its per-step series (step start times, margins, contact)."""
    mechanism, settings = load(name)
    ts, ys = accepted_steps(mechanism, settings, rtol)
    eigenvalues, steps = jacobian_eigenvalues(mechanism, ts, ys), np.diff(ts)
    margin, spectral = stability_margins(eigenvalues, steps), steps * np.abs(eigenvalues).max(axis=1)
    contact = in_contact(mechanism, ys)
    series = dict(t=ts[:-1], margin=margin, contact=contact)
    row = dict(case=name, rtol=rtol, steps=int(margin.size), contact_steps=int(contact.sum()),
               contact_period=float(model.contact_periods(mechanism).min()))
    for label, mask in (("all", np.ones_like(contact)), ("contact", contact)):
        selected = margin[mask]
        row[f"{label}_median_margin"] = float(np.median(selected)) if selected.size else None
        row[f"{label}_min_margin"] = float(selected.min()) if selected.size else None
        row[f"{label}_share_at_boundary"] = float(np.mean(selected < AT_BOUNDARY)) if selected.size else None
        row[f"{label}_max_h_rho"] = float(spectral[mask].max()) if selected.size else None
    return row, series


def plot(rows: list[dict], series: list[dict], path: pathlib.Path) -> None:
    """One panel per case: every step's margin against time, contact steps highlighted."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = min(len(rows), 3)
    lines = -(-len(rows) // columns)
    fig, axes = plt.subplots(lines, columns, figsize=(4.5 * columns, 3.4 * lines), squeeze=False, sharey=True)
    for ax, row, steps in zip(axes.flat, rows, series):
        time_ms = 1e3 * steps["t"]
        ax.semilogy(time_ms[~steps["contact"]], steps["margin"][~steps["contact"]], ".", ms=3, color="0.6",
                    label="free flight")
        ax.semilogy(time_ms[steps["contact"]], steps["margin"][steps["contact"]], ".", ms=3, color="C3",
                    label="in contact")
        ax.axhline(1.0, color="k", lw=1)
        ax.axhline(AT_BOUNDARY, color="k", lw=0.8, ls=":")
        ax.set_title(f"{row['case']} (rtol {row['rtol']:g})", fontsize=9)
        ax.set_xlabel("t (ms)")
        ax.grid(True, which="both", alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("stable step / step taken")
    for ax in list(axes.flat)[len(rows):]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize=7)
    fig.suptitle("Tsit5 stability margin per accepted step (1 = on the stability boundary; "
                 "above it accuracy sets the step)", fontsize=10)
    fig.tight_layout()
    from pipelines.io import save_figure

    save_figure(path, fig)
    plt.close(fig)


def table(rows: list[dict]) -> str:
    lines = ["| case | rtol | steps (in contact) | contact steps: median / min margin | "
             f"share of contact steps with margin < {AT_BOUNDARY} | max h rho(J) |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['case']} | {r['rtol']:g} | {r['steps']} ({r['contact_steps']}) | "
            f"{r['contact_median_margin']:.2f} / {r['contact_min_margin']:.2f} | "
            f"{100 * r['contact_share_at_boundary']:.0f} % | {r['contact_max_h_rho']:.2f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default="flores,flores_stiff100,low_speed_slider_crank,fourbar,hertz x1e4 e0.9,hertz x1e4 e0.05,hertz x1e6 e0.05")
    parser.add_argument("--rtols", default="1e-6")
    parser.add_argument("--out", default=str(REPOSITORY / "outputs" / "benchmarks" / "stability_margin.json"))
    parser.add_argument("--figure", default=str(REPOSITORY / "docs" / "figures" / "stability_margin.png"))
    args = parser.parse_args(argv)
    jax.config.update("jax_enable_x64", True)
    rows, series = [], []
    for name in args.cases.split(","):
        for rtol in (float(r) for r in args.rtols.split(",")):
            row, steps = study(name, rtol)
            rows.append(row)
            series.append(steps)
            print(json.dumps(row), flush=True)
    print(table(rows))
    plot(rows, series, pathlib.Path(args.figure))
    from pipelines.io import write_json

    command = "benchmarks/stability_margin.py " + " ".join(sys.argv[1:] if argv is None else argv)
    write_json(args.out, dict(command=command, rows=rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
