"""A scenario's ``[reference]`` table (the paper's numbers): ``run``, ``show``, sweeps and the
Python API accept a file that carries one and leave it out of the model; a malformed one is
refused naming ``reference.<what>`` (status 2 through the CLI); every shipped one is valid; a
sweep keeps the rows its fixed keys select."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import cellfabric
from cellfabric._core import ScenarioError
from cellfabric.scenario import load_scenario, reference_of
from cellfabric.sweeps import comparable, sweep
from conftest import ROOT

SHORT = {"run.duration_ns": 51200, "run.warmup_ns": 5120}
SCENARIO = """
[run]
duration_ns = 51200
warmup_ns = 5120
[switch]
ports = 4
scheduler = "fifo"
[traffic]
load = 1.0
"""
GOOD = """
[reference]
source = "Karol, Hluchyj & Morgan 1987, Table I"
columns = ["switch.ports", "traffic.load", "throughput", "latency_cells.p99"]
rows = [[2, 1.0, 0.75, 10], [4, 1.0, 0.6553, 20]]
"""


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cellfabric.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def write(tmp_path: Path, reference: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(SCENARIO + reference)
    return path


def test_a_file_with_a_reference_runs_as_the_same_file_without_one(tmp_path: Path):
    plain, cited = write(tmp_path, "", "plain.toml"), write(tmp_path, GOOD, "cited.toml")
    assert "reference" not in load_scenario(cited)
    assert cellfabric.run(cited).summary == cellfabric.run(plain).summary
    ran = cli("run", str(cited), "--json")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["throughput"] == cellfabric.run(plain).summary["throughput"]
    shown = cli("show", str(cited))
    assert shown.returncode == 0, shown.stderr
    assert "reference" not in shown.stdout and shown.stdout == cli("show", str(plain)).stdout
    # A dict with a reference is accepted by the Python API too.
    reference = {"source": "x", "columns": ["throughput"], "rows": [[0.6]]}
    config = {**load_scenario(plain), "reference": reference}
    assert cellfabric.run(config).summary == cellfabric.run(plain).summary


def test_reference_of_returns_the_table_checked(tmp_path: Path):
    assert reference_of(write(tmp_path, GOOD)) == {
        "source": "Karol, Hluchyj & Morgan 1987, Table I",
        "columns": ["switch.ports", "traffic.load", "throughput", "latency_cells.p99"],
        "rows": [[2, 1.0, 0.75, 10], [4, 1.0, 0.6553, 20]]}
    assert reference_of(ROOT / "scenarios" / "fabric" / "clos.toml") is None


BAD = {
    "a row short of a value": ('columns = ["switch.ports", "throughput"]\nrows = [[2, 0.75], [4]]',
                               "reference.rows: row 2: expected 2 values, one per column (switch.ports, "
                               "throughput), got 1 values"),
    "a column nothing knows": ('columns = ["switch.portz", "throughput"]\nrows = [[2, 0.75]]',
                               "reference.columns: switch.portz is neither a key the scenario can set nor "
                               "a metric its summary reports"),
    "a statistic of a number": ('columns = ["switch.ports", "throughput.p99"]\nrows = [[2, 0.75]]',
                                "reference.columns: throughput.p99 is neither"),
    "a summary table, not a number": ('columns = ["switch.ports", "host_throughput"]\nrows = [[2, 0.75]]',
                                      "reference.columns: host_throughput is neither"),
    "a section, not a key": ('columns = ["switch", "throughput"]\nrows = [[2, 0.75]]',
                             "reference.columns: switch is neither"),
    "no source": ('columns = ["throughput"]\nrows = [[0.75]]', "reference.source: expected"),
    "no rows": ('source = "x"\ncolumns = ["throughput"]\nrows = []', "reference.rows: expected a list"),
    "an unknown key": ('source = "x"\ncolumns = ["throughput"]\nrows = [[1]]\nnote = 1',
                       "reference.note: unknown key"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_reference_is_refused_naming_reference_what(tmp_path: Path, case: str):
    body, expected = BAD[case]
    if "source" not in body.split("\n")[0] and case != "no source":
        body = 'source = "a paper"\n' + body
    path = write(tmp_path, "\n[reference]\n" + body + "\n")
    with pytest.raises(ScenarioError, match="reference") as error:
        reference_of(path)
    assert expected in str(error.value)
    assert str(error.value).startswith(f"{path}:")
    for command in ("run", "show"):
        done = cli(command, str(path))
        assert done.returncode == 2, (command, done.stderr)
        assert done.stderr == f"cellfabric: error: {error.value}\n"
    with pytest.raises(ScenarioError, match="reference"):
        sweep(path, {"switch.ports": [2]}, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_the_error_names_the_line_of_the_bad_table(tmp_path: Path):
    path = write(tmp_path, '\n[reference]\nsource = "x"\ncolumns = ["throughput"]\nrows = [[1, 2]]\n')
    line = path.read_text().splitlines().index("rows = [[1, 2]]") + 1
    with pytest.raises(ScenarioError, match=rf"^{path}:{line}: reference.rows: row 1"):
        reference_of(path)


@pytest.mark.parametrize("path", sorted((ROOT / "scenarios").glob("*/*.toml")), ids=lambda p: p.stem)
def test_every_shipped_reference_is_valid_and_cites_its_source(path: Path):
    reference = reference_of(path)
    if reference is not None:
        assert len(reference["source"]) > 20
        assert reference["rows"] and all(len(r) == len(reference["columns"]) for r in reference["rows"])


def test_the_shipped_scenarios_that_reproduce_a_papers_numbers_carry_them():
    cited = {p.relative_to(ROOT / "scenarios").as_posix() for p in (ROOT / "scenarios").glob("*/*.toml")
             if reference_of(p) is not None}
    assert cited == {
        "classic/fifo.toml", "classic/islip.toml", "classic/pim.toml", "classic/output-queued.toml",
        "rifl/table1.toml", "rifl/fig5.toml", "clint/bulk.toml", "clint/quick.toml",
        "stardust/push-pull.toml", "stardust/push-pull-classes.toml", "stardust/permutation.toml",
        "stardust/fig9.toml", "stardust/self-heal.toml", "stardust/md1-link.toml", "stardust/incast.toml",
        "stardust/fig3-packing.toml", "stardust/fig8-packing.toml", "stardust/fct.toml",
        "baselines/permutation.toml", "aquila/fig7-ip-latency.toml", "aquila/fig8-rma-latency.toml",
        "aquila/fig9-rma-isolation.toml", "aquila/fig10-burst-size.toml", "aquarius/micro.toml",
        "aquarius/fct.toml"}
    # Theory is labelled as theory, not as a paper's number.
    for name in ("classic/output-queued.toml", "stardust/md1-link.toml", "stardust/incast.toml"):
        assert reference_of(ROOT / "scenarios" / name)["source"].startswith("Theory")


def test_a_sweep_keeps_the_rows_its_fixed_keys_select():
    reference = reference_of(ROOT / "scenarios" / "classic" / "fifo.toml")
    config = load_scenario(ROOT / "scenarios" / "classic" / "fifo.toml")  # 32 ports at load 1.0
    by_ports = comparable(reference, ["switch.ports"], config)
    assert by_ports["columns"] == ["switch.ports", "throughput"] and len(by_ports["rows"]) == 4
    by_load = comparable(reference, ["traffic.load"], config)
    assert by_load["columns"] == ["traffic.load", "throughput"] and by_load["rows"] == [[1.0, 0.5858]]
    assert comparable(reference, ["switch.ports"], load_scenario(config, {"traffic.load": 0.5})) is None
    # RIFL's Table I swept over load alone: Bernoulli arrivals and iSLIP, the file's own.
    table1 = ROOT / "scenarios" / "rifl" / "table1.toml"
    rows = comparable(reference_of(table1), ["traffic.load"], load_scenario(table1))["rows"]
    assert [r[0] for r in rows] == [0.3, 0.6, 0.9, 1.0] and rows[-1][1:3] == [18, 213]


def test_a_sweep_of_a_file_with_a_reference_reports_ours_beside_it(tmp_path: Path):
    path = write(tmp_path, GOOD)
    result = sweep(path, {"switch.ports": [2, 4]}, tmp_path / "out", jobs=1)
    assert result.failed == 0
    assert result.reference["columns"] == ["switch.ports", "throughput", "latency_cells.p99"]
    spec = json.loads((tmp_path / "out" / "sweep.json").read_text())
    assert spec["reference"] == result.reference
