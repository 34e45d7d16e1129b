//! The optimizer's settings: the solver, the gradient method, the stopping tests and what
//! to do at a kink. The kinds are serde enums: a problem file's `[optimizer]` table names
//! them by their snake_case names.

use crate::sensitivity::GradientMethod;
use serde::Deserialize;

/// Which solver the optimizer uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SolverKind {
    /// L-BFGS with the More–Thuente line search.
    Lbfgs,
    /// Steepest descent with the same line search.
    Gd,
    /// Gauss–Newton / Levenberg–Marquardt on the residuals of a data fit (optimize/fit.rs);
    /// the default when the cost is made of `data` (and `parameter_squared`) terms only.
    #[serde(rename = "gauss_newton")]
    GaussNewton,
    /// The hybrid iLQR on the control intervals (optimize/ilqr/): a cost over a fixed
    /// horizon of a problem with controls, without constraints; Gauss–Newton stage
    /// Hessians.
    Ilqr,
    /// The hybrid DDP: the iLQR with the second-order terms of the transitions and the
    /// costs (by central differences of the exact first derivatives).
    Ddp,
}

impl SolverKind {
    /// The solver named `s` (its name in a problem file), if any.
    pub fn parse(s: &str) -> Option<SolverKind> {
        parse_name(s)
    }
    /// The name a problem file uses.
    pub fn name(self) -> &'static str {
        match self {
            SolverKind::Lbfgs => "lbfgs",
            SolverKind::Gd => "gd",
            SolverKind::GaussNewton => "gauss_newton",
            SolverKind::Ilqr => "ilqr",
            SolverKind::Ddp => "ddp",
        }
    }
}

/// What the optimizer does where ψ is nonsmooth in the optimized variables (a simultaneous
/// event whose crossing orders give different gradients, theory §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum KinkPolicy {
    /// Use the min-norm element of the convex hull of the pieces' gradients as the
    /// gradient: minus it is a descent direction for every piece, and it vanishes where 0
    /// is in the hull (a Clarke-stationary point). The default.
    #[default]
    Descent,
    /// Stop at the first such point and report its one-sided derivatives.
    Stop,
}

/// How the constrained solver (SQP) makes each step acceptable
/// (docs/constrained.md, "The solver").
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Globalization {
    /// Backtracking along the QP's step on the l1 merit function (Armijo). The default.
    #[default]
    LineSearch,
    /// The QP restricted to a box `‖d‖∞ ≤ Δ` whose radius follows the ratio of the merit
    /// function's actual to predicted reduction (Fletcher's Sl1QP): the QP stays bounded
    /// whatever the quasi-Newton matrix, and steps stay where the linearization holds.
    /// For multiple shooting from far-off guesses and for walkers.
    TrustRegion,
}

/// Parses a gradient method name (`adjoint`, `direct`, `fd`, `dual`).
pub fn parse_gradient_method(s: &str) -> Option<GradientMethod> {
    parse_name(s)
}

/// A unit-variant serde enum from its name.
fn parse_name<T: serde::de::DeserializeOwned>(s: &str) -> Option<T> {
    use serde::de::IntoDeserializer;
    let d: serde::de::value::StrDeserializer<'_, serde::de::value::Error> = s.into_deserializer();
    T::deserialize(d).ok()
}

/// Optimizer settings with their defaults.
#[derive(Debug, Clone, serde::Serialize)]
pub struct OptimizerSettings {
    /// Default L-BFGS.
    pub solver: SolverKind,
    /// Default adjoint.
    pub gradient: GradientMethod,
    /// Default 100.
    pub max_iters: u64,
    /// L-BFGS memory. Default 7 (Nocedal & Wright suggest 3–20).
    pub memory: usize,
    /// Stop when ‖∇ψ̃‖ < tol_grad for the scaled cost ψ̃ (the gradient at the start has norm
    /// 1/first_step). Default 1e-9.
    pub tol_grad: f64,
    /// Stop when |ψ̃_k − ψ̃_{k−1}| < tol_cost (scaled). Default 1e-15.
    pub tol_cost: f64,
    /// Length of the first trial step in the transformed, scaled variables. Default 0.5.
    pub first_step: f64,
    /// What to do where ψ is nonsmooth in the optimized variables. Default: descend along
    /// the min-norm element of the pieces' gradients.
    pub at_kink: KinkPolicy,
    /// The constrained solver stops when the KKT residual (stationarity, feasibility and
    /// complementarity, absolute) is below this. Default 1e-8.
    pub tol_kkt: f64,
    /// The constrained solver's globalization. Default: a line search.
    pub globalization: Globalization,
}

impl Default for OptimizerSettings {
    fn default() -> Self {
        OptimizerSettings {
            solver: SolverKind::Lbfgs,
            gradient: GradientMethod::Adjoint,
            max_iters: 100,
            memory: 7,
            tol_grad: 1e-9,
            tol_cost: 1e-15,
            first_step: 0.5,
            at_kink: KinkPolicy::Descent,
            tol_kkt: 1e-8,
            globalization: Globalization::LineSearch,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_to_their_kinds_and_back() {
        for s in [
            SolverKind::Lbfgs,
            SolverKind::Gd,
            SolverKind::GaussNewton,
            SolverKind::Ilqr,
            SolverKind::Ddp,
        ] {
            assert_eq!(SolverKind::parse(s.name()), Some(s));
        }
        assert_eq!(SolverKind::parse("newton"), None);
        for g in [
            GradientMethod::Adjoint,
            GradientMethod::Direct,
            GradientMethod::Fd,
            GradientMethod::Dual,
        ] {
            assert_eq!(parse_gradient_method(g.name()), Some(g));
        }
        assert_eq!(parse_gradient_method("Adjoint"), None);
    }
}
