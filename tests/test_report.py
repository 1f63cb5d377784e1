"""Reports: a self-contained HTML page for a run, a sweep and a sweep with the paper's numbers,
loaded in a real headless Chromium (no console errors, every plot drawn, no legend over a plotted
area, a screenshot kept), the comparison and plots before the tables (collapsed), a line style of
its own for every line, tick labels that do not overlap, and status 2 for a folder that holds no
results."""

import itertools
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.colors import to_hex

import cellfabric.report as report
from cellfabric.report import NO_NUMBER, NOT_RUN, comparison, layout_problems, write_report
from cellfabric.sweeps import sweep
from conftest import ROOT

SHORT = {"run.duration_ns": 51200, "run.warmup_ns": 5120}
REFERENCE = {"source": "a made-up paper", "columns": ["traffic.load", "throughput", "latency_cells.p99"],
             "rows": [[0.3, 0.31, 5.0], [0.8, 0.75, 40.0]]}


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cellfabric.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def chromium() -> str | None:
    """Debian's chromium (or another Chrome) with Playwright to drive it; the test is skipped
    without them unless CELLFABRIC_REQUIRE_BROWSER is set (CI sets it)."""
    names = ("chromium", "chromium-browser", "google-chrome")
    browser = next((p for p in map(shutil.which, names) if p), None)
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        browser = None
    if browser is None and os.environ.get("CELLFABRIC_REQUIRE_BROWSER"):
        pytest.fail("CELLFABRIC_REQUIRE_BROWSER is set but chromium or playwright is missing")
    return browser


def open_in_browser(page_path: Path, screenshot: Path) -> tuple[list[str], list[dict]]:
    """Loads the page headless, keeps a screenshot (also in $CELLFABRIC_ARTIFACTS when set) and
    returns its console errors and, for every plot, its box and the boxes of its plotted areas
    and legends as the browser drew them."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url}"))
        page.goto(page_path.resolve().as_uri(), wait_until="load")
        plots = page.evaluate("""() => [...document.querySelectorAll('figure.plot svg')].map(svg => {
            const box = e => { const r = e.getBoundingClientRect();
                               return {x0: r.left, y0: r.top, x1: r.right, y1: r.bottom}; };
            return {box: box(svg), areas: [...svg.querySelectorAll('[id^="cf-area"]')].map(box),
                    legends: [...svg.querySelectorAll('[id^="cf-legend"]')].map(box)};
        })""")
        page.screenshot(path=str(screenshot), full_page=True)
        browser.close()
    keep(screenshot)
    return errors, plots


def keep(artifact: Path) -> None:
    """A copy of a test's screenshot in $CELLFABRIC_ARTIFACTS, where it is set."""
    folder = os.environ.get("CELLFABRIC_ARTIFACTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(artifact, Path(folder) / artifact.name)


def apart(a: dict, b: dict) -> bool:
    return a["x1"] <= b["x0"] or b["x1"] <= a["x0"] or a["y1"] <= b["y0"] or b["y1"] <= a["y0"]


def check_drawn(plots: list[dict]) -> None:
    """Every plot drawn at a readable size, with its legend clear of its plotted areas."""
    for plot in plots:
        box = plot["box"]
        assert box["x1"] - box["x0"] > 100 and box["y1"] - box["y0"] > 100
        assert plot["areas"], "every plot has a plotted area"
        for legend, area in itertools.product(plot["legends"], plot["areas"]):
            assert apart(legend, area), f"a legend {legend} over the plotted area {area}"


@pytest.fixture
def figures(monkeypatch) -> list:
    """The matplotlib figures a report draws, as it draws them."""
    drawn = []
    original = report._svg

    def keep_figure(figure):
        svg = original(figure)
        drawn.append(figure)
        return svg

    monkeypatch.setattr(report, "_svg", keep_figure)
    return drawn


def check_figures(figures: list) -> None:
    """No legend over a plotted area, no overlapping tick labels, and no two lines of a plot with
    the same colour and marker."""
    assert figures
    for figure in figures:
        assert layout_problems(figure) == []
        for axes in figure.axes:
            handles, labels = axes.get_legend_handles_labels()
            lines = [h[0] if isinstance(h, tuple) else h for h in handles]
            styles = [(to_hex(line.get_color()), line.get_marker()) for line in lines]
            assert len(set(styles)) == len(styles), f"two lines look alike in {axes.get_title()!r}: {labels}"


def without_collapsed(text: str) -> str:
    return re.sub(r"<details.*?</details>", "", text, flags=re.S)


@pytest.fixture
def swept(small_scenario: Path, tmp_path: Path) -> Path:
    out = tmp_path / "sweep"
    sweep(small_scenario, {"traffic.load": [0.3, 0.8], "switch.scheduler": ["islip", "pim"]}, out, seeds=2,
          overrides=SHORT, jobs=2, reference=REFERENCE)
    return out


def test_sweep_report_renders_every_plot_in_a_headless_browser(swept: Path, tmp_path: Path, figures: list):
    if chromium() is None:
        pytest.skip("no chromium or playwright (CI sets CELLFABRIC_REQUIRE_BROWSER and installs them)")
    page = write_report(swept)
    check_figures(figures)
    text = page.read_text()
    assert "<script" not in text and not re.search(r'(src|href)="(?!data:|#)', text), "nothing to fetch"
    assert "a made-up paper" in text
    assert write_report(swept).read_text() == text, "the same results give the same page"
    # The comparison first, then the plots; every table after them is collapsed.
    assert text.index("Beside the paper") < text.index("<h3>Plots") < text.index("<details")
    assert "<table" not in without_collapsed(text[text.index("<h3>Plots"):])
    errors, plots = open_in_browser(page, tmp_path / "sweep.png")
    assert errors == []
    # throughput, latency percentiles, the reference's latency_cells.p99 and the latency CDF
    assert len(plots) == 4
    check_drawn(plots)
    assert all(plot["legends"] for plot in plots)
    assert (tmp_path / "sweep.png").stat().st_size > 10_000


def test_a_reproduction_page_says_why_the_paper_has_no_number(tmp_path: Path, figures: list):
    """Stardust's Fig. 7 (two runs cut to 0.2 ms): pull beside the paper's 100G, and push's row
    saying why the paper gives no number there, above the plots."""
    if chromium() is None:
        pytest.skip("no chromium or playwright (CI sets CELLFABRIC_REQUIRE_BROWSER and installs them)")
    out = tmp_path / "fig7"
    done = cli("reproduce", "stardust-fig7", "--out", str(out), "--set", "run.duration_ns=200000",
               "--set", "run.warmup_ns=50000")
    assert done.returncode == 0, done.stderr
    page = write_report(out)
    check_figures(figures)
    text = page.read_text()
    top = text[:text.index("<h3>Plots")]
    assert "the paper gives only port B&#x27;s share under push (66%)" in top
    assert "paper 1</span>" in top and "paper 0</span>" in top
    errors, plots = open_in_browser(page, tmp_path / "reproduction.png")
    assert errors == [] and len(plots) == 3  # goodput, packet latency, the reference's cells_dropped
    check_drawn(plots)


def test_run_report_has_the_tables_and_renders(small_scenario: Path, tmp_path: Path):
    if chromium() is None:
        pytest.skip("no chromium or playwright (CI sets CELLFABRIC_REQUIRE_BROWSER and installs them)")
    out = tmp_path / "run"
    assert cli("run", str(small_scenario), "--out", str(out)).returncode == 0
    done = cli("report", str(out))
    assert done.returncode == 0, done.stderr
    page = Path(done.stdout.strip())
    assert page == out / "report.html"
    text = page.read_text()
    assert "<h3>ports</h3>" in text and "cellfabric_version" in text
    assert text.index("<figure") < text.index("<h3>ports</h3>")
    assert "<table" not in without_collapsed(text[text.index("<figure"):]), "tables collapsed below the plot"
    errors, plots = open_in_browser(page, tmp_path / "run.png")
    assert errors == [] and len(plots) == 1
    check_drawn(plots)


def test_comparison_puts_ours_beside_the_paper_with_the_difference(swept: Path):
    points = pd.read_parquet(swept / "points.parquet")
    islip = points[points["switch.scheduler"] == "islip"]
    reference = pd.DataFrame(REFERENCE["rows"], columns=REFERENCE["columns"])
    table = comparison(islip, ["traffic.load", "switch.scheduler"], reference)
    assert list(table["metric"]) == ["throughput", "latency_cells.p99"] * 2
    row = table[(table["traffic.load"] == 0.8) & (table["metric"] == "throughput")].iloc[0]
    assert row["switch.scheduler"] == "islip"
    ours = islip.loc[islip["traffic.load"] == 0.8, "throughput"].item()
    assert row["cellfabric"] == ours and row["paper"] == 0.75
    assert row["difference"] == pytest.approx(ours - 0.75)
    assert row["relative"] == pytest.approx(ours / 0.75 - 1)
    # A reference without the scheduler axis is compared with every scheduler's point.
    both = comparison(points, ["traffic.load", "switch.scheduler"], reference)
    assert len(both) == 8 and set(both["switch.scheduler"]) == {"islip", "pim"}


def test_a_scenario_reference_table_reaches_the_report_and_not_the_core(tmp_path: Path):
    scenario = tmp_path / "with-reference.toml"
    scenario.write_text("""
[switch]
ports = 4
[traffic]
load = 0.5
[reference]
source = "Karol et al. 1987"
columns = ["switch.ports", "throughput"]
rows = [[4, 0.6553]]
""")
    out = tmp_path / "s"
    result = sweep(scenario, {"switch.ports": [4]}, out, overrides={**SHORT, "traffic.load": 1.0,
                                                                    "switch.scheduler": "fifo"})
    assert result.failed == 0
    text = write_report(out).read_text()
    assert "Karol et al. 1987" in text and "0.6553" in text


@pytest.mark.parametrize("make", ["empty", "missing", "unrelated"])
def test_report_on_a_folder_without_results_is_refused_with_status_2(tmp_path: Path, make: str):
    folder = tmp_path / "f"
    if make != "missing":
        folder.mkdir()
    if make == "unrelated":
        (folder / "notes.txt").write_text("nothing here")
    done = cli("report", str(folder))
    assert done.returncode == 2
    assert done.stderr.startswith(f"cellfabric: error: {folder}: ") and done.stderr.count("\n") == 1
    assert not (folder / "report.html").exists()


def test_curves_run_against_a_numeric_axis_and_true_false_is_not_one():
    from cellfabric.report import _x_axis

    points = pd.DataFrame({"stardust.credits": [True, False], "switch.ports": [4, 8], "x.kind": ["a", "b"]})
    assert _x_axis(points, ["stardust.credits", "switch.ports"]) == "switch.ports"
    assert _x_axis(points, ["stardust.credits", "x.kind"]) == "stardust.credits"  # categories
    loads = points.assign(**{"traffic.load": [0.5, 0.9]})
    assert _x_axis(loads, ["switch.ports", "traffic.load"]) == "traffic.load"


def test_keys_a_grid_axis_sets_together_follow_its_first_in_plots_and_labels():
    from cellfabric.report import leading_axes

    grid = {"scheduler": [{"switch.scheduler": "islip", "switch.iterations": 3},
                          {"switch.scheduler": "safc", "switch.iterations": None}],
            "traffic.packet_bytes_min+traffic.packet_bytes_max": [[256, 256], [64, 2048]],
            "traffic.load": [0.5, 1.0]}
    axes = ["switch.scheduler", "switch.iterations", "traffic.packet_bytes_min", "traffic.packet_bytes_max",
            "traffic.load"]
    assert leading_axes(axes, grid) == ["switch.scheduler", "traffic.packet_bytes_min", "traffic.load"]
    assert leading_axes(axes, None) == axes


def test_the_comparison_says_why_where_it_has_no_number_to_compare():
    points = pd.DataFrame({"traffic.load": [0.3, 0.5, 0.8], "throughput": [0.3, 0.45, 0.62],
                           "throughput.ci95": [0.01, 0.02, 0.01]})
    reference = pd.DataFrame([[0.3, 0.31], [0.5, "saturated in the paper: no number"], [0.9, 0.8]],
                             columns=["traffic.load", "throughput"])
    table = comparison(points, ["traffic.load"], reference, every_point=True)
    rows = {load: row for load, row in zip(table["traffic.load"], table.to_dict("records"), strict=True)}
    assert rows[0.3]["paper"] == 0.31 and rows[0.3]["note"] == ""
    assert rows[0.5]["cellfabric"] == 0.45 and math.isnan(rows[0.5]["paper"])
    assert rows[0.5]["note"] == "saturated in the paper: no number"
    assert math.isnan(rows[0.9]["cellfabric"]) and rows[0.9]["note"] == NOT_RUN
    assert rows[0.8]["cellfabric"] == 0.62 and rows[0.8]["note"] == NO_NUMBER
    assert len(comparison(points, ["traffic.load"], reference)) == 3, "only the reference's rows by default"
    # At the top of the page: a row per point, each with the paper's number or why there is none.
    page = report._comparison_html(table, ["traffic.load"], 3)
    cells = re.findall(r"<tr><td>([^<]*)</td><td>(.*?)</td></tr>", page)
    assert [load for load, _ in cells] == ["0.3", "0.5", "0.9", "0.8"]
    assert "paper 0.31" in cells[0][1] and "0.3 ± 0.01" in cells[0][1]
    assert "saturated in the paper" in cells[1][1] and NOT_RUN in cells[2][1] and NO_NUMBER in cells[3][1]
    assert "1 number of the reference has ours beside it: 1 within 5%" in page


def test_every_line_has_a_colour_and_marker_of_its_own(figures: list):
    styles = [report.line_style(i) for i in range(len(report.COLORS) * len(report.MARKERS))]
    assert len(set(styles)) == len(styles)
    assert styles[0][0] != styles[1][0] and styles[0][1] != styles[1][1], "neighbours differ in both"
    assert not set(report.PAPER_MARKERS) & set(report.MARKERS)
    # 24 series (more than the largest reproduction's 8), each beside a paper line.
    points = pd.DataFrame([{"traffic.load": load, "switch.ports": ports, "switch.scheduler": scheduler,
                            "throughput": load * 0.9} for ports in range(12) for scheduler in ("a", "b")
                           for load in (0.3, 0.6)])
    reference = points.assign(throughput=points["throughput"] + 0.01)
    axes = ["switch.ports", "switch.scheduler", "traffic.load"]
    report._curves(points, axes, "traffic.load", ["throughput"], "many lines", reference)
    check_figures(figures)
    assert len(figures[0].axes[0].get_legend_handles_labels()[0]) == 48


@pytest.mark.parametrize("span", [(18, 700), (18, 30), (1, 100_000)])
def test_latency_cdf_tick_labels_do_not_overlap(figures: list, span: tuple[int, int]):
    low, high = span
    values = sorted({round(low * (high / low) ** (i / 60)) for i in range(61)})
    histograms = [(f"curve {i}", pd.DataFrame({"latency_cells": values, "count": [1 + i] * len(values)}))
                  for i in range(report.MAX_CDF_CURVES)]
    assert report._cdf_plot(histograms)
    check_figures(figures)
    assert figures[0].axes[0].get_xscale() == ("linear" if high < 10 * low else "log")
