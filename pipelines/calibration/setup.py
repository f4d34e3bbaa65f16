"""From a calibration config (``configs/calibrate_example.toml`` format) to a ready problem.

Config sections (validated by the pydantic models of ``schema.py``; unknown keys are
refused; everything but ``base``, the record's ``path``/``signals`` and ``[[fit]]``
``path`` is optional)::

    base = "flores_slider_crank.toml"
    [data]
    path = "measured.csv"          # CSV or parquet, relative to this file's folder
    time = "t"                     # time column (s)
    signals = ["slider.ax"]        # timeseries.parquet column names, SI units
    noise = { "slider.ax" = "300 m/s^2" }  # noise std per signal (default: estimated from the record)
    weights = { "slider.ax" = 1.0 }        # extra weight per signal
    bias = ["slider.ax"]           # signals with an unknown constant offset (profiled out)
    time_offset = "auto"           # simulation time = record time + offset; "auto" (default): estimated and fitted
    lowpass = "5 kHz"              # sensor bandwidth, applied to measured and simulated signals (lowpass_order = 4)
    [loss]
    kind = "time"                  # time | spectrum | peaks
    windows = [["0 ms", "1.5 ms"]] # record-time windows (default: chosen by the continuation)
    bands = 24                     # spectrum: log-spaced bands up to max_frequency (default Nyquist)
    [[fit]]
    path = "joints.pin.contact.restitution"
    initial = 0.6
    bounds = [0.2, 1.0]            # optional (both or none)
    scale = "linear"               # linear | log
    [optimizer]                    # see fit.OptimizerOptions
    name = "levenberg_marquardt"   # levenberg_marquardt | bfgs | lbfgs | adam
    [simulation]                   # merged over the base's [simulation]

Several records of the mechanism (``[[data]]``, each with a ``name`` and its own mechanism
values in ``set``, e.g. ``set = { "drivers.crank.speed" = "3000 rpm" }``) are fitted
together: one loss, shared parameters, a time offset and biases per record.

A fitted mechanism path is set to its initial value before the mechanism is built, so a
base with ``stiffness = "hertz"`` is given a numeric stiffness that the fit can vary.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ..build import ParameterMap, build_mechanism
from ..config import MechanismConfig, load_pipeline_mechanism
from ..errors import ConfigError
from ..units import to_si
from .data import MeasuredRecord
from .fit import OptimizerOptions
from .parameters import FitParameter, ParameterTransform
from .problem import TIME_OFFSET_PATH, CalibrationProblem
from .records import RecordSetup, check_signal_names, load_record_setup
from .schema import AUTO, CalibrationTable, FitEntry, validate_table


@dataclasses.dataclass
class Calibration:
    """Everything a calibration run needs, validated."""

    config_path: Path
    records: tuple[RecordSetup, ...]
    parameters: tuple[FitParameter, ...]
    problem: CalibrationProblem
    options: OptimizerOptions
    loss_kind: str
    windows_given: bool  # loss.windows set in the config (else the whole record)
    gradient_mode: str
    warnings: list[str]
    automatic_offsets: dict[int, int]  # record index -> index of its automatically estimated offset in the parameters

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(p.path for p in self.parameters)

    # --- the single record's values (configs with one [data] record)
    @property
    def record(self) -> MeasuredRecord:
        return self.records[0].record

    @property
    def measured(self):
        return self.records[0].measured

    @property
    def mechanism_config(self) -> MechanismConfig:
        return self.records[0].mechanism_config

    @property
    def windows(self) -> tuple[tuple[float, float], ...]:
        return self.records[0].windows

    @property
    def noise(self) -> dict[str, float]:
        return self.records[0].noise

    @property
    def noise_estimated(self) -> bool:
        return any(r.noise_estimated for r in self.records)

    @property
    def noise_known(self) -> bool:
        return all(r.noise_known for r in self.records)

    @property
    def independent_fraction(self) -> float:
        return min(r.independent_fraction for r in self.records)


def _offset_paths(table: CalibrationTable) -> dict[str, int]:
    """Parameter path of each record's time offset -> record index."""
    if isinstance(table.data, list):
        return {f"data.{record.name}.time_offset": index for index, record in enumerate(table.data)}
    return {TIME_OFFSET_PATH: 0}


def _fit_parameter(entry: FitEntry, where: str, base: MechanismConfig, file: str, offset_record: bool) -> FitParameter:
    """One ``[[fit]]`` entry in SI (mechanism values are converted by the base's own schema)."""
    path = entry.path
    if offset_record:
        def convert(value, key):
            return to_si(value, "time", file, key, plain_number_unit=True)
    else:
        def convert(value, key):
            try:
                return base.with_values({path: value}, source=file).si_value(path)
            except ConfigError as error:
                if error.key == path and error.file == file and "no key" in error.message:
                    raise ConfigError(file, f"{where}.path", f"{path!r} is not a parameter of {base.source}: {error.message}") from None
                detail = "" if error.key == path else f"{error.key}: "
                raise ConfigError(file, key, f"{path} = {value!r} is refused: {detail}{error.message}") from None

    if entry.initial is not None:
        initial = convert(entry.initial, f"{where}.initial")
    elif offset_record:
        initial = None  # the middle of its bounds, or the automatic estimate
    else:
        initial = base.si_value(path)
        if not isinstance(initial, float):
            raise ConfigError(file, f"{where}.initial", f"required: {path} is {initial!r} in the base, not a number")
    if initial is not None and not isinstance(initial, float):
        raise ConfigError(file, f"{where}.initial", f"{path} must be a continuous quantity, got {initial!r}")
    lower = upper = None
    if entry.bounds is not None:
        lower, upper = (convert(b, f"{where}.bounds") for b in entry.bounds)
        if not lower < upper:
            raise ConfigError(file, f"{where}.bounds", f"expected lower < upper, got {list(entry.bounds)!r}")
        if initial is None:
            initial = 0.5 * (lower + upper)
        if not lower <= initial <= upper:
            raise ConfigError(file, f"{where}.initial", f"{entry.initial!r} is outside the bounds {list(entry.bounds)!r}")
    elif offset_record:
        raise ConfigError(file, f"{where}.bounds", "a fitted time offset needs bounds (the record must stay inside the simulation)")
    if entry.scale == "log" and (initial <= 0 or (lower is not None and lower <= 0)):
        raise ConfigError(file, f"{where}.scale", "a log scale needs positive values and bounds")
    return FitParameter(path, float(initial), lower, upper, entry.scale)


def _optimizer_options(table: CalibrationTable, file: str, count: int) -> tuple[OptimizerOptions, str]:
    options = OptimizerOptions(**table.optimizer.model_dump())
    gradient_mode = options.gradient_mode(count)
    if options.name != "adam" and gradient_mode != "forward":
        raise ConfigError(file, "optimizer.gradient", f"{options.name} takes the residual Jacobian by forward mode: use gradient = \"forward\" (or \"auto\")")
    return options, gradient_mode


def _record_config(base: MechanismConfig, values: dict[str, Any], key: str, file: str) -> MechanismConfig:
    """The base with a record's own mechanism values (``set``) and the fitted initial values."""
    if not values:
        return base
    try:
        return base.with_values(values, source=file)
    except ConfigError as error:
        raise ConfigError(file, key, f"refused by the mechanism: {error.key}: {error.message}") from None


@dataclasses.dataclass
class CalibrationConfig:
    """A calibration config validated without its data files: what ``clearance check`` reports."""

    base: MechanismConfig  # the base with the pipeline's [simulation] and --set overrides
    table: CalibrationTable
    parameters: list[FitParameter]  # the [[fit]] entries in SI, in order
    offset_paths: dict[str, int]  # each record's time-offset path -> record index
    record_configs: list[MechanismConfig]  # the mechanism of each record, fitted paths at their initial values
    record_mechanisms: list  # built from record_configs
    record_keys: list[str]  # "data" or "data.<name>"


def check_calibration(path: str | Path, overrides: tuple[str, ...] | list[str] = ()) -> CalibrationConfig:
    """Validate a calibration config and its base as :func:`load_calibration` does, up to
    reading the records: the tables, the fitted paths and values, every record's mechanism
    and signal names."""
    file = str(path)
    pipeline, base = load_pipeline_mechanism(path, overrides)
    table = validate_table(pipeline, file)
    offset_paths = _offset_paths(table)

    parameters = []
    for index, entry in enumerate(table.fit):
        if entry.path.startswith("data.") and entry.path not in offset_paths:
            raise ConfigError(file, f"fit.{index}.path", f"{entry.path!r}: the record values that can be fitted are {', '.join(offset_paths)}")
        parameters.append(_fit_parameter(entry, f"fit.{index}", base, file, entry.path in offset_paths))
    raw_initial = {entry.path: entry.initial if entry.initial is not None else p.initial
                   for entry, p in zip(table.fit, parameters) if entry.path not in offset_paths}

    configs, mechanisms, keys = [], [], []
    for data in table.records:
        key = "data" if data.name is None else f"data.{data.name}"
        for fitted in raw_initial:
            if fitted in data.set:
                raise ConfigError(file, f"{key}.set.{fitted}", "is fitted ([[fit]]): a record cannot fix it")
        config = _record_config(base, dict(data.set), f"{key}.set", file)
        try:
            config = config.with_values(raw_initial, source=file) if raw_initial else config
        except ConfigError as error:
            raise ConfigError(file, "fit", f"the initial values are refused together: {error.key}: {error.message}") from None
        mechanism = build_mechanism(config)
        check_signal_names(data.signals, mechanism, file, f"{key}.signals")
        configs.append(config)
        mechanisms.append(mechanism)
        keys.append(key)
    return CalibrationConfig(base, table, parameters, offset_paths, configs, mechanisms, keys)


def load_calibration(path: str | Path, overrides: tuple[str, ...] | list[str] = ()) -> Calibration:
    """Read and validate a calibration config, its base, and its measured record(s)."""
    file = str(path)
    checked = check_calibration(path, overrides)
    table, offset_paths = checked.table, checked.offset_paths
    parameters = list(checked.parameters)
    options, gradient_mode = _optimizer_options(table, file, len(parameters))
    adjoint = "forward" if gradient_mode == "forward" else "checkpoint"

    records = []
    for index, (data, key, config, mechanism) in enumerate(
            zip(table.records, checked.record_keys, checked.record_configs, checked.record_mechanisms)):
        offset_path = next(p for p, i in offset_paths.items() if i == index)
        fitted = next((p for p in parameters if p.path == offset_path), None)
        records.append(load_record_setup(data, key, data.name, table.loss, config, mechanism, file, adjoint,
                                         None if fitted is None else (fitted.lower, fitted.upper)))

    # --- automatic time offsets: a parameter per record whose offset can vary by a sample or more
    automatic = {}
    for index, record in enumerate(records):
        low, high = record.offset_range
        explicit = any(p.path == record.offset_path for p in parameters)
        if record.offset == AUTO and not explicit:
            if high - low >= record.sample_step:
                automatic[index] = len(parameters)
                parameters.append(FitParameter(record.offset_path, 0.5 * (low + high), low, high, "linear"))
            else:
                record.offset = 0.5 * (low + high)

    mechanism_paths = tuple(p.path for p in parameters if p.path not in offset_paths)
    mechanism_indices = tuple(i for i, p in enumerate(parameters) if p.path not in offset_paths)
    mechanism = records[0].model.mechanism
    for index, parameter in enumerate(parameters):
        if parameter.path not in offset_paths:
            try:
                ParameterMap(mechanism, [parameter.path], source=file)
            except ConfigError as error:
                raise ConfigError(file, f"fit.{index}.path", f"{parameter.path!r}: {error.message}") from None
    models = []
    for record in records:
        offset_index = next((i for i, p in enumerate(parameters) if p.path == record.offset_path), None)
        model = dataclasses.replace(record.model, mechanism_paths=mechanism_paths, mechanism_indices=mechanism_indices,
                                    offset_index=offset_index)
        record.model = model
        models.append(model)
    problem = CalibrationProblem(tuple(models), ParameterTransform(parameters))
    warnings = [warning for record in records for warning in record.record.warnings] + _switching_law_warnings(mechanism, parameters)
    return Calibration(
        config_path=Path(path), records=tuple(records), parameters=tuple(parameters), problem=problem, options=options,
        loss_kind=table.loss.kind, windows_given=table.loss.windows is not None, gradient_mode=gradient_mode,
        warnings=warnings, automatic_offsets=automatic,
    )


# Friction laws with a stiction branch: the friction force switches branches at every slip
# reversal, so the residuals are not smooth in the fitted values near the optimum.
SWITCHING_FRICTION_LAWS = ("static_dynamic",)


def _switching_law_warnings(mechanism, parameters) -> list[str]:
    """A warning per fitted friction value of a law whose linearised intervals are too narrow
    (measured: errors of 1.4 to 12 reported std on the static/dynamic pair; docs/calibration.md)."""
    warnings = []
    for parameter in parameters:
        section, _, rest = parameter.path.partition(".")
        joint, _, key = rest.partition(".")
        if section != "joints" or not key.startswith("friction.") or joint not in mechanism.clearance_names:
            continue
        law = getattr(mechanism.clearance_joints[mechanism.clearance_names.index(joint)], "friction", None)
        if law is not None and law.model in SWITCHING_FRICTION_LAWS:
            warnings.append(f"{parameter.path}: the {law.model} friction law switches between its static and dynamic "
                            "branches at every slip reversal; its linearised interval can be several times too narrow")
    return warnings
