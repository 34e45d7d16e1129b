//! The work of `hybridopt gradient`: timed evaluations by each method, τ, the
//! simultaneous-event analysis, and from them the typed [`GradientReport`].

use super::{
    ByName, EventSummary, GradientEvent, GradientReport, Memory, ObjectiveGradient, OneSided,
    Saltation, TauSource, Tolerances,
};
use crate::error::Error;
use crate::integrate::Trajectory;
use crate::model::HybridSystem;
use crate::sensitivity::fd::FdOptions;
use crate::sensitivity::forward::{forward_sensitivity, forward_sensitivity_lean, ForwardResult};
use crate::sensitivity::simultaneous::{self, SimultaneousEvent};
use crate::sensitivity::timing::{median, Samples, TimingReport};
use crate::sensitivity::{
    evaluate_with, EvaluateOptions, Evaluation, EventSensitivity, GradientMethod,
};
use crate::setup::Setup;
use std::time::Instant;

/// What `hybridopt gradient` computes.
#[derive(Debug, Clone)]
pub struct GradientOptions {
    /// The methods, the requested one first (every method for `--method all`).
    pub methods: Vec<GradientMethod>,
    /// Timed runs per method (medians; at least 1).
    pub repeat: usize,
    /// Report the events' τ = dt_e/dθ when a run computed it (the direct and dual runs,
    /// or the pass for the figures).
    pub tau: bool,
    /// When no timed run computes τ (adjoint, FD), compute it by one direct pass outside
    /// the timings (`--tau`; it costs about the direct method's time, which can be several
    /// times the adjoint's).
    pub tau_pass: bool,
    /// Keep a forward-sensitivity pass for the `--out` figures.
    pub figures: bool,
    /// The FD step rule (the Richardson ladder, or `--fd-step`/`--fd-scale`'s fixed step).
    pub fd: FdOptions,
}

/// One method's timed runs: its last evaluation and every timing.
#[derive(Debug, Clone)]
pub struct MethodRun {
    pub method: GradientMethod,
    pub evaluation: Evaluation,
    pub samples: Samples,
}

/// The simultaneous-event analysis (theory §7), when θ has such events.
#[derive(Debug, Clone)]
pub struct Nonsmooth {
    pub nonsmooth: bool,
    pub max_relative_difference: f64,
    /// Dψ₀(θ; +e_k), Dψ₀(θ; −e_k) for every entry k of θ.
    pub one_sided: Vec<(f64, f64)>,
}

/// Where the events' τ = dt_e/dθ came from.
#[derive(Debug, Clone, Copy)]
pub struct TauOrigin {
    pub from: TauSource,
    /// The wall time of the direct pass run for τ alone ([`TauSource::DirectPass`]).
    pub pass_s: Option<f64>,
}

/// The plain simulation's median time: from a method's timed runs when one measured it,
/// else from `repeat` runs of `simulate` (`from` names which).
#[derive(Debug, Clone)]
pub struct PlainTiming {
    pub median_s: f64,
    pub from: String,
}

/// Everything `hybridopt gradient` computed at θ.
pub struct GradientRun {
    /// The untimed plain run (warm-up; its stats and events are the report's).
    pub trajectory: Trajectory,
    /// The methods' runs, the requested one first.
    pub runs: Vec<MethodRun>,
    /// The direct pass run for τ or for the figures, outside the timings.
    pub forward: Option<ForwardResult>,
    /// Where τ came from (`None` without τ).
    pub tau: Option<TauOrigin>,
    /// The plain simulation's median time and where it was measured.
    pub plain: PlainTiming,
    /// The simultaneous events at θ.
    pub groups: Vec<SimultaneousEvent>,
    pub nonsmooth: Option<Nonsmooth>,
    pub repeat: usize,
}

/// Runs `hybridopt gradient`'s work at θ: one untimed plain run (the warm-up: first
/// allocations, cold caches), `repeat` timed evaluations by each method, τ, and at
/// simultaneous events the crossing orders' gradients and the one-sided derivatives.
pub fn run_gradient<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], opts: &GradientOptions,
) -> Result<GradientRun, Error> {
    if opts.repeat == 0 || opts.methods.is_empty() {
        return Err(Error::Flag {
            flag: "--repeat".into(),
            value: opts.repeat.to_string(),
            message: "must be at least 1".into(),
        });
    }
    // the report reads the run's events and counts; the `--out` figures' adjoint history
    // replays its checkpoints
    let trajectory = if opts.figures {
        setup.simulate_compact(theta)?
    } else {
        setup.simulate_lean(theta)?
    };
    let runs = timed_runs(setup, theta, &opts.methods, opts.repeat, opts.fd)?;
    let plain = plain_timing(setup, theta, &runs, opts.repeat)?;
    let from_run = runs
        .iter()
        .filter(|_| opts.tau)
        .find(|r| r.evaluation.tau.is_some())
        .map(|r| r.method);
    let need_pass = opts.figures || (opts.tau && opts.tau_pass && from_run.is_none());
    let (forward, pass_s) = if need_pass {
        let t0 = Instant::now();
        // dense output only for the figures
        let fw = if opts.figures {
            forward_sensitivity(setup, theta)?
        } else {
            forward_sensitivity_lean(setup, theta)?
        };
        (Some(fw), Some(t0.elapsed().as_secs_f64()))
    } else {
        (None, None)
    };
    let origin = |from| TauOrigin { from, pass_s: None };
    let tau = match from_run {
        _ if !opts.tau => None,
        Some(GradientMethod::Dual) => Some(origin(TauSource::Dual)),
        Some(_) => Some(origin(TauSource::Direct)),
        None if need_pass => Some(TauOrigin {
            from: TauSource::DirectPass,
            pass_s,
        }),
        None => None,
    };
    let groups = simultaneous::simultaneous_events(setup, &trajectory, theta)?;
    let nonsmooth = if groups.is_empty() {
        None
    } else {
        Some(nonsmooth_analysis(setup, theta)?)
    };
    Ok(GradientRun {
        trajectory,
        runs,
        forward,
        tau,
        plain,
        groups,
        nonsmooth,
        repeat: opts.repeat,
    })
}

/// `repeat` timed evaluations by each method.
fn timed_runs<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], methods: &[GradientMethod], repeat: usize, fd: FdOptions,
) -> Result<Vec<MethodRun>, Error> {
    let mut runs = Vec::with_capacity(methods.len());
    for &method in methods {
        let mut samples = Samples::default();
        let options = EvaluateOptions {
            fd,
            ..EvaluateOptions::new(method)
        };
        let mut last = evaluate_with(setup, theta, &options)?;
        samples.push(&last.timing);
        for _ in 1..repeat {
            // the previous run's trajectory is freed before the next one is built, so
            // `--repeat` holds one evaluation at a time
            drop(last);
            last = evaluate_with(setup, theta, &options)?;
            samples.push(&last.timing);
        }
        runs.push(MethodRun {
            method,
            evaluation: last,
            samples,
        });
    }
    Ok(runs)
}

/// `forward_s` and where it was measured: the plain simulation that starts each timed run
/// of the first method that has one (adjoint, fd, dual); a separate loop of plain
/// simulations for `direct` alone.
fn plain_timing<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], runs: &[MethodRun], repeat: usize,
) -> Result<PlainTiming, Error> {
    if let Some(f) = runs.iter().find_map(|r| {
        r.samples.forward_median().map(|median_s| PlainTiming {
            median_s,
            from: r.method.name().to_string(),
        })
    }) {
        return Ok(f);
    }
    let mut tf = Vec::with_capacity(repeat);
    for _ in 0..repeat {
        let t0 = Instant::now();
        setup.simulate_lean(theta)?;
        tf.push(t0.elapsed().as_secs_f64());
    }
    Ok(PlainTiming {
        median_s: median(&tf).unwrap_or(0.0),
        from: "simulate".to_string(),
    })
}

/// Whether ψ is nonsmooth at θ (the crossing orders' gradients) and the one-sided
/// derivatives of the first objective along ±e_k (theory §7).
fn nonsmooth_analysis<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64],
) -> Result<Nonsmooth, Error> {
    let ns = simultaneous::piece_gradients(setup, theta)?;
    let dirs: Vec<Vec<f64>> = (0..theta.len())
        .flat_map(|k| {
            [1.0, -1.0].map(|sign| {
                let mut d = vec![0.0; theta.len()];
                d[k] = sign;
                d
            })
        })
        .collect();
    let dd = simultaneous::directional_derivatives(setup, theta, &dirs)?;
    let one_sided = dd
        .chunks(2)
        .map(|pm| (pm[0].derivatives[0], pm[1].derivatives[0]))
        .collect();
    Ok(Nonsmooth {
        nonsmooth: ns.nonsmooth,
        max_relative_difference: ns.max_relative_difference,
        one_sided,
    })
}

impl GradientRun {
    /// The requested method's run.
    pub fn main(&self) -> &MethodRun {
        &self.runs[0]
    }

    /// The events with τ, when τ was computed.
    pub fn tau_events(&self) -> Option<&[EventSensitivity]> {
        match self.tau?.from {
            TauSource::DirectPass => self.forward.as_ref().map(|f| f.events.as_slice()),
            _ => self.runs.iter().find_map(|r| r.evaluation.tau.as_deref()),
        }
    }

    /// The typed report; `objective_names` names the setup's objectives, `started` is
    /// when the command started (for `timing.wall_s`).
    pub fn report<S: HybridSystem>(
        &self, setup: &Setup<'_, S>, objective_names: &[String], started: Instant,
    ) -> GradientReport {
        let names = setup.theta_names();
        let by_name =
            |g: &[f64]| -> ByName { names.iter().cloned().zip(g.iter().copied()).collect() };
        let main = &self.main().evaluation;
        let objectives = objective_names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let o = ObjectiveGradient {
                    cost: main.values[i],
                    gradient: by_name(&main.gradients[i]),
                };
                (n.clone(), o)
            })
            .collect();
        let timing = TimingReport {
            forward_s: self.plain.median_s,
            gradient_s: self.main().samples.total_median().unwrap_or(0.0),
            methods: self
                .runs
                .iter()
                .map(|r| {
                    let t = r.samples.total_median().unwrap_or(0.0);
                    (r.method.name().to_string(), t)
                })
                .collect(),
            repeat: self.repeat,
            forward_from: self.plain.from.clone(),
            tau_s: self.tau.and_then(|t| t.pass_s),
            wall_s: started.elapsed().as_secs_f64(),
            compile_s: None,
        };
        let ns = self.nonsmooth.as_ref();
        let fd = self.runs.iter().find_map(|r| r.evaluation.fd.as_ref());
        GradientReport {
            fd_error_estimate: fd
                .and_then(|f| f.error_estimates.as_ref())
                .map(|e| by_name(&e[0])),
            fd_step: fd.map(|f| by_name(&f.steps[0])),
            cost: main.values[0],
            gradient: by_name(&main.gradients[0]),
            witnesses: self
                .runs
                .iter()
                .map(|r| {
                    let g = by_name(&r.evaluation.gradients[0]);
                    (r.method.name().to_string(), g)
                })
                .collect(),
            objectives,
            events: self.events(setup, &by_name),
            stats: self.trajectory.stats.into(),
            nonsmooth: ns.map(|n| n.nonsmooth),
            one_sided: ns.map(|n| {
                let pm = n.one_sided.iter();
                names
                    .iter()
                    .cloned()
                    .zip(pm.map(|&(plus, minus)| OneSided { plus, minus }))
                    .collect()
            }),
            pieces_max_relative_difference: ns.map(|n| n.max_relative_difference),
            timing,
            work: self
                .runs
                .iter()
                .map(|r| (r.method.name().to_string(), r.evaluation.stats))
                .collect(),
            tau_from: self.tau.map(|t| t.from),
            tolerances: Tolerances {
                rtol: setup.solver.rtol,
                atol: setup.solver.atol,
            },
            memory: Memory::now(),
            constraints: None,
        }
    }

    /// The event list: τ by name when computed; simultaneous crossings with their guards
    /// and every crossing order's saltation matrix (state block; none above 4 guards).
    fn events<S: HybridSystem>(
        &self, setup: &Setup<'_, S>, by_name: &dyn Fn(&[f64]) -> ByName,
    ) -> Vec<GradientEvent> {
        let d = &setup.dims;
        let event = |t, guard, before, after, dt_dp| GradientEvent {
            event: EventSummary {
                t,
                guard: d.guard_name(guard),
                mode_before: d.mode_name(before),
                mode_after: d.mode_name(after),
            },
            dt_dp,
            simultaneous: None,
            saltations: None,
        };
        let mut events: Vec<GradientEvent> = match self.tau_events() {
            Some(evs) => evs
                .iter()
                .map(|e| {
                    event(
                        e.t,
                        e.guard,
                        e.mode_before,
                        e.mode_after,
                        Some(by_name(&e.tau)),
                    )
                })
                .collect(),
            None => (self.trajectory.events.iter())
                .map(|e| event(e.t, e.guard, e.mode_before(), e.mode_after(), None))
                .collect(),
        };
        let nx = setup.nx();
        for g in &self.groups {
            let guards: Vec<String> = g.guards.iter().map(|&k| d.guard_name(k)).collect();
            let saltations: Vec<Saltation> = if g.guards.len() <= 4 {
                g.pieces
                    .iter()
                    .map(|pc| Saltation {
                        order: pc.guard_order.iter().map(|&k| d.guard_name(k)).collect(),
                        matrix: (0..nx)
                            .map(|r| (0..nx).map(|c| pc.saltation[(r, c)]).collect())
                            .collect(),
                    })
                    .collect()
            } else {
                vec![]
            };
            for &i in &g.events {
                if let Some(ev) = events.get_mut(i) {
                    ev.simultaneous = Some(guards.clone());
                    ev.saltations = Some(saltations.clone());
                }
            }
        }
        events
    }
}
