//! Figures of periodic orbits: the limit cycle in phase space with the impacts marked,
//! the multipliers in the complex plane with the unit circle, and continuation curves.

use crate::output::artifacts::Table;
use crate::periodic::continuation::{BifurcationKind, Branch};
use crate::periodic::orbit::OrbitReport;
use crate::plot::{Figure, LineKind, Marker, Panel, Series};

/// Phase portrait: each position `q_i` (the first half of the states) against its
/// velocity (the matching state of the second half), over one cycle; the states just
/// before and after each event are marked and joined by a dashed line (the jump). A
/// hyperplane section's fixed point (`on_section`) is marked apart: its crossing is no
/// impact.
pub fn limit_cycle(
    name: &str, table: &Table, states: &[String], jumps: &[(Vec<f64>, Vec<f64>)],
    on_section: Option<&[f64]>,
) -> Figure {
    let nq = states.len() / 2;
    let col = |s: &str| table.header.iter().position(|h| h == s);
    let mut series = Vec::new();
    for i in 0..nq {
        let (Some(a), Some(b)) = (col(&states[i]), col(&states[nq + i])) else {
            continue;
        };
        series.push(Series::new(
            format!("{} vs {}", states[nq + i], states[i]),
            table.rows.column(a).to_vec(),
            table.rows.column(b).to_vec(),
            LineKind::Solid,
        ));
        for (minus, plus) in jumps {
            series.push(Series::new(
                format!("impact ({})", states[i]),
                vec![minus[i], plus[i]],
                vec![minus[nq + i], plus[nq + i]],
                LineKind::Dashed,
            ));
            series.push(Series::new(
                "",
                vec![minus[i], plus[i]],
                vec![minus[nq + i], plus[nq + i]],
                LineKind::Points,
            ));
        }
        if let Some(x) = on_section {
            series.push(Series::new(
                format!("on the hyperplane ({})", states[i]),
                vec![x[i]],
                vec![x[nq + i]],
                LineKind::Points,
            ));
        }
    }
    Figure {
        title: format!("{name}: limit cycle (one period; dashed: the impact map)"),
        x_label: "position".into(),
        panels: vec![Panel {
            title: String::new(),
            y_label: "velocity".into(),
            series,
            log_y: false,
        }],
        markers: Vec::new(),
    }
}

/// The multipliers in the complex plane with the unit circle.
pub fn multipliers(name: &str, r: &OrbitReport) -> Figure {
    let k = 361;
    let (cx, cy): (Vec<f64>, Vec<f64>) = (0..k)
        .map(|i| {
            let a = std::f64::consts::TAU * i as f64 / (k - 1) as f64;
            (a.cos(), a.sin())
        })
        .unzip();
    let pts = |v: &[[f64; 2]]| -> (Vec<f64>, Vec<f64>) { v.iter().map(|c| (c[0], c[1])).unzip() };
    let (sx, sy) = pts(&r.multipliers);
    let (mx, my) = pts(&r.monodromy_multipliers);
    Figure {
        title: format!(
            "{name}: Floquet multipliers (spectral radius {:.4}, {})",
            r.spectral_radius,
            if r.stable { "stable" } else { "unstable" }
        ),
        x_label: "Re λ".into(),
        panels: vec![Panel {
            title: String::new(),
            y_label: "Im λ".into(),
            series: vec![
                Series::new("unit circle", cx, cy, LineKind::Solid),
                Series::new("on the section", sx, sy, LineKind::Points),
                Series::new("full monodromy", mx, my, LineKind::Points),
            ],
            log_y: false,
        }],
        markers: Vec::new(),
    }
}

/// The most multipliers of a point of the branch (the columns of `continuation.csv`).
pub fn multiplier_count(b: &Branch) -> usize {
    b.points
        .iter()
        .map(|p| p.multipliers.len())
        .max()
        .unwrap_or(0)
}

/// The branch against the parameter: fixed point, period, |λ| and Re λ, with the
/// bifurcations marked.
pub fn continuation(name: &str, b: &Branch) -> Figure {
    let xs: Vec<f64> = b.points.iter().map(|p| p.value).collect();
    let mut fixed = Vec::new();
    for (i, s) in b.states.iter().enumerate() {
        fixed.push(Series::new(
            s.clone(),
            xs.clone(),
            b.points.iter().map(|p| p.fixed_point[i]).collect(),
            LineKind::Solid,
        ));
    }
    let nm = multiplier_count(b);
    let mult = |f: &dyn Fn(&[f64; 2]) -> f64, label: &str| -> Vec<Series> {
        (0..nm)
            .map(|i| {
                let (x, y): (Vec<f64>, Vec<f64>) = b
                    .points
                    .iter()
                    .filter_map(|p| p.multipliers.get(i).map(|m| (p.value, f(m))))
                    .unzip();
                Series::new(format!("{label} λ{}", i + 1), x, y, LineKind::Points)
            })
            .collect()
    };
    let line = |v: f64, label: &str| {
        Series::new(
            label,
            vec![xs[0], *xs.last().unwrap_or(&xs[0])],
            vec![v, v],
            LineKind::Dashed,
        )
    };
    let mut moduli = mult(&|m| m[0].hypot(m[1]), "|λ|");
    moduli.push(line(1.0, "|λ| = 1"));
    let mut reals = mult(&|m| m[0], "Re");
    reals.push(line(-1.0, "−1"));
    let markers = b
        .bifurcations
        .iter()
        .map(|f| {
            let what = match f.kind {
                BifurcationKind::PeriodDoubling => "period doubling",
                BifurcationKind::Fold => "fold",
                BifurcationKind::NeimarkSacker => "Neimark–Sacker",
            };
            Marker::new(f.at, Some(format!("{what} at {:.6}", f.at)))
        })
        .collect();
    let panel = |title: &str, y: &str, series| Panel {
        title: title.into(),
        y_label: y.into(),
        series,
        log_y: false,
    };
    Figure {
        title: format!("{name}: continuation in {}", b.param),
        x_label: b.param.clone(),
        panels: vec![
            panel("fixed point", "state", fixed),
            panel(
                "period",
                "T",
                vec![Series::new(
                    "T",
                    xs.clone(),
                    b.points.iter().map(|p| p.period).collect(),
                    LineKind::Solid,
                )],
            ),
            panel("multipliers on the section", "|λ|", moduli),
            panel("real parts (through −1: period doubling)", "Re λ", reals),
        ],
        markers,
    }
}

/// A gait optimization's convergence: the objective and the norm of its gradient in the
/// optimized parameters (physical units) against the evaluation, through the figure every
/// optimization writes ([`crate::output::artifacts::convergence_figure`]).
pub fn gait_convergence(name: &str, opt: &crate::periodic::optimize::GaitOptimum) -> Figure {
    let rows: Vec<crate::optimize::HistoryRow> = opt
        .history
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let step = match i {
                0 => 0.0,
                _ => e
                    .params
                    .iter()
                    .zip(&opt.history[i - 1].params)
                    .map(|(a, b)| (a - b) * (a - b))
                    .sum::<f64>()
                    .sqrt(),
            };
            crate::optimize::HistoryRow {
                iteration: i as u64,
                cost: e.value,
                grad_norm: e.gradient.iter().map(|g| g * g).sum::<f64>().sqrt(),
                step,
                theta: e.params.clone(),
                max_violation: None,
                defect: None,
            }
        })
        .collect();
    let mut fig =
        crate::output::artifacts::convergence_figure(&format!("{name}: convergence"), &rows);
    fig.x_label = "evaluation".into();
    if let Some(s) = fig.panels.get_mut(1).and_then(|p| p.series.first_mut()) {
        s.label = "|d value/d params|".into();
    }
    fig
}
