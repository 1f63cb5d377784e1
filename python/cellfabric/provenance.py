"""Where a result came from: the cellfabric version and source revision, the scenario as run,
its seed and the command line, written beside every result."""

from __future__ import annotations

import subprocess
import sys
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

try:
    __version__ = metadata.version("cellfabric")
except metadata.PackageNotFoundError:  # run from a source tree without installing
    __version__ = "unknown"


@cache
def source_revision() -> str:
    """The git revision of the source tree the package was installed from (an editable install
    of a checkout), with ``+dirty`` if it has uncommitted changes; ``unknown`` otherwise."""
    root = Path(__file__).resolve().parent.parent.parent
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def provenance(scenario: dict[str, Any], effective: dict[str, Any],
               interrupted: bool = False) -> dict[str, Any]:
    """What produced a result: version, revision, the scenario as given (file plus overrides) and
    as run (``effective_scenario``, every default filled in), its seed and the command line that
    ran it; ``interrupted`` marks partial results."""
    return {
        "cellfabric_version": __version__,
        "source_revision": source_revision(),
        "seed": effective.get("run", {}).get("seed", scenario.get("run", {}).get("seed")),
        "command_line": sys.argv,
        "interrupted": interrupted,
        "scenario": scenario,
        "effective_scenario": effective,
    }
