//! `hybridopt gradient`.

use super::load;
use anyhow::{bail, Result};
use clap::ValueEnum;
use hybridopt::custom::Compilation;
use hybridopt::integrate::Checkpointing;
use hybridopt::output::gradient::gradient_text;
use hybridopt::output::gradient::write_gradient_folder;
use hybridopt::output::gradient::ConstraintGradient;
use hybridopt::output::gradient::{run_gradient, GradientOptions};
use hybridopt::output::to_json;
use hybridopt::problem::Problem;
use hybridopt::sensitivity::GradientMethod;
use hybridopt::sensitivity::{FdOptions, FdScale};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Clone, Copy, ValueEnum)]
enum MethodArg {
    Adjoint,
    Direct,
    Fd,
    Dual,
    All,
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

/// `hybridopt gradient`.
#[derive(clap::Args)]
pub struct GradientArgs {
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
    /// Memory budget (MB) of the adjoint's forward run: interpolants are kept while they
    /// and the checkpoints fit in it, the rest is replayed from checkpoints by the backward
    /// pass (`work.<method>.replayed_steps`). A number in [0, 1000000]; default 16.
    #[arg(long, value_name = "MB")]
    memory_budget: Option<f64>,
    /// A fixed FD step scaled by `unit` = max(1, |θ_j|) or `value` = |θ_j| (with
    /// `--fd-step`, default 1e-4).
    #[arg(long, value_enum)]
    fd_scale: Option<FdScaleArg>,
}

impl GradientArgs {
    /// The FD rule: the default ladder, or a fixed step with `--fd-step`/`--fd-scale`.
    fn fd(&self) -> Result<FdOptions> {
        if self.fd_step.is_none() && self.fd_scale.is_none() {
            return Ok(FdOptions::default());
        }
        let fd = FdOptions::fixed(
            self.fd_step.unwrap_or(FdOptions::default().rel),
            self.fd_scale.map_or(FdScale::Unit, FdScale::from),
        );
        if !(fd.rel.is_finite() && fd.rel > 0.0) {
            bail!(
                "--fd-step {}: the FD step must be a finite number > 0",
                fd.rel
            );
        }
        Ok(fd)
    }

    pub fn run(self) -> Result<()> {
        let wall = Instant::now();
        let mut p = load(&self.problem, &self.params)?;
        override_tolerances(&mut p, self.rtol, self.atol)?;
        if self.repeat == 0 {
            bail!("--repeat must be at least 1");
        }
        let fd = self.fd()?;
        let mut setup = p.setup()?;
        if let Some(mb) = self.memory_budget {
            setup = setup
                .to_builder()
                .checkpointing(Checkpointing::budget_mb(mb)?)
                .build();
        }
        let theta = p.theta_values();
        let opts = GradientOptions {
            methods: self.method.methods(),
            repeat: self.repeat,
            tau: !self.no_tau,
            tau_pass: self.tau,
            figures: self.out.is_some(),
            fd,
        };
        let run = run_gradient(&setup, &theta, &opts)?;
        let objectives = p.objective_names();
        let mut report = run.report(&setup, &objectives, wall);
        if let Some(Compilation::Compiled { seconds, .. }) = p.system.compilation() {
            report.timing.compile_s = Some(*seconds);
        }
        if !p.constraints.list.is_empty() {
            let point = hybridopt::optimize::constrained_point(
                &setup,
                &p.theta,
                &p.constraints,
                GradientMethod::Adjoint,
            )?;
            report.constraints = Some(ConstraintGradient::rows(&point));
        }
        if let Some(dir) = &self.out {
            write_gradient_folder(
                &setup,
                &run,
                &theta,
                &p.plot_outputs,
                &objectives,
                &report,
                dir,
            )?;
        }
        if self.json {
            println!("{}", to_json(&report)?);
            return Ok(());
        }
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
        Ok(())
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
