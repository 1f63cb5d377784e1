"""Aquarius' background figure (Li, Zeng, Hu and Chen, "Scaling Switch-driven Flow Control with
Aquarius", slide "Background"): the share of flows that fit in one round trip, that is, whose
size is at most the link's bandwidth-delay product at an RTT of 12 µs, for the four workloads
the slide names, read from the size distributions shipped in ``workloads/``.

Two file formats: HPCC's (``size cdf_percent`` per line, a piecewise-linear CDF, as HPCC's
``traffic_gen/custom_rand.py`` reads it) and HomaSim's (the mean on the first line, then
``size cdf`` per line, a step CDF: a draw takes the first point whose CDF reaches it).
"""

from __future__ import annotations

import math
from pathlib import Path

from cellfabric.plan import PlanInputError

# The slide's workloads: its label, the shipped file, and the file's format.
WORKLOADS = (
    ("W1 Web Server", "homasim_fb_webserver.txt", "homasim"),
    ("W2 Alibaba Storage", "hpcc_alistorage2019.txt", "hpcc"),
    ("W3 Web Search", "hpcc_websearch.txt", "hpcc"),
    ("W4 FB Hadoop", "hpcc_fb_hadoop.txt", "hpcc"),
)

# The slide's round trip: 12 µs (2 × 6 links of 1 µs, the evaluation fat-tree's longest path).
RTT_US = 12.0
RATES_GBPS = (10.0, 25.0, 40.0, 100.0, 200.0, 400.0, 800.0)


def read_cdf(path: Path, form: str) -> list[tuple[float, float]]:
    """The (size in bytes, cumulative fraction) points of a shipped distribution."""
    rows = [line.split() for line in path.read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    if form == "homasim":
        rows = rows[1:]  # the mean
    scale = 100.0 if form == "hpcc" else 1.0
    return [(float(size), float(cdf) / scale) for size, cdf in rows]


def fraction_at_most(points: list[tuple[float, float]], size_bytes: float, form: str) -> float:
    """P(flow size <= ``size_bytes``) under the distribution's own reading."""
    if form == "homasim":
        return max((cdf for size, cdf in points if size <= size_bytes), default=0.0)
    for (x0, c0), (x1, c1) in zip(points, points[1:], strict=False):
        if x0 <= size_bytes < x1:
            return c0 + (c1 - c0) * (size_bytes - x0) / (x1 - x0)
    return 1.0 if size_bytes >= points[-1][0] else 0.0


def single_rtt_fractions(workloads: Path, rtt_us: float = RTT_US,
                         rates_gbps: tuple[float, ...] = RATES_GBPS) -> list[dict]:
    """One row per link rate: its BDP in bytes at ``rtt_us`` and each workload's share of flows
    (in %) no larger."""
    if not (math.isfinite(rtt_us) and rtt_us > 0):
        raise PlanInputError("rtt_us", rtt_us, "expected a finite number of µs above 0")
    cdfs = {label: (read_cdf(workloads / name, form), form) for label, name, form in WORKLOADS}
    rows = []
    for rate in rates_gbps:
        bdp_bytes = rate * 1e9 * rtt_us * 1e-6 / 8
        row = {"rate_gbps": rate, "bdp_bytes": bdp_bytes}
        for label, (points, form) in cdfs.items():
            row[label] = 100.0 * fraction_at_most(points, bdp_bytes, form)
        rows.append(row)
    return rows
