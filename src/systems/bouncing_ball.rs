//! The bouncing ball with linear drag (reference-models §1): state (y, v), flow
//! `ẏ = v, v̇ = −g − c v`, guard `y = 0` falling, reset `v⁺ = −e v⁻`.
//! Parameters (g, e, c, y0, v0). The restitution e enters only through the reset (R_p).

use super::build_error::BuildError;
use super::kind::{BuiltinSystem, NoSettings};
use crate::error::ModelError;
use crate::model::{
    Dims, Direction, GuardInfo, HybridSystem, OutputCotangent, Scalar, VjpArgs, VjpOut,
};

#[derive(Debug, Clone, Copy, Default)]
pub struct BouncingBall;

impl BouncingBall {
    pub const PARAMS: [&'static str; 5] = ["g", "e", "c", "y0", "v0"];
    /// The shipped problem's values (issue: problems/bouncing_ball.toml).
    pub fn default_params() -> Vec<f64> {
        vec![9.81, 0.8, 0.1, 1.0, 0.0]
    }
}

/// The cost of the shipped problem (problems/bouncing_ball.toml), shared by the tests,
/// the oracle checks and the benchmark: ψ = ∫ y² dt + (y(T) − 0.1)² + 0.1·v(T)².
pub fn shipped_objective() -> crate::cost::Objective {
    use crate::cost::{Objective, Quantity, Term};
    Objective::new(
        "psi",
        vec![
            Term::squared(Quantity::Integral { output: 0 }, 0.0, 1.0),
            Term::squared(Quantity::Terminal { output: 0 }, 0.1, 1.0),
            Term::squared(Quantity::Terminal { output: 1 }, 0.0, 0.1),
        ],
    )
}

impl HybridSystem for BouncingBall {
    fn geometry(&self) -> Option<&dyn crate::geometry::Geometry> {
        Some(self)
    }
    fn dims(&self) -> Dims {
        Dims::new(["y", "v"], Self::PARAMS)
            .param_defaults(Self::default_params())
            .guards([GuardInfo::new("ground", Direction::Falling)])
            .outputs(["y", "v", "energy"])
    }
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        Ok(vec![p[3], p[4]])
    }
    // `#[inline]`: inlined behind `Builtin`'s dispatch whatever codegen unit the caller is in.
    #[inline]
    fn flow<D: Scalar>(
        &self, _m: usize, _t: D, x: &[D], _u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        dx[0] = x[1];
        dx[1] = -p[0] - p[2] * x[1];
        Ok(())
    }
    #[inline]
    fn guard<D: Scalar>(&self, _m: usize, _k: usize, _t: D, x: &[D], _u: &[D], _p: &[D]) -> D {
        x[0]
    }
    #[inline]
    fn reset<D: Scalar>(
        &self, m: usize, _k: usize, _t: D, x: &[D], p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        Ok((m, vec![x[0], -p[1] * x[1]]))
    }
    #[inline]
    fn outputs<D: Scalar>(
        &self, _m: usize, _t: D, x: &[D], _u: &[D], p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        out[0] = x[0];
        out[1] = x[1];
        out[2] = p[0] * x[0] + x[1] * x[1] * 0.5;
        Ok(())
    }

    /// The exact products by hand: `ball_vjp`.
    fn flow_vjp(&self, a: VjpArgs<'_>, out: VjpOut<'_>) -> Result<(), ModelError> {
        ball_vjp(a, out, false)
    }
}

/// The ball's (and the thrust ball's) vector–Jacobian products by hand — the flow and
/// outputs are linear but for `c·v`, `g·y` and `v²/2` — for k cotangents `(λ_j, ȳ_j)`:
///
/// ```text
/// gx = (ȳ_y + g ȳ_E,  λ_y − c λ_v + ȳ_v + v ȳ_E)
/// gp = (−λ_v + y ȳ_E,  0,  −v λ_v,  0,  0)            for p = (g, e, c, y0, v0)
/// gu = λ_v + ȳ_thrust                                 (thrust ball: v̇ += u, output u)
/// ```
///
/// `tests/engine.rs` holds both to the default dual passes.
#[inline(always)]
fn ball_vjp(a: VjpArgs<'_>, out: VjpOut<'_>, thrust: bool) -> Result<(), ModelError> {
    let (x, p) = (a.x, a.p);
    let ny = if thrust { 4 } else { 3 };
    let mut y = [x[0], x[1], p[0] * x[0] + 0.5 * x[1] * x[1], 0.0];
    if thrust {
        y[3] = a.u[0];
    }
    const K_STACK: usize = 8;
    let mut stack = [0.0; 4 * K_STACK];
    let mut heap = Vec::new();
    let ybar: &[f64] = match a.ybar {
        OutputCotangent::None => &[],
        OutputCotangent::Given(v) => v,
        OutputCotangent::At(f) => {
            out.y[..ny].copy_from_slice(&y[..ny]);
            let buf = if a.k <= K_STACK {
                &mut stack[..ny * a.k]
            } else {
                heap.resize(ny * a.k, 0.0);
                &mut heap[..]
            };
            f(&y[..ny], buf);
            buf
        }
    };
    for j in 0..a.k {
        let (ly, lv) = (a.lam[2 * j], a.lam[2 * j + 1]);
        let yb = |i: usize| ybar.get(ny * j + i).copied().unwrap_or(0.0);
        out.gx[2 * j] = yb(0) + p[0] * yb(2);
        out.gx[2 * j + 1] = ly - p[2] * lv + yb(1) + x[1] * yb(2);
        let gp = &mut out.gp[5 * j..5 * j + 5];
        gp.copy_from_slice(&[-lv + x[0] * yb(2), 0.0, -x[1] * lv, 0.0, 0.0]);
        if thrust {
            out.gu[j] = lv + yb(3);
        }
    }
    Ok(())
}

/// A ball pushed by a vertical thrust control `u(t)` (acceleration), same impacts:
/// `v̇ = −g − c v + u`. Parameters (g, e, c, y0, v0).
#[derive(Debug, Clone, Copy, Default)]
pub struct ThrustBall;

impl HybridSystem for ThrustBall {
    fn geometry(&self) -> Option<&dyn crate::geometry::Geometry> {
        Some(self)
    }
    fn dims(&self) -> Dims {
        let mut d = BouncingBall.dims().controls(["thrust"]);
        d.outputs.push("thrust".into());
        d
    }
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        BouncingBall.initial_state(p)
    }
    fn flow<D: Scalar>(
        &self, m: usize, t: D, x: &[D], u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        BouncingBall.flow(m, t, x, u, p, dx)?;
        dx[1] += u[0];
        Ok(())
    }
    fn guard<D: Scalar>(&self, m: usize, k: usize, t: D, x: &[D], u: &[D], p: &[D]) -> D {
        BouncingBall.guard(m, k, t, x, u, p)
    }
    fn reset<D: Scalar>(
        &self, m: usize, k: usize, t: D, x: &[D], p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        BouncingBall.reset(m, k, t, x, p)
    }
    fn outputs<D: Scalar>(
        &self, m: usize, t: D, x: &[D], u: &[D], p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        BouncingBall.outputs(m, t, x, u, p, &mut out[..3])?;
        out[3] = u[0];
        Ok(())
    }
    /// The exact products by hand: `ball_vjp`.
    fn flow_vjp(&self, a: VjpArgs<'_>, out: VjpOut<'_>) -> Result<(), ModelError> {
        ball_vjp(a, out, true)
    }
}

/// Semi-analytic oracle for the ball (reference-models §1), generic over the scalar so that
/// dual numbers differentiate it: flights in closed form, impact times by Newton's method
/// (converged in `f64`, then one Newton step in the scalar type: the implicit-function
/// derivative). Independent of the integrators and of the jump formula.
pub mod oracle {
    use crate::model::Scalar;

    /// y(s), v(s) of a flight from (y_a, v_a): with φ₁ = (1 − e^{−cs})/c and
    /// φ₂ = (cs − 1 + e^{−cs})/c², `v = v_a e^{−cs} − g φ₁`, `y = y_a + v_a φ₁ − g φ₂`
    /// (the closed form of reference-models §1, written without cancellation; c = 0 gives
    /// the parabola).
    pub fn flight<D: Scalar>(g: D, c: D, ya: D, va: D, s: D) -> (D, D) {
        let x = c * s;
        let (phi1, phi2) = if x.re().abs() < 0.5 {
            // series: φ₁ = s Σ (−x)^k/(k+1)!, φ₂ = s² Σ (−x)^k/(k+2)!
            let (mut a1, mut a2) = (D::zero(), D::zero());
            let mut term = D::one(); // (−x)^k
            let mut f1 = 1.0; // (k+1)!
            let mut f2 = 2.0; // (k+2)!
            for k in 0..30 {
                a1 += term / f1;
                a2 += term / f2;
                term = -term * x;
                f1 *= (k + 2) as f64;
                f2 *= (k + 3) as f64;
            }
            (s * a1, s * s * a2)
        } else {
            let em = (-x).exp_m1();
            (-em / c, (x + em) / (c * c))
        };
        (
            ya + va * phi1 - g * phi2,
            va * (D::one() - c * phi1) - g * phi1,
        )
    }

    /// Gauss–Legendre nodes and weights on [0, 1] (Newton on P_n; n = 16).
    fn gauss_legendre() -> Vec<(f64, f64)> {
        let n = 16;
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
            let mut dp = 1.0;
            for _ in 0..100 {
                let (mut p0, mut p1) = (1.0, x);
                for k in 2..=n {
                    let p2 = ((2 * k - 1) as f64 * x * p1 - (k - 1) as f64 * p0) / k as f64;
                    p0 = p1;
                    p1 = p2;
                }
                dp = n as f64 * (x * p1 - p0) / (x * x - 1.0);
                let dx = p1 / dp;
                x -= dx;
                if dx.abs() < 1e-16 {
                    break;
                }
            }
            out.push((0.5 * (1.0 - x), 1.0 / ((1.0 - x * x) * dp * dp)));
        }
        out
    }

    /// ∫₀^S y(s)² ds of a flight by composite 16-point Gauss–Legendre on the closed-form
    /// y(s) (8 panels: exact to round-off for these analytic integrands).
    pub fn flight_y2<D: Scalar>(g: D, c: D, ya: D, va: D, s: D) -> D {
        let gl = gauss_legendre();
        let panels = 8;
        let mut acc = D::zero();
        for k in 0..panels {
            for &(x, w) in &gl {
                let si = s * ((k as f64 + x) / panels as f64);
                let (y, _) = flight(g, c, ya, va, si);
                acc += y * y * w;
            }
        }
        acc * s / panels as f64
    }

    /// Duration of the flight from (y_a, v_a) until y = 0 (the positive root).
    pub fn flight_time<D: Scalar>(g: D, c: D, ya: D, va: D) -> D {
        let (gr, cr, yr, vr) = (g.re(), c.re(), ya.re(), va.re());
        // start from the drag-free root, then Newton in f64
        let mut s = (vr + (vr * vr + 2.0 * gr * yr).sqrt()) / gr;
        if yr == 0.0 {
            s = 2.0 * vr / gr;
        }
        for _ in 0..100 {
            let (y, v) = flight(gr, cr, yr, vr, s);
            let ds = y / v;
            s -= ds;
            if ds.abs() <= 1e-16 * s.abs() {
                break;
            }
        }
        // one Newton step in D carries the derivative
        let sd = D::from(s);
        let (y, v) = flight(g, c, ya, va, sd);
        sd - y / v
    }

    /// Most flights the oracle follows; past it the input is Zeno within the horizon.
    pub const MAX_FLIGHTS: usize = 100_000;

    /// Impact times in (0, t_end] and the state at t_end. `p` = (g, e, c, y0, v0).
    /// Panics on a Zeno input (more than [`MAX_FLIGHTS`] impacts before t_end): a test
    /// oracle, not a user path.
    pub fn run<D: Scalar>(p: &[D], t_end: f64) -> (Vec<D>, D, D, D) {
        let (g, e, c) = (p[0], p[1], p[2]);
        let (mut ya, mut va) = (p[3], p[4]);
        let mut t = D::zero();
        let mut impacts = Vec::new();
        let mut y2 = D::zero();
        loop {
            assert!(
                impacts.len() < MAX_FLIGHTS,
                "oracle: more than {MAX_FLIGHTS} impacts before t_end = {t_end} (Zeno input)"
            );
            let s = flight_time(g, c, ya, va);
            if (t + s).re() > t_end {
                let rest = D::from(t_end) - t;
                y2 += flight_y2(g, c, ya, va, rest);
                let (y, v) = flight(g, c, ya, va, rest);
                return (impacts, y2, y, v);
            }
            y2 += flight_y2(g, c, ya, va, s);
            let (_, v) = flight(g, c, ya, va, s);
            t += s;
            impacts.push(t);
            ya = D::zero();
            va = -e * v;
        }
    }

    /// ψ = ∫₀^T y² dt + (y(T) − y_target)² + w_v v(T)² (the shipped problem's cost).
    pub fn cost<D: Scalar>(p: &[D], t_end: f64, y_target: f64, w_v: f64) -> D {
        let (_, y2, y, v) = run(p, t_end);
        let d = y - y_target;
        y2 + d * d + v * v * w_v
    }
}

impl BuiltinSystem for BouncingBall {
    type Settings = NoSettings;
    fn build(_: &NoSettings) -> Result<Self, BuildError> {
        Ok(BouncingBall)
    }
    fn param_defaults(&self) -> Option<Vec<f64>> {
        Some(BouncingBall::default_params())
    }
}

impl BuiltinSystem for ThrustBall {
    type Settings = NoSettings;
    fn build(_: &NoSettings) -> Result<Self, BuildError> {
        Ok(ThrustBall)
    }
    fn param_defaults(&self) -> Option<Vec<f64>> {
        Some(BouncingBall::default_params())
    }
}
