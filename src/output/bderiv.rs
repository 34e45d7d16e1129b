//! The JSON interface of `hybridopt bderiv CASE.json [--json]`: a corner and its directions
//! read from JSON, the B-derivative on each direction, and the text report.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::sensitivity::corner::*;

/// A corner and the directions on which to evaluate its B-derivative, as read from JSON:
///
/// ```json
/// { "normals": [[1, 0], [0, 1]],
///   "fields": [ {"signs": [-1, -1], "value": [1, 1]}, {"signs": [1, -1], "value": [0.5, 1]},
///               {"signs": [-1, 1], "value": [1, 0.75]}, {"signs": [1, 1], "value": [1, 0.5]} ],
///   "directions": [[-0.25, 0], [0, -0.25]] }
/// ```
///
/// `normals` are the rows `η_j` (n of them, each of length d); `fields` gives `Γ(b)` for each
/// of the 2^n sign vectors b (−1 = before surface j, 1 = after), in any order.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseFile {
    pub normals: Vec<Vec<f64>>,
    pub fields: Vec<FieldEntry>,
    pub directions: Vec<Vec<f64>>,
}

/// One limiting field `Γ(b)` of a [`CaseFile`].
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldEntry {
    /// b: each entry −1 (before surface j) or +1 (after it).
    pub signs: Vec<i32>,
    pub value: Vec<f64>,
}

/// Output of a case: one result per direction, in input order.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CaseOutput {
    pub results: Vec<CaseResult>,
}

/// B-derivative on one direction.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CaseResult {
    pub direction: Vec<f64>,
    /// `B(direction)`.
    pub value: Vec<f64>,
    /// 0-based surface indices in crossing order.
    pub order: Vec<usize>,
    /// The active piece, as row-major rows.
    pub saltation: Vec<Vec<f64>>,
}

fn check_finite_list(what: &str, v: &[f64]) -> Result<(), CornerError> {
    if let Some((k, value)) = v.iter().copied().enumerate().find(|(_, x)| !x.is_finite()) {
        return Err(CornerError::NonFinite {
            item: format!("{what}[{k}]"),
            value,
        });
    }
    Ok(())
}

impl CaseFile {
    /// Validates the case and builds its [`Corner`] (see [`Corner::new`] for the checks on the
    /// geometry), naming the offending entry in every error.
    pub fn corner(&self) -> Result<Corner, CornerError> {
        let n = self.normals.len();
        let d = self.normals.first().map_or(0, Vec::len);
        if n == 0 || n > MAX_SURFACES || d == 0 {
            return Err(CornerError::CaseSize { n, d });
        }
        for (j, row) in self.normals.iter().enumerate() {
            if row.len() != d {
                return Err(CornerError::Length {
                    item: format!("normals[{j}]"),
                    found: row.len(),
                    expected: d,
                    of: LengthOf::FirstNormal,
                });
            }
            check_finite_list(&format!("normals[{j}]"), row)?;
        }
        let expected = 1usize << n;
        let mut slots: Vec<Option<DVector<f64>>> = vec![None; expected];
        let mut where_seen: HashMap<usize, usize> = HashMap::new();
        for (i, entry) in self.fields.iter().enumerate() {
            if entry.signs.len() != n {
                return Err(CornerError::Length {
                    item: format!("fields[{i}].signs = {}", format_signs(&entry.signs)),
                    found: entry.signs.len(),
                    expected: n,
                    of: LengthOf::CaseSigns,
                });
            }
            if let Some((k, &s)) = entry
                .signs
                .iter()
                .enumerate()
                .find(|(_, &s)| s != -1 && s != 1)
            {
                return Err(CornerError::BadSign {
                    signs: entry.signs.clone(),
                    entry: k,
                    value: s,
                    field: Some(i),
                });
            }
            let mask = signs_to_mask(&entry.signs)?;
            if entry.value.len() != d {
                return Err(CornerError::Length {
                    item: format!("fields[{i}].value (signs {})", format_signs(&entry.signs)),
                    found: entry.value.len(),
                    expected: d,
                    of: LengthOf::Dimension,
                });
            }
            check_finite_list(&format!("fields[{i}].value"), &entry.value)?;
            if let Some(&first) = where_seen.get(&mask) {
                return Err(CornerError::DuplicateSigns {
                    first,
                    second: i,
                    signs: entry.signs.clone(),
                });
            }
            where_seen.insert(mask, i);
            slots[mask] = Some(DVector::from_column_slice(&entry.value));
        }
        let missing: Vec<Vec<i32>> = (0..expected)
            .filter(|&m| slots[m].is_none())
            .map(|m| mask_to_signs(m, n))
            .collect();
        if !missing.is_empty() {
            return Err(CornerError::MissingSigns {
                missing,
                n,
                given: self.fields.len(),
            });
        }
        let fields: Vec<DVector<f64>> = slots.into_iter().flatten().collect();
        let normals = DMatrix::from_fn(n, d, |j, k| self.normals[j][k]);
        Corner::new(normals, fields)
    }

    /// Validates the directions against the state dimension d.
    pub fn direction_vectors(&self, d: usize) -> Result<Vec<DVector<f64>>, CornerError> {
        if self.directions.is_empty() {
            return Err(CornerError::NoDirections { d });
        }
        let mut out = Vec::with_capacity(self.directions.len());
        for (i, v) in self.directions.iter().enumerate() {
            if v.len() != d {
                return Err(CornerError::Length {
                    item: format!("directions[{i}]"),
                    found: v.len(),
                    expected: d,
                    of: LengthOf::Dimension,
                });
            }
            check_finite_list(&format!("directions[{i}]"), v)?;
            out.push(DVector::from_column_slice(v));
        }
        Ok(out)
    }
}

/// Evaluates a validated case: Algorithm 2.1 and the active piece on every direction.
pub fn evaluate_case(case: &CaseFile) -> Result<CaseOutput, CornerError> {
    let corner = case.corner()?;
    let directions = case.direction_vectors(corner.d())?;
    let mut results = Vec::with_capacity(directions.len());
    for (index, dir) in directions.iter().enumerate() {
        let r = bderivative(&corner, dir).map_err(|e| CornerError::Direction {
            index,
            source: Box::new(e),
        })?;
        let saltation = (0..r.saltation.nrows())
            .map(|row| r.saltation.row(row).iter().copied().collect())
            .collect();
        results.push(CaseResult {
            direction: dir.iter().copied().collect(),
            value: r.value.iter().copied().collect(),
            order: r.order,
            saltation,
        });
    }
    Ok(CaseOutput { results })
}

/// Parses a case from JSON, validates it and evaluates it. Errors name the offending entry
/// ([`CornerError`]; JSON syntax errors, [`CornerError::Json`], carry line and column).
pub fn run_case_str(json: &str) -> Result<CaseOutput, CornerError> {
    let case: CaseFile = serde_json::from_str(json).map_err(|e| CornerError::Json {
        message: e.to_string(),
    })?;
    evaluate_case(&case)
}

/// Reads a case file and evaluates it. A read failure is [`Error::Io`]; a parse or validation
/// failure is [`Error::Corner`] with [`CornerError::File`], naming the file.
pub fn run_case_file(path: &Path) -> Result<CaseOutput, Error> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    run_case_str(&text).map_err(|e| {
        Error::Corner(CornerError::File {
            file: path.to_path_buf(),
            source: Box::new(e),
        })
    })
}

/// Shortest round-trip form of a number, with −0 shown as 0.
fn fmt_num(x: f64) -> String {
    format!("{}", x + 0.0)
}

fn fmt_vec(v: &[f64]) -> String {
    let parts: Vec<String> = v.iter().map(|&x| fmt_num(x)).collect();
    format!("({})", parts.join(", "))
}

/// A human-readable report of a case's output (for `hybridopt bderiv` without `--json`):
/// per direction, the crossing order, the value `B(direction)` and the active piece.
pub fn format_case_output(out: &CaseOutput) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "B-derivative at a simultaneous crossing (Algorithm 2.1, Council–Revzen–Burden): {} \
         direction{}",
        out.results.len(),
        if out.results.len() == 1 { "" } else { "s" }
    );
    for (i, r) in out.results.iter().enumerate() {
        let order: Vec<String> = r.order.iter().map(|j| j.to_string()).collect();
        let _ = writeln!(s);
        let _ = writeln!(s, "direction {i}:  {}", fmt_vec(&r.direction));
        let _ = writeln!(
            s,
            "  crossing order (0-based surfaces):  {}",
            order.join(" → ")
        );
        let _ = writeln!(s, "  B(direction):  {}", fmt_vec(&r.value));
        let _ = writeln!(s, "  active piece M_σ (product of saltation matrices):");
        let cells: Vec<Vec<String>> = r
            .saltation
            .iter()
            .map(|row| row.iter().map(|&x| fmt_num(x)).collect())
            .collect();
        let width = cells
            .iter()
            .flat_map(|row| row.iter().map(|c| c.chars().count()))
            .max()
            .unwrap_or(1);
        for row in &cells {
            let padded: Vec<String> = row.iter().map(|c| format!("{c:>width$}")).collect();
            let _ = writeln!(s, "    [ {} ]", padded.join("  "));
        }
    }
    s
}
