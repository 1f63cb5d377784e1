"""``cellfabric reproduce NAME``: the sweep behind one paper table or figure, run end to end into a
folder with its report, our numbers beside the paper's where the paper gives them.

A reproduction is one or more sweeps (parts) of a shipped scenario; each part's sweep goes to
``OUT/<part>`` and the report of the whole to ``OUT/report.html``. Reruns skip finished runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cellfabric._core import ScenarioError
from cellfabric.report import write_report
from cellfabric.sweeps import SweepResult, sweep

PERCENTILES = ("p1", "p50", "p75", "p90", "p95", "p99", "max")
# RIFL's arrival processes: bursts of 1024 bytes on average (seed 004 §V); Bernoulli arrivals
# have no burst size.
RIFL_ARRIVALS = [{"traffic.arrival": "bernoulli"},
                 {"traffic.arrival": "bursty", "traffic.burst_mean_bytes": 1024}]
# RIFL's 3-iteration iSLIP switch against the ideal SAFC switch, which has no iterations.
RIFL_SCHEDULERS = [{"switch.scheduler": "islip", "switch.iterations": 3},
                   {"switch.scheduler": "safc", "switch.iterations": None}]


@dataclass(frozen=True)
class Part:
    """One sweep of a reproduction: a shipped scenario (relative to ``scenarios/``), its grid,
    the overrides fixed at every point, and the paper's numbers (see ``cellfabric.report``)."""

    scenario: str
    grid: dict[str, list[Any]]
    overrides: dict[str, Any] = field(default_factory=dict)
    reference: dict[str, Any] | None = None


@dataclass(frozen=True)
class Reproduction:
    """A paper table or figure: what it is, its parts, and the wall time of the whole on one
    worker (``wall_s``, measured on the 2-core development machine with ``--jobs 1``)."""

    title: str
    parts: dict[str, Part]
    wall_s: float

    @property
    def runs(self) -> int:
        """How many simulator runs the reproduction makes (one seed)."""
        total = 0
        for part in self.parts.values():
            count = 1
            for values in part.grid.values():
                count *= len(values)
            total += count
        return total


def _table1_reference() -> dict[str, Any]:
    """RIFL Table I: latency percentiles in cell times (1/50/75/90/95/99/100)."""
    paper = {
        ("bernoulli", "islip", 0.3): [18, 18, 18, 19, 20, 21, 30],
        ("bernoulli", "safc", 0.3): [18, 18, 18, 19, 19, 20, 30],
        ("bernoulli", "islip", 0.6): [18, 19, 20, 21, 23, 26, 52],
        ("bernoulli", "safc", 0.6): [18, 18, 19, 20, 21, 24, 52],
        ("bernoulli", "islip", 0.9): [18, 25, 32, 43, 54, 84, 348],
        ("bernoulli", "safc", 0.9): [18, 20, 24, 29, 35, 54, 260],
        ("bernoulli", "islip", 1.0): [18, 213, 361, 476, 524, 573, 611],
        ("bernoulli", "safc", 1.0): [18, 65, 129, 219, 283, 401, 574],
        ("bursty", "islip", 0.3): [18, 19, 21, 26, 30, 42, 105],
        ("bursty", "safc", 0.3): [18, 18, 20, 23, 26, 36, 117],
        ("bursty", "islip", 0.6): [18, 20, 25, 33, 40, 63, 325],
        ("bursty", "safc", 0.6): [18, 19, 23, 30, 36, 56, 179],
        ("bursty", "islip", 0.9): [18, 52, 96, 161, 211, 323, 683],
        ("bursty", "safc", 0.9): [18, 26, 43, 75, 105, 184, 440],
        ("bursty", "islip", 1.0): [18, 57, 107, 178, 229, 339, 683],
        ("bursty", "safc", 1.0): [18, 27, 46, 81, 113, 194, 436],
    }
    return {"source": "RIFL Layer 2 (seed 004, §V), Table I: latency percentiles in cell times",
            "columns": ["traffic.arrival", "switch.scheduler", "traffic.load",
                        *(f"latency_cells.{p}" for p in PERCENTILES)],
            "rows": [[*key, *values] for key, values in paper.items()]}


def _clint_reference(channel: str) -> dict[str, Any]:
    """Clint Table 2: mean latency of the bulk (B4) or quick (Q2) channel, µs in the paper, ns here
    (the quick channel's saturated cells have no number)."""
    paper = {  # (load, bursty) -> (bulk, quick) in µs
        (0.1, False): (7.4, 0.1), (0.1, True): (21.0, 1.1),
        (0.3, False): (10.5, 1.0), (0.3, True): (32.9, 2.8),
        (0.5, False): (16.8, None), (0.5, True): (53.5, None),
        (0.7, False): (34.2, None), (0.7, True): (103.7, None),
        (0.9, False): (464.4, None), (0.9, True): (1636.7, None),
    }
    column = 0 if channel == "bulk" else 1
    return {"source": f"Clint (seed 002, §4), Table 2: {channel} channel mean latency (paper in µs, here ns)",
            "columns": ["traffic.load", "traffic.bursty", "latency_ns.mean"],
            "rows": [[load, bursty, values[column] * 1000] for (load, bursty), values in paper.items()
                     if values[column] is not None]}


def _clint_part(channel: str, architecture: str) -> Part:
    return Part(f"clint/{channel}.toml",
                {"traffic.load": [0.1, 0.3, 0.5, 0.7, 0.9], "traffic.bursty": [False, True],
                 "traffic.intervals": ["uniform", "geometric"]},
                {"channel.architecture": architecture}, _clint_reference(channel))


REPRODUCTIONS: dict[str, Reproduction] = {
    "classic-hol": Reproduction(
        "Head-of-line blocking: saturation throughput of a FIFO input-queued switch against its "
        "size (Karol, Hluchyj & Morgan 1987, Table I)",
        {"fifo": Part("classic/fifo.toml", {"switch.ports": [2, 4, 8, 32]}, {"traffic.load": 1.0},
                      {"source": "Karol, Hluchyj & Morgan 1987, Table I (N = 32: the limit 2 - sqrt 2)",
                       "columns": ["switch.ports", "throughput"],
                       "rows": [[2, 0.75], [4, 0.6553], [8, 0.6184], [32, 0.5858]]})},
        wall_s=2.5),
    "rifl-table1": Reproduction(
        "RIFL Layer 2 (seed 004, §V) Table I: latency percentiles of a 32-port RIFL switch, 3-iSLIP "
        "and SAFC, Bernoulli and bursty arrivals, loads 0.3-1.0",
        {"table1": Part("rifl/table1.toml", {"arrival": RIFL_ARRIVALS, "scheduler": RIFL_SCHEDULERS,
                                              "traffic.load": [0.3, 0.6, 0.9, 1.0]},
                        reference=_table1_reference())},
        wall_s=31),
    "rifl-fig5": Reproduction(
        "RIFL Layer 2 Fig. 5: bandwidth utilization against load, fixed 256 B and variable 64-2048 B "
        "packets (the paper gives a plot, no numbers: ours only)",
        {"fig5": Part("rifl/fig5.toml", {
            "arrival": RIFL_ARRIVALS,
            "traffic.packet_bytes_min+traffic.packet_bytes_max": [[256, 256], [64, 2048]],
            "scheduler": RIFL_SCHEDULERS,
            "traffic.load": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]})},
        wall_s=28),
    "clint-table2": Reproduction(
        "Clint (seed 002, §4) Table 2: mean latency of the bulk channel (B4) and the quick channel "
        "(Q2), both readings of §4.1's injection intervals",
        {"bulk": _clint_part("bulk", "B4"), "quick": _clint_part("quick", "Q2")},
        wall_s=8),
}


def listing() -> list[str]:
    """One line per reproduction: name, runs, time and what it reproduces."""
    return [f"{name:<14} {r.runs:>3} runs, about {r.wall_s:g} s on one core: {r.title}"
            for name, r in REPRODUCTIONS.items()]


def reproduce(name: str, out: str | Path, scenarios: str | Path, seeds: int = 1, jobs: int | None = None,
              backend: str = "local", ray_address: str | None = None, progress: bool | None = None,
              overrides: dict[str, Any] | None = None) -> tuple[dict[str, SweepResult], Path]:
    """Runs reproduction ``name`` with the shipped scenarios under ``scenarios`` into ``out`` and
    writes its report; returns each part's sweep and the report's path. ``overrides`` apply to
    every run (after the reproduction's own), e.g. a shorter ``run.duration_ns`` for a quick look."""
    if name not in REPRODUCTIONS:
        raise ScenarioError(f"reproduce {name}: no such reproduction (expected one of "
                            f"{', '.join(REPRODUCTIONS)})")
    reproduction = REPRODUCTIONS[name]
    out = Path(out)
    single = len(reproduction.parts) == 1
    results = {}
    for part_name, part in reproduction.parts.items():
        results[part_name] = sweep(Path(scenarios) / part.scenario, part.grid,
                                   out if single else out / part_name, seeds=seeds,
                                   overrides={**part.overrides, **(overrides or {})}, jobs=jobs,
                                   backend=backend, ray_address=ray_address, progress=progress,
                                   reference=part.reference)
    return results, write_report(out)
