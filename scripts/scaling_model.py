"""Projects a run's wall time on more cores from two measured runs of it: one on one thread and
one on two (`run.threads = 2`), each the JSON `cellfabric run --json` (or the `reference`
example) prints. The model and its assumptions are in docs/performance.md ("A speed-up model
for more cores"):

    T(P) = T1 * (1 + c) / P * (1 + r2 * g(P)),   g(P) = (e(P) / e(2)) * sqrt(P / 2)   (P >= 2)

- T1: the one-thread run's wall time;
- c: what running apart costs in work, from the two-thread run: 2 * busy_mean / T1 - 1 (the
  crossings, and each partition's caches; negative where a half fits a core's caches better);
- r2: what the two-thread run lost beyond its partitions' work, relative to it:
  (T2 - busy_mean) / busy_mean (each window waits for the slower partition, and the barrier);
- g(P): how that loss grows with P partitions, with g(2) = 1. Each window waits for the slowest
  of P partitions, whose lead over the mean grows as the expected maximum of P normal draws,
  e(P); and each partition's share of a window holds 2/P of the events it held on two threads,
  so its relative spread grows as sqrt(P / 2).

Usage: python3 scripts/scaling_model.py ONE_THREAD.json TWO_THREADS.json [CORES ...]
"""

import json
import math
import sys
from pathlib import Path


def expected_maximum(draws: int) -> float:
    """The expected maximum of ``draws`` standard normal draws (a midpoint sum over [-8, 8])."""
    step = 1e-3
    total = 0.0
    for i in range(16_000):
        x = -8.0 + (i + 0.5) * step
        density = math.exp(-x * x / 2) / math.sqrt(2 * math.pi)
        below = 0.5 * (1 + math.erf(x / math.sqrt(2)))
        total += x * draws * density * below ** (draws - 1) * step
    return total


def growth(partitions: int) -> float:
    """g(P): the loss to waiting on P partitions, relative to that on two."""
    return expected_maximum(partitions) / expected_maximum(2) * math.sqrt(partitions / 2)


def project(one: dict, two: dict, cores: list[int]) -> dict:
    """The model's terms from the two runs and its projected wall time at each core count."""
    t1 = one["perf"]["wall_s"]
    t2 = two["perf"]["wall_s"]
    if "threads" not in two["perf"]:
        raise ValueError("the second run reports no perf.threads: expected a run on two threads")
    busy = two["perf"]["threads"]["busy_s_mean"]
    c = 2 * busy / t1 - 1
    r2 = (t2 - busy) / busy
    wall = {p: t1 if p == 1 else t1 * (1 + c) / p * (1 + r2 * growth(p)) for p in cores}
    return {"t1_s": t1, "t2_s": t2, "c": c, "r2": r2, "wall_s": wall,
            "speedup": {p: t1 / w for p, w in wall.items()}}


def main(argv: list[str]) -> None:
    if len(argv) < 2:
        sys.exit(__doc__)
    one, two = (json.loads(Path(path).read_text()) for path in argv[:2])
    cores = [int(p) for p in argv[2:]] or [2, 16, 64]
    try:
        print(json.dumps(project(one, two, cores), indent=2))
    except ValueError as error:
        sys.exit(f"scaling_model: {argv[1]}: {error}")


if __name__ == "__main__":
    main(sys.argv[1:])
