"""Shared fixtures: paths and a small scenario that runs in well under a second."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def binomial_band(p: float, trials: float) -> float:
    """Four standard errors of a fraction ``p`` estimated from ``trials`` independent draws: the
    tolerance of a statistical check, derived from the run's length instead of fixed."""
    return 4.0 * (p * (1.0 - p) / trials) ** 0.5


@pytest.fixture
def small_scenario(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(
        """
[run]
seed = 3
duration_ns = 102400   # 20 000 cell times of 5.12 ns
warmup_ns = 10240

[switch]
ports = 8
scheduler = "islip"

[traffic]
load = 0.7
"""
    )
    return path
