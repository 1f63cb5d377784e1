"""The speed-up model for more cores (scripts/scaling_model.py, docs/performance.md): it gives
back the two-thread run it was fitted to, and its terms mean what the docs say."""

import importlib.util
import math

import pytest

from conftest import ROOT

spec = importlib.util.spec_from_file_location("scaling_model", ROOT / "scripts" / "scaling_model.py")
scaling_model = importlib.util.module_from_spec(spec)
spec.loader.exec_module(scaling_model)


def runs(t1: float, t2: float, busy: float) -> tuple[dict, dict]:
    one = {"perf": {"wall_s": t1}}
    two = {"perf": {"wall_s": t2, "threads": {"busy_s_mean": busy, "windows": 1000}}}
    return one, two


def test_the_model_gives_back_the_two_thread_run_it_was_fitted_to():
    model = scaling_model.project(*runs(t1=10.0, t2=6.0, busy=5.0), [2, 16])
    assert math.isclose(model["wall_s"][2], 6.0)
    assert math.isclose(model["c"], 0.0)  # two halves of 5 s against 10 s on one thread
    assert math.isclose(model["r2"], 0.2)  # 1 s of 6 waited


def test_one_core_is_the_one_thread_run_and_a_run_without_thread_figures_is_refused():
    one, two = runs(t1=10.0, t2=6.0, busy=5.0)
    assert scaling_model.project(one, two, [1])["wall_s"][1] == 10.0
    del two["perf"]["threads"]
    with pytest.raises(ValueError, match="perf.threads"):
        scaling_model.project(one, two, [2])


def test_without_loss_the_speed_up_is_the_core_count():
    model = scaling_model.project(*runs(t1=64.0, t2=32.0, busy=32.0), [16, 64])
    assert math.isclose(model["speedup"][16], 16.0) and math.isclose(model["speedup"][64], 64.0)


def test_the_expected_maximum_of_normal_draws_is_the_textbook_one():
    # E[max of 2] = 1/sqrt(pi); of 16, 50 and 100 from tables of normal order statistics.
    assert math.isclose(scaling_model.expected_maximum(2), 1 / math.sqrt(math.pi), rel_tol=1e-6)
    assert math.isclose(scaling_model.expected_maximum(16), 1.7660, abs_tol=1e-3)
    assert math.isclose(scaling_model.expected_maximum(50), 2.2491, abs_tol=1e-3)
    assert math.isclose(scaling_model.expected_maximum(100), 2.5076, abs_tol=1e-3)
