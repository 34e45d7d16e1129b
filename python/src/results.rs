//! The Python result objects: a simulation's numpy arrays by name, a gradient, an event.

use crate::errors::invalid;
use crate::runs::{EventRun, GradRun, SimRun};
use hybridopt::integrate::Stats;
use numpy::ndarray::{s, Array1, Array2};
use numpy::{PyArray1, PyArray2, PyArrayMethods, ToPyArray};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// One event: time, guard, modes before and after, and τ = dt_e/dθ when it was asked for.
#[pyclass(module = "hybridopt", frozen, get_all)]
pub struct Event {
    /// The event time.
    t: f64,
    /// The guard that fired.
    guard: String,
    mode_before: String,
    mode_after: String,
    /// dt_e/dθ in the order of `Problem.parameter_names` (None unless asked for).
    tau: Option<Py<PyArray1<f64>>>,
}

#[pymethods]
impl Event {
    fn __repr__(&self) -> String {
        format!(
            "Event(t={}, guard='{}', mode_before='{}', mode_after='{}'{})",
            self.t,
            self.guard,
            self.mode_before,
            self.mode_after,
            if self.tau.is_some() {
                ", tau=[...]"
            } else {
                ""
            }
        )
    }
}

impl Event {
    pub fn from_run(py: Python<'_>, e: EventRun) -> PyResult<Py<Event>> {
        Py::new(
            py,
            Event {
                t: e.event.t,
                guard: e.event.guard,
                mode_before: e.event.mode_before,
                mode_after: e.event.mode_after,
                tau: e.tau.map(|v| PyArray1::from_vec(py, v).unbind()),
            },
        )
    }
}

/// A report's JSON text (the CLI's `--json`) as a Python dict.
pub fn json_dict(py: Python<'_>, text: &str) -> PyResult<Py<PyDict>> {
    Ok(py
        .import("json")?
        .call_method1("loads", (text,))?
        .cast_into::<PyDict>()?
        .unbind())
}

fn stats_dict<'py>(py: Python<'py>, s: &Stats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("steps", s.steps)?;
    d.set_item("rejected", s.rejected)?;
    d.set_item("events", s.events)?;
    d.set_item("rhs_evals", s.rhs_evals)?;
    d.set_item("replayed_steps", s.replayed_steps)?;
    Ok(d)
}

/// A simulation: the trajectory sampled at every step end and 3 interior points per step
/// (the rows of the CLI's trajectory.csv; an event's instant appears twice, before and
/// after), the events, and the objectives' values.
#[pyclass(module = "hybridopt", frozen, get_all)]
pub struct Simulation {
    /// Sample times, shape (n,).
    t: Py<PyArray1<f64>>,
    /// The mode index at each sample, shape (n,).
    modes: Py<PyArray1<i64>>,
    /// The states, shape (n, len(state_names)).
    states: Py<PyArray2<f64>>,
    state_names: Vec<String>,
    /// Each output by name, shape (n,).
    outputs: Py<PyDict>,
    /// Each control channel by name, shape (n,) (empty without controls).
    controls: Py<PyDict>,
    events: Vec<Py<Event>>,
    /// Where the run ended (t_end, or a `stop_after` event).
    t_final: f64,
    /// steps, rejected, events, rhs_evals.
    stats: Py<PyDict>,
    /// The objectives' values by name; empty when `cost_error` says why they are undefined.
    costs: Py<PyDict>,
    cost_error: Option<String>,
    /// Every column of the table: t, mode, states, outputs, controls.
    columns: Vec<String>,
    /// The whole table, shape (n, len(columns)).
    table: Py<PyArray2<f64>>,
    /// The report of `hybridopt simulate --json` (stats, events, final, costs,
    /// constraints), from the same library struct.
    report: Py<PyDict>,
}

impl Simulation {
    /// From a run whose table has the columns `t, mode`, `nx` states, `n_outputs`
    /// outputs, then the controls.
    pub fn new(
        py: Python<'_>, run: SimRun, objective_names: &[String], nx: usize, n_outputs: usize,
    ) -> PyResult<Self> {
        let h = &run.table.header;
        let rows = &run.table.rows;
        let col = |c: usize| -> Array1<f64> { rows.column(c).to_owned() };
        let outputs = PyDict::new(py);
        let controls = PyDict::new(py);
        let first_control = 2 + nx + n_outputs;
        for (c, name) in h.iter().enumerate().skip(2 + nx) {
            let dict = if c < first_control {
                &outputs
            } else {
                &controls
            };
            dict.set_item(name, col(c).to_pyarray(py))?;
        }
        let costs = PyDict::new(py);
        let cost_error = match &run.costs {
            Ok(v) => {
                for (n, x) in objective_names.iter().zip(v) {
                    costs.set_item(n, x)?;
                }
                None
            }
            Err(m) => Some(m.clone()),
        };
        let modes: Array1<i64> = rows.column(1).mapv(|m| m as i64);
        let states: Array2<f64> = rows.slice(s![.., 2..2 + nx]).to_owned();
        Ok(Simulation {
            t: col(0).to_pyarray(py).unbind(),
            modes: modes.to_pyarray(py).unbind(),
            states: states.to_pyarray(py).unbind(),
            state_names: h[2..2 + nx].to_vec(),
            outputs: outputs.unbind(),
            controls: controls.unbind(),
            events: run
                .events
                .into_iter()
                .map(|event| Event::from_run(py, EventRun { event, tau: None }))
                .collect::<PyResult<_>>()?,
            t_final: run.t_final,
            stats: stats_dict(py, &run.stats)?.unbind(),
            costs: costs.unbind(),
            cost_error,
            columns: h.clone(),
            table: rows.to_pyarray(py).unbind(),
            report: json_dict(py, &run.report)?,
        })
    }
}

#[pymethods]
impl Simulation {
    /// A column by name: `"t"`, `"mode"`, a state, an output or a control.
    fn __getitem__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let Some(c) = self.columns.iter().position(|h| h == name) else {
            return Err(invalid(
                py,
                format!("no column `{name}`; columns: {}", self.columns.join(", ")),
            ));
        };
        let table = self.table.bind(py).try_readonly()?;
        Ok(table.as_array().column(c).to_pyarray(py))
    }

    fn __repr__(&self) -> String {
        format!(
            "Simulation(t_final={}, events={}, columns={:?})",
            self.t_final,
            self.events.len(),
            self.columns
        )
    }
}

/// Cost and gradient at one θ by one method, for every objective; the first objective is
/// `cost` / `gradient` (as in `hybridopt gradient --json`).
#[pyclass(module = "hybridopt", frozen, get_all)]
pub struct Gradient {
    /// ψ of the first objective.
    cost: f64,
    /// dψ/dθ of the first objective, in the order of `parameter_names`.
    gradient: Py<PyArray1<f64>>,
    parameter_names: Vec<String>,
    /// adjoint, direct, fd or dual.
    method: String,
    objective_names: Vec<String>,
    /// ψ of every objective, shape (n_objectives,).
    values: Py<PyArray1<f64>>,
    /// dψ_i/dθ, shape (n_objectives, n_theta).
    gradients: Py<PyArray2<f64>>,
    /// The events, with τ when `tau=True`.
    events: Vec<Py<Event>>,
    /// Where τ came from: "direct", "dual" (the method's run) or "direct_pass".
    tau_from: Option<String>,
    /// All the work of the method: steps, rejected, events, rhs_evals, replayed_steps.
    stats: Py<PyDict>,
    /// The report of `hybridopt gradient --json --method <method>` (cost, gradient,
    /// witnesses, objectives, events, timing, …), from the same library struct.
    report: Py<PyDict>,
}

impl Gradient {
    pub fn new(
        py: Python<'_>, run: GradRun, method: &str, parameter_names: Vec<String>,
        objective_names: Vec<String>,
    ) -> PyResult<Self> {
        let n = parameter_names.len();
        let mut g = Array2::zeros((run.gradients.len(), n));
        for (i, row) in run.gradients.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                g[(i, j)] = *v;
            }
        }
        Ok(Gradient {
            cost: run.values[0],
            gradient: PyArray1::from_slice(py, &run.gradients[0]).unbind(),
            parameter_names,
            method: method.to_string(),
            objective_names,
            values: PyArray1::from_slice(py, &run.values).unbind(),
            gradients: g.to_pyarray(py).unbind(),
            events: run
                .events
                .into_iter()
                .map(|e| Event::from_run(py, e))
                .collect::<PyResult<_>>()?,
            tau_from: run.tau_from,
            stats: stats_dict(py, &run.stats)?.unbind(),
            report: json_dict(py, &run.report)?,
        })
    }
}

#[pymethods]
impl Gradient {
    /// The gradient of the first objective by parameter name.
    fn as_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let g = self.gradient.bind(py).try_readonly()?;
        for (n, v) in self.parameter_names.iter().zip(g.as_array().iter()) {
            d.set_item(n, *v)?;
        }
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "Gradient(method='{}', cost={}, parameters={:?})",
            self.method, self.cost, self.parameter_names
        )
    }
}
