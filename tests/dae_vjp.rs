//! The DAE adapter's flow VJP by the implicit function theorem (`src/dae/vjp.rs`) against
//! the exact dual-pass default (one dual Newton correction of z per input direction), on
//! every shipped DAE and memory problem, at states along their runs (both sides of
//! transitions), with random cotangents, given and computed output cotangents.

use crate::common;

use hybridopt::model::{vjp_by_dual_passes, OutputCotangent, VjpArgs, VjpOut};
use hybridopt::problem::Problem;
use hybridopt::HybridSystem;
use std::path::Path;

/// max |a − b| / max |b|.
fn rel_max(a: &[f64], b: &[f64]) -> f64 {
    let big = b.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
        / big
}

#[test]
fn dae_vjp_hook_equals_the_dual_passes() {
    let mut rng = common::Rng(11);
    let mut worst = 0.0f64;
    let mut checked = 0;
    for name in [
        "rectifier_capacitor",
        "pendulum_wall",
        "steel_identify",
        "hysteretic_design",
        "hysteretic_identify",
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("problems/{name}.toml"));
        let problem = Problem::load(&path).unwrap();
        let setup = problem.setup().unwrap();
        let th = problem.theta_values();
        let p = &th[..setup.np()];
        let sys = setup.sys();
        let traj = setup.simulate(&th).unwrap();
        let (nx, np, no) = (setup.nx(), p.len(), setup.dims().outputs.len());
        let samples = traj.samples(0);
        let stride = (samples.len() / 12).max(1);
        for (t, si, x) in samples.into_iter().step_by(stride) {
            let mode = traj.segments[si].mode;
            let k = 2;
            let lam = rng.vec(k * nx, -1.0, 1.0);
            let ybar = rng.vec(k * no, -1.0, 1.0);
            let scale = rng.uniform(0.5, 2.0);
            let at = move |_y: &[f64], yb: &mut [f64]| {
                // a cotangent computed from the outputs' values, as the cost quadrature's
                for (i, v) in yb.iter_mut().enumerate() {
                    *v = scale * _y[i % _y.len()];
                }
            };
            for ybar in [OutputCotangent::Given(&ybar), OutputCotangent::At(&at)] {
                let args = VjpArgs {
                    mode,
                    t,
                    x: &x[..nx],
                    u: &[],
                    p,
                    k,
                    lam: &lam,
                    ybar,
                };
                let run = |hook: bool| {
                    let (mut gx, mut gp, mut y) =
                        (vec![0.0; k * nx], vec![0.0; k * np], vec![0.0; no]);
                    let out = VjpOut {
                        gx: &mut gx,
                        gu: &mut [],
                        gp: &mut gp,
                        y: &mut y,
                    };
                    if hook {
                        sys.flow_vjp(args, out).unwrap();
                    } else {
                        vjp_by_dual_passes(sys, args, out).unwrap();
                    }
                    (gx, gp, y)
                };
                let (hx, hp, hy) = run(true);
                let (dx, dp, dy) = run(false);
                let e = rel_max(&hx, &dx).max(rel_max(&hp, &dp));
                let ey = if matches!(ybar, OutputCotangent::At(_)) {
                    rel_max(&hy, &dy)
                } else {
                    0.0
                };
                assert!(
                    e <= 1e-13 && ey <= 1e-13,
                    "{name} at t = {t} (mode {mode}): hook vs dual passes {e:.2e}, outputs {ey:.2e}"
                );
                worst = worst.max(e).max(ey);
                checked += 1;
            }
        }
    }
    assert!(checked >= 50, "{checked} points");
    common::assert_within(
        "DAE VJP hook vs dual passes (max over points)",
        worst,
        1e-13,
    );
}
