"""The command line: --json, --out, --set, --seed, and one clear message with status 2 for bad input."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import ROOT

REQUIRED = [
    "throughput", "offered_load", "latency_ns", "latency_cells", "cells_injected", "cells_delivered",
    "cells_dropped", "cells_in_flight", "events", "sim_time_ps", "seed", "perf",
]
PERCENTILES = ["mean", "p1", "p50", "p75", "p90", "p95", "p99", "max"]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cellfabric.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=300
    )


def test_json_prints_exactly_one_summary_object(small_scenario: Path):
    done = cli("run", str(small_scenario), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    for key in REQUIRED:
        assert key in summary
    for key in ("latency_ns", "latency_cells"):
        assert sorted(summary[key]) == sorted(PERCENTILES)
    assert summary["cells_injected"] == (
        summary["cells_delivered"] + summary["cells_dropped"] + summary["cells_in_flight"]
    )
    assert summary["seed"] == 3
    assert done.stderr == "", "no progress bar when stderr is not a terminal"


def test_set_and_seed_override_the_scenario(small_scenario: Path):
    done = cli("run", str(small_scenario), "--json", "--set", "traffic.load=0.3", "--seed", "11",
               "--set", "switch.scheduler=pim")
    summary = json.loads(done.stdout)
    assert summary["offered_load"] == 0.3
    assert summary["seed"] == 11
    assert summary["scheduler"] == "pim"


def test_out_writes_summary_and_parquet_tables(small_scenario: Path, tmp_path: Path):
    out = tmp_path / "result"
    done = cli("run", str(small_scenario), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "throughput" in done.stdout
    summary = json.loads((out / "summary.json").read_text())
    latency = pd.read_parquet(out / "latency_histogram.parquet")
    assert latency["count"].sum() == summary["cells_measured"]
    ports = pd.read_parquet(out / "ports.parquet")
    assert len(ports) == 8 and ports["cells_injected"].sum() == summary["cells_injected"]
    occupancy = pd.read_parquet(out / "queue_occupancy.parquet")
    assert occupancy["slots"].sum() == 20000 - 2000 + 1
    perf = json.loads((out / "perf.json").read_text())
    assert perf["work"] == "cell-hops" and perf["wall_s"] > 0
    assert perf["work_per_s"] == pytest.approx(summary["cell_hops"] / perf["wall_s"])
    assert not {"wall_s", "events_per_s", "cell_hops_per_s"} & set(summary), "no wall clock in the summary"


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["--set", "traffic.lod=0.5"], "traffic.lod"),
        (["--set", "traffic.load=high"], "traffic.load"),
        (["--set", "traffic.load=-0.1"], "traffic.load"),
        (["--set", "traffic.load=1.5"], "traffic.load"),
        (["--set", "switch.ports=0"], "switch.ports"),
        (["--set", "link.propagation_ns=-5"], "link.propagation_ns"),
        (["--set", "link.propagation_delay_ps=5"], "link.propagation_ns"),
        (["--set", "run.duration_cells=5000"], "run.duration_ns"),
        (["--set", "switch.scheduler=magic"], "switch.scheduler"),
        (["--set", "traffic"], "--set traffic"),
        (["--set", "traffic.load.x=1"], "traffic.load"),
        (["--set", "design=warp"], "design"),
        (["--set", "topology.kind=two_switch"], "topology.kind"),
    ],
)
def test_bad_input_gets_one_clear_message_and_status_2(small_scenario: Path, args, names):
    done = cli("run", str(small_scenario), *args)
    assert done.returncode == 2, done.stderr
    assert names in done.stderr
    assert "Traceback" not in done.stderr and "panicked" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stdout == ""


def test_out_is_checked_before_the_run_and_loses_stale_tables(small_scenario: Path, tmp_path: Path):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    done = cli("run", str(small_scenario), "--out", str(blocked / "result"))
    assert done.returncode == 2 and "--out" in done.stderr and "throughput" not in done.stdout, done.stderr
    out = tmp_path / "result"
    out.mkdir()
    (out / "nodes.parquet").write_text("a table of an earlier Clint run")
    (out / "notes.txt").write_text("the user's own file")
    assert cli("run", str(small_scenario), "--out", str(out)).returncode == 0
    assert not (out / "nodes.parquet").exists() and (out / "notes.txt").exists()
    assert (out / "ports.parquet").exists()


def test_ctrl_c_stops_a_long_run_within_a_second_with_status_130_and_partial_results(tmp_path: Path):
    out = tmp_path / "partial"
    command = [sys.executable, "-m", "cellfabric.cli", "run", "scenarios/bench/islip-reference.toml",
               "--out", str(out)]
    run = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(2.0)
    sent = time.perf_counter()
    run.send_signal(signal.SIGINT)
    _, stderr = run.communicate(timeout=30)
    assert time.perf_counter() - sent < 1.0
    assert run.returncode == 130 and "interrupted" in stderr and "Traceback" not in stderr, stderr
    provenance = json.loads((out / "provenance.json").read_text())
    summary = json.loads((out / "summary.json").read_text())
    assert provenance["interrupted"] is True
    assert 0 < summary["sim_time_ps"] < 51_200_000_000, "stopped part of the way"
    assert summary["cells_injected"] == (
        summary["cells_delivered"] + summary["cells_dropped"] + summary["cells_in_flight"]
    ), "the partial run's account settles"


def test_results_carry_their_provenance_and_are_not_written_over_by_accident(small_scenario: Path,
                                                                            tmp_path: Path):
    done = cli("run", str(small_scenario), "--json", "--set", "traffic.load=0.4")
    provenance = json.loads(done.stdout)["provenance"]
    assert provenance["cellfabric_version"] == cli("--version").stdout.split()[-1]
    assert provenance["seed"] == 3 and provenance["interrupted"] is False
    assert provenance["scenario"]["traffic"]["load"] == 0.4
    assert "--set" in provenance["command_line"] and provenance["source_revision"]
    out = tmp_path / "result"
    assert cli("run", str(small_scenario), "--out", str(out)).returncode == 0
    again = cli("run", str(small_scenario), "--out", str(out), "--seed", "9")
    assert again.returncode == 2 and "--force" in again.stderr
    assert json.loads((out / "summary.json").read_text())["seed"] == 3, "the first run's results stand"
    assert cli("run", str(small_scenario), "--out", str(out), "--seed", "9", "--force").returncode == 0
    assert json.loads((out / "summary.json").read_text())["seed"] == 9
    assert json.loads((out / "provenance.json").read_text())["seed"] == 9
    assert not list(out.glob(".*.tmp")), "no temporary file left behind"


def test_missing_file_and_broken_toml_are_bad_input(tmp_path: Path):
    missing = cli("run", str(tmp_path / "nope.toml"))
    assert missing.returncode == 2 and "not found" in missing.stderr and "nope.toml" in missing.stderr
    broken = tmp_path / "broken.toml"
    broken.write_text("[switch\nports = 4\n")
    done = cli("run", str(broken))
    assert done.returncode == 2 and "broken.toml" in done.stderr and "Traceback" not in done.stderr
    for name, content in [("empty.toml", b"# only a comment\n"), ("binary.toml", b"\xff\xfe\x00\x01")]:
        path = tmp_path / name
        path.write_bytes(content)
        done = cli("run", str(path))
        assert done.returncode == 2 and name in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr


@pytest.mark.parametrize(
    ("name", "scheduler"),
    [("fifo", "fifo"), ("islip", "islip"), ("pim", "pim"), ("output-queued", "output_queued")],
)
def test_shipped_scenarios_accept_load_and_seed(name: str, scheduler: str):
    done = cli("run", f"scenarios/classic/{name}.toml", "--json", "--set", "traffic.load=0.5",
               "--set", "run.seed=5", "--set", "run.duration_ns=25600", "--set", "run.warmup_ns=2560")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["seed"] == 5 and summary["offered_load"] == 0.5
    assert summary["scheduler"] == scheduler


@pytest.mark.parametrize("name", ["table1", "fig5"])
@pytest.mark.parametrize("arrival", ["bernoulli", "bursty"])
def test_rifl_scenarios_run_lossless_with_both_schedulers(name: str, arrival: str):
    # Load 0.6: below every curve's knee (bursts of whole 64-2048-byte packets carry only 0.77 of
    # their segment slots at 0.8 offered, docs/validation/rifl.md, Fig. 5).
    for scheduler in ("islip", "safc"):
        done = cli("run", f"scenarios/rifl/{name}.toml", "--json", "--set", f"switch.scheduler={scheduler}",
                   "--set", f"traffic.arrival={arrival}", "--set", "traffic.load=0.6",
                   *(["--set", "traffic.burst_mean_bytes=1024"] if arrival == "bursty" else []),
                   "--set", "run.duration_ns=84480", "--set", "run.warmup_ns=8448")
        assert done.returncode == 0, done.stderr
        summary = json.loads(done.stdout)
        assert summary["design"] == "rifl" and summary["scheduler"] == scheduler
        assert summary["cells_out_of_order"] == 0
        assert summary["throughput"] == pytest.approx(0.6, abs=0.03)


@pytest.mark.parametrize(
    ("scenario", "args", "names"),
    [
        ("rifl/table1", ["--set", "cell.size_bytes=256"], "cell.size_bytes"),
        ("rifl/table1", ["--set", "switch.buffer_cells=8"], "switch.buffer_cells"),
        ("rifl/table1", ["--set", "topology.kind=two_switch", "--set", "topology.links=32"],
         "topology.links"),
        ("rifl/table1", ["--set", "topology.kind=ring"], "topology.kind"),
        ("rifl/table1", ["--set", "traffic.include_self=true"], "traffic.include_self"),
        ("rifl/table1", ["--set", "traffic.broadcast_fraction=0.1", "--set", "topology.kind=two_switch",
                         "--set", "topology.links=2"], "traffic.broadcast_fraction"),
        ("rifl/table1", ["--set", "traffic.broadcast_fraction=-0.1"], "traffic.broadcast_fraction"),
        ("rifl/table1", ["--set", "link.ber=1e-7", "--set", "link.frame_bytes=512"], "link.frame_bytes"),
        ("rifl/table1", ["--set", "link.frame_bytes=64"], "link.frame_bytes"),
        ("classic/islip", ["--set", "traffic.broadcast_fraction=0.1"], "traffic.broadcast_fraction"),
        ("rifl/link", ["--set", "link.ber=-1e-9"], "link.ber"),
        ("rifl/link", ["--set", "link.frame_bytes=300"], "link.frame_bytes"),
        ("rifl/link", ["--set", "link.colour=blue"], "link.colour"),
        ("clint/bulk", ["--set", "channel.architecture=B5"], "channel.architecture"),
        ("clint/bulk", ["--set", "traffic.load=1.5"], "traffic.load"),
        ("clint/bulk", ["--set", "traffic.bursty=maybe"], "traffic.bursty"),
        ("clint/bulk", ["--set", "nic.bulk_send_buffers=0"], "nic.bulk_send_buffers"),
        ("clint/bulk", ["--set", "switch.ports=8"], "switch"),
        ("clint/bulk", ["--set", "bulk.bit_error_rate=1"], "bulk.bit_error_rate"),
        ("clint/bulk", ["--set", "quick.disabled_initiators=[2]"], "quick.disabled_initiators"),
        ("clint/bulk", ["--set", "nic.pci_gbps=0"], "nic.pci_gbps"),
        ("clint/bulk", ["--set", "nic.pci_overhead_ns=100"], "nic.pci_overhead_ns"),
        ("clint/quick", ["--set", "bulk.speculative=true"], "bulk.speculative"),
        ("clint/quick", ["--set", "quick.bulk_load=0.5"], "quick.bulk_load"),
        ("clint/quick", ["--set", "quick.bulk_packets=some"], "quick.bulk_packets"),
        ("fabric/fat-tree", ["--set", "topology.k=11"], "topology.k"),
        ("fabric/fat-tree", ["--set", "topology.k=66"], "topology.k"),
        ("fabric/fat-tree", ["--set", "topology.k=66", "--set", "switch.scheduler=islip"], "topology.k"),
        ("classic/islip", ["--set", "switch.ports=257"], "switch.ports"),
        ("fabric/fat-tree", ["--set", "routing.mode=ugal"], "routing.mode"),
        ("fabric/fat-tree", ["--set", "routing.mode=teleport"], "routing.mode"),
        ("fabric/fat-tree", ["--set", "routing.spray_rounds=0"], "routing.spray_rounds"),
        ("fabric/fat-tree", ["--set", "routing.hops=3"], "routing.hops"),
        ("fabric/clos", ["--set", "topology.tiers=4"], "topology.tiers"),
        ("fabric/clos", ["--set", "topology.radix=9"], "topology.radix"),
        ("fabric/clos", ["--set", "topology.edges=100"], "topology.edges"),
        ("fabric/clos", ["--set", "topology.bundle=0"], "topology.bundle"),
        ("fabric/clos", ["--set", "topology.hosts_per_edge=0"], "topology.hosts_per_edge"),
        ("fabric/clos",
         ["--set", "topology.tiers=1", "--set", "topology.radix=300", "--set", "switch.scheduler=islip"],
         "topology.radix"),
        ("fabric/clos", ["--set", "topology.radix=100"], "topology.edges"),
        ("fabric/dragonfly", ["--set", "topology.groups=6"], "topology.groups"),
        ("fabric/dragonfly", ["--set", "topology.routers_per_group=260", "--set", "switch.scheduler=islip"],
         "topology.routers_per_group"),
        ("fabric/dragonfly", ["--set", "switch.per_voq_buffers=true"], "switch.per_voq_buffers"),
        ("classic/islip", ["--set", "routing.mode=ecmp"], "routing"),
        ("classic/islip", ["--set", "traffic.destinations=group_shift"], "traffic.destinations"),
        ("rifl/table1", ["--set", "topology.kind=fat_tree"], "topology.kind"),
        ("rifl/table1", ["--set", "link.ber=-1e-9"], "link.ber"),
        ("rifl/table1", ["--set", "link.ber=0.5"], "link.ber"),
        ("rifl/table1", ["--set", "link.ber=1e-7", "--set", "link.propagation_ns=100"],
         "link.propagation_ns"),
        ("classic/islip", ["--set", "link.ber=1e-7"], "link.ber"),
        ("classic/islip", ["--set", "link.error_burst_ber=1e-5", "--set", "link.error_burst_frames=4",
                           "--set", "link.error_burst_gap_frames=1000"], "link.error_burst_ber"),
        ("rifl/table1", ["--set", "link.error_burst_ber=1e-5"], "link.error_burst_frames"),
        ("rifl/table1", ["--set", "link.error_burst_frames=4"], "link.error_burst_frames"),
        ("rifl/link", ["--set", "link.error_burst_frames=4"], "link.error_burst_frames"),
        ("rifl/link", ["--set", "link.error_burst_ber=1e-5", "--set", "link.error_burst_frames=4",
                       "--set", "link.error_burst_gap_frames=0.5"], "link.error_burst_gap_frames"),
        ("rifl/table1", ["--set", "switch.scheduler=fifo"], "switch.scheduler"),
        ("rifl/table1", ["--set", "switch.scheduler=output_queued"], "link.flow_control"),
        ("classic/islip", ["--set", "nic.queue_cells=0"], "nic.queue_cells"),
        ("classic/islip", ["--set", "traffic.load=0"], "traffic.load"),
        ("classic/islip", ["--set", "link.rate_gbps=1e9"], "link.rate_gbps"),
        ("rifl/table1", ["--set", "switch.per_voq_buffers=false"], "switch.per_voq_buffers"),
        ("rifl/table1", ["--set", "switch.batcher_banyan=true"], "switch.batcher_banyan"),
        ("classic/fifo", ["--set", "switch.per_voq_buffers=true"], "switch.per_voq_buffers"),
        ("classic/output-queued", ["--set", "switch.batcher_banyan=true"], "switch.batcher_banyan"),
    ],
)
def test_design_bad_input_names_the_key(scenario, args, names):
    done = cli("run", f"scenarios/{scenario}.toml", *args)
    assert done.returncode == 2, done.stderr
    assert names in done.stderr and "Traceback" not in done.stderr and "panicked" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_rifl_link_study_takes_the_bit_error_rate_from_set(tmp_path: Path):
    runs = {}
    for ber in ("0", "1e-7"):
        done = cli("run", "scenarios/rifl/link.toml", "--json", "--set", f"link.ber={ber}",
                   "--set", "link.length_m=100", "--set", "run.duration_ns=2000000",
                   "--out", str(tmp_path / ber))
        assert done.returncode == 0, done.stderr
        runs[ber] = json.loads(done.stdout)
    clean, noisy = runs["0"], runs["1e-7"]
    assert clean["design"] == "rifl_link" and clean["errors_detected"] == 0 and clean["frames_replayed"] == 0
    assert noisy["errors_detected"] > 0 and noisy["goodput"] < clean["goodput"]
    assert noisy["frames_injected"] == noisy["frames_delivered"] + noisy["frames_in_flight"]
    directions = pd.read_parquet(tmp_path / "1e-7" / "directions.parquet")
    assert directions["frames_delivered"].sum() == noisy["frames_delivered"]


@pytest.mark.parametrize(
    ("scenario", "architecture"),
    [("bulk", "B1"), ("bulk", "B2"), ("bulk", "B3"), ("bulk", "B4"), ("quick", "Q1"), ("quick", "Q2")],
)
def test_clint_scenarios_run_every_architecture(scenario: str, architecture: str):
    done = cli("run", f"scenarios/clint/{scenario}.toml", "--json",
               "--set", f"channel.architecture={architecture}", "--set", "traffic.bursty=true",
               "--set", "traffic.load=0.2", "--set", "run.duration_ns=2000000",
               "--set", "run.warmup_ns=200000")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["design"] == "clint" and summary["architecture"] == architecture
    assert summary["packets_injected"] == summary["packets_delivered"] + summary["packets_in_flight"]
    assert summary["out_of_order"] == 0 and summary["offered_load"] == 0.2
    assert sorted(summary["latency_ns"]) == sorted(PERCENTILES)


def test_clint_human_summary_shows_the_architecture():
    done = cli("run", "scenarios/clint/bulk.toml", "--set", "channel.architecture=B1",
               "--set", "traffic.bursty=true",
               "--set", "traffic.load=0.5", "--set", "run.duration_ns=2000000",
               "--set", "run.warmup_ns=200000")
    assert done.returncode == 0, done.stderr
    assert "architecture B1" in done.stdout.splitlines()[0]


def test_rifl_rack_with_bit_errors_reports_its_layer_one_counters():
    done = cli("run", "scenarios/rifl/table1.toml", "--set", "link.ber=1e-6",
               "--set", "run.duration_ns=211200", "--set", "run.warmup_ns=21120")
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if line.startswith("layer1"))
    errors = int(line.split("errors_detected ")[1].split()[0])
    assert errors > 0 and "cells_dropped 0" in done.stdout


def test_list_names_every_design_mechanism_and_shipped_scenario():
    done = cli("list")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for design in ["single_switch", "cell_fabric", "rifl", "rifl_link", "clint"]:
        assert f"  {design} " in out
    for mechanism in ["islip", "output_queued", "fat_tree", "dragonfly", "ecmp", "spray", "ugal", "credit",
                      "group_shift", "closed_loop", "all_to_all"]:
        assert f"  {mechanism} " in out, mechanism
    for path in sorted((ROOT / "scenarios").glob("*/*.toml")):
        line = next(line for line in out.splitlines() if path.relative_to(ROOT).as_posix() in line)
        assert len(line.split(maxsplit=1)) == 2, f"{path} has no description"


def test_a_topology_file_runs_from_any_directory_and_its_mistakes_are_bad_input(tmp_path: Path):
    scenario = ROOT / "scenarios" / "fabric" / "from-file.toml"
    done = subprocess.run([sys.executable, "-m", "cellfabric.cli", "run", str(scenario), "--json"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["terminals"] == 16 and summary["switches"] == 6
    broken = tmp_path / "broken.topo"
    broken.write_text("switch s0 ports=2\nhost a\ncable a s7:0\n")
    islands = tmp_path / "islands.topo"
    islands.write_text("switch s0 ports=1\nswitch s1 ports=1\nhost a\nhost b\ncable a s0:0\ncable b s1:0\n")
    cases = [(broken, "line 3: s7 is not declared"), (tmp_path / "none.topo", "cannot read"),
             (islands, "host a cannot reach host b")]
    for path, expected in cases:
        done = cli("run", str(scenario), "--set", f"topology.file={path}")
        assert done.returncode == 2, done.stderr
        assert "topology" in done.stderr and expected in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "blames", "says"),
    [
        (["--set", "cell.size_bytes=0"], "--set cell.size_bytes=0: cell.size_bytes:", "1 to 65535 bytes"),
        (["--set", "design=42"], "design:", "got 42 (not a name in quotes)"),
        (["--set", "run.duration_ns=1e30"], "--set run.duration_ns=1e+30: run.duration_ns:", "at most 1e16"),
    ],
)
def test_messages_blame_the_key_that_is_wrong(small_scenario: Path, args, blames, says):
    done = cli("run", str(small_scenario), *args)
    assert done.returncode == 2, done.stderr
    assert blames in done.stderr and says in done.stderr, done.stderr
    assert "not set in" not in done.stderr and "link.rate_gbps" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_port_cabled_twice_is_named_as_a_user_reads_it(tmp_path: Path):
    twice = tmp_path / "twice.topo"
    twice.write_text("switch s0 ports=2\nhost a\nhost b\ncable a s0:0\ncable b s0:0\n")
    scenario = ROOT / "scenarios" / "fabric" / "from-file.toml"
    done = cli("run", str(scenario), "--set", f"topology.file={twice}")
    assert done.returncode == 2, done.stderr
    assert "cabled twice" in done.stderr and "SwitchPort" not in done.stderr and "{" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr

def one_error_line(done: subprocess.CompletedProcess, starts: str) -> None:
    """Bad input: status 2, nothing on stdout and one line on stderr that starts with ``starts``."""
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"cellfabric: error: {starts}"), done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout == ""


@pytest.fixture
def run_folder(small_scenario: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    assert cli("run", str(small_scenario), "--out", str(out)).returncode == 0
    return out


# Every wrong kind of --out path for each command: a file or a path under a file where a folder
# is written, a folder or a path under a file where the report's file is (an existing file is
# what a report replaces, a folder what the others write into).
WRONG_OUTPUTS = [(command, where) for command in ("run", "sweep", "reproduce")
                 for where in ("existing-file", "under-a-file")]
WRONG_OUTPUTS += [("report", "under-a-file"), ("report", "existing-folder")]


@pytest.mark.parametrize(("command", "where"), WRONG_OUTPUTS)
def test_every_output_path_is_checked_before_any_work_with_one_line(small_scenario: Path, run_folder: Path,
                                                                     tmp_path: Path, command: str,
                                                                     where: str):
    blocker = tmp_path / "a-file"
    blocker.write_text("the user's own file")
    folder = tmp_path / "a-folder"
    folder.mkdir()
    out = {"existing-file": blocker, "under-a-file": blocker / "d" / "r.html",
           "existing-folder": folder}[where]
    args = {"run": ["run", str(small_scenario)],
            "sweep": ["sweep", str(small_scenario), "--grid", "traffic.load=0.5"],
            "reproduce": ["reproduce", "classic-hol"],
            "report": ["report", str(run_folder)]}[command]
    done = cli(*args, "--out", str(out))
    one_error_line(done, f"--out {out}: ")
    expected = {"existing-file": "expected a folder", "under-a-file": f"{blocker} is a file",
                "existing-folder": "expected the path of a file"}[where]
    assert expected in done.stderr, done.stderr
    assert blocker.read_text() == "the user's own file" and list(folder.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "a-folder", "run", "small.toml"]


def test_report_creates_the_folder_of_its_out_file(run_folder: Path, tmp_path: Path):
    page = tmp_path / "site" / "reports" / "r.html"
    done = cli("report", str(run_folder), "--out", str(page))
    assert done.returncode == 0, done.stderr
    assert page.read_text().startswith("<!DOCTYPE html>") and done.stdout.strip() == str(page)


@pytest.mark.parametrize(("args", "starts"), [
    (["reproduce", "no-such-figure"], "reproduce no-such-figure: no such reproduction"),
    (["reproduce", "classic-hol", "--seeds", "0"], "--seeds 0: expected a whole number"),
    (["reproduce", "classic-hol", "--set", "traffic.lod=0.5"], "traffic.lod: unknown field"),
    (["reproduce", "classic-hol", "--set", "traffic"], "--set traffic"),
    (["reproduce", "clint-table2", "--jobs", "0"], "--jobs 0: expected a whole number"),
])
def test_a_failed_reproduction_leaves_no_folder_behind(tmp_path: Path, args: list[str], starts: str):
    done = subprocess.run([sys.executable, "-m", "cellfabric.cli", *args], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300)
    one_error_line(done, starts)
    assert list(tmp_path.iterdir()) == [], "not even an empty results/NAME"
    done = cli(*args, "--out", str(tmp_path / "new" / "r"))
    one_error_line(done, starts)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("command", "args", "starts"), [
    ("run", ["--set", "traffic.lod=0.5"], "--set traffic.lod=0.5: traffic.lod"),
    ("run", ["--set", "traffic"], "--set traffic"),
    ("sweep", ["--grid", "traffic.lod=0.5,0.9"], "traffic.lod: unknown field"),
    ("sweep", ["--grid", "traffic.load=0.5", "--seeds", "0"], "--seeds 0"),
    ("sweep", ["--set", "traffic"], "--set traffic"),
])
def test_bad_input_leaves_no_output_folder_behind(small_scenario: Path, tmp_path: Path, command: str,
                                                  args: list[str], starts: str):
    out = tmp_path / "new" / "out"
    one_error_line(cli(command, str(small_scenario), *args, "--out", str(out)), starts)
    assert not (tmp_path / "new").exists()


def test_a_report_of_a_folder_without_results_creates_nothing(tmp_path: Path):
    empty = tmp_path / "empty"
    empty.mkdir()
    one_error_line(cli("report", str(empty), "--out", str(tmp_path / "new" / "r.html")), f"{empty}: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"] and list(empty.iterdir()) == []


def test_threads_runs_on_threads_with_the_results_of_one_and_bad_counts_are_refused():
    fat_tree = ["run", "scenarios/fabric/fat-tree.toml", "--set", "run.duration_ns=10240",
                "--set", "run.warmup_ns=1024", "--json"]
    one, two = cli(*fat_tree), cli(*fat_tree, "--threads", "2")
    assert one.returncode == 0 and two.returncode == 0, two.stderr
    summaries = [json.loads(done.stdout) for done in (one, two)]
    for summary in summaries:
        summary.pop("perf"), summary.pop("provenance")
    assert summaries[0] == summaries[1]
    for bad in ("0", "many"):
        done = cli(*fat_tree, "--threads", bad)
        assert done.returncode == 2 and "run.threads: expected a count of threads" in done.stderr
        assert "Traceback" not in done.stderr
