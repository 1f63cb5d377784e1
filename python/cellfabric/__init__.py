"""cellfabric: a fast, cell-accurate simulator of scheduled, low-latency fabrics.

    import cellfabric
    res = cellfabric.run("scenarios/classic/islip.toml", overrides={"traffic.load": 0.9})
    res.summary["throughput"], res.tables["latency_histogram"]
"""

from cellfabric._core import ScenarioError, SimulationError
from cellfabric.result import Result
from cellfabric.runner import run
from cellfabric.scenario import load_scenario

__all__ = ["Result", "ScenarioError", "SimulationError", "load_scenario", "run"]
