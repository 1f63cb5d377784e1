"""Regenerates the completion-time table in docs/validation/aquarius.md: the Aquarius slides'
realistic-traffic experiment (scenarios/aquarius/fct.toml: the 128-server fat-tree, the Web
Server distribution at 70% load plus 5% of 100-to-1 incasts) under PFC, BFC with 8, 32 and 128
queues, Aquarius with 8 and ideal per-flow queues, once with DCQCN on every host (the slides'
default) and once with the line-rate sender capped at one bandwidth-delay product of inflight
(BFC's hosts, Goyal et al., "Backpressure Flow Control", NSDI 2022). FCT slowdown (FCT over the
unloaded FCT) of the flows that started after the warm-up and finished, by size bin: mean, p50
and p99.

    python3 docs/validation/aquarius.py [--duration-ns N]
"""

import math
import sys

import cellfabric

FCT = "scenarios/aquarius/fct.toml"
SCHEMES = [
    ("PFC", {"switch.port_kind": "pfc"}),
    ("BFC, 8 queues", {"switch.port_kind": "bfc", "switch.per_flow.queues": 8}),
    ("BFC, 32 queues", {"switch.port_kind": "bfc", "switch.per_flow.queues": 32}),
    ("BFC, 128 queues", {"switch.port_kind": "bfc", "switch.per_flow.queues": 128}),
    ("Aquarius, 8 queues", {}),
    ("Ideal per-flow queues", {"switch.port_kind": "per_flow_ideal"}),
]
HOSTS = [("DCQCN", "dcqcn"), ("line rate within one BDP", "line_rate")]
BINS = [("all", 0, math.inf), ("< 10 KB", 0, 10_000), ("10-500 KB", 10_000, 500_000),
        ("≥ 500 KB", 500_000, math.inf)]


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank q-th percentile of `values` (sorted here)."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def cell(values: list[float]) -> str:
    """`mean / p50 / p99` of `values`, or a dash for none."""
    if not values:
        return "-"
    mean = sum(values) / len(values)
    return f"{mean:.3g} / {percentile(values, 50):.3g} / {percentile(values, 99):.3g}"


def row(name: str, overrides: dict) -> str:
    """One scheme's row: slowdown per size bin, flows finished and not, drops."""
    res = cellfabric.run(FCT, overrides={"run.strict": False, **overrides}, progress=False)
    timed = res.tables["timed_flows"]
    warmup_us = res.summary["warmup_ps"] / 1e6
    measured = [(size, slowdown) for size, start, slowdown in
                zip(timed["size_bytes"], timed["start_us"], timed["slowdown"], strict=True)
                if start >= warmup_us]
    done = [(size, s) for size, s in measured if s is not None and not math.isnan(s)]
    cells = [cell([s for size, s in done if low <= size < high]) for _, low, high in BINS]
    unfinished = len(measured) - len(done)
    return (f"| {name} | {' | '.join(cells)} | {len(done):,} | {unfinished:,} | "
            f"{res.summary['packets_dropped']} |")


def main() -> None:
    more = {}
    if "--duration-ns" in sys.argv:
        more["run.duration_ns"] = float(sys.argv[sys.argv.index("--duration-ns") + 1])
    for host_name, transport in HOSTS:
        print(f"## {host_name} on every host\n")
        print(f"| scheme | {' | '.join(name for name, _, _ in BINS)} | finished | unfinished | drops |")
        print("|---|---|---|---|---|---|---|---|")
        for name, overrides in SCHEMES:
            print(row(name, {"host.transport": transport, **overrides, **more}))
        print()


if __name__ == "__main__":
    main()
