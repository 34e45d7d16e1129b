//! The exact (num-dual) Jacobians of the model functions against central differences of the
//! same functions evaluated in `f64`: f_t, f_x, f_u, f_p; g_t, g_x, g_p; R_t, R_x, R_p;
//! dx0/dp; the outputs; and the setup-level Jacobians with respect to θ = (p, control
//! coefficients) including the running-cost quadrature rows.
//!
//! Central differences with step h = 1e-5·max(1, |v|) have truncation error ~h²|f'''|/6
//! ≈ 1e-11 and round-off ~ε|f|/h ≈ 1e-11; measured ≤ 1.24e-9, held to 3e-8, while a
//! wrong partial (a missing term, a sign) fails by orders of magnitude.

use crate::common;

use hybridopt::control::{Basis, ControlGrid};
use hybridopt::cost::{Objective, Quantity, Term};
use hybridopt::model::{
    flow_jacobian, guard_jacobian, initial_jacobian, outputs_jacobian, reset_jacobian, Dims,
};
use hybridopt::setup::Setup;
use hybridopt::systems::ImpactPendulum;
use hybridopt::systems::SwitchedLinear;
use hybridopt::systems::{BouncingBall, ThrustBall};
use hybridopt::testing::Ctx;
use hybridopt::HybridSystem;
use nalgebra::{DMatrix, DVector};

/// Measured worst 1.24e-9 (impact pendulum f_t / y_t; 2026-12-02; was 1e-7), margin 24×.
const REL: f64 = 3e-8;

/// Central-difference Jacobian of `f` (R^k → R^m) at `at`, columns = inputs.
fn fd_jac(f: &dyn Fn(&[f64]) -> Vec<f64>, at: &[f64]) -> DMatrix<f64> {
    let m = f(at).len();
    let mut j = DMatrix::zeros(m, at.len());
    for c in 0..at.len() {
        let h = 1e-5 * at[c].abs().max(1.0);
        let mut a = at.to_vec();
        let mut b = at.to_vec();
        a[c] += h;
        b[c] -= h;
        let (fa, fb) = (f(&a), f(&b));
        for r in 0..m {
            j[(r, c)] = (fa[r] - fb[r]) / (2.0 * h);
        }
    }
    j
}

/// Entry-wise |exact − fd| ≤ REL·max(|fd|, 1e-3) (relative for entries ≥ 1e-3).
fn assert_close(what: &str, exact: &DMatrix<f64>, fd: &DMatrix<f64>) {
    assert_eq!(exact.shape(), fd.shape(), "{what}: shape");
    let worst = exact
        .iter()
        .zip(fd.iter())
        .map(|(a, b)| (a - b).abs() / b.abs().max(1e-3))
        .fold(0.0f64, f64::max);
    println!("measured {what}: {worst:.2e}");
    for r in 0..exact.nrows() {
        for c in 0..exact.ncols() {
            let (a, b) = (exact[(r, c)], fd[(r, c)]);
            assert!(
                (a - b).abs() <= REL * b.abs().max(1e-3),
                "{what}[{r},{c}]: exact {a:e} vs central difference {b:e}"
            );
        }
    }
}

fn row(v: &DVector<f64>) -> DMatrix<f64> {
    DMatrix::from_row_slice(1, v.len(), v.as_slice())
}

fn col(v: &DVector<f64>) -> DMatrix<f64> {
    DMatrix::from_column_slice(v.len(), 1, v.as_slice())
}

/// Splits a flat (t, x, u, p) vector.
fn split(v: &[f64], nx: usize, nu: usize) -> (f64, &[f64], &[f64], &[f64]) {
    (
        v[0],
        &v[1..1 + nx],
        &v[1 + nx..1 + nx + nu],
        &v[1 + nx + nu..],
    )
}

/// Blocks (t, x, u, p) of a central-difference Jacobian over the flat vector.
fn blocks(j: &DMatrix<f64>, nx: usize, nu: usize, np: usize) -> [DMatrix<f64>; 4] {
    [
        j.columns(0, 1).into_owned(),
        j.columns(1, nx).into_owned(),
        j.columns(1 + nx, nu).into_owned(),
        j.columns(1 + nx + nu, np).into_owned(),
    ]
}

/// Checks every model-level Jacobian of `sys` at one point. Returns the exact ones
/// (flow, guard k = 0, reset k = 0) so callers can assert that particular terms are
/// nonzero (the check would be vacuous on a zero block).
fn check_point<S: HybridSystem>(
    name: &str, sys: &S, mode: usize, t: f64, x: &[f64], u: &[f64], p: &[f64],
) -> (
    hybridopt::model::Jacobian,
    Vec<hybridopt::model::Jacobian>,
    hybridopt::model::Jacobian,
) {
    let d = sys.dims();
    let (nx, nu, np) = (d.nx(), d.nu(), d.np());
    assert_eq!((x.len(), u.len(), p.len()), (nx, nu, np));
    let mut flat = vec![t];
    flat.extend_from_slice(x);
    flat.extend_from_slice(u);
    flat.extend_from_slice(p);

    // flow
    let fj = flow_jacobian(sys, nx, mode, t, x, u, p).unwrap();
    let f = |v: &[f64]| {
        let (t, x, u, p) = split(v, nx, nu);
        let mut dx = vec![0.0; nx];
        sys.flow(mode, t, x, u, p, &mut dx).unwrap();
        dx
    };
    assert_eq!(
        fj.value.as_slice(),
        f(&flat).as_slice(),
        "{name}: flow value"
    );
    let [ft, fx, fu, fp] = blocks(&fd_jac(&f, &flat), nx, nu, np);
    assert_close(&format!("{name} f_t"), &col(&fj.t), &ft);
    assert_close(&format!("{name} f_x"), &fj.x, &fx);
    assert_close(&format!("{name} f_u"), &fj.u, &fu);
    assert_close(&format!("{name} f_p"), &fj.p, &fp);

    // guards active in this mode
    let mut gjs = Vec::new();
    for k in 0..d.guards.len() {
        let gj = guard_jacobian(sys, mode, k, t, x, u, p).unwrap();
        let g = |v: &[f64]| {
            let (t, x, u, p) = split(v, nx, nu);
            vec![sys.guard(mode, k, t, x, u, p)]
        };
        let [gt, gx, gu, gp] = blocks(&fd_jac(&g, &flat), nx, nu, np);
        assert_close(&format!("{name} g{k}_t"), &col(&gj.t), &gt);
        assert_close(&format!("{name} g{k}_x"), &gj.x, &gx);
        assert_close(&format!("{name} g{k}_u"), &gj.u, &gu);
        assert_close(&format!("{name} g{k}_p"), &gj.p, &gp);
        gjs.push(gj);
    }

    // reset of guard 0 (t, x, p: no controls)
    let mut flat_r = vec![t];
    flat_r.extend_from_slice(x);
    flat_r.extend_from_slice(p);
    let (next, rj) = reset_jacobian(sys, nx, mode, 0, t, x, p).unwrap();
    let (next_direct, xp) = sys.reset(mode, 0, t, x, p).unwrap();
    assert_eq!(next, next_direct, "{name}: reset mode");
    assert_eq!(rj.value.as_slice(), xp.as_slice(), "{name}: reset value");
    let r = |v: &[f64]| {
        let (t, x, _, p) = split(v, nx, 0);
        sys.reset(mode, 0, t, x, p).unwrap().1
    };
    let [rt, rx, _, rp] = blocks(&fd_jac(&r, &flat_r), nx, 0, np);
    assert_close(&format!("{name} R_t"), &col(&rj.t), &rt);
    assert_close(&format!("{name} R_x"), &rj.x, &rx);
    assert_close(&format!("{name} R_p"), &rj.p, &rp);

    // outputs
    let ny = d.outputs.len();
    let oj = outputs_jacobian(sys, ny, mode, t, x, u, p).unwrap();
    let o = |v: &[f64]| {
        let (t, x, u, p) = split(v, nx, nu);
        let mut y = vec![0.0; ny];
        sys.outputs(mode, t, x, u, p, &mut y).unwrap();
        y
    };
    let [ot, ox, ou, op] = blocks(&fd_jac(&o, &flat), nx, nu, np);
    assert_close(&format!("{name} y_t"), &col(&oj.t), &ot);
    assert_close(&format!("{name} y_x"), &oj.x, &ox);
    assert_close(&format!("{name} y_u"), &oj.u, &ou);
    assert_close(&format!("{name} y_p"), &oj.p, &op);

    // start state
    let (x0, dx0) = initial_jacobian(sys, nx, p).unwrap();
    let x0f = |p: &[f64]| sys.initial_state(p).unwrap();
    assert_eq!(x0.as_slice(), x0f(p).as_slice(), "{name}: x0");
    assert_close(&format!("{name} dx0/dp"), &dx0, &fd_jac(&x0f, p));

    (fj, gjs, rj)
}

/// Not a tolerance: a witness that the entry is structurally nonzero (the smallest checked
/// is O(0.1)).
fn nonzero(what: &str, v: f64) {
    assert!(v.abs() > 1e-6, "{what} should be nonzero here, is {v:e}");
}

#[test]
fn bouncing_ball_jacobians() {
    let p = [9.81, 0.8, 0.1, 1.0, 0.3];
    for (t, x) in [(0.3, [0.7, -1.3]), (2.1, [0.01, 4.2])] {
        let (fj, _, rj) = check_point("ball", &BouncingBall, 0, t, &x, &[], &p);
        // the restitution enters only the reset: R_p[v, e] = −v⁻, f_p[:, e] = 0
        // structural: exact up to round-off (measured 0)
        assert!((rj.p[(1, 1)] + x[1]).abs() < 1e-15);
        assert_eq!(fj.p.column(1).amax(), 0.0);
        nonzero("ball f_p[v, c]", fj.p[(1, 2)]);
    }
}

#[test]
fn switched_linear_jacobians() {
    let p = SwitchedLinear::default_params();
    for mode in [0, 1] {
        for x in [[-0.2, 0.9], [0.4, -1.7]] {
            let (fj, gjs, rj) = check_point("switched", &SwitchedLinear, mode, 0.8, &x, &[], &p);
            // the mode's own stiffness: f_p[x2, k_mode] = −x1
            // structural: exact up to round-off (measured 0)
            assert!((fj.p[(1, mode)] + x[0]).abs() < 1e-15);
            assert_eq!(fj.p[(1, 1 - mode)], 0.0);
            assert_eq!(gjs[0].x[(0, 0)], 1.0);
            assert_eq!(rj.x, DMatrix::identity(2, 2));
        }
    }
}

#[test]
fn impact_pendulum_jacobians() {
    let p = ImpactPendulum::default_params();
    for (t, x) in [(1.7, [0.4, 1.2]), (4.3, [0.25, -0.6])] {
        let (fj, gjs, rj) = check_point("pendulum", &ImpactPendulum, 0, t, &x, &[], &p);
        // the terms the jump tests rely on are really there
        nonzero("pendulum f_t (forcing)", fj.t[1]);
        nonzero("pendulum h_t", rj.t[1]);
        nonzero("pendulum h_q", rj.x[(1, 0)]);
        nonzero("pendulum g_p[q_w]", gjs[0].p[(0, 5)]);
    }
}

#[test]
fn thrust_ball_jacobians_with_a_control_value() {
    let p = [9.81, 0.8, 0.1, 1.0, 0.3];
    for u in [2.5, -7.0] {
        let (fj, ..) = check_point("thrust", &ThrustBall, 0, 0.9, &[0.6, -2.2], &[u], &p);
        assert_eq!(fj.u[(1, 0)], 1.0);
        assert_eq!(fj.u[(0, 0)], 0.0);
    }
}

/// A test model whose guard and outputs depend on the control and on t, so that the chain
/// rule `d/dt += g_u u̇`, `d/dc += g_u φ(t)` of the setup-level gradients is exercised.
struct ControlledGuard;

impl HybridSystem for ControlledGuard {
    fn dims(&self) -> Dims {
        Dims::new(["x", "w"], ["k", "b"])
            .controls(["u"])
            .guards([hybridopt::GuardInfo::new("g", hybridopt::Direction::Rising)])
            .outputs(["xu", "w"])
    }
    fn initial_state<D: hybridopt::Scalar>(
        &self, p: &[D],
    ) -> Result<Vec<D>, hybridopt::ModelError> {
        Ok(vec![p[1], p[0] * p[1]])
    }
    fn flow<D: hybridopt::Scalar>(
        &self, _m: usize, t: D, x: &[D], u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), hybridopt::ModelError> {
        dx[0] = u[0] * u[0] - p[0] * x[0] + t.sin();
        dx[1] = x[0] * u[0] - p[1] * x[1];
        Ok(())
    }
    fn guard<D: hybridopt::Scalar>(
        &self, _m: usize, _k: usize, t: D, x: &[D], u: &[D], p: &[D],
    ) -> D {
        x[0] - p[1] * u[0] * u[0] - t * 0.1 + x[1] * t
    }
    fn reset<D: hybridopt::Scalar>(
        &self, m: usize, _k: usize, t: D, x: &[D], p: &[D],
    ) -> Result<(usize, Vec<D>), hybridopt::ModelError> {
        Ok((m, vec![x[0] * p[0] - t, x[1] * x[0] + p[1] * t * t]))
    }
    fn outputs<D: hybridopt::Scalar>(
        &self, _m: usize, _t: D, x: &[D], u: &[D], _p: &[D], out: &mut [D],
    ) -> Result<(), hybridopt::ModelError> {
        out[0] = x[0] * u[0];
        out[1] = x[1];
        Ok(())
    }
}

#[test]
fn controlled_guard_model_jacobians() {
    check_point(
        "controlled",
        &ControlledGuard,
        0,
        0.7,
        &[0.3, -0.4],
        &[1.3],
        &[0.9, 0.25],
    );
}

/// The setup-level Jacobians that the sensitivity code uses: F = (f, L) with respect to X
/// and θ = (p, c) (the control columns through the basis functions, `f_theta`), the guard's
/// total (t, X, θ) gradients, the outputs' and the reset of X, all against central
/// differences of `Setup::rhs`, `Setup::guard_value`, `Setup::outputs` and `Setup::reset`.
fn check_setup<S: HybridSystem>(sys: &S, p: &[f64], x: &[f64], effort_row: usize) {
    for basis in [
        Basis::PiecewiseConstant,
        Basis::PiecewiseLinear,
        Basis::CubicBspline,
    ] {
        let grid = ControlGrid {
            basis,
            t0: 0.0,
            t1: 3.0,
            intervals: 6,
            channels: 1,
        };
        let obj = Objective::new(
            "psi",
            vec![
                Term::Effort { weight: 0.3 },
                Term::squared(Quantity::Integral { output: 0 }, 1.0, 0.7),
            ],
        );
        let setup = Setup::new(sys, 0.0, 3.0, Some(grid.clone()), vec![obj]);
        let n = setup.n();
        let np = setup.np();
        assert_eq!(n, x.len() + 2);
        let mut rng = common::Rng(7);
        let mut theta = p.to_vec();
        theta.extend(rng.vec(setup.nc(), -3.0, 3.0));
        let iv = 2;
        let nodes = grid.nodes();
        let ctx = Ctx {
            mode: 0,
            t_lo: nodes[iv],
            t_hi: nodes[iv + 1],
        };
        let t = nodes[iv] + 0.37 * (nodes[iv + 1] - nodes[iv]);
        let mut xx = x.to_vec();
        xx.extend([0.0, 0.0]);

        let fj = setup.flow_jacobian(&ctx, t, &xx, &theta).unwrap();
        let fth = setup.f_theta(&fj);
        let rhs_x = |x: &[f64]| {
            let mut out = vec![0.0; n];
            setup.rhs(&ctx, t, x, &theta, &mut out).unwrap();
            out
        };
        let rhs_th = |th: &[f64]| {
            let mut out = vec![0.0; n];
            setup.rhs(&ctx, t, &xx, th, &mut out).unwrap();
            out
        };
        assert_eq!(fj.f.as_slice(), rhs_x(&xx).as_slice());
        assert_close(&format!("{basis:?} F_X"), &fj.fx, &fd_jac(&rhs_x, &xx));
        assert_close(&format!("{basis:?} F_θ"), &fth, &fd_jac(&rhs_th, &theta));
        // the effort row really depends on the active coefficients
        let act = grid.active::<f64>(iv, t);
        for a in 0..act.n {
            nonzero("∂L_effort/∂c", fth[(effort_row, np + act.idx[a])]);
        }

        let gj = setup.guard_jacobian(&ctx, 0, t, &xx, &theta).unwrap();
        let g_t = |v: &[f64]| vec![setup.guard_value(&ctx, 0, v[0], &xx, &theta)];
        let g_x = |x: &[f64]| vec![setup.guard_value(&ctx, 0, t, x, &theta)];
        let g_th = |th: &[f64]| vec![setup.guard_value(&ctx, 0, t, &xx, th)];
        let what = format!("{basis:?}");
        assert_close(
            &format!("{what} G_t"),
            &DMatrix::from_element(1, 1, gj.t),
            &fd_jac(&g_t, &[t]),
        );
        assert_close(&format!("{what} G_X"), &row(&gj.x), &fd_jac(&g_x, &xx));
        assert_close(
            &format!("{what} G_θ"),
            &row(&gj.theta),
            &fd_jac(&g_th, &theta),
        );

        let ny = setup.dims().outputs.len();
        let oj = setup.output_jacobian(&ctx, t, &xx, &theta).unwrap();
        let outs = |t: f64, x: &[f64], th: &[f64]| {
            let u = setup.controls_at(&ctx, t, th);
            let mut y = vec![0.0; ny];
            sys.outputs(0, t, &x[..x.len() - 2], &u, &th[..np], &mut y)
                .unwrap();
            y
        };
        let yt = fd_jac(&|v: &[f64]| outs(v[0], &xx, &theta), &[t]);
        let yx = fd_jac(&|x: &[f64]| outs(t, x, &theta), &xx);
        let yth = fd_jac(&|th: &[f64]| outs(t, &xx, th), &theta);
        for (i, o) in oj.iter().enumerate() {
            assert_close(
                &format!("{what} y{i}_t"),
                &DMatrix::from_element(1, 1, o.t),
                &yt.rows(i, 1).into_owned(),
            );
            assert_close(
                &format!("{what} y{i}_X"),
                &row(&o.x),
                &yx.rows(i, 1).into_owned(),
            );
            assert_close(
                &format!("{what} y{i}_θ"),
                &row(&o.theta),
                &yth.rows(i, 1).into_owned(),
            );
        }

        let rj = setup.reset_jacobian(0, 0, t, &xx, &theta).unwrap();
        let r_x = |x: &[f64]| setup.reset(0, 0, t, x, &theta).unwrap().1;
        let r_th = |th: &[f64]| setup.reset(0, 0, t, &xx, th).unwrap().1;
        let r_t = |v: &[f64]| setup.reset(0, 0, v[0], &xx, &theta).unwrap().1;
        assert_close(
            &format!("{what} R_X"),
            &rj.rx.to_dense(),
            &fd_jac(&r_x, &xx),
        );
        assert_close(&format!("{what} R_θ"), &rj.rtheta, &fd_jac(&r_th, &theta));
        assert_close(&format!("{what} R_t"), &col(&rj.rt), &fd_jac(&r_t, &[t]));
    }
}

#[test]
fn setup_jacobians_thrust_ball() {
    check_setup(&ThrustBall, &[9.81, 0.8, 0.1, 1.0, 0.3], &[0.6, -2.2], 2);
}

#[test]
fn setup_jacobians_control_dependent_guard() {
    check_setup(&ControlledGuard, &[0.9, 0.25], &[0.3, -0.4], 2);
}
