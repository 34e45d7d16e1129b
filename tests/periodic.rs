//! Periodic orbits (issue 12): the simplest walker's two gaits at γ = 0.009 against
//! Garcia et al. (1998), the exact DP against finite differences of the return map, the
//! orbit's sensitivities against central differences of the whole periodic solve, the
//! first period doubling, and the compass gait's mechanics (energy over a swing, the
//! impact's angular momenta) and gait.

use hybridopt::error::Error;
use hybridopt::periodic::PeriodicError;
use hybridopt::periodic::Section;
use hybridopt::periodic::{orbit_sensitivities, RadiusDerivative};
use hybridopt::periodic::{spectrum, Stability};
use hybridopt::systems::CompassGait;
use hybridopt::systems::SimplestWalker;
use hybridopt::testing::monodromy_derivative;
use hybridopt::testing::walker::*;
use hybridopt::testing::{fd_monodromy, return_value, section_basis, MapOptions, Stencil};
use hybridopt::testing::{solve, FixedPoint, JacobianSource, NewtonOptions};
use hybridopt::HybridSystem;
use nalgebra::DVector;

fn walker_gait(gamma: f64, guess: (f64, f64), opts: &MapOptions) -> FixedPoint {
    solve(
        &SimplestWalker,
        &walker_section(),
        opts,
        &NewtonOptions::default(),
        &walker_params(gamma),
        &walker_on_section(guess.0, guess.1),
        JacobianSource::Exact,
    )
    .unwrap()
}

fn names(sys: &impl HybridSystem) -> Vec<String> {
    sys.dims().states
}

#[test]
fn walker_both_gaits_match_garcia_and_are_classified() {
    let opts = walker_options(1e-12);
    for (guess, published, stability) in [
        ((0.2, -0.2), GARCIA_STABLE, Stability::Stable),
        ((0.19, -0.2), GARCIA_UNSTABLE, Stability::Unstable),
    ] {
        let fp = walker_gait(GAMMA, guess, &opts);
        // acceptance: residual ≤ 1e-12 was the bound; measured 5.6e-16 and 7.8e-16 (the
        // last Newton step converges quadratically past the stop tolerance), bound 2e-14
        // (margin 26×)
        assert!(fp.residual <= 2e-14, "residual {:e}", fp.residual);
        // quadratic convergence: the last ratio r_k / r_{k-1}² stays bounded
        let h = &fp.history;
        assert!(h.len() >= 3 && h[h.len() - 2] <= 1e-8, "history {h:?}");
        // Garcia et al.'s 5 digits (rounded or truncated: within 1e-5)
        assert!((fp.x[0] - published.0).abs() <= 1e-5, "θ* {}", fp.x[0]);
        assert!((fp.x[2] - published.1).abs() <= 1e-5, "θ̇* {}", fp.x[2]);
        // on the section: φ = 2θ, φ̇ from the transition
        let on = walker_on_section(fp.x[0], fp.x[2]);
        let off = (DVector::from_vec(on) - &fp.x).amax();
        println!(
            "measured walker fixed point off the section: {off:.2e}, residual {:.2e}",
            fp.residual
        );
        assert!(off <= 1e-12);
        let sp = spectrum(
            &fp.ret.monodromy,
            &walker_section().free,
            &names(&SimplestWalker),
        )
        .unwrap();
        assert_eq!(sp.stability, stability);
        // the full monodromy has the section's multipliers and two zeros (the collapsed
        // directions: the flow and the reset's kernel)
        assert_eq!(sp.monodromy.len(), 4);
        for (a, b) in sp.section.iter().zip(&sp.monodromy) {
            assert!((a - b).norm() <= 1e-9, "{a} vs {b}");
        }
        assert!(sp.monodromy[2].norm() <= 1e-12 && sp.monodromy[3].norm() <= 1e-12);
        println!(
            "gait {guess:?}: x* = {:?}, T = {}, λ = {:?}",
            fp.x.as_slice(),
            fp.ret.period,
            sp.section
        );
    }
}

#[test]
fn walker_gaits_periods_and_multipliers() {
    // the long-period gait is the stable one (reference-models §10); its multipliers are
    // a complex pair of modulus 0.589, the short one's 4.00 and 0.46 (Garcia et al. 1998
    // report −0.19 ± 0.56i and 4.00, 0.46)
    let opts = walker_options(1e-12);
    let s = walker_gait(GAMMA, (0.2, -0.2), &opts);
    let u = walker_gait(GAMMA, (0.19, -0.2), &opts);
    assert!(s.ret.period > u.ret.period);
    let free = walker_section().free;
    let ss = spectrum(&s.ret.monodromy, &free, &names(&SimplestWalker)).unwrap();
    let su = spectrum(&u.ret.monodromy, &free, &names(&SimplestWalker)).unwrap();
    assert!((ss.section[0].re + 0.19).abs() < 5e-3 && (ss.section[0].im.abs() - 0.56).abs() < 5e-3);
    assert!((su.section[0].re - 4.00).abs() < 5e-3 && (su.section[1].re - 0.46).abs() < 5e-3);
}

#[test]
fn exact_dp_equals_finite_differences_of_the_return_map() {
    let opts = walker_options(1e-12);
    let p = walker_params(GAMMA);
    for guess in [(0.2, -0.2), (0.19, -0.2)] {
        let fp = walker_gait(GAMMA, guess, &opts);
        let x = fp.x.as_slice();
        let m = &fp.ret.monodromy;
        let (tangent, f) = section_basis(&SimplestWalker, &walker_section(), &p, x).unwrap();
        // fourth-order central differences along the section's tangent directions
        // (acceptance ≤ 1e-7; measured 1.5e-10 and 5.1e-10 at h = 1e-5)
        let fd = fd_monodromy(
            &SimplestWalker,
            &walker_section(),
            &opts,
            &p,
            x,
            1e-5,
            Stencil::Fourth,
        )
        .unwrap();
        let gap = ((&fd - m) * &tangent).amax();
        assert!(gap <= 1e-8, "DP vs FD: {gap:e}");
        // and the second-order stencil converges at its order to the same DP (error ∝ h²)
        let e = |h: f64| {
            let fd = fd_monodromy(
                &SimplestWalker,
                &walker_section(),
                &opts,
                &p,
                x,
                h,
                Stencil::Second,
            )
            .unwrap();
            ((&fd - m) * &tangent).amax()
        };
        let slope = (e(1e-3) / e(1e-4)).log10();
        assert!((slope - 2.0).abs() < 0.1, "FD order {slope}");
        // P is constant along the flow: DP f = 0
        assert!((m * &f).amax() <= 1e-12, "DP f = {:?}", (m * &f).as_slice());
        // a third witness: the direct pass in dual numbers along each tangent direction
        for j in 0..3 {
            let d = tangent.column(j);
            let r = monodromy_derivative(
                &SimplestWalker,
                &walker_section(),
                &opts,
                &p,
                x,
                &[0.0; 5],
                d.as_slice(),
            )
            .unwrap();
            assert!((DVector::from_vec(r.d_return) - m * d).amax() <= 1e-10);
            assert!((&r.monodromy - m).amax() <= 1e-10);
        }
    }
}

/// Fourth-order central differences of a function of γ.
fn fd4(f: &dyn Fn(f64) -> Vec<f64>, g: f64, h: f64) -> Vec<f64> {
    let (a, b, c, d) = (f(g + h), f(g - h), f(g + 2.0 * h), f(g - 2.0 * h));
    (0..a.len())
        .map(|i| (8.0 * (a[i] - b[i]) - (c[i] - d[i])) / (12.0 * h))
        .collect()
}

#[test]
fn orbit_sensitivities_equal_central_differences_of_the_periodic_solve() {
    let opts = walker_options(1e-12);
    let sec = walker_section();
    let free = sec.free.clone();
    for guess in [(0.2, -0.2), (0.19, -0.2)] {
        let fp = walker_gait(GAMMA, guess, &opts);
        let sp = spectrum(&fp.ret.monodromy, &free, &names(&SimplestWalker)).unwrap();
        let s = orbit_sensitivities(
            &SimplestWalker,
            &sec,
            &opts,
            &walker_params(GAMMA),
            &fp,
            &sp,
            &[0],
        )
        .unwrap();
        // the whole periodic solve as a function of γ: (θ*, θ̇*, T, |λ_1|, |λ_2|)
        let whole = |g: f64| -> Vec<f64> {
            let f = walker_gait(g, (fp.x[0], fp.x[2]), &opts);
            let sp = spectrum(&f.ret.monodromy, &free, &names(&SimplestWalker)).unwrap();
            vec![
                f.x[0],
                f.x[2],
                f.ret.period,
                sp.section[0].norm(),
                sp.section[1].norm(),
                sp.spectral_radius,
            ]
        };
        let fd = fd4(&whole, GAMMA, 1e-5);
        let exact = [
            s.fixed_point[(0, 0)],
            s.fixed_point[(2, 0)],
            s.period[0],
            s.moduli[0][0].unwrap(),
            s.moduli[1][0].unwrap(),
        ];
        for (i, (a, b)) in exact.iter().zip(&fd).enumerate() {
            let rel = (a - b).abs() / a.abs().max(1.0);
            println!("{guess:?} quantity {i}: exact {a:.12} fd {b:.12} rel {rel:.1e}");
            // measured at most 3.1e-8 (the moduli; FD of the periodic solve, h = 1e-5)
            assert!(rel <= 1e-6, "quantity {i}: {a} vs {b}");
        }
        // the spectral radius's gradient against FD of the spectral radius itself (the
        // largest modulus of the perturbed solves' multipliers)
        match &s.spectral_radius {
            RadiusDerivative::Smooth { gradient } => {
                let rel = (gradient[0] - fd[5]).abs() / gradient[0].abs().max(1.0);
                println!(
                    "{guess:?} spectral radius: exact {} fd {} rel {rel:.1e}",
                    gradient[0], fd[5]
                );
                // measured 3.1e-8 and 5.3e-10 (the two starts)
                assert!(
                    rel <= 1e-6,
                    "spectral radius: {} vs FD {}",
                    gradient[0],
                    fd[5]
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(s.dual_return_gap <= 1e-9 && s.dual_monodromy_gap <= 1e-9);
    }
}

#[test]
fn continuation_finds_the_first_period_doubling() {
    use hybridopt::periodic::{continue_orbit, BifurcationKind, Range};
    let pr = hybridopt::problem::Problem::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/problems/simplest_walker.toml"
    )))
    .unwrap();
    let spec = pr.periodic_spec().unwrap();
    let range = Range::parse("gamma=0.009:0.017:9", &pr.dims).unwrap();
    let b = continue_orbit(
        &SimplestWalker,
        &spec,
        &walker_params(0.009),
        &spec.guess,
        &range,
    )
    .unwrap();
    assert_eq!(b.points.len(), 9);
    assert!(b.stopped.is_none());
    assert_eq!(b.bifurcations.len(), 1, "{:?}", b.bifurcations);
    let pd = &b.bifurcations[0];
    assert_eq!(pd.kind, BifurcationKind::PeriodDoubling);
    // measured 0.0150884; Garcia et al. report stable period-one gaits up to γ ≈ 0.0151
    println!("period doubling at γ = {:.8}", pd.at);
    assert!((pd.at - 0.01509).abs() < 2e-4, "{}", pd.at);
    assert!(pd.bracket[1] - pd.bracket[0] < 1e-8);
    // a real multiplier at −1 on both sides of the bracket
    for m in &pd.multipliers {
        assert!((m[0][0] + 1.0).abs() < 1e-5 && m[0][1] == 0.0, "{m:?}");
    }
    assert!(b.points[0].stable && !b.points[8].stable);
}

#[test]
fn newton_failure_is_typed_with_its_history() {
    let opts = walker_options(1e-12);
    let nopt = NewtonOptions {
        max_iters: 2,
        ..NewtonOptions::default()
    };
    let e = solve(
        &SimplestWalker,
        &walker_section(),
        &opts,
        &nopt,
        &walker_params(GAMMA),
        &walker_on_section(0.2, -0.2),
        JacobianSource::Exact,
    )
    .unwrap_err();
    match e {
        Error::Periodic(PeriodicError::NoConvergence {
            history,
            iterations,
            ..
        }) => {
            assert_eq!(iterations, 2);
            assert_eq!(history.len(), 3);
            assert!(history[2] < history[0]);
        }
        other => panic!("{other}"),
    }
    // a start from which the walker falls (no heel strike within t_max) is no return
    let short = MapOptions { t_max: 0.5, ..opts };
    let e = return_value(
        &SimplestWalker,
        &walker_section(),
        &short,
        &walker_params(GAMMA),
        &walker_on_section(0.2, -0.2),
    )
    .unwrap_err();
    assert!(
        matches!(e, Error::Periodic(PeriodicError::NoReturn { fired: 0, .. })),
        "{e}"
    );
    // a start before the guard's surface (φ − 2θ < 0 for the rising heel strike) would
    // return at once: refused
    let mut off = walker_on_section(0.2, -0.2);
    off[1] -= 1e-6;
    let e = return_value(
        &SimplestWalker,
        &walker_section(),
        &opts,
        &walker_params(GAMMA),
        &off,
    )
    .unwrap_err();
    assert!(
        matches!(e, Error::Periodic(PeriodicError::OffSection { .. })),
        "{e}"
    );
    // after it (φ − 2θ > 0) the run is a genuine one
    off[1] += 2e-6;
    assert!(return_value(
        &SimplestWalker,
        &walker_section(),
        &opts,
        &walker_params(GAMMA),
        &off
    )
    .is_ok());
}

// ---------------------------------------------------------------- compass gait

fn cg_params() -> Vec<f64> {
    CompassGait::default_params()
}

fn cg_section() -> Section {
    Section::after_reset(0, 1, 0, vec![1, 2, 3])
}

/// Positions (hip, stance mass, swing mass, swing foot) from q alone, written again here
/// as an independent witness of the model's kinematics.
fn cg_positions(p: &[f64], q: [f64; 2]) -> [[f64; 2]; 4] {
    let (a, b) = (p[2], p[3]);
    let l = a + b;
    let hip = [l * q[1].sin(), l * q[1].cos()];
    [
        hip,
        [a * q[1].sin(), a * q[1].cos()],
        [hip[0] - b * q[0].sin(), hip[1] - b * q[0].cos()],
        [hip[0] - l * q[0].sin(), hip[1] - l * q[0].cos()],
    ]
}

/// Velocities by central differences of the positions along q̇ (no model formula).
fn cg_velocities(p: &[f64], x: &[f64]) -> [[f64; 2]; 4] {
    let h = 1e-6;
    let a = cg_positions(p, [x[0] + h * x[2], x[1] + h * x[3]]);
    let b = cg_positions(p, [x[0] - h * x[2], x[1] - h * x[3]]);
    let mut v = [[0.0; 2]; 4];
    for i in 0..4 {
        for k in 0..2 {
            v[i][k] = (a[i][k] - b[i][k]) / (2.0 * h);
        }
    }
    v
}

fn momentum(m: f64, r: [f64; 2], about: [f64; 2], v: [f64; 2]) -> f64 {
    m * ((r[0] - about[0]) * v[1] - (r[1] - about[1]) * v[0])
}

#[test]
fn compass_gait_conserves_energy_over_a_swing() {
    let opts = walker_options(1e-12);
    let p = cg_params();
    // near the gait, exactly on the section θ_ns + θ_s = 2·slope
    let x0 = [2.0 * p[5] + 0.2187, -0.2187, 0.377, 1.092];
    let (_, _, traj) = return_value(&CompassGait, &cg_section(), &opts, &p, &x0).unwrap();
    let e0 = CompassGait::energy(&p, &x0);
    let mut worst = 0.0f64;
    for (_, _, x) in traj.samples(3) {
        worst = worst.max((CompassGait::energy(&p, &x) - e0).abs());
    }
    // acceptance ≤ 1e-10 at tol 1e-12 (measured below)
    println!("energy drift over a swing: {worst:e} (E = {e0})");
    assert!(worst <= 1e-10, "{worst:e}");
    // the swing is not trivial: the energy moves between kinetic and potential
    let kinetic =
        |x: &[f64]| CompassGait::energy(&p, x) - CompassGait::energy(&p, &[x[0], x[1], 0.0, 0.0]);
    let ks: Vec<f64> = traj.samples(3).iter().map(|(_, _, x)| kinetic(x)).collect();
    let (kmin, kmax) = ks
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &k| (a.min(k), b.max(k)));
    assert!(kmax - kmin > 1.0, "kinetic energy range {kmin}..{kmax}");
}

#[test]
fn compass_gait_impact_conserves_both_angular_momenta() {
    let p = cg_params();
    let (mh, m) = (p[0], p[1]);
    // pre-impact states on the guard θ_ns + θ_s = 2·slope with the swing foot ahead
    let slope = p[5];
    for (ts, dn, ds) in [(0.22, -1.1, 0.9), (0.3, -0.5, 1.4), (0.15, 0.2, 0.7)] {
        let x = [2.0 * slope - (ts + slope), ts + slope, dn, ds];
        let (_, xp) = CompassGait.reset(0, 0, 0.0, &x, &p).unwrap();
        let (r, v) = (cg_positions(&p, [x[0], x[1]]), cg_velocities(&p, &x));
        let (rp, vp) = (cg_positions(&p, [xp[0], xp[1]]), cg_velocities(&p, &xp));
        // the swing foot is on the slope: the new stance foot
        assert!((r[3][1] + r[3][0] * slope.tan()).abs() < 1e-12);
        // whole system about the impact point (pre: swing foot; post: stance foot = origin)
        let pre: f64 = [(mh, 0), (m, 1), (m, 2)]
            .iter()
            .map(|&(mass, i)| momentum(mass, r[i], r[3], v[i]))
            .sum();
        let post: f64 = [(mh, 0), (m, 1), (m, 2)]
            .iter()
            .map(|&(mass, i)| momentum(mass, rp[i], [0.0, 0.0], vp[i]))
            .sum();
        // the trailing leg about the hip (pre: stance leg; post: swing leg)
        let leg_pre = momentum(m, r[1], r[0], v[1]);
        let leg_post = momentum(m, rp[2], rp[0], vp[2]);
        println!("momenta {pre} → {post}, {leg_pre} → {leg_post}");
        assert!(
            (pre - post).abs() <= 1e-8 * pre.abs().max(1.0),
            "{pre} vs {post}"
        );
        assert!((leg_pre - leg_post).abs() <= 1e-8 * leg_pre.abs().max(1.0));
        // the legs swap, and the hip does not move
        assert_eq!((xp[0], xp[1]), (x[1], x[0]));
        let hip_pre = [r[0][0] - r[3][0], r[0][1] - r[3][1]];
        assert!((hip_pre[0] - rp[0][0]).abs() < 1e-12 && (hip_pre[1] - rp[0][1]).abs() < 1e-12);
        // energy is lost (a plastic impact); the potential's datum moves from the old
        // stance foot to the new one, r[3] lower
        let datum = (mh + 2.0 * m) * p[4] * r[3][1];
        let (e_pre, e_post) = (
            CompassGait::energy(&p, &x),
            CompassGait::energy(&p, &xp) + datum,
        );
        assert!(e_post < e_pre - 1e-3, "{e_pre} → {e_post}");
    }
}

#[test]
fn compass_gait_gait_is_found_and_stable() {
    let opts = walker_options(1e-12);
    let p = cg_params();
    let guess = [0.27236, -0.16764, -0.4, 1.2];
    let fp = solve(
        &CompassGait,
        &cg_section(),
        &opts,
        &NewtonOptions::default(),
        &p,
        &guess,
        JacobianSource::Exact,
    )
    .unwrap();
    assert!(fp.residual <= 1e-12);
    let sp = spectrum(&fp.ret.monodromy, &cg_section().free, &names(&CompassGait)).unwrap();
    println!(
        "compass gait: x* = {:?}, T = {}, λ = {:?}",
        fp.x.as_slice(),
        fp.ret.period,
        sp.section
    );
    assert_eq!(sp.stability, Stability::Stable);
    assert_eq!(sp.section.len(), 3);
    // on the guard, with the swing leg behind (θ_ns > θ_s) just after the swap
    assert!((fp.x[0] + fp.x[1] - 2.0 * p[5]).abs() <= 1e-12 && fp.x[0] > fp.x[1]);
    // DP against fourth-order differences of the return map
    let (tangent, _) = section_basis(&CompassGait, &cg_section(), &p, fp.x.as_slice()).unwrap();
    let fd = fd_monodromy(
        &CompassGait,
        &cg_section(),
        &opts,
        &p,
        fp.x.as_slice(),
        1e-4,
        Stencil::Fourth,
    )
    .unwrap();
    let gap = ((&fd - &fp.ret.monodromy) * tangent).amax();
    println!("compass gait DP vs FD: {gap:e}");
    assert!(gap <= 1e-7, "{gap:e}");
}

#[test]
fn gait_objectives_have_exact_gradients() {
    use hybridopt::periodic::solve_orbit;
    use hybridopt::periodic::ObjectiveSpec;
    let pr = hybridopt::problem::Problem::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/problems/simplest_walker.toml"
    )))
    .unwrap();
    let spec = pr.periodic_spec().unwrap();
    let specs = [
        ObjectiveSpec::SpectralRadius,
        ObjectiveSpec::Period,
        ObjectiveSpec::Speed {
            output: "step_length".into(),
        },
        ObjectiveSpec::Target {
            state: "theta".into(),
            value: 0.19,
        },
    ];
    for os in specs {
        let obj = os.resolve(&pr.dims).unwrap();
        let value = |g: f64| -> (f64, Vec<f64>) {
            let p = walker_params(g);
            let o = solve_orbit(&SimplestWalker, &spec, &p, &spec.guess, true).unwrap();
            obj.evaluate(&SimplestWalker, 0, &p, &o).unwrap()
        };
        let (v, g) = value(GAMMA);
        let fd = fd4(&|x| vec![value(x).0], GAMMA, 1e-5)[0];
        let rel = (g[0] - fd).abs() / g[0].abs().max(1e-3);
        println!(
            "{os:?}: value {v}, gradient {} vs FD {fd} (rel {rel:.1e})",
            g[0]
        );
        assert!(rel <= 1e-6, "{os:?}: {} vs {fd}", g[0]);
    }
    // names are checked
    let bad = ObjectiveSpec::Speed {
        output: "stride".into(),
    }
    .resolve(&pr.dims)
    .unwrap_err();
    assert!(
        bad.contains("stride") && bad.contains("step_length"),
        "{bad}"
    );
}

#[test]
fn spectral_radius_of_two_distinct_equal_moduli_is_a_reported_kink() {
    use hybridopt::periodic::radius_kink;
    use nalgebra::Complex;
    let c = |re: f64, im: f64| Complex::new(re, im);
    // a complex-conjugate pair shares its modulus by symmetry: smooth
    assert!(radius_kink(&[c(-0.2, 0.5), c(-0.2, -0.5), c(0.1, 0.0)], 1e-9).is_none());
    // two real multipliers ±0.6: no gradient, said so
    let m = radius_kink(&[c(0.6, 0.0), c(-0.6, 0.0)], 1e-9).unwrap();
    assert!(m.contains("no gradient"), "{m}");
    // a pair and a real one of the same modulus
    assert!(radius_kink(&[c(0.3, 0.4), c(0.3, -0.4), c(-0.5, 0.0)], 1e-9).is_some());
    assert!(radius_kink(&[c(0.3, 0.4), c(0.3, -0.4), c(-0.49, 0.0)], 1e-9).is_none());
}

/// The compass gait's shipped guess lies on the section θ_ns + θ_s = 2·slope at 3°; at a
/// slope 0.3 % steeper (0.0525) it misses it by 2.8e-4 and is moved onto it (θ_ns alone,
/// the component the section fixes), and Newton's method converges from there. At a
/// slope of 0.1 the miss (9.5e-2) is far above 1 % of the state's scale: refused, saying
/// why.
#[test]
fn a_guess_slightly_off_the_section_is_moved_onto_it() {
    use hybridopt::periodic::solve_orbit;
    use hybridopt::problem::Problem;
    let mut p = Problem::load(std::path::Path::new("problems/compass_gait.toml")).unwrap();
    let orbit_at = |p: &Problem| {
        let spec = p.periodic_spec().unwrap();
        let pv = p.theta_values()[..p.dims.np()].to_vec();
        solve_orbit(&p.system, &spec, &pv, &spec.guess, false)
    };
    // the shipped guess is on the section: not moved
    assert!(orbit_at(&p).unwrap().fixed.projection.is_none());
    p.set_param("slope", 0.0525).unwrap();
    let o = orbit_at(&p).unwrap();
    let g = o
        .fixed
        .projection
        .as_ref()
        .expect("the guess is moved onto the section");
    assert_eq!(g.guard, "heel_strike");
    // measured −2.8000000000001635e-4 (1.6e-17 from 2·0.0525 − (0.27236 − 0.16764))
    assert!((g.miss + 2.8e-4).abs() < 4e-16, "{}", g.miss);
    // only θ_ns moves, by the miss; the start is on the section (both measured 1.4e-17)
    assert_eq!(g.start[1..], g.guess[1..]);
    assert!((g.start[0] - g.guess[0] + g.miss).abs() < 4e-16, "{g:?}");
    assert!(
        (g.start[0] + g.start[1] - 2.0 * 0.0525).abs() < 4e-16,
        "{g:?}"
    );
    // the fixed point: ‖P(x) − x‖∞ measured 2.8e-15 after 6 iterations, on the section
    // (θ_ns + θ_s − 2·slope measured 1.4e-17)
    assert!(o.fixed.residual < 7e-14, "{}", o.fixed.residual);
    let x = &o.fixed.x;
    assert!((x[0] + x[1] - 2.0 * 0.0525).abs() < 4e-16, "{x}");
    // far off: refused with the reason
    p.set_param("slope", 0.1).unwrap();
    match orbit_at(&p) {
        Err(e @ Error::Periodic(PeriodicError::OffSection { .. })) => {
            let m = e.to_string();
            assert!(
                m.contains("too far from the section to be moved onto it"),
                "{m}"
            );
            assert!(m.contains("-9.528"), "{m}");
        }
        other => panic!("expected OffSection, got {other:?}"),
    }
}
