"""Running a scenario: the core advances in steps with the GIL released; between steps a
progress bar is drawn on a terminal for runs that take more than about two seconds."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cellfabric._core import ScenarioError, Simulation, effective_scenario
from cellfabric.result import Result
from cellfabric.scenario import REFERENCE, check_finite, load_scenario, locate, reference_of

STEP_WALL_S = 0.2
PROGRESS_AFTER_S = 2.0


class Interrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C; ``result`` holds its partial results (``result.interrupted``)."""

    def __init__(self, result: Result):
        super().__init__("interrupted")
        self.result = result


class _Progress:
    """A stderr progress bar (simulated time, events/s, ETA), shown only on a terminal and only
    once the run has lasted ``PROGRESS_AFTER_S``."""

    def __init__(self, sim: Simulation, enabled: bool):
        self.sim, self.enabled, self.bar = sim, enabled, None
        self.started = time.perf_counter()

    def update(self) -> None:
        elapsed = time.perf_counter() - self.started
        if not self.enabled or elapsed < PROGRESS_AFTER_S:
            return
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=self.sim.end_ps / 1e6, unit="µs sim", file=sys.stderr, dynamic_ncols=True)
        self.bar.n = self.sim.now_ps / 1e6
        self.bar.set_postfix_str(f"{self.sim.events / elapsed:.3g} events/s", refresh=False)
        self.bar.refresh()

    def close(self) -> None:
        """Ends the bar where the run ended: at 100% for a complete run."""
        if self.bar is not None:
            self.bar.n = self.sim.now_ps / 1e6
            self.bar.refresh()
            self.bar.close()


def overridden_keys(overrides: Mapping[str, Any] | None, seed: int | None) -> list[str]:
    """The keys a user's overrides set (``--set``, and ``--seed`` as ``run.seed``)."""
    return [*(overrides or {}), *(["run.seed"] if seed is not None else [])]


def build(config: Mapping[str, Any], overridden: list[str]) -> Simulation:
    """Checks a loaded scenario as every run checks it and builds it; ``overridden`` names the keys
    the user's overrides set. Raises the core's ``ScenarioError`` (``key: message``)."""
    check_finite(config)
    return Simulation(json.dumps(config), overridden)


def run(
    scenario: str | Path | Mapping[str, Any],
    overrides: Mapping[str, Any] | None = None,
    seed: int | None = None,
    progress: bool | None = None,
) -> Result:
    """Runs one scenario (TOML path or dict) with dotted-key ``overrides`` and an optional ``seed``.

    ``progress=None`` shows a bar only when stderr is a terminal. Raises ``ScenarioError`` for a bad
    scenario and ``SimulationError`` when a run breaks an invariant (conservation, lossless, deadlock).
    """
    config = load_scenario(scenario, overrides, seed)
    try:
        sim = build(config, overridden_keys(overrides, seed))
    except ScenarioError as error:
        raise locate(error, scenario, overrides, seed) from None
    if not isinstance(scenario, Mapping) or REFERENCE in scenario:
        reference_of(scenario)  # a file's paper numbers are checked too, though a run ignores them
    bar = _Progress(sim, sys.stderr.isatty() if progress is None else progress)
    interrupted = False
    try:
        # Steps of bounded wall time, however dense the events: Ctrl-C lands within one.
        while not sim.advance(sim.end_ps, STEP_WALL_S):
            bar.update()
    except KeyboardInterrupt:
        # The run so far is settled and reported as partial.
        interrupted = True
    finally:
        bar.close()
    summary_json, tables_json, perf_json = sim.finish()
    result = Result.from_core(summary_json, tables_json, perf_json, config, interrupted=interrupted,
                              effective=json.loads(effective_scenario(json.dumps(config))))
    if interrupted:
        raise Interrupted(result)
    return result
