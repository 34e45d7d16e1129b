//! The rectifier's semi-analytic oracle (reference-models §7): both modes are linear with
//! sinusoidal forcing, so each segment has a closed form; the switching times are roots
//! of `h(t) = v_s(t) − v_C(t)` (on → off: i_D = h/r falls through 0; off → on: h rises
//! through 0), found by a scan and Newton in `f64` and carried to first order in dual
//! numbers by one Newton correction; ψ = ∫₀^T (v_C − target)² dt by composite
//! Gauss–Legendre on each segment. Generic over the scalar, so `Dual64` runs give dψ/dp.

use hybridopt::Scalar;
use num_dual::Dual64;

/// The closed form of one segment starting at `(ts, vs)`.
#[derive(Clone, Copy)]
struct Segment<D> {
    on: bool,
    ts: D,
    vs: D,
}

fn source<D: Scalar>(t: D, p: &[D]) -> D {
    p[0] * (p[1] * t + p[2]).sin()
}

impl<D: Scalar> Segment<D> {
    /// v_C(t) on this segment.
    fn v(&self, t: D, p: &[D]) -> D {
        let (v_amp, w, phi, r, load, cap) = (p[0], p[1], p[2], p[3], p[4], p[5]);
        if self.on {
            // v̇ = −a v + b sin θ, θ = ωt + φ: v = P sin θ + Q cos θ + K e^{−a(t − ts)}
            let a = (r.recip() + load.recip()) / cap;
            let b = v_amp / (r * cap);
            let den = a * a + w * w;
            let (pp, qq) = (a * b / den, -(b * w) / den);
            let part = |t: D| pp * (w * t + phi).sin() + qq * (w * t + phi).cos();
            let k = self.vs - part(self.ts);
            part(t) + k * (-(a * (t - self.ts))).exp()
        } else {
            self.vs * (-((t - self.ts) / (load * cap))).exp()
        }
    }
    fn h(&self, t: D, p: &[D]) -> D {
        source(t, p) - self.v(t, p)
    }
}

fn re<D: Scalar>(p: &[D]) -> Vec<f64> {
    p.iter().map(|v| v.re()).collect()
}

/// The next switching time after `ts` on `seg`, or None before `t_end`.
fn next_switch<D: Scalar>(seg: &Segment<D>, p: &[D], t_end: f64) -> Option<D> {
    let pr = re(p);
    let sr = Segment {
        on: seg.on,
        ts: seg.ts.re(),
        vs: seg.vs.re(),
    };
    let h = |t: f64| sr.h(t, &pr);
    let dh = |t: f64| {
        let d = sr_dual(&sr).h(Dual64::from(t).derivative(), &lift(&pr));
        d.eps
    };
    // the direction that fires: on → off when h falls, off → on when h rises
    let fires = |a: f64, b: f64| {
        if seg.on {
            a > 0.0 && b <= 0.0
        } else {
            a < 0.0 && b >= 0.0
        }
    };
    let step = 1e-3;
    let mut a = sr.ts + 1e-9;
    while a < t_end {
        let b = (a + step).min(t_end);
        if fires(h(a), h(b)) {
            // bisection to a bracket, then Newton
            let (mut lo, mut hi) = (a, b);
            for _ in 0..60 {
                let mid = 0.5 * (lo + hi);
                if fires(h(lo), h(mid)) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            let mut t = 0.5 * (lo + hi);
            for _ in 0..5 {
                t -= h(t) / dh(t);
            }
            // one correction in D: t_D = t − h_D(t)/h'(t)
            let td = D::from(t);
            return Some(td - seg.h(td, p) / dh(t));
        }
        a = b;
    }
    None
}

fn lift(v: &[f64]) -> Vec<Dual64> {
    v.iter().map(|&a| Dual64::from(a)).collect()
}

fn sr_dual(s: &Segment<f64>) -> Segment<Dual64> {
    Segment {
        on: s.on,
        ts: Dual64::from(s.ts),
        vs: Dual64::from(s.vs),
    }
}

/// Gauss–Legendre nodes and weights on [−1, 1] (Newton on P_n).
fn gauss_legendre(n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut x = vec![0.0; n];
    let mut w = vec![0.0; n];
    for i in 0..n {
        let mut z = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
        for _ in 0..100 {
            let (mut p0, mut p1) = (1.0, z);
            for k in 2..=n {
                let p2 = ((2 * k - 1) as f64 * z * p1 - (k - 1) as f64 * p0) / k as f64;
                p0 = p1;
                p1 = p2;
            }
            let dp = n as f64 * (z * p1 - p0) / (z * z - 1.0);
            let dz = p1 / dp;
            z -= dz;
            if dz.abs() < 1e-16 {
                let dp = n as f64 * (z * p1 - p0) / (z * z - 1.0);
                w[i] = 2.0 / ((1.0 - z * z) * dp * dp);
                break;
            }
        }
        x[i] = z;
    }
    (x, w)
}

/// ψ = ∫_0^{t_end} (v_C − target)² dt and the switching times, starting in mode `on` at
/// v_C(0) = p[6].
pub fn oracle<D: Scalar>(p: &[D], t_end: f64, target: f64) -> (D, Vec<D>) {
    let (gx, gw) = gauss_legendre(12);
    let mut seg = Segment {
        on: true,
        ts: D::from(0.0),
        vs: p[6],
    };
    let mut psi = D::from(0.0);
    let mut switches = Vec::new();
    loop {
        let next = next_switch(&seg, p, t_end);
        let te = next.unwrap_or(D::from(t_end));
        // composite Gauss–Legendre with pieces of at most 2 ms (e^{−a t}, a ≈ 200)
        let pieces = (((te - seg.ts).re() / 2e-3).ceil() as usize).max(1);
        let hpiece = (te - seg.ts) / pieces as f64;
        for k in 0..pieces {
            let a = seg.ts + hpiece * k as f64;
            for (x, w) in gx.iter().zip(&gw) {
                let t = a + hpiece * (0.5 * (x + 1.0));
                let d = seg.v(t, p) - target;
                psi += hpiece * 0.5 * *w * d * d;
            }
        }
        match next {
            Some(ts) => {
                switches.push(ts);
                let vs = seg.v(ts, p);
                seg = Segment {
                    on: !seg.on,
                    ts,
                    vs,
                };
            }
            None => break,
        }
    }
    (psi, switches)
}

/// ψ and dψ/dp by the oracle (one dual run per parameter).
pub fn oracle_gradient(p: &[f64], t_end: f64, target: f64) -> (f64, Vec<f64>) {
    let value = oracle(p, t_end, target).0;
    let grad = (0..p.len())
        .map(|j| {
            let mut pd = lift(p);
            pd[j] = pd[j].derivative();
            oracle(&pd, t_end, target).0.eps
        })
        .collect();
    (value, grad)
}
