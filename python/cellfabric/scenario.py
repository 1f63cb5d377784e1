"""Scenario loading: a TOML file or a dict, plus dotted-key overrides (``traffic.load=0.9``)."""

from __future__ import annotations

import copy
import json
import math
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cellfabric._core import ScenarioError


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


def load_scenario(
    source: str | Path | Mapping[str, Any],
    overrides: Mapping[str, Any] | None = None,
    seed: int | None = None,
) -> dict:
    """Returns the scenario as a dict: read from a TOML file (or copied from a mapping), with
    ``overrides`` (dotted key -> value) and ``seed`` applied. Validation happens in the core."""
    if isinstance(source, Mapping):
        scenario = copy.deepcopy(dict(source))
    else:
        path = Path(source)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ScenarioError(f"scenario file not found: {path}") from None
        except UnicodeDecodeError:
            raise ScenarioError(f"{path}: not a text file (expected UTF-8 TOML)") from None
        except OSError as error:
            raise ScenarioError(f"cannot read scenario file {path}: {error.strerror}") from None
        try:
            scenario = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise ScenarioError(f"{path}: not valid TOML: {error}") from None
        if not scenario:
            raise ScenarioError(
                f"{path}: the scenario is empty (expected at least a design or a section such as [run])"
            )
        _resolve_relative_to(scenario, path.parent)
    for key, value in (overrides or {}).items():
        apply_override(scenario, key, value)
    if seed is not None:
        apply_override(scenario, "run.seed", seed)
    return scenario
