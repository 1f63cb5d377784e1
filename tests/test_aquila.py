"""Aquila's Clique from the command line (Gibson et al., NSDI '22): the shipped scenarios are
accepted, and a Clique the ports cannot build, or cells outside GNet's 16 to 160 bytes, are
refused with the key named and exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from cellfabric.cli import main

ROOT = Path(__file__).resolve().parent.parent / "scenarios"
SCENARIOS = [
    "aquila/clique-uniform.toml",
    "aquila/clique-pod-shift.toml",
    "aquila/clique-uniform-vc.toml",
    "aquila/clique-pod-shift-vc.toml",
    "aquila/fig7-ip-latency.toml",
    "aquila/fig8-rma-latency.toml",
    "aquila/fig9-rma-isolation.toml",
    "aquila/pod-tin-shift-vc.toml",
    "bench/aquila-clique.toml",
]


@pytest.mark.parametrize("name", SCENARIOS)
def test_shipped_scenarios_are_accepted(name):
    result = CliRunner().invoke(main, ["show", str(ROOT / name)])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("setting, key", [
    ("topology.clique.pods=98", "topology.clique.pods"),
    ("topology.clique.tins_per_pod=26", "topology.clique.tins_per_pod"),
    ("cell.size_bytes=192", "cell.size_bytes"),
    ("cell.payload_bytes=156", "cell.payload_bytes"),
    ("routing.nonminimal_weight=-1", "routing.nonminimal_weight"),
])
def test_bad_clique_input_is_refused_with_the_key_named(setting, key, tmp_path):
    scenario = str(ROOT / "aquila/clique-uniform.toml")
    result = CliRunner().invoke(main, ["run", scenario, "--set", setting, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert key in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("setting, key", [
    ("vc.count=2", "vc.count"),
    ("vc.assignment=single", "vc.assignment"),
])
def test_vcs_that_cannot_carry_the_lossless_clique_are_refused_with_the_key_named(setting, key, tmp_path):
    scenario = str(ROOT / "aquila/clique-pod-shift-vc.toml")
    result = CliRunner().invoke(main, ["run", scenario, "--set", setting, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert key in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("setting, key", [
    ("routing.local_misroutes=odd_even", "routing.local_misroutes"),
    ("routing.local_misroutes=any", "routing.local_misroutes"),
])
def test_local_detours_need_a_known_turn_rule_that_closes_no_cycle(setting, key, tmp_path):
    """A turn rule we do not know, and detours with no turn rule (their channel dependencies
    close a cycle inside a pod, which the build-time check names), are refused."""
    scenario = str(ROOT / "aquila/pod-tin-shift-vc.toml")
    result = CliRunner().invoke(main, ["run", scenario, "--set", setting, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert key in result.output
    assert "Traceback" not in result.output
    if "any" in setting:
        assert "cycle" in result.output and "(router " in result.output


def _tin_shift(tmp_path, local_misroutes):
    scenario = str(ROOT / "aquila/pod-tin-shift-vc.toml")
    out = tmp_path / local_misroutes
    setting = f"routing.local_misroutes={local_misroutes}"
    args = ["run", scenario, "--json", "--out", str(out), "--set", setting]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    ports = pd.read_parquet(out / "ports.parquet")
    return json.loads(result.output), dict(zip(ports["port"], ports["throughput"], strict=True))


def test_local_detours_carry_the_tin_shift_past_its_two_local_links_but_where_the_rule_forbids(tmp_path):
    """The TiN shift inside Aquila's pods (every host to the next TiN's): on minimal routes a
    TiN's two 50 Gb/s hosts share two 25 Gb/s local links, so no host receives more than half
    its line rate. Local detours carry more: under the parity-sign rule every pair of TiNs has
    detours and every host receives more than 0.7; up*/down* on TiN numbers leaves TiN 10 no
    third TiN toward TiN 11, whose hosts stay at the minimal bound; nothing is dropped."""
    minimal, minimal_ports = _tin_shift(tmp_path, "none")
    parity, parity_ports = _tin_shift(tmp_path, "parity_sign")
    up_down, up_down_ports = _tin_shift(tmp_path, "up_down")
    assert max(minimal_ports.values()) <= 0.5
    assert minimal["throughput"] <= 0.5
    assert "local_detours" not in minimal
    for detours in (parity, up_down):
        assert detours["local_detours"] > 0.2 * detours["cells_injected"]
        assert detours["throughput"] > minimal["throughput"] + 0.15
    assert min(parity_ports.values()) > 0.7
    tins, hosts = 12, 2
    for port, throughput in up_down_ports.items():
        tin = port // hosts % tins
        if tin == 11:
            assert throughput <= 0.5, (port, throughput)
        else:
            assert throughput > 0.6, (port, throughput)
    assert minimal["cells_dropped"] == parity["cells_dropped"] == up_down["cells_dropped"] == 0


def _parity_sign_allows(source, via, to):
    """García et al.'s parity-sign rule as its authors' simulator states it (their strict
    route, in TiN numbers): restated here apart from the router's own formulation."""
    if via > to:
        return (via - to) % 2 == 0
    if source > via:
        return (via - source) % 2 != 0
    return (to - source) % 2 == 0 or (via - source) % 2 == 0


def test_traced_cells_turn_as_the_rule_allows_and_detour_at_most_once_per_pod(tmp_path):
    """The router's own turns, replayed from the cells it traced on the TiN shift with detours
    on: every pair of local hops in a pod is a turn the parity-sign rule allows (the rule the
    dependency check assumed), a cell takes at most two local hops in a pod, and some take two
    (the detours); nothing is dropped."""
    scenario = str(ROOT / "aquila/pod-tin-shift-vc.toml")
    out = tmp_path / "trace"
    settings = ["trace.fraction=1.0", "run.duration_ns=12800", "run.warmup_ns=2560"]
    args = ["run", scenario, "--json", "--out", str(out)] + [a for s in settings for a in ("--set", s)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["cells_dropped"] == 0
    trace = pd.read_parquet(out / "cell_trace.parquet")
    tins = 12
    detours = 0
    for _, hops in trace.sort_values(["trace", "hop"]).groupby("trace"):
        path = hops["switch"].tolist()
        assert len({s // tins for s in path}) == 1, path  # the traffic stays in its pod
        assert len(path) <= 3, path
        if len(path) == 3:
            detours += 1
            came_from, via, to = path
            assert _parity_sign_allows(came_from, via, to), path
    assert detours > 100
    assert detours <= summary["local_detours"]


@pytest.mark.parametrize("setting, key", [
    ("gnet.packet_bytes=9001", "gnet.packet_bytes"),
    ("gnet.ctd_threshold_rts=65", "gnet.ctd_threshold_rts"),
    ("gnet.fetch_window_packets=0", "gnet.fetch_window_packets"),
    ("gnet.reassembly_bytes=4095", "gnet.reassembly_bytes"),
    ("gnet.ecn_threshold_rts=65", "gnet.ecn_threshold_rts"),
    ("gnet.endpoint_ports=4", "gnet.endpoint_ports"),
    ("vc.classes=1", "vc.classes"),
    ("traffic.active_hosts=1153", "traffic.active_hosts"),
    ("traffic.active_hosts=0", "traffic.active_hosts"),
])
def test_bad_ip_over_gnet_input_is_one_line_naming_its_key_and_status_2(setting, key, tmp_path):
    scenario = str(ROOT / "aquila/fig7-ip-latency.toml")
    result = CliRunner().invoke(main, ["run", scenario, "--set", setting, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert key in result.output
    assert "Traceback" not in result.output


# 6 pods of 4 TiNs, every one of their 48 hosts active (Fig. 7's and Fig. 8's scenarios take 500).
SMALL_CLIQUE = ["topology.clique.pods=6", "topology.clique.tins_per_pod=4", "topology.clique.local_ports=6",
                "topology.clique.global_ports=3", "traffic.active_hosts=48"]


def small_run(*settings: str, scenario: str = "aquila/fig7-ip-latency.toml") -> dict:
    """`scenario` (Fig. 7's) on a 6-pod Clique of 4 TiNs (48 hosts, all of them active) for
    20 µs with `settings` on top: its summary."""
    small = [*SMALL_CLIQUE, "run.duration_ns=20000", "run.warmup_ns=5000", *settings]
    args = ["run", str(ROOT / scenario), "--json"]
    result = CliRunner().invoke(main, args + [a for s in small for a in ("--set", s)])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_fig7_short_runs_ip_over_gnet_with_its_accounts():
    """Fig. 7's scenario cut to a 6-pod Clique of 4 TiNs and 20 µs: packets are released, in RTS
    order, control and data flits are counted apart, and the packet latency is at least the
    three one-way trips (RTS, CTS, data) of the fastest path."""
    summary = small_run("traffic.load=0.5")
    assert summary["gnet_packets_released"] > 100
    assert summary["gnet_packets_out_of_rts_order"] == 0
    assert summary["cells_dropped"] == 0
    assert summary["control_flits_injected"] >= 2 * summary["gnet_packets_released"]
    assert summary["data_flits_injected"] >= 10 * 27 * summary["gnet_packets_released"]
    # A 16-byte RTS and CTS and a 160-byte data cell through one local hop: well over 3 x 200 ns.
    assert summary["gnet_packet_latency_ns"]["p1"] > 600


def test_packets_piling_up_at_the_hosts_make_the_run_unstable():
    """Open-loop hosts past the fabric's saturation hold their packets in their ingress buffers,
    not as cells in the fabric: the backlog that decides stability counts them, so the run says
    it is saturated (it said stable when only cells were counted)."""
    saturated = small_run("traffic.load=1.0", "run.duration_ns=30000")
    assert saturated["gnet_packets_held"] > 1000 and saturated["stable"] is False
    assert small_run("traffic.load=0.3", "run.duration_ns=30000")["stable"] is True
    # Reads: Reqs waiting at the clients and Resps owed by the servers count as well.
    reads = ["rma.load=1.0", "run.duration_ns=30000", "run.warmup_ns=10000"]
    saturated = small_run(*reads, scenario="aquila/fig8-rma-latency.toml")
    assert saturated["rma_reads_outstanding"] > 1000 and saturated["stable"] is False
    reads[0] = "rma.load=0.3"
    assert small_run(*reads, scenario="aquila/fig8-rma-latency.toml")["stable"] is True


def test_active_hosts_are_whole_tins_in_every_pod_and_the_others_idle(tmp_path):
    """Fig. 7's testbed ran 500 hosts on 576 TiNs: with traffic.active_hosts the others neither
    send nor receive, the active ones are both hosts of TiNs spread over every pod, and the
    throughput is per active host."""
    scenario = str(ROOT / "aquila/fig7-ip-latency.toml")
    small = [*SMALL_CLIQUE, "run.duration_ns=20000", "run.warmup_ns=5000", "traffic.load=0.5",
             "traffic.active_hosts=20"]
    out = tmp_path / "out"
    args = ["run", scenario, "--json", "--out", str(out)]
    result = CliRunner().invoke(main, args + [a for s in small for a in ("--set", s)])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    hosts = pd.read_parquet(out / "ports.parquet")
    active = hosts[(hosts.cells_injected > 0) | (hosts.cells_delivered > 0)]
    assert len(active) == 20
    assert (hosts.drop(active.index)[["cells_injected", "cells_delivered"]] == 0).all().all()
    tins = set(active.port // 2)
    assert len(tins) == 10 and set(active.port) == {h for t in tins for h in (2 * t, 2 * t + 1)}
    assert {t // 4 for t in tins} == set(range(6))
    # Per active host: about the offered 0.5, not 20/48 of it.
    assert summary["throughput"] == pytest.approx(active.throughput.mean(), rel=1e-9)
    assert 0.45 < summary["throughput"] < 0.55


@pytest.mark.parametrize("setting, key", [
    ("rma.load=0", "rma.load"),
    ("rma.load=1.2", "rma.load"),
    ("rma.completion_bytes=148", "rma.completion_bytes"),
    ("rma.completion_bytes=2", "rma.completion_bytes"),
    ("rma.read_bytes=0", "rma.read_bytes"),
    ("rma.priority=urgent", "rma.priority"),
    ("vc.classes=3", "vc.classes"),
    ("vc.count=10", "vc.count"),
    ("vc.count=12", "vc.classes"),
    ("vc.class_weights=[1, 1]", "vc.class_weights"),
    ("vc.class_weights=[1, 1, 0, 1, 1]", "vc.class_weights"),
])
def test_bad_rma_input_is_one_line_naming_its_key_and_status_2(setting, key, tmp_path):
    """A read load or completion out of range, a class layout the VCs cannot fit (5 classes of
    the 3 routing VCs each that Fully Adaptive routing needs: 10 VCs are too few, 12 do not divide),
    and class weights that are not one of at least 1 per class."""
    scenario = str(ROOT / "aquila/fig8-rma-latency.toml")
    args = ["run", scenario, "--set", setting, "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(main, args + [a for s in SMALL_CLIQUE for a in ("--set", s)])
    assert result.exit_code == 2, result.output
    assert key in result.output
    assert result.output.strip().count("\n") == 0, result.output
    assert "Traceback" not in result.output


def test_a_class_layout_naming_an_unknown_kind_is_refused(tmp_path):
    scenario = str(ROOT / "aquila/fig8-rma-latency.toml")
    layout = 'gnet.vc_classes=[["rts"], ["cts"], ["req"], ["resp_high"], ["ip_data", "resp_lo"]]'
    result = CliRunner().invoke(main, ["run", scenario, "--set", layout, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "gnet.vc_classes" in result.output and "resp_lo" in result.output


def test_fig8_short_runs_reads_with_their_accounts(tmp_path):
    """Fig. 8's scenario on a 6-pod Clique of 4 TiNs: reads complete, every Req is 3 flits and every
    Resp 5, and no read is faster than its host term, remote PCIe read and 64 Resps on 50 Gb/s."""
    scenario = str(ROOT / "aquila/fig8-rma-latency.toml")
    args = ["run", scenario, "--json", "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(main, args + [a for s in SMALL_CLIQUE for a in ("--set", s)])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["rma_reads_completed"] > 100
    # Reqs of 3 flits; a read's 64 Resps of 5 flits each (some still on their way at the end).
    reqs = summary["rma_req_flits_injected"]
    assert 3 * summary["rma_reads_completed"] <= reqs <= 3 * summary["rma_reads_issued"]
    assert summary["rma_resp_flits_delivered"] >= 5 * 64 * summary["rma_reads_completed"]
    assert summary["cells_dropped"] == 0
    latency = summary["rma_read_latency_ns"]
    assert latency["p1"] > 625 + 625 + 64 * 12.8
    assert latency["p50"] <= latency["p99"] <= latency["max"]
    assert (tmp_path / "out" / "rma_latency_histogram.parquet").exists()


def test_class_weights_trade_the_high_priority_reads_for_the_bulk(tmp_path):
    """Fig. 9's classes on a 6-pod Clique under bulk IP at 50%: by strict priority (the default)
    the high-priority reads' Resp cells go ahead of the bulk; weighted round robin between the
    classes with eight turns for the bulk class to one for each other (`vc.class_weights`) makes
    them wait behind it, so the reads take longer, and nothing is lost either way."""
    scenario = str(ROOT / "aquila/fig9-rma-isolation.toml")

    def reads(*more: str) -> dict:
        args = ["run", scenario, "--json", "--set", "traffic.load=0.5", *more]
        result = CliRunner().invoke(main, args + [a for s in SMALL_CLIQUE for a in ("--set", s)])
        assert result.exit_code == 0, result.output
        summary = json.loads(result.output)
        assert summary["cells_dropped"] == 0
        return summary["rma_read_latency_ns"]

    strict = reads()
    bulk_first = reads("--set", "vc.class_weights=[1, 1, 1, 1, 8]")
    assert bulk_first["mean"] > 1.2 * strict["mean"], (strict, bulk_first)
    assert bulk_first["p75"] > strict["p75"], (strict, bulk_first)
