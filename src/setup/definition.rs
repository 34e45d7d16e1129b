//! The setup itself: the system, the horizon, the controls, the objectives and the
//! solver settings, with their sizes and θ's names (what the other files of `setup/`
//! compute with it is listed in the module's doc).

use super::sparse_flows::SparseFlows;
use super::system_ref::SystemRef;
use super::theta::ThetaEntry;
use crate::control::ControlGrid;
use crate::cost::Objective;
use crate::error::ModelError;
use crate::integrate::{Checkpointing, EventOptions, SolverOptions};
use crate::model::{Dims, HybridSystem, Scalar};
use std::sync::Arc;

/// System + horizon + controls + objectives + solver settings.
///
/// ```
/// use hybridopt::prelude::*;
/// use hybridopt::systems::BouncingBall;
/// use std::sync::Arc;
///
/// let y_end = Objective::new("y_end", vec![Term::plain(Quantity::Terminal { output: 0 }, 1.0)]);
/// // borrowed: Setup::new(&sys, t0, t_end, controls, objectives)
/// let borrowed = Setup::new(&BouncingBall, 0.0, 1.0, None, vec![y_end.clone()]);
/// // shared: 'static, so it can move to another thread
/// let shared = Setup::builder_shared(Arc::new(BouncingBall))
///     .horizon(0.0, 1.0).objective(y_end).build();
/// let theta = [9.81, 0.8, 0.1, 1.0, 0.0];
/// let there = std::thread::spawn(move || evaluate(&shared, &theta, GradientMethod::Adjoint))
///     .join().unwrap()?;
/// let here = evaluate(&borrowed, &theta, GradientMethod::Adjoint)?;
/// assert_eq!(here.values, there.values);
/// # Ok::<(), hybridopt::Error>(())
/// ```
#[derive(Clone)]
pub struct Setup<'a, S: HybridSystem> {
    /// The system, borrowed or shared (it dereferences to `S`).
    pub sys: SystemRef<'a, S>,
    /// The system's names ([`HybridSystem::dims`]), queried once when the setup is made.
    pub(crate) dims: Dims,
    pub(crate) t0: f64,
    pub(crate) t_end: f64,
    pub(crate) controls: Option<ControlGrid>,
    pub(crate) objectives: Vec<Objective>,
    /// Fixed times where the integration restarts (besides control nodes and the event
    /// times of tracking references, which are added automatically).
    pub(crate) extra_breakpoints: Vec<f64>,
    pub(crate) solver: SolverOptions,
    pub(crate) events: EventOptions,
    /// What the adjoint's forward run keeps of its dense output.
    pub(crate) checkpointing: Checkpointing,
    /// (objective, term) of each quadrature state z_j.
    pub(super) running: Vec<(usize, usize)>,
    /// The sparse Newton structures of the modes with a declared flow pattern.
    pub(super) sparse: SparseFlows,
}

impl<S: HybridSystem> Setup<'static, S> {
    /// A setup that shares ownership of its system, so that it borrows nothing and can
    /// be kept in long-lived objects or sent to other threads.
    pub fn shared(
        sys: Arc<S>, t0: f64, t_end: f64, controls: Option<ControlGrid>, objectives: Vec<Objective>,
    ) -> Self {
        Self::with_system(SystemRef::Shared(sys), t0, t_end, controls, objectives)
    }
}

impl<'a, S: HybridSystem> Setup<'a, S> {
    /// A setup that borrows its system.
    pub fn new(
        sys: &'a S, t0: f64, t_end: f64, controls: Option<ControlGrid>, objectives: Vec<Objective>,
    ) -> Self {
        Self::with_system(SystemRef::Borrowed(sys), t0, t_end, controls, objectives)
    }

    pub(super) fn with_system(
        sys: SystemRef<'a, S>, t0: f64, t_end: f64, controls: Option<ControlGrid>,
        objectives: Vec<Objective>,
    ) -> Self {
        let dims = sys.dims();
        let sparse = SparseFlows::new(dims.modes.len());
        let mut running = Vec::new();
        for (i, o) in objectives.iter().enumerate() {
            for (j, t) in o.terms.iter().enumerate() {
                if t.is_running() {
                    running.push((i, j));
                }
            }
        }
        Setup {
            sys,
            dims,
            t0,
            t_end,
            controls,
            objectives,
            extra_breakpoints: Vec::new(),
            solver: SolverOptions::default(),
            events: EventOptions::default(),
            checkpointing: Checkpointing::default(),
            running,
            sparse,
        }
    }

    /// A copy that carries only objective `i` (so that an optimizer that needs one cost
    /// does not pay for the others' quadratures and adjoint passes).
    pub fn only_objective(&self, i: usize) -> Setup<'a, S> {
        self.with_objectives(vec![self.objectives[i].clone()])
    }

    /// The system's names ([`HybridSystem::dims`]).
    pub fn dims(&self) -> &Dims {
        &self.dims
    }

    /// The horizon's start.
    pub fn t0(&self) -> f64 {
        self.t0
    }

    /// The horizon's end.
    pub fn t_end(&self) -> f64 {
        self.t_end
    }

    /// The control grid, if any.
    pub fn controls(&self) -> Option<&ControlGrid> {
        self.controls.as_ref()
    }

    /// The objectives (a vector ψ has several).
    pub fn objectives(&self) -> &[Objective] {
        &self.objectives
    }

    /// The fixed restart times given besides the automatic ones.
    pub fn extra_breakpoints(&self) -> &[f64] {
        &self.extra_breakpoints
    }

    /// The integrator's settings.
    pub fn solver(&self) -> SolverOptions {
        self.solver
    }

    /// The event settings.
    pub fn events(&self) -> EventOptions {
        self.events
    }

    /// What the adjoint's forward run keeps of its dense output.
    pub fn checkpointing(&self) -> Checkpointing {
        self.checkpointing
    }

    /// A copy with `objectives` in place of its own (everything else the same).
    pub fn with_objectives(&self, objectives: Vec<Objective>) -> Setup<'a, S> {
        let mut s = Setup::with_system(
            self.sys.clone(),
            self.t0,
            self.t_end,
            self.controls.clone(),
            objectives,
        );
        s.extra_breakpoints = self.extra_breakpoints.clone();
        s.solver = self.solver;
        s.events = self.events;
        s.checkpointing = self.checkpointing;
        s
    }

    /// The system.
    pub fn sys(&self) -> &S {
        &self.sys
    }

    pub fn nx(&self) -> usize {
        self.dims.nx()
    }

    pub fn nz(&self) -> usize {
        self.running.len()
    }

    /// Length of X = (x, z).
    pub fn n(&self) -> usize {
        self.nx() + self.nz()
    }

    pub fn np(&self) -> usize {
        self.dims.np()
    }

    pub fn nu(&self) -> usize {
        self.dims.nu()
    }

    /// Number of control coefficients.
    pub fn nc(&self) -> usize {
        self.controls.as_ref().map_or(0, |g| g.len())
    }

    pub fn ntheta(&self) -> usize {
        self.np() + self.nc()
    }

    /// Quadrature states (index into z) of each objective's running terms.
    pub fn running_of(&self, objective: usize) -> Vec<(usize, usize)> {
        self.running
            .iter()
            .enumerate()
            .filter(|(_, (o, _))| *o == objective)
            .map(|(z, &(_, term))| (z, term))
            .collect()
    }

    /// Names of θ: the parameters, then `control[k]` for each coefficient.
    pub fn theta_names(&self) -> Vec<String> {
        let mut v = self.dims.params.clone();
        if let Some(g) = &self.controls {
            for (j, name) in self.dims.controls.iter().enumerate() {
                for k in 0..g.n_coef() {
                    let _ = j;
                    v.push(format!("{name}[{k}]"));
                }
            }
        }
        v
    }

    /// θ's entries matched to [`Self::theta_names`] by name, in θ's order. An entry may be
    /// given in any order; a parameter left out is fixed at the system's default value
    /// ([`Dims::param_defaults`](field@Dims::param_defaults)). Errors ([`crate::error::Error::ThetaName`]): a name θ does not
    /// have, a name given twice, or a left-out parameter without a default (control
    /// coefficients have none: list them all).
    ///
    /// ```
    /// use hybridopt::prelude::*;
    /// use hybridopt::systems::BouncingBall;
    ///
    /// let setup = Setup::builder(&BouncingBall).horizon(0.0, 1.0).build();
    /// // free v0 alone: g, e, c, y0 take the ball's defaults
    /// let theta = setup.resolve_theta(&[ThetaEntry::free("v0", 0.5)]).unwrap();
    /// assert_eq!(theta.len(), 5);
    /// assert!(theta[4].optimize && !theta[0].optimize);
    /// assert!(setup.resolve_theta(&[ThetaEntry::free("v", 0.5)]).is_err());
    /// ```
    pub fn resolve_theta(
        &self, entries: &[ThetaEntry],
    ) -> Result<Vec<ThetaEntry>, crate::error::Error> {
        let names = self.theta_names();
        let err = |name: &str, problem| crate::error::Error::ThetaName {
            name: name.to_string(),
            problem,
            valid: names.clone(),
        };
        let mut slots: Vec<Option<ThetaEntry>> = vec![None; names.len()];
        for e in entries {
            let j = names
                .iter()
                .position(|n| *n == e.name)
                .ok_or_else(|| err(&e.name, "no such parameter"))?;
            if slots[j].replace(e.clone()).is_some() {
                return Err(err(&e.name, "given twice"));
            }
        }
        let defaults = &self.dims.param_defaults;
        slots
            .into_iter()
            .enumerate()
            .map(|(j, slot)| match slot {
                Some(e) => Ok(e),
                None => defaults
                    .as_ref()
                    .filter(|_| j < self.np())
                    .and_then(|d| d.get(j).copied())
                    .map(|v| ThetaEntry::fixed(&names[j], v))
                    .ok_or_else(|| {
                        err(
                            &names[j],
                            "left out, and the system has no default value for it",
                        )
                    }),
            })
            .collect()
    }

    /// Start mode and X0 = (x0(p), 0).
    pub fn initial<D: Scalar>(&self, theta: &[D]) -> Result<(usize, Vec<D>), ModelError> {
        let p = &theta[..self.np()];
        let mut x = self.sys.initial_state_at(self.t0, p)?;
        if x.len() != self.nx() {
            return Err(ModelError::SizeMismatch {
                what: "initial_state".into(),
                expected: format!("{} values (one per state)", self.nx()),
                found: x.len().to_string(),
            });
        }
        x.extend(std::iter::repeat_n(D::zero(), self.nz()));
        let pr: Vec<f64> = p.iter().map(|v| v.re()).collect();
        Ok((self.sys.initial_mode(&pr), x))
    }

    /// `x0(p)` and `∂x0/∂θ` (nx × len θ, zero past the parameters) by one dual pass per
    /// parameter.
    pub fn initial_jacobian(
        &self, theta: &[f64],
    ) -> Result<(Vec<f64>, nalgebra::DMatrix<f64>), ModelError> {
        use num_dual::Dual64;
        let np = self.np();
        let x0 = self.sys.initial_state_at(self.t0, &theta[..np])?;
        let mut jac = nalgebra::DMatrix::zeros(self.nx(), theta.len());
        for j in 0..np {
            let p: Vec<Dual64> = (0..np)
                .map(|i| Dual64::new(theta[i], if i == j { 1.0 } else { 0.0 }))
                .collect();
            let x = self.sys.initial_state_at(self.t0, &p)?;
            for (i, v) in x.iter().enumerate().take(self.nx()) {
                jac[(i, j)] = v.eps;
            }
        }
        Ok((x0, jac))
    }

    pub(crate) fn check_theta(&self, len: usize) -> Result<(), crate::error::Error> {
        self.validate()?;
        if len != self.ntheta() {
            return Err(crate::error::Error::ThetaLength {
                found: len,
                parameters: self.np(),
                controls: self.nc(),
            });
        }
        Ok(())
    }
}
