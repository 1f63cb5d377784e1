"""The result of one run: the summary and its tables as pandas DataFrames."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from cellfabric.provenance import provenance

# The files a result folder holds besides its Parquet tables.
RESULT_FILES = ("summary.json", "perf.json", "scenario.json", "provenance.json")


@dataclass
class Result:
    """Summary numbers (``summary``, a function of the scenario and seed only), tables (``tables``:
    name -> DataFrame), wall-clock figures (``perf``) and the scenario run."""

    summary: dict[str, Any]
    tables: dict[str, pd.DataFrame]
    scenario: dict[str, Any] = field(repr=False)
    perf: dict[str, Any] = field(default_factory=dict)
    #: True for the partial results of a run stopped early (Ctrl-C).
    interrupted: bool = False
    #: The scenario with every default of its design filled in, as the core read it.
    effective: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def provenance(self) -> dict[str, Any]:
        """Version, source revision, scenario (as given and with its defaults), seed and command
        line of this result."""
        return provenance(self.scenario, self.effective, self.interrupted)

    def __getitem__(self, key: str) -> Any:
        return self.summary[key]

    @classmethod
    def from_core(cls, summary_json: str, tables_json: str, perf_json: str, scenario: dict,
                  interrupted: bool = False, effective: dict | None = None) -> Result:
        """Builds a result from the JSON the core returns."""
        tables = {name: pd.DataFrame(columns) for name, columns in json.loads(tables_json).items()}
        summary, perf = json.loads(summary_json), json.loads(perf_json)
        return cls(summary=summary, tables=tables, scenario=scenario, perf=perf, interrupted=interrupted,
                   effective=effective or {})

    def write(self, out_dir: str | Path) -> Path:
        """Writes ``summary.json``, ``perf.json``, ``scenario.json``, ``provenance.json`` and one
        Parquet file per table into ``out_dir``, each under a temporary name first and then renamed,
        so that no file is ever half written; Parquet tables an earlier run left there are removed."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        # Tables of an earlier run that this one does not write would be read as this run's.
        for stale in out.glob("*.parquet"):
            if stale.stem not in self.tables:
                stale.unlink()
        texts = {"summary.json": self.summary, "perf.json": self.perf, "scenario.json": self.scenario,
                 "provenance.json": self.provenance}
        for name, value in texts.items():
            text = json.dumps(value, indent=2) + "\n"
            _write_atomically(out / name, lambda tmp, text=text: tmp.write_text(text))
        for name, frame in self.tables.items():
            table = out / f"{name}.parquet"
            _write_atomically(table, lambda tmp, frame=frame: frame.to_parquet(tmp, index=False))
        return out


def holds_results(out_dir: str | Path) -> bool:
    """True if ``out_dir`` holds the results of a run."""
    return (Path(out_dir) / "summary.json").exists()


def clear_results(out_dir: str | Path) -> None:
    """Removes a run's results from ``out_dir`` (and nothing else)."""
    out = Path(out_dir)
    for name in RESULT_FILES:
        (out / name).unlink(missing_ok=True)
    for table in out.glob("*.parquet"):
        table.unlink()


def _write_atomically(path: Path, write) -> None:
    """Writes ``path`` through ``write(temporary path)``, then renames it into place."""
    tmp = path.with_name(f".{path.name}.tmp")
    write(tmp)
    os.replace(tmp, path)


class _NotMeasured(dict):
    """Every statistic NaN: a summary's statistics table (``fct_us``) that was not measured."""

    def __missing__(self, key: str) -> float:
        return math.nan


def measured(summary: dict[str, Any], key: str) -> Any:
    """``summary[key]``, or NaN (every statistic NaN, for a table of statistics such as
    ``fct_us``) where the summary has null: a value that was not measured, for tables that
    print it as a number."""
    value = summary[key]
    if value is not None:
        return value
    return _NotMeasured()


def number(summary: dict[str, Any], key: str) -> float:
    """``summary[key]``, or NaN where it is null (not measured)."""
    value = summary[key]
    return math.nan if value is None else value
