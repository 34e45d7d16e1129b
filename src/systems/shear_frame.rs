//! A multi-storey hysteretic shear frame under ground motion (reference-models §11): N
//! storeys, each a floor mass on a storey whose restoring force follows the exponential
//! branch law with memory of [`super::hysteretic_oscillator`] (reference-models §9), in
//! parallel with a viscous storey damper; the ground acceleration `a_g(t)` is the input.
//!
//! With `x_i` the displacement of floor i relative to the ground (`x_0 = 0`, the ground
//! itself), the drift of storey i is `d_i = x_i − x_{i−1}`, its rate `w_i = v_i − v_{i−1}`,
//! and its shear `q_i = f_i + c_i w_i` (`q_{N+1} = 0` above the roof):
//!
//! ```text
//! ẋ_i = v_i,   m v̇_i = −m a_g(t) − q_i + q_{i+1},
//! f_i = f_r,i + (s_i f_y,i − f_r,i)(1 − exp(−k0 (d_i − d_r,i)/(s_i f_y,i − f_r,i))) + b k0 (d_i − d_r,i)
//! ```
//!
//! The ground motion is a modulated pulse (`ground_motion = "pulse"`, the default)
//! `a_g(t) = A_g (t/t_p) e^{1 − t/t_p} sin(Ω t)`, whose envelope rises from 0 to 1 at
//! `t = t_p` and decays after it, or a steady harmonic (`"harmonic"`)
//! `a_g(t) = A_g sin(Ω t)`.
//!
//! **Memory and direction per storey.** A mode per combination of directions would need
//! 2^N modes, so the direction `s_i = ±1` of each storey is memory, like its last reversal
//! point `(d_r,i, f_r,i)`: states with a zero flow, changed only by the storey's own
//! reversal (theory.md §6: memory as states, `ẏ* = 0`). There is one mode and one guard
//! per storey, `rev_i = s_i w_i`, falling through 0 (the drift rate changes sign against
//! the current direction; see "Start" for its form before the storey has moved). Its
//! reset keeps x and v, and sets `d_r,i = d_i`, `f_r,i = f_i(before)`, `s_i = −s_i`; the
//! other storeys' memory is untouched. The event time depends on θ, and so does the memory
//! captured there; the jump of theory.md §3 carries it, as for the single storey. Here its
//! event-time term vanishes: the captured drift and force are stationary at a reversal
//! (their rates `w_i` and `k0 (e^{−u} + b) w_i` are 0) and the flow is the same on both
//! sides (the new branch starts at the old force), so `S⁺ = R_x S⁻`.
//!
//! **Why a [`HybridSystem`] and not a [`crate::dae::DaeSystem`].** The single storey
//! writes f as an algebraic state (index 1, `k_z = 1`). Here the branch law is explicit
//! in f, so the N forces are computed in the flow from the state and the memory: the
//! reduced formulation of theory.md §6 with nothing to solve. This keeps the cost of an
//! evaluation O(N) (no N×N Newton matrix per evaluation), and the flow's vector–Jacobian
//! products are written by hand in O(N) per cotangent ([`ShearFrame`]'s `flow_vjp`;
//! `tests/shear_frame.rs` holds them to the default dual passes). At N = 1 the system is
//! the hysteretic oscillator with `F0 sin(Ω t) = −m a_g(t)` (the test checks trajectory
//! and gradient against it).
//!
//! **Start.** At rest, `(d_r, f_r) = (0, 0)`. All storeys first drift against the ground
//! acceleration (the floors lag behind the ground; storey i's drift starts with the sign
//! of the shear of the storey below), so the start direction is `s_i = −sign(A_g Ω)` for
//! every storey (+1 when `A_g Ω = 0`, which does not move). The upper storeys' first
//! motions are minute (the motion climbs from the base) and, when damping dominates, an
//! explicit integrator's front of motion can have the wrong sign there, far below the
//! tolerance; read as reversals, such noise makes grazing events. So a storey's
//! reversals are watched only once it is *armed*: its drift rate has exceeded
//! `ε_i = 10⁻⁶ f_y,i/√(k0 m)` ([`ARMING_FRACTION`] of its yield drift f_y,i/k0 times its
//! frequency √(k0/m)) in its start direction. The guard is `ε_i − s_i w_i` before and
//! `s_i w_i` after (the state `armed_i`, 0 then 1); the arming event changes nothing else,
//! and as the flow does not see `armed_i` it adds no jump to the sensitivities. Before
//! arming, a storey follows its start branch; motions that never reach ε_i do not
//! reverse it.
//!
//! **States**, per storey i = 1..N in order: `x_i, v_i, d_r_i, f_r_i, s_i, armed_i` (6N
//! states; storey by storey, so the flow's Jacobian is banded). **Parameters**: the shared
//! `m, k0, b, A_g, Omega` (and `t_p` for the pulse), then `c_1..c_N`, then
//! `f_y_1..f_y_N`. **Outputs**: `roof` (x_N), `drift_sq` (Σ d_i²), `base_shear`
//! (q_1, the force the frame takes from the ground), then `d_1..d_N`, `f_1..f_N`.
//!
//! **Defaults** (nondimensional, like reference-models §9, whose single storey they
//! reproduce at N = 1): m = 1, k0 = 1, b = 0.05, c_i = 0.05; the yield forces in
//! proportion to the storey shears of the elastic frame's first mode (uniform m and k0:
//! mode shape `sin(j ϑ)`, `ϑ = π/(2N + 1)`, storey shear ∝ `cos((i − ½) ϑ)`), so that
//! in that mode every storey reaches its yield force at once, 0.5 at the roof storey:
//! `f_y,i = 0.5 cos((i − ½) ϑ)/sin ϑ = 0.5 sin((N + 1 − i) ϑ)/sin ϑ` (0.5 at N = 1; 16.1
//! at the base of 50 storeys); the pulse `A_g = 0.2`, Ω the elastic frame's fundamental
//! frequency `ω_1 = 2 sin(ϑ/2)`, `t_p = 2π/ω_1` (one fundamental period).

use super::build_error::{BuildError, ShearFrameError};
use super::kind::BuiltinSystem;
use crate::error::ModelError;
use crate::model::{
    Dims, Direction, GuardInfo, HybridSystem, Names, OutputCotangent, Scalar, VjpArgs, VjpOut,
};
use serde::{Deserialize, Serialize};

/// The largest number of storeys: 6N states; the direct method and the implicit
/// integrators form the flow's n×n Jacobian densely (at N = 200, 1200×1200, 11.5 MB, per
/// evaluation) and the adjoint keeps one per event, so larger frames are beyond what this
/// engine does in a user's time.
pub const MAX_STOREYS: usize = 200;

/// States per storey: `x, v, d_r, f_r, s, armed`.
pub const STATES_PER_STOREY: usize = 6;

/// A storey's reversals are watched once its drift rate has exceeded this fraction of its
/// yield rate `f_y,i/√(k0 m)` in its start direction (module doc, "Start").
pub const ARMING_FRACTION: f64 = 1e-6;

const X: usize = 0;
const V: usize = 1;
const DR: usize = 2;
const FR: usize = 3;
const S: usize = 4;
const ARMED: usize = 5;

/// Shared parameters, in order.
const M: usize = 0;
const K0: usize = 1;
const B: usize = 2;
const AG: usize = 3;
const OMEGA: usize = 4;
const TP: usize = 5;

/// Outputs before the per-storey ones: `roof`, `drift_sq`, `base_shear`.
const SUMMARY_OUTPUTS: usize = 3;

/// The ground acceleration's form (`[system] ground_motion`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GroundMotion {
    /// `a_g(t) = A_g (t/t_p) e^{1 − t/t_p} sin(Ω t)`: an envelope that rises from 0 to 1
    /// at `t_p` and decays after it (parameters `A_g, Omega, t_p`).
    #[default]
    Pulse,
    /// `a_g(t) = A_g sin(Ω t)` (parameters `A_g, Omega`): the single storey's harmonic load.
    Harmonic,
}

/// The `[system]` settings of `kind = "shear_frame"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ShearFrameConfig {
    /// The number of storeys N, 1 ≤ N ≤ `MAX_STOREYS`; default 3.
    pub storeys: usize,
    /// The ground acceleration's form; default `"pulse"`.
    pub ground_motion: GroundMotion,
}

impl Default for ShearFrameConfig {
    fn default() -> Self {
        ShearFrameConfig {
            storeys: 3,
            ground_motion: GroundMotion::Pulse,
        }
    }
}

/// The N-storey hysteretic shear frame (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct ShearFrame {
    n: usize,
    ground: GroundMotion,
}

impl Default for ShearFrame {
    fn default() -> Self {
        ShearFrame::new(ShearFrameConfig::default()).expect("the default settings are valid")
    }
}

/// The branch law's value and partial derivatives at one storey (all real), for the
/// hand-written products: with `σ = s f_y − f_r`, `u = k0 Δ/σ`, `E = e^{−u}`,
/// `f = f_r + σ(1 − E) + b k0 Δ`.
struct Branch {
    f: f64,
    /// ∂f/∂Δ = k0 (E + b) (and −∂f/∂d_r)
    d_delta: f64,
    /// ∂f/∂f_r = E (1 + u)
    d_fr: f64,
    /// ∂f/∂σ = 1 − E (1 + u): ∂f/∂f_y = s·this, ∂f/∂s = f_y·this
    d_span: f64,
    /// ∂f/∂k0 = Δ (E + b)
    d_k0: f64,
    /// ∂f/∂b = k0 Δ
    d_b: f64,
}

impl Branch {
    fn at(s: f64, delta: f64, fr: f64, k0: f64, fy: f64, b: f64) -> Branch {
        let span = s * fy - fr;
        let u = k0 * delta / span;
        let e = (-u).exp();
        Branch {
            f: fr + span * (1.0 - e) + b * k0 * delta,
            d_delta: k0 * (e + b),
            d_fr: e * (1.0 + u),
            d_span: 1.0 - e * (1.0 + u),
            d_k0: delta * (e + b),
            d_b: k0 * delta,
        }
    }
}

/// The branch law `f = f_r + (s f_y − f_r)(1 − e^{−k0 Δ/(s f_y − f_r)}) + b k0 Δ` with
/// the direction s as a scalar of its own (a state here; its derivative is zero on every
/// trajectory, as s only flips).
fn branch<D: Scalar>(s: D, delta: D, fr: D, k0: D, fy: D, b: D) -> D {
    let span = s * fy - fr;
    fr + span * (D::one() - (-(k0 * delta) / span).exp()) + b * k0 * delta
}

/// The mass and the stiffness must be positive (the law and the arming threshold
/// divide by them).
fn check_shared(m: f64, k0: f64) -> Result<(), ModelError> {
    if m > 0.0 && k0 > 0.0 {
        Ok(())
    } else {
        Err(ModelError::ParameterOutOfRange {
            system: "shear frame".into(),
            values: vec![("m".into(), m), ("k0".into(), k0)],
            valid: "the storey mass m and stiffness k0 must be positive".into(),
        })
    }
}

impl ShearFrame {
    /// The frame for `config`; fails unless `1 ≤ storeys ≤ MAX_STOREYS`.
    pub fn new(config: ShearFrameConfig) -> Result<Self, ShearFrameError> {
        if !(1..=MAX_STOREYS).contains(&config.storeys) {
            return Err(ShearFrameError::Storeys {
                given: config.storeys,
                max: MAX_STOREYS,
            });
        }
        Ok(ShearFrame {
            n: config.storeys,
            ground: config.ground_motion,
        })
    }

    /// The number of storeys N.
    pub fn storeys(&self) -> usize {
        self.n
    }

    /// The ground motion's form.
    pub fn ground_motion(&self) -> GroundMotion {
        self.ground
    }

    /// The number of shared parameters (5, or 6 with the pulse's `t_p`).
    fn shared(&self) -> usize {
        match self.ground {
            GroundMotion::Pulse => 6,
            GroundMotion::Harmonic => 5,
        }
    }

    /// The index of `c_i` in the parameters (storeys counted from 0).
    pub fn damper_index(&self, i: usize) -> usize {
        self.shared() + i
    }

    /// The index of `f_y_i` in the parameters (storeys counted from 0).
    pub fn yield_index(&self, i: usize) -> usize {
        self.shared() + self.n + i
    }

    /// The index of state `x_i` (storeys from 0); `v_i`, `d_r_i`, `f_r_i`, `s_i`, `armed_i`
    /// follow.
    pub fn state_index(i: usize) -> usize {
        STATES_PER_STOREY * i
    }

    /// The elastic frame's fundamental frequency at m = k0 = 1: `2 sin(π/(4N + 2))`
    /// (a chain of N equal masses and springs, fixed at the ground, free at the roof:
    /// mode shape `sin(j π/(2N + 1))`, j = 1..N).
    pub fn fundamental_frequency(&self) -> f64 {
        2.0 * (std::f64::consts::PI / (4 * self.n + 2) as f64).sin()
    }

    /// The default parameters, in parameter order (module doc, "Defaults").
    pub fn default_params(&self) -> Vec<f64> {
        let w1 = self.fundamental_frequency();
        let mut p = vec![1.0, 1.0, 0.05, 0.2, w1];
        if self.ground == GroundMotion::Pulse {
            p.push(std::f64::consts::TAU / w1);
        }
        p.extend(std::iter::repeat_n(0.05, self.n));
        let theta = std::f64::consts::PI / (2 * self.n + 1) as f64;
        // cos((i − ½) ϑ) = sin((N + 1 − i) ϑ) for storey i counted from 1, as (N + ½) ϑ = π/2
        p.extend((0..self.n).map(|i| 0.5 * ((self.n - i) as f64 * theta).sin() / theta.sin()));
        p
    }

    /// The ground acceleration `a_g(t)` (module doc).
    pub fn ground_acceleration<D: Scalar>(&self, t: D, p: &[D]) -> D {
        let wave = p[AG] * (p[OMEGA] * t).sin();
        match self.ground {
            GroundMotion::Harmonic => wave,
            GroundMotion::Pulse => {
                let r = t / p[TP];
                wave * r * (D::one() - r).exp()
            }
        }
    }

    /// `∂a_g/∂(A_g, Ω, t_p)` at a real point (t_p's entry 0 for the harmonic).
    fn ground_partials(&self, t: f64, p: &[f64]) -> [f64; 3] {
        let (sn, cs) = (p[OMEGA] * t).sin_cos();
        match self.ground {
            GroundMotion::Harmonic => [sn, p[AG] * t * cs, 0.0],
            GroundMotion::Pulse => {
                let tp = p[TP];
                let env = t / tp * (1.0 - t / tp).exp();
                [
                    env * sn,
                    p[AG] * env * t * cs,
                    p[AG] * sn * env * (t - tp) / (tp * tp),
                ]
            }
        }
    }

    /// The start direction of every storey, `−sign(A_g Ω)` (+1 at 0): the module doc.
    pub fn start_direction(p: &[f64]) -> f64 {
        if p[AG] * p[OMEGA] > 0.0 {
            -1.0
        } else {
            1.0
        }
    }

    /// The branch's domain: `f_y,i − s_i f_r,i > 0` (the yield force lies beyond the
    /// force at the last reversal on the side the storey moves to); outside it the law's
    /// exponential has no meaning.
    fn check_branch(&self, i: usize, s: f64, fr: f64, fy: f64) -> Result<(), ModelError> {
        if fy - s * fr > 0.0 {
            return Ok(());
        }
        let k = i + 1;
        Err(ModelError::OutsideDomain {
            system: format!("shear frame, storey {k}"),
            values: vec![
                (format!("f_y_{k}"), fy),
                (format!("s_{k}"), s),
                (format!("f_r_{k}"), fr),
            ],
            valid: format!(
                "the branch law needs f_y_{k} − s_{k}·f_r_{k} > 0 (the yield force beyond the \
                 force at the last reversal, on the side the storey moves to)"
            ),
        })
    }

    /// Storey i's drift and drift rate (storeys from 0): `d_i = x_i − x_{i−1}`,
    /// `w_i = v_i − v_{i−1}` (module doc), with the ground's `x_{−1} = v_{−1} = 0`.
    fn drift<D: Scalar>(i: usize, x: &[D]) -> (D, D) {
        let at = Self::state_index(i);
        if i == 0 {
            (x[at + X], x[at + V])
        } else {
            let below = at - STATES_PER_STOREY;
            (x[at + X] - x[below + X], x[at + V] - x[below + V])
        }
    }

    /// Storey i's drift, drift rate and restoring force (storeys from 0), checked.
    fn storey<D: Scalar>(&self, i: usize, x: &[D], p: &[D]) -> Result<(D, D, D), ModelError> {
        let at = Self::state_index(i);
        let (d, w) = Self::drift(i, x);
        let (s, fr, fy) = (x[at + S], x[at + FR], p[self.yield_index(i)]);
        self.check_branch(i, s.re(), fr.re(), fy.re())?;
        let f = branch(s, d - x[at + DR], fr, p[K0], fy, p[B]);
        Ok((d, w, f))
    }
}

impl HybridSystem for ShearFrame {
    fn geometry(&self) -> Option<&dyn crate::geometry::Geometry> {
        Some(self)
    }
    fn dims(&self) -> Dims {
        let per_storey = |names: &[&str]| -> Vec<String> {
            names
                .iter()
                .flat_map(|q| (1..=self.n).map(move |k| format!("{q}_{k}")))
                .collect()
        };
        let states: Vec<String> = (1..=self.n)
            .flat_map(|k| {
                ["x", "v", "d_r", "f_r", "s", "armed"]
                    .into_iter()
                    .map(move |q| format!("{q}_{k}"))
            })
            .collect();
        let mut params = (["m", "k0", "b", "A_g", "Omega", "t_p"][..self.shared()]).into_names();
        params.extend(per_storey(&["c", "f_y"]));
        let mut outputs = ["roof", "drift_sq", "base_shear"].into_names();
        outputs.extend(per_storey(&["d", "f"]));
        Dims::new(states, params)
            .param_defaults(self.default_params())
            .modes(["frame"])
            .guards((1..=self.n).map(|k| GuardInfo::new(&format!("rev_{k}"), Direction::Falling)))
            .outputs(outputs)
    }
    /// At rest, no reversal yet, every storey's direction `−sign(A_g Ω)`, none armed.
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        let pr: Vec<f64> = p[..self.shared()].iter().map(|v| v.re()).collect();
        let s0 = D::from(Self::start_direction(&pr));
        let mut x = vec![D::zero(); STATES_PER_STOREY * self.n];
        for i in 0..self.n {
            x[Self::state_index(i) + S] = s0;
        }
        Ok(x)
    }
    /// From the roof down, so that the shear above is at hand: `v̇_i = −a_g − (q_i −
    /// q_{i+1})/m`; the memory's flow is zero.
    /// Storey i's velocity reads its own force and the one above, `q_i` and `q_{i+1}`;
    /// `q_k` reads storey k's drift and drift rate against the floor below (x, v of k and
    /// k − 1) and k's memory (d_r, f_r, s). So: x, v of storeys i − 1, i, i + 1 and the
    /// memory of i and i + 1. Its position reads its velocity; the memory states and the
    /// arming flags have no flow.
    fn flow_pattern(&self, _mode: usize) -> Option<crate::sparsity::Pattern> {
        let mut reads = vec![Vec::new(); self.n * STATES_PER_STOREY];
        for i in 0..self.n {
            let at = Self::state_index(i);
            reads[at + X] = vec![at + V];
            let row = &mut reads[at + V];
            for k in i.saturating_sub(1)..(i + 2).min(self.n) {
                let s = Self::state_index(k);
                row.extend([s + X, s + V]);
                if k >= i {
                    row.extend([s + DR, s + FR, s + S]);
                }
            }
        }
        crate::sparsity::Pattern::from_rows(self.n * STATES_PER_STOREY, &reads).ok()
    }
    fn flow<D: Scalar>(
        &self, _mode: usize, t: D, x: &[D], _u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        check_shared(p[M].re(), p[K0].re())?;
        let ag = self.ground_acceleration(t, p);
        let mut above = D::zero();
        for i in (0..self.n).rev() {
            let (_, w, f) = self.storey(i, x, p)?;
            let q = f + p[self.damper_index(i)] * w;
            let at = Self::state_index(i);
            dx[at + X] = x[at + V];
            dx[at + V] = -ag - (q - above) / p[M];
            dx[at + DR] = D::zero();
            dx[at + FR] = D::zero();
            dx[at + S] = D::zero();
            dx[at + ARMED] = D::zero();
            above = q;
        }
        Ok(())
    }
    /// `rev_i = s_i w_i` once armed, `ε_i − s_i w_i` before (module doc, "Start").
    fn guard<D: Scalar>(&self, _mode: usize, k: usize, _t: D, x: &[D], _u: &[D], p: &[D]) -> D {
        let at = Self::state_index(k);
        let w = if k == 0 {
            x[at + V]
        } else {
            x[at + V] - x[at - STATES_PER_STOREY + V]
        };
        let a = x[at + ARMED];
        let eps = p[self.yield_index(k)] * ARMING_FRACTION / (p[M] * p[K0]).sqrt();
        a * x[at + S] * w + (D::one() - a) * (eps - x[at + S] * w)
    }
    /// Storey k's arming (`armed_k = 1`, nothing else), or once armed its reversal:
    /// `(d_r, f_r) = (d, f)` there and s flips; all else is kept.
    fn reset<D: Scalar>(
        &self, mode: usize, k: usize, _t: D, x: &[D], p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        let mut after = x.to_vec();
        let at = Self::state_index(k);
        if x[at + ARMED].re() < 0.5 {
            after[at + ARMED] = D::one();
            return Ok((mode, after));
        }
        let (d, _, f) = self.storey(k, x, p)?;
        after[at + DR] = d;
        after[at + FR] = f;
        after[at + S] = -x[at + S];
        Ok((mode, after))
    }
    fn outputs<D: Scalar>(
        &self, _mode: usize, _t: D, x: &[D], _u: &[D], p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        let n = self.n;
        let mut drift_sq = D::zero();
        for i in 0..n {
            let (d, w, f) = self.storey(i, x, p)?;
            drift_sq += d * d;
            if i == 0 {
                out[2] = f + p[self.damper_index(0)] * w;
            }
            out[SUMMARY_OUTPUTS + i] = d;
            out[SUMMARY_OUTPUTS + n + i] = f;
        }
        out[0] = x[Self::state_index(n - 1) + X];
        out[1] = drift_sq;
        Ok(())
    }

    /// The exact products by hand, O(N) per cotangent. With `μ_i = λ_{v_i}` and
    /// `ρ_i = −(μ_i − μ_{i−1})/m` (`μ_0 = 0`: the derivative of `λᵀF` in the shear `q_i`),
    /// and the outputs' cotangents, each storey's force, drift rate and damper receive
    /// `f̄_i = ρ_i + ȳ_{f_i} + [i = 1] ȳ_base`, `w̄_i = c_i (f̄_i − ȳ_{f_i})`,
    /// `c̄_i = w_i (f̄_i − ȳ_{f_i})`; the branch law's partials (`Branch`) carry f̄ to
    /// the drift, the memory and `(k0, b, f_y,i)`; drifts and rates spread to the floors
    /// (`d_i = x_i − x_{i−1}`). Shared: `m̄ = −Σ ρ_i q_i/m`, `(A_g, Ω, t_p)` from
    /// `−Σ μ_i ∂a_g`. `tests/shear_frame.rs` holds it to the default dual passes.
    fn flow_vjp(&self, a: VjpArgs<'_>, out: VjpOut<'_>) -> Result<(), ModelError> {
        let (n, nx, np, k) = (self.n, a.x.len(), a.p.len(), a.k);
        let (x, p) = (a.x, a.p);
        check_shared(p[M], p[K0])?;
        let ny = SUMMARY_OUTPUTS + 2 * n;
        // the storeys at the point (real)
        let mut d = vec![0.0; n];
        let mut w = vec![0.0; n];
        let mut q = vec![0.0; n];
        let mut br = Vec::with_capacity(n);
        for i in 0..n {
            let at = Self::state_index(i);
            let (di, wi) = Self::drift(i, x);
            let (s, fr, fy) = (x[at + S], x[at + FR], p[self.yield_index(i)]);
            self.check_branch(i, s, fr, fy)?;
            let b = Branch::at(s, di - x[at + DR], fr, p[K0], fy, p[B]);
            d[i] = di;
            w[i] = wi;
            q[i] = b.f + p[self.damper_index(i)] * wi;
            br.push(b);
        }
        let mut heap = Vec::new();
        let ybar: &[f64] = match a.ybar {
            OutputCotangent::None => &[],
            OutputCotangent::Given(v) => v,
            OutputCotangent::At(fun) => {
                let y = &mut out.y[..ny];
                y[0] = x[Self::state_index(n - 1) + X];
                y[1] = d.iter().map(|v| v * v).sum();
                y[2] = q[0];
                y[SUMMARY_OUTPUTS..SUMMARY_OUTPUTS + n].copy_from_slice(&d);
                for i in 0..n {
                    y[SUMMARY_OUTPUTS + n + i] = br[i].f;
                }
                heap.resize(ny * k, 0.0);
                fun(y, &mut heap);
                &heap
            }
        };
        let dg = self.ground_partials(a.t, p);
        let shared = self.shared();
        for j in 0..k {
            let lam = &a.lam[j * nx..(j + 1) * nx];
            let yb = |o: usize| ybar.get(ny * j + o).copied().unwrap_or(0.0);
            let gx = &mut out.gx[j * nx..(j + 1) * nx];
            let gp = &mut out.gp[j * np..(j + 1) * np];
            gx.iter_mut().for_each(|v| *v = 0.0);
            gp.iter_mut().for_each(|v| *v = 0.0);
            gx[Self::state_index(n - 1) + X] += yb(0);
            let (mut mu_sum, mut m_bar) = (0.0, 0.0);
            let mut mu_below = 0.0;
            for i in 0..n {
                let at = Self::state_index(i);
                let mu = lam[at + V];
                mu_sum += mu;
                let rho = -(mu - mu_below) / p[M];
                mu_below = mu;
                m_bar -= rho * q[i] / p[M];
                // the storey's shear q_i = f_i + c_i w_i and its outputs
                let q_bar = rho + if i == 0 { yb(2) } else { 0.0 };
                let f_bar = q_bar + yb(SUMMARY_OUTPUTS + n + i);
                let w_bar = p[self.damper_index(i)] * q_bar;
                gp[self.damper_index(i)] = w[i] * q_bar;
                let b = &br[i];
                let delta_bar = f_bar * b.d_delta;
                let d_bar = delta_bar + 2.0 * d[i] * yb(1) + yb(SUMMARY_OUTPUTS + i);
                let s = x[at + S];
                gx[at + DR] = -delta_bar;
                gx[at + FR] = f_bar * b.d_fr;
                gx[at + S] = f_bar * p[self.yield_index(i)] * b.d_span;
                gp[K0] += f_bar * b.d_k0;
                gp[B] += f_bar * b.d_b;
                gp[self.yield_index(i)] = f_bar * s * b.d_span;
                // the floors: d_i = x_i − x_{i−1}, w_i = v_i − v_{i−1}; ẋ_i = v_i
                gx[at + X] += d_bar;
                gx[at + V] += w_bar + lam[at + X];
                if i > 0 {
                    let below = at - STATES_PER_STOREY;
                    gx[below + X] -= d_bar;
                    gx[below + V] -= w_bar;
                }
            }
            gp[M] = m_bar;
            // v̇_i = −a_g(t) − …: the ground motion's parameters
            gp[AG] = -mu_sum * dg[0];
            gp[OMEGA] = -mu_sum * dg[1];
            if shared > TP {
                gp[TP] = -mu_sum * dg[2];
            }
        }
        out.gu.iter_mut().for_each(|v| *v = 0.0);
        Ok(())
    }
}

/// The floors' height in the picture (the model has no geometry of its own: storey i
/// is drawn at height i, its floor moved sideways by its displacement relative to the
/// ground).
const STOREY_HEIGHT: f64 = 1.0;

impl crate::animate::Geometry for ShearFrame {
    /// The ground pivot, each storey as a spring from the floor below to its floor, the
    /// floors as masses (m).
    fn shapes(
        &self, _mode: usize, _t: f64, x: &[f64], _u: &[f64], p: &[f64],
    ) -> Result<Vec<crate::geometry::Shape>, ModelError> {
        use crate::geometry::Shape;
        if x.len() < STATES_PER_STOREY * self.n || p.is_empty() {
            return Err(ModelError::SizeMismatch {
                what: "shear frame geometry".into(),
                expected: format!("{} states", STATES_PER_STOREY * self.n),
                found: x.len().to_string(),
            });
        }
        let mut shapes = vec![Shape::Pivot { at: [0.0, 0.0] }];
        let mut below = [0.0, 0.0];
        for i in 0..self.n {
            let floor = [x[Self::state_index(i) + X], STOREY_HEIGHT * (i + 1) as f64];
            shapes.push(Shape::Spring { a: below, b: floor });
            shapes.push(Shape::Mass {
                at: floor,
                mass: p[M].abs(),
                name: String::new(),
            });
            below = floor;
        }
        Ok(shapes)
    }
    fn scene(&self, _p: &[f64], _x_range: (f64, f64)) -> Vec<crate::geometry::SceneItem> {
        vec![crate::geometry::SceneItem::Ground { y: 0.0 }]
    }
}

impl BuiltinSystem for ShearFrame {
    type Settings = ShearFrameConfig;
    fn build(settings: &ShearFrameConfig) -> Result<Self, BuildError> {
        Ok(ShearFrame::new(*settings)?)
    }
    fn param_defaults(&self) -> Option<Vec<f64>> {
        Some(ShearFrame::default_params(self))
    }
}
