"""One run on several threads (``run.threads``): every shipped ``cell_fabric``, ``ethernet`` and
``stardust`` scenario, cut short, gives on 2, 3 and 8 threads the summary and tables it gives on one, to the
last bit; a scenario that cannot be split, and every other design, is refused under
``run.threads`` with the reason (docs/parallel.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cellfabric

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "scenarios").glob("*/*.toml"))
# The designs that run on several threads.
THREADED = ("cell_fabric", "ethernet", "stardust")
# Short runs: 600 cell times, or 400 of an Ethernet host's packet times (a tenth of them
# warm-up); every scenario's first instants cross partitions.
SHORT_CELLS = 600
SHORT_PACKETS = 400
# Mechanisms refused on several threads, as the refusal names them.
NOT_YET = (
    "RIFL Layer 1 links",
    "per-VOQ flow control",
    "cell tracing",
    "failures",
    "too short to look ahead",
    "expected at most one thread per switch",
)


def _name(path: Path) -> str:
    return f"{path.parent.name}-{path.stem}"


def _short(path: Path, threads: int) -> dict:
    config = cellfabric.scenario.load_scenario(path, None, None)
    if config["design"] == "ethernet":
        size_bytes, times = config.get("host", {}).get("packet_bytes", 9000), SHORT_PACKETS
    else:
        default_bytes = 256 if config["design"] == "stardust" else 64
        size_bytes, times = config.get("cell", {}).get("size_bytes", default_bytes), SHORT_CELLS
    unit_ns = size_bytes * 8 / config.get("link", {}).get("rate_gbps", 100.0)
    return {
        "run.duration_ns": times * unit_ns,
        "run.warmup_ns": times // 10 * unit_ns,
        "run.threads": threads,
    }


def _results(path: Path, threads: int) -> str:
    res = cellfabric.run(path, overrides=_short(path, threads), progress=False)
    tables = {name: frame.to_dict(orient="list") for name, frame in res.tables.items()}
    return json.dumps({"summary": res.summary, "tables": tables}, sort_keys=True)


def _design(path: Path) -> str:
    return cellfabric.scenario.load_scenario(path, None, None).get("design", "single_switch")


@pytest.mark.parametrize("path", SCENARIOS, ids=_name)
def test_a_shipped_scenario_on_threads_gives_the_results_of_one_or_says_why_not(path: Path):
    if _design(path) not in THREADED:
        # Refused before it is built (the link study's run section has no such key at all).
        expected = "unknown field `threads`" if _design(path) == "rifl_link" else "runs on one thread"
        with pytest.raises(cellfabric.ScenarioError, match=f"run.threads: .*{expected}"):
            cellfabric.run(path, overrides={"run.threads": 2}, progress=False)
        return
    try:
        two = _results(path, 2)
    except cellfabric.ScenarioError as refused:
        assert "run.threads" in str(refused)
        assert any(reason in str(refused) for reason in NOT_YET), str(refused)
        return
    one = _results(path, 1)
    assert two == one
    for threads in (3, 8):
        try:
            assert _results(path, threads) == one, f"{threads} threads"
        except cellfabric.ScenarioError as refused:
            # A split into 3 or 8 may fall inside a pod and cut a short credit link, or need
            # more switches than the fabric has.
            assert any(reason in str(refused) for reason in NOT_YET[-2:]), str(refused)
