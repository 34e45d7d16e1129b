//! The column-sensitivity flow shared by the direct method and the nonsmooth (piece and
//! directional) passes: X integrated together with k columns `S_c = (dX/dθ) D_c`, where the
//! directions `D` (nθ×k) are the identity for the direct method (k = nθ, S = dX/dθ) and the
//! chosen parameter directions for the piece and directional passes (theory.md §2):
//!
//! `Ṡ = F_X S + F_θ D`, `S(t0) = (dX0/dθ) D`,
//!
//! and the objectives' derivatives along the columns from the seeds every method shares
//! (theory.md §4, [`ObjectiveSeeds`]):
//!
//! `Dψ D = λ_tfᵀ S(tf) + μ_tfᵀ D + Σ_events (c_Xᵀ S⁻ + c_θᵀ D) + Σ_samples (c_Xᵀ S(t_i) + c_θᵀ D)
//!  + ∇P(θ)ᵀ D`.
//!
//! One struct, so the right-hand side, its Newton Jacobian, the start and the assembly are
//! written once.

use super::seeds::ObjectiveSeeds;
use super::simultaneous::error::SimultaneousError;
use crate::error::{Error, ModelError};
use crate::integrate::trajectory::Ctx;
use crate::integrate::NewtonJacobian;
use crate::model::{HybridSystem, LANES};
use crate::setup::located;
use crate::setup::Setup;
use nalgebra::{DMatrix, DVector};
use num_dual::DualSVec64;

/// X with k sensitivity columns along the parameter directions `dirs` (`None`: every
/// parameter, k = nθ). The integrated vector is `[X; vec(S)]` with S column-major n×k.
pub(crate) struct ColumnFlow<'s, 'a, S: HybridSystem> {
    pub setup: &'s Setup<'a, S>,
    pub theta: Vec<f64>,
    /// nθ×k, or `None` for the identity.
    dirs: Option<DMatrix<f64>>,
}

impl<'s, 'a, S: HybridSystem> ColumnFlow<'s, 'a, S> {
    /// The full sensitivity `S = dX/dθ` (the direct method).
    pub fn full(setup: &'s Setup<'a, S>, theta: &[f64]) -> Self {
        ColumnFlow {
            setup,
            theta: theta.to_vec(),
            dirs: None,
        }
    }

    /// The columns `S D` for the directions `dirs` (nθ×k), checked: nθ rows, finite.
    pub fn along(
        setup: &'s Setup<'a, S>, theta: &[f64], dirs: DMatrix<f64>,
    ) -> Result<Self, Error> {
        let nth = setup.ntheta();
        if dirs.nrows() != nth {
            return Err(SimultaneousError::DirectionLength {
                index: None,
                found: dirs.nrows(),
                ntheta: nth,
            }
            .into());
        }
        if let Some(&value) = dirs.iter().find(|v| !v.is_finite()) {
            return Err(SimultaneousError::DirectionNotFinite { value }.into());
        }
        Ok(ColumnFlow {
            setup,
            theta: theta.to_vec(),
            dirs: Some(dirs),
        })
    }

    /// The number of columns k.
    pub fn k(&self) -> usize {
        self.dirs
            .as_ref()
            .map_or(self.setup.ntheta(), |d| d.ncols())
    }

    /// The direction of column c (the unit vector e_c for the identity).
    pub fn direction(&self, c: usize) -> DVector<f64> {
        match &self.dirs {
            Some(d) => d.column(c).into_owned(),
            None => DVector::from_fn(self.setup.ntheta(), |i, _| if i == c { 1.0 } else { 0.0 }),
        }
    }

    /// `Dᵀ v` for a vector on θ (`v` itself for the identity).
    pub fn project(&self, v: &DVector<f64>) -> DVector<f64> {
        match &self.dirs {
            Some(d) => d.tr_mul(v),
            None => v.clone(),
        }
    }

    /// `M D` for a matrix with nθ columns (`M` itself for the identity).
    pub fn times_dirs(&self, m: &DMatrix<f64>) -> DMatrix<f64> {
        match &self.dirs {
            Some(d) => m * d,
            None => m.clone(),
        }
    }

    /// The columns of an integrated vector `[X; vec(S)]` as an n×k matrix.
    pub fn columns_of(&self, y: &[f64]) -> DMatrix<f64> {
        let n = self.setup.n();
        DMatrix::from_column_slice(n, self.k(), &y[n..n * (1 + self.k())])
    }

    /// The integrated dimension n(1 + k).
    pub fn dim(&self) -> usize {
        self.setup.n() * (1 + self.k())
    }

    /// The start `(mode, [X0; vec((dX0/dθ) D)])`.
    pub fn initial(&self) -> Result<(usize, Vec<f64>), Error> {
        let setup = self.setup;
        let (n, nx, np) = (setup.n(), setup.nx(), setup.np());
        let (m0, x0) = setup
            .initial(&self.theta)
            .map_err(located(setup, setup.t0, 0))?;
        let (_, dx0) = crate::model::initial_jacobian(setup.sys(), nx, &self.theta[..np])
            .map_err(located(setup, setup.t0, m0))?;
        let mut s0 = DMatrix::zeros(n, setup.ntheta());
        s0.view_mut((0, 0), (nx, np)).copy_from(&dx0);
        let mut y0 = x0;
        y0.extend_from_slice(self.times_dirs(&s0).as_slice());
        Ok((m0, y0))
    }

    /// `d/dt [X; S] = [F; F_X S + F_θ D]` (theory.md §2) by the cheaper of two routes:
    ///
    /// - directional derivatives (when k ≤ n_x + n_u + n_p): F in vector duals at
    ///   `X + Σ_l ε_l S_{c_l}`, `θ + Σ_l ε_l D_{c_l}`, as many columns per pass as the dual
    ///   type carries (1, 2, 4, 6, 8, or [`LANES`] per pass when k is larger: a pass costs
    ///   its lanes whether they carry a column or not, so 6 columns in 6 lanes cost 0.61×
    ///   a 10-lane pass on the 256-state chain, `benches/scaling.rs`). `F_X` is never
    ///   formed: a pass costs one evaluation of F in vector duals whatever n is, so a step
    ///   costs O(k) evaluations of F, not O(n);
    /// - the Jacobian (when k > n_x + n_u + n_p, e.g. a few states and a thousand control
    ///   coefficients): `F_X`, `F_u`, `F_p` from n_x + n_u + n_p dual directions, `F_θ`
    ///   assembled from the controls' active basis functions ([`Setup::f_theta`]), then the
    ///   products — O(n_x + n_u + n_p) evaluations of F and O(n² k) flops a step.
    pub fn rhs(&self, ctx: &Ctx, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), ModelError> {
        let setup = self.setup;
        if self.k() > setup.nx() + setup.nu() + setup.np() {
            return self.by_jacobian(ctx, t, y, dy);
        }
        match self.k() {
            0 => self
                .setup
                .rhs(ctx, t, &y[..self.setup.n()], &self.theta, dy),
            1 => self.columns_by::<1>(ctx, t, y, dy),
            2 => self.columns_by::<2>(ctx, t, y, dy),
            3 | 4 => self.columns_by::<4>(ctx, t, y, dy),
            5 | 6 => self.columns_by::<6>(ctx, t, y, dy),
            7 | 8 => self.columns_by::<8>(ctx, t, y, dy),
            _ => self.columns_by::<LANES>(ctx, t, y, dy),
        }
    }

    /// [`Self::rhs`] through the Jacobian: `F_X S + F_θ D` with `F_X` and `F_θ` formed.
    fn by_jacobian(&self, ctx: &Ctx, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), ModelError> {
        let n = self.setup.n();
        let j = self.setup.flow_jacobian(ctx, t, &y[..n], &self.theta)?;
        dy[..n].copy_from_slice(j.f.as_slice());
        let f_theta = self.setup.f_theta(&j);
        let mut sd = &j.fx * self.columns_of(y);
        match &self.dirs {
            Some(d) => sd += f_theta * d,
            None => sd += f_theta,
        }
        dy[n..].copy_from_slice(sd.as_slice());
        Ok(())
    }

    /// [`Self::rhs`] with `L` columns per vector-dual pass.
    fn columns_by<const L: usize>(
        &self, ctx: &Ctx, t: f64, y: &[f64], dy: &mut [f64],
    ) -> Result<(), ModelError> {
        let n = self.setup.n();
        let nth = self.setup.ntheta();
        let k = self.k();
        let zero = DualSVec64::<L>::from_re(0.0);
        let td = DualSVec64::<L>::from_re(t);
        let (mut out, mut xx, mut th) = (vec![zero; n], vec![zero; n], vec![zero; nth]);
        for first in (0..k).step_by(L) {
            let lanes = (k - first).min(L);
            for (i, v) in xx.iter_mut().enumerate() {
                *v = seeded(y[i], |l| y[n * (1 + first + l) + i], lanes);
            }
            for (j, v) in th.iter_mut().enumerate() {
                let d = |l: usize| match &self.dirs {
                    Some(d) => d[(j, first + l)],
                    None => f64::from(u8::from(j == first + l)),
                };
                *v = seeded(self.theta[j], d, lanes);
            }
            self.setup.rhs(ctx, td, &xx, &th, &mut out)?;
            if first == 0 {
                for (d, o) in dy[..n].iter_mut().zip(&out) {
                    *d = o.re;
                }
            }
            for l in 0..lanes {
                let col = &mut dy[n * (1 + first + l)..n * (2 + first + l)];
                for (d, o) in col.iter_mut().zip(&out) {
                    *d = o.eps.0.as_ref().map_or(0.0, |m| m[l]);
                }
            }
        }
        Ok(())
    }

    /// The block-diagonal Newton Jacobian: `F_X` repeated 1 + k times (implicit methods).
    pub fn newton_jacobian(
        &self, ctx: &Ctx, t: f64, y: &[f64],
    ) -> Result<NewtonJacobian, ModelError> {
        let n = self.setup.n();
        Ok(NewtonJacobian {
            block: self.setup.newton_block(ctx, t, &y[..n], &self.theta)?,
            copies: 1 + self.k(),
            rest: 0,
        })
    }

    /// Every objective's derivative along the columns (module docs), from the seeds on the
    /// trajectory, the final columns `s_f`, the columns before each event `s_minus(i)` and
    /// at the start of each segment that data samples are read at `s_start(i)`.
    pub fn derivatives(
        &self, seeds: &ObjectiveSeeds, s_f: &DMatrix<f64>, s_minus: impl Fn(usize) -> DMatrix<f64>,
        s_start: impl Fn(usize) -> DMatrix<f64>,
    ) -> Vec<Vec<f64>> {
        let mut out = Vec::with_capacity(self.setup.objectives.len());
        let starts: Vec<(usize, DMatrix<f64>)> = seeds
            .segment_starts
            .keys()
            .map(|&si| (si, s_start(si)))
            .collect();
        for (oi, obj) in self.setup.objectives.iter().enumerate() {
            let mut g = s_f.tr_mul(&seeds.lambda_tf[oi]) + self.project(&seeds.mu_tf[oi]);
            for (i, per_objective) in seeds.events.iter().enumerate() {
                if let Some((cx, ct)) = &per_objective[oi] {
                    g += s_minus(i).tr_mul(cx) + self.project(ct);
                }
            }
            for (si, s) in &starts {
                for (_, (cx, ct)) in seeds.segment_starts[si].iter().filter(|(o, _)| *o == oi) {
                    g += s.tr_mul(cx) + self.project(ct);
                }
            }
            // parameter (regularization) terms: ∇P(θ)ᵀ D
            let mut pg = vec![0.0; self.theta.len()];
            for term in &obj.terms {
                term.add_parameter_gradient(&self.theta, &mut pg);
            }
            g += self.project(&DVector::from_vec(pg));
            out.push(g.as_slice().to_vec());
        }
        out
    }
}

/// `v + Σ_{l < lanes} ε_l d(l)` in vector duals of `L` lanes.
fn seeded<const L: usize>(v: f64, d: impl Fn(usize) -> f64, lanes: usize) -> DualSVec64<L> {
    let eps = nalgebra::SVector::<f64, L>::from_fn(|l, _| if l < lanes { d(l) } else { 0.0 });
    DualSVec64::<L>::new(v, num_dual::Derivative::some(eps))
}

/// The [`HybridRhs`](crate::integrate::hybrid::HybridRhs) implementation of a column pass
/// `$pass<'s, 'a, S>` whose `flow` field is its [`ColumnFlow`] (which it derefs to): guards
/// on the leading X, the flow and its Newton Jacobian. Only the event (how the columns
/// jump) differs between passes: the pass's own `cross_event`, with the arguments of
/// `HybridRhs::event`. A macro, as each pass is its own type.
macro_rules! column_flow_rhs {
    ($pass:ident) => {
        impl<'s, 'a, S: HybridSystem> std::ops::Deref for $pass<'s, 'a, S> {
            type Target = crate::sensitivity::columns::ColumnFlow<'s, 'a, S>;
            fn deref(&self) -> &Self::Target {
                &self.flow
            }
        }

        impl<S: HybridSystem> HybridRhs<f64> for $pass<'_, '_, S> {
            fn dims(&self) -> &crate::model::Dims {
                &self.setup.dims
            }
            fn guard_active(&self, mode: usize, k: usize) -> bool {
                self.setup.sys().guard_active(mode, k)
            }
            guards_on_leading_state!();
            fn dim(&self) -> usize {
                self.flow.dim()
            }
            /// The jump reads f⁻ and f⁺ of X alone; X⁺ is read without its columns.
            fn recorded_len(&self) -> usize {
                self.setup.n()
            }
            fn rhs(&self, ctx: &Ctx, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), ModelError> {
                self.flow.rhs(ctx, t, y, dy)
            }
            fn newton_jacobian(
                &self, ctx: &Ctx, t: f64, y: &[f64],
            ) -> Result<NewtonJacobian, ModelError> {
                self.flow.newton_jacobian(ctx, t, y)
            }
            fn event(
                &self, ctx: &Ctx, k: usize, t: f64, y: &[f64], terminal: bool,
            ) -> Result<(usize, Vec<f64>), ModelError> {
                self.cross_event(ctx, k, t, y, terminal)
            }
        }
    };
}
pub(crate) use column_flow_rhs;
