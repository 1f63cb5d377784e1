"""``cellfabric report DIR``: one self-contained HTML page (plots as inline SVG, no script, nothing
fetched) for a run folder (``run --out``), a sweep folder (``sweep --out``) or a folder of sweeps
(``reproduce``).

A sweep's page plots throughput and latency percentiles against its first numeric axis
(``traffic.load`` where it is one), one line per combination of the other axes with 95%
confidence bars over seeds, and latency CDFs; a run's page its latency CDF and tables. Where the
sweep carries the paper's numbers (its scenario's ``[reference]`` table, or one given to ``sweep``), they
are plotted beside ours and tabled with the difference. A reference has ``source`` (text),
``columns`` (axis keys, then summary metrics by dotted name, e.g. ``latency_cells.p99``) and
``rows`` (one list of values per row).
"""

from __future__ import annotations

import html
import io
import json
import math
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from cellfabric._core import ScenarioError
from cellfabric.outputs import prepare_file, remove_created
from cellfabric.sweeps import POINTS_FILE, RUNS_FILE, SPEC_FILE

REPORT_FILE = "report.html"
THROUGHPUT_METRICS = ("throughput", "goodput")
LATENCY_FAMILIES = ("latency_cells", "latency_ns", "packet_latency_us")
LATENCY_PERCENTILES = ("mean", "p50", "p99")
MAX_CDF_CURVES = 12
MAX_TABLE_ROWS = 64
STYLE = """body{font-family:sans-serif;margin:2em;max-width:75em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:90%}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
th{background:#f2f2f2}figure.plot{display:inline-block;margin:0.5em}figure.plot svg{width:36em;height:auto}
pre{background:#f7f7f7;padding:1em;overflow:auto;font-size:85%}.bad{color:#a00}"""


def write_report(folder: str | Path, out: str | Path | None = None) -> Path:
    """Writes the report of ``folder`` to ``out`` (default ``folder/report.html``), creating the
    folder of ``out`` if it is missing, and returns its path; ``ScenarioError`` before anything is
    drawn if the folder holds no results or the page could not be written there."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ScenarioError(f"{folder}: no such folder")
    if not holds_results(folder):
        raise ScenarioError(f"{folder}: holds no results (expected the summary.json of a run, the "
                            f"{RUNS_FILE} of a sweep, or folders of sweeps)")
    path = Path(out) if out is not None else folder / REPORT_FILE
    created = prepare_file(path, f"--out {path}" if out is not None else f"{path} (the default --out)")
    try:
        sections = _sections(folder)
        title = f"cellfabric report: {folder.resolve().name}"
        page = (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>"
                f"{html.escape(title)}</title><link rel=\"icon\" href=\"data:,\"><style>{STYLE}</style>"
                f"</head><body><h1>{html.escape(title)}</h1>{''.join(sections)}</body></html>\n")
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(page, encoding="utf-8")
        tmp.replace(path)
    except BaseException:
        remove_created(created)
        raise
    return path


def holds_results(folder: str | Path) -> bool:
    """True if ``folder`` holds a run's or a sweep's results, or subfolders that do."""
    folder = Path(folder)
    return any((where / name).exists() for where in (folder, *_subfolders(folder))
               for name in (RUNS_FILE, "summary.json"))


def _subfolders(folder: Path) -> list[Path]:
    return sorted(sub for sub in folder.iterdir() if sub.is_dir()) if folder.is_dir() else []


def _sections(folder: Path) -> list[str]:
    """The HTML sections of a run, a sweep, or each sweep or run in the folder's subfolders."""
    if (folder / RUNS_FILE).exists():
        return [_sweep_section(folder)]
    if (folder / "summary.json").exists():
        return [_run_section(folder)]
    if not folder.is_dir():
        return []
    parts = [sub for sub in sorted(folder.iterdir())
             if (sub / RUNS_FILE).exists() or (sub / "summary.json").exists()]
    return [f"<h2>{html.escape(sub.name)}</h2>" + _sections(sub)[0] for sub in parts]


def _svg(figure: Figure) -> str:
    """A figure as inline SVG inside a ``figure.plot`` element."""
    buffer = io.StringIO()
    # Text as text and fixed element ids: smaller pages, the same page for the same results.
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "cellfabric"}):
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    svg = buffer.getvalue()
    return f"<figure class=\"plot\">{svg[svg.index('<svg'):]}</figure>"


def _axes_figure(title: str, xlabel: str, ylabel: str) -> tuple[Figure, Any]:
    figure = Figure(figsize=(6.4, 4.0))
    axes = figure.add_subplot()
    axes.set(title=title, xlabel=xlabel, ylabel=ylabel)
    axes.grid(alpha=0.3)
    return figure, axes


def _table(frame: pd.DataFrame, max_rows: int | None = MAX_TABLE_ROWS) -> str:
    """A DataFrame as an HTML table, cut to ``max_rows`` rows (None: all)."""
    shown = frame if max_rows is None else frame.head(max_rows)
    note = f"<p>First {max_rows} of {len(frame)} rows.</p>" if len(shown) < len(frame) else ""
    return shown.to_html(index=False, na_rep="", float_format=lambda v: f"{v:.4g}", border=0) + note


def _latency_family(columns) -> str | None:
    return next((f for f in LATENCY_FAMILIES if f"{f}.p50" in columns), None)


def _cdf_plot(histograms: list[tuple[str, pd.DataFrame]]) -> str:
    """Latency CDFs, one curve per (label, latency_histogram table), in the unit of the first."""
    drawn = [(label, h) for label, h in histograms if len(h) and "count" in h]
    unit = next((c for c in ("latency_cells", "latency_ns") if drawn and c in drawn[0][1]), None)
    if unit is None:
        return ""
    figure, axes = _axes_figure("Latency CDF", unit.replace("_", " "), "fraction of cells")
    for label, h in drawn[:MAX_CDF_CURVES]:
        if unit in h:
            h = h.sort_values(unit)
            axes.step(h[unit], h["count"].cumsum() / h["count"].sum(), where="post", label=label)
    axes.set_xscale("log")
    axes.legend(fontsize="x-small")
    return _svg(figure)


def _time_series_plot(series: pd.DataFrame) -> str:
    """Throughput (items delivered per ns of each interval) and backlog (items held) against
    simulated time, from a run's ``time_series`` table (``run.sample_ns``)."""
    if not len(series):
        return ""
    figure, axes = _axes_figure("Over simulated time", "time (ns)", "delivered per ns")
    interval_ns = series["time_ns"].diff().fillna(series["time_ns"].iloc[0])
    axes.plot(series["time_ns"], series["delivered"] / interval_ns, label="delivered per ns")
    held = axes.twinx()
    held.plot(series["time_ns"], series["in_flight"], color="tab:orange", label="held (backlog)")
    held.set_ylabel("held (backlog)")
    figure.legend(fontsize="x-small", loc="upper left")
    return _svg(figure)


def _run_section(folder: Path) -> str:
    """A single run: provenance, summary numbers, latency CDF and its tables."""
    summary = json.loads((folder / "summary.json").read_text())
    provenance = _read_json(folder / "provenance.json")
    tables = {p.stem: pd.read_parquet(p) for p in sorted(folder.glob("*.parquet"))}
    scalars = pd.DataFrame([(k, v) for k, v in summary.items() if not isinstance(v, dict | list)],
                           columns=["metric", "value"])
    nested = pd.DataFrame([{"metric": k, **v} for k, v in summary.items() if isinstance(v, dict)])
    parts = [_provenance_html(provenance), "<h3>Summary</h3>", _table(scalars.astype({"value": str}))]
    if len(nested):
        parts.append(_table(nested))
    if "latency_histogram" in tables:
        parts.append(_cdf_plot([(folder.name, tables["latency_histogram"])]))
    if "time_series" in tables:
        parts.append(_time_series_plot(tables["time_series"]))
    for name, frame in tables.items():
        if name != "latency_histogram":
            parts.append(f"<h3>{html.escape(name)}</h3>{_table(frame)}")
    parts.append(_scenario_html(provenance.get("scenario") or _read_json(folder / "scenario.json")))
    return "".join(parts)


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _provenance_html(provenance: dict) -> str:
    keys = ("cellfabric_version", "source_revision", "seed", "interrupted")
    rows = "".join(f"<tr><th>{k}</th><td>{html.escape(str(provenance[k]))}</td></tr>" for k in keys
                   if k in provenance)
    return f"<table>{rows}</table>" if rows else ""


def _scenario_html(scenario: dict) -> str:
    text = html.escape(json.dumps(scenario, indent=2))
    return f"<details><summary>Scenario as run</summary><pre>{text}</pre></details>"


def _x_axis(points: pd.DataFrame, axes: list[str]) -> str | None:
    """The axis to plot against: traffic.load if swept, else the first numeric axis, else the first."""
    numeric = [a for a in axes if _numeric(points[a])]
    return next(iter([a for a in axes if a == "traffic.load"] + numeric + axes), None)


def _numeric(values: pd.Series) -> bool:
    """True for an axis of numbers (not of true/false, which is plotted as two categories)."""
    return pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)


def _series(points: pd.DataFrame, axes: list[str], x: str) -> list[tuple[str, pd.DataFrame]]:
    """The points split by the other axes' values: (label, rows sorted by x)."""
    others = [a for a in axes if a != x]
    if not others:
        return [("", points.sort_values(x))]
    groups = points.groupby(others, sort=False, dropna=False)
    return [(_label(dict(zip(others, key if isinstance(key, tuple) else (key,), strict=True))),
             group.sort_values(x)) for key, group in groups]


def _label(values: dict[str, Any]) -> str:
    """``scheduler=islip, iterations=3`` for {"switch.scheduler": "islip", "switch.iterations": 3.0},
    leaving out keys a point does not set."""
    def text(v):
        return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)

    return ", ".join(f"{k.rsplit('.', 1)[-1]}={text(v)}" for k, v in values.items()
                     if v is not None and v == v)


def _curves(points: pd.DataFrame, axes: list[str], x: str, metrics: list[str], title: str,
            reference: pd.DataFrame | None = None) -> str:
    """One plot of ``metrics`` against ``x`` for every series, with 95% bars, and the reference's
    values for the same metrics as open markers on dashed lines."""
    figure, ax = _axes_figure(title, x, ", ".join(m.rsplit(".", 1)[-1] for m in metrics)
                              if len(metrics) > 1 else metrics[0])
    categorical = not _numeric(points[x])
    order = list(dict.fromkeys(points[x])) if categorical else None
    position = (lambda values: [order.index(v) for v in values]) if categorical else (lambda values: values)
    for label, group in _series(points, axes, x):
        for metric in metrics:
            name = " ".join(s for s in (label, metric.rsplit(".", 1)[-1] if len(metrics) > 1 else "") if s)
            ci = group.get(f"{metric}.ci95")
            line = ax.errorbar(position(list(group[x])), group[metric], marker="o", markersize=3,
                               yerr=None if ci is None or ci.isna().all() else ci.fillna(0),
                               capsize=2, label=name or "cellfabric")
            if reference is not None and metric in reference:
                paper = _matching(reference, group, [a for a in axes if a != x and a in reference])
                if len(paper):
                    paper = paper.sort_values(x)
                    ax.plot(position(list(paper[x])), paper[metric], linestyle="--", marker="s",
                            fillstyle="none", color=line[0].get_color(),
                            label=f"{name + ' ' if name else ''}paper")
    if categorical:
        ax.set_xticks(range(len(order)), [str(v) for v in order])
    ax.legend(fontsize="x-small")
    return _svg(figure)


def _matching(reference: pd.DataFrame, group: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The reference rows whose ``keys`` equal the first row of ``group``."""
    mask = pd.Series(True, index=reference.index)
    for key in keys:
        mask &= reference[key] == group[key].iloc[0]
    return reference[mask]


def reference_frame(reference: dict | None) -> pd.DataFrame | None:
    """The paper's numbers as a DataFrame, or None."""
    return pd.DataFrame(reference["rows"], columns=reference["columns"]) if reference else None


def comparison(points: pd.DataFrame, axes: list[str], reference: pd.DataFrame) -> pd.DataFrame:
    """Ours beside the paper's: one row per (reference row, matching point, metric) with the
    point's axes, the paper's value, our mean and its 95% half-width over seeds, and the
    difference (absolute and relative). A reference row without a matching point gets no mean."""
    keys = [c for c in reference.columns if c in axes]
    metrics = [c for c in reference.columns if c not in keys]
    rows = []
    for _, ref in reference.iterrows():
        mask = pd.Series(True, index=points.index)
        for key in keys:
            value = ref[key]
            mask &= np.isclose(points[key], value) if isinstance(value, float) else points[key] == value
        matches = points[mask].to_dict("records") or [{k: ref[k] for k in keys}]
        for ours in matches:
            for metric in metrics:
                paper, mean = ref[metric], ours.get(metric, math.nan)
                relative = mean / paper - 1 if paper == paper and paper != 0 else math.nan
                rows.append({**{a: ours[a] for a in axes if a in ours}, "metric": metric, "paper": paper,
                             "cellfabric": mean, "ci95": ours.get(f"{metric}.ci95", math.nan),
                             "difference": mean - paper, "relative": relative})
    return pd.DataFrame(rows)


def _comparison_html(table: pd.DataFrame) -> str:
    shown = table.copy()
    shown["relative"] = shown["relative"].map(lambda v: "" if v != v else f"{v:+.1%}")
    return _table(shown, max_rows=None)


def _sweep_section(folder: Path) -> str:
    """A sweep: what was swept, the paper comparison, curves, CDFs, the points and failures."""
    spec = _read_json(folder / SPEC_FILE)
    runs = pd.read_parquet(folder / RUNS_FILE)
    points = pd.read_parquet(folder / POINTS_FILE)
    axes = [a for a in spec.get("axes", []) if a in points]
    first = runs[runs["status"] == "ok"].head(1)
    provenance = _read_json(folder / first["folder"].iloc[0] / "provenance.json") if len(first) else {}
    parts = [_provenance_html(provenance),
             f"<p>Scenario <code>{html.escape(str(spec.get('scenario', '?'))[:200])}</code>, "
             f"{len(points)} points × {spec.get('seeds', 1)} seeds = {len(runs)} runs; grid "
             f"<code>{html.escape(json.dumps(spec.get('grid', {})))}</code>, fixed "
             f"<code>{html.escape(json.dumps(spec.get('overrides', {})))}</code>.</p>"]
    reference = reference_frame(spec.get("reference"))
    if reference is not None:
        parts.append(f"<h3>Beside the paper: {html.escape(spec['reference'].get('source', ''))}</h3>")
        parts.append(_comparison_html(comparison(points, axes, reference)))
    x = _x_axis(points, axes)
    if x is not None and len(points):
        plots = []
        throughput = [m for m in THROUGHPUT_METRICS if m in points]
        if throughput:
            plots.append(_curves(points, axes, x, throughput[:1], f"{throughput[0]} against {x}", reference))
        family = _latency_family(points.columns)
        if family:
            metrics = [f"{family}.{p}" for p in LATENCY_PERCENTILES if f"{family}.{p}" in points]
            plots.append(_curves(points, axes, x, metrics, f"{family} against {x}"))
        if reference is not None:
            shown = {*throughput[:1]}
            for metric in (c for c in reference.columns if c not in axes and c in points and c not in shown):
                plots.append(_curves(points, axes, x, [metric], f"{metric}: ours and the paper's", reference))
        parts.append("<h3>Curves</h3>" + "".join(plots))
    histograms = []
    for row in runs[runs["status"] == "ok"].drop_duplicates(subset=axes or None).to_dict("records"):
        path = folder / row["folder"] / "latency_histogram.parquet"
        if path.exists() and len(histograms) < MAX_CDF_CURVES:
            label = _label({a: row[a] for a in axes})
            histograms.append((label or row["folder"], pd.read_parquet(path)))
    parts.append(_cdf_plot(histograms))
    family = _latency_family(points.columns)
    shown = (*THROUGHPUT_METRICS, *(f"{family}.{p}" for p in LATENCY_PERCENTILES))
    headline = [c for c in points.columns if c in axes or c == "seeds" or c.removesuffix(".ci95") in shown]
    parts.append(f"<h3>Points (means over seeds, ± 95% half-widths)</h3>{_table(points[headline])}")
    failed = runs[runs["status"] != "ok"]
    if len(failed):
        columns = [*axes, "seed", "status", "error"]
        parts.append(f"<h3 class=\"bad\">Runs without results</h3>{_table(failed[columns])}")
    if len(first):
        parts.append(_scenario_html(_read_json(folder / first["folder"].iloc[0] / "scenario.json")))
    return "".join(parts)
