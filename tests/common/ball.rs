//! The ball oracle's derivatives (the semi-analytic oracle of
//! `hybridopt::testing::ball_oracle`, differentiated with dual numbers, one
//! parameter direction per run): ψ of the shipped ball problem, its gradient, and the
//! impact times' derivatives τ_k = dt_k/dθ. Independent of the integrators and of the
//! jump formula.

use hybridopt::testing::ball_oracle;
use num_dual::Dual64;

/// `p` seeded along `e_j` (dual numbers).
fn seeded(p: &[f64], j: usize) -> Vec<Dual64> {
    p.iter()
        .enumerate()
        .map(|(i, &v)| Dual64::new(v, if i == j { 1.0 } else { 0.0 }))
        .collect()
}

/// (ψ, dψ/dθ, τ per impact, impact times) of ψ = ∫₀^T y² dt + (y(T) − y_target)²
/// + w_v v(T)² for θ = p = (g, e, c, y0, v0) on [0, T].
pub fn oracle_gradient(
    p: &[f64], t_end: f64, y_target: f64, w_v: f64,
) -> (f64, Vec<f64>, Vec<Vec<f64>>, Vec<f64>) {
    let n = p.len();
    let mut g = vec![0.0; n];
    let (impacts, ..) = ball_oracle::run(p, t_end);
    let mut taus = vec![vec![0.0; n]; impacts.len()];
    for j in 0..n {
        let pd = seeded(p, j);
        g[j] = ball_oracle::cost(&pd, t_end, y_target, w_v).eps;
        let (imp, ..) = ball_oracle::run(&pd, t_end);
        assert_eq!(imp.len(), impacts.len(), "oracle: impact count changed");
        for (k, t) in imp.iter().enumerate() {
            taus[k][j] = t.eps;
        }
    }
    (ball_oracle::cost(p, t_end, y_target, w_v), g, taus, impacts)
}
