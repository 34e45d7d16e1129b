//! Kinks: points where ψ is nonsmooth in the optimized variables (a simultaneous event whose
//! crossing orders give different gradients, theory.md §7; a state event on a node where
//! the controls jump, §11). The pieces' gradients, the
//! min-norm element of their convex hull (a descent direction for every piece) and the
//! one-sided derivatives along ±e_i.

use crate::error::Error;
use crate::model::HybridSystem;
use crate::sensitivity::forward::forward_sensitivity_lean;
use crate::sensitivity::node::{events_on_nodes, node_directional, node_piece_gradients};
use crate::sensitivity::simultaneous::{directional_derivatives, piece_gradients, NONSMOOTH_TOL};
use crate::sensitivity::Evaluation;
use crate::setup::Setup;

/// The pieces' gradients at a kink met during the run (optimized components only).
#[derive(Debug, Clone, serde::Serialize)]
pub struct KinkReport {
    pub theta: Vec<f64>,
    /// Times of the simultaneous events with differing pieces.
    pub times: Vec<f64>,
    /// Each piece: (description, gradient over the optimized entries).
    pub pieces: Vec<(String, Vec<f64>)>,
    /// The min-norm element of their convex hull (what `Descent` uses).
    pub min_norm: Vec<f64>,
    /// One-sided derivatives Dψ(θ; ±e_i) for each optimized entry: (name, +, −).
    pub one_sided: Vec<(String, f64, f64)>,
}

impl KinkReport {
    /// The report at θ with its pieces' min-norm element.
    fn new(
        th: &[f64], times: Vec<f64>, pieces: Vec<(String, Vec<f64>)>,
        one_sided: Vec<(String, f64, f64)>,
    ) -> Self {
        let vecs: Vec<Vec<f64>> = pieces.iter().map(|p| p.1.clone()).collect();
        KinkReport {
            theta: th.to_vec(),
            times,
            min_norm: min_norm_in_hull(&vecs),
            pieces,
            one_sided,
        }
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The point of minimal norm in the convex hull of `v` (projected gradient on the simplex;
/// exact for two points: `v₀ + l (v₁ − v₀)`, `l = clamp(−v₀·d / d·d, 0, 1)`; Frank–Wolfe
/// with exact line search on `min ‖Σ w_k v_k‖²` for more).
pub fn min_norm_in_hull(v: &[Vec<f64>]) -> Vec<f64> {
    match v.len() {
        1 => v[0].clone(),
        2 => min_norm_of_two(&v[0], &v[1]),
        _ => frank_wolfe(v),
    }
}

fn min_norm_of_two(a: &[f64], b: &[f64]) -> Vec<f64> {
    let d: Vec<f64> = b.iter().zip(a).map(|(x, y)| x - y).collect();
    let dd = dot(&d, &d);
    let l = if dd > 0.0 {
        (-dot(a, &d) / dd).clamp(0.0, 1.0)
    } else {
        0.0
    };
    a.iter().zip(&d).map(|(x, y)| x + l * y).collect()
}

fn frank_wolfe(v: &[Vec<f64>]) -> Vec<f64> {
    let m = v.len();
    let mut w = vec![1.0 / m as f64; m];
    let comb = |w: &[f64]| -> Vec<f64> {
        let mut x = vec![0.0; v[0].len()];
        for (k, vk) in v.iter().enumerate() {
            for (xi, a) in x.iter_mut().zip(vk) {
                *xi += w[k] * a;
            }
        }
        x
    };
    for _ in 0..500 {
        let x = comb(&w);
        let (j, _) = v
            .iter()
            .enumerate()
            .map(|(k, vk)| (k, dot(vk, &x)))
            .fold((0, f64::INFINITY), |a, b| if b.1 < a.1 { b } else { a });
        let d: Vec<f64> = v[j].iter().zip(&x).map(|(a, b)| a - b).collect();
        let dd = dot(&d, &d);
        if dd == 0.0 {
            break;
        }
        let g = (-dot(&x, &d) / dd).clamp(0.0, 1.0);
        if g <= 1e-15 {
            break;
        }
        for (k, wk) in w.iter_mut().enumerate() {
            *wk *= 1.0 - g;
            if k == j {
                *wk += g;
            }
        }
    }
    comb(&w)
}

/// Whether ψ is nonsmooth in the optimized entries `free` at θ (a simultaneous event whose
/// pieces' gradients differ there), with the pieces, their min-norm combination and the
/// one-sided derivatives along ±e_i.
pub(super) fn kink_at<S: HybridSystem>(
    setup: &Setup<'_, S>, free: &[usize], th: &[f64], ev: &Evaluation,
) -> Result<Option<KinkReport>, Error> {
    let evs = &ev.trajectory.events;
    if !evs.windows(2).any(|w| w[0].group == w[1].group) {
        return node_kink(setup, free, th, ev);
    }
    let Some((times, pieces)) = differing_pieces(setup, free, th)? else {
        return Ok(None);
    };
    let one_sided = one_sided(setup, free, th)?;
    Ok(Some(KinkReport::new(th, times, pieces, one_sided)))
}

type Pieces = (Vec<f64>, Vec<(String, Vec<f64>)>);

/// The recorded orders' gradient and every crossing order whose gradient differs from it
/// (restricted to `free`), with the times where they differ; `None` if none differs.
fn differing_pieces<S: HybridSystem>(
    setup: &Setup<'_, S>, free: &[usize], th: &[f64],
) -> Result<Option<Pieces>, Error> {
    let ns = piece_gradients(setup, th)?;
    let restrict = |g: &[f64]| -> Vec<f64> { free.iter().map(|&k| g[k]).collect() };
    let base = restrict(&ns.gradients[0]);
    let norm = |v: &[f64]| dot(v, v).sqrt();
    let mut pieces = vec![("recorded orders".to_string(), base.clone())];
    let mut times = Vec::new();
    for grp in &ns.groups {
        for pc in &grp.pieces {
            let g = restrict(&pc.gradients[0]);
            let diff: Vec<f64> = g.iter().zip(&base).map(|(a, b)| a - b).collect();
            if norm(&diff) > NONSMOOTH_TOL * norm(&base).max(1e-300) {
                if !times.contains(&grp.t) {
                    times.push(grp.t);
                }
                let names: Vec<String> = pc
                    .guard_order
                    .iter()
                    .map(|&k| setup.dims.guard_name(k))
                    .collect();
                pieces.push((format!("t = {}: order {}", grp.t, names.join(" → ")), g));
            }
        }
    }
    Ok((pieces.len() > 1).then_some((times, pieces)))
}

/// One-sided derivatives Dψ(θ; ±e_k) for each optimized entry k: (name, +, −).
fn one_sided<S: HybridSystem>(
    setup: &Setup<'_, S>, free: &[usize], th: &[f64],
) -> Result<Vec<(String, f64, f64)>, Error> {
    let dd = directional_derivatives(setup, th, &unit_directions(free, th.len()))?;
    let d: Vec<f64> = dd.iter().map(|x| x.derivatives[0]).collect();
    Ok(by_entry(setup, free, &d))
}

/// `+e_k`, `−e_k` for each optimized entry k, in that order.
fn unit_directions(free: &[usize], n: usize) -> Vec<Vec<f64>> {
    let mut dirs = Vec::with_capacity(2 * free.len());
    for &k in free {
        for sgn in [1.0, -1.0] {
            let mut d = vec![0.0; n];
            d[k] = sgn;
            dirs.push(d);
        }
    }
    dirs
}

/// The derivatives along [`unit_directions`] paired by entry: (name, +, −).
fn by_entry<S: HybridSystem>(
    setup: &Setup<'_, S>, free: &[usize], d: &[f64],
) -> Vec<(String, f64, f64)> {
    let names = setup.theta_names();
    free.iter()
        .enumerate()
        .map(|(i, &k)| (names[k].clone(), d[2 * i], d[2 * i + 1]))
        .collect()
}

/// A kink from state events on control nodes (sensitivity/node.rs): the recorded sides'
/// gradient and, for each such event, the gradient with it on its node's other side when
/// that differs; the one-sided derivatives from the events' τ (one direct pass).
fn node_kink<S: HybridSystem>(
    setup: &Setup<'_, S>, free: &[usize], th: &[f64], ev: &Evaluation,
) -> Result<Option<KinkReport>, Error> {
    let on = events_on_nodes(setup, &ev.trajectory, th);
    if on.is_empty() {
        return Ok(None);
    }
    // a run that kept what the backward pass needs (the evaluation's may not have)
    let traj = setup.simulate(th)?;
    let restrict = |g: &[f64]| -> Vec<f64> { free.iter().map(|&k| g[k]).collect() };
    let norm = |v: &[f64]| dot(v, v).sqrt();
    let base = restrict(&node_piece_gradients(setup, &traj, th, &on, &[])?[0]);
    let mut pieces = vec![("recorded sides".to_string(), base.clone())];
    let mut times = Vec::new();
    for (j, ne) in on.iter().enumerate() {
        let g = restrict(&node_piece_gradients(setup, &traj, th, &on, &[j])?[0]);
        let diff: Vec<f64> = g.iter().zip(&base).map(|(a, b)| a - b).collect();
        if norm(&diff) > NONSMOOTH_TOL * norm(&base).max(1e-300) {
            let e = &traj.events[ne.event];
            times.push(e.t);
            let side = if ne.after { "before" } else { "after" };
            let what = format!(
                "t = {}: guard '{}' {side} the control node {}",
                e.t,
                setup.dims.guard_name(e.guard),
                ne.node
            );
            pieces.push((what, g));
        }
    }
    if pieces.len() == 1 {
        return Ok(None);
    }
    let fwd = forward_sensitivity_lean(setup, th)?;
    let taus = on
        .iter()
        .map(|ne| match fwd.events.get(ne.event) {
            Some(e) if e.guard == traj.events[ne.event].guard => Ok(e.tau.clone()),
            _ => Err(Error::Internal(format!(
                "the direct pass at a kink on a control node did not meet event {} as the plain \
                 run did ({} events against {})",
                ne.event,
                fwd.events.len(),
                traj.events.len()
            ))),
        })
        .collect::<Result<Vec<Vec<f64>>, Error>>()?;
    let dd = node_directional(
        setup,
        &traj,
        th,
        &on,
        &taus,
        &unit_directions(free, th.len()),
    )?;
    let d: Vec<f64> = dd.iter().map(|x| x[0]).collect();
    let one_sided = by_entry(setup, free, &d);
    Ok(Some(KinkReport::new(th, times, pieces, one_sided)))
}
