//! The Student-t quantile against printed tables and the closed forms of ν = 1 and 2.

use super::super::student::{ln_gamma, normal_quantile, student_t_cdf, student_t_quantile};

/// t_{p,ν} from standard tables (10 significant digits).
#[test]
fn t_table() {
    let table = [
        (0.975, 1.0, 12.7062047362),
        (0.975, 2.0, 4.3026527297),
        (0.975, 5.0, 2.5705818356),
        (0.975, 10.0, 2.2281388520),
        (0.975, 30.0, 2.0422724563),
        (0.975, 100.0, 1.9839715185),
        (0.975, f64::INFINITY, 1.9599639845),
        (0.995, 10.0, 3.1692726726),
        (0.95, 1.0, 6.3137515147),
        (0.95, 10.0, 1.8124611228),
        (0.9, 3.0, 1.6377443537),
        (0.025, 10.0, -2.2281388520),
    ];
    let mut worst = 0.0f64;
    for (p, nu, t) in table {
        let got = student_t_quantile(p, nu);
        let e = ((got - t) / t).abs();
        println!("t({p}, {nu}) = {got:.12} (table {t}), relative error {e:.1e}");
        worst = worst.max(e);
    }
    // the tables' rounding (5e-11 relative at most) dominates
    assert!(
        worst <= 5e-10,
        "worst relative error {worst:.1e} (measured 2.6e-11)"
    );
    assert_eq!(
        normal_quantile(0.975),
        student_t_quantile(0.975, f64::INFINITY)
    );
}

/// ν = 1 (Cauchy: tan(π(p − ½))) and ν = 2 ((2p − 1)/√(2p(1 − p))) in closed form, over p
/// from 1e-6 to 1 − 1e-6: the general route (incomplete beta + Newton) agrees.
#[test]
fn t_closed_forms() {
    let mut worst = 0.0f64;
    for p in [
        1e-6,
        0.001,
        0.01,
        0.1,
        0.3,
        0.45,
        0.55,
        0.7,
        0.9,
        0.99,
        0.999,
        1.0 - 1e-6,
    ] {
        let cauchy = (std::f64::consts::PI * (p - 0.5)).tan();
        let two = (2.0 * p - 1.0) / (2.0 * p * (1.0 - p)).sqrt();
        worst = worst.max(((student_t_quantile(p, 1.0) - cauchy) / cauchy).abs());
        worst = worst.max(((student_t_quantile(p, 2.0) - two) / two).abs());
    }
    println!("closed forms ν = 1, 2: worst relative error {worst:.1e}");
    assert!(worst <= 4e-10, "{worst:.1e} (measured 1.5e-11)");
    // the CDF inverts the quantile; the Cornish–Fisher branch (ν > 1e4) joins the beta one
    for nu in [1.0, 3.5, 40.0, 5000.0] {
        let t = student_t_quantile(0.8, nu);
        assert!((student_t_cdf(t, nu) - 0.8).abs() <= 1e-13);
    }
    // ν = 1e4 + 1e-6 takes the Cornish–Fisher branch; the true change over 1e-6 is 2e-14
    let jump = (student_t_quantile(0.975, 1e4) - student_t_quantile(0.975, 1e4 + 1e-6)).abs();
    println!("branch joint at ν = 1e4: {jump:.1e}");
    assert!(jump <= 1e-11, "{jump:.0e} (measured 3.6e-13)");
    assert!(student_t_quantile(1.0, 3.0).is_nan() && student_t_quantile(0.5, 0.0).is_nan());
}

/// ln Γ at half-integers and integers against Γ(n) = (n−1)! and Γ(½) = √π.
#[test]
fn ln_gamma_values() {
    let pi: f64 = std::f64::consts::PI;
    let mut worst = (ln_gamma(0.5) - 0.5 * pi.ln()).abs();
    let mut fact = 1.0f64;
    for n in 1..30 {
        worst = worst.max((ln_gamma(n as f64) - fact.ln()).abs() / fact.ln().max(1.0));
        fact *= n as f64;
    }
    println!("ln Γ: worst error {worst:.1e}");
    assert!(worst <= 1e-13, "{worst:.1e} (measured 3.9e-15)");
}
