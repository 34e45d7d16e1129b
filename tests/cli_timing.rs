//! Honest timings (issue 8, item 8): the `timing` object of `gradient --json` for every
//! method run, the τ policy (taken from a run that has it, else one direct pass outside
//! the timings, `--no-tau` skips it), and `Evaluation`'s τ and work counters.

use hybridopt::integrate::Stats;
use hybridopt::sensitivity::{evaluate, evaluate_with, EvaluateOptions, GradientMethod};
use hybridopt::sensitivity::{runs_per_parameter, FdOptions, FdScale};
use hybridopt::setup::Setup;
use hybridopt::systems::BouncingBall;
use num_dual::Dual64;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ball_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/bouncing_ball.toml")
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hybridopt"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("runs")
}

fn gradient_json(extra: &[&str]) -> Value {
    let file = ball_file();
    let mut args = vec!["gradient", file.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    let out = run(&args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

fn positive(v: &Value, what: &str) -> f64 {
    let x = v
        .as_f64()
        .unwrap_or_else(|| panic!("{what} is not a number: {v}"));
    assert!(x.is_finite() && x > 0.0, "{what} = {x}");
    x
}

/// The fields every `gradient --json` report had before the timing block: still there.
fn assert_existing_fields(g: &Value, methods: &[&str]) {
    assert!(g["cost"].is_number());
    assert_eq!(g["gradient"].as_object().unwrap().len(), 5);
    for m in methods {
        assert_eq!(g["witnesses"][m].as_object().unwrap().len(), 5, "{m}");
    }
    assert!(g["objectives"]["cost"]["cost"].is_number());
    assert_eq!(g["stats"]["events"], 7);
    assert!(g["stats"]["steps"].as_u64().unwrap() > 0);
    let events = g["events"].as_array().unwrap();
    assert_eq!(events.len(), 7);
    for e in events {
        assert!(e["t"].is_number());
        assert_eq!(e["guard"], "ground");
        assert!(e["mode_before"].is_string() && e["mode_after"].is_string());
    }
    positive(&g["timing"]["forward_s"], "timing.forward_s");
    positive(&g["timing"]["gradient_s"], "timing.gradient_s");
}

#[test]
fn timing_for_every_method_and_tau_from_the_direct_runs() {
    // a fixed FD step: the 4th-order stencil's 4 runs per parameter (the default ladder's
    // count depends on where each entry's best step lies)
    let g = gradient_json(&["--method", "all", "--repeat", "3", "--fd-step", "1e-4"]);
    let all = ["adjoint", "direct", "dual", "fd"];
    assert_existing_fields(&g, &all);
    let t = &g["timing"];
    let methods = t["methods"].as_object().unwrap();
    assert_eq!(methods.len(), all.len(), "{methods:?}");
    let mut sum = 0.0;
    for m in all {
        sum += positive(&methods[m], m);
    }
    // `all`: gradient_s is the adjoint's, forward_s the plain run inside its timed runs
    assert_eq!(t["gradient_s"], methods["adjoint"]);
    assert_eq!(t["forward_from"], "adjoint");
    assert_eq!(t["repeat"], 3);
    // the wall time holds at least one run of each method
    assert!(positive(&t["wall_s"], "wall_s") > sum, "{t}");
    // τ from the timed direct runs: no extra pass
    assert_eq!(g["tau_from"], "direct");
    assert!(t.get("tau_s").is_none(), "{t}");
    for e in g["events"].as_array().unwrap() {
        assert_eq!(e["dt_dp"].as_object().unwrap().len(), 5);
    }
    // the work of each method: FD's perturbed runs and the dual runs are counted
    let steps = |m: &str| g["work"][m]["steps"].as_u64().unwrap();
    let base = g["stats"]["steps"].as_u64().unwrap();
    assert!(steps("adjoint") > base);
    assert!(steps("fd") >= 20 * base, "fd {} base {base}", steps("fd"));
    assert!(
        steps("dual") > 5 * base,
        "dual {} base {base}",
        steps("dual")
    );
    // every run sees the 7 impacts: FD 1 + 4 × 5 runs, dual 1 + 5
    assert_eq!(g["work"]["fd"]["events"], 21 * 7);
    assert_eq!(g["work"]["dual"]["events"], 6 * 7);
    assert_eq!(g["tolerances"]["rtol"], 1e-10);
}

#[test]
fn adjoint_alone_takes_tau_from_one_pass_outside_the_timing() {
    // the adjoint computes no τ: without --tau the events have none (the plain command
    // costs the adjoint alone), with it one direct pass adds τ outside the timings
    let plain = gradient_json(&["--method", "adjoint"]);
    assert!(plain.get("tau_from").is_none(), "{plain}");
    assert!(plain["timing"].get("tau_s").is_none(), "{plain}");
    for e in plain["events"].as_array().unwrap() {
        assert!(e.get("dt_dp").is_none(), "{e}");
    }
    let g = gradient_json(&["--method", "adjoint", "--tau"]);
    assert_existing_fields(&g, &["adjoint"]);
    let t = &g["timing"];
    assert_eq!(t["methods"].as_object().unwrap().len(), 1);
    assert_eq!(t["gradient_s"], t["methods"]["adjoint"]);
    assert_eq!(t["forward_from"], "adjoint");
    assert_eq!(t["repeat"], 1);
    assert_eq!(g["tau_from"], "direct_pass");
    positive(&t["tau_s"], "tau_s");
    // the pass is the direct method's: the same τ, to the last bit
    let d = gradient_json(&["--method", "direct"]);
    assert_eq!(d["tau_from"], "direct");
    assert_eq!(d["timing"]["forward_from"], "simulate");
    for (a, b) in g["events"]
        .as_array()
        .unwrap()
        .iter()
        .zip(d["events"].as_array().unwrap())
    {
        assert_eq!(a["dt_dp"], b["dt_dp"]);
        assert_eq!(a["t"], b["t"]);
    }
}

#[test]
fn no_tau_omits_tau_and_keeps_every_other_field() {
    let g = gradient_json(&["--method", "adjoint", "--no-tau", "--repeat", "2"]);
    assert_existing_fields(&g, &["adjoint"]);
    assert!(g.get("tau_from").is_none(), "{g}");
    assert!(g["timing"].get("tau_s").is_none());
    assert_eq!(g["timing"]["repeat"], 2);
    for e in g["events"].as_array().unwrap() {
        assert!(e.get("dt_dp").is_none(), "{e}");
    }
    // the event list is the plain run's
    let s = gradient_json(&["--method", "dual", "--no-tau"]);
    assert!(s.get("tau_from").is_none());
    assert_eq!(g["events"], s["events"]);
    // dual alone: τ from its own runs
    let d = gradient_json(&["--method", "dual"]);
    assert_eq!(d["tau_from"], "dual");
    assert_eq!(d["timing"]["forward_from"], "dual");
    // text output says where τ came from when asked for, and has none otherwise
    let file = ball_file();
    let f = file.to_str().unwrap();
    let text = String::from_utf8(run(&["gradient", f, "--tau"]).stdout).unwrap();
    assert!(text.contains("τ from one direct pass"), "{text}");
    assert!(text.contains("dt/dθ"));
    for quiet in [&["gradient", f][..], &["gradient", f, "--no-tau"]] {
        let text = String::from_utf8(run(quiet).stdout).unwrap();
        assert!(!text.contains("dt/dθ") && !text.contains("τ:"), "{text}");
    }
}

fn ball_setup(sys: &BouncingBall, tol: f64) -> Setup<'_, BouncingBall> {
    let obj = hybridopt::systems::shipped_objective();
    let mut s = Setup::new(sys, 0.0, 3.0, None, vec![obj]);
    s = s.to_builder().tolerances(tol, tol).build();
    s
}

#[test]
fn evaluation_exposes_tau_of_direct_and_dual() {
    let sys = BouncingBall;
    let s = ball_setup(&sys, 1e-10);
    let th = BouncingBall::default_params();
    let direct = evaluate(&s, &th, GradientMethod::Direct).unwrap();
    let dual = evaluate(&s, &th, GradientMethod::Dual).unwrap();
    let fw = hybridopt::testing::forward_sensitivity(&s, &th).unwrap();
    for m in [GradientMethod::Adjoint, GradientMethod::Fd] {
        assert!(evaluate(&s, &th, m).unwrap().tau.is_none(), "{m:?}");
    }
    let td = direct.tau.expect("direct computes τ");
    let tu = dual.tau.expect("dual computes τ");
    assert_eq!(td.len(), 7);
    assert_eq!(tu.len(), 7);
    let scale = td
        .iter()
        .flat_map(|e| e.tau.iter())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    let (mut worst, mut worst_t) = (0.0f64, 0.0f64);
    for ((d, u), f) in td.iter().zip(&tu).zip(&fw.events) {
        // Direct's τ is the forward-sensitivity run's, bit for bit
        assert_eq!(d.tau, f.tau);
        assert_eq!(
            (d.guard, d.mode_before, d.mode_after),
            (u.guard, u.mode_before, u.mode_after)
        );
        worst_t = worst_t.max((d.t - u.t).abs());
        assert_eq!(d.tau.len(), 5);
        for (a, b) in d.tau.iter().zip(&u.tau) {
            let r = (a - b).abs() / (a.abs() + 1e-3 * scale);
            worst = worst.max(r);
        }
    }
    println!("direct vs dual: τ worst relative difference {worst:e}, event times {worst_t:e}");
    // measured 3.6e-14, margin 100× (per component, floor 1e-3 of the largest entry)
    assert!(worst <= 3.6e-12, "{worst:e}");
    // measured 7.1e-15 (a few ulps of t ≈ 3: the runs locate the same events), margin 100×
    assert!(worst_t <= 7.1e-13, "{worst_t:e}");
}

fn sum_stats<I: IntoIterator<Item = Stats>>(it: I) -> Stats {
    let mut s = Stats::default();
    for x in it {
        s += x;
    }
    s
}

#[test]
fn stats_count_all_the_work_of_every_method() {
    let sys = BouncingBall;
    let s = ball_setup(&sys, 1e-8);
    let th = BouncingBall::default_params();
    let base = s.simulate(&th).unwrap().stats;
    assert_eq!(base.events, 7);

    // FD: the base run and the stencil's 4 runs per parameter, 4 × 5 = 20
    let opt = FdOptions::fixed(1e-4, FdScale::Unit);
    assert_eq!(runs_per_parameter(opt), 4);
    let perturbed = sum_stats((0..th.len()).flat_map(|j| {
        let h = opt.rel * th[j].abs().max(1.0);
        let (s, th) = (&s, &th);
        [2.0, 1.0, -1.0, -2.0].map(move |k| {
            let mut t = th.clone();
            t[j] += k * h;
            s.simulate(&t).unwrap().stats
        })
    }));
    let fd = evaluate_with(
        &s,
        &th,
        &EvaluateOptions::new(GradientMethod::Fd).fd_step(1e-4),
    )
    .unwrap();
    assert_eq!(fd.trajectory.stats, base);
    assert_eq!(fd.stats, sum_stats([base, perturbed]));
    assert_eq!(fd.stats.events, 21 * 7);
    assert!(fd.stats.steps >= 20 * base.steps, "{:?}", fd.stats);

    // Dual: the base run and one dual run per parameter
    let dual_runs = sum_stats((0..th.len()).map(|j| {
        let td: Vec<Dual64> = th
            .iter()
            .enumerate()
            .map(|(i, &v)| Dual64::new(v, if i == j { 1.0 } else { 0.0 }))
            .collect();
        s.simulate_generic(td).unwrap().stats
    }));
    let dual = evaluate(&s, &th, GradientMethod::Dual).unwrap();
    assert_eq!(dual.trajectory.stats, base);
    assert_eq!(dual.stats, sum_stats([base, dual_runs]));
    assert_eq!(dual.stats.events, 6 * 7);

    // Adjoint: the plain run and the backward pass
    let adj = evaluate(&s, &th, GradientMethod::Adjoint).unwrap();
    assert_eq!(adj.trajectory.stats, base);
    assert!(adj.stats.steps > base.steps && adj.stats.rhs_evals > base.rhs_evals);

    // Direct: its one run of X and S (S under error control: at least the plain run's steps)
    let direct = evaluate(&s, &th, GradientMethod::Direct).unwrap();
    let fw = hybridopt::testing::forward_sensitivity(&s, &th).unwrap();
    assert_eq!(direct.stats, fw.trajectory.stats);
    assert!(direct.stats.steps >= base.steps);
}

#[test]
fn evaluation_times_its_plain_simulation() {
    let sys = BouncingBall;
    let s = ball_setup(&sys, 1e-8);
    let th = BouncingBall::default_params();
    for m in GradientMethod::all() {
        let t = evaluate(&s, &th, m).unwrap().timing;
        assert!(t.total_s > 0.0 && t.total_s.is_finite(), "{m:?} {t:?}");
        match (m, t.forward_s) {
            (GradientMethod::Direct, f) => assert!(f.is_none()),
            (_, Some(f)) => assert!(f > 0.0 && f < t.total_s, "{m:?} {t:?}"),
            (_, None) => panic!("{m:?}: no forward phase"),
        }
    }
}
