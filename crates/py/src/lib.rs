//! Python bindings: `cellfabric._core.Simulation` steps a scenario with the GIL released, so the
//! Python front end can draw progress between steps. Every error is a `cellfabric.Error`: a
//! rejected scenario, a run that broke an invariant, or a bug (a panic in the core, caught here
//! so that it reaches Python as an ordinary exception rather than one `except Exception` misses).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use cellfabric_core::{build_with_overrides, Simulation as Run};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;

create_exception!(_core, Error, PyException, "Any error cellfabric reports.");
create_exception!(
    _core,
    ScenarioError,
    Error,
    "The scenario was rejected: names the key and what was expected."
);
create_exception!(
    _core,
    SimulationError,
    Error,
    "A run broke one of its invariants."
);
create_exception!(
    _core,
    BugError,
    Error,
    "cellfabric itself failed (a bug): the message says where; please report it with the scenario and seed."
);

thread_local! {
    /// The last panic on this thread, with where it happened (set by the module's panic hook).
    static LAST_PANIC: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Runs `work`, turning a panic of the core into a `BugError` saying what and where.
fn guarded<T>(work: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(work)).unwrap_or_else(|_| {
        let what = LAST_PANIC.with(|last| last.borrow().replace('\n', " "));
        Err(BugError::new_err(format!(
            "internal error (a bug in cellfabric): {what}"
        )))
    })
}

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
    /// Validates the scenario (JSON text) and builds the system; `overridden` lists the dotted
    /// keys the user's overrides set (a file key left unused by an overridden choice is then a
    /// warning, not an error).
    #[new]
    #[pyo3(signature = (scenario_json, overridden = Vec::new()))]
    fn new(scenario_json: &str, overridden: Vec<String>) -> PyResult<Self> {
        guarded(|| {
            let sim = build_with_overrides(scenario_json, &overridden)
                .map_err(|e| ScenarioError::new_err(e.to_string()))?;
            let end_ps = sim.end_ps();
            Ok(Simulation {
                sim: Some(sim),
                end_ps,
            })
        })
    }

    /// Runs events up to `until_ps` without holding the GIL, for at most `wall_budget_s` seconds
    /// of wall time when given; returns True once the run is complete.
    #[pyo3(signature = (until_ps, wall_budget_s = None))]
    fn advance(
        &mut self,
        py: Python<'_>,
        until_ps: u64,
        wall_budget_s: Option<f64>,
    ) -> PyResult<bool> {
        let budget = match wall_budget_s {
            Some(s) if s.is_finite() && s >= 0.0 => Some(Duration::from_secs_f64(s)),
            Some(s) => {
                return Err(PyValueError::new_err(format!(
                    "wall_budget_s: expected a number of seconds >= 0, got {s}"
                )))
            }
            None => None,
        };
        let sim = self.sim()?;
        let done = py.allow_threads(|| {
            guarded(|| {
                Ok(match budget {
                    Some(budget) => sim.advance_within(until_ps, budget),
                    None => sim.advance(until_ps),
                })
            })
        });
        if done.is_err() {
            self.sim = None; // a run that panicked is in no state to go on
        }
        done
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
        let report = py.allow_threads(|| {
            guarded(|| {
                sim.finish()
                    .map_err(|e| SimulationError::new_err(e.to_string()))
            })
        })?;
        let summary = report.summary.to_string();
        let tables = report.tables.to_string();
        let perf = serde_json::to_string(&report.perf).expect("perf serializes");
        Ok((summary, tables, perf))
    }
}

/// The scenario (JSON text) with every default of its design filled in, as JSON.
#[pyfunction]
fn effective_scenario(scenario_json: &str) -> PyResult<String> {
    guarded(|| {
        let effective = cellfabric_core::effective_scenario(scenario_json)
            .map_err(|e| ScenarioError::new_err(e.to_string()))?;
        Ok(effective.to_string())
    })
}

/// Every design and mechanism a scenario can name, as JSON: a list of {key, name, description}.
#[pyfunction]
fn catalog() -> String {
    serde_json::to_string(&cellfabric_core::catalog::catalog()).expect("the catalog serializes")
}

/// The key reference, as JSON: a list of {design, description, sections, keys}, one per design,
/// or only `design`'s; an unknown design is a ScenarioError naming every design.
#[pyfunction]
#[pyo3(signature = (design = None))]
fn keys(design: Option<&str>) -> PyResult<String> {
    use cellfabric_core::key_reference::{all_design_keys, design_keys};
    guarded(|| {
        let designs = match design {
            Some(name) => {
                vec![design_keys(name).map_err(|e| ScenarioError::new_err(e.to_string()))?]
            }
            None => all_design_keys(),
        };
        Ok(serde_json::to_string(&designs).expect("the key reference serializes"))
    })
}

/// The Rust core of cellfabric.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Simulation>()?;
    m.add_function(wrap_pyfunction!(catalog, m)?)?;
    m.add_function(wrap_pyfunction!(effective_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(keys, m)?)?;
    m.add("Error", m.py().get_type::<Error>())?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add("BugError", m.py().get_type::<BugError>())?;
    // A panic is reported once, as a BugError; the default hook would also print it and a
    // backtrace hint to stderr.
    std::panic::set_hook(Box::new(|info| {
        LAST_PANIC.with(|last| *last.borrow_mut() = info.to_string());
    }));
    Ok(())
}
