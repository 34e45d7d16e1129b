//! The scalars the model is generic over: `f64` and num-dual numbers, with the lane
//! helpers of the vector duals.
use num_dual::DualNum;

/// The scalar the model leaf code and the integrators are generic over: `f64` or a
/// num-dual number with `f64` as its primitive (e.g. [`Dual64`](num_dual::Dual64)).
pub trait Scalar: DualNum<Primitive = f64> + Copy + Send + Sync {
    /// `f64` itself (no derivative parts): the implicit integrators factor sparse
    /// Jacobians with a sparse LU in real runs only ([`crate::integrate`]).
    const REAL: bool = false;
    /// The first derivative part (0 for `f64`): lets the integrators control the error of
    /// a dual run's derivative as well as its value.
    fn eps_part(&self) -> f64 {
        0.0
    }
    /// `y` as a slice of this scalar when it is `f64` itself (no copy), `None` for duals:
    /// lets real-valued hot loops (guard scans) skip converting to a constant dual.
    #[inline]
    fn from_real_slice(_y: &[f64]) -> Option<&[Self]> {
        None
    }
    /// `y` as `f64` when this scalar is `f64` itself, `None` for duals.
    #[inline]
    fn real_slice_mut(_y: &mut [Self]) -> Option<&mut [f64]> {
        None
    }
    /// `y` as `f64` when this scalar is `f64` itself (no copy), `None` for duals: lets a
    /// custom system's real evaluations run its machine code ([`crate::custom`]).
    #[inline]
    fn as_real_slice(_y: &[Self]) -> Option<&[f64]> {
        None
    }
    /// The derivative lanes of a vector dual ([`num_dual::DualSVec64`]), 0 for the other
    /// scalars: a custom system's program evaluates vector duals lane by lane on plain
    /// arrays ([`crate::custom`]), which [`Self::lanes_into`] and [`Self::from_lanes`]
    /// convert from and to.
    const LANES: usize = 0;
    /// A vector dual's lanes copied into `eps` (length [`Self::LANES`]); `false` when it has
    /// no derivative part (num-dual's `None`: a constant). Unused for other scalars.
    #[inline]
    fn lanes_into(&self, _eps: &mut [f64]) -> bool {
        false
    }
    /// The vector dual with value `re` and lanes `eps` (`None`: no derivative part); for
    /// other scalars the constant `re`.
    #[inline]
    fn from_lanes(re: f64, _eps: Option<&[f64]>) -> Self {
        Self::from(re)
    }
}
impl Scalar for f64 {
    const REAL: bool = true;
    #[inline]
    fn from_real_slice(y: &[f64]) -> Option<&[f64]> {
        Some(y)
    }
    #[inline]
    fn real_slice_mut(y: &mut [f64]) -> Option<&mut [f64]> {
        Some(y)
    }
    #[inline]
    fn as_real_slice(y: &[f64]) -> Option<&[f64]> {
        Some(y)
    }
}
/// Dual numbers over any scalar: [`Dual64`](num_dual::Dual64) (first derivatives) and nested duals such as
/// `Dual<Dual64>` (second derivatives, [`crate::periodic`]) or `Dual<D>` over a generic `D`
/// (a directional derivative taken inside generic code, as the index-2 DAEs' hidden
/// constraint `k_y f + k_t` in [`crate::dae`]). The error control sees the derivative part
/// of first-order duals only (`Dual64`), as before nested duals existed.
impl<T: Scalar> Scalar for num_dual::Dual<T> {
    fn eps_part(&self) -> f64 {
        if T::NDERIV == 0 {
            self.eps.re()
        } else {
            0.0
        }
    }
}

/// Vector dual numbers with [`LANES`] derivative directions at once: one model evaluation
/// gives that many columns of a Jacobian (design.md: "vector duals for many directions").
pub type Lanes = num_dual::DualSVec64<LANES>;
/// Directions carried by one [`Lanes`] pass: 10, so that the five-bar's 20 VJP input
/// directions take 2 passes and its 10 solution directions one (the ball's 7 take one).
/// (Chosen for the five-bar; lane count does not change any result.)
pub const LANES: usize = 10;

impl<const N: usize> Scalar for num_dual::DualSVec64<N> {
    const LANES: usize = N;
    #[inline]
    fn lanes_into(&self, eps: &mut [f64]) -> bool {
        match &self.eps.0 {
            Some(m) => {
                eps.copy_from_slice(m.as_slice());
                true
            }
            None => false,
        }
    }
    #[inline]
    fn from_lanes(re: f64, eps: Option<&[f64]>) -> Self {
        let eps = eps.map(nalgebra::SVector::<f64, N>::from_column_slice);
        num_dual::DualVec::new(re, num_dual::Derivative::new(eps))
    }
}

/// Up to this many input directions the default VJP takes one scalar-dual pass per
/// direction, beyond it vector-dual passes. Measured (2026-12-02, one VJP): the ball (7
/// directions) 0.19 µs scalar vs 0.26 µs vector; the five-bar through the dual default (20
/// directions) 68.6 µs scalar vs 25.9 µs vector.
pub const SCALAR_DUAL_DIRECTIONS: usize = 8;

/// `v` as a [`Lanes`] number with derivative direction `lane` seeded (none: a constant).
#[inline]
pub fn lane_seed(v: f64, lane: Option<usize>) -> Lanes {
    match lane {
        Some(l) => Lanes::from_re(v).derivative(l),
        None => Lanes::from_re(v),
    }
}

/// The derivative part of `x` in direction `lane`.
#[inline]
pub fn lane_eps(x: &Lanes, lane: usize) -> f64 {
    x.eps.0.as_ref().map_or(0.0, |m| m[lane])
}

/// Lifts an `f64` into the scalar type.
#[inline]
pub fn c<D: Scalar>(v: f64) -> D {
    D::from(v)
}
