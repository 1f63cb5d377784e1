"""Time series (`run.sample_ns`): the backlog and the deliveries over simulated time, as a table
of every run that asks for one, that adds up to the run's own count, is the same run after run,
and is drawn in the run's report."""

import json
from pathlib import Path

import pandas as pd
import pytest
from test_report import check_drawn, chromium, cli, open_in_browser

import cellfabric

SHORT = {"run.duration_ns": 102_400, "run.warmup_ns": 10_240}  # 20 000 cell times


def test_the_series_adds_up_to_the_run_and_shows_a_saturated_backlog_growing():
    res = cellfabric.run("scenarios/classic/fifo.toml", overrides={**SHORT, "run.sample_ns": 5120},
                         progress=False)
    series = res.tables["time_series"]
    assert list(series.columns) == ["time_ns", "in_flight", "delivered"]
    assert len(series) == 20 and series["time_ns"].iloc[-1] == 102_400
    assert series["delivered"].sum() == res["cells_delivered"]
    assert series["in_flight"].iloc[-1] == res["cells_in_flight"]
    # FIFO at load 1 carries about 0.586 of 32 cells a slot; the rest piles up.
    per_slot = series["delivered"].iloc[1:] / 1000
    assert per_slot.mean() == pytest.approx(32 * 0.6, abs=32 * 0.05)
    assert series["in_flight"].is_monotonic_increasing
    again = cellfabric.run("scenarios/classic/fifo.toml", overrides={**SHORT, "run.sample_ns": 5120},
                           progress=False)
    pd.testing.assert_frame_equal(again.tables["time_series"], series)


def test_a_stable_run_keeps_a_level_backlog_and_a_run_that_does_not_ask_has_no_series():
    res = cellfabric.run("scenarios/classic/output-queued.toml",
                         overrides={**SHORT, "traffic.load": 0.5, "run.sample_ns": 10_240}, progress=False)
    series = res.tables["time_series"]
    assert series["in_flight"].max() < 200, "an output-queued switch at half load holds little"
    assert "time_series" not in cellfabric.run("scenarios/classic/output-queued.toml", overrides=SHORT,
                                               progress=False).tables


@pytest.mark.parametrize(("value", "expected"), [
    ("0", "run.sample_ns: expected a positive interval"),
    ("0.0001", "giving at most 1000000 samples"),
])
def test_a_sampling_interval_that_cannot_work_is_refused(value: str, expected: str):
    done = cli("run", "scenarios/classic/fifo.toml", "--set", f"run.sample_ns={value}")
    assert done.returncode == 2 and expected in done.stderr, done.stderr


def test_the_series_is_written_and_drawn_in_the_run_report(tmp_path: Path):
    out = tmp_path / "run"
    done = cli("run", "scenarios/classic/fifo.toml", "--out", str(out), "--set", "run.sample_ns=5120",
               *[arg for key, value in SHORT.items() for arg in ("--set", f"{key}={value}")])
    assert done.returncode == 0, done.stderr
    series = pd.read_parquet(out / "time_series.parquet")
    assert series["delivered"].sum() == json.loads((out / "summary.json").read_text())["cells_delivered"]
    if chromium() is None:
        pytest.skip("no chromium or playwright (CI sets CELLFABRIC_REQUIRE_BROWSER and installs them)")
    page = Path(cli("report", str(out)).stdout.strip())
    errors, plots = open_in_browser(page, tmp_path / "run.png")
    assert errors == []
    assert len(plots) == 2, "the latency CDF and the time series"
    check_drawn(plots)
