//! The [`HybridSystem`] of a `kind = "custom"` problem: every model function is a list of
//! compiled expressions evaluated generically over the scalar, so the Jacobians the
//! sensitivity analysis needs are exact (dual numbers) and every method and witness works
//! unchanged (theory.md §1).

use super::compilation::{self, Compilation};
use super::error::CustomError;
use super::expr::{Env, Expr, Node};
use super::parser::{function_names, parse, Scope};
use super::program::Program;
use super::reverse::{Point, Sinks};
use super::schema::{GuardSpec, ModeSpec, SystemSpec};
use crate::error::ModelError;
use crate::model::{Dims, GuardInfo, HybridSystem, OutputCotangent, Scalar, VjpArgs, VjpOut};
use std::collections::BTreeMap;

/// The reset of one guard.
#[derive(Debug, Clone)]
struct Reset {
    next: usize,
    /// The states it sets, in order; the others are kept.
    slots: Vec<usize>,
    /// Their new values, one expression each (no controls in scope).
    values: Program,
}

/// An expression-defined hybrid system.
#[derive(Debug, Clone)]
pub struct CustomSystem {
    states: Vec<String>,
    params: Vec<String>,
    controls: Vec<String>,
    modes: Vec<String>,
    output_names: Vec<String>,
    guards: Vec<GuardInfo>,
    /// The mode that watches guard k.
    guard_mode: Vec<usize>,
    /// Guard k's expression (a program of one).
    guard_expr: Vec<Program>,
    resets: Vec<Reset>,
    /// Per mode, the flow (one expression per state) and its program.
    flows: Vec<Program>,
    /// Per mode, the outputs (one expression per output) and their program.
    outputs: Vec<Program>,
    initial: Vec<Expr>,
    initial_mode: usize,
    /// `[system] defaults`, in the order of the parameters.
    defaults: Vec<(String, f64)>,
    /// Whether flows, outputs, guards and resets run as machine code.
    compilation: Compilation,
    /// With machine code, each mode's flow-and-outputs function and whole product.
    #[cfg(feature = "jit")]
    mode_code: Vec<super::jit::ModeCode>,
}

/// Compiles `src` (found at `key`) in `scope`, turning a parse error into one that shows
/// the expression with a caret and the names in scope.
fn compile(key: &str, src: &str, scope: &Scope) -> Result<Expr, CustomError> {
    parse(src, scope).map_err(|e| CustomError::Expr {
        key: key.to_string(),
        expr: src.to_string(),
        col: e.col,
        message: e.message,
        scope: scope.names(),
    })
}

/// A name must look like an identifier of the expression language and not be reserved.
fn check_name(key: &str, name: &str) -> Result<(), CustomError> {
    let mut chars = name.chars();
    let ident = chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_');
    if !ident {
        return Err(CustomError::schema(
            key,
            format!("`{name}` is not a valid name: use letters, digits and `_`, starting with a letter or `_`"),
        ));
    }
    if name == "t" || name == "pi" || function_names().contains(&name) {
        return Err(CustomError::schema(
            key,
            format!("`{name}` is reserved (`t` is time, `pi` a constant, the rest functions)"),
        ));
    }
    Ok(())
}

/// Checks names for validity and uniqueness (within `seen`, which collects them).
fn declare(
    key: &str, names: &[String], seen: &mut BTreeMap<String, String>,
) -> Result<(), CustomError> {
    for n in names {
        check_name(key, n)?;
        if let Some(first) = seen.insert(n.clone(), key.to_string()) {
            return Err(CustomError::schema(
                key,
                format!("`{n}` is declared twice (also in {first}); names must be unique"),
            ));
        }
    }
    Ok(())
}

/// One expression per state from a table keyed by state name: every state exactly once.
fn per_state(
    key: &str, table: &BTreeMap<String, String>, states: &[String], scope: &Scope,
) -> Result<Vec<Expr>, CustomError> {
    check_keys(key, table, states, "state")?;
    states
        .iter()
        .map(|s| match table.get(s) {
            Some(src) => compile(&format!("{key}.{s}"), src, scope),
            None => Err(CustomError::schema(
                key,
                format!(
                    "needs an expression for state `{s}`; states: {}",
                    states.join(", ")
                ),
            )),
        })
        .collect()
}

/// Every key of `table` must be one of `valid`.
fn check_keys(
    key: &str, table: &BTreeMap<String, String>, valid: &[String], what: &str,
) -> Result<(), CustomError> {
    match table.keys().find(|k| !valid.contains(k)) {
        Some(k) => Err(CustomError::schema(
            key,
            format!("`{k}` is not a {what}; valid: {}", valid.join(", ")),
        )),
        None => Ok(()),
    }
}

/// The scopes of the model functions.
struct Scopes {
    /// `x0(p)`: parameters and constants.
    initial: Scope,
    /// flow, guards, outputs: t, x, u, p, constants.
    full: Scope,
    /// resets: t, x⁻, p, constants.
    reset: Scope,
}

impl Scopes {
    fn new(spec: &SystemSpec) -> Scopes {
        let with_consts = |mut s: Scope| {
            for (n, v) in &spec.constants {
                s = s.with(n, Node::Num(*v));
            }
            s
        };
        let params = |s: Scope| s.with_all(&spec.parameters, Node::Param);
        let initial = with_consts(params(Scope::new()));
        let base = Scope::new()
            .with("t", Node::Time)
            .with_all(&spec.states, Node::State);
        let reset = with_consts(params(base.clone()));
        let full = with_consts(params(base.with_all(&spec.controls, Node::Control)));
        Scopes {
            initial,
            full,
            reset,
        }
    }
}

impl CustomSystem {
    /// Builds the system from its `[system]` table (without `kind`).
    pub fn from_table(table: toml::Table) -> Result<CustomSystem, CustomError> {
        let spec: SystemSpec = toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| CustomError::schema("[system]", e.message()))?;
        Self::from_spec(&spec)
    }

    /// Builds the system from the `[system]` table of a problem file's text: a type error
    /// in the table is reported with its line, column and key by the TOML reader.
    pub fn from_file_text(text: &str) -> Result<CustomSystem, CustomError> {
        let spec: super::schema::FileSystem = toml::from_str(text)
            .map_err(|e| CustomError::schema("[system]", e.to_string().trim_end().to_string()))?;
        Self::from_spec(&spec.system)
    }

    /// The default values its file gives (`[system] defaults`), in parameter order.
    pub fn defaults(&self) -> &[(String, f64)] {
        &self.defaults
    }

    /// Builds the system from its parsed specification.
    pub fn from_spec(spec: &SystemSpec) -> Result<CustomSystem, CustomError> {
        Self::check_declarations(spec)?;
        let scopes = Scopes::new(spec);
        let modes: Vec<String> = spec.modes.iter().map(|m| m.name.clone()).collect();
        let output_names: Vec<String> = spec.outputs.iter().map(|o| o.name.clone()).collect();
        let mut sys = CustomSystem {
            states: spec.states.clone(),
            params: spec.parameters.clone(),
            controls: spec.controls.clone(),
            initial: per_state(
                "[system] initial",
                &spec.initial,
                &spec.states,
                &scopes.initial,
            )?,
            initial_mode: match &spec.initial_mode {
                Some(m) => mode_index("[system] initial_mode", m, &modes)?,
                None => 0,
            },
            modes,
            output_names,
            defaults: spec
                .parameters
                .iter()
                .filter_map(|p| spec.defaults.get(p).map(|v| (p.clone(), *v)))
                .collect(),
            guards: Vec::new(),
            guard_mode: Vec::new(),
            guard_expr: Vec::new(),
            resets: Vec::new(),
            flows: Vec::new(),
            outputs: Vec::new(),
            compilation: Compilation::Off,
            #[cfg(feature = "jit")]
            mode_code: Vec::new(),
        };
        for (m, mode) in spec.modes.iter().enumerate() {
            sys.add_mode(m, mode, spec, &scopes)?;
        }
        let programs = compilation::Programs {
            list: sys
                .flows
                .iter_mut()
                .chain(sys.outputs.iter_mut())
                .chain(sys.guard_expr.iter_mut())
                .chain(sys.resets.iter_mut().map(|r| &mut r.values))
                .collect(),
            modes: spec.modes.len(),
            dims: (
                spec.states.len(),
                spec.controls.len(),
                spec.parameters.len(),
            ),
        };
        let compiled = compilation::compile(programs, spec.jit.unwrap_or(true));
        sys.compilation = compiled.status;
        #[cfg(feature = "jit")]
        {
            sys.mode_code = compiled.modes;
        }
        Ok(sys)
    }

    /// Whether its expressions run as machine code, with the compilation's figures.
    pub fn compilation(&self) -> &Compilation {
        &self.compilation
    }

    /// Names, counts and uniqueness of the declarations.
    fn check_declarations(spec: &SystemSpec) -> Result<(), CustomError> {
        let mut seen = BTreeMap::new();
        if spec.states.is_empty() {
            return Err(CustomError::schema(
                "[system] states",
                "at least one state is needed",
            ));
        }
        declare("[system] states", &spec.states, &mut seen)?;
        declare("[system] parameters", &spec.parameters, &mut seen)?;
        declare("[system] controls", &spec.controls, &mut seen)?;
        let consts: Vec<String> = spec.constants.keys().cloned().collect();
        declare("[system] constants", &consts, &mut seen)?;
        if let Some((n, v)) = spec.constants.iter().find(|(_, v)| !v.is_finite()) {
            return Err(CustomError::schema(
                "[system] constants",
                format!("`{n}` = {v} is not a finite number"),
            ));
        }
        for (n, v) in &spec.defaults {
            if !spec.parameters.contains(n) {
                return Err(CustomError::schema(
                    "[system] defaults",
                    format!(
                        "`{n}` is not a parameter; the parameters are: {}",
                        spec.parameters.join(", ")
                    ),
                ));
            }
            if !v.is_finite() {
                return Err(CustomError::schema(
                    "[system] defaults",
                    format!("`{n}` = {v} is not a finite number"),
                ));
            }
        }
        let outs: Vec<String> = spec.outputs.iter().map(|o| o.name.clone()).collect();
        declare("[system] outputs", &outs, &mut BTreeMap::new())?;
        if spec.modes.is_empty() {
            return Err(CustomError::schema(
                "[system] modes",
                "at least one mode is needed",
            ));
        }
        let modes: Vec<String> = spec.modes.iter().map(|m| m.name.clone()).collect();
        declare("[system] modes", &modes, &mut BTreeMap::new())?;
        let guards: Vec<String> = spec
            .modes
            .iter()
            .flat_map(|m| m.guards.iter().map(|g| g.name.clone()))
            .collect();
        declare("[system] guards", &guards, &mut BTreeMap::new())
    }

    fn add_mode(
        &mut self, m: usize, mode: &ModeSpec, spec: &SystemSpec, scopes: &Scopes,
    ) -> Result<(), CustomError> {
        let key = format!("[system] modes \"{}\"", mode.name);
        let flow = per_state(
            &format!("{key}: flow"),
            &mode.flow,
            &spec.states,
            &scopes.full,
        )?;
        check_keys(
            &format!("{key}: outputs"),
            &mode.outputs,
            &self.output_names,
            "output",
        )?;
        let outs = spec
            .outputs
            .iter()
            .map(|o| {
                let (k, src) = match mode.outputs.get(&o.name) {
                    Some(src) => (format!("{key}: outputs.{}", o.name), src),
                    None => (format!("[system] outputs \"{}\"", o.name), &o.expr),
                };
                compile(&k, src, &scopes.full)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let (nx, nu, np) = (
            spec.states.len(),
            spec.controls.len(),
            spec.parameters.len(),
        );
        self.flows.push(Program::new(flow, nx, nu, np));
        self.outputs.push(Program::new(outs, nx, nu, np));
        for g in &mode.guards {
            self.add_guard(m, &key, g, spec, scopes)?;
        }
        Ok(())
    }

    fn add_guard(
        &mut self, m: usize, mode_key: &str, g: &GuardSpec, spec: &SystemSpec, scopes: &Scopes,
    ) -> Result<(), CustomError> {
        let key = format!("{mode_key}: guard \"{}\"", g.name);
        let expr = compile(&format!("{key}: expr"), &g.expr, &scopes.full)?;
        let next = match &g.next {
            Some(n) => mode_index(&format!("{key}: next"), n, &self.modes)?,
            None => m,
        };
        check_keys(&format!("{key}: reset"), &g.reset, &spec.states, "state")?;
        let mut slots = Vec::new();
        let mut values = Vec::new();
        for (i, s) in spec.states.iter().enumerate() {
            if let Some(src) = g.reset.get(s) {
                slots.push(i);
                values.push(compile(&format!("{key}: reset.{s}"), src, &scopes.reset)?);
            }
        }
        let (nx, np) = (spec.states.len(), spec.parameters.len());
        self.guards.push(GuardInfo {
            name: g.name.clone(),
            direction: g.direction,
            terminal: g.terminal,
        });
        self.guard_mode.push(m);
        self.guard_expr
            .push(Program::new(vec![expr], nx, spec.controls.len(), np));
        self.resets.push(Reset {
            next,
            slots,
            values: Program::new(values, nx, 0, np),
        });
        Ok(())
    }
}

fn mode_index(key: &str, name: &str, modes: &[String]) -> Result<usize, CustomError> {
    modes.iter().position(|m| m == name).ok_or_else(|| {
        CustomError::schema(
            key,
            format!("mode `{name}` is unknown; modes: {}", modes.join(", ")),
        )
    })
}

/// Scratch of [`CustomSystem::flow_vjp`], kept per thread (no allocation per product once
/// grown): node values, node adjoints, output cotangents.
#[derive(Default)]
struct Scratch {
    vals: Vec<f64>,
    adj: Vec<f64>,
    ybar: Vec<f64>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = Default::default();
}

impl CustomSystem {
    /// Adds `Σ_i w_ji ∂e_i/∂(x, u, p)` for every cotangent j to `out` (rows of nx, nu, np),
    /// with `w` k×len(exprs) row-major: one tape and k sweeps per expression.
    fn accumulate(
        prog: &Program, w: &[f64], k: usize, at: Point<'_>, s: &mut Scratch, out: &mut VjpOut<'_>,
    ) {
        let exprs = prog.exprs();
        let (n, nx, nu, np) = (exprs.len(), at.x.len(), at.u.len(), at.p.len());
        for (i, e) in exprs.iter().enumerate() {
            // an expression no cotangent weights adds nothing (its sweeps return at once):
            // no tape either (the ball's velocity and energy outputs under a cost on y)
            if (0..k).all(|j| w[j * n + i] == 0.0) {
                continue;
            }
            e.tape(at, &mut s.vals);
            for j in 0..k {
                let mut sinks = Sinks {
                    gx: &mut out.gx[j * nx..(j + 1) * nx],
                    gu: &mut out.gu[j * nu..(j + 1) * nu],
                    gp: &mut out.gp[j * np..(j + 1) * np],
                };
                e.sweep(w[j * n + i], &s.vals, &mut s.adj, &mut sinks);
            }
        }
    }
}

#[cfg(feature = "jit")]
impl CustomSystem {
    /// [`HybridSystem::flow_vjp`] by the mode's machine code (`super::jit::ModeCode`): for
    /// one cotangent one call; for k, the outputs' values and cotangents once, then the
    /// product row by row with its cotangents given (the same operations per row as the
    /// interpreter: the flows' products, then the outputs'). `false` where the mode has no
    /// code or it refuses an array's length (then the interpreter writes `out` anew).
    fn compiled_vjp(&self, a: &VjpArgs<'_>, out: &mut VjpOut<'_>) -> bool {
        let Some(code) = self.mode_code.get(a.mode) else {
            return false;
        };
        if a.k == 1 {
            return code.product(
                a.t, a.x, a.u, a.p, a.lam, a.ybar, out.gx, out.gu, out.gp, out.y,
            );
        }
        if let OutputCotangent::At(_) = a.ybar {
            if self.outputs(a.mode, a.t, a.x, a.u, a.p, out.y).is_err() {
                return false;
            }
        }
        let mut buf = Vec::new();
        let ybar = a.ybar.resolve(out.y, a.k, &mut buf);
        let (nx, nu, np) = (a.x.len(), a.u.len(), a.p.len());
        let ny = ybar.len().checked_div(a.k).unwrap_or(0);
        (0..a.k).all(|j| {
            let row = match ybar.is_empty() {
                true => OutputCotangent::None,
                false => OutputCotangent::Given(&ybar[j * ny..(j + 1) * ny]),
            };
            code.product(
                a.t,
                a.x,
                a.u,
                a.p,
                &a.lam[j * nx..(j + 1) * nx],
                row,
                &mut out.gx[j * nx..(j + 1) * nx],
                &mut out.gu[j * nu..(j + 1) * nu],
                &mut out.gp[j * np..(j + 1) * np],
                &mut [],
            )
        })
    }
}

impl HybridSystem for CustomSystem {
    /// The exact products by reverse mode over the expressions' arenas
    /// (`super::reverse`) instead of one dual pass per input: `gx_j = f_xᵀ λ_j + h_xᵀ ȳ_j`
    /// (and `gu`, `gp` alike).
    fn flow_vjp(&self, a: VjpArgs<'_>, mut out: VjpOut<'_>) -> Result<(), ModelError> {
        #[cfg(feature = "jit")]
        if self.compiled_vjp(&a, &mut out) {
            return Ok(());
        }
        let at = Point {
            t: a.t,
            x: a.x,
            u: a.u,
            p: a.p,
        };
        out.gx.fill(0.0);
        out.gu.fill(0.0);
        out.gp.fill(0.0);
        SCRATCH.with(|cell| {
            let mut s = cell.borrow_mut();
            Self::accumulate(&self.flows[a.mode], a.lam, a.k, at, &mut s, &mut out);
            if let OutputCotangent::At(_) = a.ybar {
                self.outputs(a.mode, a.t, a.x, a.u, a.p, out.y)?;
            }
            let mut buf = std::mem::take(&mut s.ybar);
            let ybar = a.ybar.resolve(out.y, a.k, &mut buf);
            if !ybar.is_empty() {
                Self::accumulate(&self.outputs[a.mode], ybar, a.k, at, &mut s, &mut out);
            }
            s.ybar = buf;
            Ok(())
        })
    }

    fn dims(&self) -> Dims {
        // every parameter needs one (a file's `[system] defaults` may give some only)
        let d = self.defaults();
        let param_defaults = self
            .params
            .iter()
            .map(|n| d.iter().find(|(k, _)| k == n).map(|(_, v)| *v))
            .collect();
        Dims {
            states: self.states.clone(),
            params: self.params.clone(),
            param_defaults,
            controls: self.controls.clone(),
            modes: self.modes.clone(),
            guards: self.guards.clone(),
            outputs: self.output_names.clone(),
        }
    }
    /// The states each flow expression of the mode names (docs/guide/custom-systems.md).
    fn flow_pattern(&self, mode: usize) -> Option<crate::sparsity::Pattern> {
        let reads: Vec<Vec<usize>> = self.flows[mode]
            .exprs()
            .iter()
            .map(|e| e.states_read())
            .collect();
        crate::sparsity::Pattern::from_rows(self.states.len(), &reads).ok()
    }
    /// The states the guard's `reset` table names, each reading the states its expression
    /// names; the others are kept.
    fn reset_pattern(&self, _mode: usize, k: usize) -> Option<crate::sparsity::ResetPattern> {
        let r = &self.resets[k];
        let changed = r
            .slots
            .iter()
            .zip(r.values.exprs())
            .map(|(&i, e)| (i, e.states_read()));
        crate::sparsity::ResetPattern::from_rows(self.states.len(), changed).ok()
    }
    fn guard_active(&self, mode: usize, k: usize) -> bool {
        self.guard_mode.get(k) == Some(&mode)
    }
    fn initial_mode(&self, _p: &[f64]) -> usize {
        self.initial_mode
    }
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        let env = Env {
            t: D::from(0.0),
            x: &[],
            u: &[],
            p,
        };
        Ok(self.initial.iter().map(|e| e.eval(&env)).collect())
    }
    #[inline]
    fn flow<D: Scalar>(
        &self, mode: usize, t: D, x: &[D], u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        self.flows[mode].eval(&Env { t, x, u, p }, dx);
        Ok(())
    }
    #[inline]
    fn guard<D: Scalar>(&self, _mode: usize, k: usize, t: D, x: &[D], u: &[D], p: &[D]) -> D {
        let mut value = [D::zero()];
        self.guard_expr[k].eval(&Env { t, x, u, p }, &mut value);
        value[0]
    }
    #[inline]
    fn reset<D: Scalar>(
        &self, _mode: usize, k: usize, t: D, x: &[D], p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        let r = &self.resets[k];
        let mut values = vec![D::zero(); r.slots.len()];
        r.values.eval(&Env { t, x, u: &[], p }, &mut values);
        let mut xp = x.to_vec();
        for (&i, v) in r.slots.iter().zip(values) {
            xp[i] = v;
        }
        Ok((r.next, xp))
    }
    /// One call of the mode's machine code for both in real runs.
    #[inline]
    fn flow_outputs<D: Scalar>(
        &self, mode: usize, t: D, x: &[D], u: &[D], p: &[D], dx: &mut [D], y: &mut [D],
    ) -> Result<(), ModelError> {
        #[cfg(feature = "jit")]
        if let (Some(code), Some(xr), Some(ur), Some(pr)) = (
            self.mode_code.get(mode),
            D::as_real_slice(x),
            D::as_real_slice(u),
            D::as_real_slice(p),
        ) {
            if let (Some(dxr), Some(yr)) = (D::real_slice_mut(&mut *dx), D::real_slice_mut(&mut *y))
            {
                if code.flow_outputs(t.re(), xr, ur, pr, dxr, yr) {
                    return Ok(());
                }
            }
        }
        self.flow(mode, t, x, u, p, dx)?;
        self.outputs(mode, t, x, u, p, y)
    }
    #[inline]
    fn outputs<D: Scalar>(
        &self, mode: usize, t: D, x: &[D], u: &[D], p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        self.outputs[mode].eval(&Env { t, x, u, p }, out);
        Ok(())
    }
}
