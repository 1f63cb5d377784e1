"""Regenerates the numbers in docs/validation/fabric.md: the 432-host k = 12 fat-tree under a
permutation with per-flow ECMP, per-cell spraying and one fixed path, and the 1 056-host canonical
Dragonfly under uniform and group-shift traffic with minimal, Valiant and UGAL routing, from
scenarios/fabric/fat-tree.toml and scenarios/fabric/dragonfly.toml. The theory they stand beside
comes from docs/validation/fabric_theory.py, which does not use the simulator.

    python3 docs/validation/fabric.py
"""

from functools import cache

import cellfabric

FAT_TREE_SEEDS = [1, 2, 3]
DRAGONFLY_CELLS = 8000
CELL_NS = 5.12  # one 64-byte cell at 100 Gbit/s


@cache
def run(topology: str, mode: str, destinations: str, load: float, seed: int = 1, cells: int = 0) -> dict:
    """One run's summary; runs are deterministic, so each is made once."""
    overrides = {"routing.mode": mode, "traffic.destinations": destinations, "traffic.load": load,
                 "run.seed": seed}
    if cells:
        overrides |= {"run.duration_ns": cells * CELL_NS, "run.warmup_ns": cells // 4 * CELL_NS}
    return cellfabric.run(f"scenarios/fabric/{topology}.toml", overrides=overrides, progress=False).summary


def loss(s: dict) -> str:
    return f"{s['cells_dropped'] / max(s['cells_injected'], 1):.1%}"


def fat_tree() -> None:
    print("Fat-tree k = 12, permutation at offered load 1.0 (throughput per host, fraction of line rate)\n")
    print("| routing | seed 1 | seed 2 | seed 3 | mean | cells dropped | p99 latency (cells) |")
    print("|---|---|---|---|---|---|---|")
    for mode in ["ecmp", "deterministic", "spray", "random", "least_loaded"]:
        runs = [run("fat-tree", mode, "permutation", 1.0, seed) for seed in FAT_TREE_SEEDS]
        mean = sum(s["throughput"] for s in runs) / len(runs)
        cells = " | ".join(f"{s['throughput']:.3f}" for s in runs)
        print(f"| {mode} | {cells} | {mean:.3f} | {loss(runs[0])} | {runs[0]['latency_cells']['p99']:.0f} |")
    print("\nFat-tree k = 12, spraying, uniform traffic\n")
    print("| offered load | throughput | cells dropped | mean latency (cells) | p99 latency (cells) |")
    print("|---|---|---|---|---|")
    for load in [0.5, 0.9, 1.0]:
        s = run("fat-tree", "spray", "uniform", load)
        print(f"| {load} | {s['throughput']:.3f} | {loss(s)} | {s['latency_cells']['mean']:.1f} | "
              f"{s['latency_cells']['p99']:.0f} |")


def dragonfly() -> None:
    print(f"\nDragonfly p = 4, a = 8, h = 4, g = 33 ({DRAGONFLY_CELLS} cell times; throughput per host)\n")
    loads = [0.03, 0.3, 0.45, 0.5, 0.6, 1.0]
    print("| routing | traffic | " + " | ".join(f"load {x:g}" for x in loads) + " |")
    print("|---|---|" + "---|" * len(loads))
    for mode in ["deterministic", "valiant", "ugal"]:
        for destinations in ["uniform", "group_shift"]:
            cells = []
            for load in loads:
                s = run("dragonfly", mode, destinations, load, cells=DRAGONFLY_CELLS)
                cells.append(f"{s['throughput']:.3f} ({loss(s)} lost)")
            print(f"| {mode} | {destinations} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    fat_tree()
    dragonfly()
