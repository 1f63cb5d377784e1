"""Reports: a self-contained HTML page for a run, a sweep and a sweep with the paper's numbers,
loaded in a real headless Chromium (no console errors, every plot drawn, a screenshot), and
status 2 for a folder that holds no results."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from cellfabric.report import comparison, write_report
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
    """Loads the page headless; returns its console errors and the box of every plot."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url}"))
        page.goto(page_path.resolve().as_uri(), wait_until="load")
        plots = page.locator("figure.plot svg")
        boxes = [plots.nth(i).bounding_box() for i in range(plots.count())]
        page.screenshot(path=str(screenshot), full_page=True)
        browser.close()
    return errors, boxes


@pytest.fixture
def swept(small_scenario: Path, tmp_path: Path) -> Path:
    out = tmp_path / "sweep"
    sweep(small_scenario, {"traffic.load": [0.3, 0.8], "switch.scheduler": ["islip", "pim"]}, out, seeds=2,
          overrides=SHORT, jobs=2, reference=REFERENCE)
    return out


def test_sweep_report_renders_every_plot_in_a_headless_browser(swept: Path, tmp_path: Path):
    if chromium() is None:
        pytest.skip("no chromium or playwright (CI sets CELLFABRIC_REQUIRE_BROWSER and installs them)")
    page = write_report(swept)
    text = page.read_text()
    assert "<script" not in text and not re.search(r'(src|href)="(?!data:|#)', text), "nothing to fetch"
    assert "a made-up paper" in text
    assert write_report(swept).read_text() == text, "the same results give the same page"
    errors, boxes = open_in_browser(page, tmp_path / "sweep.png")
    assert errors == []
    # throughput, latency percentiles, the reference's latency_cells.p99 and the latency CDF
    assert len(boxes) == 4
    assert all(box and box["width"] > 100 and box["height"] > 100 for box in boxes)
    assert (tmp_path / "sweep.png").stat().st_size > 10_000


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
    errors, boxes = open_in_browser(page, tmp_path / "run.png")
    assert errors == [] and len(boxes) == 1 and boxes[0]["width"] > 100


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
