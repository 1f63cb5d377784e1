"""cellfabric show: the effective scenario as TOML, with the core's defaults filled in, which runs
to exactly the results of the scenario it was shown from; bad input refused with status 2."""

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import ROOT

PERF = ("perf", "provenance")


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cellfabric.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def summary(done: subprocess.CompletedProcess) -> dict:
    assert done.returncode == 0, done.stderr
    return {k: v for k, v in json.loads(done.stdout).items() if k not in PERF}


@pytest.mark.parametrize(("scenario", "short"), [
    ("scenarios/classic/fifo.toml", ["--set", "run.duration_ns=51200", "--set", "run.warmup_ns=5120"]),
    ("scenarios/stardust/fct.toml", ["--set", "run.duration_ns=20000", "--set", "run.warmup_ns=0"]),
    ("scenarios/clint/quick.toml", ["--set", "run.duration_ns=200000", "--set", "run.warmup_ns=0"]),
])
def test_the_shown_scenario_runs_to_the_same_results_from_any_folder(scenario: str, short: list[str],
                                                                     tmp_path: Path):
    shown = cli("show", scenario, *short, "--seed", "5")
    assert shown.returncode == 0, shown.stderr
    effective = tomllib.loads(shown.stdout)
    assert effective["run"]["seed"] == 5
    copy = tmp_path / "shown.toml"  # elsewhere: files it names must still be found
    copy.write_text(shown.stdout)
    assert summary(cli("run", str(copy), "--json", cwd=tmp_path)) == summary(
        cli("run", scenario, *short, "--seed", "5", "--json"))


def test_defaults_the_file_does_not_set_are_filled_in():
    shown = cli("show", "scenarios/classic/fifo.toml", "--set", "traffic.load=0.7")
    effective = tomllib.loads(shown.stdout)
    assert "propagation_ns" not in (ROOT / "scenarios/classic/fifo.toml").read_text()
    assert effective["link"]["propagation_ns"] == 0.0 and effective["traffic"]["load"] == 0.7
    assert effective["topology"]["kind"] == "star" and effective["design"] == "single_switch"


def test_toml_text_reads_back_as_the_scenario():
    from cellfabric.show import to_toml

    scenario = {"design": "stardust", "failures": [{"at_ns": 300000, "switch": "fe0", "port": None}],
                "run": {"seed": 1, "duration_ns": 5.5e6}, "switch": {"buffer_cells": None, "name": 'a"b'},
                "topology": {"kind": "file", "inner": {"depth": 1}}, "nic": {},
                "traffic": {"load": float("inf"), "flows": [{"src": 1, "dst": 2, "load": 0.25}]}}
    text = to_toml(scenario)
    assert "# buffer_cells: not set" in text  # TOML has no null: an unset key is a comment
    assert tomllib.loads(text) == {**scenario, "failures": [{"at_ns": 300000, "switch": "fe0"}],
                                   "switch": {"name": 'a"b'}}


@pytest.mark.parametrize(("args", "expected"), [
    (["--set", "traffic.load=2.0"], "--set traffic.load=2.0: traffic.load: expected a fraction"),
    (["--set", "traffic.lod=0.5"], "traffic.lod: unknown field `lod`"),
    (["--set", "switch.ports=many"], "switch.ports: invalid type"),
])
def test_bad_input_is_refused_with_status_2(args: list[str], expected: str):
    done = cli("show", "scenarios/classic/fifo.toml", *args)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("cellfabric: error: ") and expected in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
