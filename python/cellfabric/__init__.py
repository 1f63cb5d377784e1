"""cellfabric: a fast, cell-accurate simulator of scheduled, low-latency fabrics.

    import cellfabric
    res = cellfabric.run("scenarios/classic/islip.toml", overrides={"traffic.load": 0.9})
    res.summary["throughput"], res.tables["latency_histogram"]
"""

from cellfabric._core import BugError, Error, ScenarioError, SimulationError
from cellfabric.provenance import __version__
from cellfabric.result import Result
from cellfabric.runner import Interrupted, run
from cellfabric.scenario import load_scenario
from cellfabric.sweeps import sweep

__all__ = [
    "BugError",
    "Error",
    "Interrupted",
    "Result",
    "ScenarioError",
    "SimulationError",
    "__version__",
    "load_scenario",
    "run",
    "sweep",
]
