//! The asymmetric two-guard corner case of the B-derivative's JSON interface (docs/theory.md
//! §7: four sign cells, each its own field) and the error a case file gets: shared by the
//! interface's tests and the error-variant tests.

use hybridopt::output::bderiv::run_case_str;
use hybridopt::sensitivity::corner::CornerError;

/// The case: identity normals, the four cells' fields, two directions.
pub fn asym_case() -> serde_json::Value {
    serde_json::json!({
        "normals": [[1.0, 0.0], [0.0, 1.0]],
        "fields": [
            {"signs": [-1, -1], "value": [1.0, 1.0]},
            {"signs": [-1, 1], "value": [1.0, 0.75]},
            {"signs": [1, -1], "value": [0.5, 1.0]},
            {"signs": [1, 1], "value": [1.0, 0.5]}
        ],
        "directions": [[-0.25, 0.0], [0.0, -0.25]]
    })
}

/// The error a case must give (a panic naming the output if it runs).
pub fn case_error(case: &serde_json::Value) -> CornerError {
    match run_case_str(&case.to_string()) {
        Ok(out) => panic!("expected an error, got {out:?}"),
        Err(e) => e,
    }
}
