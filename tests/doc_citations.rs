//! Every document a code comment cites is in the repository (in docs/, docs/guide/ or at
//! the root), and every cited section exists: `theory.md §N` and `reference-models.md §N`
//! (also written without `.md`) need a heading `## N.` in docs/; `constrained.md, "Title"`
//! and `design.md, "Title"` a heading `## Title`; `design.md habit N` an item `N.` under
//! "Habits".

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p
            .extension()
            .is_some_and(|x| x == "rs" || x == "py" || x == "pyi")
        {
            out.push(p);
        }
    }
}

fn doc(name: &str) -> String {
    std::fs::read_to_string(root().join("docs").join(name))
        .unwrap_or_else(|e| panic!("docs/{name}: {e}"))
}

/// The numbers N of `<stem>[.md] §N` in `text`.
fn sections(text: &str, stem: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices(stem) {
        let rest = text[i + stem.len()..].trim_start_matches(".md");
        let rest = rest.trim_start_matches([',', ' ']);
        if let Some(r) = rest.strip_prefix('§') {
            let n: String = r.chars().take_while(|c| c.is_ascii_digit()).collect();
            if !n.is_empty() {
                out.push(n);
            }
        }
    }
    out
}

/// The quoted titles of `<file>, "Title"` in `text`.
fn titles(text: &str, file: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices(file) {
        let rest = text[i + file.len()..].trim_start_matches([',', ' ', '\n', '/', '!']);
        if let Some(r) = rest.strip_prefix('"') {
            if let Some(end) = r.find('"') {
                out.push(r[..end].to_string());
            }
        }
    }
    out
}

#[test]
fn every_cited_document_and_section_exists() {
    let mut files = Vec::new();
    for d in [
        "src",
        "tests",
        "benches",
        "examples",
        "python/src",
        "python/hybridopt",
    ] {
        sources(&root().join(d), &mut files);
    }
    let theory = doc("theory.md");
    let models = doc("reference-models.md");
    let design = doc("design.md");
    let constrained = doc("constrained.md");
    let numbered = |d: &str, n: &str| d.lines().any(|l| l.starts_with(&format!("## {n}.")));
    let titled = |d: &str, t: &str| d.lines().any(|l| l.trim_start_matches('#').trim() == t);
    let mut checked = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let at = f.strip_prefix(root()).unwrap().display().to_string();
        if at.ends_with("doc_citations.rs") {
            continue;
        }
        // every `name.md` cited is a file of the repository
        for (i, _) in text.match_indices(".md") {
            let start = text[..i]
                .rfind(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
                .map_or(0, |s| s + 1);
            let name = &text[start..i + 3];
            if name.len() <= 3 || name == "README.md" {
                continue;
            }
            let found = root().join("docs").join(name).exists()
                || root().join("docs/guide").join(name).exists()
                || root().join(name).exists()
                || root().join("benches/peers").join(name).exists();
            assert!(found, "{at}: cites {name}, which is not in the repository");
            checked += 1;
        }
        for n in sections(&text, "theory") {
            assert!(numbered(&theory, &n), "{at}: theory.md §{n} has no section");
        }
        for n in sections(&text, "reference-models") {
            assert!(
                numbered(&models, &n),
                "{at}: reference-models.md §{n} has no section"
            );
        }
        for t in titles(&text, "constrained.md") {
            assert!(
                titled(&constrained, &t),
                "{at}: constrained.md has no section {t:?}"
            );
        }
        for t in titles(&text, "design.md") {
            assert!(titled(&design, &t), "{at}: design.md has no section {t:?}");
        }
    }
    assert!(
        checked > 100,
        "only {checked} citations found: the scan is broken"
    );
    for n in 1..=8 {
        assert!(
            design.contains(&format!("\n{n}. ")),
            "design.md's Habits lack item {n}"
        );
    }
}
