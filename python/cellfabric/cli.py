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


PERCENTILES = ("mean", "p1", "p50", "p75", "p90", "p95", "p99", "max")
HEADLINE = ("design", "scheduler", "architecture", "ports", "seed")


def _number(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _report(summary: dict) -> str:
    """A human-readable summary of any design: the headline, then every number and every
    percentile set (mean, p1 ... max) the design reports."""
    lines = ["  ".join(f"{k} {summary[k]}" for k in HEADLINE if k in summary)]
    scalars = [(k, v) for k, v in summary.items() if k not in HEADLINE and not isinstance(v, dict | list)]
    for start in range(0, len(scalars), 4):
        lines.append("  ".join(f"{k} {_number(v)}" for k, v in scalars[start : start + 4]))
    for key, value in summary.items():
        if isinstance(value, dict) and set(PERCENTILES) <= set(value):
            lines.append(f"{key}  " + "  ".join(f"{p} {value[p]:.1f}" for p in PERCENTILES))
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
@click.option("--json", "as_json", is_flag=True,
              help="Print exactly one JSON object on stdout: the summary, wall-clock figures under 'perf'.")
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
        click.echo(json.dumps({**result.summary, "perf": result.perf}))
    else:
        click.echo(_report(result.summary))
        click.echo("perf  " + "  ".join(f"{k} {_number(v)}" for k, v in result.perf.items()))


if __name__ == "__main__":
    main()
