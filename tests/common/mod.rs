//! Helpers shared by the integration tests: a deterministic PRNG, relative errors, and the
//! four gradient methods side by side.
#![allow(dead_code)]

pub mod ball;

use hybridopt::sensitivity::{evaluate, GradientMethod};
use hybridopt::setup::Setup;
use hybridopt::HybridSystem;

/// splitmix64: a tiny deterministic PRNG (fixed seeds give fixed "random" data).
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [a, b).
    pub fn uniform(&mut self, a: f64, b: f64) -> f64 {
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        a + (b - a) * u
    }
    pub fn vec(&mut self, n: usize, a: f64, b: f64) -> Vec<f64> {
        (0..n).map(|_| self.uniform(a, b)).collect()
    }
}

/// ‖a − b‖₂ / ‖b‖₂ (b the reference).
pub fn rel_l2(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "length mismatch");
    let num = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt();
    let den = b.iter().map(|y| y * y).sum::<f64>().sqrt().max(1e-300);
    num / den
}

/// Least-squares slope of log(err) against log(h).
pub fn loglog_slope(h: &[f64], err: &[f64]) -> f64 {
    assert_eq!(h.len(), err.len());
    let xs: Vec<f64> = h.iter().map(|v| v.ln()).collect();
    let ys: Vec<f64> = err.iter().map(|v| v.ln()).collect();
    let n = xs.len() as f64;
    let mx = xs.iter().sum::<f64>() / n;
    let my = ys.iter().sum::<f64>() / n;
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    sxy / sxx
}

/// Values and the gradient of objective 0 by each of `methods`.
pub fn gradients_by<S: HybridSystem>(
    setup: &Setup<'_, S>,
    theta: &[f64],
    methods: &[GradientMethod],
) -> Vec<(GradientMethod, f64, Vec<f64>)> {
    methods
        .iter()
        .map(|&m| {
            let ev = evaluate(setup, theta, m)
                .unwrap_or_else(|e| panic!("{} evaluation failed: {e}", m.name()));
            (m, ev.values[0], ev.gradients[0].clone())
        })
        .collect()
}
