//! What a system is called: [`Dims`], its names and sizes.
use super::GuardInfo;

/// What a system is called: the names of its states, parameters, controls, modes, guards
/// and outputs, and its parameters' default values ([`HybridSystem::dims`](super::HybridSystem::dims)). The lengths
/// are the system's sizes; the names are what problem files, cost terms, tables and plots
/// refer to.
///
/// Write it in one expression: [`Dims::new`] with the states and the parameters, then
/// what the system has besides (one mode `"default"`, no controls, guards, outputs or
/// defaults unless given):
///
/// ```
/// use hybridopt::prelude::*;
///
/// let d = Dims::new(["y", "v"], ["g", "e", "y0"])
///     .guards([GuardInfo::new("ground", Direction::Falling)])
///     .outputs(["y"]);
/// assert_eq!((d.nx(), d.np(), d.nu()), (2, 3, 0));
/// assert_eq!(d.modes, ["default"]);
/// ```
///
/// A wrapper system edits its inner system's: `let mut d = inner.dims(); d.guards.push(…); d`.
#[derive(Debug, Clone, PartialEq)]
pub struct Dims {
    /// Names of the states `x`, in state order.
    pub states: Vec<String>,
    /// Names of the parameters `p`, in parameter order.
    pub params: Vec<String>,
    /// The parameters' default values in [`Dims::params`] order, when the system has them
    /// (none by default): what an entry of θ left out of an optimization takes
    /// ([`crate::setup::Setup::resolve_theta`]).
    pub param_defaults: Option<Vec<f64>>,
    /// Names of the time-varying controls `u` (none by default).
    pub controls: Vec<String>,
    /// Names of the modes (one, `"default"`, by default).
    pub modes: Vec<String>,
    /// All guards of all modes, indexed by `k`; [`HybridSystem::guard_active`](super::HybridSystem::guard_active) says which
    /// are live in a mode.
    pub guards: Vec<GuardInfo>,
    /// Names of the outputs `y` (the quantities that cost terms and plots refer to).
    pub outputs: Vec<String>,
}

/// A list of names for [`Dims`]: an array or a slice of `&str` (`["y", "v"]`, and `[]` for
/// none), or a `Vec<String>` (names made at run time).
pub trait Names {
    /// The names as owned strings.
    fn into_names(self) -> Vec<String>;
}

impl<const N: usize> Names for [&str; N] {
    fn into_names(self) -> Vec<String> {
        self.map(String::from).into()
    }
}

impl Names for &[&str] {
    fn into_names(self) -> Vec<String> {
        self.iter().map(|s| s.to_string()).collect()
    }
}

impl Names for Vec<String> {
    fn into_names(self) -> Vec<String> {
        self
    }
}

impl Dims {
    /// A system with these states and parameters, one mode `"default"`, and no controls,
    /// guards, outputs or parameter defaults (add them with the methods below).
    pub fn new(states: impl Names, params: impl Names) -> Self {
        Dims {
            states: states.into_names(),
            params: params.into_names(),
            param_defaults: None,
            controls: Vec::new(),
            modes: vec!["default".to_string()],
            guards: Vec::new(),
            outputs: Vec::new(),
        }
    }
    /// With these guards (all modes' guards, indexed by `k`).
    pub fn guards(mut self, guards: impl IntoIterator<Item = GuardInfo>) -> Self {
        self.guards = guards.into_iter().collect();
        self
    }
    /// With these outputs.
    pub fn outputs(mut self, outputs: impl Names) -> Self {
        self.outputs = outputs.into_names();
        self
    }
    /// With these modes (in place of the one `"default"`).
    pub fn modes(mut self, modes: impl Names) -> Self {
        self.modes = modes.into_names();
        self
    }
    /// With these control channels.
    pub fn controls(mut self, controls: impl Names) -> Self {
        self.controls = controls.into_names();
        self
    }
    /// With these parameter defaults (in parameter order).
    pub fn param_defaults(mut self, values: impl Into<Vec<f64>>) -> Self {
        self.param_defaults = Some(values.into());
        self
    }
    /// The number of states.
    pub fn nx(&self) -> usize {
        self.states.len()
    }
    /// The number of parameters.
    pub fn np(&self) -> usize {
        self.params.len()
    }
    /// The number of controls.
    pub fn nu(&self) -> usize {
        self.controls.len()
    }
    /// The name of mode `m` (`#m` when it has none).
    pub fn mode_name(&self, m: usize) -> String {
        self.modes
            .get(m)
            .cloned()
            .unwrap_or_else(|| format!("#{m}"))
    }
    /// The name of guard `k` (`#k` when it has none).
    pub fn guard_name(&self, k: usize) -> String {
        self.guards
            .get(k)
            .map(|g| g.name.clone())
            .unwrap_or_else(|| format!("#{k}"))
    }
    /// The index of the output `name`.
    pub fn output_index(&self, name: &str) -> Option<usize> {
        self.outputs.iter().position(|o| o == name)
    }
    /// The index of the parameter `name`.
    pub fn param_index(&self, name: &str) -> Option<usize> {
        self.params.iter().position(|o| o == name)
    }
}
