//! Seed 001's memory adjoint (33)–(37), checked literally on one arc of the hysteretic
//! oscillator (theory.md §6): the library carries the memory y* = (x_r, f_r) as states
//! with zero flow, whose adjoint ν after the last reversal t_N is the gradient of ψ with
//! respect to the memory there. The seed instead collects
//!
//! ```text
//! I_N^{N+1} = ∫_{t_N}^{t_f} (λᵀ f_{y*} + μᵀ k_{y*}) dt                            (33)
//! λ̇ᵀ = −(λᵀ f_y + μᵀ k_y + g_y),   λᵀ f_z + μᵀ k_z + g_z = 0,   λ(t_f) = 0       (36)
//! ```
//!
//! and (37) multiplies it with s*_N = s(t_N⁺): so ν(t_N⁺) must equal (I_N^{N+1})ᵀ. The test
//! integrates (36) and (33) here, independently of the library's adjoint (classical RK4
//! backward on a fine grid along the library's forward run, partials by dual numbers of
//! the system's own f and k, μ from (36b)), and reads ν(t_N⁺) as the library's adjoint
//! gradient of a run that starts at t_N⁺ with the memory as parameters. The cost
//! `∫ f² dt` is on the algebraic state, so g_z ≠ 0 and μ ≠ 0.

use crate::common;

use hybridopt::cost::{Objective, Quantity, Term};
use hybridopt::dae::{Dae, DaeDims, DaeIndex, DaeSystem, Point};
use hybridopt::error::ModelError;
use hybridopt::sensitivity::{evaluate, GradientMethod};
use hybridopt::setup::Setup;
use hybridopt::systems::HystereticOscillator;
use hybridopt::{HybridSystem, Scalar};
use num_dual::Dual64;

/// The oscillator started at `(t_N⁺, y_N, mode_N)` with its memory as the parameters
/// after the oscillator's own (`x_r0`, `f_r0`).
struct FromReversal {
    y0: Vec<f64>,
    mode: usize,
}

impl DaeSystem for FromReversal {
    fn index(&self) -> DaeIndex {
        DaeIndex::One
    }
    /// The oscillator's, with the two extra parameters and no further outputs.
    fn dims(&self) -> DaeDims {
        let mut d = HystereticOscillator.dims().outputs([]);
        d.params.extend(["x_r0".to_string(), "f_r0".to_string()]);
        d
    }
    fn guard_active(&self, mode: usize, k: usize) -> bool {
        HystereticOscillator.guard_active(mode, k)
    }
    fn initial_mode(&self, _p: &[f64]) -> usize {
        self.mode
    }
    fn initial_differential<D: Scalar>(&self, _p: &[D]) -> Result<Vec<D>, ModelError> {
        Ok(self.y0.iter().map(|&v| D::from(v)).collect())
    }
    fn initial_memory<D: Scalar>(&self, _y0: &[D], p: &[D]) -> Vec<D> {
        vec![p[7], p[8]]
    }
    fn flow<D: Scalar>(
        &self, mode: usize, at: Point<'_, D>, dy: &mut [D],
    ) -> Result<(), ModelError> {
        HystereticOscillator.flow(mode, at, dy)
    }
    fn algebraic<D: Scalar>(
        &self, mode: usize, at: Point<'_, D>, r: &mut [D],
    ) -> Result<(), ModelError> {
        HystereticOscillator.algebraic(mode, at, r)
    }
    fn guard<D: Scalar>(&self, mode: usize, k: usize, at: Point<'_, D>) -> D {
        HystereticOscillator.guard(mode, k, at)
    }
}

fn cost_on_f<S: HybridSystem>(sys: &S) -> Objective {
    let f = sys.dims().output_index("f").unwrap();
    Objective::new(
        "psi",
        vec![Term::squared(Quantity::Integral { output: f }, 0.0, 1.0)],
    )
}

/// Partials at a point of mode `m`: (f_y, f_z, f_{y*}, k_y, k_z, k_{y*}) by dual passes
/// over (y, z, y*); f_y row-major 2×2, the others as vectors/matrices by column.
struct Blocks {
    fy: [[f64; 2]; 2],
    fz: [f64; 2],
    fm: [[f64; 2]; 2],
    ky: [f64; 2],
    kz: f64,
    km: [f64; 2],
}

fn blocks(m: usize, t: f64, y: &[f64], z: f64, mem: &[f64], p: &[f64]) -> Blocks {
    let sys = HystereticOscillator;
    let mut b = Blocks {
        fy: [[0.0; 2]; 2],
        fz: [0.0; 2],
        fm: [[0.0; 2]; 2],
        ky: [0.0; 2],
        kz: 0.0,
        km: [0.0; 2],
    };
    let lift = |v: &[f64]| v.iter().map(|&a| Dual64::from(a)).collect::<Vec<_>>();
    for d in 0..5 {
        let (mut yd, mut zd, mut md) = (lift(y), lift(&[z]), lift(mem));
        match d {
            0 | 1 => yd[d].eps = 1.0,
            2 => zd[0].eps = 1.0,
            _ => md[d - 3].eps = 1.0,
        }
        let pd = lift(p);
        let at = Point {
            t: Dual64::from(t),
            y: &yd,
            z: &zd,
            memory: &md,
            p: &pd,
        };
        let mut f = [Dual64::from(0.0); 2];
        let mut k = [Dual64::from(0.0); 1];
        sys.flow(m, at, &mut f).unwrap();
        sys.algebraic(m, at, &mut k).unwrap();
        for (i, fi) in f.iter().enumerate() {
            match d {
                0 | 1 => b.fy[i][d] = fi.eps,
                2 => b.fz[i] = fi.eps,
                _ => b.fm[i][d - 3] = fi.eps,
            }
        }
        match d {
            0 | 1 => b.ky[d] = k[0].eps,
            2 => b.kz = k[0].eps,
            _ => b.km[d - 3] = k[0].eps,
        }
    }
    b
}

#[test]
fn memory_adjoint_equals_the_seed_integral_on_the_last_arc() {
    let sys = Dae::new(HystereticOscillator);
    let p = HystereticOscillator::default_params();
    let run = |t_end: f64| {
        let setup = Setup::builder(&sys)
            .horizon(0.0, t_end)
            .objective(cost_on_f(&sys))
            .tolerances(1e-12, 1e-12)
            .build();
        let traj = setup.simulate(&p).unwrap();
        (setup, traj)
    };
    // end half-way between two reversals: a long last arc
    let ev = run(12.0).1.events;
    assert!(ev.len() >= 3, "reversals");
    let t_end = 0.5 * (ev[ev.len() - 2].t + ev[ev.len() - 1].t);
    let (setup, traj) = run(t_end);
    let last = traj.segments.last().unwrap();
    let (t_n, mode) = (last.t_start, last.mode);
    assert!(t_end - t_n > 1.0, "a long last arc");
    let mut x = vec![0.0; setup.n()];
    last.state_at(t_n, &mut x);
    let (y0, mem) = (x[..2].to_vec(), x[2..4].to_vec());

    // the library: ν(t_N⁺) = dψ/d(memory at t_N⁺) of the run from there
    let from = Dae::new(FromReversal {
        y0: y0.clone(),
        mode,
    });
    let mut q = p.clone();
    q.extend(&mem);
    let s2 = Setup::builder(&from)
        .horizon(t_n, t_end)
        .objective(cost_on_f(&from))
        .tolerances(1e-12, 1e-12)
        .build();
    let tr2 = s2.simulate(&q).unwrap();
    assert!(tr2.events.is_empty(), "no reversal after t_N");
    let g = evaluate(&s2, &q, GradientMethod::Adjoint)
        .unwrap()
        .gradients[0]
        .clone();
    let nu = [g[7], g[8]];

    // the seed: (36) backward from λ(t_f) = 0 with the integral (33) alongside, RK4
    let rhs = |t: f64, lam: [f64; 2]| -> [f64; 4] {
        let mut xs = vec![0.0; setup.n()];
        last.state_at(t, &mut xs);
        let z = sys.algebraic(mode, t, &xs[..4], &p).unwrap()[0];
        let b = blocks(mode, t, &xs[..2], z, &xs[2..4], &p);
        let gz = 2.0 * z;
        // (36b): μ = −(g_z + λᵀ f_z)/k_z
        let mu = -(gz + lam[0] * b.fz[0] + lam[1] * b.fz[1]) / b.kz;
        // (36a): λ̇_j = −(λᵀ f_y + μ k_y + g_y)_j  (g_y = 0)
        let dl = |j: usize| -(lam[0] * b.fy[0][j] + lam[1] * b.fy[1][j] + mu * b.ky[j]);
        // (33): the integrand λᵀ f_{y*} + μ k_{y*}
        let di = |j: usize| lam[0] * b.fm[0][j] + lam[1] * b.fm[1][j] + mu * b.km[j];
        [dl(0), dl(1), di(0), di(1)]
    };
    let steps = 20_000;
    let h = (t_end - t_n) / steps as f64;
    let (mut lam, mut integral) = ([0.0; 2], [0.0; 2]);
    for i in 0..steps {
        // backward in time: s from t_f down to t_N, λ' = −λ̇ in s
        let t = t_end - i as f64 * h;
        let f = |t: f64, l: [f64; 2]| rhs(t, l).map(|v| -v);
        let add = |l: [f64; 2], k: &[f64; 4], c: f64| [l[0] + c * k[0], l[1] + c * k[1]];
        let k1 = f(t, lam);
        let k2 = f(t - 0.5 * h, add(lam, &k1, 0.5 * h));
        let k3 = f(t - 0.5 * h, add(lam, &k2, 0.5 * h));
        let k4 = f(t - h, add(lam, &k3, h));
        for j in 0..2 {
            lam[j] += h / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]);
            // I = ∫ integrand dt: the same stages, sign back to forward time
            integral[j] -= h / 6.0 * (k1[2 + j] + 2.0 * k2[2 + j] + 2.0 * k3[2 + j] + k4[2 + j]);
        }
    }
    let err = common::rel_l2(&nu, &integral);
    println!("ν(t_N⁺) = {nu:?}, seed I_N^(N+1) = {integral:?}");
    assert!(
        integral.iter().all(|v| v.abs() > 1e-3),
        "nontrivial memory adjoint"
    );
    // measured 1.2e-13
    common::assert_within("seed (33) I_N^{N+1} vs the library's ν(t_N⁺)", err, 3e-12);
}
