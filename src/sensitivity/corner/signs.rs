//! Sign vectors and their bit masks (bit j set ⇔ `b_j = +1`; module doc of [`super`]).
use super::error::CornerError;
use super::limits::MAX_SURFACES;

/// The sign vector `b ∈ {−1, +1}^n` of a mask (bit j set ⇔ `b_j = +1`).
pub fn mask_to_signs(mask: usize, n: usize) -> Vec<i32> {
    (0..n)
        .map(|j| if mask & (1usize << j) != 0 { 1 } else { -1 })
        .collect()
}

/// The mask of a sign vector (bit j set ⇔ `b_j = +1`). Every entry must be −1 or +1, and there
/// may be at most [`MAX_SURFACES`] entries.
pub fn signs_to_mask(signs: &[i32]) -> Result<usize, CornerError> {
    if signs.len() > MAX_SURFACES {
        return Err(CornerError::TooManySigns {
            signs: signs.to_vec(),
        });
    }
    let mut mask = 0usize;
    for (j, &s) in signs.iter().enumerate() {
        match s {
            -1 => {}
            1 => mask |= 1usize << j,
            value => {
                return Err(CornerError::BadSign {
                    signs: signs.to_vec(),
                    entry: j,
                    value,
                    field: None,
                })
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
