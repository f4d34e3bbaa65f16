"""The calibration config's tables as pydantic models (``[data]`` or ``[[data]]``, ``[loss]``,
``[[fit]]``, ``[optimizer]``), with one-line errors ``FILE: KEY: message``.

What can be checked without the mechanism and the record is checked here: unknown keys,
types, names of losses, optimisers and scales, positive counts, time and frequency units.
Quantities whose unit depends on the base mechanism (``[[fit]]`` values, ``data.noise``)
stay raw here and are converted by ``setup.py``, which also checks everything that needs
the record (windows inside it, a cutoff below its Nyquist frequency).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from ..errors import ConfigError
from ..units import UnitError, quantity_to_si
from .fit import GRADIENT_MODES, OPTIMIZERS, STRATEGIES
from .loss import LOSS_KINDS
from .parameters import SCALES

AUTO = "auto"


def _si(dimension: str, positive: bool = False):
    """A quantity field (``"6 us"``, or a plain number in SI), stored as a float in SI."""

    def convert(value: Any) -> float:
        try:
            converted = quantity_to_si(value, dimension, plain_number_unit=True)
        except UnitError as error:
            raise PydanticCustomError("quantity", str(error)) from None
        if positive and not converted > 0:
            raise PydanticCustomError("quantity", f"must be positive, got {value!r}")
        return converted

    return Annotated[float, BeforeValidator(convert)]


def _offset(value: Any) -> float | str:
    return AUTO if value == AUTO else _convert_time(value)


def _convert_time(value: Any) -> float:
    try:
        return quantity_to_si(value, "time", plain_number_unit=True)
    except UnitError as error:
        raise PydanticCustomError("quantity", f"{error} (or \"auto\")") from None


Time = _si("time")
PositiveRate = _si("rate", positive=True)
PositiveInt = Annotated[int, Field(strict=True, ge=1)]
PositiveFloat = Annotated[float, Field(gt=0.0, allow_inf_nan=False)]
Offset = Annotated[float | str, BeforeValidator(_offset)]


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CrossFieldError(ValueError):
    """A check across keys of one table; ``key`` is the offending key inside it."""

    def __init__(self, key: str, message: str):
        super().__init__(message)
        self.key = key


class DataTable(_Table):
    """One measured record (``[data]``, or one entry of ``[[data]]``)."""

    name: str | None = None  # [[data]] entries: used in parameter paths data.<name>.time_offset
    path: Annotated[str, Field(min_length=1)]
    time: Annotated[str, Field(min_length=1)] = "t"
    signals: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]
    noise: dict[str, Any] | list[Any] | None = None  # unit of each signal: converted in setup
    weights: dict[str, PositiveFloat] | list[PositiveFloat] | None = None
    bias: list[str] = []
    time_offset: Offset = AUTO  # simulation time = record time + offset; "auto": estimated and fitted
    lowpass: PositiveRate | None = None
    lowpass_order: PositiveInt | None = None
    set: dict[str, Any] = {}  # mechanism values for this record only (dotted paths, e.g. a driver's speed)

    @model_validator(mode="after")
    def _consistent(self) -> "DataTable":
        if len(set(self.signals)) != len(self.signals):
            raise CrossFieldError("signals", "a signal is listed twice")
        unknown = [name for name in self.bias if name not in self.signals]
        if unknown:
            raise CrossFieldError("bias", f"expected a list of signals among signals ({', '.join(self.signals)}), got {self.bias!r}")
        if self.lowpass_order is not None and self.lowpass is None:
            raise CrossFieldError("lowpass_order", "given without lowpass (the cutoff frequency)")
        for key in ("noise", "weights"):
            value = getattr(self, key)
            if isinstance(value, list) and len(value) != len(self.signals):
                raise CrossFieldError(key, f"expected {len(self.signals)} values (one per signal), got {len(value)}")
            if isinstance(value, dict):
                for name in value:
                    if name not in self.signals:
                        raise CrossFieldError(f"{key}.{name}", f"not one of signals ({', '.join(self.signals)})")
        return self

    def per_signal(self, key: str) -> dict[str, Any]:
        """``noise`` or ``weights`` as a table by signal name."""
        value = getattr(self, key)
        if value is None:
            return {}
        return dict(zip(self.signals, value)) if isinstance(value, list) else dict(value)


class LossTable(_Table):
    kind: Literal[LOSS_KINDS] = "time"
    windows: Annotated[list[tuple[Time, Time]], Field(min_length=1)] | None = None
    bands: Annotated[int, Field(strict=True, ge=2)] = 24
    max_frequency: PositiveRate | None = None

    @model_validator(mode="after")
    def _applies(self) -> "LossTable":
        for key in ("bands", "max_frequency"):
            if key in self.model_fields_set and self.kind != "spectrum":
                raise CrossFieldError(key, f"applies to kind = \"spectrum\" only (kind is {self.kind!r})")
        for index, (low, high) in enumerate(self.windows or ()):
            if not low < high:
                raise CrossFieldError(f"windows.{index}", f"expected from < to, got [{low:g} s, {high:g} s]")
        return self


class FitEntry(_Table):
    """One fitted quantity; values in the unit of the path in the base (converted in setup)."""

    path: Annotated[str, Field(min_length=1)]
    initial: Any = None
    bounds: tuple[Any, Any] | None = None
    scale: Literal[SCALES] = "linear"


class OptimizerTable(_Table):
    """``[optimizer]``; see ``fit.OptimizerOptions`` for the meaning of each key."""

    name: Literal[OPTIMIZERS] = "levenberg_marquardt"
    steps: PositiveInt = 200
    starts: PositiveInt = 4
    strategy: Literal[STRATEGIES] = "auto"
    learning_rate: PositiveFloat = 0.02
    spread: PositiveFloat = 0.2
    seed: Annotated[int, Field(strict=True, ge=0)] = 0
    tolerance: PositiveFloat | None = None
    patience: PositiveInt | None = None
    gradient: Literal[GRADIENT_MODES] = "auto"


class CalibrationTable(_Table):
    """A calibration config with one record (``[data]``); ``simulation`` is merged into the
    base and validated there."""

    base: str
    name: str | None = None
    description: str | None = None
    data: DataTable
    loss: LossTable = LossTable()
    fit: Annotated[list[FitEntry], Field(min_length=1)]
    optimizer: OptimizerTable = OptimizerTable()
    simulation: dict[str, Any] = {}

    @model_validator(mode="after")
    def _records(self) -> "CalibrationTable":
        if isinstance(self.data, list):  # MultiRecordTable
            names = [entry.name for entry in self.data]
            for index, name in enumerate(names):
                if name is None or not name.strip() or "." in name or name.isdigit():
                    raise CrossFieldError(f"data.{index}.name", f"each [[data]] record needs a name without dots (not a number), got {name!r}")
                if names.count(name) > 1:
                    raise CrossFieldError(f"data.{name}.name", f"two records are named {name!r}")
        else:
            for key in ("name", "set"):
                if key in self.data.model_fields_set:
                    raise CrossFieldError(f"data.{key}", "applies to [[data]] records (several records); a single [data] uses the base and --set")
        paths = [entry.path for entry in self.fit]
        for index, path in enumerate(paths):
            if paths.index(path) != index:
                raise CrossFieldError(f"fit.{index}.path", f"{path!r} is fitted twice")
        return self

    @property
    def records(self) -> list[DataTable]:
        return self.data if isinstance(self.data, list) else [self.data]


class MultiRecordTable(CalibrationTable):
    """A calibration config with several records of one mechanism (``[[data]]``), fitted together."""

    data: Annotated[list[DataTable], Field(min_length=1)]


# --- pydantic errors -> one ConfigError ------------------------------------------------------

TABLES = {"data": DataTable, "loss": LossTable, "fit": FitEntry, "optimizer": OptimizerTable}


def _key(raw: Any, loc: tuple) -> str:
    """The dotted key of an error location; [[data]] entries by their name."""
    parts, node = [], raw
    for item in loc:
        if isinstance(node, list) and isinstance(item, int) and 0 <= item < len(node):
            name = node[item].get("name") if isinstance(node[item], dict) else None
            parts.append(name if isinstance(name, str) and name and parts == ["data"] else str(item))
            node = node[item]
        else:
            parts.append(str(item))
            node = node.get(item) if isinstance(node, dict) else None
    return ".".join(parts)


def _table_model(loc: tuple) -> type[BaseModel]:
    return TABLES.get(str(loc[0]), CalibrationTable) if len(loc) > 1 else CalibrationTable


def _message(error: dict) -> tuple[str, str | None]:
    """A readable message for one pydantic error, and the key a cross-key check names."""
    kind, context, value = error["type"], error.get("ctx") or {}, error.get("input")
    cause = context.get("error")
    if isinstance(cause, CrossFieldError):
        return str(cause), cause.key
    if kind == "extra_forbidden":
        allowed = ", ".join(_table_model(error["loc"]).model_fields)
        return f"unknown key; allowed keys: {allowed}", None
    if kind == "missing":
        return "required key is missing", None
    if kind == "literal_error":
        return f"unknown value {value!r}; expected one of {context.get('expected')}", None
    if kind == "quantity":
        return error["msg"], None
    message = error["msg"].removeprefix("Value error, ")
    return f"{message}, got {value!r}", None


def validate_table(raw: dict, file: str) -> CalibrationTable:
    """The calibration config's own tables, validated; errors as one ConfigError."""
    model = MultiRecordTable if isinstance(raw.get("data"), list) else CalibrationTable
    try:
        return model.model_validate(raw)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        message, cross_key = _message(first)
        key = _key(raw, first["loc"])
        if cross_key is not None:
            # a table's check names a key inside the table; the whole config's check a full key
            key = f"{key}.{cross_key}" if key else cross_key
        raise ConfigError(file, key, message) from None
