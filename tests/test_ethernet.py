"""The Ethernet baseline through the command line: the permutation's --json summary carries
goodput and per-flow goodput for every transport, and bad input is one line naming the key, exit
status 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT

PERMUTATION = "scenarios/baselines/permutation.toml"
SHORT = ["--set", "run.duration_ns=1000000", "--set", "run.warmup_ns=500000"]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cellfabric.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


@pytest.mark.parametrize("transport", ["dctcp", "tcp", "mptcp"])
def test_the_permutation_reports_goodput_per_flow(transport: str):
    strict = ["--set", "run.strict=false"] if transport == "tcp" else []
    subflows = ["--set", "host.subflows=8"] if transport == "mptcp" else []
    done = cli("run", PERMUTATION, *SHORT, *strict, "--set", f"host.transport={transport}", *subflows,
               "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["design"] == "ethernet" and summary["transport"] == transport
    assert summary["hosts"] == 432 and summary["flows"] == 432
    assert 0.2 < summary["goodput"] < 1.0
    spread = summary["flow_goodput_gbps"]
    # At most line rate, give or take the one packet straddling the window's start.
    one_packet_gbps = 9000 * 8 / 0.5e-3 / 1e9
    assert spread["min"] <= spread["p1"] <= spread["p50"] <= spread["max"] <= 10.0 + one_packet_gbps
    assert summary["goodput"] == pytest.approx(spread["mean"] / 10.0)
    assert summary["packets_created"] == (summary["packets_delivered"] + summary["packets_dropped"]
                                          + summary["packets_in_flight"])


@pytest.mark.parametrize("setting, key", [
    ("switch.ecn_threshold_packets=100", "switch.ecn_threshold_packets"),
    ("switch.queue_packets=0", "switch.queue_packets"),
    ("host.transport=ndp", "host.transport"),
    ("traffic.senders=3", "traffic.senders"),
    ("host.subflows=0", "host.subflows"),
])
def test_bad_input_is_one_line_naming_the_key(setting: str, key: str):
    done = cli("run", PERMUTATION, *SHORT, "--set", setting)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert f" {key}: " in done.stderr, done.stderr


def test_subflows_with_a_single_path_transport_is_an_unused_key():
    done = cli("run", PERMUTATION, *SHORT, "--set", "host.subflows=8")
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert " host.subflows: not used with host.transport = \"dctcp\"" in done.stderr, done.stderr


def test_more_single_path_flows_than_the_pattern_has_is_one_line_naming_the_key():
    done = cli("run", PERMUTATION, *SHORT, "--set", "host.transport=mptcp",
               "--set", "traffic.single_path_flows=433")
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert " traffic.single_path_flows: expected at most the pattern's 432 flows" in done.stderr, done.stderr
