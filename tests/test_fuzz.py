"""A scenario fuzzer: Hypothesis draws scenarios (every design, from a shipped scenario with
random keys set to values at and beyond their bounds, of wrong types, not numbers, unknown, or
belonging to another design) and runs each briefly through the Python API. Every one must either
run, with its account settled (the core checks it and fails the run otherwise), or be rejected
with a ``ScenarioError`` whose message starts with the key at fault. A panic, any other exception
or a broken account fails the test, and Hypothesis shrinks it to a small case.

CI runs 2 000 cases (about 8 s); a longer search, logging each case before it runs (so that a
case that hangs or exhausts memory can be found), is

    ulimit -v 6000000; CELLFABRIC_FUZZ_CASES=50000 CELLFABRIC_FUZZ_LOG=/tmp/cases.txt \
        python3 -m pytest -q tests/test_fuzz.py
"""

from __future__ import annotations

import math
import os
import re

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import cellfabric
from conftest import ROOT

CASES = int(os.environ.get("CELLFABRIC_FUZZ_CASES", "2000"))

# Shipped scenarios to start from, cut short (duration in ns), with the keys each design knows.
BASES = {
    "classic/islip.toml": 10_000,
    "classic/fifo.toml": 10_000,
    "rifl/table1.toml": 20_000,
    "rifl/link.toml": 2_000,
    "clint/bulk.toml": 20_000,
    "clint/quick.toml": 20_000,
    "fabric/from-file.toml": 5_000,
    "stardust/push-pull.toml": 20_000,
}
# Keys of every design, so that each base also meets the others' keys, and some no design has.
KEYS = [
    "switch.ports", "switch.scheduler", "switch.iterations", "switch.buffer_cells", "switch.per_voq_buffers",
    "switch.batcher_banyan", "switch.pipeline_ns", "link.rate_gbps", "link.propagation_ns",
    "link.flow_control", "link.overhead_bytes", "link.ber", "link.off_threshold_cells",
    "link.on_threshold_cells", "link.host_rate_gbps", "link.length_m", "link.frame_bytes",
    "cell.size_bytes", "cell.payload_bytes", "cell.header_bytes", "cell.control_bytes", "nic.queue_cells",
    "traffic.load", "traffic.arrival", "traffic.burst_mean_cells", "traffic.burst_mean_bytes",
    "traffic.destinations", "traffic.include_self", "traffic.hotspot_port", "traffic.hotspot_fraction",
    "traffic.packet_bytes", "traffic.packet_bytes_min", "traffic.packet_bytes_max", "traffic.pattern",
    "traffic.senders", "traffic.flow_bytes", "traffic.bursty", "traffic.intervals", "topology.kind",
    "topology.k", "topology.leaves", "topology.spines", "topology.hosts_per_leaf", "topology.links",
    "topology.tiers", "topology.radix", "topology.groups", "topology.file", "routing.mode",
    "routing.spray_rounds", "credit.size_bytes", "credit.speedup", "stardust.credits",
    "adapter.voq_packets", "adapter.uplink_cells", "element.queue_cells", "element.fci_threshold_cells",
    "reachability.mode", "reachability.threshold", "reachability.slice_adapters", "channel.architecture",
    "nic.bulk_send_buffers", "run.seed", "traffic.lod", "bogus", "switch.prots.x",
]
NAMES = ["islip", "fifo", "pim", "safc", "output_queued", "bursty", "spray", "star", "fat_tree",
         "leaf_spine", "dragonfly", "messages", "B4", "Q2", "credit", "onoff", "uniform", "permutation"]
# Values at and beyond bounds, of wrong types and not numbers, beside plausible ones (so that
# enough cases get past validation and run).
VALUES = st.one_of(
    st.sampled_from([0, 1, 2, 3, 4, 7, 8, 16, 255, 256, 257, 100_000, -1, 2**40, 0.5, 1e-9, 1e12, 1.5,
                     math.nan, math.inf, -math.inf, True, False, "x", "", [1, 2], {}, {"a": 1}]),
    st.floats(min_value=-2, max_value=2, allow_nan=False),
    st.integers(min_value=1, max_value=16),
    st.floats(min_value=0.05, max_value=1.0),
    st.sampled_from(NAMES),
    st.booleans(),
)
LENGTH_KEYS = ["run.duration_ns", "run.warmup_ns"]
LENGTHS = st.sampled_from([-1, 0, 0.4, 1, 10, 100, 1_000, 5_000, math.nan, math.inf, "x", True, [1]])
KEY_AT_FAULT = re.compile(r"^(--set |design|[a-z_]+(\.[a-z_0-9]+|\[\d+\])*)")


def _short(base: str, duration_ns: int) -> dict:
    scenario = cellfabric.load_scenario(ROOT / "scenarios" / base)
    run = scenario.setdefault("run", {})
    run["duration_ns"] = duration_ns
    if "warmup_ns" in run:
        run["warmup_ns"] = duration_ns // 10
    if scenario.get("topology", {}).get("kind") == "fat_tree":
        scenario["topology"]["k"] = 4
    return scenario


def _own_keys(scenario: dict, prefix: str = "") -> list[str]:
    """The dotted keys a scenario sets (its own design's keys, drawn more often than others)."""
    keys = []
    for key, value in scenario.items():
        if isinstance(value, dict):
            keys += _own_keys(value, f"{prefix}{key}.")
        elif key != "design":
            keys.append(f"{prefix}{key}")
    return keys


@settings(max_examples=CASES, deadline=5000, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from(sorted(BASES)), data=st.data())
def test_every_scenario_runs_or_is_rejected_naming_a_key(base: str, data):
    scenario = _short(base, BASES[base])
    # The run's length is drawn apart, from values that keep every run short.
    own = sorted(k for k in _own_keys(scenario) if k not in LENGTH_KEYS)
    keys = st.one_of(st.sampled_from(own), st.sampled_from(own), st.sampled_from(KEYS))
    pair = st.one_of(st.tuples(keys, VALUES), st.tuples(st.sampled_from(LENGTH_KEYS), LENGTHS))
    changes = data.draw(st.lists(pair, min_size=1, max_size=3), label="changes")
    if os.environ.get("CELLFABRIC_FUZZ_LOG"):
        with open(os.environ["CELLFABRIC_FUZZ_LOG"], "a") as log:
            log.write(f"{base} {changes!r}\n")
    try:
        overrides = dict(changes)
        result = cellfabric.run(scenario, overrides=overrides, progress=False)
    except cellfabric.ScenarioError as error:
        event("rejected")
        message = str(error)
        assert KEY_AT_FAULT.match(message), f"{overrides}: {message}"
        assert "\n" not in message.strip() and "Traceback" not in message, message
        return
    except cellfabric.SimulationError as error:
        # A configuration the model can run may still deadlock, which the kernel reports; a
        # broken account is a finding.
        assert "deadlock" in str(error), f"{overrides}: {error}"
        event("deadlocked")
        return
    event("ran")
    summary = result.summary
    for items in ("cells", "packets", "frames"):
        if f"{items}_injected" in summary:
            settled = (summary[f"{items}_delivered"] + summary.get(f"{items}_dropped", 0)
                       + summary[f"{items}_in_flight"])
            assert summary[f"{items}_injected"] == settled, f"{overrides}: {items} account"


@pytest.mark.parametrize("base", sorted(BASES))
def test_every_fuzz_base_runs_as_shipped(base: str):
    assert cellfabric.run(_short(base, BASES[base]), progress=False).summary["sim_time_ps"] > 0
