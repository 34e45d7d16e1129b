//! `Problem.feedback` and `Problem.closed_loop`: the design of a problem's `[feedback]`
//! table as `hybridopt feedback` makes it (its summary as a dict, the gains as numpy
//! arrays), and a closed-loop run of a periodic design from a pushed start.

use hybridopt::error::Error;
use hybridopt::feedback::{
    periodic_lqr, run_steps_bounded, run_track, simulate_track, tvlqr, ClosedLoop, PeriodTable,
    PeriodicOptions, Reference, RunTable, StepsOutcome,
};
use hybridopt::output::feedback::{feedback_to_folder, FeedbackRequest};
use hybridopt::problem::Problem;
use hybridopt::setup::Setup;
use hybridopt::systems::Builtin;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The gains table of a feedback folder: t, mode, x_ref (n×nx), u_nom (n×nu) and K
/// (n×nu×nx), read back from its `gains.csv`.
pub struct GainTable {
    pub t: Vec<f64>,
    pub mode: Vec<f64>,
    pub x_ref: Vec<Vec<f64>>,
    pub u_nom: Vec<Vec<f64>>,
    pub k: Vec<Vec<Vec<f64>>>,
}

/// Runs `hybridopt feedback` into `out`; returns the summary's JSON text and the gains.
pub fn design(
    p: &Problem, out: PathBuf, summary: Option<PathBuf>, optimize: bool, trials: Option<usize>,
    animation: bool,
) -> Result<(String, GainTable), Error> {
    let req = FeedbackRequest {
        out,
        summary,
        optimize,
        trials,
        animation,
    };
    let (report, dir) = feedback_to_folder(p, &req, Instant::now())?;
    let table = read_gains(&dir.join("gains.csv"), p.dims.nx(), p.dims.controls.len())?;
    Ok((hybridopt::output::to_json(&report)?, table))
}

/// `gains.csv` (t, mode, x_ref, u_nom, K row by row).
fn read_gains(path: &Path, nx: usize, nu: usize) -> Result<GainTable, Error> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut g = GainTable {
        t: Vec::new(),
        mode: Vec::new(),
        x_ref: Vec::new(),
        u_nom: Vec::new(),
        k: Vec::new(),
    };
    for line in text.lines().skip(1) {
        let v: Vec<f64> = line
            .split(',')
            .map(|s| s.parse().unwrap_or(f64::NAN))
            .collect();
        if v.len() != 2 + nx + nu + nu * nx {
            return Err(Error::Internal(format!(
                "{}: a row of {} values",
                path.display(),
                v.len()
            )));
        }
        g.t.push(v[0]);
        g.mode.push(v[1]);
        g.x_ref.push(v[2..2 + nx].to_vec());
        g.u_nom.push(v[2 + nx..2 + nx + nu].to_vec());
        let k0 = 2 + nx + nu;
        g.k.push(
            (0..nu)
                .map(|c| v[k0 + c * nx..k0 + (c + 1) * nx].to_vec())
                .collect(),
        );
    }
    Ok(g)
}

/// A closed-loop run: the impact times, the states just after them (with the
/// controller's states last: the phase, and along a run the count of impacts), whether
/// every step was taken (along a run: whether the run reached its end) and, if not, why;
/// along a run also the final state, whether it reached the problem's targets and their
/// errors.
pub struct ClosedRun {
    pub t: Vec<f64>,
    pub x_plus: Vec<Vec<f64>>,
    pub walked: bool,
    pub why: Option<String>,
    pub track: Option<TrackResult>,
}

/// Along a run: the final time and state, the targets reached, their errors.
pub struct TrackResult {
    pub t_final: f64,
    pub x_final: Vec<f64>,
    pub reached: bool,
    pub errors: Vec<f64>,
}

/// The periodic design of `p`'s `[feedback]` at `theta` run from the orbit's start moved
/// by `push` (one value per state) for `steps` strikes of the closing guard, the control
/// clamped to the channels' bounds; `gains = false` runs the open loop (K = 0).
pub fn closed_loop(
    p: &Problem, setup: &Setup<'_, Builtin>, theta: &[f64], push: &[f64], steps: usize, gains: bool,
) -> Result<ClosedRun, Error> {
    let invalid = Error::Invalid;
    let fb = p.feedback.as_ref().ok_or_else(|| {
        invalid("the problem has no [feedback] table: closed_loop needs one".into())
    })?;
    if push.len() != p.dims.nx() {
        return Err(invalid(format!(
            "push has {} values; give one per state ({})",
            push.len(),
            p.dims.states.join(", ")
        )));
    }
    let guard = fb.guard.or_else(|| {
        p.shooting
            .as_ref()
            .and_then(|s| s.closure.as_ref())
            .map(|c| c.guard)
    });
    let Some(guard) = guard else {
        return along_run(p, setup, theta, push, gains);
    };
    let opts = PeriodicOptions::default();
    let plqr = periodic_lqr(setup, theta, &fb.weights, guard, fb.clock, opts)
        .map_err(Error::from_feedback)?;
    let mut table = PeriodTable::from_lqr(&plqr.lqr, 2401).map_err(Error::from_feedback)?;
    if !gains {
        table = table.without_gains();
    }
    let cl = ClosedLoop::new(&p.system, table, fb.clock, limits(p));
    let (_, x0, _) = plqr
        .lqr
        .nominal_at(setup.t0())
        .map_err(Error::from_feedback)?;
    let x: Vec<f64> = x0.iter().zip(push).map(|(a, b)| a + b).collect();
    let mode = plqr.lqr.nominal.segments[0].mode;
    let np = setup.np();
    let out = run_steps_bounded(
        &cl,
        mode,
        &theta[..np],
        (&x, 0.0),
        guard,
        steps,
        2.0 * plqr.period,
        setup.solver(),
        setup.events(),
    )?;
    let (walked, why) = match &out {
        StepsOutcome::Walked(_) => (true, None),
        StepsOutcome::Fell { why, .. } => (false, Some(why.clone())),
    };
    Ok(ClosedRun {
        t: out.steps().iter().map(|s| s.t).collect(),
        x_plus: out.steps().iter().map(|s| s.x_plus.clone()).collect(),
        walked,
        why,
        track: None,
    })
}

/// The time-varying design of `p`'s `[feedback]` along its run at `theta`, run closed loop
/// over the horizon from the nominal start moved by `push` (as `hybridopt feedback` runs
/// its trials: the same table, extension and clock rule).
fn along_run(
    p: &Problem, setup: &Setup<'_, Builtin>, theta: &[f64], push: &[f64], gains: bool,
) -> Result<ClosedRun, Error> {
    let fb = p.feedback.as_ref().expect("checked by the caller");
    let lqr = tvlqr(setup, theta, &fb.weights).map_err(Error::from_feedback)?;
    let (t0, tf) = lqr.span();
    let ext = hybridopt::output::feedback::EXTENSION * (tf - t0);
    let mut table = RunTable::from_lqr(&lqr, 4801, ext).map_err(Error::from_feedback)?;
    if !gains {
        table = table.without_gains();
    }
    let cl = ClosedLoop::new(&p.system, table, fb.clock, limits(p));
    let x0 = lqr.nominal_at(t0).map_err(Error::from_feedback)?.1;
    let x: Vec<f64> = x0.iter().zip(push).map(|(a, b)| a + b).collect();
    let mode = lqr.nominal.segments[0].mode;
    let pv = &theta[..setup.np()];
    let targets = hybridopt::output::feedback::targets(p, fb);
    let (solver, events) = (setup.solver(), setup.events());
    let r = run_track(&cl, mode, pv, &x, (t0, tf), &targets, solver, events)?;
    let x_plus = match simulate_track(&cl, mode, pv, &x, (t0, tf), solver, events) {
        Ok(traj) => traj.events.iter().map(|e| e.after.y.clone()).collect(),
        Err(_) => Vec::new(),
    };
    Ok(ClosedRun {
        t: r.events.iter().map(|e| e.1).collect(),
        x_plus,
        walked: r.failed.is_none(),
        why: r.failed.clone(),
        track: Some(TrackResult {
            t_final: r.t_final,
            x_final: r.x_final,
            reached: r.reached,
            errors: r.errors,
        }),
    })
}

/// Per control channel the bounds of its coefficients, if every channel has both.
fn limits(p: &Problem) -> Option<Vec<(f64, f64)>> {
    let grid = p.controls.as_ref()?;
    let np = p.dims.np();
    (0..grid.channels)
        .map(|c| {
            let e = &p.theta[np + c * grid.n_coef()];
            Some((e.lower?, e.upper?))
        })
        .collect()
}
