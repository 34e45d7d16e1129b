//! `hybridopt merge DIR...`: combines the folders of the shards 1/N … N/N of one sweep
//! into the [`SweepResult`] an unsharded run gives (written by [`crate::output::sweep::write_sweep`],
//! so the files are byte-equal). Every shard must be present once, all from the same
//! problem file and plan.

use super::record::{Best, Plan, SweepFile};
use super::SweepResult;
use crate::error::Error;
use crate::setup::Table;
use ndarray::Array2;
use std::path::{Path, PathBuf};

fn err(path: &Path, message: String) -> Error {
    Error::Problem {
        file: path.to_path_buf(),
        message,
    }
}

/// Reads `<dir>/sweep.json`.
pub fn read_file(dir: &Path) -> Result<SweepFile, Error> {
    let path = dir.join("sweep.json");
    let text = std::fs::read_to_string(&path).map_err(|source| Error::Io {
        path: path.clone(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| {
        err(
            &path,
            format!("not a sweep.json written by `hybridopt sweep`: {e}"),
        )
    })
}

/// Reads a CSV of floats with a header (as [`crate::output::atomic::Staging::write_csv`] writes
/// it) into a table.
pub fn read_table(path: &Path) -> Result<Table, Error> {
    let mut r = csv::Reader::from_path(path).map_err(|e| err(path, e.to_string()))?;
    let header: Vec<String> = r
        .headers()
        .map_err(|e| err(path, e.to_string()))?
        .iter()
        .map(str::to_string)
        .collect();
    let mut values = Vec::new();
    let mut rows = 0;
    for (line, rec) in r.records().enumerate() {
        let rec = rec.map_err(|e| err(path, e.to_string()))?;
        for field in rec.iter() {
            values.push(field.parse::<f64>().map_err(|_| {
                err(
                    path,
                    format!("line {}: `{field}` is not a number", line + 2),
                )
            })?);
        }
        rows += 1;
    }
    let rows = Array2::from_shape_vec((rows, header.len()), values)
        .map_err(|e| err(path, format!("ragged table: {e}")))?;
    Ok(Table { header, rows })
}

/// Checks that `files` are the shards 1..N of one sweep, each once.
fn check_shards(dirs: &[PathBuf], files: &[SweepFile]) -> Result<usize, Error> {
    let mut count = None;
    let mut seen: Vec<Option<&Path>> = Vec::new();
    for (dir, f) in dirs.iter().zip(files) {
        let path = dir.join("sweep.json");
        let Some(s) = f.shard else {
            return Err(err(&path, "is the result of an unsharded sweep, not a shard (run `hybridopt sweep … --shard I/N` for each I)".into()));
        };
        let n = *count.get_or_insert(s.count);
        if s.count != n {
            return Err(err(
                &path,
                format!(
                    "is shard {}/{}, but {} is one of {n} shards",
                    s.index,
                    s.count,
                    dirs[0].display()
                ),
            ));
        }
        seen.resize(n, None);
        if let Some(other) = seen[s.index - 1] {
            return Err(err(
                &path,
                format!(
                    "shard {}/{n} is given twice (also in {})",
                    s.index,
                    other.display()
                ),
            ));
        }
        seen[s.index - 1] = Some(dir);
    }
    let n = count.unwrap_or(0);
    let missing: Vec<usize> = (1..=n).filter(|&i| seen[i - 1].is_none()).collect();
    if !missing.is_empty() {
        return Err(Error::MissingShards { missing, count: n });
    }
    Ok(n)
}

/// Merges the shard folders `dirs` (any order).
pub fn merge(dirs: &[PathBuf]) -> Result<SweepResult, Error> {
    if dirs.is_empty() {
        return Err(Error::MissingShards {
            missing: vec![],
            count: 0,
        });
    }
    let files = dirs
        .iter()
        .map(|d| read_file(d))
        .collect::<Result<Vec<_>, _>>()?;
    check_shards(dirs, &files)?;
    let key = files[0].header_key()?;
    for (dir, f) in dirs.iter().zip(&files).skip(1) {
        if f.header_key()? != key {
            return Err(err(
                &dir.join("sweep.json"),
                format!(
                    "comes from another sweep than {} (problem file, parameters, plan or settings differ)",
                    dirs[0].display()
                ),
            ));
        }
    }
    let mut points: Vec<_> = files.iter().flat_map(|f| f.points.clone()).collect();
    points.sort_by_key(|p| p.index);
    let total = files[0].total_points;
    if points.len() != total || points.iter().enumerate().any(|(i, p)| p.index != i) {
        return Err(Error::Invalid(format!(
            "merge: the shards hold {} points with indices that are not 0..{total} each once (a shard folder was changed?)",
            points.len()
        )));
    }
    let (counts, best) = SweepFile::summarize(&points);
    let mut best_trajectory = None;
    let best = match best {
        None => None,
        Some((index, cost)) => {
            let (dir, owner) = dirs
                .iter()
                .zip(&files)
                .find(|(_, f)| f.points.iter().any(|p| p.index == index))
                .ok_or_else(|| Error::Internal("merge: the best point has no shard".into()))?;
            let events = match &owner.best {
                Some(b) if b.index == index => b.events.clone(),
                _ => {
                    return Err(err(
                        &dir.join("sweep.json"),
                        format!("its best point is not point {index}, the best of its points"),
                    ))
                }
            };
            if matches!(owner.plan, Plan::Starts { .. }) {
                best_trajectory = Some(read_table(&dir.join("best_trajectory.csv"))?);
            }
            Some(Best {
                index,
                cost,
                events,
            })
        }
    };
    let mut file = files[0].clone();
    file.shard = None;
    file.counts = counts;
    file.best = best;
    file.points = points;
    Ok(SweepResult {
        file,
        best_trajectory,
    })
}
