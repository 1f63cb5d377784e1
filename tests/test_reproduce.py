"""Reproductions: --list, a bad name refused with status 2, and short versions of each run end to
end (runs cut to a fraction of their length) with our numbers beside the paper's in the report."""

import json
import math
import runpy
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from cellfabric.report import NO_NUMBER, comparison, reference_frame
from cellfabric.reproduce import REPRODUCTIONS
from cellfabric.scenario import reference_of
from conftest import ROOT


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cellfabric.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)


def test_list_names_every_reproduction_with_its_runs_and_time():
    done = cli("reproduce", "--list")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == [
        "classic-hol", "rifl-table1", "rifl-fig5", "clint-table2", "clint-fig8", "clint-fig9",
        "clint-fig10", "stardust-fig7", "stardust-fig9", "stardust-fig10a",
        "stardust-fig10b", "stardust-fig10c", "stardust-fig12", "stardust-fig3", "stardust-fig8",
        "baselines-fig10", "aquila-fig7", "aquila-fig8",
        "aquila-fig9", "aquila-fig10", "aquarius-micro", "aquarius-fct", "aquarius-queues"]
    assert "16 runs, about 31 s on one core" in lines[1]
    runs = {line.split()[0]: line.split(" runs, about ")[0].split()[-1] for line in lines}
    assert [runs[n] for n in ("stardust-fig7", "stardust-fig10a", "stardust-fig10c", "stardust-fig12",
                              "baselines-fig10")] == ["2", "4", "4", "2", "2"]
    line = {line.split()[0]: line for line in lines}
    assert "2 runs, about 33 s on one core: Stardust Fig. 10 (§6.3) baselines" in line["baselines-fig10"]
    assert [runs[n] for n in ("aquila-fig7", "aquila-fig8", "aquila-fig9")] == ["5", "5", "4"]
    assert [runs[n] for n in ("stardust-fig3", "stardust-fig8")] == ["28", "16"]
    assert [runs[n] for n in ("stardust-fig9", "stardust-fig10b")] == ["4", "2"]
    assert [runs[n] for n in ("aquarius-micro", "aquarius-fct", "aquarius-queues")] == ["5", "6", "10"]
    assert [runs[n] for n in ("clint-fig8", "clint-fig9", "clint-fig10")] == ["80", "32", "32"]


def test_a_bad_name_is_refused_with_status_2(tmp_path: Path):
    for args in (["no-such-figure"], []):
        done = cli("reproduce", *args, "--out", str(tmp_path / "r"))
        assert done.returncode == 2
        assert done.stderr.startswith("cellfabric: error: reproduce") and done.stderr.count("\n") == 1
        assert not (tmp_path / "r").exists()
    assert "expected one of classic-hol, rifl-table1" in cli("reproduce", "nope").stderr


def test_classic_hol_short_matches_karol_et_al(tmp_path: Path):
    out = tmp_path / "hol"
    done = cli("reproduce", "classic-hol", "--out", str(out), "--set", "run.duration_ns=204800",
               "--set", "run.warmup_ns=20480")
    assert done.returncode == 0, done.stderr
    assert f"report: {out / 'report.html'}" in done.stdout
    points = pd.read_parquet(out / "points.parquet")
    throughput = dict(zip(points["switch.ports"], points["throughput"], strict=True))
    assert abs(throughput[2] - 0.75) < 0.02 and abs(throughput[8] - 0.6184) < 0.02
    assert throughput[2] > throughput[4] > throughput[8] > throughput[32] > 0.5858
    page = (out / "report.html").read_text()
    assert "Karol, Hluchyj &amp; Morgan 1987" in page and "0.6553" in page


def test_rifl_table1_short_puts_every_paper_cell_beside_ours(tmp_path: Path):
    out = tmp_path / "t1"
    done = cli("reproduce", "rifl-table1", "--out", str(out), "--jobs", "2",
               "--set", "run.duration_ns=168960", "--set", "run.warmup_ns=8448")  # 1/50 of the runs
    assert done.returncode == 0, done.stderr
    points = pd.read_parquet(out / "points.parquet")
    reference = reference_frame(reference_of(ROOT / "scenarios" / "rifl" / "table1.toml"))
    table = comparison(points, ["traffic.arrival", "switch.scheduler", "traffic.load"], reference)
    assert len(table) == 16 * 7 and table["cellfabric"].notna().all()
    # An unqueued cell takes 18 cell times by construction: the p1 column at light load.
    light = table[(table["metric"] == "latency_cells.p1") & (table["traffic.load"] == 0.3)]
    assert (light["cellfabric"] == 18).all() and (light["difference"] == 0).all()
    bursty = pd.read_parquet(out / "results.parquet").query("`traffic.arrival` == 'bursty'")
    assert (bursty["traffic.burst_mean_bytes"] == 1024).all()


def test_clint_table2_short_writes_both_channels_and_one_report(tmp_path: Path):
    out = tmp_path / "clint"
    done = cli("reproduce", "clint-table2", "--out", str(out), "--jobs", "2",
               "--set", "run.duration_ns=400000", "--set", "run.warmup_ns=40000")  # 1/100 of the runs
    assert done.returncode == 0, done.stderr
    for part in ("bulk", "quick"):
        runs = pd.read_parquet(out / part / "results.parquet")
        assert len(runs) == 20 and (runs["status"] == "ok").all()
    page = (out / "report.html").read_text()
    assert "<h2>bulk</h2>" in page and "<h2>quick</h2>" in page and "Table 2: quick channel" in page


def test_clint_fig9_short_runs_both_quick_channels_beside_table2(tmp_path: Path):
    out = tmp_path / "fig9"
    done = cli("reproduce", "clint-fig9", "--out", str(out), "--jobs", "2",
               "--set", "run.duration_ns=400000", "--set", "run.warmup_ns=40000")  # 1/100 of the runs
    assert done.returncode == 0, done.stderr
    points = pd.read_parquet(out / "points.parquet")
    assert len(points) == 32 and set(points["channel.architecture"]) == {"Q1", "Q2"}
    assert {"collision_rate", "ack_collision_rate"} <= set(points.columns)  # Fig. 10's rates
    assert "Table 2: quick channel" in (out / "report.html").read_text()


def reproduced(name: str, out: Path, *settings: str) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Runs reproduction ``name`` (one part) with ``--set`` ``settings``: its points, ours beside
    the paper's row by row (the points the paper has no row for included), and its page."""
    done = cli("reproduce", name, "--out", str(out), "--jobs", "2",
               *(arg for setting in settings for arg in ("--set", setting)))
    assert done.returncode == 0, done.stderr
    points = pd.read_parquet(out / "points.parquet")
    spec = json.loads((out / "sweep.json").read_text())
    table = comparison(points, spec["axes"], reference_frame(spec["reference"]), every_point=True)
    return points, table, (out / "report.html").read_text()


def row(table: pd.DataFrame, metric: str, **axes) -> dict:
    match = table[table["metric"] == metric]
    for key, value in axes.items():
        match = match[match[key.replace("__", ".")] == value]
    assert len(match) == 1, (metric, axes)
    return match.iloc[0].to_dict()


@pytest.mark.parametrize("name", ["stardust-fig7", "stardust-fig12"])
def test_stardust_push_pull_short_lines_up_with_the_paper(tmp_path: Path, name: str):
    """Fig. 7 and Fig. 12 cut to 0.4 ms (a fifth): pull beside the paper's 100G per port and no
    loss, push beside Fig. 12's 50% (A 100G, B nothing) or the paper's reason for no number."""
    points, table, page = reproduced(name, tmp_path / name, "run.duration_ns=400000", "run.warmup_ns=100000")
    assert list(points["stardust.credits"]) == [True, False] and (points["seeds"] == 1).all()
    assert len(table) == 4 and (table["note"] != NO_NUMBER).all(), "the paper has a row for both points"
    pull = row(table, "goodput", stardust__credits=True)
    assert pull["paper"] == 1.0 and abs(pull["relative"]) < 0.03
    assert row(table, "cells_dropped", stardust__credits=True)["difference"] == 0
    push = row(table, "goodput", stardust__credits=False)
    if name == "stardust-fig12":
        # Push's low class B gets about 12 G of 100 since cells wait at the adapter for an uplink
        # with room (docs/validation/stardust.md, R39) and FCI reacts: the mean over A and B is
        # about 0.56 (not yet explained: docs/limits.md).
        assert push["paper"] == 0.5 and abs(push["relative"]) < 0.15
    else:
        assert math.isnan(push["paper"]) and "only port B's share under push (66%)" in push["note"]
    dropped = row(table, "cells_dropped", stardust__credits=False)
    assert dropped["cellfabric"] > 0 and "gives no count" in dropped["note"]
    assert page.index("Beside the paper") < page.index("<h3>Plots") and "gives no count" in page


def test_stardust_fig10c_incast_finishes_at_the_ideal_and_drops_nothing(tmp_path: Path):
    """At full length (the incast's runs end when its flows do: about a second in all): the
    last of N senders finishes within 5% of N × 360 µs (theory) and nothing is dropped (the paper)."""
    points, table, page = reproduced("stardust-fig10c", tmp_path / "incast")
    assert list(points["traffic.senders"]) == [1, 10, 40, 100]
    assert list(points["flows_completed"]) == [1, 10, 40, 100]
    last = table[table["metric"] == "fct_us.last"]
    assert list(last["paper"]) == [360, 3600, 14400, 36000] and (last["relative"].abs() < 0.05).all()
    assert (table.loc[table["metric"] == "cells_dropped", "cellfabric"] == 0).all()
    assert "Beside the reference" in page and "Theory, not the paper" in page


def test_stardust_fig9_short_puts_the_bound_and_fci_beside_the_paper(tmp_path: Path):
    """Fig. 9 cut to 0.2 ms (a fifth, 0.1 ms of it warm-up): at 95% the fabric latency within the
    paper's 13 µs bound, no cell lost at any load, and 120% offered settling within 5% of the
    paper's 0.9 of capacity (0.75 of the host ports) through FCI, not through pauses."""
    points, table, page = reproduced("stardust-fig9", tmp_path / "fig9", "run.duration_ns=200000",
                                     "run.warmup_ns=100000")
    assert list(points["link.host_rate_gbps"]) == [91.7, 146.8, 174.3, 220.2]
    assert (points["cells_dropped"] == 0).all() and (points["pauses"] == 0).all()
    bound = row(table, "fabric_latency_ns.max", link__host_rate_gbps=174.3)
    assert bound["paper"] == 13_000 and bound["cellfabric"] < 13_000
    overload = row(table, "goodput", link__host_rate_gbps=220.2)
    assert overload["paper"] == 0.75 and abs(overload["relative"]) < 0.05
    assert points.loc[points["link.host_rate_gbps"] == 220.2, "fci_cuts"].iloc[0] > 0
    assert "only at 120% offered" in row(table, "goodput", link__host_rate_gbps=174.3)["note"]
    assert "Beside the paper" in page


def test_stardust_fig10b_short_puts_both_host_kinds_beside_the_paper(tmp_path: Path):
    """Fig. 10b cut to 2 ms (a twentieth, 0.5 ms of warm-up): both host kinds run the timed flows,
    lose nothing in the fabric and discard no packet at reassembly, beside the paper's row."""
    points, table, page = reproduced("stardust-fig10b", tmp_path / "fig10b", "run.duration_ns=2000000",
                                     "run.warmup_ns=500000")
    assert points["host.transport"].isna().sum() == 1 and (points["host.transport"] == "tcp").sum() == 1
    assert (points["timed_flows_completed"] > 0).all()
    for metric in ("cells_dropped", "packets_dropped_fabric"):
        assert list(table.loc[table["metric"] == metric, "cellfabric"]) == [0, 0]
    bound = table[table["metric"] == "timed_fct_us_500kb_up.last"]
    assert list(bound["paper"]) == [1000.0, 1000.0] and (bound["note"] == "").all()
    assert "Beside the paper" in page


def test_stardust_fig10a_short_puts_both_host_kinds_beside_the_paper(tmp_path: Path):
    """The 432-host permutation cut to 0.2 ms (1/100): 512-byte cells beside the paper's 94% and 96%
    for saturated sources and TCP NewReno hosts alike, 256-byte cells with the paper's reason."""
    points, table, page = reproduced("stardust-fig10a", tmp_path / "fig10a", "run.duration_ns=200000",
                                     "run.warmup_ns=100000")
    assert len(points) == 4 and set(points["cell.size_bytes"]) == {512, 256}
    assert points["host.transport"].isna().sum() == 2 and (points["host.transport"] == "tcp").sum() == 2
    assert (points.loc[points["cell.size_bytes"] == 512, "credit.size_bytes"] == 4096).all()
    assert len(table) == 4 * 3 and (table["note"] != NO_NUMBER).all()
    big = table[table["cell.size_bytes"] == 512]
    assert sorted(big.loc[big["metric"] == "goodput", "paper"]) == [0.94, 0.94]
    assert sorted(big.loc[big["metric"] == "flows_at_least_94_4_percent", "paper"]) == [0.96, 0.96]
    assert (big["note"] == "").all() and big["cellfabric"].notna().all()
    small = table[table["cell.size_bytes"] == 256]
    assert small["paper"].isna().all() and small["note"].str.contains("12 hours per permutation").all()
    assert (table.loc[table["metric"] == "cells_dropped", "cellfabric"] == 0).all(), "the fabric is lossless"
    assert "transport=tcp" in page and "transport=none" in page


def test_stardust_packing_figures_put_packed_and_unpacked_beside_the_paper(tmp_path: Path):
    """Fig. 3 and Fig. 8(a) cut to 0.1 ms: every point of both sweeps runs; unpacked 64-byte packets
    fill a quarter of each 256-byte cell (Fig. 3's x4, exactly), and Fig. 8's packed switch carries
    the paper's full line rate at 65 bytes while unpacked cells do not (two 64-byte cells a packet)."""
    short = ("run.duration_ns=100000", "run.warmup_ns=20000")
    points, table, _ = reproduced("stardust-fig3", tmp_path / "fig3", *short)
    assert len(points) == 28 and (points["cells_dropped"] == 0).all()
    fill = row(table, "data_cell_fill", traffic__packet_bytes=64, stardust__packing=False,
               adapter__host_gap_bytes=20)
    assert fill["paper"] == 0.25 and fill["cellfabric"] == pytest.approx(0.25)
    points, table, _ = reproduced("stardust-fig8", tmp_path / "fig8", *short)
    assert len(points) == 16
    packed = row(table, "goodput", traffic__packet_bytes=65, stardust__packing=True)
    assert packed["cellfabric"] == pytest.approx(packed["paper"], abs=0.01)
    unpacked = points[(points["traffic.packet_bytes"] == 65) & ~points["stardust.packing"]]
    assert unpacked["goodput"].iloc[0] < 0.7 * packed["cellfabric"]


def test_baselines_fig10_short_puts_dctcp_and_mptcp_beside_the_paper(tmp_path: Path):
    """DCTCP and MPTCP over 8 subflows on the 432-host permutation, cut from htsim's 200 ms to
    2 ms: each beside its own number of the paper (49%, 90%)."""
    points, table, _ = reproduced("baselines-fig10", tmp_path / "fig10", "run.duration_ns=2000000",
                                  "run.warmup_ns=1000000")
    assert list(points["host.transport"]) == ["dctcp", "mptcp"]
    assert points["host.subflows"].isna().tolist() == [True, False] and points["host.subflows"].iloc[1] == 8
    paper = list(zip(table["host.transport"], table["paper"], strict=True))
    assert paper == [("dctcp", 0.49), ("mptcp", 0.90)]
    dctcp, mptcp = table["cellfabric"]
    assert 0.3 < dctcp < mptcp < 1


def test_the_paper_numbers_are_written_once_in_the_scenarios():
    """The reproductions and docs/validation/*.py take the papers' tables from the shipped
    scenarios' [reference] tables; a few cells checked against the papers themselves."""
    scenarios = ROOT / "scenarios"
    for reproduction in REPRODUCTIONS.values():
        for part in reproduction.parts.values():
            assert not hasattr(part, "reference")
            assert reference_of(scenarios / part.scenario) is not None
    table1 = reference_of(scenarios / "rifl" / "table1.toml")["rows"]
    rifl = runpy.run_path(str(ROOT / "docs" / "validation" / "rifl.py"))["PAPER"]
    assert {tuple(row[:3]): row[3:] for row in table1} == rifl
    assert rifl[("bursty", "islip", 1.0)] == [18, 57, 107, 178, 229, 339, 683]  # Shen and Chow 2023, Table I
    assert rifl[("bernoulli", "safc", 0.9)] == [18, 20, 24, 29, 35, 54, 260]
    clint = runpy.run_path(str(ROOT / "docs" / "validation" / "clint.py"))["PAPER"]
    for channel, column in (("bulk", 0), ("quick", 1)):
        rows = reference_of(scenarios / "clint" / f"{channel}.toml")["rows"]
        expected = {key: values[column] for key, values in clint.items() if values[column] is not None}
        assert {(load, bursty): ns / 1000 for _, load, bursty, ns in rows} == expected
    # Eberle and Gura 2002, Table 2
    assert clint[(0.9, True)] == (1636.7, None) and clint[(0.3, True)] == (32.9, 2.8)
    # Stardust (NSDI '19): §6.3 (Fig. 10a) and App. F (Fig. 12).
    stardust = reference_of(scenarios / "stardust" / "permutation.toml")["rows"]
    assert stardust[0] == [512, 4096, 0.94, 0.96, 0]
    baselines = reference_of(scenarios / "baselines" / "permutation.toml")["rows"]
    assert baselines == [["dctcp", 0.49], ["mptcp", 0.90]]
    classes = reference_of(scenarios / "stardust" / "push-pull-classes.toml")["rows"]
    assert [r[:2] for r in classes] == [[True, 1.0], [False, 0.5]]
    fifo = reference_of(scenarios / "classic" / "fifo.toml")["rows"]
    assert [(n, t) for n, _, t in fifo] == [(2, 0.75), (4, 0.6553), (8, 0.6184), (32, 0.5858)]  # Karol et al.


def test_aquarius_micro_short_shows_the_victim_spared_only_by_per_flow_schemes(tmp_path: Path):
    """The slides' micro-benchmark cut to 1.2 ms (goodput after 0.5): under Aquarius the median
    flow is at the fair share and the victim f4 at its line rate, beside the slides' reading; under
    PFC and BFC with 2 queues no flow keeps half its rate, so the victim f4 does not either."""
    points, table, page = reproduced("aquarius-micro", tmp_path / "micro", "run.duration_ns=1200000")
    assert len(points) == 5 and (points["packets_dropped"] == 0).all()
    aquarius = {"switch__port_kind": "aquarius", "switch__per_flow__queues": 8}
    assert abs(row(table, "flow_goodput_gbps.p50", **aquarius)["relative"]) < 0.05
    assert abs(row(table, "flow_goodput_gbps.max", **aquarius)["relative"]) < 0.03
    for scheme in ({"switch__port_kind": "pfc", "switch__per_flow__queues": 8},
                   {"switch__port_kind": "bfc", "switch__per_flow__queues": 2}):
        victim = row(table, "flow_goodput_gbps.max", **scheme)
        assert victim["cellfabric"] < 50 and "give no number" in victim["note"]
    ideal = row(table, "flow_goodput_gbps.max", switch__port_kind="per_flow_ideal",
                switch__per_flow__queues=8)
    assert ideal["cellfabric"] > 95 and ideal["note"] == NO_NUMBER
    assert "Micro-benchmark" in page
