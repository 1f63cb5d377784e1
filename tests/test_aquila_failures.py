"""Link and switch failures on a Clique of VC routers (Gibson et al., "Aquila: A unified,
low-latency fabric for datacenter networks", NSDI '22, §3.2): a link cut mid-run stops both ways
at once, the cells on its wire are lost, adaptive routing steers around its blocked queue, and
when the tables drop the link the cells still held for it are dropped; a failed TiN loses what
it holds and, once the tables drop it, the cells for its hosts find no route. Every loss is
counted by cause, and a bad failure is refused with its key named and exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from cellfabric.cli import main

ROOT = Path(__file__).resolve().parent.parent / "scenarios"
CLIQUE = ROOT / "aquila/clique-uniform-vc.toml"
# Six pods of four TiNs, two hosts each: ports 0-1 hosts, 2-7 local, 8-10 global.
SMALL = ["topology.clique.pods=6", "topology.clique.tins_per_pod=4",
         "topology.clique.local_ports=6", "topology.clique.global_ports=3",
         "run.duration_ns=30000", "run.warmup_ns=2000", "traffic.load=0.5"]
GLOBAL_PORT = 8


def _scenario(tmp_path: Path, failures: list[dict], base: Path = CLIQUE) -> str:
    """The scenario `base` with `failures` appended as `[[failures]]` tables."""
    text = base.read_text()
    for f in failures:
        text += "\n[[failures]]\n" + "".join(f"{k} = {v}\n" for k, v in f.items())
    path = tmp_path / "scenario.toml"
    path.write_text(text)
    return str(path)


def _run(tmp_path: Path, failures: list[dict], settings: list[str],
         out: str = "out") -> tuple[dict, pd.DataFrame | None]:
    args = ["run", _scenario(tmp_path, failures), "--json", "--out", str(tmp_path / out)]
    result = CliRunner().invoke(main, args + [a for s in SMALL + settings for a in ("--set", s)])
    assert result.exit_code == 0, result.output
    table = tmp_path / out / "cell_trace.parquet"
    return json.loads(result.output), (pd.read_parquet(table) if table.exists() else None)


def test_a_failed_link_carries_no_cell_either_way_after_it_fails(tmp_path):
    """Every cell is traced: no hop leaves TiN 0 by the dead global port after the failure,
    and none arrives there by it (cells on the wire are lost, not delivered); before the
    failure the link carried cells."""
    at_ns = 10_000
    summary, hops = _run(tmp_path, [{"at_ns": at_ns, "switch": 0, "port": GLOBAL_PORT,
                                     "tables_after_ns": 10_000}],
                         ["trace.fraction=1.0", "routing.mode=aquila_fully_adaptive"])
    on_link_out = hops[(hops.switch == 0) & (hops.out_port == GLOBAL_PORT)]
    on_link_in = hops[(hops.switch == 0) & (hops.in_port == GLOBAL_PORT)]
    assert len(on_link_out[on_link_out.depart_ns < at_ns]) > 0, "the link carried cells before"
    assert len(on_link_out[on_link_out.depart_ns >= at_ns]) == 0
    assert len(on_link_in[on_link_in.arrive_ns >= at_ns]) == 0
    assert summary["links_failed"] == 1
    assert summary["cells_lost_on_wire"] > 0 and summary["cells_stranded"] > 0
    # A lossless fabric: every drop is one the dead link explains, counted where it happened.
    assert summary["cells_dropped"] == summary["cells_lost_on_wire"] + summary["cells_stranded"]


def test_a_link_failed_from_the_start_loses_nothing_and_is_never_routed_to(tmp_path):
    summary, hops = _run(tmp_path, [{"at_ns": 0, "switch": 0, "port": GLOBAL_PORT,
                                     "tables_after_ns": 0}],
                         ["trace.fraction=1.0", "routing.mode=aquila_fully_adaptive"])
    assert summary["cells_dropped"] == 0
    assert len(hops[(hops.switch == 0) & (hops.out_port == GLOBAL_PORT)]) == 0
    assert summary["cells_delivered"] > 0


def test_the_table_update_frees_the_flows_a_dead_link_blocked(tmp_path):
    """Minimal Deterministic hashes some flows onto the dead link: until the tables drop it
    they wait behind its blocked queue; dropping it 10 us after the failure moves them onto
    the other links (and strands what waited), so more is delivered than without the update."""
    failure = {"at_ns": 5_000, "switch": 0, "port": GLOBAL_PORT}
    mode = ["routing.mode=aquila_minimal_deterministic"]
    updated, _ = _run(tmp_path, [failure | {"tables_after_ns": 10_000}], mode, "updated")
    never, _ = _run(tmp_path, [failure | {"tables_after_ns": 1e9}], mode, "never")
    assert never["cells_stranded"] == 0 and updated["cells_stranded"] > 0
    assert updated["cells_delivered"] > 1.1 * never["cells_delivered"], (updated, never)


def test_a_run_with_a_failure_is_deterministic(tmp_path):
    failure = [{"at_ns": 8_000, "switch": 5, "port": GLOBAL_PORT + 1, "tables_after_ns": 4_000}]
    first, _ = _run(tmp_path, failure, ["routing.mode=aquila_fully_adaptive"], "a")
    second, _ = _run(tmp_path, failure, ["routing.mode=aquila_fully_adaptive"], "b")
    keys = ["cells_delivered", "cells_dropped", "cells_lost_on_wire", "cells_stranded",
            "cell_latency_p99_ns", "nonminimal_fraction", "events"]
    assert {k: first.get(k) for k in keys} == {k: second.get(k) for k in keys}
    assert first["cells_lost_on_wire"] + first["cells_stranded"] > 0


def test_a_failed_tin_sends_nothing_more_and_every_loss_is_counted_by_cause(tmp_path):
    at_ns = 15_000
    summary, hops = _run(tmp_path, [{"at_ns": at_ns, "switch": 0, "tables_after_ns": 10_000}],
                         ["trace.fraction=1.0", "traffic.load=0.9",
                          "routing.mode=aquila_fully_adaptive"])
    at_tin = hops[hops.switch == 0]
    assert len(at_tin[at_tin.depart_ns < at_ns]) > 0
    assert len(at_tin[at_tin.depart_ns >= at_ns]) == 0, "a failed TiN sends nothing"
    assert (summary["switches_failed"], summary["links_failed"]) == (1, 0)
    causes = ["cells_lost_on_wire", "cells_stranded", "cells_lost_in_failed_switches",
              "cells_unroutable"]
    assert all(summary[c] > 0 for c in causes), summary
    assert summary["cells_dropped"] == sum(summary[c] for c in causes)


@pytest.mark.parametrize("failures, key", [
    ([{"at_ns": 0, "switch": 999, "port": GLOBAL_PORT}], "failures[0].switch"),
    ([{"at_ns": 0, "switch": 0, "port": 0}], "failures[0].port"),  # a host's port
    ([{"at_ns": 0, "switch": 0, "port": 99}], "failures[0].port"),
    ([{"at_ns": -1, "switch": 0, "port": GLOBAL_PORT}], "failures[0].at_ns"),
    ([{"at_ns": 0, "switch": 0, "port": GLOBAL_PORT, "tables_after_ns": -5}],
     "failures[0].tables_after_ns"),
    ([{"at_ns": 0, "switch": 0, "port": GLOBAL_PORT},
      {"at_ns": 5, "switch": 0, "port": GLOBAL_PORT}], "failures[1].port"),
    ([{"at_ns": 0, "switch": 3}, {"at_ns": 5, "switch": 3}], "failures[1].switch"),
    # Both links of pod 0's pair with pod 1: the detours through a third pod need a 4th VC.
    ([{"at_ns": 0, "switch": 0, "port": GLOBAL_PORT},
      {"at_ns": 0, "switch": 1, "port": GLOBAL_PORT}], "failures[1]"),
])
def test_a_bad_failure_is_refused_with_the_key_named(tmp_path, failures, key):
    args = ["run", _scenario(tmp_path, failures), "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(main, args + [a for s in SMALL for a in ("--set", s)])
    assert result.exit_code == 2, result.output
    assert key in result.output
    assert "Traceback" not in result.output


def test_a_failed_local_pair_under_detours_is_refused_naming_the_detours(tmp_path):
    """Both local links between TiNs 0 and 1 fail (ports 2 and 3 of TiN 0): the tables then
    route TiN 0 to TiN 1 by two local hops, which the turn rule does not order, and with the
    detours (on by default) they close a cycle. Refused naming the detours' key and what to
    set; without detours the same failure runs."""
    pair = [{"at_ns": 10000, "switch": 0, "port": port, "tables_after_ns": 10000} for port in (2, 3)]
    args = ["run", _scenario(tmp_path, pair), "--out", str(tmp_path / "out")]
    settings = [a for s in SMALL for a in ("--set", s)]
    result = CliRunner().invoke(main, args + settings)
    assert result.exit_code == 2, result.output
    assert "failures[" in result.output and "routing.local_misroutes" in result.output
    assert 'expected "none"' in result.output and "no turn rule" not in result.output
    assert "Traceback" not in result.output
    without = CliRunner().invoke(main, args + settings + ["--set", "routing.local_misroutes=none", "--json"])
    assert without.exit_code == 0, without.output


@pytest.mark.parametrize("base, words", [
    (ROOT / "aquila/clique-uniform.toml", "VC routers"),  # drop-tail cell switches
    (ROOT / "fabric/dragonfly-vc.toml", "one cell"),  # 10-flit packets
    (ROOT / "aquila/fig7-ip-latency.toml", "GNet"),  # hosts whose accounts count no failure
])
def test_failures_where_links_cannot_fail_are_refused(tmp_path, base, words):
    failure = [{"at_ns": 0, "switch": 0, "port": 4}]
    result = CliRunner().invoke(main, ["run", _scenario(tmp_path, failure, base),
                                       "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "failures" in result.output and words in result.output
    assert "Traceback" not in result.output


def test_failures_with_packets_of_several_cells_are_refused(tmp_path):
    """A packet of several cells holds its output VC from head to tail: a lost head or tail
    would leave the VC held, so such packets are refused even on whole-cell switching."""
    failure = [{"at_ns": 0, "switch": 0, "port": GLOBAL_PORT}]
    args = ["run", _scenario(tmp_path, failure), "--set", "traffic.packet_bytes=1520",
            "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(main, args + [a for s in SMALL for a in ("--set", s)])
    assert result.exit_code == 2, result.output
    assert "failures" in result.output and "one cell" in result.output
    assert "Traceback" not in result.output
