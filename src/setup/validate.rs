//! What a setup must hold before it runs: a horizon `t0 < t_end`, both finite, and cost
//! terms whose outputs, guards and parameters exist, with occurrences counted from 1.
//! Checked at the start of every run ([`Setup::simulate`], the direct and adjoint
//! passes), so that a bad index is a typed [`Error`], not a panic inside an evaluation.

use super::definition::Setup;
use crate::cost::{EventGuard, Term};
use crate::error::Error;
use crate::model::HybridSystem;

impl<S: HybridSystem> Setup<'_, S> {
    /// Fails with [`Error::BadHorizon`] or [`Error::BadTerm`] (module docs).
    pub fn validate(&self) -> Result<(), Error> {
        if !(self.t0.is_finite() && self.t_end.is_finite() && self.t_end > self.t0) {
            return Err(Error::BadHorizon {
                t0: self.t0,
                t_end: self.t_end,
            });
        }
        let ny = self.dims.outputs.len();
        let ng = self.dims.guards.len();
        let nth = self.ntheta();
        for obj in &self.objectives {
            for (j, term) in obj.terms.iter().enumerate() {
                let bad = |what, index, valid: String| Error::BadTerm {
                    objective: obj.name.clone(),
                    term: j,
                    what,
                    index,
                    valid,
                };
                if let Some(o) = output_of(term).filter(|&o| o >= ny) {
                    return Err(bad("output", o, range("outputs", ny, &self.dims.outputs)));
                }
                if let Some(i) = parameter_of(term).filter(|&i| i >= nth) {
                    return Err(bad(
                        "parameter",
                        i,
                        format!("θ has {nth} entries (0-based)"),
                    ));
                }
                if let Some((guard, occurrence)) = term.event() {
                    if let EventGuard::Guard(k) = guard {
                        if k >= ng {
                            let names: Vec<String> =
                                self.dims.guards.iter().map(|g| g.name.clone()).collect();
                            return Err(bad("guard", k, range("guards", ng, &names)));
                        }
                    }
                    if occurrence == 0 {
                        return Err(bad(
                            "occurrence",
                            0,
                            "occurrences count from 1 (the first firing is 1)".into(),
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

/// The output a term reads, if any.
fn output_of(term: &Term) -> Option<usize> {
    match *term {
        Term::Integral { output, .. }
        | Term::IntegralSquared { output, .. }
        | Term::Track { output, .. }
        | Term::Terminal { output, .. }
        | Term::TerminalSquared { output, .. }
        | Term::EventOutput { output, .. }
        | Term::EventOutputSquared { output, .. } => Some(output),
        _ => None,
    }
}

/// The θ entry a term reads, if any.
fn parameter_of(term: &Term) -> Option<usize> {
    match *term {
        Term::ParameterSquared { index, .. } | Term::Parameter { index, .. } => Some(index),
        _ => None,
    }
}

/// "the system has n <what> (0-based): names".
fn range(what: &str, n: usize, names: &[String]) -> String {
    match n {
        0 => format!("the system has no {what}"),
        _ => format!(
            "the system has {n} {what}, 0..={} ({})",
            n - 1,
            names.join(", ")
        ),
    }
}
