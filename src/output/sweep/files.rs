//! A sweep's files, written into a [`Staging`] folder: `sweep.json`, `sweep.csv`, for
//! starts `best_trajectory.csv`, and the figures. Everything is a function of the
//! [`SweepResult`] alone, so an unsharded run and a merge of shards write the same bytes.

#[cfg(feature = "plots")]
use super::figure;
use crate::error::Error;
use crate::format::format_f64;
use crate::output::atomic::Staging;
use crate::sweep::record::{Plan, PointRecord, SweepFile};
use crate::sweep::SweepResult;

/// Writes all of a sweep's files into `stage`.
pub fn write(stage: &Staging, res: &SweepResult) -> Result<(), Error> {
    stage.write_json("sweep.json", &res.file)?;
    let bytes = csv_bytes(&res.file).map_err(|e| Error::Io {
        path: stage.path("sweep.csv"),
        source: e,
    })?;
    stage.write_bytes("sweep.csv", &bytes)?;
    if let Some(t) = &res.best_trajectory {
        stage.write_csv("best_trajectory.csv", &t.header, &t.rows)?;
    }
    #[cfg(feature = "plots")]
    figure::write(stage, res)?;
    Ok(())
}

fn num(v: Option<f64>) -> String {
    v.map(format_f64).unwrap_or_default()
}

fn count<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// The CSV header: for a grid `index, <axes>, cost, gradient_norm, dcost_d<axis>…`; for
/// starts `index, start_<entry>…, <entry>…, initial_cost, cost, gradient_norm,
/// iterations, evaluations`; then `outcome, events, error_kind, error`.
fn header(file: &SweepFile) -> Vec<String> {
    let mut h = vec!["index".to_string()];
    match &file.plan {
        Plan::Grid { axes } => {
            h.extend(axes.iter().map(|a| a.name.clone()));
            h.extend(["cost".into(), "gradient_norm".into()]);
            h.extend(axes.iter().map(|a| format!("dcost_d{}", a.name)));
        }
        Plan::Starts { ranges, .. } => {
            h.extend(ranges.iter().map(|r| format!("start_{}", r.name)));
            h.extend(ranges.iter().map(|r| r.name.clone()));
            h.extend(
                [
                    "initial_cost",
                    "cost",
                    "gradient_norm",
                    "iterations",
                    "evaluations",
                ]
                .map(String::from),
            );
        }
    }
    h.extend(["outcome", "events", "error_kind", "error"].map(String::from));
    h
}

fn row(plan: &Plan, p: &PointRecord) -> Vec<String> {
    let mut r = vec![p.index.to_string()];
    let names: Vec<&str> = match plan {
        Plan::Grid { axes } => axes.iter().map(|a| a.name.as_str()).collect(),
        Plan::Starts { ranges, .. } => ranges.iter().map(|a| a.name.as_str()).collect(),
    };
    let pick = |m: Option<&crate::sweep::named::Named>, n: &str| num(m.and_then(|m| m.get(n)));
    r.extend(names.iter().map(|n| pick(Some(&p.parameters), n)));
    match plan {
        Plan::Grid { .. } => {
            r.extend([num(p.cost), num(p.gradient_norm)]);
            r.extend(names.iter().map(|n| pick(p.gradient.as_ref(), n)));
        }
        Plan::Starts { .. } => {
            r.extend(names.iter().map(|n| pick(p.final_parameters.as_ref(), n)));
            r.extend([
                num(p.initial_cost),
                num(p.cost),
                num(p.gradient_norm),
                count(p.iterations),
                count(p.evaluations),
            ]);
        }
    }
    r.push(p.outcome.name().to_string());
    r.push(count(p.events));
    match &p.error {
        Some(e) => r.extend([e.kind.name(), e.message.clone()]),
        None => r.extend([String::new(), String::new()]),
    }
    r
}

/// `sweep.csv`: one line per point in index order (floats round-trip, see
/// [`format_f64`]; an undefined value is an empty field).
pub fn csv_bytes(file: &SweepFile) -> std::io::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(header(file))
        .map_err(std::io::Error::other)?;
    for p in &file.points {
        w.write_record(row(&file.plan, p))
            .map_err(std::io::Error::other)?;
    }
    w.into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))
}
