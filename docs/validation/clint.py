"""Regenerates the numbers in docs/validation/clint.md: Fig. 8 (bulk latency against load), Fig. 9
(quick latency against load), Fig. 10 (quick collision rates) and Table 2 of the Clint paper
(Eberle and Gura, Sun Labs TR 2002, §4) from scenarios/clint/bulk.toml and
scenarios/clint/quick.toml.

    python3 docs/validation/clint.py
"""

from functools import cache

import cellfabric
from cellfabric.reproduce import point, reproduction_points

BULK_LOADS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95]
QUICK_LOADS = [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4]


def _table2(channel: str) -> dict:
    """Table 2's column of one channel, from the scenario's [reference] (ns): (load, bursty) -> µs."""
    rows = cellfabric.scenario.reference_of(f"scenarios/clint/{channel}.toml")["rows"]
    return {(load, bursty): ns / 1000 for _, load, bursty, ns in rows}


# Table 2 of the paper, latency in µs: (load, bursty) -> (bulk B4, quick Q2 or None if saturated).
_BULK, _QUICK = _table2("bulk"), _table2("quick")
PAPER = {key: (bulk, _QUICK.get(key)) for key, bulk in _BULK.items()}


@cache
def run(channel: str, architecture: str, load: float, bursty: bool, intervals: str = "uniform",
        more: tuple = ()) -> dict:
    """One run's summary; runs are deterministic, so each is made once. `more`: extra overrides."""
    overrides = {"channel.architecture": architecture, "traffic.load": load, "traffic.bursty": bursty,
                 "traffic.intervals": intervals, **dict(more)}
    return cellfabric.run(f"scenarios/clint/{channel}.toml", overrides=overrides).summary


def mean_us(s: dict, load: float, latency: str = "latency_ns") -> str:
    """Mean latency in µs, marked when the run's throughput stayed more than 3% below its load."""
    return f"{s[latency]['mean'] / 1000:.3g}" + (" (sat.)" if s["throughput"] < 0.97 * load else "")


def curves(channel: str, architectures: list[str], loads: list[float], field: str) -> None:
    print("| architecture | traffic | " + " | ".join(f"{x:g}" for x in loads) + " |")
    print("|---|---|" + "---|" * len(loads))
    for architecture in architectures:
        for bursty in (False, True):
            cells = []
            for load in loads:
                s = run(channel, architecture, load, bursty)
                cells.append(mean_us(s, load, field) if field.endswith("_ns") else f"{s[field]:.3g}")
            traffic = "bursty" if bursty else "non-bursty"
            print(f"| {architecture} | {traffic} | " + " | ".join(cells) + " |")


def table2() -> None:
    """Table 2 beside ours, with injection intervals drawn both ways §4.1 can be read."""
    print("| load | traffic | bulk paper | bulk uniform | bulk geometric | quick paper | quick uniform |"
          " quick geometric |")
    print("|---|---|---|---|---|---|---|---|")
    points = reproduction_points("clint-table2")  # cellfabric reproduce clint-table2

    def ours(channel: str, load: float, bursty: bool, intervals: str) -> dict:
        """The point's latency and throughput, shaped as a run's summary."""
        axes = {"traffic.load": load, "traffic.bursty": bursty, "traffic.intervals": intervals}
        p = point(points[channel], axes)
        return {"latency_ns": {"mean": p["latency_ns.mean"]}, "throughput": p["throughput"]}

    for (load, bursty), (bulk_paper, quick_paper) in PAPER.items():
        row = f"| {load} | {'bursty' if bursty else 'non-bursty'} | {bulk_paper} |"
        for intervals in ("uniform", "geometric"):
            s = ours("bulk", load, bursty, intervals)
            row += f" {mean_us(s, load)} ({s['latency_ns']['mean'] / 1000 / bulk_paper - 1:+.0%}) |"
        row += f" {quick_paper or 'saturated'} |"
        for intervals in ("uniform", "geometric"):
            s = ours("quick", load, bursty, intervals)
            gap = f" ({s['latency_ns']['mean'] / 1000 / quick_paper - 1:+.0%})" if quick_paper else ""
            row += f" {mean_us(s, load)}{gap} |"
        print(row)


def saturation() -> None:
    """Throughput when offered more than the channel carries: bulk at 0.95, quick at 0.6."""
    overloads = (("bulk", ["B1", "B2", "B3", "B4"], 0.95), ("quick", ["Q1", "Q2"], 0.6))
    for channel, architectures, load in overloads:
        for architecture in architectures:
            carried = [run(channel, architecture, load, bursty)["throughput"] for bursty in (False, True)]
            print(f"{architecture} at {load}: {carried[0]:.2f} (bursty {carried[1]:.2f})")


def variations() -> None:
    """Q2 in the Table 2 cells under other quick timeouts and under go-back-N."""
    cells = [(0.1, False), (0.3, False), (0.1, True), (0.3, True)]
    print("| variation | 0.1 | 0.3 | 0.1 bursty | 0.3 bursty |")
    print("|---|---|---|---|---|")
    for name, more in (("timeout 1 µs", (("nic.quick_timeout_ns", 1000),)),
                       ("timeout 2 µs (default)", ()),
                       ("timeout 4 µs", (("nic.quick_timeout_ns", 4000),)),
                       ("go-back-N, 2 µs", (("nic.retransmission", "go_back_n"),))):
        row = [mean_us(run("quick", "Q2", load, bursty, more=more), load) for load, bursty in cells]
        print(f"| {name} | " + " | ".join(row) + " |")
    for load in (0.3, 0.6):
        s = run("quick", "Q1", load, False, more=(("nic.quick_timeout_ns", 1000),))
        print(f"Q1 at {load} with a 1 µs timeout carries {s['throughput']:.3f}")


if __name__ == "__main__":
    print("Fig. 8, mean latency [µs], to the first transmission, then to the accepted one:")
    curves("bulk", ["B1", "B2", "B3", "B4"], BULK_LOADS, "latency_ns")
    curves("bulk", ["B1", "B2", "B3"], BULK_LOADS, "latency_accepted_ns")
    print("\nFig. 9, mean latency [µs], to the first transmission, then to the accepted one:")
    curves("quick", ["Q1", "Q2"], QUICK_LOADS, "latency_ns")
    curves("quick", ["Q1", "Q2"], QUICK_LOADS, "latency_accepted_ns")
    print("\nFig. 10, collisions per request transmission (all, then with acknowledgments):")
    curves("quick", ["Q1", "Q2"], QUICK_LOADS, "collision_rate")
    curves("quick", ["Q1"], QUICK_LOADS, "ack_collision_rate")
    print("\nTable 2:")
    table2()
    print("\nSaturation throughput:")
    saturation()
    print("\nQ2 variations, mean latency [µs]:")
    variations()
