"""Mechanism configs: TOML in, validated SI values out.

Quantities are strings with units (``"0.5 mm"``), converted to SI floats once, at load. Any
value can be overridden by a dotted path in which array entries are addressed by their
``name`` (``joints.pin.contact.restitution``); a plain integer segment addresses an array
entry by its position (``gravity.1``). Every bad input becomes one
:class:`~pipelines.errors.ConfigError` naming the file and the dotted key.

Modules: ``fields`` (quantity field types, the table base class), ``mechanism`` (the
planar mechanism schema and what both formats share), ``flexible`` (flexible bodies and
applied loads), ``spatial`` (the ``dimension = 3`` schema), ``references``
(cross-references between the tables), ``summary`` (SI summaries), ``paths`` (dotted paths
and ``--set``), ``messages`` (pydantic errors as one line, for every schema), ``loading``
(files, ``base`` merging, one validation of either format, told apart by ``dimension``).
The planar tables and the loaders are re-exported here: ``from pipelines.config import X``.
"""

from .fields import (  # noqa: F401
    Acceleration, AccelerationVector, Angle, AngularVelocity, BearingModel, BodyPair, ContactModel, Damping,
    FieldError, FrictionModel, HERTZ_EXPONENT, Inertia, Length, Mass, Modulus, Name, NonNegativeNumber, Number,
    Points, PoissonRatio, PositiveLength, PositiveNumber, PositiveTime, PositiveVelocity, Rate, Restitution, Section,
    SIUnit, SolverName, Torque, TransitionRatios, Vector, Viscosity, ZERO_POINTS, _bounds_text, _check_name,
    _quantity, _transition_ratios, _within_bounds, in_si,
)
from .paths import (  # noqa: F401
    OVERRIDE_SOURCE, _apply_overrides, _raw_child, _split_path, _walk, get_by_path, parse_override, set_by_path,
)
from .messages import (  # noqa: F401
    _attributed, _dotted_key, _error_message, _model_at, _models_in, _type_tag, _unknown_key_message,
    config_error,
)
from .references import (  # noqa: F401
    GROUND, _check_driver_references, _check_joint_references, _check_no_ground_body, _check_unique_names,
    check_references,
)
from .summary import _model_child, _summarise, _summarise_value  # noqa: F401
from .mechanism import (  # noqa: F401
    Body, ConstantSpeedDriver, ConstantTorqueDriver, Contact, Driver, FixedJoint, Flexible, Friction, Initial, Joint,
    Load, Lubrication, Material, MechanismBase, MechanismConfig, PrismaticJoint, RevoluteClearanceJoint, RevoluteJoint,
    Simulation, check_flexible_references,
)
from .spatial import SpatialConfig  # noqa: F401
from .loading import (  # noqa: F401
    BASE_SECTIONS, FORMATS, MECHANISM_FILE, _load_pipeline_raw, _routes_to_base, _validate, base_path, load_mechanism,
    load_pipeline_mechanism,
    load_toml, load_with_base, mechanism_from_dict, si_value_in_base,
)
from ..errors import ConfigError  # noqa: F401
from ..units import UnitError, quantity_to_si, si_unit, stiffness_unit  # noqa: F401
from model.contact.friction import DEFAULT_FRICTION_VELOCITIES, FRICTION_LAWS  # noqa: F401
from model.contact.normal import NORMAL_FORCE_LAWS  # noqa: F401
