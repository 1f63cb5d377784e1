"""Regenerates the numbers in docs/validation/rifl.md: Table I and Fig. 5 of the RIFL Layer 2
paper (Shen and Chow, arXiv 2023, §V) from scenarios/rifl/table1.toml and
scenarios/rifl/fig5.toml (with the readings of a burst and the finite workload of 2.5 MB per
pair), the Layer 1 link study (§II-A) from scenarios/rifl/link.toml, and Table I's switch with
bit errors.

    python3 docs/validation/rifl.py
"""

import sys

import cellfabric
from cellfabric.reproduce import point, reproduction_points

PERCENTILES = ["p1", "p50", "p75", "p90", "p95", "p99", "max"]
# Table I of the paper, from table1.toml's [reference] (the one place it is written):
# (arrival, scheduler, load) -> latency percentiles 1/50/75/90/95/99/100.
PAPER = {tuple(row[:3]): row[3:]
         for row in cellfabric.scenario.reference_of("scenarios/rifl/table1.toml")["rows"]}
# 312 500 cell times of 21.12 ns (264-byte cells at 100 Gbit/s): 80 MB per input at 100%.
OPEN_LOOP = {"nic.queue_cells": 100_000_000, "run.warmup_ns": 0, "run.duration_ns": 6_600_000}
# §V's finite workload: 2.5 MB from every input to every other output, measured from the start, the
# run long enough (1 000 000 cell times) for the last cell to arrive.
FINITE = {"traffic.bytes_per_pair": 2_500_000, "run.warmup_ns": 0, "run.duration_ns": 21_120_000}
BURST_NAMES = {("cut", 1024.0, None): "cut to fit, 1024 B geometric in cells",
               ("whole", 1024.0, None): "whole, 1024 B geometric in cells (default)",
               ("whole", None, 1.0): "whole, count geometric, mean 1 packet",
               ("whole", None, 4.0): "whole, count geometric, mean 4 packets"}


def table1(extra: dict | None = None) -> None:
    """Our percentiles beside the paper's; the last two columns count every cell generated during
    measurement, those still in flight at their ages so far (a lower bound of their latency)."""
    points = reproduction_points("rifl-table1", overrides=extra)["table1"]
    print("| arrival | scheduler | load | source | " + " | ".join(PERCENTILES)
          + " | throughput | p99 with in-flight cells (≥) | cells in flight |")
    print("|---|---|---|---|" + "---|" * (len(PERCENTILES) + 3))
    for (arrival, scheduler, load), paper in PAPER.items():
        s = point(points, {"traffic.arrival": arrival, "switch.scheduler": scheduler, "traffic.load": load})
        ours = [s[f"latency_cells.{p}"] for p in PERCENTILES]
        measured = s["cells_measured"] + s["cells_in_flight_measured"]
        in_flight = s["cells_in_flight_measured"] / measured if measured else 0.0
        row = f"| {arrival} | {scheduler} | {load:.0%} |"
        print(row + " paper | " + " | ".join(str(v) for v in paper) + " | | | |")
        print(row + " cellfabric | " + " | ".join(f"{v:.0f}" for v in ours) + f" | {s['throughput']:.3f}"
              + f" | {s['latency_with_in_flight_cells.p99']:.0f} | {in_flight:.2%} |")


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


def _number(value):
    """A grid value as the key of ``BURST_NAMES`` (missing keys are NaN in the points)."""
    return None if value != value else (value if isinstance(value, str) else float(value))


def bursts() -> None:
    """Fig. 5's bursty variable-packet curve under each reading of a burst, at high load."""
    points = reproduction_points("rifl-fig5")["bursts"]
    loads = [0.5, 0.8, 0.9, 1.0]
    print("| burst of 64–2048 B packets | scheduler | " + " | ".join(f"{x:.0%}" for x in loads) + " |")
    print("|---|---|" + "---|" * len(loads))
    for (packets, nbytes, count), name in BURST_NAMES.items():
        rows = points[[(_number(p), _number(b), _number(c)) == (packets, nbytes, count) for p, b, c in
                       zip(points["traffic.burst_packets"], points["traffic.burst_mean_bytes"],
                           points["traffic.burst_mean_packets"], strict=True)]]
        for scheduler in ["islip", "safc"]:
            cells = [f"{point(rows, {'switch.scheduler': scheduler, 'traffic.load': x})['goodput']:.3f}"
                     for x in loads]
            print(f"| {name} | {scheduler} | " + " | ".join(cells) + " |")


def finite() -> None:
    """Table I's 100% rows under §V's finite workload, with the completion time."""
    print("| arrival | scheduler | source | " + " | ".join(PERCENTILES)
          + " | completion (cell times) | throughput to completion |")
    print("|---|---|---|" + "---|" * (len(PERCENTILES) + 2))
    for (arrival, scheduler, load), paper in PAPER.items():
        if load != 1.0:
            continue
        overrides = {**FINITE, "traffic.load": 1.0, "traffic.arrival": arrival, "switch.scheduler": scheduler}
        if arrival == "bursty":
            overrides["traffic.burst_mean_bytes"] = 1024
        if scheduler == "safc":
            overrides["run.strict"] = False
        s = cellfabric.run("scenarios/rifl/table1.toml", overrides=overrides).summary
        work = s["workload"]
        ours = [s["latency_cells"][p] for p in PERCENTILES]
        completion = f"{work['completion_cells']:.0f}" if work["complete"] else "not reached"
        print(f"| {arrival} | {scheduler} | paper | " + " | ".join(str(v) for v in paper) + " | | |")
        print(f"| {arrival} | {scheduler} | cellfabric | " + " | ".join(f"{v:.0f}" for v in ours)
              + f" | {completion} | {work['throughput_to_completion']:.3f} |")


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


def burst_layer1() -> None:
    """Independent against Gilbert-Elliott errors at one long-run BER (1e-7, 100 m, 20 ms): bursts
    at 1e-4, of 1 to 1 000 frames on average, their gaps set so the long-run rate stays 1e-7."""
    long_run, burst_ber = 1e-7, 1e-4
    base = {"link.length_m": 100, "run.duration_ns": 20_000_000}
    clean = cellfabric.run("scenarios/rifl/link.toml", overrides={**base, "link.ber": 0.0}).summary
    print("| errors | mean burst (frames) | corrupted frames (expected) | recoveries started "
          "| goodput / error-free |")
    print("|---|---|---|---|---|")
    frames = 2 * base["run.duration_ns"] / (clean["rtt_ns"] / clean["rtt_frames"])  # both directions
    rows = [("independent", None, {"link.ber": long_run})]
    for burst in [1, 10, 100, 1000]:
        rows.append(("bursts", burst, {"link.ber": 0.0, "link.error_burst_ber": burst_ber,
                                       "link.error_burst_frames": burst,
                                       "link.error_burst_gap_frames": burst * (burst_ber / long_run - 1)}))
    for name, burst, overrides in rows:
        s = cellfabric.run("scenarios/rifl/link.toml", overrides={**base, **overrides}).summary
        # Frames corrupted: those sent in the error state (all of them, or the bursts' share of
        # time, long_run / burst_ber) times that state's frame error probability.
        ber, share = (burst_ber, long_run / burst_ber) if burst else (long_run, 1.0)
        corrupted = frames * share * (1 - (1 - ber) ** (8 * s["frame_bytes"]))
        print(f"| {name} | {burst or '—'} | {corrupted:.0f} | {s['errors_detected']} "
              f"| {s['goodput'] / clean['goodput']:.4f} |")


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


def rack_capacity_per_error() -> None:
    """Table I's switch saturated (load 1.0): goodput on plain cables, on error-free Layer 1
    cables (whose ON/OFF takes frame times as in-band flow-control frames, §IV-D) and at BER
    1e-7; the capacity lost per corrupted frame, against Layer 1's own error-free run, beside
    the replay's pause."""
    rtt_frames = 14
    cases = {"plain": {"link.ber": 0.0}, "clean": {"link.ber": 1e-30}, "noisy": {"link.ber": 1e-7}}
    runs = {name: cellfabric.run("scenarios/rifl/table1.toml",
                                 overrides={"traffic.load": 1.0, **more}).summary
            for name, more in cases.items()}
    plain, clean, noisy = runs["plain"], runs["clean"], runs["noisy"]
    frames = noisy["sim_time_ps"] / noisy["cell_time_ps"]
    measured = (noisy["sim_time_ps"] - noisy["warmup_ps"]) / noisy["cell_time_ps"]
    errors = noisy["layer1"]["errors_detected"]
    lost_cells = (clean["throughput"] - noisy["throughput"]) * noisy["terminals"] * measured
    per_error = lost_cells / (errors * measured / frames)
    print("| cables | goodput | goodput / error-free Layer 1 | flow-control frames | errors detected "
          "| capacity lost per error (cell times) | pause per error, one end (2.5 RTT) | both ends (5 RTT) |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| plain (flow control out of band) | {plain['goodput']:.4f} "
          f"| {plain['goodput'] / clean['goodput']:.4f} | 0 | 0 | | | |")
    for label, s in (("Layer 1, BER 0", clean), ("Layer 1, BER 1e-07", noisy)):
        layer1 = s["layer1"]
        lost = "" if s is clean else f"{per_error:.1f}"
        pauses = "| | |" if s is clean else f"| {2.5 * rtt_frames:.0f} | {5 * rtt_frames:.0f} |"
        print(f"| {label} | {s['goodput']:.4f} | {s['goodput'] / clean['goodput']:.4f} "
              f"| {layer1['flow_control_frames']} | {layer1['errors_detected']} | {lost} {pauses}")


def rack_frame_size() -> None:
    """Table I's switch saturated (load 1.0) on Layer 1 cables whose frames are the cell (the
    default) or link.frame_bytes long, error-free (BER 1e-30) and at BER 1e-7."""
    print("| frame | wire bytes per cell (262-byte cell + 2-byte header per frame) | goodput, error-free "
          "| goodput, BER 1e-7 | ratio | errors detected | flow-control frames (error-free) |")
    print("|---|---|---|---|---|---|---|")
    for frame in [None, 256, 64, 32]:
        runs = {}
        for ber in (1e-30, 1e-7):
            overrides = {"traffic.load": 1.0, "link.ber": ber}
            if frame:
                overrides["link.frame_bytes"] = frame
            runs[ber] = cellfabric.run("scenarios/rifl/table1.toml", overrides=overrides).summary
        clean, noisy = runs[1e-30], runs[1e-7]
        wire = 264 if frame is None else 262 * frame / (frame - 2)
        label = "the cell (264 B)" if frame is None else f"{frame} B"
        print(f"| {label} | {wire:.1f} | {clean['goodput']:.4f} | {noisy['goodput']:.4f} "
              f"| {noisy['goodput'] / clean['goodput']:.4f} | {noisy['layer1']['errors_detected']} "
              f"| {clean['layer1']['flow_control_frames']} |")


def broadcasts() -> None:
    """Table I's switch at load 0.1 with a share of packets broadcast (Dst Port 255): every
    broadcast cell becomes 31 deliveries, so each output carries load x (1 + f x 30)."""
    print("| broadcast fraction | offered per host | delivered per host (measured) "
          "| delivered per host (load x (1 + 30 f)) | cells copied | p50 | p99 "
          "| cells out of order | cells dropped |")
    print("|---|---|---|---|---|---|---|---|---|")
    for fraction in [0.0, 0.05, 0.1, 0.2]:
        s = cellfabric.run("scenarios/rifl/table1.toml",
                           overrides={"traffic.load": 0.1, "traffic.broadcast_fraction": fraction}).summary
        lat = s["latency_cells"]
        print(f"| {fraction} | {s['injected_load']:.4f} | {s['throughput']:.4f} "
              f"| {s['injected_load'] * (1 + 30 * fraction):.4f} | {s.get('cells_copied', 0)} "
              f"| {lat['p50']:.0f} | {lat['p99']:.0f} | {s['cells_out_of_order']} | {s['cells_dropped']} |")


def main() -> None:
    """Every section, or only those named on the command line (e.g. ``rack_layer1``)."""
    if len(sys.argv) > 1:
        for name in sys.argv[1:]:
            globals()[name]()
        return
    print("## Table I: latency percentiles in cell times (closed-loop hosts, table1.toml)\n")
    table1()
    print("\n## Table I, open-loop reading (unbounded host queues, 80 MB per input, no warm-up)\n")
    table1(OPEN_LOOP)
    print("\n## Table I's 100% rows under the finite workload (2.5 MB per pair, closed-loop hosts)\n")
    finite()
    print("\n## Fig. 5: bandwidth utilization (payload / segment capacity) against offered load\n")
    fig5()
    print("\n## Fig. 5's lowest curve: the readings of a burst of variable packets\n")
    bursts()
    print("\n## Layer 1: goodput against bit error rate and cable length (link.toml, ~400 errors per run)\n")
    layer1()
    print("\n## Layer 1: independent against burst errors at the same long-run BER (link.toml, 100 m)\n")
    burst_layer1()
    print("\n## Layer 1 inside the rack: Table I's switch at load 0.9 with bit errors (table1.toml)\n")
    rack_layer1()
    print("\n## Layer 1 inside the rack at full load: goodput and capacity lost per error\n")
    rack_capacity_per_error()
    print("\n## Layer 1 inside the rack: the frame size (table1.toml, load 1.0)\n")
    rack_frame_size()
    print("\n## Broadcasts (Dst Port 255) on Table I's switch at load 0.1\n")
    broadcasts()


if __name__ == "__main__":
    main()
