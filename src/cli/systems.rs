//! `hybridopt systems`.

use anyhow::{bail, Result};
use hybridopt::output::systems::SystemInfo;

/// `hybridopt systems`.
#[derive(clap::Args)]
pub struct SystemsArgs {
    /// Only this kind (e.g. five_bar).
    kind: Option<String>,
    /// Print one JSON list on stdout.
    #[arg(long)]
    json: bool,
}

impl SystemsArgs {
    pub fn run(self) -> Result<()> {
        let mut all = SystemInfo::all();
        if let Some(k) = &self.kind {
            all.retain(|s| &s.kind == k);
            if all.is_empty() {
                let kinds: Vec<String> = SystemInfo::all().into_iter().map(|s| s.kind).collect();
                bail!(
                    "systems {k}: no built-in system of that kind; valid kinds: {}",
                    kinds.join(", ")
                );
            }
        }
        super::print_report(&all, self.json, || {
            let texts: Vec<String> = all.iter().map(SystemInfo::text).collect();
            texts.join("\n")
        })
    }
}
