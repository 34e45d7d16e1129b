//! Control parameterizations: `u_j(t) = Σ_k c_{j,k} φ_k(t)` on a uniform grid over the
//! horizon, with bases of local support so that only a few coefficients are active in any
//! interval (1 for piecewise constant, 2 for piecewise linear, 4 for cubic B-splines).
//! Grid nodes are breakpoints of the integration, so each smooth segment sees a fixed
//! active set and the adjoint's work per step is O(active coefficients), not O(K).

use crate::model::Scalar;

/// The basis functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// One value per interval (`intervals` coefficients).
    PiecewiseConstant,
    /// Hat functions at the nodes (`intervals + 1` coefficients).
    PiecewiseLinear,
    /// Uniform cubic B-splines, C² (`intervals + 3` coefficients).
    CubicBspline,
}

/// Coefficients active in one interval, with their basis weights.
#[derive(Debug, Clone, Copy)]
pub struct Active<D> {
    pub idx: [usize; 4],
    pub w: [D; 4],
    pub n: usize,
}

/// A control parameterization shared by all channels.
#[derive(Debug, Clone, PartialEq)]
pub struct ControlGrid {
    pub basis: Basis,
    pub t0: f64,
    pub t1: f64,
    pub intervals: usize,
    pub channels: usize,
}

/// 4-point Gauss–Legendre nodes and weights on [−1, 1] (Abramowitz & Stegun 25.4.29).
const GAUSS_X: [f64; 4] = [
    -0.861_136_311_594_052_6,
    -0.339_981_043_584_856_3,
    0.339_981_043_584_856_3,
    0.861_136_311_594_052_6,
];
const GAUSS_W: [f64; 4] = [
    0.347_854_845_137_453_9,
    0.652_145_154_862_546_1,
    0.652_145_154_862_546_1,
    0.347_854_845_137_453_9,
];

impl ControlGrid {
    /// Coefficients per channel.
    pub fn n_coef(&self) -> usize {
        match self.basis {
            Basis::PiecewiseConstant => self.intervals,
            Basis::PiecewiseLinear => self.intervals + 1,
            Basis::CubicBspline => self.intervals + 3,
        }
    }
    /// All coefficients (channel-major: channel j's coefficients at `j·n_coef ..`).
    pub fn len(&self) -> usize {
        self.n_coef() * self.channels
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The grid nodes t0 = τ_0 < … < τ_N = t1.
    pub fn nodes(&self) -> Vec<f64> {
        let n = self.intervals;
        (0..=n)
            .map(|i| {
                if i == n {
                    self.t1
                } else {
                    self.t0 + (self.t1 - self.t0) * i as f64 / n as f64
                }
            })
            .collect()
    }
    /// Each coefficient's Greville abscissa, the centre of its basis function's support,
    /// clamped into `[t0, t1]`: the interval midpoints (piecewise constant), the nodes τ_k
    /// (piecewise linear), τ_{k−1} (cubic B-spline, whose φ_k spans τ_{k−3} … τ_{k+1}).
    /// Setting `c_k = v(t*_k)` is Schoenberg's variation-diminishing approximation of a
    /// function v (de Boor, *A Practical Guide to Splines*, 2001, ch. XI): it reproduces
    /// straight lines exactly, and, piecewise linear, any v that is linear between the
    /// grid's nodes (a previous run's control on the same grid).
    pub fn greville(&self) -> Vec<f64> {
        let h = (self.t1 - self.t0) / self.intervals as f64;
        let at = |x: f64| (self.t0 + h * x).clamp(self.t0, self.t1);
        let nodes = self.nodes();
        (0..self.n_coef())
            .map(|k| match self.basis {
                Basis::PiecewiseConstant => at(k as f64 + 0.5),
                Basis::PiecewiseLinear => nodes[k],
                Basis::CubicBspline => at(k as f64 - 1.0),
            })
            .collect()
    }
    /// The interval containing time t (the last one for t ≥ t1).
    pub fn interval_of(&self, t: f64) -> usize {
        let s = (t - self.t0) / (self.t1 - self.t0) * self.intervals as f64;
        (s.floor().max(0.0) as usize).min(self.intervals - 1)
    }
    /// Basis weights of the coefficients active in interval `i` at time t:
    /// constant: φ = 1; linear: (1 − s, s); cubic B-spline: ((1−s)³, 3s³−6s²+4,
    /// −3s³+3s²+3s+1, s³)/6 with s the local coordinate in the interval.
    pub fn active<D: Scalar>(&self, i: usize, t: D) -> Active<D> {
        let h = (self.t1 - self.t0) / self.intervals as f64;
        let a = self.t0 + h * i as f64;
        let s = (t - a) / h;
        let one = D::one();
        let z = D::zero();
        match self.basis {
            Basis::PiecewiseConstant => Active {
                idx: [i, 0, 0, 0],
                w: [one, z, z, z],
                n: 1,
            },
            Basis::PiecewiseLinear => Active {
                idx: [i, i + 1, 0, 0],
                w: [one - s, s, z, z],
                n: 2,
            },
            Basis::CubicBspline => {
                let s2 = s * s;
                let s3 = s2 * s;
                let r = one - s;
                Active {
                    idx: [i, i + 1, i + 2, i + 3],
                    w: [
                        r * r * r / 6.0,
                        (s3 * 3.0 - s2 * 6.0 + 4.0) / 6.0,
                        (-s3 * 3.0 + s2 * 3.0 + s * 3.0 + 1.0) / 6.0,
                        s3 / 6.0,
                    ],
                    n: 4,
                }
            }
        }
    }
    /// The Gram matrix of one channel's basis over `[t0, t1]`, `G_kl = ∫ φ_k φ_l dt`, by
    /// 4-point Gauss–Legendre quadrature on each interval (exact: the products are
    /// polynomials of degree ≤ 6; Abramowitz & Stegun 25.4.29). The Hessian of `w ∫ u_j² dt`
    /// in channel j's coefficients is `2w G`. Each quadrature point is added straight into
    /// G, in this order: the SQP starts its quasi-Newton matrix from G, and the shooting
    /// runs of the compass gait turn out sensitive to its last bits (summing per interval
    /// first, as [`Self::gram_interval`] does, changed `compass_gait_periodic_walk` from
    /// converged to a stalled trust region at KKT 2.8e-5).
    pub fn gram(&self) -> Vec<Vec<f64>> {
        let n = self.n_coef();
        let h = (self.t1 - self.t0) / self.intervals as f64;
        let mut g = vec![vec![0.0; n]; n];
        for i in 0..self.intervals {
            let a = self.t0 + h * i as f64;
            for (x, w) in GAUSS_X.iter().zip(GAUSS_W) {
                let act = self.active::<f64>(i, a + 0.5 * h * (x + 1.0));
                for p in 0..act.n {
                    for q in 0..act.n {
                        g[act.idx[p]][act.idx[q]] += 0.5 * h * w * act.w[p] * act.w[q];
                    }
                }
            }
        }
        g
    }

    /// The Gram matrix of one channel's basis over interval `i` alone,
    /// `G_pq = ∫_{τ_i}^{τ_{i+1}} φ_{a_p} φ_{a_q} dt` over the coefficients `a_p` active there
    /// (returned beside it), by 4-point Gauss–Legendre quadrature (exact: the products are
    /// polynomials of degree ≤ 6; Abramowitz & Stegun 25.4.29).
    pub fn gram_interval(&self, i: usize) -> (Vec<usize>, Vec<Vec<f64>>) {
        let h = (self.t1 - self.t0) / self.intervals as f64;
        let a = self.t0 + h * i as f64;
        self.gram_part(i, a, h)
    }

    /// The same Gram matrix over the part `[a, a + h]` of interval `i`,
    /// `G_pq = ∫_a^{a+h} φ_{a_p} φ_{a_q} dt` (exact likewise: one polynomial piece; a free
    /// final time ends the last interval inside it).
    pub fn gram_part(&self, i: usize, a: f64, h: f64) -> (Vec<usize>, Vec<Vec<f64>>) {
        let first = self.active::<f64>(i, a);
        let idx = first.idx[..first.n].to_vec();
        let mut g = vec![vec![0.0; idx.len()]; idx.len()];
        for (x, w) in GAUSS_X.iter().zip(GAUSS_W) {
            let act = self.active::<f64>(i, a + 0.5 * h * (x + 1.0));
            for p in 0..act.n {
                for q in 0..act.n {
                    g[p][q] += 0.5 * h * w * act.w[p] * act.w[q];
                }
            }
        }
        (idx, g)
    }

    /// The controls `u(t)` in interval `i` from the coefficients `c` (channel-major).
    pub fn values<D: Scalar>(&self, i: usize, t: D, c: &[D], u: &mut [D]) {
        let act = self.active(i, t);
        let nc = self.n_coef();
        for (j, uj) in u.iter_mut().enumerate().take(self.channels) {
            let mut acc = D::zero();
            for a in 0..act.n {
                acc += act.w[a] * c[j * nc + act.idx[a]];
            }
            *uj = acc;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_of_unity_and_continuity() {
        for basis in [
            Basis::PiecewiseConstant,
            Basis::PiecewiseLinear,
            Basis::CubicBspline,
        ] {
            let g = ControlGrid {
                basis,
                t0: 0.0,
                t1: 2.0,
                intervals: 5,
                channels: 1,
            };
            for i in 0..5 {
                for s in [0.0, 0.3, 0.9999] {
                    let t = 0.4 * (i as f64 + s);
                    let a = g.active(i, t);
                    let sum: f64 = a.w[..a.n].iter().sum();
                    assert!((sum - 1.0).abs() < 1e-14);
                }
            }
            if basis != Basis::PiecewiseConstant {
                // continuity at an interior node
                let c: Vec<f64> = (0..g.n_coef()).map(|k| (k as f64 * 1.7).sin()).collect();
                let (mut ul, mut ur) = ([0.0], [0.0]);
                g.values(1, 0.8, &c, &mut ul);
                g.values(2, 0.8, &c, &mut ur);
                assert!((ul[0] - ur[0]).abs() < 1e-14);
            }
        }
    }
}
