"""The written documents: every relative link leads to a file, the README stays a front page (under
350 lines, the test command exactly as CI runs it), and the generated table of layers in
``docs/architecture.md`` still matches the source tree (``python3 scripts/generate_docs.py``
regenerates it); every shipped scenario is described in `docs/scenarios.md` and the
README."""

from __future__ import annotations

import importlib.util
import re

from conftest import ROOT

DOCUMENTS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)#\s]+)(#[^)]*)?\)")


def _generator():
    spec = importlib.util.spec_from_file_location("generate_docs", ROOT / "scripts" / "generate_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def broken_links(path) -> list[str]:
    """The relative links of a Markdown file that lead nowhere."""
    targets = (m[1] for m in LINK.finditer(path.read_text(encoding="utf-8")))
    return [t for t in targets if "://" not in t and not (path.parent / t).exists()]


def test_every_relative_link_leads_to_a_file():
    broken = {p.relative_to(ROOT).as_posix(): broken_links(p) for p in DOCUMENTS}
    assert not {p: b for p, b in broken.items() if b}


def test_a_broken_link_is_caught(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("[ok](page.md), [gone](nowhere.md#top), [web](https://example.org/x.md)\n")
    assert broken_links(page) == ["nowhere.md"]


def test_readme_is_a_front_page_with_ci_s_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 350
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = "bash scripts/test"
    assert command in ci and f"\n{command}\n" in readme


def test_architecture_layers_match_the_source_tree():
    generator = _generator()
    off = generator.counts_off((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    assert not off, f"docs/architecture.md is stale ({off}): run python3 scripts/generate_docs.py"


def test_a_moved_module_or_a_grown_one_makes_the_layers_stale():
    generator = _generator()
    current = generator.architecture_text((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    assert generator.counts_off(current) == []
    row = re.search(r"^\| 2 \| `blocks/link.rs` \| 1 \| (\d+) \|", current, re.MULTILINE)
    grown = current.replace(row[0], row[0].replace(f"| {row[1]} |", f"| {int(row[1]) + 500} |"))
    moved = current.replace("`blocks/link.rs`", "`blocks/wire.rs`")
    assert generator.counts_off(grown) == [f"blocks/link.rs: {int(row[1]) + 500} lines written, {row[1]} now"]
    assert generator.counts_off(moved) == ["blocks/link.rs: not in the table",
                                           "blocks/wire.rs: no such module"]


def unlisted_scenarios(scenarios_md: str, readme: str) -> list[str]:
    """The shipped scenarios (benchmarks apart) that docs/scenarios.md or the README's table omits."""
    missing = []
    for path in sorted((ROOT / "scenarios").glob("*/*.toml")):
        if path.parent.name == "bench":
            continue
        name = f"{path.parent.name}/{path.name}"
        if f"### `scenarios/{name}`" not in scenarios_md or f"`{name}`" not in readme:
            missing.append(name)
    return missing


def test_every_scenario_is_described_in_the_scenario_list_and_the_readme():
    scenarios_md = (ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert unlisted_scenarios(scenarios_md, readme) == []
    # The check fires on a scenario left out.
    left_out = scenarios_md.replace("### `scenarios/aquila/fig7-ip-latency.toml`", "")
    assert unlisted_scenarios(left_out, readme) == ["aquila/fig7-ip-latency.toml"]
