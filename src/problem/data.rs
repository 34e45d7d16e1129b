//! A measured record's CSV file (docs/guide/identification.md): a header with `t` and
//! output names (and optionally `sigma_<output>` columns), one sample per line, empty cells
//! for what was not measured, `#` lines as comments. Every error names the file, the line
//! and the column, and says what would be valid.

use crate::cost::{Channel, Datum, Samples};
use crate::model::Dims;
use std::collections::BTreeMap;
use std::path::Path;

/// What is wrong with a data file: its path, the line (1-based; 0 for the file as a
/// whole), the column (when one is at fault) and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}{}{}: {message}", if *line > 0 { format!(":{line}") } else { String::new() }, column.as_ref().map_or(String::new(), |c| format!(", column `{c}`")))]
pub struct DataFileError {
    pub file: String,
    pub line: usize,
    pub column: Option<String>,
    pub message: String,
}

/// The horizon the samples must lie in, and the σ of each output's column from the
/// problem file (default 1).
pub struct Frame<'d> {
    pub dims: &'d Dims,
    pub t0: f64,
    pub t_end: f64,
    pub sigma: &'d BTreeMap<String, f64>,
}

/// Reads the record at `path` ([`parse`] of its text).
pub fn read(path: &Path, frame: &Frame<'_>) -> Result<Samples, DataFileError> {
    let text = std::fs::read_to_string(path).map_err(|e| DataFileError {
        file: path.display().to_string(),
        line: 0,
        column: None,
        message: format!("cannot read the data file: {e}"),
    })?;
    parse(&text, &path.display().to_string(), frame)
}

/// How a header column is read.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Role {
    Time,
    Value(usize),
    Sigma(usize),
}

/// Parses a record's text (`file` names it in messages).
pub fn parse(text: &str, file: &str, frame: &Frame<'_>) -> Result<Samples, DataFileError> {
    let err = |line: usize, column: Option<&str>, message: String| DataFileError {
        file: file.to_string(),
        line,
        column: column.map(str::to_string),
        message,
    };
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
    let (hline, header) = lines.next().ok_or_else(|| {
        err(
            0,
            None,
            "the file is empty; it needs a header `t,<output>,…` and at least one sample".into(),
        )
    })?;
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    let (roles, channels) =
        header_roles(&names, frame.dims).map_err(|(c, m)| err(hline, Some(&c), m))?;
    for (name, s) in frame.sigma {
        if !channels.iter().any(|c| c.name == *name) {
            return Err(err(
                0,
                None,
                format!(
                    "[[cost]] sigma names `{name}`, which is not a column of the file; columns: {}",
                    names.join(", ")
                ),
            ));
        }
        if !(s.is_finite() && *s > 0.0) {
            return Err(err(
                0,
                None,
                format!("[[cost]] sigma of `{name}` is {s}; it must be a finite number > 0"),
            ));
        }
    }
    let default_sigma: Vec<f64> = channels
        .iter()
        .map(|c| frame.sigma.get(&c.name).copied().unwrap_or(1.0))
        .collect();
    let (times, cells) = rows(lines, &names, &roles, &default_sigma, frame, &err)?;
    let samples = Samples {
        source: file.to_string(),
        times,
        channels,
        cells,
    };
    if samples.count() == 0 {
        return Err(err(0, None, "the file has no measured values (a header and at least one sample with a value are needed)".into()));
    }
    Ok(samples)
}

/// The sample lines after the header: each line's time and cells (σ from its `sigma_`
/// column, else the column's default), times increasing inside the horizon.
fn rows<'t>(
    lines: impl Iterator<Item = (usize, &'t str)>, names: &[&str], roles: &[Role],
    default_sigma: &[f64], frame: &Frame<'_>,
    err: &dyn Fn(usize, Option<&str>, String) -> DataFileError,
) -> Result<(Vec<f64>, Vec<Vec<Option<Datum>>>), DataFileError> {
    let nch = default_sigma.len();
    let (mut times, mut cells) = (Vec::new(), Vec::new());
    for (ln, line) in lines {
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != names.len() {
            return Err(err(
                ln,
                None,
                format!(
                    "{} fields, but the header has {} columns",
                    fields.len(),
                    names.len()
                ),
            ));
        }
        let mut t = None;
        let mut row: Vec<Option<Datum>> = vec![None; nch];
        let mut sig: Vec<Option<f64>> = vec![None; nch];
        for ((field, role), name) in fields.iter().zip(roles).zip(names) {
            if field.is_empty() {
                if *role == Role::Time {
                    return Err(err(ln, Some(name), "the time is missing".into()));
                }
                continue;
            }
            let v: f64 = field
                .parse()
                .map_err(|_| err(ln, Some(name), format!("`{field}` is not a number")))?;
            if !v.is_finite() {
                return Err(err(ln, Some(name), format!("{field} is not a finite number (NaN and infinities cannot be fitted; leave the cell empty if it was not measured)")));
            }
            match *role {
                Role::Time => t = Some(v),
                Role::Value(c) => {
                    row[c] = Some(Datum {
                        value: v,
                        sigma: 0.0,
                    })
                }
                Role::Sigma(c) if v > 0.0 => sig[c] = Some(v),
                Role::Sigma(_) => {
                    return Err(err(ln, Some(name), format!("σ = {v}; it must be > 0")))
                }
            }
        }
        let t = t.expect("the header has a `t` column");
        if t < frame.t0 || t > frame.t_end {
            return Err(err(
                ln,
                Some("t"),
                format!(
                    "t = {t} is outside the horizon [{}, {}] ([simulation] t0, t_end)",
                    frame.t0, frame.t_end
                ),
            ));
        }
        if let Some(&prev) = times.last() {
            if t <= prev {
                return Err(err(ln, Some("t"), format!("t = {t} does not increase (the line before has t = {prev}); sort the samples by time, one line per instant")));
            }
        }
        for (c, d) in row.iter_mut().enumerate() {
            if let Some(d) = d {
                d.sigma = sig[c].unwrap_or(default_sigma[c]);
            }
        }
        times.push(t);
        cells.push(row);
    }
    Ok((times, cells))
}

/// Each header column's role, and the outputs measured (in file order); an error names
/// the column at fault.
fn header_roles(
    names: &[&str], dims: &Dims,
) -> Result<(Vec<Role>, Vec<Channel>), (String, String)> {
    let valid = || {
        format!(
            "valid columns: t, the outputs ({}), and sigma_<output>",
            dims.outputs.join(", ")
        )
    };
    let mut roles = Vec::with_capacity(names.len());
    let mut channels: Vec<Channel> = Vec::new();
    for name in names {
        if roles.iter().zip(names).any(|(_, n)| n == name) {
            return Err((name.to_string(), "the column appears twice".into()));
        }
        let role = if *name == "t" {
            Role::Time
        } else if let Some(o) = dims.output_index(name) {
            channels.push(Channel {
                output: o,
                name: name.to_string(),
            });
            Role::Value(channels.len() - 1)
        } else if name.starts_with("sigma_") {
            Role::Sigma(usize::MAX)
        } else {
            return Err((
                name.to_string(),
                format!("not an output of the system; {}", valid()),
            ));
        };
        roles.push(role);
    }
    // σ columns name a value column of the file
    for (role, name) in roles.iter_mut().zip(names) {
        if let Role::Sigma(c) = role {
            let of = &name["sigma_".len()..];
            *c = channels
                .iter()
                .position(|ch| ch.name == of)
                .ok_or_else(|| {
                    (
                        name.to_string(),
                        format!(
                            "σ of `{of}`, which is not a value column of the file; {}",
                            valid()
                        ),
                    )
                })?;
        }
    }
    if !roles.contains(&Role::Time) {
        return Err((
            "t".into(),
            format!("the header has no `t` column; {}", valid()),
        ));
    }
    if channels.is_empty() {
        return Err((
            names.join(","),
            format!("the header names no output; {}", valid()),
        ));
    }
    Ok((roles, channels))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::HybridSystem;

    fn frame_of<'d>(dims: &'d Dims, sigma: &'d BTreeMap<String, f64>) -> Frame<'d> {
        Frame {
            dims,
            t0: 0.0,
            t_end: 2.0,
            sigma,
        }
    }

    /// Cells, σ (from the table and a σ column) and empty cells are read as written.
    #[test]
    fn reads_values_sigmas_and_gaps() {
        let dims = crate::systems::BouncingBall.dims();
        let sigma = BTreeMap::from([("y".to_string(), 0.5)]);
        let text = "# a comment\nt,y,v,sigma_v\n0.0,1.0,,\n0.5,0.8,-2.0,0.25\n";
        let s = parse(text, "d.csv", &frame_of(&dims, &sigma)).unwrap();
        assert_eq!(s.times, vec![0.0, 0.5]);
        assert_eq!(s.count(), 3);
        assert_eq!(s.cells[0][1], None);
        assert_eq!(
            s.cells[1][0],
            Some(Datum {
                value: 0.8,
                sigma: 0.5
            })
        );
        assert_eq!(
            s.cells[1][1],
            Some(Datum {
                value: -2.0,
                sigma: 0.25
            })
        );
    }

    /// Each bad input names the file, the line and the column.
    #[test]
    fn errors_name_file_line_and_column() {
        let dims = crate::systems::BouncingBall.dims();
        let none = BTreeMap::new();
        let f = frame_of(&dims, &none);
        let cases = [
            ("", "d.csv: the file is empty"),
            ("t,height\n0,1\n", "d.csv:1, column `height`: not an output"),
            (
                "y\n1\n",
                "d.csv:1, column `t`: the header has no `t` column",
            ),
            (
                "t,y\n0.5,1\n0.2,1\n",
                "d.csv:3, column `t`: t = 0.2 does not increase",
            ),
            (
                "t,y\n0.5,NaN\n",
                "d.csv:2, column `y`: NaN is not a finite number",
            ),
            (
                "t,y\n3.0,1\n",
                "d.csv:2, column `t`: t = 3 is outside the horizon",
            ),
            (
                "t,y\n0.5,1,2\n",
                "d.csv:2: 3 fields, but the header has 2 columns",
            ),
            ("t,y\n0.5,\n", "d.csv: the file has no measured values"),
            ("t,y,sigma_v\n0.5,1,1\n", "column `sigma_v`: σ of `v`"),
            ("t,y,sigma_y\n0.5,1,0\n", "d.csv:2, column `sigma_y`: σ = 0"),
            (
                "t,y\n0.5,abc\n",
                "d.csv:2, column `y`: `abc` is not a number",
            ),
        ];
        for (text, want) in cases {
            let e = parse(text, "d.csv", &f).unwrap_err().to_string();
            assert!(e.starts_with(want) || e.contains(want), "{text:?}: {e}");
        }
        let bad_sigma = BTreeMap::from([("v".to_string(), 1.0)]);
        let e = parse("t,y\n0,1\n", "d.csv", &frame_of(&dims, &bad_sigma)).unwrap_err();
        assert!(e.to_string().contains("sigma names `v`"), "{e}");
    }
}
