//! The hybrid iLQR's errors: what a problem has that the stage form of the solver does not
//! take (docs/guide/feedback.md, "Hybrid iLQR and DDP").

/// Why the iLQR cannot run on a problem. Each names what is unsupported and what to use
/// instead.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IlqrError {
    /// The problem has no control grid: the stages are its control intervals.
    #[error(
        "the problem has no [controls]: the iLQR's stages are the control intervals; use lbfgs"
    )]
    NoControls,
    /// The control grid does not span the simulated horizon exactly.
    #[error("the control grid spans [{grid0}, {grid1}] but the horizon is [{t0}, {t1}]: the iLQR's stages are the control intervals, which must cover the horizon exactly")]
    Horizon {
        grid0: f64,
        grid1: f64,
        t0: f64,
        t1: f64,
    },
    /// A cost term without a stage form (Gauss–Newton residual, linear or effort).
    #[error("a `{kind}` cost term has no stage form for the iLQR ({why}); use lbfgs")]
    Term {
        kind: &'static str,
        why: &'static str,
    },
    /// A constraint whose augmented-Lagrangian term has no stage form.
    #[error("constraint '{name}': {why}; use the SQP (drop `solver = \"ilqr\"` / `\"ddp\"`)")]
    Constraint { name: String, why: &'static str },
    /// Multiple shooting: the iLQR's stages are the control intervals, run by single
    /// shooting.
    #[error("{what}: the iLQR's stages are the control intervals of a fixed horizon, run by single shooting; use the SQP (drop `solver = \"ilqr\"` / `\"ddp\"`)")]
    Unsupported { what: &'static str },
}
