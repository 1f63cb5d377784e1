"""Regenerates the numbers in docs/validation/transports.md: TCP NewReno on a lossy link against
the Mathis et al. formula, DCTCP's queue and sawtooth for N long flows on one bottleneck against
the DCTCP paper's analysis (Alizadeh et al. 2010 §3.3), an MPTCP connection beside a TCP flow on
one bottleneck against RFC 6356's goal, the 432-host fat-tree permutation beside the Stardust
paper's Fig. 10 (scenarios/baselines/permutation.toml), MPTCP's included, and NDP's permutation
and incast on trimming switches (scenarios/baselines/{permutation,incast}-ndp.toml) beside the
NDP paper (Handley et al. 2017), and DCQCN over PFC (scenarios/baselines/{permutation,incast}-dcqcn.toml):
two flows' rates converging on one bottleneck beside Zhu et al. 2015, the lossless fabric's incast
and permutation at full load, and the permutation beside Fig. 10's DCQCN 47% (at 20, 60 and the
paper's 200 ms, goodput over the last 10 ms; the two 200 ms runs take about 5 s each).
The Fig. 10b completion-time workload (scenarios/baselines/fct.toml beside
scenarios/stardust/fct.toml) with its sanity laws: flows within the initial window on an idle fabric
take their ideal time, slots follow the flows in flight, and the Poisson source offers its load.
PFC per priority (scenarios/baselines/pfc-victim.toml): an incast on class 0 and a victim flow on
class 1 sharing its upstream links, with one and two PFC classes. BFC (scenarios/baselines/bfc-victim.toml):
the same flows under per-flow queues and pauses that name a queue, with 32, 2 and 1 queues, and the
k = 4 fat-tree at full load (permutation, 15-to-1 incast; DCQCN, TCP) with its drops and ledger.

    python3 docs/validation/transports.py [--long] [--dcqcn] [--shared-buffer] [--pfc-classes] [--bfc]

--long adds the paper-length permutations (200 ms, goodput over 190-200 ms) of DCTCP and MPTCP;
--dcqcn prints the DCQCN section alone, --shared-buffer the shared buffer's (Choudhury & Hahne's
dynamic threshold on the star), --pfc-classes the victim flow's, --bfc BFC's.
"""

import math
import sys
from pathlib import Path

import cellfabric
from cellfabric.result import measured, number

RATE_GBPS = 10.0
PROPAGATION_NS = 25_000.0  # one switch, two links each way: a base round trip of about 100 µs
PACKET_BYTES = 1500
ACK_BYTES = 64
PERMUTATION_DCQCN = "scenarios/baselines/permutation-dcqcn.toml"
PFC_VICTIM = "scenarios/baselines/pfc-victim.toml"
BFC_VICTIM = "scenarios/baselines/bfc-victim.toml"


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
        rtt_s = number(s, 'rtt_mean_us') * 1e-6
        predicted = PACKET_BYTES * 8 / rtt_s * math.sqrt(1.5 / p) / 1e9
        got = measured(s, 'flow_goodput_gbps')["mean"]
        rtt_us = number(s, 'rtt_mean_us')
        print(f"| {p:g} | {got:.3f} | {rtt_us:.1f} | {predicted:.3f} | {got / predicted:.2f} "
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
        q = measured(s, 'bottleneck_queue_packets')
        amplitude = 0.5 * math.sqrt(2 * n * (bdp + k))
        period_rtts = 0.5 * math.sqrt(2 * (bdp + k) / n)
        window_s = (duration_ns - warmup_ns) * 1e-9
        cuts = s["ecn_cuts_measured"]
        period_measured = window_s * n / cuts / rtt_s if cuts else float("nan")
        print(f"| {n} | {s['goodput'] * n:.3f} | {q['mean']:.1f} | {q['min']} | {q['max']} | {k + n} | "
              f"{k + n - amplitude:.1f} | {amplitude:.1f} | {period_measured:.2f} | {period_rtts:.2f} | "
              f"{s['packets_dropped']} | {number(s, 'flow_fairness'):.3f} |")
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
        g = measured(s, 'flow_goodput_gbps')
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
            deepest = measured(r.summary, 'bottleneck_queue_packets')['max']
            print(f"| {name} | {n} | {mptcp:.3f} | {tcp:.3f} | {mptcp / tcp:.2f} | {n}.00 | "
                  f"{(mptcp + tcp) / RATE_GBPS:.3f} | {deepest} | "
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
        fct = measured(s, 'fct_us')
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
        g, n = measured(s, 'flow_goodput_gbps'), s["ndp"]
        length = f"{s['sim_time_ps'] / 1e9:.0f} ms, window from {s['warmup_ps'] / 1e9:.0f} ms"
        print(f"| permutation, seed {seed}, {length} | {s['goodput']:.3f} | {g['p1']:.2f} | {g['p10']:.2f} | "
              f"{g['p50']:.2f} | {n['packets_trimmed']} | {n['headers_dropped']} | {s['retransmissions']} "
              f"| {s['timeouts']} |")
    print()
    print("| initial window | pull rate (of line rate) | goodput | trimmed | PULLs sent | timeouts |")
    print("|---|---|---|---|---|---|")
    for window, pull_rate in [(8, 1.0), (12, 1.0), (23, 1.0), (23, 0.97)]:
        overrides = {"host.initial_cwnd_packets": window, "host.ndp.pull_rate": pull_rate}
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
        fct, n = measured(s, 'fct_us'), s["ndp"]
        print(f"| {senders} | {s['flows_completed']} of {s['flows']} | {fct['first'] / 1e3:.2f} | "
              f"{fct['mean'] / 1e3:.2f} | {fct['last'] / 1e3:.2f} | {ideal_ms:.2f} | "
              f"{fct['last'] / 1e3 / ideal_ms:.3f} | {n['packets_trimmed']} | {n['headers_dropped']} | "
              f"{s['timeouts']} |")
    print()


FCT_NDP = {"host.transport": "ndp", "switch.port_kind": "trimming", "switch.queue_packets": 8,
           "routing.mode": "spray", "host.initial_cwnd_packets": 23, "run.strict": False}


# TCP NewReno hosts on Stardust's host ports, with the baseline's initial ssthresh (15 packets).
FCT_STARDUST_TCP = {"host.transport": "tcp", "host.initial_ssthresh_packets": 15, "run.strict": False}


def _fct_row(name: str, r) -> str:
    """A row of completion times by size, read from the run's timed_flows table (both designs
    list size_bytes and fct_us there)."""
    s, t = r.summary, r.tables["timed_flows"]
    done = t.dropna(subset=["fct_us"])

    def q(part, quantile):
        return f"{part['fct_us'].quantile(quantile):.0f}" if len(part) else "-"
    small = done[done["size_bytes"] < 10_000]
    medium = done[(done["size_bytes"] >= 10_000) & (done["size_bytes"] < 500_000)]
    large = done[done["size_bytes"] >= 500_000]["fct_us"]
    return (f"| {name} | {len(done)} of {len(t)} | {q(done, 0.5)} | {q(done, 0.99)} | {q(small, 0.5)} | "
            f"{q(small, 0.99)} | {q(medium, 0.5)} | {q(medium, 0.99)} | "
            f"{large.mean():.0f} / {large.max():.0f} | {s['goodput']:.3f} |")


def fct() -> None:
    print("## Fig. 10b's workload: timed flows under background load, pull beside push\n")
    print("| run | timed flows completed | FCT p50 (µs) | p99 | < 10 KB p50 | p99 | 10-500 KB p50 | p99 "
          "| >= 500 KB mean / max | goodput |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    r = cellfabric.run("scenarios/stardust/fct.toml", progress=False)
    print(_fct_row("Stardust (pull, constant-rate hosts)", r))
    r = cellfabric.run("scenarios/stardust/fct.toml", overrides=FCT_STARDUST_TCP, progress=False)
    print(_fct_row("Stardust (pull, TCP NewReno hosts)", r))
    for name, overrides in [("Ethernet DCTCP", {}), ("Ethernet TCP NewReno", {"host.transport": "tcp"}),
                            ("Ethernet NDP", FCT_NDP)]:
        r = cellfabric.run("scenarios/baselines/fct.toml", overrides=overrides, progress=False)
        print(_fct_row(name, r))
    print()
    print("| run | slowdown p50 | p90 | p99 | drops | timeouts | stale packets | send slots (peak) "
          "| flows opened |")
    print("|---|---|---|---|---|---|---|---|---|")
    runs = [("Ethernet DCTCP", "baselines", {}), ("Ethernet NDP", "baselines", FCT_NDP),
            ("Stardust TCP NewReno", "stardust", FCT_STARDUST_TCP)]
    for name, scenario, overrides in runs:
        s = cellfabric.run(f"scenarios/{scenario}/fct.toml", overrides=overrides, progress=False).summary
        sd = s["timed_slowdown"]
        stardust_drops = sum(s.get(f"packets_dropped_{at}", 0) for at in ("ingress", "fabric", "egress"))
        drops = s.get("packets_dropped", stardust_drops)
        print(f"| {name} | {sd['p50']:.2f} | {sd['p90']:.2f} | {sd['p99']:.2f} | {drops} | "
              f"{s['timeouts']} | {s['stale_packets']} | {s['send_slots_peak']} | {s['flows_opened']} |")
    print()


def fct_laws() -> None:
    print("## Sanity laws of flows opened during a run\n")
    # An idle fabric: every host opens flows to uniform other hosts at 1% of its line rate.
    idle = {"traffic.pattern": "poisson", "traffic.load": 0.01, "run.strict": False,
            "run.duration_ns": 20e6, "run.warmup_ns": 0}
    print("| transport | flows within the initial window (<= 10 x 9000 B) completed | of them at their "
          "ideal (within 0.1%) | larger flows | their slowdown p50 | p99 |")
    print("|---|---|---|---|---|---|")
    for name, overrides in [("dctcp", {}), ("ndp", FCT_NDP)]:
        r = cellfabric.run("scenarios/baselines/fct.toml", overrides={**idle, **overrides}, progress=False)
        t = r.tables["timed_flows"].dropna(subset=["fct_us"])
        one = t[t["size_bytes"] <= 90_000]
        exact = int(((one["slowdown"] - 1.0).abs() < 1e-3).sum())
        many = t[t["size_bytes"] > 90_000]["slowdown"]
        print(f"| {name} | {len(one)} | {exact} ({exact / max(len(one), 1):.1%}) | {len(many)} | "
              f"{many.quantile(0.5):.3f} | {many.quantile(0.99):.3f} |")
    print()
    # Memory follows the flows in flight: every host opens flows at half its line rate, for
    # one length and four times it.
    print("| all-to-all Poisson, load 0.5 | flows opened | completed | send slots (peak, one host) "
          "| receive slots (peak, one host) |")
    print("|---|---|---|---|---|")
    for duration_ns in [10e6, 40e6]:
        overrides = {"traffic.pattern": "poisson", "traffic.load": 0.5, "run.strict": False,
                     "run.duration_ns": duration_ns, "run.warmup_ns": 1e6}
        s = cellfabric.run("scenarios/baselines/fct.toml", overrides=overrides, progress=False).summary
        print(f"| {s['sim_time_ps'] / 1e9:.0f} ms | {s['flows_opened']} | {s['timed_flows_completed']} | "
              f"{s['send_slots_peak']} | {s['receive_slots_peak']} |")
    print()
    # The timed source's arrivals against fct_load (Poisson: the count's sd is its square root).
    lines = Path("workloads/homasim_fb_webserver.txt").read_text().splitlines()
    sizes = [line.split() for line in lines if line.strip() and not line.startswith("#")]
    points = [(float(a), float(b)) for a, b in (f for f in sizes if len(f) == 2)]
    mean_bytes, previous = 0.0, 0.0
    for size, cdf in points:
        mean_bytes += size * (cdf - previous)
        previous = cdf
    print("| run | length (ms) | flows arrived | expected (load · rate / mean size) | z (Poisson) "
          "| offered bytes / (rate · time) | carried (completed bytes) |")
    print("|---|---|---|---|---|---|---|")
    for seed in [1, 2, 3]:
        r = cellfabric.run("scenarios/baselines/fct.toml", overrides={"run.seed": seed}, progress=False)
        s, t = r.summary, r.tables["timed_flows"]
        length_s = s["sim_time_ps"] * 1e-12
        expected = 0.5 * 10e9 / (8 * mean_bytes) * length_s
        got = s["timed_flows_started"]
        offered = t["size_bytes"].sum() * 8 / (10e9 * length_s)
        carried = t.dropna(subset=["fct_us"])["size_bytes"].sum() * 8 / (10e9 * length_s)
        print(f"| DCTCP, seed {seed} | {length_s * 1e3:.2f} | {got} | {expected:.1f} | "
              f"{(got - expected) / expected ** 0.5:+.2f} | {offered:.3f} | {carried:.3f} |")
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
            "switch": {"port_kind": "pfc"},
            "host": {"transport": "dcqcn", "packet_bytes": 9000},
            "traffic": {"pattern": "incast", "incast_host": 0, "senders": 2},
        }
        r = cellfabric.run(scenario, progress=False)
        s, rates = r.summary, r.tables["flows"]["goodput_gbps"]
        fairness = number(s, 'flow_fairness')
        print(f"| {start_ms}-{end_ms} | {rates[0]:.2f} | {rates[1]:.2f} | {sum(rates) / 10:.3f} | "
              f"{fairness:.4f} | {s['dcqcn']['cnps_sent']} | {s['pfc']['pause_frames_sent']} |")
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
        last = f"{measured(s, 'fct_us')['last'] / 1e3:.2f}" if "incast" in name else "-"
        held = s["packets_delivered"] + s["packets_dropped"] + s["packets_in_flight"]
        balanced = s["packets_created"] == held
        print(f"| {label} | {s['flows_completed']} of {s['flows']} | {last} | {ideal} | {s['goodput']:.3f} | "
              f"{s['packets_dropped']} | {p['pause_frames_sent']} | {p['longest_pause_us']:.1f} | "
              f"{p['paused_fraction']:.5f} | {p['headroom_peak_packets']} | {s['dcqcn']['cnps_sent']} | "
              f"{'balanced' if balanced else 'NOT balanced'} |")
    print()
    dcqcn_permutation()


def dcqcn_permutation() -> None:
    """The DCQCN permutation at 20 and 60 ms and at the paper's length (200 ms, goodput over
    190-200 ms: about 5 s of wall time per run)."""
    print("## DCQCN on the 432-host permutation beside Fig. 10 (paper: 47%)\n")
    print("| run | goodput (mean, of line rate) | p1 | p10 | p50 (Gbit/s) | drops | pauses | rate cuts |")
    print("|---|---|---|---|---|---|---|---|")
    for label, overrides in [("R_AI 10, R_HAI 100 Mbit/s (scaled, the file's)", {}),
                             ("R_AI 40, R_HAI 400 Mbit/s (the paper's 40G values)",
                              {"host.dcqcn.rate_ai_mbps": 40, "host.dcqcn.rate_hai_mbps": 400})]:
        for length_ms in [20, 60, 200]:
            more = {"run.duration_ns": length_ms * 1e6, "run.warmup_ns": (length_ms - 10) * 1e6, **overrides}
            s = cellfabric.run(PERMUTATION_DCQCN, overrides=more, progress=False).summary
            g = measured(s, 'flow_goodput_gbps')
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
            g = measured(s, 'flow_goodput_gbps')
            print(f"| {transport} | {'cut-through' if cut else 'store-and-forward'} | {s['goodput']:.3f} | "
                  f"{g['p1']:.2f} | {g['p10']:.2f} | {g['p50']:.2f} | {s['packets_dropped']} | "
                  f"{number(s, 'rtt_mean_us'):.1f} |")
    print()


def shared_buffer() -> None:
    """Choudhury & Hahne's dynamic threshold in whole runs on the 32-port star: unending TCP
    flows from 31 hosts overload one output; its queue stops at alpha*B/(1 + alpha*S) with S = 1
    and B/(1 + alpha) of the buffer stays free. Then a burst: 24 senders' 10-packet initial
    windows (9000-byte packets, 1 us cables) into one idle port, per-port queues beside the same
    memory shared."""
    print("## Shared buffer with a dynamic threshold (Choudhury & Hahne 1998)\n")
    print("| B (packets) | alpha | queue limit, theory | queue peak | mean depth found | buffer peak "
          "| free at peak, theory | threshold drops | full drops | bottleneck goodput (of line rate) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    buffer_packets = 200
    for alpha in [0.5, 1.0, 2.0]:
        s = star("tcp", 31, 20e6, 10e6, switch__port_kind="shared_buffer",
                 switch__shared_buffer_packets=buffer_packets, switch__dt_alpha=alpha)
        b = s["shared_buffer"]
        theory = alpha * buffer_packets / (1 + alpha)
        print(f"| {buffer_packets} | {alpha} | {theory:.1f} | {s['queue_peak_packets']} | "
              f"{measured(s, 'bottleneck_queue_packets')['mean']:.1f} | {b['occupied_peak_packets']} | "
              f"{buffer_packets - b['occupied_peak_packets']} of {buffer_packets / (1 + alpha):.1f} | "
              f"{b['threshold_drops']} | {b['full_drops']} | {31 * s['goodput']:.3f} |")
    print()
    print("| DCTCP, K = 15 | mean depth found | deepest | marked | drops "
          "| bottleneck goodput (of line rate) |")
    print("|---|---|---|---|---|---|")
    for label, switch in [("per port, 100 packets", {}),
                          ("shared, B = 200, alpha = 1", {"switch__port_kind": "shared_buffer",
                                                          "switch__shared_buffer_packets": 200}),
                          ("shared, B = 32 x 100, alpha = 1", {"switch__port_kind": "shared_buffer"})]:
        s = star("dctcp", 31, 20e6, 10e6, **switch)
        d = measured(s, 'bottleneck_queue_packets')
        print(f"| {label} | {d['mean']:.1f} | {d['max']} | {s['packets_marked']} | {s['packets_dropped']} | "
              f"{31 * s['goodput']:.3f} |")
    print()
    print("| buffer | static share per port | burst (packets) | drops | queue peak | timeouts "
          "| last completion (us) |")
    print("|---|---|---|---|---|---|---|")
    for label, switch in [("per port, 100 each", {"port_kind": "drop_tail"}),
                          ("shared, 32 x 100, alpha = 1", {"port_kind": "shared_buffer"})]:
        scenario = {
            "design": "ethernet",
            "run": {"seed": 3, "duration_ns": 3e6, "warmup_ns": 1e6},
            "topology": {"kind": "star"},
            "switch": {"queue_packets": 100, **switch},
            "host": {"transport": "tcp"},
            "traffic": {"pattern": "incast", "incast_host": 0, "senders": 24, "flow_bytes": 90_000},
        }
        s = cellfabric.run(scenario, progress=False).summary
        burst = 24 * 10
        print(f"| {label} | 100 | {burst} | {s['packets_dropped']} | {s['queue_peak_packets']} | "
              f"{s['timeouts']} | {measured(s, 'fct_us')['last']:.1f} |")
    print()


def pfc_classes() -> None:
    print("## PFC per priority: the victim flow (scenarios/baselines/pfc-victim.toml)\n")
    print("| PFC classes | incast flows 0, 6, 7, 8 -> 5 (Gbit/s) | victim 1 -> 9 (Gbit/s) | victim, theory | "
          "XOFF class 0 | XOFF class 1 | paused class 0 (ms) | paused class 1 (ms) | drops | ledger |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    root = Path(__file__).resolve().parents[2]
    runs = [("2", {}, 7.5), ("1", {"switch.pfc_classes": 1, "traffic.flow_classes": [0]}, 2.5)]
    for label, overrides, theory in runs:
        r = cellfabric.run(root / PFC_VICTIM, overrides, progress=False)
        s, gbps = r.summary, list(r.tables["flows"]["goodput_gbps"])
        held = s["packets_delivered"] + s["packets_dropped"] + s["packets_in_flight"]
        balanced = s["packets_created"] == held
        pfc = s["pfc"]
        per_class = pfc.get("classes") or [{"pause_frames_sent": pfc["pause_frames_sent"],
                                            "paused_us": pfc["switch_paused_us"] + pfc["host_paused_us"]}]
        sent = [c["pause_frames_sent"] for c in per_class] + ["-"]
        paused = [f"{c['paused_us'] / 1e3:.2f}" for c in per_class] + ["-"]
        incast = ", ".join(f"{g:.2f}" for g in gbps[:4])
        print(f"| {label} | {incast} | {gbps[4]:.2f} | {theory} | {sent[0]} | {sent[1]} | {paused[0]} | "
              f"{paused[1]} | {s['packets_dropped']} | {'balanced' if balanced else 'UNBALANCED'} |")
    print()


def bfc() -> None:
    print("## BFC: pauses that name a queue (scenarios/baselines/bfc-victim.toml)\n")
    print("| queues per port | incast flows 0, 6, 7, 8 -> 5 (Gbit/s) | victim 1 -> 9 (Gbit/s) | "
          "victim, theory | queue PAUSEs | backstop XOFFs | flows assigned | collisions | "
          "queues paused (ms) | drops | ledger |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    root = Path(__file__).resolve().parents[2]
    for queues, theory in [(32, 7.5), (2, 7.5), (1, 2.5)]:
        r = cellfabric.run(root / BFC_VICTIM, {"switch.per_flow.queues": queues}, progress=False)
        s, gbps = r.summary, list(r.tables["flows"]["goodput_gbps"])
        held = s["packets_delivered"] + s["packets_dropped"] + s["packets_in_flight"]
        pfc, b = s["pfc"], s["pfc"]["bfc"]
        incast = ", ".join(f"{g:.2f}" for g in gbps[:4])
        print(f"| {queues} | {incast} | {gbps[4]:.2f} | {theory} | {b['queue_pause_frames_sent']} | "
              f"{pfc['pause_frames_sent']} | {b['flows_assigned']} | {b['flow_collisions']} | "
              f"{b['queue_paused_us'] / 1e3:.2f} | {s['packets_dropped']} | "
              f"{'balanced' if s['packets_created'] == held else 'UNBALANCED'} |")
    print()
    print("| k = 4 fat-tree, full load | transport | queues | mean flow goodput (Gbit/s) | queue PAUSEs | "
          "backstop XOFFs | collisions | drops | created | delivered + in flight | ledger |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    patterns = {"permutation": {"pattern": "permutation"},
                "15-to-1 incast": {"pattern": "incast", "incast_host": 0, "senders": 15}}
    for name, traffic in patterns.items():
        for transport in ("dcqcn", "tcp"):
            for queues in (32, 2, 1):
                scenario = {
                    "design": "ethernet",
                    "run": {"seed": 1, "duration_ns": 20e6, "warmup_ns": 10e6},
                    "topology": {"kind": "fat_tree", "k": 4},
                    "switch": {"port_kind": "bfc", "per_flow": {"queues": queues, "pause_packets": 4}},
                    "host": {"transport": transport, "packet_bytes": 9000},
                    "traffic": traffic,
                }
                s = cellfabric.run(scenario, progress=False).summary
                held = s["packets_delivered"] + s["packets_dropped"] + s["packets_in_flight"]
                pfc, b = s["pfc"], s["pfc"]["bfc"]
                print(f"| {name} | {transport} | {queues} | {measured(s, 'flow_goodput_gbps')['mean']:.2f} | "
                      f"{b['queue_pause_frames_sent']} | {pfc['pause_frames_sent']} | "
                      f"{b['flow_collisions']} | {s['packets_dropped']} | {s['packets_created']} | {held} | "
                      f"{'balanced' if s['packets_created'] == held else 'UNBALANCED'} |")
    print()


if __name__ == "__main__":
    if "--pfc-classes" in sys.argv:
        pfc_classes()
        sys.exit()
    if "--bfc" in sys.argv:
        bfc()
        sys.exit()
    if "--dcqcn" in sys.argv:
        dcqcn()
        sys.exit()
    if "--shared-buffer" in sys.argv:
        shared_buffer()
        sys.exit()
    fct()
    fct_laws()
    ndp()
    incast()
    mathis()
    dctcp()
    mptcp_fairness()
    permutation("--long" in sys.argv)
    cut_through()
    dcqcn()
    shared_buffer()
    pfc_classes()
    bfc()
