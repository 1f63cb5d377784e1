"""The ``cellfabric`` command line."""

from __future__ import annotations

import json
import sys

import click

from cellfabric._core import ScenarioError, SimulationError
from cellfabric.runner import run as run_scenario
from cellfabric.scenario import parse_assignment

EXIT_BAD_INPUT = 2
EXIT_RUN_FAILED = 1


def _fail(message: str, status: int) -> None:
    click.echo(f"cellfabric: error: {message}", err=True)
    sys.exit(status)


def _report(summary: dict) -> str:
    lat = summary["latency_cells"]
    lines = [
        f"design {summary['design']}  scheduler {summary['scheduler']}  ports {summary['ports']}  "
        f"seed {summary['seed']}",
        f"offered load {summary['offered_load']:.4f}  throughput {summary['throughput']:.4f}  "
        f"goodput {summary['goodput']:.4f}",
        "latency (cell times)  "
        + "  ".join(f"{k} {lat[k]:.1f}" for k in ("mean", "p1", "p50", "p75", "p90", "p95", "p99", "max")),
        f"latency mean {summary['latency_ns']['mean']:.1f} ns  p99 {summary['latency_ns']['p99']:.1f} ns",
        f"cells injected {summary['cells_injected']}  delivered {summary['cells_delivered']}  "
        f"dropped {summary['cells_dropped']}  in flight {summary['cells_in_flight']}",
        f"{summary['events']} events in {summary['wall_s']:.2f} s  "
        f"({summary['events_per_s']:.3g} events/s, {summary['cell_hops_per_s']:.3g} cell-hops/s)",
    ]
    return "\n".join(lines)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """cellfabric: a cell-accurate simulator of scheduled, low-latency fabrics."""


@main.command()
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=str))
@click.option(
    "--set", "assignments", multiple=True, metavar="KEY.PATH=VALUE", help="Override a scenario key."
)
@click.option("--seed", type=int, default=None, help="Seed of the run (same as --set run.seed=N).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None, help="Write results here.")
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON summary on stdout.")
def run(
    scenario: str, assignments: tuple[str, ...], seed: int | None, out_dir: str | None, as_json: bool
) -> None:
    """Run one SCENARIO (a TOML file)."""
    try:
        overrides = dict(parse_assignment(a) for a in assignments)
        result = run_scenario(scenario, overrides=overrides, seed=seed)
    except ScenarioError as error:
        _fail(str(error), EXIT_BAD_INPUT)
    except SimulationError as error:
        _fail(str(error), EXIT_RUN_FAILED)
    if out_dir is not None:
        result.write(out_dir)
    if as_json:
        click.echo(json.dumps(result.summary))
    else:
        click.echo(_report(result.summary))


if __name__ == "__main__":
    main()
