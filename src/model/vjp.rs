//! Vector–Jacobian products of the flow and the outputs (the adjoint's inner loop,
//! theory.md §4): the arguments, and the two exact defaults by dual passes.
use super::{lane_eps, lane_seed, HybridSystem, Lanes, LANES};
use crate::error::ModelError;
use num_dual::Dual64;

/// The outputs' cotangents ȳ of a [`HybridSystem::flow_vjp`] (k×ny, row-major).
#[derive(Clone, Copy)]
pub enum OutputCotangent<'a> {
    /// No output is weighted.
    None,
    /// Given values.
    Given(&'a [f64]),
    /// Computed from the outputs' values y at the point, `f(y, ȳ)`: the hook evaluates y
    /// together with the flow (one evaluation, e.g. one saddle-point solve, for both) and
    /// writes it to [`VjpOut::y`].
    At(&'a dyn Fn(&[f64], &mut [f64])),
}

impl OutputCotangent<'_> {
    /// ȳ as a slice: given, or computed from `y` into `buf`; empty when `None`.
    pub fn resolve<'b>(&'b self, y: &[f64], k: usize, buf: &'b mut Vec<f64>) -> &'b [f64] {
        match self {
            OutputCotangent::None => &[],
            OutputCotangent::Given(v) => v,
            OutputCotangent::At(f) => {
                buf.clear();
                buf.resize(k * y.len(), 0.0);
                f(y, buf);
                buf
            }
        }
    }
    /// Whether the outputs enter at all.
    pub fn is_some(&self) -> bool {
        !matches!(self, OutputCotangent::None)
    }
}

/// The point and the cotangents of [`HybridSystem::flow_vjp`].
#[derive(Clone, Copy)]
pub struct VjpArgs<'a> {
    pub mode: usize,
    pub t: f64,
    pub x: &'a [f64],
    pub u: &'a [f64],
    pub p: &'a [f64],
    /// Number of cotangent pairs k.
    pub k: usize,
    /// k×nx cotangents of the flow.
    pub lam: &'a [f64],
    /// The cotangents of the outputs.
    pub ybar: OutputCotangent<'a>,
}

/// Where [`HybridSystem::flow_vjp`] writes (each overwritten, row-major by cotangent).
#[derive(Debug)]
pub struct VjpOut<'a> {
    /// k×nx
    pub gx: &'a mut [f64],
    /// k×nu
    pub gu: &'a mut [f64],
    /// k×np
    pub gp: &'a mut [f64],
    /// The outputs' values y (ny), written when [`VjpArgs::ybar`] is
    /// [`OutputCotangent::At`]; may be empty otherwise.
    pub y: &'a mut [f64],
}

impl VjpOut<'_> {
    /// Entry (j, d) of the product over the directions `d` of `(x, u, p)` (sizes
    /// `(nx, nu, np)`): into `gx`, `gu` or `gp` by the block `d` falls in.
    pub(crate) fn set(&mut self, j: usize, d: usize, (nx, nu, np): (usize, usize, usize), s: f64) {
        if d < nx {
            self.gx[j * nx + d] = s;
        } else if d < nx + nu {
            self.gu[j * nu + d - nx] = s;
        } else {
            self.gp[j * np + d - nx - nu] = s;
        }
    }
}

/// ȳ of a dual-pass VJP: given, or computed from the outputs at the point (evaluated here
/// in `f64` and written to `y`).
fn output_cotangents<'b, S: HybridSystem + ?Sized>(
    sys: &S, a: &'b VjpArgs<'_>, y: &mut [f64], buf: &'b mut Vec<f64>,
) -> Result<&'b [f64], ModelError> {
    if let OutputCotangent::At(_) = a.ybar {
        sys.outputs(a.mode, a.t, a.x, a.u, a.p, y)?;
    }
    Ok(a.ybar.resolve(y, a.k, buf))
}

/// [`vjp_by_dual_passes`] with one direction per pass in scalar duals ([`Dual64`]): the
/// same numbers; cheaper than vector duals for small models, where a vector dual's
/// per-operation overhead dominates (see [`SCALAR_DUAL_DIRECTIONS`](super::SCALAR_DUAL_DIRECTIONS)).
pub fn vjp_by_scalar_duals<S: HybridSystem + ?Sized>(
    sys: &S, a: VjpArgs<'_>, out: VjpOut<'_>,
) -> Result<(), ModelError> {
    SCALAR_PASS.with(|cell| {
        let mut b = cell.borrow_mut();
        let ScalarPassBuffers {
            xd,
            ud,
            pd,
            f,
            y,
            ybar,
        } = &mut *b;
        let ybar = output_cotangents(sys, &a, out.y, ybar)?;
        let ny = ybar.len() / a.k.max(1);
        let with_y = a.ybar.is_some();
        scalar_passes(sys, &a, ybar, ny, with_y, (xd, ud, pd, f, y), out)
    })
}

/// Buffers of [`vjp_by_scalar_duals`], kept per thread so that the adjoint's inner loop
/// does not allocate once they have grown.
#[derive(Default)]
struct ScalarPassBuffers {
    xd: Vec<Dual64>,
    ud: Vec<Dual64>,
    pd: Vec<Dual64>,
    f: Vec<Dual64>,
    y: Vec<Dual64>,
    ybar: Vec<f64>,
}

thread_local! {
    static SCALAR_PASS: std::cell::RefCell<ScalarPassBuffers> = Default::default();
}

type DualBuffers<'b> = (
    &'b mut Vec<Dual64>,
    &'b mut Vec<Dual64>,
    &'b mut Vec<Dual64>,
    &'b mut Vec<Dual64>,
    &'b mut Vec<Dual64>,
);

/// The passes of [`vjp_by_scalar_duals`] on reused buffers.
fn scalar_passes<S: HybridSystem + ?Sized>(
    sys: &S, a: &VjpArgs<'_>, ybar: &[f64], ny: usize, with_y: bool,
    (xd, ud, pd, f, y): DualBuffers<'_>, mut out: VjpOut<'_>,
) -> Result<(), ModelError> {
    let (nx, nu, np) = (a.x.len(), a.u.len(), a.p.len());
    let lift = |dst: &mut Vec<Dual64>, v: &[f64]| {
        dst.clear();
        dst.extend(v.iter().map(|&r| Dual64::from(r)));
    };
    lift(xd, a.x);
    lift(ud, a.u);
    lift(pd, a.p);
    f.clear();
    f.resize(nx, Dual64::from(0.0));
    y.clear();
    y.resize(ny, Dual64::from(0.0));
    let td = Dual64::from(a.t);
    for d in 0..nx + nu + np {
        let seed = |xd: &mut [Dual64], ud: &mut [Dual64], pd: &mut [Dual64], e: f64| {
            if d < nx {
                xd[d].eps = e
            } else if d < nx + nu {
                ud[d - nx].eps = e
            } else {
                pd[d - nx - nu].eps = e
            }
        };
        seed(xd, ud, pd, 1.0);
        let r = sys.flow(a.mode, td, xd, ud, pd, f).and_then(|_| {
            if with_y {
                sys.outputs(a.mode, td, xd, ud, pd, y)
            } else {
                Ok(())
            }
        });
        seed(xd, ud, pd, 0.0);
        r?;
        for j in 0..a.k {
            let mut s: f64 = a.lam[j * nx..(j + 1) * nx]
                .iter()
                .zip(f.iter())
                .map(|(l, fv)| l * fv.eps)
                .sum();
            if with_y {
                s += ybar[j * ny..(j + 1) * ny]
                    .iter()
                    .zip(y.iter())
                    .map(|(b, yv)| b * yv.eps)
                    .sum::<f64>();
            }
            out.set(j, d, (nx, nu, np), s);
        }
    }
    Ok(())
}

/// The exact vector–Jacobian products of [`HybridSystem::flow_vjp`] by forward-mode dual
/// numbers: the input directions e_i ∈ {x, u, p} go through `f` (and `h`, when `ȳ` is
/// given) [`LANES`] at a time in vector duals; each pass yields those columns `(f_i, h_i)`
/// and every cotangent's entries `λ_j·f_i + ȳ_j·h_i` at once, so k cotangents cost the
/// same passes as one.
pub fn vjp_by_dual_passes<S: HybridSystem + ?Sized>(
    sys: &S, a: VjpArgs<'_>, mut out: VjpOut<'_>,
) -> Result<(), ModelError> {
    let (nx, nu, np) = (a.x.len(), a.u.len(), a.p.len());
    let with_y = a.ybar.is_some();
    let mut buf = Vec::new();
    let ybar = output_cotangents(sys, &a, out.y, &mut buf)?;
    let ny = ybar.len() / a.k.max(1);
    let ndir = nx + nu + np;
    let td = Lanes::from_re(a.t);
    let mut f = vec![Lanes::from_re(0.0); nx];
    let mut y = vec![Lanes::from_re(0.0); ny];
    for first in (0..ndir).step_by(LANES) {
        // direction d = first + lane: x, then u, then p
        let lane_of = |d: usize| (d >= first && d < first + LANES).then(|| d - first);
        let xd: Vec<Lanes> = (0..nx).map(|i| lane_seed(a.x[i], lane_of(i))).collect();
        let ud: Vec<Lanes> = (0..nu)
            .map(|i| lane_seed(a.u[i], lane_of(nx + i)))
            .collect();
        let pd: Vec<Lanes> = (0..np)
            .map(|i| lane_seed(a.p[i], lane_of(nx + nu + i)))
            .collect();
        f.iter_mut().for_each(|v| *v = Lanes::from_re(0.0));
        sys.flow(a.mode, td, &xd, &ud, &pd, &mut f)?;
        if with_y {
            sys.outputs(a.mode, td, &xd, &ud, &pd, &mut y)?;
        }
        for d in first..(first + LANES).min(ndir) {
            let l = d - first;
            for j in 0..a.k {
                let mut s = 0.0;
                for (lv, fv) in a.lam[j * nx..(j + 1) * nx].iter().zip(&f) {
                    s += lv * lane_eps(fv, l);
                }
                if with_y {
                    for (b, yv) in ybar[j * ny..(j + 1) * ny].iter().zip(&y) {
                        s += b * lane_eps(yv, l);
                    }
                }
                out.set(j, d, (nx, nu, np), s);
            }
        }
    }
    Ok(())
}
