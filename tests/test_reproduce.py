"""Reproductions: --list, a bad name refused with status 2, and short versions of each run end to
end (runs cut to a fraction of their length) with our numbers beside the paper's in the report."""

import runpy
import subprocess
import sys
from pathlib import Path

import pandas as pd

from cellfabric.report import comparison, reference_frame
from cellfabric.reproduce import REPRODUCTIONS
from cellfabric.scenario import reference_of
from conftest import ROOT


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cellfabric.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)


def test_list_names_every_reproduction_with_its_runs_and_time():
    done = cli("reproduce", "--list")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["classic-hol", "rifl-table1", "rifl-fig5", "clint-table2"]
    assert "16 runs, about 31 s on one core" in lines[1]


def test_a_bad_name_is_refused_with_status_2(tmp_path: Path):
    for args in (["no-such-figure"], []):
        done = cli("reproduce", *args, "--out", str(tmp_path / "r"))
        assert done.returncode == 2
        assert done.stderr.startswith("cellfabric: error: reproduce") and done.stderr.count("\n") == 1
        assert not (tmp_path / "r").exists()
    assert "expected one of classic-hol, rifl-table1" in cli("reproduce", "nope").stderr


def test_classic_hol_short_matches_karol_et_al(tmp_path: Path):
    out = tmp_path / "hol"
    done = cli("reproduce", "classic-hol", "--out", str(out), "--set", "run.duration_ns=204800",
               "--set", "run.warmup_ns=20480")
    assert done.returncode == 0, done.stderr
    assert f"report: {out / 'report.html'}" in done.stdout
    points = pd.read_parquet(out / "points.parquet")
    throughput = dict(zip(points["switch.ports"], points["throughput"], strict=True))
    assert abs(throughput[2] - 0.75) < 0.02 and abs(throughput[8] - 0.6184) < 0.02
    assert throughput[2] > throughput[4] > throughput[8] > throughput[32] > 0.5858
    page = (out / "report.html").read_text()
    assert "Karol, Hluchyj &amp; Morgan 1987" in page and "0.6553" in page


def test_rifl_table1_short_puts_every_paper_cell_beside_ours(tmp_path: Path):
    out = tmp_path / "t1"
    done = cli("reproduce", "rifl-table1", "--out", str(out), "--jobs", "2",
               "--set", "run.duration_ns=168960", "--set", "run.warmup_ns=8448")  # 1/50 of the runs
    assert done.returncode == 0, done.stderr
    points = pd.read_parquet(out / "points.parquet")
    reference = reference_frame(reference_of(ROOT / "scenarios" / "rifl" / "table1.toml"))
    table = comparison(points, ["traffic.arrival", "switch.scheduler", "traffic.load"], reference)
    assert len(table) == 16 * 7 and table["cellfabric"].notna().all()
    # An unqueued cell takes 18 cell times by construction: the p1 column at light load.
    light = table[(table["metric"] == "latency_cells.p1") & (table["traffic.load"] == 0.3)]
    assert (light["cellfabric"] == 18).all() and (light["difference"] == 0).all()
    bursty = pd.read_parquet(out / "results.parquet").query("`traffic.arrival` == 'bursty'")
    assert (bursty["traffic.burst_mean_bytes"] == 1024).all()


def test_clint_table2_short_writes_both_channels_and_one_report(tmp_path: Path):
    out = tmp_path / "clint"
    done = cli("reproduce", "clint-table2", "--out", str(out), "--jobs", "2",
               "--set", "run.duration_ns=400000", "--set", "run.warmup_ns=40000")  # 1/100 of the runs
    assert done.returncode == 0, done.stderr
    for part in ("bulk", "quick"):
        runs = pd.read_parquet(out / part / "results.parquet")
        assert len(runs) == 20 and (runs["status"] == "ok").all()
    page = (out / "report.html").read_text()
    assert "<h2>bulk</h2>" in page and "<h2>quick</h2>" in page and "Table 2: quick channel" in page


def test_the_paper_numbers_are_written_once_in_the_scenarios():
    """The reproductions and docs/validation/*.py take the papers' tables from the shipped
    scenarios' [reference] tables; a few cells checked against the papers themselves."""
    scenarios = ROOT / "scenarios"
    for reproduction in REPRODUCTIONS.values():
        for part in reproduction.parts.values():
            assert not hasattr(part, "reference")
            assert reference_of(scenarios / part.scenario) is not None
    table1 = reference_of(scenarios / "rifl" / "table1.toml")["rows"]
    rifl = runpy.run_path(str(ROOT / "docs" / "validation" / "rifl.py"))["PAPER"]
    assert {tuple(row[:3]): row[3:] for row in table1} == rifl
    assert rifl[("bursty", "islip", 1.0)] == [18, 57, 107, 178, 229, 339, 683]  # Shen and Chow 2023, Table I
    assert rifl[("bernoulli", "safc", 0.9)] == [18, 20, 24, 29, 35, 54, 260]
    clint = runpy.run_path(str(ROOT / "docs" / "validation" / "clint.py"))["PAPER"]
    for channel, column in (("bulk", 0), ("quick", 1)):
        rows = reference_of(scenarios / "clint" / f"{channel}.toml")["rows"]
        expected = {key: values[column] for key, values in clint.items() if values[column] is not None}
        assert {(load, bursty): ns / 1000 for _, load, bursty, ns in rows} == expected
    # Eberle and Gura 2002, Table 2
    assert clint[(0.9, True)] == (1636.7, None) and clint[(0.3, True)] == (32.9, 2.8)
    fifo = reference_of(scenarios / "classic" / "fifo.toml")["rows"]
    assert [(n, t) for n, _, t in fifo] == [(2, 0.75), (4, 0.6553), (8, 0.6184), (32, 0.5858)]  # Karol et al.
