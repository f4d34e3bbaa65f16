"""The peers our sweep is measured against, importable (tests and the throughput cases use
them) and runnable (``python -m benchmarks.peers --case scipy|minimal|numba-grid``):

- **scipy on our compiled field** (:func:`solve_with_scipy`): the same clearance-joint
  mechanism integrated with ``scipy.integrate.solve_ivp``, calling **the same compiled JAX
  right-hand side** as the diffrax solve. The :class:`model.State` pytree is flattened to a
  1-D float64 vector (:func:`jax.flatten_util.ravel_pytree`); ``rhs(t, y)`` is the jitted
  flat vector field, AOT-compiled once per mechanism structure (the mechanism's array
  leaves travel as one flat parameter vector, so the sweep points share one executable)
  and returning NumPy; ``jac(t, y)`` (Radau, BDF, LSODA) is its jitted ``jax.jacfwd``. What
  differs from our solve is only the integrator (scipy's Python step loop against diffrax's
  compiled ``while_loop``) and the batching (one call per point against one batched solve
  per chunk); :func:`call_overhead` measures what scipy pays per call for crossing from
  Python into XLA. The output states are post-processed by ``model.evaluate`` into a
  :class:`model.Trajectory`, so :func:`model.summary_metrics` and :func:`impact_figures`
  apply to both.
- **the minimal-coordinate peer** (:class:`SliderCrank`, :func:`solve_minimal`): the Flores
  slider-crank written by hand as a researcher would (Flores & Ambrosio 2004; Flores et al.
  2011), NumPy/SciPy only. The crank is driven, ``phi = omega t``, so the mechanism has two
  degrees of freedom, the conrod angle ``beta`` and the slider position ``x``; journal and
  bearing are separated by the eccentricity ``e = O_j(beta, t) - O_b(x)``. Equations of
  motion (derived in docs/minimal_peer.md)::

      (J_2 + m_2 a^2) beta'' = -m_2 a u_perp . A''(t) - L F_n u_perp . n
      m_3 x''                = F_n n_x

  with ``A(t) = r (cos phi, sin phi)`` the crank pin, ``u = (cos beta, sin beta)``,
  ``u_perp = (-sin beta, cos beta)``, ``a`` the crank-pin-to-centre-of-mass distance of the
  conrod, ``L`` its length, ``n = e/|e|``. The mass matrix is diagonal in these coordinates,
  so every evaluation is a few dozen scalar operations in plain Python ``math``. The contact
  is the model's: Lankarani-Nikravesh ``F_n = K delta^n (1 + chi delta' / delta'_-)``,
  ``chi = 3 (1 - e^2) / 4``, Hertz ``K = 4/3 E* sqrt(R*)``, and the same impact-velocity
  memory ``m`` (``model/contact/memory.py``). State: ``[beta, x, beta', x', m]``.
- **the numba peer** (:func:`numba_solve`): the same minimal-coordinate equations integrated
  by Dormand & Prince (1980) 5(4) with the step-size control of ``diffrax.PIDController`` at
  our settings (``pcoeff`` 0.3, ``icoeff`` 0.4, safety 0.9, factors 0.2-10; Hairer, Norsett &
  Wanner 1993, section II.4 for the starting step), all compiled by numba; peaks and impacts
  are read at the accepted steps' ends. numba is optional: it is imported by
  :func:`numba_solve` only, never by the package or its tests.

Examples (from the repository root)::

    python -m benchmarks.peers --case scipy --quick
    python -m benchmarks.peers --case minimal --method LSODA --rtol 1e-7
    python -m benchmarks.peers --case numba-grid --grid 16 --out FILE   # one numba grid
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import multiprocessing
import pathlib
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

from benchmarks import harness
from model.integrate.trajectory import trajectory_from_states
from model.mechanics import dynamics
from model.mechanics.mechanism import Mechanism

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
FLORES_CONFIG = REPOSITORY / "configs" / "flores_slider_crank.toml"
EXPLICIT_METHODS = ("RK23", "RK45", "DOP853")
IMPLICIT_METHODS = ("Radau", "BDF", "LSODA")
# Impacts over which the peak penetration / normal force are compared: the first few are
# deterministic; later ones drift apart for any two solvers (the contact dynamics of a
# clearance joint are sensitive to the state at each impact).
COMPARED_IMPACTS = 3
# the numba peer's settings: configs/flores_slider_crank.toml [simulation], two crank
# revolutions at 5000 rpm, and the grid ranges of benchmarks/flores_sweep_256.toml
RTOL, ATOL = 1e-6, 1e-9
T_END = 24e-3  # s
CLEARANCES = (1e-4, 5e-4)  # m
RESTITUTIONS = (0.5, 0.99)


# ------------------------------------------------------------------ scipy on our field
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
    unravel: Callable[[Any], dynamics.State]
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
        y0 = np.asarray(ravel_pytree(mechanism.initial_state())[0])
        return dataclasses.replace(self, y0=y0, parameters=parameters)


def compile_field(mechanism: Mechanism, with_jacobian: bool = True) -> CompiledField:
    """Jit and AOT-compile the flat right-hand side (and its Jacobian) of ``mechanism``."""
    start = time.perf_counter()
    y0, unravel = ravel_pytree(mechanism.initial_state())
    arrays, static = eqx.partition(mechanism, eqx.is_array)
    parameters, unravel_parameters = ravel_pytree(arrays)

    def flat_field(t, y, p):
        member = eqx.combine(unravel_parameters(p), static)
        return ravel_pytree(member.vector_field(t, unravel(y)))[0]

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
    y0, unravel = ravel_pytree(mechanism.initial_state())

    def flat_field(t, y):
        return ravel_pytree(mechanism.vector_field(t, unravel(y)))[0]

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


# ------------------------------------------------------- the minimal-coordinate peer
@dataclass(frozen=True)
class SliderCrank:
    """Parameters of the Flores slider-crank (SI units), defaults those of
    ``configs/flores_slider_crank.toml`` (checked by ``tests/benchmarks/test_peers.py``)."""

    crank_length: float = 0.05  # r (m)
    conrod_length: float = 0.12  # L, crank pin to clearance pin (m)
    conrod_centre: float = 0.06  # a, crank pin to the conrod's centre of mass (m)
    conrod_mass: float = 0.21  # m_2 (kg)
    conrod_inertia: float = 2.5e-4  # J_2 about its centre of mass (kg m^2)
    slider_mass: float = 0.14  # m_3 (kg)
    crank_speed: float = 5000.0 * 2.0 * math.pi / 60.0  # omega (rad/s)
    bearing_radius: float = 0.01  # R_b (m)
    clearance: float = 5e-4  # c = R_b - R_j (m)
    youngs_modulus: float = 207e9  # both bodies (Pa)
    poisson_ratio: float = 0.3
    restitution: float = 0.9
    exponent: float = 1.5
    impact_velocity_floor: float = 1e-3  # m/s
    relaxation_time: float = 1e-5  # tau of the impact memory (s)
    onset_width: float = 2e-8  # width of the memory's tracking/frozen switch (m)

    @property
    def stiffness(self) -> float:
        """Hertz pin stiffness ``K = 4/3 E* sqrt(R_b R_j / c)`` (N/m^1.5), with
        ``1/E* = 2 (1 - nu^2) / E`` (two equal materials)."""
        modulus = self.youngs_modulus / (2.0 * (1.0 - self.poisson_ratio**2))
        journal_radius = self.bearing_radius - self.clearance
        return 4.0 / 3.0 * modulus * math.sqrt(self.bearing_radius * journal_radius / self.clearance)

    @property
    def hysteresis_factor(self) -> float:
        """Lankarani–Nikravesh (1990) ``chi = 3 (1 - e^2) / 4``."""
        return 0.75 * (1.0 - self.restitution**2)

    def replace(self, **changes) -> "SliderCrank":
        return dataclasses.replace(self, **changes)


def minimal_initial_state(p: SliderCrank) -> np.ndarray:
    """``[beta, x, beta', x', m]`` at t = 0: crank and conrod along +x, the journal centred,
    the ideal-joint velocities (``beta' = -r omega / L``, ``x' = 0``) and the memory at the
    normal rate (0: the relative velocity is zero)."""
    r, length, omega = p.crank_length, p.conrod_length, p.crank_speed
    return np.array([0.0, r + length, -r * omega / length, 0.0, 0.0])


def make_rhs(p: SliderCrank):
    """``rhs(t, y) -> dy/dt`` (a list of 5 floats) in closed form, plain-``math`` scalars."""
    r, length, a, omega = p.crank_length, p.conrod_length, p.conrod_centre, p.crank_speed
    conrod_moment = p.conrod_inertia + p.conrod_mass * a * a  # about the crank pin
    ma, m3 = p.conrod_mass * a, p.slider_mass
    c, stiffness, exponent, chi = p.clearance, p.stiffness, p.exponent, p.hysteresis_factor
    floor, tau, width = p.impact_velocity_floor, p.relaxation_time, p.onset_width
    cos, sin, sqrt, exp = math.cos, math.sin, math.sqrt, math.exp

    def rhs(t, y):
        beta, x, beta_rate, x_rate, memory = y
        phi = omega * t
        cphi, sphi, cb, sb = cos(phi), sin(phi), cos(beta), sin(beta)
        # crank pin A(t) and its derivatives
        ax, ay = r * cphi, r * sphi
        vax, vay = -r * omega * sphi, r * omega * cphi
        aax, aay = -omega * omega * ax, -omega * omega * ay
        # eccentricity e = A + L u - (x, 0) and its rate
        ex, ey = ax + length * cb - x, ay + length * sb
        vex, vey = vax - length * beta_rate * sb - x_rate, vay + length * beta_rate * cb
        distance = sqrt(ex * ex + ey * ey)
        if distance > 1e-15:
            nx, ny = ex / distance, ey / distance
        else:
            nx, ny = 1.0, 0.0
        penetration = distance - c
        normal_rate = vex * nx + vey * ny
        if penetration > 0.0:
            force = stiffness * penetration**exponent * (1.0 + chi * normal_rate / max(memory, floor))
            force = max(force, 0.0)
        else:
            force = 0.0
        # Lagrange's equations; u_perp = (-sb, cb)
        beta_acc = (-ma * (-sb * aax + cb * aay) - length * force * (-sb * nx + cb * ny)) / conrod_moment
        x_acc = force * nx / m3
        # impact memory: dm/dt = apart * (delta'' + (delta' - m) / tau)
        aex = aax - length * (beta_acc * sb + beta_rate * beta_rate * cb) - x_acc
        aey = aay + length * (beta_acc * cb - beta_rate * beta_rate * sb)
        normal_acc = aex * nx + aey * ny
        if distance > 1e-15:
            normal_acc += (vex * vex + vey * vey - normal_rate * normal_rate) / distance
        s = -penetration / width
        apart = 1.0 / (1.0 + exp(-s)) if s >= 0.0 else exp(s) / (1.0 + exp(s))
        memory_rate = apart * (normal_acc + (normal_rate - memory) / tau)
        return [beta_rate, x_rate, beta_acc, x_acc, memory_rate]

    return rhs


def contact_outputs(p: SliderCrank, t: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """Penetration (m), normal force (N) and memory (m/s) at the samples ``y[times, 5]``."""
    beta, x, beta_rate, x_rate, memory = y.T
    phi = p.crank_speed * t
    ex = p.crank_length * np.cos(phi) + p.conrod_length * np.cos(beta) - x
    ey = p.crank_length * np.sin(phi) + p.conrod_length * np.sin(beta)
    vex = -p.crank_length * p.crank_speed * np.sin(phi) - p.conrod_length * beta_rate * np.sin(beta) - x_rate
    vey = p.crank_length * p.crank_speed * np.cos(phi) + p.conrod_length * beta_rate * np.cos(beta)
    distance = np.hypot(ex, ey)
    safe = np.where(distance > 1e-15, distance, 1.0)
    nx, ny = np.where(distance > 1e-15, ex / safe, 1.0), np.where(distance > 1e-15, ey / safe, 0.0)
    penetration = distance - p.clearance
    rate = vex * nx + vey * ny
    elastic = p.stiffness * np.where(penetration > 0, np.maximum(penetration, 0.0), 0.0) ** p.exponent
    force = elastic * (1.0 + p.hysteresis_factor * rate / np.maximum(memory, p.impact_velocity_floor))
    force = np.where(penetration > 0, np.maximum(force, 0.0), 0.0)
    return {"penetration": penetration, "normal_force": force, "impact_memory": memory}


def impact_figures(t, penetration, normal_force, impact_memory, impacts: int = COMPARED_IMPACTS) -> dict[str, Any]:
    """First-impact time (s) and speed (m/s), and the peak penetration (m) and normal force
    (N) of each of the first ``impacts`` contact episodes, from the output samples: the
    definitions of ``model.summary_metrics``
    (first contact time interpolated linearly between samples; speed = the memory at the
    first sample in contact), in NumPy."""
    t, penetration, normal_force, impact_memory = (np.asarray(a) for a in (t, penetration, normal_force,
                                                                         impact_memory))
    in_contact = penetration > 0.0
    onsets = in_contact & ~np.concatenate([[False], in_contact[:-1]])
    episode = np.cumsum(onsets) * in_contact
    peak_penetration, peak_force = np.full(impacts, np.nan), np.full(impacts, np.nan)
    for k in range(1, impacts + 1):
        mask = episode == k
        if mask.any():
            peak_penetration[k - 1], peak_force[k - 1] = penetration[mask].max(), normal_force[mask].max()
    first_time = first_speed = np.nan
    if in_contact.any():
        index = int(np.argmax(in_contact))
        before = max(index - 1, 0)
        span = penetration[index] - penetration[before]
        share = np.clip(-penetration[before] / span, 0.0, 1.0) if span > 0 else 0.0
        first_time, first_speed = t[before] + share * (t[index] - t[before]), impact_memory[index]
    return {"first_impact_time": float(first_time), "first_impact_velocity": float(first_speed),
            "peak_penetration": peak_penetration, "peak_normal_force": peak_force, "num_impacts": int(onsets.sum())}


def solve_minimal(p: SliderCrank, t_end: float = 24e-3, output_interval: float = 1e-5, method: str = "LSODA",
          rtol: float = 1e-7, atol: float = 1e-10) -> dict[str, Any]:
    """Integrate with ``scipy.integrate.solve_ivp`` and return the samples, the contact
    outputs, :func:`impact_figures`, ``seconds`` (the ``solve_ivp`` call only), ``nfev``,
    ``success``. ``atol`` applies to every state (rad, m, rad/s, m/s, m/s) as in the JAX model."""
    num_outputs = int(np.floor(t_end / output_interval + 1e-9)) + 1
    t_eval = np.linspace(0.0, (num_outputs - 1) * output_interval, num_outputs)
    rhs = make_rhs(p)
    start = time.perf_counter()
    solution = scipy.integrate.solve_ivp(rhs, (0.0, float(t_eval[-1])), minimal_initial_state(p), method=method,
                                         t_eval=t_eval, rtol=rtol, atol=atol)
    seconds = time.perf_counter() - start
    y = solution.y.T
    if y.shape[0] < t_eval.size:
        y = np.concatenate([y, np.full((t_eval.size - y.shape[0], y.shape[1]), np.nan)])
    outputs = contact_outputs(p, t_eval, y)
    figures = impact_figures(t_eval, outputs["penetration"], outputs["normal_force"], outputs["impact_memory"])
    return {"t": t_eval, "y": y, **outputs, **figures, "seconds": seconds, "nfev": int(solution.nfev),
            "success": bool(solution.success), "message": str(solution.message)}


def from_config(path: str | pathlib.Path = FLORES_CONFIG, overrides=()) -> SliderCrank:
    """:class:`SliderCrank` from a Flores-type mechanism config (bodies ``crank``, ``conrod``,
    ``slider``; the clearance joint ``pin``; the driver ``motor``), through the project's
    config loader (SI values)."""
    from pipelines.config import load_mechanism

    config = load_mechanism(path, overrides)
    bodies = {body.name: body for body in config.bodies}
    joints = {joint.name: joint for joint in config.joints}
    pin, crankpin, main = joints["pin"], joints["crankpin"], joints["main"]
    material = config.materials[pin.materials[0]]
    return SliderCrank(
        crank_length=abs(main.points[1][0]) + abs(crankpin.points[0][0]),
        conrod_length=abs(pin.points[0][0]) + abs(crankpin.points[1][0]),
        conrod_centre=abs(crankpin.points[1][0]),
        conrod_mass=bodies["conrod"].mass, conrod_inertia=bodies["conrod"].inertia,
        slider_mass=bodies["slider"].mass, crank_speed=config.drivers[0].speed,
        bearing_radius=pin.bearing_radius, clearance=pin.clearance,
        youngs_modulus=material.youngs_modulus, poisson_ratio=material.poisson_ratio,
        restitution=pin.contact.restitution, exponent=pin.contact.exponent,
        impact_velocity_floor=pin.contact.impact_velocity_floor,
    )


# -------------------------------------------------------------------- the numba peer
def numba_parameters(crank) -> np.ndarray:
    """The parameter array of a :class:`SliderCrank` for the numba kernels."""
    return np.array([crank.crank_length, crank.conrod_length, crank.conrod_centre, crank.conrod_mass,
                     crank.conrod_inertia, crank.slider_mass, crank.crank_speed, crank.clearance, crank.stiffness,
                     crank.exponent, crank.hysteresis_factor, crank.impact_velocity_floor, crank.relaxation_time,
                     crank.onset_width])


def _contact_kernel(t, y, p):
    """``(penetration (m), normal rate (m/s), normal force (N), n_x, n_y, e, e')`` pieces
    of the right-hand side: see :func:`make_rhs`."""
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


def _rhs_kernel(t, y, p, out):
    """``out = dy/dt``: Lagrange's equations of ``docs/minimal_peer.md``."""
    r, length, a, m2, j2, m3, omega, tau, width = p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[12], p[13]
    penetration, normal_rate, force, nx, ny, vex, vey, distance, cphi, sphi, cb, sb = _nb_contact(t, y, p)
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


def _solve_kernel(p, y0, t_end, rtol, atol):
    """Integrate to ``t_end``; returns ``[steps, rejected, max force (N), max penetration (m),
    impacts, first impact time (s)]`` (peaks at the accepted steps' ends)."""
    n = y0.size
    y = y0.copy()
    k1, k2, k3, k4, k5, k6, k7 = np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    stage, y_new = np.empty(n), np.empty(n)
    t = 0.0
    _nb_rhs(t, y, p, k1)
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
    _nb_rhs(h0, stage, p, k2)
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
    values = _nb_contact(t, y, p)
    penetration0 = values[0]
    max_penetration, max_force = values[0], values[2]
    while t < t_end:
        h = min(h, t_end - t)
        for i in range(n):
            stage[i] = y[i] + h * A21 * k1[i]
        _nb_rhs(t + C2 * h, stage, p, k2)
        for i in range(n):
            stage[i] = y[i] + h * (A31 * k1[i] + A32 * k2[i])
        _nb_rhs(t + C3 * h, stage, p, k3)
        for i in range(n):
            stage[i] = y[i] + h * (A41 * k1[i] + A42 * k2[i] + A43 * k3[i])
        _nb_rhs(t + C4 * h, stage, p, k4)
        for i in range(n):
            stage[i] = y[i] + h * (A51 * k1[i] + A52 * k2[i] + A53 * k3[i] + A54 * k4[i])
        _nb_rhs(t + C5 * h, stage, p, k5)
        for i in range(n):
            stage[i] = y[i] + h * (A61 * k1[i] + A62 * k2[i] + A63 * k3[i] + A64 * k4[i] + A65 * k5[i])
        _nb_rhs(t + h, stage, p, k6)
        for i in range(n):
            y_new[i] = y[i] + h * (B1 * k1[i] + B3 * k3[i] + B4 * k4[i] + B5 * k5[i] + B6 * k6[i])
        _nb_rhs(t + h, y_new, p, k7)
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
            values = _nb_contact(t, y, p)
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


@functools.cache
def numba_solve() -> Callable:
    """The numba-compiled solve ``(p, y0, t_end, rtol, atol) -> [steps, rejected, max force
    (N), max penetration (m), impacts, first impact time (s)]`` (peaks at the accepted
    steps' ends; ``p`` from :func:`numba_parameters`). Imports numba (optional)."""
    global _nb_contact, _nb_rhs
    from numba import njit

    _nb_contact = njit(cache=True, fastmath=False)(_contact_kernel)
    _nb_rhs = njit(cache=True, fastmath=False)(_rhs_kernel)
    return njit(cache=True, fastmath=False)(_solve_kernel)


def numba_crank(clearance: float | None = None, restitution: float | None = None):
    base = SliderCrank()
    changes = {k: v for k, v in (("clearance", clearance), ("restitution", restitution)) if v is not None}
    return base.replace(**changes)


def _solve_point(point) -> np.ndarray:
    c = numba_crank(*point)
    return numba_solve()(numba_parameters(c), minimal_initial_state(c), T_END, RTOL, ATOL)


def numba_grid(num: int) -> list[tuple[float, float]]:
    """The ``num x num`` grid of the sweep configs (clearance outer, restitution inner)."""
    return [(c, e) for c in np.linspace(*CLEARANCES, num) for e in np.linspace(*RESTITUTIONS, num)]


def numba_run_grid(num: int, out: pathlib.Path, processes: int = 2) -> None:
    """Solve the grid on ``processes`` worker processes and write the results (``.npy``)."""
    points = numba_grid(num)
    _solve_point(points[0])  # compiled (or loaded from numba's cache) before the workers fork
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        pool.map(_solve_point, [points[0]] * processes)  # numba's cache loaded in each worker
        start = time.perf_counter()
        rows = pool.map(_solve_point, points, chunksize=max(1, len(points) // (4 * processes)))
        solving = time.perf_counter() - start
    np.save(out, np.column_stack([np.asarray(points), np.asarray(rows)]))
    print(json.dumps({"in_run": len(points) / solving}))


def numba_single(repeats: int = 20) -> dict:
    """One nominal simulation: best time of ``repeats`` and the step counts."""
    c = numba_crank()
    p, y0, solve = numba_parameters(c), minimal_initial_state(c), numba_solve()
    solve(p, y0, 1e-4, RTOL, ATOL)  # compile (or load numba's cache)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = solve(p, y0, T_END, RTOL, ATOL)
        times.append(time.perf_counter() - start)
    return {"seconds": min(times), "steps": int(result[0]), "rejected": int(result[1]), "max_normal_force": result[2],
            "max_penetration": result[3], "num_impacts": int(result[4]), "first_impact_time": result[5]}


# ------------------------------------------------------------------------------ cases
def scipy_case(argv=None) -> int:
    """One solve_ivp run on our compiled field: time, steps, RHS call overhead, impact figures."""
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


def minimal_case(argv=None) -> int:
    """One nominal run of the minimal-coordinate peer: time, nfev, impact figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", default="LSODA")
    parser.add_argument("--rtol", type=float, default=1e-7)
    parser.add_argument("--atol", type=float, default=None, help="default: 1e-3 rtol")
    parser.add_argument("--t-end", type=float, default=24e-3)
    args = parser.parse_args(argv)
    result = solve_minimal(SliderCrank(), args.t_end, 1e-5, args.method, args.rtol,
                   args.rtol * 1e-3 if args.atol is None else args.atol)
    print(f"{args.method} rtol {args.rtol:g}: {result['seconds']:.3f} s, nfev {result['nfev']}, {result['message']}")
    print(f"first impact t = {result['first_impact_time'] * 1e3:.6f} ms, speed {result['first_impact_velocity']:.6f} m/s; "
          f"peak penetration (um) {np.round(result['peak_penetration'] * 1e6, 5)}; "
          f"peak force (N) {np.round(result['peak_normal_force'], 3)}; impacts {result['num_impacts']}")
    return 0 if result["success"] else 1

def numba_grid_case(argv=None) -> int:
    """Solve one num x num grid with the numba peer on worker processes; print its in-run rate."""
    parser = argparse.ArgumentParser(description=numba_grid_case.__doc__)
    parser.add_argument("--grid", type=int, required=True, help="num: the num x num clearance x restitution grid")
    parser.add_argument("--out", type=pathlib.Path, required=True, help="results (.npy)")
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args(argv)
    numba_run_grid(args.grid, args.out, args.processes)
    return 0


CASES = {"scipy": scipy_case, "minimal": minimal_case, "numba-grid": numba_grid_case}

if __name__ == "__main__":
    raise SystemExit(harness.main(CASES, __doc__))
