//! The load-reversal scaffolding shared by the two systems with memory
//! ([`super::steel_coupon`], [`super::hysteretic_oscillator`]; reference-models §9): two
//! modes, the loading direction s = +1 (mode 0) and s = −1 (mode 1); one guard per mode,
//! the rate that changes sign at a reversal (falling through 0 in mode 0, rising in mode
//! 1), watched only in its own mode; a reversal flips the mode and captures the memory.

use crate::model::{Direction, GuardInfo};

/// The loading direction s of a mode: +1 for mode 0, −1 for mode 1.
pub fn direction(mode: usize) -> f64 {
    if mode == 0 {
        1.0
    } else {
        -1.0
    }
}

/// The mode after a reversal.
pub fn flipped(mode: usize) -> usize {
    1 - mode
}

/// The two reversal guards: `first` (mode 0's, falling) and `second` (mode 1's, rising).
pub fn guards(first: &str, second: &str) -> Vec<GuardInfo> {
    vec![
        GuardInfo::new(first, Direction::Falling),
        GuardInfo::new(second, Direction::Rising),
    ]
}

/// Guard k is watched in mode k only.
pub fn guard_active(mode: usize, k: usize) -> bool {
    mode == k
}
