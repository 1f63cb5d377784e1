"""Regenerates the numbers in docs/validation/clint.md: Fig. 8 (bulk latency against load), Fig. 9
(quick latency against load), Fig. 10 (quick collision rates) and Table 2 of the Clint paper
(Eberle and Gura, Sun Labs TR 2002, §4) from scenarios/clint/bulk.toml and
scenarios/clint/quick.toml, through `cellfabric reproduce clint-fig8`, `clint-fig9` (whose runs
are Fig. 10's) and `clint-table2`; then the mechanisms beyond the paper's simulation (bit errors,
PCI transfers, enable vectors, speculative bulk transfers, bulk acknowledgments as quick packets).

    python3 docs/validation/clint.py          # about 1 minute on one core
"""

from functools import cache

import cellfabric
from cellfabric.reproduce import CLINT_BULK_LOADS, CLINT_QUICK_LOADS, point, reproduction_points


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


@cache
def figure(name: str):
    """The points of reproduction `name` (one part)."""
    (points,) = reproduction_points(name).values()
    return points


def curves(name: str, architectures: list[str], loads: list[float], field: str) -> None:
    """One table of a figure: `field` (a latency's mean, or a rate) per architecture and load."""
    print("| architecture | traffic | " + " | ".join(f"{x:g}" for x in loads) + " |")
    print("|---|---|" + "---|" * len(loads))
    for architecture in architectures:
        for bursty in (False, True):
            cells = []
            for load in loads:
                p = point(figure(name), {"channel.architecture": architecture, "traffic.load": load,
                                         "traffic.bursty": bursty})
                if field.endswith("_ns"):
                    s = {field: {"mean": p[f"{field}.mean"]}, "throughput": p["throughput"]}
                    cells.append(mean_us(s, load, field))
                else:
                    cells.append(f"{p[field]:.3g}")
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
    """Throughput when offered more than the channel carries: bulk at 0.95 (Fig. 8's last
    points), quick at 0.6."""
    for architecture in ["B1", "B2", "B3", "B4"]:
        carried = [point(figure("clint-fig8"), {"channel.architecture": architecture, "traffic.load": 0.95,
                                                "traffic.bursty": bursty})["throughput"]
                   for bursty in (False, True)]
        print(f"{architecture} at 0.95: {carried[0]:.2f} (bursty {carried[1]:.2f})")
    for architecture in ["Q1", "Q2"]:
        carried = [run("quick", architecture, 0.6, bursty)["throughput"] for bursty in (False, True)]
        print(f"{architecture} at 0.6: {carried[0]:.2f} (bursty {carried[1]:.2f})")


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


def quick_gap() -> None:
    """Q2 in Table 2's cells with bulk acknowledgments as packets on the quick channel instead of
    reserved windows, and with the load read as counting acknowledgments too."""
    cells = [(0.1, False), (0.3, False), (0.1, True), (0.3, True)]
    print("| reading | 0.1 | 0.3 | 0.1 bursty | 0.3 bursty | carried at 0.6 |")
    print("|---|---|---|---|---|---|")
    packets = (("quick.bulk_packets", "packets"),)
    readings = (("windows (default)", 1.0, ()),
                ("bulk acks as packets, bulk load 1", 1.0, packets),
                ("bulk acks as packets, bulk load 0.5", 1.0, packets + (("quick.bulk_load", 0.5),)),
                # Load counting requests and their acknowledgments (36 + 4 bytes): fewer requests.
                ("load counts acknowledgments too", 36 / 40, ()))
    for name, scale, more in readings:
        row = [mean_us(run("quick", "Q2", round(load * scale, 4), bursty, more=more), load * scale)
               for load, bursty in cells]
        carried = run("quick", "Q2", round(0.6 * scale, 4), False, more=more)["throughput"]
        print(f"| {name} | " + " | ".join(row) + f" | {carried:.3f} |")
    for architecture in ("Q1", "Q2"):
        s = run("quick", architecture, 0.3, False, more=packets)
        print(f"{architecture} at 0.3 with bulk acks as packets: {s['collision_rate']:.3f} collisions per "
              f"transmission, {s['ack_collision_rate']:.3f} with acknowledgments")


def errors() -> None:
    """Bit errors on both channels: B4 at 0.5 and Q2 at 0.1 against the bit error rate."""
    print("| channel | bit error rate | packet error rate | throughput | latency [µs] | accepted [µs] | "
          "CRC-failed requests | CRC-failed acks | timeouts | duplicates | out-of-sequence NAKs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for channel, architecture, load, key, rates, size in (
            ("bulk", "B4", 0.5, "bulk.bit_error_rate", (1e-7, 1e-6, 1e-5), 2086),
            ("quick", "Q2", 0.1, "quick.bit_error_rate", (1e-6, 1e-5, 1e-4), 36)):
        for rate in (0.0, *rates):
            for retransmission in ("selective", "go_back_n"):
                if retransmission == "go_back_n" and rate != rates[-1]:
                    continue
                more = ((key, rate), ("nic.retransmission", retransmission), ("quick.bit_error_rate", rate))
                s = run(channel, architecture, load, False, more=more)
                per_packet = 1 - (1 - rate) ** (size * 10 * 2)
                f = s["faults"]
                name = architecture + (" go-back-N" if retransmission == "go_back_n" else "")
                print(f"| {name} | {rate:g} | {per_packet:.3g} | {s['throughput']:.3f} | "
                      f"{mean_us(s, load)} | {mean_us(s, load, 'latency_accepted_ns')} | "
                      f"{f['crc_requests']} | {f['crc_acks']} | {s['timeouts']} | {s['duplicates']} | "
                      f"{s['naks_out_of_sequence']} |")


def pci() -> None:
    """End-to-end latency with the hosts' PCI transfers, against the paper's latency."""
    print("| architecture | load | PCI | latency [µs] | end to end [µs] |")
    print("|---|---|---|---|---|")
    for channel, architecture in (("bulk", "B4"), ("quick", "Q2")):
        for load in (0.1, 0.3):
            for name, more in (("none (the paper's)", ()),
                               ("4.224 Gbit/s", (("nic.pci_gbps", 4.224),)),
                               ("4.224 Gbit/s + 1 µs per transfer", (("nic.pci_gbps", 4.224),
                                                                     ("nic.pci_overhead_ns", 1000)))):
                s = run(channel, architecture, load, False, more=more)
                print(f"| {architecture} | {load} | {name} | {mean_us(s, load)} | "
                      f"{mean_us(s, load, 'latency_end_to_end_ns')} |")


def enable_vectors() -> None:
    """Q2 at 0.1 with node 0 disabled in every target's quick enable vector."""
    s = cellfabric.run("scenarios/clint/quick.toml", overrides={"quick.disabled_initiators": [0]})
    nodes = s.tables["nodes"]
    print(f"node 0 delivered {nodes['delivered'][0]} of {nodes['injected'][0]}; the others "
          f"{nodes['delivered'][1:].sum()} of {nodes['injected'][1:].sum()}; "
          f"{s.summary['faults']['disabled_drops']} requests dropped by enable vectors")


def speculative() -> None:
    """B4's mean latency with speculative transfers beside without."""
    loads = [0.1, 0.3, 0.5, 0.7, 0.9]
    print("| traffic | speculative | " + " | ".join(f"{x:g}" for x in loads) + " |")
    print("|---|---|" + "---|" * len(loads))
    for bursty in (False, True):
        for on in (False, True):
            cells = []
            for load in loads:
                s = run("bulk", "B4", load, bursty, more=(("bulk.speculative", on),))
                cell = mean_us(s, load)
                if on:
                    sent = s["speculative"]["sent"]
                    lost = s["speculative"]["lost"]
                    share, lost_share = sent / max(s["transmissions"], 1), lost / max(sent, 1)
                    cell += (f" / {mean_us(s, load, 'latency_accepted_ns')} "
                             f"({share:.0%} spec., {lost_share:.0%} lost)")
                cells.append(cell)
            traffic = "bursty" if bursty else "non-bursty"
            print(f"| {traffic} | {'on' if on else 'off'} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    print("Fig. 8, mean latency [µs], to the first transmission, then to the accepted one:")
    curves("clint-fig8", ["B1", "B2", "B3", "B4"], CLINT_BULK_LOADS, "latency_ns")
    curves("clint-fig8", ["B1", "B2", "B3"], CLINT_BULK_LOADS, "latency_accepted_ns")
    print("\nFig. 9, mean latency [µs], to the first transmission, then to the accepted one:")
    curves("clint-fig9", ["Q1", "Q2"], CLINT_QUICK_LOADS, "latency_ns")
    curves("clint-fig9", ["Q1", "Q2"], CLINT_QUICK_LOADS, "latency_accepted_ns")
    print("\nFig. 10 (Fig. 9's runs), collisions per request transmission (all, then with acknowledgments):")
    curves("clint-fig9", ["Q1", "Q2"], CLINT_QUICK_LOADS, "collision_rate")
    curves("clint-fig9", ["Q1"], CLINT_QUICK_LOADS, "ack_collision_rate")
    print("\nTable 2:")
    table2()
    print("\nSaturation throughput:")
    saturation()
    print("\nQ2 variations, mean latency [µs]:")
    variations()
    print("\nThe quick channel's gap: Q2 mean latency [µs] under other readings:")
    quick_gap()
    print("\nTransmission errors:")
    errors()
    print("\nPCI transfers:")
    pci()
    print("\nQuick enable vectors:")
    enable_vectors()
    print("\nSpeculative bulk transfers, B4 mean latency [µs]:")
    speculative()
