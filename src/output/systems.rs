//! `hybridopt systems`: each built-in system's interface — states, parameters with their
//! default values, controls, modes, guards (with direction) and outputs — as the names a
//! problem file uses.

use crate::model::{Direction, HybridSystem};
use crate::systems::builtin::Builtin;
use serde::Serialize;
use std::fmt::Write;

/// One built-in system (`systems --json` is the list of them).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SystemInfo {
    /// The `[system] kind`.
    pub kind: String,
    pub states: Vec<String>,
    /// Every parameter with its default value.
    pub parameters: Vec<ParameterInfo>,
    pub controls: Vec<String>,
    pub modes: Vec<String>,
    pub guards: Vec<GuardSummary>,
    pub outputs: Vec<String>,
}

/// A parameter and its documented default.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParameterInfo {
    pub name: String,
    /// `null` when the system documents none.
    pub default: Option<f64>,
}

/// A guard: its name (what cost terms and `stop_after` use), the direction in which it
/// fires, whether it ends the run, and the modes in which it is active.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GuardSummary {
    pub name: String,
    pub direction: Direction,
    pub terminal: bool,
    pub modes: Vec<String>,
}

impl SystemInfo {
    /// The interface of `sys`.
    pub fn of(sys: &Builtin) -> SystemInfo {
        let d = sys.dims();
        let modes = d.modes;
        let guards = d
            .guards
            .into_iter()
            .enumerate()
            .map(|(k, g)| GuardSummary {
                name: g.name,
                direction: g.direction,
                terminal: g.terminal,
                modes: (0..modes.len())
                    .filter(|&m| sys.guard_active(m, k))
                    .map(|m| modes[m].clone())
                    .collect(),
            })
            .collect();
        SystemInfo {
            kind: sys.kind().to_string(),
            states: d.states,
            parameters: d
                .params
                .into_iter()
                .enumerate()
                .map(|(i, name)| ParameterInfo {
                    name,
                    default: d.param_defaults.as_ref().and_then(|v| v.get(i).copied()),
                })
                .collect(),
            controls: d.controls,
            modes,
            guards,
            outputs: d.outputs,
        }
    }

    /// Every built-in system ([`Builtin::catalog`]).
    pub fn all() -> Vec<SystemInfo> {
        Builtin::catalog().iter().map(SystemInfo::of).collect()
    }

    /// The terminal listing of this system.
    pub fn text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "{}", self.kind);
        let list = |v: &[String]| {
            if v.is_empty() {
                "(none)".to_string()
            } else {
                v.join(", ")
            }
        };
        let _ = writeln!(o, "  states:     {}", list(&self.states));
        let params: Vec<String> = self
            .parameters
            .iter()
            .map(|p| match p.default {
                Some(d) => format!("{} = {d}", p.name),
                None => p.name.clone(),
            })
            .collect();
        let _ = writeln!(o, "  parameters: {}", list(&params));
        if !self.controls.is_empty() {
            let _ = writeln!(o, "  controls:   {}", list(&self.controls));
        }
        let _ = writeln!(o, "  modes:      {}", list(&self.modes));
        let _ = writeln!(o, "  guards:");
        for g in &self.guards {
            let dir = match g.direction {
                Direction::Falling => "falling",
                Direction::Rising => "rising",
                Direction::Either => "either",
            };
            let terminal = if g.terminal { ", terminal" } else { "" };
            let _ = writeln!(
                o,
                "    {} ({dir}{terminal}; in {})",
                g.name,
                g.modes.join(", ")
            );
        }
        let _ = writeln!(o, "  outputs:    {}", list(&self.outputs));
        o
    }
}
