//! A builder for [`Setup`], so that a user names what differs from the defaults and
//! nothing else.

use super::definition::Setup;
use super::system_ref::SystemRef;
use crate::control::ControlGrid;
use crate::cost::Objective;
use crate::integrate::{Checkpointing, EventOptions, Method, SolverOptions};
use crate::model::HybridSystem;
use std::sync::Arc;

/// Builds a [`Setup`] step by step (see [`Setup::builder`]).
///
/// ```
/// use hybridopt::cost::{Objective, Quantity, Term};
/// use hybridopt::setup::Setup;
/// use hybridopt::systems::BouncingBall;
///
/// let ball = BouncingBall;
/// let height = Term::squared(Quantity::Terminal { output: 0 }, 0.2, 1.0);
/// let setup = Setup::builder(&ball)
///     .horizon(0.0, 1.3)
///     .objective(Objective::new("height", vec![height]))
///     .tolerances(1e-10, 1e-12)
///     .build();
/// assert_eq!(setup.t_end(), 1.3);
/// assert_eq!(setup.solver().rtol, 1e-10);
/// ```
pub struct SetupBuilder<'a, S: HybridSystem> {
    sys: SystemRef<'a, S>,
    t0: f64,
    t_end: f64,
    controls: Option<ControlGrid>,
    objectives: Vec<Objective>,
    extra_breakpoints: Vec<f64>,
    solver: SolverOptions,
    events: EventOptions,
    checkpointing: Checkpointing,
}

impl<'a, S: HybridSystem> SetupBuilder<'a, S> {
    pub(super) fn new(sys: SystemRef<'a, S>) -> Self {
        SetupBuilder {
            sys,
            t0: 0.0,
            t_end: 1.0,
            controls: None,
            objectives: Vec::new(),
            extra_breakpoints: Vec::new(),
            solver: SolverOptions::default(),
            events: EventOptions::default(),
            checkpointing: Checkpointing::default(),
        }
    }

    /// A builder holding `setup`'s system and every setting (see [`Setup::to_builder`]).
    pub(super) fn from_setup(setup: &Setup<'a, S>) -> Self {
        SetupBuilder {
            sys: setup.sys.clone(),
            t0: setup.t0,
            t_end: setup.t_end,
            controls: setup.controls.clone(),
            objectives: setup.objectives.clone(),
            extra_breakpoints: setup.extra_breakpoints.clone(),
            solver: setup.solver,
            events: setup.events,
            checkpointing: setup.checkpointing,
        }
    }

    /// The horizon [t0, t_end] (default [0, 1]).
    pub fn horizon(mut self, t0: f64, t_end: f64) -> Self {
        (self.t0, self.t_end) = (t0, t_end);
        self
    }

    /// A control grid; its coefficients follow the parameters in θ.
    pub fn controls(mut self, grid: ControlGrid) -> Self {
        self.controls = Some(grid);
        self
    }

    /// Adds an objective (a vector ψ is several).
    pub fn objective(mut self, objective: Objective) -> Self {
        self.objectives.push(objective);
        self
    }

    /// A fixed time where the integration restarts.
    pub fn breakpoint(mut self, t: f64) -> Self {
        self.extra_breakpoints.push(t);
        self
    }

    /// The integrator's settings.
    pub fn solver(mut self, solver: SolverOptions) -> Self {
        self.solver = solver;
        self
    }

    /// Relative and absolute tolerances, keeping the other solver settings.
    pub fn tolerances(mut self, rtol: f64, atol: f64) -> Self {
        (self.solver.rtol, self.solver.atol) = (rtol, atol);
        self
    }

    /// The integration method, keeping the other solver settings.
    pub fn method(mut self, method: Method) -> Self {
        self.solver.method = method;
        self
    }

    /// The event settings (Zeno limit, grazing threshold, stop after an occurrence).
    pub fn events(mut self, events: EventOptions) -> Self {
        self.events = events;
        self
    }

    /// What the adjoint's forward run keeps of its dense output.
    pub fn checkpointing(mut self, keep: Checkpointing) -> Self {
        self.checkpointing = keep;
        self
    }

    /// The setup.
    pub fn build(self) -> Setup<'a, S> {
        let mut s = Setup::with_system(
            self.sys,
            self.t0,
            self.t_end,
            self.controls,
            self.objectives,
        );
        s.extra_breakpoints = self.extra_breakpoints;
        s.solver = self.solver;
        s.events = self.events;
        s.checkpointing = self.checkpointing;
        s
    }
}

impl<'a, S: HybridSystem> Setup<'a, S> {
    /// A builder over a borrowed system (defaults: horizon [0, 1], no controls, no
    /// objectives, default solver, event and checkpointing settings).
    pub fn builder(sys: &'a S) -> SetupBuilder<'a, S> {
        SetupBuilder::new(SystemRef::Borrowed(sys))
    }

    /// A builder over a shared system (the setup it builds is `'static`).
    pub fn builder_shared(sys: Arc<S>) -> SetupBuilder<'static, S> {
        SetupBuilder::new(SystemRef::Shared(sys))
    }

    /// A builder holding this setup's system and every setting, to build a changed copy:
    /// a setup is never changed in place, since its quadrature states and sparse Newton
    /// structures follow from its objectives and system.
    ///
    /// ```
    /// use hybridopt::prelude::*;
    /// use hybridopt::systems::BouncingBall;
    ///
    /// let coarse = Setup::builder(&BouncingBall).horizon(0.0, 2.0).build();
    /// let fine = coarse.to_builder().tolerances(1e-11, 1e-12).build();
    /// assert_eq!((fine.t_end(), fine.solver().rtol), (2.0, 1e-11));
    /// ```
    pub fn to_builder(&self) -> SetupBuilder<'a, S> {
        SetupBuilder::from_setup(self)
    }
}
