"""The Python API: run(path_or_dict, overrides, seed), results, determinism, GIL release."""

import json
import threading
import time

import pandas as pd
import pytest

import cellfabric
from cellfabric._core import Simulation
from conftest import binomial_band

SMALL = {
    "run": {"seed": 1, "duration_ns": 102_400, "warmup_ns": 10_240},
    "switch": {"ports": 8, "scheduler": "fifo"},
    "traffic": {"load": 0.5},
}


def stable(summary: dict) -> dict:
    """The summary holds no wall-clock figure (those are in ``perf``): it compares whole."""
    assert not {"wall_s", "events_per_s", "cell_hops_per_s"} & set(summary)
    return summary


def test_run_from_dict_returns_summary_and_dataframes():
    res = cellfabric.run(SMALL)
    # 8 hosts, a Bernoulli draw each per measured cell time (18 000), below FIFO saturation.
    assert abs(res["throughput"] - 0.5) < binomial_band(0.5, 8 * 18_000)
    assert set(res.tables) == {"latency_histogram", "ports", "queue_occupancy"}
    assert all(isinstance(t, pd.DataFrame) for t in res.tables.values())
    assert res.tables["ports"]["cells_delivered"].sum() == res.summary["cells_delivered"]


def test_run_from_path_with_overrides_and_seed(small_scenario):
    res = cellfabric.run(small_scenario, overrides={"traffic.load": 0.2, "switch.ports": 4}, seed=9)
    assert res["ports"] == 4 and res["seed"] == 9
    assert res["offered_load"] == 0.2


def test_same_seed_same_results_other_seed_other_latencies():
    a, b = cellfabric.run(SMALL), cellfabric.run(SMALL)
    assert stable(a.summary) == stable(b.summary)
    assert a.tables["latency_histogram"].equals(b.tables["latency_histogram"])
    c = cellfabric.run(SMALL, seed=2)
    assert c["latency_ns"] != a["latency_ns"]


def test_the_input_mapping_is_not_modified():
    before = json.dumps(SMALL, sort_keys=True)
    cellfabric.run(SMALL, overrides={"traffic.load": 0.1})
    assert json.dumps(SMALL, sort_keys=True) == before


def test_bad_scenarios_raise_scenario_error_naming_the_key():
    with pytest.raises(cellfabric.ScenarioError, match="traffic.load"):
        cellfabric.run(SMALL, overrides={"traffic.load": 2})
    with pytest.raises(cellfabric.ScenarioError, match="switch.prots"):
        cellfabric.run(SMALL, overrides={"switch.prots": 4})


def test_engine_releases_the_gil():
    """Another Python thread keeps running while the core advances a long step."""
    sim = Simulation(json.dumps({**SMALL, "run": {"duration_ns": 2_048_000, "warmup_ns": 5_120}}))
    inside = threading.Event()
    ticks = 0

    def advance():
        inside.set()
        sim.advance(sim.end_ps)

    worker = threading.Thread(target=advance)
    worker.start()
    inside.wait()
    started = time.perf_counter()
    while worker.is_alive():
        ticks += 1
    elapsed = time.perf_counter() - started
    worker.join()
    assert elapsed > 0.05, "the step was too short to tell"
    assert ticks > 10_000, f"main thread made only {ticks} iterations in {elapsed:.3f} s"
    summary, _, _ = sim.finish()
    assert json.loads(summary)["sim_time_ps"] == sim.end_ps


def test_progress_bar_reports_simulated_time_and_event_rate(monkeypatch, capsys):
    monkeypatch.setattr(cellfabric.runner, "PROGRESS_AFTER_S", 0.0)
    monkeypatch.setattr(cellfabric.runner, "STEP_WALL_S", 0.001)
    cellfabric.run({**SMALL, "run": {"duration_ns": 1_024_000, "warmup_ns": 5_120}}, progress=True)
    err = capsys.readouterr().err
    assert "events/s" in err and "µs sim" in err


def test_no_progress_bar_when_disabled(capsys):
    cellfabric.run(SMALL, progress=False)
    assert capsys.readouterr().err == ""
