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
- :func:`min_credit_bytes`: §4.1, the smallest credit an adapter's scheduler can issue;
- :func:`device_area`: Fig. 10(d) and App. C, a fabric element's area beside a ToR switch's;
- :func:`cost_and_power`: Fig. 11 (§7, App. A, App. D), a Stardust network's cost and power
  relative to a fat-tree's, from Table 2's counts and Table 3's prices.
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


# Fig. 10(d), §7 and App. C: what the text gives of the area table (its cells are not in the text).
FE_AREA_PER_TBPS = 0.666  # a fabric element's area per Tb/s over a ToR switch's (§7)
INTERFACE_SAVING = 0.70  # the network interface beyond the I/O (MAC), per port (App. C)
REST_SAVING = 0.40  # the remaining functions (App. C)


def device_area(io_share: float = 0.3, hosts: int = 32_000, radix: int = 256,
                hosts_per_adapter: int = 40) -> dict:
    """Fig. 10(d) and App. C: a fabric element's area per Tb/s is 66.6% of a ToR switch's; beyond
    the I/O (about equal in both) its interfaces save 70% per port and the rest 40%. The table's
    cells are not in the text, so the ToR's split is ours: given the I/O's share of the ToR's area
    (`io_share`, a reading), io + 0.3 f + 0.6 (1 - io - f) = 0.666 gives the interfaces' share
    f = (0.4 io - 0.066) / 0.3 (0.18 at io = 0.3), and shares of 0.165 to 0.523 only are possible.
    App. C's lookup tables: a ToR's exact-match IPv4 table takes N (32 + log2 k) bits, an
    element's reachability table (N / 40) log2 k (§4.2: "two orders of magnitude smaller")."""
    if not 0 <= io_share <= 1:
        raise PlanInputError("io_share", io_share, "expected a share of the ToR's area, 0 to 1")
    saving_gap = INTERFACE_SAVING - REST_SAVING
    interface = (REST_SAVING * io_share + 1 - REST_SAVING - FE_AREA_PER_TBPS) / saving_gap
    rest = 1 - io_share - interface
    if interface < 0 or rest < 0:
        raise PlanInputError("io_share", io_share, "expected a share that leaves the interfaces and the rest "
                             "a part of the area each (0.165 to 0.523)")
    element = io_share + (1 - INTERFACE_SAVING) * interface + (1 - REST_SAVING) * rest
    tor_bits = hosts * (32 + math.log2(radix))
    element_bits = hosts / hosts_per_adapter * math.log2(radix)
    return {
        "tor_io_share": io_share,
        "tor_interface_share": interface,
        "tor_rest_share": rest,
        "element_area_per_tbps": element,
        "tor_table_bits": tor_bits,
        "element_table_bits": element_bits,
        "table_ratio": tor_bits / element_bits,
    }


# Table 3 (App. D), list prices in USD of 12 September 2018.
PRICE_SWITCH = 16_200  # a 64 x 100GbE platform (Edgecore AS7816-64X, Wedge 100BF-65X)
PRICE_DAC = 84  # 100GbE passive copper, 2 m
PRICE_TRANSCEIVER = {1: 125, 2: 280, 4: 435}  # 25G SFP28, 50G (estimated), 100G QSFP28, short range
PRICE_FIBER = {10: 8, 100: 62}  # by length in metres
FE_COST = 0.67  # a fabric element platform's cost over a ToR's: the area ratio (§7)


def _tiers(tors: int, radix: int) -> int:
    """Fewest fat-tree tiers whose Table 2 reaches `tors` ToRs with switches of `radix` bundles."""
    tiers = 1
    while radix**tiers // 2 ** (tiers - 1) < tors:
        tiers += 1
    return tiers


def _network(hosts: int, bundle: int, stardust: bool, serdes: int, host_lanes: int,
             hosts_per_tor: int, transceiver_watts: float) -> dict:
    """One network's counts, cost and power (switch power 1 a platform, an element 0.666)."""
    tors = math.ceil(hosts / hosts_per_tor)
    radix = serdes // bundle
    uplinks = hosts_per_tor * host_lanes // bundle
    tiers = _tiers(tors, radix)
    switches = (2 * tiers - 1) * uplinks * tors / radix  # Table 2's switches per ToR, x ToRs
    bundles_per_tier = uplinks * tors  # every tier boundary carries t per ToR (reading R30)
    lanes_per_tier = bundles_per_tier * bundle
    # Stardust's lanes are links of their own, carried four to a 100G transceiver (§7).
    modules_per_tier = lanes_per_tier / 4 if stardust else bundles_per_tier
    price_module = PRICE_TRANSCEIVER[4 if stardust else bundle]
    fibers = [PRICE_FIBER[100 if tier == tiers and tiers > 1 else 10] for tier in range(1, tiers + 1)]
    links = sum(modules_per_tier * (2 * price_module + fiber) for fiber in fibers)
    switch_cost = FE_COST if stardust else 1.0
    power_share = FE_AREA_PER_TBPS if stardust else 1.0
    return {
        "tiers": tiers,
        "cost": (tors + switch_cost * switches) * PRICE_SWITCH + links + hosts * PRICE_DAC,
        "fabric_power": switches * power_share + 2 * modules_per_tier * tiers * transceiver_watts,
        "network_power": (tors + switches * power_share) + 2 * modules_per_tier * tiers * transceiver_watts,
    }


def cost_and_power(hosts: int, bundle: int, serdes: int = 256, host_lanes: int = 2, hosts_per_tor: int = 40,
                   transceiver_watts: float = 0.0) -> dict:
    """Fig. 11 (§7, App. A, App. D): a Stardust network's cost and power over a fat-tree's of
    links bundled `bundle` 25G lanes to a port (1, 2 or 4: 25G, 50G, 100G), for `hosts` hosts, 40
    a ToR on DACs, no over-subscription, switches of `serdes` lanes (Table 3's 64 x 100G platform:
    256). Our reading where §7 is silent: hosts of `host_lanes` lanes (50G: 40 hosts at 100G do not
    fit a 6.4 Tb/s ToR unsubscribed); Stardust runs every lane as a link (radix 256) through 100G
    transceivers broken out four ways; each tier boundary carries what the ToRs send up (R30);
    100 m fibers on the top tier (10 m below, and everywhere in one tier); an element costs 0.67
    of a platform and draws 0.666 of its power (Fig. 10(d)'s ratio). Power counts switches (a ToR
    or adapter 1) plus `transceiver_watts` per transceiver in platform units (§7's per-link term
    is cut from the text; 0 counts switches only). The curves are plotted, not in the text: the
    text says cost "can be cut in half", power saved up to 25% of the network's and 78% of the
    fabric's for networks up to about 10K hosts."""
    if bundle not in PRICE_TRANSCEIVER:
        raise PlanInputError("bundle", bundle,
                             "expected 1, 2 or 4 lanes of 25G (Table 3 prices 25G, 50G, 100G)")
    if hosts < 1:
        raise PlanInputError("hosts", hosts, "expected at least 1 host")
    args = (serdes, host_lanes, hosts_per_tor, transceiver_watts)
    fat_tree, ours = _network(hosts, bundle, False, *args), _network(hosts, 1, True, *args)
    return {
        "hosts": hosts,
        "bundle": bundle,
        "fat_tree_tiers": fat_tree["tiers"],
        "stardust_tiers": ours["tiers"],
        "cost": ours["cost"] / fat_tree["cost"],
        "network_power": ours["network_power"] / fat_tree["network_power"],
        "fabric_power": ours["fabric_power"] / fat_tree["fabric_power"],
    }


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
        "fig10d_area": device_area(),
        "fig11_cost_power": [
            cost_and_power(h, b) for b in (1, 2, 4) for h in (1_000, 10_000, 100_000, 1_000_000)
        ],
    }
