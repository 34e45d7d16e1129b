//! The user documentation stays true to the repository: every relative Markdown link in
//! README.md and docs/**/*.md points at a file that exists (and, with `#anchor`, at a
//! heading of that file), and every `--flag` the documents mention is a flag of the
//! `hybridopt` command line (or of one of the few other tools they show: cargo, pip,
//! sbatch, …).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every Markdown file under docs/.
fn documents() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    let mut v = vec![root().join("README.md")];
    walk(&root().join("docs"), &mut v);
    v.sort();
    v
}

/// The text outside fenced code blocks, with inline code spans blanked out, as lines.
fn prose(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push(String::new());
            continue;
        }
        if fenced {
            out.push(String::new());
            continue;
        }
        let mut s = String::new();
        let mut code = false;
        for ch in line.chars() {
            if ch == '`' {
                code = !code;
                s.push(' ');
            } else {
                s.push(if code { ' ' } else { ch });
            }
        }
        out.push(s);
    }
    out
}

/// The targets of `[text](target)` and `![alt](target)` on a line of prose.
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        match after.find(')') {
            Some(j) => {
                // `[a](b "title")`: the target is the first word
                let t = after[..j].split_whitespace().next().unwrap_or("");
                out.push(t.trim_matches(['<', '>']).to_string());
                rest = &after[j + 1..];
            }
            None => break,
        }
    }
    out
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of every heading of a Markdown file (repeated headings get `-1`, `-2`, …).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let base = slug(line.trim_start_matches('#').replace('`', "").as_str());
        let mut a = base.clone();
        let mut n = 0;
        while seen.contains(&a) {
            n += 1;
            a = format!("{base}-{n}");
        }
        seen.insert(a);
    }
    seen
}

#[test]
fn every_relative_link_resolves() {
    let mut bad = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let at = doc.strip_prefix(root()).unwrap().display().to_string();
        for (n, line) in prose(&text).iter().enumerate() {
            for t in link_targets(line) {
                if t.is_empty() || t.contains("://") || t.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (path, anchor) = match t.split_once('#') {
                    Some((p, a)) => (p, Some(a)),
                    None => (t.as_str(), None),
                };
                let file = if path.is_empty() {
                    doc.clone()
                } else {
                    doc.parent().unwrap().join(path)
                };
                if !file.exists() {
                    bad.push(format!("{at}:{}: {t}: no such file", n + 1));
                    continue;
                }
                if let Some(a) = anchor {
                    if file.extension().is_some_and(|x| x == "md") {
                        let target = std::fs::read_to_string(&file).unwrap();
                        if !anchors(&target).contains(a) {
                            bad.push(format!("{at}:{}: {t}: no heading with that anchor", n + 1));
                        }
                    }
                }
            }
        }
    }
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
    assert!(
        checked > 50,
        "only {checked} links found: the scan is broken"
    );
}

/// Flags of other programs that the documents show (build, test, install, schedulers).
const OTHER_TOOLS: &[&str] = &[
    // cargo and the test harness
    "--release",
    "--workspace",
    "--test",
    "--bench",
    "--doc",
    "--example",
    "--no-deps",
    "--no-default-features",
    "--open",
    "--nocapture",
    "--ignored",
    "--quick",
    "--path",
    // pip, maturin
    "--no-build-isolation",
    // scripts/mutants.sh
    "--list",
    // Slurm
    "--job-name",
    "--array",
    "--cpus-per-task",
    "--time",
    "--parsable",
    "--dependency",
    "--wrap",
];

#[test]
fn every_flag_mentioned_exists() {
    let mut known: BTreeSet<String> = OTHER_TOOLS.iter().map(|s| s.to_string()).collect();
    let commands = [
        "simulate", "gradient", "optimize", "periodic", "sweep", "merge", "animate", "systems",
        "bderiv", "feedback",
    ];
    for c in commands {
        let out = Command::new(env!("CARGO_BIN_EXE_hybridopt"))
            .args([c, "--help"])
            .output()
            .expect("runs");
        assert!(out.status.success(), "hybridopt {c} --help failed");
        known.extend(flags(&String::from_utf8_lossy(&out.stdout)));
    }
    let mut bad = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let at = doc.strip_prefix(root()).unwrap().display().to_string();
        for (n, line) in text.lines().enumerate() {
            for f in flags(line) {
                if !known.contains(&f) {
                    bad.push(format!("{at}:{}: {f}", n + 1));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "flags that neither hybridopt nor the listed tools have:\n{}",
        bad.join("\n")
    );
}

/// The `--name` tokens of a text (a name starts with a letter; `---` rules and `--` alone
/// are not flags).
fn flags(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 2 < b.len() {
        let starts = b[i] == b'-'
            && b[i + 1] == b'-'
            && b[i + 2].is_ascii_lowercase()
            && (i == 0 || !(b[i - 1] == b'-' || b[i - 1].is_ascii_alphanumeric()));
        if starts {
            let mut j = i + 2;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'-') {
                j += 1;
            }
            out.push(text[i..j].trim_end_matches('-').to_string());
            i = j;
        } else {
            i += 1;
        }
    }
    out
}
