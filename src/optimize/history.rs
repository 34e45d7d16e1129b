//! The optimization history: each iteration's cost, gradient norm and iterate, recorded by
//! an argmin observer across restarts, and turned into [`HistoryRow`]s at the end.

use super::adapter::Space;
use super::descent::State;
use argmin::core::observers::Observe;
use argmin::core::{State as _, KV};
use std::sync::{Arc, Mutex};

/// One row of the optimization history.
#[derive(Debug, Clone, serde::Serialize)]
pub struct HistoryRow {
    pub iteration: u64,
    pub cost: f64,
    pub grad_norm: f64,
    /// ‖z_k − z_{k−1}‖ in the transformed, scaled variables.
    pub step: f64,
    /// θ (all entries, physical values).
    pub theta: Vec<f64>,
    /// A constrained run's largest constraint violation at the iterate (its `grad_norm`
    /// is then the KKT residual's stationarity part).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_violation: Option<f64>,
    /// A multiple-shooting run's largest continuity gap `|x_k(t_{k+1}) − s_{k+1}|` at the
    /// iterate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub defect: Option<f64>,
}

/// An iteration as observed: (iteration, scaled cost, scaled gradient norm, z).
type Row = (u64, f64, f64, Vec<f64>);

/// The rows observed so far, shared by the observers of every run.
#[derive(Clone)]
pub(super) struct Rows(Arc<Mutex<Vec<Row>>>);

impl Rows {
    /// The start point's row.
    pub(super) fn new(f0: f64, gnorm0: f64, z0: &[f64]) -> Rows {
        Rows(Arc::new(Mutex::new(vec![(0, f0, gnorm0, z0.to_vec())])))
    }

    /// Where a restart begins: the last recorded iteration and the best point so far (the
    /// lowest cost among the rows with `n` variables: argmin leaves no parameter in the
    /// state of an iteration whose line search failed).
    pub(super) fn last_good(&self, n: usize) -> Option<(u64, Vec<f64>)> {
        let rows = self.0.lock().expect("history");
        let last = rows.iter().rev().find(|r| r.3.len() == n)?.0;
        Some((last, best_of(&rows, n)?.3.clone()))
    }

    /// The point of least cost among the rows with `n` variables (scaled costs: every row
    /// is recorded on the first run's scale, so rows of different runs compare).
    pub(super) fn best(&self, n: usize) -> Option<Vec<f64>> {
        best_of(&self.0.lock().expect("history"), n).map(|r| r.3.clone())
    }

    /// The history in physical units: costs and norms times `scale`, θ from z, and the
    /// step ‖z_k − z_{k−1}‖ between accepted iterates.
    pub(super) fn history(&self, space: &Space, scale: f64) -> Vec<HistoryRow> {
        let mut history = Vec::new();
        let mut zprev: Option<&Vec<f64>> = None;
        let rows = self.0.lock().expect("history");
        for (it, cost, gn, z) in rows.iter().filter(|r| r.3.len() == space.free.len()) {
            let step = zprev.map_or(0.0, |zp| {
                zp.iter()
                    .zip(z)
                    .map(|(a, b)| (a - b).powi(2))
                    .sum::<f64>()
                    .sqrt()
            });
            history.push(HistoryRow {
                iteration: *it,
                cost: cost * scale,
                grad_norm: gn * scale,
                step,
                theta: space.theta(z).0,
                max_violation: None,
                defect: None,
            });
            zprev = Some(z);
        }
        history
    }
}

/// The first row of least cost among those with `n` variables (NaN costs never win).
fn best_of(rows: &[Row], n: usize) -> Option<&Row> {
    rows.iter()
        .filter(|r| r.3.len() == n && !r.1.is_nan())
        .fold(None, |b: Option<&Row>, r| match b {
            Some(b) if b.1 <= r.1 => Some(b),
            _ => Some(r),
        })
}

/// Records the history (and drives an optional progress callback).
pub(super) struct Recorder {
    pub(super) rows: Rows,
    pub(super) progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>>,
    /// iterations of earlier (restarted) runs
    pub(super) offset: u64,
    /// this run's cost scale relative to the recorded one
    pub(super) rescale: f64,
}

impl Observe<State> for Recorder {
    fn observe_iter(&mut self, state: &State, _kv: &KV) -> Result<(), argmin::core::Error> {
        let z = state.get_param().cloned().unwrap_or_default();
        let gn = state
            .get_gradient()
            .map(|g| g.iter().map(|v| v * v).sum::<f64>().sqrt())
            .unwrap_or(f64::NAN);
        // argmin counts an iteration after observing it: the k-th iteration of this run
        // (k from 1, as the start's row is iteration 0) is its state's `get_iter() + 1`
        let it = self.offset + state.get_iter() + 1;
        self.rows.0.lock().expect("history").push((
            it,
            state.get_cost() * self.rescale,
            gn * self.rescale,
            z,
        ));
        if let Some(p) = &self.progress {
            p(it, state.get_cost());
        }
        Ok(())
    }
}
