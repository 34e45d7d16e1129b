//! An exact event-driven oracle for piecewise-constant fields `ẋ = F(sign x)` (seed 003
//! §3.1, docs/reference-models.md §4): the tests check `B` against finite differences of
//! this exact flow.

use super::error::{CornerError, LengthOf};
use super::geometry::first_non_finite;
use super::limits::MAX_SURFACES;
use super::signs::{mask_str, mask_to_signs};
use nalgebra::DVector;

use crate::error::Error;

/// One crossing of a coordinate hyperplane by the exact piecewise-constant flow.
#[derive(Debug, Clone, PartialEq)]
pub struct Crossing {
    /// Time of the crossing (from the start of the flow).
    pub time: f64,
    /// The coordinate j with `x_j = 0` there.
    pub coordinate: usize,
    /// Sign mask of the orthant entered (bit j set ⇔ `x_j > 0`).
    pub signs_after: usize,
}

/// Result of [`piecewise_constant_flow`].
#[derive(Debug, Clone, PartialEq)]
pub struct PiecewiseConstantFlow {
    /// `φ_T(x0)`.
    pub state: DVector<f64>,
    /// Sign mask of the final orthant (bit j set ⇔ `x_j > 0`; on a coordinate that ended on
    /// its hyperplane, the side it was heading to).
    pub signs: usize,
    /// The crossings in time order.
    pub crossings: Vec<Crossing>,
}

/// Exact flow over a time `duration` of the piecewise-constant field `ẋ = F(sign x)` on R^d
/// (seed 003 (3.1); reference-models §4), with guards `h_j(x) = x_j`.
///
/// `fields` holds `F` on the 2^d orthants, indexed by sign mask (bit j set ⇔ `x_j > 0`). The
/// flow is piecewise linear in time: in the orthant b it is `x + t F(b)`; the next crossing is
/// the smallest `t_j = −x_j / F_j(b)` over the coordinates heading to their hyperplane
/// (`x_j < 0` with `F_j(b) > 0`, or `x_j > 0` with `F_j(b) < 0`); the state is advanced
/// exactly to it, `x_j` set to 0 and `b_j` flipped. Ties between coordinates are resolved one
/// at a time (the smallest index first; the next one then crosses after a zero step).
///
/// Errors ([`Error::Corner`]): sizes (`1 ≤ d ≤ 16`, 2^d fields of length d), non-finite
/// data, a start on a hyperplane (`x0_j = 0`), a negative duration, sliding (the field
/// entered points back to the hyperplane just crossed, `F_j(b')` of the wrong sign or zero);
/// and more than `max_events` crossings ([`Error::Zeno`]).
pub fn piecewise_constant_flow(
    fields: &[DVector<f64>], x0: &DVector<f64>, duration: f64, max_events: usize,
) -> Result<PiecewiseConstantFlow, Error> {
    check_flow_input(fields, x0, duration)?;
    let d = x0.len();
    let mut b = 0usize;
    for (k, &v) in x0.iter().enumerate() {
        if v == 0.0 {
            return Err(CornerError::OnHyperplane { component: k }.into());
        }
        if v > 0.0 {
            b |= 1usize << k;
        }
    }

    let mut x = x0.clone();
    let mut t = 0.0f64;
    let mut crossings = Vec::new();
    loop {
        let f = &fields[b];
        let next = next_crossing(f, &x, b);
        match next {
            Some((j, tj)) if t + tj <= duration => {
                if crossings.len() >= max_events {
                    return Err(Error::Zeno {
                        t,
                        mode: format!("orthant {}", mask_str(b, d)),
                        guard: format!("x_{j} = 0"),
                        max_events,
                    });
                }
                let below = b & (1usize << j) == 0;
                x.axpy(tj, f, 1.0);
                x[j] = 0.0;
                t += tj;
                b ^= 1usize << j;
                let fj_new = fields[b][j];
                let moves_on = if below { fj_new > 0.0 } else { fj_new < 0.0 };
                if !moves_on {
                    return Err(CornerError::Sliding {
                        t,
                        coordinate: j,
                        signs: mask_to_signs(b, d),
                        component: fj_new,
                    }
                    .into());
                }
                crossings.push(Crossing {
                    time: t,
                    coordinate: j,
                    signs_after: b,
                });
            }
            _ => {
                x.axpy(duration - t, f, 1.0);
                break;
            }
        }
    }
    Ok(PiecewiseConstantFlow {
        state: x,
        signs: b,
        crossings,
    })
}

/// The sizes (`1 ≤ d ≤ 16`, 2^d fields of length d), every number finite, the duration
/// non-negative: the oracle's input as [`piecewise_constant_flow`] takes it.
fn check_flow_input(
    fields: &[DVector<f64>], x0: &DVector<f64>, duration: f64,
) -> Result<(), Error> {
    let d = x0.len();
    if d == 0 || d > MAX_SURFACES {
        return Err(CornerError::FlowSize { d }.into());
    }
    if fields.len() != (1usize << d) {
        return Err(CornerError::FieldCount {
            n: d,
            found: fields.len(),
            orthants: true,
        }
        .into());
    }
    for (mask, f) in fields.iter().enumerate() {
        if f.len() != d {
            return Err(CornerError::Length {
                item: format!("field for orthant {}", mask_str(mask, d)),
                found: f.len(),
                expected: d,
                of: LengthOf::Dimension,
            }
            .into());
        }
        if let Some((k, value)) = first_non_finite(f) {
            return Err(CornerError::NonFinite {
                item: format!("field for orthant {}, component {k},", mask_str(mask, d)),
                value,
            }
            .into());
        }
    }
    if let Some((k, value)) = first_non_finite(x0) {
        return Err(CornerError::NonFinite {
            item: format!("start point component {k}"),
            value,
        }
        .into());
    }
    if !(duration.is_finite() && duration >= 0.0) {
        return Err(CornerError::Duration { duration }.into());
    }
    Ok(())
}

/// The first coordinate hyperplane the flow `x + t f` in orthant `b` reaches, and when:
/// the smallest `t_j = −x_j / f_j` over the coordinates heading to theirs (the smallest
/// index on a tie).
fn next_crossing(f: &DVector<f64>, x: &DVector<f64>, b: usize) -> Option<(usize, f64)> {
    let mut next: Option<(usize, f64)> = None;
    for j in 0..x.len() {
        let below = b & (1usize << j) == 0;
        let heading = if below { f[j] > 0.0 } else { f[j] < 0.0 };
        if !heading {
            continue;
        }
        // Round-off may leave x_j a hair on the far side: cross it after a zero step.
        let tj = (-x[j] / f[j]).max(0.0);
        if next.is_none_or(|(_, tb)| tj < tb) {
            next = Some((j, tj));
        }
    }
    next
}
