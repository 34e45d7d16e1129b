//! Wall-clock timings of gradient evaluations, and the typed `"timing"` object of
//! `hybridopt gradient --json`.

use serde::Serialize;
use std::collections::BTreeMap;

/// Wall-clock phases of one [`super::evaluate`] call, in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct EvalTiming {
    /// The plain simulation the method starts with (`Adjoint`, `Fd`, `Dual`); `None` for
    /// `Direct`, whose one run carries S together with X.
    pub forward_s: Option<f64>,
    /// The whole evaluation, the plain simulation included.
    pub total_s: f64,
}

impl EvalTiming {
    pub(crate) fn forward(forward_s: f64) -> Self {
        EvalTiming {
            forward_s: Some(forward_s),
            total_s: 0.0,
        }
    }
}

/// The median of a sample (the upper one of the two middle values for an even count);
/// `None` for an empty sample.
pub fn median(v: &[f64]) -> Option<f64> {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied()
}

/// The timings of repeated evaluations by one method.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    /// Whole evaluations.
    pub total: Vec<f64>,
    /// Their plain simulations (empty for `Direct`).
    pub forward: Vec<f64>,
}

impl Samples {
    pub fn push(&mut self, t: &EvalTiming) {
        self.total.push(t.total_s);
        if let Some(f) = t.forward_s {
            self.forward.push(f);
        }
    }
    pub fn total_median(&self) -> Option<f64> {
        median(&self.total)
    }
    pub fn forward_median(&self) -> Option<f64> {
        median(&self.forward)
    }
}

/// The `"timing"` object of `hybridopt gradient --json`: medians over `repeat` runs, in
/// seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimingReport {
    /// A plain simulation.
    pub forward_s: f64,
    /// The requested method's gradient (the adjoint's for `--method all`).
    pub gradient_s: f64,
    /// Every method run, by name.
    pub methods: BTreeMap<String, f64>,
    /// Runs per median.
    pub repeat: usize,
    /// Where `forward_s` was measured: the name of the method whose timed runs start with
    /// the plain simulation that was timed, or `"simulate"` for a separate loop of plain
    /// simulations (when only `direct` ran).
    pub forward_from: String,
    /// The one direct pass run for τ outside the timed runs, when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tau_s: Option<f64>,
    /// The whole command (loading the problem to printing), for comparison with the sum
    /// of the timed runs.
    pub wall_s: f64,
    /// A custom system's expressions compiled to machine code when the problem loaded
    /// (inside `wall_s`, outside the other timings); absent when nothing was compiled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compile_s: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_empty_samples() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(3.0));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn samples_keep_forward_phases_when_present() {
        let mut s = Samples::default();
        s.push(&EvalTiming {
            forward_s: Some(1.0),
            total_s: 3.0,
        });
        s.push(&EvalTiming {
            forward_s: None,
            total_s: 5.0,
        });
        assert_eq!(s.total, vec![3.0, 5.0]);
        assert_eq!(s.forward_median(), Some(1.0));
        assert_eq!(s.total_median(), Some(5.0));
    }
}
