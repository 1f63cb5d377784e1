"""Scenario loading: a TOML file or a dict, plus dotted-key overrides (``traffic.load=0.9``)."""

from __future__ import annotations

import copy
import json
import math
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cellfabric._core import ScenarioError, Simulation, effective_scenario


def parse_value(text: str) -> Any:
    """Reads an override value as a TOML literal (``0.9``, ``true``, ``[1, 2]``), else as a string."""
    try:
        return tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return text


def parse_assignment(assignment: str) -> tuple[str, Any]:
    """Splits ``key.path=value`` into the key path and the parsed value."""
    key, sep, value = assignment.partition("=")
    if not sep or not key.strip():
        raise ScenarioError(f"--set {assignment}: expected key.path=value")
    return key.strip(), parse_value(value.strip())


def apply_override(scenario: dict, key: str, value: Any) -> None:
    """Sets ``scenario[a][b][c] = value`` for ``key == "a.b.c"``, creating missing tables."""
    parts = key.split(".")
    if any(not p for p in parts):
        raise ScenarioError(f"{key}: expected a dotted key path such as traffic.load")
    table = scenario
    for depth, part in enumerate(parts[:-1]):
        table = table.setdefault(part, {})
        if not isinstance(table, dict):
            prefix = ".".join(parts[: depth + 1])
            raise ScenarioError(f"{key}: {prefix} is a value, not a table")
    table[parts[-1]] = value


def key_line(text: str, key: str) -> int | None:
    """The line (from 1) of a TOML text that sets the dotted ``key``, or the table or inline table
    holding it; None when the text does not set it."""
    table = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if line.startswith("[") and line.endswith("]"):
            table = line.strip("[] ")
            name = table
        elif "=" in line:
            name = ".".join(p for p in (table, line.split("=", 1)[0].strip().replace(" ", "")) if p)
        else:
            continue
        if key == name or key.startswith(name + ".") and "=" in line:
            return number
    return None


def _as_written(value: Any) -> str:
    """An override's value as a user would have written it (``true``, ``nan``, ``"text"``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return repr(value)
    return json.dumps(value)


def locate(error: ScenarioError, source: str | Path | Mapping[str, Any], overrides: Mapping[str, Any] | None,
           seed: int | None) -> ScenarioError:
    """The core's error (``key: message``) with where the key came from: the ``--set`` that gave
    it, the file and line that set it, or, when nothing set it, that its default applies."""
    message = str(error)
    key = message.split(":", 1)[0]
    if " " in key or key == "scenario":
        return error
    if key in (overrides or {}):
        return ScenarioError(f"--set {key}={_as_written(overrides[key])}: {message}")
    if key == "run.seed" and seed is not None:
        return ScenarioError(f"seed {seed}: {message}")
    if not isinstance(source, Mapping):
        text = Path(source).read_text(encoding="utf-8")
        line = key_line(text, key)
        if line is not None:
            return ScenarioError(f"{source}:{line}: {message}")
        return ScenarioError(f"{message} ({key} is not set in {source}: its default applies)")
    return error


def check_finite(scenario: Mapping[str, Any], prefix: str = "") -> None:
    """Refuses a nan or infinite number anywhere in a scenario, naming its key (TOML allows
    them; no key of any design means them)."""
    for name, value in scenario.items():
        key = f"{prefix}{name}"
        if isinstance(value, Mapping):
            check_finite(value, key + ".")
        elif isinstance(value, float) and not math.isfinite(value):
            raise ScenarioError(f"{key}: expected a finite number, got {value}")


# The keys that name files: (section, key).
FILE_KEYS = (("topology", "file"), ("traffic", "flow_sizes"))


def _resolve_relative_to(scenario: dict, folder: Path) -> None:
    """Makes a relative file path in a scenario file (``topology.file``, ``traffic.flow_sizes``)
    relative to the file's folder (paths given with ``--set`` stay relative to the current
    directory)."""
    for section, key in FILE_KEYS:
        table = scenario.get(section)
        if isinstance(table, dict) and isinstance(table.get(key), str):
            file = Path(table[key])
            if not file.is_absolute():
                table[key] = str(folder / file)


def _read(path: Path) -> tuple[str, dict]:
    """A scenario file's text and its TOML, or ``ScenarioError`` saying why it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(f"scenario file not found: {path}") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{path}: not a text file (expected UTF-8 TOML)") from None
    except OSError as error:
        raise ScenarioError(f"cannot read scenario file {path}: {error.strerror}") from None
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ScenarioError(f"{path}: not valid TOML: {error}") from None


# A scenario's top-level table of the paper's numbers: not a model key (see ``reference_of``).
REFERENCE = "reference"


def load_scenario(
    source: str | Path | Mapping[str, Any],
    overrides: Mapping[str, Any] | None = None,
    seed: int | None = None,
) -> dict:
    """Returns the scenario as a dict: read from a TOML file (or copied from a mapping), with
    ``overrides`` (dotted key -> value) and ``seed`` applied. Validation happens in the core. A
    top-level ``[reference]`` table (the paper's numbers, see ``reference_of``) is left out."""
    if isinstance(source, Mapping):
        scenario = copy.deepcopy(dict(source))
    else:
        path = Path(source)
        _, scenario = _read(path)
        if not scenario:
            raise ScenarioError(
                f"{path}: the scenario is empty (expected at least a design or a section such as [run])"
            )
        _resolve_relative_to(scenario, path.parent)
    scenario.pop(REFERENCE, None)
    for key, value in (overrides or {}).items():
        apply_override(scenario, key, value)
    if seed is not None:
        apply_override(scenario, "run.seed", seed)
    return scenario


# The statistics of a distribution in a summary (``latency_cells.p99``, ``fct_us.last``): a
# distribution without samples (and a number not known yet, such as ``reroute_us``) is null
# before a run starts, so its statistics are known by name only.
_STATISTIC = re.compile(r"(mean|min|max|first|last|p\d+)")


def _metric_names(config: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """The dotted names of the numbers the summary of ``config`` reports, and the names of its
    values that are null (distributions without samples), from a run without warm-up finished
    a microsecond in: a window that long makes every rate a number."""
    config = copy.deepcopy(dict(config))
    if "warmup_ns" in json.loads(effective_scenario(json.dumps(config))).get("run", {}):
        apply_override(config, "run.warmup_ns", 0)
    sim = Simulation(json.dumps(config), [])
    sim.advance(1_000_000)
    summary = json.loads(sim.finish()[0])
    names: set[str] = set()
    empty: set[str] = set()

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else k, v)
        elif value is None:
            empty.add(prefix)
        elif not isinstance(value, list | str):
            names.add(prefix)

    walk("", summary)
    return names, empty


def _is_metric(column: str, names: set[str], empty: set[str]) -> bool:
    head, _, statistic = column.rpartition(".")
    if column in names or column in empty:
        return True
    return head in empty and _STATISTIC.fullmatch(statistic) is not None


def _is_key(config: Mapping[str, Any], column: str, value: Any) -> bool:
    """False if the core does not know ``column`` as a key of the scenario (an unknown field, or
    a path through a value); a value it refuses for another reason still makes it a key."""
    table: Any = json.loads(effective_scenario(json.dumps(config)))
    for part in column.split("."):
        table = table.get(part) if isinstance(table, dict) else None
    if isinstance(table, dict):
        return False  # a section, not a key
    trial = copy.deepcopy(dict(config))
    try:
        apply_override(trial, "run.strict", False)
        apply_override(trial, column, value)
        check_finite(trial)
        Simulation(json.dumps(trial), [column])
    except ScenarioError as error:
        key, _, message = str(error).partition(":")
        named = key == column or column.startswith(key + ".")  # the column, or a table on its path
        return not (named and ("unknown field" in message or "is a value, not a table" in message))
    return True


def _scalar(value: Any) -> bool:
    return isinstance(value, bool | int | str) or isinstance(value, float) and math.isfinite(value)


def reference_of(source: str | Path | Mapping[str, Any]) -> dict | None:
    """The scenario's ``[reference]`` table (a file's or a mapping's), checked, or None if it has
    none. A reference holds the paper's numbers for the report: ``source`` (the paper, table or
    figure, section), ``columns`` (keys the scenario can set, e.g. ``traffic.load``, then
    summary metrics by dotted name, e.g. ``latency_cells.p99``) and ``rows`` (one list of values
    per row, one value per column). A reference that is not of this shape, or names a column
    that is neither a key nor a metric, raises ``ScenarioError`` naming ``reference.<what>``."""
    if isinstance(source, Mapping):
        reference, text = source.get(REFERENCE), None
    else:
        text, raw = _read(Path(source))
        reference = raw.get(REFERENCE)
    if reference is None:
        return None

    def fail(what: str, message: str) -> ScenarioError:
        line = key_line(text, what) if text is not None else None
        where = f"{source}:{line}: " if line is not None else (f"{source}: " if text is not None else "")
        return ScenarioError(f"{where}{what}: {message}")

    if not isinstance(reference, Mapping):
        raise fail(REFERENCE, "expected a table of source, columns and rows")
    unknown = sorted(set(reference) - {"source", "columns", "rows"})
    if unknown:
        raise fail(f"{REFERENCE}.{unknown[0]}", "unknown key (expected source, columns and rows)")
    if not isinstance(reference.get("source"), str) or not reference["source"].strip():
        raise fail(f"{REFERENCE}.source", "expected the paper's numbers' source as text "
                   "(the paper, its table or figure and section)")
    columns = reference.get("columns")
    if (not isinstance(columns, list) or not columns
            or not all(isinstance(c, str) and c.strip() for c in columns)):
        raise fail(f"{REFERENCE}.columns", "expected a list of names: keys of the scenario, then "
                   "summary metrics such as latency_cells.p99")
    repeated = next((c for i, c in enumerate(columns) if c in columns[:i]), None)
    if repeated is not None:
        raise fail(f"{REFERENCE}.columns", f"{repeated} is named twice")
    rows = reference.get("rows")
    if not isinstance(rows, list) or not rows:
        raise fail(f"{REFERENCE}.rows", "expected a list of rows, each a list of one value per column")
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, list) or len(row) != len(columns):
            got = f"{len(row)} values" if isinstance(row, list) else "not a list"
            raise fail(f"{REFERENCE}.rows", f"row {number}: expected {len(columns)} values, one per "
                       f"column ({', '.join(columns)}), got {got}")
        bad = next((v for v in row if not _scalar(v)), None)
        if bad is not None:
            raise fail(f"{REFERENCE}.rows", f"row {number}: {bad!r} is not a number, text or true/false")
    config = load_scenario(source)
    config.setdefault("run", {})["strict"] = False
    try:
        names, empty = _metric_names(config)
    except ScenarioError as error:
        raise locate(error, source, None, None) from None
    for index, column in enumerate(columns):
        if not _is_metric(column, names, empty) and not _is_key(config, column, rows[0][index]):
            raise fail(f"{REFERENCE}.columns", f"{column} is neither a key the scenario can set nor "
                       "a metric its summary reports (such as throughput or latency_cells.p99)")
    return {"source": reference["source"], "columns": list(columns), "rows": [list(r) for r in rows]}
