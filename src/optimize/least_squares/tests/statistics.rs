//! Statistics: non-identifiable and ill-conditioned fits, and the reports' JSON.

use super::super::bounds::BoxBounds;
use super::super::lm::levenberg_marquardt;
use super::super::settings::LmSettings;
use super::super::statistics::{statistics, Identifiability};
use super::{noise, LinearLsq};
use nalgebra::{DMatrix, DVector};

/// y = a·t + b·t + c (a and b enter as a sum): J's first two columns are equal, so the
/// result is `not_identifiable` along (1, −1, 0)/√2, with no covariance. The fit itself
/// still converges (the minimum-norm Gauss–Newton step).
#[test]
fn a_singular_jacobian_names_the_direction() {
    let m = 15;
    let t: Vec<f64> = (0..m).map(|i| i as f64 / 4.0).collect();
    let a = DMatrix::from_fn(m, 3, |i, k| if k < 2 { t[i] } else { 1.0 });
    let b = DVector::from_fn(m, |i, _| 0.9 * t[i] - 0.2 + 0.1 * noise(i));
    let p = LinearLsq {
        a: a.clone(),
        b,
        c: DMatrix::zeros(0, 3),
        d: DVector::zeros(0),
    };
    let fit =
        levenberg_marquardt(&p, &[0.0; 3], &BoxBounds::free(3), &LmSettings::default()).unwrap();
    let st = statistics(
        &fit.x,
        &fit.residuals,
        &a,
        &[0, 1, 2],
        &["a".into(), "b".into(), "c".into()],
    )
    .unwrap();
    println!(
        "singular: fit {} ({}), condition {:.1e}, {:?}",
        fit.outcome, fit.message, st.condition, st.identifiability
    );
    assert!(fit.outcome.converged(), "{}", fit.message);
    let Identifiability::NotIdentifiable { direction, .. } = &st.identifiability else {
        panic!("{:?}", st.identifiability)
    };
    let h = 0.5f64.sqrt();
    let e = (direction[0] - h)
        .abs()
        .max((direction[1] + h).abs())
        .max(direction[2].abs());
    assert!(
        e <= 1e-14,
        "direction {direction:?} (measured error 3.2e-16)"
    );
    assert!(st.covariance.is_empty() && st.parameters[0].standard_error.is_nan());
    assert_eq!(st.parameters[1].name, "b");
}

/// Two nearly collinear columns (t and t + 1e-9 t²): identifiable in exact arithmetic,
/// reported `ill_conditioned` with the covariance still given.
#[test]
fn near_collinear_columns_are_ill_conditioned() {
    let m = 15;
    let t: Vec<f64> = (0..m).map(|i| i as f64 / 4.0).collect();
    let a = DMatrix::from_fn(m, 2, |i, k| {
        if k == 0 {
            t[i]
        } else {
            t[i] + 1e-9 * t[i] * t[i]
        }
    });
    let r: Vec<f64> = (0..m).map(noise).collect();
    let st = statistics(&[1.0, 1.0], &r, &a, &[0, 1], &[]).unwrap();
    println!(
        "near collinear: condition {:.2e}, {:?}",
        st.condition, st.identifiability
    );
    assert!(matches!(
        st.identifiability,
        Identifiability::IllConditioned { .. }
    ));
    assert!(st.covariance[0][0].is_finite() && st.correlation[0][1] < -0.999999);
    assert!(statistics(
        &[1.0, 1.0],
        &r[..2],
        &a.rows(0, 2).into_owned(),
        &[0, 1],
        &[]
    )
    .is_err());
}

/// The reports serialize to JSON with their field names (the lead's summary.json).
#[test]
fn reports_serialize() {
    let m = 6;
    let a = DMatrix::from_fn(m, 2, |i, k| (i as f64).powi(k as i32));
    let b = DVector::from_fn(m, |i, _| 1.0 + i as f64 + 0.1 * noise(i));
    let p = LinearLsq {
        a: a.clone(),
        b,
        c: DMatrix::zeros(0, 2),
        d: DVector::zeros(0),
    };
    let fit =
        levenberg_marquardt(&p, &[0.0; 2], &BoxBounds::free(2), &LmSettings::default()).unwrap();
    let st = statistics(&fit.x, &fit.residuals, &a, &[0, 1], &[]).unwrap();
    let fit_json = serde_json::to_string(&fit).unwrap();
    let st_json = serde_json::to_string(&st).unwrap();
    for key in [
        "\"outcome\":\"converged_",
        "\"history\"",
        "\"jacobian_evaluations\"",
        "\"final_gauss_newton_steps\"",
    ] {
        assert!(fit_json.contains(key), "{key} in {fit_json}");
    }
    for key in [
        "\"sigma2\"",
        "\"identifiability\":{\"kind\":\"identifiable\"}",
        "\"ci_low\"",
        "\"correlation\"",
        "\"t_quantile\"",
    ] {
        assert!(st_json.contains(key), "{key} in {st_json}");
    }
    let ggn_json = serde_json::to_string(&ggn_result()).unwrap();
    for key in [
        "\"multipliers\"",
        "\"max_violation\"",
        "\"final_full_steps\"",
        "\"penalty\"",
    ] {
        assert!(ggn_json.contains(key), "{key} in {ggn_json}");
    }
}

/// A small constrained fit's result (for its JSON).
fn ggn_result() -> super::super::outcome::GgnResult {
    let p = LinearLsq {
        a: DMatrix::identity(2, 2),
        b: DVector::from_vec(vec![1.0, 2.0]),
        c: DMatrix::from_row_slice(1, 2, &[1.0, 1.0]),
        d: DVector::from_vec(vec![1.0]),
    };
    let settings = super::super::settings::GgnSettings::default();
    super::super::constrained::generalized_gauss_newton(
        &p,
        &[0.0, 0.0],
        &BoxBounds::free(2),
        &settings,
    )
    .unwrap()
}
