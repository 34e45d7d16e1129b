//! What a run writes: trajectory tables, figures (outputs with events marked, convergence,
//! controls, sensitivities) and the JSON summaries, built from library values.

use crate::error::Error;
use crate::integrate::Trajectory;
use crate::model::HybridSystem;
use crate::optimize::HistoryRow;
use crate::plot::{Figure, LineKind, Marker, Panel, Series};
use crate::sensitivity::forward::ForwardResult;
use crate::setup::Setup;
use ndarray::Array2;

pub use crate::setup::{trajectory_table, Table, POINTS_PER_STEP};

/// Event markers of a trajectory (label: guard name).
pub fn event_markers<S: HybridSystem>(setup: &Setup<'_, S>, traj: &Trajectory) -> Vec<Marker> {
    traj.events
        .iter()
        .map(|e| Marker::new(e.t, Some(setup.dims.guard_name(e.guard))))
        .collect()
}

/// Outputs vs time, one panel per output, for one or more labelled runs.
pub fn outputs_figure(
    title: &str, outputs: &[String], runs: &[(&str, &Table, LineKind)], markers: Vec<Marker>,
) -> Figure {
    let panels = outputs
        .iter()
        .map(|o| Panel {
            title: o.clone(),
            y_label: o.clone(),
            series: runs
                .iter()
                .filter_map(|(label, tab, kind)| {
                    Some(Series::new(*label, tab.column("t")?, tab.column(o)?, *kind))
                })
                .collect(),
            log_y: false,
        })
        .collect();
    Figure {
        title: title.to_string(),
        x_label: "t".into(),
        panels,
        markers,
    }
}

/// Cost and gradient norm vs iteration, log scale (a linear cost axis when the cost spans
/// too little for two log ticks); the cost's legend gives the final (optimal) value.
pub fn convergence_figure(title: &str, history: &[HistoryRow]) -> Figure {
    let it: Vec<f64> = history.iter().map(|r| r.iteration as f64).collect();
    let cost_label = match history.last() {
        Some(last) => format!("cost (final {:.8e})", last.cost),
        None => "cost".to_string(),
    };
    let mut fig = Figure {
        title: title.to_string(),
        x_label: "iteration".into(),
        panels: vec![
            Panel {
                title: "cost".into(),
                y_label: "cost".into(),
                series: vec![Series::new(
                    cost_label,
                    it.clone(),
                    history.iter().map(|r| r.cost).collect(),
                    LineKind::Solid,
                )],
                log_y: true,
            },
            Panel {
                title: "gradient norm".into(),
                y_label: "|grad|".into(),
                series: vec![Series::new(
                    "|grad| (transformed variables)",
                    it.clone(),
                    history.iter().map(|r| r.grad_norm).collect(),
                    LineKind::Solid,
                )],
                log_y: true,
            },
        ],
        markers: vec![],
    };
    // a constrained run: the stationarity residual and the largest violation
    if history.iter().any(|r| r.max_violation.is_some()) {
        let floor = |v: f64| v.max(1e-16);
        fig.panels[1] = Panel {
            title: "KKT stationarity and largest violation".into(),
            y_label: "residual".into(),
            series: vec![
                Series::new(
                    "stationarity |∇L|",
                    it.clone(),
                    history.iter().map(|r| floor(r.grad_norm)).collect(),
                    LineKind::Solid,
                ),
                Series::new(
                    "largest violation",
                    it.clone(),
                    history
                        .iter()
                        .map(|r| floor(r.max_violation.unwrap_or(0.0)))
                        .collect(),
                    LineKind::Dashed,
                ),
            ],
            log_y: true,
        };
        // multiple shooting: the continuity gaps too
        if history.iter().any(|r| r.defect.is_some()) {
            fig.panels[1].title = "KKT stationarity, largest violation, continuity gap".into();
            fig.panels[1].series.push(Series::new(
                "largest continuity gap",
                it,
                history
                    .iter()
                    .map(|r| floor(r.defect.unwrap_or(0.0)))
                    .collect(),
                LineKind::Points,
            ));
        }
    }
    fig
}

/// Sensitivities dy/dθ_j of the chosen outputs vs time, from a forward-sensitivity run:
/// `dy/dθ = y_X S + y_θ` at every sample; one panel per output, one series per parameter.
pub fn sensitivity_figure<S: HybridSystem>(
    setup: &Setup<'_, S>, fw: &ForwardResult, theta: &[f64], outputs: &[usize], params: &[usize],
) -> Result<Figure, Error> {
    let n = setup.n();
    let nth = setup.ntheta();
    let samples = fw.trajectory.samples(POINTS_PER_STEP);
    let mut series: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); params.len()]; outputs.len()];
    let mut times = Vec::new();
    for (t, si, y) in &samples {
        let seg = &fw.trajectory.segments[*si];
        let ctx = seg.ctx();
        let jac = setup
            .output_jacobian(&ctx, *t, &y[..n], theta)
            .map_err(|e| Error::Model {
                t: *t,
                mode: setup.dims.mode_name(seg.mode),
                source: e,
            })?;
        let s = nalgebra::DMatrix::from_column_slice(n, nth, &y[n..]);
        times.push(*t);
        for (oi, &o) in outputs.iter().enumerate() {
            let row = s.tr_mul(&jac[o].x) + &jac[o].theta;
            for (pi, &p) in params.iter().enumerate() {
                series[oi][pi].push(row[p]);
            }
        }
    }
    let names = setup.theta_names();
    let panels = outputs
        .iter()
        .enumerate()
        .map(|(oi, &o)| Panel {
            title: format!("d{}/dθ", setup.dims.outputs[o]),
            y_label: format!("d{}/dθ", setup.dims.outputs[o]),
            series: params
                .iter()
                .enumerate()
                .map(|(pi, &p)| {
                    Series::new(
                        names[p].clone(),
                        times.clone(),
                        series[oi][pi].clone(),
                        LineKind::Solid,
                    )
                })
                .collect(),
            log_y: false,
        })
        .collect();
    let xt = fw.state_trajectory(n);
    Ok(Figure {
        title: "forward sensitivities".into(),
        x_label: "t".into(),
        panels,
        markers: event_markers(setup, &xt),
    })
}

/// The seed's Figs. 3–5 in form, for one objective: per parameter, the direct
/// sensitivity of the running cost Z(t) = ∂z/∂p(t) (reaching dψ/dp at tf) and the adjoint
/// μ_p(t) (reaching dψ/dp at t0 when x0 does not depend on p), with central FD marked at
/// both ends, tf (where Z arrives) and t0 (where μ arrives). Returns the figure and the two tables.
pub fn seed_figure<S: HybridSystem>(
    setup: &Setup<'_, S>, fw: &ForwardResult, objective: usize,
    mu: &crate::sensitivity::adjoint::MuHistory, fd: &[f64],
) -> (Figure, Table, Table) {
    let n = setup.n();
    let nx = setup.nx();
    let np = setup.np();
    let nth = setup.ntheta();
    let zs: Vec<usize> = setup
        .running_of(objective)
        .iter()
        .map(|(z, _)| *z)
        .collect();
    let samples = fw.trajectory.samples(POINTS_PER_STEP);
    let mut z_rows = Array2::zeros((samples.len(), 1 + np));
    for (r, (t, _, y)) in samples.iter().enumerate() {
        z_rows[(r, 0)] = *t;
        for p in 0..np {
            let mut v = 0.0;
            for &z in &zs {
                v += y[n + p * n + nx + z];
            }
            z_rows[(r, 1 + p)] = v;
        }
    }
    let _ = nth;
    let mut mu_sorted: Vec<&(f64, Vec<f64>)> = mu.iter().collect();
    mu_sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut mu_rows = Array2::zeros((mu_sorted.len(), 1 + np));
    for (r, (t, m)) in mu_sorted.iter().enumerate() {
        mu_rows[(r, 0)] = *t;
        for p in 0..np {
            mu_rows[(r, 1 + p)] = m[p];
        }
    }
    let names = &setup.dims.params;
    let mut header = vec!["t".to_string()];
    header.extend(names.iter().cloned());
    let ztab = Table {
        header: header.clone(),
        rows: z_rows,
    };
    let mtab = Table {
        header,
        rows: mu_rows,
    };
    let tf = fw.trajectory.t_final;
    let t0 = setup.t0;
    let panels = (0..np)
        .map(|p| Panel {
            title: format!("dψ/d{}", names[p]),
            y_label: format!("dψ/d{}", names[p]),
            series: vec![
                Series::new(
                    "direct Z(t)",
                    ztab.column("t").unwrap(),
                    ztab.rows.column(1 + p).to_vec(),
                    LineKind::Solid,
                ),
                Series::new(
                    "adjoint μ(t)",
                    mtab.column("t").unwrap(),
                    mtab.rows.column(1 + p).to_vec(),
                    LineKind::Dashed,
                ),
                Series::new(
                    "central FD (at t0 and tf)",
                    vec![tf, t0],
                    vec![fd[p], fd[p]],
                    LineKind::Points,
                ),
            ],
            log_y: false,
        })
        .collect();
    let xt = fw.state_trajectory(n);
    (
        Figure {
            title: format!(
                "{}: direct Z(t) and adjoint μ(t)",
                setup.objectives[objective].name
            ),
            x_label: "t".into(),
            panels,
            markers: event_markers(setup, &xt),
        },
        ztab,
        mtab,
    )
}
