"""Strict keys, where a bad key came from, honest summaries (configured against injected load,
stability, fairness over hosts) and the bound on cells in flight: each through the command line,
as a user meets them."""

import json
from pathlib import Path

import pytest
from test_cli import cli
from test_golden import SCENARIOS
from test_golden import _overrides as golden_overrides

import cellfabric

SHORT = ["--set", "run.duration_ns=51200", "--set", "run.warmup_ns=5120"]  # 10 000 cell times


def _scenario(tmp_path: Path, text: str) -> str:
    path = tmp_path / "s.toml"
    path.write_text(text)
    return str(path)


def test_a_key_the_mechanism_ignores_is_refused_with_its_file_and_line(tmp_path: Path):
    path = _scenario(tmp_path, '# FIFO\n\n[switch]\nscheduler = "fifo"\niterations = 4\n')
    done = cli("run", path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f'cellfabric: error: {path}:5: switch.iterations: not used with switch.scheduler = "fifo": '
        "remove it, or set run.strict = false to run with it ignored"
    )


def test_without_strict_an_ignored_key_runs_with_a_warning(tmp_path: Path):
    path = _scenario(tmp_path, '[run]\nstrict = false\n[switch]\nscheduler = "fifo"\niterations = 4\n')
    done = cli("run", path, "--json", *SHORT)
    assert done.returncode == 0, done.stderr
    warning = 'switch.iterations: not used with switch.scheduler = "fifo", ignored'
    assert json.loads(done.stdout)["warnings"] == [warning]
    assert f"cellfabric: warning: {warning}" in done.stderr


def test_a_file_key_orphaned_by_a_set_choice_warns_but_a_set_ignored_key_is_refused():
    orphaned = cli("run", "scenarios/rifl/table1.toml", "--json", "--set", "switch.scheduler=safc", *SHORT)
    assert orphaned.returncode == 0, orphaned.stderr
    assert "switch.iterations: not used with switch.scheduler" in orphaned.stderr
    asked = cli("run", "scenarios/classic/fifo.toml", "--set", "switch.iterations=4")
    assert asked.returncode == 2
    assert asked.stderr.startswith(
        "cellfabric: error: --set switch.iterations=4: switch.iterations: not used")


@pytest.mark.parametrize(("args", "message"), [
    (["--set", "traffic.arrival=bursty"],
     "traffic.arrival: bursty arrivals need a mean burst length: set traffic.burst_mean_cells,"),
    (["--set", "run.duration_ns=10"],
     "scenarios/classic/fifo.toml:11: run.warmup_ns: expected 0 to less than run.duration_ns (10 ns)"),
    (["--set", "topology.leaves=4"],
     '--set topology.leaves=4: topology.leaves: not used with topology.kind = "star"'),
])
def test_messages_say_where_the_key_came_from(args: list[str], message: str):
    done = cli("run", "scenarios/classic/fifo.toml", *args)
    assert done.returncode == 2
    assert message in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("scenario", ["scenarios/stardust/push-pull.toml", "scenarios/baselines/incast.toml"])
def test_a_link_too_fast_for_picosecond_time_is_refused_not_run_out_of_memory(scenario: str):
    # The fuzzer found it: 10^12 Gbit/s serialized cells in a picosecond and the run grew
    # without bound (24 GB) instead of being refused.
    done = cli("run", scenario, "--set", "link.rate_gbps=1e12")
    assert done.returncode == 2, done.stderr
    assert "link.rate_gbps: expected 0.001 to 100000 Gbit/s" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_key_left_at_its_default_says_so(tmp_path: Path):
    path = _scenario(tmp_path, "[run]\nduration_ns = 1000\n")
    done = cli("run", path)
    assert done.returncode == 2
    assert f"(run.warmup_ns is not set in {path}: its default applies)" in done.stderr


def test_configured_and_injected_load_are_both_reported_and_hosts_share_evenly():
    done = cli("run", "scenarios/classic/output-queued.toml", "--json", "--set", "traffic.load=0.5", *SHORT)
    summary = json.loads(done.stdout)
    assert summary["offered_load"] == 0.5
    assert summary["injected_load"] == pytest.approx(0.5, abs=0.01) and summary["injected_load"] != 0.5
    spread = summary["host_throughput"]
    assert spread["min"] < summary["throughput"] < spread["max"]
    assert 0.99 < spread["jain_index"] <= 1.0, "uniform traffic spreads evenly over 32 hosts"
    assert summary["stable"] is True and summary["stopped_early"] is None


def test_a_hotspot_is_visible_in_the_fairness_over_hosts():
    done = cli("run", "scenarios/classic/output-queued.toml", "--json", "--set", "traffic.load=0.3",
               "--set", "traffic.destinations=hotspot", "--set", "traffic.hotspot_fraction=0.5", *SHORT)
    spread = json.loads(done.stdout)["host_throughput"]
    # Half of 32 × 0.3 cells per slot go to one host, which can take only 1; the other 31 get
    # 0.15 each: Jain's index (1 + 31·0.15)² / (32·(1 + 31·0.15²)) = 0.588.
    assert spread["max"] > 0.97 and spread["min"] < 0.2
    assert spread["jain_index"] == pytest.approx(0.588, abs=0.02)


def test_a_saturated_run_says_so():
    done = cli("run", "scenarios/classic/fifo.toml", *SHORT)
    assert done.returncode == 0, done.stderr
    assert "SATURATED" in done.stdout
    stable = cli("run", "scenarios/classic/output-queued.toml", "--set", "traffic.load=0.5", *SHORT)
    assert "SATURATED" not in stable.stdout


def test_a_run_over_its_cell_limit_stops_with_partial_results_and_status_4(tmp_path: Path):
    out = tmp_path / "out"
    done = cli("run", "scenarios/classic/fifo.toml", "--set", "run.max_cells_in_flight=20000",
               "--out", str(out))
    assert done.returncode == 4
    assert "more than run.max_cells_in_flight = 20000" in done.stderr
    assert f"partial results in {out}" in done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stable"] is False and "run.max_cells_in_flight" in summary["stopped_early"]
    assert summary["sim_time_ps"] < 0.1 * 1_024_000_000, "stopped long before the end"
    assert summary["cells_in_flight"] > 20_000
    assert summary["cells_injected"] == (
        summary["cells_delivered"] + summary["cells_dropped"] + summary["cells_in_flight"]
    )


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_the_effective_scenario_runs_as_the_scenario_did(path: Path):
    """Provenance's effective scenario (every default filled in, nothing unused) is itself a
    scenario, and it runs to the same summary: nothing was lost or added in writing it out."""
    overrides = golden_overrides(path)
    given = cellfabric.run(path, overrides=overrides, progress=False)
    effective = given.provenance["effective_scenario"]
    assert effective["design"] == given.summary["design"]
    again = cellfabric.run(effective, progress=False)
    assert again.summary == given.summary
    assert again.provenance["effective_scenario"] == effective


def test_a_run_that_can_say_little_is_warned_of():
    short = cli("run", "scenarios/classic/islip.toml", "--json", "--set", "link.propagation_ns=500",
                "--set", "run.duration_ns=2000", "--set", "run.warmup_ns=1000")
    assert short.returncode == 0, short.stderr
    assert json.loads(short.stdout)["warnings"] == [
        "run.duration_ns: the measured window (1000 ns) is shorter than one round trip over the longest "
        "cable (1010 ns)"]
    long_bursts = cli("run", "scenarios/rifl/table1.toml", "--json", "--set", "traffic.arrival=bursty",
                      "--set", "traffic.burst_mean_cells=100000", *SHORT)
    assert long_bursts.returncode == 0, long_bursts.stderr
    warnings = json.loads(long_bursts.stdout)["warnings"]
    burst = "traffic.burst_mean_cells: a mean burst (100000.0 cells) lasts longer"
    assert any(w.startswith(burst) for w in warnings), warnings


def test_latencies_are_null_when_nothing_was_measured():
    done = cli("run", "scenarios/classic/islip.toml", "--json", "--set", "traffic.load=0.000001",
               "--set", "run.duration_ns=10000", "--set", "run.warmup_ns=1000")
    summary = json.loads(done.stdout)
    assert summary["cells_measured"] == 0
    assert summary["latency_cells"] is None and summary["latency_ns"] is None
    # The backlog is sampled at fixed instants whether or not anything happens: empty throughout.
    assert summary["stable"] is True


@pytest.mark.parametrize(("value", "message"), [
    ("nan", "--set traffic.load=nan: traffic.load: expected a finite number, got nan"),
    ("-inf", "--set traffic.load=-inf: traffic.load: expected a finite number, got -inf"),
    ('"high"', '--set traffic.load=high: traffic.load: invalid type: expected a number, got "high"'),
])
def test_bad_values_are_told_in_the_users_words(value: str, message: str):
    done = cli("run", "scenarios/classic/islip.toml", "--set", f"traffic.load={value}")
    assert done.returncode == 2
    assert done.stderr.strip() == f"cellfabric: error: {message}"


def test_a_whole_number_key_says_so_and_gives_its_range():
    done = cli("run", "scenarios/classic/islip.toml", "--set", "switch.ports=-1")
    assert done.stderr.strip().endswith(
        "switch.ports: invalid value: expected a whole number from 0 to 4294967295, got -1")
    assert "u32" not in done.stderr
