"""Regenerates the tables of docs/validation/stardust.md: Fig. 7 and Fig. 12 (push against pull),
Fig. 10a (the 432-host permutation), the §5.4 incast, Fig. 10b (short flows under background load),
Fig. 9 (a quarter-radix two-tier fabric, with its 120% point and one short run at the paper's full
scale), the §4.2.1 M/D/1 link and the §5.9/App. E self-healing of the Stardust paper (Zilberman,
Bracha and Schzukin, NSDI '19), from the scenarios in scenarios/stardust/.

    python3 docs/validation/stardust.py [SECTION ...]

(a section is one of the functions ``main`` calls, e.g. ``fig9_overload``; none: all of them).

About 6½ minutes of CPU on one core (8 min of wall time on a busy shared machine): the
permutation's five 20 ms runs (~20 s each) and three with TCP hosts (30–50 s each), Fig. 10b's
40 ms run (~1 min) and Fig. 9's full-scale run (~40 s) take most of it.

The paper's numbers come from the scenarios' [reference] tables where they have them, and
otherwise from the constants below, each with its section. Theory (Pollaczek–Khinchine, the M/D/1
decay root, App. E's arithmetic, header ceilings) is computed here from the formulas stated.
"""

import math
import re
import sys
from pathlib import Path

import cellfabric
from cellfabric.plan import md1_decay_root, recovery
from cellfabric.result import measured, number
from cellfabric.scenario import load_scenario, reference_of

S = "scenarios/stardust"

# §5.2, Fig. 7 and App. F, Fig. 12: (figure, pull?) -> the paper's port A, port B and loss. Fig. 7's
# push gives only B's share; Fig. 12's push gives A everything and B nothing. The scenarios'
# [reference] hold the mean over the two ports, checked against these below.
PAPER_PUSH_PULL = {
    ("Fig. 7", True): ("100G", "100G", "none"),
    ("Fig. 7", False): ("—", "66% of 100G", "drops at the middle stage"),
    ("Fig. 12", True): ("100G", "100G", "none"),
    ("Fig. 12", False): ("100G", "0", "B's traffic"),
}
# §6.2: "no cell is lost" in any run of the fabric; Fig. 10a (§6.3) gives no spread of its flows.
PAPER_FABRIC_DROPS = 0
# §6.3, Fig. 10b: Stardust's completion times are the best of all schemes, 1 MB flows under 1 ms.
PAPER_FCT = ("—", '"best of all schemes"', "1 MB flows under 1 ms", "none")
# App. E: "packets whose cells are lost are discarded by the reassembly timer" (no number).
PAPER_FAILURE_LOSS = '"packets whose cells are lost are discarded by the reassembly timer"'

# The utilizations Fig. 9 is run at here (the paper's text gives a number only for 0.95).
FIG9_UTILIZATIONS = [0.5, 0.7, 0.8, 0.9, 0.95]
SELF_HEAL_SEEDS = [1, 2, 3, 4, 5]
SELF_HEAL_ADAPTER_HOSTS, SELF_HEAL_PLANES = 2, 4  # self-heal.topo's construction
NO_FCI = {"adapter.fci_decrease": 0}  # the default reacts (reading R12, calibrated); this does not
SMALL_CELLS = {"cell.size_bytes": 256, "credit.size_bytes": 2048}
# TCP NewReno hosts on the host ports, started as the Ethernet baseline's (htsim's ssthresh = 15).
TCP = {"host.transport": "tcp", "host.initial_ssthresh_packets": 15}
# DCQCN and NDP run over adapters that pause their hosts (PFC on the host links).
PAUSED = {"adapter.pause_hosts": True}


def num(x: int) -> str:
    """A whole number with a space between thousands, as the doc writes them."""
    return f"{x:,}".replace(",", " ")


def minus(text: str) -> str:
    return text.replace("-", "−")


def latency_us(summary: dict, keys: tuple[str, ...], metric: str = "fabric_latency_ns") -> str:
    """Percentiles of a latency in ns as µs, or a dash when the run delivered nothing to measure."""
    values = summary[metric]
    return " / ".join("—" if values is None else f"{values[k] / 1000:.2f}" for k in keys)


def run(name: str, overrides: dict | None = None, seed: int | None = None) -> cellfabric.Result:
    return cellfabric.run(f"{S}/{name}.toml", overrides=overrides or {}, seed=seed)


def push_pull() -> None:
    """Fig. 7 and Fig. 12: port A's goodput (and from each device), port B's, cells lost."""
    print("| | port A (from in1 + in2) | port B | lost in the fabric |")
    print("|---|---|---|---|")
    for figure, name in (("Fig. 7", "push-pull"), ("Fig. 12", "push-pull-classes")):
        reference = {row[0]: row[1] for row in reference_of(f"{S}/{name}.toml")["rows"]}
        flows = load_scenario(f"{S}/{name}.toml")["traffic"]["flows"]
        dsts = [f["dst"] for f in flows]
        port_a = max(set(dsts), key=dsts.count)  # the port two devices send to
        port_b = min(set(dsts), key=dsts.count)
        for pull in (True, False):
            a, b, lost = PAPER_PUSH_PULL[(figure, pull)]
            if pull in reference and a.endswith("G") and b != "—":
                mean = (float(a[:-1]) + float(b.rstrip("G"))) / 200
                assert math.isclose(mean, reference[pull]), (figure, pull, mean, reference[pull])
            mode = "pull (Stardust)" if figure == "Fig. 7" and pull else "pull" if pull else \
                "push (Ethernet)" if figure == "Fig. 7" else "push"
            print(f"| {figure}, paper, {mode} | {a} | {b} | {lost} |")
            r = run(name, {} if pull else {"stardust.credits": False})
            hosts = dict(zip(r.tables["hosts"]["host"], r.tables["hosts"]["goodput_gbps"], strict=True))
            f = r.tables["flows"]
            into_a = f[f.dst == port_a].sort_values("src")["goodput_gbps"]
            label = "pull" if pull else "push (`stardust.credits=false`)" if figure == "Fig. 7" else "push"
            print(f"| {figure}, ours, {label} | {hosts.get(port_a, 0):.1f}G ("
                  + " + ".join(f"{g:.1f}" for g in into_a) + f") | {hosts.get(port_b, 0):.1f}G "
                  f"| {num(r['cells_dropped'])} cells |")


def permutation() -> None:
    """Fig. 10a: per-flow goodput over the measured window, with the header ceiling beside it."""
    paper = reference_of(f"{S}/permutation.toml")["rows"][0]  # cell, credit, goodput, share >= 9.44G
    print("| | mean goodput | flows ≥ 9.44 Gbit/s | flows min / median / max | fabric drops "
          "| element pauses | element queue peak | fabric latency p99 | ceiling |")
    print("|---|---|---|---|---|---|---|---|---|")
    print(f"| paper (TCP NewReno hosts, {paper[0]} B cells, {paper[1] // 1024} KB credits) | {paper[2]:.0%} "
          f"| {paper[3]:.0%} | — | {PAPER_FABRIC_DROPS} | — | — | — | — |")
    variants = [
        ("512 B / 4 KB (default: FCI reaction)", {}),
        ("512 B / 4 KB, no FCI reaction", NO_FCI),
        ("512 B / 4 KB, two cells per uplink queued (`--set adapter.uplink_cells=2`)",
         {"adapter.uplink_cells": 2}),
        ("256 B / 2 KB (default)", SMALL_CELLS),
        ("256 B / 2 KB, no FCI reaction", {**SMALL_CELLS, **NO_FCI}),
    ]
    for label, overrides in variants:
        r = run("permutation", overrides)
        s, g = r.summary, r.tables["flows"]["goodput_gbps"]
        # Every cell pays its header, and credits and requests share the links.
        ceiling = (1 - s["header_bytes"] / s["cell_bytes"]) * (1 - s["control_overhead"])
        print(f"| ours, {label} | {s['goodput']:.1%} | {s['flows_at_least_94_4_percent']:.1%} "
              f"| {g.min():.2f} / {g.median():.2f} / {g.max():.2f} G | {num(s['cells_dropped'])} "
              f"| {num(s['pauses'])} | {s['element_queue_peak_cells']} "
              f"| {latency_us(s, ('p99',))} µs "
              f"| {ceiling:.1%} (control {s['control_overhead']:.2%}) |")


def tcp_permutation() -> None:
    """Fig. 10a with TCP NewReno hosts on the adapters' host ports, ACKs through the same VOQs."""
    paper = reference_of(f"{S}/permutation.toml")["rows"][0]
    print("| | mean goodput | host link utilization | flows ≥ 9.44 Gbit/s | flows min / median / max "
          "| fabric drops: cells / packets | VOQ drops | retransmissions / timeouts | RTT mean "
          "| credit bytes forfeited |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    print(f"| paper (TCP NewReno, {paper[0]} B cells, {paper[1] // 1024} KB credits) | {paper[2]:.0%} | — "
          f"| {paper[3]:.0%} | — | {PAPER_FABRIC_DROPS} | — | — | — | — |")
    variants = [
        ("an ACK per segment (`--set host.transport=tcp --set host.initial_ssthresh_packets=15`)", TCP),
        ("unused credit forfeited (`--set credit.unused=forfeited`)", {**TCP, "credit.unused": "forfeited"}),
        ("on/off requests (`--set credit.requests=on_off`)", {**TCP, "credit.requests": "on_off"}),
        ("credits not bounded by the fabric (`--set credit.below_fabric=false`)",
         {**TCP, "credit.below_fabric": False}),
        ("all three as before this release (forfeited, on/off, unbounded)",
         {**TCP, "credit.unused": "forfeited", "credit.requests": "on_off", "credit.below_fabric": False}),
        ("delayed ACKs (`--set host.delayed_ack=true`)", {**TCP, "host.delayed_ack": True}),
        ("slow start unbounded (RFC 5681: no `host.initial_ssthresh_packets`)", {"host.transport": "tcp"}),
    ]
    others = [
        ("DCTCP (`--set host.transport=dctcp`; no element marks ECN)", {**TCP, "host.transport": "dctcp"}),
        ("MPTCP, 8 subflows (`--set host.transport=mptcp`)",
         {**TCP, "host.transport": "mptcp", "host.subflows": 8}),
        ("DCQCN, adapters pausing their hosts (`--set host.transport=dcqcn --set adapter.pause_hosts=true`)",
         {**PAUSED, "host.transport": "dcqcn"}),
        ("NDP, adapters pausing their hosts (`--set host.transport=ndp --set adapter.pause_hosts=true`)",
         {**PAUSED, "host.transport": "ndp"}),
    ]
    paused = []
    shares = None
    for label, overrides in [(f"TCP NewReno, {label}", o) for label, o in variants] + others:
        r = run("permutation", overrides)
        s, g = r.summary, r.tables["flows"]["goodput_gbps"]
        forfeited = s["credit_bytes_forfeited"] / (s["credits"] * s["credit_bytes"])
        # DCQCN's receivers send no ACK: there is no round trip to sample.
        rtt = "—" if s["transport"] == "dcqcn" else f"{number(s, 'rtt_mean_us'):.0f} µs"
        if "pfc" in s:
            paused.append(s)
        print(f"| ours, {label} | {s['goodput']:.1%} | {s['host_link_utilization']:.1%} "
              f"| {s['flows_at_least_94_4_percent']:.1%} "
              f"| {g.min():.2f} / {g.median():.2f} / {g.max():.2f} G "
              f"| {num(s['cells_dropped'])} / {num(s['packets_dropped_fabric'])} "
              f"| {num(s['packets_dropped_ingress'])} | {num(s['retransmissions'])} / {num(s['timeouts'])} "
              f"| {rtt} | {forfeited:.1%} of credit bytes |")
        if shares is None:
            # A receiver's ACKs go to its own destination: they share the VOQ (and its credits) of
            # the data it receives only where that destination and its sender sit on one adapter.
            per_adapter = s["hosts"] // s["adapters"]
            to = dict(zip(r.tables["flows"]["src"], r.tables["flows"]["dst"], strict=True))
            shared = [to[dst] // per_adapter == src // per_adapter for src, dst in to.items()]
            shares = [g[[flag == want for flag in shared]] for want in (True, False)]
    print(f"\nFirst row: the {len(shares[0])} flows whose receiver's ACKs share the data's VOQ get "
          f"{shares[0].mean():.2f} Gbit/s on average, the other {len(shares[1])} {shares[1].mean():.2f} "
          f"(at most {shares[1].max():.2f}).")
    for s in paused:
        print(f"\n{s['transport'].upper()} over adapters pausing their hosts: {paused_counts(s)}.")


def paused_counts(s: dict) -> str:
    """What the adapters' pauses of their hosts and the transport's own signals counted."""
    pfc = s["pfc"]
    own = f"{num(s['dcqcn']['cnps_sent'])} CNPs" if s["transport"] == "dcqcn" else \
        f"{num(s['ndp']['nacks_sent'])} NACKs, {num(s['ndp']['pulls_sent'])} PULLs"
    return (f"{num(pfc['pause_frames_sent'])} PAUSE frames ({num(pfc['resume_frames_sent'])} resumes), hosts "
            f"paused {pfc['paused_fraction']:.1%} of the time, longest {pfc['longest_pause_us']:.0f} µs, "
            f"{num(pfc['lossless_drops'])} dropped past the headroom "
            f"(peak {pfc['headroom_peak_packets']} of it used), "
            f"{num(s['packets_dropped_fabric'])} packets discarded at reassembly, {own}")


def transport_incast() -> None:
    """§5.4's incast with transport hosts: TCP NewReno, and DCQCN and NDP over adapters pausing them."""
    config = load_scenario(f"{S}/incast.toml")
    senders = config["traffic"]["senders"]
    ideal_ms = senders * config["traffic"]["flow_bytes"] * 8 / (config["link"]["rate_gbps"] * 1e9) * 1e3
    print(f"| transport (N = {senders}) | last completion (ideal {ideal_ms:.2f} ms) | first / last "
          "| dropped anywhere | retransmissions / timeouts | host pauses |")
    print("|---|---|---|---|---|---|")
    for overrides in (TCP, {**PAUSED, "host.transport": "dcqcn"}, {**PAUSED, "host.transport": "ndp"}):
        s = run("incast", overrides).summary
        packets = s["packets_dropped_ingress"] + s["packets_dropped_fabric"] + s["packets_dropped_egress"]
        dropped = "0" if packets == s["cells_dropped"] == 0 else \
            f"{num(packets)} packets, {num(s['cells_dropped'])} cells"
        fct = measured(s, 'fct_us')
        done = f"{fct['last'] / 1000:.3f} ms" if s["flows_completed"] == senders else \
            f"{s['flows_completed']} of {senders} done in {s['sim_time_ps'] / 1e9:g} ms"
        first = f"{fct['first'] / fct['last']:.2f}" if s["flows_completed"] == senders else "—"
        pauses = num(s["pfc"]["pause_frames_sent"]) if "pfc" in s else "—"
        print(f"| {s['transport']} | {done} | {first} | {dropped} "
              f"| {num(s['retransmissions'])} / {num(s['timeouts'])} | {pauses} |")


def incast() -> None:
    """§5.4: N senders of 450 KB to one host; the ideal last completion is N x flow / port rate."""
    config = load_scenario(f"{S}/incast.toml")
    per_sender_ms = config["traffic"]["flow_bytes"] * 8 / (config["link"]["rate_gbps"] * 1e9) * 1e3
    duration_ns = config["run"]["duration_ns"]
    print(f"| N | last completion (ideal N × {per_sender_ms:.2f} ms) | first / last | dropped anywhere |")
    print("|---|---|---|---|")
    for senders, *_ in reference_of(f"{S}/incast.toml")["rows"]:
        ideal_ms = senders * per_sender_ms
        # The file's run length, or as many times it as the ideal finish needs with 10% to spare.
        length = duration_ns * math.ceil(1.1 * ideal_ms * 1e6 / duration_ns)
        s = run("incast", {"traffic.senders": senders, "run.duration_ns": length}).summary
        packets = s["packets_dropped_ingress"] + s["packets_dropped_fabric"] + s["packets_dropped_egress"]
        dropped = "0" if packets == s["cells_dropped"] == 0 else \
            f"{num(packets)} packets, {num(s['cells_dropped'])} cells"
        if s["flows_completed"] < senders:
            print(f"| {senders} | {s['flows_completed']} of {senders} done in {length / 1e6:g} ms "
                  f"({ideal_ms:.2f}) | — | {dropped} |")
            continue
        fct = measured(s, 'fct_us')
        print(f"| {senders} | {fct['last'] / 1000:.3f} ms ({ideal_ms:.2f}) "
              f"| {fct['first'] / fct['last']:.2f} | {dropped} |")


def short_flows() -> None:
    """Fig. 10b: the timed flows' completion times (from their arrival at host 0)."""
    r = run("fct")
    s, t = r.summary, r.tables["timed_flows"]
    end_us = s["sim_time_ps"] / 1e6
    done = t[t.fct_us.notna()].astype({"fct_us": float})
    late = t[t.fct_us.isna()]
    print("| | timed flows completed | FCT p50 / p90 / p99 | flows ≥ 500 KB: mean / last "
          "| lost in the fabric |")
    print("|---|---|---|---|---|")
    print("| paper | " + " | ".join(PAPER_FCT) + " |")
    completed = f"{s['timed_flows_completed']} of {s['timed_flows_started']}"
    if len(late):
        completed += f" ({len(late)} started in the last {(end_us - late.start_us.min()) / 1000:.2f} ms)"
    fct = s["timed_fct_us"]
    percentiles = "—" if fct is None else \
        " / ".join(num(round(fct[p])) for p in ("p50", "p90", "p99")) + " µs"
    big = measured(s, 'timed_fct_us_500kb_up')
    large = "—" if not (done.size_bytes >= 500_000).any() else f"{num(round(big['mean']))} / " \
        f"{num(round(big['last']))} µs"
    lost = f"{num(s['cells_dropped'])} cells"
    if s["packets_dropped_fabric"]:
        lost += f" ({num(s['packets_dropped_fabric'])} packets of all hosts discarded at reassembly)"
    print(f"| ours | {completed} | {percentiles} | {large} | {lost} |")
    if done.empty:
        return
    rate_bps = load_scenario(f"{S}/fct.toml")["link"]["rate_gbps"] * 1e9
    largest = done.loc[done.size_bytes.idxmax()]
    print(f"\nLargest completed flow: {largest.size_bytes / 1000:.0f} KB in {largest.fct_us / 1000:.2f} ms "
          f"(serialization {largest.size_bytes * 8 / rate_bps * 1e3:.2f} ms).")
    rest = done[(done.size_bytes >= 500_000) & (done.index != largest.name)]
    if len(rest):
        print(f"Other flows of 500 KB or more: {len(rest)}, {rest.size_bytes.min() / 1000:.0f}–"
              f"{rest.size_bytes.max() / 1000:.0f} KB, in {rest.fct_us.min() / 1000:.2f}–"
              f"{rest.fct_us.max() / 1000:.2f} ms.")
    smallest = done[done.size_bytes == done.size_bytes.min()]
    print(f"Smallest flows ({smallest.size_bytes.iloc[0]} B, {len(smallest)} of them): "
          f"{smallest.fct_us.min():.0f}–{smallest.fct_us.max():.0f} µs.")


def fig9_row(s: dict, label: str, utilization: float | None) -> str:
    md1 = "—" if utilization is None else f"{utilization**2 / (2 * (1 - utilization)):.2f}"
    return (f"| {label} | {s['goodput']:.4f} | {latency_us(s, ('p50', 'p99', 'max'))} "
            f"| {s['last_stage_queue_mean_cells']:.2f} | {md1} "
            f"| {s['element_queue_peak_cells']} | {num(s['cells_dropped'])} | {num(s['pauses'])} |")


def fig9() -> None:
    """Fig. 9 at a quarter of the radix: one host port per adapter at u of the fabric side's payload;
    the M/D/1 mean at rho = u is Pollaczek–Khinchine's u^2 / (2 (1 - u))."""
    payload_gbps = fig9_payload_gbps()
    header = ("| goodput of the host ports | fabric latency p50 / p99 / max (µs) "
              "| last-stage queue mean (cells) | M/D/1 mean at ρ = u | element queue peak | lost | pauses |")
    print(f"| u {header}")
    print("|---|---|---|---|---|---|---|---|")
    at_095 = None
    for u in FIG9_UTILIZATIONS:
        s = run("fig9", {"link.host_rate_gbps": u * payload_gbps}).summary
        print(fig9_row(s, f"{u:g}", u))
        at_095 = s if u == 0.95 else at_095
    rate, bound_ns, paper_lost, _ = reference_of(f"{S}/fig9.toml")["rows"][0]
    if at_095 is not None:
        print(f"\nPaper (§6.2) at u = {rate / payload_gbps:g}: fabric latency at most "
              f"{bound_ns / 1000:g} µs, {paper_lost} cells lost; ours: max "
              f"{latency_us(at_095, ('max',))} µs, {num(at_095['cells_dropped'])} lost.")
    print()
    fig9_overload()
    # The paper's scale: the full-scale bench (four times the radix, uplinks and adapters), 1 ms
    # after 0.2 ms of warm-up, its host rate set to u = 0.95 of this definition's payload (four
    # times the quarter scale's uplinks: the bench file's fixed 712.5 G is 0.95 of the line rate).
    print(f"\n| full scale, u = 0.95, 1 ms {header}")
    print("|---|---|---|---|---|---|---|---|")
    host_rate = {"link.host_rate_gbps": round(0.95 * 4 * payload_gbps, 1)}
    for label, more in (("FCI reaction (default)", {}), ("no FCI reaction", NO_FCI)):
        full = cellfabric.run("scenarios/bench/stardust-fig9.toml", overrides={**host_rate, **more}).summary
        print(fig9_row(full, f"256 adapters × 32 uplinks, radix 128, {label}", 0.95))


def fig9_payload_gbps() -> float:
    """The fabric side's payload rate of one adapter of fig9.toml: its uplinks less cell headers and
    control cells ("after deducting [...] cell headers and control cell overheads", §6.2), each
    credit of data costing its own credit cell and a request."""
    config = load_scenario(f"{S}/fig9.toml")
    cell, credit = config["cell"], config["credit"]
    control_bytes = cell.get("control_bytes", 24)
    data_wire_bytes = credit["size_bytes"] * cell["size_bytes"] / (cell["size_bytes"] - cell["header_bytes"])
    control_share = 2 * control_bytes / (2 * control_bytes + data_wire_bytes)
    return (config["topology"]["uplinks_per_edge"] * config["link"]["rate_gbps"]
            * (1 - cell["header_bytes"] / cell["size_bytes"]) * (1 - control_share))


def fig9_overload() -> None:
    """Fig. 9's 120% point: 2 ms with the first 1 ms as warm-up; the effective utilization is the
    host ports' goodput times 1.2 (of the fabric side's payload). The excess waits in the
    ingress VOQs, so the packets' latency is given twice: over those delivered, and over every
    packet created in the window, those still held counted at their ages (a lower bound)."""
    payload_gbps = fig9_payload_gbps()
    print("| 120% offered (2 ms, 1 ms warm-up) | effective utilization | goodput of the host ports "
          "| fabric latency p50 / p99 / max (µs) | last-stage queue mean (cells) | M/D/1 mean at ρ = u "
          "| element queue peak | lost | pauses | packet latency p99, delivered / with those held (µs) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    variants = (("FCI reaction (default: β = 1/8, a round trip)", {}),
                ("no FCI reaction", NO_FCI),
                ("FCI reaction β = 1/4", {"adapter.fci_decrease": 0.25}))
    for label, more in variants:
        overrides = {"link.host_rate_gbps": 1.2 * payload_gbps, "run.duration_ns": 2_000_000,
                     "run.warmup_ns": 1_000_000, **more}
        s = run("fig9", overrides).summary
        packets = (f"{s['packet_latency_us']['p99']:.1f} / "
                   f"{s['packet_latency_with_in_flight_us']['p99']:.1f}")
        print(fig9_row(s, f"{label} | {1.2 * s['goodput']:.3f}", None) + f" {packets} |")


def tail_slope(table) -> float:
    """Least-squares slope of ln P(depth >= n) against n, from n = 2 while P > 1e-3 (the core's test)."""
    total = table["arrivals"].sum()
    points = []
    for n in range(2, 200):
        p = table.loc[table.depth_cells >= n, "arrivals"].sum() / total
        if p <= 1e-3:
            break
        points.append((n, math.log(p)))
    if len(points) < 2:
        return math.nan
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    return sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)


def md1() -> None:
    """§4.2.1: the depth an arriving cell finds at the last-stage link against M/D/1: the
    Pollaczek–Khinchine mean rho^2 / (2 (1 - rho)), the tail decay -ln z* with z* = e^(rho (z* - 1))
    and the paper's heavy-traffic form fs^-2N with fs = 1 / rho."""
    config = load_scenario(f"{S}/md1-link.toml")
    senders = config["topology"]["radix"] - 1
    # rho = senders x load x (cell / payload): each one-cell packet of `packet_bytes` takes a whole cell.
    per_load = senders * config["cell"]["size_bytes"] / config["traffic"]["packet_bytes"]
    print("| ρ | mean depth, ours | Pollaczek–Khinchine | tail slope per cell, ours | −ln z* "
          "| paper's −2 ln fs |")
    print("|---|---|---|---|---|---|")
    lost = []
    for load, *_ in reference_of(f"{S}/md1-link.toml")["rows"]:
        rho = load * per_load
        r = run("md1-link", {"traffic.load": load})
        pk = rho**2 / (2 * (1 - rho))
        print(f"| {rho:.3g} | {r['last_stage_queue_mean_cells']:.3f} | {pk:.3f} "
              + minus(f"| {tail_slope(r.tables['last_stage_queue']):.3g} "
                      f"| {-math.log(md1_decay_root(rho)):.3g} | {2 * math.log(rho):.3g} |"))
        lost.append(num(r["cells_dropped"]))
    print("\nCells lost in the fabric: " + ", ".join(lost) + ".")


def _self_heal_groups() -> tuple[list[int], list[int]]:
    """From self-heal.topo's names (adapters fa<pod>_<i>, first tier fe1_<pod>_<plane>, second tier
    fe2_<plane>_<j>), for the cut cable of fa0_0 into plane 0: the first hop (adapter 0's pod mates
    and plane 0's second tier) and the second (plane 0's first tier in the other pods)."""
    names = re.findall(r"^switch (\S+)", Path(f"{S}/self-heal.topo").read_text(), re.M)
    first = [i for i, n in enumerate(names) if re.fullmatch(r"fa0_[1-9]\d*|fe2_0_\d+", n)]
    second = [i for i, n in enumerate(names) if re.fullmatch(r"fe1_[1-9]\d*_0", n)]
    return first, second


def self_heal() -> None:
    """§5.9 / App. E: a cut cable reported across three hops. A hop's time is when its last device
    changed its table for the news: the first hop's devices at their first change after the cut
    (their later changes are the second hop's news coming back), the second hop's at their last
    change before the repair (they change once for each of their plane's two second-tier elements
    and stop using the cable at the later)."""
    first, second = _self_heal_groups()
    runs = {}
    for seed in SELF_HEAL_SEEDS:
        r = run("self-heal", seed=seed)
        s, changes, events = r.summary, r.tables["table_changes"], r.tables["failures"]
        cut, repair = events.at_us.iloc[0], events.at_us.iloc[1]
        window = changes[(changes.time_us > cut) & (changes.time_us < repair)]
        hop1 = [window[window.switch == d].time_us.min() - cut for d in first]
        hop2 = [window[window.switch == d].time_us.max() - cut for d in second]
        runs[seed] = {
            # NaN when a device did not change (a run that ended first).
            "hop1": max(hop1, key=lambda x: math.inf if math.isnan(x) else x),
            "hop2": max(hop2, key=lambda x: math.inf if math.isnan(x) else x),
            "reroute": s["reroute_us"],
            "settled": s["tables_settled_us"],
            "delivered": s["rerouted_delivery_us"],
            "overhead": s["reachability_overhead"],
            "congestion": s["cells_dropped_congestion"],
            "failure": s["cells_lost_no_route"] + s["cells_lost_link_cut"] + s["cells_lost_device_failed"],
            "packets": s["packets_dropped_fabric"],
            "back": events.adapters_settled_us.iloc[1],
            "summary": s,
            "flows": r.tables["flows"],
        }
    # App. E's arithmetic with Table 4's defaults, checked against the scenario's [reference].
    paper = recovery()
    reroute_ref, overhead_ref = reference_of(f"{S}/self-heal.toml")["rows"][0]
    assert math.isclose(paper.with_threshold_us, reroute_ref)
    assert round(paper.overhead, 4) == overhead_ref
    hop = paper.with_threshold_us / 3  # 2n - 1 = 3 hops
    one = runs[SELF_HEAL_SEEDS[0]]

    def spread(key: str, fmt) -> str:
        """The range over the seeds; a dash for runs in which it did not happen (a run too short)."""
        values = [runs[seed][key] for seed in SELF_HEAL_SEEDS]
        if any(v is None or math.isnan(v) for v in values):
            return "—"
        lo, hi = fmt(min(values)), fmt(max(values))
        unit = " µs" if fmt is us else ""
        return (lo if lo == hi else f"{lo}–{hi}") + unit

    def us(value: float | None, digits: int = 0) -> str:
        return "—" if value is None or math.isnan(value) else f"{value:.{digits}f}"

    def us_(value: float | None, digits: int = 0) -> str:
        return "—" if value is None or math.isnan(value) else f"{value:.{digits}f} µs"
    print(f"| quantity | paper (App. E) | ours, seed {SELF_HEAL_SEEDS[0]} | seeds {SELF_HEAL_SEEDS[0]}–"
          f"{SELF_HEAL_SEEDS[-1]} |")
    print("|---|---|---|---|")
    print(f"| first hop: plane-0 second tier and adapter 0's pod mates stop using the cable "
          f"| t'·M·th = {hop:.0f} µs at most | {us_(one['hop1'], 1)} | {spread('hop1', us)} |")
    print(f"| second hop: plane-0 first tier of the other pods | +{hop:.0f} µs | {us_(one['hop2'], 1)} "
          f"| {spread('hop2', us)} |")
    print(f"| every source stops using it (`reroute_us`) | t·th = **{paper.with_threshold_us:.0f} µs**; "
          f"{paper.with_propagation_us:.0f} µs with Σ(t' + pd_i)·M·th | **{us_(one['reroute'], 1)}** "
          f"| {spread('reroute', us)} |")
    print(f"| the last element's table update (`tables_settled_us`) | — | {us_(one['settled'], 1)} "
          f"| {spread('settled', us)} |")
    print(f"| every source that rerouted has a cell on its new routes delivered "
          f"(`rerouted_delivery_us`) | — | {us_(one['delivered'], 1)} | {spread('delivered', us)} |")
    overheads, overhead = spread("overhead", "{:.4%}".format), f"{one['overhead']:.4%}"
    print(f"| reachability overhead | B·8·f/(c·s) = {paper.overhead:.4%} | {overhead} "
          f"| {'same' if overheads == overhead else overheads} |")
    print(f"| cells lost to congestion | {PAPER_FABRIC_DROPS} | {num(one['congestion'])} "
          f"| {spread('congestion', num)} |")
    print(f"| cells lost to the failure (no route, on the cut cable) | {PAPER_FAILURE_LOSS} "
          f"| {num(one['failure'])} ({num(one['packets'])} packets) | {spread('failure', num)} |")
    print(f"| back in use by every source after the repair | — | {us_(one['back'])} "
          f"| {spread('back', us)} |")
    s, flows = one["summary"], one["flows"]
    config = load_scenario(f"{S}/self-heal.toml")
    offered = config["traffic"]["load"] * config["link"]["rate_gbps"]  # of a host's link
    slow = flows[flows.goodput_gbps < 0.9 * offered].sort_values("goodput_gbps")
    rest = flows.drop(slow.index).goodput_gbps
    listed = ", ".join(f"{a} → {b} at {g:.1f}" for a, b, g in
                       zip(slow.src, slow.dst, slow.goodput_gbps, strict=True)) or "none"
    print(f"\nSeed {SELF_HEAL_SEEDS[0]}: {s['requests_refreshed']} requests refreshed "
          f"({s['credits_written_off']} credits written off as lost); flows below 90% of "
          f"their {offered:g} Gbit/s: {listed}; every other flow {rest.min():.1f}–{rest.max():.1f} Gbit/s.")
    # First principles: until every source stops using the cable, the quarter of adapter 0's
    # hosts' traffic sprayed into plane 0 has no way to it (self-heal.topo: 2 hosts an adapter,
    # 4 planes), one cell per `payload` bytes.
    if one["reroute"] is None:
        return  # a run too short for the sources to learn
    cell = config["cell"]
    payload_bytes = cell["size_bytes"] - cell["header_bytes"]
    into_plane_gbps = SELF_HEAL_ADAPTER_HOSTS * offered / SELF_HEAL_PLANES
    expected = into_plane_gbps * 1e9 * one["reroute"] * 1e-6 / 8 / payload_bytes
    print(f"Data cells sprayed toward adapter 0 through the dead plane until every source stops "
          f"using it: {SELF_HEAL_ADAPTER_HOSTS} hosts × {offered:g} Gbit/s / {SELF_HEAL_PLANES} planes × "
          f"{one['reroute']:.1f} µs / {payload_bytes} B = {num(round(expected))} cells, against "
          f"{num(one['failure'])} lost (control cells and those queued at the cut among them).")


def adapter_fail() -> None:
    """§5.10: an adapter fails in the self-healing fabric; what it held and what the others gave
    up toward it, and when the fabric had settled."""
    print("| seed | tables settled (`tables_settled_us`) | every source's new routes in use "
          "(`rerouted_delivery_us`) | cells lost at the failed adapter / no route | packets lost "
          "at the failed adapter | packets dropped toward it at sources | credits cancelled "
          "| cells lost to congestion | goodput |")
    print("|---|---|---|---|---|---|---|---|---|")
    for seed in SELF_HEAL_SEEDS:
        s = run("adapter-fail", seed=seed).summary

        def us_(value: float | None) -> str:
            return "—" if value is None else f"{value:.1f} µs"
        print(f"| {seed} | {us_(s['tables_settled_us'])} | {us_(s['rerouted_delivery_us'])} "
              f"| {num(s['cells_lost_device_failed'])} / {num(s['cells_lost_no_route'])} "
              f"| {num(s['packets_lost_adapter_failed'])} | {num(s['packets_dropped_unreachable'])} "
              f"| {num(s['credits_cancelled'])} | {num(s['cells_dropped_congestion'])} "
              f"| {s['goodput']:.3f} |")


def device_bandwidth(summary: dict) -> float:
    """The bandwidth a device's data path spends per unit of host line rate: what the hosts
    received over how full the cells were (1: every cell full, at line rate)."""
    return summary["goodput"] / summary["data_cell_fill"]


def fig3_packing() -> None:
    """Fig. 3 (§2.3): the device bandwidth a packet size needs, packed against a cell per packet,
    without and with Ethernet's 20-byte gap; Fig. 3's buses are 6.25 x these at 12.8 Tb/s."""
    paper = {row[0]: 1 / row[2] for row in reference_of(f"{S}/fig3-packing.toml")["rows"] if not row[1]}
    print("| packet bytes | packed | cell per packet | packed, 20 B gap | cell per packet, 20 B gap "
          "| cell per packet / packed (gap) | paper |")
    print("|---|---|---|---|---|---|---|")
    for size in (64, 128, 256, 257, 513, 1025, 1500):
        need = {(packing, gap): device_bandwidth(run("fig3-packing", {
            "traffic.packet_bytes": size, "stardust.packing": packing,
            "adapter.host_gap_bytes": gap}).summary) for gap in (0, 20) for packing in (True, False)}
        ratio, ratio_gap = need[(False, 0)] / need[(True, 0)], need[(False, 20)] / need[(True, 20)]
        cited = f"×{paper[size]:.2f}" if size in paper else "—"
        print(f"| {size} | {need[(True, 0)]:.3f} | {need[(False, 0)]:.3f} | {need[(True, 20)]:.3f} "
              f"| {need[(False, 20)]:.3f} | ×{ratio:.2f} (×{ratio_gap:.2f}) | {cited} |")
    kept = run("fig3-packing", {"credit.unused": "kept"}).summary
    print(f"\nWith a kept balance (`credit.unused = \"kept\"`, reading R7), 64-byte packets: cell fill "
          f"{kept['data_cell_fill']:.3f}, device bandwidth {device_bandwidth(kept):.3f}.")


def fig8_packing() -> None:
    """Fig. 8(a) (§6.1.1): the NetFPGA switch's throughput, packed against non-packed cells, as a
    share of line rate (goodput over S / (S + 20))."""
    print("| packet bytes | line rate's payload | packed | non-packed | packed / non-packed |")
    print("|---|---|---|---|---|")
    for size in (64, 65, 97, 129, 256, 257, 513, 1024, 1500):
        line = size / (size + 20)
        got = {packing: run("fig8-packing", {"traffic.packet_bytes": size, "stardust.packing": packing})
               for packing in (True, False)}
        shares = {p: r["goodput"] / line for p, r in got.items()}
        assert all(r["cells_dropped"] == 0 for r in got.values())
        print(f"| {size} | {line:.4f} | {shares[True]:.3f} | {shares[False]:.3f} "
              f"| ×{shares[True] / shares[False]:.2f} |")


def packing_costs() -> None:
    """What the costs default off would do to Fig. 10a (saturated sources, 512-byte cells on 4 KB
    credits): an element slot of one full cell's time, and Ethernet's gap on the host links."""
    print("| permutation.toml | mean goodput | data cell fill | pauses | fabric drops |")
    print("|---|---|---|---|---|")
    cell_ns = 512 * 8 / 10
    for label, overrides in (("as shipped", {}),
                             (f"`element.cell_slot_ns = {cell_ns}` (a full cell's time)",
                              {"element.cell_slot_ns": cell_ns}),
                             ("`adapter.host_gap_bytes = 20`", {"adapter.host_gap_bytes": 20})):
        s = run("permutation", overrides).summary
        print(f"| {label} | {s['goodput']:.4f} | {s['data_cell_fill']:.4f} | {num(s['pauses'])} "
              f"| {num(s['cells_dropped'])} |")


def main() -> None:
    """Every section, or only those named on the command line (e.g. ``fig9_overload``)."""
    if len(sys.argv) > 1:
        for name in sys.argv[1:]:
            globals()[name]()
        return
    print("## Fig. 7 (§5.2) and Fig. 12 (App. F): push against pull "
          "(push-pull.toml, push-pull-classes.toml)\n")
    push_pull()
    print("\n## Fig. 10a (§6.3): the 432-host permutation (permutation.toml)\n")
    permutation()
    print("\n## Fig. 10a (§6.3) with TCP NewReno hosts (permutation.toml, host.transport = tcp)\n")
    tcp_permutation()
    print("\n## §5.4: incast (incast.toml)\n")
    incast()
    print("\n## §5.4: incast with transport hosts (incast.toml, host.transport)\n")
    transport_incast()
    print("\n## Fig. 10b (§6.3): short flows under background load (fct.toml)\n")
    short_flows()
    print("\n## Fig. 9 (§6.2): the two-tier fabric under all-to-all load, quarter radix (fig9.toml)\n")
    fig9()
    print("\n## §4.2.1: a last-stage link is an M/D/1 queue (md1-link.toml)\n")
    md1()
    print("\n## §5.9 and App. E: self-healing after a cut cable (self-heal.toml)\n")
    self_heal()
    print("\n## §5.10: a failed adapter (adapter-fail.toml)\n")
    adapter_fail()
    print("\n## §2.3, Fig. 3: the device bandwidth packing saves (fig3-packing.toml)\n")
    fig3_packing()
    print("\n## §6.1.1, Fig. 8(a): packed against non-packed cells on one switch (fig8-packing.toml)\n")
    fig8_packing()
    print("\n## What packing's costs would do to Fig. 10a (permutation.toml)\n")
    packing_costs()


if __name__ == "__main__":
    main()
