"""Golden results: a short run of every shipped scenario, compared exactly with the fixture in
``tests/golden/``. A refactoring of the kernel or the blocks must keep every number bit-identical;
a change that is meant to move results re-baselines them on purpose with

    python tests/test_golden.py --update [NAME ...]

(every fixture, or only the named ones, e.g. ``stardust-fig9``) and says why in its commit.
Summaries hold no wall-clock figure (those are in ``perf``), so they compare whole."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import cellfabric

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
SCENARIOS = sorted((ROOT / "scenarios").glob("*/*.toml"))

# Short runs: 3 000 cell times (300 of warm-up) of cell-switched designs, 40 µs (4 µs) of the
# others.
SHORT_CELLS = 3000
# Fabrics too large for that in every test run: the full-scale Fig. 9 bench (256 adapters, 192
# elements of radix 128, about 30 000 cell-hops per cell time) takes 100 cell times, still
# three fabric latencies. Aquila's Fig. 10 runs its whole 3 ms (2.3 M cell times of 1.28 ns,
# about a second): one pair sends a few messages and every other host is idle.
SHORT_CELLS_OF = {"bench-stardust-fig9": 100, "aquila-fig10-burst-size": 2_343_750}


def _name(path: Path) -> str:
    return f"{path.parent.name}-{path.stem}"


def _overrides(path: Path) -> dict:
    config = cellfabric.scenario.load_scenario(path, None, None)
    if config.get("design") in ("clint", "rifl_link"):
        overrides = {"run.duration_ns": 40_000, "run.warmup_ns": 4_000}
        if "warmup_ns" not in config["run"]:
            del overrides["run.warmup_ns"]
        return overrides
    size_bytes = config.get("cell", {}).get("size_bytes", 64)
    cell_ns = size_bytes * 8 / config.get("link", {}).get("rate_gbps", 100.0)
    cells = SHORT_CELLS_OF.get(_name(path), SHORT_CELLS)
    return {"run.duration_ns": cells * cell_ns, "run.warmup_ns": cells // 10 * cell_ns}


def _result(path: Path) -> dict:
    res = cellfabric.run(path, overrides=_overrides(path), progress=False)
    tables = {name: frame.to_dict(orient="list") for name, frame in res.tables.items()}
    return json.loads(json.dumps({"summary": res.summary, "tables": tables}))


@pytest.mark.parametrize("path", SCENARIOS, ids=_name)
def test_shipped_scenario_matches_its_golden_result(path: Path):
    fixture = GOLDEN / f"{_name(path)}.json"
    assert fixture.exists(), f"no golden result for {path}; run python {Path(__file__).name} --update"
    expected = json.loads(fixture.read_text())
    got = _result(path)
    assert got["summary"] == expected["summary"]
    assert got["tables"] == expected["tables"]


STARDUST_HEALTHY = [p for p in sorted((ROOT / "scenarios" / "stardust").glob("*.toml"))
                    if not cellfabric.scenario.load_scenario(p, None, None).get("failures")]


@pytest.mark.parametrize("path", STARDUST_HEALTHY, ids=_name)
def test_no_stardust_packet_is_discarded_without_a_failure(path: Path):
    """Stardust's fabric is lossless (§5.5): in every shipped scenario that scripts no failure, the
    short run (its golden result, which the test above checks is what the model makes) loses no
    cell and discards no packet at reassembly, which a cell held past the reassembly timeout
    would cause."""
    summary = json.loads((GOLDEN / f"{_name(path)}.json").read_text())["summary"]
    assert summary["cells_dropped"] == 0
    assert summary["packets_dropped_fabric"] == 0


def test_every_golden_result_has_a_scenario():
    names = {_name(p) for p in SCENARIOS}
    stale = [f.stem for f in GOLDEN.glob("*.json") if f.stem not in names]
    assert not stale, f"golden results without a scenario: {stale}"


if __name__ == "__main__":
    if sys.argv[1:2] != ["--update"]:
        sys.exit(f"usage: python {sys.argv[0]} --update [NAME ...]")
    chosen = set(sys.argv[2:])
    unknown = sorted(chosen - {_name(p) for p in SCENARIOS})
    if unknown:
        sys.exit(f"{sys.argv[0]}: no shipped scenario named {unknown[0]} (expected <folder>-<file stem>)")
    if not chosen:
        for stale in GOLDEN.glob("*.json"):
            stale.unlink()
    for path in SCENARIOS:
        if not chosen or _name(path) in chosen:
            (GOLDEN / f"{_name(path)}.json").write_text(json.dumps(_result(path), indent=1) + "\n")
            print("wrote", _name(path))
