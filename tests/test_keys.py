"""The key reference: ``cellfabric keys`` prints every key of a design from the config structs, the
pages of ``docs/keys/`` are what it generates (stale pages fail, with the command that regenerates
them), and no key table is written by hand anywhere else."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest

import cellfabric
from cellfabric.keys import REGENERATE, pages, reference, stale_pages, write_docs
from conftest import ROOT

DOCS = ROOT / "docs" / "keys"
DESIGNS = [d["design"] for d in reference()]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cellfabric.cli", "keys", *args], capture_output=True,
                          text=True, cwd=ROOT)


def test_docs_keys_are_what_the_code_generates():
    stale = stale_pages(DOCS)
    assert not stale, f"docs/keys is stale ({', '.join(stale)}): regenerate it with `{REGENERATE}`"


def test_a_stale_page_a_missing_page_and_a_page_of_no_design_are_caught(tmp_path):
    write_docs(tmp_path)
    assert stale_pages(tmp_path) == []
    page = tmp_path / "stardust.md"
    row = "| `link.rate_gbps` | `10.0` |"
    page.write_text(page.read_text().replace(row, row.replace("10.0", "40.0")))
    (tmp_path / "ethernet.md").unlink()
    (tmp_path / "aquila.md").write_text("# Keys of `aquila`\n")
    assert stale_pages(tmp_path) == ["stardust.md", "ethernet.md", "aquila.md"]
    write_docs(tmp_path)
    assert stale_pages(tmp_path) == [] and not (tmp_path / "aquila.md").exists()


def test_every_design_has_a_page_and_every_key_a_row():
    generated = pages()
    assert set(generated) == {"README.md", *(f"{d}.md" for d in DESIGNS)}
    for design in reference():
        page = generated[f"{design['design']}.md"]
        for key in design["keys"]:
            assert f"| `{key['key']}` |" in page, f"{design['design']}: {key['key']} has no row"


def test_the_reference_holds_each_keys_default_unit_and_meaning():
    [stardust] = reference("stardust")
    keys = {k["key"]: k for k in stardust["keys"]}
    assert keys["link.rate_gbps"]["default"] == 10.0 and keys["link.rate_gbps"]["unit"] == "Gbit/s"
    assert keys["credit.size_bytes"]["unit"] == "bytes"
    assert keys["failures[].at_ns"]["required"]
    [cells] = reference("single_switch")
    load = {k["key"]: k for k in cells["keys"]}["traffic.load"]
    assert load["default"] == 0.5 and load["unit"] == "fraction of line rate"
    assert "Unit:" not in load["meaning"]


def test_every_default_is_what_a_run_of_the_empty_scenario_uses():
    """The reference's defaults agree with ``cellfabric show``'s (the effective scenario the core
    fills in), key by key, for every key the effective scenario keeps."""
    from cellfabric._core import effective_scenario

    for design in reference():
        name = design["design"]
        if name == "clint":  # Clint needs its channel chosen; show fills in the rest the same way
            continue
        effective = json.loads(effective_scenario(json.dumps({"design": name})))
        for key in design["keys"]:
            section, _, field = key["key"].partition(".")
            if not field or "[" in key["key"] or key["required"]:
                continue
            if field in effective.get(section, {}):
                assert effective[section][field] == key["default"], f"{name}: {key['key']}"


def test_cli_prints_one_design_and_refuses_an_unknown_one():
    shown = _cli("stardust")
    assert shown.returncode == 0, shown.stderr
    assert "  link.rate_gbps = 10.0  [Gbit/s]" in shown.stdout
    assert "rifl_link" not in shown.stdout.split("\n")[0]
    as_json = json.loads(_cli("rifl_link", "--json").stdout)
    assert [d["design"] for d in as_json] == ["rifl_link"]
    refused = _cli("stardsut")
    assert refused.returncode == 2 and refused.stdout == ""
    message = refused.stderr.strip()
    assert message.count("\n") == 0 and message.startswith("cellfabric: error: design: expected one of")
    for design in DESIGNS:
        assert design in message


def test_python_api_refuses_an_unknown_design_with_a_scenario_error():
    with pytest.raises(cellfabric.ScenarioError, match="design: expected one of single_switch"):
        reference("nope")


def test_write_docs_regenerates_the_folder(tmp_path):
    shutil.copytree(DOCS, tmp_path / "keys")
    result = _cli("--write-docs", str(tmp_path / "keys"))
    assert result.returncode == 0, result.stderr
    assert stale_pages(tmp_path / "keys") == []


KEY_TABLE = re.compile(r"^\|\s*key\s*\|\s*default\s*\|", re.IGNORECASE | re.MULTILINE)


def test_no_key_table_is_written_by_hand():
    """A table of keys with defaults lives only in the generated pages."""
    written = [ROOT / "README.md", *(p for p in (ROOT / "docs").rglob("*.md") if p.parent != DOCS)]
    by_hand = [p.relative_to(ROOT).as_posix() for p in written if KEY_TABLE.search(p.read_text())]
    assert not by_hand, f"key tables written by hand in {by_hand}: the reference is docs/keys/"
