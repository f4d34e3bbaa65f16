"""Validated configs as nested dicts of SI values, each quantity key naming its unit."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ..errors import ConfigError
from .fields import Section


def _summarise(model: Section) -> dict:
    """A model as a nested dict of plain values, quantity keys labelled with their SI unit."""
    summary: dict[str, Any] = {}
    for field_name in type(model).model_fields:
        unit = model.unit_of(field_name)
        label = f"{field_name} [{unit}]" if unit else field_name
        summary[label] = _summarise_value(getattr(model, field_name))
    if getattr(model, "type", None) == "revolute_clearance":
        summary["journal_radius [m]"] = model.journal_radius
    return summary


def _summarise_value(value: Any) -> Any:
    if isinstance(value, Section):
        return _summarise(value)
    if isinstance(value, list) and all(isinstance(item, Section) and hasattr(item, "name") for item in value):
        return {item.name: _summarise(item) for item in value}
    if isinstance(value, dict):
        return {key: _summarise_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_summarise_value(item) for item in value]
    return value


def _model_child(node: Any, segment: str, path: str, source: str) -> Any:
    """One step of :meth:`MechanismConfig.si_value`."""
    if isinstance(node, BaseModel) and segment in type(node).model_fields:
        return getattr(node, segment)
    if isinstance(node, dict) and segment in node:
        return node[segment]
    if isinstance(node, (list, tuple)):
        if segment.isdigit() and int(segment) < len(node):
            return node[int(segment)]
        for item in node:
            if getattr(item, "name", None) == segment:
                return item
    raise ConfigError(source, path, f"no {segment!r} in the validated config")

