"""The config reference page, generated from the schemas: ``docs/config.md``.

Regenerate with ``python -m pipelines.config.reference > docs/config.md``; a test
(``tests/pipelines/config/test_reference.py``) regenerates it in memory and fails when the
committed page differs. Every table of the planar mechanism format and of the pipeline
configs is read from its pydantic model (field type, SI unit, default and the field's
``description``), the spatial format's from :class:`pipelines.config.spatial.SpatialConfig`.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Iterator
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from .fields import SIUnit

HEADER = """# Config reference

Generated from the config schemas by `python -m pipelines.config.reference > docs/config.md`
(do not edit by hand; a test fails when this page and the schemas differ). Quantities are
strings with units (`"0.5 mm"`, `"207 GPa"`), converted to the SI unit shown once at load;
plain numbers are dimensionless. Unknown keys are refused. An array of tables (`[[bodies]]`)
is addressed in `--set` and in the pipeline configs' dotted paths by each entry's `name`
(`joints.pin.clearance`). The user guide ([guide.md](guide.md)) explains the tables; the
shipped configs in `configs/` are worked examples.
"""


def _unwrap(annotation: Any) -> tuple[Any, str]:
    """The annotation without ``Annotated`` layers, and the SI unit one of them names."""
    unit = ""
    while typing.get_origin(annotation) is Annotated:
        annotation, *metadata = typing.get_args(annotation)
        unit = unit or next((item.unit for item in metadata if isinstance(item, SIUnit)), "")
    return annotation, unit


def _is_table(annotation: Any) -> bool:
    return inspect.isclass(annotation) and issubclass(annotation, BaseModel)


def _variants(annotation: Any) -> list[Any]:
    annotation, _ = _unwrap(annotation)
    if typing.get_origin(annotation) in (Union, types.UnionType):
        return [_unwrap(arg)[0] for arg in typing.get_args(annotation)]
    return [annotation]


def type_text(annotation: Any) -> tuple[str, str]:
    """``(type, SI unit)`` of a field annotation, in words."""
    annotation, unit = _unwrap(annotation)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Literal:
        return "one of " + ", ".join(f"`{arg}`" for arg in args), ""
    if origin in (Union, types.UnionType):
        parts = [type_text(arg) for arg in args if arg is not type(None)]
        units = [part_unit for _, part_unit in parts if part_unit]
        return " or ".join(text for text, _ in parts), unit or (units[0] if units else "")
    if origin is tuple:
        parts = [type_text(arg) for arg in args]
        units = [part_unit for _, part_unit in parts if part_unit]
        return f"[{', '.join(text for text, _ in parts)}]", unit or (units[0] if units else "")
    if origin is list:
        (item,) = args
        item = _unwrap(item)[0]
        if any(_is_table(variant) for variant in _variants(item)):
            return "array of tables", ""
        text, item_unit = type_text(item)
        return f"list of {text}", unit or item_unit
    if origin is dict:
        value = _unwrap(args[1])[0]
        return ("tables by name" if _is_table(value) else "table"), ""
    if _is_table(annotation):
        return "table", ""
    if annotation is float:
        return ("quantity" if unit else "number"), unit
    names = {int: "integer", str: "string", bool: "boolean", typing.Any: "any"}
    return names.get(annotation, getattr(annotation, "__name__", str(annotation))), unit


def default_text(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    if info.default_factory is not None:
        value = info.default_factory()
    else:
        value = info.default
    if value is PydanticUndefined:
        return "required"
    if isinstance(value, BaseModel):
        return "(table defaults)"
    if value is None:
        return "none"
    if isinstance(value, (list, dict, tuple)) and not value:
        return "empty"
    return f"`{value!r}`" if not isinstance(value, str) else f'`"{value}"`'


def _first_paragraph(text: str | None) -> str:
    return " ".join((inspect.cleandoc(text or "").split("\n\n") or [""])[0].split())


def table_markdown(title: str, model: type[BaseModel]) -> str:
    """One table of keys: key, type, SI unit, default, meaning."""
    lines = [f"### {title}", ""]
    doc = _first_paragraph(model.__doc__)
    if doc:
        lines += [doc, ""]
    lines += ["| key | type | SI unit | default | meaning |", "|---|---|---|---|---|"]
    for name, info in model.model_fields.items():
        text, unit = type_text(info.annotation if not info.metadata else Annotated[(info.annotation, *info.metadata)])
        # a field whose validator accepts more than its stored type says what it accepts
        text, unit = (info.json_schema_extra or {}).get("config_type", (text, unit)) if isinstance(
            info.json_schema_extra, dict) else (text, unit)
        description = " ".join((info.description or "").split())
        lines.append(f"| `{name}` | {text} | {unit} | {default_text(info)} | {description} |")
    return "\n".join(lines) + "\n"


def _children(model: type[BaseModel]) -> Iterator[tuple[str, type[BaseModel], str | None]]:
    """``(key, table model, discriminator value)`` of every nested table of ``model``."""
    for name, info in model.model_fields.items():
        annotation = _unwrap(info.annotation)[0]
        inner = [annotation]
        origin = typing.get_origin(annotation)
        if origin is list:
            inner = [_unwrap(typing.get_args(annotation)[0])[0]]
        elif origin is dict:
            inner = [_unwrap(typing.get_args(annotation)[1])[0]]
        for candidate in inner:
            variants = [v for v in _variants(candidate) if _is_table(v)]
            for variant in variants:
                tag = variant.model_fields.get("type")
                literal = _unwrap(tag.annotation)[0] if tag is not None else None
                value = typing.get_args(literal)[0] if typing.get_origin(literal) is Literal and len(variants) > 1 else None
                yield name, variant, value


def schema_markdown(root: type[BaseModel], prefix: str = "") -> str:
    """Every table reachable from ``root``, depth first, each once per key path."""
    sections, seen = [], set()

    def visit(path: str, model: type[BaseModel], tag: str | None) -> None:
        title = (f"`{path}`" if path else "top level") + (f' with `type = "{tag}"`' if tag else "")
        if (path, model) in seen:
            return
        seen.add((path, model))
        sections.append(table_markdown(title, model))
        for key, child, child_tag in _children(model):
            visit(f"{path}.{key}" if path else key, child, child_tag)

    visit(prefix, root, None)
    return "\n".join(sections)


def reference_markdown() -> str:
    """The whole page."""
    from ..bifurcation.schema import BifurcationConfig
    from ..calibration.schema import CalibrationTable
    from ..design.schema import OptimizeConfig
    from ..sweeping.table import SweepConfig
    from ..wear.schema import WearConfig
    from .mechanism import MechanismConfig
    from .spatial import SpatialConfig

    parts = [
        HEADER,
        "## Planar mechanism files\n\nThe format of `configs/flores_slider_crank.toml` (`dimension = 2`, the default).\n",
        schema_markdown(MechanismConfig),
        "## Spatial mechanism files (`dimension = 3`)\n\nThe format of `configs/flores_slider_crank_3d.toml` "
        "and `configs/spherical_pendulum.toml`; `[materials]`, `[initial]`, `[simulation]` and a body's `flexible` "
        "table are those of the planar format, with three-component vectors. Axes are in the ground frame, points "
        "in each body's frame.\n",
        schema_markdown(SpatialConfig),
        "## Sweep configs\n\n`clearance sweep CONFIG` (`configs/sweep_example.toml`). `[simulation]` keys are "
        "merged over the base mechanism's and validated with it.\n",
        schema_markdown(SweepConfig),
        "## Calibration configs\n\n`clearance calibrate CONFIG` (`configs/calibrate_example.toml`); several records "
        "are `[[data]]` with the same keys.\n",
        schema_markdown(CalibrationTable),
        "## Tolerance-design configs\n\n`clearance optimize CONFIG` (`configs/optimize_example.toml`).\n",
        schema_markdown(OptimizeConfig),
        "## Wear configs\n\n`clearance wear CONFIG` (`configs/wear_flores.toml`; [wear.md](wear.md)). `[simulation]` "
        "keys are merged over the base mechanism's and validated with it.\n",
        schema_markdown(WearConfig),
        "## Bifurcation configs\n\n`clearance bifurcation CONFIG` (`configs/bifurcation_speed.toml`, "
        "`configs/bifurcation_clearance.toml`; [nonlinear.md](nonlinear.md)). `[simulation]` keys are merged over the "
        "base mechanism's and validated with it.\n",
        schema_markdown(BifurcationConfig),
    ]
    return "\n".join(part.rstrip() + "\n" for part in parts)


if __name__ == "__main__":
    print(reference_markdown(), end="")
