//! Whether a custom system's expressions run as machine code (`super::jit`, cargo feature
//! `jit`, on by default), and the step that compiles a system's programs when it is built.

use super::program::Program;

/// Compilation is skipped above this many nodes (counted once per function they are
/// compiled into). Cranelift's time grows faster than the code here, as n^1.6 (each list of
/// expressions is one function, and the register allocator's work per function grows
/// faster than its size): the chain of `benches/scaling.rs` at 256 states, 7,288 nodes in
/// 0.067 s; at 1,024, 29,176 in 0.34 s; at 12,000, 341,992 in 16.3 s. At this bound a
/// system compiles in about 2 s.
pub const MAX_NODES: usize = 100_000;

/// How a custom system's real evaluations run.
#[derive(Debug, Clone, PartialEq)]
pub enum Compilation {
    /// Machine code: the functions compiled (one a program, two a mode), the nodes they
    /// hold and the time compilation took.
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

/// What compiling a system gives: how it runs, and with machine code each mode's
/// flow-and-outputs function and whole product (`super::jit::ModeCode`).
pub(super) struct Compiled {
    pub status: Compilation,
    #[cfg(feature = "jit")]
    pub modes: Vec<super::jit::ModeCode>,
}

/// The programs of a system to compile: the flows and the outputs of each mode first (mode
/// m's flows at m, its outputs at `modes + m`), then any others (guards, resets); and the
/// sizes of states, controls and parameters.
pub(super) struct Programs<'a> {
    pub list: Vec<&'a mut Program>,
    pub modes: usize,
    #[cfg_attr(
        not(feature = "jit"),
        allow(dead_code, reason = "read by the jit feature")
    )]
    pub dims: (usize, usize, usize),
}

/// Compiles `programs` into one module and attaches each its code, where `wanted` and the
/// build has the `jit` feature; otherwise (or on failure) they stay interpreted.
pub(super) fn compile(mut programs: Programs<'_>, wanted: bool) -> Compiled {
    let status = |status| Compiled {
        status,
        #[cfg(feature = "jit")]
        modes: Vec::new(),
    };
    if !wanted {
        return status(Compilation::Off);
    }
    let size = |p: &Program| p.exprs().iter().map(|e| e.len()).sum::<usize>();
    let modes: usize = programs.list[..2 * programs.modes]
        .iter()
        .map(|p| size(p))
        .sum();
    // each program's values, and per mode its lists twice (values, product)
    let nodes = programs.list.iter().map(|p| size(p)).sum::<usize>() + 2 * modes;
    if nodes > MAX_NODES {
        return status(Compilation::TooLarge { nodes });
    }
    match machine_code(&mut programs, nodes) {
        Ok(done) => done,
        Err(reason) => status(Compilation::Failed(reason)),
    }
}

/// The module of `programs` (two functions a program, one a mode), attached.
#[cfg(feature = "jit")]
fn machine_code(programs: &mut Programs<'_>, nodes: usize) -> Result<Compiled, String> {
    use super::jit::Compiler;
    let started = std::time::Instant::now();
    let (nx, nu, np) = programs.dims;
    let m = programs.modes;
    let list = &mut programs.list;
    let mut c = Compiler::new().map_err(|e| e.to_string())?;
    let pending = list
        .iter()
        .map(|p| c.add(p.exprs()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let modes = (0..m)
        .map(|k| c.add_mode(list[k].exprs(), list[m + k].exprs(), nx, nu, np))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let (code, modes) = c.finish(&pending, &modes).map_err(|e| e.to_string())?;
    let functions = code.len() + 2 * modes.len();
    for (p, c) in list.iter_mut().zip(code) {
        p.attach(c);
    }
    Ok(Compiled {
        status: Compilation::Compiled {
            functions,
            nodes,
            seconds: started.elapsed().as_secs_f64(),
        },
        modes,
    })
}

#[cfg(not(feature = "jit"))]
fn machine_code(_programs: &mut Programs<'_>, _nodes: usize) -> Result<Compiled, String> {
    Ok(Compiled {
        status: Compilation::Off,
    })
}
