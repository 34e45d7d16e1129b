//! The subcommands of `hybridopt`: each is an argument struct (clap `Args`) with its own
//! `run`; `main.rs` parses the command line and dispatches. Every subcommand writes its
//! results through [`hybridopt::output`] and prints its report there too (`--json` through
//! [`hybridopt::output::to_json`]).

pub mod animate;
pub mod bderiv;
pub mod feedback;
pub mod gradient;
pub mod merge;
pub mod optimize;
pub mod periodic;
pub mod simulate;
pub mod starts;
pub mod sweep;
pub mod systems;

use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use hybridopt::problem::Problem;
use hybridopt::sensitivity::GradientMethod;
use std::path::Path;

/// The gradient method of an optimization (`optimize --gradient`, `sweep --gradient`).
#[derive(Clone, Copy, ValueEnum)]
pub enum OptGradientArg {
    Adjoint,
    Direct,
    Fd,
}

impl From<OptGradientArg> for GradientMethod {
    fn from(g: OptGradientArg) -> GradientMethod {
        match g {
            OptGradientArg::Adjoint => GradientMethod::Adjoint,
            OptGradientArg::Direct => GradientMethod::Direct,
            OptGradientArg::Fd => GradientMethod::Fd,
        }
    }
}

/// Loads a problem file and applies the `--param NAME=VALUE` overrides.
pub fn load(path: &Path, params: &[String]) -> Result<Problem> {
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

/// Prints a report: its JSON (keys sorted) with `--json`, else its text.
pub fn print_report<T: serde::Serialize>(
    report: &T, as_json: bool, text: impl FnOnce() -> String,
) -> Result<()> {
    if as_json {
        println!("{}", hybridopt::output::to_json(report)?);
    } else {
        print!("{}", text());
    }
    Ok(())
}
