//! `hybridopt optimize`.

use super::starts::StartArgs;
use super::{load, OptGradientArg};
use anyhow::{bail, Result};
use clap::ValueEnum;
use hybridopt::output::optimize::write_optimize_results;
use hybridopt::output::optimize::{MultiStartSummary, OptimizeSummary};
use hybridopt::output::periodic::{gait_text, write_gait_results};
use hybridopt::output::to_json;
use hybridopt::periodic::GaitOptimum;
use hybridopt::problem::{Optimized, Problem, SolverKind};
use hybridopt::setup::Setup;
use hybridopt::systems::Builtin;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Clone, Copy, ValueEnum)]
enum SolverArg {
    Lbfgs,
    Gd,
    /// Gauss–Newton / Levenberg–Marquardt (data fits)
    #[value(name = "gauss_newton")]
    GaussNewton,
    /// Hybrid iLQR on the control intervals (problems with controls; constraints by an augmented Lagrangian)
    Ilqr,
    /// Hybrid DDP: the iLQR with second-order terms
    Ddp,
}

/// `hybridopt optimize`.
#[derive(clap::Args)]
pub struct OptimizeArgs {
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
    multi: StartArgs,
}

impl OptimizeArgs {
    pub fn run(self) -> Result<()> {
        let mut p = load(&self.problem, &self.params)?;
        p.require_costs("optimize")?;
        self.check_flags(&mut p)?;
        let out = self
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from("results").join(&p.name));
        if p.periodic.is_some() {
            self.check_gait_flags()?;
            if let Some(n) = self.max_iters {
                p.optimizer.max_iters = n;
            }
        } else {
            let unconstrained =
                !matches!(self.solver, None | Some(SolverArg::Ilqr | SolverArg::Ddp));
            if unconstrained && !p.constraints.is_empty() {
                bail!(
                    "{}: --solver chooses an unconstrained solver (lbfgs, gd, gauss_newton); this problem has constraints or a free final time, which the constrained solver (SQP) handles (or ilqr / ddp, by an augmented Lagrangian): drop --solver",
                    self.problem.display()
                );
            }
            self.apply_optimizer_flags(&mut p);
        }
        let setup = p.setup()?;
        match self.solve(&p, &setup)? {
            (Optimized::Gait(r), _) => self.report_gait(&p, &r, &out),
            (Optimized::Trajectory(r), multi_start) => {
                let mut summary = OptimizeSummary::new(&p, &setup, &r);
                summary.multi_start = multi_start;
                let dir = write_optimize_results(&p, &setup, &r, &summary, &out)?;
                if self.json {
                    println!("{}", to_json(&summary)?);
                } else {
                    print!("{}", summary.text(&dir));
                }
                Ok(())
            }
        }
    }

    /// `--single-shooting`, and the flags that do not apply to this problem.
    fn check_flags(&self, p: &mut Problem) -> Result<()> {
        let path = self.problem.display();
        if self.single_shooting {
            if p.shooting.is_none() {
                bail!("{path}: --single-shooting drops a [shooting] table, and this file has none; drop the flag");
            }
            p.shooting = None;
        }
        if self.starts.is_none() {
            // --jobs runs a multiple-shooting problem's segments in parallel
            self.multi.check_unused(p.shooting.is_none())?;
        }
        if p.shooting.is_some() {
            if self.starts.is_some() {
                bail!("{path}: --starts is not available for a [shooting] problem (its start is the guess of the nodes); drop --starts");
            }
            if !matches!(self.solver, None | Some(SolverArg::Ilqr | SolverArg::Ddp)) {
                bail!("{path}: --solver chooses between the unconstrained solvers (lbfgs, gd); multiple shooting ([shooting]) runs the constrained solver (SQP), or a periodic problem the DDP / iLQR (ddp, ilqr): drop --solver");
            }
        }
        Ok(())
    }

    /// The flags a `[periodic]` problem (the gait optimizer) does not take.
    fn check_gait_flags(&self) -> Result<()> {
        if self.starts.is_some() {
            bail!(
                "{}: --starts is not available for a [periodic] problem (the gait optimizer \
                 re-solves the orbit from the file's guess); drop --starts",
                self.problem.display()
            );
        }
        Ok(())
    }

    /// A gait optimization's results folder and report.
    fn report_gait(&self, p: &Problem, r: &GaitOptimum, out: &Path) -> Result<()> {
        let dir = write_gait_results(p, r, out)?;
        if self.json {
            // the fields every optimization's summary has, then the gait's own
            let summary = hybridopt::output::periodic::GaitSummary::new(p, r);
            println!("{}", serde_json::to_string_pretty(&summary)?);
        } else if !self.quiet {
            print!("{}", gait_text(&p.name, r, &dir));
        }
        Ok(())
    }

    /// The command line's choices over the file's `[optimizer]`.
    fn apply_optimizer_flags(&self, p: &mut Problem) {
        if let Some(s) = self.solver {
            p.optimizer.solver = match s {
                SolverArg::Lbfgs => SolverKind::Lbfgs,
                SolverArg::Gd => SolverKind::Gd,
                SolverArg::GaussNewton => SolverKind::GaussNewton,
                SolverArg::Ilqr => SolverKind::Ilqr,
                SolverArg::Ddp => SolverKind::Ddp,
            };
        }
        if let Some(g) = self.gradient {
            p.optimizer.gradient = g.into();
        }
        if let Some(n) = self.max_iters {
            p.optimizer.max_iters = n;
        }
    }

    /// One run through [`Problem::optimize`] (with a progress bar on a terminal, but
    /// for the gait optimizer, which reports no iterations), or the best of `--starts N`.
    fn solve(
        &self, p: &Problem, setup: &Setup<'_, Builtin>,
    ) -> Result<(Optimized, Option<MultiStartSummary>)> {
        if let Some(n) = self.starts {
            let (r, info) = self.multi.best_of(p, setup, n, self.quiet)?;
            return Ok((Optimized::Trajectory(Box::new(r)), Some(info)));
        }
        let bar = if self.quiet || p.periodic.is_some() {
            None
        } else {
            progress_bar(p)
        };
        let progress = bar.clone().map(|b| {
            Arc::new(move |it: u64, _c: f64| b.set_position(it))
                as Arc<dyn Fn(u64, f64) + Send + Sync>
        });
        let r = match self.multi.jobs()?.filter(|_| p.shooting.is_some()) {
            Some(j) => rayon::ThreadPoolBuilder::new()
                .num_threads(j)
                .build()
                .map_err(|e| anyhow::anyhow!("--jobs {j}: {e}"))?
                .install(|| p.optimize(setup, progress))?,
            None => p.optimize(setup, progress)?,
        };
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        Ok((r, None))
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
