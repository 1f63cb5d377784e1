"""Runs cut short (Ctrl-C, ``run.max_cells_in_flight``) report the window they simulated: their
rates equal a full run's within noise, through the command line, Python and a sweep, and Ctrl-C
stops a run of any length, in every design, within a second."""

from __future__ import annotations

import _thread
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import cellfabric

ROOT = Path(__file__).resolve().parent.parent
FIFO = ROOT / "scenarios" / "classic" / "fifo.toml"
# FIFO at full load: the backlog grows by about 13 cells a cell time, so this limit stops the run
# about 7 500 cell times in, past the warm-up of 4 000.
SHORT = {"run.duration_ns": 40_000 * 5.12, "run.warmup_ns": 4_000 * 5.12}
STOP_EARLY = {**SHORT, "run.max_cells_in_flight": 100_000}
# Saturation throughput measured over a few thousand cell times of 32 ports: a few tenths of a
# percent of noise; a rate divided by the configured window instead would be about 0.06.
TOLERANCE = 0.015


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cellfabric.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


@pytest.fixture(scope="module")
def full() -> dict:
    return cellfabric.run(FIFO, overrides=SHORT, progress=False).summary


def _sets(overrides: dict) -> list[str]:
    return [arg for key, value in overrides.items() for arg in ("--set", f"{key}={value}")]


def test_a_run_stopped_early_reports_its_window_and_the_full_runs_rates_on_the_command_line(full):
    assert full["partial"] is False and full["measured_to_ns"] == SHORT["run.duration_ns"]
    done = cli("run", str(FIFO), "--json", *_sets(STOP_EARLY))
    assert done.returncode == 4, done.stderr
    partial = json.loads(done.stdout)
    assert partial["partial"] is True and partial["stopped_early"]
    assert partial["measured_from_ns"] == SHORT["run.warmup_ns"]
    assert SHORT["run.warmup_ns"] < partial["measured_to_ns"] < SHORT["run.duration_ns"] / 2
    assert partial["measured_to_ns"] * 1000 == partial["sim_time_ps"]
    for key in ("throughput", "injected_load", "goodput"):
        assert partial[key] == pytest.approx(full[key], abs=TOLERANCE), key
    assert partial["host_throughput"]["max"] <= 1.0
    human = cli("run", str(FIFO), *_sets(STOP_EARLY))
    assert human.stdout.startswith("design") and "PARTIAL" in human.stdout


def test_a_run_stopped_early_gives_the_full_runs_rates_in_python_and_in_a_sweep(full, tmp_path: Path):
    partial = cellfabric.run(FIFO, overrides=STOP_EARLY, progress=False).summary
    assert partial["partial"] is True
    assert partial["throughput"] == pytest.approx(full["throughput"], abs=TOLERANCE)
    swept = cellfabric.sweep(FIFO, {"switch.ports": [32]}, out=tmp_path / "sweep", overrides=STOP_EARLY,
                             jobs=1, progress=False)
    row = swept.runs.iloc[0]
    assert bool(row["partial"]) is True
    assert row["throughput"] == pytest.approx(full["throughput"], abs=TOLERANCE)


def test_an_interrupted_python_run_holds_the_rates_of_the_window_it_ran():
    islip = ROOT / "scenarios" / "classic" / "islip.toml"
    timer = threading.Timer(1.5, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(cellfabric.Interrupted) as stop:
            cellfabric.run(islip, overrides={"run.duration_ns": 1e12}, progress=False)
    finally:
        timer.cancel()
    summary = stop.value.result.summary
    assert summary["partial"] is True and stop.value.result.interrupted
    assert summary["throughput"] == pytest.approx(0.9, abs=0.01), "iSLIP carries its load of 0.9"


# One scenario of every design, each made a million times longer than any test could wait for.
DESIGNS = {
    "single_switch": "classic/islip.toml",
    "cell_fabric": "fabric/fat-tree.toml",
    "rifl": "rifl/table1.toml",
    "rifl_link": "rifl/link.toml",
    "clint": "clint/bulk.toml",
    "stardust": "stardust/permutation.toml",
    "ethernet": "baselines/permutation.toml",
}


@pytest.mark.parametrize("scenario", DESIGNS.values(), ids=DESIGNS.keys())
def test_ctrl_c_stops_a_run_of_any_length_within_a_second_in_every_design(scenario: str, tmp_path: Path):
    out = tmp_path / "partial"
    command = [sys.executable, "-m", "cellfabric.cli", "run", f"scenarios/{scenario}", "--out", str(out),
               "--set", "run.duration_ns=1e12"]
    run = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(3.0)
    assert run.poll() is None, run.communicate()
    sent = time.perf_counter()
    run.send_signal(signal.SIGINT)
    _, stderr = run.communicate(timeout=60)
    assert time.perf_counter() - sent < 1.0, "stopped within a second"
    assert run.returncode == 130 and "interrupted" in stderr and "Traceback" not in stderr, stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["partial"] is True
    assert 0 < summary["sim_time_ps"] < 1e12 * 1000
