//! Where the k columns of `(Λ, M)` sit in the backward vector that one segment
//! integrates.

/// Where the k columns sit in the backward vector `(Λ, M_p, M_active)`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Layout {
    pub n: usize,
    pub np: usize,
    pub nu: usize,
    pub n_active: usize,
    pub k: usize,
}

impl Layout {
    pub(super) fn lam(&self, j: usize) -> usize {
        j * self.n
    }
    pub(super) fn mu_p(&self, j: usize) -> usize {
        self.k * self.n + j * self.np
    }
    pub(super) fn mu_act(&self, j: usize, ch: usize, a: usize) -> usize {
        self.k * (self.n + self.np) + (j * self.nu + ch) * self.n_active + a
    }
    pub(super) fn dim(&self) -> usize {
        self.k * (self.n + self.np + self.nu * self.n_active)
    }
}
