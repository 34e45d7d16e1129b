//! `hybridopt.Problem`: a validated problem file, its θ by name, and the calls that
//! simulate, differentiate and optimize it (each with the GIL released).

use crate::errors::{invalid, IntoPy};
use crate::prepared::Prepared;
use crate::results::{Gradient, Simulation};
use crate::{interrupt, runs, theta};
use hybridopt::problem::{parse_gradient_method, Problem, SolverKind};
use hybridopt::sensitivity::GradientMethod;
use numpy::{PyArray1, PyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// A hybrid-system problem (a problem file: system, horizon, parameters, controls, costs,
/// optimizer settings). Load one with `Problem.from_file(path)` or
/// `Problem.from_toml(text)`.
///
/// θ is the parameters, then the control coefficients (`parameter_names`); `values` are
/// their current values, which every call uses unless given `theta`; `optimized` names the
/// entries the optimizer changes (`optimize = true`, and every control coefficient).
#[pyclass(name = "Problem", module = "hybridopt", frozen)]
pub struct PyProblem {
    state: Mutex<State>,
}

/// The problem as it is now, and the setup built from it once it was first needed.
/// Running calls hold their own `Arc`s; a change of values makes a new problem (and drops
/// the setup), so a running call keeps the values it started with.
struct State {
    problem: Arc<Problem>,
    prepared: Option<Arc<Prepared>>,
}

/// The problem and (when already built) its setup, as a call starts.
type Snapshot = (Arc<Problem>, Option<Arc<Prepared>>);

impl PyProblem {
    fn new(p: Problem) -> Self {
        PyProblem {
            state: Mutex::new(State {
                problem: Arc::new(p),
                prepared: None,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while the lock was held leaves the state as it was: recover it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The problem as it is now (its values included).
    fn current(&self) -> Arc<Problem> {
        self.lock().problem.clone()
    }

    fn snapshot(&self) -> Snapshot {
        let g = self.lock();
        (g.problem.clone(), g.prepared.clone())
    }

    /// Replaces the problem (new values or tolerances); its setup is built anew when next
    /// needed.
    fn replace(guard: &mut State, p: Problem) {
        guard.problem = Arc::new(p);
        guard.prepared = None;
    }

    /// Runs `work` on the snapshot's setup (built first if it was not yet), with the GIL
    /// released and Ctrl-C handled; keeps a newly built setup while the problem is
    /// unchanged.
    fn run<T: Send>(
        &self, py: Python<'_>, (problem, cached): Snapshot,
        work: impl FnOnce(&Prepared) -> Result<T, hybridopt::Error> + Send,
    ) -> PyResult<T> {
        let (out, prepared) = interrupt::run(py, move || {
            let prepared = match cached {
                Some(c) => c,
                None => Arc::new(Prepared::build(problem)?),
            };
            Ok((work(&prepared)?, prepared))
        })?;
        let mut g = self.lock();
        if g.prepared.is_none() && Arc::ptr_eq(&g.problem, prepared.problem()) {
            g.prepared = Some(prepared);
        }
        Ok(out)
    }

    fn parse_method(py: Python<'_>, name: &str) -> PyResult<GradientMethod> {
        parse_gradient_method(name).ok_or_else(|| {
            invalid(
                py,
                format!("method `{name}`: valid methods are adjoint, direct, fd, dual"),
            )
        })
    }
}

/// Sets entry `i` of θ, checking that the value is finite and inside the entry's bounds
/// (the check of `--param`); the bounds' transform follows the value as for `--param`.
fn set_entry(p: &mut Problem, i: usize, value: f64) -> Result<(), hybridopt::Error> {
    let np = p.dims.np();
    let name = p.theta[i].name.clone();
    if i < np {
        return p.set_param(&name, value);
    }
    let e = &mut p.theta[i];
    if !value.is_finite() {
        return Err(hybridopt::Error::Invalid(format!(
            "{name}={value}: not a finite number"
        )));
    }
    // the value is finite here, so the comparisons are total
    if e.lower.is_some_and(|l| value <= l) || e.upper.is_some_and(|u| value >= u) {
        return Err(hybridopt::Error::Invalid(format!(
            "{name}={value}: outside the bounds ({:?}, {:?}) of the problem file",
            e.lower, e.upper
        )));
    }
    e.value = value;
    Ok(())
}

#[pymethods]
impl PyProblem {
    /// Reads and validates a problem file (TOML).
    #[staticmethod]
    fn from_file(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let p = py.detach(|| Problem::load(&path)).or_raise(py)?;
        Ok(Self::new(p))
    }

    /// Parses and validates problem text (TOML); `name` stands for the file in messages.
    #[staticmethod]
    #[pyo3(signature = (text, name = "<string>"))]
    fn from_toml(py: Python<'_>, text: &str, name: &str) -> PyResult<Self> {
        let p = Problem::parse(text, Path::new(name)).or_raise(py)?;
        Ok(Self::new(p))
    }

    /// The problem's name.
    #[getter]
    fn name(&self) -> String {
        self.current().name.clone()
    }

    /// The file the problem was read from ("<string>" for text).
    #[getter]
    fn file(&self) -> PathBuf {
        self.current().file.clone()
    }

    /// The names of θ: the parameters, then `channel[k]` for each control coefficient.
    #[getter]
    fn parameter_names(&self) -> Vec<String> {
        theta::names(&self.current())
    }

    /// The current values of θ (a copy), in the order of `parameter_names`.
    #[getter]
    fn values<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(py, self.current().theta_values())
    }

    /// Sets every value of θ (each checked as by `set_value`; all or none change).
    #[setter]
    fn set_values(&self, py: Python<'_>, values: Vec<f64>) -> PyResult<()> {
        let mut guard = self.lock();
        let current = guard.problem.clone();
        if values.len() != current.theta.len() {
            return Err(invalid(
                py,
                format!(
                    "values has {} entries; this problem has {}: {}",
                    values.len(),
                    current.theta.len(),
                    theta::names(&current).join(", ")
                ),
            ));
        }
        let mut p = (*current).clone();
        for (i, v) in values.into_iter().enumerate() {
            if p.theta[i].value != v {
                set_entry(&mut p, i, v).or_raise(py)?;
            }
        }
        Self::replace(&mut guard, p);
        Ok(())
    }

    /// Sets one entry of θ by name; the value must be finite and inside the entry's
    /// bounds (as the command line's `--param NAME=VALUE`).
    fn set_value(&self, py: Python<'_>, name: &str, value: f64) -> PyResult<()> {
        let mut guard = self.lock();
        let i = theta::index_of(py, &guard.problem, name)?;
        let mut p = (*guard.problem).clone();
        set_entry(&mut p, i, value).or_raise(py)?;
        Self::replace(&mut guard, p);
        Ok(())
    }

    fn __getitem__(&self, py: Python<'_>, name: &str) -> PyResult<f64> {
        let p = self.current();
        Ok(p.theta[theta::index_of(py, &p, name)?].value)
    }

    fn __setitem__(&self, py: Python<'_>, name: &str, value: f64) -> PyResult<()> {
        self.set_value(py, name, value)
    }

    /// The names of the optimized entries of θ (the order of `x0` and `fun_and_grad`).
    #[getter]
    fn optimized(&self) -> Vec<String> {
        let p = self.current();
        p.free_indices()
            .iter()
            .map(|&i| p.theta[i].name.clone())
            .collect()
    }

    /// The current values of the optimized entries.
    #[getter]
    fn x0<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        let p = self.current();
        let v = p.free_indices().iter().map(|&i| p.theta[i].value).collect();
        PyArray1::from_vec(py, v)
    }

    /// The bounds `(lower, upper)` of the optimized entries (None where unbounded), as
    /// `scipy.optimize.minimize(..., bounds=...)` takes them. The problem file's bounds
    /// are open; scipy's are closed.
    #[getter]
    fn bounds(&self) -> Vec<(Option<f64>, Option<f64>)> {
        let p = self.current();
        p.free_indices()
            .iter()
            .map(|&i| (p.theta[i].lower, p.theta[i].upper))
            .collect()
    }

    /// The objectives' names; the first is the one `optimize` and `fun_and_grad` minimize.
    #[getter]
    fn objective_names(&self) -> Vec<String> {
        self.current().objective_names()
    }

    /// The names of the system's states, outputs, guards and modes.
    #[getter]
    fn state_names(&self) -> Vec<String> {
        self.current().dims.states.clone()
    }

    #[getter]
    fn output_names(&self) -> Vec<String> {
        self.current().dims.outputs.clone()
    }

    #[getter]
    fn guard_names(&self) -> Vec<String> {
        let p = self.current();
        (0..p.dims.guards.len())
            .map(|k| p.dims.guard_name(k))
            .collect()
    }

    /// The simulated horizon (t0, t_end).
    #[getter]
    fn horizon(&self) -> (f64, f64) {
        let p = self.current();
        (p.t0, p.t_end)
    }

    /// The integrator's relative and absolute tolerances `(rtol, atol)` (the file's
    /// `[simulation]` values or their defaults).
    #[getter]
    fn tolerances(&self) -> (f64, f64) {
        let p = self.current();
        (p.solver.rtol, p.solver.atol)
    }

    /// Sets both tolerances, each in (0, 1), as `hybridopt gradient --rtol --atol` does.
    #[setter]
    fn set_tolerances(&self, py: Python<'_>, tolerances: (f64, f64)) -> PyResult<()> {
        let (rtol, atol) = tolerances;
        for (name, v) in [("rtol", rtol), ("atol", atol)] {
            if !(v > 0.0 && v < 1.0) {
                return Err(invalid(
                    py,
                    format!("{name} {v}: a tolerance must be in (0, 1)"),
                ));
            }
        }
        let mut guard = self.lock();
        let mut p = (*guard.problem).clone();
        p.solver.rtol = rtol;
        p.solver.atol = atol;
        Self::replace(&mut guard, p);
        Ok(())
    }

    /// Simulates at `theta` (None: the current values; a sequence of every entry; or a
    /// dict of entries to change by name).
    #[pyo3(signature = (theta = None))]
    fn simulate(&self, py: Python<'_>, theta: Option<&Bound<'_, PyAny>>) -> PyResult<Simulation> {
        let snap = self.snapshot();
        let p = snap.0.clone();
        let th = theta::resolve(py, &p, theta)?;
        let names = p.objective_names();
        let run = self.run(py, snap, |s| runs::simulate(s.setup(), &th, &names))?;
        Simulation::new(
            py,
            run,
            &p.objective_names(),
            p.dims.nx(),
            p.dims.outputs.len(),
        )
    }

    /// Cost and gradient at `theta` by `method` (adjoint, direct, fd or dual); with
    /// `tau=True` the events carry τ = dt_e/dθ (from the method's run for direct and dual,
    /// else from one direct pass), as `hybridopt gradient --json` reports them.
    #[pyo3(signature = (theta = None, method = "adjoint", tau = false))]
    fn gradient(
        &self, py: Python<'_>, theta: Option<&Bound<'_, PyAny>>, method: &str, tau: bool,
    ) -> PyResult<Gradient> {
        let m = Self::parse_method(py, method)?;
        let snap = self.snapshot();
        let p = snap.0.clone();
        let th = theta::resolve(py, &p, theta)?;
        let names = p.objective_names();
        let run = self.run(py, snap, |s| runs::gradient(s.setup(), &th, m, tau, &names))?;
        Gradient::new(py, run, m.name(), theta::names(&p), p.objective_names())
    }

    /// `(ψ, dψ/dx)` of the first objective over the optimized entries `x` (in the order of
    /// `optimized`, physical units; the other entries keep their values): the `fun` of
    /// `scipy.optimize.minimize(fun_and_grad, x0, jac=True)`. `method` defaults to the
    /// file's `[optimizer] gradient` (adjoint).
    #[pyo3(signature = (x, method = None))]
    fn fun_and_grad<'py>(
        &self, py: Python<'py>, x: Vec<f64>, method: Option<&str>,
    ) -> PyResult<(f64, Bound<'py, PyArray1<f64>>)> {
        let snap = self.snapshot();
        let p = snap.0.clone();
        let m = match method {
            Some(name) => Self::parse_method(py, name)?,
            None => p.optimizer.gradient,
        };
        let th = theta::with_free(py, &p, &x)?;
        let (cost, grad) = self.run(py, snap, |s| runs::first_objective(s.setup(), &th, m))?;
        let free: Vec<f64> = p.free_indices().iter().map(|&i| grad[i]).collect();
        Ok((cost, PyArray1::from_vec(py, free)))
    }

    /// `(r, J)` of a data fit at the optimized entries `x` (in the order of `optimized`):
    /// the residuals `√w (y(t_i) − d_i)/σ_i` of the first objective's `data` terms (and
    /// `√w (θ − target)` of its `parameter_squared` terms), and their exact Jacobian over
    /// `x` from one direct pass (`None` with `jacobian=False`): the `fun` and `jac` of
    /// `scipy.optimize.least_squares`. With `[[experiment]]` tables, the first
    /// experiment's.
    #[pyo3(signature = (x, jacobian = true))]
    #[allow(clippy::type_complexity)]
    fn residuals<'py>(
        &self, py: Python<'py>, x: Vec<f64>, jacobian: bool,
    ) -> PyResult<(Bound<'py, PyArray1<f64>>, Option<Bound<'py, PyArray2<f64>>>)> {
        let snap = self.snapshot();
        let p = snap.0.clone();
        let th = theta::with_free(py, &p, &x)?;
        let run = self.run(py, snap, |s| {
            hybridopt::sensitivity::residuals(s.setup(), &th, jacobian)
        })?;
        let free = p.free_indices();
        let j = run.jacobian.map(|j| {
            let rows: Vec<Vec<f64>> = (0..j.nrows())
                .map(|i| free.iter().map(|&k| j[(i, k)]).collect())
                .collect();
            PyArray2::from_vec2(py, &rows).expect("rows of one length")
        });
        Ok((PyArray1::from_vec(py, run.r.as_slice().to_vec()), j))
    }

    /// The feedback design of the file's `[feedback]` table, as `hybridopt feedback`
    /// makes it: writes its folder `out` (summary.json, gains.csv, the figures, with
    /// `animation=True` the GIF) and returns the summary as a dict whose `gains` also holds
    /// the gains as numpy arrays: `t` (n), `mode` (n), `x_ref` (n × states), `u_nom`
    /// (n × controls) and `k` (n × controls × states), u = u_nom + K (x − x_ref). The
    /// nominal is optimized first unless `optimize=False` (or `summary` names an
    /// optimize summary.json); `trials` overrides the robustness trials.
    #[pyo3(signature = (out, trials = None, optimize = true, animation = false, summary = None))]
    fn feedback<'py>(
        &self, py: Python<'py>, out: PathBuf, trials: Option<usize>, optimize: bool,
        animation: bool, summary: Option<PathBuf>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let p = self.current();
        let (text, g) = interrupt::run(py, move || {
            crate::feedback::design(&p, out, summary, optimize, trials, animation)
        })?;
        let d = py.import("json")?.call_method1("loads", (text,))?;
        let gains = d.get_item("gains")?;
        gains.set_item("t", PyArray1::from_vec(py, g.t))?;
        gains.set_item("mode", PyArray1::from_vec(py, g.mode))?;
        gains.set_item(
            "x_ref",
            PyArray2::from_vec2(py, &g.x_ref).map_err(|e| invalid(py, e.to_string()))?,
        )?;
        gains.set_item(
            "u_nom",
            PyArray2::from_vec2(py, &g.u_nom).map_err(|e| invalid(py, e.to_string()))?,
        )?;
        gains.set_item(
            "k",
            numpy::PyArray3::from_vec3(py, &g.k).map_err(|e| invalid(py, e.to_string()))?,
        )?;
        Ok(d)
    }

    /// A closed-loop run of the design of `[feedback]` at `theta` (default: the current
    /// values), the control clamped to the channels' bounds; `gains=False` runs the open
    /// loop (the nominal control, K = 0). A periodic design runs from the orbit's start
    /// moved by `push` (one value per state) for `steps` strikes of the closing guard; a
    /// time-varying one (no period) over the run's horizon from its start moved by `push`
    /// (`steps` unused). Returns a dict: `t` (the strike or impact times), `x_plus` (the
    /// states after each, the controller's states last), `walked` and `why` (None, or why
    /// the run fell or failed); along a run also `t_final`, `x_final`, `reached` (the
    /// problem's targets within `[feedback.robustness]`'s tolerances) and `errors` (the
    /// targets' errors: terminal outputs, then event times).
    #[pyo3(signature = (push, steps = 10, theta = None, gains = true))]
    fn closed_loop<'py>(
        &self, py: Python<'py>, push: Vec<f64>, steps: usize, theta: Option<&Bound<'_, PyAny>>,
        gains: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let snap = self.snapshot();
        let p = snap.0.clone();
        let th = theta::resolve(py, &p, theta)?;
        let run = self.run(py, snap, |s| {
            crate::feedback::closed_loop(&p, s.setup(), &th, &push, steps, gains)
        })?;
        let d = PyDict::new(py);
        d.set_item("t", PyArray1::from_vec(py, run.t))?;
        let x = if run.x_plus.is_empty() {
            PyArray2::zeros(py, [0, p.dims.nx() + 1], false)
        } else {
            PyArray2::from_vec2(py, &run.x_plus).map_err(|e| invalid(py, e.to_string()))?
        };
        d.set_item("x_plus", x)?;
        d.set_item("walked", run.walked)?;
        d.set_item("why", run.why)?;
        if let Some(tr) = run.track {
            d.set_item("t_final", tr.t_final)?;
            d.set_item("x_final", PyArray1::from_vec(py, tr.x_final))?;
            d.set_item("reached", tr.reached)?;
            d.set_item("errors", PyArray1::from_vec(py, tr.errors))?;
        }
        Ok(d)
    }

    /// The names of the constraints (`[[constraint]]` tables), in file order.
    fn constraint_names(&self) -> Vec<String> {
        self.current()
            .constraints
            .list
            .iter()
            .map(|c| c.name.clone())
            .collect()
    }

    /// The constraint rows at `x` (the optimized entries in the order of `optimized`, then
    /// t_end when it is free) as a dict: `names`, `values`, `lower`, `upper` (None where
    /// open) and `jacobian` (rows × len(x), exact: one forward run and one vector-adjoint
    /// pass), plus `cost` and `cost_gradient`. A path constraint has one row per point it
    /// is imposed at, so its number of rows can change with x.
    fn constraint_rows<'py>(&self, py: Python<'py>, x: Vec<f64>) -> PyResult<Bound<'py, PyDict>> {
        let snap = self.snapshot();
        let p = snap.0.clone();
        let point = self.run(py, snap, |s| runs::constrained(&p, s.setup(), &x))?;
        rows_dict(py, &point)
    }

    /// Multiple shooting's point, for a problem with a `[shooting]` table: what the
    /// library's SQP sees. The variables (`variables`) are the optimized entries of θ by
    /// name, `t_end` when the final time is free, then each interior node's states as
    /// `state@k`; `x` (default: the start — the
    /// current values and the guess's node states) in that order. Returns the dict of
    /// `constraint_rows` — the constraints' rows, then the continuity rows named
    /// `continuity[k].state` (node K is a periodic problem's closing), their `jacobian`
    /// exact (one direct pass per segment, the segments in parallel), `cost`,
    /// `cost_gradient` — plus `x`, the values it was evaluated at.
    #[pyo3(signature = (x = None))]
    fn shooting_point<'py>(
        &self, py: Python<'py>, x: Option<Vec<f64>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let snap = self.snapshot();
        let p = snap.0.clone();
        let point = self.run(py, snap, |s| runs::shooting(&p, s.setup(), x.as_deref()))?;
        let d = rows_dict(py, &point)?;
        d.set_item("x", PyArray1::from_vec(py, point.values.clone()))?;
        Ok(d)
    }

    /// The constraint values at `x` (see `constraint_rows`): the `fun` of a
    /// `scipy.optimize.NonlinearConstraint`.
    fn constraints<'py>(
        &self, py: Python<'py>, x: Vec<f64>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let snap = self.snapshot();
        let p = snap.0.clone();
        let point = self.run(py, snap, |s| runs::constrained(&p, s.setup(), &x))?;
        Ok(PyArray1::from_vec(
            py,
            point.rows.iter().map(|r| r.value).collect(),
        ))
    }

    /// The constraints' Jacobian at `x` (rows × len(x), see `constraint_rows`): the `jac`
    /// of a `scipy.optimize.NonlinearConstraint`.
    fn constraints_jacobian(&self, py: Python<'_>, x: Vec<f64>) -> PyResult<Vec<Vec<f64>>> {
        let snap = self.snapshot();
        let p = snap.0.clone();
        let point = self.run(py, snap, |s| runs::constrained(&p, s.setup(), &x))?;
        Ok(point.rows.iter().map(|r| r.gradient.clone()).collect())
    }

    /// Minimizes the first objective over the optimized entries from the current values
    /// with the library's optimizer, as `hybridopt optimize` does (the constrained solver
    /// when the problem has constraints or a free final time, the gait optimizer on the
    /// orbit's objective for a `[periodic]` problem); returns the CLI's
    /// `summary.json` as a dict (a data fit's statistics under `least_squares`). `solver`
    /// (lbfgs, gd, gauss_newton), `max_iters` and `gradient`
    /// (adjoint, direct, fd) default to the file's `[optimizer]`. The results folder
    /// (summary.json, history.csv, trajectories, figures) is written only when `out` is
    /// given. The problem's values are not changed.
    #[pyo3(signature = (solver = None, max_iters = None, gradient = None, out = None))]
    fn optimize<'py>(
        &self, py: Python<'py>, solver: Option<&str>, max_iters: Option<u64>,
        gradient: Option<&str>, out: Option<PathBuf>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let snap = self.snapshot();
        let mut p = (*snap.0).clone();
        if let Some(s) = solver {
            p.optimizer.solver = SolverKind::parse(s).ok_or_else(|| {
                invalid(
                    py,
                    format!("solver `{s}`: valid solvers are lbfgs, gd, gauss_newton, ilqr, ddp"),
                )
            })?;
        }
        if let Some(g) = gradient {
            p.optimizer.gradient = match Self::parse_method(py, g)? {
                GradientMethod::Dual => {
                    return Err(invalid(
                        py,
                        "gradient `dual`: the optimizer takes adjoint, direct or fd".into(),
                    ))
                }
                m => m,
            };
        }
        if let Some(n) = max_iters {
            p.optimizer.max_iters = n;
        }
        // the setup does not depend on the optimizer's settings changed here
        let text = self.run(py, snap, |s| runs::optimize(&p, s.setup(), out.as_deref()))?;
        py.import("json")?
            .call_method1("loads", (text,))?
            .cast_into::<PyDict>()
            .map_err(PyErr::from)
    }

    fn __repr__(&self) -> String {
        let p = self.current();
        format!(
            "Problem(name='{}', parameters={:?}, optimized={:?})",
            p.name,
            theta::names(&p),
            p.free_indices()
                .iter()
                .map(|&i| p.theta[i].name.as_str())
                .collect::<Vec<_>>()
        )
    }
}

/// The dict of `constraint_rows` and `shooting_point`.
fn rows_dict<'py>(
    py: Python<'py>, point: &hybridopt::optimize::ConstrainedPoint,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item(
        "names",
        point
            .rows
            .iter()
            .map(|r| r.name.clone())
            .collect::<Vec<_>>(),
    )?;
    d.set_item(
        "values",
        PyArray1::from_vec(py, point.rows.iter().map(|r| r.value).collect()),
    )?;
    d.set_item(
        "lower",
        point.rows.iter().map(|r| r.lower).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "upper",
        point.rows.iter().map(|r| r.upper).collect::<Vec<_>>(),
    )?;
    let jac: Vec<Vec<f64>> = point.rows.iter().map(|r| r.gradient.clone()).collect();
    d.set_item("jacobian", jac)?;
    d.set_item("cost", point.cost)?;
    d.set_item(
        "cost_gradient",
        PyArray1::from_vec(py, point.cost_gradient.clone()),
    )?;
    d.set_item("variables", point.variables.clone())?;
    Ok(d)
}
