//! Code the benchmarks share: writing a bench's current table into the docs.
//!
//! Each bench that owns a table in `docs/benchmarks.md` calls [`publish`] with its name and
//! the markdown it measured; the text between the page's markers
//! `<!-- bench:NAME:start -->` and `<!-- bench:NAME:end -->` is replaced, so no figure on
//! the page is older than the code that produced it. A `--quick` run (CI's) measures too
//! few repetitions for the docs and writes nothing.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The page the benches write into.
pub fn page() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/benchmarks.md")
}

/// Whether this run is `--quick` (CI's mode).
pub fn quick() -> bool {
    std::env::args().any(|a| a == "--quick")
}

/// `text` with the block between `<!-- bench:NAME:start -->` and `<!-- bench:NAME:end -->`
/// replaced by `body` (the markers kept, each on its own line); `None` when the markers are
/// missing or out of order.
pub fn replace_block(text: &str, name: &str, body: &str) -> Option<String> {
    let start = format!("<!-- bench:{name}:start -->");
    let end = format!("<!-- bench:{name}:end -->");
    let i = text.find(&start)? + start.len();
    let j = i + text[i..].find(&end)?;
    let body = body.trim_end_matches('\n');
    Some(format!("{}\n{body}\n{}", &text[..i], &text[j..]))
}

/// Writes `markdown` (the bench's table, with whatever line of context it needs: the
/// machine's load, the repetitions) between bench `name`'s markers in
/// `docs/benchmarks.md`, unless this is a `--quick` run. Panics, naming the markers, when
/// the page does not have them.
pub fn publish(name: &str, markdown: &str) {
    if quick() {
        println!("(--quick: {name}'s table in docs/benchmarks.md left as it is)");
        return;
    }
    let path = page();
    let text = std::fs::read_to_string(&path).expect("docs/benchmarks.md");
    let new = replace_block(&text, name, markdown).unwrap_or_else(|| {
        panic!(
            "docs/benchmarks.md has no block <!-- bench:{name}:start --> … \
             <!-- bench:{name}:end --> for this bench's table"
        )
    });
    if new != text {
        std::fs::write(&path, new).expect("writing docs/benchmarks.md");
    }
    println!("wrote {name}'s table into {}", path.display());
}

/// `n` with a comma between thousands (1,004).
pub fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The 1-minute load average (`/proc/loadavg`), or "?".
pub fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// CPU time of this process (all threads, user + system), from getrusage(2).
pub fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given; a zeroed rusage is a valid value.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF with a valid pointer to a rusage.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return f64::NAN;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// The median of `v` (the mean of the middle two for an even count).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}
