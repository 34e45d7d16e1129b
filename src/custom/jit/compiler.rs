//! Programs into machine code: one Cranelift module for a whole system — a values function
//! per program (`super::values`), a flow-and-outputs function and a whole product per mode
//! (`super::mode`) — finalized together into one [`Code`].

use super::super::expr::{Expr, Node};
use super::code::Code;
use super::emit::Frame;
use super::mode::{self, Dims};
use super::{values, Compiled, ModeCode, ModeFn, ModeValuesFn, Needs, ValuesFn};
use cranelift_codegen::ir::{types, AbiParam, Signature, UserFuncName};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, FuncId, Linkage, Module};
use std::collections::HashMap;
use std::sync::Arc;

/// Why a system's expressions stay interpreted.
#[derive(Debug, thiserror::Error)]
pub enum JitError {
    /// Cranelift has no code generator for this machine.
    #[error("no code generator for this machine: {0}")]
    Host(String),
    /// The code generator refused a function (a defect: please report it).
    #[error("code generation failed: {0}")]
    Codegen(String),
}

/// A program added to the module, before finalization.
#[derive(Debug, Clone, Copy)]
pub struct Pending {
    values: FuncId,
    needs: Needs,
}

/// A mode's product added to the module, before finalization.
#[derive(Debug, Clone, Copy)]
pub struct PendingMode {
    id: FuncId,
    values: FuncId,
    flows: Needs,
    outputs: Needs,
    dims: Dims,
}

/// Builds one module: [`Compiler::add`] each program, then [`Compiler::finish`].
pub struct Compiler {
    module: JITModule,
    ctx: Context,
    fctx: FunctionBuilderContext,
    #[allow(clippy::vec_box, reason = "the code holds each node's address")]
    nodes: Vec<Box<Node>>,
    functions: u32,
}

fn err(e: impl std::fmt::Display) -> JitError {
    JitError::Codegen(e.to_string())
}

impl Compiler {
    /// A module for this machine's instruction set, optimized for speed.
    pub fn new() -> Result<Compiler, JitError> {
        let mut flags = settings::builder();
        for (k, v) in [
            ("use_colocated_libcalls", "false"),
            ("is_pic", "false"),
            ("opt_level", "speed"),
        ] {
            flags.set(k, v).map_err(err)?;
        }
        let isa = cranelift_native::builder()
            .map_err(|e| JitError::Host(e.to_string()))?
            .finish(settings::Flags::new(flags))
            .map_err(err)?;
        let module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
        Ok(Compiler {
            ctx: module.make_context(),
            module,
            fctx: FunctionBuilderContext::new(),
            nodes: Vec::new(),
            functions: 0,
        })
    }

    /// Adds the values function of the expressions `exprs`.
    pub fn add(&mut self, exprs: &[Expr]) -> Result<Pending, JitError> {
        let ptr = self.module.target_config().pointer_type();
        // (t, x, u, p, out)
        let mut sig = self.module.make_signature();
        sig.params.push(AbiParam::new(types::F64));
        for _ in 0..4 {
            sig.params.push(AbiParam::new(ptr));
        }
        let values = self.define(sig, |b, frame, params| {
            values::emit(b, frame, exprs, params[4])
        })?;
        Ok(Pending {
            values,
            needs: Needs::of(exprs),
        })
    }

    /// Adds a mode's flow-and-outputs function and its whole product for one cotangent
    /// (`super::mode`): its flows, its outputs, and the sizes of the rows (`nx`, `nu`, `np`).
    pub fn add_mode(
        &mut self, flows: &[Expr], outputs: &[Expr], nx: usize, nu: usize, np: usize,
    ) -> Result<PendingMode, JitError> {
        let ptr = self.module.target_config().pointer_type();
        let mut sig = self.module.make_signature();
        sig.params.push(AbiParam::new(types::F64));
        // (x, u, p, λ, gx, gu, gp, y, ȳ, ctx)
        for _ in 0..10 {
            sig.params.push(AbiParam::new(ptr));
        }
        let dims = Dims {
            nx,
            nu,
            np,
            ny: outputs.len(),
        };
        let id = self.define(sig, |b, frame, q| {
            let params = mode::Params {
                lam: q[4],
                gx: q[5],
                gu: q[6],
                gp: q[7],
                y: q[8],
                ybar: q[9],
                ctx: q[10],
            };
            mode::emit(b, frame, flows, outputs, dims, &params)
        })?;
        let mut sig = self.module.make_signature();
        sig.params.push(AbiParam::new(types::F64));
        // (x, u, p, dx, y)
        for _ in 0..5 {
            sig.params.push(AbiParam::new(ptr));
        }
        let values = self.define(sig, |b, frame, q| {
            mode::emit_values(b, frame, flows, outputs, q[4], q[5])
        })?;
        Ok(PendingMode {
            id,
            values,
            flows: Needs::of(flows),
            outputs: Needs::of(outputs),
            dims,
        })
    }

    /// Declares and defines one function whose body `body` emits from its frame and its
    /// parameters (`t, x, u, p` first).
    fn define(
        &mut self, sig: Signature,
        body: impl FnOnce(&mut FunctionBuilder, &mut Frame, &[cranelift_codegen::ir::Value]),
    ) -> Result<FuncId, JitError> {
        let name = format!("f{}", self.functions);
        self.functions += 1;
        let id = self
            .module
            .declare_function(&name, Linkage::Local, &sig)
            .map_err(err)?;
        let mut helper = self.module.make_signature();
        helper
            .params
            .push(AbiParam::new(self.module.target_config().pointer_type()));
        for _ in 0..3 {
            helper.params.push(AbiParam::new(types::F64));
        }
        helper.returns.push(AbiParam::new(types::F64));
        self.ctx.func.signature = sig;
        self.ctx.func.name = UserFuncName::user(0, id.as_u32());
        {
            let mut b = FunctionBuilder::new(&mut self.ctx.func, &mut self.fctx);
            let entry = b.create_block();
            b.append_block_params_for_function_params(entry);
            b.switch_to_block(entry);
            b.seal_block(entry);
            let params = b.block_params(entry).to_vec();
            let helper = b.import_signature(helper);
            let mut frame = Frame {
                t: params[0],
                x: params[1],
                u: params[2],
                p: params[3],
                helper,
                ptr: self.module.target_config().pointer_type(),
                call_conv: self.module.isa().default_call_conv(),
                nodes: &mut self.nodes,
                loaded: HashMap::new(),
            };
            body(&mut b, &mut frame, &params);
            b.finalize(self.module.target_config());
        }
        self.module
            .define_function(id, &mut self.ctx)
            .map_err(err)?;
        self.module.clear_context(&mut self.ctx);
        Ok(id)
    }

    /// Finalizes the module: the machine code of every program and every mode added, in
    /// order.
    pub fn finish(
        mut self, pending: &[Pending], modes: &[PendingMode],
    ) -> Result<(Vec<Compiled>, Vec<ModeCode>), JitError> {
        self.module.finalize_definitions().map_err(err)?;
        let fns: Vec<(ValuesFn, Needs)> = pending
            .iter()
            .map(|p| {
                let v = self.module.get_finalized_function(p.values);
                // SAFETY: defined by `add` with exactly this signature (the host's C
                // convention, `f64` and pointer parameters, no result).
                (
                    unsafe { std::mem::transmute::<*const u8, ValuesFn>(v) },
                    p.needs,
                )
            })
            .collect();
        let mode_fns: Vec<(ModeFn, ModeValuesFn, PendingMode)> = modes
            .iter()
            .map(|m| {
                let f = self.module.get_finalized_function(m.id);
                let v = self.module.get_finalized_function(m.values);
                // SAFETY: defined by `add_mode` with exactly these signatures
                unsafe {
                    (
                        std::mem::transmute::<*const u8, ModeFn>(f),
                        std::mem::transmute::<*const u8, ModeValuesFn>(v),
                        *m,
                    )
                }
            })
            .collect();
        let code = Arc::new(Code::new(self.module, self.nodes));
        let programs = fns
            .into_iter()
            .map(|(values, needs)| Compiled::new(values, needs, code.clone()))
            .collect();
        let modes = mode_fns
            .into_iter()
            .map(|(f, v, m)| ModeCode::new(f, v, m.flows, m.outputs, m.dims, code.clone()))
            .collect();
        Ok((programs, modes))
    }
}
