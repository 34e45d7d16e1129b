//! Sign vectors and their bit masks (bit j set ⇔ `b_j = +1`; module doc of [`super`]).

use super::*;
use crate::error::Error;

/// The sign vector `b ∈ {−1, +1}^n` of a mask (bit j set ⇔ `b_j = +1`).
pub fn mask_to_signs(mask: usize, n: usize) -> Vec<i32> {
    (0..n)
        .map(|j| if mask & (1usize << j) != 0 { 1 } else { -1 })
        .collect()
}

/// The mask of a sign vector (bit j set ⇔ `b_j = +1`). Every entry must be −1 or +1, and there
/// may be at most [`MAX_SURFACES`] entries.
pub fn signs_to_mask(signs: &[i32]) -> Result<usize, Error> {
    if signs.len() > MAX_SURFACES {
        return Err(Error::Invalid(format!(
            "sign vector {} has {} entries; at most {MAX_SURFACES} surfaces are supported",
            format_signs(signs),
            signs.len()
        )));
    }
    let mut mask = 0usize;
    for (j, &s) in signs.iter().enumerate() {
        match s {
            -1 => {}
            1 => mask |= 1usize << j,
            other => {
                return Err(Error::Invalid(format!(
                    "sign vector {}: entry {j} is {other}; each sign must be -1 (before the \
                     surface) or 1 (after it)",
                    format_signs(signs)
                )))
            }
        }
    }
    Ok(mask)
}

/// Formats a sign vector as in the JSON input, e.g. `[-1, 1]`.
pub fn format_signs(signs: &[i32]) -> String {
    let parts: Vec<String> = signs.iter().map(|s| s.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

pub(crate) fn mask_str(mask: usize, n: usize) -> String {
    format_signs(&mask_to_signs(mask, n))
}
