//! Every `hybridopt` command shown in README.md and docs/guide/*.md (in ```text, ```sh or
//! ```bash blocks, continuation lines joined; `cargo run --release -- …` counts as
//! `hybridopt …`) runs and succeeds, so the docs cannot rot. The commands run in a scratch
//! folder that sees the repository's `problems/` (a symbolic link), so their results land
//! there, not in the repository. Lines that are not runnable as written are skipped by the
//! patterns of `SKIPPED`, each with its reason; every pattern must still match a line.

use std::path::PathBuf;
use std::process::Command;

/// (a substring of the command, why it is not run).
const SKIPPED: &[(&str, &str)] = &[
    ("PROBLEM.toml", "a synopsis of the options, not a command"),
    ("CASE.json", "a synopsis of the options, not a command"),
    ("[KIND]", "a synopsis of the options, not a command"),
    ("DIR...", "a synopsis of the options, not a command"),
    (
        "${SLURM",
        "a cluster job script's line: its shell variables are set by the scheduler",
    ),
    (
        "merge sweep/shard-*",
        "merges the shards that the cluster job script above writes",
    ),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `hybridopt` commands of a Markdown text, as argument lists (after `hybridopt`).
fn commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_block = false;
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if let Some(lang) = t.strip_prefix("```") {
            in_block = !in_block && ["text", "sh", "bash", "console"].contains(&lang.trim());
            continue;
        }
        if !in_block {
            continue;
        }
        let mut cmd = line.trim().to_string();
        while cmd.ends_with('\\') {
            cmd.pop();
            match lines.next() {
                Some(next) => cmd = format!("{} {}", cmd.trim_end(), next.trim()),
                None => break,
            }
        }
        // a trailing comment
        if let Some(i) = cmd.find(" # ") {
            cmd.truncate(i);
        }
        let cmd = cmd.trim();
        if let Some(rest) = cmd
            .strip_prefix("hybridopt ")
            .or_else(|| cmd.strip_prefix("cargo run --release -- "))
        {
            out.push(rest.trim().to_string());
        }
    }
    out
}

/// README.md and every page of the user guide.
fn pages() -> Vec<PathBuf> {
    let mut v = vec![root().join("README.md")];
    let mut guide: Vec<PathBuf> = std::fs::read_dir(root().join("docs/guide"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    guide.sort();
    v.extend(guide);
    v
}

#[cfg(unix)]
#[test]
fn every_command_in_the_docs_runs() {
    let scratch =
        std::env::temp_dir().join(format!("hybridopt_doc_commands_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    std::os::unix::fs::symlink(root().join("problems"), scratch.join("problems")).unwrap();
    let mut used = vec![false; SKIPPED.len()];
    let mut ran = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page
            .strip_prefix(root())
            .unwrap_or(&page)
            .display()
            .to_string();
        for cmd in commands(&text) {
            if let Some(k) = SKIPPED.iter().position(|(p, _)| cmd.contains(p)) {
                used[k] = true;
                println!("{name}: skipped ({}): hybridopt {cmd}", SKIPPED[k].1);
                continue;
            }
            let out = Command::new(env!("CARGO_BIN_EXE_hybridopt"))
                .args(cmd.split_whitespace())
                .current_dir(&scratch)
                .output()
                .unwrap();
            println!("{name}: ran: hybridopt {cmd}");
            assert!(
                out.status.success(),
                "{name}: `hybridopt {cmd}` failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            ran += 1;
        }
    }
    for (k, u) in used.iter().enumerate() {
        assert!(
            u,
            "skip pattern {:?} matches no command any more: remove it",
            SKIPPED[k].0
        );
    }
    // the README's tour alone has six
    assert!(ran >= 15, "only {ran} commands found");
    let _ = std::fs::remove_dir_all(&scratch);
}

/// The extraction itself: continuation lines, comments, `cargo run`, and text outside
/// command blocks.
#[test]
fn commands_are_read_from_command_blocks() {
    let md = "run\n```text\nhybridopt simulate a.toml \\\n    --json   # the run\n```\n\
              ```sh\ncargo run --release -- systems\ncargo build\n```\n\
              hybridopt outside a block\n```toml\nhybridopt = 1\n```\n";
    assert_eq!(commands(md), ["simulate a.toml --json", "systems"]);
}
