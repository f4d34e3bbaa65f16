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

``--case speed`` measures cost at matched accuracy. The reference is this project's model
itself (``--elements``, Tsit5 at rtol 1e-9, atol 1e-12): the question is what a run of that
model costs, so each run has to reproduce its peak |mid-chord deflection| within
``--criterion`` (0.5 %). This project: each solver of ``--solvers`` at the loosest rtol of
``--rtols`` that meets it (one compiled program per solver, the tolerances its arguments),
and ``solver = "auto"`` at the config's rtol. Exudyn: the first element count of
``--exudyn-elements`` that meets it, at the largest step of ``--exudyn-steps`` that does
(the two discretisations converge from opposite sides; docs/BENCHMARKS.md, "Flexible
slider-crank against Exudyn"), and Exudyn at this project's element count beside it. The single
runs are timed interleaved (best of ``--repeats``, wall and CPU seconds); a sweep of
``--points`` damping ratios x Young's moduli runs through ``model.solve_ensemble`` with the
faster solver, compile included, against Exudyn runs at ``--exudyn-points`` spread points
(scaled to the whole sweep by their mean):

    python -m benchmarks.flexible_exudyn --case speed

writes ``outputs/benchmarks/flexible_exudyn_speed.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import time
import tomllib

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import model
from benchmarks import harness
from pipelines.build import build_mechanism, solver_settings
from pipelines.config.loading import mechanism_from_dict
from pipelines.flexible_outputs import midpoint_deflection
from sweep.run import default_lanes

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
CONFIG = REPOSITORY / "configs" / "flores_flexible.toml"
SHEAR_FACTOR = 1.2  # rectangle (the config's section)
MAX_STEPS = 2_000_000


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


def compiled_simulation(mechanism, settings) -> tuple:
    """``model.simulate`` of ``settings`` compiled for ``mechanism`` with the tolerances
    arguments (one program for every ``rtol``): ``(program, wall s, CPU s)`` of the trace and
    compile; ``program(mechanism, rtol, atol)`` returns the trajectory."""
    start, start_cpu = time.perf_counter(), time.process_time()
    program = jax.jit(lambda m, rtol, atol: model.simulate(m, settings, rtol=rtol, atol=atol)).lower(
        mechanism, settings.rtol, settings.atol).compile()
    return program, time.perf_counter() - start, time.process_time() - start_cpu


def project_signals(mechanism, trajectory) -> dict:
    """The compared signals of one trajectory of this project: mid-chord deflection and slider x (m)."""
    chain = mechanism.beam_chains[0]
    q = np.asarray(trajectory.q)
    slider = mechanism.body_names.index("slider")
    return dict(t=np.asarray(trajectory.t), deflection=np.asarray(midpoint_deflection(q, chain.segments, float(chain.element_length))),
                slider_x=q[:, 3 * slider], steps=int(trajectory.steps), result=int(trajectory.result))


def project_run(elements: int, damping_ratio: float, t_end: float, output_interval: float) -> dict:
    config = ideal_config(elements, damping_ratio, t_end, output_interval)
    mechanism = build_mechanism(config)
    settings = solver_settings(config, max_steps=MAX_STEPS)
    start = time.perf_counter()
    program, _, _ = compiled_simulation(mechanism, settings)
    run = project_signals(mechanism, jax.block_until_ready(program(mechanism, settings.rtol, settings.atol)))
    return dict(run, seconds=time.perf_counter() - start, solver=settings.solver,
                beta=float(mechanism.beam_chains[0].rayleigh_beta()))


def exudyn_run(elements: int, beta: float, t_end: float, output_interval: float, step: float,
               modulus: float | None = None) -> dict:
    """Exudyn's run (``modulus``: Young's modulus in Pa, default the config's steel)."""
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
    modulus = steel.youngs_modulus if modulus is None else modulus
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


def peak(run: dict) -> float:
    """Peak |mid-chord deflection| (m) of a run."""
    return float(np.max(np.abs(run["deflection"])))


def project_sweep(mechanism, settings, damping_ratios, moduli, lanes: int) -> dict:
    """Peak |mid-chord deflection| (m) of every point (damping ratio, Young's modulus in Pa)
    through ``model.solve_ensemble`` (refilling lanes), compiled and run: the peaks, step
    counts and results, and the wall and CPU seconds of the compile and of the run."""
    chain = mechanism.beam_chains[0]

    def peaks(mechanism, damping_ratios, moduli):
        points = jax.vmap(lambda zeta, modulus: eqx.tree_at(
            lambda m: (m.beam_chains[0].damping_ratio, m.beam_chains[0].modulus), mechanism, (zeta, modulus)))(
            damping_ratios, moduli)
        solution = model.solve_ensemble(points, settings, lanes)
        deflection = solution.map_points(lambda _, trajectory: jnp.max(jnp.abs(midpoint_deflection(
            trajectory.q, chain.segments, chain.element_length))), points)
        return deflection, solution.steps, solution.result

    arguments = (mechanism, jnp.asarray(damping_ratios), jnp.asarray(moduli))
    start, start_cpu = time.perf_counter(), time.process_time()
    program = jax.jit(peaks).lower(*arguments).compile()
    compile_wall, compile_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    start, start_cpu = time.perf_counter(), time.process_time()
    deflection, steps, result = jax.block_until_ready(program(*arguments))
    return dict(peaks=np.asarray(deflection), steps=np.asarray(steps), result=np.asarray(result),
                compile_wall=compile_wall, compile_cpu=compile_cpu, run_wall=time.perf_counter() - start,
                run_cpu=time.process_time() - start_cpu)


def sweep_against_exudyn(args, config, mechanism, solver: str, rtol: float, exudyn_choice: tuple[int, float],
                         build: tuple[float, float]) -> dict:
    """The sweep of ``--points`` (damping ratio, Young's modulus) points through
    ``model.solve_ensemble`` with ``solver`` at ``rtol``, compile and ``build`` (wall s, CPU
    s of building the mechanism) included, against Exudyn at ``exudyn_choice`` (elements,
    step in s) at ``--exudyn-points`` spread points, half before and half after ours; prints
    the table and returns the record."""
    side = math.isqrt(args.points)
    zetas, factors = (np.linspace(*(float(v) for v in text.split(",")), side)
                      for text in (args.sweep_damping, args.sweep_modulus))
    chain = mechanism.beam_chains[0]
    grid_zeta, grid_modulus = (axis.ravel() for axis in np.meshgrid(zetas, factors * float(chain.modulus), indexing="ij"))
    picked = np.unique(np.linspace(0, side**2 - 1, min(args.exudyn_points, side**2)).round().astype(int))
    exudyn_runs = []

    def exudyn_points(indices):
        for index in indices:
            point_beta = float(eqx.tree_at(lambda c: (c.damping_ratio, c.modulus), chain,
                                           (jnp.asarray(grid_zeta[index]), jnp.asarray(grid_modulus[index]))).rayleigh_beta())
            start, start_cpu = time.perf_counter(), time.process_time()
            run = exudyn_run(exudyn_choice[0], point_beta, args.t_end, args.output_interval, exudyn_choice[1],
                             modulus=float(grid_modulus[index]))
            exudyn_runs.append(dict(index=int(index), wall=time.perf_counter() - start,
                                    cpu=time.process_time() - start_cpu, peak=peak(run)))
            print(f"Exudyn sweep point {index}: {exudyn_runs[-1]['wall']:.1f} s", flush=True)

    exudyn_points(picked[: len(picked) // 2])
    settings = solver_settings(config, solver=solver, rtol=rtol, max_steps=MAX_STEPS)
    lanes = default_lanes(side**2)
    ensemble = project_sweep(mechanism, settings, grid_zeta, grid_modulus, lanes)
    exudyn_points(picked[len(picked) // 2:])
    scale = side**2 / len(exudyn_runs)
    exudyn_wall = scale * sum(r["wall"] for r in exudyn_runs)
    exudyn_cpu = scale * sum(r["cpu"] for r in exudyn_runs)
    ours_wall = build[0] + ensemble["compile_wall"] + ensemble["run_wall"]
    ours_cpu = build[1] + ensemble["compile_cpu"] + ensemble["run_cpu"]
    gaps = [float(ensemble["peaks"][r["index"]] / r["peak"] - 1.0) for r in exudyn_runs]
    sweep = dict(solver=solver, rtol=rtol, lanes=lanes, points=side**2, damping_ratios=zetas.tolist(),
                 modulus_factors=factors.tolist(), exudyn_runs=exudyn_runs, exudyn=(exudyn_wall, exudyn_cpu),
                 ours=(ours_wall, ours_cpu), peak_gaps=gaps, steps=ensemble["steps"].tolist(),
                 results=ensemble["result"].tolist(),
                 ours_parts=dict(compile=(ensemble["compile_wall"], ensemble["compile_cpu"]),
                                 run=(ensemble["run_wall"], ensemble["run_cpu"])))
    print(f"\nsweep: {side} damping ratios {zetas[0]:g}-{zetas[-1]:g} x {side} moduli {factors[0]:g}-{factors[-1]:g} x "
          f"nominal; this project {solver} rtol {rtol:g}, {lanes} lanes, steps {int(ensemble['steps'].min()):,}-"
          f"{int(ensemble['steps'].max()):,}, failed points {int(np.sum(ensemble['result'] != 0))}; Exudyn m = "
          f"{exudyn_choice[0]}, step {exudyn_choice[1]:g} s, {len(exudyn_runs)} runs"
          + ("" if len(exudyn_runs) == side**2 else f" x {scale:g}")
          + f"; peaks at Exudyn's points differ by {min(gaps) * 100:+.2f} to {max(gaps) * 100:+.2f} %\n")
    print("| sweep | compile | run | end to end | end to end / Exudyn's |")
    print("|---|---:|---:|---:|---:|")
    print(f"| this project | {ensemble['compile_wall']:.1f}, {ensemble['compile_cpu']:.1f} | {ensemble['run_wall']:.1f}, "
          f"{ensemble['run_cpu']:.1f} | {ours_wall:.1f}, {ours_cpu:.1f} | {ours_wall / exudyn_wall:.2f}, "
          f"{ours_cpu / exudyn_cpu:.2f} |")
    print(f"| Exudyn | - | {exudyn_wall:.1f}, {exudyn_cpu:.1f} | {exudyn_wall:.1f}, {exudyn_cpu:.1f} | 1 |")
    return sweep


def speed(argv=None) -> int:
    """Cost of one simulation and of a sweep of this project against Exudyn at matched accuracy."""
    parser = argparse.ArgumentParser(description=speed.__doc__)
    parser.add_argument("--elements", type=int, default=20, help="this project's element count")
    parser.add_argument("--damping-ratio", type=float, default=0.02)
    parser.add_argument("--t-end", type=float, default=24e-3, help="s")
    parser.add_argument("--output-interval", type=float, default=1e-5, help="s")
    parser.add_argument("--reference-rtol", type=float, default=1e-9, help="the reference: this project, tsit5")
    parser.add_argument("--reference-atol", type=float, default=1e-12)
    parser.add_argument("--criterion", type=float, default=5e-3, help="peak |deflection| within this fraction of the reference's")
    parser.add_argument("--solvers", default="tsit5,ros34pw2")
    parser.add_argument("--rtols", default="1e-4,1e-5,1e-6", help="tried loosest first (atol: the config's)")
    parser.add_argument("--exudyn-elements", default="20,32,48,64", help="tried in turn (even)")
    parser.add_argument("--exudyn-steps", default="2e-6,1e-6,5e-7", help="s, tried largest first")
    parser.add_argument("--repeats", type=int, default=2, help="timed repeats of the single runs (best taken)")
    parser.add_argument("--points", type=int, default=64, help="sweep points, a square: damping ratios x moduli")
    parser.add_argument("--sweep-damping", default="0.005,0.05", help="first and last damping ratio")
    parser.add_argument("--sweep-modulus", default="0.8,1.2", help="first and last Young's modulus / nominal")
    parser.add_argument("--exudyn-points", type=int, default=4, help="Exudyn runs of the sweep (spread); the rest scaled by their mean")
    parser.add_argument("--out", default=str(REPOSITORY / "outputs" / "benchmarks" / "flexible_exudyn_speed.json"))
    args = parser.parse_args(argv)
    config = ideal_config(args.elements, args.damping_ratio, args.t_end, args.output_interval)
    start, start_cpu = time.perf_counter(), time.process_time()
    mechanism = build_mechanism(config)
    auto = solver_settings(config, max_steps=MAX_STEPS)  # solver = "auto" at the config's rtol
    build_wall, build_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    beta = float(mechanism.beam_chains[0].rayleigh_beta())
    for rtol in (float(r) for r in args.rtols.split(",")):
        print(f'solver = "auto" at rtol {rtol:g}: {solver_settings(config, rtol=rtol).solver}', flush=True)
    programs = {}
    for solver in dict.fromkeys(["tsit5", *args.solvers.split(","), auto.solver]):  # tsit5: the reference
        settings = solver_settings(config, solver=solver, max_steps=MAX_STEPS)
        programs[solver] = (settings, *compiled_simulation(mechanism, settings))
        print(f"compiled {solver}: {programs[solver][2]:.1f} s wall, {programs[solver][3]:.1f} s CPU", flush=True)

    def ours(solver, rtol, atol=None):
        settings, program = programs[solver][:2]
        atol = settings.atol if atol is None else atol
        return lambda: project_signals(mechanism, jax.block_until_ready(program(mechanism, rtol, atol)))

    def theirs(elements, step):
        return lambda: exudyn_run(elements, beta, args.t_end, args.output_interval, step)

    reference = ours("tsit5", args.reference_rtol, args.reference_atol)()
    print(f"reference: this project, m = {args.elements}, tsit5 rtol {args.reference_rtol:g}: peak "
          f"{peak(reference) * 1e3:.4f} mm, {reference['steps']} steps, result {reference['result']}", flush=True)

    attempts, arms = [], {}

    def attempt(code, solver, elements, setting, call):
        run = call()
        gap = peak(run) / peak(reference) - 1.0
        row = dict(code=code, solver=solver, elements=elements, setting=setting, peak=peak(run), gap=gap,
                   meets=bool(abs(gap) <= args.criterion), steps=run.get("steps", round(args.t_end / setting)),
                   result=run.get("result", 0))
        attempts.append(row)
        print(f"{code} {solver} m = {elements} {setting:g}: peak {row['peak'] * 1e3:.4f} mm ({gap * 100:+.3f} %), "
              f"{row['steps']} steps", flush=True)
        return row

    chosen = {}
    for solver in args.solvers.split(","):
        for rtol in (float(r) for r in args.rtols.split(",")):
            if attempt("this project", solver, args.elements, rtol, ours(solver, rtol))["meets"]:
                chosen[f"this project, {solver}, rtol {rtol:g}"] = (solver, rtol)
                break
    auto_row = next((row for row in attempts if row["solver"] == auto.solver and row["setting"] == auto.rtol), None)
    auto_row = auto_row or attempt("this project", auto.solver, args.elements, auto.rtol, ours(auto.solver, auto.rtol))
    exudyn_choice = None
    for elements in (int(e) for e in args.exudyn_elements.split(",")):
        for step in (float(h) for h in args.exudyn_steps.split(",")):
            if attempt("Exudyn", "generalized-alpha", elements, step, theirs(elements, step))["meets"]:
                exudyn_choice = (elements, step)
                break
        if exudyn_choice:
            break
    compiled = {}  # arm -> (wall s, CPU s) of its build and compile
    for name, (solver, rtol) in [*chosen.items(),
                                 (f"this project, auto = {auto.solver}, rtol {auto.rtol:g}", (auto.solver, auto.rtol))]:
        arms[name] = ours(solver, rtol)
        compiled[name] = (build_wall + programs[solver][2], build_cpu + programs[solver][3])
    exudyn_same = (args.elements, max(float(h) for h in args.exudyn_steps.split(",")))
    for elements, step in dict.fromkeys([exudyn_same] + ([exudyn_choice] if exudyn_choice else [])):
        arms[f"Exudyn, m = {elements}, step {step:g} s"] = theirs(elements, step)
    timings = harness.interleaved(arms, args.repeats, warmup=0)
    exudyn_key = f"Exudyn, m = {exudyn_choice[0]}, step {exudyn_choice[1]:g} s" if exudyn_choice else None

    print(f"\nreference: this project, m = {args.elements}, tsit5 rtol {args.reference_rtol:g}, atol "
          f"{args.reference_atol:g}: peak |deflection| {peak(reference) * 1e3:.4f} mm; criterion "
          f"{args.criterion * 100:g} %; zeta = {args.damping_ratio}, beta = {beta:.3e} s, {args.t_end * 1e3:g} ms\n")
    print("| code | solver | m | rtol or step | peak \\|deflection\\| | against reference | steps | meets |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for row in attempts:
        print(f"| {row['code']} | {row['solver']} | {row['elements']} | {row['setting']:g} | {row['peak'] * 1e3:.4f} mm | "
              f"{row['gap'] * 100:+.3f} % | {row['steps']:,} | {'yes' if row['meets'] else 'no'} |")
    print(f"\nbest of {args.repeats} interleaved repeats (wall s, CPU s); end to end = build and compile + solve; "
          f"ratios to {exudyn_key}\n")
    print("| run | build and compile | solve | end to end | solve / Exudyn's | end to end / Exudyn's |")
    print("|---|---:|---:|---:|---:|---:|")
    rows = []
    for name, timing in timings.items():
        build = compiled.get(name, (0.0, 0.0))
        rows.append(dict(run=name, build_and_compile=build, solve=(timing.best, timing.best_cpu),
                         end_to_end=(timing.best + build[0], timing.best_cpu + build[1]), wall=timing.wall, cpu=timing.cpu))
    base = next((row for row in rows if row["run"] == exudyn_key), None)

    def ratio(row, key):
        return f"{row[key][0] / base[key][0]:.1f}, {row[key][1] / base[key][1]:.1f}" if base else "-"

    for row in rows:
        build = f"{row['build_and_compile'][0]:.1f}, {row['build_and_compile'][1]:.1f}" if row["run"] in compiled else "-"
        print(f"| {row['run']} | {build} | "
              f"{row['solve'][0]:.2f}, {row['solve'][1]:.2f} | {row['end_to_end'][0]:.1f}, {row['end_to_end'][1]:.1f} | "
              f"{ratio(row, 'solve')} | {ratio(row, 'end_to_end')} |")

    sweep = None
    if chosen and exudyn_choice:
        solver, rtol = chosen[min(chosen, key=lambda name: timings[name].best_cpu)]
        sweep = sweep_against_exudyn(args, config, mechanism, solver, rtol, exudyn_choice, (build_wall, build_cpu))
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(dict(arguments=vars(args), beta=beta, reference_peak=peak(reference), attempts=attempts,
                                   auto=dict(solver=auto.solver, rtol=auto.rtol), timings=rows, sweep=sweep), indent=1))
    return 0


CASES = {"compare": compare, "speed": speed}

if __name__ == "__main__":
    raise SystemExit(harness.main(CASES, __doc__))
