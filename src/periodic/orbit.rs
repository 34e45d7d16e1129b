//! One periodic orbit, solved and analysed: the fixed point by Newton's method, the
//! multipliers, and (optionally) the sensitivities; with the report the command line
//! prints (`hybridopt periodic --json`; its fields are a contract: add, never rename).

use super::map::CycleEvent;
use super::newton::{solve, FixedPoint, JacobianSource};
use super::projection::GuessProjection;
use super::section::{Section, SectionKind};
use super::sensitivity::{orbit_sensitivities, OrbitSensitivities, RadiusDerivative};
use super::spec::PeriodicSpec;
use super::stability::{pairs, spectrum_on, Multiplier, Spectrum, Stability};
use crate::error::Error;
use crate::model::{Dims, HybridSystem};
use std::collections::BTreeMap;

/// A solved orbit.
#[derive(Debug, Clone)]
pub struct Orbit {
    pub fixed: FixedPoint,
    pub spectrum: Spectrum,
    pub sensitivities: Option<OrbitSensitivities>,
    /// The section it was solved on.
    pub section: Section,
}

/// Solves the orbit of `spec` at parameters `p` from `guess`; with `with_sensitivities`,
/// also differentiates it by `spec.sensitivities`.
pub fn solve_orbit<S: HybridSystem>(
    sys: &S, spec: &PeriodicSpec, p: &[f64], guess: &[f64], with_sensitivities: bool,
) -> Result<Orbit, Error> {
    let fixed = solve(
        sys,
        &spec.section,
        &spec.map,
        &spec.newton,
        p,
        guess,
        JacobianSource::Exact,
    )?;
    let names = sys.dims().states;
    let spectrum = spectrum_on(&fixed.ret.monodromy, &spec.section, &names)?;
    let sensitivities = if with_sensitivities && !spec.sensitivities.is_empty() {
        Some(orbit_sensitivities(
            sys,
            &spec.section,
            &spec.map,
            p,
            &fixed,
            &spectrum,
            &spec.sensitivities,
        )?)
    } else {
        None
    };
    Ok(Orbit {
        fixed,
        spectrum,
        sensitivities,
        section: spec.section.clone(),
    })
}

/// The orbit's sensitivities by name.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SensitivityReport {
    /// `dT/dp`.
    pub period: BTreeMap<String, f64>,
    /// `d max|λ|/dp` (absent where it does not exist: see `spectral_radius_kind`).
    pub spectral_radius: BTreeMap<String, f64>,
    /// Smooth, or nonsmooth with the reason.
    pub spectral_radius_kind: RadiusDerivative,
    /// `dx*/dp` per state.
    pub fixed_point: BTreeMap<String, BTreeMap<String, f64>>,
    /// `d|λ_i|/dp` per section multiplier (by decreasing modulus; null where λ_i is not
    /// simple or is zero).
    pub multiplier_moduli: Vec<BTreeMap<String, Option<f64>>>,
    /// `max |dP/dp_j − dx*/dp_j|` in the dual pass (the IFT predicts 0) and
    /// `max |DP_dual − DP|`: consistency of the two passes, to the integration accuracy.
    pub dual_return_gap: f64,
    pub dual_monodromy_gap: f64,
}

/// The section of a report, by name.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SectionReport {
    /// Just after this guard's reset.
    AfterReset { guard: String, count: usize },
    /// The hyperplane `Σ normal_i x_i = offset` crossed in `direction`; `dependent` is the
    /// component solved from it when the others are free.
    Hyperplane {
        normal: BTreeMap<String, f64>,
        offset: f64,
        direction: super::hyperplane::Crossing,
        count: usize,
        dependent: Option<String>,
    },
}

impl SectionReport {
    pub fn new(sec: &Section, dims: &Dims) -> SectionReport {
        match &sec.kind {
            SectionKind::AfterReset { guard } => SectionReport::AfterReset {
                guard: dims.guard_name(*guard),
                count: sec.count,
            },
            SectionKind::Hyperplane(h) => SectionReport::Hyperplane {
                normal: dims
                    .states
                    .iter()
                    .zip(&h.normal)
                    .filter(|(_, &v)| v != 0.0)
                    .map(|(s, &v)| (s.clone(), v))
                    .collect(),
                offset: h.offset,
                direction: h.crossing,
                count: sec.count,
                dependent: h.dependent(&sec.free).map(|d| dims.states[d].clone()),
            },
        }
    }
}

/// `hybridopt periodic --json`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct OrbitReport {
    pub fixed_point: BTreeMap<String, f64>,
    pub period: f64,
    /// Eigenvalues of `DP` on the section (free coordinates), by decreasing modulus.
    pub multipliers: Vec<Multiplier>,
    /// Eigenvalues of the full-state `DP` (the extra ones are 0: collapsed directions).
    pub monodromy_multipliers: Vec<Multiplier>,
    pub stable: bool,
    pub stability: Stability,
    pub spectral_radius: f64,
    pub residual: f64,
    pub newton_iterations: usize,
    pub residual_history: Vec<f64>,
    pub events: Vec<CycleEvent>,
    /// The free components and `DP` on the section in them (row-major).
    pub free: Vec<String>,
    pub section_jacobian: Vec<Vec<f64>>,
    pub sensitivities: Option<SensitivityReport>,
    /// The Poincaré section.
    pub section: SectionReport,
    /// The guess moved onto the section before Newton's method, when it missed it by little
    /// (absent when the guess was on it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guess_projection: Option<GuessProjection>,
}

impl OrbitReport {
    pub fn new(orbit: &Orbit, dims: &Dims, free: &[usize]) -> OrbitReport {
        let fp = &orbit.fixed;
        let sp = &orbit.spectrum;
        let states = &dims.states;
        let sj = &sp.section_jacobian;
        OrbitReport {
            fixed_point: states.iter().cloned().zip(fp.x.iter().copied()).collect(),
            period: fp.ret.period,
            multipliers: pairs(&sp.section),
            monodromy_multipliers: pairs(&sp.monodromy),
            stable: sp.stability == Stability::Stable,
            stability: sp.stability,
            spectral_radius: sp.spectral_radius,
            residual: fp.residual,
            newton_iterations: fp.iterations,
            residual_history: fp.history.clone(),
            events: fp.ret.events.clone(),
            free: free.iter().map(|&i| states[i].clone()).collect(),
            section_jacobian: (0..sj.nrows())
                .map(|i| sj.row(i).iter().copied().collect())
                .collect(),
            sensitivities: orbit
                .sensitivities
                .as_ref()
                .map(|s| sensitivity_report(s, dims)),
            section: SectionReport::new(&orbit.section, dims),
            guess_projection: fp.projection.clone(),
        }
    }
}

fn sensitivity_report(s: &OrbitSensitivities, dims: &Dims) -> SensitivityReport {
    let pn: Vec<String> = s.params.iter().map(|&j| dims.params[j].clone()).collect();
    let by = |v: &[f64]| -> BTreeMap<String, f64> {
        pn.iter().cloned().zip(v.iter().copied()).collect()
    };
    SensitivityReport {
        period: by(&s.period),
        spectral_radius: match &s.spectral_radius {
            RadiusDerivative::Smooth { gradient } => by(gradient),
            RadiusDerivative::Nonsmooth { .. } => BTreeMap::new(),
        },
        spectral_radius_kind: s.spectral_radius.clone(),
        fixed_point: dims
            .states
            .iter()
            .enumerate()
            .map(|(i, st)| {
                let row: Vec<f64> = s.fixed_point.row(i).iter().copied().collect();
                (st.clone(), by(&row))
            })
            .collect(),
        multiplier_moduli: s
            .moduli
            .iter()
            .map(|row| pn.iter().cloned().zip(row.iter().copied()).collect())
            .collect(),
        dual_return_gap: s.dual_return_gap,
        dual_monodromy_gap: s.dual_monodromy_gap,
    }
}
