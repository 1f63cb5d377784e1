"""Aquila's Clique from the command line (Gibson et al., NSDI '22): the shipped scenarios are
accepted, and a Clique the ports cannot build, or cells outside GNet's 16 to 160 bytes, are
refused with the key named and exit status 2."""

from __future__ import annotations

from pathlib import Path

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
    ("gnet.packet_bytes=9001", "gnet.packet_bytes"),
    ("gnet.ctd_threshold_rts=65", "gnet.ctd_threshold_rts"),
    ("gnet.fetch_window_packets=0", "gnet.fetch_window_packets"),
    ("gnet.reassembly_bytes=4095", "gnet.reassembly_bytes"),
    ("gnet.ecn_threshold_rts=65", "gnet.ecn_threshold_rts"),
    ("vc.classes=1", "vc.classes"),
])
def test_bad_ip_over_gnet_input_is_one_line_naming_its_key_and_status_2(setting, key, tmp_path):
    scenario = str(ROOT / "aquila/fig7-ip-latency.toml")
    result = CliRunner().invoke(main, ["run", scenario, "--set", setting, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert key in result.output
    assert "Traceback" not in result.output
