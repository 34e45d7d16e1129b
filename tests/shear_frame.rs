//! The N-storey hysteretic shear frame (reference-models §11, `src/systems/shear_frame.rs`):
//!
//! * its hand-written flow VJP against the exact dual passes;
//! * at N = 1 it is the hysteretic oscillator (reference-models §9): the same trajectory,
//!   reversal times, cost and gradient (chain rule for `A_g = −F0/m`) — a model written
//!   independently (a DAE with f algebraic, two modes) as the oracle;
//! * adjoint vs direct vs central differences at N = 3 (harmonic) and N = 4 (pulse) with
//!   several reversals of every storey (two witnesses for every derivative);
//! * settings and parameter errors name the file, the key and the valid range;
//! * the shipped design problem means what it says: L-BFGS converges to dampers that
//!   decrease up the height; the 50-storey file is the same problem at N = 50.

use crate::common;

use common::Rng;
use hybridopt::cost::{Objective, Quantity, Term};
use hybridopt::dae::Dae;
use hybridopt::model::{vjp_by_dual_passes, OutputCotangent, VjpArgs, VjpOut};
use hybridopt::optimize::optimize;
use hybridopt::problem::Problem;
use hybridopt::sensitivity::{evaluate, GradientMethod};
use hybridopt::setup::Setup;
use hybridopt::systems::HystereticOscillator;
use hybridopt::systems::{GroundMotion, ShearFrame, ShearFrameConfig};
use hybridopt::testing::STATES_PER_STOREY;
use hybridopt::HybridSystem;
use std::path::Path;

fn frame(storeys: usize, ground_motion: GroundMotion) -> ShearFrame {
    ShearFrame::new(ShearFrameConfig {
        storeys,
        ground_motion,
    })
    .unwrap()
}

fn shipped(name: &str) -> Problem {
    Problem::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(name)).unwrap()
}

/// The problem text of an N-storey frame: every parameter at its default but the ones
/// given, every storey's damper and yield force free, cost ∫ drift_sq dt.
fn problem_text(storeys: usize, ground: &str, t_end: f64, extra: &str) -> String {
    let mut s = format!(
        "[system]\nkind = \"shear_frame\"\nstoreys = {storeys}\nground_motion = \"{ground}\"\n\
         [simulation]\nt_end = {t_end}\nrtol = 1e-10\natol = 1e-10\n[parameters]\n{extra}\n"
    );
    let f = frame(
        storeys,
        if ground == "pulse" {
            GroundMotion::Pulse
        } else {
            GroundMotion::Harmonic
        },
    );
    for (name, value) in f.dims().params.iter().zip(f.default_params()) {
        if name.starts_with("c_") || name.starts_with("f_y_") {
            s.push_str(&format!(
                "{name} = {{ value = {value}, optimize = true }}\n"
            ));
        }
    }
    s.push_str("[[cost]]\nkind = \"integral\"\noutput = \"drift_sq\"\n");
    s
}

fn parse(text: &str) -> Result<Problem, hybridopt::Error> {
    Problem::parse(text, Path::new("frame.toml"))
}

// ---------------------------------------------------------------------------------------
// The hand-written VJP.

/// A random state: floors moving, memory on the branch's domain, directions ±1, some
/// storeys armed.
fn random_state(n: usize, p: &[f64], f: &ShearFrame, rng: &mut Rng) -> Vec<f64> {
    let mut x = Vec::with_capacity(STATES_PER_STOREY * n);
    for i in 0..n {
        let s = if rng.uniform(0.0, 1.0) < 0.5 {
            -1.0
        } else {
            1.0
        };
        let fy = p[f.yield_index(i)];
        x.extend([
            rng.uniform(-1.0, 1.0),
            rng.uniform(-1.0, 1.0),
            rng.uniform(-0.5, 0.5),
            // f_r with f_y − s f_r > 0
            -s * rng.uniform(-0.5, 0.9) * fy,
            s,
            if rng.uniform(0.0, 1.0) < 0.5 {
                0.0
            } else {
                1.0
            },
        ]);
    }
    x
}

#[test]
fn hand_vjp_equals_the_dual_passes() {
    let mut rng = Rng(28);
    let mut worst: f64 = 0.0;
    for (n, ground) in [
        (1, GroundMotion::Harmonic),
        (3, GroundMotion::Pulse),
        (7, GroundMotion::Pulse),
        (4, GroundMotion::Harmonic),
    ] {
        let f = frame(n, ground);
        let mut p = f.default_params();
        p.iter_mut().for_each(|v| *v *= rng.uniform(0.7, 1.3));
        let nx = STATES_PER_STOREY * n;
        let ny = f.dims().outputs.len();
        let k = 3;
        for _ in 0..4 {
            let x = random_state(n, &p, &f, &mut rng);
            let t = rng.uniform(0.5, 30.0);
            let lam = rng.vec(k * nx, -1.0, 1.0);
            let ybar = rng.vec(k * ny, -1.0, 1.0);
            let at = |y: &[f64], yb: &mut [f64]| {
                for j in 0..k {
                    for i in 0..ny {
                        yb[j * ny + i] = ybar[j * ny + i] * y[i];
                    }
                }
            };
            for case in 0..3 {
                let args = VjpArgs {
                    mode: 0,
                    t,
                    x: &x,
                    u: &[],
                    p: &p,
                    k,
                    lam: &lam,
                    ybar: match case {
                        0 => OutputCotangent::None,
                        1 => OutputCotangent::Given(&ybar),
                        _ => OutputCotangent::At(&at),
                    },
                };
                let mut out1 = (vec![0.0; k * nx], vec![0.0; k * p.len()], vec![0.0; ny]);
                let mut out2 = out1.clone();
                f.flow_vjp(
                    args,
                    VjpOut {
                        gx: &mut out1.0,
                        gu: &mut [],
                        gp: &mut out1.1,
                        y: &mut out1.2,
                    },
                )
                .unwrap();
                vjp_by_dual_passes(
                    &f,
                    args,
                    VjpOut {
                        gx: &mut out2.0,
                        gu: &mut [],
                        gp: &mut out2.1,
                        y: &mut out2.2,
                    },
                )
                .unwrap();
                let scale = |v: &[f64]| v.iter().fold(1e-300f64, |m, a| m.max(a.abs()));
                let rel = |a: &[f64], b: &[f64]| {
                    a.iter()
                        .zip(b)
                        .map(|(x, y)| (x - y).abs())
                        .fold(0.0, f64::max)
                        / scale(b)
                };
                worst = worst.max(rel(&out1.0, &out2.0)).max(rel(&out1.1, &out2.1));
                if case == 2 {
                    worst = worst.max(rel(&out1.2, &out2.2));
                }
            }
        }
    }
    // measured 8.4e-16 (2026-12-04)
    common::assert_within("shear frame VJP: hand vs dual passes", worst, 1e-14);
}

// ---------------------------------------------------------------------------------------
// N = 1 against the hysteretic oscillator.

#[test]
fn one_storey_is_the_hysteretic_oscillator() {
    // the oscillator's (m, c, k0, f_y, b, F0, Ω), off its defaults so that every
    // parameter is mapped
    let (m, c, k0, fy, b, f0, om) = (1.3, 0.07, 1.1, 0.45, 0.06, 0.8, 1.2);
    let osc = Dae::new(HystereticOscillator);
    let sf = frame(1, GroundMotion::Harmonic);
    assert_eq!(
        sf.dims().params,
        ["m", "k0", "b", "A_g", "Omega", "c_1", "f_y_1"]
    );
    // F0 sin(Ω t) = −m a_g(t)
    let th_osc = [m, c, k0, fy, b, f0, om];
    let th_sf = [m, k0, b, -f0 / m, om, c, fy];
    let t_end = 30.0;
    let setup = |out: usize| {
        Objective::new(
            "psi",
            vec![Term::squared(Quantity::Integral { output: out }, 0.0, 1.0)],
        )
    };
    // the oscillator's outputs are (f, x, v); the frame's (roof, …)
    let s_osc = Setup::builder(&osc)
        .horizon(0.0, t_end)
        .objective(setup(1))
        .tolerances(1e-12, 1e-12)
        .build();
    let s_sf = Setup::builder(&sf)
        .horizon(0.0, t_end)
        .objective(setup(0))
        .tolerances(1e-12, 1e-12)
        .build();
    let a = evaluate(&s_osc, &th_osc, GradientMethod::Adjoint).unwrap();
    let z = evaluate(&s_sf, &th_sf, GradientMethod::Adjoint).unwrap();
    // events: the frame's first is its storey's arming, then the same reversals
    let (ea, ez) = (&a.trajectory.events, &z.trajectory.events);
    assert!(ea.len() >= 8, "reversals: {}", ea.len());
    assert_eq!(
        ez.len(),
        ea.len() + 1,
        "arming + the oscillator's reversals"
    );
    assert!(ez[0].t < 0.01, "armed at t = {}", ez[0].t);
    let worst_t = ea
        .iter()
        .zip(&ez[1..])
        .map(|(p, q)| (p.t - q.t).abs())
        .fold(0.0, f64::max);
    // measured (2026-12-04): reversal times 3.9e-14, states 3.7e-13, ψ 4.6e-14 relative,
    // gradient 1.8e-12: one ODE, two codes (a DAE with two modes; a frame with memory)
    common::assert_within("N = 1: reversal times vs the oscillator", worst_t, 1e-12);
    // the states (x, v) and the memory (x_r, f_r) at t = 1, 2, …, 30
    let mut worst_x: f64 = 0.0;
    for j in 1..=30 {
        let t = j as f64;
        let state = |tr: &hybridopt::integrate::Trajectory| {
            let mut y = vec![0.0; tr.y_final.len()];
            tr.segments[tr.segment_index(t, true)].state_at(t, &mut y);
            y
        };
        let (ya, yz) = (state(&a.trajectory), state(&z.trajectory));
        for i in 0..4 {
            worst_x = worst_x.max((ya[i] - yz[i]).abs());
        }
    }
    common::assert_within("N = 1: states vs the oscillator", worst_x, 1e-11);
    let rel = (a.values[0] - z.values[0]).abs() / a.values[0];
    common::assert_within("N = 1: ψ vs the oscillator", rel, 1e-12);
    // dψ/dθ_osc from the frame's by the chain rule through A_g = −F0/m
    let g = &z.gradients[0];
    let mapped = [
        g[0] + g[3] * f0 / (m * m),
        g[5],
        g[1],
        g[6],
        g[2],
        -g[3] / m,
        g[4],
    ];
    common::assert_close(
        "N = 1: gradient vs the oscillator's",
        &mapped,
        &a.gradients[0],
        5e-11,
        1e-6,
    );
}

// ---------------------------------------------------------------------------------------
// Two witnesses for every derivative.

/// ψ (objective 0) at θ.
fn psi<S: HybridSystem>(setup: &Setup<'_, S>, th: &[f64]) -> f64 {
    let tr = setup.simulate(th).unwrap();
    setup.objective_values(&tr, th).unwrap()[0]
}

/// Central differences, 4th order, step `rel·max(|θ_j|, 0.01)`.
fn fd<S: HybridSystem>(setup: &Setup<'_, S>, th: &[f64], rel: f64) -> Vec<f64> {
    (0..th.len())
        .map(|j| {
            let h = rel * th[j].abs().max(0.01);
            let at = |s: f64| {
                let mut t = th.to_vec();
                t[j] += s * h;
                psi(setup, &t)
            };
            (-at(2.0) + 8.0 * at(1.0) - 8.0 * at(-1.0) + at(-2.0)) / (12.0 * h)
        })
        .collect()
}

#[test]
fn adjoint_direct_and_fd_agree_with_many_reversals() {
    // (storeys, ground motion, horizon, parameters off their defaults)
    let cases = [
        (
            3,
            "harmonic",
            60.0,
            "A_g = { value = 0.3 }\nOmega = { value = 0.5 }",
        ),
        (4, "pulse", 90.0, "A_g = { value = 0.25 }"),
    ];
    for (n, ground, t_end, extra) in cases {
        let p = parse(&problem_text(n, ground, t_end, extra)).unwrap();
        let s = p.setup().unwrap();
        let th = p.theta_values();
        let adj = evaluate(&s, &th, GradientMethod::Adjoint).unwrap();
        let dir = evaluate(&s, &th, GradientMethod::Direct).unwrap();
        // every storey armed and reversed several times
        let events = &adj.trajectory.events;
        for k in 0..n {
            let count = events.iter().filter(|e| e.guard == k).count();
            assert!(count >= 4, "N = {n}: storey {}: {count} events", k + 1);
        }
        let mut tight = p.clone();
        (tight.solver.rtol, tight.solver.atol) = (1e-12, 1e-12);
        let s_fd = tight.setup().unwrap();
        let fdg = fd(&s_fd, &th, 1e-4);
        let what = format!("N = {n} ({ground}, {} events)", events.len());
        // measured (2026-12-04): direct 1.8e-9 / 1.0e-9, FD 7.3e-9 / 1.6e-8 (N = 3 / 4)
        common::assert_close(
            &format!("{what}: direct vs adjoint"),
            &dir.gradients[0],
            &adj.gradients[0],
            5e-8,
            1e-6,
        );
        common::assert_close(
            &format!("{what}: fd vs adjoint"),
            &fdg,
            &adj.gradients[0],
            3e-7,
            1e-6,
        );
    }
}

// ---------------------------------------------------------------------------------------
// Errors.

fn error_of(text: &str) -> String {
    match parse(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn settings_errors_name_the_file_the_key_and_the_range() {
    let good = problem_text(2, "pulse", 10.0, "");
    assert!(parse(&good).is_ok());
    for (bad, needles) in [
        (
            good.replace("storeys = 2", "storeys = 0"),
            &[
                "frame.toml",
                "system.storeys",
                "storeys = 0",
                "1 to 200",
                "line 3",
            ][..],
        ),
        (
            good.replace("storeys = 2", "storeys = 201"),
            &["frame.toml", "system.storeys", "1 to 200"][..],
        ),
        (
            good.replace("storeys = 2", "storeys = -1"),
            &["frame.toml", "storeys"][..],
        ),
        (
            good.replace("\"pulse\"", "\"quake\""),
            &["frame.toml", "quake", "pulse", "harmonic"][..],
        ),
        (
            good.replace("storeys = 2", "storeys = 2\nfloors = 3"),
            &["frame.toml", "unknown field `floors`"][..],
        ),
        (
            // the 2-storey frame has no third storey
            good.replace("[parameters]", "[parameters]\nc_3 = { value = 1.0 }"),
            &["frame.toml", "`c_3` is not a parameter"][..],
        ),
    ] {
        let msg = error_of(&bad);
        for n in needles {
            assert!(msg.contains(n), "{msg:?} lacks {n:?}");
        }
    }
    // the harmonic has no t_p
    let harmonic = problem_text(2, "harmonic", 10.0, "t_p = { value = 3.0 }");
    assert!(error_of(&harmonic).contains("`t_p` is not a parameter"));
}

#[test]
fn parameters_off_the_laws_domain_are_clear_errors() {
    for (extra, needles) in [
        ("f_y_2 = { value = -0.5 }", &["storey 2", "f_y_2"][..]),
        ("m = { value = 0.0 }", &["m = 0", "positive"][..]),
        ("k0 = { value = -1.0 }", &["k0 = -1", "positive"][..]),
    ] {
        let text = problem_text(2, "pulse", 10.0, "")
            .replace("[parameters]\n", &format!("[parameters]\n{extra}\n"));
        // the free f_y_2 line of the template would repeat the key: drop it
        let text: String = text
            .lines()
            .filter(|l| !(extra.starts_with("f_y_2") && l.starts_with("f_y_2 = { value = 0.")))
            .map(|l| format!("{l}\n"))
            .collect();
        let p = parse(&text).unwrap();
        let s = p.setup().unwrap();
        let msg = match s.simulate(&p.theta_values()) {
            Ok(_) => panic!("{extra}: simulated"),
            Err(e) => e.to_string(),
        };
        for n in needles {
            assert!(msg.contains(n), "{extra}: {msg:?} lacks {n:?}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// The shipped problems.

#[test]
fn shipped_design_puts_the_damping_low_in_the_frame() {
    let p = shipped("problems/shear_frame_design.toml");
    let s = p.setup().unwrap();
    let r = optimize(&s, &p.theta, &p.optimizer, None).unwrap();
    assert!(r.converged(), "{}", r.termination);
    let names = s.theta_names();
    let dampers: Vec<f64> = names
        .iter()
        .zip(&r.theta_final)
        .filter(|(n, _)| n.starts_with("c_"))
        .map(|(_, v)| *v)
        .collect();
    println!(
        "optimal dampers, base to roof: {dampers:?}; ψ {} → {} in {} iterations",
        r.initial_cost, r.final_cost, r.iterations
    );
    assert!(dampers.len() >= 4);
    assert!(
        dampers.windows(2).all(|w| w[0] > w[1]),
        "dampers do not decrease up the frame: {dampers:?}"
    );
}

#[test]
fn the_fifty_storey_file_is_the_design_problem_at_n_50() {
    let small = shipped("problems/shear_frame_design.toml");
    let big = shipped("problems/large/shear_frame_50.toml");
    let n_of = |p: &Problem| {
        p.system
            .dims()
            .states
            .iter()
            .filter(|s| s.starts_with("x_"))
            .count()
    };
    assert_eq!(n_of(&big), 50);
    assert!(n_of(&small) < 10);
    // every damper free, nothing else
    let free: Vec<&str> = big
        .theta
        .iter()
        .filter(|e| e.optimize)
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(free.len(), 50);
    assert!(free.iter().all(|n| n.starts_with("c_")));
    assert_eq!(big.solver.method, small.solver.method);
    big.setup().unwrap();
}

/// The measurement behind reference-models §11's figures at N = 50 (release build:
/// `cargo test --release --test suite shear_frame:: -- --ignored --nocapture`): the adjoint
/// against the direct method, with the times of each.
#[test]
#[ignore]
fn fifty_storeys_adjoint_against_direct() {
    let p = shipped("problems/large/shear_frame_50.toml");
    let s = p.setup().unwrap();
    let th = p.theta_values();
    let t = std::time::Instant::now();
    let run = s.simulate(&th).unwrap();
    let forward = t.elapsed().as_secs_f64();
    let t = std::time::Instant::now();
    let adj = evaluate(&s, &th, GradientMethod::Adjoint).unwrap();
    let t_adj = t.elapsed().as_secs_f64();
    let t = std::time::Instant::now();
    let dir = evaluate(&s, &th, GradientMethod::Direct).unwrap();
    let t_dir = t.elapsed().as_secs_f64();
    println!(
        "N = 50: {} steps, {} events; forward {forward:.3} s, adjoint {t_adj:.3} s, \
         direct {t_dir:.1} s",
        run.stats.steps,
        run.events.len()
    );
    common::assert_close(
        "N = 50: direct vs adjoint",
        &dir.gradients[0],
        &adj.gradients[0],
        1e-6,
        1e-3,
    );
}
