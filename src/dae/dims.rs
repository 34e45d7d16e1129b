//! What a hybrid DAE is called: [`DaeDims`], its names and sizes (the DAE twin of
//! [`Dims`](crate::model::Dims)).
use crate::model::{GuardInfo, Names};

/// What a hybrid DAE is called: the names of its differential states `y`, algebraic states
/// `z`, memory `y*`, parameters, modes, guards and further outputs
/// ([`DaeSystem::dims`](super::DaeSystem::dims)). The lengths are the system's sizes;
/// [`Dae`](super::Dae) makes of them the [`Dims`](crate::model::Dims) of the system it
/// runs: states `(y, y*)`, outputs `z` then the further outputs.
///
/// Write it in one expression: [`DaeDims::new`] with the differential and algebraic states
/// and the parameters, then what the system has besides (one mode `"default"`, no memory,
/// guards or further outputs unless given):
///
/// ```
/// use hybridopt::dae::DaeDims;
/// use hybridopt::prelude::*;
///
/// let d = DaeDims::new(["vC"], ["iD"], ["V", "R", "C"])
///     .modes(["on", "off"])
///     .guards([GuardInfo::new("diode_off", Direction::Falling)])
///     .outputs(["vC"]);
/// assert_eq!((d.differential.len(), d.algebraic.len(), d.memory.len()), (1, 1, 0));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct DaeDims {
    /// Names of the differential states `y`.
    pub differential: Vec<String>,
    /// Names of the algebraic states `z`.
    pub algebraic: Vec<String>,
    /// Names of the memory `y*` (none by default).
    pub memory: Vec<String>,
    /// Names of the parameters `p`.
    pub params: Vec<String>,
    /// Names of the modes (one, `"default"`, by default).
    pub modes: Vec<String>,
    /// All guards of all modes, indexed by `k`;
    /// [`DaeSystem::guard_active`](super::DaeSystem::guard_active) says which are live in
    /// a mode (none by default).
    pub guards: Vec<GuardInfo>,
    /// Names of further outputs (the algebraic states are always outputs too, first; none
    /// by default).
    pub outputs: Vec<String>,
}

impl DaeDims {
    /// A system with these differential states, algebraic states and parameters, one mode
    /// `"default"`, and no memory, guards or further outputs (add them with the methods
    /// below).
    pub fn new(differential: impl Names, algebraic: impl Names, params: impl Names) -> Self {
        DaeDims {
            differential: differential.into_names(),
            algebraic: algebraic.into_names(),
            memory: Vec::new(),
            params: params.into_names(),
            modes: vec!["default".to_string()],
            guards: Vec::new(),
            outputs: Vec::new(),
        }
    }
    /// With this memory.
    pub fn memory(mut self, memory: impl Names) -> Self {
        self.memory = memory.into_names();
        self
    }
    /// With these modes (in place of the one `"default"`).
    pub fn modes(mut self, modes: impl Names) -> Self {
        self.modes = modes.into_names();
        self
    }
    /// With these guards (all modes' guards, indexed by `k`).
    pub fn guards(mut self, guards: impl IntoIterator<Item = GuardInfo>) -> Self {
        self.guards = guards.into_iter().collect();
        self
    }
    /// With these further outputs.
    pub fn outputs(mut self, outputs: impl Names) -> Self {
        self.outputs = outputs.into_names();
        self
    }
}
