"""Stardust's planning arithmetic (Zilberman, Bracha and Schzukin, "Stardust: Divide and Conquer
in the Data Center Network", NSDI '19): exact formulas from the paper, with the paper's own slips
noted (the readings R8, R30 and R31 of docs/validation/stardust.md).

- :func:`clos_counts`: Table 2 (App. A), devices and links of an n-tier fabric;
- :func:`scale`: Fig. 2(a), hosts a 12.8 Tb/s switch reaches at each tier and link bundle;
- :func:`fat_tree_size`: Fig. 2(b, c), the devices and serial links that fabric takes;
- :func:`buses_needed`: Fig. 3, the parallel buses a packet switch and a cell switch need;
- :func:`pipeline_parallelism`: App. B, the parallel pipelines a packet switch needs;
- :func:`recovery`: App. E and Table 4, the time until a failed link is routed around, and the
  reachability messages' bandwidth;
- :func:`md1_tail`: §4.2.1, the queue depth an M/D/1 link exceeds with a given probability;
- :func:`min_credit_bytes`: §4.1, the smallest credit an adapter's scheduler can issue.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass


class PlanInputError(ValueError):
    """An input the arithmetic cannot use: parameter ``name`` (``hosts_per_tor``), its ``value``
    and what was ``expected``."""

    def __init__(self, name: str, value: object, expected: str):
        super().__init__(f"{name} {value}: {expected}")
        self.name, self.value, self.expected = name, value, expected


def check_fabric(radix: int, uplinks: int, bundle: int = 1, tiers: int = 1) -> None:
    """Raises ``PlanInputError`` for a fabric Table 2 does not describe. Its construction (App. A)
    builds every tier from switches of `radix` ports; a ToR is such a switch too, so its `uplinks`
    are at most `radix`; from two tiers on a first-tier switch has radix/2 ports down and radix/2
    up, so the radix is even."""
    if tiers < 1:
        raise PlanInputError("tiers", tiers, "expected at least 1")
    if radix < 2:
        raise PlanInputError("radix", radix, "expected at least 2 ports per switch")
    if tiers > 1 and radix % 2:
        raise PlanInputError("radix", radix, "expected an even number (from 2 tiers on, a first-tier "
                             "switch has half its ports down and half up)")
    if uplinks < 1:
        raise PlanInputError("uplinks", uplinks, "expected at least 1 uplink bundle per ToR")
    if uplinks > radix:
        raise PlanInputError("uplinks", uplinks, f"expected at most the radix, {radix} (a ToR is a switch "
                             f"of that radix, so it has no more ports than that for its uplinks)")
    if bundle < 1:
        raise PlanInputError("bundle", bundle, "expected at least 1 lane per bundle")


@dataclass(frozen=True)
class ClosCounts:
    """Table 2 for `tiers` tiers of fabric switches of radix `radix` (in bundles), ToRs (fabric
    adapters) with `uplinks` uplink bundles of `bundle` lanes each."""

    tiers: int
    max_tors: int
    switches: float
    switches_per_tor: float
    link_bundles: float
    links_per_tor: int

    def as_dict(self) -> dict:
        return asdict(self)


def clos_counts(tiers: int, radix: int, uplinks: int, bundle: int = 1) -> ClosCounts:
    """Table 2 (App. A). The paper prints general-n formulas for link bundles and links per ToR
    that contradict its own rows 1-2 and 4 (reading R30); these count from the construction
    instead (each fully provisioned tier boundary carries `uplinks` bundles per ToR), which
    agrees with rows 1-3. ``PlanInputError`` for a fabric the table does not describe
    (``check_fabric``)."""
    check_fabric(radix, uplinks, bundle, tiers)
    n, k, t = tiers, radix, uplinks
    tors = k**n // 2 ** (n - 1)
    return ClosCounts(
        tiers=n,
        max_tors=tors,
        switches=(2 * n - 1) / 2 ** (n - 1) * t * k ** (n - 1),
        switches_per_tor=(2 * n - 1) * t / k,
        link_bundles=n * t * tors,
        links_per_tor=n * t * bundle,
    )


def scale(tiers: int, bundle: int, serdes: int = 256, hosts_per_tor: int = 40) -> int:
    """Fig. 2: hosts under a fat-tree of switches with `serdes` lanes grouped `bundle` to a port
    (12.8 Tb/s as 256 x 50G), `hosts_per_tor` hosts per ToR: k^n / 2^(n-1) ToRs of k =
    serdes / bundle ports."""
    radix = serdes // bundle
    return clos_counts(tiers, radix, 1, bundle).max_tors * hosts_per_tor


@dataclass(frozen=True)
class FatTreeSize:
    """Fig. 2(a-c): hosts, devices (edge switches and fabric switches) and fabric serial links."""

    tiers: int
    bundle: int
    hosts: int
    devices: float
    serial_links: float

    def as_dict(self) -> dict:
        return asdict(self)


def fat_tree_size(tiers: int, bundle: int, serdes: int = 256, hosts_per_tor: int = 40,
                  host_lanes: int = 2) -> FatTreeSize:
    """Fig. 2(b, c): a non-blocking fat-tree of switches with `serdes` lanes, `bundle` lanes a
    port, each edge switch with `hosts_per_tor` hosts of `host_lanes` lanes (the paper's 40 hosts
    at 100G on 50G lanes). Our reading, as the paper gives no formula: an edge switch sends up
    what its hosts bring, t = ceil(hosts x host lanes / bundle) ports; devices are the edge switches
    and Table 2's fabric switches; serial links are Table 2's fabric link bundles times the
    bundle (host cables not counted)."""
    radix = serdes // bundle
    uplinks = math.ceil(hosts_per_tor * host_lanes / bundle)
    if uplinks < 1 or hosts_per_tor * host_lanes + uplinks * bundle > serdes:
        raise PlanInputError("hosts_per_tor", hosts_per_tor,
                             f"expected hosts and their uplinks to fit {serdes} lanes at bundle {bundle}")
    counts = clos_counts(tiers, radix, uplinks, bundle)
    return FatTreeSize(tiers=tiers, bundle=bundle, hosts=counts.max_tors * hosts_per_tor,
                       devices=counts.max_tors + counts.switches,
                       serial_links=counts.link_bundles * bundle)


def buses_needed(packet_bytes: int, bandwidth_bps: float = 12.8e12, bus_bytes: int = 256,
                 clock_hz: float = 1e9, gap_bytes: int = 0) -> dict:
    """Fig. 3 (§2.3): a packet switch moves each packet over a `bus_bytes` bus in
    ceil(S / bus) cycles, so it needs (packet rate) x ceil(S / bus) / f buses; a cell switch
    fills every bus cycle, B / (8 bus f) buses (6.25 at 12.8 Tb/s). The paper gives no formula:
    this bus-cycle model is our reading. Without an inter-packet gap it gives the paper's x4 for
    small packets; with G = 20 bytes (12 IPG + 8 preamble) it gives the paper's 18% at 1025 B;
    neither gives its 41% at 513 B (31-33%)."""
    packet_rate = bandwidth_bps / (8 * (packet_bytes + gap_bytes))
    packet_buses = packet_rate * math.ceil(packet_bytes / bus_bytes) / clock_hz
    cell_buses = bandwidth_bps / (8 * bus_bytes * clock_hz)
    return {
        "packet_bytes": packet_bytes,
        "gap_bytes": gap_bytes,
        "packet_switch_buses": packet_buses,
        "cell_switch_buses": cell_buses,
        "saving": 1 - cell_buses / packet_buses,
    }


def pipeline_parallelism(
    bandwidth_bps: float, packet_bytes: int, clock_hz: float = 1e9, cycles: int = 1, gap_bytes: int = 20
) -> float:
    """App. B: P = R / r, the packet rate R = B / (8 (S + G)) over the pipeline rate r = f / c.
    With G = 20 bytes (12 IPG + 8 preamble) 256-byte packets give 5.80 at 12.8 Tb/s; the paper
    prints 6.06, which needs G = 8 (reading R31)."""
    packet_rate = bandwidth_bps / (8 * (packet_bytes + gap_bytes))
    return packet_rate / (clock_hz / cycles)


@dataclass(frozen=True)
class Recovery:
    """App. E: reachability messages and the time to route around a failed link."""

    messages_per_table: int
    one_pass_us: float
    with_threshold_us: float
    with_propagation_us: float
    overhead: float

    def as_dict(self) -> dict:
        return asdict(self)


def recovery(
    hosts: int = 32_000,
    hosts_per_adapter: int = 40,
    bitmap_bits: int = 128,
    tiers: int = 2,
    interval_cycles: int = 10_000,
    clock_hz: float = 1e9,
    threshold: int = 3,
    message_bytes: int = 24,
    link_bps: float = 50e9,
    propagation_ns: tuple[float, ...] = (50.0, 500.0, 500.0),
) -> Recovery:
    """App. E with Table 4's defaults: M = ceil(N / (h b)) messages carry a table; a failure
    travels 2n - 1 hops, each taking M message intervals t' = c / f, and is believed after
    `threshold` consistent updates; with each hop's propagation pd_i added,
    sum (t' + pd_i) M th. The bandwidth of one message per interval per link is
    B 8 f / (c s). The paper's 652 us matches propagation of 50, 500 and 500 ns."""
    hops = 2 * tiers - 1
    if len(propagation_ns) != hops:
        raise ValueError(f"expected {hops} propagation delays (2n - 1 hops), got {len(propagation_ns)}")
    messages = math.ceil(hosts / (hosts_per_adapter * bitmap_bits))
    interval_us = interval_cycles / clock_hz * 1e6
    one_pass = interval_us * messages * hops
    return Recovery(
        messages_per_table=messages,
        one_pass_us=one_pass,
        with_threshold_us=one_pass * threshold,
        with_propagation_us=sum((interval_us + pd / 1000) * messages * threshold for pd in propagation_ns),
        overhead=message_bytes * 8 * clock_hz / (interval_cycles * link_bps),
    )


def md1_decay_root(utilization: float) -> float:
    """z* > 1 with z* = exp(rho (z* - 1)): the M/D/1 queue-length tail falls by 1/z* per cell."""
    if not 0 < utilization < 1:
        raise ValueError("expected a utilization between 0 and 1")
    z = 2.0 / utilization  # Newton from the right of the root, where the function is convex
    for _ in range(200):
        step = (math.exp(utilization * (z - 1)) - z) / (utilization * math.exp(utilization * (z - 1)) - 1)
        z -= step
        if abs(step) < 1e-15:
            break
    return z


def md1_tail(utilization: float, probability: float = 1e-6) -> dict:
    """§4.2.1: the depth N (in cells, not rounded) at which an M/D/1 link's tail z*^-N reaches
    `probability` (prefactor ignored), beside the paper's heavy-traffic form fs^-2N with
    fs = 1 / utilization. (Rounded, the default utilizations give 11, 32, 67, 136 and 143.)"""
    z = md1_decay_root(utilization)
    return {
        "utilization": utilization,
        "z": z,
        "fs_squared": 1 / utilization**2,
        "cells": math.log(1 / probability) / math.log(z),
    }


def min_credit_bytes(adapter_bps: float = 10e12, clock_hz: float = 1e9, cycles_per_credit: int = 2) -> float:
    """§4.1: the smallest credit = adapter bandwidth / credit rate. The paper's example (10 Tb/s,
    1 GHz, a credit every 2 cycles) is 2 500 bytes; it prints "2000B" (reading R8)."""
    return adapter_bps / (clock_hz / cycles_per_credit) / 8


def stardust(radix: int = 256, uplinks: int = 32, bundle: int = 1, hosts_per_tor: int = 40) -> dict:
    """Every calculator at once, for `cellfabric plan stardust`; ``PlanInputError`` first for
    inputs that make no fabric."""
    check_fabric(radix, uplinks, bundle, tiers=3)
    if hosts_per_tor < 1:
        raise PlanInputError("hosts_per_tor", hosts_per_tor, "expected at least 1 host per ToR")
    return {
        "table2": [clos_counts(n, radix, uplinks, bundle).as_dict() for n in (1, 2, 3)],
        "fig2_hosts": {
            f"tiers {n}, bundle {b}": scale(n, b, hosts_per_tor=hosts_per_tor)
            for n in (1, 2, 3)
            for b in (1, 2, 4, 8)
        },
        "fig2_fat_tree": [
            fat_tree_size(n, b, hosts_per_tor=hosts_per_tor).as_dict()
            for n in (1, 2, 3)
            for b in (1, 2, 4, 8)
        ],
        "fig3_buses": [
            buses_needed(s, gap_bytes=g) for g in (0, 20) for s in (64, 256, 257, 513, 1025, 1500)
        ],
        "appendix_b_parallelism": {
            f"{s} B": pipeline_parallelism(12.8e12, s) for s in (64, 128, 256, 512, 1024, 1500)
        },
        "appendix_e_recovery": recovery().as_dict(),
        "md1_cells_for_1e-6": [md1_tail(u) for u in (0.5, 0.8, 0.9, 0.95, 1 / 1.05)],
        "min_credit_bytes": min_credit_bytes(),
    }
