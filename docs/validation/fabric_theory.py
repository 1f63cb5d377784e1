"""Independent analytic / fluid theory for the fat-tree and Dragonfly validation runs.

    python3 docs/validation/fabric_theory.py [--k 12] [--load 1.0] [--samples 2000] [--seed 1]

This file never imports the simulator: it is the yardstick the cell-level results are compared against.

Fat-tree (Al-Fares et al. 2008), k-ary, n = k^3/4 hosts, every directed link capacity 1 (host line rate = 1).
Traffic is a uniformly random permutation of the hosts; every flow offers load L. Self-pairs (sigma(h) = h)
send nothing over the fabric and are *excluded* from every average. Routing is per-flow ECMP (uniform
independent hash at the edge and at the aggregation switch) or per-cell spraying, modelled as its fluid
limit: each flow split evenly over all its minimal paths. It prints

1. the exact probability that a flow shares its edge->agg (agg->core) uplink with another flow of its edge
   switch (pod), with a Monte Carlo check;
2. Monte Carlo over random permutations and hashes of the fraction of flows sharing a directed link, and
   of the mean per-flow throughput (units of host line rate) under max-min fair sharing (progressive
   filling) and under the "FIFO proportional" fluid model of drop-tail / output-queued switches fed by
   open-loop sources (links processed hop by hop; a link scales every arriving flow by min(1, 1/load));
3. Dragonfly (Kim, Dally, Scott & Abts 2008) p = 4, a = 8, h = 4, g = 33 saturation throughput per
   terminal from global-link load, checked by an exact fluid computation of every link's load.
"""

import argparse
import math
import sys
import time
from fractions import Fraction

import numpy as np

TIERS = ("host up", "edge->agg", "agg->core", "core->agg", "agg->edge", "host down")


# ---------------------------------------------------------------------------------------------------------
# 1. Exact uplink collision probability (balls into bins over a random permutation)
# ---------------------------------------------------------------------------------------------------------
def exact_collision(n: int, group: int, bins: int) -> float:
    """P(a flow leaving a group of `group` hosts shares its uplink with another flow of that group).

    For a uniform permutation sigma, sigma(S) of a fixed host set S (|S| = s) is a uniform s-subset, so the
    number J of hosts of S whose destination is in S (self included) is hypergeometric:
        P(J = j) = C(s, j) C(n - s, s - j) / C(n, s),      m = s - J flows leave the group.
    (The marginal P(destination outside S) is (n - s)/n, not (n - s)/(n - 1), and the m flows are not
    independent draws.) Each leaving flow hashes uniformly over `bins` uplinks, so a tagged flow collides
    with probability 1 - (1 - 1/bins)^(m - 1); picking the tagged flow uniformly among leaving flows
    size-biases m:
        P(collide) = E[m (1 - (1 - 1/bins)^(m - 1))] / E[m],    E[m] = s (n - s) / n.
    Edge->agg: s = k/2 hosts, bins = k/2. Agg->core: a pod's s = k^2/4 hosts, each inter-pod flow picks
    (agg, core port) uniformly from bins = k^2/4 links out of the pod. By sigma -> sigma^-1 symmetry the
    agg->edge (core->agg) downlink has the same value as the edge->agg (agg->core) uplink.
    """
    q = Fraction(bins - 1, bins)
    pmf = [
        Fraction(math.comb(group, j) * math.comb(n - group, group - j), math.comb(n, group))
        for j in range(group + 1)
    ]
    assert sum(pmf) == 1
    num = sum(p * (group - j) * (1 - q ** (group - j - 1)) for j, p in enumerate(pmf) if j < group)
    den = sum(p * (group - j) for j, p in enumerate(pmf))
    assert den == Fraction(group * (n - group), n)
    return float(num / den)


# ---------------------------------------------------------------------------------------------------------
# 2. Fat-tree fluid models
# ---------------------------------------------------------------------------------------------------------
def fat_tree_links(k: int, dst: np.ndarray, a: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Link id (0..n-1 within each of the 6 tiers) of every path at every tier, -1 where skipped.

    dst: (B, n, 1) destinations; a, c: aggregation index / core port of each path, broadcast to (B, n, P).
    Aggregation switch j of a pod connects to cores j*k/2 .. j*k/2 + k/2 - 1, so core a*k/2 + c reaches
    aggregation switch a of the destination pod: the downward path is fixed by (a, c).
    """
    s, n = k // 2, dst.shape[1]
    src = np.arange(n)[None, :, None]
    se, de = src // s, dst // s
    sp, dp = se // s, de // s
    up, inter = se != de, sp != dp
    shape = np.broadcast_shapes(dst.shape, a.shape, c.shape)
    ids = [
        src + 0 * dst,  # host -> edge
        np.where(up, se * s + a, -1),  # edge -> agg a
        np.where(inter, (sp * s + a) * s + c, -1),  # agg -> core a*s + c
        np.where(inter, (a * s + c) * k + dp, -1),  # core -> agg a of pod dp
        np.where(up, (dp * s + a) * s + de % s, -1),  # agg -> edge
        dst + 0 * src,  # edge -> host
    ]
    valid = dst != src  # self-pairs are excluded
    return np.stack([np.where(valid, np.broadcast_to(x, shape), -1) for x in ids])


def fifo_fluid(ids: np.ndarray, w: float, load: float) -> np.ndarray:
    """Per-flow delivered rate: at each tier a link scales every arriving path rate by min(1, 1/arrival).

    Splitting is always even, so path-level rates equal switch-level rates (paths of a flow that meet again
    downstream carry equal shares of what the flow brought there)."""
    _, b, n, _ = ids.shape
    rate = np.where(ids[0] >= 0, load * w, 0.0)
    off = (np.arange(b) * n)[:, None, None]
    for t in range(6):
        use = ids[t] >= 0
        lid = (ids[t] + off)[use]
        arrival = np.bincount(lid, weights=rate[use], minlength=b * n)
        rate[use] *= np.minimum(1.0, 1.0 / np.maximum(arrival, 1e-300))[lid]
    return rate.sum(axis=2)


def max_min_fair(ids: np.ndarray, w: float, load: float) -> tuple[np.ndarray, np.ndarray]:
    """Progressive filling (demand L per flow) with fixed even splits; also flags flows sharing a link."""
    _, b, n, p = ids.shape
    nl = 6 * n
    use = ids >= 0
    flow = np.broadcast_to(np.arange(b * n).reshape(b, n, 1), ids.shape[1:])
    ef = np.concatenate([flow[use[t]] for t in range(6)])
    el = np.concatenate([(ids[t] + t * n + (np.arange(b) * nl)[:, None, None])[use[t]] for t in range(6)])
    # sharing: count distinct flows per link using one canonical path slot per (flow, link)
    s = round(math.sqrt(p))
    slot = np.arange(p)
    canon = [slot == 0, slot % s == 0, slot >= 0, slot >= 0, slot % s == 0, slot == 0]
    keep = np.concatenate([(use[t] & canon[t])[use[t]] for t in range(6)])
    nflows = np.bincount(el[keep], minlength=b * nl)
    shares = np.bincount(ef, weights=nflows[el] >= 2, minlength=b * n) > 0

    x = np.zeros(b * n)
    active = use[0].any(axis=2).ravel()
    level = np.zeros(b)
    while active.any():
        wa = np.bincount(el, weights=active[ef], minlength=b * nl) * w
        used = np.bincount(el, weights=x[ef], minlength=b * nl) * w
        with np.errstate(divide="ignore", invalid="ignore"):
            head = np.where(wa > 0, (1.0 - used) / wa, np.inf).reshape(b, nl)
        inc = np.minimum(head.min(axis=1), load - level)
        level += inc
        x[active] = np.repeat(level, n)[active]
        sat = (head <= inc[:, None] + 1e-9).ravel()
        frozen = np.bincount(ef, weights=sat[el], minlength=b * n) > 0
        active &= ~(frozen | np.repeat(level >= load - 1e-12, n))
    return x.reshape(b, n), shares.reshape(b, n)


def simulate(k: int, load: float, samples: int, seed: int) -> dict:
    """Per-permutation results for ECMP and spraying (common random permutations)."""
    rng = np.random.default_rng(seed)
    s, n = k // 2, k**3 // 4
    out: dict = {key: [] for key in ("ecmp", "spray")}
    coll = []  # ECMP, per sample and tier: flows sharing that tier's link, flows using the tier
    spray_min = np.inf
    done = 0
    while done < samples:
        b = min(samples - done, max(1, 400_000 // (n * s * s)))
        dst = rng.permuted(np.tile(np.arange(n), (b, 1)), axis=1)[:, :, None]
        valid = dst[:, :, 0] != np.arange(n)
        nvalid = valid.sum(axis=1)
        routes = {
            "ecmp": (rng.integers(0, s, (b, n, 1)), rng.integers(0, s, (b, n, 1))),
            "spray": (np.arange(s * s)[None, None] // s, np.arange(s * s)[None, None] % s),
        }
        for name, (a, c) in routes.items():
            ids = fat_tree_links(k, dst, a, c)
            w = 1.0 / ids.shape[3]
            mm, shares = max_min_fair(ids, w, load)
            ff = fifo_fluid(ids, w, load)
            out[name].append(np.stack([(v * valid).sum(axis=1) / nvalid for v in (mm, ff, shares)]))
            if name == "spray":
                spray_min = min(spray_min, mm[valid].min(), ff[valid].min())
            else:
                u = ids[:, :, :, 0] >= 0
                lid = np.where(u, ids[:, :, :, 0] + (np.arange(b) * n)[:, None], 0)
                hit = np.stack(
                    [np.bincount(x[m], minlength=b * n)[x] >= 2 for x, m in zip(lid, u, strict=True)]
                )
                coll.append(np.stack([(hit & u).sum(axis=2), u.sum(axis=2)], axis=2))
        done += b
    res = {name: np.concatenate(v, axis=1) for name, v in out.items()}
    res["coll"], res["spray_min"] = np.concatenate(coll, axis=1), spray_min
    return res


# ---------------------------------------------------------------------------------------------------------
# 3. Dragonfly
# ---------------------------------------------------------------------------------------------------------
def dragonfly_loads(p: int, a: int, h: int, pattern: str, routing: str) -> tuple[float, float]:
    """Exact fluid load (per unit injection rate per terminal) of the busiest global and local link.

    Router-level traffic matrix; group i's link to group j sits on router ((j - i - 1) mod g) // h of i.
    Minimal: src router -> (local) -> router owning the global link -> global -> (local) -> dst router.
    Valiant: minimal to the entry router of an intermediate group m (uniform over groups != src, dst
    groups), then minimal to the destination; intra-group traffic also detours (m != src group).
    """
    g = a * h + 1
    nr, nt = g * a, g * a * p

    def owner(i, j):
        return i * a + ((j - i - 1) % g) // h

    def minimal(sr, dr, wt):
        gs, gd = sr // a, dr // a
        x = gs != gd
        o1, o2 = owner(gs, gd), owner(gd, gs)
        ls = np.concatenate([sr[~x], sr[x], o2[x]])
        ld = np.concatenate([dr[~x], o1[x], dr[x]])
        lw = np.concatenate([wt[~x], wt[x], wt[x]])
        m = ls != ld
        return (
            np.bincount(ls[m] * nr + ld[m], lw[m], minlength=nr * nr),
            np.bincount(gs[x] * g + gd[x], wt[x], minlength=g * g),
        )

    sr, dr = (v.ravel() for v in np.meshgrid(np.arange(nr), np.arange(nr), indexing="ij"))
    if pattern == "uniform":  # each terminal: uniform over the other nt - 1 terminals
        wt = np.where(sr == dr, p * (p - 1), p * p) / (nt - 1)
    else:  # group shift: uniform over the a*p terminals of group i + 1
        wt = np.where(dr // a == (sr // a + 1) % g, p / a, 0.0)
    keep = wt > 0
    sr, dr, wt = sr[keep], dr[keep], wt[keep]
    if routing == "minimal":
        local, glob = minimal(sr, dr, wt)
    else:
        sr, dr, wt = (np.repeat(v, g) for v in (sr, dr, wt))
        m = np.tile(np.arange(g), len(sr) // g)
        gs, gd = sr // a, dr // a
        ok = (m != gs) & (m != gd)
        wt = wt / np.where(gs == gd, g - 1, g - 2)
        sr, dr, wt, m, gs = sr[ok], dr[ok], wt[ok], m[ok], gs[ok]
        entry = owner(m, gs)
        (l1, g1), (l2, g2) = minimal(sr, entry, wt), minimal(entry, dr, wt)
        local, glob = l1 + l2, g1 + g2
    return glob.max(), local.max()


def dragonfly_table(p: int = 4, a: int = 8, h: int = 4) -> list[tuple]:
    g = a * h + 1
    ap, nt = a * p, g * a * p
    # Closed forms (theta = injection rate per terminal, saturation = min(1, 1 / busiest link load)):
    # MIN, shift: all ap terminals of group i use the single link i -> i+1:  ap*theta <= 1.
    # VAL, uniform: every cell crosses 2 global links. Link x -> y carries first hops (from x, via y):
    #   ap*theta*[ap/(nt-1) + (ap-1)/((nt-1)(g-1))] = ap*theta/(g-1), the same again as second hops
    #   (to y, via x): 2*ap*theta/(g-1) <= 1, i.e. theta = (g-1)/(2ap) = h/(2p) (= total global capacity
    #   g(g-1) over the 2*nt*theta global crossings).
    # VAL, shift: link x -> y (y != x+1) carries ap*theta/(g-2) first hops + ap*theta/(g-2) second hops.
    # MIN, uniform: link x -> y carries ap * ap*theta/(nt-1), bound (nt-1)/ap^2 > 1: injection-limited.
    cases = [
        ("minimal, group shift", "1/(ap)", 1 / ap, "shift", "minimal"),
        ("Valiant, uniform", "(g-1)/(2ap)", (g - 1) / (2 * ap), "uniform", "valiant"),
        ("Valiant, group shift", "(g-2)/(2ap)", (g - 2) / (2 * ap), "shift", "valiant"),
        ("minimal, uniform", "min(1, (N-1)/(ap)^2)", min(1.0, (nt - 1) / ap**2), "uniform", "minimal"),
    ]
    rows = []
    for label, formula, value, pattern, routing in cases:
        gl, lo = dragonfly_loads(p, a, h, pattern, routing)
        rows.append((label, formula, value, gl, lo, min(1.0, 1.0 / max(gl, lo))))
    return rows


# ---------------------------------------------------------------------------------------------------------
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=12)
    parser.add_argument("--load", type=float, default=1.0)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    k, load, samples = args.k, args.load, args.samples
    assert k % 2 == 0 and k >= 4 and samples >= 2
    t0 = time.perf_counter()
    n, s = k**3 // 4, k // 2

    res = simulate(k, load, samples, args.seed)
    print(
        f"## Fat-tree k = {k}: {n} hosts, random permutation (self-pairs excluded), load L = {load}, "
        f"{samples} samples, seed {args.seed}\n"
    )
    print("| ECMP link | exact P(flow shares it) | Monte Carlo ± s.e. |\n|---|---|---|")
    exact = {1: exact_collision(n, s, s), 2: exact_collision(n, s * s, s * s)}
    exact[4], exact[3] = exact[1], exact[2]
    for t in (1, 2, 3, 4):
        hit, used = res["coll"][t].T  # pooled ratio over samples; s.e. by the delta method
        mc = hit.sum() / used.sum()
        se = np.std(hit - mc * used, ddof=1) / math.sqrt(samples) / used.mean()
        print(f"| {TIERS[t]} | {exact[t]:.5f} | {mc:.5f} ± {se:.5f} |")

    print("\n| routing | model | mean throughput | std | p5 | p95 | flows sharing a link |")
    print("|---|---|---|---|---|---|---|")
    for name in ("ecmp", "spray"):
        mm, ff, share = res[name]
        for model, v in (("max-min fair", mm), ("FIFO proportional", ff)):
            p5, p95 = np.percentile(v, [5, 95])
            print(
                f"| {name} | {model} | {v.mean():.4f} | {v.std(ddof=1):.4f} | {p5:.4f} | {p95:.4f} "
                f"| {share.mean():.4f} |"
            )
    print(
        f"\nSpraying fluid limit: min per-flow throughput over all samples and both models = "
        f"{res['spray_min']:.6f} (expected min(L, 1) = {min(load, 1.0)})"
    )

    print("\n## Dragonfly p = 4, a = 8, h = 4, g = 33 (N = 1056): saturation throughput per terminal\n")
    print(
        "| routing, traffic | formula | closed form | busiest global link / θ | busiest local link / θ "
        "| fluid θ* |\n|---|---|---|---|---|---|"
    )
    for label, formula, value, gl, lo, sat in dragonfly_table():
        print(f"| {label} | {formula} | {value:.5f} | {gl:.5f} | {lo:.5f} | {sat:.5f} |")
    print(f"\n(run time {time.perf_counter() - t0:.1f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
