"""The speed-up model for more cores (scripts/scaling_model.py, docs/performance.md): it gives
back the two-thread run it was fitted to, and its terms mean what the docs say."""

import importlib.util
import math

from conftest import ROOT

spec = importlib.util.spec_from_file_location("scaling_model", ROOT / "scripts" / "scaling_model.py")
scaling_model = importlib.util.module_from_spec(spec)
spec.loader.exec_module(scaling_model)


def runs(t1: float, t2: float, busy: float, windows: int) -> tuple[dict, dict]:
    one = {"perf": {"wall_s": t1}}
    two = {"perf": {"wall_s": t2, "threads": {"busy_s_mean": busy, "windows": windows}}}
    return one, two


def test_the_model_gives_back_the_two_thread_run_it_was_fitted_to():
    model = scaling_model.project(*runs(t1=10.0, t2=6.0, busy=5.5, windows=1000), [2, 16])
    assert math.isclose(model["wall_s"][2], 6.0)
    assert math.isclose(model["c"], 0.1)  # two halves of 5.5 s against 10 s on one thread
    assert math.isclose(model["w2_us"], 500.0)  # 0.5 s lost over 1000 windows


def test_with_free_windows_and_no_cost_apart_the_speed_up_is_the_core_count():
    model = scaling_model.project(*runs(t1=64.0, t2=32.0, busy=32.0, windows=10), [16, 64])
    assert math.isclose(model["speedup"][16], 16.0) and math.isclose(model["speedup"][64], 64.0)
