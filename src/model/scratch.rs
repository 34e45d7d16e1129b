//! Scratch buffers of the hot loops (steps, stages, guard scans, the model's one-pass
//! Jacobians), on the stack for small systems so that they cost no allocation. On the
//! model's floor: the model's Jacobians and everything above it (integrators, the
//! expression programs, the augmented system) use them.

use super::Scalar;

/// Stack length of [`with_scratch`]: enough for the state, outputs or controls of the
/// small systems whose per-step overhead matters; larger ones allocate.
pub(crate) const STACK_SCRATCH: usize = 32;

/// The smaller stack tier of [`with_scratch`].
const SMALL_SCRATCH: usize = 8;

/// Runs `f` on a zeroed scratch slice of `len` scalars, on the stack up to
/// [`STACK_SCRATCH`] entries, on the heap beyond.
#[inline]
pub(crate) fn with_scratch<D: Scalar, R>(len: usize, f: impl FnOnce(&mut [D]) -> R) -> R {
    if len == 0 {
        // nothing to hold (no controls, no running terms): no zeroing either
        return f(&mut []);
    }
    if len <= SMALL_SCRATCH {
        // the common case (a ball's u, references and outputs): less to zero
        let mut a = [D::zero(); SMALL_SCRATCH];
        f(&mut a[..len])
    } else if len <= STACK_SCRATCH {
        let mut a = [D::zero(); STACK_SCRATCH];
        f(&mut a[..len])
    } else {
        f(&mut vec![D::zero(); len])
    }
}

/// Runs `f` on a zeroed scratch slice of `len` scalars, on the stack up to `N` entries
/// (a buffer sized for its caller, such as DOPRI5's seven stage slopes), on the heap
/// beyond.
#[inline(always)]
pub(crate) fn with_stack<const N: usize, D: Scalar, R>(
    len: usize, f: impl FnOnce(&mut [D]) -> R,
) -> R {
    if len <= N {
        let mut a = [D::zero(); N];
        f(&mut a[..len])
    } else {
        f(&mut vec![D::zero(); len])
    }
}
