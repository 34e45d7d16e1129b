use hybridopt::sensitivity::{dual, evaluate, forward, GradientMethod};
use hybridopt::setup::Setup;
use hybridopt::systems::bouncing_ball::{oracle, BouncingBall};
use num_dual::Dual64;

fn setup(sys: &BouncingBall, tol: f64) -> Setup<'_, BouncingBall> {
    let obj = hybridopt::systems::bouncing_ball::shipped_objective();
    let mut s = Setup::new(sys, 0.0, 3.0, None, vec![obj]);
    s.solver.rtol = tol;
    s.solver.atol = tol;
    s
}

fn oracle_grad(p: &[f64]) -> (f64, Vec<f64>, Vec<Vec<f64>>) {
    let mut g = vec![0.0; 5];
    let mut taus: Vec<Vec<f64>> = Vec::new();
    for j in 0..5 {
        let pd: Vec<Dual64> = p
            .iter()
            .enumerate()
            .map(|(i, &v)| Dual64::new(v, if i == j { 1.0 } else { 0.0 }))
            .collect();
        g[j] = oracle::cost(&pd, 3.0, 0.1, 0.1).eps;
        let (imp, ..) = oracle::run(&pd, 3.0);
        if taus.is_empty() {
            taus = vec![vec![0.0; 5]; imp.len()];
        }
        for (k, t) in imp.iter().enumerate() {
            taus[k][j] = t.eps;
        }
    }
    (oracle::cost(p, 3.0, 0.1, 0.1), g, taus)
}

fn rel(a: &[f64], b: &[f64]) -> f64 {
    let num: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt();
    let den: f64 = b.iter().map(|y| y * y).sum::<f64>().sqrt().max(1e-300);
    num / den
}

fn check(p: &[f64]) {
    let sys = BouncingBall;
    let s = setup(&sys, 1e-10);
    let (psi_o, g_o, tau_o) = oracle_grad(p);
    let adj = evaluate(&s, p, GradientMethod::Adjoint).unwrap();
    let fw = forward::forward_sensitivity(&s, p).unwrap();
    let du = dual::dual_gradients(&s, p).unwrap();
    let fd = evaluate(&s, p, GradientMethod::Fd).unwrap();
    println!("psi {} oracle {}", adj.values[0], psi_o);
    println!(
        "adjoint {:?}\ndirect  {:?}\ndual    {:?}\nfd      {:?}\noracle  {:?}",
        adj.gradients[0], fw.gradients[0], du.gradients[0], fd.gradients[0], g_o
    );
    assert!((adj.values[0] - psi_o).abs() <= 1e-8 * psi_o.abs());
    for (name, g) in [
        ("adjoint", &adj.gradients[0]),
        ("direct", &fw.gradients[0]),
        ("dual", &du.gradients[0]),
    ] {
        let r = rel(g, &g_o);
        println!("{name} vs oracle: {r:e}");
        assert!(r <= 1e-8, "{name} {r:e}");
    }
    let r = rel(&fd.gradients[0], &g_o);
    println!("fd vs oracle: {r:e}");
    assert!(r <= 1e-5);
    assert_eq!(fw.events.len(), tau_o.len());
    for (k, e) in fw.events.iter().enumerate() {
        let r1 = rel(&e.tau, &tau_o[k]);
        let r2 = rel(&du.event_tau[k], &tau_o[k]);
        assert!(
            r1 <= 1e-8 && r2 <= 1e-8,
            "event {k}: direct {r1:e} dual {r2:e}"
        );
    }
}

#[test]
fn ball_matches_oracle_default() {
    check(&[9.81, 0.8, 0.1, 1.0, 0.0]);
}

#[test]
fn ball_matches_oracle_other_values() {
    check(&[9.81, 0.85, 0.15, 1.3, 0.6]);
}
