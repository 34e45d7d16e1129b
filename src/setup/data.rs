//! The data terms on a finished run (cost/data.rs): the residuals `r_{i,c}` at the sample
//! instants, generic over the scalar (the dual witness evaluates the same formula), and
//! their Jacobians in X and θ (the adjoint's cotangents and the direct method's rows).

use super::augmented::ScalarJac;
use super::definition::Setup;
use crate::cost::Samples;
use crate::error::Error;
use crate::integrate::{Instant, Trajectory};
use crate::model::{HybridSystem, Scalar};
use nalgebra::DVector;

/// A data sample's contribution to the adjoint (theory.md, "Least squares"):
/// `c_X = Σ_c 2 r_c ∂r_c/∂X`, `c_θ = Σ_c 2 r_c ∂r_c/∂θ` at the sample's instant.
pub type SampleCotangent = (Instant, DVector<f64>, DVector<f64>);

/// The residuals' rows at one instant: `(r_c, ∂r_c/∂X, ∂r_c/∂θ)` per measured cell.
pub type ResidualRows = Vec<(f64, DVector<f64>, DVector<f64>)>;

impl<'a, S: HybridSystem> Setup<'a, S> {
    /// Where each sample of `samples` is read on `traj` (a typed error for a sample after
    /// the run's end, e.g. when a terminal event stopped it first).
    pub(crate) fn sample_instants<D: Scalar>(
        &self, traj: &Trajectory<D>, samples: &Samples,
    ) -> Result<Vec<Instant>, Error> {
        traj.instants(&samples.times)
            .map_err(|off| Error::SampleOffRun {
                record: samples.source.clone(),
                t: off.t,
                t_final: off.t_final,
            })
    }

    /// The residuals `√w (y_c(t_i) − d_{i,c})/σ_{i,c}` of a record on a run of X, in
    /// residual order ([`Samples::measured`]).
    pub fn data_residuals<D: Scalar>(
        &self, traj: &Trajectory<D>, theta: &[D], samples: &Samples, weight: f64,
    ) -> Result<Vec<D>, Error> {
        let (nx, ny) = (self.nx(), self.dims.outputs.len());
        let mut out = Vec::with_capacity(samples.count());
        let mut y = vec![D::zero(); ny];
        for (i, at) in self.sample_instants(traj, samples)?.into_iter().enumerate() {
            let t = samples.times[i];
            let (x, ctx) = traj.state_of(at);
            let u = self.controls_at(&ctx, D::from(t), theta);
            self.sys
                .outputs(
                    ctx.mode,
                    D::from(t),
                    &x[..nx],
                    &u,
                    &theta[..self.np()],
                    &mut y,
                )
                .map_err(|e| Error::Model {
                    t,
                    mode: self.dims.mode_name(ctx.mode),
                    source: e,
                })?;
            samples.residuals_at(i, &y, weight, &mut out);
        }
        Ok(out)
    }

    /// The rows `(r, ∂r/∂X, ∂r/∂θ)` of a record, one list per sample instant, from the
    /// outputs' exact Jacobians on a run of X (states read as in [`Self::data_residuals`]).
    pub(crate) fn data_rows(
        &self, traj: &Trajectory, theta: &[f64], samples: &Samples, weight: f64,
    ) -> Result<Vec<(Instant, ResidualRows)>, Error> {
        let sw = weight.sqrt();
        let instants = self.sample_instants(traj, samples)?;
        let mut out = Vec::with_capacity(instants.len());
        for (i, at) in instants.into_iter().enumerate() {
            let t = samples.times[i];
            let (x, ctx) = traj.state_of(at);
            let outs: Vec<ScalarJac> =
                self.output_jacobian(&ctx, t, x, theta)
                    .map_err(|e| Error::Model {
                        t,
                        mode: self.dims.mode_name(ctx.mode),
                        source: e,
                    })?;
            let rows = samples.cells[i]
                .iter()
                .enumerate()
                .filter_map(|(c, d)| d.map(|d| (c, d)))
                .map(|(c, d)| {
                    let o = &outs[samples.channels[c].output];
                    let s = sw / d.sigma;
                    ((o.value - d.value) * s, &o.x * s, &o.theta * s)
                })
                .collect();
            out.push((at, rows));
        }
        Ok(out)
    }

    /// Every data term's adjoint cotangents on a run of X, for objective `oi`
    /// ([`SampleCotangent`]: `2 r ∂r/∂X`, `2 r ∂r/∂θ` summed over a sample's cells).
    pub(crate) fn data_cotangents(
        &self, traj: &Trajectory, theta: &[f64], oi: usize,
    ) -> Result<Vec<SampleCotangent>, Error> {
        let (n, nth) = (self.n(), self.ntheta());
        let mut out = Vec::new();
        for (samples, weight) in self.objectives[oi].terms.iter().filter_map(|t| t.data()) {
            for (at, rows) in self.data_rows(traj, theta, samples, weight)? {
                let (mut cx, mut ct) = (DVector::zeros(n), DVector::zeros(nth));
                for (r, rx, rt) in rows {
                    cx.axpy(2.0 * r, &rx, 1.0);
                    ct.axpy(2.0 * r, &rt, 1.0);
                }
                out.push((at, cx, ct));
            }
        }
        Ok(out)
    }
}
