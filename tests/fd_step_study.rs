//! The FD step study behind `--fd-step` / `--fd-scale` (README "Hybrid DAEs"): central
//! 4th-order FD of a problem's gradient against the direct method, entry by entry, for the
//! two step rules (`unit`: rel·max(1, |θ_j|); `rel`: rel·|θ_j|) and rel from 1e-2 to 1e-6.
//! A study, not a check (`#[ignore]`): run it with
//! `STUDY=steel_identify TOL=1e-12 cargo test --release --test suite fd_step_study:: -- --ignored --nocapture`
//! (`TOL` sets the runs' rtol = atol; the direct reference is at the file's tolerance).

use crate::common;
use hybridopt::problem::Problem;
use hybridopt::sensitivity::fd_gradients_with_steps;
use hybridopt::sensitivity::{evaluate, GradientMethod};
use std::path::Path;

#[test]
#[ignore = "a step study that prints a table; see the module doc"]
fn study() {
    let names = std::env::var("STUDY").unwrap_or("steel_identify".into());
    for name in names.split(',') {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("problems/{name}.toml"));
        let mut p = Problem::load(&path).unwrap();
        let s0 = p.setup().unwrap();
        let th0 = p.theta_values();
        let dir = evaluate(&s0, &th0, GradientMethod::Direct)
            .unwrap()
            .gradients[0]
            .clone();
        if let Ok(t) = std::env::var("TOL") {
            let t: f64 = t.parse().unwrap();
            (p.solver.rtol, p.solver.atol) = (t, t);
        }
        let s = p.setup().unwrap();
        let th = p.theta_values();
        let adj = evaluate(&s, &th, GradientMethod::Adjoint)
            .unwrap()
            .gradients[0]
            .clone();
        println!("== {name} θ = {:?}", s.theta_names());
        println!("theta {:?}", th);
        println!("direct {:?}", dir);
        let (w, _) = common::worst_component(&adj, &dir, 1e-3);
        println!("adjoint vs direct worst {w:.1e}");
        for rule in ["unit", "rel"] {
            for rel in [1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 3e-6, 1e-6] {
                let h: Vec<f64> = th
                    .iter()
                    .map(|v| {
                        if rule == "unit" {
                            rel * v.abs().max(1.0)
                        } else if *v == 0.0 {
                            rel
                        } else {
                            rel * v.abs()
                        }
                    })
                    .collect();
                let fd = fd_gradients_with_steps(&s, &th, &h, 4).unwrap().0[0].clone();
                let errs: Vec<String> = fd
                    .iter()
                    .zip(&dir)
                    .map(|(a, b)| {
                        format!(
                            "{:.1e}",
                            (a - b).abs()
                                / b.abs()
                                    .max(1e-3 * dir.iter().fold(0.0f64, |m, v| m.max(v.abs())))
                        )
                    })
                    .collect();
                println!("{rule:>4} {rel:.0e}: {}", errs.join(" "));
            }
        }
    }
}
