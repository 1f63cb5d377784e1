"""A scenario fuzzer: Hypothesis draws scenarios (every design, from a shipped scenario with
random keys set to values at and beyond their bounds, of wrong types, not numbers, unknown, or
belonging to another design) and runs each briefly through the Python API. Every one must either
run, with its account settled (the core checks it and fails the run otherwise), or be rejected
with a ``ScenarioError`` whose message starts with the key at fault. A panic, any other exception,
a broken account, or a deadlock fails the test, and Hypothesis shrinks it to a small case. A
deadlock is a pass only where ``may_deadlock`` allows one: a lossless fabric with cycles
(``link.flow_control`` "credit" or "onoff" on a dragonfly or a topology file).

The cases are drawn from a seed, ``SEED`` (``CELLFABRIC_FUZZ_SEED``, default 20261126), with no
example database, so a seed draws the same cases on every machine and a failure replays. CI runs
2 000 cases from the default seed (about 8 s). A failure's message starts with the seed and gives
the drawn case, for example (made by ``test_a_failing_case_names_the_seed_and_replays``, whose
kernel reports a deadlock after every run)

    AssertionError: [CELLFABRIC_FUZZ_SEED=20261126] base 'clint/bulk.toml', changes
    [('bulk.arbiter_ns', 0)]: deadlocked, and may_deadlock() says it may not: ...

and it is replayed (the same search, the same shrunk case) with the same seed and case count:

    CELLFABRIC_FUZZ_SEED=20261126 CELLFABRIC_FUZZ_CASES=2000 python3 -m pytest -q tests/test_fuzz.py

or run alone, without the search, in Python: ``_check_case('clint/bulk.toml', [('bulk.arbiter_ns',
0)])``. Other seeds explore other cases; a longer search, logging each case before it runs (so
that a case that hangs or exhausts memory can be found), is

    ulimit -v 6000000; CELLFABRIC_FUZZ_SEED=7 CELLFABRIC_FUZZ_CASES=50000 \
        CELLFABRIC_FUZZ_LOG=/tmp/cases.txt python3 -m pytest -q tests/test_fuzz.py

``test_a_failing_case_names_the_seed_and_replays`` shows a failure naming its seed and replaying.
"""

from __future__ import annotations

import math
import os
import re

import pytest
from hypothesis import HealthCheck, event, given, seed, settings
from hypothesis import strategies as st

import cellfabric
import cellfabric.scenario
from conftest import ROOT

CASES = int(os.environ.get("CELLFABRIC_FUZZ_CASES", "2000"))
SEED_VARIABLE = "CELLFABRIC_FUZZ_SEED"
SEED = int(os.environ.get(SEED_VARIABLE, "20261126"))

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
    "traffic.destinations", "traffic.include_self", "traffic.active_hosts", "traffic.hotspot_port",
    "traffic.hotspot_fraction",
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


def may_deadlock(scenario: dict) -> bool:
    """Whether a drawn scenario (the base with the drawn changes applied) may deadlock: only a
    lossless fabric whose channels can form a cycle, that is ``link.flow_control`` set to
    ``"credit"`` or ``"onoff"`` (a full buffer holds its upstream rather than dropping) on a
    topology with cycles, ``topology.kind`` ``"dragonfly"`` (its global links join the groups in
    a ring of rings) or ``"file"`` (a user's topology may hold any cycle; the fuzzer does not
    check; a file may also set ``flow_control`` per cable, which the fuzzer's one file,
    ``leaf-spine.topo``, does not). Every other deadlock is a bug in the kernel and fails the
    fuzzer."""
    link, topology = scenario.get("link"), scenario.get("topology")
    flow_control = link.get("flow_control") if isinstance(link, dict) else None
    kind = topology.get("kind") if isinstance(topology, dict) else None
    return flow_control in ("credit", "onoff") and kind in ("dragonfly", "file")


def _check_case(base: str, changes: list, may_deadlock=may_deadlock) -> None:
    """Runs one drawn case; an assertion fails, naming the seed and the case, on any finding."""
    scenario = _short(base, BASES[base])
    overrides = dict(changes)
    case = f"[{SEED_VARIABLE}={SEED}] base {base!r}, changes {changes!r}"
    if os.environ.get("CELLFABRIC_FUZZ_LOG"):
        with open(os.environ["CELLFABRIC_FUZZ_LOG"], "a") as log:
            log.write(f"{base} {changes!r}\n")
    try:
        result = cellfabric.run(scenario, overrides=overrides, progress=False)
    except cellfabric.ScenarioError as error:
        event("rejected")
        message = str(error)
        assert KEY_AT_FAULT.match(message), f"{case}: rejected without naming the key: {message}"
        assert "\n" not in message.strip() and "Traceback" not in message, f"{case}: {message}"
        return
    except cellfabric.SimulationError as error:
        # A broken account is a finding; so is a deadlock, unless the scenario is a lossless
        # fabric with cycles (``may_deadlock``), where the kernel's report of one is the answer.
        assert "deadlock" in str(error), f"{case}: {error}"
        drawn = cellfabric.scenario.load_scenario(scenario, overrides)
        assert may_deadlock(drawn), f"{case}: deadlocked, and may_deadlock() says it may not: {error}"
        event("deadlocked (lossless, cyclic)")
        return
    event("ran")
    summary = result.summary
    for items in ("cells", "packets", "frames"):
        if f"{items}_injected" in summary:
            settled = (summary[f"{items}_delivered"] + summary.get(f"{items}_dropped", 0)
                       + summary[f"{items}_in_flight"])
            assert summary[f"{items}_injected"] == settled, f"{case}: {items} account"


def _draw_changes(base: str, data) -> list:
    """Up to three (dotted key, value) changes to base: its own keys often, every design's and
    unknown keys too, and the run's length apart, from values that keep every run short."""
    own = sorted(k for k in _own_keys(_short(base, BASES[base])) if k not in LENGTH_KEYS)
    keys = st.one_of(st.sampled_from(own), st.sampled_from(own), st.sampled_from(KEYS))
    pair = st.one_of(st.tuples(keys, VALUES), st.tuples(st.sampled_from(LENGTH_KEYS), LENGTHS))
    return data.draw(st.lists(pair, min_size=1, max_size=3), label="changes")


def fuzzer(cases: int, may_deadlock=may_deadlock):
    """The fuzz test: ``cases`` cases drawn from SEED (no example database, so a seed always
    draws the same cases, and the same shrunk failure)."""

    @seed(SEED)
    @settings(max_examples=cases, deadline=5000, database=None, print_blob=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(base=st.sampled_from(sorted(BASES)), data=st.data())
    def fuzz(base: str, data):
        _check_case(base, _draw_changes(base, data), may_deadlock)

    return fuzz


test_every_scenario_runs_or_is_rejected_naming_a_key = fuzzer(CASES)


def test_a_failing_case_names_the_seed_and_replays(monkeypatch):
    """A kernel made to report a deadlock after every run it accepts fails the fuzzer (most drawn
    scenarios are not lossless and cyclic); the failure names the seed and the drawn case, and a
    second run from the same seed fails with the same message (the same shrunk case)."""
    real_run = cellfabric.run

    def deadlocking_run(*args, **kwargs):
        real_run(*args, **kwargs)
        raise cellfabric.SimulationError("deadlock (made by the test)")

    monkeypatch.setattr(cellfabric, "run", deadlocking_run)
    messages = []
    for _ in range(2):
        with pytest.raises(AssertionError) as failure:
            fuzzer(100)()
        messages.append(str(failure.value))
    assert f"{SEED_VARIABLE}={SEED}" in messages[0] and "changes [" in messages[0], messages[0]
    assert "may_deadlock() says it may not" in messages[0], messages[0]
    assert messages[0] == messages[1]


@pytest.mark.parametrize("flow_control, kind, allowed", [
    ("credit", "dragonfly", True), ("onoff", "file", True), ("credit", "fat_tree", False),
    ("none", "dragonfly", False), (None, "file", False), ("onoff", None, False), ("credit", [1], False),
])
def test_only_a_lossless_cyclic_fabric_may_deadlock(flow_control, kind, allowed):
    scenario = {"link": {"flow_control": flow_control}, "topology": {"kind": kind}}
    assert may_deadlock(scenario) is allowed
    assert not may_deadlock({"link": "credit", "topology": {"kind": "dragonfly"}})


@pytest.mark.parametrize("base", sorted(BASES))
def test_every_fuzz_base_runs_as_shipped(base: str):
    assert cellfabric.run(_short(base, BASES[base]), progress=False).summary["sim_time_ps"] > 0
