"""Regenerates the numbers in docs/validation/transports.md: TCP NewReno on a lossy link against
the Mathis et al. formula, DCTCP's queue and sawtooth for N long flows on one bottleneck against
the DCTCP paper's analysis (Alizadeh et al. 2010 §3.3), an MPTCP connection beside a TCP flow on
one bottleneck against RFC 6356's goal, the 432-host fat-tree permutation beside the Stardust
paper's Fig. 10 (scenarios/baselines/permutation.toml), MPTCP's included, and NDP's permutation
and incast on trimming switches (scenarios/baselines/{permutation,incast}-ndp.toml) beside the
NDP paper (Handley et al. 2017), and DCQCN over PFC (scenarios/baselines/{permutation,incast}-dcqcn.toml):
two flows' rates converging on one bottleneck beside Zhu et al. 2015, the lossless fabric's incast
and permutation at full load, and the permutation beside Fig. 10's DCQCN 47%.

    python3 docs/validation/transports.py [--long] [--dcqcn]

--long adds the paper-length permutations (200 ms, goodput over 190-200 ms) of DCTCP and MPTCP;
--dcqcn prints the DCQCN section alone.
"""

import math
import sys

import cellfabric

RATE_GBPS = 10.0
PROPAGATION_NS = 25_000.0  # one switch, two links each way: a base round trip of about 100 µs
PACKET_BYTES = 1500
ACK_BYTES = 64
PERMUTATION_DCQCN = "scenarios/baselines/permutation-dcqcn.toml"


def star(transport: str, senders: int, duration_ns: float, warmup_ns: float, **more) -> dict:
    """`senders` unending flows into host 0 of one 32-port switch: the summary."""
    return star_result(transport, senders, duration_ns, warmup_ns, **more).summary


def star_result(transport: str, senders: int, duration_ns: float, warmup_ns: float, **more):
    """`senders` unending flows into host 0 of one 32-port switch: the result."""
    scenario = {
        "design": "ethernet",
        "run": {"seed": 1, "duration_ns": duration_ns, "warmup_ns": warmup_ns},
        "topology": {"kind": "star"},
        "link": {"rate_gbps": RATE_GBPS, "propagation_ns": PROPAGATION_NS},
        "host": {"transport": transport, "packet_bytes": PACKET_BYTES, "ack_bytes": ACK_BYTES},
        "traffic": {"pattern": "incast", "incast_host": 0, "senders": senders},
    }
    for key, value in more.items():
        section, name = key.split("__")
        scenario.setdefault(section, {})[name] = value
    return cellfabric.run(scenario, progress=False)


def base_rtt_s() -> float:
    """Propagation both ways over two links, a data packet's and an ACK's serialization per hop."""
    bits_per_s = RATE_GBPS * 1e9
    return 4 * PROPAGATION_NS * 1e-9 + 2 * (PACKET_BYTES + ACK_BYTES) * 8 / bits_per_s


def mathis() -> None:
    print("## NewReno on a lossy link (Mathis et al. 1997)\n")
    print("| loss p | goodput (Gbit/s) | mean RTT (µs) | Mathis MSS/RTT·sqrt(3/2p) (Gbit/s) "
          "| ours / Mathis | timeouts | fast retransmits |")
    print("|---|---|---|---|---|---|---|")
    for p in [5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2]:
        s = star("tcp", 1, 2e9, 2e8, switch__loss_probability=p, switch__queue_packets=1000)
        rtt_s = s["rtt_mean_us"] * 1e-6
        predicted = PACKET_BYTES * 8 / rtt_s * math.sqrt(1.5 / p) / 1e9
        got = s["flow_goodput_gbps"]["mean"]
        print(f"| {p:g} | {got:.3f} | {s['rtt_mean_us']:.1f} | {predicted:.3f} | {got / predicted:.2f} "
              f"| {s['timeouts']} | {s['fast_retransmits']} |")
    print()


def dctcp() -> None:
    k = 40
    rtt_s = base_rtt_s()
    bdp = RATE_GBPS * 1e9 * rtt_s / (PACKET_BYTES * 8)
    print(f"## DCTCP: N long flows, one bottleneck (K = {k}, C·RTT = {bdp:.1f} packets)\n")
    print("| N | goodput | queue mean | queue min | queue max | Q_max = K + N | Q_min = K + N − A | "
          "A = ½·sqrt(2N(C·RTT+K)) | period (RTTs) | T_C = ½·sqrt(2(C·RTT+K)/N) | drops | fairness |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    duration_ns, warmup_ns = 2e8, 1e8
    for n in [2, 4, 8, 16, 31]:
        s = star("dctcp", n, duration_ns, warmup_ns, switch__ecn_threshold_packets=k,
                 switch__queue_packets=400)
        q = s["bottleneck_queue_packets"]
        amplitude = 0.5 * math.sqrt(2 * n * (bdp + k))
        period_rtts = 0.5 * math.sqrt(2 * (bdp + k) / n)
        window_s = (duration_ns - warmup_ns) * 1e-9
        cuts = s["ecn_cuts_measured"]
        measured = window_s * n / cuts / rtt_s if cuts else float("nan")
        print(f"| {n} | {s['goodput'] * n:.3f} | {q['mean']:.1f} | {q['min']} | {q['max']} | {k + n} | "
              f"{k + n - amplitude:.1f} | {amplitude:.1f} | {measured:.2f} | {period_rtts:.2f} | "
              f"{s['packets_dropped']} | {s['flow_fairness']:.3f} |")
    print()


def permutation(long: bool) -> None:
    print("## The 432-host fat-tree permutation beside Stardust's Fig. 10\n")
    print("| transport | routing | length | goodput (mean, of line rate) | p1 | p10 | p50 (Gbit/s) "
          "| drops | retransmissions | timeouts |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    runs = [("dctcp", "ecmp", {}), ("tcp", "ecmp", {}), ("dctcp", "spray", {}), ("tcp", "spray", {})]
    runs.append(("mptcp", "ecmp", {"host.subflows": 8}))
    runs.append(("mptcp", "ecmp", {"host.subflows": 8, "switch.random_drop_packets": 3}))
    if long:
        runs.append(("dctcp", "ecmp", {"run.duration_ns": 2e8, "run.warmup_ns": 1.9e8}))
        runs.append(("mptcp", "ecmp", {"host.subflows": 8, "run.duration_ns": 2e8, "run.warmup_ns": 1.9e8}))
    for transport, routing, more in runs:
        overrides = {"host.transport": transport, "routing.mode": routing, **more}
        if transport == "tcp":
            overrides["run.strict"] = False  # the file's ECN threshold is DCTCP's
        s = cellfabric.run("scenarios/baselines/permutation.toml", overrides=overrides,
                           progress=False).summary
        g = s["flow_goodput_gbps"]
        length = f"{s['sim_time_ps'] / 1e9:.0f} ms, window from {s['warmup_ps'] / 1e9:.0f} ms"
        if "switch.random_drop_packets" in more:
            routing += ", random drop (top 3, p = 0.1)"
        print(f"| {transport} | {routing} | {length} | {s['goodput']:.3f} | {g['p1']:.2f} | {g['p10']:.2f} | "
              f"{g['p50']:.2f} | {s['packets_dropped']} | {s['retransmissions']} | {s['timeouts']} |")
    print()
    goodputs = [cellfabric.run("scenarios/baselines/permutation.toml", overrides={"run.seed": seed},
                               progress=False).summary["goodput"] for seed in range(1, 7)]
    print(f"DCTCP with ECMP over seeds 1-6: mean {sum(goodputs) / len(goodputs):.3f}, "
          f"{min(goodputs):.3f} to {max(goodputs):.3f}: {', '.join(f'{g:.3f}' for g in goodputs)}\n")


def mptcp_fairness() -> None:
    print("## MPTCP beside TCP on one bottleneck (RFC 6356 §2)\n")
    print("| bottleneck | subflows | MPTCP (Gbit/s) | TCP (Gbit/s) | MPTCP / TCP | uncoupled: n TCPs "
          "against 1 | bottleneck use | queue max in window | TCP retransmissions | MPTCP retransmissions |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    regimes = [("drop-tail, 100 packets", {"queue_packets": 100}),
               ("random drop in the top 3 of 100 packets, p = 0.1 (htsim's RandomQueue)",
                {"queue_packets": 100, "random_drop_packets": 3, "random_drop_probability": 0.1}),
               ("random loss 5e-4, 1000 packets", {"queue_packets": 1000, "loss_probability": 5e-4})]
    for name, switch in regimes:
        for n in [1, 2, 4, 8]:
            # Two connections into h0: the first one subflow (LIA leaves it NewReno), the other n.
            scenario = {
                "design": "ethernet",
                "run": {"seed": 1, "duration_ns": 1e9, "warmup_ns": 2e8},
                "topology": {"kind": "file", "file": "docs/validation/bottleneck.topo"},
                "link": {"rate_gbps": RATE_GBPS, "propagation_ns": PROPAGATION_NS},
                "switch": switch,
                "host": {"transport": "mptcp", "subflows": n, "packet_bytes": PACKET_BYTES,
                         "ack_bytes": ACK_BYTES},
                "traffic": {"pattern": "incast", "incast_host": 0, "single_path_flows": 1},
            }
            r = cellfabric.run(scenario, progress=False)
            flows = r.tables["flows"]
            tcp, mptcp = flows["goodput_gbps"]
            retransmitted_tcp, retransmitted_mptcp = flows["retransmissions"]
            print(f"| {name} | {n} | {mptcp:.3f} | {tcp:.3f} | {mptcp / tcp:.2f} | {n}.00 | "
                  f"{(mptcp + tcp) / RATE_GBPS:.3f} | {r.summary['bottleneck_queue_packets']['max']} | "
                  f"{retransmitted_tcp} | {retransmitted_mptcp} |")
    print()


def incast() -> None:
    print("## Incast: 64 senders x 450 KB into one host of the 432-host fat-tree\n")
    print("| transport | completed | first (ms) | mean (ms) | last (ms) | ideal N·450 KB at 10G (ms) "
          "| drops | timeouts |")
    print("|---|---|---|---|---|---|---|---|")
    for transport in ["dctcp", "tcp"]:
        overrides = {"host.transport": transport, "run.strict": False}
        s = cellfabric.run("scenarios/baselines/incast.toml", overrides=overrides, progress=False).summary
        fct = s["fct_us"]
        ideal_ms = s["flows"] * 450_000 * 8 / 10e9 * 1e3
        print(f"| {transport} | {s['flows_completed']} of {s['flows']} | {fct['first'] / 1e3:.2f} | "
              f"{fct['mean'] / 1e3:.2f} | {fct['last'] / 1e3:.2f} | {ideal_ms:.2f} | "
              f"{s['packets_dropped']} | "
              f"{s['timeouts']} |")
    print()


def ndp() -> None:
    print("## NDP on trimming switches (8-packet queues, initial window 23, spraying)\n")
    print("| run | goodput (mean, of line rate) | p1 | p10 | p50 (Gbit/s) | trimmed | header drops "
          "| retransmissions | timeouts |")
    print("|---|---|---|---|---|---|---|---|---|")
    for seed in [1, 2]:
        s = cellfabric.run("scenarios/baselines/permutation-ndp.toml", overrides={"run.seed": seed},
                           progress=False).summary
        g, n = s["flow_goodput_gbps"], s["ndp"]
        length = f"{s['sim_time_ps'] / 1e9:.0f} ms, window from {s['warmup_ps'] / 1e9:.0f} ms"
        print(f"| permutation, seed {seed}, {length} | {s['goodput']:.3f} | {g['p1']:.2f} | {g['p10']:.2f} | "
              f"{g['p50']:.2f} | {n['packets_trimmed']} | {n['headers_dropped']} | {s['retransmissions']} "
              f"| {s['timeouts']} |")
    print()
    print("| initial window | pull rate (of line rate) | goodput | trimmed | PULLs sent | timeouts |")
    print("|---|---|---|---|---|---|")
    for window, pull_rate in [(8, 1.0), (12, 1.0), (23, 1.0), (23, 0.97)]:
        overrides = {"host.initial_cwnd_packets": window, "host.ndp_pull_rate": pull_rate}
        s = cellfabric.run("scenarios/baselines/permutation-ndp.toml", overrides=overrides,
                           progress=False).summary
        print(f"| {window} | {pull_rate:g} | {s['goodput']:.3f} | {s['ndp']['packets_trimmed']} | "
              f"{s['ndp']['pulls_sent']} | {s['timeouts']} |")
    print()
    print("| incast senders | completed | first (ms) | mean (ms) | last (ms) | ideal N·450 KB at 10G (ms) "
          "| last / ideal | trimmed | header drops | timeouts |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for senders in [8, 64, 200]:
        ideal_ms = senders * 450_000 * 8 / 10e9 * 1e3
        overrides = {"traffic.senders": senders, "run.duration_ns": max(60e6, 2 * ideal_ms * 1e6)}
        s = cellfabric.run("scenarios/baselines/incast-ndp.toml", overrides=overrides, progress=False).summary
        fct, n = s["fct_us"], s["ndp"]
        print(f"| {senders} | {s['flows_completed']} of {s['flows']} | {fct['first'] / 1e3:.2f} | "
              f"{fct['mean'] / 1e3:.2f} | {fct['last'] / 1e3:.2f} | {ideal_ms:.2f} | "
              f"{fct['last'] / 1e3 / ideal_ms:.3f} | {n['packets_trimmed']} | {n['headers_dropped']} | "
              f"{s['timeouts']} |")
    print()


def dcqcn() -> None:
    print("## DCQCN: two flows into one host of a k = 4 fat-tree (1 µs links, 9000 B), goodput per window\n")
    print("| window (ms) | flow 1 (Gbit/s) | flow 2 (Gbit/s) | sum / line rate | Jain's index "
          "| CNPs by window end | pauses |")
    print("|---|---|---|---|---|---|---|")
    for start_ms, end_ms in [(0, 1), (1, 2), (2, 5), (5, 10), (10, 20), (20, 30), (30, 40), (40, 60)]:
        scenario = {
            "design": "ethernet",
            "run": {"seed": 3, "duration_ns": end_ms * 1e6, "warmup_ns": start_ms * 1e6},
            "topology": {"kind": "fat_tree", "k": 4},
            "switch": {"pfc": True},
            "host": {"transport": "dcqcn", "packet_bytes": 9000},
            "traffic": {"pattern": "incast", "incast_host": 0, "senders": 2},
        }
        r = cellfabric.run(scenario, progress=False)
        s, rates = r.summary, r.tables["flows"]["goodput_gbps"]
        print(f"| {start_ms}-{end_ms} | {rates[0]:.2f} | {rates[1]:.2f} | {sum(rates) / 10:.3f} | "
              f"{s['flow_fairness']:.4f} | {s['dcqcn']['cnps_sent']} | {s['pfc']['pause_frames_sent']} |")
    print()
    print("## DCQCN over PFC at full load: incast (N x 450 KB into host 0) and the permutation\n")
    print("| run | completed | last (ms) | ideal (ms) | goodput | drops | pauses sent | longest pause (µs) "
          "| paused fraction | headroom peak | CNPs | in ledger: created = delivered + dropped + held |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    runs = [("incast-dcqcn", {"traffic.senders": n, "run.duration_ns": max(60e6, 2 * n * 0.36e6)},
             f"incast, {n} senders") for n in [8, 64, 200]]
    runs += [("permutation-dcqcn", {"run.seed": seed}, f"permutation, seed {seed}, 20 ms") for seed in [1, 2]]
    for name, overrides, label in runs:
        s = cellfabric.run(f"scenarios/baselines/{name}.toml", overrides=overrides, progress=False).summary
        p = s["pfc"]
        ideal = f"{s['flows'] * 450_000 * 8 / 10e9 * 1e3:.2f}" if "incast" in name else "-"
        last = f"{s['fct_us']['last'] / 1e3:.2f}" if "incast" in name else "-"
        held = s["packets_delivered"] + s["packets_dropped"] + s["packets_in_flight"]
        balanced = s["packets_created"] == held
        print(f"| {label} | {s['flows_completed']} of {s['flows']} | {last} | {ideal} | {s['goodput']:.3f} | "
              f"{s['packets_dropped']} | {p['pause_frames_sent']} | {p['longest_pause_us']:.1f} | "
              f"{p['paused_fraction']:.5f} | {p['headroom_peak_packets']} | {s['dcqcn']['cnps_sent']} | "
              f"{'balanced' if balanced else 'NOT balanced'} |")
    print()
    print("## DCQCN on the 432-host permutation beside Fig. 10 (paper: 47%)\n")
    print("| run | goodput (mean, of line rate) | p1 | p10 | p50 (Gbit/s) | drops | pauses | rate cuts |")
    print("|---|---|---|---|---|---|---|---|")
    for label, overrides in [("R_AI 10, R_HAI 100 Mbit/s (scaled, the file's)", {}),
                             ("R_AI 40, R_HAI 400 Mbit/s (the paper's 40G values)",
                              {"host.dcqcn_rate_ai_mbps": 40, "host.dcqcn_rate_hai_mbps": 400})]:
        for length_ms in [20, 60]:
            more = {"run.duration_ns": length_ms * 1e6, "run.warmup_ns": (length_ms - 10) * 1e6, **overrides}
            s = cellfabric.run(PERMUTATION_DCQCN, overrides=more, progress=False).summary
            g = s["flow_goodput_gbps"]
            print(f"| {label}, {length_ms} ms, window last 10 ms | {s['goodput']:.3f} | {g['p1']:.2f} | "
                  f"{g['p10']:.2f} | {g['p50']:.2f} | {s['packets_dropped']} | "
                  f"{s['pfc']['pause_frames_sent']} | {s['dcqcn']['rate_cuts']} |")
    print()


def cut_through() -> None:
    """The permutation with store-and-forward and cut-through switches."""
    print("## Cut-through switching on the 432-host permutation\n")
    print("| transport | switching | goodput (mean, of line rate) | p1 | p10 | p50 (Gbit/s) | drops "
          "| mean RTT sampled (µs) |")
    print("|---|---|---|---|---|---|---|---|")
    for transport in ["dctcp", "tcp"]:
        for cut in [False, True]:
            overrides = {"host.transport": transport, "switch.cut_through": cut}
            if transport == "tcp":
                overrides["run.strict"] = False  # the file's ECN threshold is DCTCP's
            s = cellfabric.run("scenarios/baselines/permutation.toml", overrides=overrides,
                               progress=False).summary
            g = s["flow_goodput_gbps"]
            print(f"| {transport} | {'cut-through' if cut else 'store-and-forward'} | {s['goodput']:.3f} | "
                  f"{g['p1']:.2f} | {g['p10']:.2f} | {g['p50']:.2f} | {s['packets_dropped']} | "
                  f"{s['rtt_mean_us']:.1f} |")
    print()


if __name__ == "__main__":
    if "--dcqcn" in sys.argv:
        dcqcn()
        sys.exit()
    ndp()
    incast()
    mathis()
    dctcp()
    mptcp_fairness()
    permutation("--long" in sys.argv)
    cut_through()
    dcqcn()
