"""Shared fixtures: paths and a small scenario that runs in well under a second."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def small_scenario(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(
        """
[run]
seed = 3
duration_cells = 20000
warmup_cells = 2000

[switch]
ports = 8
scheduler = "islip"

[traffic]
load = 0.7
"""
    )
    return path
