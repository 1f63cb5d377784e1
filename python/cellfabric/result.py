"""The result of one run: the summary and its tables as pandas DataFrames."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd


@dataclass
class Result:
    """Summary numbers (``summary``, a function of the scenario and seed only), tables (``tables``:
    name -> DataFrame), wall-clock figures (``perf``) and the scenario run."""

    summary: dict[str, Any]
    tables: dict[str, pd.DataFrame]
    scenario: dict[str, Any] = field(repr=False)
    perf: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.summary[key]

    @classmethod
    def from_core(cls, summary_json: str, tables_json: str, perf_json: str, scenario: dict) -> Result:
        """Builds a result from the JSON the core returns."""
        tables = {name: pd.DataFrame(columns) for name, columns in json.loads(tables_json).items()}
        summary, perf = json.loads(summary_json), json.loads(perf_json)
        return cls(summary=summary, tables=tables, scenario=scenario, perf=perf)

    def write(self, out_dir: str | Path) -> Path:
        """Writes ``summary.json``, ``perf.json``, ``scenario.json`` and one Parquet file per table into
        ``out_dir``, removing the Parquet tables an earlier run left there."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        # Tables of an earlier run that this one does not write would be read as this run's.
        for stale in out.glob("*.parquet"):
            if stale.stem not in self.tables:
                stale.unlink()
        (out / "summary.json").write_text(json.dumps(self.summary, indent=2) + "\n")
        (out / "perf.json").write_text(json.dumps(self.perf, indent=2) + "\n")
        (out / "scenario.json").write_text(json.dumps(self.scenario, indent=2) + "\n")
        for name, frame in self.tables.items():
            frame.to_parquet(out / f"{name}.parquet", index=False)
        return out
