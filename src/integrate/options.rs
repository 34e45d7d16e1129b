//! Small option structs with documented defaults.

use super::{Method, Tolerances};

/// Integrator settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SolverOptions {
    /// Integration method. Default: Dormand–Prince 5(4).
    pub method: Method,
    /// Relative tolerance. Default 1e-8 (a gradient to ~1e-6 relative on smooth problems).
    pub rtol: f64,
    /// Absolute tolerance. Default 1e-10.
    pub atol: f64,
    /// Largest step. Default: unbounded.
    pub h_max: f64,
    /// Step budget for one run. Default 10⁶ (a guard against runaway runs, not a tuning knob).
    pub max_steps: usize,
    /// How the implicit methods hold and factor the Jacobian. Default: automatic.
    pub linear_algebra: LinearAlgebra,
}

/// How the implicit integrators (radau5, sdirk3) hold the Jacobian `∂f/∂x` and factor
/// their iteration matrices (docs/theory.md §8, "Sparse Jacobians").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LinearAlgebra {
    /// Sparse when the system declares a pattern of its flow's Jacobian
    /// ([`crate::model::HybridSystem::flow_pattern`]) with at least
    /// [`LinearAlgebra::SPARSE_MIN_STATES`] states and at most
    /// [`LinearAlgebra::SPARSE_MAX_DENSITY`] of the entries, else dense.
    #[default]
    Auto,
    /// Always dense: `f_x` by one directional derivative per state, dense LU.
    Dense,
    /// Sparse whenever the system declares a pattern (in real runs; a dual run is dense).
    Sparse,
}

impl LinearAlgebra {
    /// Below this many states, [`LinearAlgebra::Auto`] stays dense (measured on the chain
    /// of `benches/scaling.rs`: docs/benchmarks.md, "Scaling").
    pub const SPARSE_MIN_STATES: usize = 48;
    /// Above this fraction of nonzero entries, [`LinearAlgebra::Auto`] stays dense.
    pub const SPARSE_MAX_DENSITY: f64 = 0.2;

    /// Whether a pattern of `nnz` entries on `n` states is held sparse.
    pub fn sparse(self, n: usize, nnz: usize) -> bool {
        match self {
            LinearAlgebra::Dense => false,
            LinearAlgebra::Sparse => true,
            LinearAlgebra::Auto => {
                n >= Self::SPARSE_MIN_STATES
                    && (nnz as f64) <= Self::SPARSE_MAX_DENSITY * (n * n) as f64
            }
        }
    }
}

impl Default for SolverOptions {
    fn default() -> Self {
        SolverOptions {
            method: Method::Dopri5,
            rtol: 1e-8,
            atol: 1e-10,
            h_max: f64::INFINITY,
            max_steps: 1_000_000,
            linear_algebra: LinearAlgebra::Auto,
        }
    }
}

impl SolverOptions {
    pub fn tolerances(&self) -> Tolerances {
        Tolerances {
            rtol: self.rtol,
            atol: self.atol,
        }
    }
}

/// Event handling settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EventOptions {
    /// More events than this in one run is reported as Zeno behaviour. Default 1000.
    pub max_events: usize,
    /// An event whose guard rate |ġ| is below `grazing_tol · (1 + |g_t| + ‖g_x‖‖f‖)` is
    /// grazing (theory.md §1). Default 1e-9: at that rate the event-time sensitivity
    /// 1/ġ amplifies errors by ~1e9, beyond any useful gradient.
    pub grazing_tol: f64,
    /// Crossings of several guards within `simultaneous_tol · max(1, |t|)` of each other
    /// form one simultaneous event (theory.md §7). Default 1e-10.
    pub simultaneous_tol: f64,
    /// A guard with |g| ≤ `zero_tol` at the start of a segment (t0, or right after a
    /// reset) is masked until it leaves zero. Default 1e-12.
    pub zero_tol: f64,
    /// End the run at the `n`-th firing of guard `k` (`Some((k, n))`): that event is
    /// terminal, and the horizon becomes its time. Default: none.
    pub stop_after: Option<(usize, usize)>,
}

impl Default for EventOptions {
    fn default() -> Self {
        EventOptions {
            max_events: 1000,
            grazing_tol: 1e-9,
            simultaneous_tol: 1e-10,
            zero_tol: 1e-12,
            stop_after: None,
        }
    }
}

/// What the forward run keeps of its dense output for the adjoint's backward pass
/// (theory.md §4: "keep each segment's dense output, or checkpoints and recompute").
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Checkpointing {
    /// Keep every accepted step's interpolant: memory grows with the step count.
    Never,
    /// Keep, per segment, a checkpoint every `every` steps (the state at the window's start
    /// and each step's t0 and h, 16 bytes a step); the backward pass replays a window's
    /// steps when it needs them, bit-identically.
    Every(usize),
    /// Keep the interpolants while they and the checkpoints stay within `budget_bytes`;
    /// past that, every later step is kept as a checkpoint (as [`Checkpointing::Every`])
    /// and the oldest interpolants are compacted into checkpoints, front first, to make
    /// room for them. The held bytes stay within the budget for as long as the
    /// checkpoints alone fit in it (≈25 bytes a step for DOPRI5 at `every` = 32: a
    /// 16 MiB budget holds ≈650,000 steps, a 24 MiB one the default step limit of 10⁶); the backward pass
    /// replays what was compacted, bit-identically.
    Budget { budget_bytes: usize, every: usize },
    /// Keep no dense output: each segment keeps its starting state alone (a
    /// [`ReplayWindow`](crate::integrate::ReplayWindow) without steps), so that the run's
    /// memory does not grow with its step count. For runs read through their events, their
    /// instants' states and their end (the direct method's, a report's); the adjoint
    /// cannot run on such a trajectory.
    Discard,
}

impl Checkpointing {
    /// The largest budget [`Checkpointing::budget_mb`] takes: 10⁶ MB (about a terabyte).
    pub const MAX_BUDGET_MB: f64 = 1e6;

    /// [`Checkpointing::Budget`] of `mb` megabytes (MiB, the unit of `hybridopt
    /// gradient`'s `memory.peak_rss_mb`) with checkpoints every 32 steps: the setting of
    /// `--memory-budget MB`. `mb` must be a number in `[0, 10⁶]`; 0 keeps no interpolant
    /// (every step is replayed from its checkpoint).
    pub fn budget_mb(mb: f64) -> Result<Self, crate::error::Error> {
        if !(0.0..=Self::MAX_BUDGET_MB).contains(&mb) {
            return Err(crate::error::Error::Flag {
                flag: "--memory-budget".into(),
                value: mb.to_string(),
                message: format!(
                    "the memory budget is a number of megabytes in [0, {}]",
                    Self::MAX_BUDGET_MB
                ),
            });
        }
        Ok(Checkpointing::Budget {
            budget_bytes: (mb * (1u64 << 20) as f64) as usize,
            every: 32,
        })
    }
}

impl Default for Checkpointing {
    /// A budget of 16 MiB, checkpoints every 32 steps: the five-bar keeps all of its
    /// 1,016-step run (≈0.8 MB) and no replay is paid; a 200 s run (≈40,000 steps,
    /// ≈29 MB of interpolants) keeps ≈26,000 of them; a 1,000 s run (≈200,000 steps)
    /// keeps its checkpoints (≈5 MB) and the interpolants that still fit, so that
    /// `hybridopt gradient`'s peak RSS stays under 40 MB at any horizon (issue 47: 47 MB
    /// at 1,000 s with 24 MiB of interpolants counted without their own size). At most
    /// two replayed windows (64 steps) are held at a time. The replay costs one forward
    /// step per replayed step: at most one more forward run.
    fn default() -> Self {
        Checkpointing::Budget {
            budget_bytes: 16 << 20,
            every: 32,
        }
    }
}
