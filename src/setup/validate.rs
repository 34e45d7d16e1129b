//! What a setup must hold before it runs: a horizon `t0 < t_end`, both finite, and cost
//! terms whose outputs, guards and parameters exist, with occurrences counted from 1
//! ([`Quantity::check`], the check constraints use too).
//! Checked at the start of every run ([`Setup::simulate`], the direct and adjoint
//! passes), so that a bad index is a typed [`Error`], not a panic inside an evaluation.

use super::definition::Setup;
use crate::cost::{Quantity, Term};
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
        let nth = self.ntheta();
        for obj in &self.objectives {
            for (j, term) in obj.terms.iter().enumerate() {
                let quantity = match term {
                    Term::Weighed { quantity, .. } => *quantity,
                    // a tracked output is checked as the output it integrates
                    Term::Track { output, .. } => Quantity::Integral { output: *output },
                    Term::Effort { .. } | Term::Data { .. } => continue,
                };
                if let Err(b) = quantity.check(&self.dims, nth) {
                    return Err(Error::BadTerm {
                        objective: obj.name.clone(),
                        term: j,
                        what: b.what,
                        index: b.index,
                        valid: b.valid,
                    });
                }
            }
        }
        Ok(())
    }
}
