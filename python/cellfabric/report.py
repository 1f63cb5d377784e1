"""``cellfabric report DIR``: one self-contained HTML page (plots as inline SVG, no script, nothing
fetched) for a run folder (``run --out``), a sweep folder (``sweep --out``) or a folder of sweeps
(``reproduce``).

A page opens with what a reader came for and keeps its tables collapsed below (``<details>``).
A sweep with the paper's numbers (its scenario's ``[reference]`` table, or one given to
``sweep``) opens with ours beside the paper's, one row per point and one column per metric, and
how close they are; then its plots: throughput and latency percentiles against its first numeric
axis (``traffic.load`` where it is one), one line per combination of the other axes with 95%
confidence bars over seeds, the reference's metrics with the paper's values on dashed lines, and
latency CDFs. A run's page plots its latency CDF and time series. Every line of a plot has its
own colour and marker (no two lines of one plot share both), legends sit below the plotted area,
and tick labels that would overlap are thinned or turned (``layout_problems`` checks a figure).

A reference has ``source`` (text), ``columns`` (axis keys, then summary metrics by dotted name,
e.g. ``latency_cells.p99``) and ``rows`` (one list of values per row); a text in a metric's place
says why the paper gives no number there, and the comparison shows it in that row.
"""

from __future__ import annotations

import html
import io
import itertools
import json
import math
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter
from matplotlib.transforms import Bbox

from cellfabric._core import ScenarioError
from cellfabric.outputs import prepare_file, remove_created
from cellfabric.sweeps import KEY_JOINER, POINTS_FILE, RUNS_FILE, SPEC_FILE

REPORT_FILE = "report.html"
THROUGHPUT_METRICS = ("throughput", "goodput")
LATENCY_FAMILIES = ("latency_cells", "latency_ns", "packet_latency_us")
LATENCY_PERCENTILES = ("mean", "p50", "p99")
MAX_CDF_CURVES = 12
MAX_TABLE_ROWS = 64
# Points the paper gives no number for are listed in the comparison at the top of a page while
# it stays this short; beyond, they are counted there and listed in the full comparison below.
MAX_COMPARISON_ROWS = 24
# Matplotlib's tab10 colours and ten filled markers: the colours cycle fastest, the markers
# shift by one each time the colours come round (``line_style``), so 100 lines share no pair.
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
          "#bcbd22", "#17becf")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h")
# The paper's line beside line i: i's colour, dashed, with an open marker no line of ours uses.
PAPER_MARKERS = ("x", "+", "1", "2", "3", "4")
NO_NUMBER = "the paper gives no number for this point"
NOT_RUN = "no point of this sweep has these values"
STYLE = """body{font-family:sans-serif;margin:2em;max-width:84em;color:#222}
table{border-collapse:collapse;margin:0.5em 0;font-size:90%}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:right;vertical-align:top}
th{background:#f2f2f2}div.wide{overflow-x:auto;max-width:100%}
div.plots{display:flex;flex-wrap:wrap;gap:0.5em 1.5em;align-items:flex-start}
figure.plot{margin:0}figure.plot svg{max-width:100%;height:auto}
details{margin:0.4em 0}summary{cursor:pointer;color:#225}summary h3{display:inline;font-size:100%}
pre{background:#f7f7f7;padding:1em;overflow:auto;font-size:85%}.bad{color:#a00}
table.vs td,table.vs th{text-align:left}table.vs .ours{font-weight:bold}table.vs .paper{color:#555}
table.vs .why{color:#555;font-style:italic;display:inline-block;max-width:22em}
.near{color:#176117}.mid{color:#8a5a00}.far{color:#a00}p.note{color:#444;font-size:90%}"""


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


def line_style(index: int) -> tuple[str, str]:
    """The colour and marker of line ``index`` of a plot: no two of the first
    ``len(COLORS) * len(MARKERS)`` lines share both."""
    return COLORS[index % len(COLORS)], MARKERS[(index + index // len(COLORS)) % len(MARKERS)]


def paper_marker(index: int) -> str:
    """The marker of the paper's line beside line ``index`` (drawn in that line's colour)."""
    return PAPER_MARKERS[(index // len(COLORS)) % len(PAPER_MARKERS)]


def _svg(figure: Figure) -> str:
    """A figure as inline SVG inside a ``figure.plot`` element, its tick labels thinned or turned
    where they would overlap and its legend below the plotted area."""
    _tidy(figure)
    buffer = io.StringIO()
    # Text as text and fixed element ids: smaller pages, the same page for the same results.
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "cellfabric"}):
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    svg = buffer.getvalue()
    return f"<figure class=\"plot\">{svg[svg.index('<svg'):]}</figure>"


def _axes_figure(title: str, xlabel: str, ylabel: str) -> tuple[Figure, Any]:
    figure = Figure(figsize=(5.8, 3.6))
    FigureCanvasAgg(figure)  # to measure text before the SVG is written
    axes = figure.add_subplot()
    axes.set(title=title, xlabel=xlabel, ylabel=ylabel)
    axes.grid(alpha=0.3)
    return figure, axes


def _tidy(figure: Figure) -> None:
    """Thins or turns each axis's tick labels until none overlap, then puts one legend of every
    line below the axes and their labels, in as many columns as fit their width."""
    renderer = figure.canvas.get_renderer()
    for axes in figure.axes:
        for axis in (axes.xaxis, axes.yaxis):
            _unclutter(axis, renderer)
    for index, axes in enumerate(figure.axes):
        axes.patch.set_gid(f"cf-area-{index}")  # found by the browser test
    entries = []
    for axes in figure.axes:
        drawn = list(axes.lines)
        for handle, label in zip(*axes.get_legend_handles_labels(), strict=True):
            # In the order drawn (a line with error bars is a container of its line and bars).
            line = handle[0] if isinstance(handle, tuple) else handle
            entries.append((len(entries) if line not in drawn else drawn.index(line), handle, label))
    if not entries:
        return
    _, handles, labels = zip(*sorted(entries, key=lambda e: e[0]), strict=True)
    below = Bbox.union([axes.get_tightbbox(renderer) for axes in figure.axes])
    width, height = figure.bbox.width, figure.bbox.height
    pad = 4 * figure.dpi / 72
    anchor = ((below.x0 + below.x1) / 2 / width, (below.y0 - pad) / height)
    size = "small" if len(labels) <= 12 else "x-small"
    for columns in range(min(len(labels), 4), 0, -1):
        legend = figure.legend(handles, labels, loc="upper center", bbox_to_anchor=anchor, ncols=columns,
                               fontsize=size, frameon=False, borderaxespad=0)
        if columns == 1 or legend.get_window_extent(renderer).width <= max(below.width, width):
            break
        legend.remove()
    legend.set_gid("cf-legend-0")


def _visible_labels(axis, renderer) -> list:
    """The tick labels an axis draws (its major and minor ticks within the view), as boxes."""
    low, high = sorted(axis.get_view_interval())
    boxes = []
    for locations, ticks in ((axis.get_majorticklocs(), axis.get_major_ticks),
                             (axis.get_minorticklocs(), axis.get_minor_ticks)):
        for location, tick in zip(locations, ticks(len(locations)), strict=True):
            label = tick.label1
            if low <= location <= high and label.get_visible() and label.get_text():
                boxes.append(label.get_window_extent(renderer))
    return boxes


def _crowded(axis, renderer) -> bool:
    """True if two of the axis's drawn tick labels overlap or touch (within 2 points)."""
    axis.figure.canvas.draw()
    gap = 2 * axis.figure.dpi / 72
    boxes = [box.padded(gap / 2) for box in _visible_labels(axis, renderer)]
    return any(_intersect(a, b) for a, b in itertools.combinations(boxes, 2))


def _intersect(a: Bbox, b: Bbox) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def _plain(value: float, _position=None) -> str:
    """A log axis's tick as a plain number (20, 500, 2000) rather than 2×10¹."""
    return f"{value:g}" if 1e-3 <= abs(value) < 1e6 else f"{value:.0e}"


def _unclutter(axis, renderer) -> None:
    """Fewer ticks while labels overlap (log axes: 1-2-5, then 1-3, then decades; linear: fewer
    bins), then labels turned 30° and 90° on the x axis."""
    if axis.get_scale() == "log":
        axis.set_minor_formatter(NullFormatter())
        axis.set_major_formatter(FuncFormatter(_plain))
        choices = [lambda subs=subs: axis.set_major_locator(LogLocator(base=10, subs=subs))
                   for subs in ((1.0, 2.0, 5.0), (1.0, 3.0), (1.0,))]
    elif isinstance(axis.get_major_locator(), MaxNLocator | matplotlib.ticker.AutoLocator):
        choices = [lambda bins=bins: axis.set_major_locator(MaxNLocator(nbins=bins, steps=[1, 2, 2.5, 5, 10]))
                   for bins in (8, 6, 4, 3)]
    else:
        choices = []  # categories: every label stays
    for choose in choices:
        choose()
        if not _crowded(axis, renderer):
            return
    if axis.axis_name == "x" and _crowded(axis, renderer):
        for angle in (30, 90):
            for label in axis.get_ticklabels(which="both"):
                label.set(rotation=angle, horizontalalignment="right" if angle < 90 else "center",
                          rotation_mode="anchor" if angle < 90 else "default")
            if not _crowded(axis, renderer):
                return
    labels = axis.get_ticklabels()
    for step in range(2, len(labels)):  # still too many (categories): every step-th label
        if not _crowded(axis, renderer):
            return
        for index, label in enumerate(labels):
            label.set_visible(index % step == 0)


def layout_problems(figure: Figure) -> list[str]:
    """What would make a figure hard to read: a legend over a plotted area, or overlapping tick
    labels on an axis. Empty for every figure this module draws (the tests check)."""
    renderer = figure.canvas.get_renderer()
    figure.canvas.draw()
    problems = []
    areas = [axes.get_window_extent(renderer) for axes in figure.axes]
    legends = [*figure.legends, *(a.get_legend() for a in figure.axes if a.get_legend() is not None)]
    for legend, area in itertools.product(legends, areas):
        if _intersect(legend.get_window_extent(renderer), area):
            problems.append(f"the legend overlaps the plotted area of {figure.axes[0].get_title()!r}")
    for axes in figure.axes:
        for axis in (axes.xaxis, axes.yaxis):
            boxes = _visible_labels(axis, renderer)
            if any(_intersect(a, b) for a, b in itertools.combinations(boxes, 2)):
                problems.append(f"{axis.axis_name} tick labels overlap in {axes.get_title()!r}")
    return problems


def _table(frame: pd.DataFrame, max_rows: int | None = MAX_TABLE_ROWS) -> str:
    """A DataFrame as an HTML table, cut to ``max_rows`` rows (None: all), scrolling sideways
    when wider than the page."""
    shown = frame if max_rows is None else frame.head(max_rows)
    note = f"<p>First {max_rows} of {len(frame)} rows.</p>" if len(shown) < len(frame) else ""
    table = shown.to_html(index=False, na_rep="", float_format=lambda v: f"{v:.4g}", border=0)
    return f"<div class=\"wide\">{table}</div>{note}"


def _details(title: str, body: str, opened: bool = False) -> str:
    """A collapsed section (no script: the browser opens it)."""
    return f"<details{' open' if opened else ''}><summary>{title}</summary>{body}</details>"


def _rows(count: int, what: str = "rows") -> str:
    return f"({count} {what[:-1] if count == 1 else what})"


def _latency_family(columns) -> str | None:
    return next((f for f in LATENCY_FAMILIES if f"{f}.p50" in columns), None)


def _cdf_plot(histograms: list[tuple[str, pd.DataFrame]]) -> str:
    """Latency CDFs, one curve per (label, latency_histogram table), in the unit of the first; a
    log axis where the latencies span more than a decade."""
    drawn = [(label, h) for label, h in histograms if len(h) and "count" in h]
    unit = next((c for c in ("latency_cells", "latency_ns") if drawn and c in drawn[0][1]), None)
    if unit is None:
        return ""
    figure, axes = _axes_figure("Latency CDF", unit.replace("_", " "), "fraction of cells")
    low, high = math.inf, -math.inf
    for index, (label, h) in enumerate(drawn[:MAX_CDF_CURVES]):
        if unit in h:
            h = h.sort_values(unit)
            color, marker = line_style(index)
            # A marker every ~10% of the curve's length, each curve's offset apart.
            axes.step(h[unit], h["count"].cumsum() / h["count"].sum(), where="post", label=label,
                      color=color, marker=marker, markersize=4,
                      markevery=(0.01 + 0.07 * (index % 10) / 10, 0.1))
            positive = h.loc[h[unit] > 0, unit]
            if len(positive):
                low, high = min(low, positive.min()), max(high, positive.max())
    if high > 10 * low:
        axes.set_xscale("log")
    return _svg(figure)


def _time_series_plot(series: pd.DataFrame) -> str:
    """Throughput (items delivered per ns of each interval) and backlog (items held) against
    simulated time, from a run's ``time_series`` table (``run.sample_ns``)."""
    if not len(series):
        return ""
    figure, axes = _axes_figure("Over simulated time", "time (ns)", "delivered per ns")
    interval_ns = series["time_ns"].diff().fillna(series["time_ns"].iloc[0])
    color, marker = line_style(0)
    every = max(1, len(series) // 12)
    axes.plot(series["time_ns"], series["delivered"] / interval_ns, label="delivered per ns", color=color,
              marker=marker, markersize=4, markevery=every)
    held = axes.twinx()
    color, marker = line_style(1)
    held.plot(series["time_ns"], series["in_flight"], color=color, marker=marker, markersize=4,
              markevery=(every // 2, every), label="held (backlog)")
    held.set_ylabel("held (backlog)")
    return _svg(figure)


def _run_section(folder: Path) -> str:
    """A single run: provenance, its plots, then the summary and its tables."""
    summary = json.loads((folder / "summary.json").read_text())
    provenance = _read_json(folder / "provenance.json")
    tables = {p.stem: pd.read_parquet(p) for p in sorted(folder.glob("*.parquet"))}
    scalars = pd.DataFrame([(k, v) for k, v in summary.items() if not isinstance(v, dict | list)],
                           columns=["metric", "value"])
    nested = pd.DataFrame([{"metric": k, **v} for k, v in summary.items() if isinstance(v, dict)])
    plots = []
    if "latency_histogram" in tables:
        plots.append(_cdf_plot([(folder.name, tables["latency_histogram"])]))
    if "time_series" in tables:
        plots.append(_time_series_plot(tables["time_series"]))
    parts = [_provenance_html(provenance), f"<div class=\"plots\">{''.join(plots)}</div>"]
    parts.append(_details(f"<h3>Summary</h3> {_rows(len(scalars), 'numbers')}",
                          _table(scalars.astype({"value": str}), max_rows=None), opened=True))
    if len(nested):
        parts.append(_details(f"<h3>Distributions</h3> {_rows(len(nested))}", _table(nested)))
    for name, frame in tables.items():
        if name != "latency_histogram":
            parts.append(_details(f"<h3>{html.escape(name)}</h3> {_rows(len(frame))}", _table(frame)))
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
    return _details("Scenario as run", f"<pre>{text}</pre>")


def leading_axes(axes: list[str], grid: dict[str, Any] | None) -> list[str]:
    """The axes that name a point: of the keys a grid axis sets together (``"a+b"``, or a list of
    tables), the first; the others follow it (RIFL's ``switch.iterations`` follows
    ``switch.scheduler``) and are left out of plots' axes and labels."""
    followers: set[str] = set()
    for name, values in (grid or {}).items():
        keys = name.split(KEY_JOINER)
        if isinstance(values, list) and values and all(isinstance(v, dict) for v in values):
            keys = list(dict.fromkeys(k for v in values for k in v))
        followers.update(keys[1:])
    return [a for a in axes if a not in followers]


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


def _text(value: Any) -> str:
    """An axis value as a label shows it: 3 for 3.0, none for a key the point leaves unset."""
    if value is None or value != value:
        return "none"
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _label(values: dict[str, Any]) -> str:
    """``scheduler=islip, iterations=3`` for {"switch.scheduler": "islip", "switch.iterations": 3.0}."""
    return ", ".join(f"{k.rsplit('.', 1)[-1]}={_text(v)}" for k, v in values.items())


def _numbers(values: pd.Series) -> pd.Series:
    """A reference column's numbers (its texts, the reasons for no number, as NaN)."""
    return pd.to_numeric(values.map(lambda v: v if isinstance(v, int | float) and not isinstance(v, bool)
                                    else math.nan), errors="coerce")


def _curves(points: pd.DataFrame, axes: list[str], x: str, metrics: list[str], title: str,
            reference: pd.DataFrame | None = None, keys: list[str] | None = None) -> str:
    """One plot of ``metrics`` against ``x`` for every series of ``axes``, with 95% bars, and the
    reference's values for the same metrics on dashed lines in the series' colour (matched on
    ``keys``, every swept key, default ``axes``)."""
    figure, ax = _axes_figure(title, x, ", ".join(m.rsplit(".", 1)[-1] for m in metrics)
                              if len(metrics) > 1 else metrics[0])
    categorical = not _numeric(points[x])
    order = list(dict.fromkeys(points[x])) if categorical else None
    position = (lambda values: [order.index(v) for v in values]) if categorical else (lambda values: values)
    index = 0
    for label, group in _series(points, axes, x):
        for metric in metrics:
            name = " ".join(s for s in (label, metric.rsplit(".", 1)[-1] if len(metrics) > 1 else "") if s)
            ci = group.get(f"{metric}.ci95")
            color, marker = line_style(index)
            ax.errorbar(position(list(group[x])), group[metric], color=color, marker=marker, markersize=4,
                        yerr=None if ci is None or ci.isna().all() else ci.fillna(0),
                        capsize=2, label=name or "cellfabric")
            if reference is not None and metric in reference:
                # Matched on the keys the series holds fixed (not those that follow x).
                fixed = [a for a in (keys or axes)
                         if a != x and a in reference and group[a].nunique(dropna=False) <= 1]
                paper = _matching(reference, group, fixed)
                paper = paper.assign(**{metric: _numbers(paper[metric])}).dropna(subset=[metric])
                if x not in paper:
                    # A paper row that does not name x holds at every x (a bound, or one value).
                    paper = paper.merge(group[[x]].drop_duplicates(), how="cross")
                if categorical:
                    paper = paper[paper[x].isin(order)]
                if len(paper):
                    paper = paper.sort_values(x)
                    ax.plot(position(list(paper[x])), paper[metric], linestyle="--", color=color,
                            marker=paper_marker(index), markersize=7,
                            label=f"{name} (paper)" if name else "paper")
            index += 1
    if categorical:
        ax.set_xticks(range(len(order)), [_text(v) for v in order])
        ax.set_xlim(-0.5, len(order) - 0.5)
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


def comparison(points: pd.DataFrame, axes: list[str], reference: pd.DataFrame,
               every_point: bool = False) -> pd.DataFrame:
    """Ours beside the paper's: one row per (reference row, matching point, metric) with the
    point's axes, the paper's value, our mean and its 95% half-width over seeds, the difference
    (absolute and relative), and a ``note`` where there is no number to compare: the reference's
    text where it gives one instead of a number (why the paper has none), ``NOT_RUN`` for a
    reference row no point matches. With ``every_point``, the points no reference row matches
    follow, each with ``NO_NUMBER``."""
    keys = [c for c in reference.columns if c in axes]
    metrics = [c for c in reference.columns if c not in keys]
    rows = []
    matched = pd.Series(False, index=points.index)
    for _, ref in reference.iterrows():
        mask = pd.Series(True, index=points.index)
        for key in keys:
            value = ref[key]
            mask &= np.isclose(points[key], value) if isinstance(value, float) else points[key] == value
        matched |= mask
        found = points[mask].to_dict("records")
        for ours in found or [{k: ref[k] for k in keys}]:
            for metric in metrics:
                rows.append(_compared(ours, axes, metric, ref[metric], NOT_RUN if not found else None))
    if every_point:
        for ours in points[~matched].to_dict("records"):
            for metric in metrics:
                rows.append(_compared(ours, axes, metric, NO_NUMBER, None))
    columns = [*(a for a in axes if a in points or a in keys), "metric", "paper", "cellfabric", "ci95",
               "difference", "relative", "note"]
    return pd.DataFrame(rows, columns=columns)


def _compared(ours: dict, axes: list[str], metric: str, paper: Any, missing: str | None) -> dict:
    """One row of ``comparison``: a text in the paper's place is its reason for no number."""
    note = paper if isinstance(paper, str) else missing
    paper = math.nan if isinstance(paper, str) else float(paper)
    mean = ours.get(metric, math.nan)
    mean = math.nan if mean is None else float(mean)
    relative = mean / paper - 1 if paper == paper and paper != 0 else math.nan
    return {**{a: ours[a] for a in axes if a in ours}, "metric": metric, "paper": paper, "cellfabric": mean,
            "ci95": ours.get(f"{metric}.ci95", math.nan), "difference": mean - paper, "relative": relative,
            "note": note or ""}


def _fmt(value: float) -> str:
    """4 significant digits, and large numbers in full with thousands apart (36 008, not 3.601e+04)."""
    return f"{value:,.0f}".replace(",", "\u2009") if 1e4 <= abs(value) < 1e12 else f"{value:.4g}"


def _closeness(row: dict) -> str:
    """near (within 5%), mid (within 20%) or far; equal zeros are near, zero against not zero far."""
    relative = row["relative"]
    if relative != relative:
        return "near" if row["difference"] == 0 else "far"
    return "near" if abs(relative) <= 0.05 else "mid" if abs(relative) <= 0.2 else "far"


def _vs_cell(row: dict) -> str:
    """One metric at one point: ours (± its 95% half-width), and below it the paper's and how far
    apart, or why there is nothing to set beside ours."""
    ours = row["cellfabric"]
    text = "—" if ours != ours else _fmt(ours)
    if ours == ours and row["ci95"] == row["ci95"]:
        text += f" ± {row['ci95']:.2g}" if row["ci95"] < 100 else f" ± {_fmt(round(row['ci95'], -1))}"
    below = []
    if row["paper"] == row["paper"]:
        below.append(f"<span class=\"paper\">paper {_fmt(row['paper'])}</span>")
        if ours == ours:
            relative = row["relative"]
            if relative != relative:
                apart = "equal" if row["difference"] == 0 else f"{row['difference']:+.4g}"
            else:
                apart = "±0%" if abs(relative) < 0.0005 else f"{relative:+.1%}"
            below.append(f"<span class=\"{_closeness(row)}\">{apart}</span>")
    if row["note"]:
        below.append(f"<span class=\"why\">{html.escape(row['note'])}</span>")
    return f"<span class=\"ours\">{text}</span><br>" + " ".join(below)


def _agreement(table: pd.DataFrame, axes: list[str]) -> str:
    """How close ours is to the paper's numbers, in a sentence or two."""
    both = table[table["paper"].notna() & table["cellfabric"].notna()].to_dict("records")
    if not both:
        return "<p>No number of the reference has one of ours beside it.</p>"
    counts = {c: sum(_closeness(r) == c for r in both) for c in ("near", "mid", "far")}
    numbers = ("1 number of the reference has" if len(both) == 1 else
               f"{len(both)} numbers of the reference have")
    text = (f"{numbers} ours beside {'it' if len(both) == 1 else 'them'}: {counts['near']} within 5%, "
            f"{counts['mid']} within 20%, {counts['far']} further apart.")
    far = [r for r in both if _closeness(r) == "far"]
    if far:
        worst = max(far, key=lambda r: abs(r["relative"]) if r["relative"] == r["relative"] else math.inf)
        where = _label({a: worst[a] for a in axes if a in worst})
        apart = f"{worst['relative']:+.1%}" if worst["relative"] == worst["relative"] else \
            f"{worst['difference']:+.4g}"
        text += (f" Farthest: {html.escape(worst['metric'])}{' at ' + html.escape(where) if where else ''}, "
                 f"ours {_fmt(worst['cellfabric'])} against {_fmt(worst['paper'])} ({apart}).")
    return f"<p>{text}</p>"


def _comparison_html(table: pd.DataFrame, axes: list[str], points: int) -> str:
    """The comparison at the top of a sweep: one row per point, one column per metric, each cell
    ours beside the paper's; points the paper gives no number for are listed while the table
    stays short, else counted."""
    shown_axes = [a for a in axes if a in table]
    keyed = table.assign(_key=[tuple(_text(r[a]) for a in shown_axes) for r in table.to_dict("records")])
    unreferenced = set(keyed.loc[keyed["note"] == NO_NUMBER, "_key"])
    listed = keyed
    if unreferenced and keyed["_key"].nunique() > MAX_COMPARISON_ROWS:
        listed = keyed[~keyed["_key"].isin(unreferenced)]
    metrics = list(dict.fromkeys(table["metric"]))
    head = "".join(f"<th title=\"{html.escape(a)}\">{html.escape(a.rsplit('.', 1)[-1])}</th>"
                   for a in shown_axes)
    head += "".join(f"<th>{html.escape(m)}</th>" for m in metrics)
    body = []
    for key, rows in listed.groupby("_key", sort=False):
        cells = {r["metric"]: _vs_cell(r) for r in rows.to_dict("records")}
        body.append("<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in key)
                    + "".join(f"<td>{cells.get(m, '')}</td>" for m in metrics) + "</tr>")
    parts = [_agreement(table, shown_axes),
             f"<div class=\"wide\"><table class=\"vs\"><tr>{head}</tr>{''.join(body)}</table></div>"]
    if len(listed) < len(keyed):
        parts.append(f"<p class=\"note\">The paper gives no number for the other {len(unreferenced)} of the "
                     f"{points} points; the full comparison below lists them.</p>")
    return "".join(parts)


def _full_comparison_html(table: pd.DataFrame) -> str:
    shown = table.copy()
    shown["relative"] = shown["relative"].map(lambda v: "" if v != v else f"{v:+.1%}")
    if not shown["note"].any():
        shown = shown.drop(columns="note")
    note = ""
    if shown["ci95"].isna().all():
        shown = shown.drop(columns="ci95")
        note = ("<p class=\"note\">One seed per point: no confidence interval (<code>--seeds N</code> "
                "gives one).</p>")
    return _table(shown, max_rows=None) + note


def _sweep_section(folder: Path) -> str:
    """A sweep: what was swept, ours beside the paper's, the plots; then, collapsed, the full
    comparison, the points, the failures and the scenario."""
    spec = _read_json(folder / SPEC_FILE)
    runs = pd.read_parquet(folder / RUNS_FILE)
    points = pd.read_parquet(folder / POINTS_FILE)
    axes = [a for a in spec.get("axes", []) if a in points]
    leaders = leading_axes(axes, spec.get("grid"))
    first = runs[runs["status"] == "ok"].head(1)
    provenance = _read_json(folder / first["folder"].iloc[0] / "provenance.json") if len(first) else {}
    failed = runs[runs["status"] != "ok"]
    parts = [f"<p>Scenario <code>{html.escape(str(spec.get('scenario', '?'))[:200])}</code>, "
             f"{len(points)} points × {spec.get('seeds', 1)} seeds = {len(runs)} runs; grid "
             f"<code>{html.escape(json.dumps(spec.get('grid', {})))}</code>, fixed "
             f"<code>{html.escape(json.dumps(spec.get('overrides', {})))}</code>.</p>"]
    if len(failed):
        parts.append(f"<p class=\"bad\">{len(failed)} of {len(runs)} runs have no results: their errors "
                     "are listed below.</p>")
    reference = reference_frame(spec.get("reference"))
    table = None
    if reference is not None:
        table = comparison(points, axes, reference, every_point=True)
        source = spec["reference"].get("source", "")
        beside = "the reference" if source.startswith("Theory") else "the paper"
        parts.append(f"<h3>Beside {beside}</h3><p>{html.escape(source)}</p>")
        parts.append(_comparison_html(table, leaders, len(points)))
    x = _x_axis(points, leaders)
    plots = []
    if x is not None and len(points):
        throughput = [m for m in THROUGHPUT_METRICS if m in points]
        if throughput:
            plots.append(_curves(points, leaders, x, throughput[:1], f"{throughput[0]} against {x}",
                                 reference, axes))
        family = _latency_family(points.columns)
        if family:
            metrics = [f"{family}.{p}" for p in LATENCY_PERCENTILES if f"{family}.{p}" in points]
            plots.append(_curves(points, leaders, x, metrics, f"{family} against {x}"))
        if reference is not None:
            shown = {*throughput[:1]}
            for metric in (c for c in reference.columns if c not in axes and c in points and c not in shown):
                plots.append(_curves(points, leaders, x, [metric], f"{metric}: ours and the paper's",
                                     reference, axes))
    histograms = []
    for row in runs[runs["status"] == "ok"].drop_duplicates(subset=axes or None).to_dict("records"):
        path = folder / row["folder"] / "latency_histogram.parquet"
        if path.exists() and len(histograms) < MAX_CDF_CURVES:
            label = _label({a: row[a] for a in leaders})
            histograms.append((label or row["folder"], pd.read_parquet(path)))
    plots.append(_cdf_plot(histograms))
    if any(plots):
        parts.append(f"<h3>Plots</h3><div class=\"plots\">{''.join(plots)}</div>")
    if table is not None:
        parts.append(_details(f"<h3>The comparison, row by row</h3> {_rows(len(table))}",
                              _full_comparison_html(table)))
    family = _latency_family(points.columns)
    shown = (*THROUGHPUT_METRICS, *(f"{family}.{p}" for p in LATENCY_PERCENTILES))
    headline = [c for c in points.columns if c in axes or c == "seeds" or c.removesuffix(".ci95") in shown]
    parts.append(_details(f"<h3>Points</h3> (means over seeds, ± 95% half-widths; {len(points)} rows)",
                          _table(points[headline])))
    if len(failed):
        columns = [*axes, "seed", "status", "error"]
        parts.append(_details(f"<h3 class=\"bad\">Runs without results</h3> {_rows(len(failed))}",
                              _table(failed[columns]), opened=True))
    if provenance:
        parts.append(_details("Provenance", _provenance_html(provenance)))
    if len(first):
        parts.append(_scenario_html(_read_json(folder / first["folder"].iloc[0] / "scenario.json")))
    return "".join(parts)
