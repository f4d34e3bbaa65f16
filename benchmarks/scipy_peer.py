"""The same clearance-joint mechanism integrated with ``scipy.integrate.solve_ivp``.

This is the *peer* the sweep-throughput benchmark (``benchmarks/sweep_throughput.py``)
compares against. To isolate the integrator and the batching from the model code, the
peer calls **the same compiled JAX right-hand side** as the diffrax solve:

- the :class:`model.State` pytree is flattened to a 1-D float64 vector with
  :func:`jax.flatten_util.ravel_pytree`;
- ``rhs(t, y)`` is ``jax.jit`` of ``ravel(model.vector_field(t, unravel(y), mechanism))``,
  AOT-compiled once per mechanism structure (the mechanism's array leaves travel as one
  flat parameter vector, so the sweep points share one executable) and returning NumPy;
- ``jac(t, y)`` (implicit methods: Radau, BDF, LSODA) is the jitted ``jax.jacfwd`` of it.

What differs between the two is therefore only (a) the integrator (scipy's Python
step loop against diffrax's compiled ``while_loop``) and (b) batching (one scipy call per
parameter point against one ``jax.vmap``'ed solve per chunk). The price scipy pays per RHS
call for crossing from Python into XLA and back is measured by :func:`call_overhead`.

The output states are post-processed with the same ``model.evaluate`` as
:func:`model.simulate`, into a :class:`model.Trajectory`, so :func:`model.summary_metrics`
and :func:`impact_figures` apply to both solvers unchanged.

Run from the repository root for a one-off comparison::

    .venv/bin/python benchmarks/scipy_peer.py --quick
"""

from __future__ import annotations

import argparse
import dataclasses
import pathlib
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import scipy.integrate
from jax.flatten_util import ravel_pytree

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import model  # noqa: E402
from model.mechanics.dynamics import State, initial_state, vector_field  # noqa: E402
from model.integrate.trajectory import trajectory_from_states  # noqa: E402
from model.mechanics.mechanism import Mechanism  # noqa: E402
from model.metrics import contact_onsets  # noqa: E402

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
FLORES_CONFIG = REPOSITORY / "configs" / "flores_slider_crank.toml"
EXPLICIT_METHODS = ("RK23", "RK45", "DOP853")
IMPLICIT_METHODS = ("Radau", "BDF", "LSODA")
# Impacts over which the peak penetration / normal force are compared: the first few are
# deterministic; later ones drift apart for any two solvers (the contact dynamics of a
# clearance joint are sensitive to the state at each impact).
COMPARED_IMPACTS = 3


def load_flores(config_path: str | pathlib.Path = FLORES_CONFIG, overrides=(), **settings_changes):
    """``(mechanism, settings)`` of a mechanism config (default: the Flores benchmark)."""
    from pipelines.build import build_mechanism, solver_settings
    from pipelines.config import load_mechanism

    config = load_mechanism(config_path, overrides)
    mechanism = build_mechanism(config, "absolute")  # scipy steps the absolute-coordinate State
    return mechanism, solver_settings(config, **settings_changes)


@dataclass(frozen=True)
class CompiledField:
    """The mechanism's vector field as flat-vector NumPy callables for ``solve_ivp``.

    The executables take the mechanism's array leaves as one flat parameter vector, so
    one compilation serves every mechanism of the same structure (every point of a
    continuous sweep): :meth:`for_mechanism` rebinds it without recompiling.
    """

    y0: np.ndarray
    unravel: Callable[[Any], State]
    parameters: Any  # the mechanism's array leaves, flattened (device array)
    compiled_rhs: Any
    compiled_jac: Any
    compile_seconds: float

    def rhs(self, t, y) -> np.ndarray:
        """``d y / dt`` (NumPy) at time ``t`` (s) and flat state ``y``."""
        return np.asarray(self.compiled_rhs(np.float64(t), y, self.parameters))

    @property
    def jac(self) -> Callable[[float, np.ndarray], np.ndarray] | None:
        """``d rhs / d y`` (NumPy, dense) for implicit methods, or None if not compiled."""
        if self.compiled_jac is None:
            return None
        return lambda t, y: np.asarray(self.compiled_jac(np.float64(t), y, self.parameters))

    def for_mechanism(self, mechanism: Mechanism) -> "CompiledField":
        """The same executables bound to ``mechanism`` (same structure, other values)."""
        arrays, _ = eqx.partition(mechanism, eqx.is_array)
        parameters = jnp.asarray(ravel_pytree(arrays)[0])
        y0 = np.asarray(ravel_pytree(initial_state(mechanism))[0])
        return dataclasses.replace(self, y0=y0, parameters=parameters)


def compile_field(mechanism: Mechanism, with_jacobian: bool = True) -> CompiledField:
    """Jit and AOT-compile the flat right-hand side (and its Jacobian) of ``mechanism``."""
    start = time.perf_counter()
    y0, unravel = ravel_pytree(initial_state(mechanism))
    arrays, static = eqx.partition(mechanism, eqx.is_array)
    parameters, unravel_parameters = ravel_pytree(arrays)

    def flat_field(t, y, p):
        member = eqx.combine(unravel_parameters(p), static)
        return ravel_pytree(vector_field(t, unravel(y), member))[0]

    specs = (jax.ShapeDtypeStruct((), jnp.float64), jax.ShapeDtypeStruct(y0.shape, jnp.float64),
             jax.ShapeDtypeStruct(parameters.shape, parameters.dtype))
    compiled_rhs = jax.jit(flat_field).lower(*specs).compile()
    compiled_jac = jax.jit(jax.jacfwd(flat_field, argnums=1)).lower(*specs).compile() if with_jacobian else None
    return CompiledField(np.asarray(y0), unravel, parameters, compiled_rhs, compiled_jac,
                         time.perf_counter() - start)


def _counting(method: str) -> type:
    """``method``'s :class:`scipy.integrate.OdeSolver` class, counting accepted steps.

    ``solve_ivp`` accepts a solver class; ``_step_impl`` returns once per accepted step
    (rejections are retried inside it), so counting its successful returns counts steps.
    """
    base = scipy.integrate._ivp.ivp.METHODS[method]

    class Counting(base):
        accepted_steps = 0

        def _step_impl(self):
            success, message = super()._step_impl()
            if success:
                Counting.accepted_steps += 1
            return success, message

    Counting.__name__ = f"Counting{method}"
    return Counting


def impact_figures(t, penetration, normal_force, impact_memory, impacts: int = COMPARED_IMPACTS) -> dict[str, Any]:
    """First-impact time (s) and speed (m/s), and the peak penetration (m) and normal
    force (N) of each of the first ``impacts`` contact episodes, of one clearance joint,
    from the output samples (NumPy in, NumPy out; NaN where an episode did not occur)."""
    t, penetration, normal_force, memory = (np.asarray(a) for a in (t, penetration, normal_force, impact_memory))
    in_contact = penetration > 0.0
    onsets = np.asarray(contact_onsets(jnp.asarray(penetration))) > 0
    episode = np.cumsum(onsets) * in_contact  # 0 = apart, k = k-th contact episode
    peak_penetration = np.full(impacts, np.nan)
    peak_force = np.full(impacts, np.nan)
    for k in range(1, impacts + 1):
        mask = episode == k
        if mask.any():
            peak_penetration[k - 1] = penetration[mask].max()
            peak_force[k - 1] = normal_force[mask].max()
    if in_contact.any():
        index = int(np.argmax(in_contact))
        before = max(index - 1, 0)
        span = penetration[index] - penetration[before]
        share = np.clip(-penetration[before] / span, 0.0, 1.0) if span > 0 else 0.0
        first_time = t[before] + share * (t[index] - t[before])
        first_speed = memory[index]
    else:
        first_time = first_speed = np.nan
    return {
        "first_impact_time": float(first_time),
        "first_impact_velocity": float(first_speed),
        "peak_penetration": peak_penetration,
        "peak_normal_force": peak_force,
        "num_impacts": int(onsets.sum()),
    }


def solve_with_scipy(
    mechanism: Mechanism,
    settings_like,
    method: str = "DOP853",
    rtol: float = 1e-6,
    atol: float = 1e-9,
    field: CompiledField | None = None,
    joint: int = 0,
) -> dict[str, Any]:
    """Integrate ``mechanism`` with ``scipy.integrate.solve_ivp`` on the compiled JAX field.

    ``settings_like``: anything with ``t_end`` and ``output_interval`` (s), e.g. a
    :class:`model.SolverSettings`; states are returned at ``settings_like.output_times()``
    (or the same grid). ``field``: a :func:`compile_field` result to reuse (pass it when
    timing repeated solves; compilation is excluded from ``seconds`` in any case).
    ``atol`` applies to every state component (m, rad, m/s, rad/s, J) like diffrax's.

    Returns a dict: ``t`` [times], ``y`` [times, state], ``states`` (the State pytree),
    ``trajectory`` (:class:`model.Trajectory`), ``nfev``, ``njev``, ``nlu``, ``steps``
    (accepted), ``seconds`` (wall time of ``solve_ivp`` only), ``compile_seconds``,
    ``success``, ``message``, and the :func:`impact_figures` of clearance joint ``joint``
    (``first_impact_time``, ``first_impact_velocity``, ``peak_penetration``,
    ``peak_normal_force``, ``num_impacts``) plus its ``penetration`` history [times].
    """
    if method not in EXPLICIT_METHODS + IMPLICIT_METHODS:
        raise ValueError(f"unknown solve_ivp method {method!r}; choose from {EXPLICIT_METHODS + IMPLICIT_METHODS}")
    implicit = method in IMPLICIT_METHODS
    if field is None or (implicit and field.compiled_jac is None):
        field = compile_field(mechanism, with_jacobian=implicit)
    else:
        field = field.for_mechanism(mechanism)
    num_outputs = int(np.floor(settings_like.t_end / settings_like.output_interval + 1e-9)) + 1
    t_eval = np.linspace(0.0, (num_outputs - 1) * settings_like.output_interval, num_outputs)
    solver_class = _counting(method)
    options = {"jac": field.jac} if implicit else {}
    start = time.perf_counter()
    solution = scipy.integrate.solve_ivp(
        field.rhs, (0.0, float(t_eval[-1])), field.y0, method=solver_class, t_eval=t_eval,
        rtol=rtol, atol=atol, **options,
    )
    seconds = time.perf_counter() - start
    y = solution.y.T
    if y.shape[0] < t_eval.size:  # a failed solve: pad like diffrax (inf after failure)
        y = np.concatenate([y, np.full((t_eval.size - y.shape[0], y.shape[1]), np.inf)])
    states = jax.vmap(field.unravel)(jnp.asarray(y))
    trajectory = trajectory_from_states(
        mechanism, jnp.asarray(t_eval), states, steps=solver_class.accepted_steps, result=0 if solution.success else 1
    )
    figures = impact_figures(
        t_eval, trajectory.penetration[:, joint], trajectory.normal_force[:, joint], trajectory.impact_memory[:, joint]
    ) if mechanism.clearance_joints else {}
    return {
        "t": t_eval,
        "y": y,
        "states": states,
        "trajectory": trajectory,
        "nfev": int(solution.nfev),
        "njev": int(solution.njev),
        "nlu": int(solution.nlu),
        "steps": int(solver_class.accepted_steps),
        "seconds": seconds,
        "compile_seconds": field.compile_seconds,
        "success": bool(solution.success),
        "message": str(solution.message),
        "penetration": np.asarray(trajectory.penetration[:, joint]) if mechanism.clearance_joints else None,
        **figures,
    }


def call_overhead(field: CompiledField, calls: int = 2000) -> dict[str, float]:
    """Seconds per RHS call from Python (what ``solve_ivp`` pays per evaluation) against
    seconds per evaluation inside XLA (a compiled loop of ``calls`` evaluations), and the
    cost of a trivial jitted call of the same signature (the bare dispatch overhead)."""
    y = field.y0.copy()
    field.rhs(0.0, y)
    start = time.perf_counter()
    for i in range(calls):
        field.rhs(1e-7 * i, y)
    per_python_call = (time.perf_counter() - start) / calls

    trivial = jax.jit(lambda t, y: y * t).lower(np.float64(0.0), y).compile()
    np.asarray(trivial(np.float64(0.0), y))
    start = time.perf_counter()
    for i in range(calls):
        np.asarray(trivial(np.float64(1e-7 * i), y))
    per_trivial_call = (time.perf_counter() - start) / calls

    return {
        "python_call_seconds": per_python_call,
        "trivial_jit_call_seconds": per_trivial_call,
    }


def in_xla_evaluation_seconds(mechanism: Mechanism, calls: int = 2000) -> float:
    """Seconds per vector-field evaluation inside one compiled ``fori_loop``: the
    compute cost without the Python round trip."""
    y0, unravel = ravel_pytree(initial_state(mechanism))

    def flat_field(t, y):
        return ravel_pytree(vector_field(t, unravel(y), mechanism))[0]

    @jax.jit
    def loop(y):
        # a tiny feedback keeps XLA from hoisting the evaluation out of the loop
        return jax.lax.fori_loop(0, calls, lambda i, acc: acc + 1e-30 * flat_field(1e-7 * i, y + acc), jnp.zeros_like(y))

    loop(y0).block_until_ready()
    best = np.inf
    for _ in range(3):
        start = time.perf_counter()
        loop(y0).block_until_ready()
        best = min(best, time.perf_counter() - start)
    return best / calls


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(FLORES_CONFIG))
    parser.add_argument("--method", default="DOP853", choices=EXPLICIT_METHODS + IMPLICIT_METHODS)
    parser.add_argument("--rtol", type=float, default=1e-6)
    parser.add_argument("--atol", type=float, default=1e-9)
    parser.add_argument("--t-end", type=float, default=None, help="s (default: the config's)")
    parser.add_argument("--quick", action="store_true", help="smoke run: t_end = 0.5 ms")
    args = parser.parse_args(argv)
    changes = {}
    if args.quick:
        changes["t_end"] = 5e-4
    elif args.t_end is not None:
        changes["t_end"] = args.t_end
    mechanism, settings = load_flores(args.config, **changes)
    field = compile_field(mechanism, with_jacobian=args.method in IMPLICIT_METHODS)
    overhead = call_overhead(field, calls=500 if args.quick else 5000)
    inside = in_xla_evaluation_seconds(mechanism, calls=500 if args.quick else 5000)
    result = solve_with_scipy(mechanism, settings, args.method, args.rtol, args.atol, field=field)
    print(f"solve_ivp {args.method} rtol={args.rtol:g} atol={args.atol:g} t_end={settings.t_end:g} s: "
          f"{result['seconds']:.3f} s, {result['steps']} steps, nfev {result['nfev']}, njev {result['njev']}, "
          f"{result['message']}")
    print(f"RHS compile {field.compile_seconds:.2f} s; per call from Python {overhead['python_call_seconds'] * 1e6:.1f} us "
          f"(trivial jitted call {overhead['trivial_jit_call_seconds'] * 1e6:.1f} us, "
          f"evaluation inside XLA {inside * 1e6:.2f} us)")
    print(f"first impact t = {result['first_impact_time'] * 1e3:.5f} ms, speed {result['first_impact_velocity']:.5f} m/s; "
          f"peak penetration (um) {np.round(result['peak_penetration'] * 1e6, 4)}; "
          f"peak force (N) {np.round(result['peak_normal_force'], 2)}; impacts {result['num_impacts']}")
    return 0 if result["success"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
