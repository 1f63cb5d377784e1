"""The key reference: every key of every design with its default, unit and meaning, as the core
reads them from the config structs (``cellfabric._core.keys``), printed for a terminal or written as
the Markdown pages of ``docs/keys/`` (``cellfabric keys --write-docs docs/keys``)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from cellfabric._core import keys as _core_keys

INDEX = "README.md"
REGENERATE = "cellfabric keys --write-docs docs/keys"
GENERATED = (
    f"<!-- Generated from the config structs' doc comments by `{REGENERATE}`: do not edit;"
    " tests/test_keys.py fails when this page is stale. -->"
)


def reference(design: str | None = None) -> list[dict]:
    """Every design's reference (or only ``design``'s): ``design``, ``description``, ``sections``
    and ``keys``, each key with ``key``, ``section``, ``required``, ``default`` (and
    ``default_in_section`` where a section written without the key has another), ``unit``,
    ``meaning`` and ``choices``. An unknown design raises ``ScenarioError`` naming every design."""
    return json.loads(_core_keys(design))


def value_text(value) -> str:
    """A default as a scenario writes it, in TOML; ``absent`` for a key left out (its meaning says
    what then applies)."""
    if value is None:
        return "absent"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(value_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {value_text(v)}" for k, v in value.items()) + "}"
    return json.dumps(value, ensure_ascii=False)


def default_text(key: dict, code: str = "") -> str:
    """A key's default: ``required``, or its value, with the value a section written without the
    key gives where that differs; ``code`` quotes the values (Markdown's backtick)."""
    if key["required"]:
        return f"{code}required{code}"
    text = f"{code}{value_text(key['default'])}{code}"
    if "default_in_section" in key:
        section = key["key"].rsplit(".", 1)[0]
        other = value_text(key["default_in_section"])
        text += f" ({code}{other}{code} in a {code}[{section}]{code} written without it)"
    return text


def choice_texts(key: dict) -> list[str]:
    """The names a key takes, each with its meaning."""
    return [f"`{name}`" + (f": {about.rstrip('.')}" if about else "") for name, about in key["choices"]]


def meaning_text(key: dict) -> str:
    """A key's meaning, then the names it takes."""
    names = "; ".join(choice_texts(key))
    return key["meaning"] + (f" Names: {names}." if names else "")


def text(designs: list[dict], width: int = 100) -> str:
    """The reference for a terminal: a design, then each key, its default and unit, its meaning."""
    lines = []
    wrap = textwrap.TextWrapper(width=width, initial_indent="      ", subsequent_indent="      ")
    names = textwrap.TextWrapper(width=width, initial_indent="        - ", subsequent_indent="          ")
    for design in designs:
        lines.append(f"{design['design']}: {design['description']}")
        for key in design["keys"]:
            unit = f"  [{key['unit']}]" if key["unit"] else ""
            lines.append(f"  {key['key']} = {default_text(key)}{unit}")
            lines.extend(wrap.wrap(key["meaning"].replace("`", "")))
            for choice in choice_texts(key):
                lines.extend(names.wrap(choice.replace("`", "")))
        lines.append("")
    return "\n".join(lines)


def _cell(words: str) -> str:
    return words.replace("|", "\\|")


def markdown(design: dict) -> str:
    """One design's page of ``docs/keys/``: a table of keys per section."""
    name = design["design"]
    out = [GENERATED, "", f"# Keys of `{name}`", "", f"{design['description']}.", "",
           f"Every key a `design = \"{name}\"` scenario takes: its default (what the run uses when the "
           "scenario leaves the key out; `absent`: nothing, and the meaning says what then applies), "
           "its unit and its meaning. `cellfabric keys " + name + "` prints the same; "
           "`cellfabric show SCENARIO` prints a scenario with every default filled in.", ""]
    meanings = {s["section"]: s["meaning"] for s in design["sections"]}
    for section in dict.fromkeys(k["section"] for k in design["keys"]):
        keys = [k for k in design["keys"] if k["section"] == section]
        if section in meanings:
            out += [f"## `[{section}]`", "", meanings[section], ""]
        else:
            out += [f"## `{section}`", ""]
        out += ["| key | default | unit | meaning |", "|---|---|---|---|"]
        out += [f"| `{k['key']}` | {_cell(default_text(k, '`'))} | {k['unit']} | {_cell(meaning_text(k))} |"
                for k in keys]
        out.append("")
    return "\n".join(out)


def index(designs: list[dict]) -> str:
    """The folder's index: one line per design, linking its page."""
    out = [GENERATED, "", "# Scenario keys", "",
           "One page per design, generated from the config structs' doc comments, so the reference "
           f"is the parser's own (regenerate with `{REGENERATE}`):", ""]
    out += [f"- [`{d['design']}`]({d['design']}.md): {d['description']}" for d in designs]
    return "\n".join(out) + "\n"


def pages() -> dict[str, str]:
    """Every page of ``docs/keys/`` by file name: the index and one page per design."""
    designs = reference()
    return {INDEX: index(designs)} | {f"{d['design']}.md": markdown(d) for d in designs}


def write_docs(folder: str | Path) -> list[Path]:
    """Writes the pages into ``folder`` (created if missing), removes pages of designs that no
    longer exist, and returns the pages written."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    wanted = pages()
    for old in folder.glob("*.md"):
        if old.name not in wanted:
            old.unlink()
    written = []
    for name, page in wanted.items():
        path = folder / name
        path.write_text(page, encoding="utf-8")
        written.append(path)
    return written


def stale_pages(folder: str | Path) -> list[str]:
    """The pages of ``folder`` that differ from what the code generates, are missing, or describe
    no design: empty when the folder is up to date."""
    folder = Path(folder)
    wanted = pages()
    stale = [name for name, page in wanted.items()
             if not (folder / name).is_file() or (folder / name).read_text(encoding="utf-8") != page]
    stale += [p.name for p in sorted(folder.glob("*.md")) if p.name not in wanted]
    return stale
