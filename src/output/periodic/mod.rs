//! `hybridopt periodic` (the orbit, its stability and a continuation) and `optimize` on a
//! `[periodic]` problem (the gait objective): the reports and the results folders.

pub(crate) mod figures;
pub(crate) mod files;
mod summary;

pub use summary::GaitSummary;

use crate::error::Error;
use crate::output::atomic::Staging;
use crate::periodic::continuation::{self as cont, Bifurcation, Branch};
use crate::periodic::optimize::GaitOptimum;
use crate::periodic::orbit::{solve_orbit, OrbitReport};
use crate::problem::Problem;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// `periodic --json`: the orbit's report and, with `--continue`, a summary of the branch
/// (a contract: add fields, never rename or drop).
#[derive(Debug, Clone, Serialize)]
pub struct PeriodicReport {
    #[serde(flatten)]
    pub orbit: OrbitReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continuation: Option<ContinuationSummary>,
}

/// `"continuation"`: the parameter followed, the number of points, the bifurcations met
/// and why the branch stopped early (null when it reached the range's end).
#[derive(Debug, Clone, Serialize)]
pub struct ContinuationSummary {
    pub param: String,
    pub points: usize,
    pub bifurcations: Vec<Bifurcation>,
    pub stopped: Option<String>,
}

impl PeriodicReport {
    /// The terminal report of problem `name`.
    pub fn text(&self, name: &str, dir: &Path) -> String {
        let r = &self.orbit;
        let mut o = format!(
            "{name}: period {:.10}, residual {:.1e} after {} Newton iteration(s); spectral radius {:.6} ({})\n",
            r.period,
            r.residual,
            r.newton_iterations,
            r.spectral_radius,
            if r.stable { "stable" } else { "unstable" }
        );
        if let Some(g) = &r.guess_projection {
            o += &format!(
                "the guess missed the section (guard '{}' = {:e}) and was moved onto it: {:?} → {:?}\n",
                g.guard, g.miss, g.guess, g.start
            );
        }
        o += &format!("fixed point: {:?}\n", r.fixed_point);
        o += &format!("multipliers on the section: {:?}\n", r.multipliers);
        if let Some(b) = &self.continuation {
            for f in &b.bifurcations {
                o += &format!("{:?} at {} = {:.8}\n", f.kind, b.param, f.at);
            }
            if let Some(s) = &b.stopped {
                o += &format!("branch stopped: {s}\n");
            }
        }
        o += &format!("results in {}\n", dir.display());
        o
    }
}

/// Solves `p`'s periodic orbit (and with `continuation` = `NAME=LO:HI:N` follows it) and
/// writes the folder `out` (staged, swapped in atomically).
pub fn periodic_to_folder(
    p: &Problem, continuation: Option<&str>, out: &Path,
) -> Result<(PeriodicReport, PathBuf), Error> {
    let spec = p.periodic_spec()?;
    let range = continuation
        .map(|c| cont::Range::parse(c, &p.dims))
        .transpose()?;
    let pv = p.theta_values()[..p.dims.np()].to_vec();
    let o = solve_orbit(&p.system, &spec, &pv, &spec.guess, true)?;
    let orbit = OrbitReport::new(&o, &p.dims, &spec.section.free);
    let branch: Option<Branch> = match &range {
        Some(r) => {
            let mut p0 = pv.clone();
            p0[r.param] = r.lo;
            Some(cont::continue_orbit(&p.system, &spec, &p0, &spec.guess, r)?)
        }
        None => None,
    };
    let stage = Staging::new(out)?;
    files::write_orbit(&stage, &p.name, &p.system, &spec, &pv, &o, &orbit)?;
    if let Some(b) = &branch {
        files::write_branch(&stage, &p.name, b)?;
    }
    let dir = stage.commit()?;
    let continuation = branch.map(|b| ContinuationSummary {
        param: b.param,
        points: b.points.len(),
        bifurcations: b.bifurcations,
        stopped: b.stopped,
    });
    Ok((
        PeriodicReport {
            orbit,
            continuation,
        },
        dir,
    ))
}

/// Writes the results of `r`, a gait optimization of `p` ([`Problem::optimize_gait`]):
/// the gait's files and the orbit re-solved at the final parameters, into the folder `out`
/// (staged, swapped in atomically); returns the folder.
pub fn write_gait_results(p: &Problem, r: &GaitOptimum, out: &Path) -> Result<PathBuf, Error> {
    let spec = p.periodic_spec()?;
    let pf = p.gait_params(r);
    let o = solve_orbit(&p.system, &spec, &pf, &spec.guess, true)?;
    let report = OrbitReport::new(&o, &p.dims, &spec.section.free);
    let stage = Staging::new(out)?;
    files::write_gait(&stage, p, r)?;
    files::write_orbit(&stage, &p.name, &p.system, &spec, &pf, &o, &report)?;
    stage.commit()
}

/// The terminal report of a gait optimization of problem `name`.
pub fn gait_text(name: &str, r: &GaitOptimum, dir: &Path) -> String {
    format!(
        "{name}: {} → {} ({}; {} iterations, {} evaluations); spectral radius {:.6} → {:.6} (re-solved from the guess: {:.6})\n{:?} = {:?}; results in {}\n",
        r.initial.value,
        r.last.value,
        r.termination,
        r.iterations,
        r.evaluations,
        r.initial.spectral_radius,
        r.last.spectral_radius,
        r.verified_spectral_radius,
        r.names,
        r.last.params,
        dir.display()
    )
}
