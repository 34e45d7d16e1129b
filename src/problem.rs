//! The problem file: its schema (TOML, serde, `schema`) and its validation, one step per
//! table. Every error names the file, the key as a dotted path and its line, and says
//! what would be valid (`document`). The optimizer's runtime types (θ's entries and
//! transforms, the settings) live in [`crate::optimize`](mod@crate::optimize): this module reads them from the
//! file; the optimizer does not know about files.

mod constraints;
mod controls;
mod costs;
mod data;
pub(crate) mod document;
mod experiments;
mod feedback;
mod file_names;
mod guard_spec;
mod keys;
mod kinds;
mod optimized;
mod optimizer;
mod parameters;
mod periodic;
mod plot;
mod quantity_spec;
mod resolver;
pub(crate) mod schema;
mod shooting;
mod simulation;

use crate::constraint::Constraints;
use crate::control::ControlGrid;
use crate::cost::{Objective, Reference, Term};
use crate::error::Error;
use crate::integrate::{EventOptions, SolverOptions};
use crate::model::{Dims, HybridSystem};
use crate::setup::Setup;
use crate::systems::build_error::BuildError;
use crate::systems::builtin::Builtin;
pub use costs::{CostEntry, CostTerm};
use document::{key, variants, Document, Tagged};
pub use experiments::Experiment;
pub use optimized::Optimized;
use schema::{ConstraintSpec, CostSpec, FileSpec, SystemSpec};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

// Re-exported for callers that read them with a problem (they are the optimizer's).
pub use crate::optimize::{
    parse_gradient_method, OptimizerSettings, SolverKind, ThetaEntry, Transform,
};

/// A validated problem file: the system, horizon, θ with bounds, costs and optimizer
/// settings ([`Problem::load`] reads one, [`Problem::parse`] takes its text).
///
/// ```
/// use hybridopt::prelude::*;
/// use std::path::Path;
///
/// let text = r#"
/// name = "third_impact"
/// [system]
/// kind = "bouncing_ball"
/// [simulation]
/// t_end = 10.0
/// rtol = 1e-10
/// stop_after = { guard = "ground", occurrence = 3 }
/// [parameters]
/// c = { value = 0.0 }
/// v0 = { value = 0.5, optimize = true, lower = 0.0 }
/// [[cost]]
/// kind = "event_time_squared"
/// guard = "any"
/// occurrence = 3
/// target = 2.0
/// "#;
/// let problem = Problem::parse(text, Path::new("third_impact.toml"))?;
/// let setup = problem.setup()?;
/// let ev = evaluate(&setup, &problem.theta_values(), GradientMethod::Adjoint)?;
/// assert_eq!(ev.gradients[0].len(), problem.theta.len());
/// let r = optimize(&setup, &problem.theta, &problem.optimizer, None)?;
/// assert!(r.converged() && r.final_cost < 1e-12, "{r}");
/// # Ok::<(), hybridopt::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Problem {
    pub name: String,
    pub description: String,
    pub file: PathBuf,
    pub system: Builtin,
    pub dims: Dims,
    pub t0: f64,
    pub t_end: f64,
    pub solver: SolverOptions,
    pub events: EventOptions,
    /// θ = (parameters, control coefficients), in the engine's order.
    pub theta: Vec<ThetaEntry>,
    pub controls: Option<ControlGrid>,
    pub costs: Vec<CostEntry>,
    /// `[[constraint]]` tables and a free final time: when either is present, `optimize`
    /// runs the constrained solver ([`crate::optimize::optimize_constrained`]).
    pub constraints: Constraints,
    /// Parameter overrides for a tracking reference run.
    pub reference: Option<BTreeMap<String, f64>>,
    pub optimizer: OptimizerSettings,
    pub plot_outputs: Vec<usize>,
    /// `[periodic]`, validated ([`Problem::periodic_spec`] gives it with the current
    /// integration settings).
    pub periodic: Option<crate::periodic::PeriodicSpec>,
    /// `[shooting]`: multiple shooting's nodes, guess and periodic closing; when present,
    /// `optimize` runs [`crate::optimize::optimize_shooting`].
    pub shooting: Option<crate::optimize::Shooting>,
    /// `[plot.geometry]`: a geometry from the outputs, for pictures of the motion.
    pub plot_geometry: Option<crate::animate::GeometrySpec>,
    /// `[plot] loops`: pairs (x, y) of output indices drawn against each other
    /// (`crate::output::loops`).
    pub plot_loops: Vec<(usize, usize)>,
    /// `[[experiment]]`: records fitted together (empty: the file's one run). θ's values
    /// are the first experiment's, so a plain run is the first experiment's.
    pub experiments: Vec<Experiment>,
    /// `[feedback]`: the LQR design and robustness runs of `hybridopt feedback`.
    pub feedback: Option<crate::feedback::FeedbackSettings>,
}

impl Problem {
    /// Reads and validates a problem file.
    pub fn load(path: &Path) -> Result<Problem, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
            path: path.to_path_buf(),
            source: e,
        })?;
        Self::parse(&text, path)
    }

    /// Parses and validates problem text (`path` names it in messages).
    pub fn parse(text: &str, path: &Path) -> Result<Problem, Error> {
        let doc = Document::parse(text, path)?;
        let spec: FileSpec = doc.read(&[
            (Tagged::Table("system"), variants::<SystemSpec>()),
            (Tagged::Entries("cost"), variants::<CostSpec>()),
            (Tagged::Entries("constraint"), variants::<ConstraintSpec>()),
        ])?;
        let system = build_system(&spec.system, &doc)?;
        let dims = system.dims();
        let (solver, events) = simulation::options(&spec.simulation, &dims, &doc)?;
        let mut theta = parameters::entries(&spec.parameters, &system, &dims, &doc)?;
        let controls = controls::grid(
            spec.controls.as_ref(),
            &spec.simulation,
            system.kind(),
            &dims,
            &doc,
            &mut theta,
        )?;
        let horizon = (spec.simulation.t0, spec.simulation.t_end.value());
        let costs = costs::entries(&spec.cost, &dims, &theta, horizon, &doc)?;
        let experiments =
            experiments::read(&spec.experiment, &costs, &dims, &theta, horizon, &doc)?;
        if let Some(first) = experiments.first() {
            for &(i, v) in &first.parameters {
                theta[i].value = v;
            }
        }
        let constraints = read_constraints(&spec, &dims, &theta, &doc)?;
        let reference = costs::reference(spec.reference.as_ref(), &costs, &dims, &doc)?;
        let solver_given = spec.optimizer.as_ref().is_some_and(|o| o.solver.is_some());
        let mut optimizer = optimizer::settings(&spec.optimizer.unwrap_or_default(), &doc)?;
        choose_solver(
            &mut optimizer,
            solver_given,
            &costs,
            &constraints,
            &experiments,
            &doc,
        )?;
        let plot = plot::read(spec.plot.as_ref(), &dims, &doc)?;
        let (shooting, feedback) = shooting_and_feedback(
            spec.shooting.as_ref(),
            spec.periodic.is_some(),
            spec.feedback.as_ref(),
            &dims,
            &doc,
        )?;
        let periodic = spec
            .periodic
            .as_ref()
            .map(|t| {
                let horizon = spec.simulation.t_end.value() - spec.simulation.t0;
                periodic::read(
                    t,
                    &periodic::Context::new(&dims, solver, events, horizon, &doc),
                )
            })
            .transpose()?;
        let name = problem_name(spec.name, path, &doc)?;
        Ok(Problem {
            name,
            description: spec.description.unwrap_or_default(),
            file: path.to_path_buf(),
            system,
            dims,
            t0: spec.simulation.t0,
            t_end: spec.simulation.t_end.value(),
            solver,
            events,
            theta,
            controls,
            costs,
            constraints,
            reference,
            optimizer,
            plot_outputs: plot.outputs,
            periodic,
            shooting,
            plot_geometry: plot.geometry,
            plot_loops: plot.loops,
            experiments,
            feedback,
        })
    }

    /// The periodic-orbit settings of `[periodic]`, integrated with the problem's current
    /// settings (`[simulation]` rtol, atol, method and the event options); an error naming
    /// the file when it has no `[periodic]` table.
    pub fn periodic_spec(&self) -> Result<crate::periodic::PeriodicSpec, Error> {
        let mut spec = self.periodic.clone().ok_or_else(|| Error::Problem {
            file: self.file.clone(),
            message:
                "no [periodic] table (it names the section, the free components and the guess)"
                    .into(),
        })?;
        spec.map.solver = self.solver;
        spec.map.events = self.events;
        Ok(spec)
    }

    /// Sets a parameter's value (`--param NAME=VALUE`), checking the name and the bounds.
    pub fn set_param(&mut self, name: &str, value: f64) -> Result<(), Error> {
        let np = self.dims.np();
        let Some(e) = self.theta[..np].iter_mut().find(|e| e.name == name) else {
            return Err(Error::Flag {
                flag: "--param".into(),
                value: name.into(),
                message: format!("unknown parameter; valid: {}", self.dims.params.join(", ")),
            });
        };
        let flag = |message: String| Error::Flag {
            flag: "--param".into(),
            value: format!("{name}={value}"),
            message,
        };
        if !value.is_finite() {
            return Err(flag("not a finite number".into()));
        }
        if e.lower.is_some_and(|l| !(value > l)) || e.upper.is_some_and(|u| !(value < u)) {
            return Err(flag(format!(
                "outside the bounds ({:?}, {:?}) of the problem file",
                e.lower, e.upper
            )));
        }
        e.value = value;
        Ok(())
    }

    /// The values of θ.
    pub fn theta_values(&self) -> Vec<f64> {
        self.theta.iter().map(|e| e.value).collect()
    }

    /// The names of the objectives in order of first appearance.
    pub fn objective_names(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for c in &self.costs {
            if !v.contains(&c.objective) {
                v.push(c.objective.clone());
            }
        }
        v
    }

    /// The engine setup (runs the reference simulation of tracking terms); with
    /// `[[experiment]]` tables, the first experiment's.
    pub fn setup(&self) -> Result<Setup<'_, Builtin>, Error> {
        match self.experiments.first() {
            Some(e) => self.setup_for(e.t_end, &e.records),
            None => self.setup_for(self.t_end, &[]),
        }
    }

    /// Each experiment's setup with its θ (its fixed parameters set in `theta`).
    pub fn experiment_setups(
        &self, theta: &[f64],
    ) -> Result<Vec<(Setup<'_, Builtin>, Vec<f64>)>, Error> {
        self.experiments
            .iter()
            .map(|e| Ok((self.setup_for(e.t_end, &e.records)?, e.theta(theta))))
            .collect()
    }

    /// The setup on the horizon `[t0, t_end]`, the file-less data terms reading `records`
    /// (in cost order).
    fn setup_for(
        &self, t_end: f64, records: &[Arc<crate::cost::Samples>],
    ) -> Result<Setup<'_, Builtin>, Error> {
        let mut records = records.iter();
        let mut base = Setup::new(&self.system, self.t0, t_end, self.controls.clone(), vec![]);
        base.solver = self.solver;
        base.events = self.events;
        let reference = match &self.reference {
            Some(over) if self.costs.iter().any(CostEntry::is_track) => {
                let mut th = self.theta_values();
                for (name, v) in over {
                    let i = self.dims.param_index(name).ok_or_else(|| Error::Problem {
                        file: self.file.clone(),
                        message: format!("[reference.params] `{name}` is not a parameter"),
                    })?;
                    th[i] = *v;
                }
                let traj = base.simulate(&th)?;
                Some(Arc::new(Reference {
                    trajectory: traj,
                    theta: th,
                }))
            }
            _ => None,
        };
        let mut objectives = Vec::new();
        for name in self.objective_names() {
            let mut terms = Vec::new();
            for c in self.costs.iter().filter(|c| c.objective == name) {
                let term = match &c.term {
                    CostTerm::Term(t) => t.clone(),
                    CostTerm::ExperimentData { weight, .. } => Term::Data {
                        samples: records.next().cloned().ok_or_else(|| {
                            Error::Internal("an experiment without a record for a data term".into())
                        })?,
                        weight: *weight,
                    },
                    CostTerm::Track { output, weight } => Term::Track {
                        output: *output,
                        weight: *weight,
                        reference: reference.clone().ok_or_else(|| Error::Problem {
                            file: self.file.clone(),
                            message: "a `track` cost term needs a [reference] table".into(),
                        })?,
                    },
                };
                terms.push(term);
            }
            objectives.push(Objective::new(&name, terms));
        }
        let mut s = Setup::new(
            &self.system,
            self.t0,
            t_end,
            self.controls.clone(),
            objectives,
        );
        s.solver = self.solver;
        s.events = self.events;
        Ok(s)
    }

    /// Runs the trajectory optimizer the problem calls for on `setup` (built by
    /// [`Self::setup`]) from `theta` (a `[periodic]` problem's gait optimizer is
    /// [`Problem::optimize`]'s other branch): `gauss_newton` fits the data (by multiple shooting with a `[shooting]` table,
    /// [`crate::optimize::optimize_shooting_fit`]); otherwise multiple shooting with a
    /// `[shooting]` table, the constrained solver when it has
    /// constraints or a free final time, else `[optimizer] solver` (L-BFGS or steepest
    /// descent); `ilqr` and `ddp` run the hybrid iLQR / DDP (constraints by an augmented Lagrangian),
    /// which take a free final time as the last stage's decision and refuse multiple shooting.
    pub fn optimize_trajectory(
        &self, setup: &Setup<'_, Builtin>, theta: &[ThetaEntry],
        progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>>,
    ) -> Result<crate::optimize::OptimizeResult, Error> {
        self.require_costs("optimize")?;
        if !self.experiments.is_empty()
            && self.optimizer.solver != crate::optimize::SolverKind::GaussNewton
        {
            return Err(Error::Invalid(format!(
                "{}: several [[experiment]] tables are fitted together by gauss_newton only; drop --solver {}",
                self.file.display(),
                self.optimizer.solver.name()
            )));
        }
        if self.optimizer.solver == crate::optimize::SolverKind::GaussNewton {
            let runs = self.fit_runs(setup, theta)?;
            match &self.shooting {
                // multiple shooting on the data: Bock's generalized Gauss–Newton
                Some(shooting) => {
                    crate::optimize::optimize_shooting_fit(&runs, theta, shooting, &self.optimizer)
                }
                None => crate::optimize::optimize_least_squares(&runs, theta, &self.optimizer),
            }
        } else if matches!(
            self.optimizer.solver,
            crate::optimize::SolverKind::Ilqr | crate::optimize::SolverKind::Ddp
        ) {
            self.optimize_ilqr(setup, theta, progress)
        } else if let Some(shooting) = &self.shooting {
            crate::optimize::optimize_shooting(
                setup,
                theta,
                &self.constraints,
                shooting,
                &self.optimizer,
                progress,
            )
        } else if self.constraints.is_empty() {
            crate::optimize::optimize(setup, theta, &self.optimizer, progress)
        } else {
            crate::optimize::optimize_constrained(
                setup,
                theta,
                &self.constraints,
                &self.optimizer,
                progress,
            )
        }
    }

    /// The hybrid iLQR ([`crate::optimize::optimize_ilqr`]); with constraints, its
    /// augmented-Lagrangian loop ([`crate::optimize::optimize_ilqr_constrained`]); a
    /// periodic `[shooting]` problem by the same loop closing at its event
    /// ([`crate::optimize::optimize_ilqr_periodic`]: the DDP's stages are its nodes, the
    /// table's own are not used); or the typed error naming what the file has that it does
    /// not take (multiple shooting's nodes from a guess table).
    fn optimize_ilqr(
        &self, setup: &Setup<'_, Builtin>, theta: &[ThetaEntry],
        progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>>,
    ) -> Result<crate::optimize::OptimizeResult, Error> {
        use crate::optimize::IlqrError;
        match self.shooting.as_ref().map(|s| s.closure.as_ref()) {
            Some(Some(closure)) => {
                return crate::optimize::optimize_ilqr_periodic(
                    setup,
                    theta,
                    &self.constraints,
                    closure,
                    &self.optimizer,
                    progress,
                );
            }
            Some(None) => {
                let what = "a [shooting] table without a periodic closing";
                return Err(IlqrError::Unsupported { what }.into());
            }
            None => {}
        }
        if !self.constraints.is_empty() {
            return crate::optimize::optimize_ilqr_constrained(
                setup,
                theta,
                &self.constraints,
                &self.optimizer,
                progress,
            );
        }
        crate::optimize::optimize_ilqr(setup, theta, &self.optimizer, progress)
    }

    /// The experiments of a fit from θ's values: each experiment's setup and θ, or the one
    /// run of `setup` when the file has no `[[experiment]]`.
    fn fit_runs<'s>(
        &'s self, setup: &Setup<'s, Builtin>, theta: &[ThetaEntry],
    ) -> Result<Vec<crate::optimize::FitRun<'s, Builtin>>, Error> {
        if let Some(what) = crate::sensitivity::least_squares_obstacle(setup) {
            return Err(Error::Invalid(format!(
                "gauss_newton fits a cost of `data` and `parameter_squared` terms; this cost has {what}: use lbfgs"
            )));
        }
        let values: Vec<f64> = setup
            .resolve_theta(theta)?
            .iter()
            .map(|e| e.value)
            .collect();
        if self.experiments.is_empty() {
            return Ok(vec![crate::optimize::FitRun {
                name: self.name.clone(),
                setup: setup.clone(),
                theta: values,
            }]);
        }
        Ok(self
            .experiment_setups(&values)?
            .into_iter()
            .zip(&self.experiments)
            .map(|((setup, theta), e)| crate::optimize::FitRun {
                name: e.name.clone(),
                setup,
                theta,
            })
            .collect())
    }

    /// An error unless the file has `[[cost]]` terms, which `what` (a command: optimize,
    /// gradient, sweep) needs; simulating and animating need none, nor does a periodic
    /// orbit's optimization (its objectives are the orbit's).
    pub fn require_costs(&self, what: &str) -> Result<(), Error> {
        if !self.costs.is_empty() || (what == "optimize" && self.periodic.is_some()) {
            return Ok(());
        }
        Err(Error::Problem {
            file: self.file.clone(),
            message: format!(
                "the file has no [[cost]] terms; `{what}` needs at least one (`simulate` and `animate` run without)"
            ),
        })
    }

    /// Indices of θ that are optimized.
    pub fn free_indices(&self) -> Vec<usize> {
        (0..self.theta.len())
            .filter(|&i| self.theta[i].optimize)
            .collect()
    }

    /// The system (for generic calls).
    pub fn system(&self) -> &impl HybridSystem {
        &self.system
    }
}

/// `[[constraint]]` tables and a free final time; a `final_time` cost without a free final
/// time is refused at its entry.
fn read_constraints(
    spec: &FileSpec, dims: &Dims, theta: &[ThetaEntry], doc: &Document<'_>,
) -> Result<Constraints, Error> {
    let free_time = simulation::free_time(&spec.simulation, doc)?;
    if let Some(i) = spec
        .cost
        .iter()
        .position(CostSpec::is_final_time)
        .filter(|_| free_time.is_none())
    {
        return Err(doc.error(
            &[key("cost"), document::Seg::Entry(i), key("kind")],
            "a `final_time` cost needs a free final time: write [simulation] t_end = { value = …, optimize = true, lower = …, upper = … }",
        ));
    }
    Ok(Constraints {
        list: constraints::entries(&spec.constraint, dims, theta, free_time, doc)?,
        free_time,
    })
}

/// `[optimizer] solver` for the file's costs: a pure data fit (data and parameter_squared
/// terms, no constraints) runs Gauss–Newton unless the file names a solver; Gauss–Newton
/// needs such a cost, and several experiments need Gauss–Newton.
fn choose_solver(
    optimizer: &mut OptimizerSettings, solver_given: bool, costs: &[CostEntry],
    constraints: &Constraints, experiments: &[Experiment], doc: &Document<'_>,
) -> Result<(), Error> {
    // a pure data fit (data and parameter_squared terms, no constraints) runs
    // Gauss–Newton unless the file names a solver
    let pure_data = costs.iter().any(CostEntry::is_data)
        && costs
            .iter()
            .all(|c| c.is_data() || c.is_parameter_squared());
    if !solver_given && pure_data && constraints.is_empty() {
        optimizer.solver = crate::optimize::SolverKind::GaussNewton;
    }
    if optimizer.solver == crate::optimize::SolverKind::GaussNewton && !pure_data {
        return Err(doc.error(
                &[key("optimizer"), key("solver")],
                "gauss_newton fits a cost made of `data` terms (and `parameter_squared` terms) only; use lbfgs for other costs",
            ));
    }
    if !experiments.is_empty() && optimizer.solver != crate::optimize::SolverKind::GaussNewton {
        return Err(doc.error(
                &[key("optimizer"), key("solver")],
                "several [[experiment]] tables are fitted together by gauss_newton; drop `solver` or set it to \"gauss_newton\"",
            ));
    }
    Ok(())
}

/// The file's `name` (checked: it names the results folder), else its stem.
fn problem_name(name: Option<String>, path: &Path, doc: &Document<'_>) -> Result<String, Error> {
    if let Some(why) = name.as_deref().and_then(file_names::unusable) {
        return Err(doc.error(
            &[key("name")],
            format!(
                "{:?} cannot name the results folder: {why}; use {}",
                name.as_deref().unwrap_or_default(),
                file_names::VALID
            ),
        ));
    }
    Ok(name.unwrap_or_else(|| {
        path.file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| "problem".into())
    }))
}

/// `[shooting]` (not with `[periodic]`) and `[feedback]`.
fn shooting_and_feedback(
    shooting: Option<&schema::ShootingSpec>, periodic: bool,
    feedback: Option<&schema::FeedbackSpec>, dims: &Dims, doc: &Document<'_>,
) -> Result<
    (
        Option<crate::optimize::Shooting>,
        Option<crate::feedback::FeedbackSettings>,
    ),
    Error,
> {
    let shooting = shooting.map(|s| shooting::read(s, dims, doc)).transpose()?;
    if shooting.is_some() && periodic {
        return Err(doc.error(
            &[key("shooting")],
            "a file has either [periodic] (the return map's fixed point) or [shooting] (multiple shooting, with `periodic = { guard = … }` for a periodic problem), not both",
        ));
    }
    let feedback = feedback.map(|f| feedback::read(f, dims, doc)).transpose()?;
    Ok((shooting, feedback))
}

/// The system of `[system]`; a custom system's error points at the line it names.
fn build_system(spec: &SystemSpec, doc: &Document<'_>) -> Result<Builtin, Error> {
    spec.build().map_err(|e| match e {
        BuildError::Custom(c) => doc.problem(c.located(doc.text)),
        BuildError::Model(m) => doc.error(&[key("system")], m),
        e @ BuildError::UnknownActuator { .. } => doc.error(&[key("system"), key("actuators")], e),
        e @ (BuildError::UnknownAlgebraic { .. } | BuildError::MissingAlgebraic { .. }) => {
            doc.error(&[key("system"), key("initial_algebraic")], e)
        }
        BuildError::ShearFrame(e) => doc.error(&[key("system"), key(e.key())], e),
    })
}
