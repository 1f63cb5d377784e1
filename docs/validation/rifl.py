"""Regenerates the numbers in docs/validation/rifl.md: Table I and Fig. 5 of the RIFL Layer 2
paper (Shen and Chow, arXiv 2023, §V) from scenarios/rifl/table1.toml and
scenarios/rifl/fig5.toml, and the Layer 1 link study (§II-A) from scenarios/rifl/link.toml.

    python3 docs/validation/rifl.py
"""

import cellfabric
from cellfabric.reproduce import point, reproduction_points

PERCENTILES = ["p1", "p50", "p75", "p90", "p95", "p99", "max"]
# Table I of the paper, from table1.toml's [reference] (the one place it is written):
# (arrival, scheduler, load) -> latency percentiles 1/50/75/90/95/99/100.
PAPER = {tuple(row[:3]): row[3:]
         for row in cellfabric.scenario.reference_of("scenarios/rifl/table1.toml")["rows"]}
# 312 500 cell times of 21.12 ns (264-byte cells at 100 Gbit/s): 80 MB per input at 100%.
OPEN_LOOP = {"nic.queue_cells": 100_000_000, "run.warmup_ns": 0, "run.duration_ns": 6_600_000}


def table1(extra: dict | None = None) -> None:
    points = reproduction_points("rifl-table1", overrides=extra)["table1"]
    print("| arrival | scheduler | load | source | " + " | ".join(PERCENTILES) + " | throughput |")
    print("|---|---|---|---|" + "---|" * (len(PERCENTILES) + 1))
    for (arrival, scheduler, load), paper in PAPER.items():
        s = point(points, {"traffic.arrival": arrival, "switch.scheduler": scheduler, "traffic.load": load})
        ours = [s[f"latency_cells.{p}"] for p in PERCENTILES]
        row = f"| {arrival} | {scheduler} | {load:.0%} |"
        print(row + " paper | " + " | ".join(str(v) for v in paper) + " | |")
        print(row + " cellfabric | " + " | ".join(f"{v:.0f}" for v in ours) + f" | {s['throughput']:.3f} |")


def fig5() -> None:
    points = reproduction_points("rifl-fig5")["fig5"]
    loads = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    print("| arrival | packets | scheduler | " + " | ".join(f"{x:.0%}" for x in loads) + " |")
    print("|---|---|---|" + "---|" * len(loads))
    for arrival in ["bernoulli", "bursty"]:
        for sizes, (lo, hi) in [("fixed 256 B", (256, 256)), ("64–2048 B", (64, 2048))]:
            for scheduler in ["islip", "safc"]:
                axes = {"traffic.arrival": arrival, "switch.scheduler": scheduler,
                        "traffic.packet_bytes_min": lo, "traffic.packet_bytes_max": hi}
                cells = [f"{point(points, {**axes, 'traffic.load': load})['goodput']:.3f}" for load in loads]
                print(f"| {arrival} | {sizes} | {scheduler} | " + " | ".join(cells) + " |")


def layer1() -> None:
    lengths = [10, 100, 500]
    bers = [1e-10, 1e-9, 1e-8, 1e-7, 1e-6]
    # Long enough for about 400 bit errors in both directions together (at least 20 ms).
    runs = {
        (length, ber): cellfabric.run(
            "scenarios/rifl/link.toml",
            overrides={"link.length_m": length, "link.ber": ber,
                       "run.duration_ns": 1_000 * max(20_000.0, 2e-3 / ber if ber else 0.0)},
        ).summary
        for length in lengths
        for ber in [0.0, *bers]
    }
    header = " | ".join(f"{x} m: goodput / error-free" for x in lengths)
    print(f"| BER | {header} | bit errors detected (500 m) |")
    print("|---|" + "---|" * (len(lengths) + 1))
    for ber in bers:
        ratios = [runs[(x, ber)]["goodput"] / runs[(x, 0.0)]["goodput"] for x in lengths]
        errors = runs[(500, ber)]["errors_detected"]
        print(f"| {ber:g} | " + " | ".join(f"{r:.4f}" for r in ratios) + f" | {errors} |")
    print("\n| length | RTT (ns) | RTT (frames) | recovery p50 / max (RTT) at 1e-9 "
          "| pause per error, both ends (RTT) |")
    print("|---|---|---|---|---|")
    for x in lengths:
        s = runs[(x, 1e-9)]
        recovery = s["recovery_rtt"]
        print(f"| {x} m | {s['rtt_ns']:.0f} | {s['rtt_frames']} "
              f"| {recovery['p50']:.2f} / {recovery['max']:.2f} | {s['pause_per_error_rtt']:.2f} |")


def rack_layer1() -> None:
    """Table I's switch at load 0.9 with every cable a Layer 1 link at several BERs."""
    rtt_frames = 14  # 2 x 7 cell times of propagation
    frame_bits = 264 * 8
    print("| BER | throughput | p50 | p99 | max | errors detected | paused (measured) "
          "| paused (2 p 2.5 RTT) | cells dropped |")
    print("|---|---|---|---|---|---|---|---|---|")
    for ber in [0.0, 1e-8, 1e-7, 1e-6]:
        s = cellfabric.run("scenarios/rifl/table1.toml",
                           overrides={"traffic.load": 0.9, "link.ber": ber}).summary
        layer1 = s.get("layer1") or {"errors_detected": 0, "pause_slots": 0}
        frames = s["sim_time_ps"] / s["cell_time_ps"]
        paused = layer1["pause_slots"] / (2 * s["terminals"] * frames)
        frame_p = 1 - (1 - ber) ** frame_bits
        lat = s["latency_cells"]
        print(f"| {ber:g} | {s['throughput']:.3f} | {lat['p50']:.0f} | {lat['p99']:.0f} | {lat['max']:.0f} "
              f"| {layer1['errors_detected']} | {paused:.4f} | {2 * frame_p * 2.5 * rtt_frames:.4f} "
              f"| {s['cells_dropped']} |")


def main() -> None:
    print("## Table I: latency percentiles in cell times (closed-loop hosts, table1.toml)\n")
    table1()
    print("\n## Table I, open-loop reading (unbounded host queues, 80 MB per input, no warm-up)\n")
    table1(OPEN_LOOP)
    print("\n## Fig. 5: bandwidth utilization (payload / segment capacity) against offered load\n")
    fig5()
    print("\n## Layer 1: goodput against bit error rate and cable length (link.toml, ~400 errors per run)\n")
    layer1()
    print("\n## Layer 1 inside the rack: Table I's switch at load 0.9 with bit errors (table1.toml)\n")
    rack_layer1()


if __name__ == "__main__":
    main()
