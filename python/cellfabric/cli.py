"""The ``cellfabric`` command line."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import click

from cellfabric._core import BugError, ScenarioError, SimulationError, catalog
from cellfabric.outputs import prepare_folder, remove_created
from cellfabric.provenance import __version__
from cellfabric.result import clear_results, holds_results
from cellfabric.runner import Interrupted
from cellfabric.runner import run as run_scenario
from cellfabric.scenario import parse_assignment

EXIT_BAD_INPUT = 2
EXIT_RUN_FAILED = 1
EXIT_BUG = 3
EXIT_STOPPED_EARLY = 4  # the run reached run.max_cells_in_flight; its partial results stand
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports an interrupted command


def _fail(message: str, status: int, created: list[Path] | tuple = ()) -> None:
    """Prints one line and exits; first removes the output folders this command created to check
    them (``created``), where nothing has been written into them."""
    remove_created(created)
    click.echo(f"cellfabric: error: {message}", err=True)
    sys.exit(status)


def _prepare_out(out_dir: str) -> list[Path]:
    """Checks, before any work, that results can be written into folder ``out_dir`` (creating it);
    returns the folders created for ``_fail`` to take back."""
    try:
        return prepare_folder(out_dir)
    except ScenarioError as error:
        _fail(str(error), EXIT_BAD_INPUT)


PERCENTILES = ("mean", "p1", "p50", "p75", "p90", "p95", "p99", "max")
HEADLINE = ("design", "scheduler", "architecture", "ports", "seed")


def _number(value) -> str:
    if value is None:
        return "-"  # nothing measured
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _flat(figures: dict, prefix: str = "") -> list[tuple[str, object]]:
    """``figures`` as (dotted name, value) pairs, nested sections flattened."""
    pairs = []
    for key, value in figures.items():
        if isinstance(value, dict):
            pairs += _flat(value, f"{prefix}{key}.")
        else:
            pairs.append((f"{prefix}{key}", value))
    return pairs


def _report(summary: dict) -> str:
    """A human-readable summary of any design: the headline, then every number and every
    percentile set (mean, p1 ... max) and every other section (such as layer1) it reports."""
    lines = ["  ".join(f"{k} {summary[k]}" for k in HEADLINE if k in summary)]
    if summary.get("partial"):
        start, stop = summary["measured_from_ns"], summary["measured_to_ns"]
        lines.append(f"PARTIAL: the run stopped at {stop:.6g} ns; every rate and latency below describes "
                     f"the measured window simulated, {start:.6g} ns to {stop:.6g} ns")
    if summary.get("stable") is False:
        lines.append("SATURATED: the backlog grew through the measured window; the latencies below "
                     "describe this run's length, not a steady state")
    scalars = [(k, v) for k, v in summary.items() if k not in HEADLINE and not isinstance(v, dict | list)]
    for start in range(0, len(scalars), 4):
        lines.append("  ".join(f"{k} {_number(v)}" for k, v in scalars[start : start + 4]))
    for key, value in summary.items():
        if isinstance(value, dict) and set(PERCENTILES) <= set(value):
            lines.append(f"{key}  " + "  ".join(f"{p} {value[p]:.1f}" for p in PERCENTILES))
        elif isinstance(value, dict):
            lines.append(f"{key}  " + "  ".join(f"{k} {_number(v)}" for k, v in value.items()))
    return "\n".join(lines)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="cellfabric")
def main() -> None:
    """cellfabric: a cell-accurate simulator of scheduled, low-latency fabrics."""


THREADS_HELP = ("Threads of each run (same as --set run.threads=N; auto: the cores); results are those "
                "of one thread, to the last bit.")


def thread_count(text: str) -> int | str:
    """``--threads``'s value as ``run.threads`` takes it: a number, or ``auto`` (the core checks both)."""
    try:
        return int(text)
    except ValueError:
        return text


@main.command()
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=str))
@click.option(
    "--set", "assignments", multiple=True, metavar="KEY.PATH=VALUE", help="Override a scenario key."
)
@click.option("--seed", type=int, default=None, help="Seed of the run (same as --set run.seed=N).")
@click.option("--threads", default=None, metavar="N|auto", help=THREADS_HELP)
@click.option("--out", "out_dir", type=click.Path(), default=None, help="Write results into this folder.")
@click.option("--force", is_flag=True,
              help="Write into an --out folder that holds another run's results (clearing them).")
@click.option("--json", "as_json", is_flag=True,
              help="Print exactly one JSON object on stdout: the summary, wall-clock figures under 'perf', "
              "version, scenario and command line under 'provenance'.")
def run(
    scenario: str, assignments: tuple[str, ...], seed: int | None, threads: str | None,
    out_dir: str | None, force: bool, as_json: bool,
) -> None:
    """Run one SCENARIO (a TOML file)."""
    try:
        overrides = dict(parse_assignment(a) for a in assignments)
    except ScenarioError as error:
        _fail(str(error), EXIT_BAD_INPUT)
    if threads is not None:
        assignments += (f"run.threads={threads}",)
        overrides["run.threads"] = thread_count(threads)
    created = []
    if out_dir is not None:
        created = _prepare_out(out_dir)
        if holds_results(out_dir) and not force:
            _fail(f"--out {out_dir}: holds another run's results (add --force to replace them)",
                  EXIT_BAD_INPUT)
    try:
        result = run_scenario(scenario, overrides=overrides, seed=seed)
    except ScenarioError as error:
        _fail(str(error), EXIT_BAD_INPUT, created)
    except SimulationError as error:
        _fail(str(error), EXIT_RUN_FAILED, created)
    except BugError as error:
        where = f"scenario {scenario}" + "".join(f" --set {a}" for a in assignments)
        where += f" --seed {seed}" if seed is not None else ""
        _fail(f"{error} (to reproduce: {where}; please report it)", EXIT_BUG, created)
    except Interrupted as stop:
        if out_dir is not None:
            _write(stop.result, out_dir, force)
        _fail("interrupted" + (f"; partial results in {out_dir}" if out_dir else ""), EXIT_INTERRUPTED)
    except KeyboardInterrupt:  # before the run started: nothing to write
        _fail("interrupted before the run started", EXIT_INTERRUPTED)
    if out_dir is not None:
        _write(result, out_dir, force)
    for warning in result.summary.get("warnings", []):
        click.echo(f"cellfabric: warning: {warning}", err=True)
    if as_json:
        click.echo(json.dumps({**result.summary, "perf": result.perf, "provenance": result.provenance}))
    else:
        click.echo(_report(result.summary))
        click.echo("perf  " + "  ".join(f"{k} {_number(v)}" for k, v in _flat(result.perf)))
    if result.summary.get("stopped_early"):
        where = f"; partial results in {out_dir}" if out_dir else ""
        _fail(f"{result.summary['stopped_early']}{where}", EXIT_STOPPED_EARLY)


def _write(result, out_dir: str, force: bool) -> None:
    """Writes a result into ``out_dir``, first clearing an earlier run's results if ``force``."""
    if force:
        clear_results(out_dir)
    result.write(out_dir)


def _scenario_root() -> Path | None:
    """The shipped scenarios: beside the package in a source checkout, else under the current
    directory."""
    for root in (Path(__file__).resolve().parents[2] / "scenarios", Path.cwd() / "scenarios"):
        if root.is_dir():
            return root
    return None


ABBREVIATIONS = {"Fig", "Figs", "al", "e.g", "i.e", "vs", "cf", "Eq", "Sec", "App"}


def _first_sentence(path: Path, width: int = 110) -> str:
    """The first sentence of a scenario file's header comment, cut to ``width`` characters."""
    words = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.startswith("#") or not line.strip("# "):
            break
        words.append(line.lstrip("#").strip())
    text = " ".join(words)
    end = 0
    while (end := text.find(". ", end + 1)) >= 0:
        last_word = text[:end].rsplit(" ", 1)[-1]
        if last_word not in ABBREVIATIONS:
            break
    sentence = text if end < 0 else text[: end + 1]
    return sentence if len(sentence) <= width else sentence[: width - 1].rstrip() + "…"


@main.command(name="list")
def list_all() -> None:
    """List the designs, the mechanisms a scenario can name, and the shipped scenarios."""
    entries = json.loads(catalog())
    for key in dict.fromkeys(e["key"] for e in entries):
        click.echo(f"{key}:")
        for e in (e for e in entries if e["key"] == key):
            click.echo(f"  {e['name']:<16} {e['description']}")
    root = _scenario_root()
    if root is None:
        return
    click.echo("scenarios:")
    for path in sorted(root.glob("*/*.toml")):
        name = path.relative_to(root.parent).as_posix()
        click.echo(f"  {name:<42} {_first_sentence(path)}")


@main.group()
def plan() -> None:
    """Planning arithmetic of a design, from its paper (no simulation)."""


@plan.command(name="stardust")
@click.option("--radix", type=int, default=256, show_default=True,
              help="Fabric switch ports (bundles), k: at least 2, even.")
@click.option("--uplinks", type=int, default=32, show_default=True,
              help="Uplink bundles per ToR, t: 1 to the radix.")
@click.option("--bundle", type=int, default=1, show_default=True,
              help="Lanes per bundle, l.")
@click.option("--hosts-per-tor", type=int, default=40, show_default=True,
              help="Hosts per ToR, for Fig. 2's scale.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def plan_stardust(radix: int, uplinks: int, bundle: int, hosts_per_tor: int, as_json: bool) -> None:
    """Stardust (Zilberman, Bracha and Schzukin, NSDI '19): Table 2's counts for 1-3 tiers,
    Fig. 2's scale, devices and serial links, Fig. 3's buses, App. B's pipeline parallelism,
    App. E's recovery time and overhead, the M/D/1 tail of §4.2.1, §4.1's smallest credit,
    Fig. 10(d)'s device area and Fig. 11's cost and power against a fat-tree."""
    from cellfabric.plan import PlanInputError, stardust

    try:
        result = stardust(radix, uplinks, bundle, hosts_per_tor)
    except PlanInputError as error:
        _fail(f"--{error.name.replace('_', '-')} {error.value}: {error.expected}", EXIT_BAD_INPUT)
    except OverflowError:
        _fail(f"--radix {radix}: too large (the switch counts overflow floating point)", EXIT_BAD_INPUT)
    if as_json:
        click.echo(json.dumps(result))
        return
    for section, value in result.items():
        click.echo(f"{section}:")
        if isinstance(value, list):  # a table: one row a line
            for row in value:
                click.echo("  " + "  ".join(f"{k} {_number(v)}" for k, v in row.items()))
        elif isinstance(value, dict):  # named values: one a line
            for k, v in value.items():
                click.echo(f"  {k}: {_number(v)}")
        else:
            click.echo(f"  {_number(value)}")



@plan.command(name="aquila")
@click.option("--pods", type=int, default=48, show_default=True, help="Pods, fully meshed by global links.")
@click.option("--tins-per-pod", type=int, default=12, show_default=True, help="TiNs per pod, fully meshed.")
@click.option("--hosts-per-tin", type=int, default=2, show_default=True, help="Hosts on each TiN.")
@click.option("--local-ports", type=int, default=24, show_default=True, help="Local ports per TiN.")
@click.option("--global-ports", type=int, default=8, show_default=True, help="Global ports per TiN.")
@click.option("--link-gbps", type=float, default=25.0, show_default=True,
              help="Effective rate of a GNet link, Gb/s.")
@click.option("--injection-gbps", type=float, default=200.0, show_default=True,
              help="A TiN's maximum injection, Gb/s.")
@click.option("--ip-injection-gbps", type=float, default=100.0, show_default=True,
              help="A TiN's IP injection, Gb/s.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def plan_aquila(pods: int, tins_per_pod: int, hosts_per_tin: int, local_ports: int, global_ports: int,
                link_gbps: float, injection_gbps: float, ip_injection_gbps: float, as_json: bool) -> None:
    """Aquila (Gibson et al., NSDI '22): the Clique's counts, links per pod pair, pod-pair bandwidth,
    load under uniform traffic, oversubscription under the pod shift and the widest Clique (§2, §6,
    App. A), for the Clique, its half-scale variant and the widest one."""
    from cellfabric.plan import PlanInputError
    from cellfabric.plan_aquila import aquila

    for name, value in (("link_gbps", link_gbps), ("injection_gbps", injection_gbps),
                        ("ip_injection_gbps", ip_injection_gbps)):
        if not (math.isfinite(value) and value > 0):
            _fail(f"--{name.replace('_', '-')} {value}: expected a rate above 0", EXIT_BAD_INPUT)
    try:
        result = aquila(pods, tins_per_pod, hosts_per_tin, local_ports, global_ports, link_gbps,
                        injection_gbps, ip_injection_gbps)
    except PlanInputError as error:
        _fail(f"--{error.name.replace('_', '-')} {error.value}: {error.expected}", EXIT_BAD_INPUT)
    if as_json:
        click.echo(json.dumps(result))
        return
    for section, values in result.items():
        click.echo(f"{section}:")
        for k, v in values.items():
            click.echo(f"  {k}: {_number(v)}")


@plan.command(name="aquarius")
@click.option("--rtt-us", type=float, default=12.0, show_default=True,
              help="Round trip in µs (the slides': 12, six 1 µs links each way).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON list of rows.")
def plan_aquarius(rtt_us: float, as_json: bool) -> None:
    """Aquarius (Li, Zeng, Hu and Chen, slide "Background"): the share of flows no larger than one
    round trip's bandwidth-delay product, per link rate, for the four workloads the slide names
    (the size distributions shipped in workloads/)."""
    from cellfabric.plan import PlanInputError
    from cellfabric.plan_aquarius import single_rtt_fractions

    root = _scenario_root()
    workloads = root.parent / "workloads" if root is not None else None
    if workloads is None or not workloads.is_dir():
        _fail("workloads/: not found beside scenarios/ (run from a source checkout)", EXIT_BAD_INPUT)
    try:
        rows = single_rtt_fractions(workloads, rtt_us)
    except PlanInputError as error:
        _fail(f"--rtt-us {error.value}: {error.expected}", EXIT_BAD_INPUT)
    if as_json:
        click.echo(json.dumps(rows))
        return
    click.echo(f"flows of at most one {rtt_us:g} µs round trip's bandwidth-delay product (%):")
    for row in rows:
        click.echo("  " + "  ".join(f"{k} {_number(v)}" for k, v in row.items()))


HEADLINE_METRICS = ("throughput", "goodput", "latency_cells.mean", "latency_cells.p99", "latency_ns.mean",
                    "latency_ns.p99")


def _points_text(points, axes: list[str]) -> str:
    """The sweep's points, one a line: the axes, the seeds and headline metrics as mean ± CI."""
    metrics = [m for m in HEADLINE_METRICS if m in points.columns][:4]
    lines = []
    for row in points.to_dict("records"):
        cells = [f"{a} {row[a]}" for a in axes] + [f"seeds {row['seeds']}"]
        for m in metrics:
            ci = row.get(f"{m}.ci95")
            cells.append(f"{m} {_number(row[m])}" + (f" ± {ci:.2g}" if ci == ci and ci is not None else ""))
        lines.append("  ".join(cells))
    return "\n".join(lines)


@main.command()
@click.argument("spec", metavar="SCENARIO_OR_SWEEP.toml", type=click.Path(dir_okay=False, path_type=str))
@click.option("--grid", "grids", multiple=True, metavar="KEY.PATH=V1,V2,...",
              help="An axis: a scenario key and its values (repeat for more axes; a+b=[1,2],[3,4] sets "
              "two keys together).")
@click.option("--set", "assignments", multiple=True, metavar="KEY.PATH=VALUE",
              help="Override a scenario key at every point.")
@click.option("--seeds", type=int, default=None, help="Seeds per point, counted up from run.seed [1].")
@click.option("--out", "out_dir", required=True, type=click.Path(), help="The sweep folder.")
@click.option("--jobs", type=int, default=None, help="Runs at once [the cores, divided by --threads].")
@click.option("--threads", default=None, metavar="N|auto", help=THREADS_HELP)
@click.option("--backend", default="local", show_default=True, help="local (a process pool) or ray.")
@click.option("--ray-address", default=None, help="A Ray cluster to join (default: start a local one).")
def sweep(spec: str, grids: tuple[str, ...], assignments: tuple[str, ...], seeds: int | None, out_dir: str,
          jobs: int | None, threads: str | None, backend: str, ray_address: str | None) -> None:
    """Run a scenario at every point of a grid (or a sweep file's), for --seeds seeds each, into
    --out: one folder per run, results.parquet (one row per run) and points.parquet (means and 95%
    confidence intervals over seeds). A rerun skips the runs already finished."""
    from cellfabric.sweeps import is_sweep_file, load_sweep_file, parse_grid, plan_sweep, run_planned

    try:
        if is_sweep_file(spec):
            base = load_sweep_file(spec)
        else:
            base = {"scenario": spec, "grid": {}, "seeds": 1, "overrides": {}}
        grid = {**base["grid"], **dict(parse_grid(g) for g in grids)}
        overrides = {**base["overrides"], **dict(parse_assignment(a) for a in assignments)}
        plan = plan_sweep(base["scenario"], grid, out_dir, seeds=base["seeds"] if seeds is None else seeds,
                          overrides=overrides, jobs=jobs, backend=backend,
                          threads=None if threads is None else thread_count(threads))
    except ScenarioError as error:
        _fail(str(error), EXIT_BAD_INPUT)
    created = _prepare_out(out_dir)
    try:
        result = run_planned(plan, ray_address=ray_address)
    except ScenarioError as error:
        _fail(str(error), EXIT_BAD_INPUT, created)
    except KeyboardInterrupt:
        _fail(f"interrupted; the finished runs are in {out_dir}", EXIT_INTERRUPTED)
    total = len(result.runs)
    click.echo(f"{total} runs ({len(result.points)} points x {total // max(len(result.points), 1)} seeds): "
               f"{result.ran} run, {result.skipped} already finished (skipped), {result.failed} failed")
    click.echo(_points_text(result.points, result.axes))
    click.echo(f"results: {Path(out_dir) / 'results.parquet'}")
    if result.failed:
        _fail(f"{result.failed} of {total} runs failed (their errors are in the error column of "
              f"{Path(out_dir) / 'results.parquet'})", EXIT_RUN_FAILED)


@main.command()
@click.argument("folder", type=click.Path(file_okay=False, path_type=str))
@click.option("--out", "out_file", type=click.Path(), default=None,
              help="Where to write the page (its folder is created if missing) [FOLDER/report.html].")
def report(folder: str, out_file: str | None) -> None:
    """Write a self-contained HTML report (plots inline, nothing fetched) of a run, a sweep or a
    reproduction's FOLDER: curves against load, latency percentiles and CDFs, per-port tables,
    the scenario and version, and the paper's numbers beside ours where the sweep has them."""
    from cellfabric.report import write_report

    try:
        path = write_report(folder, out_file)
    except ScenarioError as error:
        _fail(str(error), EXIT_BAD_INPUT)
    click.echo(str(path))


@main.command()
@click.argument("name", required=False)
@click.option("--list", "show_list", is_flag=True, help="List the reproductions and how long each takes.")
@click.option("--out", "out_dir", type=click.Path(), default=None,
              help="Where to write the sweeps and the report [results/NAME].")
@click.option("--set", "assignments", multiple=True, metavar="KEY.PATH=VALUE",
              help="Override a scenario key in every run (e.g. a shorter run.duration_ns for a first look).")
@click.option("--seeds", type=int, default=1, show_default=True, help="Seeds per point.")
@click.option("--jobs", type=int, default=None, help="Runs at once [the cores].")
@click.option("--backend", default="local", show_default=True, help="local (a process pool) or ray.")
@click.option("--ray-address", default=None, help="A Ray cluster to join (default: start a local one).")
def reproduce(name: str | None, show_list: bool, out_dir: str | None, assignments: tuple[str, ...],
              seeds: int, jobs: int | None, backend: str, ray_address: str | None) -> None:
    """Run the sweep behind one paper table or figure (NAME; see --list) and write its report,
    our numbers beside the paper's."""
    from cellfabric.report import comparison, reference_frame
    from cellfabric.reproduce import listing, plan_reproduction, run_reproduction

    if show_list:
        click.echo("\n".join(listing()))
        return
    if name is None:
        _fail("reproduce: expected a NAME (cellfabric reproduce --list shows them)", EXIT_BAD_INPUT)
    out_dir = out_dir or str(Path("results") / name)
    root = _scenario_root()
    if root is None:
        _fail("reproduce: the shipped scenarios/ folder was not found (run from a cellfabric checkout)",
              EXIT_BAD_INPUT)
    try:
        overrides = dict(parse_assignment(a) for a in assignments)
        plans = plan_reproduction(name, out_dir, root, seeds=seeds, jobs=jobs, backend=backend,
                                  overrides=overrides)
    except ScenarioError as error:
        _fail(str(error), EXIT_BAD_INPUT)
    created = _prepare_out(out_dir)
    try:
        results, page = run_reproduction(plans, out_dir, ray_address=ray_address)
    except ScenarioError as error:
        _fail(str(error), EXIT_BAD_INPUT, created)
    except KeyboardInterrupt:
        _fail(f"interrupted; the finished runs are in {out_dir}", EXIT_INTERRUPTED)
    failed = 0
    for part, result in results.items():
        failed += result.failed
        click.echo(f"{part}: {len(result.runs)} runs, {result.ran} run, {result.skipped} already finished, "
                   f"{result.failed} failed")
        reference = reference_frame(result.reference)
        if reference is not None:
            table = comparison(result.points, result.axes, reference).dropna(axis="columns", how="all")
            if "relative" in table:
                table["relative"] = table["relative"].map(lambda v: f"{v:+.1%}" if v == v else "")
            click.echo(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    click.echo(f"report: {page}")
    if failed:
        _fail(f"{failed} runs failed (their errors are in the report and in results.parquet)",
              EXIT_RUN_FAILED)


@main.command()
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=str))
@click.option("--set", "assignments", multiple=True, metavar="KEY.PATH=VALUE",
              help="Override a scenario key.")
@click.option("--seed", type=int, default=None, help="Seed of the run (same as --set run.seed=N).")
def show(scenario: str, assignments: tuple[str, ...], seed: int | None) -> None:
    """Print the scenario a run of SCENARIO would use, checked as a run checks it and with every
    default filled in, as TOML (a key without a value, such as an unbounded buffer, as a comment)."""
    from cellfabric.show import effective, to_toml

    try:
        overrides = dict(parse_assignment(a) for a in assignments)
        click.echo(to_toml(effective(scenario, overrides, seed)), nl=False)
    except ScenarioError as error:
        _fail(str(error), EXIT_BAD_INPUT)


@main.command()
@click.argument("design", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the reference as one JSON list.")
@click.option("--write-docs", "docs_dir", type=click.Path(file_okay=False), default=None,
              help="Write one Markdown page per design (and an index) into this folder.")
def keys(design: str | None, as_json: bool, docs_dir: str | None) -> None:
    """Print every key of DESIGN (default: of every design) with its default, unit and meaning,
    read from the config structs the parser uses."""
    from cellfabric.keys import reference, text, write_docs

    try:
        designs = reference(design)
    except ScenarioError as error:
        _fail(str(error), EXIT_BAD_INPUT)
    if docs_dir is not None:
        if design is not None:
            _fail("--write-docs writes every design's page: give no DESIGN", EXIT_BAD_INPUT)
        for path in write_docs(docs_dir):
            click.echo(f"wrote {path}")
        return
    click.echo(json.dumps(designs, indent=1, ensure_ascii=False) if as_json else text(designs))


if __name__ == "__main__":
    main()
