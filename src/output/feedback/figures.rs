//! The figures of `hybridopt feedback`: the gains over time (one panel per control, a
//! line per state) and the robustness runs (distance from the orbit after each impact,
//! per trial, open against closed loop; along a run, the targets' outputs over time).

use crate::feedback::{ClosedLoop, GainSample, RobustnessReport, RunTable, TrackReport};
use crate::integrate::Trajectory;
use crate::model::HybridSystem;
use crate::plot::{Figure, LineKind, Marker, Panel, Series};
use crate::problem::Problem;
use crate::systems::builtin::Builtin;

/// K(t): one panel per control channel, a line per state whose gain is not zero
/// everywhere; the nominal's events marked.
pub fn gains(
    name: &str, g: &[GainSample], states: &[String], controls: &[String], events: &[(f64, String)],
) -> Figure {
    let t: Vec<f64> = g.iter().map(|s| s.t).collect();
    let panels = controls
        .iter()
        .enumerate()
        .map(|(c, cname)| {
            let series = states
                .iter()
                .enumerate()
                .filter(|&(j, _)| g.iter().any(|s| s.k[(c, j)] != 0.0))
                .map(|(j, sname)| {
                    Series::new(
                        format!("K[{cname}, {sname}]"),
                        t.clone(),
                        g.iter().map(|s| s.k[(c, j)]).collect(),
                        LineKind::Solid,
                    )
                })
                .collect();
            Panel {
                title: format!("gains of {cname}"),
                y_label: format!("{cname} per unit of state"),
                series,
                log_y: false,
            }
        })
        .collect();
    Figure {
        title: format!("{name}: feedback gains K(t), u = u_nom + K (x − x_ref)"),
        x_label: "t".into(),
        panels,
        markers: events
            .iter()
            .map(|(t, g)| Marker::new(*t, Some(g.clone())))
            .collect(),
    }
}

/// Two panels (open loop, closed loop): per trial, the distance of the state after each
/// impact from the orbit's start (`open[i][k]`: trial i, impact k + 1), log scale.
pub fn robustness(
    name: &str, r: &RobustnessReport, open: &[Vec<f64>], closed: &[Vec<f64>],
) -> Figure {
    let panel = |title: String, curves: &[Vec<f64>]| Panel {
        title,
        y_label: "|x⁺ − x*| after impact k".into(),
        series: curves
            .iter()
            .filter(|c| !c.is_empty())
            .map(|c| {
                Series::new(
                    "",
                    (1..=c.len()).map(|k| k as f64).collect(),
                    c.clone(),
                    LineKind::Solid,
                )
            })
            .collect(),
        log_y: true,
    };
    Figure {
        title: format!(
            "{name}: {} pushed starts (U[−{}, {}]), {} steps",
            r.trials, r.size, r.size, r.steps
        ),
        x_label: "impact k".into(),
        panels: vec![
            panel(
                format!(
                    "open loop (K = 0): {} of {} walked",
                    r.walked_open, r.trials
                ),
                open,
            ),
            panel(
                format!("closed loop: {} of {} walked", r.walked_closed, r.trials),
                closed,
            ),
        ],
        markers: Vec::new(),
    }
}

/// Along a run: per drawn output, two panels (open loop, closed loop) with the output of
/// each drawn trial over time (`drawn[i] = [open, closed]`, `None`: the run failed) and
/// the nominal's; the nominal's events marked.
pub fn tracks(
    p: &Problem, r: &TrackReport, drawn: &[[Option<Trajectory>; 2]], outputs: &[usize],
    cl: &ClosedLoop<'_, Builtin, RunTable>,
) -> Figure {
    let mut panels = Vec::new();
    for &o in outputs {
        let name = &p.dims.outputs[o];
        for (side, label, count) in [
            (0, "open loop (K = 0)", r.reached_open),
            (1, "closed loop", r.reached_closed),
        ] {
            let series = drawn
                .iter()
                .zip(&r.starts)
                .filter_map(|(d, (_, pv))| d[side].as_ref().map(|t| (t, pv)))
                .map(|(t, pv)| {
                    let (x, y) = sample_output(cl, t, pv, o);
                    Series::new("", x, y, LineKind::Solid)
                })
                .collect();
            panels.push(Panel {
                title: format!("{label}: {count} of {} reached the targets", r.trials),
                y_label: name.clone(),
                series,
                log_y: false,
            });
        }
    }
    Figure {
        title: format!(
            "{}: {} perturbed starts (the first {} drawn), open against closed loop",
            p.name,
            r.trials,
            drawn.len()
        ),
        x_label: "t".into(),
        panels,
        markers: Vec::new(),
    }
}

/// Output `o` of the closed loop along `traj` (100 samples per segment).
fn sample_output(
    cl: &ClosedLoop<'_, Builtin, RunTable>, traj: &Trajectory, p: &[f64], o: usize,
) -> (Vec<f64>, Vec<f64>) {
    let ny = cl.dims().outputs.len();
    let mut x = vec![0.0; traj.y_final.len()];
    let mut y = vec![0.0; ny];
    let (mut ts, mut ys) = (Vec::new(), Vec::new());
    for seg in &traj.segments {
        for k in 0..=100 {
            let t = seg.t_start + (seg.t_end - seg.t_start) * k as f64 / 100.0;
            seg.state_at(t, &mut x);
            if cl.outputs(seg.mode, t, &x, &[], p, &mut y).is_ok() {
                ts.push(t);
                ys.push(y[o]);
            }
        }
    }
    (ts, ys)
}
