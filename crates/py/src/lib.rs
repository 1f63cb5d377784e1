//! Python bindings: `cellfabric._core.Simulation` steps a scenario with the GIL released, so the
//! Python front end can draw progress between steps.

use cellfabric_core::{build, Simulation as Run};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

create_exception!(
    _core,
    ScenarioError,
    PyValueError,
    "The scenario was rejected: names the key and what was expected."
);
create_exception!(
    _core,
    SimulationError,
    PyRuntimeError,
    "A run broke one of its invariants."
);

/// One simulation run, advanced in steps of simulated time.
#[pyclass(module = "cellfabric._core")]
struct Simulation {
    sim: Option<Box<dyn Run>>,
    end_ps: u64,
}

impl Simulation {
    fn sim(&mut self) -> PyResult<&mut Box<dyn Run>> {
        self.sim
            .as_mut()
            .ok_or_else(|| SimulationError::new_err("the simulation has already finished"))
    }
}

#[pymethods]
impl Simulation {
    /// Validates the scenario (JSON text) and builds the system.
    #[new]
    fn new(scenario_json: &str) -> PyResult<Self> {
        let sim = build(scenario_json).map_err(|e| ScenarioError::new_err(e.to_string()))?;
        let end_ps = sim.end_ps();
        Ok(Simulation {
            sim: Some(sim),
            end_ps,
        })
    }

    /// Runs events up to `until_ps` without holding the GIL; returns True once the run is complete.
    fn advance(&mut self, py: Python<'_>, until_ps: u64) -> PyResult<bool> {
        let sim = self.sim()?;
        Ok(py.allow_threads(|| sim.advance(until_ps)))
    }

    /// Current simulated time in picoseconds.
    #[getter]
    fn now_ps(&mut self) -> PyResult<u64> {
        Ok(self.sim()?.now_ps())
    }

    /// Simulated time at which the run ends.
    #[getter]
    fn end_ps(&self) -> u64 {
        self.end_ps
    }

    /// Events processed so far.
    #[getter]
    fn events(&mut self) -> PyResult<u64> {
        Ok(self.sim()?.events())
    }

    /// Checks the run's invariants; returns (summary JSON, tables JSON, perf JSON).
    fn finish(&mut self, py: Python<'_>) -> PyResult<(String, String, String)> {
        let sim = self
            .sim
            .take()
            .ok_or_else(|| SimulationError::new_err("the simulation has already finished"))?;
        let report = py
            .allow_threads(|| sim.finish())
            .map_err(|e| SimulationError::new_err(e.to_string()))?;
        let summary = report.summary.to_string();
        let tables = report.tables.to_string();
        let perf = serde_json::to_string(&report.perf).expect("perf serializes");
        Ok((summary, tables, perf))
    }
}

/// Every design and mechanism a scenario can name, as JSON: a list of {key, name, description}.
#[pyfunction]
fn catalog() -> String {
    serde_json::to_string(&cellfabric_core::catalog::catalog()).expect("the catalog serializes")
}

/// The Rust core of cellfabric.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Simulation>()?;
    m.add_function(wrap_pyfunction!(catalog, m)?)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    Ok(())
}
