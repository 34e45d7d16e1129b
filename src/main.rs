//! The `hybridopt` command line: a thin layer over the library.

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use hybridopt::animate::{
    stage_animation, stage_strobe, AnimationOptions, Drawing, OutputGeometry, Run, StrobeOptions,
};
use hybridopt::artifacts::{self, trajectory_table, Table};
use hybridopt::integrate::Stats;
use hybridopt::model::HybridSystem;
use hybridopt::optimize::{optimize, OptimizeResult};
use hybridopt::plot::{write_figure, LineKind};
use hybridopt::problem::{Problem, SolverKind};
use hybridopt::report::Staging;
use hybridopt::sensitivity::timing::{self, Samples, TimingReport};
use hybridopt::sensitivity::{evaluate, forward, simultaneous, Evaluation, GradientMethod};
use hybridopt::setup::Setup;
use hybridopt::systems::builtin::Builtin;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

mod cli_sweep;

#[derive(Parser)]
#[command(
    name = "hybridopt",
    version,
    about = "Optimize hybrid dynamical systems with exact sensitivities through events",
    after_help = "Integrators (a problem file's [simulation] method): \"dopri5\" (default; \
                  Dormand–Prince 5(4), explicit), \"sdirk3\" (L-stable SDIRK 3(2), stiff \
                  problems), \"radau5\" (Radau IIA of order 5, L-stable and stiffly \
                  accurate: stiff problems at tight tolerances, DAEs in reduced form)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum MethodArg {
    Adjoint,
    Direct,
    Fd,
    Dual,
    All,
}

#[derive(Clone, Copy, ValueEnum)]
enum SolverArg {
    Lbfgs,
    Gd,
}

#[derive(Clone, Copy, ValueEnum)]
enum OptGradientArg {
    Adjoint,
    Direct,
    Fd,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a problem: trajectory CSV and a plot of the outputs with events marked.
    Simulate {
        /// The problem file (TOML).
        problem: PathBuf,
        /// Output folder (default: results/simulate/<problem name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Override a parameter value: NAME=VALUE (repeatable).
        #[arg(long = "param", value_name = "NAME=VALUE")]
        params: Vec<String>,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Cost and gradient by parameter name, with the event list and τ = dt_e/dθ.
    Gradient {
        /// The problem file (TOML).
        problem: PathBuf,
        /// Gradient method; `all` compares every method.
        #[arg(long, value_enum, default_value = "adjoint")]
        method: MethodArg,
        /// Override a parameter value: NAME=VALUE (repeatable).
        #[arg(long = "param", value_name = "NAME=VALUE")]
        params: Vec<String>,
        /// Relative tolerance (overrides the file; the file's atol stays unless --atol is
        /// given too: "at tolerance X" means both). The JSON reports both as `tolerances`.
        #[arg(long)]
        rtol: Option<f64>,
        /// Absolute tolerance (overrides the file).
        #[arg(long)]
        atol: Option<f64>,
        /// Timings are medians over this many runs of each method (after one untimed plain
        /// simulation, the warm-up). `timing.forward_s` is the plain simulation that starts
        /// each timed run of the first method that has one (adjoint, fd, dual); with
        /// `--method direct` alone, a separate loop of plain simulations. `gradient_s` is
        /// the requested method's (the adjoint's for `all`).
        #[arg(long, default_value_t = 1)]
        repeat: usize,
        /// Skip τ = dt_e/dθ in the event list. τ is taken from a timed run that computed it
        /// (direct, else dual); otherwise it costs one direct pass after the timed runs
        /// (outside the timings), which this flag saves.
        #[arg(long)]
        no_tau: bool,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
        /// Write a sensitivity plot (forward sensitivities of the plotted outputs) here.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Optimize the parameters marked `optimize = true` and all control coefficients.
    Optimize {
        /// The problem file (TOML).
        problem: PathBuf,
        /// Output folder (default: results/<problem name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Solver (default: from the file, else lbfgs).
        #[arg(long, value_enum)]
        solver: Option<SolverArg>,
        /// Gradient method (default: from the file, else adjoint).
        #[arg(long, value_enum)]
        gradient: Option<OptGradientArg>,
        /// Iteration limit (default: from the file, else 100).
        #[arg(long)]
        max_iters: Option<u64>,
        /// Override a parameter's start value: NAME=VALUE (repeatable).
        #[arg(long = "param", value_name = "NAME=VALUE")]
        params: Vec<String>,
        /// No progress output.
        #[arg(long)]
        quiet: bool,
        /// Print the summary JSON on stdout.
        #[arg(long)]
        json: bool,
        /// Optimize from N seeded random starts inside the bounds (in parallel) and keep
        /// the best result (summary JSON: `multi_start`).
        #[arg(long, value_name = "N")]
        starts: Option<usize>,
        #[command(flatten)]
        multi: cli_sweep::StartArgs,
    },
    /// Periodic orbit (a gait): Newton on the return map with the exact DP, Floquet
    /// multipliers, sensitivities; `--continue NAME=LO:HI:N` follows it in a parameter.
    Periodic {
        /// The problem file (TOML) with a `[periodic]` table.
        problem: PathBuf,
        /// Output folder (default: results/<problem name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Override a parameter value: NAME=VALUE (repeatable).
        #[arg(long = "param", value_name = "NAME=VALUE")]
        params: Vec<String>,
        /// Follow the orbit as parameter NAME goes from LO to HI in N points.
        #[arg(long = "continue", value_name = "NAME=LO:HI:N")]
        continuation: Option<String>,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Cost and gradient over a grid (--grid), or multi-start optimization (--starts), in
    /// parallel: sweep.csv, sweep.json and plots; --shard I/N runs one slice.
    Sweep(cli_sweep::SweepArgs),
    /// Combine the output folders of the shards of one sweep into the files an unsharded
    /// run writes.
    Merge(cli_sweep::MergeArgs),
    /// Animate a mechanism: animation.gif (real time, events flashed) and strobe.png/.svg.
    Animate {
        /// The problem file (TOML).
        problem: PathBuf,
        /// Output folder (default: results/animate/<problem name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Frames per second (1–100).
        #[arg(long, default_value_t = 25)]
        fps: u32,
        /// Display duration in seconds (default: real time).
        #[arg(long)]
        duration: Option<f64>,
        /// Override a parameter value: NAME=VALUE (repeatable).
        #[arg(long = "param", value_name = "NAME=VALUE")]
        params: Vec<String>,
        /// Draw the initial and the optimized motion side by side, with the parameters of
        /// `optimize`'s summary (see --summary).
        #[arg(long)]
        compare_initial: bool,
        /// The summary.json of `optimize` for --compare-initial (default:
        /// results/<problem name>/summary.json).
        #[arg(long)]
        summary: Option<PathBuf>,
        /// Width of one panel in pixels (64–2000).
        #[arg(long, default_value_t = 480)]
        width: u32,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// B-derivative at a simultaneous crossing (seed 003, Algorithm 2.1) from a JSON case.
    Bderiv {
        /// The case file (JSON: normals, fields, directions).
        case: PathBuf,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
}

fn load(path: &Path, params: &[String]) -> Result<Problem> {
    let mut p = Problem::load(path)?;
    for kv in params {
        let Some((k, v)) = kv.split_once('=') else {
            bail!("--param {kv}: expected NAME=VALUE, e.g. --param e=0.85");
        };
        if k.trim().is_empty() {
            bail!("--param {kv}: the parameter name is empty; expected NAME=VALUE, e.g. --param e=0.85");
        }
        let v: f64 = v
            .trim()
            .parse()
            .with_context(|| format!("--param {kv}: `{v}` is not a number"))?;
        p.set_param(k.trim(), v)?;
    }
    Ok(p)
}

fn stats_json(s: &hybridopt::integrate::Stats) -> Value {
    json!({"steps": s.steps, "rejected": s.rejected, "events": s.events, "rhs_evals": s.rhs_evals})
}

fn events_json(setup: &Setup<'_, Builtin>, traj: &hybridopt::integrate::Trajectory) -> Vec<Value> {
    traj.events
        .iter()
        .map(|e| {
            json!({"t": e.t, "guard": setup.dims.guard_name(e.guard),
                   "mode_before": setup.dims.mode_name(e.mode_before),
                   "mode_after": setup.dims.mode_name(e.mode_after)})
        })
        .collect()
}

fn constraints_json(tab: &Table) -> Option<Value> {
    let p = tab.max_abs("phi_pos_max")?;
    let v = tab.max_abs("phi_vel_max")?;
    Some(json!({"position_max": p, "velocity_max": v}))
}

fn final_outputs(tab: &Table, names: &[String]) -> Map<String, Value> {
    let last = tab.rows.nrows().saturating_sub(1);
    names
        .iter()
        .filter_map(|n| {
            let c = tab.header.iter().position(|h| h == n)?;
            Some((n.clone(), json!(tab.rows[(last, c)])))
        })
        .collect()
}

fn plot_names(p: &Problem) -> Vec<String> {
    p.plot_outputs
        .iter()
        .map(|&i| p.dims.outputs[i].clone())
        .collect()
}

fn cmd_simulate(path: &Path, out: Option<PathBuf>, params: &[String], as_json: bool) -> Result<()> {
    let p = load(path, params)?;
    let setup = p.setup()?;
    let theta = p.theta_values();
    let traj = setup.simulate(&theta)?;
    let tab = trajectory_table(&setup, &traj, &theta)?;
    let out = out.unwrap_or_else(|| PathBuf::from("results/simulate").join(&p.name));
    let stage = Staging::new(&out)?;
    stage.write_csv("trajectory.csv", &tab.header, &tab.rows)?;
    let fig = artifacts::outputs_figure(
        &format!("{}: simulation", p.name),
        &plot_names(&p),
        &[("trajectory", &tab, LineKind::Solid)],
        artifacts::event_markers(&setup, &traj),
    );
    write_figure(
        &fig,
        &stage.path("trajectory.png"),
        Some(&stage.path("trajectory.svg")),
    )?;
    // The costs are reported, not required: a simulation whose cost is undefined (an
    // event term's occurrence never happens) still runs, and says why.
    let costs = match setup.objective_values(&traj, &theta) {
        Ok(values) => Value::Object(
            p.objective_names()
                .iter()
                .zip(&values)
                .map(|(n, v)| (n.clone(), json!(v)))
                .collect(),
        ),
        Err(e) => json!({"error": e.to_string()}),
    };
    let mut obj = json!({
        "stats": stats_json(&traj.stats),
        "events": events_json(&setup, &traj),
        "final": {"t": traj.t_final, "outputs": final_outputs(&tab, &setup.dims.outputs)},
        "costs": costs,
    });
    if let Some(c) = constraints_json(&tab) {
        obj["constraints"] = c;
    }
    stage.write_json("simulation.json", &obj)?;
    let dir = stage.commit()?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&obj)?);
    } else {
        println!(
            "{}: t = {} → {}: {} steps ({} rejected), {} events",
            p.name, p.t0, traj.t_final, traj.stats.steps, traj.stats.rejected, traj.stats.events
        );
        for e in &traj.events {
            println!(
                "  event t = {:.12}  guard {}  {} → {}",
                e.t,
                setup.dims.guard_name(e.guard),
                setup.dims.mode_name(e.mode_before),
                setup.dims.mode_name(e.mode_after)
            );
        }
        println!("  costs: {}", obj["costs"]);
        if let Some(c) = constraints_json(&tab) {
            println!(
                "  constraint residuals: |Φ| ≤ {}, |Φ̇| ≤ {}",
                c["position_max"], c["velocity_max"]
            );
        }
        println!("  wrote {}", dir.display());
    }
    Ok(())
}

fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let num = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt();
    let den = b.iter().map(|y| y * y).sum::<f64>().sqrt();
    if den == 0.0 {
        num
    } else {
        num / den
    }
}

/// Where the event list's τ came from.
#[derive(Clone, Copy, Serialize)]
#[serde(rename_all = "snake_case")]
enum TauSource {
    /// The timed direct runs.
    Direct,
    /// The timed dual runs.
    Dual,
    /// One direct pass after the timed runs.
    DirectPass,
}

impl TauSource {
    fn describe(self) -> &'static str {
        match self {
            TauSource::Direct => "the direct runs",
            TauSource::Dual => "the dual runs",
            TauSource::DirectPass => "one direct pass",
        }
    }
}

#[derive(Serialize)]
struct Tolerances {
    rtol: f64,
    atol: f64,
}

/// The fields `gradient --json` adds to its hand-built report.
#[derive(Serialize)]
struct GradientExtras<'a> {
    timing: &'a TimingReport,
    /// All the work of each method (`Evaluation::stats` of its last run).
    work: BTreeMap<&'static str, Stats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tau_from: Option<TauSource>,
    tolerances: Tolerances,
    memory: Memory,
}

/// The process's memory use, as the kernel counts it.
#[derive(Serialize)]
struct Memory {
    /// Peak resident set (MB) of this process up to the report (`VmHWM` of
    /// `/proc/self/status`; absent where that file is not there).
    #[serde(skip_serializing_if = "Option::is_none")]
    peak_rss_mb: Option<f64>,
}

impl Memory {
    /// Reads `VmHWM` (kB): the high-water mark of this process's own address space, which
    /// starts afresh at exec (unlike `getrusage`'s `ru_maxrss`, which a spawned child
    /// inherits from its parent).
    fn now() -> Memory {
        let peak = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("VmHWM:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            });
        Memory {
            peak_rss_mb: peak.map(|kb| kb / 1024.0),
        }
    }
}

/// Applies `--rtol` / `--atol` to the problem, each in (0, 1).
fn override_tolerances(p: &mut Problem, rtol: Option<f64>, atol: Option<f64>) -> Result<()> {
    for (name, v) in [("--rtol", rtol), ("--atol", atol)] {
        if let Some(v) = v {
            if !(v > 0.0 && v < 1.0) {
                bail!("{name} {v}: a tolerance must be in (0, 1)");
            }
        }
    }
    if let Some(r) = rtol {
        p.solver.rtol = r;
    }
    if let Some(a) = atol {
        p.solver.atol = a;
    }
    Ok(())
}

/// `repeat` timed evaluations by each method: the last evaluation and all timings.
fn timed_runs(
    setup: &Setup<'_, Builtin>,
    theta: &[f64],
    methods: &[GradientMethod],
    repeat: usize,
) -> Result<Vec<(GradientMethod, Evaluation, Samples)>> {
    let mut results = Vec::new();
    for &m in methods {
        let mut samples = Samples::default();
        let mut ev = None;
        for _ in 0..repeat {
            let e = evaluate(setup, theta, m)?;
            samples.push(&e.timing);
            ev = Some(e);
        }
        let Some(ev) = ev else {
            bail!("--repeat must be at least 1");
        };
        results.push((m, ev, samples));
    }
    Ok(results)
}

/// `forward_s` and where it was measured: the plain simulation that starts each timed run
/// of the first method that has one (adjoint, fd, dual); a separate loop of plain
/// simulations for `direct` alone.
fn forward_timing(
    setup: &Setup<'_, Builtin>,
    theta: &[f64],
    results: &[(GradientMethod, Evaluation, Samples)],
    repeat: usize,
) -> Result<(f64, String)> {
    if let Some(f) = results
        .iter()
        .find_map(|(m, _, s)| s.forward_median().map(|f| (f, m.name().to_string())))
    {
        return Ok(f);
    }
    let mut tf = Vec::with_capacity(repeat);
    for _ in 0..repeat {
        let t0 = Instant::now();
        setup.simulate(theta)?;
        tf.push(t0.elapsed().as_secs_f64());
    }
    let f = timing::median(&tf).context("--repeat must be at least 1")?;
    Ok((f, "simulate".to_string()))
}

#[allow(clippy::too_many_arguments)]
fn cmd_gradient(
    path: &Path,
    method: MethodArg,
    params: &[String],
    rtol: Option<f64>,
    atol: Option<f64>,
    repeat: usize,
    no_tau: bool,
    as_json: bool,
    out: Option<PathBuf>,
) -> Result<()> {
    let wall = Instant::now();
    let mut p = load(path, params)?;
    override_tolerances(&mut p, rtol, atol)?;
    if repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    let setup = p.setup()?;
    let theta = p.theta_values();
    let names = setup.theta_names();
    let methods: Vec<GradientMethod> = match method {
        MethodArg::Adjoint => vec![GradientMethod::Adjoint],
        MethodArg::Direct => vec![GradientMethod::Direct],
        MethodArg::Fd => vec![GradientMethod::Fd],
        MethodArg::Dual => vec![GradientMethod::Dual],
        MethodArg::All => GradientMethod::all().to_vec(),
    };
    // One simulation, untimed, its dense output kept under the checkpointing policy (the
    // report needs only its events and stats): the run behind "stats" and the
    // simultaneous-event report, and the warm-up (first allocations, cold caches) of the
    // timed runs.
    let traj = setup.simulate_for_adjoint(&theta)?;
    let results = timed_runs(&setup, &theta, &methods, repeat)?;
    let timed_median = |s: &Samples| -> Result<f64> {
        s.total_median()
            .context("--repeat must be at least 1: no timed run")
    };
    let gradient_s = timed_median(&results[0].2)?;
    // forward_s: the plain simulation that starts each timed run of the first method that
    // has one (adjoint, fd, dual); a separate loop of plain simulations for `direct` alone.
    let (forward_s, forward_from) = forward_timing(&setup, &theta, &results, repeat)?;
    // τ: from a timed run that computed it (direct, else dual); otherwise from one direct
    // pass outside the timed runs, unless --no-tau. `--out` needs that pass for its figures.
    let from_run = results
        .iter()
        .filter(|_| !no_tau)
        .find_map(|(m, ev, _)| Some((*m, ev.tau.clone()?)));
    let need_pass = out.is_some() || (!no_tau && from_run.is_none());
    let fw = if need_pass {
        let t0 = Instant::now();
        let fw = forward::forward_sensitivity(&setup, &theta)?;
        Some((fw, t0.elapsed().as_secs_f64()))
    } else {
        None
    };
    let (tau_events, tau_from, tau_s) = match (&from_run, &fw) {
        _ if no_tau => (None, None, None),
        (Some((m, tau)), _) => (
            Some(tau.as_slice()),
            Some(match m {
                GradientMethod::Dual => TauSource::Dual,
                _ => TauSource::Direct,
            }),
            None,
        ),
        (None, Some((fw, t))) => (
            Some(fw.events.as_slice()),
            Some(TauSource::DirectPass),
            Some(*t),
        ),
        (None, None) => (None, None, None),
    };
    let main = &results[0];
    let by_name = |g: &[f64]| -> Map<String, Value> {
        names
            .iter()
            .zip(g)
            .map(|(n, v)| (n.clone(), json!(v)))
            .collect()
    };
    let obj_names = p.objective_names();
    let mut witnesses = Map::new();
    for (m, ev, _) in &results {
        witnesses.insert(
            m.name().to_string(),
            Value::Object(by_name(&ev.gradients[0])),
        );
    }
    // Simultaneous events (theory §7): the guards, every crossing order's saltation
    // matrix (state block), and whether ψ is nonsmooth here, with one-sided derivatives.
    let groups = simultaneous::simultaneous_events(&setup, &traj, &theta)?;
    let nx = setup.nx();
    let mut events: Vec<Value> = match tau_events {
        Some(evs) => evs
            .iter()
            .map(|e| {
                json!({"t": e.t, "guard": setup.dims.guard_name(e.guard),
                       "mode_before": setup.dims.mode_name(e.mode_before),
                       "mode_after": setup.dims.mode_name(e.mode_after),
                       "dt_dp": by_name(&e.tau)})
            })
            .collect(),
        None => events_json(&setup, &traj),
    };
    for g in &groups {
        let guards: Vec<String> = g.guards.iter().map(|&k| setup.dims.guard_name(k)).collect();
        let saltations: Vec<Value> = if g.guards.len() <= 4 {
            g.pieces
                .iter()
                .map(|pc| {
                    let m: Vec<Vec<f64>> = (0..nx).map(|r| (0..nx).map(|c| pc.saltation[(r, c)]).collect()).collect();
                    json!({"order": pc.guard_order.iter().map(|&k| setup.dims.guard_name(k)).collect::<Vec<_>>(), "matrix": m})
                })
                .collect()
        } else {
            vec![]
        };
        for &i in &g.events {
            if let Some(ev) = events.get_mut(i) {
                ev["simultaneous"] = json!(guards);
                ev["saltations"] = json!(saltations);
            }
        }
    }
    let nonsmooth = if groups.is_empty() {
        None
    } else {
        let ns = simultaneous::piece_gradients(&setup, &theta)?;
        let dirs: Vec<Vec<f64>> = (0..theta.len())
            .flat_map(|k| {
                [1.0, -1.0].map(|sg| {
                    let mut d = vec![0.0; theta.len()];
                    d[k] = sg;
                    d
                })
            })
            .collect();
        let dd = simultaneous::directional_derivatives(&setup, &theta, &dirs)?;
        let one_sided: Map<String, Value> = names
            .iter()
            .enumerate()
            .map(|(k, n)| (n.clone(), json!({"plus": dd[2 * k].derivatives[0], "minus": dd[2 * k + 1].derivatives[0]})))
            .collect();
        Some(
            json!({"nonsmooth": ns.nonsmooth, "max_relative_difference": ns.max_relative_difference,
                    "one_sided": one_sided}),
        )
    };
    let objectives: Map<String, Value> = obj_names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            (
                n.clone(),
                json!({"cost": main.1.values[i], "gradient": by_name(&main.1.gradients[i])}),
            )
        })
        .collect();
    let obj = json!({
        "cost": main.1.values[0],
        "gradient": by_name(&main.1.gradients[0]),
        "witnesses": witnesses,
        "objectives": objectives,
        "events": events,
        "stats": stats_json(&traj.stats),
    });
    let mut obj = obj;
    if let Some(ns) = &nonsmooth {
        obj["nonsmooth"] = ns["nonsmooth"].clone();
        obj["one_sided"] = ns["one_sided"].clone();
        obj["pieces_max_relative_difference"] = ns["max_relative_difference"].clone();
    }
    let mut methods_s = BTreeMap::new();
    for (m, _, samples) in &results {
        methods_s.insert(m.name().to_string(), timed_median(samples)?);
    }
    let timing = TimingReport {
        forward_s,
        gradient_s,
        methods: methods_s,
        repeat,
        forward_from,
        tau_s,
        wall_s: wall.elapsed().as_secs_f64(),
    };
    let extras = GradientExtras {
        timing: &timing,
        work: results
            .iter()
            .map(|(m, ev, _)| (m.name(), ev.stats))
            .collect(),
        tau_from,
        tolerances: Tolerances {
            rtol: setup.solver.rtol,
            atol: setup.solver.atol,
        },
        memory: Memory::now(),
    };
    if let (Value::Object(o), Value::Object(x)) = (&mut obj, serde_json::to_value(&extras)?) {
        o.extend(x);
    }
    if let Some(dir) = out {
        let Some((fw, _)) = &fw else {
            bail!("internal: --out without its direct pass");
        };
        let stage = Staging::new(&dir)?;
        let fig = artifacts::sensitivity_figure(
            &setup,
            fw,
            &theta,
            &p.plot_outputs,
            &(0..setup.np()).collect::<Vec<_>>(),
        )?;
        write_figure(
            &fig,
            &stage.path("sensitivity.png"),
            Some(&stage.path("sensitivity.svg")),
        )?;
        // the seed's figures in form: Z(t), μ(t) and FD at the end, for every objective
        let (_, hist) =
            hybridopt::sensitivity::adjoint::adjoint_with_history(&setup, &traj, &theta)?;
        let fd = match results.iter().find(|r| r.0 == GradientMethod::Fd) {
            Some(r) => r.1.gradients.clone(),
            None => hybridopt::sensitivity::fd::fd_gradients(&setup, &theta, Default::default())?,
        };
        for (i, name) in obj_names.iter().enumerate() {
            let (fig, z, m) = artifacts::seed_figure(&setup, fw, i, &hist[i], &fd[i]);
            write_figure(
                &fig,
                &stage.path(&format!("seed_{name}.png")),
                Some(&stage.path(&format!("seed_{name}.svg"))),
            )?;
            stage.write_csv(&format!("direct_Z_{name}.csv"), &z.header, &z.rows)?;
            stage.write_csv(&format!("adjoint_mu_{name}.csv"), &m.header, &m.rows)?;
        }
        stage.write_json("gradient.json", &obj)?;
        stage.commit()?;
    }
    if as_json {
        println!("{}", serde_json::to_string_pretty(&obj)?);
        return Ok(());
    }
    println!(
        "{}: ψ = {:.15e}  ({} steps, {} events)",
        p.name, main.1.values[0], traj.stats.steps, traj.stats.events
    );
    for (i, n) in obj_names.iter().enumerate().skip(1) {
        println!("  objective {n}: {:.15e}", main.1.values[i]);
    }
    let w = names.iter().map(|n| n.len()).max().unwrap_or(4).max(9);
    print!("  {:w$}", "parameter");
    for (m, _, _) in &results {
        print!("  {:>22}", m.name());
    }
    println!();
    for (j, n) in names.iter().enumerate() {
        print!("  {n:w$}");
        for (_, ev, _) in &results {
            print!("  {:>22.15e}", ev.gradients[0][j]);
        }
        println!();
    }
    if results.len() > 1 {
        let reference = &results[0].1.gradients[0];
        println!("  relative difference to {}:", results[0].0.name());
        for (m, ev, _) in results.iter().skip(1) {
            println!(
                "    {:8} {:.3e}",
                m.name(),
                rel_diff(&ev.gradients[0], reference)
            );
        }
    }
    println!(
        "  timing (median of {repeat}): forward {forward_s:.3e} s (from {})",
        timing.forward_from
    );
    for (m, _, samples) in &results {
        let t = timed_median(samples)?;
        println!(
            "    {:8} {:.3e} s  ({:.2}× forward)",
            m.name(),
            t,
            t / forward_s
        );
    }
    if let Some(t) = tau_s {
        println!("    τ: one direct pass, {t:.3e} s (not timed above; --no-tau skips it)");
    }
    println!("    wall {:.3e} s", timing.wall_s);
    if let Some(ns) = &nonsmooth {
        println!(
            "  simultaneous events: ψ is {} here (crossing orders' gradients differ by {:.3e}); one-sided derivatives in the JSON output",
            if ns["nonsmooth"] == true { "NONSMOOTH" } else { "smooth" },
            ns["max_relative_difference"].as_f64().unwrap_or(0.0)
        );
    }
    match (tau_events, tau_from) {
        (Some(evs), Some(from)) => {
            println!("  events (τ from {}):", from.describe());
            for e in evs {
                let tau: Vec<String> = names
                    .iter()
                    .zip(&e.tau)
                    .take(8)
                    .map(|(n, v)| format!("{n}: {v:.6e}"))
                    .collect();
                println!(
                    "    t = {:.12}  {}  dt/dθ = {{{}}}",
                    e.t,
                    setup.dims.guard_name(e.guard),
                    tau.join(", ")
                );
            }
        }
        _ => {
            println!("  events:");
            for e in &traj.events {
                println!("    t = {:.12}  {}", e.t, setup.dims.guard_name(e.guard));
            }
        }
    }
    Ok(())
}

fn summary_json(
    p: &Problem,
    setup: &Setup<'_, Builtin>,
    r: &OptimizeResult,
    solver: SolverKind,
) -> Value {
    let names = setup.theta_names();
    let by_name = |v: &[f64]| -> Map<String, Value> {
        names
            .iter()
            .zip(v)
            .map(|(n, x)| (n.clone(), json!(x)))
            .collect()
    };
    json!({
        "problem": p.name,
        "solver": solver.name(),
        "gradient": p.optimizer.gradient.name(),
        "termination": r.termination,
        "outcome": r.outcome,
        "converged": r.converged(),
        "iterations": r.iterations,
        "evaluations": r.evaluations,
        "cost_evaluations": r.cost_calls,
        "gradient_evaluations": r.gradient_calls,
        "initial_cost": r.initial_cost,
        "final_cost": r.final_cost,
        "parameters_initial": by_name(&r.theta_initial),
        "parameters_final": by_name(&r.theta_final),
        "optimized": p.free_indices().iter().map(|&i| names[i].clone()).collect::<Vec<_>>(),
        "final_gradient_norm": r.final_grad_norm,
        "restarts": r.restarts,
        "kinks_met": r.kinks.len(),
        "final_kink": r.kinks.last().filter(|k| k.theta == r.theta_final),
        "wall_time_s": r.wall_time_s,
        "events": events_json(setup, &r.last.trajectory),
    })
}

#[allow(clippy::too_many_arguments)]
fn cmd_optimize(
    path: &Path,
    out: Option<PathBuf>,
    solver: Option<SolverArg>,
    gradient: Option<OptGradientArg>,
    max_iters: Option<u64>,
    params: &[String],
    quiet: bool,
    as_json: bool,
    starts: Option<usize>,
    multi: &cli_sweep::StartArgs,
) -> Result<()> {
    let mut p = load(path, params)?;
    if starts.is_none() {
        multi.check_unused(true)?;
    }
    if p.periodic.is_some() {
        if starts.is_some() {
            return Err(anyhow::anyhow!(
                "{}: --starts is not available for a [periodic] problem (the gait optimizer \
                 re-solves the orbit from the file's guess); drop --starts",
                path.display()
            ));
        }
        return cmd_optimize_gait(&p, out, max_iters, quiet, as_json);
    }
    if let Some(s) = solver {
        p.optimizer.solver = match s {
            SolverArg::Lbfgs => SolverKind::Lbfgs,
            SolverArg::Gd => SolverKind::Gd,
        };
    }
    if let Some(g) = gradient {
        p.optimizer.gradient = match g {
            OptGradientArg::Adjoint => GradientMethod::Adjoint,
            OptGradientArg::Direct => GradientMethod::Direct,
            OptGradientArg::Fd => GradientMethod::Fd,
        };
    }
    if let Some(n) = max_iters {
        p.optimizer.max_iters = n;
    }
    let setup = p.setup()?;
    let show = !quiet && starts.is_none() && std::io::stderr().is_terminal();
    let bar = if show {
        let b = indicatif::ProgressBar::new(p.optimizer.max_iters);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{msg} [{bar:30}] {pos}/{len} iterations ({elapsed})",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b.set_message(format!("optimizing {}", p.name));
        Some(b)
    } else {
        None
    };
    let progress: Option<Arc<dyn Fn(u64, f64) + Send + Sync>> = bar.clone().map(|b| {
        Arc::new(move |it: u64, _c: f64| b.set_position(it)) as Arc<dyn Fn(u64, f64) + Send + Sync>
    });
    let (r, multi_start) = match starts {
        Some(n) => {
            let (r, info) = cli_sweep::best_of_starts(&p, &setup, n, multi, quiet)?;
            (r, Some(info))
        }
        None => (optimize(&setup, &p.theta, &p.optimizer, progress)?, None),
    };
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let mut summary = summary_json(&p, &setup, &r, p.optimizer.solver);
    if let Some(info) = multi_start {
        summary["multi_start"] = info;
    }
    // results folder, staged and swapped in atomically
    let out = out.unwrap_or_else(|| PathBuf::from("results").join(&p.name));
    let stage = Staging::new(&out)?;
    stage.write_json("summary.json", &summary)?;
    let names = setup.theta_names();
    let mut header = vec![
        "iteration".to_string(),
        "cost".into(),
        "grad_norm".into(),
        "step".into(),
    ];
    header.extend(names.iter().cloned());
    let mut rows = ndarray::Array2::zeros((r.history.len(), header.len()));
    for (i, h) in r.history.iter().enumerate() {
        rows[(i, 0)] = h.iteration as f64;
        rows[(i, 1)] = h.cost;
        rows[(i, 2)] = h.grad_norm;
        rows[(i, 3)] = h.step;
        for (j, v) in h.theta.iter().enumerate() {
            rows[(i, 4 + j)] = *v;
        }
    }
    stage.write_csv("history.csv", &header, &rows)?;
    let t_init = trajectory_table(&setup, &r.initial.trajectory, &r.theta_initial)?;
    let t_final = trajectory_table(&setup, &r.last.trajectory, &r.theta_final)?;
    stage.write_csv("trajectory_initial.csv", &t_init.header, &t_init.rows)?;
    stage.write_csv("trajectory.csv", &t_final.header, &t_final.rows)?;
    write_figure(
        &artifacts::convergence_figure(&format!("{}: convergence", p.name), &r.history),
        &stage.path("convergence.png"),
        Some(&stage.path("convergence.svg")),
    )?;
    let mut names_plot = plot_names(&p);
    names_plot.retain(|n| !setup.dims.controls.contains(n));
    write_figure(
        &artifacts::outputs_figure(
            &format!("{}: initial vs optimized", p.name),
            &names_plot,
            &[
                ("initial", &t_init, LineKind::Dashed),
                ("optimized", &t_final, LineKind::Solid),
            ],
            artifacts::event_markers(&setup, &r.last.trajectory),
        ),
        &stage.path("trajectory.png"),
        Some(&stage.path("trajectory.svg")),
    )?;
    if !setup.dims.controls.is_empty() {
        write_figure(
            &artifacts::outputs_figure(
                &format!("{}: controls", p.name),
                &setup.dims.controls,
                &[
                    ("initial", &t_init, LineKind::Dashed),
                    ("optimized", &t_final, LineKind::Solid),
                ],
                vec![],
            ),
            &stage.path("controls.png"),
            Some(&stage.path("controls.svg")),
        )?;
    }
    let from_file = p
        .plot_geometry
        .as_ref()
        .map(|g| OutputGeometry::new(&p.system, g));
    let drawing = match &from_file {
        Some(g) => Some(Drawing::Given(g)),
        None => setup
            .sys
            .geometry()
            .map(|_| Drawing::System(p.system.kind())),
    };
    if let Some(drawing) = drawing {
        let runs = [
            Run {
                label: "initial".into(),
                trajectory: &r.initial.trajectory,
                theta: &r.theta_initial,
            },
            Run {
                label: "optimized".into(),
                trajectory: &r.last.trajectory,
                theta: &r.theta_final,
            },
        ];
        let title = format!("{}: initial vs optimized motion", p.name);
        let opts = StrobeOptions {
            width: 560,
            ..Default::default()
        };
        stage_strobe(&stage, &setup, drawing, &title, &runs, &opts)?;
    }
    hybridopt::plot_loop::stage_loops(
        &p.name,
        &p.plot_loops,
        &setup,
        &[
            ("initial", &t_init, LineKind::Dashed),
            ("optimized", &t_final, LineKind::Solid),
        ],
        &stage,
    )?;
    let dir = stage.commit()?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        println!(
            "{}: {} ({}), {} iterations, {} evaluations, cost {:.6e} → {:.6e}, |grad| {:.3e}, {:.2} s",
            p.name,
            if r.converged() { "converged" } else { "NOT converged" },
            r.termination,
            r.iterations,
            r.evaluations,
            r.initial_cost,
            r.final_cost,
            r.final_grad_norm,
            r.wall_time_s
        );
        for r in &r.restarts {
            println!("  restarted the line search {r}");
        }
        if let Some(k) = r.kinks.last().filter(|k| k.theta == r.theta_final) {
            println!("  the final point is a kink (simultaneous event at t = {:?}): ψ has no gradient there", k.times);
            for (n, plus, minus) in &k.one_sided {
                println!("    one-sided derivatives along ±{n}: {plus:+.6e} / {minus:+.6e}");
            }
        }
        for &i in p.free_indices().iter().take(12) {
            println!(
                "  {:>12} {:.10e} → {:.10e}",
                names[i], r.theta_initial[i], r.theta_final[i]
            );
        }
        if p.free_indices().len() > 12 {
            println!(
                "  … ({} optimized entries in all; see summary.json)",
                p.free_indices().len()
            );
        }
        println!("  wrote {}", dir.display());
    }
    Ok(())
}

fn cmd_periodic(
    path: &Path,
    out: Option<PathBuf>,
    params: &[String],
    continuation: Option<&str>,
    as_json: bool,
) -> Result<()> {
    use hybridopt::periodic::{continuation as cont, orbit, output, spec::PeriodicSpec};
    let p = load(path, params)?;
    let spec = PeriodicSpec::from_problem(&p)?;
    let range = continuation
        .map(|c| cont::Range::parse(c, &p.dims))
        .transpose()?;
    let pv = p.theta_values()[..p.dims.np()].to_vec();
    let o = orbit::solve_orbit(&p.system, &spec, &pv, &spec.guess, true)?;
    let report = orbit::OrbitReport::new(&o, &p.dims, &spec.section.free);
    let branch = match &range {
        Some(r) => {
            let mut p0 = pv.clone();
            p0[r.param] = r.lo;
            Some(cont::continue_orbit(&p.system, &spec, &p0, &spec.guess, r)?)
        }
        None => None,
    };
    let dir = out.unwrap_or_else(|| PathBuf::from("results").join(&p.name));
    let stage = Staging::new(&dir)?;
    output::write_orbit(&stage, &p.name, &p.system, &spec, &pv, &o, &report)?;
    if let Some(b) = &branch {
        output::write_branch(&stage, &p.name, b)?;
    }
    let dir = stage.commit()?;
    if as_json {
        let mut v = serde_json::to_value(&report)?;
        if let Some(b) = &branch {
            v["continuation"] = json!({
                "param": b.param, "points": b.points.len(),
                "bifurcations": b.bifurcations, "stopped": b.stopped,
            });
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "{}: period {:.10}, residual {:.1e} after {} Newton iteration(s); spectral radius {:.6} ({})",
            p.name,
            report.period,
            report.residual,
            report.newton_iterations,
            report.spectral_radius,
            if report.stable { "stable" } else { "unstable" }
        );
        println!("fixed point: {:?}", report.fixed_point);
        println!("multipliers on the section: {:?}", report.multipliers);
        if let Some(b) = &branch {
            for f in &b.bifurcations {
                println!("{:?} at {} = {:.8}", f.kind, b.param, f.at);
            }
            if let Some(s) = &b.stopped {
                println!("branch stopped: {s}");
            }
        }
        println!("results in {}", dir.display());
    }
    Ok(())
}

/// `optimize` on a `[periodic]` problem: L-BFGS on the orbit's objective.
fn cmd_optimize_gait(
    p: &Problem,
    out: Option<PathBuf>,
    max_iters: Option<u64>,
    quiet: bool,
    as_json: bool,
) -> Result<()> {
    use hybridopt::periodic::{optimize as gopt, orbit, output, spec::PeriodicSpec};
    let spec = PeriodicSpec::from_problem(p)?;
    let Some(objective) = spec.objective.clone() else {
        bail!(
            "{}: [periodic] has no `objective` (e.g. objective = {{ kind = \"spectral_radius\" }}): nothing to optimize",
            p.file.display()
        );
    };
    let np = p.dims.np();
    let pv = p.theta_values()[..np].to_vec();
    let free: Vec<usize> = (0..np).filter(|&i| p.theta[i].optimize).collect();
    let transforms: Vec<_> = free.iter().map(|&i| p.theta[i].transform).collect();
    let settings = gopt::GaitSettings {
        max_iters: max_iters.unwrap_or(p.optimizer.max_iters),
        tol_grad: p.optimizer.tol_grad,
    };
    let mut r = gopt::optimize_gait(
        &p.system,
        &spec,
        &objective,
        &pv,
        &free,
        &transforms,
        &settings,
    )?;
    r.names = free.iter().map(|&i| p.dims.params[i].clone()).collect();
    let mut pf = pv.clone();
    for (k, &i) in free.iter().enumerate() {
        pf[i] = r.last.params[k];
    }
    let o = orbit::solve_orbit(&p.system, &spec, &pf, &spec.guess, true)?;
    let report = orbit::OrbitReport::new(&o, &p.dims, &spec.section.free);
    let dir = out.unwrap_or_else(|| PathBuf::from("results").join(&p.name));
    let stage = Staging::new(&dir)?;
    output::write_gait(&stage, &r)?;
    output::write_orbit(&stage, &p.name, &p.system, &spec, &pf, &o, &report)?;
    let dir = stage.commit()?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else if !quiet {
        println!(
            "{}: {} → {} ({}; {} iterations, {} evaluations); spectral radius {:.6} → {:.6} (re-solved from the guess: {:.6})",
            p.name, r.initial.value, r.last.value, r.termination, r.iterations, r.evaluations,
            r.initial.spectral_radius, r.last.spectral_radius, r.verified_spectral_radius
        );
        println!(
            "{:?} = {:?}; results in {}",
            r.names,
            r.last.params,
            dir.display()
        );
    }
    Ok(())
}

/// θ from `optimize`'s summary: its `parameters_initial` and `parameters_final` over the
/// problem's values (the summary must be of the same problem).
fn summary_thetas(
    p: &Problem,
    setup: &Setup<'_, Builtin>,
    path: &Path,
) -> Result<(Vec<f64>, Vec<f64>)> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "--compare-initial reads optimize's summary {}: run `hybridopt optimize` first, or give --summary",
            path.display()
        )
    })?;
    let v: Value = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a JSON summary", path.display()))?;
    if v["problem"].as_str() != Some(p.name.as_str()) {
        bail!(
            "{}: key `problem` = {} but the problem file is `{}`",
            path.display(),
            v["problem"],
            p.name
        );
    }
    let names = setup.theta_names();
    let read = |key: &str| -> Result<Vec<f64>> {
        let mut theta = p.theta_values();
        let Some(map) = v[key].as_object() else {
            bail!("{}: key `{key}` is missing or not a table", path.display());
        };
        for (name, x) in map {
            let Some(i) = names.iter().position(|n| n == name) else {
                bail!(
                    "{}: `{key}.{name}` is not a parameter of problem `{}`",
                    path.display(),
                    p.name
                );
            };
            theta[i] = x.as_f64().with_context(|| {
                format!("{}: `{key}.{name}` = {x} is not a number", path.display())
            })?;
        }
        Ok(theta)
    };
    Ok((read("parameters_initial")?, read("parameters_final")?))
}

#[allow(clippy::too_many_arguments)]
fn cmd_animate(
    path: &Path,
    out: Option<PathBuf>,
    fps: u32,
    duration: Option<f64>,
    params: &[String],
    compare_initial: bool,
    summary: Option<PathBuf>,
    width: u32,
    as_json: bool,
) -> Result<()> {
    let wall = Instant::now();
    if !(64..=2000).contains(&width) {
        bail!("--width {width}: a panel must be between 64 and 2000 pixels wide");
    }
    let p = load(path, params)?;
    let kind = p.system.kind();
    let from_file = p
        .plot_geometry
        .as_ref()
        .map(|g| OutputGeometry::new(&p.system, g));
    let drawing = match &from_file {
        Some(g) => Drawing::Given(g),
        None if p.system.geometry().is_some() => Drawing::System(kind),
        None => {
            return Err(hybridopt::Error::NoGeometry {
                system: kind.into(),
            }
            .into())
        }
    };
    let setup = p.setup()?;
    let thetas = if compare_initial {
        let file =
            summary.unwrap_or_else(|| PathBuf::from("results").join(&p.name).join("summary.json"));
        let (a, b) = summary_thetas(&p, &setup, &file)?;
        vec![("initial", a), ("optimized", b)]
    } else {
        vec![("", p.theta_values())]
    };
    let trajs = thetas
        .iter()
        .map(|(_, th)| setup.simulate(th))
        .collect::<hybridopt::Result<Vec<_>>>()?;
    let runs: Vec<Run<'_>> = thetas
        .iter()
        .zip(&trajs)
        .map(|((label, th), tr)| Run {
            label: label.to_string(),
            trajectory: tr,
            theta: th,
        })
        .collect();
    let out = out.unwrap_or_else(|| PathBuf::from("results/animate").join(&p.name));
    let stage = Staging::new(&out)?;
    let opts = AnimationOptions {
        fps,
        duration,
        width,
        ..Default::default()
    };
    let gif = stage_animation(&stage, &setup, drawing, &p.name, &runs, &opts)?;
    let strobe = StrobeOptions {
        width: width.max(320) + 160,
        ..Default::default()
    };
    stage_strobe(
        &stage,
        &setup,
        drawing,
        &format!("{}: stroboscopic picture", p.name),
        &runs,
        &strobe,
    )?;
    let obj = json!({
        "animation": gif,
        "fps": fps,
        "events": trajs.iter().map(|t| events_json(&setup, t)).collect::<Vec<_>>(),
        "wall_s": wall.elapsed().as_secs_f64(),
    });
    stage.write_json("animation.json", &obj)?;
    let dir = stage.commit()?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&obj)?);
    } else {
        println!(
            "{}: {} frames of {}×{} at {} fps ({} s of motion per second shown), {:.2} s; wrote {}",
            p.name,
            gif.frames,
            gif.width,
            gif.height,
            fps,
            gif.speed,
            obj["wall_s"].as_f64().unwrap_or(0.0),
            dir.display()
        );
    }
    Ok(())
}

fn cmd_bderiv(path: &Path, as_json: bool) -> Result<()> {
    let out = hybridopt::sensitivity::bderivative::run_case_file(path)?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print!(
            "{}",
            hybridopt::sensitivity::bderivative::format_case_output(&out)
        );
    }
    Ok(())
}

/// Ctrl-C: ask the computation to stop (it returns `Error::Interrupted` at its next check,
/// and no results folder is committed), and restore the default disposition so that a
/// second Ctrl-C ends the process at once.
#[cfg(unix)]
extern "C" fn on_sigint(_signal: libc::c_int) {
    hybridopt::interrupt::request();
    // SAFETY: signal() is async-signal-safe (POSIX); SIG_DFL is a valid disposition.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
    }
}

/// The exit code of an interrupted run (128 + SIGINT, as shells report it).
const EXIT_INTERRUPTED: i32 = 130;

fn main() {
    // Die quietly on a closed pipe (`hybridopt … | head`) like other command-line tools,
    // instead of panicking in println!.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE and installing a handler that
    // only stores an atomic flag and calls signal(), before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        let handler: extern "C" fn(libc::c_int) = on_sigint;
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
    }
    let cli = Cli::parse();
    if let Err(e) = run(cli) {
        let interrupted = e
            .downcast_ref::<hybridopt::Error>()
            .is_some_and(|e| matches!(e, hybridopt::Error::Interrupted));
        if interrupted {
            eprintln!("error: interrupted (Ctrl-C); no results were written, earlier results are unchanged");
            std::process::exit(EXIT_INTERRUPTED);
        }
        eprintln!("error: {}", hybridopt::error::chain_message(&*e));
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Simulate {
            problem,
            out,
            params,
            json,
        } => cmd_simulate(&problem, out, &params, json),
        Command::Gradient {
            problem,
            method,
            params,
            rtol,
            atol,
            repeat,
            no_tau,
            json,
            out,
        } => cmd_gradient(
            &problem, method, &params, rtol, atol, repeat, no_tau, json, out,
        ),
        Command::Optimize {
            problem,
            out,
            solver,
            gradient,
            max_iters,
            params,
            quiet,
            json,
            starts,
            multi,
        } => cmd_optimize(
            &problem, out, solver, gradient, max_iters, &params, quiet, json, starts, &multi,
        ),
        Command::Sweep(a) => cli_sweep::cmd_sweep(a),
        Command::Merge(a) => cli_sweep::cmd_merge(a),
        Command::Animate {
            problem,
            out,
            fps,
            duration,
            params,
            compare_initial,
            summary,
            width,
            json,
        } => cmd_animate(
            &problem,
            out,
            fps,
            duration,
            &params,
            compare_initial,
            summary,
            width,
            json,
        ),
        Command::Bderiv { case, json } => cmd_bderiv(&case, json),
        Command::Periodic {
            problem,
            out,
            params,
            continuation,
            json,
        } => cmd_periodic(&problem, out, &params, continuation.as_deref(), json),
    }
}
