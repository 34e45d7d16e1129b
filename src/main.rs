//! The `hybridopt` command line: a thin layer over the library.

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use hybridopt::optimize_output::write_optimize_results;
use hybridopt::output::animate::{animate_to_folder, AnimateRequest};
use hybridopt::output::gradient_files::write_gradient_folder;
use hybridopt::output::gradient_run::{run_gradient, GradientOptions};
use hybridopt::output::gradient_text::gradient_text;
use hybridopt::output::periodic::{gait_text, optimize_gait_to_folder, periodic_to_folder};
use hybridopt::output::simulate::simulate_to_folder;
use hybridopt::output::summary::OptimizeSummary;
use hybridopt::output::systems::SystemInfo;
use hybridopt::output::to_json;
use hybridopt::problem::{Problem, SolverKind};
use hybridopt::sensitivity::fd::{FdOptions, FdScale};
use hybridopt::sensitivity::GradientMethod;
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
enum FdScaleArg {
    Unit,
    Value,
}

impl From<FdScaleArg> for FdScale {
    fn from(a: FdScaleArg) -> FdScale {
        match a {
            FdScaleArg::Unit => FdScale::Unit,
            FdScaleArg::Value => FdScale::Value,
        }
    }
}

impl MethodArg {
    /// The methods to run, the requested one first.
    fn methods(self) -> Vec<GradientMethod> {
        match self {
            MethodArg::Adjoint => vec![GradientMethod::Adjoint],
            MethodArg::Direct => vec![GradientMethod::Direct],
            MethodArg::Fd => vec![GradientMethod::Fd],
            MethodArg::Dual => vec![GradientMethod::Dual],
            MethodArg::All => GradientMethod::all().to_vec(),
        }
    }
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
        /// Add τ = dt_e/dθ to every event also when the method's own runs do not compute
        /// it (adjoint, fd): one direct pass after the timed runs, outside the timings,
        /// which costs about a direct gradient (several adjoints on long runs with many
        /// parameters). Without it τ is reported when the method's runs computed it
        /// anyway (direct, dual, all) or `--out` draws the figures, and left out otherwise
        /// (`tau_from` absent).
        #[arg(long, conflicts_with = "no_tau")]
        tau: bool,
        /// Leave τ out even when the method's runs computed it.
        #[arg(long)]
        no_tau: bool,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
        /// Write a sensitivity plot (forward sensitivities of the plotted outputs) here.
        #[arg(long)]
        out: Option<PathBuf>,
        /// A fixed central-FD step instead of the default rule (4th-order stencil):
        /// h_j = FD_STEP · max(1, |θ_j|), or FD_STEP · |θ_j| with `--fd-scale value`. By
        /// default each parameter's step is chosen on a ladder h_k = 3e-2 · max(|θ_j|, 1e-2)
        /// · 4^-k: each pair (h, h/4) gives a Richardson extrapolation (16 D(h/4) − D(h))/15,
        /// and the one that differs least from its neighbours on the ladder is kept, that
        /// difference being its error estimate (the JSON's `fd_error_estimate`, `fd_step`).
        #[arg(long)]
        fd_step: Option<f64>,
        /// A fixed FD step scaled by `unit` = max(1, |θ_j|) or `value` = |θ_j| (with
        /// `--fd-step`, default 1e-4).
        #[arg(long, value_enum)]
        fd_scale: Option<FdScaleArg>,
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
        /// Ignore the file's [shooting] table: one simulation over the whole horizon per
        /// evaluation (to compare with multiple shooting from the same start).
        #[arg(long)]
        single_shooting: bool,
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
    /// The built-in systems: states, parameters with their defaults, controls, modes,
    /// guards (with direction) and outputs.
    Systems {
        /// Only this kind (e.g. five_bar).
        kind: Option<String>,
        /// Print one JSON list on stdout.
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

fn cmd_simulate(path: &Path, out: Option<PathBuf>, params: &[String], as_json: bool) -> Result<()> {
    let p = load(path, params)?;
    let out = out.unwrap_or_else(|| PathBuf::from("results/simulate").join(&p.name));
    let (report, dir) = simulate_to_folder(&p, &out)?;
    if as_json {
        println!("{}", to_json(&report)?);
    } else {
        print!("{}", report.text(&p.name, p.t0, &dir));
    }
    Ok(())
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

#[allow(clippy::too_many_arguments)]
fn cmd_gradient(
    path: &Path, method: MethodArg, params: &[String], rtol: Option<f64>, atol: Option<f64>,
    repeat: usize, (tau, no_tau): (bool, bool), as_json: bool, out: Option<PathBuf>, fd: FdOptions,
) -> Result<()> {
    let wall = Instant::now();
    let mut p = load(path, params)?;
    override_tolerances(&mut p, rtol, atol)?;
    if repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    if !(fd.rel.is_finite() && fd.rel > 0.0) {
        bail!(
            "--fd-step {}: the FD step must be a finite number > 0",
            fd.rel
        );
    }
    let setup = p.setup()?;
    let theta = p.theta_values();
    let opts = GradientOptions {
        methods: method.methods(),
        repeat,
        tau: !no_tau,
        tau_pass: tau,
        figures: out.is_some(),
        fd,
    };
    let run = run_gradient(&setup, &theta, &opts)?;
    let objectives = p.objective_names();
    let mut report = run.report(&setup, &objectives, wall);
    if !p.constraints.list.is_empty() {
        let point = hybridopt::optimize::constrained_point(
            &setup,
            &p.theta,
            &p.constraints,
            hybridopt::sensitivity::GradientMethod::Adjoint,
        )?;
        report.constraints = Some(hybridopt::output::gradient::ConstraintGradient::rows(
            &point,
        ));
    }
    if let Some(dir) = out {
        write_gradient_folder(
            &setup,
            &run,
            &theta,
            &p.plot_outputs,
            &objectives,
            &report,
            &dir,
        )?;
    }
    if as_json {
        println!("{}", to_json(&report)?);
    } else {
        let names = setup.theta_names();
        print!(
            "{}",
            gradient_text(&p.name, &names, &objectives, &run, &report)
        );
        for c in report.constraints.iter().flatten() {
            println!(
                "constraint {}: {:.12e} (bounds {:?}, {:?}; violation {:.2e})",
                c.name, c.value, c.lower, c.upper, c.violation
            );
        }
    }
    Ok(())
}

/// The command line's choices over the file's `[optimizer]`.
fn apply_optimizer_flags(
    p: &mut Problem, solver: Option<SolverArg>, gradient: Option<OptGradientArg>,
    max_iters: Option<u64>,
) {
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
}

/// A progress bar of the iterations on a terminal (stderr).
fn progress_bar(p: &Problem) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let b = indicatif::ProgressBar::new(p.optimizer.max_iters);
    b.set_style(
        indicatif::ProgressStyle::with_template(
            "{msg} [{bar:30}] {pos}/{len} iterations ({elapsed})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    b.set_message(format!("optimizing {}", p.name));
    Some(b)
}

#[allow(clippy::too_many_arguments)]
fn cmd_optimize(
    path: &Path, out: Option<PathBuf>, solver: Option<SolverArg>, gradient: Option<OptGradientArg>,
    max_iters: Option<u64>, params: &[String], quiet: bool, as_json: bool, starts: Option<usize>,
    single_shooting: bool, multi: &cli_sweep::StartArgs,
) -> Result<()> {
    let mut p = load(path, params)?;
    if single_shooting {
        if p.shooting.is_none() {
            bail!(
                "{}: --single-shooting drops a [shooting] table, and this file has none; drop the flag",
                path.display()
            );
        }
        p.shooting = None;
    }
    if starts.is_none() {
        // --jobs runs a multiple-shooting problem's segments in parallel
        multi.check_unused(p.shooting.is_none())?;
    }
    if p.shooting.is_some() {
        if starts.is_some() {
            bail!(
                "{}: --starts is not available for a [shooting] problem (its start is the guess of the nodes); drop --starts",
                path.display()
            );
        }
        if solver.is_some() {
            bail!(
                "{}: --solver chooses between the unconstrained solvers (lbfgs, gd); multiple shooting ([shooting]) runs the constrained solver (SQP): drop --solver",
                path.display()
            );
        }
    }
    let out = out.unwrap_or_else(|| PathBuf::from("results").join(&p.name));
    if p.periodic.is_some() {
        if starts.is_some() {
            bail!(
                "{}: --starts is not available for a [periodic] problem (the gait optimizer \
                 re-solves the orbit from the file's guess); drop --starts",
                path.display()
            );
        }
        let (r, dir) = optimize_gait_to_folder(&p, max_iters, &out)?;
        if as_json {
            // in the struct's order, as it has always been printed
            println!("{}", serde_json::to_string_pretty(&r)?);
        } else if !quiet {
            print!("{}", gait_text(&p.name, &r, &dir));
        }
        return Ok(());
    }
    if solver.is_some() && !p.constraints.is_empty() {
        bail!(
            "{}: --solver chooses between the unconstrained solvers (lbfgs, gd); this problem has constraints or a free final time, which the constrained solver (SQP) handles: drop --solver",
            path.display()
        );
    }
    apply_optimizer_flags(&mut p, solver, gradient, max_iters);
    let setup = p.setup()?;
    let (r, multi_start) = match starts {
        Some(n) => {
            let (r, info) = cli_sweep::best_of_starts(&p, &setup, n, multi, quiet)?;
            (r, Some(info))
        }
        None => {
            let bar = if quiet { None } else { progress_bar(&p) };
            let progress = bar.clone().map(|b| {
                Arc::new(move |it: u64, _c: f64| b.set_position(it))
                    as Arc<dyn Fn(u64, f64) + Send + Sync>
            });
            let r = match multi.jobs()?.filter(|_| p.shooting.is_some()) {
                Some(j) => rayon::ThreadPoolBuilder::new()
                    .num_threads(j)
                    .build()
                    .map_err(|e| anyhow::anyhow!("--jobs {j}: {e}"))?
                    .install(|| p.optimize(&setup, &p.theta, progress))?,
                None => p.optimize(&setup, &p.theta, progress)?,
            };
            if let Some(b) = bar {
                b.finish_and_clear();
            }
            (r, None)
        }
    };
    let mut summary = OptimizeSummary::new(&p, &setup, &r);
    summary.multi_start = multi_start;
    let dir = write_optimize_results(&p, &setup, &r, &summary, &out)?;
    if as_json {
        println!("{}", to_json(&summary)?);
    } else {
        print!("{}", summary.text(&dir));
    }
    Ok(())
}

fn cmd_periodic(
    path: &Path, out: Option<PathBuf>, params: &[String], continuation: Option<&str>, as_json: bool,
) -> Result<()> {
    let p = load(path, params)?;
    let out = out.unwrap_or_else(|| PathBuf::from("results").join(&p.name));
    let (report, dir) = periodic_to_folder(&p, continuation, &out)?;
    if as_json {
        println!("{}", to_json(&report)?);
    } else {
        print!("{}", report.text(&p.name, &dir));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn cmd_animate(
    path: &Path, out: Option<PathBuf>, fps: u32, duration: Option<f64>, params: &[String],
    compare_initial: bool, summary: Option<PathBuf>, width: u32, as_json: bool,
) -> Result<()> {
    let wall = Instant::now();
    if !(64..=2000).contains(&width) {
        bail!("--width {width}: a panel must be between 64 and 2000 pixels wide");
    }
    let p = load(path, params)?;
    let summary =
        summary.unwrap_or_else(|| PathBuf::from("results").join(&p.name).join("summary.json"));
    let req = AnimateRequest {
        out: out.unwrap_or_else(|| PathBuf::from("results/animate").join(&p.name)),
        fps,
        duration,
        width,
        compare_initial: compare_initial.then_some(summary),
    };
    let (report, dir) = animate_to_folder(&p, &req, wall)?;
    if as_json {
        println!("{}", to_json(&report)?);
    } else {
        print!("{}", report.text(&p.name, &dir));
    }
    Ok(())
}

fn cmd_systems(kind: Option<&str>, as_json: bool) -> Result<()> {
    let mut all = SystemInfo::all();
    if let Some(k) = kind {
        all.retain(|s| s.kind == k);
        if all.is_empty() {
            let kinds: Vec<String> = SystemInfo::all().into_iter().map(|s| s.kind).collect();
            bail!(
                "systems {k}: no built-in system of that kind; valid kinds: {}",
                kinds.join(", ")
            );
        }
    }
    if as_json {
        println!("{}", to_json(&all)?);
    } else {
        let texts: Vec<String> = all.iter().map(SystemInfo::text).collect();
        print!("{}", texts.join("\n"));
    }
    Ok(())
}

fn cmd_bderiv(path: &Path, as_json: bool) -> Result<()> {
    let out = hybridopt::output::bderiv::run_case_file(path)?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print!("{}", hybridopt::output::bderiv::format_case_output(&out));
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
            tau,
            no_tau,
            json,
            out,
            fd_step,
            fd_scale,
        } => {
            let fd = if fd_step.is_some() || fd_scale.is_some() {
                FdOptions::fixed(
                    fd_step.unwrap_or(FdOptions::default().rel),
                    fd_scale.map_or(FdScale::Unit, FdScale::from),
                )
            } else {
                FdOptions::default()
            };
            cmd_gradient(
                &problem,
                method,
                &params,
                rtol,
                atol,
                repeat,
                (tau, no_tau),
                json,
                out,
                fd,
            )
        }
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
            single_shooting,
            multi,
        } => cmd_optimize(
            &problem,
            out,
            solver,
            gradient,
            max_iters,
            &params,
            quiet,
            json,
            starts,
            single_shooting,
            &multi,
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
        Command::Systems { kind, json } => cmd_systems(kind.as_deref(), json),
        Command::Periodic {
            problem,
            out,
            params,
            continuation,
            json,
        } => cmd_periodic(&problem, out, &params, continuation.as_deref(), json),
    }
}
