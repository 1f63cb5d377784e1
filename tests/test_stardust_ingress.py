"""Stardust's ingress options through the command line: low-latency VOQs (Zilberman, Bracha and
Schzukin, NSDI '19, §5.6) send a small packet that finds its VOQ empty at once and save the credit's
round trip at low load; one shared ingress memory drops what does not fit, counted apart, and
reports its occupancy; neither changes a summary when absent; per-flow VOQs (App. G) change
nothing where every VOQ holds one flow (a permutation); bad values are one line naming the key,
exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT

PERMUTATION = "scenarios/stardust/permutation.toml"
LOW_LOAD = ["topology.k=4", "run.duration_ns=1000000", "run.warmup_ns=100000", "traffic.load=0.05",
            "traffic.arrival=poisson", "traffic.packet_bytes=1500", "link.propagation_ns=100",
            "credit.unused=forfeited"]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cellfabric.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def run(settings: list[str]) -> dict:
    sets = [arg for s in settings for arg in ("--set", s)]
    done = cli("run", PERMUTATION, *sets, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_low_latency_voqs_save_the_credit_round_trip_at_low_load():
    off = run(LOW_LOAD)
    on = run([*LOW_LOAD, "adapter.low_latency_bytes=1500"])
    assert "low_latency_packets" not in off
    assert on["packets_created"] == off["packets_created"], "the same packets offered"
    assert on["low_latency_packets"] > on["packets_created"] / 2
    assert on["requests"] < off["requests"], "packets sent at once ask for no credit"
    # With 100 ns links the request and credit take about a microsecond (§5.6).
    saved_us = off["packet_latency_us"]["p50"] - on["packet_latency_us"]["p50"]
    assert 0.5 < saved_us < 1.5, saved_us
    assert on["packets_delivered"] + on["packets_in_flight"] == on["packets_created"]


def test_an_overused_low_latency_bound_drops_at_the_egress_and_the_accounts_settle():
    # Every host's packets go at once at twice its line rate's worth of bound, into ports that
    # are full: the egress buffers drop, as in a ToR, and the run still settles its accounts.
    summary = run(["topology.k=4", "run.duration_ns=500000", "run.warmup_ns=50000",
                   "traffic.pattern=incast", "traffic.packet_bytes=1500", "adapter.low_latency_bytes=1500",
                   "adapter.low_latency_gbps=100", "adapter.egress_buffer_bytes=20000"])
    assert summary["low_latency_packets"] > 0
    assert summary["packets_dropped_egress"] > 0
    dropped = (summary["packets_dropped_ingress"] + summary["packets_dropped_fabric"]
               + summary["packets_dropped_egress"])
    assert summary["packets_created"] == summary["packets_delivered"] + dropped + summary["packets_in_flight"]


def test_a_shared_ingress_memory_drops_what_does_not_fit_and_reports_its_occupancy():
    base = ["topology.k=4", "run.duration_ns=500000", "run.warmup_ns=50000", "traffic.pattern=incast"]
    without = run(base)
    assert "ingress_memory_peak_bytes" not in without
    summary = run([*base, "adapter.ingress_buffer_bytes=30000"])
    assert summary["packets_dropped_ingress_memory"] > 0
    assert summary["packets_dropped_ingress"] >= summary["packets_dropped_ingress_memory"]
    assert 27_000 <= summary["ingress_memory_peak_bytes"] <= 30_000, "three 9000-byte packets fit, not four"
    assert 0 < summary["ingress_memory_mean_bytes"] <= summary["ingress_memory_peak_bytes"]


def test_per_flow_voqs_run_a_permutation_bit_for_bit_as_per_port_voqs():
    # A permutation has one flow per VOQ and one VOQ asking each port: the same run either way.
    base = ["topology.k=4", "run.duration_ns=300000", "run.warmup_ns=30000"]
    per_port = run(base)
    per_flow = run([*base, "adapter.voqs=per_flow"])
    for summary in (per_port, per_flow):
        for how_it_ran in ("perf", "provenance"):
            summary.pop(how_it_ran, None)
    assert per_flow["packets_delivered"] > 0
    assert per_flow == per_port
