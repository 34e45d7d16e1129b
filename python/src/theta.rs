//! θ from Python arguments: `None` (the problem's values), a sequence of every entry in
//! the order of `parameter_names`, or a dict of entries to change by name.

use crate::errors::invalid;
use hybridopt::problem::Problem;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The full θ for a call.
pub fn resolve(
    py: Python<'_>, p: &Problem, theta: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<f64>> {
    let mut values = p.theta_values();
    let Some(arg) = theta else {
        return Ok(values);
    };
    if arg.is_none() {
        return Ok(values);
    }
    if let Ok(d) = arg.cast::<PyDict>() {
        for (k, v) in d.iter() {
            let name: String = k.extract()?;
            let i = index_of(py, p, &name)?;
            values[i] = v.extract()?;
        }
        return Ok(values);
    }
    let given: Vec<f64> = arg.extract().map_err(|_| {
        invalid(
            py,
            format!(
                "theta: expected None, a sequence of {} numbers ({}) or a dict by name",
                values.len(),
                names(p).join(", ")
            ),
        )
    })?;
    if given.len() != values.len() {
        return Err(invalid(
            py,
            format!(
                "theta has {} entries; this problem has {}: {}",
                given.len(),
                values.len(),
                names(p).join(", ")
            ),
        ));
    }
    Ok(given)
}

/// θ with the optimized entries replaced by `x` (in the order of `optimized`).
pub fn with_free(py: Python<'_>, p: &Problem, x: &[f64]) -> PyResult<Vec<f64>> {
    let free = p.free_indices();
    if x.len() != free.len() {
        return Err(invalid(
            py,
            format!(
                "x has {} entries; the optimized entries are {}: {}",
                x.len(),
                free.len(),
                free.iter()
                    .map(|&i| p.theta[i].name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let mut values = p.theta_values();
    for (&i, &v) in free.iter().zip(x) {
        values[i] = v;
    }
    Ok(values)
}

/// The names of θ: the parameters, then `channel[k]` for each control coefficient.
pub fn names(p: &Problem) -> Vec<String> {
    p.theta.iter().map(|e| e.name.clone()).collect()
}

/// The index of an entry of θ by name.
pub fn index_of(py: Python<'_>, p: &Problem, name: &str) -> PyResult<usize> {
    p.theta.iter().position(|e| e.name == name).ok_or_else(|| {
        invalid(
            py,
            format!(
                "`{name}` is not an entry of theta; valid: {}",
                names(p).join(", ")
            ),
        )
    })
}
