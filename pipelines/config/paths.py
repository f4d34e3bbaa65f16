"""Dotted paths into raw config dicts, and ``--set PATH=VALUE`` overrides.

Array entries are addressed by their ``name`` (``joints.pin.contact.restitution``), by the
dotted ``path`` they name (``[[fit]]`` and ``[[sweep.parameters]]`` entries:
``fit.joints.pin.contact.restitution.initial``), or by their position (``gravity.1``,
``fit.0.initial``).
"""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigError

OVERRIDE_SOURCE = "--set"


def parse_override(expr: str) -> tuple[str, Any]:
    """``"joints.pin.clearance=0.25 mm"`` -> ``("joints.pin.clearance", "0.25 mm")``.

    The value is read as a TOML value when it is one (``0.5``, ``[1, 2]``, ``"x"``,
    ``{model = "flores"}``), else kept as the raw string (``0.25 mm``, ``flores``).
    """
    path, separator, text = expr.partition("=")
    path, text = path.strip(), text.strip()
    if not separator:
        raise ConfigError(OVERRIDE_SOURCE, expr, 'expected PATH=VALUE, e.g. --set joints.pin.clearance="0.25 mm"')
    if not path or any(not segment.strip() for segment in path.split(".")):
        raise ConfigError(OVERRIDE_SOURCE, expr, "the path before '=' must be dotted keys such as joints.pin.clearance")
    try:
        return path, tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return path, text


def _split_path(path: str, source: str) -> list[str]:
    segments = path.split(".")
    if not path or any(not segment for segment in segments):
        raise ConfigError(source, path, "malformed path: expected dotted keys such as joints.pin.clearance")
    return segments


def _by_path_key(node: list, segments: Sequence[str]) -> tuple[int, int] | None:
    """``(index, consumed)`` of the entry of ``node`` whose ``path`` value is the longest run of
    ``segments`` joined by dots (a ``[[fit]]`` or ``[[sweep.parameters]]`` entry addressed by
    the dotted path it names), or None."""
    for consumed in range(len(segments), 0, -1):
        wanted = ".".join(segments[:consumed])
        matches = [i for i, entry in enumerate(node) if isinstance(entry, dict) and entry.get("path") == wanted]
        if len(matches) == 1:
            return matches[0], consumed
    return None


def _entry_names(node: list) -> str:
    names = [str(entry.get("name") if entry.get("name") is not None else entry.get("path"))
             for entry in node if isinstance(entry, dict)]
    return ", ".join(names) or "none"


def _raw_child(node: Any, segments: Sequence[str], walked: str, path: str, source: str) -> tuple[Any, Any, int]:
    """Find ``segments[0]`` under ``node``: returns ``(container, key, consumed)`` with
    ``container[key]`` existing; an array entry is found by its position, its ``name`` or the
    dotted ``path`` it names (which consumes as many segments as that path has)."""
    segment = segments[0]
    if isinstance(node, dict):
        if segment in node:
            return node, segment, 1
        known = ", ".join(map(str, node)) or "none"
        raise ConfigError(source, path, f"no key {segment!r} in {walked or 'the top level'} (keys: {known})")
    if isinstance(node, list):
        if segment.isdigit():
            if int(segment) < len(node):
                return node, int(segment), 1
            raise ConfigError(source, path, f"{walked} has {len(node)} entries, no entry {segment}")
        matches = [i for i, entry in enumerate(node) if isinstance(entry, dict) and entry.get("name") == segment]
        if len(matches) == 1:
            return node, matches[0], 1
        by_path = None if matches else _by_path_key(node, segments)
        if by_path is not None:
            return node, by_path[0], by_path[1]
        problem = "several entries are" if matches else "no entry is"
        raise ConfigError(source, path, f"{problem} named {segment!r} in {walked} (entries by name, path or "
                                        f"position 0..{len(node) - 1}: {_entry_names(node)})")
    raise ConfigError(source, path, f"{walked} is a value ({node!r}), not a table or an array")


def _walk(raw: dict, segments: Sequence[str], path: str, source: str) -> Any:
    """The raw value at ``segments`` (a prefix of ``path``, which errors name)."""
    node: Any = raw
    depth = 0
    while depth < len(segments):
        container, key, consumed = _raw_child(node, segments[depth:], ".".join(segments[:depth]), path, source)
        node = container[key]
        depth += consumed
    return node


def get_by_path(raw: dict, path: str, source: str) -> Any:
    """The raw value at a dotted path; :class:`ConfigError` naming the path if it does not exist."""
    return _walk(raw, _split_path(path, source), path, source)


def set_by_path(raw: dict, path: str, value: Any, source: str, create_tables: bool = False) -> dict:
    """A deep copy of ``raw`` with ``value`` at the dotted path.

    Every segment but the last must exist; the last may be a new key of an existing table
    (validation then judges it). Array entries are addressed by position, ``name``, or the
    dotted ``path`` they name (``fit.joints.pin.contact.restitution.initial``,
    ``sweep.parameters.joints.pin.clearance.values``). With ``create_tables``, missing
    tables on the way are created too (a pipeline's optional sections, e.g.
    ``loss.windows`` in a file without ``[loss]``); the pipeline's schema then judges the
    new keys.
    """
    segments = _split_path(path, source)
    result = copy.deepcopy(raw)
    parent: Any = result
    depth = 0
    while depth < len(segments) - 1:
        segment = segments[depth]
        if create_tables and isinstance(parent, dict) and segment not in parent:
            parent[segment] = {}
        container, key, consumed = _raw_child(parent, segments[depth:-1], ".".join(segments[:depth]), path, source)
        parent = container[key]
        depth += consumed
    leaf = segments[-1]
    if isinstance(parent, dict):
        parent[leaf] = copy.deepcopy(value)
    else:
        container, key, _ = _raw_child(parent, [leaf], ".".join(segments[:-1]), path, source)
        container[key] = copy.deepcopy(value)
    return result


def _apply_overrides(raw: dict, overrides: Sequence[str]) -> tuple[dict, list[str]]:
    """Apply ``--set`` expressions; returns the new dict and the overridden paths. A key of
    an optional table the file leaves out (``metrics.skip`` without ``[metrics]``) creates
    the table; the schema then judges its name and keys."""
    paths = []
    for expr in overrides:
        path, value = parse_override(expr)
        table = path.split(".")[0]
        if "." in path and table not in raw:
            raw = {**raw, table: {}}
        raw = set_by_path(raw, path, value, OVERRIDE_SOURCE)
        paths.append(path)
    return raw, paths

