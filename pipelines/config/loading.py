"""Loading mechanism and pipeline configs: TOML, ``--set``, merging a pipeline's
``[simulation]`` over its ``base`` mechanism, validation with one-line errors."""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Union

from pydantic import Discriminator, Tag, TypeAdapter, ValidationError

from ..errors import ConfigError
from .fields import union_tag
from .mechanism import MechanismBase, MechanismConfig
from .messages import _attributed, config_error
from .spatial import SpatialConfig
from .paths import OVERRIDE_SOURCE, _apply_overrides, parse_override, set_by_path

# Top-level keys of a mechanism; a --set on a pipeline config starting with one of them
# addresses the base mechanism.
BASE_SECTIONS = ("bodies", "joints", "drivers", "materials", "gravity", "initial", "metrics", "simulation", "loads",
                 "tracked_points")
# The schema of a mechanism file of each ``dimension``.
FORMATS: dict[int, type[MechanismBase]] = {2: MechanismConfig, 3: SpatialConfig}


def _format_tag(raw: Any) -> str:
    dimension = raw.get("dimension", 2) if isinstance(raw, dict) else getattr(raw, "dimension", 2)
    return union_tag(f"dimension {dimension}")


# A mechanism file: the planar or the spatial schema, told apart by ``dimension``.
MECHANISM_FILE = TypeAdapter(Annotated[
    Union[tuple(Annotated[schema, Tag(union_tag(f"dimension {dimension}"))] for dimension, schema in FORMATS.items())],
    Discriminator(_format_tag),
])


def si_value_in_base(
    base: "MechanismConfig", path: str, value: Any, file: str, key: str, require_number: bool = False
) -> Any:
    """The SI value ``path`` takes in ``base`` when set to ``value`` (integers as floats,
    except at a path whose value is an integer count in the base, such as ``slices`` or
    ``segments``: a discrete choice that must stay an integer).

    A value the mechanism refuses is a :class:`ConfigError` naming ``file: key`` (the
    pipeline's key, not the mechanism's); ``require_number`` also refuses a named choice.
    """
    try:
        converted = base.with_values({path: value}, source=file).si_value(path)
    except ConfigError as error:
        where = "" if error.key == path else f"{error.key}: "
        raise ConfigError(file, key, f"{path} = {value!r} is refused: {where}{error.message}") from None
    if isinstance(converted, int) and not isinstance(converted, bool) and not _integer_count(base, path):
        converted = float(converted)
    if require_number and not isinstance(converted, float):
        raise ConfigError(file, key, f"{path} is not a number in the base (got {converted!r})")
    return converted


def _integer_count(base: "MechanismConfig", path: str) -> bool:
    """True when the base holds an integer (not a boolean) at ``path``."""
    try:
        current = base.si_value(path)
    except ConfigError:
        return False
    return isinstance(current, int) and not isinstance(current, bool)


def load_toml(path: str | Path) -> dict:
    """Read a TOML file; a missing file or a syntax error is a :class:`ConfigError`."""
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(str(path), "", "file not found") from None
    except OSError as error:
        raise ConfigError(str(path), "", f"cannot read: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(str(path), "", f"TOML syntax error: {error}") from None



def _validate(raw: dict, source: str, origins: Mapping[str, tuple[str, str]] | None = None,
              si: bool = False) -> MechanismBase:
    """Validate ``raw`` as the schema of its ``dimension``; ``origins`` maps dotted paths that
    came from elsewhere to (file, note); with ``si`` plain numbers are SI values."""
    dimension = raw.get("dimension", 2)
    if dimension not in FORMATS:
        raise ConfigError(str(source), "dimension", f"must be 2 (planar) or 3 (spatial), got {dimension!r}")
    try:
        config = MECHANISM_FILE.validate_python(raw, context={"si": True} if si else None)
    except ValidationError as error:
        raise _attributed(config_error(error, raw, source, FORMATS[dimension]), origins or {}) from None
    config._source = str(source)
    config._raw = copy.deepcopy(raw)
    config._raw_in_si = si
    return config


# ---------------------------------------------------------------------------------------------
# Public loaders
# ---------------------------------------------------------------------------------------------


def validate_si(raw: dict, source: str) -> MechanismBase:
    """Validate a mechanism dict whose plain numbers are SI values (a validated config's
    ``model_dump()`` with values written in); errors name ``source``."""
    return _validate(raw, str(source), si=True)


def mechanism_from_dict(raw: dict, source: str) -> MechanismBase:
    """Validate a raw mechanism dict and convert it to SI; errors name ``source``. A
    ``dimension = 3`` dict gives a :class:`~pipelines.config.spatial.SpatialConfig`."""
    return _validate(raw, str(source))


def load_mechanism(path: str | Path, overrides: Sequence[str] = ()) -> MechanismBase:
    """Load a mechanism TOML file, apply ``--set`` overrides, validate."""
    raw = load_toml(path)
    if "base" in raw:
        raise ConfigError(str(path), "base", "this is a pipeline config (sweep, calibrate, optimize), not a mechanism")
    raw, override_paths = _apply_overrides(raw, overrides)
    origins = {override: (str(path), " (value from --set)") for override in override_paths}
    return _validate(raw, str(path), origins)


def base_path(pipeline_path: str | Path, pipeline_raw: Mapping[str, Any]) -> Path:
    """The mechanism file a pipeline config names with ``base``, relative to its folder."""
    base = pipeline_raw.get("base")
    if not isinstance(base, str) or not base:
        example = 'base = "flores_slider_crank.toml"'
        raise ConfigError(str(pipeline_path), "base", f"expected the mechanism file name, e.g. {example}, got {base!r}")
    return Path(pipeline_path).parent / base


def _routes_to_base(path: str) -> bool:
    return path.split(".", 1)[0] in BASE_SECTIONS


def load_with_base(path: str | Path, overrides: Sequence[str] = ()) -> tuple[dict, dict]:
    """Load a pipeline config and its base mechanism as raw dicts.

    The pipeline's ``[simulation]`` keys are merged over the base's. ``--set`` paths starting
    with a mechanism section (``joints``, ``simulation``, ...) change the base, others the
    pipeline.
    """
    pipeline, base, _ = _load_pipeline_raw(path, overrides)
    return pipeline, base


def _load_pipeline_raw(path: str | Path, overrides: Sequence[str]) -> tuple[dict, dict, dict[str, tuple[str, str]]]:
    """:func:`load_with_base`, also returning which base keys came from elsewhere."""
    pipeline = load_toml(path)
    base = load_toml(base_path(path, pipeline))
    pipeline_simulation = pipeline.get("simulation", {})
    if not isinstance(pipeline_simulation, dict):
        raise ConfigError(str(path), "simulation", "expected a table of simulation keys")
    base = {**base, "simulation": {**base.get("simulation", {}), **pipeline_simulation}}
    origins = {f"simulation.{key}": (str(path), "") for key in pipeline_simulation}
    for expr in overrides:
        override, value = parse_override(expr)
        if _routes_to_base(override):
            table = override.split(".")[0]
            if "." in override and table not in base:  # an optional table the base leaves out
                base = {**base, table: {}}
            base = set_by_path(base, override, value, OVERRIDE_SOURCE)
            origins[override] = (str(path), " (value from --set)")
        else:
            pipeline = set_by_path(pipeline, override, value, OVERRIDE_SOURCE, create_tables=True)
    return pipeline, base, origins


def load_pipeline_mechanism(path: str | Path, overrides: Sequence[str] = ()) -> tuple[dict, MechanismBase]:
    """:func:`load_with_base`, then validate the base mechanism (with the merged [simulation]).

    Errors in keys that came from the pipeline file or from ``--set`` name the pipeline file.
    """
    pipeline, base, origins = _load_pipeline_raw(path, overrides)
    return pipeline, _validate(base, str(base_path(path, pipeline)), origins)

