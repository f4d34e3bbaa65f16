"""Quantities with units, converted to SI once at load time.

Config values are strings such as ``"0.5 mm"``, ``"207 GPa"`` or ``"5000 rpm"``; plain numbers
are accepted only where the quantity is dimensionless. One pint registry does the parsing.

A *dimension* is either a name from :data:`SI_UNITS` (``"length"``, ``"pressure"``, ...) or a
unit expression in coherent SI units (``"N/m^1.5"``, see :func:`stiffness_unit`).
"""

from __future__ import annotations

import math
from typing import Any

import pint

from .errors import ConfigError

UREG = pint.UnitRegistry()

# Named dimension -> the coherent SI unit its values are stored in.
SI_UNITS: dict[str, str] = {
    "dimensionless": "",
    "length": "m",
    "mass": "kg",
    "time": "s",
    "angle": "rad",
    "inertia": "kg*m^2",
    "pressure": "Pa",
    "force": "N",
    "torque": "N*m",
    "velocity": "m/s",
    "acceleration": "m/s^2",
    "angular_velocity": "rad/s",
    "damping": "N*s/m",
    "rate": "1/s",
    "viscosity": "Pa*s",
}

_SIGNIFICANT_DIGITS = 15  # rounds away pint's float noise: "10 us" -> 1e-05, not 9.999999999999999e-06
_EXPONENT_TOLERANCE = 1e-9


class UnitError(ValueError):
    """A value that is not a quantity of the expected dimension (the message says why)."""


def stiffness_unit(exponent: float) -> str:
    """The SI unit of a contact stiffness ``K`` in ``F = K delta^exponent``: ``N/m^exponent``."""
    return f"N/m^{exponent:.12g}"


def si_unit(dimension: str) -> str:
    """The coherent SI unit values of ``dimension`` are stored in (``""`` when dimensionless)."""
    return SI_UNITS.get(dimension, dimension)


def quantity_to_si(value: Any, dimension: str, *, plain_number_unit: bool = False) -> float:
    """Convert ``value`` to a float in the SI unit of ``dimension``; :class:`UnitError` if it is not one.

    A plain number is accepted for dimensionless quantities, and for others only when
    ``plain_number_unit`` says it is already in the SI unit.
    """
    unit = si_unit(dimension)
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        example = f'"1.5 {unit}"' if unit else "a number"
        raise UnitError(f"expected a quantity such as {example}, got {value!r}")
    quantity = _parse(value)
    if quantity.unitless and unit:
        if not plain_number_unit:
            raise UnitError(f'missing unit: {value!r} needs a unit of {_describe(unit)}, e.g. "{value} {unit}"')
        magnitude = float(quantity.magnitude)
    else:
        _check_dimension(quantity, value, dimension, unit)
        magnitude = float(quantity.to_base_units().magnitude)
    if not math.isfinite(magnitude):
        raise UnitError(f"{value!r} is not a finite number")
    return float(f"{magnitude:.{_SIGNIFICANT_DIGITS}g}")


def to_si(value: Any, dimension: str, file: str, key: str, *, plain_number_unit: bool = False) -> float:
    """:func:`quantity_to_si`, reporting a bad value as a :class:`ConfigError` naming ``file`` and ``key``."""
    try:
        return quantity_to_si(value, dimension, plain_number_unit=plain_number_unit)
    except UnitError as error:
        raise ConfigError(file, key, str(error)) from None


def _parse(value: int | float | str) -> pint.Quantity:
    """Parse a number or a ``"number unit"`` string into a pint quantity."""
    if not isinstance(value, str):
        return UREG.Quantity(value)
    if not any(character.isdigit() for character in value):
        raise UnitError(f"cannot parse {value!r} as a quantity: no number (expected e.g. \"0.5 mm\")")
    try:
        quantity = UREG.Quantity(value)
    except pint.UndefinedUnitError as error:
        raise UnitError(f"cannot parse {value!r}: unknown unit {', '.join(map(repr, error.args)) or ''}") from None
    except Exception as error:  # pint raises many types for malformed expressions
        raise UnitError(f"cannot parse {value!r} as a quantity ({type(error).__name__})") from None
    if not isinstance(quantity, UREG.Quantity):  # a bare unit name such as "mm" parses to a Unit
        raise UnitError(f"cannot parse {value!r} as a quantity: no number")
    return quantity


def _check_dimension(quantity: pint.Quantity, value: Any, dimension: str, unit: str) -> None:
    """Raise :class:`UnitError` unless ``quantity`` has the dimension of ``unit``.

    pint treats angles as dimensionless, so they are told apart by their base unit (radian).
    """
    expected = UREG.Quantity(1.0, unit) if unit else UREG.Quantity(1.0)
    if not _same_dimensionality(quantity.dimensionality, expected.dimensionality):
        raise UnitError(
            f"wrong dimension: {value!r} is {_describe_quantity(quantity)}, expected {_describe(unit)}"
        )
    if dimension == "dimensionless" and not quantity.to_base_units().unitless:
        raise UnitError(f"{value!r} has units ({quantity.units:~}), expected a plain number")
    if dimension == "angle" and quantity.to_base_units().unitless:
        raise UnitError(f"{value!r} is not an angle, expected a unit such as deg or rad")


def _same_dimensionality(found: Any, expected: Any) -> bool:
    """Compare two pint dimensionalities, allowing float round-off in fractional exponents."""
    names = set(found) | set(expected)
    return all(
        math.isclose(found.get(name, 0.0), expected.get(name, 0.0), rel_tol=0.0, abs_tol=_EXPONENT_TOLERANCE)
        for name in names
    )


def _describe(unit: str) -> str:
    """``"m"`` -> ``"[length] (m)"``; ``""`` -> ``"a plain number"``."""
    if not unit:
        return "a plain number"
    if unit == "rad":
        return "an angle (rad or deg)"
    dimensionality = UREG.Quantity(1.0, unit).dimensionality
    return f"{_format_dimensionality(dimensionality)} ({unit})"


def _describe_quantity(quantity: pint.Quantity) -> str:
    """``5 kg`` -> ``"[mass]"``; a plain number -> ``"a plain number"``."""
    if quantity.dimensionless:
        return "a plain number" if quantity.unitless else f"dimensionless ({quantity.units:~})"
    return _format_dimensionality(quantity.dimensionality)


def _format_dimensionality(dimensionality: Any) -> str:
    """A compact, readable dimensionality, e.g. ``[mass] / [length] ** 0.5 / [time] ** 2``."""
    return str(dimensionality) if dimensionality else "dimensionless"
