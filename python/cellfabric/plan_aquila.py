"""Aquila's topology arithmetic (Gibson et al., "Aquila: A unified, low-latency fabric for datacenter
networks", NSDI '22, §2, §3.2, §5.1, §6 and App. A): the Clique's counts, its pod-to-pod bandwidth
and its oversubscription under adversarial traffic, computed from the pod size and port counts,
not quoted. The cabling is the one ``topology.kind = "clique"`` builds (``blocks/topology/clique.rs``).

- :func:`clique`: TiNs, hosts, links per TiN pair and per pod pair, spare ports, pod-pair
  bandwidth against injection, load under uniform traffic, 2:1 under the pod shift, the widest
  Clique the global ports allow;
- :func:`aquila`: the full Clique, its half-scale variant (Fig. 10 right) and the widest one.
"""

from __future__ import annotations

from cellfabric.plan import PlanInputError


def check_clique(pods: int, tins_per_pod: int, hosts_per_tin: int, local_ports: int,
                 global_ports: int) -> None:
    """Raises ``PlanInputError`` for ports that cannot form the Clique's two full meshes, as
    ``topology.kind = "clique"`` refuses them."""
    if hosts_per_tin < 1:
        raise PlanInputError("hosts_per_tin", hosts_per_tin, "expected at least 1 host per TiN")
    if global_ports < 1:
        raise PlanInputError("global_ports", global_ports, "expected at least 1 global port per TiN")
    if not 2 <= tins_per_pod <= local_ports + 1:
        raise PlanInputError("tins_per_pod", tins_per_pod, f"a pod's TiNs are fully meshed by local links: "
                             f"with {local_ports} local ports, expected 2 to {local_ports + 1} TiNs per pod")
    widest = tins_per_pod * global_ports + 1
    if not 2 <= pods <= widest:
        raise PlanInputError("pods", pods, f"pods are fully meshed by global links: a pod has "
                             f"{widest - 1} global ports, so expected 2 to {widest} pods")


def clique(pods: int = 48, tins_per_pod: int = 12, hosts_per_tin: int = 2, local_ports: int = 24,
           global_ports: int = 8, link_gbps: float = 25.0, injection_gbps: float = 200.0,
           ip_injection_gbps: float = 100.0) -> dict:
    """The Clique's counts and bandwidths. `link_gbps` is a GNet link's effective rate (§5.1's
    "2 x 25 Gbps" per pod pair), `injection_gbps` a TiN's maximum injection (§6: 200 Gb/s) and
    `ip_injection_gbps` its IP injection (§5.1: 100 Gb/s).

    Under the adversarial pod shift (every TiN of pod p sending to pod p + 1 at `injection_gbps`)
    a cell either takes one of the pod pair's direct links or is misrouted through an
    intermediate pod, crossing two global links; with every pod's global ports busy, a pod
    carries (direct + used global links) / 2 of link bandwidth, and the oversubscription is its
    demand over that (§2: "2:1 oversubscribed for worst-case adversarial traffic")."""
    check_clique(pods, tins_per_pod, hosts_per_tin, local_ports, global_ports)
    tins = pods * tins_per_pod
    per_tin_pair = local_ports // (tins_per_pod - 1)
    pod_global_ports = tins_per_pod * global_ports
    per_pod_pair = pod_global_ports // (pods - 1)
    used_global_ports = per_pod_pair * (pods - 1)
    pod_pair_gbps = per_pod_pair * link_gbps
    pod_demand_gbps = tins_per_pod * injection_gbps
    pod_global_gbps = pod_global_ports * link_gbps
    shift_capacity_gbps = (used_global_ports + per_pod_pair) * link_gbps / 2
    return {
        "pods": pods,
        "tins": tins,
        "hosts": tins * hosts_per_tin,
        "local_links_per_tin_pair": per_tin_pair,
        "spare_local_ports_per_tin": local_ports - per_tin_pair * (tins_per_pod - 1),
        "global_ports_per_pod": pod_global_ports,
        "global_links_per_pod_pair": per_pod_pair,
        "spare_global_ports_per_pod": pod_global_ports - used_global_ports,
        "pod_pairs": pods * (pods - 1) // 2,
        "global_links": pods * used_global_ports // 2,
        "pod_pair_gbps": pod_pair_gbps,
        "pod_pair_share_of_injection": pod_pair_gbps / injection_gbps,
        "pod_pair_share_of_ip_injection": pod_pair_gbps / ip_injection_gbps,
        "uniform_global_load": pod_demand_gbps * (pods - 1) / pods / pod_global_gbps,
        "pod_shift_minimal_share": pod_pair_gbps / pod_demand_gbps,
        "pod_shift_oversubscription": pod_demand_gbps / shift_capacity_gbps,
        "max_pods": pod_global_ports + 1,
        "max_tins": (pod_global_ports + 1) * tins_per_pod,
    }


def aquila(pods: int = 48, tins_per_pod: int = 12, hosts_per_tin: int = 2, local_ports: int = 24,
           global_ports: int = 8, link_gbps: float = 25.0, injection_gbps: float = 200.0,
           ip_injection_gbps: float = 100.0) -> dict:
    """For ``cellfabric plan aquila``: the Clique, its half-scale variant (half the pods, §5.1's
    Fig. 10 right) and the widest Clique (one global link per pod pair, §6)."""
    shape = dict(tins_per_pod=tins_per_pod, hosts_per_tin=hosts_per_tin, local_ports=local_ports,
                 global_ports=global_ports, link_gbps=link_gbps, injection_gbps=injection_gbps,
                 ip_injection_gbps=ip_injection_gbps)
    full = clique(pods, **shape)
    return {
        "clique": full,
        "half_scale": clique(max(pods // 2, 2), **shape),
        "widest": clique(full["max_pods"], **shape),
    }
