"""Sweeps: one folder and one row per (point, seed), means with confidence intervals, reruns that
skip finished runs, the same results whatever the number of workers, and bad grids refused with
status 2 before anything runs."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from cellfabric import ScenarioError
from cellfabric.sweeps import default_jobs, parse_grid, plan_sweep, point_name, sweep
from conftest import ROOT, binomial_band

SHORT = {"run.duration_ns": 51200, "run.warmup_ns": 5120}  # 10 000 cell times of 5.12 ns


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cellfabric.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def without_wall_clock(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns=[c for c in frame.columns if c.startswith("perf.")])


def test_sweep_writes_a_folder_and_a_row_per_point_and_seed(small_scenario: Path, tmp_path: Path):
    out = tmp_path / "sweep"
    result = sweep(small_scenario, {"traffic.load": [0.3, 0.8]}, out, seeds=3, overrides=SHORT, jobs=2)
    runs = pd.read_parquet(out / "results.parquet")
    assert len(runs) == 6 and result.ran == 6 and result.failed == 0
    assert list(runs[["traffic.load", "seed"]].itertuples(index=False, name=None)) == [
        (0.3, 3), (0.3, 4), (0.3, 5), (0.8, 3), (0.8, 4), (0.8, 5)]  # seeds count up from run.seed = 3
    for row in runs.itertuples():
        summary = json.loads((out / row.folder / "summary.json").read_text())
        assert summary["seed"] == row.seed and summary["throughput"] == row.throughput
        assert json.loads((out / row.folder / "scenario.json").read_text())["traffic"]["load"] == row[1]
    assert not list(out.rglob(".*tmp*")), "no temporary folder or file is left behind"

    points = pd.read_parquet(out / "points.parquet")
    assert list(points["seeds"]) == [3, 3]
    for load, point in zip([0.3, 0.8], points.itertuples(index=False), strict=True):
        values = runs.loc[runs["traffic.load"] == load, "throughput"]
        assert point.throughput == pytest.approx(values.mean())
        half_width = 4.303 * values.std(ddof=1) / math.sqrt(3)  # Student's t, 2 degrees of freedom
        ci95 = points.loc[points["traffic.load"] == load, "throughput.ci95"].item()
        assert ci95 == pytest.approx(half_width)
        # 8 hosts over 9 000 measured cell times and 3 seeds, each a Bernoulli draw per cell time.
        assert abs(point.throughput - load) < binomial_band(load, 8 * 9_000 * 3)


def test_rerun_skips_finished_runs_and_reruns_changed_or_missing_ones(small_scenario: Path, tmp_path: Path):
    out = tmp_path / "sweep"
    first = sweep(small_scenario, {"traffic.load": [0.3, 0.8]}, out, seeds=2, overrides=SHORT, jobs=1)
    again = sweep(small_scenario, {"traffic.load": [0.3, 0.8]}, out, seeds=2, overrides=SHORT, jobs=1)
    assert (again.ran, again.skipped) == (0, 4)
    pd.testing.assert_frame_equal(without_wall_clock(first.runs), without_wall_clock(again.runs))

    # A run whose folder is gone is run again (a half-written one left by a killed sweep is
    # cleared); so is every run of a changed scenario.
    import shutil

    folder = out / first.runs["folder"][1]
    shutil.rmtree(folder)
    (folder.parent / f".{folder.name}.tmp-999999").mkdir()
    assert sweep(small_scenario, {"traffic.load": [0.3, 0.8]}, out, seeds=2, overrides=SHORT).ran == 1
    assert (folder / "summary.json").exists() and not list(out.rglob(".*tmp*"))
    longer = {**SHORT, "run.duration_ns": 61440}
    changed = sweep(small_scenario, {"traffic.load": [0.3, 0.8]}, out, seeds=2, overrides=longer)
    assert (changed.ran, changed.skipped) == (4, 0)

    done = cli("sweep", str(small_scenario), "--grid", "traffic.load=0.3,0.8", "--seeds", "2",
               *[f"--set={k}={v}" for k, v in longer.items()], "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "0 run, 4 already finished (skipped)" in done.stdout


def test_results_do_not_depend_on_the_number_of_workers(small_scenario: Path, tmp_path: Path):
    grid = {"traffic.load": [0.4, 0.9], "switch.scheduler": ["islip", "pim"]}
    one = sweep(small_scenario, grid, tmp_path / "one", seeds=2, overrides=SHORT, jobs=1)
    two = sweep(small_scenario, grid, tmp_path / "two", seeds=2, overrides=SHORT, jobs=2)
    pd.testing.assert_frame_equal(without_wall_clock(one.runs), without_wall_clock(two.runs))
    pd.testing.assert_frame_equal(one.points, two.points)


def test_a_point_that_cannot_run_is_recorded_and_the_others_run(small_scenario: Path, tmp_path: Path):
    # islip takes at most 256 ports; output_queued takes 300: only that combination is invalid.
    grid = {"switch.scheduler": ["output_queued", "islip"], "switch.ports": [4, 300]}
    overrides = {**SHORT, "run.duration_ns": 10240, "run.warmup_ns": 1024}
    result = sweep(small_scenario, grid, tmp_path / "s", overrides=overrides, jobs=1)
    by_point = result.runs.set_index(["switch.scheduler", "switch.ports"])
    assert by_point.loc[("islip", 300), "status"] == "failed"
    assert "switch.ports" in by_point.loc[("islip", 300), "error"]
    assert (by_point.drop(index=("islip", 300))["status"] == "ok").all()
    assert result.failed == 1 and result.ran == 3

    done = cli("sweep", str(small_scenario), "--grid", "switch.scheduler=output_queued,islip",
               "--grid", "switch.ports=4,300", "--set", "run.duration_ns=10240",
               "--set", "run.warmup_ns=1024",
               "--out", str(tmp_path / "s"))
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "1 of 4 runs failed" in done.stderr


def test_a_sweep_file_sets_keys_together_and_cli_grids_add_to_it(small_scenario: Path, tmp_path: Path):
    spec = tmp_path / "sweep.toml"
    spec.write_text(f"""
scenario = "{small_scenario.name}"
seeds = 2
[grid]
"traffic.load+switch.ports" = [[0.3, 4], [0.6, 8]]
[set]
"run.duration_ns" = 20480
"run.warmup_ns" = 2048
""")
    done = cli("sweep", str(spec), "--grid", "switch.scheduler=islip,pim", "--out", str(tmp_path / "s"))
    assert done.returncode == 0, done.stderr
    runs = pd.read_parquet(tmp_path / "s" / "results.parquet")
    assert len(runs) == 8
    assert set(zip(runs["traffic.load"], runs["switch.ports"], strict=True)) == {(0.3, 4), (0.6, 8)}
    assert set(runs["ports"]) == {4, 8}  # the summary's own port count follows the axis
    assert "traffic.load 0.3  switch.ports 4  switch.scheduler islip  seeds 2  throughput" in done.stdout


def test_an_axis_of_tables_sets_only_the_keys_each_value_names(small_scenario: Path, tmp_path: Path):
    arrivals = [{"traffic.arrival": "bernoulli"},
                {"traffic.arrival": "bursty", "traffic.burst_mean_cells": 8}]
    result = sweep(small_scenario, {"arrival": arrivals, "traffic.load": [0.5]}, tmp_path / "s",
                   overrides=SHORT)
    assert result.failed == 0
    assert result.axes == ["traffic.arrival", "traffic.burst_mean_cells", "traffic.load"]
    scenarios = [json.loads((tmp_path / "s" / f / "scenario.json").read_text())["traffic"]
                 for f in result.runs["folder"]]
    assert "burst_mean_cells" not in scenarios[0] and scenarios[1]["burst_mean_cells"] == 8
    assert result.runs["traffic.burst_mean_cells"].isna().tolist() == [True, False]


def test_a_text_axis_a_point_leaves_unset_stays_unset(small_scenario: Path, tmp_path: Path):
    """Not the text "nan", which a report would show as a value."""
    arrivals = [{"traffic.arrival": None}, {"traffic.arrival": "bursty", "traffic.burst_mean_cells": 8}]
    result = sweep(small_scenario, {"arrival": arrivals}, tmp_path / "s", overrides=SHORT)
    for frame in (result.points, pd.read_parquet(tmp_path / "s" / "points.parquet")):
        assert frame["traffic.arrival"].isna().tolist() == [True, False]
        assert frame["traffic.arrival"].iloc[1] == "bursty"


@pytest.mark.parametrize(("args", "expected"), [
    (["--grid", "traffic.lod=0.5,0.9"], "traffic.lod: unknown field `lod`"),
    (["--grid", "switch.ports=8,abc"], '--grid switch.ports="abc": switch.ports: invalid type'),
    (["--grid", "traffic.load=0.5,2.0"], "--grid traffic.load=2.0: traffic.load"),
    (["--grid", "switch.ports"], "--grid switch.ports: expected key.path=value1,value2"),
    (["--grid", "a+b=1,2"], "--grid a+b: expected lists of 2 values"),
    (["--grid", "traffic.load=0.5", "--seeds", "0"], "--seeds 0: expected a whole number"),
    (["--grid", "traffic.load=0.5", "--backend", "slurm"], "--backend slurm: expected local or ray"),
])
def test_a_bad_sweep_is_refused_with_status_2_before_anything_runs(small_scenario: Path, tmp_path: Path,
                                                                    args: list[str], expected: str):
    out = tmp_path / "s"
    done = cli("sweep", str(small_scenario), *args, "--out", str(out))
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("cellfabric: error: ") and expected in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert not out.exists(), "bad input leaves no folder behind"


def test_ray_backend_without_ray_says_how_to_install_it(small_scenario: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch):
    from click.testing import CliRunner

    from cellfabric.cli import main

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as if it were not installed
    with pytest.raises(ScenarioError, match=r"pip install 'cellfabric\[ray\]'"):
        sweep(small_scenario, {"traffic.load": [0.5]}, tmp_path / "api", backend="ray")
    done = CliRunner().invoke(main, ["sweep", str(small_scenario), "--grid", "traffic.load=0.5",
                                     "--backend", "ray", "--out", str(tmp_path / "s")])
    assert done.exit_code == 2
    assert "Ray is not installed (install it with: pip install 'cellfabric[ray]')" in done.output
    assert not (tmp_path / "s" / "points").exists()


def test_grid_values_and_point_names():
    assert parse_grid("traffic.load=0.5,0.9") == ("traffic.load", [0.5, 0.9])
    assert parse_grid("switch.scheduler=islip,pim") == ("switch.scheduler", ["islip", "pim"])
    assert parse_grid("a+b=[1,2],[3,4]") == ("a+b", [[1, 2], [3, 4]])
    name = point_name({"traffic.load": 0.9, "switch.scheduler": "pim"})
    assert name == "traffic.load=0.9,switch.scheduler=pim"
    # Characters a folder name cannot hold are replaced, and a hash keeps such names apart.
    assert point_name({"topology.file": "a/b"}) != point_name({"topology.file": "a_b"})
    assert "/" not in point_name({"topology.file": "a/b"})


def test_ray_backend_gives_the_same_results_as_the_local_one(small_scenario: Path, tmp_path: Path):
    """On a real local Ray instance of two CPUs (CI installs the ray extra and sets
    CELLFABRIC_REQUIRE_RAY, so this cannot be skipped there)."""
    import os

    try:
        import ray  # noqa: F401
    except ImportError:
        if os.environ.get("CELLFABRIC_REQUIRE_RAY"):
            raise
        pytest.skip("ray is not installed (pip install 'cellfabric[ray]')")
    grid = {"traffic.load": [0.4, 0.9]}
    local = sweep(small_scenario, grid, tmp_path / "local", seeds=2, overrides=SHORT, jobs=2)
    on_ray = sweep(small_scenario, grid, tmp_path / "ray", seeds=2, overrides=SHORT, jobs=2, backend="ray")
    assert on_ray.ran == 4
    pd.testing.assert_frame_equal(without_wall_clock(local.runs), without_wall_clock(on_ray.runs))
    pd.testing.assert_frame_equal(local.points, on_ray.points)
    for folder in on_ray.runs["folder"]:
        assert (tmp_path / "ray" / folder / "summary.json").exists()


def test_ctrl_c_keeps_the_finished_runs_and_a_rerun_completes_the_sweep(small_scenario: Path, tmp_path: Path):
    import signal
    import time

    out = tmp_path / "s"
    args = [sys.executable, "-m", "cellfabric.cli", "sweep", str(small_scenario), "--out", str(out),
            "--grid", "traffic.load=0.5,0.6,0.7,0.8,0.9,0.95", "--set", "switch.ports=32",
            "--set", "run.duration_ns=2048000", "--jobs", "2"]  # runs of a few tenths of a second
    process = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not list(out.glob("points/*/seed-3/summary.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert stderr.startswith("cellfabric: error: interrupted") and "Traceback" not in stderr
    runs = pd.read_parquet(out / "results.parquet")
    done = runs[runs["status"] == "ok"]
    assert 1 <= len(done) < 6 and set(runs["status"]) <= {"ok", "not run"}
    assert not list(out.rglob(".*tmp*")), "no half-written folder is left behind"
    rerun = cli(*args[3:])
    assert rerun.returncode == 0, rerun.stderr
    assert f"{6 - len(done)} run, {len(done)} already finished (skipped)" in rerun.stdout


FAT_TREE = ROOT / "scenarios" / "fabric" / "fat-tree.toml"
FAT_TREE_SHORT = {"run.duration_ns": 10240, "run.warmup_ns": 1024}  # 2 000 cell times


def test_a_sweep_on_threads_gives_the_results_of_one_thread_and_divides_the_cores(tmp_path: Path):
    grid = {"traffic.load": [0.3, 0.8]}
    one = sweep(FAT_TREE, grid, tmp_path / "one", overrides=FAT_TREE_SHORT, jobs=1)
    two = sweep(FAT_TREE, grid, tmp_path / "two", overrides=FAT_TREE_SHORT, threads=2)
    for folder in two.runs["folder"]:
        assert json.loads((tmp_path / "two" / folder / "scenario.json").read_text())["run"]["threads"] == 2
    columns = [c for c in one.runs.columns if not c.startswith("perf.") and c != "folder"]
    pd.testing.assert_frame_equal(one.runs[columns], two.runs[columns])
    # Threads change the wall time, not the results: a rerun on another count skips every run.
    again = sweep(FAT_TREE, grid, tmp_path / "one", overrides=FAT_TREE_SHORT, threads=2)
    assert again.ran == 0 and again.skipped == 2
    cores = os.cpu_count() or 1
    def plan(**keys):
        return plan_sweep(FAT_TREE, grid, tmp_path / "plan", overrides=FAT_TREE_SHORT, **keys)

    assert default_jobs(plan(threads=2).runs) == max(1, cores // 2)
    with_key = plan_sweep(FAT_TREE, grid, tmp_path / "plan", overrides={**FAT_TREE_SHORT, "run.threads": 2})
    assert default_jobs(with_key.runs) == max(1, cores // 2)
    assert default_jobs(plan().runs) == cores
    assert default_jobs(plan(threads="auto").runs) == 1


def test_a_sweep_on_threads_of_a_design_that_runs_on_one_is_refused_before_it_runs(
    small_scenario: Path, tmp_path: Path
):
    done = cli("sweep", str(small_scenario), "--grid", "traffic.load=0.3,0.8", "--threads", "2",
               "--out", str(tmp_path / "s"))
    assert done.returncode == 2, done.stderr
    assert "run.threads" in done.stderr and "runs on one thread" in done.stderr
    assert not (tmp_path / "s").exists()
