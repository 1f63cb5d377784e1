"""``cellfabric show``: the scenario a run would use, every default filled in by the core, as TOML."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cellfabric._core import ScenarioError, effective_scenario
from cellfabric.runner import build, overridden_keys
from cellfabric.scenario import FILE_KEYS, load_scenario, locate, reference_of


def effective(scenario: str | Path | Mapping[str, Any], overrides: Mapping[str, Any] | None = None,
              seed: int | None = None) -> dict[str, Any]:
    """The scenario (a TOML path or a dict) with ``overrides`` and ``seed`` applied, checked as a
    run checks it (``ScenarioError`` naming the key, and where it was set, if it is not valid)
    and completed with the core's defaults. Files it names (a topology, flow sizes) are given
    as absolute paths, so the text runs from any folder."""
    config = load_scenario(scenario, overrides, seed)
    try:
        build(config, overridden_keys(overrides, seed))
    except ScenarioError as error:
        raise locate(error, scenario, overrides, seed) from None
    reference_of(scenario)  # checked as a run checks it; not shown (it is no key of the model)
    shown = json.loads(effective_scenario(json.dumps(config)))
    for section, key in FILE_KEYS:
        table = shown.get(section)
        if isinstance(table, dict) and isinstance(table.get(key), str):
            table[key] = str(Path(table[key]).resolve())
    return shown


def _value(value: Any) -> str:
    """A TOML literal: strings quoted, floats exact (``inf``/``nan`` as TOML has them), arrays and
    inline tables nested."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return ("-inf" if value < 0 else "inf") if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value if v is not None) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items() if v is not None) + " }"
    raise TypeError(f"no TOML form for {value!r}")


def _key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else json.dumps(key)


def to_toml(scenario: Mapping[str, Any]) -> str:
    """The scenario as TOML text: top-level values first, then one ``[section]`` per table (nested
    tables as ``[a.b]``). TOML has no null: a key without a value (an unbounded buffer, a choice
    left to the core) is written as a comment ``# key: not set``."""
    lines: list[str] = []
    _emit(scenario, [], lines)
    return "\n".join(lines).strip() + "\n"


def _emit(table: Mapping[str, Any], path: list[str], lines: list[str]) -> None:
    scalars = {k: v for k, v in table.items() if not isinstance(v, dict)}
    tables = {k: v for k, v in table.items() if isinstance(v, dict)}
    if path and (scalars or not tables):
        lines += ["", f"[{'.'.join(_key(p) for p in path)}]"]
    for key, value in scalars.items():
        lines.append(f"# {key}: not set" if value is None else f"{_key(key)} = {_value(value)}")
    for key, value in tables.items():
        _emit(value, [*path, key], lines)
