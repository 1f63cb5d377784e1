"""Parameter sweeps: one scenario run at every point of a grid of overrides, for several seeds.

    import cellfabric
    runs = cellfabric.sweep("scenarios/classic/islip.toml", {"traffic.load": [0.5, 0.9]}, seeds=3,
                            out="results/islip")

Each (point, seed) is one run written into its own folder ``points/<point>/seed-<n>`` of the
sweep folder, under a temporary name first and then renamed, so an interrupted sweep loses only
the runs in progress, and a rerun skips every run whose folder holds results of the same
scenario. ``results.parquet`` has one row per (point, seed) with the axes as columns;
``points.parquet`` one row per point with each metric's mean over the seeds and the half-width of
its 95% confidence interval (``<metric>.ci95``). Runs go to a process pool (``backend="local"``)
or to a Ray cluster (``backend="ray"``); the results do not depend on which.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import os
import re
import shutil
import sys
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from cellfabric._core import Error, ScenarioError, effective_scenario
from cellfabric.backends import run_locally, run_on_ray
from cellfabric.provenance import __version__
from cellfabric.runner import build
from cellfabric.scenario import load_scenario, parse_value, reference_of

SPEC_FILE = "sweep.json"
RUNS_FILE = "results.parquet"
POINTS_FILE = "points.parquet"
ERROR_FILE = "error.json"
# A grid axis may set several keys together: "a+b" = [[a1, b1], [a2, b2]].
KEY_JOINER = "+"
# Two-sided 95% quantiles of Student's t for 1-30 degrees of freedom; 1.96 beyond.
T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
       2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
       2.052, 2.048, 2.045, 2.042)


@dataclass
class SweepResult:
    """A finished sweep: ``runs`` (one row per point and seed), ``points`` (one row per point:
    means over seeds and ``<metric>.ci95`` half-widths), and what happened to the runs."""

    out: Path
    runs: pd.DataFrame
    points: pd.DataFrame
    axes: list[str]
    ran: int = 0
    skipped: int = 0
    failed: int = 0
    reference: dict[str, Any] | None = None


@dataclass
class _Run:
    """One (point, seed): its folder, what it runs (the scenario file's contents without the keys
    the point removes, the sweep's and the point's overrides, the seed), the scenario that makes,
    and why it cannot run, if it cannot."""

    point: dict[str, Any]
    seed: int
    folder: Path
    base: dict[str, Any]
    overrides: dict[str, Any]
    config: dict[str, Any] = field(init=False)
    invalid: str | None = None

    def __post_init__(self):
        self.config = load_scenario(self.base, self.overrides, self.seed)

    @property
    def job(self) -> tuple[dict[str, Any], dict[str, Any], int]:
        """What a worker needs to run it: see ``cellfabric.backends.run_point``."""
        return self.base, self.overrides, self.seed


def parse_grid(text: str) -> tuple[str, list[Any]]:
    """Reads ``--grid key=v1,v2,...``: each value a TOML literal (a bare word is a string); commas
    inside brackets do not split, so ``a+b=[1,2],[3,4]`` sets keys ``a`` and ``b`` together."""
    key, sep, values = text.partition("=")
    if not sep or not key.strip() or not values.strip():
        raise ScenarioError(f"--grid {text}: expected key.path=value1,value2,...")
    parts, depth, start = [], 0, 0
    for i, char in enumerate(values):
        depth += {"[": 1, "{": 1, "]": -1, "}": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(values[start:i])
            start = i + 1
    parts.append(values[start:])
    return key.strip(), [parse_value(p.strip()) for p in parts]


def load_sweep_file(path: str | Path) -> dict[str, Any]:
    """Reads a sweep file: ``scenario`` (path relative to the sweep file), ``seeds`` (a count),
    ``[grid]`` (key -> list of values) and ``[set]`` (key -> value, fixed for every point)."""
    path = Path(path)
    try:
        spec = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ScenarioError(f"{path}: cannot read the sweep file ({error})") from None
    unknown = set(spec) - {"scenario", "seeds", "grid", "set"}
    if unknown:
        raise ScenarioError(f"{path}: unknown key {sorted(unknown)[0]} (expected scenario, seeds, grid, set)")
    if not isinstance(spec.get("scenario"), str):
        raise ScenarioError(f"{path}: scenario: expected the path of a scenario file")
    if not isinstance(spec.get("grid", {}), dict) or not isinstance(spec.get("set", {}), dict):
        raise ScenarioError(f"{path}: grid and set must be tables of dotted keys")
    return {"scenario": str(path.parent / spec["scenario"]), "seeds": spec.get("seeds", 1),
            "grid": spec.get("grid", {}), "overrides": spec.get("set", {})}


def is_sweep_file(path: str | Path) -> bool:
    """True for a sweep file (it names a ``scenario`` and has a ``[grid]``), false for a scenario."""
    try:
        spec = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return isinstance(spec.get("scenario"), str) and isinstance(spec.get("grid"), dict)


def _axes(grid: Mapping[str, Sequence[Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Each grid axis as (its name, the overrides of each of its values), checked for shape: a
    plain key takes values; ``"a+b"`` takes lists of one value per key; an axis whose values are
    tables takes each table as the overrides of one value (keys a value leaves out stay unset)."""
    axes = []
    for name, values in grid.items():
        if isinstance(values, str | bytes | Mapping) or not isinstance(values, Sequence) or not values:
            raise ScenarioError(f"--grid {name}: expected a non-empty list of values")
        keys = name.split(KEY_JOINER)
        if all(isinstance(v, Mapping) for v in values):
            axes.append((name, [dict(v) for v in values]))
        elif len(keys) > 1:
            if any(not isinstance(v, list | tuple) or len(v) != len(keys) for v in values):
                raise ScenarioError(f"--grid {name}: expected lists of {len(keys)} values, one per key")
            axes.append((name, [dict(zip(keys, v, strict=True)) for v in values]))
        else:
            axes.append((name, [{name: v} for v in values]))
    return axes


def _points(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of the grid's values, first axis slowest, as {dotted key: value}."""
    combos = itertools.product(*[parts for _, parts in _axes(grid)])
    return [{k: v for part in combo for k, v in part.items()} for combo in combos]


def point_name(point: Mapping[str, Any]) -> str:
    """A folder name for a point, read from its values (``traffic.load=0.9,switch.ports=8``), with a
    hash of the exact values appended where characters had to be replaced or the name cut."""
    text = ",".join(f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in point.items())
    safe = re.sub(r"[^A-Za-z0-9._=,+-]", "_", text) or "base"
    if safe == text and len(safe) <= 120:
        return safe
    digest = hashlib.sha256(json.dumps(point, sort_keys=True).encode()).hexdigest()[:10]
    return f"{safe[:100]}-{digest}"


def _validate(runs: list[_Run], grid: Mapping[str, Sequence[Any]]) -> None:
    """Checks every point with the core's own scenario validation before anything runs. A grid
    value no point can use (an unknown key, a wrong type) raises ``ScenarioError`` naming it; a
    point whose combination of values alone is invalid is marked and recorded as failed."""
    errors: dict[str, str | None] = {}
    for r in runs:
        name = r.folder.parent.name
        if name not in errors:
            errors[name] = _check(r)
        r.invalid = errors[name]
    if all(e is not None for e in errors.values()):
        raise ScenarioError(next(iter(errors.values())))
    for name, parts in _axes(grid):
        for part in parts:
            using = [r for r in runs if all(k in r.point and r.point[k] == v for k, v in part.items())]
            if all(r.invalid is not None for r in using):
                value = ",".join(json.dumps(v) for v in part.values())
                raise ScenarioError(f"--grid {name}={value}: {using[0].invalid}")


def _run(point: dict[str, Any], seed: int, folder: Path, base: dict[str, Any],
         overrides: Mapping[str, Any]) -> _Run:
    """The run of ``point`` for ``seed``: keys the point sets to None are removed from the
    scenario, the others override it after the sweep's own ``overrides``."""
    base = copy.deepcopy(base)
    for key in (k for k, v in point.items() if v is None):
        *path, last = key.split(".")
        table = base
        for part in path:
            table = table.get(part) if isinstance(table, dict) else None
        if isinstance(table, dict):
            table.pop(last, None)
    values = {k: v for k, v in point.items() if v is not None}
    return _Run(point, seed, folder, base, {**overrides, **values})


def _check(run: _Run) -> str | None:
    """The core's objection to the run's scenario, or None: the scenario is built as
    ``cellfabric.run`` builds it, without running it."""
    try:
        build(run.config, [*run.overrides, "run.seed"])
    except ScenarioError as error:
        return str(error)
    return None


def _finished(run: _Run) -> bool:
    """True if the run's folder holds results of exactly this scenario."""
    try:
        stored = json.loads((run.folder / "scenario.json").read_text())
    except (OSError, ValueError):
        return False
    wanted = json.loads(json.dumps(run.config))
    # Threads change the wall time, never the results: a run finished on any count is finished.
    for config in (stored, wanted):
        config.get("run", {}).pop("threads", None)
    return (run.folder / "summary.json").exists() and stored == wanted


def _store(run: _Run, outcome: tuple[str, Any]) -> None:
    """Writes a run's results (or its error) into a temporary folder and renames it into place."""
    for stale in run.folder.parent.glob(f".{run.folder.name}.tmp-*"):  # left by a killed sweep
        shutil.rmtree(stale, ignore_errors=True)
    tmp = run.folder.with_name(f".{run.folder.name}.tmp-{os.getpid()}")
    status, value = outcome
    try:
        if status == "ok":
            value.write(tmp)
        else:
            tmp.mkdir(parents=True)
            (tmp / ERROR_FILE).write_text(json.dumps({"error": value}) + "\n")
    except BaseException:  # Ctrl-C while writing: the run counts as not run
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(run.folder, ignore_errors=True)
    os.rename(tmp, run.folder)


def _flatten(prefix: str, value: Any, row: dict[str, Any]) -> None:
    """Adds a summary's numbers and strings to ``row`` under dotted names (lists are left out)."""
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else k, v, row)
    elif not isinstance(value, list):
        row[prefix] = value


def _row(run: _Run, out: Path) -> dict[str, Any]:
    """One row of ``results.parquet``: the run's axes, seed, status, error and its summary."""
    row: dict[str, Any] = {}
    summary_file, error_file = run.folder / "summary.json", run.folder / ERROR_FILE
    if run.invalid is None and summary_file.exists():
        _flatten("", json.loads(summary_file.read_text()), row)
        _flatten("perf", json.loads((run.folder / "perf.json").read_text()), row)
        status, error = "ok", None
    elif run.invalid is None and error_file.exists():
        status, error = "failed", json.loads(error_file.read_text())["error"]
    elif run.invalid is not None:
        status, error = "failed", run.invalid
    else:
        status, error = "not run", None  # the sweep was interrupted before it
    head = {**run.point, "seed": run.seed, "status": status, "error": error,
            "folder": run.folder.relative_to(out).as_posix()}
    return {**head, **{k: v for k, v in row.items() if k not in head}}


def _table(rows: list[dict[str, Any]], axes: list[str]) -> pd.DataFrame:
    """The rows as a DataFrame; an axis mixing types (3 and "auto") is kept as text, and a point
    that leaves the key unset (None) stays unset rather than the text "nan"."""
    frame = pd.DataFrame(rows)
    frame = frame[[*axes, *(c for c in frame.columns if c not in axes)]]
    for axis in axes:
        if frame[axis].dropna().map(type).nunique() > 1:
            frame[axis] = frame[axis].map(lambda v: None if v is None or v != v else str(v))
    return frame


def summarize(runs: pd.DataFrame, axes: list[str]) -> pd.DataFrame:
    """One row per point: every numeric metric's mean over the point's successful seeds and the
    half-width of its 95% confidence interval (Student's t), ``<metric>.ci95``; ``seeds`` counts
    the seeds that succeeded."""
    ok = runs[runs["status"] == "ok"]
    metrics = [c for c in ok.columns if c not in (*axes, "seed") and not c.startswith("perf.")
               and pd.api.types.is_numeric_dtype(ok[c]) and not pd.api.types.is_bool_dtype(ok[c])]
    rows = []
    for key, group in runs.groupby(axes, sort=False, dropna=False) if axes else [((), runs)]:
        good = group[group["status"] == "ok"]
        row = dict(zip(axes, key if isinstance(key, tuple) else (key,), strict=True))
        row["seeds"] = len(good)
        for metric in metrics:
            values = good[metric].dropna().astype(float)
            row[metric] = values.mean() if len(values) else math.nan
            spread = values.std(ddof=1) if len(values) > 1 else math.nan
            t = T95[len(values) - 2] if 1 < len(values) <= len(T95) + 1 else 1.96
            row[f"{metric}.ci95"] = t * spread / math.sqrt(len(values)) if len(values) > 1 else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def _same(a: Any, b: Any) -> bool:
    """Equal values, numbers within rounding (a reference's 0.3 and a scenario's 0.3)."""
    numbers = [isinstance(v, int | float) and not isinstance(v, bool) for v in (a, b)]
    if not all(numbers):
        return a == b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def comparable(reference: Mapping[str, Any] | None, axes: list[str],
               config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The rows of a reference a sweep can be compared with: a column that is a key of the
    scenario but not an axis of the sweep holds one value at every point (the scenario's, with
    its default filled in), so only the rows with that value are kept, and the column is left
    out. None if no row is left."""
    if not reference or config is None:
        return dict(reference) if reference else None
    try:
        fixed: Any = json.loads(effective_scenario(json.dumps(config)))
    except Error:
        return dict(reference)
    columns, rows = list(reference["columns"]), [list(r) for r in reference["rows"]]
    for column in [c for c in columns if c not in axes]:
        value = fixed
        for part in column.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value is None or isinstance(value, dict | list):
            continue  # not a key of this scenario: a metric
        index = columns.index(column)
        rows = [r[:index] + r[index + 1:] for r in rows if _same(r[index], value)]
        columns.pop(index)
    return {**reference, "columns": columns, "rows": rows} if rows else None


def _execute(todo: list[_Run], backend: str, jobs: int, ray_address: str | None) -> Iterator[tuple]:
    """Runs ``todo`` on the chosen backend, yielding each run with its outcome as it finishes."""
    configs = [r.job for r in todo]
    if backend == "ray":
        outcomes = run_on_ray(configs, jobs, ray_address, [threads_of(r) for r in todo])
    else:
        outcomes = run_locally(configs, jobs)
    try:
        for index, outcome in outcomes:
            yield todo[index], outcome
    finally:
        outcomes.close()


def sweep(
    scenario: str | Path | Mapping[str, Any],
    grid: Mapping[str, Sequence[Any]],
    out: str | Path,
    seeds: int = 1,
    overrides: Mapping[str, Any] | None = None,
    jobs: int | None = None,
    backend: str = "local",
    ray_address: str | None = None,
    progress: bool | None = None,
    reference: Mapping[str, Any] | None = None,
    threads: int | str | None = None,
) -> SweepResult:
    """Runs ``scenario`` (a TOML path or a dict) with ``overrides`` at every point of ``grid``
    (dotted key -> list of values; ``"a+b": [[a1, b1], ...]`` sets keys together, and a
    list of tables ``{"name": [{"a": 1}, {"a": 2, "b": 3}]}`` sets each table's keys; a value of
    None removes the key from the scenario), each for
    ``seeds`` seeds counted up from the scenario's own ``run.seed`` (default 1), each on
    ``threads`` threads (``run.threads``; ``"auto"``: the cores), on ``jobs`` workers (default:
    the cores divided by the most threads a run takes, at least one), and writes the sweep into
    ``out``.

    A scenario's ``[reference]`` table (the paper's numbers; see ``cellfabric.report``), or
    ``reference``, is kept in ``sweep.json`` for the report. Raises ``ScenarioError`` before
    anything runs or is written for a grid value no point can use; runs that fail are recorded with
    their error in ``results.parquet`` (status ``failed``) and do not stop the others. Ctrl-C raises
    ``KeyboardInterrupt`` after writing the results of the runs that finished."""
    plan = plan_sweep(scenario, grid, out, seeds=seeds, overrides=overrides, jobs=jobs, backend=backend,
                      reference=reference, threads=threads)
    return run_planned(plan, ray_address=ray_address, progress=progress)


@dataclass
class SweepPlan:
    """A sweep checked and ready to run (see ``plan_sweep``): nothing of it is written yet."""

    out: Path
    runs: list[_Run]
    axes: list[str]
    spec: dict[str, Any]
    jobs: int | None
    backend: str


def plan_sweep(
    scenario: str | Path | Mapping[str, Any],
    grid: Mapping[str, Sequence[Any]],
    out: str | Path,
    seeds: int = 1,
    overrides: Mapping[str, Any] | None = None,
    jobs: int | None = None,
    backend: str = "local",
    reference: Mapping[str, Any] | None = None,
    threads: int | str | None = None,
) -> SweepPlan:
    """Everything ``sweep`` checks before it runs (its arguments, every point's scenario, the
    ``out`` folder's kind), with nothing run or written: ``ScenarioError`` for the first problem."""
    if not isinstance(seeds, int) or isinstance(seeds, bool) or seeds < 1:
        raise ScenarioError(f"--seeds {seeds}: expected a whole number of seeds, at least 1")
    if jobs is not None and (not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1):
        raise ScenarioError(f"--jobs {jobs}: expected a whole number of workers, at least 1")
    if backend not in ("local", "ray"):
        raise ScenarioError(f"--backend {backend}: expected local or ray")
    if backend == "ray":
        from cellfabric.backends import require_ray

        require_ray()
    if threads is not None:
        overrides = {**(overrides or {}), "run.threads": threads}
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ScenarioError(f"--out {out}: is a file; expected a folder")
    if (out / "summary.json").exists():
        raise ScenarioError(f"--out {out}: holds a single run's results, not a sweep")
    base = load_scenario(scenario)
    reference = reference if reference is not None else reference_of(scenario)
    first_seed = load_scenario(base, overrides).get("run", {}).get("seed", 1)
    if not isinstance(first_seed, int) or isinstance(first_seed, bool):
        raise ScenarioError(f"run.seed: expected an integer, got {first_seed!r}")
    points = _points(grid)
    runs = [_run(p, s, out / "points" / point_name(p) / f"seed-{s}", base, overrides or {})
            for p in points for s in range(first_seed, first_seed + seeds)]
    _validate(runs, grid)
    axes = list(dict.fromkeys(k for _, parts in _axes(grid) for part in parts for k in part))
    reference = comparable(reference, axes, next((r.config for r in runs if r.invalid is None), None))
    spec = {"cellfabric_version": __version__, "scenario": str(scenario) if not isinstance(scenario, Mapping)
            else dict(scenario), "grid": {k: list(v) for k, v in grid.items()}, "axes": axes,
            "seeds": seeds, "overrides": dict(overrides or {}), "reference": reference}
    return SweepPlan(out=out, runs=runs, axes=axes, spec=spec, jobs=jobs, backend=backend)


def threads_of(run: _Run) -> int:
    """The cores one run takes: its ``run.threads`` (all of them for ``auto``)."""
    threads = run.config.get("run", {}).get("threads", 1)
    if threads == "auto":
        return os.cpu_count() or 1
    return threads if isinstance(threads, int) and threads > 0 else 1


def default_jobs(runs: list[_Run]) -> int:
    """Runs at once where ``--jobs`` is not given: the cores, divided between runs of as many
    threads as the most any of ``runs`` takes (one at a time where one takes every core)."""
    cores = os.cpu_count() or 1
    return max(1, cores // max((threads_of(r) for r in runs), default=1))


def run_planned(plan: SweepPlan, ray_address: str | None = None, progress: bool | None = None) -> SweepResult:
    """Runs a sweep ``plan_sweep`` checked, into its ``out`` folder (see ``sweep``)."""
    out, runs, axes, reference = plan.out, plan.runs, plan.axes, plan.spec["reference"]
    out.mkdir(parents=True, exist_ok=True)
    (out / SPEC_FILE).write_text(json.dumps(plan.spec, indent=2, default=str) + "\n")

    todo = [r for r in runs if r.invalid is None and not _finished(r)]
    result = SweepResult(out=out, runs=pd.DataFrame(), points=pd.DataFrame(), axes=axes, reference=reference,
                         skipped=sum(r.invalid is None for r in runs) - len(todo))
    bar = None
    if todo and (sys.stderr.isatty() if progress is None else progress):
        from tqdm import tqdm

        bar = tqdm(total=len(todo), unit="run", file=sys.stderr, dynamic_ncols=True)
    outcomes = _execute(todo, plan.backend, plan.jobs or default_jobs(todo), ray_address)
    try:
        for run, outcome in outcomes:
            if outcome[0] == "interrupted":
                raise KeyboardInterrupt
            _store(run, outcome)
            result.ran += 1
            if bar is not None:
                bar.update()
    finally:
        outcomes.close()
        if bar is not None:
            bar.close()
        result.runs = _table([_row(r, out) for r in runs], axes)
        result.points = summarize(result.runs, axes)
        result.failed = int((result.runs["status"] == "failed").sum())
        _write_table(result.runs, out / RUNS_FILE)
        _write_table(result.points, out / POINTS_FILE)
    return result


def _write_table(frame: pd.DataFrame, path: Path) -> None:
    """Writes a Parquet table under a temporary name, then renames it into place."""
    tmp = path.with_name(f".{path.name}.tmp")
    frame.to_parquet(tmp, index=False)
    os.replace(tmp, path)


def load_runs(out: str | Path) -> pd.DataFrame:
    """The ``results.parquet`` of a sweep folder."""
    return pd.read_parquet(Path(out) / RUNS_FILE)


