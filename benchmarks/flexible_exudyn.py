"""The flexible-rod slider-crank with ideal pins against Exudyn (an independent code; not a test).

The mechanism of ``configs/flores_flexible.toml`` with its clearance pin made an ideal
revolute joint: crank driven at 5000 rpm, steel rod of 120 mm, section 10 mm x 4 mm, the
rigid model's 0.21 kg spread along it, started at crank angle 0 with the rigid-body
velocity field of every body (the start of ``model.initial_state``). Exudyn (Gerstmayr
2023) models the rod with ``ObjectBeamGeometricallyExact2D`` elements (a geometrically
exact Reissner/Timoshenko beam with rigid-body nodes: axial stiffness ``EA``, shear
``G A / k`` with the shear factor k = 1.2, bending ``E Izz``, mass ``rho A`` and rotary
inertia ``rho Izz`` per length), its damping the same stiffness-proportional ``beta``
(strain-rate damping ``beta EA``, ``beta GA/k``, ``beta E Izz``), integrated by the
generalized-alpha method without numerical damping (spectral radius 1) at a fixed step.
This project's run: ``model.simulate`` with the config's solver and tolerances.

Compared over the run: the rod's mid-chord deflection (the midpoint's signed distance from
the chord of the rod's ends) and the slider's position; the peak and the root mean square
of the difference, against the reference (Exudyn at the largest element count; each
count of this project's model against it, and the smaller Exudyn counts to show that the
reference has converged). Exudyn is an optional benchmark dependency: nothing in ``model``,
``sweep`` or ``pipelines`` imports it.

    python -m benchmarks.flexible_exudyn --case compare --elements 10,20 --exudyn-elements 8,16,32

prints the table and writes ``outputs/benchmarks/flexible_exudyn.json``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time
import tomllib

import jax
import numpy as np

import model
from benchmarks import harness
from pipelines.build import build_mechanism, solver_settings
from pipelines.config.loading import mechanism_from_dict
from pipelines.flexible_outputs import midpoint_deflection

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
CONFIG = REPOSITORY / "configs" / "flores_flexible.toml"
SHEAR_FACTOR = 1.2  # rectangle (the config's section)


def ideal_config(elements: int, damping_ratio: float, t_end: float, output_interval: float):
    """``configs/flores_flexible.toml`` with an ideal pin, ``elements`` elements."""
    raw = tomllib.loads(CONFIG.read_text())
    for joint in raw["joints"]:
        if joint["name"] == "pin":
            for key in [key for key in joint if key not in ("name", "bodies", "points")]:
                joint.pop(key)
            joint["type"] = "revolute"
    rod = next(body for body in raw["bodies"] if body["name"] == "conrod")
    rod["flexible"].update(segments=elements, damping_ratio=damping_ratio)
    raw["simulation"].update(t_end=f"{t_end} s", output_interval=f"{output_interval} s")
    return mechanism_from_dict(raw, str(CONFIG))


def project_run(elements: int, damping_ratio: float, t_end: float, output_interval: float) -> dict:
    config = ideal_config(elements, damping_ratio, t_end, output_interval)
    mechanism = build_mechanism(config)
    settings = solver_settings(config, max_steps=2_000_000)
    start = time.perf_counter()
    trajectory = jax.block_until_ready(jax.jit(model.simulate, static_argnums=1)(mechanism, settings))
    chain = mechanism.beam_chains[0]
    q = np.asarray(trajectory.q)
    slider = mechanism.body_names.index("slider")
    return dict(t=np.asarray(trajectory.t), deflection=np.asarray(midpoint_deflection(q, chain.segments, float(chain.element_length))),
                slider_x=q[:, 3 * slider], seconds=time.perf_counter() - start, steps=int(trajectory.steps),
                result=int(trajectory.result), solver=settings.solver, beta=float(chain.rayleigh_beta()))


def exudyn_run(elements: int, beta: float, t_end: float, output_interval: float, step: float) -> dict:
    import exudyn as exu
    from exudyn.itemInterface import (MarkerBodyPosition, MarkerBodyRigid, MarkerNodeCoordinate, MarkerNodePosition,
                                      NodePointGround, NodeRigidBody2D, ObjectBeamGeometricallyExact2D,
                                      ObjectConnectorCoordinate, ObjectGround, ObjectJointPrismatic2D,
                                      ObjectJointRevolute2D, ObjectRigidBody2D, SensorNode)

    config = ideal_config(10, 0.0, t_end, output_interval)
    steel = config.materials["steel"]
    rod = next(body for body in config.bodies if body.name == "conrod")
    width, height = rod.flexible.section.width, rod.flexible.section.height
    area, izz = width * height, width * height**3 / 12.0
    modulus = steel.youngs_modulus
    shear = modulus / (2.0 * (1.0 + steel.poisson_ratio))
    length, mass = rod.flexible.length, rod.mass
    crank_length = 0.05
    speed = config.drivers[0].speed
    rod_speed = -speed * crank_length / length  # crank angle 0: the rod turns about the slider pin

    system = exu.SystemContainer()
    mbs = system.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    crank_node = mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[crank_length / 2, 0.0, 0.0],
                                             initialVelocities=[0.0, speed * crank_length / 2, speed]))
    crank = mbs.AddObject(ObjectRigidBody2D(mass=0.30, inertia=1.0e-4, nodeNumber=crank_node))
    mbs.AddObject(ObjectJointRevolute2D(markerNumbers=[
        mbs.AddMarker(MarkerBodyPosition(bodyNumber=ground, localPosition=[0.0, 0.0, 0.0])),
        mbs.AddMarker(MarkerBodyPosition(bodyNumber=crank, localPosition=[-crank_length / 2, 0.0, 0.0]))]))
    fixed = mbs.AddNode(NodePointGround(referenceCoordinates=[0.0, 0.0, 0.0]))
    mbs.AddObject(ObjectConnectorCoordinate(  # the driver: the crank's angular velocity held at `speed`
        markerNumbers=[mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=fixed, coordinate=0)),
                       mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=crank_node, coordinate=2))],
        offset=speed, velocityLevel=True))
    nodes = []
    for k in range(elements + 1):
        x = crank_length + k * length / elements
        nodes.append(mbs.AddNode(NodeRigidBody2D(
            referenceCoordinates=[x, 0.0, 0.0],
            initialVelocities=[0.0, speed * crank_length + rod_speed * (x - crank_length), rod_speed])))
    density = mass / (area * length)
    for k in range(elements):
        mbs.AddObject(ObjectBeamGeometricallyExact2D(
            nodeNumbers=[nodes[k], nodes[k + 1]], length=length / elements,
            massPerLength=density * area, crossSectionInertia=density * izz,
            bendingStiffness=modulus * izz, axialStiffness=modulus * area,
            shearStiffness=shear * area / SHEAR_FACTOR, bendingDamping=beta * modulus * izz,
            axialDamping=beta * modulus * area, shearDamping=beta * shear * area / SHEAR_FACTOR))
    mbs.AddObject(ObjectJointRevolute2D(markerNumbers=[
        mbs.AddMarker(MarkerBodyPosition(bodyNumber=crank, localPosition=[crank_length / 2, 0.0, 0.0])),
        mbs.AddMarker(MarkerNodePosition(nodeNumber=nodes[0]))]))
    slider_node = mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[crank_length + length, 0.0, 0.0]))
    slider = mbs.AddObject(ObjectRigidBody2D(mass=0.14, inertia=1.0e-4, nodeNumber=slider_node))
    mbs.AddObject(ObjectJointRevolute2D(markerNumbers=[
        mbs.AddMarker(MarkerNodePosition(nodeNumber=nodes[-1])),
        mbs.AddMarker(MarkerBodyPosition(bodyNumber=slider, localPosition=[0.0, 0.0, 0.0]))]))
    mbs.AddObject(ObjectJointPrismatic2D(
        markerNumbers=[mbs.AddMarker(MarkerBodyRigid(bodyNumber=ground, localPosition=[0.0, 0.0, 0.0])),
                       mbs.AddMarker(MarkerBodyRigid(bodyNumber=slider, localPosition=[0.0, 0.0, 0.0]))],
        axisMarker0=[1.0, 0.0, 0.0], normalMarker1=[0.0, 1.0, 0.0], constrainRotation=True))
    watched = {"first": nodes[0], "last": nodes[-1], "slider": slider_node}
    if elements % 2 == 0:
        watched["middle"] = nodes[elements // 2]
    sensors = {name: mbs.AddSensor(SensorNode(nodeNumber=node, storeInternal=True,
                                              outputVariableType=exu.OutputVariableType.Position))
               for name, node in watched.items()}
    mbs.Assemble()
    settings = exu.SimulationSettings()
    settings.timeIntegration.numberOfSteps = int(round(t_end / step))
    settings.timeIntegration.endTime = t_end
    settings.timeIntegration.generalizedAlpha.spectralRadius = 1.0
    settings.timeIntegration.newton.relativeTolerance = 1e-10
    settings.timeIntegration.verboseMode = 0
    settings.solution.file.write = False
    settings.solution.sensors.writePeriod = output_interval
    start = time.perf_counter()
    mbs.SolveDynamic(settings)
    seconds = time.perf_counter() - start
    data = {name: mbs.GetSensorStoredData(sensor) for name, sensor in sensors.items()}
    t = data["first"][:, 0]
    first, last = data["first"][:, 1:3], data["last"][:, 1:3]
    middle = data["middle"][:, 1:3] if "middle" in data else None
    chord = last - first
    unit = chord / np.linalg.norm(chord, axis=1, keepdims=True)
    arm = middle - first
    deflection = unit[:, 0] * arm[:, 1] - unit[:, 1] * arm[:, 0]  # left of the chord: positive
    return dict(t=t, deflection=deflection, slider_x=data["slider"][:, 1], seconds=seconds)


def differences(run: dict, reference: dict) -> dict:
    """Peak and RMS difference of each signal on the reference's grid (linear interpolation)."""
    result = {}
    for signal in ("deflection", "slider_x"):
        values = np.interp(reference["t"], run["t"], run[signal])
        gap = values - reference[signal]
        result[signal] = dict(peak_difference=float(np.max(np.abs(gap))), rms_difference=float(np.sqrt(np.mean(gap**2))),
                              peak=float(np.max(np.abs(values))))
    return result


def compare(argv=None) -> int:
    """This project's flexible rod (ideal pins) against Exudyn's geometrically exact beam."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", default="10,20", help="this project's element counts")
    parser.add_argument("--exudyn-elements", default="8,16,32", help="Exudyn's (even); the last is the reference")
    parser.add_argument("--damping-ratio", type=float, default=0.02)
    parser.add_argument("--t-end", type=float, default=24e-3, help="s")
    parser.add_argument("--output-interval", type=float, default=1e-5, help="s")
    parser.add_argument("--exudyn-step", type=float, default=2e-7, help="s")
    parser.add_argument("--out", default=str(REPOSITORY / "outputs" / "benchmarks" / "flexible_exudyn.json"))
    args = parser.parse_args(argv)
    ours = {}
    for count in (int(c) for c in args.elements.split(",")):
        ours[count] = project_run(count, args.damping_ratio, args.t_end, args.output_interval)
        print(f"this project, m = {count}: {ours[count]['solver']}, {ours[count]['steps']} steps, result "
              f"{ours[count]['result']}, {ours[count]['seconds']:.0f} s with compile", flush=True)
    beta = next(iter(ours.values()))["beta"]  # beta = 2 zeta / omega_1 of the rod on its supports
    theirs = {}
    for count in (int(c) for c in args.exudyn_elements.split(",")):
        theirs[count] = exudyn_run(count, beta, args.t_end, args.output_interval, args.exudyn_step)
        print(f"Exudyn, m = {count}: {theirs[count]['seconds']:.0f} s", flush=True)
    reference_count = max(theirs)
    reference = theirs[reference_count]
    rows = [dict(code="this project", elements=count, **differences(run, reference)) for count, run in ours.items()]
    rows += [dict(code="Exudyn", elements=count, **differences(run, reference)) for count, run in theirs.items()
             if count != reference_count]
    print(f"\nagainst Exudyn at m = {reference_count} (peak |deflection| {np.max(np.abs(reference['deflection'])) * 1e3:.4f} mm), "
          f"zeta = {args.damping_ratio}, beta = {beta:.3e} s, {args.t_end * 1e3:g} ms\n")
    print("| code | m | peak \\|deflection\\| | deflection: peak, RMS difference | slider x: peak, RMS difference |")
    print("|---|---:|---:|---:|---:|")
    for row in rows:
        d, s = row["deflection"], row["slider_x"]
        print(f"| {row['code']} | {row['elements']} | {d['peak'] * 1e3:.4f} mm | {d['peak_difference'] * 1e6:.2f}, "
              f"{d['rms_difference'] * 1e6:.2f} um | {s['peak_difference'] * 1e6:.3f}, {s['rms_difference'] * 1e6:.3f} um |")
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(dict(arguments=vars(args), beta=beta, reference_elements=reference_count, rows=rows), indent=1))
    return 0


CASES = {"compare": compare}

if __name__ == "__main__":
    raise SystemExit(harness.main(CASES, __doc__))
