//! `hybridopt bderiv`.

use anyhow::Result;
use hybridopt::output::bderiv::{format_case_output, run_case_file};
use std::path::PathBuf;

/// `hybridopt bderiv`.
#[derive(clap::Args)]
pub struct BderivArgs {
    /// The case file (JSON: normals, fields, directions).
    case: PathBuf,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

impl BderivArgs {
    pub fn run(self) -> Result<()> {
        let out = run_case_file(&self.case)?;
        if self.json {
            // in the struct's order, as it has always been printed
            println!("{}", serde_json::to_string_pretty(&out)?);
        } else {
            print!("{}", format_case_output(&out));
        }
        Ok(())
    }
}
