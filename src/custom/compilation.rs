//! Whether a custom system's expressions run as machine code (`super::jit`, cargo feature
//! `jit`, on by default), and the step that compiles a system's programs when it is built.

use super::program::Program;

/// Compilation is skipped above this many nodes (the values and the reverse functions
/// counted each): Cranelift's time grows with the code, about linearly, and a system this
/// large is compiled in about a second (docs/benchmarks.md, "Compiled expressions").
pub const MAX_NODES: usize = 2_000_000;

/// How a custom system's real evaluations run.
#[derive(Debug, Clone, PartialEq)]
pub enum Compilation {
    /// Machine code: the functions compiled (two a program), the nodes they hold and the
    /// time compilation took.
    Compiled {
        functions: usize,
        nodes: usize,
        seconds: f64,
    },
    /// Interpreted: the file says `[system] jit = false`, or the build has no `jit` feature.
    Off,
    /// Interpreted: more than [`MAX_NODES`] nodes.
    TooLarge { nodes: usize },
    /// Interpreted: the code generator refused (the reason).
    Failed(String),
}

impl Compilation {
    /// Whether the system runs machine code.
    pub fn is_compiled(&self) -> bool {
        matches!(self, Compilation::Compiled { .. })
    }
}

/// Compiles `programs` into one module and attaches each its code, where `wanted` and the
/// build has the `jit` feature; otherwise (or on failure) they stay interpreted.
pub(super) fn compile(programs: &mut [&mut Program], wanted: bool) -> Compilation {
    if !wanted {
        return Compilation::Off;
    }
    let nodes: usize = programs
        .iter()
        .map(|p| 2 * p.exprs().iter().map(|e| e.len()).sum::<usize>())
        .sum();
    if nodes > MAX_NODES {
        return Compilation::TooLarge { nodes };
    }
    machine_code(programs, nodes)
}

#[cfg(feature = "jit")]
fn machine_code(programs: &mut [&mut Program], nodes: usize) -> Compilation {
    use super::jit::Compiler;
    let started = std::time::Instant::now();
    let compiled = (|| {
        let mut c = Compiler::new()?;
        let pending = programs
            .iter()
            .map(|p| c.add(p.exprs()))
            .collect::<Result<Vec<_>, _>>()?;
        c.finish(&pending)
    })();
    match compiled {
        Ok(code) => {
            let functions = 2 * code.len();
            for (p, c) in programs.iter_mut().zip(code) {
                p.attach(c);
            }
            Compilation::Compiled {
                functions,
                nodes,
                seconds: started.elapsed().as_secs_f64(),
            }
        }
        Err(e) => Compilation::Failed(e.to_string()),
    }
}

#[cfg(not(feature = "jit"))]
fn machine_code(_programs: &mut [&mut Program], _nodes: usize) -> Compilation {
    Compilation::Off
}
