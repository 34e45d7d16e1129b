//! The solvers' settings and why their defaults are what they are.

use super::error::LsqError;

/// Levenberg–Marquardt's settings.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LmSettings {
    /// Jacobians at most (accepted steps). Default 100: Gauss–Newton converges in a handful
    /// of iterations on well-posed fits (the target is ≤ 10–20); 100 leaves room
    /// for a start far off without letting a poorly identifiable fit run for ever.
    pub max_iterations: usize,
    /// The relative step test ‖Δx‖ ≤ xtol (‖x‖ + xtol). Default 1e-10: on a zero-residual
    /// problem the quadratic convergence puts the error then at ~1e-20, and on a noisy fit
    /// a step of 1e-10 relative is far below any confidence interval.
    pub xtol: f64,
    /// The relative reduction test: actual and predicted reductions of ½‖r‖² both ≤ ftol
    /// relative. Default 1e-12: a thousand times the round-off of a sum of ~10⁴ squares, so
    /// it holds only once the cost cannot be lowered measurably.
    pub ftol: f64,
    /// The gradient test ‖P(Jᵀr)‖∞ ≤ gtol, absolute (residuals are divided by their σ,
    /// so Jᵀr is in units of the cost per unit of x). Default 1e-10.
    pub gtol: f64,
    /// The first trust radius is `radius_factor`·‖D x₀‖ (or `radius_factor` if that is 0).
    /// Default 100 (MINPACK's): the first Gauss–Newton step is then usually taken whole.
    pub radius_factor: f64,
    /// Compute J together with r at every trial point (one call per trial), instead of r
    /// alone and J after acceptance (two calls per accepted step). Default true: most
    /// trials of Gauss–Newton are accepted, and the direct sensitivities give r for free
    /// beside J.
    pub eager_jacobian: bool,
    /// Consecutive rejected trials before the run is declared stalled. Default 40: each
    /// halves (at least) the radius, so 40 span twelve orders of magnitude.
    pub max_rejections: usize,
}

impl Default for LmSettings {
    fn default() -> Self {
        LmSettings {
            max_iterations: 100,
            xtol: 1e-10,
            ftol: 1e-12,
            gtol: 1e-10,
            radius_factor: 100.0,
            eager_jacobian: true,
            max_rejections: 40,
        }
    }
}

/// A tolerance or factor that must be ≥ 0 (or > 0), named in the error.
pub(super) fn check(name: &'static str, value: f64, positive: bool) -> Result<(), LsqError> {
    let ok = value.is_finite() && if positive { value > 0.0 } else { value >= 0.0 };
    if ok {
        Ok(())
    } else {
        Err(LsqError::Setting {
            name,
            value,
            valid: if positive {
                "a finite number > 0"
            } else {
                "a finite number ≥ 0"
            },
        })
    }
}

impl LmSettings {
    pub(super) fn validate(&self) -> Result<(), LsqError> {
        check("xtol", self.xtol, false)?;
        check("ftol", self.ftol, false)?;
        check("gtol", self.gtol, false)?;
        check("radius_factor", self.radius_factor, true)
    }
}

/// The generalized Gauss–Newton method's settings.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GgnSettings {
    /// Linearizations at most. Default 100 (as [`LmSettings::max_iterations`]).
    pub max_iterations: usize,
    /// The relative step test ‖Δw‖ ≤ xtol (‖w‖ + xtol), with ‖c‖∞ ≤ ctol. Default 1e-10.
    pub xtol: f64,
    /// The stationarity test ‖Jᵀr + Cᵀν‖∞ ≤ gtol, with ‖c‖∞ ≤ ctol. Default 1e-10.
    pub gtol: f64,
    /// The reduction test, with ‖c‖∞ ≤ ctol: the undamped step's predicted decrease of the
    /// merit (its directional derivative) at most ftol times the merit — no measurable
    /// progress is left. Default 1e-12 (as [`LmSettings::ftol`]); without it a run at
    /// round-off would backtrack until its budget ran out.
    pub ftol: f64,
    /// Feasibility: max |cᵢ| ≤ ctol. Default 1e-10: continuity gaps two orders below the
    /// issue's target (1e-8), yet above the integrator's round-off at tight tolerances.
    pub ctol: f64,
    /// Armijo's sufficient-decrease fraction of the merit's directional derivative.
    /// Default 1e-4 (the usual choice: accept nearly any decrease).
    pub armijo: f64,
    /// Backtracking halvings of α before the line search gives up and the step is damped.
    /// Default 30 (α down to 1e-9).
    pub max_backtracks: usize,
    /// Damping increases (μ ×10, from 1e-8 relative to ‖J Z‖²) on line-search failures,
    /// without a full step (α = 1) between them, before the run is declared stalled. Default 12 (μ up to 1e4·‖J Z‖²: steepest descent).
    pub max_dampings: usize,
}

impl Default for GgnSettings {
    fn default() -> Self {
        GgnSettings {
            max_iterations: 100,
            xtol: 1e-10,
            gtol: 1e-10,
            ftol: 1e-12,
            ctol: 1e-10,
            armijo: 1e-4,
            max_backtracks: 30,
            max_dampings: 12,
        }
    }
}

impl GgnSettings {
    pub(super) fn validate(&self) -> Result<(), LsqError> {
        check("xtol", self.xtol, false)?;
        check("gtol", self.gtol, false)?;
        check("ftol", self.ftol, false)?;
        check("ctol", self.ctol, false)?;
        check("armijo", self.armijo, true)
    }
}
