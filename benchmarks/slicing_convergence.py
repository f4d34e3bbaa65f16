"""Slicing convergence of the cylindrical clearance joint: how many slices does a tilted
journal need?

The joint is the pin in a fixed bushing of the load cases (Yao, Chen, Wang & Liu; 40 mm
contact length, 1 mm clearance, Palmgren stiffness, elastic law ``K delta^(10/9)`` shared
as ``K/N`` by the ``N`` slices). Three cases, each evaluated by the engine's own contact
routine (``model.mechanics.spatial.forces.cylindrical_contact``):

- **aligned**: the journal parallel to the bearing, 3 um into the wall: every slice has the
  same penetration, so the slices add up to the whole-length law for any ``N``.
- **edge (pose given)**: the journal tilted by 0.2 mrad about x with its centre 2 um short of
  the wall: only the last quarter of the length touches (a wedge of penetration rising to
  2 um at end b). End forces ``F_a, F_b`` and the peak slice penetration against the
  continuum (closed-form integrals of the wedge, :func:`wedge_end_forces`).
- **tilted (loads given)**: load case 4 (1000 N at the centre, 10 N m about x): the pose
  ``(y, theta)`` that balances the loads is solved for each ``N`` (Newton on the force and
  moment balance). The end forces are then fixed by statics for every ``N`` (two
  unknowns, two balance equations); what converges is the pose, reported as the peak slice
  penetration, against the continuum pose (the same balance with the closed-form
  integrals, :func:`continuum_balanced_pose`). One slice cannot carry a moment: N = 1 has no
  balanced pose.

Run from the repository root::

    PYTHONPATH=$PWD python benchmarks/slicing_convergence.py [--slices 1 2 3 5 10 20 40]

Prints a Markdown table (relative errors against the continuum) and the observed orders.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model.contact.friction import FrictionLaw  # noqa: E402
from model.contact.normal import ContactLaw  # noqa: E402
from model.contact.stiffness import palmgren_stiffness  # noqa: E402
from model.geometry.quaternion import axis_angle_quaternion  # noqa: E402
from model.mechanics.spatial import GROUND, CylindricalClearanceJoint  # noqa: E402
from model.mechanics.spatial.forces import cylindrical_contact  # noqa: E402

LENGTH = 0.040  # m
CLEARANCE = 1e-3  # m
EXPONENT = 10.0 / 9.0
LOAD = 1000.0  # N, at the centre, along -y (case 4)
TORQUE = 10.0  # N m, about +x (case 4)
EDGE_POSE = (-2e-6, 2e-4)  # (centre penetration m, tilt rad): the last quarter touches
ALIGNED_PENETRATION = 3e-6  # m
SLICES = (1, 2, 3, 5, 10, 20, 40)


def pin_joint(slices: int) -> CylindricalClearanceJoint:
    """The load cases' pin in its fixed bushing (elastic Palmgren law, no friction)."""
    return CylindricalClearanceJoint(
        journal_body=0, bearing_body=GROUND, slices=slices, axial_fixed=True, palmgren=True,
        journal_point=jnp.zeros(3), bearing_point=jnp.zeros(3), journal_axis=jnp.array([0.0, 0.0, 1.0]),
        bearing_axis=jnp.array([0.0, 0.0, 1.0]), bearing_u=jnp.array([1.0, 0.0, 0.0]),
        bearing_w=jnp.array([0.0, 1.0, 0.0]), length=jnp.asarray(LENGTH), bearing_radius=jnp.asarray(0.011),
        clearance=jnp.asarray(CLEARANCE), contact=ContactLaw("hertz", stiffness=0.0, exponent=EXPONENT),
        friction=FrictionLaw("none"), initial_eccentricity=jnp.zeros(2))


def _pose(penetration, tilt):
    """The pin's coordinates: centre ``c + penetration`` below the bearing axis, tilted by
    ``tilt`` about x (slice z then penetrates ``penetration + z sin(tilt)``)."""
    quaternion = axis_angle_quaternion(jnp.array([1.0, 0.0, 0.0]), tilt)
    return jnp.concatenate([jnp.array([0.0, -(CLEARANCE + penetration), 0.0]), quaternion])


@functools.partial(jax.jit, static_argnums=0)
def contact_at(slices: int, penetration, tilt):
    """``(generalised force on the pin [f, tau], F_a, F_b, peak slice penetration)`` at the pose."""
    joint = pin_joint(slices)
    x = _pose(penetration, tilt)
    generalised, summary, _ = cylindrical_contact(joint, x, jnp.zeros(6), jnp.ones(slices), jnp.zeros(6))
    return generalised, summary[4], summary[5], summary[2]


@functools.partial(jax.jit, static_argnums=0)
def balanced_pose(slices: int) -> tuple[jax.Array, jax.Array]:
    """Pose (centre penetration m, tilt rad) where the contact balances load case 4:
    contact force along +y equal to ``LOAD``, contact moment about x equal to ``-TORQUE``.
    Newton in scaled unknowns (um, mrad) from the aligned line-contact guess."""
    def residual(unknowns):
        generalised = contact_at(slices, unknowns[0] * 1e-6, unknowns[1] * 1e-3)[0]
        return jnp.stack([(generalised[1] - LOAD) / LOAD, (generalised[3] + TORQUE) / (LOAD * LENGTH)])

    def step(unknowns, _):
        update = jnp.linalg.solve(jax.jacfwd(residual)(unknowns), residual(unknowns))
        return unknowns - update, None

    guess = jnp.stack([1e6 * (LOAD / palmgren_stiffness(LENGTH)) ** (1.0 / EXPONENT), jnp.zeros(())])
    solution = jax.lax.scan(step, guess, None, length=40)[0]
    return solution[0] * 1e-6, solution[1] * 1e-3


def _wedge_integrals(centre_penetration, slope):
    """``S = (K/l) int f dz`` and ``Z = (K/l) int z f dz`` over the contact length for the
    penetration ``delta(z) = centre_penetration + slope z`` (slope > 0), ``f = delta^n`` where
    positive: with ``u = delta``, ``int u^n dz = u^(n+1) / ((n+1) s)`` and ``int z u^n dz =
    [u^(n+2)/(n+2) - delta_0 u^(n+1)/(n+1)] / s^2``."""
    stiffness = float(palmgren_stiffness(LENGTH)) / LENGTH
    n, s, d0 = EXPONENT, slope, centre_penetration
    upper, lower = max(d0 + s * LENGTH / 2, 0.0), max(d0 - s * LENGTH / 2, 0.0)
    force = (upper ** (n + 1) - lower ** (n + 1)) / ((n + 1) * s)
    moment = ((upper ** (n + 2) - lower ** (n + 2)) / (n + 2) - d0 * (upper ** (n + 1) - lower ** (n + 1)) / (n + 1)) / s**2
    return stiffness * force, stiffness * moment


def wedge_end_forces(centre_penetration, tilt) -> tuple[float, float]:
    """Continuum end forces (N) of the tilted pin: ``F_a, F_b = S/2 -+ Z/l`` (the slices'
    penetration is exactly ``delta_0 + z sin(tilt)``; their axial positions ``z cos(tilt)``
    differ from ``z`` by 2e-8 here)."""
    force, moment = _wedge_integrals(centre_penetration, np.sin(tilt))
    return abs(0.5 * force - moment / LENGTH), abs(0.5 * force + moment / LENGTH)


def continuum_balanced_pose() -> tuple[float, float]:
    """Load case 4 balanced by the continuum line contact: ``S = LOAD``, ``Z = TORQUE``
    (scipy ``fsolve`` on the closed-form integrals)."""
    from scipy.optimize import fsolve

    def residual(unknowns):
        force, moment = _wedge_integrals(unknowns[0] * 1e-6, unknowns[1] * 1e-3)
        return [force / LOAD - 1.0, moment / (LOAD * LENGTH) - TORQUE / (LOAD * LENGTH)]

    solution = fsolve(residual, [2.0, 0.1], xtol=1e-12)
    return solution[0] * 1e-6, solution[1] * 1e-3


def continuum_peak(centre_penetration, tilt) -> float:
    """The penetration at end b (m): the continuum's peak."""
    return centre_penetration + np.sin(tilt) * LENGTH / 2


def slice_peak(centre_penetration, tilt, slices: int) -> float:
    """The deepest slice centre's penetration, at ``z = l/2 - l/(2N)``: the slicing samples
    the wedge at the slice centres, a first-order lag behind the end."""
    return centre_penetration + np.sin(tilt) * (LENGTH / 2 - LENGTH / (2 * slices))


@dataclasses.dataclass
class Row:
    slices: int
    aligned_force: float  # N, resultant of the aligned case
    edge_end_a: float  # N
    edge_end_b: float  # N
    edge_peak_penetration: float  # m
    loaded_peak_penetration: float  # m (nan: no balanced pose)
    loaded_end_a: float  # N
    loaded_end_b: float  # N


def row(slices: int) -> Row:
    aligned = contact_at(slices, ALIGNED_PENETRATION, 0.0)
    edge = contact_at(slices, *EDGE_POSE)
    loaded = contact_at(slices, *balanced_pose(slices)) if slices > 1 else [np.nan] * 4
    return Row(slices, float(jnp.linalg.norm(aligned[0][:3])), float(edge[1]), float(edge[2]), float(edge[3]),
               float(loaded[3]), float(loaded[1]), float(loaded[2]))


def aligned_law() -> float:
    """The whole-length law at the aligned penetration (N)."""
    return float(palmgren_stiffness(LENGTH)) * ALIGNED_PENETRATION**EXPONENT


def errors(rows: list[Row]) -> dict[str, np.ndarray]:
    """Relative errors against the continuum: the aligned force against the whole-length
    law, the edge case's end forces and peak penetration, the loaded case's peak penetration."""
    end_a, end_b = wedge_end_forces(*EDGE_POSE)
    edge_peak, loaded_peak = continuum_peak(*EDGE_POSE), continuum_peak(*continuum_balanced_pose())
    error = lambda values, exact: np.abs(np.asarray(values) - exact) / abs(exact)
    return {"aligned": error([r.aligned_force for r in rows], aligned_law()),
            "edge_end_a": error([r.edge_end_a for r in rows], end_a),
            "edge_end_b": error([r.edge_end_b for r in rows], end_b),
            "edge_peak_penetration": error([r.edge_peak_penetration for r in rows], edge_peak),
            "loaded_peak_penetration": error([r.loaded_peak_penetration for r in rows], loaded_peak)}


def observed_order(slices, error) -> float:
    """Least-squares slope of ``-log(error)`` against ``log(N)``."""
    return float(-np.polyfit(np.log(slices), np.log(error), 1)[0])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slices", type=int, nargs="+", default=list(SLICES))
    args = parser.parse_args(argv)
    rows = [row(n) for n in args.slices]
    error = errors(rows)
    end_a, end_b = wedge_end_forces(*EDGE_POSE)
    pose = continuum_balanced_pose()
    print(f"continuum: edge F_a = {end_a:.6g} N, F_b = {end_b:.6g} N, peak penetration "
          f"{continuum_peak(*EDGE_POSE) * 1e6:.6g} um; loaded pose {pose[0] * 1e6:.6g} um, {pose[1] * 1e3:.6g} mrad, "
          f"peak penetration {continuum_peak(*pose) * 1e6:.6g} um; aligned law {aligned_law():.6g} N\n")
    print("| N | aligned: force error | edge: F_a (N) | F_b (N) | F_a error | F_b error | peak pen. error "
          "| loaded: peak pen. (um) | error | F_a, F_b (N) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for k, r in enumerate(rows):
        print(f"| {r.slices} | {error['aligned'][k]:.1e} | {r.edge_end_a:.3f} | {r.edge_end_b:.3f} | "
              f"{error['edge_end_a'][k]:.2e} | {error['edge_end_b'][k]:.2e} | {error['edge_peak_penetration'][k]:.2e} | "
              f"{r.loaded_peak_penetration * 1e6:.4f} | {error['loaded_peak_penetration'][k]:.2e} | "
              f"{r.loaded_end_a:.2f}, {r.loaded_end_b:.2f} |")
    tail = [k for k, n in enumerate(args.slices) if n >= 5]
    if len(tail) >= 2:
        tail_slices = np.array(args.slices)[tail]
        for name in ("edge_end_a", "edge_end_b", "edge_peak_penetration", "loaded_peak_penetration"):
            print(f"observed order ({name}, N >= 5): {observed_order(tail_slices, error[name][tail]):.2f}")


if __name__ == "__main__":
    main()
