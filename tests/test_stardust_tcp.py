"""Transport hosts on Stardust's host ports, through the command line: finite TCP NewReno flows on a
k = 4 fat-tree deliver every byte with no cell lost, the summary carries the Ethernet design's
goodput fields and TCP counters, a seed gives one summary, DCQCN and NDP run lossless over adapters
that pause their hosts, the `fct` pattern's timed flows are opened by transport hosts and reported
as the Ethernet design reports them, and bad input is one line naming the key, exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT

PERMUTATION = "scenarios/stardust/permutation.toml"
FCT = "scenarios/stardust/fct.toml"
SMALL_FCT = ["--set", "topology.k=4", "--set", "traffic.fct_dst=15", "--set", "run.duration_ns=3000000",
             "--set", "run.warmup_ns=300000"]
SMALL = ["--set", "topology.k=4", "--set", "host.transport=tcp"]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cellfabric.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def run_json(*args: str) -> dict:
    done = cli("run", PERMUTATION, *SMALL, *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_finite_tcp_flows_deliver_every_byte_and_no_cell_is_lost():
    flow_bytes = 450_000
    summary = run_json("--set", "run.duration_ns=3000000", "--set", "run.warmup_ns=100000",
                       "--set", f"traffic.flow_bytes={flow_bytes}")
    assert summary["design"] == "stardust" and summary["transport"] == "tcp"
    assert summary["flows_completed"] == summary["hosts"] == 16
    assert summary["cells_dropped"] == 0
    assert summary["packets_dropped_ingress"] == summary["packets_dropped_egress"] == 0
    # Every frame (segments and ACKs) a host sent reached its host: nothing is left in flight.
    assert summary["host_packets_created"] == summary["host_packets_received"]
    assert summary["packets_in_flight"] == summary["cells_in_flight"] == 0
    segments = -(-flow_bytes // 9000)
    assert summary["segments_sent"] == 16 * segments + summary["retransmissions"]
    assert summary["fct_us"]["last"] < 3000


def test_a_tcp_incast_completes_at_the_receivers_line_rate():
    done = cli("run", "scenarios/stardust/incast.toml", "--set", "topology.k=4",
               "--set", "host.transport=tcp", "--set", "traffic.senders=8",
               "--set", "run.duration_ns=10000000", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["flows_completed"] == 8
    assert summary["cells_dropped"] == summary["packets_dropped_ingress"] == 0
    # 8 x 450 KB through one 10 Gbit/s port: no sooner than 2.88 ms, and the pull fabric keeps
    # the port busy (the slack covers slow start's first round trips).
    assert 2880 < summary["fct_us"]["last"] < 1.1 * 2880


def test_unending_flows_report_goodput_per_flow_deterministically():
    args = ["--set", "run.duration_ns=1000000", "--set", "run.warmup_ns=500000"]
    summary = run_json(*args)
    spread = summary["flow_goodput_gbps"]
    assert 0.5 < summary["goodput"] < 1.0
    assert summary["goodput"] == pytest.approx(spread["mean"] / 10.0)
    for key in ("retransmissions", "timeouts", "fast_retransmits", "rtt_mean_us"):
        assert key in summary
    # What the egress adapters put on the receivers' links: data, retransmissions and ACKs.
    assert summary["goodput"] * 0.9 < summary["host_link_utilization"] <= 1.0
    assert summary["packets_created"] == (summary["packets_delivered"] + summary["packets_dropped_ingress"]
                                          + summary["packets_dropped_fabric"]
                                          + summary["packets_dropped_egress"] + summary["packets_in_flight"])
    again = run_json(*args)
    for machine_dependent in ("perf", "provenance"):
        again.pop(machine_dependent, None)
        summary.pop(machine_dependent, None)
    assert again == summary


@pytest.mark.parametrize("transport", ["tcp", "dctcp"])
def test_fct_timed_flows_on_transport_hosts_are_reported_as_ethernets_deterministically(transport: str):
    args = ["run", FCT, *SMALL_FCT, "--set", f"host.transport={transport}", "--json"]
    done = cli(*args)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["transport"] == transport and summary["cells_dropped"] == 0
    assert summary["timed_flows_started"] > 20
    assert summary["timed_flows_completed"] + 5 >= summary["timed_flows_started"]
    # The Ethernet design's keys for flows opened during a run, beside Stardust's own.
    for key in ("timed_fct_us_under_10kb", "timed_fct_us_10kb_to_500kb", "timed_slowdown",
                "timed_flow_arrivals_per_s", "flows_opened", "stale_packets", "send_slots_peak"):
        assert key in summary, key
    assert summary["flows_opened"] == summary["timed_flows_started"] + 14 * 4
    again = cli(*args)
    assert again.returncode == 0, again.stderr
    first, second = json.loads(done.stdout), json.loads(again.stdout)
    for machine_dependent in ("perf", "provenance"):
        first.pop(machine_dependent, None)
        second.pop(machine_dependent, None)
    assert first == second


def test_built_in_sources_report_no_transport():
    done = cli("run", PERMUTATION, "--set", "topology.k=4", "--set", "run.duration_ns=100000",
               "--set", "run.warmup_ns=10000", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert "transport" not in summary and "retransmissions" not in summary


PAUSED = ["adapter.pause_hosts=true"]


@pytest.mark.parametrize("transport", ["dcqcn", "ndp"])
def test_dcqcn_and_ndp_over_adapters_that_pause_their_hosts_lose_nothing(transport: str):
    """An incast of 8 x 450 KB: the adapters pause the senders instead of dropping, every byte
    arrives once at the port's line rate, and nothing marks (no CNP) or trims (no NACK)."""
    done = cli("run", "scenarios/stardust/incast.toml", "--set", "topology.k=4",
               "--set", f"host.transport={transport}", "--set", "adapter.pause_hosts=true",
               "--set", "traffic.senders=8", "--set", "run.duration_ns=10000000", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["transport"] == transport and summary["flows_completed"] == 8
    assert summary["cells_dropped"] == summary["packets_dropped_ingress"] == 0
    assert summary["retransmissions"] == summary["timeouts"] == 0
    pfc = summary["pfc"]
    assert pfc["lossless_drops"] == 0 and pfc["pause_frames_sent"] == pfc["resume_frames_sent"] > 0
    # PAUSE frames reach the hosts and count among the frames they received.
    sent_by_hosts = summary["host_packets_created"]
    assert summary["host_packets_received"] == sent_by_hosts + 2 * pfc["pause_frames_sent"]
    assert 2880 < summary["fct_us"]["last"] < 1.1 * 2880
    if transport == "dcqcn":
        assert summary["dcqcn"]["cnps_sent"] == 0
    else:
        assert summary["ndp"]["nacks_sent"] == summary["ndp"]["headers_received"] == 0


@pytest.mark.parametrize("settings, key", [
    (["host.transport=ndp"], "host.transport"),
    (["host.transport=dcqcn"], "host.transport"),
    (["host.transport=line_rate"], "host.inflight_cap_bytes"),
    (["adapter.pause_hosts=true"], "adapter.pause_hosts"),
    (["host.transport=dcqcn", *PAUSED, "adapter.pause_xon_packets=8"], "adapter.pause_xon_packets"),
    (["host.transport=dcqcn", *PAUSED, "adapter.pause_xoff_packets=0"], "adapter.pause_xoff_packets"),
    # k = 4: two hosts share an adapter's VOQs, 2 x (8 + 4) > 20.
    (["host.transport=ndp", *PAUSED, "adapter.voq_packets=20"], "adapter.voq_packets"),
    (["host.transport=tcp", "adapter.pause_xoff_packets=16"], "adapter.pause_xoff_packets"),
    (["host.transport=dcqcn", *PAUSED, "host.min_rto_ns=5000"], "host.min_rto_ns"),
    (["host.transport=tcp", "host.dcqcn.g=0.5"], "host.dcqcn.g"),
    (["host.packet_bytes=1500"], "host.packet_bytes"),
    (["host.transport=tcp", "traffic.pattern=all_to_all"], "traffic.pattern"),
    (["traffic.pattern=poisson"], "traffic.pattern"),
    (["traffic.senders=2"], "traffic.senders"),
    (["traffic.pattern=flows"], "traffic.flows"),
    (["host.transport=tcp", "host.initial_cwnd_packets=0"], "host.initial_cwnd_packets"),
    # The adapter's ingress options: low-latency VOQs and the shared ingress memory.
    (["adapter.low_latency_bytes=0"], "adapter.low_latency_bytes"),
    (["adapter.low_latency_bytes=100", "adapter.low_latency_gbps=0"], "adapter.low_latency_gbps"),
    (["adapter.low_latency_gbps=2"], "adapter.low_latency_gbps"),
    (["stardust.credits=false", "adapter.low_latency_bytes=100"], "adapter.low_latency_bytes"),
    (["adapter.ingress_buffer_bytes=0"], "adapter.ingress_buffer_bytes"),
    (["adapter.voqs=per_host"], "adapter.voqs"),
])
def test_bad_input_is_one_line_naming_the_key(settings: list[str], key: str):
    sets = [arg for s in settings for arg in ("--set", s)]
    done = cli("run", PERMUTATION, "--set", "topology.k=4", "--set", "run.duration_ns=100000",
               "--set", "run.warmup_ns=10000", *sets)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert f" {key}: " in done.stderr, done.stderr
    if key == "host.transport":
        assert "adapter.pause_hosts = true" in done.stderr, "names the key that allows it"


@pytest.mark.parametrize("settings, message", [
    (["host.transport=mptcp"], " host.transport: \"mptcp\" cannot open flows during a run"),
    (["host.transport=tcp", "traffic.flow_bytes=1000"], " traffic.flow_bytes: "),
    (["host.transport=tcp", "traffic.fct_dst=16"], " traffic.fct_dst: expected a host below 16, got 16"),
])
def test_bad_fct_settings_on_transport_hosts_are_one_line_naming_the_key(settings: list[str], message: str):
    sets = [arg for setting in settings for arg in ("--set", setting)]
    done = cli("run", FCT, *SMALL_FCT, *sets)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert message in done.stderr, done.stderr
