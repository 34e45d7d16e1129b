//! Seeded fuzzing of every input path (issue 11, deliverable 3): mutations of every shipped
//! problem file, random and near-miss expressions for the custom-system parser, random
//! B-derivative cases. The property is the same everywhere: no panic; bad input gives a
//! typed error that names the file and where in it, good input a valid (tiny) run.
//!
//! Deterministic (fixed seeds, splitmix64) and fast: each test runs in seconds in release.

use crate::common;

use common::Rng;
use hybridopt::output::bderiv::run_case_str;
use hybridopt::problem::Problem;
use hybridopt::testing::{parse, Scope};
use hybridopt::testing::{Env, Node};
use hybridopt::Error;
use num_dual::Dual64;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// Mutations per shipped problem file.
const MUTATIONS_PER_FILE: usize = 10_000;

fn shipped() -> Vec<(PathBuf, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems");
    let mut v: Vec<(PathBuf, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| {
            let t = std::fs::read_to_string(&p).unwrap();
            (p, t)
        })
        .collect();
    v.sort();
    v
}

fn pick<'a, T>(rng: &mut Rng, v: &'a [T]) -> &'a T {
    &v[(rng.next_u64() % v.len() as u64) as usize]
}

fn below(rng: &mut Rng, n: usize) -> usize {
    (rng.next_u64() % n.max(1) as u64) as usize
}

/// Values that replace a value in the file: wrong types, non-finite, huge, negative, zero,
/// empty, and strings that look like other things.
const VALUES: [&str; 26] = [
    "\"text\"",
    "true",
    "false",
    "[1, 2]",
    "[]",
    "{ a = 1 }",
    "{}",
    "nan",
    "-nan",
    "inf",
    "-inf",
    "1e308",
    "-1e308",
    "1e-320",
    "-1",
    "0",
    "-0.0",
    "\"\"",
    "9223372036854775807",
    "-9223372036854775808",
    "1.5",
    "\"sin(\"",
    "\"y\"",
    "2024-01-01",
    "\"falling\"",
    "\"nan\"",
];

/// Characters for random insertions: TOML syntax, quotes, control characters, unicode.
const BYTES: &[char] = &[
    '[', ']', '{', '}', '=', '"', '\'', ',', '.', '#', '\n', '\t', '\0', '\\', ' ', 'a', '1', '-',
    '+', 'e', 'é', '∞', '\u{7f}', '\u{feff}', '(', ')', '^', '*',
];

/// Byte offsets just after every `=` (the start of a value), at char boundaries.
fn value_starts(text: &str) -> Vec<usize> {
    text.char_indices()
        .filter(|(_, c)| *c == '=')
        .map(|(i, _)| i + 1)
        .collect()
}

/// The end of the value starting at `start`: the next `,`, `}` or newline at the same
/// nesting (good enough for the shipped files' flat values and inline tables).
fn value_end(text: &str, start: usize) -> usize {
    let mut depth = 0i32;
    let mut in_str = false;
    for (i, c) in text[start..].char_indices() {
        match c {
            '"' => in_str = !in_str,
            '[' | '{' if !in_str => depth += 1,
            ']' | '}' if !in_str && depth > 0 => depth -= 1,
            ',' | '}' | ']' if !in_str && depth == 0 => return start + i,
            '\n' => return start + i,
            _ => {}
        }
    }
    text.len()
}

/// The char boundary at or below `i`.
fn floor_boundary(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// One random mutation of `text`.
fn mutate(rng: &mut Rng, text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        return format!("{text}{}", pick(rng, BYTES));
    }
    match below(rng, 8) {
        0 => {
            // drop a line (a key, a table header, a closing bracket)
            let k = below(rng, lines.len());
            let mut l = lines.clone();
            l.remove(k);
            l.join("\n")
        }
        1 => {
            // duplicate a line (a duplicate key or table)
            let k = below(rng, lines.len());
            let mut l = lines.clone();
            l.insert(k, lines[k]);
            l.join("\n")
        }
        2..=4 => {
            // replace a value
            let starts = value_starts(text);
            if starts.is_empty() {
                return text.to_string();
            }
            let s = *pick(rng, &starts);
            let e = value_end(text, s);
            format!("{} {}{}", &text[..s], pick(rng, &VALUES), &text[e..])
        }
        5 => {
            // insert random characters
            let at = floor_boundary(text, below(rng, text.len() + 1));
            let n = 1 + below(rng, 6);
            let ins: String = (0..n).map(|_| *pick(rng, BYTES)).collect();
            format!("{}{}{}", &text[..at], ins, &text[at..])
        }
        6 => {
            // truncate
            let at = floor_boundary(text, below(rng, text.len() + 1));
            text[..at].to_string()
        }
        _ => {
            // swap two lines
            let (a, b) = (below(rng, lines.len()), below(rng, lines.len()));
            let mut l = lines.clone();
            l.swap(a, b);
            l.join("\n")
        }
    }
}

/// Whether an error message says where: a TOML line, a `[table]`, a quoted `name` or a key.
fn names_a_place(msg: &str) -> bool {
    msg.contains("line ") || msg.contains('[') || msg.contains('`') || msg.contains("needs")
}

/// Parses `text`; on success, a tiny run (horizon capped at 0.01, at most 2,000 steps).
/// Returns an error description for a panic or an untyped/unplaced error.
fn check_problem(path: &Path, text: &str) -> Result<bool, String> {
    let r = catch_unwind(AssertUnwindSafe(|| Problem::parse(text, path)));
    let parsed = match r {
        Err(_) => return Err("panic in Problem::parse".into()),
        Ok(p) => p,
    };
    match parsed {
        Err(Error::Problem { file, message }) => {
            if file != path {
                return Err(format!("error names {file:?}, not {path:?}"));
            }
            if !names_a_place(&message) {
                return Err(format!("error does not say where: {message}"));
            }
            Ok(false)
        }
        Err(other) => Err(format!("not a problem error: {other:?}")),
        Ok(mut p) => {
            p.t_end = p.t_end.min(p.t0 + 0.01);
            p.solver.max_steps = 2_000;
            let run = catch_unwind(AssertUnwindSafe(|| -> Result<(), Error> {
                let s = p.setup()?;
                let tr = s.simulate(&p.theta_values())?;
                let _ = s.objective_values(&tr, &p.theta_values());
                Ok(())
            }));
            match run {
                Err(_) => Err("panic in a run of a valid mutation".into()),
                Ok(_) => Ok(true),
            }
        }
    }
}

/// ≥ 10,000 mutations of every shipped problem file (1–3 stacked): never a panic; an
/// error is `Error::Problem` naming the file and saying where; a file that still parses
/// makes a tiny run that ends in a result or a typed error.
#[test]
fn mutated_problem_files_never_panic() {
    let files = shipped();
    assert!(files.len() >= 12, "{} files", files.len());
    let mut failures = Vec::new();
    let (mut total, mut valid) = (0usize, 0usize);
    for (k, (path, text)) in files.iter().enumerate() {
        let mut rng = Rng(1000 + k as u64);
        let mut run_budget: usize = 40; // tiny runs per file (the rest: parse and validate)
        for _ in 0..MUTATIONS_PER_FILE {
            let mut t = text.clone();
            for _ in 0..1 + below(&mut rng, 3) {
                t = mutate(&mut rng, &t);
            }
            total += 1;
            let parsed = if run_budget > 0 {
                check_problem(path, &t)
            } else {
                match catch_unwind(AssertUnwindSafe(|| Problem::parse(&t, path))) {
                    Err(_) => Err("panic in Problem::parse".into()),
                    Ok(Err(Error::Problem { file, message })) => {
                        if &file != path {
                            Err(format!("error names {file:?}"))
                        } else if !names_a_place(&message) {
                            Err(format!("error does not say where: {message}"))
                        } else {
                            Ok(false)
                        }
                    }
                    Ok(Err(other)) => Err(format!("not a problem error: {other:?}")),
                    Ok(Ok(_)) => Ok(true),
                }
            };
            match parsed {
                Ok(true) => {
                    valid += 1;
                    run_budget = run_budget.saturating_sub(1);
                }
                Ok(false) => {}
                Err(why) => failures.push(format!("{}: {why}\n--- text ---\n{t}", path.display())),
            }
        }
    }
    println!(
        "measured: {total} mutations of {} files, {valid} still valid, {} failures",
        files.len(),
        failures.len()
    );
    let mut kinds: Vec<String> = failures
        .iter()
        .map(|f| f.lines().next().unwrap_or("").to_string())
        .collect();
    kinds.sort();
    kinds.dedup();
    for k in kinds.iter().take(40) {
        println!("FAIL {k}");
    }
    assert!(
        failures.is_empty(),
        "{} failures; first:\n{}",
        failures.len(),
        failures[0]
    );
}

/// A problem file that is not UTF-8, or missing: `Error::Io` naming the path.
#[test]
fn unreadable_problem_files_are_io_errors() {
    let dir = std::env::temp_dir().join(format!("hybridopt-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bytes.toml");
    let mut rng = Rng(5);
    let bytes: Vec<u8> = (0..300).map(|_| rng.next_u64() as u8 | 0x80).collect();
    std::fs::write(&bad, bytes).unwrap();
    for p in [bad.clone(), dir.join("missing.toml")] {
        match Problem::load(&p) {
            Err(Error::Io { path, .. }) => assert_eq!(path, p),
            other => panic!("{p:?}: {other:?}"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------
// expressions

fn scope() -> Scope {
    let s: Vec<String> = ["y", "v"].iter().map(|s| s.to_string()).collect();
    let p: Vec<String> = ["g", "e", "c"].iter().map(|s| s.to_string()).collect();
    Scope::new()
        .with("t", Node::Time)
        .with_all(&s, Node::State)
        .with_all(&["u".to_string()], Node::Control)
        .with_all(&p, Node::Param)
}

/// A random well-formed expression of depth ≤ `depth`.
fn gen_expr(rng: &mut Rng, depth: usize) -> String {
    let leaves = [
        "y", "v", "g", "e", "c", "u", "t", "pi", "1", "0.5", "2e-3", "0", "1e300",
    ];
    if depth == 0 || below(rng, 4) == 0 {
        return pick(rng, &leaves).to_string();
    }
    let a = gen_expr(rng, depth - 1);
    let b = gen_expr(rng, depth - 1);
    match below(rng, 10) {
        0 => format!("-{a}"),
        1 => format!("({a})"),
        2 | 3 => format!("{a} {} {b}", pick(rng, &["+", "-", "*", "/", "^"])),
        // comparisons do not chain: parenthesize their operands
        4 => format!(
            "(({a}) {} ({b}))",
            pick(rng, &["<", "<=", ">", ">=", "==", "!=", "&&", "||"])
        ),
        5 => format!(
            "{}({a})",
            pick(
                rng,
                &[
                    "sin", "cos", "tan", "exp", "ln", "sqrt", "abs", "tanh", "asin", "acos",
                    "atan", "sinh", "cosh"
                ]
            )
        ),
        6 => format!("{}({a}, {b})", pick(rng, &["atan2", "min", "max", "pow"])),
        7 => format!("if({a}, {b}, {})", gen_expr(rng, depth - 1)),
        8 => format!("!({a})"),
        _ => format!(
            "{a}^{}",
            pick(rng, &["2", "3", "-1", "0.5", "-2.5", "64", "65"])
        ),
    }
}

/// A near miss: one character deleted, inserted, replaced or two swapped.
fn near_miss(rng: &mut Rng, s: &str) -> String {
    let mut c: Vec<char> = s.chars().collect();
    let alphabet: Vec<char> = "()+-*/^,<>=!&|.eE0123456789 xyvgsinq_#\"'\t"
        .chars()
        .collect();
    let i = below(rng, c.len() + 1);
    match below(rng, 4) {
        0 if !c.is_empty() => {
            c.remove(i.min(c.len() - 1));
        }
        1 => c.insert(i, *pick(rng, &alphabet)),
        2 if !c.is_empty() => {
            let k = i.min(c.len() - 1);
            c[k] = *pick(rng, &alphabet);
        }
        _ if c.len() >= 2 => {
            let j = below(rng, c.len());
            let k = i.min(c.len() - 1);
            c.swap(k, j);
        }
        _ => c.push(*pick(rng, &alphabet)),
    }
    c.into_iter().collect()
}

/// Parses `src`; a parse error must point inside (or just after) the text; a parsed
/// expression must evaluate without panic, and in `f64` and in dual numbers to the same
/// value (the dual's real part is the same arithmetic).
fn check_expr(rng: &mut Rng, src: &str) -> Result<bool, String> {
    let sc = scope();
    let r = catch_unwind(AssertUnwindSafe(|| parse(src, &sc)));
    let e = match r {
        Err(_) => return Err(format!("panic parsing {src:?}")),
        Ok(Err(err)) => {
            let n = src.chars().count();
            return if err.col <= n && !err.message.is_empty() {
                Ok(false)
            } else {
                Err(format!("{src:?}: error column {} of {n}", err.col))
            };
        }
        Ok(Ok(e)) => e,
    };
    let x = [rng.uniform(-3.0, 3.0), rng.uniform(-3.0, 3.0)];
    let p = [
        rng.uniform(-3.0, 3.0),
        rng.uniform(0.0, 1.0),
        rng.uniform(0.0, 1.0),
    ];
    let (t, u) = (rng.uniform(0.0, 5.0), [rng.uniform(-1.0, 1.0)]);
    let vals = catch_unwind(AssertUnwindSafe(|| {
        let f = e.eval(&Env {
            t,
            x: &x,
            u: &u,
            p: &p,
        });
        let d = |v: &[f64]| v.iter().map(|&a| Dual64::new(a, 1.0)).collect::<Vec<_>>();
        let (xd, ud, pd) = (d(&x), d(&u), d(&p));
        let g = e.eval(&Env {
            t: Dual64::new(t, 1.0),
            x: &xd,
            u: &ud,
            p: &pd,
        });
        (f, g.re)
    }));
    match vals {
        Err(_) => Err(format!("panic evaluating {src:?}")),
        Ok((f, g)) => {
            let same = (f.is_nan() && g.is_nan())
                || f == g
                || (f - g).abs() <= 1e-12 * f.abs().max(g.abs());
            if same {
                Ok(true)
            } else {
                Err(format!("{src:?}: f64 {f} vs dual {g}"))
            }
        }
    }
}

/// 10,000 random well-formed expressions, 10,000 near misses of them, 2,000 random
/// strings and the pathological ones (deep nesting, long chains, huge numbers): never a
/// panic, errors point into the text, and f64 and dual evaluation agree.
#[test]
fn random_and_near_miss_expressions_never_panic() {
    let mut rng = Rng(77);
    let mut failures = Vec::new();
    let (mut parsed, mut rejected) = (0usize, 0usize);
    let mut tally = |r: Result<bool, String>| match r {
        Ok(true) => parsed += 1,
        Ok(false) => rejected += 1,
        Err(e) => failures.push(e),
    };
    let mut well_formed = 0;
    for _ in 0..10_000 {
        let s = gen_expr(&mut rng, 5);
        let r = check_expr(&mut rng, &s);
        well_formed += usize::from(r == Ok(true));

        tally(r);
        let m = near_miss(&mut rng, &s);
        tally(check_expr(&mut rng, &m));
    }
    let alphabet: Vec<char> = "()+-*/^,<>=!&|.e0123456789 xyvgsinpow_\u{0}é∞−"
        .chars()
        .collect();
    for _ in 0..2_000 {
        let n = below(&mut rng, 30);
        let s: String = (0..n).map(|_| *pick(&mut rng, &alphabet)).collect();
        tally(check_expr(&mut rng, &s));
    }
    let deep = [
        "(".repeat(100_000) + "y" + &")".repeat(100_000),
        "(".repeat(3000) + "y" + &")".repeat(3000),
        "-".repeat(3000) + "y",
        "!".repeat(3000) + "y",
        vec!["y"; 2000].join("^"),
        vec!["y"; 2000].join("+"),
        vec!["1"; 2000].join("+"),
        "sin(".repeat(1000) + "y" + &")".repeat(1000),
        "9".repeat(400),
        "1e99999".into(),
        "y^1e300".into(),
        String::new(),
        "   ".into(),
    ];
    for s in &deep {
        tally(check_expr(&mut rng, s));
    }
    println!(
        "measured: {parsed} parsed ({well_formed} of 10,000 generated), {rejected} rejected, {} failures",
        failures.len()
    );
    for f in failures.iter().take(10) {
        println!("FAIL {f}");
    }
    assert!(
        failures.is_empty(),
        "{} failures; first: {}",
        failures.len(),
        failures[0]
    );
    // the generator's output is valid by construction
    assert_eq!(well_formed, 10_000);
}

// ---------------------------------------------------------------------------------------
// B-derivative cases

/// A random number for a case: ordinary, zero, huge, tiny or negative.
fn case_number(rng: &mut Rng) -> String {
    match below(rng, 8) {
        0 => "0".into(),
        1 => "1e308".into(),
        2 => "-1e308".into(),
        3 => "1e-320".into(),
        _ => format!("{}", rng.uniform(-3.0, 3.0)),
    }
}

fn case_vec(rng: &mut Rng, n: usize) -> String {
    let v: Vec<String> = (0..n).map(|_| case_number(rng)).collect();
    format!("[{}]", v.join(", "))
}

/// A well-formed case: n ≤ 3 surfaces in d = n dimensions, normals near the identity,
/// every field crossing every surface forwards (components in [0.5, 2]).
fn valid_case(rng: &mut Rng) -> String {
    let n = 1 + below(rng, 3);
    let normals: Vec<String> = (0..n)
        .map(|i| {
            let row: Vec<String> = (0..n)
                .map(|j| format!("{}", if i == j { 1.0 } else { rng.uniform(-0.2, 0.2) }))
                .collect();
            format!("[{}]", row.join(", "))
        })
        .collect();
    let fields: Vec<String> = (0..1usize << n)
        .map(|m| {
            let signs: Vec<&str> = (0..n)
                .map(|j| if (m >> j) & 1 == 1 { "1" } else { "-1" })
                .collect();
            let v: Vec<String> = (0..n)
                .map(|_| format!("{}", rng.uniform(0.5, 2.0)))
                .collect();
            format!(
                "{{\"signs\": [{}], \"value\": [{}]}}",
                signs.join(", "),
                v.join(", ")
            )
        })
        .collect();
    let dirs: Vec<String> = (0..1 + below(rng, 3))
        .map(|_| {
            let v: Vec<String> = (0..n)
                .map(|_| format!("{}", rng.uniform(-1.0, 1.0)))
                .collect();
            format!("[{}]", v.join(", "))
        })
        .collect();
    format!(
        "{{\"normals\": [{}], \"fields\": [{}], \"directions\": [{}]}}",
        normals.join(", "),
        fields.join(", "),
        dirs.join(", ")
    )
}

/// A random case: n surfaces in d dimensions, mostly the right shapes, sometimes not
/// (wrong lengths, missing or repeated sign vectors, signs other than ±1, extreme numbers).
fn gen_case(rng: &mut Rng) -> String {
    if below(rng, 2) == 0 {
        return valid_case(rng);
    }
    let n = below(rng, 4);
    let d = below(rng, 4) + usize::from(below(rng, 4) > 0);
    let len = |rng: &mut Rng| {
        if below(rng, 10) == 0 {
            below(rng, 5)
        } else {
            d
        }
    };
    let normals: Vec<String> = (0..n)
        .map(|_| {
            let l = len(rng);
            case_vec(rng, l)
        })
        .collect();
    let mut fields = Vec::new();
    let count = if below(rng, 8) == 0 {
        below(rng, 9)
    } else {
        1 << n
    };
    for m in 0..count {
        let signs: Vec<String> = (0..n)
            .map(|j| match below(rng, 20) {
                0 => "0".to_string(),
                1 => "2".to_string(),
                _ => {
                    if (m >> j) & 1 == 1 {
                        "1".into()
                    } else {
                        "-1".into()
                    }
                }
            })
            .collect();
        let l = len(rng);
        fields.push(format!(
            "{{\"signs\": [{}], \"value\": {}}}",
            signs.join(", "),
            case_vec(rng, l)
        ));
    }
    let dirs: Vec<String> = (0..1 + below(rng, 3))
        .map(|_| {
            let l = len(rng);
            case_vec(rng, l)
        })
        .collect();
    format!(
        "{{\"normals\": [{}], \"fields\": [{}], \"directions\": [{}]}}",
        normals.join(", "),
        fields.join(", "),
        dirs.join(", ")
    )
}

/// 3,000 random cases and 3,000 character-level mutations of them: `run_case_str` never
/// panics; a failure is a `CornerError` with a message.
#[test]
fn random_bderiv_cases_never_panic() {
    let mut rng = Rng(31);
    let mut failures = Vec::new();
    let (mut ok, mut err) = (0usize, 0usize);
    for i in 0..6_000 {
        let mut s = gen_case(&mut rng);
        if i % 2 == 1 {
            s = near_miss(&mut rng, &s);
        }
        match catch_unwind(AssertUnwindSafe(|| run_case_str(&s))) {
            Err(_) => failures.push(s),
            Ok(Ok(_)) => ok += 1,
            Ok(Err(e)) if !e.to_string().is_empty() => err += 1,
            Ok(Err(other)) => failures.push(format!("{s}: {other:?}")),
        }
    }
    println!(
        "measured: {ok} cases evaluated, {err} rejected, {} failures",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures; first: {}",
        failures.len(),
        failures[0]
    );
    assert!(
        ok > 100,
        "too few valid cases ({ok}) to exercise the evaluation"
    );
}

// ---------------------------------------------------------------------------------------
// the command line: --param and runs that hit limits

fn bin() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_hybridopt"));
    c.env("RUST_BACKTRACE", "0");
    c
}

fn tmpdir(tag: &str) -> PathBuf {
    common::scratch("fuzz", tag, true)
}

fn problem_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("problems")
        .join(name)
}

/// `--param` with NaN, ±inf, an overflowing number, an empty value, an empty or unknown
/// name, or no `=`: exit code 1, a message naming the flag and what is wrong, no panic,
/// nothing written.
#[test]
fn bad_param_overrides_fail_clearly() {
    let dir = tmpdir("param");
    let cases = [
        ("e=NaN", "--param e=NaN: not a finite number"),
        ("e=nan", "--param e=NaN: not a finite number"),
        ("e=inf", "--param e=inf: not a finite number"),
        ("e=-inf", "--param e=-inf: not a finite number"),
        ("e=1e999", "--param e=inf: not a finite number"),
        ("e=", "--param e=: `` is not a number"),
        ("e=abc", "--param e=abc: `abc` is not a number"),
        ("=1", "--param =1: the parameter name is empty"),
        (
            "foo=1",
            "--param foo: unknown parameter; valid: g, e, c, y0, v0",
        ),
        ("e", "--param e: expected NAME=VALUE"),
        ("e=1.5", "--param e=1.5: outside the bounds"),
    ];
    for (file, bounded) in [("custom_ball.toml", false), ("ball_identify.toml", true)] {
        for (arg, want) in cases {
            if arg == "e=1.5" && !bounded {
                continue;
            }
            let out = dir.join("out");
            let o = bin()
                .args(["simulate", problem_path(file).to_str().unwrap(), "--out"])
                .arg(&out)
                .args(["--param", arg])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{file} --param {arg}: {err}");
            assert!(err.contains(want), "{file} --param {arg}: {err}");
            assert!(!err.contains("panicked"), "{err}");
            assert!(!out.exists(), "{file} --param {arg} wrote {out:?}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every file under `dir` (relative path → bytes).
fn snapshot(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut m = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                m.insert(
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    m
}

/// A one-state custom system `ẏ = FLOW`, y(0) = y0 = 1, over [0, 2].
fn one_state(flow: &str) -> String {
    format!(
        "name = \"limits\"\n[system]\nkind = \"custom\"\nstates = [\"y\"]\nparameters = [\"y0\"]\n\
         initial = {{ y = \"y0\" }}\noutputs = [{{ name = \"y\", expr = \"y\" }}]\n\
         [[system.modes]]\nname = \"only\"\nflow = {{ y = \"{flow}\" }}\n\
         [simulation]\nt_end = 2.0\n[parameters]\ny0 = {{ value = 1.0, optimize = true }}\n\
         [[cost]]\nkind = \"terminal\"\noutput = \"y\"\n"
    )
}

/// Runs that hit a limit — Zeno (more events than max_events), step-size underflow (a
/// finite-time blow-up ẏ = y²), a non-finite flow (ẏ = sqrt(y − 2) at y = 1) — end with
/// the typed error, in the library and on the command line (exit code 1, the message),
/// and leave the results of an earlier run in the same `--out` byte-identical.
#[test]
fn runs_hitting_limits_keep_earlier_results() {
    let dir = tmpdir("limits");
    let zeno = std::fs::read_to_string(problem_path("custom_ball.toml"))
        .unwrap()
        .replace("max_events = 1000", "max_events = 5")
        .replace("c  = { value = 0.1 }", "c  = { value = 0.0 }")
        .replace("e  = { value = 0.8 }", "e  = { value = 0.95 }")
        .replace("t_end = 3.0", "t_end = 20.0");
    let cases = [
        ("zeno", zeno, "more than max_events = 5 events by t = "),
        ("blowup", one_state("y^2"), "step-size underflow at t = 1.0"),
        (
            "nan",
            one_state("sqrt(y - 2)"),
            "non-finite value in right-hand side at t = 0",
        ),
    ];
    // the library's typed errors
    for (tag, text, _) in &cases {
        let p = Problem::parse(text, Path::new("limits.toml")).unwrap();
        let err = p.setup().unwrap().simulate(&p.theta_values()).unwrap_err();
        let typed = match *tag {
            "zeno" => matches!(err, Error::Zeno { max_events: 5, .. }),
            "blowup" => matches!(err, Error::StepSizeUnderflow { .. }),
            _ => matches!(err, Error::NonFinite { .. }),
        };
        assert!(typed, "{tag}: {err:?}");
    }
    // the command line: an earlier result stays as it was
    let out = dir.join("results");
    let o = bin()
        .args([
            "simulate",
            problem_path("custom_ball.toml").to_str().unwrap(),
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let before = snapshot(&out);
    assert!(before.contains_key(Path::new("trajectory.csv")));
    for (tag, text, want) in &cases {
        let file = dir.join(format!("{tag}.toml"));
        std::fs::write(&file, text).unwrap();
        for cmd in ["simulate", "optimize"] {
            let o = bin()
                .arg(cmd)
                .arg(&file)
                .arg("--out")
                .arg(&out)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{tag} {cmd}: {err}");
            assert!(err.contains(want), "{tag} {cmd}: {err}");
            assert!(!err.contains("panicked"), "{err}");
            assert_eq!(
                snapshot(&out),
                before,
                "{tag} {cmd} changed the earlier results"
            );
        }
    }
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "results" && !n.ends_with(".toml"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
