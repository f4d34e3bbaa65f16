"""Pydantic validation errors as one :class:`~pipelines.errors.ConfigError` line,
``FILE: KEY: message``, with array entries named by their ``name`` and unknown keys answered
with the allowed ones. Shared by the mechanism schema and every pipeline table's schema
(:func:`config_error` takes the table's root model).
"""

from __future__ import annotations

import difflib
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import ConfigError
from .fields import FieldError


def _dotted_key(raw: Any, loc: Sequence[Any]) -> list[str]:
    """A pydantic error location as dotted-key segments, array entries named by their ``name``."""
    parts: list[str] = []
    node = raw
    for item in loc:
        if isinstance(node, list) and isinstance(item, int) and 0 <= item < len(node):
            entry = node[item]
            name = entry.get("name") if isinstance(entry, dict) else None
            parts.append(name if isinstance(name, str) and name else str(item))
            node = entry
        elif isinstance(node, dict) and item in node:
            parts.append(str(item))
            node = node[item]
        elif isinstance(node, dict) and item == node.get("type"):
            continue  # the tag pydantic inserts for a discriminated union
        elif isinstance(item, str) and item.startswith("(") and item.endswith(")"):
            continue  # the tag of a union told apart by a function (fields.union_tag)
        else:
            parts.append(str(item))
            node = None
    return parts


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The config models an annotation may hold (through Annotated, unions, lists, dicts)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for argument in typing.get_args(annotation) for model in _models_in(argument)]


def _model_at(loc: Sequence[Any], root: type[BaseModel]) -> type[BaseModel] | None:
    """The model class that holds the key at ``loc`` (used to list the allowed keys)."""
    candidates: list[type[BaseModel]] = [root]
    for item in loc:
        owners = [model for model in candidates if item in model.model_fields]
        tagged = [model for model in candidates if _type_tag(model) == item]
        if owners:
            candidates = _models_in(owners[0].model_fields[item].annotation)
        elif tagged:
            candidates = tagged
        # else: an array index or a dict key (a material name): the candidates stay
    return candidates[0] if len(candidates) == 1 else None


def _type_tag(model: type[BaseModel]) -> str | None:
    field = model.model_fields.get("type")
    arguments = typing.get_args(field.annotation) if field is not None else ()
    return arguments[0] if len(arguments) == 1 else None


def _unknown_key_message(loc: Sequence[Any], root: type[BaseModel]) -> str:
    model = _model_at(loc[:-1], root)
    if model is None:
        return "unknown key"
    allowed = list(model.model_fields)
    guess = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
    hint = f"did you mean {guess[0]!r}? " if guess else ""
    return f"unknown key; {hint}allowed keys: {', '.join(allowed)}"


def _error_message(error: Mapping[str, Any], root: type[BaseModel]) -> tuple[str, list[str]]:
    """A readable message for one pydantic error, and key segments to append to its location."""
    kind, context, value = error["type"], error.get("ctx") or {}, error.get("input")
    cause = context.get("error")
    if isinstance(cause, FieldError):
        return str(cause), list(cause.key)
    if kind == "extra_forbidden" and error["loc"][-1] == "lubrication" and "joints" in root.model_fields:
        lubricated = [_type_tag(model) for model in _models_in(root.model_fields["joints"].annotation)
                      if "lubrication" in model.model_fields]
        return f"only a {' or '.join(lubricated)} joint takes a lubrication table", []
    if kind == "extra_forbidden":
        return _unknown_key_message(error["loc"], root), []
    if kind == "missing":
        return "required key is missing", []
    if kind == "literal_error":
        return f"unknown value {value!r}; expected one of {context.get('expected')}", []
    if kind == "union_tag_invalid":
        return f"unknown type {context.get('tag')!r}; expected one of {context.get('expected_tags')}", ["type"]
    if kind == "union_tag_not_found":
        return "required key is missing (it says which kind of entry this is)", ["type"]
    if kind in ("quantity", "bounds", "name", "axis", "message"):  # messages the schemas wrote themselves
        return error["msg"], []
    message = error["msg"].removeprefix("Value error, ")
    return f"{message}, got {value!r}", []


def config_error(error: ValidationError, raw: Any, source: str, root: type[BaseModel]) -> ConfigError:
    """The first validation error of ``root.model_validate(raw)`` as one :class:`ConfigError`
    line naming ``source`` and the dotted key."""
    first = error.errors(include_url=False)[0]
    message, extra_key = _error_message(first, root)
    loc = first["loc"]
    if first["type"] == "missing" and loc and isinstance(loc[-1], int):  # a vector too short: name the vector
        loc = loc[:-1]
        message = f"expected more values (item {first['loc'][-1]} is missing), got {first.get('input')!r}"
    key = ".".join(_dotted_key(raw, loc) + extra_key)
    return ConfigError(source, key, message)


def _attributed(error: ConfigError, origins: Mapping[str, tuple[str, str]]) -> ConfigError:
    """Re-address an error whose key came from elsewhere (``--set``, a pipeline's [simulation])."""
    for path, (file, note) in reversed(list(origins.items())):
        if error.key == path or error.key.startswith(path + "."):
            return ConfigError(file, error.key, error.message + note)
    return error
