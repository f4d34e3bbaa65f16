"""The Flores slider-crank with a clearance pin in minimal coordinates, NumPy/SciPy only.

This is how a researcher who studies clearance joints would write the benchmark by hand
(Flores & Ambrósio 2004; Flores et al. 2011): the crank is driven, ``phi = omega t``, so the
mechanism has two degrees of freedom, the conrod angle ``beta`` and the slider position
``x``. The journal (on the conrod) and the bearing (in the slider) are separated by the
eccentricity ``e = O_j(beta, t) - O_b(x)``, a function of the two coordinates, and the
contact force follows from it. Equations of motion (derived in ``docs/minimal_peer.md``):

    (J_2 + m_2 a^2) beta'' = -m_2 a u_perp . A''(t) - L F_n u_perp . n
    m_3 x''                = F_n n_x

with ``A(t) = r (cos phi, sin phi)`` the crank pin, ``u = (cos beta, sin beta)``,
``u_perp = (-sin beta, cos beta)``, ``a`` the crank-pin-to-centre-of-mass distance of the
conrod, ``L`` its length, ``n = e/|e|``. The mass matrix is diagonal in these coordinates
(the crank's motion is prescribed), so there is no linear solve at all: every evaluation is
a few dozen scalar operations in plain Python ``math``, which is faster than NumPy on
scalars.

The contact is the same as the JAX model's: Lankarani–Nikravesh ``F_n = K delta^n (1 +
chi delta' / delta'_-)``, ``chi = 3 (1 - e^2) / 4``, Hertz ``K = 4/3 E* sqrt(R*)``, and the
same impact-velocity memory ``m`` (``model/memory.py``: tracks ``delta'`` while apart with a
relaxation time ``tau``, frozen in contact, switched by a logistic weight over 20 nm of
penetration, floored at 1 mm/s), so that the two models describe the same physics and
their solutions agree to the solvers' tolerances. State: ``[beta, x, beta', x', m]``.

Run from the repository root::

    python benchmarks/minimal_peer.py --method LSODA --rtol 1e-7
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import pathlib
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.integrate

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
FLORES_CONFIG = REPOSITORY / "configs" / "flores_slider_crank.toml"
COMPARED_IMPACTS = 3  # as benchmarks/scipy_peer.py


@dataclass(frozen=True)
class SliderCrank:
    """Parameters of the Flores slider-crank (SI units), defaults those of
    ``configs/flores_slider_crank.toml`` (checked by ``tests/benchmarks/test_minimal_peer.py``)."""

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


def initial_state(p: SliderCrank) -> np.ndarray:
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
    definitions of ``benchmarks/scipy_peer.impact_figures`` and ``model.summary_metrics``
    (first contact time interpolated linearly between samples; speed = the memory at the
    first sample in contact), in NumPy."""
    in_contact = np.asarray(penetration) > 0.0
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


def solve(p: SliderCrank, t_end: float = 24e-3, output_interval: float = 1e-5, method: str = "LSODA",
          rtol: float = 1e-7, atol: float = 1e-10) -> dict[str, Any]:
    """Integrate with ``scipy.integrate.solve_ivp`` and return the samples, the contact
    outputs, :func:`impact_figures`, ``seconds`` (the ``solve_ivp`` call only), ``nfev``,
    ``success``. ``atol`` applies to every state (rad, m, rad/s, m/s, m/s) as in the JAX model."""
    num_outputs = int(np.floor(t_end / output_interval + 1e-9)) + 1
    t_eval = np.linspace(0.0, (num_outputs - 1) * output_interval, num_outputs)
    rhs = make_rhs(p)
    start = time.perf_counter()
    solution = scipy.integrate.solve_ivp(rhs, (0.0, float(t_eval[-1])), initial_state(p), method=method,
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", default="LSODA")
    parser.add_argument("--rtol", type=float, default=1e-7)
    parser.add_argument("--atol", type=float, default=None, help="default: 1e-3 rtol")
    parser.add_argument("--t-end", type=float, default=24e-3)
    args = parser.parse_args(argv)
    result = solve(SliderCrank(), args.t_end, 1e-5, args.method, args.rtol,
                   args.rtol * 1e-3 if args.atol is None else args.atol)
    print(f"{args.method} rtol {args.rtol:g}: {result['seconds']:.3f} s, nfev {result['nfev']}, {result['message']}")
    print(f"first impact t = {result['first_impact_time'] * 1e3:.6f} ms, speed {result['first_impact_velocity']:.6f} m/s; "
          f"peak penetration (um) {np.round(result['peak_penetration'] * 1e6, 5)}; "
          f"peak force (N) {np.round(result['peak_normal_force'], 3)}; impacts {result['num_impacts']}")
    return 0 if result["success"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
