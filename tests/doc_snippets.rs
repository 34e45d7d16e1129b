//! Every Rust block of the documentation compiles: a block of a page that runs as a
//! doctest (a page `src/lib.rs` includes under `#[cfg(doctest)]`) is compiled by
//! `cargo test --doc`; any other block must stand, comments, whitespace and trailing
//! commas aside, inside an example (`examples/*.rs`, which `cargo test` builds), whose doc
//! names the page — its leading `use` lines among the example's, the rest in one piece. A new block in a guide fails here until it is one or the other.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The markdown files of the docs and the README.
fn pages() -> Vec<PathBuf> {
    let mut out = vec![root().join("README.md")];
    let mut dirs = vec![root().join("docs")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The ```rust blocks of a page, each with its first line's number.
fn rust_blocks(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let fence = line.trim_start();
        match &mut open {
            None if fence.starts_with("```rust") => open = Some((i + 2, String::new())),
            Some(_) if fence.starts_with("```") => out.push(open.take().unwrap()),
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
            }
            None => {}
        }
    }
    out
}

/// Code without its `//` comments, whitespace and trailing commas.
fn normalized(code: &str) -> String {
    let mut s: String = code
        .lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    for (from, to) in [(",)", ")"), (",}", "}"), (",]", "]")] {
        s = s.replace(from, to);
    }
    s
}

/// A block's leading `use` lines (an example has them at its top, the rest in `main`) and
/// the code after them.
fn split_uses(block: &str) -> (Vec<String>, String) {
    let mut uses = Vec::new();
    let mut lines = block.lines().peekable();
    while let Some(l) = lines.peek() {
        let t = l.trim();
        if t.starts_with("use ") {
            uses.push(t.to_string());
        } else if !t.is_empty() {
            break;
        }
        lines.next();
    }
    (uses, lines.collect::<Vec<_>>().join("\n"))
}

/// The pages `src/lib.rs` includes as doctests.
fn doctest_pages() -> Vec<PathBuf> {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    lib.split("include_str!(\"../")
        .skip(1)
        .map(|rest| root().join(&rest[..rest.find('"').unwrap()]))
        .collect()
}

fn examples() -> Vec<(PathBuf, String)> {
    let mut out: Vec<(PathBuf, String)> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect();
    out.sort();
    out
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap().display().to_string()
}

#[test]
fn every_rust_block_of_the_docs_is_compiled() {
    let doctests = doctest_pages();
    assert!(
        doctests.iter().any(|p| p.ends_with("README.md")),
        "src/lib.rs includes the README as a doctest: {doctests:?}"
    );
    let examples = examples();
    let mut checked = 0;
    let mut missing = Vec::new();
    for page in pages() {
        if doctests.contains(&page) {
            continue;
        }
        let text = std::fs::read_to_string(&page).unwrap();
        for (line, block) in rust_blocks(&text) {
            checked += 1;
            let (uses, code) = split_uses(&block);
            let home = examples.iter().find(|(_, ex)| {
                let ex = normalized(ex);
                ex.contains(&normalized(&code)) && uses.iter().all(|u| ex.contains(&normalized(u)))
            });
            match home {
                Some((ex, ex_text)) => {
                    let name = rel(&page);
                    let page_name = name.rsplit('/').next().unwrap();
                    assert!(
                        ex_text.contains(page_name),
                        "{} holds the block of {name}:{line} but its doc does not name the page",
                        rel(ex)
                    );
                }
                None => missing.push(format!("{}:{line}", rel(&page))),
            }
        }
    }
    assert!(
        missing.is_empty(),
        "Rust blocks that no test compiles (make the page a doctest in src/lib.rs, or put \
         the block in an example): {missing:?}"
    );
    // today: docs/guide/mechanisms.md (five_bar_newton.rs), docs/guide/shooting.md
    // (shooting_guess_table.rs)
    assert!(checked >= 2, "{checked} blocks outside the doctest pages");
}

#[test]
fn the_normal_form_drops_only_layout_and_comments() {
    let a = "let r = f(\n    a,\n    b, // why\n)?;";
    let b = "let r = f(a, b)?;";
    assert_eq!(normalized(a), normalized(b));
    assert_ne!(normalized("f(a, b)"), normalized("f(b, a)"));
    assert_eq!(normalized("let s = \"a // b\";"), "lets=\"a//b\";");
}
