"""Projects a run's wall time on more cores from two measured runs of it: one on one thread and
one on two (`run.threads = 2`), each the JSON `cellfabric run --json` (or the `reference`
example) prints. The model and its assumptions are in docs/performance.md ("A speed-up model
for more cores"):

    T(P) = T1 * (1 + c) / P + windows * w2 * log2(P)

- T1: the one-thread run's wall time;
- c: what running apart costs in work, from the two-thread run: 2 * busy_mean / T1 - 1 (the
  crossings, and each partition's caches; negative where a half fits a core's caches better);
- windows: the windows of one lookahead the run takes (independent of P: the lookahead is the
  shortest cable between partitions, which any split into more than two keeps);
- w2: the wall time a window loses on two threads beyond its partition's work (the barrier and
  the slower partition's lead), (T2 - busy_mean) / windows;
- log2(P): the assumed growth of that loss with P (a barrier's rounds, and the expected lead of
  the slowest of P partitions).

Usage: python3 scripts/scaling_model.py ONE_THREAD.json TWO_THREADS.json [CORES ...]
"""

import json
import math
import sys
from pathlib import Path


def project(one: dict, two: dict, cores: list[int]) -> dict:
    """The model's terms from the two runs and its projected wall time at each core count."""
    t1 = one["perf"]["wall_s"]
    t2 = two["perf"]["wall_s"]
    threads = two["perf"]["threads"]
    busy = threads["busy_s_mean"]
    windows = threads["windows"]
    c = 2 * busy / t1 - 1
    w2 = (t2 - busy) / windows
    wall = {p: t1 * (1 + c) / p + windows * w2 * math.log2(p) for p in cores}
    return {"t1_s": t1, "t2_s": t2, "c": c, "windows": windows, "w2_us": w2 * 1e6,
            "wall_s": wall, "speedup": {p: t1 / w for p, w in wall.items()}}


def main(argv: list[str]) -> None:
    if len(argv) < 2:
        sys.exit(__doc__)
    one, two = (json.loads(Path(path).read_text()) for path in argv[:2])
    cores = [int(p) for p in argv[2:]] or [2, 16, 64]
    print(json.dumps(project(one, two, cores), indent=2))


if __name__ == "__main__":
    main(sys.argv[1:])
