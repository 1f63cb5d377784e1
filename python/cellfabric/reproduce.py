"""``cellfabric reproduce NAME``: the sweep behind one paper table or figure, run end to end into a
folder with its report, our numbers beside the paper's where the paper gives them (the
``[reference]`` table of each shipped scenario it runs).

A reproduction is one or more sweeps (parts) of a shipped scenario; each part's sweep goes to
``OUT/<part>`` and the report of the whole to ``OUT/report.html``. Reruns skip finished runs.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from cellfabric._core import ScenarioError
from cellfabric.report import REPORT_FILE, write_report
from cellfabric.sweeps import SweepPlan, SweepResult, plan_sweep, run_planned

# RIFL's arrival processes: bursts of 1024 bytes on average (Shen and Chow 2023, §V); Bernoulli arrivals
# have no burst size.
RIFL_ARRIVALS = [{"traffic.arrival": "bernoulli"},
                 {"traffic.arrival": "bursty", "traffic.burst_mean_bytes": 1024}]
# How a RIFL burst of 1024 bytes on average holds packets of 64-2048 bytes (Shen and Chow 2023, §V,
# does not say): the last packet cut to fit; whole packets, the burst ending with the packet that
# reaches a geometric number of cells (the scenarios' default); a geometric count of whole packets,
# mean 1 (1024 bytes over a 1056-byte mean packet, at least one) or mean 4 (the 4 cells of 1024
# bytes read as 4 packets).
RIFL_BURSTS = [
    {"traffic.burst_packets": "cut", "traffic.burst_mean_bytes": 1024, "traffic.burst_mean_packets": None},
    {"traffic.burst_packets": "whole", "traffic.burst_mean_bytes": 1024, "traffic.burst_mean_packets": None},
    {"traffic.burst_packets": "whole", "traffic.burst_mean_bytes": None, "traffic.burst_mean_packets": 1},
    {"traffic.burst_packets": "whole", "traffic.burst_mean_bytes": None, "traffic.burst_mean_packets": 4},
]
# RIFL's 3-iteration iSLIP switch against the ideal SAFC switch, which has no iterations.
RIFL_SCHEDULERS = [{"switch.scheduler": "islip", "switch.iterations": 3},
                   {"switch.scheduler": "safc", "switch.iterations": None}]
# Stardust's push against pull (§5.2, App. F): the credit loop on, then off.
PUSH_PULL = {"stardust.credits": [True, False]}
# Fig. 10a's hosts: the built-in saturated sources (the fabric alone: no transport key), and the
# paper's unmodified TCP NewReno, started as htsim's runs start theirs (ssthresh = 15, App. G).
STARDUST_HOSTS = [{"host.transport": None, "host.initial_ssthresh_packets": None},
                  {"host.transport": "tcp", "host.initial_ssthresh_packets": 15}]
# Fig. 9's utilizations u (§6.2): the host ports at u times the 183.47 Gbit/s of payload an
# adapter's eight 25G uplinks carry (scenarios/stardust/fig9.toml), 120% the paper's FCI point.
FIG9_HOST_RATES_GBPS = [91.7, 146.8, 174.3, 220.2]
# The baselines' transports in Fig. 10: DCTCP (the file's) and MPTCP over 8 subflows (htsim's -sub 8).
BASELINE_TRANSPORTS = [{"host.transport": "dctcp", "host.subflows": None},
                       {"host.transport": "mptcp", "host.subflows": 8}]
# The Aquarius slides' schemes (Li, Zeng, Hu and Chen, "Scaling Switch-driven Flow Control with
# Aquarius"): Aquarius with 8 queues per port, BFC with as many and with a queue collision (2), PFC,
# and ideal per-flow queues (the upper bound). The baselines ignore Aquarius' thresholds, so every
# point runs with run.strict = false.
AQUARIUS_MICRO_SCHEMES = [
    {"switch.port_kind": "aquarius", "switch.per_flow.queues": 8},
    {"switch.port_kind": "bfc", "switch.per_flow.queues": 8},
    {"switch.port_kind": "bfc", "switch.per_flow.queues": 2},
    {"switch.port_kind": "pfc", "switch.per_flow.queues": 8},
    {"switch.port_kind": "per_flow_ideal", "switch.per_flow.queues": 8},
]
# The realistic-traffic slide's schemes: PFC, BFC with 8, 32 and 128 queues, Aquarius with 8, ideal.
AQUARIUS_FCT_SCHEMES = [
    {"switch.port_kind": "pfc", "switch.per_flow.queues": 8},
    *({"switch.port_kind": "bfc", "switch.per_flow.queues": queues} for queues in (8, 32, 128)),
    {"switch.port_kind": "aquarius", "switch.per_flow.queues": 8},
    {"switch.port_kind": "per_flow_ideal", "switch.per_flow.queues": 8},
]
NOT_STRICT = {"run.strict": False}
# Aquila's Fig. 8: 40 µs with 10 µs of warm-up.
AQUILA_40_US = {"run.duration_ns": 40_000, "run.warmup_ns": 10_000}
# Aquila's Fig. 9: its bulk's 64 KB bursts come to each host about every 50 µs, so the hosts in
# a burst take about that long to reach their steady number: 50 µs of warm-up, 70 measured.
AQUILA_FIG9_LENGTH = {"run.duration_ns": 120_000, "run.warmup_ns": 50_000}

# htsim's length for Fig. 10 (210 ms, goodput over 190-200 ms; nothing after 200 ms changes it).
PAPER_LENGTH = {"run.duration_ns": 200_000_000, "run.warmup_ns": 190_000_000}


@dataclass(frozen=True)
class Part:
    """One sweep of a reproduction: a shipped scenario (relative to ``scenarios/``), its grid and
    the overrides fixed at every point. The paper's numbers are the scenario's own ``[reference]``
    table (see ``cellfabric.scenario.reference_of``), the one place they are written."""

    scenario: str
    grid: dict[str, list[Any]]
    overrides: dict[str, Any] = field(default_factory=dict)


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


def _clint_part(channel: str, architecture: str) -> Part:
    return Part(f"clint/{channel}.toml",
                {"traffic.load": [0.1, 0.3, 0.5, 0.7, 0.9], "traffic.bursty": [False, True],
                 "traffic.intervals": ["uniform", "geometric"]},
                {"channel.architecture": architecture})


# Clint's Fig. 8-10 (Eberle and Gura 2002, §4.2): the loads docs/validation/clint.md tables.
CLINT_BULK_LOADS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95]
CLINT_QUICK_LOADS = [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4]


def _clint_curves(channel: str, architectures: list[str], loads: list[float]) -> Part:
    return Part(f"clint/{channel}.toml", {"channel.architecture": architectures, "traffic.load": loads,
                                          "traffic.bursty": [False, True]})


REPRODUCTIONS: dict[str, Reproduction] = {
    "classic-hol": Reproduction(
        "Head-of-line blocking: saturation throughput of a FIFO input-queued switch against its "
        "size (Karol, Hluchyj & Morgan 1987, Table I)",
        {"fifo": Part("classic/fifo.toml", {"switch.ports": [2, 4, 8, 32]}, {"traffic.load": 1.0})},
        wall_s=2.5),
    "rifl-table1": Reproduction(
        "RIFL Layer 2 (Shen and Chow 2023, §V) Table I: latency percentiles of a 32-port RIFL switch, "
        "3-iSLIP and SAFC, Bernoulli and bursty arrivals, loads 0.3-1.0",
        {"table1": Part("rifl/table1.toml", {"arrival": RIFL_ARRIVALS, "scheduler": RIFL_SCHEDULERS,
                                              "traffic.load": [0.3, 0.6, 0.9, 1.0]})},
        wall_s=31),
    "rifl-fig5": Reproduction(
        "RIFL Layer 2 Fig. 5: bandwidth utilization against load, fixed 256 B and variable 64-2048 B "
        "packets (the paper gives a plot; its text gives one number, 73% for bursty variable packets "
        "at full load), and the four readings of a burst of variable packets at high load",
        {"fig5": Part("rifl/fig5.toml", {
            "arrival": RIFL_ARRIVALS,
            "traffic.packet_bytes_min+traffic.packet_bytes_max": [[256, 256], [64, 2048]],
            "scheduler": RIFL_SCHEDULERS,
            "traffic.load": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]}),
         "bursts": Part("rifl/fig5.toml", {
             "traffic.arrival": ["bursty"],
             "traffic.packet_bytes_min+traffic.packet_bytes_max": [[64, 2048]],
             "burst": RIFL_BURSTS,
             "scheduler": RIFL_SCHEDULERS,
             "traffic.load": [0.5, 0.8, 0.9, 1.0]})},
        wall_s=40),
    "clint-table2": Reproduction(
        "Clint (Eberle and Gura 2002, §4) Table 2: mean latency of the bulk channel (B4) and the quick "
        "channel (Q2), both readings of §4.1's injection intervals",
        {"bulk": _clint_part("bulk", "B4"), "quick": _clint_part("quick", "Q2")},
        wall_s=8),
    "clint-fig8": Reproduction(
        "Clint (Eberle and Gura 2002, §4.2) Fig. 8: mean bulk latency against load, B1 (drop), B2 (back "
        "pressure), B3 (output buffers) and B4 (Clint's global schedule), bursty and not (the figure is "
        "not in the report's text; Table 2 gives B4's numbers)",
        {"fig8": _clint_curves("bulk", ["B1", "B2", "B3", "B4"], CLINT_BULK_LOADS)},
        wall_s=27),
    "clint-fig9": Reproduction(
        "Clint Fig. 9: mean quick latency against load, Q1 (requests dropped by acknowledgments) and Q2 "
        "(interleaved), bursty and not (Table 2 gives Q2's numbers at 0.1 and 0.3)",
        {"fig9": _clint_curves("quick", ["Q1", "Q2"], CLINT_QUICK_LOADS)},
        wall_s=41),
    "clint-fig10": Reproduction(
        "Clint Fig. 10: quick-channel collision rates against load (collision_rate, and "
        "ack_collision_rate for collisions with acknowledgments), Q1 and Q2: Fig. 9's runs, whose "
        "summaries hold both rates (the figure is not in the report's text: no number to compare)",
        {"fig10": _clint_curves("quick", ["Q1", "Q2"], CLINT_QUICK_LOADS)},
        wall_s=41),
    "stardust-fig7": Reproduction(
        "Stardust (Zilberman, Bracha & Schzukin, NSDI '19) §5.2, Fig. 7: two 100GE ports behind "
        "one element, pull (credits) against push; the paper gives pull's 100G per port",
        {"fig7": Part("stardust/push-pull.toml", PUSH_PULL)},
        wall_s=2),
    "stardust-fig9": Reproduction(
        "Stardust §6.2, Fig. 9: the two-tier fabric at a quarter of the paper's radix (64 adapters of "
        "8 uplinks, 48 elements) under all-to-all load at utilization 0.5, 0.8, 0.95 and 1.2 (the "
        "host ports at u x 183.47 Gbit/s), 1 ms; the fabric latency beside the paper's 13 µs bound "
        "at 95%, no cell lost at any load, and 120% offered settling at 0.9 through FCI",
        {"fig9": Part("stardust/fig9.toml", {"link.host_rate_gbps": FIG9_HOST_RATES_GBPS})},
        # One run at 95%: 41 s wall, 1 ms; at 120% 45 s of CPU.
        wall_s=170),
    "stardust-fig10a": Reproduction(
        "Stardust Fig. 10a (§6.3, App. G): the 432-host fat-tree permutation, 512 B cells on 4 KB "
        "credits (the paper's) and 256 B on 2 KB, saturated sources and TCP NewReno hosts, beside "
        "the paper's 94% mean and 96% of flows at 9.44 Gbit/s",
        {"fig10a": Part("stardust/permutation.toml",
                        {"cell.size_bytes+credit.size_bytes": [[512, 4096], [256, 2048]],
                         "hosts": STARDUST_HOSTS})},
        # Scaled from one run of each point cut to 2 ms (and the 512-byte one run whole: 32 s):
        # 512 B 32 s and 26 s with TCP, 256 B 60 s and 72 s.
        wall_s=190),
    "stardust-fig10b": Reproduction(
        "Stardust Fig. 10b (§6.3): flows of the Facebook web-server sizes from one host to another "
        "of the 432-host fat-tree under background load, 40 ms, built-in sources and TCP NewReno "
        "hosts; completion times beside the paper's 1 MB flows under 1 ms and no loss in the fabric",
        {"fig10b": Part("stardust/fct.toml", {"hosts": STARDUST_HOSTS})},
        # One run each on the shared machine under load from other builds: the built-in sources
        # 449 s wall, the TCP hosts 359 s of CPU (an earlier release's TCP run: 96 s on a quiet one).
        wall_s=810),
    "stardust-fig10c": Reproduction(
        "Stardust Fig. 10c (§5.4, §6.3): an incast of N = 1-100 senders of 450 KB into one host of "
        "the 432-host fat-tree, last completion beside the ideal N × 360 µs (the paper plots it "
        "and gives no number) and the paper's no drop in the fabric",
        {"fig10c": Part("stardust/incast.toml", {"traffic.senders": [1, 10, 40, 100]},
                        {"run.duration_ns": 40_000_000})},
        wall_s=2),
    "stardust-fig12": Reproduction(
        "Stardust App. F, Fig. 12: Fig. 7 with port A's traffic in the high class and B's in the "
        "low; pull gives 100G per port, push A 100G and B nothing",
        {"fig12": Part("stardust/push-pull-classes.toml", PUSH_PULL)},
        wall_s=2),
    "stardust-fig3": Reproduction(
        "Stardust §2.3, Fig. 3: the device bandwidth packets of one size need, packed into 256-byte "
        "cells against a cell per packet (a packet switch's bus cycles), with and without Ethernet's "
        "20-byte gap on the host links, measured as the cells' fill beside the paper's x4, 41% and 18%",
        {"fig3": Part("stardust/fig3-packing.toml",
                      {"traffic.packet_bytes": [64, 128, 256, 257, 513, 1025, 1500],
                       "stardust.packing": [True, False], "adapter.host_gap_bytes": [0, 20]})},
        # Measured with --jobs 1 on the shared 2-core machine: about 0.5 s a run.
        wall_s=15),
    "stardust-fig8": Reproduction(
        "Stardust §6.1.1, Fig. 8(a): one 4 x 10GE switch whose element takes a 64-byte cell per port "
        "every 53.33 ns (the NetFPGA's 150 MHz), packed against non-packed cells over packet size, "
        "beside the paper's full line rate at every size",
        {"fig8": Part("stardust/fig8-packing.toml",
                      {"traffic.packet_bytes": [64, 65, 97, 129, 256, 513, 1024, 1500],
                       "stardust.packing": [True, False]})},
        # Measured with --jobs 1 on the shared 2-core machine: about 0.5 s a run.
        wall_s=8),
    "baselines-fig10": Reproduction(
        "Stardust Fig. 10 (§6.3) baselines on the 432-host fat-tree permutation at htsim's length "
        "(200 ms, goodput over the last 10): DCTCP (the paper: 49%) and MPTCP over 8 subflows (90%)",
        {"fig10": Part("baselines/permutation.toml", {"transport": BASELINE_TRANSPORTS}, PAPER_LENGTH)},
        wall_s=33),
    "aquila-fig7": Reproduction(
        "Aquila (Gibson et al., NSDI '22) §5.1, Fig. 7: 4 KB packets by IP over GNet (RTS/CTS) under "
        "uniform load among 500 hosts of the full Clique (the paper's testbed), packet latency "
        "beside the paper's fabric RTT under 20 µs at 70% and 40 µs near line rate",
        {"fig7": Part("aquila/fig7-ip-latency.toml", {"traffic.load": [0.3, 0.5, 0.7, 0.9, 0.95]})},
        # Measured run by run on the shared 2-core machine: about 20 s at 0.7, 28 s at 0.95.
        wall_s=120),
    "aquila-fig8": Reproduction(
        "Aquila (Gibson et al., NSDI '22) §3.4, §5.1, Fig. 8: 4 KB 1RMA reads (a 48-byte Req, one "
        "Resp per 64-byte PCIe completion) among 500 hosts of the full Clique (the paper's testbed), "
        "read latency against load beside the paper's 4 µs median and under 10 µs at high load",
        {"fig8": Part("aquila/fig8-rma-latency.toml", {"rma.load": [0.1, 0.3, 0.5, 0.7, 0.9]},
                      AQUILA_40_US)},
        # Measured run by run with --jobs 1 on the shared 2-core machine: 6, 12, 19, 25 and 37 s.
        wall_s=100),
    "aquila-fig9": Reproduction(
        "Aquila §5.1, Fig. 9: 4 KB 1RMA reads at 2% load with and without bulk IP (64 KB bursts at "
        "20%) among 500 hosts of the full Clique, high priority on VCs of their own against low "
        "priority on the bulk IP's VCs, beside the paper's under 5 µs and slightly over 10 µs",
        {"fig9": Part("aquila/fig9-rma-isolation.toml",
                      {"rma.priority": ["high", "low"], "traffic.load": [0.0, 0.2]}, AQUILA_FIG9_LENGTH)},
        # Measured run by run with --jobs 1 on the shared 2-core machine: about 3 s without the
        # bulk, 17 s with it.
        wall_s=40),
    "aquila-fig10": Reproduction(
        "Aquila §5.1, §6, Fig. 10: one machine (a TiN's host at 100 Gb/s) sends messages of 4 KB to "
        "1 MB at 0.6 Gb/s on average to a machine in another pod, on the full Clique (50 Gb/s of "
        "minimal routes per pod pair) and at half scale (100 Gb/s); the packets' p99 beside the "
        "paper's tail rising past 40 µs at full scale and flat at half scale, with the default "
        "bias toward minimal routes and with one of 16 cells (no misroute)",
        {f"{bias}-{packets * 4}k": Part("aquila/fig10-burst-size.toml",
                                        {"topology.clique.pods": [48, 24]},
                                        {"traffic.burst_mean_packets": packets,
                                         "routing.nonminimal_bias_cells": bias,
                                         # twelve messages on average
                                         "run.duration_ns": 12 * packets * 4096 * 8 * 10 // 6})
         for bias in (2, 16) for packets in (1, 16, 64, 256)},
        wall_s=60),
    "aquarius-micro": Reproduction(
        "Aquarius (Li, Zeng, Hu & Chen, slides, \"Micro-benchmark\"): f1-f3 share the bottleneck and "
        "the victim f4 keeps its 100 Gbit/s under Aquarius; under PFC and BFC with a queue collision "
        "f4 suffers (BFC with 8 queues and ideal per-flow queues beside)",
        {"micro": Part("aquarius/micro.toml", {"scheme": AQUARIUS_MICRO_SCHEMES}, NOT_STRICT)},
        wall_s=4.4),
    "aquarius-fct": Reproduction(
        "Aquarius (slides, \"Realistic Traffic\"): FCT on the 128-server fat-tree, Web Server at 70% "
        "plus 5% 100-to-1 incast, DCQCN, 1 ms: PFC, BFC (8, 32, 128 queues), Aquarius (8) and ideal "
        "per-flow queues; the slides claim up to 5x lower FCT than the baselines",
        {"fct": Part("aquarius/fct.toml", {"scheme": AQUARIUS_FCT_SCHEMES}, NOT_STRICT)},
        wall_s=49),
    "aquarius-queues": Reproduction(
        "Aquarius (slides, \"BFC Scalability\"): BFC and Aquarius with 2-32 queues per port on the "
        "fct fabric and workload",
        {"queues": Part("aquarius/fct.toml", {"switch.port_kind": ["bfc", "aquarius"],
                                              "switch.per_flow.queues": [2, 4, 8, 16, 32]}, NOT_STRICT)},
        wall_s=71),
}


def listing() -> list[str]:
    """One line per reproduction: name, runs, time and what it reproduces."""
    width = max(map(len, REPRODUCTIONS))
    return [f"{name:<{width}} {r.runs:>3} runs, about {r.wall_s:g} s on one core: {r.title}"
            for name, r in REPRODUCTIONS.items()]


def reproduce(name: str, out: str | Path, scenarios: str | Path, seeds: int = 1, jobs: int | None = None,
              backend: str = "local", ray_address: str | None = None, progress: bool | None = None,
              overrides: dict[str, Any] | None = None) -> tuple[dict[str, SweepResult], Path]:
    """Runs reproduction ``name`` with the shipped scenarios under ``scenarios`` into ``out`` and
    writes its report; returns each part's sweep and the report's path. ``overrides`` apply to
    every run (after the reproduction's own), e.g. a shorter ``run.duration_ns`` for a quick look.
    Every part is checked before any runs (``plan_reproduction``)."""
    plans = plan_reproduction(name, out, scenarios, seeds=seeds, jobs=jobs, backend=backend,
                              overrides=overrides)
    return run_reproduction(plans, out, ray_address=ray_address, progress=progress)


def plan_reproduction(name: str, out: str | Path, scenarios: str | Path, seeds: int = 1,
                      jobs: int | None = None, backend: str = "local",
                      overrides: dict[str, Any] | None = None) -> dict[str, SweepPlan]:
    """Checks reproduction ``name`` whole (its name, every part's sweep with ``overrides``, where
    its report goes) without running or writing anything; returns each part's checked sweep.
    ``ScenarioError`` for the first problem."""
    if name not in REPRODUCTIONS:
        raise ScenarioError(f"reproduce {name}: no such reproduction (expected one of "
                            f"{', '.join(REPRODUCTIONS)})")
    reproduction = REPRODUCTIONS[name]
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ScenarioError(f"--out {out}: is a file; expected a folder")
    if (out / REPORT_FILE).is_dir():
        raise ScenarioError(f"--out {out}: {out / REPORT_FILE} is a folder; expected room for the report")
    single = len(reproduction.parts) == 1
    return {part_name: plan_sweep(Path(scenarios) / part.scenario, part.grid,
                                  out if single else out / part_name, seeds=seeds,
                                  overrides={**part.overrides, **(overrides or {})}, jobs=jobs,
                                  backend=backend)
            for part_name, part in reproduction.parts.items()}


def run_reproduction(plans: dict[str, SweepPlan], out: str | Path, ray_address: str | None = None,
                     progress: bool | None = None) -> tuple[dict[str, SweepResult], Path]:
    """Runs the parts ``plan_reproduction`` checked and writes the report into ``out``."""
    results = {part: run_planned(plan, ray_address=ray_address, progress=progress)
               for part, plan in plans.items()}
    return results, write_report(out)


def reproduction_points(name: str, scenarios: str | Path = "scenarios",
                        overrides: dict[str, Any] | None = None) -> dict[str, pd.DataFrame]:
    """Runs reproduction ``name`` in this process into a temporary folder (nothing reused, nothing
    kept) and returns each part's points: one row per grid point, the axes by dotted key, then
    the summary's means over seeds. For scripts that print a reproduction's numbers their own way
    (``docs/validation``)."""
    with tempfile.TemporaryDirectory() as out:
        results, _ = reproduce(name, out, scenarios, jobs=1, progress=False, overrides=overrides)
    return {part: result.points for part, result in results.items()}


def point(points: pd.DataFrame, axes: dict[str, Any]) -> pd.Series:
    """The one row of ``points`` whose axes (dotted keys) have the values ``axes`` gives."""
    match = points
    for key, value in axes.items():
        match = match[match[key] == value]
    if len(match) != 1:
        raise KeyError(f"{len(match)} points match {axes}")
    return match.iloc[0]
