//! Dense output of one accepted step, in the form of Hairer's DOPRI5 (`rcont1..5`):
//!
//!   y(t0 + θh) = r1 + θ (r2 + (1−θ) (r3 + θ (r4 + (1−θ) r5)))
//!
//! With r5 = 0 this is the cubic Hermite interpolant through (y0, h f0) and (y1, h f1),
//! which SDIRK3 uses; DOPRI5 fills r5 from its stages (4th-order extension). With r5 = 0
//! the form spans every cubic (basis 1, θ, θ(1−θ), θ²(1−θ)), so Radau IIA's collocation
//! polynomial is stored in it too ([`DenseStep::collocation`]): one representation, and
//! evaluation, event location and replay are the same code for every method.

use super::bdf::history::BdfHistory;
use crate::model::Scalar;

/// One accepted step `[t0, t0 + h]` and its interpolant (h may be negative: backward runs).
#[derive(Debug, Clone)]
pub struct DenseStep<D> {
    pub t0: D,
    pub h: D,
    /// An implicit method evaluated its Jacobian at this step's start (set by the step
    /// itself, so every caller records it; a replay does the same, [`crate::integrate::Newton`]).
    pub fresh_jacobian: bool,
    dim: usize,
    /// r1..r5, each `dim` long, concatenated.
    coef: Vec<D>,
    /// A multistep method's history at the step's start (`None` for the one-step methods
    /// and for a BDF run's first step): what a replay of the step starts from.
    history: Option<Box<BdfHistory<D>>>,
}

impl<D: Scalar> DenseStep<D> {
    /// The interpolant with its coefficient rows r1…r5 (each `dim` long) given.
    fn with_coef(t0: D, h: D, dim: usize, coef: Vec<D>) -> Self {
        DenseStep {
            t0,
            h,
            fresh_jacobian: false,
            dim,
            coef,
            history: None,
        }
    }

    /// Builds the interpolant from the step's end values, slopes and the 5th coefficient.
    /// `r5 = None` gives the cubic Hermite interpolant.
    pub fn new(t0: D, h: D, y0: &[D], y1: &[D], f0: &[D], f1: &[D], r5: Option<&[D]>) -> Self {
        match r5 {
            Some(r) => Self::with_r5(t0, h, y0, y1, f0, f1, |i| r[i]),
            None => Self::with_r5(t0, h, y0, y1, f0, f1, |_| D::zero()),
        }
    }

    /// [`Self::new`] with the 5th coefficient given by component (so that the stepper
    /// writes it straight into the interpolant: one allocation).
    pub fn with_r5(
        t0: D, h: D, y0: &[D], y1: &[D], f0: &[D], f1: &[D], r5: impl Fn(usize) -> D,
    ) -> Self {
        let n = y0.len();
        let (y1, f0, f1) = (&y1[..n], &f0[..n], &f1[..n]);
        // r1 = y0, r2 = y1 − y0, r3 = h f0 − r2, r4 = r2 − h f1 − r3, r5 given: row by
        // row into one allocation, never zero-filled (r2 and r3 are recomputed where a
        // later row needs them: the same operations, the same bits)
        let r2 = |i: usize| y1[i] - y0[i];
        let r3 = |i: usize| h * f0[i] - r2(i);
        let mut coef = Vec::with_capacity(5 * n);
        coef.extend_from_slice(y0);
        coef.extend((0..n).map(r2));
        coef.extend((0..n).map(r3));
        coef.extend((0..n).map(|i| r2(i) - h * f1[i] - r3(i)));
        coef.extend((0..n).map(r5));
        Self::with_coef(t0, h, n, coef)
    }

    /// The collocation polynomial of a 3-stage collocation method with nodes
    /// `(c1, c2, 1)`: the cubic u with u(0) = y0 and u(c_i) = y0 + Z_i, where `z` holds the
    /// stage increments `Z_i = Y_i − y0` (stage i at i·n). Exact at both step ends (u(1) =
    /// y0 + Z3 = y1 for a stiffly accurate method), order 3 inside (Hairer & Wanner II,
    /// §IV.5, (5.3) and the dense output of RADAU5). In the form above:
    ///
    /// ```text
    /// r1 = y0, r2 = Z3, q_i = (Z_i − c_i Z3) / (c_i (1 − c_i)) (i = 1, 2),
    /// r4 = (q2 − q1)/(c2 − c1), r3 = q1 − c1 r4, r5 = 0.
    /// ```
    pub fn collocation(t0: D, h: D, y0: &[D], z: &[D], c: [f64; 2]) -> Self {
        let n = y0.len();
        let [c1, c2] = c;
        let (w1, w2) = (1.0 / (c1 * (1.0 - c1)), 1.0 / (c2 * (1.0 - c2)));
        let mut coef = Vec::with_capacity(5 * n);
        coef.extend_from_slice(y0);
        coef.extend_from_slice(&z[2 * n..3 * n]);
        let q = |i: usize| {
            let z3 = z[2 * n + i];
            ((z[i] - z3 * c1) * w1, (z[n + i] - z3 * c2) * w2)
        };
        let r4 = |i: usize| {
            let (q1, q2) = q(i);
            (q2 - q1) / (c2 - c1)
        };
        coef.extend((0..n).map(|i| q(i).0 - r4(i) * c1));
        coef.extend((0..n).map(r4));
        coef.extend((0..n).map(|_| D::zero()));
        Self::with_coef(t0, h, n, coef)
    }

    /// The interpolant with given end values and the rest of its coefficients by
    /// component (`rest(i) = [r3, r4, r5]`): a multistep method's polynomial written in
    /// this form ([`crate::integrate::bdf`]).
    pub(crate) fn quartic(t0: D, h: D, y0: &[D], y1: &[D], rest: impl Fn(usize) -> [D; 3]) -> Self {
        let n = y0.len();
        let mut coef = vec![D::zero(); 5 * n];
        coef[..n].copy_from_slice(y0);
        for i in 0..n {
            let [r3, r4, r5] = rest(i);
            coef[n + i] = y1[i] - y0[i];
            coef[2 * n + i] = r3;
            coef[3 * n + i] = r4;
            coef[4 * n + i] = r5;
        }
        Self::with_coef(t0, h, n, coef)
    }

    /// Moves the history out (a step compacted into a replay window: the window keeps it).
    pub(crate) fn take_history(&mut self) -> Option<Box<BdfHistory<D>>> {
        self.history.take()
    }

    pub(crate) fn set_history(&mut self, history: Option<Box<BdfHistory<D>>>) {
        self.history = history;
    }

    /// Bytes held by the interpolant, a multistep history and the step itself (the
    /// memory budget).
    pub(crate) fn bytes(&self) -> usize {
        self.coef.len() * std::mem::size_of::<D>()
            + std::mem::size_of::<Self>()
            + self.history.as_ref().map_or(0, |h| h.bytes())
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The state at the step's start (the interpolant's first coefficient, exactly).
    pub fn y0(&self) -> &[D] {
        &self.coef[..self.dim]
    }

    /// End time of the step.
    pub fn t1(&self) -> D {
        self.t0 + self.h
    }

    /// The five coefficient rows `c1 … c5` of the interpolant, each of length n.
    #[inline]
    fn rows(&self) -> [&[D]; 5] {
        let n = self.dim;
        let (r1, rest) = self.coef[..5 * n].split_at(n);
        let (r2, rest) = rest.split_at(n);
        let (r3, rest) = rest.split_at(n);
        let (r4, r5) = rest.split_at(n);
        [r1, r2, r3, r4, r5]
    }

    /// Value at the normalised time θ ∈ [0, 1].
    #[inline]
    pub fn eval_theta(&self, th: D, out: &mut [D]) {
        let n = self.dim;
        let (a, b) = (th, D::one() - th);
        let [r1, r2, r3, r4, r5] = self.rows();
        let out = &mut out[..n];
        // zipped (no bounds checks): the interpolant is evaluated at every guard sample
        // and at every stage of the adjoint's backward pass
        for (o, ((((&c1, &c2), &c3), &c4), &c5)) in out
            .iter_mut()
            .zip(r1.iter().zip(r2).zip(r3).zip(r4).zip(r5))
        {
            *o = c1 + a * (c2 + b * (c3 + a * (c4 + b * c5)));
        }
    }

    /// The real part of the value at a real θ (root finding on the real trajectory),
    /// without a real copy of the interpolant.
    #[inline]
    pub fn eval_theta_re(&self, th: f64, out: &mut [f64]) {
        let n = self.dim;
        let (a, b) = (th, 1.0 - th);
        let [r1, r2, r3, r4, r5] = self.rows();
        let out = &mut out[..n];
        for (o, ((((c1, c2), c3), c4), c5)) in out
            .iter_mut()
            .zip(r1.iter().zip(r2).zip(r3).zip(r4).zip(r5))
        {
            *o = c1.re() + a * (c2.re() + b * (c3.re() + a * (c4.re() + b * c5.re())));
        }
    }

    /// Value at time t (real).
    pub fn eval(&self, t: f64, out: &mut [D]) {
        let th = (D::from(t) - self.t0) / self.h;
        self.eval_theta(th, out)
    }

    /// Time derivative dy/dt of the interpolant at θ.
    pub fn eval_derivative_theta(&self, th: D, out: &mut [D]) {
        // p(θ) = r1 + θ A(θ), A = r2 + (1−θ) B, B = r3 + θ C, C = r4 + (1−θ) r5
        let n = self.dim;
        let one = D::one();
        let c = &self.coef;
        for i in 0..n {
            let r5 = c[4 * n + i];
            let cc = c[3 * n + i] + (one - th) * r5;
            let dc = -r5;
            let b = c[2 * n + i] + th * cc;
            let db = cc + th * dc;
            let a = c[n + i] + (one - th) * b;
            let da = -b + (one - th) * db;
            out[i] = (a + th * da) / self.h;
        }
    }

    /// Real parts of this step (for root finding on the real trajectory).
    pub fn real(&self) -> DenseStep<f64> {
        let coef = self.coef.iter().map(|v| v.re()).collect();
        let mut step = DenseStep::with_coef(self.t0.re(), self.h.re(), self.dim, coef);
        step.fresh_jacobian = self.fresh_jacobian;
        step
    }
}

impl<D: Scalar> DenseStep<D> {
    /// The interpolant of the first `m` components only.
    pub fn project(&self, m: usize) -> DenseStep<D> {
        let n = self.dim;
        let mut coef = Vec::with_capacity(5 * m);
        for r in 0..5 {
            coef.extend_from_slice(&self.coef[r * n..r * n + m]);
        }
        let mut step = DenseStep::with_coef(self.t0, self.h, m, coef);
        step.fresh_jacobian = self.fresh_jacobian;
        step
    }
}
