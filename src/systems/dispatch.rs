//! The macro that turns the one table of built-in systems ([`super::builtin`]) into what
//! names them: the [`Builtin`](super::Builtin) enum with its static dispatch (the model
//! trait has generic methods, so no trait object), the [`SystemSpec`](super::SystemSpec)
//! enum that a problem file's `[system]` table deserializes into, and
//! [`KINDS`](super::KINDS). Each system says in its own file what its settings are and how
//! they build it ([`BuiltinSystem`](super::BuiltinSystem)); the table says only its `kind`.

/// One `match` over the variants of `Builtin`, binding each system to `$s`.
macro_rules! each_builtin {
    ($self:expr, [$($variant:ident)*], $s:ident => $e:expr) => {
        match $self {
            $(Builtin::$variant($s) => $e,)*
        }
    };
}
pub(crate) use each_builtin;

/// The built-in systems from their table: each entry `"kind" => Variant(Type),` with its
/// doc comment, in the order in which `hybridopt systems` and error messages list them.
macro_rules! builtins {
    ($($(#[$doc:meta])* $kind:literal => $variant:ident($ty:ty),)*) => {
        /// A built-in system, chosen by `[system] kind = "…"` in a problem file.
        #[derive(Debug, Clone)]
        pub enum Builtin {
            $($(#[$doc])* $variant($ty),)*
        }

        /// A system kind with its settings, as `[system]` gives it (the settings are the
        /// system's [`BuiltinSystem::Settings`]).
        #[derive(Debug, Clone, serde::Deserialize)]
        pub enum SystemSpec {
            $($(#[$doc])* #[serde(rename = $kind)] $variant(<$ty as BuiltinSystem>::Settings),)*
        }

        /// The names accepted as `kind`.
        pub const KINDS: [&str; [$($kind),*].len()] = [$($kind),*];

        impl Builtin {
            /// The `kind` that names this system in a problem file.
            pub fn kind(&self) -> &'static str {
                match self {
                    $(Builtin::$variant(_) => $kind,)*
                }
            }

            /// The documented default values of the parameters, in parameter order (the
            /// values of [`Builtin::defaults`]); `None` for a custom system, whose
            /// parameters are its file's.
            pub fn default_params(&self) -> Option<Vec<f64>> {
                each_builtin!(self, [$($variant)*], s => s.param_defaults())
            }
        }

        impl SystemSpec {
            /// The system.
            pub fn build(&self) -> Result<Builtin, BuildError> {
                Ok(match self {
                    $(SystemSpec::$variant(s) => Builtin::$variant(<$ty>::build(s)?),)*
                })
            }
        }

        impl $crate::model::HybridSystem for Builtin {
            /// The system's own, with the documented parameter defaults of a built-in
            /// system ([`Builtin::defaults`]).
            fn dims(&self) -> $crate::model::Dims {
                let mut d = each_builtin!(self, [$($variant)*], s => s.dims());
                if let Some(values) = self.default_params() {
                    d.param_defaults = Some(values);
                }
                d
            }
            fn guard_active(&self, mode: usize, k: usize) -> bool {
                each_builtin!(self, [$($variant)*], s => s.guard_active(mode, k))
            }
            fn flow_pattern(&self, mode: usize) -> Option<$crate::sparsity::Pattern> {
                each_builtin!(self, [$($variant)*], s => s.flow_pattern(mode))
            }
            fn reset_pattern(
                &self, mode: usize, k: usize,
            ) -> Option<$crate::sparsity::ResetPattern> {
                each_builtin!(self, [$($variant)*], s => s.reset_pattern(mode, k))
            }
            fn initial_mode(&self, p: &[f64]) -> usize {
                each_builtin!(self, [$($variant)*], s => s.initial_mode(p))
            }
            fn initial_state<D: $crate::model::Scalar>(
                &self, p: &[D],
            ) -> Result<Vec<D>, $crate::error::ModelError> {
                each_builtin!(self, [$($variant)*], s => s.initial_state(p))
            }
            fn initial_state_at<D: $crate::model::Scalar>(
                &self, t0: f64, p: &[D],
            ) -> Result<Vec<D>, $crate::error::ModelError> {
                each_builtin!(self, [$($variant)*], s => s.initial_state_at(t0, p))
            }
            // The hot methods are inlined into their callers, so that the match costs a
            // branch and a small model's code is inlined as through its own type: without
            // this the CLI (which runs `Builtin`) measured the ball's adjoint ~12% slower
            // than the library call on `BouncingBall` (`cargo bench`), the wrapper being a
            // large out-of-line function.
            #[inline(always)]
            fn flow<D: $crate::model::Scalar>(
                &self, mode: usize, t: D, x: &[D], u: &[D], p: &[D], dx: &mut [D],
            ) -> Result<(), $crate::error::ModelError> {
                each_builtin!(self, [$($variant)*], s => s.flow(mode, t, x, u, p, dx))
            }
            #[inline(always)]
            fn guard<D: $crate::model::Scalar>(
                &self, mode: usize, k: usize, t: D, x: &[D], u: &[D], p: &[D],
            ) -> D {
                each_builtin!(self, [$($variant)*], s => s.guard(mode, k, t, x, u, p))
            }
            #[inline(always)]
            fn reset<D: $crate::model::Scalar>(
                &self, mode: usize, k: usize, t: D, x: &[D], p: &[D],
            ) -> Result<(usize, Vec<D>), $crate::error::ModelError> {
                each_builtin!(self, [$($variant)*], s => s.reset(mode, k, t, x, p))
            }
            #[inline(always)]
            fn outputs<D: $crate::model::Scalar>(
                &self, mode: usize, t: D, x: &[D], u: &[D], p: &[D], out: &mut [D],
            ) -> Result<(), $crate::error::ModelError> {
                each_builtin!(self, [$($variant)*], s => s.outputs(mode, t, x, u, p, out))
            }
            #[inline(always)]
            fn flow_outputs<D: $crate::model::Scalar>(
                &self, mode: usize, t: D, x: &[D], u: &[D], p: &[D], dx: &mut [D], y: &mut [D],
            ) -> Result<(), $crate::error::ModelError> {
                each_builtin!(self, [$($variant)*], s => s.flow_outputs(mode, t, x, u, p, dx, y))
            }
            fn geometry(&self) -> Option<&dyn $crate::geometry::Geometry> {
                each_builtin!(self, [$($variant)*], s => s.geometry())
            }
            fn flow_vjp(
                &self, args: $crate::model::VjpArgs<'_>, out: $crate::model::VjpOut<'_>,
            ) -> Result<(), $crate::error::ModelError> {
                each_builtin!(self, [$($variant)*], s => s.flow_vjp(args, out))
            }
        }
    };
}
pub(crate) use builtins;
