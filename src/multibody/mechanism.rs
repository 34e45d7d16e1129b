//! A planar mechanism in natural coordinates: points, bodies, force elements, constraints
//! and gravity, assembled into the mass matrix `M(p)`, the generalized force `F(q, v, p)`
//! and the constraint data of theory.md §5.

use super::bodies::{Bar, Point, PointMass};
use super::constraints::{self, Constraint, ConstraintEval};
use super::dynamics::{Accel, Dynamics};
use super::forces::{self, Damper, Spring};
use super::param::ParamRef;
use crate::error::ModelError;
use crate::model::Scalar;

/// [`ModelError::InvalidMechanism`]'s problem for an element whose point or parameter index is out
/// of range.
const INVALID_INDEX: &str = "has an invalid point or parameter index";

/// The description of a planar mechanism. Coordinates `q` (n of them) are the x, y of the
/// moving points; `v = q̇`. Indices in bars, springs, dampers and constraints refer to
/// [`Mechanism::points`]. Gravity acts along −y with magnitude [`Mechanism::gravity`].
#[derive(Debug, Clone, PartialEq)]
pub struct Mechanism {
    /// Number of coordinates n.
    pub n: usize,
    pub points: Vec<Point>,
    pub bars: Vec<Bar>,
    pub point_masses: Vec<PointMass>,
    pub springs: Vec<Spring>,
    pub dampers: Vec<Damper>,
    /// The mechanism's own (permanent) constraint set.
    pub constraints: Vec<Constraint>,
    /// Gravitational acceleration g (along −y).
    pub gravity: ParamRef,
    /// The coordinates driven by the control channels, one per channel
    /// (multibody/actuators.rs).
    pub actuators: Vec<usize>,
    /// The last linearization of the flow, for the VJP hook ([`super::implicit`]).
    pub(crate) vjp_cache: super::linearization::VjpCache,
}

impl Mechanism {
    /// An empty mechanism with n coordinates and no gravity.
    pub fn new(n: usize) -> Self {
        Mechanism {
            n,
            points: Vec::new(),
            bars: Vec::new(),
            point_masses: Vec::new(),
            springs: Vec::new(),
            dampers: Vec::new(),
            constraints: Vec::new(),
            gravity: ParamRef::Const(0.0),
            actuators: Vec::new(),
            vjp_cache: Default::default(),
        }
    }

    /// Adds a fixed point at constant coordinates; returns its index.
    pub fn fixed_point(&mut self, x: f64, y: f64) -> usize {
        self.points.push(Point::fixed(x, y));
        self.points.len() - 1
    }

    /// Adds a moving point with coordinates `(q[ix], q[ix+1])`; returns its index.
    pub fn moving_point(&mut self, ix: usize) -> usize {
        self.points.push(Point::moving(ix));
        self.points.len() - 1
    }

    /// Adds a uniform bar between points i and j.
    pub fn bar(&mut self, i: usize, j: usize, mass: ParamRef) {
        self.bars.push(Bar { i, j, mass });
    }

    /// Adds a point mass.
    pub fn point_mass(&mut self, point: usize, mass: ParamRef) {
        self.point_masses.push(PointMass { point, mass });
    }

    /// Adds a linear spring between points a and b.
    pub fn spring(&mut self, a: usize, b: usize, k: ParamRef, l0: ParamRef) {
        self.springs.push(Spring { a, b, k, l0 });
    }

    /// Adds a linear damper between points a and b.
    pub fn damper(&mut self, a: usize, b: usize, c: ParamRef) {
        self.dampers.push(Damper { a, b, c });
    }

    /// Adds a permanent distance constraint `|r_a − r_b|² − L² = 0`.
    pub fn distance(&mut self, a: usize, b: usize, length: ParamRef) {
        self.constraints.push(Constraint::Distance { a, b, length });
    }

    /// Checks every index: points exist, moving coordinates lie in `0..n` and are not shared,
    /// parameter references are below `np`, and every coordinate carries mass.
    pub fn validate(&self, np: usize) -> Result<(), ModelError> {
        let err = |element: String, problem: &str| {
            Err(ModelError::InvalidMechanism {
                element,
                problem: problem.to_string(),
            })
        };
        let np_ok = |r: &ParamRef| r.index().is_none_or(|i| i < np);
        let mut owner = vec![None; self.n];
        for (k, pt) in self.points.iter().enumerate() {
            match pt {
                Point::Moving { ix } => {
                    if ix + 1 >= self.n {
                        return err(
                            format!("point {k}"),
                            &format!("uses coordinates {ix}, {} but n = {}", ix + 1, self.n),
                        );
                    }
                    for c in [*ix, ix + 1] {
                        if let Some(o) = owner[c] {
                            return err(
                                format!("coordinate {c}"),
                                &format!("is shared by points {o} and {k}"),
                            );
                        }
                        owner[c] = Some(k);
                    }
                }
                Point::Fixed { x, y } => {
                    if !np_ok(x) || !np_ok(y) {
                        return err(
                            format!("fixed point {k}"),
                            &format!("refers to a parameter beyond {np}"),
                        );
                    }
                }
            }
        }
        let np_pts = self.points.len();
        let pt_ok = |i: usize| i < np_pts;
        for (k, b) in self.bars.iter().enumerate() {
            if !pt_ok(b.i) || !pt_ok(b.j) || !np_ok(&b.mass) {
                return err(format!("bar {k}"), INVALID_INDEX);
            }
        }
        for (k, b) in self.point_masses.iter().enumerate() {
            if !pt_ok(b.point) || !np_ok(&b.mass) {
                return err(format!("point mass {k}"), INVALID_INDEX);
            }
        }
        for (k, s) in self.springs.iter().enumerate() {
            if !pt_ok(s.a) || !pt_ok(s.b) || !np_ok(&s.k) || !np_ok(&s.l0) {
                return err(format!("spring {k}"), INVALID_INDEX);
            }
        }
        for (k, d) in self.dampers.iter().enumerate() {
            if !pt_ok(d.a) || !pt_ok(d.b) || !np_ok(&d.c) {
                return err(format!("damper {k}"), INVALID_INDEX);
            }
        }
        self.validate_constraints(&self.constraints, np)?;
        if !np_ok(&self.gravity) {
            return err(
                "gravity".into(),
                "refers to a parameter beyond the parameter vector",
            );
        }
        if let Some(c) = owner.iter().position(Option::is_none) {
            return err(format!("coordinate {c}"), "belongs to no moving point");
        }
        let mut carried = vec![false; self.points.len()];
        for b in &self.bars {
            carried[b.i] = true;
            carried[b.j] = true;
        }
        for m in &self.point_masses {
            carried[m.point] = true;
        }
        for (k, pt) in self.points.iter().enumerate() {
            if pt.coords().is_some() && !carried[k] {
                return err(
                    format!("moving point {k}"),
                    "carries no mass (singular mass matrix)",
                );
            }
        }
        Ok(())
    }

    /// Checks the point and parameter indices of a constraint set.
    pub fn validate_constraints(&self, cons: &[Constraint], np: usize) -> Result<(), ModelError> {
        for (k, c) in cons.iter().enumerate() {
            if c.points().iter().any(|&i| i >= self.points.len())
                || c.params()
                    .iter()
                    .any(|r| r.index().is_some_and(|i| i >= np))
            {
                return Err(ModelError::InvalidMechanism {
                    element: format!("constraint {k}"),
                    problem: INVALID_INDEX.into(),
                });
            }
        }
        Ok(())
    }

    /// Position of point k.
    pub fn position<D: Scalar>(&self, k: usize, q: &[D], p: &[D]) -> Result<[D; 2], ModelError> {
        self.points[k].position(q, p)
    }

    /// Velocity of point k.
    pub fn velocity<D: Scalar>(&self, k: usize, v: &[D]) -> [D; 2] {
        self.points[k].velocity(v)
    }

    /// The constant mass matrix `M(p)` (row-major n×n): the sum of the bars' blocks
    /// `(m/6)[[2I, I], [I, 2I]]` (or `(m/3)I` with one fixed end) and the point masses'
    /// `m I` (reference-models.md §2).
    pub fn mass_matrix<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        let n = self.n;
        let mut mat = vec![D::zero(); n * n];
        for b in &self.bars {
            b.add_mass(&self.points, p, n, &mut mat)?;
        }
        for m in &self.point_masses {
            m.add_mass(&self.points, p, n, &mut mat)?;
        }
        Ok(mat)
    }

    /// The generalized applied force `F(q, v, p)`: gravity, springs and dampers
    /// (see `forces`).
    pub fn forces<D: Scalar>(&self, q: &[D], v: &[D], p: &[D]) -> Result<Vec<D>, ModelError> {
        let mut f = vec![D::zero(); self.n];
        let g = self.gravity.value(p)?;
        forces::add_gravity(&self.points, &self.bars, &self.point_masses, g, p, &mut f)?;
        for s in &self.springs {
            s.add_force(&self.points, q, p, &mut f)?;
        }
        for d in &self.dampers {
            d.add_force(&self.points, q, v, p, &mut f)?;
        }
        Ok(f)
    }

    /// Kinetic energy `T = ½ vᵀ M v`.
    pub fn kinetic_energy<D: Scalar>(&self, v: &[D], p: &[D]) -> Result<D, ModelError> {
        let n = self.n;
        let mat = self.mass_matrix(p)?;
        let mut t = D::zero();
        for i in 0..n {
            for j in 0..n {
                t += v[i] * mat[i * n + j] * v[j];
            }
        }
        Ok(t * D::from(0.5))
    }

    /// Potential energy `V = Σ m g y_cm + Σ ½k(ℓ − L0)²` (gravity and springs).
    pub fn potential_energy<D: Scalar>(&self, q: &[D], p: &[D]) -> Result<D, ModelError> {
        let g = self.gravity.value(p)?;
        let mut v =
            forces::gravity_potential(&self.points, &self.bars, &self.point_masses, g, q, p)?;
        for s in &self.springs {
            v += s.energy(&self.points, q, p)?;
        }
        Ok(v)
    }

    /// Evaluates a constraint set (the mechanism's own, or any other over the same points).
    pub fn evaluate<D: Scalar>(
        &self, cons: &[Constraint], q: &[D], v: &[D], p: &[D],
    ) -> Result<ConstraintEval<D>, ModelError> {
        constraints::evaluate(cons, &self.points, q, v, p)
    }

    /// Accelerations under the mechanism's own constraints.
    pub fn acceleration<D: Scalar>(
        &self, dynamics: &Dynamics, q: &[D], v: &[D], p: &[D],
    ) -> Result<Accel<D>, ModelError> {
        self.acceleration_with(dynamics, &self.constraints, q, v, p)
    }

    /// Accelerations under the constraint set `cons` with the chosen formulation
    /// (theory.md §5; seed 000 (29)–(32)).
    pub fn acceleration_with<D: Scalar>(
        &self, dynamics: &Dynamics, cons: &[Constraint], q: &[D], v: &[D], p: &[D],
    ) -> Result<Accel<D>, ModelError> {
        self.acceleration_actuated(dynamics, cons, q, v, &[], p)
    }

    /// [`Self::acceleration_with`] under the actuators' forces `B u` (`u` empty: none).
    pub fn acceleration_actuated<D: Scalar>(
        &self, dynamics: &Dynamics, cons: &[Constraint], q: &[D], v: &[D], u: &[D], p: &[D],
    ) -> Result<Accel<D>, ModelError> {
        let mass = self.mass_matrix(p)?;
        let mut f = self.forces(q, v, p)?;
        self.add_actuation(u, &mut f)?;
        let ev = self.evaluate(cons, q, v, p)?;
        dynamics.accelerations(&mass, &f, &ev, v, |w| {
            constraints::velocity_hessian_product(cons, &self.points, v, w)
        })
    }
}
