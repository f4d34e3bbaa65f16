"""ADAMS contact (IMPACT + Coulomb friction) parameters for each clearance joint, in ADAMS's
MMKS units (mm, kg, N, s), with the conversions written out. Every clearance joint kind of
both formats is written (:data:`GEOMETRIES`): a planar pin or a spatial cylindrical journal
as a cylinder in a bore, a spherical joint as a ball in a spherical socket; the IMPACT
alternative along the line of centres only where the penetration is the centre distance
minus the clearance (not for a journal that may tilt).

ADAMS's solid-to-solid contact (or the ``IMPACT`` function) takes (MSC ADAMS/Solver ``IMPACT`` and ``CONTACT`` reference):

- ``stiffness`` ``K`` in N/mm^n: ``F = K delta^n`` with ``delta`` in mm, so
  ``K_mm = K_SI / 1000^n`` (e.g. 2.5e8 N/m^1.5 -> 7.9e3 N/mm^1.5;
  :func:`model.contact.stiffness.stiffness_to_adams`),
- ``exponent`` ``n`` (unchanged),
- ``damping`` ``c_max`` in N s/mm (``/1000`` from N s/m, :func:`model.contact.stiffness.damping_to_adams`),
  reached by ``STEP`` at the penetration ``d_max``,
- ``dmax`` ``d_max`` in mm,
- friction ``mu_s``, ``mu_d``, stiction and friction transition velocities ``v_s``,
  ``v_d`` in mm/s.

``c_max`` comes from the coefficient of restitution through the hysteresis damping factor
(Lankarani & Nikravesh 1990, :func:`model.contact.normal.adams_damping_max`)::

    c_max = chi(e) K d_max^n / v_imp,   chi = 3 (1 - e^2) / 4 (Lankarani-Nikravesh)

so IMPACT matches the joint's law at ``delta = d_max`` for impacts at ``v_imp``. A joint
modelled with another hysteresis law (Flores, Hunt-Crossley, ...) uses that law's ``chi``
instead (same energy argument); ``kelvin_voigt`` exports its dashpot ``C_d`` as is and
``hertz`` has no damping. ``c_max`` needs an impact velocity: by default the first impact
velocity of a simulation of the config (``J.first_impact_velocity``); if no impact occurs
(or with ``simulate=False``) :data:`DEFAULT_IMPACT_VELOCITY` is used; the file says which.

``d_max``: the config's ``contact.penetration_max`` when it is given (or the joint is
simulated with ``adams_impact``, which uses it), else the usual start value 0.01 mm
(a common ADAMS starting value for the penetration depth).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import jax

import model
from model.contact.normal import adams_damping_max, hysteresis_factor
from model.contact.stiffness import damping_to_adams, stiffness_to_adams

from ..build import build_mechanism, solver_settings
from ..config import MechanismConfig
from ..errors import ConfigError
from ..io import atomic_path, write_json

MM_PER_M = 1000.0
DEFAULT_IMPACT_VELOCITY = 1.0  # m/s: order of the closing speeds of the benchmark slider-cranks
START_PENETRATION_DEPTH = 1e-5  # m (0.01 mm): a usual starting value of IMPACT's d_max


@dataclass(frozen=True)
class Geometry:
    """How a clearance joint kind maps onto ADAMS contact geometry."""

    inner: str  # the moving solid (placeholder name suffix)
    outer: str  # the hollow one
    description: str
    line_of_centres: bool  # penetration = |centre distance| - c, so IMPACT along DM works


# Every clearance joint kind of both formats: a cylinder in a bore (planar pin, or a spatial
# journal whose tilt the solid contact sees), or a ball in a spherical socket.
GEOMETRIES = {
    "revolute_clearance": Geometry("journal_cylinder", "bearing_bore", "journal cylinder in the bearing bore", True),
    "cylindrical_clearance": Geometry("journal_cylinder", "bearing_bore",
                                      "journal cylinder in the bearing bore over the contact length "
                                      "(the journal may tilt: use the solid contact, not IMPACT along the centres)", False),
    "spherical_clearance": Geometry("ball_sphere", "socket_sphere", "ball in the spherical socket", True),
}


def joint_geometry(config: MechanismConfig, name: str) -> Geometry:
    """The ADAMS geometry of clearance joint ``name``; a kind ADAMS cannot take is refused."""
    kind = next(j for j in config.clearance_joints if j.name == name).type
    if kind not in GEOMETRIES:
        raise ConfigError(config.source, f"joints.{name}.type", f"the ADAMS export has no contact geometry for a {kind} "
                                                               f"joint; it writes {', '.join(GEOMETRIES)}")
    return GEOMETRIES[kind]


@dataclass(frozen=True)
class ImpactVelocity:
    """Closing speed (m/s) used for ``c_max`` per joint and where it came from."""

    value: float
    source: str


def simulated_impact_velocities(config: MechanismConfig) -> dict[str, ImpactVelocity]:
    """First impact velocity per clearance joint from a simulation of ``config`` as given;
    :data:`DEFAULT_IMPACT_VELOCITY` where there is no impact or the solver failed."""
    mechanism = build_mechanism(config)
    settings = solver_settings(config)
    trajectory = jax.jit(model.simulate, static_argnums=1)(mechanism, settings)
    metrics = model.summary_metrics(mechanism, trajectory)
    status = model.result_message(int(trajectory.result))
    velocities = {}
    for name in mechanism.clearance_names:
        speed = float(metrics[f"{name}.first_impact_velocity"])
        time = float(metrics[f"{name}.first_impact_time"])
        if status == "ok" and math.isfinite(speed) and speed > 0:
            velocities[name] = ImpactVelocity(speed, f"first impact in a simulation of the config (t = {time * 1e3:.4g} ms, "
                                                     f"t_end = {settings.t_end * 1e3:.4g} ms)")
        else:
            reason = "no impact in the simulation" if status == "ok" else f"simulation failed ({status})"
            velocities[name] = ImpactVelocity(DEFAULT_IMPACT_VELOCITY, f"default {DEFAULT_IMPACT_VELOCITY:g} m/s ({reason})")
    return velocities


def _penetration_depth(config: MechanismConfig, name: str, contact_model: str) -> tuple[float, str]:
    raw_joint = next(j for j in config.raw.get("joints", []) if j.get("name") == name)
    joint = next(j for j in config.clearance_joints if j.name == name)
    if "penetration_max" in raw_joint.get("contact", {}):
        return joint.contact.penetration_max, "contact.penetration_max of the config"
    if contact_model == "adams_impact":
        return joint.contact.penetration_max, "contact.penetration_max default, as simulated by adams_impact"
    return START_PENETRATION_DEPTH, "the usual 0.01 mm start value; the model's law has no d_max"


def _friction(law) -> dict:
    """ADAMS Coulomb friction equivalent of a :class:`model.contact.friction.FrictionLaw` (SI in, mm/s out)."""
    stiction, dynamic = (float(v) for v in law.velocities)
    mu, mu_static = float(law.coefficient), float(law.static)
    if law.model == "none" or (mu == 0 and mu_static == 0):
        return {"coulomb_friction": "off", "note": "no friction in the model"}
    if law.model == "static_dynamic":
        v_s, v_d, note = stiction, dynamic, "same law as the model (STEP to mu_s at v_s, then to mu_d at v_d)"
    elif law.model == "coulomb_tanh":
        mu_static = mu
        v_s, v_d = stiction, 2.0 * stiction
        note = "approximates mu tanh(v/v0): ADAMS reaches mu_s at v_s = v0 (tanh: 76 %); v_d = 2 v0 (tanh: 96 %)"
    else:  # ambrosio: zero below v0, linear to full at v1
        mu_static = mu
        v_s, v_d = dynamic, 1.5 * dynamic
        note = "approximates Ambrosio's ramp: full friction at v_s = v1; ADAMS needs v_d > v_s, taken 1.5 v1"
    return {
        "coulomb_friction": "on",
        "mu_static": mu_static,
        "mu_dynamic": mu,
        "stiction_transition_velocity_mm_s": v_s * MM_PER_M,
        "friction_transition_velocity_mm_s": v_d * MM_PER_M,
        "stiction_transition_velocity_m_s": v_s,
        "friction_transition_velocity_m_s": v_d,
        "note": note,
    }


def adams_parameters(config: MechanismConfig, impact_velocities: dict[str, ImpactVelocity]) -> dict[str, dict]:
    """Per clearance joint: the ADAMS values (MMKS) and the SI values they came from."""
    mechanism = build_mechanism(config)
    parameters = {}
    for k, name in enumerate(mechanism.clearance_names):
        joint = mechanism.clearance_joints[k]
        law = joint.contact
        stiffness = float(joint.stiffness())
        exponent = float(law.exponent)
        restitution = float(law.restitution)
        depth, depth_source = _penetration_depth(config, name, law.model)
        velocity = impact_velocities[name]
        if law.model == "kelvin_voigt":
            damping = float(law.damping)
            damping_formula = "c_max = C_d, the model's constant dashpot"
        elif law.model == "hertz":
            damping = 0.0
            damping_formula = "c_max = 0: the model's Hertz law is elastic"
        else:
            chi_model = "lankarani_nikravesh" if law.model == "adams_impact" else law.model
            chi = float(hysteresis_factor(chi_model, restitution))
            chi_ln = float(hysteresis_factor("lankarani_nikravesh", restitution))
            ln_damping = float(adams_damping_max(stiffness, exponent, restitution, velocity.value, depth))
            damping = ln_damping * chi / chi_ln if chi_ln > 0 else chi * stiffness * depth**exponent / velocity.value
            damping_formula = (f"c_max = chi K d_max^n / v_imp with chi = {chi:.6g} ({chi_model}, e = {restitution:g}); "
                               "Lankarani & Nikravesh (1990)")
        source = next(j for j in config.clearance_joints if j.name == name)
        geometry = joint_geometry(config, name)
        outer = float(joint.socket_radius if source.type == "spherical_clearance" else joint.bearing_radius)
        parameters[name] = {
            "joint_type": source.type,
            "geometry": geometry.description,
            "journal_body": source.bodies[0],
            "bearing_body": source.bodies[1],
            "bearing_radius_mm": outer * MM_PER_M,
            "journal_radius_mm": (outer - float(joint.clearance)) * MM_PER_M,
            "clearance_mm": float(joint.clearance) * MM_PER_M,
            "contact_model": law.model,
            "restitution": restitution,
            "stiffness_si": stiffness,
            "stiffness_si_unit": f"N/m^{exponent:g}",
            "stiffness": float(stiffness_to_adams(stiffness, exponent)),
            "stiffness_unit": f"N/mm^{exponent:g}",
            "stiffness_conversion": f"K_mm = K_SI / 1000^{exponent:g} = {stiffness:.6g} / {MM_PER_M ** exponent:.6g}",
            "exponent": exponent,
            "damping_si": damping,
            "damping": float(damping_to_adams(damping)),
            "damping_unit": "N*s/mm",
            "damping_conversion": f"{damping_formula}; c_max_mm = c_max_SI / 1000 = {damping:.6g} / 1000",
            "impact_velocity_m_s": velocity.value,
            "impact_velocity_source": velocity.source,
            "dmax": depth * MM_PER_M,
            "dmax_unit": "mm",
            "dmax_si": depth,
            "dmax_source": depth_source,
            "friction": _friction(joint.friction),
        }
    return parameters


def _command(name: str, p: dict) -> list[str]:
    """An ADAMS/View ``contact create`` command (geometry names are placeholders)."""
    lines = [
        "contact create  &",
        f"   contact_name = .model.{name}_contact  &",
        f"   i_geometry_name = .model.{p['journal_body']}.{name}_{GEOMETRIES[p['joint_type']].inner}  &",
        f"   j_geometry_name = .model.{p['bearing_body']}.{name}_{GEOMETRIES[p['joint_type']].outer}  &",
        f"   stiffness = {p['stiffness']:.6E}  &",
        f"   damping = {p['damping']:.6E}  &",
        f"   exponent = {p['exponent']:g}  &",
    ]
    friction = p["friction"]
    if friction["coulomb_friction"] == "on":
        lines += [
            f"   dmax = {p['dmax']:.6g}  &",
            "   coulomb_friction = on  &",
            f"   mu_static = {friction['mu_static']:.6g}  &",
            f"   mu_dynamic = {friction['mu_dynamic']:.6g}  &",
            f"   stiction_transition_velocity = {friction['stiction_transition_velocity_mm_s']:.6g}  &",
            f"   friction_transition_velocity = {friction['friction_transition_velocity_mm_s']:.6g}",
        ]
    else:
        lines += [f"   dmax = {p['dmax']:.6g}  &", "   coulomb_friction = off"]
    return lines


def render_text(config: MechanismConfig, parameters: dict[str, dict]) -> str:
    """The paste-ready text file."""
    out = [
        f"# ADAMS contact parameters for {config.source} ({config.name})",
        "# Units: ADAMS MMKS = mm, kg, N, s.  Written by `clearance export-adams`; every value",
        "# shows its SI origin and conversion.  Geometry names in the commands are placeholders.",
        "",
    ]
    for name, p in parameters.items():
        friction = p["friction"]
        geometry = GEOMETRIES[p["joint_type"]]
        inner, outer = ("ball", "socket") if p["joint_type"] == "spherical_clearance" else ("journal", "bearing")
        out += [
            f"## {p['joint_type']} joint '{name}': {inner} on '{p['journal_body']}' in {outer} on '{p['bearing_body']}'",
            f"#  {outer} radius {p['bearing_radius_mm']:.6g} mm, {inner} radius {p['journal_radius_mm']:.6g} mm, "
            f"radial clearance {p['clearance_mm']:.6g} mm",
            f"#  model law: {p['contact_model']}, restitution e = {p['restitution']:g}",
            f"stiffness   = {p['stiffness']:.6E}  {p['stiffness_unit']}    "
            f"# {p['stiffness_conversion']} ({p['stiffness_si']:.6g} {p['stiffness_si_unit']})",
            f"exponent    = {p['exponent']:g}",
            f"damping     = {p['damping']:.6E}  N*s/mm    # c_max; {p['damping_conversion']} N*s/m",
            f"#             impact velocity v_imp = {p['impact_velocity_m_s']:.6g} m/s: {p['impact_velocity_source']}",
            f"dmax        = {p['dmax']:.6g}  mm    # {p['dmax_si']:.6g} m x 1000; {p['dmax_source']}",
        ]
        if friction["coulomb_friction"] == "on":
            out += [
                f"mu_static   = {friction['mu_static']:.6g}",
                f"mu_dynamic  = {friction['mu_dynamic']:.6g}",
                f"stiction_transition_velocity = {friction['stiction_transition_velocity_mm_s']:.6g}  mm/s    "
                f"# v_s = {friction['stiction_transition_velocity_m_s']:.6g} m/s x 1000",
                f"friction_transition_velocity = {friction['friction_transition_velocity_mm_s']:.6g}  mm/s    "
                f"# v_d = {friction['friction_transition_velocity_m_s']:.6g} m/s x 1000",
                f"#             {friction['note']}",
            ]
        else:
            out.append(f"coulomb_friction = off    # {friction['note']}")
        out += ["", f"# ADAMS/View command (solid-to-solid contact: {geometry.description}):"]
        out += _command(name, p)
        if geometry.line_of_centres:
            out += [
                "",
                "# Alternative: IMPACT function in an SFORCE along the line of centres (markers J at the",
                f"# {inner} centre, B at the {outer} centre; DM = distance, VR = its rate; force > 0 repels):",
                f"#   IMPACT(-DM(J,B), -VR(J,B), -{p['clearance_mm']:.6g}, {p['stiffness']:.6E}, {p['exponent']:g}, "
                f"{p['damping']:.6E}, {p['dmax']:.6g})",
            ]
        out.append("")
    return "\n".join(out)


def write_adams_files(out_dir, config: MechanismConfig, parameters: dict[str, dict]) -> tuple:
    """``adams_contact.txt`` (paste-ready) and ``adams_contact.json``, both written atomically."""
    text_path, json_path = out_dir / "adams_contact.txt", out_dir / "adams_contact.json"
    with atomic_path(text_path) as temporary:
        temporary.write_text(render_text(config, parameters))
    write_json(json_path, {"config": config.source, "units": "MMKS (mm, kg, N, s); *_si keys in SI", "joints": parameters})
    return text_path, json_path

