//! Reference cases shared by the tests and the benchmark: the simplest walker's section,
//! start states on it, and the published gaits at γ = 0.009.

use crate::integrate::{EventOptions, SolverOptions};
use crate::periodic::map::MapOptions;
use crate::periodic::section::Section;

/// The walker's slope of the reference case (Garcia et al. 1998).
pub const GAMMA: f64 = 0.009;

/// The two period-one gaits at γ = 0.009 as Garcia et al. (1998) report them, (θ*, θ̇*)
/// on the section just after heel strike, to their 5 digits: the long-period stable one
/// and the short-period unstable one.
pub const GARCIA_STABLE: (f64, f64) = (0.20031, -0.19983);
pub const GARCIA_UNSTABLE: (f64, f64) = (0.19393, -0.20386);

/// The walker's section: just after `heel_strike`, one firing per period, `(θ, θ̇)` free.
pub fn walker_section() -> Section {
    Section::after_reset(0, 1, 0, vec![0, 2])
}

/// The state on the section with stance angle θ and rate θ̇: the transition
/// (`θ⁺ = −θ⁻`, `θ̇⁺ = cos 2θ⁻ θ̇⁻`, `φ̇⁺ = cos 2θ⁻ (1 − cos 2θ⁻) θ̇⁻`, reference-models
/// §10) gives `φ = 2θ` and `φ̇ = (1 − cos 2θ) θ̇` in the post-impact values.
pub fn walker_on_section(theta: f64, dtheta: f64) -> Vec<f64> {
    let c = (2.0 * theta).cos();
    vec![theta, 2.0 * theta, dtheta, (1.0 - c) * dtheta]
}

/// The walker's parameters `(γ, start state)`; the start state is unused by the periodic
/// solver (it starts on the section).
pub fn walker_params(gamma: f64) -> Vec<f64> {
    let mut p = vec![gamma];
    p.extend(walker_on_section(0.2, -0.2));
    p
}

/// Dormand–Prince at `rtol = atol = tol`, a period of at most 20 (the gaits' are ~3–4).
pub fn walker_options(tol: f64) -> MapOptions {
    MapOptions {
        solver: SolverOptions {
            rtol: tol,
            atol: tol,
            ..SolverOptions::default()
        },
        events: EventOptions::default(),
        t_max: 20.0,
    }
}
