//! The FD witness's default step rule (the Richardson ladder of `sensitivity::fd`): accurate
//! without flags on a problem whose parameters span eight orders of magnitude, with an error
//! estimate that covers the error it reports, and the fixed-step override reproducing the
//! 4th-order stencil.

use crate::common;
use hybridopt::problem::Problem;
use hybridopt::sensitivity::{evaluate, evaluate_with, EvaluateOptions, GradientMethod};
use std::path::Path;

fn steel() -> Problem {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/steel_identify.toml");
    Problem::load(&path).unwrap()
}

/// steel_identify's θ holds E = 1.8e5 next to ε_a = 2e-3: the default FD agrees with the
/// direct method per component. Measured 2.9e-7 (dψ/dε_b; at rtol 1e-10 the simulation's
/// noise bounds every step). The bound is 10× it: the former default, a fixed step
/// 1e-4·max(1, |θ_j|) (5 % of ε_a), gave 5.8e-6 and fails it.
#[test]
fn default_fd_is_accurate_for_parameters_of_every_scale() {
    let p = steel();
    let s = p.setup().unwrap();
    let th = p.theta_values();
    let direct = evaluate(&s, &th, GradientMethod::Direct).unwrap();
    let fd = evaluate(&s, &th, GradientMethod::Fd).unwrap();
    let (g, d) = (&fd.gradients[0], &direct.gradients[0]);
    common::assert_close("steel: default FD vs direct", g, d, 3e-6, 1e-3);

    // the estimate is reported for every entry and covers its error: measured
    // |FD − direct| ≤ 0.83 · estimate on every entry; asserted ≤ 3 · estimate
    let details = fd.fd.as_ref().expect("FD reports its estimates");
    let est = details.error_estimates.as_ref().unwrap();
    assert_eq!(est[0].len(), th.len());
    for (j, name) in s.theta_names().iter().enumerate() {
        let err = (g[j] - d[j]).abs();
        assert!(
            err <= 3.0 * est[0][j],
            "{name}: |FD − direct| = {err:e} beyond 3 × its estimate {:e}",
            est[0][j]
        );
        // each entry's step is on its own scale: within [1e-7, 3e-2] · max(|θ_j|, 1e-2)
        let h = details.steps[0][j] / th[j].abs().max(1e-2);
        assert!((1e-7..=3e-2).contains(&h), "{name}: relative step {h:e}");
    }
}

/// `fd_step(rel)` is the former rule: the 4th-order stencil at h_j = rel · max(1, |θ_j|),
/// here computed from ψ itself, with the estimate |D(2h) − D(h)|.
#[test]
fn a_fixed_step_is_the_fourth_order_stencil() {
    let p = steel();
    let s = p.setup().unwrap();
    let th = p.theta_values();
    let opts = EvaluateOptions::new(GradientMethod::Fd).fd_step(1e-4);
    let fd = evaluate_with(&s, &th, &opts).unwrap();
    let psi = |t: &[f64]| s.objective_values(&s.simulate(t).unwrap(), t).unwrap()[0];
    let details = fd.fd.as_ref().unwrap();
    for j in [0, 6] {
        let h = 1e-4 * th[j].abs().max(1.0);
        let at = |k: f64| {
            let mut t = th.clone();
            t[j] += k * h;
            psi(&t)
        };
        let (p2, p1, m1, m2) = (at(2.0), at(1.0), at(-1.0), at(-2.0));
        let stencil = (-p2 + 8.0 * p1 - 8.0 * m1 + m2) / (12.0 * h);
        let (d1, d2) = ((p1 - m1) / (2.0 * h), (p2 - m2) / (4.0 * h));
        // the same runs combined in another order: round-off apart
        let g = fd.gradients[0][j];
        assert!(
            (g - stencil).abs() <= 1e-12 * stencil.abs(),
            "{j}: {g} vs {stencil}"
        );
        let e = details.error_estimates.as_ref().unwrap()[0][j];
        assert!(
            (e - (d1 - d2).abs()).abs() <= 1e-6 * e,
            "{j}: {e} vs {}",
            (d1 - d2).abs()
        );
        assert_eq!(details.steps[0][j], h);
    }
}

/// `gradient --json` reports the estimate and step by name, and `--fd-step` takes the fixed
/// rule.
#[test]
fn cli_reports_the_estimate_and_takes_the_override() {
    let bin = env!("CARGO_BIN_EXE_hybridopt");
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/steel_identify.toml");
    let run = |extra: &[&str]| -> serde_json::Value {
        let out = std::process::Command::new(bin)
            .args([
                "gradient",
                file.to_str().unwrap(),
                "--method",
                "fd",
                "--json",
                "--no-tau",
            ])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let auto = run(&[]);
    let fixed = run(&["--fd-step", "1e-4"]);
    for g in [&auto, &fixed] {
        let est = g["fd_error_estimate"].as_object().unwrap();
        assert_eq!(est.len(), 8, "{est:?}");
        assert!(est.values().all(|v| v.as_f64().unwrap() >= 0.0));
    }
    // ε_a: the ladder's step is on ε_a's own scale, the fixed step is 1e-4
    let step = |g: &serde_json::Value| g["fd_step"]["eps_a"].as_f64().unwrap();
    assert_eq!(step(&fixed), 1e-4);
    assert!(step(&auto) < 1e-4, "{}", step(&auto));
}
