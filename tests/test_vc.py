"""Virtual-channel routers from the command line: a small Dragonfly of VC routers runs and
reports its source queueing apart; each bad VC setting is one line naming its key, status 2."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

SMALL = """
design = "cell_fabric"
[run]
seed = 2
duration_ns = 3000
warmup_ns = 600
[topology]
kind = "dragonfly"
hosts_per_router = 2
routers_per_group = 4
global_links_per_router = 2
groups = 9
host_propagation_ns = 0
global_propagation_ns = 99
[routing]
mode = "deterministic"
[switch]
scheduler = "vc_separable"
[vc]
count = 2
assignment = "dragonfly_dateline"
buffer_cells = 256
speedup = 2.0
credit_delay_cycles = 2
[link]
rate_gbps = 512.0
propagation_ns = 9
flow_control = "credit"
[traffic]
load = 0.4
packet_bytes = 640
"""


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cellfabric.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=300
    )


@pytest.fixture
def small(tmp_path: Path) -> Path:
    path = tmp_path / "vc.toml"
    path.write_text(SMALL)
    return path


def test_a_vc_dragonfly_runs_and_reports_source_queueing_apart(small: Path):
    done = cli("run", str(small), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["scheduler"] == "vc_separable"
    assert summary["cells_dropped"] == 0
    # Packets of 10 one-nanosecond flits start with probability 0.04 per cycle at each of the 72
    # hosts over 2 400 measured cycles: the carried fraction is 10 binomial counts over the cycles,
    # of standard error sqrt(10 · 0.4 · (1 − 0.04) / (72 · 2 400)).
    band = 4.0 * (10 * 0.4 * (1 - 0.04) / (72 * 2_400)) ** 0.5
    assert abs(summary["throughput"] - 0.4) < band, band
    assert set(summary["source_queueing_cells"]) == {"mean", "max"}
    assert summary["packet_latency_cells"]["mean"] >= summary["source_queueing_cells"]["mean"]


@pytest.mark.parametrize(
    "setting, key",
    [
        (["vc.count=1"], "vc.count"),
        (["vc.assignment=single"], "vc.assignment"),
        (["vc.assignment=zigzag"], "vc.assignment"),
        (["vc.speedup=0.5"], "vc.speedup"),
        (["vc.buffer_cells=0"], "vc.buffer_cells"),
        (["vc.weights=[1]"], "vc.weights"),
        (["link.flow_control=none"], "link.flow_control"),
        (["switch.scheduler=islip", "switch.buffer_cells=8"], "vc"),
    ],
)
def test_a_bad_vc_setting_is_one_line_naming_its_key_and_status_2(small: Path, setting: list, key: str):
    done = cli("run", str(small), *(arg for s in setting for arg in ("--set", s)))
    assert done.returncode == 2, done.stderr
    assert f"{key}:" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "panicked" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stdout == ""


def test_a_rule_that_leaves_a_cycle_is_refused_with_the_cycle_named(small: Path):
    done = cli("run", str(small), "--set", "vc.assignment=single", "--set", "vc.count=1")
    assert done.returncode == 2
    assert "vc.assignment" in done.stderr and "cycle" in done.stderr and "(router " in done.stderr


@pytest.mark.parametrize("mode", ["aquila_fully_adaptive", "aquila_deterministic"])
def test_the_dateline_is_refused_under_misroutes_it_cannot_see(small: Path, mode: str):
    """Aquila's modes misroute hop by hop without naming an intermediate group, so the Dragonfly
    dateline, which reads the routing phase, would put their misroutes on the minimal phase's VCs
    where the dependency check does not look: refused naming vc.assignment; Aquila's own rule
    runs."""
    done = cli("run", str(small), "--set", f"routing.mode={mode}", "--set", "vc.count=3")
    assert done.returncode == 2, done.stderr
    assert "vc.assignment:" in done.stderr and "global_local_increment" in done.stderr
    done = cli("run", str(small), "--set", f"routing.mode={mode}", "--set", "vc.count=3",
               "--set", "vc.assignment=global_local_increment")
    assert done.returncode == 0, done.stderr
