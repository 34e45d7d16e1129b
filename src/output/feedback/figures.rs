//! The figures of `hybridopt feedback`: the gains over time (one panel per control, a
//! line per state) and the robustness runs (distance from the orbit after each impact,
//! per trial, open against closed loop).

use crate::feedback::{GainSample, RobustnessReport};
use crate::plot::{Figure, LineKind, Marker, Panel, Series};

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
