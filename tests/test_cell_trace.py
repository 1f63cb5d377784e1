"""Cell tracing (Gibson et al., "Aquila: A unified, low-latency fabric for datacenter networks",
NSDI '22, §3.5): cells sampled by ``trace.fraction`` record every hop through the TiNs into the
``cell_trace`` table of ``--out``, counted in the summary; a bad fraction is refused with the key
named and exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from cellfabric.cli import main

ROOT = Path(__file__).resolve().parent.parent / "scenarios"
CLIQUE = str(ROOT / "aquila/clique-uniform-vc.toml")
HOSTS_PER_TIN, TINS_PER_POD = 2, 4
SMALL = ["topology.clique.pods=6", f"topology.clique.tins_per_pod={TINS_PER_POD}",
         "topology.clique.local_ports=6", "topology.clique.global_ports=3",
         "run.duration_ns=20000", "run.warmup_ns=2000", "traffic.load=0.1",
         "routing.mode=aquila_minimal_deterministic"]
DURATION_NS = 20000


def _run(out: Path, settings: list[str]) -> tuple[dict, pd.DataFrame | None]:
    args = ["run", CLIQUE, "--json", "--out", str(out)]
    result = CliRunner().invoke(main, args + [a for s in SMALL + settings for a in ("--set", s)])
    assert result.exit_code == 0, result.output
    table = out / "cell_trace.parquet"
    return json.loads(result.output), (pd.read_parquet(table) if table.exists() else None)


def test_a_traced_cell_records_each_hop_of_its_minimal_route_in_time_order(tmp_path):
    """Under minimal routing a cell crosses its source's TiN, at most one other TiN of its pod,
    the global link into the destination's pod, at most one other TiN there, and its
    destination's TiN: one hop to its own TiN, two within a pod, two to four across pods. Each
    traced cell sent in the first half of the run (all delivered by the end at 10% load) has
    exactly that path, its hops numbered in order, each hop leaving after it arrived and
    arriving after the one before left."""
    summary, trace = _run(tmp_path / "out", ["trace.fraction=0.05"])
    assert trace is not None and summary["cells_traced"] > 50
    assert summary["trace_hops"] == len(trace)
    early = trace.groupby("trace").filter(lambda t: t["arrive_ns"].min() < DURATION_NS / 2)
    assert early["trace"].nunique() > 20
    for _, hops in early.groupby("trace"):
        hops = hops.sort_values("hop")
        assert list(hops["hop"]) == list(range(len(hops)))
        src_tin = hops["src"].iloc[0] // HOSTS_PER_TIN
        dst_tin = hops["dst"].iloc[0] // HOSTS_PER_TIN
        switches = list(hops["switch"])
        assert switches[0] == src_tin and switches[-1] == dst_tin, switches
        pods = [s // TINS_PER_POD for s in switches]
        src_pod, dst_pod = src_tin // TINS_PER_POD, dst_tin // TINS_PER_POD
        if src_tin == dst_tin:
            expected = [1]
        elif src_pod == dst_pod:
            expected = [2]
        else:
            expected = [2, 3, 4]
            assert pods == sorted(pods, key=lambda p: p != src_pod), pods
            assert pods.count(src_pod) <= 2 and pods.count(dst_pod) <= 2, pods
        assert len(hops) in expected, switches
        assert (hops["depart_ns"] > hops["arrive_ns"]).all()
        assert (hops["arrive_ns"].iloc[1:].to_numpy() > hops["depart_ns"].iloc[:-1].to_numpy()).all()
        assert (hops["queue_cells"] >= 1).all()


def test_tracing_is_deterministic_and_off_by_default(tmp_path):
    """The same seed traces the same cells along the same hops; without a fraction there is no
    table and no trace count, and the run's results are those of a traced run."""
    first, trace = _run(tmp_path / "a", ["trace.fraction=0.02"])
    again, trace_again = _run(tmp_path / "b", ["trace.fraction=0.02"])
    pd.testing.assert_frame_equal(trace, trace_again)
    plain, none = _run(tmp_path / "c", [])
    assert none is None and "cells_traced" not in plain
    assert plain["cells_delivered"] == first["cells_delivered"]
    assert plain["latency_ns"] == first["latency_ns"]


@pytest.mark.parametrize("setting", ["trace.fraction=1.5", "trace.fraction=-0.1"])
def test_a_fraction_outside_0_to_1_is_refused_with_the_key_named(setting, tmp_path):
    result = CliRunner().invoke(main, ["run", CLIQUE, "--set", setting, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "trace.fraction" in result.output
    assert "Traceback" not in result.output


def test_tracing_without_vc_routers_is_refused_with_the_key_named(tmp_path):
    scenario = str(ROOT / "aquila/clique-uniform.toml")
    result = CliRunner().invoke(main, ["run", scenario, "--set", "trace.fraction=0.1",
                                       "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "trace.fraction" in result.output and "VC router" in result.output
    assert "Traceback" not in result.output
