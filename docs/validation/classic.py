"""Regenerates the numbers in docs/validation/classic.md: the single-switch models against theory.

    python3 docs/validation/classic.py

Each run is 200 000 cell times (20 000 of warm-up), seed 1, uniform i.i.d. Bernoulli traffic.
"""

import cellfabric
from cellfabric.reproduce import point, reproduction_points

# 200 000 cell times of 5.12 ns (64-byte cells at 100 Gbit/s), a tenth of them warm-up.
BASE = {"run": {"seed": 1, "duration_ns": 1_024_000, "warmup_ns": 102_400}, "traffic": {"load": 1.0}}


def run(ports: int, scheduler: str, load: float, iterations: int = 1, length: int = 1) -> dict:
    """One run, `length` times the base length."""
    overrides = {
        "switch.ports": ports,
        "switch.scheduler": scheduler,
        **({"switch.iterations": iterations} if scheduler in ("islip", "pim") else {}),
        "traffic.load": load,
        "run.duration_ns": BASE["run"]["duration_ns"] * length,
        "run.warmup_ns": BASE["run"]["warmup_ns"] * length,
    }
    return cellfabric.run(BASE, overrides=overrides).summary


def main() -> None:
    print("## FIFO saturation throughput (Karol, Hluchyj & Morgan 1987, Table I)\n")
    print("| N | cellfabric | theory |\n|---|---|---|")
    fifo = reproduction_points("classic-hol")["fifo"]  # cellfabric reproduce classic-hol
    for ports, _, theory in cellfabric.scenario.reference_of("scenarios/classic/fifo.toml")["rows"]:
        theory = f"{theory} (N → ∞)" if ports == 32 else theory  # the table's N → ∞ row
        print(f"| {ports} | {point(fifo, {'switch.ports': ports})['throughput']:.4f} | {theory} |")

    print("\n## Output-queued mean wait, N = 32: (N−1)/N · p / (2(1−p)) slots\n")
    print("| load p | cellfabric wait | theory | error |\n|---|---|---|---|")
    for load, length in [(0.3, 1), (0.5, 1), (0.7, 1), (0.9, 1), (0.95, 1), (0.95, 10)]:
        s = run(32, "output_queued", load, length=length)
        theory = 31 / 32 * load / (2 * (1 - load))
        error = (s["switch_delay_mean_cells"] - theory) / theory
        label = f"{load}" if length == 1 else f"{load} (run ×{length})"
        print(f"| {label} | {s['switch_delay_mean_cells']:.4f} | {theory:.4f} | {error:+.2%} |")

    print("\n## Saturation throughput of VOQ schedulers, N = 32, load 1.0\n")
    print("| scheduler | iterations | cellfabric | theory |\n|---|---|---|---|")
    pim_theory = 1 - (1 - 1 / 32) ** 32
    for scheduler, iterations, theory in [
        ("islip", 1, "1.0 (McKeown 1999)"),
        ("islip", 4, "1.0"),
        ("pim", 1, f"{pim_theory:.4f} = 1 − (1 − 1/N)^N (→ 1 − 1/e = 0.6321)"),
        ("pim", 4, "—"),
        ("safc", 1, "1.0"),
    ]:
        throughput = run(32, scheduler, 1.0, iterations)["throughput"]
        print(f"| {scheduler} | {iterations} | {throughput:.4f} | {theory} |")

    print("\n## Mean latency in cell times against load, N = 32 (end to end: +2 cell times of links)\n")
    loads = [0.5, 0.7, 0.8, 0.9, 0.95]
    print("| scheduler | " + " | ".join(str(p) for p in loads) + " |\n|---|" + "---|" * len(loads))
    for scheduler, iterations in [("output_queued", 1), ("islip", 1), ("islip", 2), ("islip", 4), ("pim", 4)]:
        cells = [run(32, scheduler, p, iterations)["latency_cells"]["mean"] for p in loads]
        name = scheduler if scheduler == "output_queued" else f"{scheduler}-{iterations}"
        print(f"| {name} | " + " | ".join(f"{c:.2f}" for c in cells) + " |")

    print("\n## Little's law in the switch, N = 32: occupancy vs λ·W\n")
    print("| scheduler | load | occupancy | λ·W | error |\n|---|---|---|---|---|")
    cases = [("fifo", 0.55), ("islip", 0.9), ("pim", 0.6), ("output_queued", 0.9), ("safc", 0.8)]
    for scheduler, load in cases:
        s = run(32, scheduler, load)
        occupancy = s["queue_occupancy_mean_cells"]
        predicted = s["throughput"] * 32 * s["switch_delay_mean_cells"]
        error = (occupancy - predicted) / predicted
        print(f"| {scheduler} | {load} | {occupancy:.3f} | {predicted:.3f} | {error:+.2%} |")


if __name__ == "__main__":
    main()
