//! Event handling: the micro-tests of reference-models §6 (each has an exact answer and has
//! returned a wrong one in some widely used tool) and the behaviours design.md asks of the
//! event loop: earliest crossing first, no spurious events at t0 or right after a reset,
//! direction filtering, typed errors for grazing, Zeno and non-finite values, event
//! location to near machine precision, and pinned step/event counts.

use crate::common;

use common::{assert_close, assert_within, gradients_by};
use hybridopt::control::{Basis, ControlGrid};
use hybridopt::cost::{EventGuard, Objective, Quantity, Term};
use hybridopt::integrate::Method;
use hybridopt::sensitivity::{evaluate, GradientMethod};
use hybridopt::setup::Setup;
use hybridopt::systems::{BouncingBall, ThrustBall};
use hybridopt::testing::ball_oracle;
use hybridopt::{Dims, Direction, Error, GuardInfo, HybridSystem, ModelError, Scalar};

use GradientMethod::{Adjoint, Direct, Dual, Fd};

const EXACT: [GradientMethod; 3] = [Adjoint, Direct, Dual];
const ALL: [GradientMethod; 4] = [Adjoint, Direct, Dual, Fd];

fn tight<S: HybridSystem>(s: &mut Setup<'_, S>, tol: f64) {
    *s = s.to_builder().tolerances(tol, tol).build();
}

// ---------------------------------------------------------------------------------------
// Test models

/// `u̇ = 1`, u(0) = 0, guard `u − p` rising. `terminal`: the guard ends the run (T = p);
/// otherwise the reset `u → 0` (a sawtooth).
struct Ramp {
    terminal: bool,
}

impl HybridSystem for Ramp {
    fn dims(&self) -> Dims {
        let info = if self.terminal {
            GuardInfo::terminal
        } else {
            GuardInfo::new
        };
        Dims::new(["u"], ["p"])
            .guards([info("u=p", Direction::Rising)])
            .outputs(["u"])
    }
    fn initial_state<D: Scalar>(&self, _p: &[D]) -> Result<Vec<D>, ModelError> {
        Ok(vec![D::zero()])
    }
    fn flow<D: Scalar>(
        &self, _m: usize, _t: D, _x: &[D], _u: &[D], _p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        dx[0] = D::one();
        Ok(())
    }
    fn guard<D: Scalar>(&self, _m: usize, _k: usize, _t: D, x: &[D], _u: &[D], p: &[D]) -> D {
        x[0] - p[0]
    }
    fn reset<D: Scalar>(
        &self, m: usize, _k: usize, _t: D, _x: &[D], _p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        Ok((m, vec![D::zero()]))
    }
    fn outputs<D: Scalar>(
        &self, _m: usize, _t: D, x: &[D], _u: &[D], _p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        out[0] = x[0];
        Ok(())
    }
}

/// `ẋ = +1` in mode 0 and `−1` in mode 1, x(0) = 0. Two rising guards watched in mode 0:
/// `x − 0.5` ("early") and `x − 0.6` ("late"), declared late first unless `early_first`.
/// Either one switches to mode 1 (no state jump), where nothing is watched, so only the
/// first crossing ever fires. `watch = false` disables both (to inspect the step sequence).
struct TwoGuards {
    early_first: bool,
    watch: bool,
}

impl TwoGuards {
    fn early_index(&self) -> usize {
        usize::from(!self.early_first)
    }
}

impl HybridSystem for TwoGuards {
    fn dims(&self) -> Dims {
        let early = GuardInfo::new("early", Direction::Rising);
        let late = GuardInfo::new("late", Direction::Rising);
        let guards = if self.early_first {
            [early, late]
        } else {
            [late, early]
        };
        Dims::new(["x"], [])
            .modes(["up", "down"])
            .guards(guards)
            .outputs(["x"])
    }
    fn guard_active(&self, mode: usize, _k: usize) -> bool {
        self.watch && mode == 0
    }
    fn initial_state<D: Scalar>(&self, _p: &[D]) -> Result<Vec<D>, ModelError> {
        Ok(vec![D::zero()])
    }
    fn flow<D: Scalar>(
        &self, m: usize, _t: D, _x: &[D], _u: &[D], _p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        dx[0] = if m == 0 { D::one() } else { -D::one() };
        Ok(())
    }
    fn guard<D: Scalar>(&self, _m: usize, k: usize, _t: D, x: &[D], _u: &[D], _p: &[D]) -> D {
        let level = if k == self.early_index() { 0.5 } else { 0.6 };
        x[0] - level
    }
    fn reset<D: Scalar>(
        &self, _m: usize, _k: usize, _t: D, x: &[D], _p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        Ok((1, x.to_vec()))
    }
    fn outputs<D: Scalar>(
        &self, _m: usize, _t: D, x: &[D], _u: &[D], _p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        out[0] = x[0];
        Ok(())
    }
}

/// `ẋ = +1` (mode 0) / `−1` (mode 1) between walls at ±1, x(0) = 0; both guards are
/// watched in both modes with direction `Either`. The reset at `x − 1 = 0` sets x to
/// exactly 1 (the guard is exactly zero afterwards, the velocity points away); the reset at
/// `x + 1 = 0` keeps x⁻ (the guard keeps its round-off residual, of either sign). Events at
/// t = 1, 3, 5, 7, ...
struct PingPong;

impl HybridSystem for PingPong {
    fn dims(&self) -> Dims {
        Dims::new(["x"], [])
            .modes(["right", "left"])
            .guards([
                GuardInfo::new("hi", Direction::Either),
                GuardInfo::new("lo", Direction::Either),
            ])
            .outputs(["x"])
    }
    fn initial_state<D: Scalar>(&self, _p: &[D]) -> Result<Vec<D>, ModelError> {
        Ok(vec![D::zero()])
    }
    fn flow<D: Scalar>(
        &self, m: usize, _t: D, _x: &[D], _u: &[D], _p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        dx[0] = if m == 0 { D::one() } else { -D::one() };
        Ok(())
    }
    fn guard<D: Scalar>(&self, _m: usize, k: usize, _t: D, x: &[D], _u: &[D], _p: &[D]) -> D {
        if k == 0 {
            x[0] - 1.0
        } else {
            x[0] + 1.0
        }
    }
    fn reset<D: Scalar>(
        &self, _m: usize, k: usize, _t: D, x: &[D], _p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        if k == 0 {
            Ok((1, vec![D::one()]))
        } else {
            Ok((0, x.to_vec()))
        }
    }
    fn outputs<D: Scalar>(
        &self, _m: usize, _t: D, x: &[D], _u: &[D], _p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        out[0] = x[0];
        Ok(())
    }
}

/// The bouncing ball with its ground guard watched in both directions (`Either`): right
/// after each bounce y⁺ ≈ 0 (± round-off) while the ball moves up, so an unmasked guard
/// with a negative residual would fire a spurious rising event.
struct EitherBall;

impl HybridSystem for EitherBall {
    fn dims(&self) -> Dims {
        BouncingBall
            .dims()
            .guards([GuardInfo::new("ground", Direction::Either)])
    }
    fn initial_state<D: Scalar>(&self, p: &[D]) -> Result<Vec<D>, ModelError> {
        BouncingBall.initial_state(p)
    }
    fn flow<D: Scalar>(
        &self, m: usize, t: D, x: &[D], u: &[D], p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        BouncingBall.flow(m, t, x, u, p, dx)
    }
    fn guard<D: Scalar>(&self, m: usize, k: usize, t: D, x: &[D], u: &[D], p: &[D]) -> D {
        BouncingBall.guard(m, k, t, x, u, p)
    }
    fn reset<D: Scalar>(
        &self, m: usize, k: usize, t: D, x: &[D], p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        BouncingBall.reset(m, k, t, x, p)
    }
    fn outputs<D: Scalar>(
        &self, m: usize, t: D, x: &[D], u: &[D], p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        BouncingBall.outputs(m, t, x, u, p, out)
    }
}

/// `ẋ = cos t`, x(0) = 0 (x = sin t), one guard `x − level` with a given direction and
/// the identity reset. Level 1/2: rising crossings at π/6 + 2πk, falling ones at
/// 5π/6 + 2πk. Level 0: the guard is zero at t0, moving up.
struct Sine {
    dir: Direction,
    level: f64,
}

impl HybridSystem for Sine {
    fn dims(&self) -> Dims {
        Dims::new(["x"], [])
            .guards([GuardInfo::new("half", self.dir)])
            .outputs(["x"])
    }
    fn initial_state<D: Scalar>(&self, _p: &[D]) -> Result<Vec<D>, ModelError> {
        Ok(vec![D::zero()])
    }
    fn flow<D: Scalar>(
        &self, _m: usize, t: D, _x: &[D], _u: &[D], _p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        dx[0] = t.cos();
        Ok(())
    }
    fn guard<D: Scalar>(&self, _m: usize, _k: usize, _t: D, x: &[D], _u: &[D], _p: &[D]) -> D {
        x[0] - self.level
    }
    fn outputs<D: Scalar>(
        &self, _m: usize, _t: D, x: &[D], _u: &[D], _p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        out[0] = x[0];
        Ok(())
    }
}

/// `ẋ = 3(t − 1)²`, x(0) = −1 (x = (t − 1)³): the guard `x` crosses zero at t = 1 with zero
/// rate — a grazing crossing.
struct Cubic {
    dir: Direction,
}

impl HybridSystem for Cubic {
    fn dims(&self) -> Dims {
        Dims::new(["x"], [])
            .guards([GuardInfo::new("flat", self.dir)])
            .outputs(["x"])
    }
    fn initial_state<D: Scalar>(&self, _p: &[D]) -> Result<Vec<D>, ModelError> {
        Ok(vec![-D::one()])
    }
    fn flow<D: Scalar>(
        &self, _m: usize, t: D, _x: &[D], _u: &[D], _p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        let s = t - 1.0;
        dx[0] = s * s * 3.0;
        Ok(())
    }
    fn guard<D: Scalar>(&self, _m: usize, _k: usize, _t: D, x: &[D], _u: &[D], _p: &[D]) -> D {
        x[0]
    }
    fn outputs<D: Scalar>(
        &self, _m: usize, _t: D, x: &[D], _u: &[D], _p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        out[0] = x[0];
        Ok(())
    }
}

/// Where a non-finite value appears.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Poison {
    /// the flow returns NaN for t > 0.5
    FlowAfterHalf,
    /// the reset at the guard `x − 0.25` returns NaN
    Reset,
    /// x0 = NaN
    Start,
}

/// `ẋ = 1`, x(0) = 0, guard `x − 0.25` rising (reset: a mode change to "after"), with a
/// non-finite value injected where `Poison` says.
struct Poisoned(Poison);

impl HybridSystem for Poisoned {
    fn dims(&self) -> Dims {
        Dims::new(["x"], [])
            .modes(["before", "after"])
            .guards([GuardInfo::new("quarter", Direction::Rising)])
            .outputs(["x"])
    }
    fn guard_active(&self, mode: usize, _k: usize) -> bool {
        mode == 0
    }
    fn initial_state<D: Scalar>(&self, _p: &[D]) -> Result<Vec<D>, ModelError> {
        Ok(vec![if self.0 == Poison::Start {
            D::from(f64::NAN)
        } else {
            D::zero()
        }])
    }
    fn flow<D: Scalar>(
        &self, _m: usize, t: D, _x: &[D], _u: &[D], _p: &[D], dx: &mut [D],
    ) -> Result<(), ModelError> {
        dx[0] = if self.0 == Poison::FlowAfterHalf && t.re() > 0.5 {
            D::from(f64::NAN)
        } else {
            D::one()
        };
        Ok(())
    }
    fn guard<D: Scalar>(&self, _m: usize, _k: usize, _t: D, x: &[D], _u: &[D], _p: &[D]) -> D {
        x[0] - 0.25
    }
    fn reset<D: Scalar>(
        &self, _m: usize, _k: usize, _t: D, x: &[D], _p: &[D],
    ) -> Result<(usize, Vec<D>), ModelError> {
        if self.0 == Poison::Reset {
            Ok((1, vec![x[0] * f64::NAN]))
        } else {
            Ok((1, x.to_vec()))
        }
    }
    fn outputs<D: Scalar>(
        &self, _m: usize, _t: D, x: &[D], _u: &[D], _p: &[D], out: &mut [D],
    ) -> Result<(), ModelError> {
        out[0] = x[0];
        Ok(())
    }
}

fn no_objectives() -> Vec<Objective> {
    vec![Objective::new("none", vec![])]
}

/// ψ = ∫y² + (y(T) − 0.1)² + 0.1 v(T)² (the cost of the shipped ball problem).
fn ball_objective() -> Objective {
    hybridopt::systems::shipped_objective()
}

/// First drag-free impact time (reference-models §1).
fn first_impact(g: f64, y0: f64, v0: f64) -> f64 {
    (v0 + (v0 * v0 + 2.0 * g * y0).sqrt()) / g
}

// ---------------------------------------------------------------------------------------
// reference-models §6

/// `u̇ = 1`, terminal event `u − q = 0`: T = q and dT/dq = 1 exactly, by the adjoint, the
/// direct method and the dual witness, with either integrator; the run ends at T and the
/// state there is u(T) = q (so a terminal term at a terminal event has d u(T)/dq = 1 too).
#[test]
fn terminal_event_time_and_its_derivative() {
    let sys = Ramp { terminal: true };
    for q in [0.3, 0.7, 2.5] {
        for method in [Method::Dopri5, Method::Sdirk3, Method::Radau5] {
            let objectives = vec![
                Objective::new(
                    "T",
                    vec![Term::plain(
                        Quantity::EventTime {
                            guard: EventGuard::Guard(0),
                            occurrence: 1,
                        },
                        1.0,
                    )],
                ),
                Objective::new(
                    "u(T)",
                    vec![Term::plain(Quantity::Terminal { output: 0 }, 1.0)],
                ),
            ];
            let mut s = Setup::new(&sys, 0.0, 10.0, None, objectives);
            s = s.to_builder().method(method).build();
            let traj = s.simulate(&[q]).unwrap();
            assert_eq!(traj.events.len(), 1);
            let e = &traj.events[0];
            assert!(e.terminal);
            // measured 2.2e-16 (2026-12-02; was 1e-13), margin 23×
            assert_within(
                &format!("{method:?}: terminal time T vs q = {q}"),
                ((e.t - q).abs()) / (q.max(1.0)),
                5e-15,
            );
            assert_eq!(traj.t_final, e.t, "the run ends at the terminal event");
            // measured 3.5e-16 (2026-12-02; was 1e-13), margin 28×
            assert_within(
                &format!("{method:?}: u(T) vs q = {q}"),
                ((traj.y_final[0] - q).abs()) / (q.max(1.0)),
                1e-14,
            );
            let methods: &[GradientMethod] = if method == Method::Dopri5 {
                &ALL
            } else {
                &[Adjoint, Direct, Fd]
            };
            for &m in methods {
                let ev = evaluate(&s, &[q], m).unwrap();
                for o in 0..2 {
                    // measured 3.5e-16 (2026-12-02; was 1e-13), margin 28×
                    assert_within(
                        &format!("{method:?} {}: ψ{o} vs q = {q}", m.name()),
                        ((ev.values[o] - q).abs()) / (q.max(1.0)),
                        1e-14,
                    );
                    let g = ev.gradients[o][0];
                    // measured fd 1.6e-12, exact 2.2e-16 (2026-12-02; was 1e-8 / 1e-12), margins 31×, 23×
                    let tol = if m == Fd { 5e-11 } else { 5e-15 };
                    assert_within(
                        &format!("{method:?} {}: dψ{o}/dq vs 1", m.name()),
                        (g - 1.0).abs(),
                        tol,
                    );
                }
            }
        }
    }
}

/// `u̇ = 1`, reset `u → 0` at `u = p`, horizon [0, 1]: k = ⌊1/p⌋ resets, u(1) = 1 − kp and
/// du(1)/dp = −k exactly (p = 0.6: −1; p = 0.3: −3), by all four methods.
#[test]
fn sawtooth_terminal_value_and_derivative() {
    let sys = Ramp { terminal: false };
    for (p, k) in [(0.6, 1.0), (0.3, 3.0), (0.45, 2.0)] {
        let obj = Objective::new(
            "u(1)",
            vec![Term::plain(Quantity::Terminal { output: 0 }, 1.0)],
        );
        let s = Setup::new(&sys, 0.0, 1.0, None, vec![obj]);
        let traj = s.simulate(&[p]).unwrap();
        assert_eq!(traj.events.len(), k as usize, "p = {p}: number of resets");
        for (j, e) in traj.events.iter().enumerate() {
            let tj = (j + 1) as f64 * p;
            // measured 2.2e-16 (2026-12-02; was 1e-13), margin 23×
            assert_within(&format!("p = {p}: reset {j} time"), (e.t - tj).abs(), 5e-15);
            assert!(e.after.y[0] == 0.0);
        }
        for (m, v, g) in gradients_by(&s, &[p], &ALL) {
            // measured 2.5e-16 (2026-12-02; was 1e-12), margin 20×
            assert_within(
                &format!("p = {p}, {}: u(1)", m.name()),
                (v - (1.0 - k * p)).abs(),
                5e-15,
            );
            // measured fd 3.1e-13, exact 8.9e-16 (2026-12-02; was 1e-8 / 1e-12), margins 32×, 22×
            let tol = if m == Fd { 1e-11 } else { 2e-14 };
            assert_within(
                &format!("p = {p}, {}: du(1)/dp vs −k", m.name()),
                (g[0] + k).abs(),
                tol,
            );
        }
    }
}

/// Ulp-spaced neighbours of t.
fn ulps(t: f64, n: i64) -> f64 {
    f64::from_bits((t.to_bits() as i64 + n) as u64)
}

/// An event within an ulp (or 1e-15, or 1e-13) of a breakpoint, on either side: the
/// event is neither lost nor doubled, and the gradient does not change. (1) The sawtooth,
/// whose answer is exact. (2) The drag-free ball, whose flight DOPRI5 integrates exactly
/// (a parabola), so the impact time is known to round-off and the breakpoint can be put
/// within an ulp of it; the gradient (wrt g, e, c, y0, v0) must agree with the run without
/// the breakpoint.
#[test]
fn event_within_an_ulp_of_a_breakpoint() {
    let offsets = |t: f64| {
        vec![
            ulps(t, -2),
            ulps(t, -1),
            t,
            ulps(t, 1),
            ulps(t, 2),
            t - 1e-15,
            t + 1e-15,
            t - 1e-13,
            t + 1e-13,
        ]
    };
    // (1) sawtooth
    let sys = Ramp { terminal: false };
    let obj = Objective::new(
        "u(1)",
        vec![Term::plain(Quantity::Terminal { output: 0 }, 1.0)],
    );
    for bp in offsets(0.6) {
        let mut s = Setup::new(&sys, 0.0, 1.0, None, vec![obj.clone()]);
        s = s.to_builder().breakpoint(bp).build();
        let traj = s.simulate(&[0.6]).unwrap();
        assert_eq!(traj.events.len(), 1, "breakpoint {bp:e}: events");
        for (m, v, g) in gradients_by(&s, &[0.6], &ALL) {
            // measured 1.1e-15 (2026-12-02; was 1e-12), margin 27×
            assert_within(
                &format!("bp {bp}: {} value", m.name()),
                (v - 0.4).abs(),
                3e-14,
            );
            // measured fd 7.2e-13, exact 2.2e-16 (2026-12-02; was 1e-8 / 1e-12), margins 28×, 23×
            let tol = if m == Fd { 2e-11 } else { 5e-15 };
            assert_within(
                &format!("bp {bp}: {} gradient vs −1", m.name()),
                (g[0] + 1.0).abs(),
                tol,
            );
        }
    }
    // (2) drag-free ball
    let p = [9.81, 0.8, 0.0, 1.0, 0.5];
    let t1 = first_impact(p[0], p[3], p[4]);
    let sys = BouncingBall;
    let mut s0 = Setup::new(&sys, 0.0, 3.0, None, vec![ball_objective()]);
    tight(&mut s0, 1e-10);
    let n_events = s0.simulate(&p).unwrap().events.len();
    let reference = gradients_by(&s0, &p, &EXACT);
    let mut worst = 0.0f64;
    for bp in offsets(t1) {
        let mut s = s0.clone();
        s = s.to_builder().breakpoint(bp).build();
        let traj = s.simulate(&p).unwrap();
        assert_eq!(traj.events.len(), n_events, "bp {bp}: event count");
        // structural: measured 0 (2026-12-02); 1e-14 is round-off
        assert_within(
            &format!("bp {bp}: first impact"),
            (traj.events[0].t - t1).abs(),
            1e-14,
        );
        for ((m, v, g), (_, v0, g0)) in gradients_by(&s, &p, &EXACT).iter().zip(&reference) {
            // measured 1e-14 (2026-12-02; was 1e-9), margin 29×
            assert_within(
                &format!("bp {bp}: {} value", m.name()),
                (v - v0).abs() / v0.abs(),
                3e-13,
            );
            // per component (was 1e-8 as relative L2): measured 1.1e-13 (2026-12-02),
            // margin 27×
            let r = assert_close(
                &format!("bp {bp}: {} gradient", m.name()),
                g,
                g0,
                3e-12,
                1e-3,
            );
            worst = worst.max(r);
        }
    }
    println!("ball: largest gradient change with a breakpoint at the impact: {worst:e}");
}

/// The same with a control-grid node at the impact: the drag-free thrust ball with a
/// piecewise-linear control (continuous, so the jump is continuous across the coincidence)
/// that is constant before the first impact (so the impact time is known in closed form).
/// The gradient with respect to (p, c) is the same with the node just before, at and just
/// after the impact (compared with the mean of nodes 1e-9 before and after).
#[test]
fn event_within_an_ulp_of_a_control_node() {
    let sys = ThrustBall;
    let (g, y0, v0) = (9.81, 1.0, 0.5);
    let c = [0.5, 0.5, -1.0];
    let t1 = first_impact(g - c[0], y0, v0);
    let run = |node: f64| {
        let grid = ControlGrid {
            basis: Basis::PiecewiseLinear,
            t0: 0.0,
            t1: 2.0 * node,
            intervals: 2,
            channels: 1,
        };
        assert_eq!(grid.nodes()[1], node);
        let obj = Objective::new(
            "psi",
            vec![
                Term::Effort { weight: 0.5 },
                Term::squared(Quantity::Integral { output: 0 }, 0.0, 1.0),
                Term::squared(Quantity::Terminal { output: 1 }, 0.0, 0.1),
            ],
        );
        let mut s = Setup::new(&sys, 0.0, 2.0 * node, Some(grid), vec![obj]);
        tight(&mut s, 1e-10);
        let mut theta = vec![g, 0.8, 0.0, y0, v0];
        theta.extend_from_slice(&c);
        let traj = s.simulate(&theta).unwrap();
        // structural: measured 0 (2026-12-02); 1e-14 is round-off
        assert_within(
            &format!("node {node}: first impact"),
            (traj.events[0].t - t1).abs(),
            1e-14,
        );
        (traj.events.len(), gradients_by(&s, &theta, &EXACT))
    };
    let (n_before, before) = run(t1 - 1e-9);
    let (n_after, after) = run(t1 + 1e-9);
    assert_eq!(n_before, n_after);
    let mean: Vec<Vec<f64>> = before
        .iter()
        .zip(&after)
        .map(|(a, b)| a.2.iter().zip(&b.2).map(|(x, y)| 0.5 * (x + y)).collect())
        .collect();
    // the node 1e-9 before vs after (the gradient moves with the node): per component,
    // measured 5.7e-8 (2026-12-02; was 1e-7 as relative L2), margin 18×
    assert_close(
        "node before vs after",
        &before[0].2,
        &after[0].2,
        1e-6,
        1e-3,
    );
    let mut worst = 0.0f64;
    for node in [
        ulps(t1, -1),
        t1,
        ulps(t1, 1),
        t1 - 1e-15,
        t1 + 1e-15,
        t1 - 1e-13,
        t1 + 1e-13,
    ] {
        let (n, grads) = run(node);
        assert_eq!(n, n_before, "node {node}: event count");
        for ((m, _, gr), gm) in grads.iter().zip(&mean) {
            // per component (was 1e-8 as relative L2): measured 2.8e-10 (2026-12-02),
            // margin 21×
            let r = assert_close(&format!("node {node}: {}", m.name()), gr, gm, 6e-9, 1e-3);
            worst = worst.max(r);
        }
    }
    println!("thrust ball: largest gradient change with a node at the impact: {worst:e}");
}

/// Two guards change sign inside the same accepted step: the earlier crossing is the event,
/// whichever guard is declared first. (The premise — both crossings fall in one step — is
/// checked on the run with the guards switched off: its steps up to the event are the
/// steps of the watched run.)
#[test]
fn earlier_of_two_crossings_in_one_step_wins() {
    let off = TwoGuards {
        early_first: false,
        watch: false,
    };
    let s = Setup::new(&off, 0.0, 1.0, None, no_objectives());
    let traj = s.simulate(&[]).unwrap();
    let step = traj.segments[0]
        .steps
        .iter()
        .find(|st| st.t0 < 0.5 && st.t1() >= 0.5)
        .expect("a step across 0.5");
    // not a tolerance: the premise of the test (crossings at 0.5 and 0.6 in one step)
    assert!(
        step.t1() > 0.6,
        "premise: the step [{}, {}] must contain both crossings",
        step.t0,
        step.t1()
    );
    for early_first in [false, true] {
        let sys = TwoGuards {
            early_first,
            watch: true,
        };
        let s = Setup::new(&sys, 0.0, 1.0, None, no_objectives());
        let traj = s.simulate(&[]).unwrap();
        assert_eq!(traj.events.len(), 1);
        let e = &traj.events[0];
        assert_eq!(
            e.guard,
            sys.early_index(),
            "early_first = {early_first}: the later crossing was taken"
        );
        // measured 1.1e-16 (2026-12-02; was 1e-14), margin 27×
        assert_within(
            &format!("early_first = {early_first}: event time"),
            (e.t - 0.5).abs(),
            3e-15,
        );
        // measured 2.2e-16 (2026-12-02; was 1e-14), margin 23×
        assert_within(
            &format!("early_first = {early_first}: final state"),
            (traj.y_final[0] - 0.0).abs(),
            5e-15,
        );
    }
}

/// A guard that is zero at t0 does not fire there: the ball starting on the ground moving
/// up has exactly the oracle's impacts. A reset that leaves the state on the guard does not
/// fire again: the ball (y⁺ = y⁻ ≈ 0) with its guard watched in both directions has the
/// oracle's impacts and no more; the ping-pong (one reset puts the guard at exactly 0, the
/// other keeps its residual) has exactly its 4 events.
#[test]
fn no_spurious_events_at_t0_or_after_a_reset() {
    // guard zero at t0
    let p = [9.81, 0.8, 0.1, 0.0, 3.0];
    let (imp, ..) = ball_oracle::run(&p, 2.0);
    let mut s = Setup::new(&BouncingBall, 0.0, 2.0, None, no_objectives());
    tight(&mut s, 1e-10);
    let traj = s.simulate(&p).unwrap();
    assert_eq!(traj.events.len(), imp.len(), "ball from the ground");
    // not a tolerance: no event at t0 (the first impact is near 0.9 s)
    assert!(
        traj.events[0].t > 0.5,
        "no event at t0: {}",
        traj.events[0].t
    );
    for (e, t) in traj.events.iter().zip(&imp) {
        // measured 1.1e-12 (2026-12-02; was 1e-8), margin 27×
        assert_within(
            "impact vs oracle (ball from the ground)",
            (e.t - t).abs(),
            3e-11,
        );
    }
    // guard zero at t0, the flow moving to the side it crosses to (sin t against 0 with a
    // rising guard, and with `Either`): no event at t0, and not "sticking" either
    let pi = std::f64::consts::PI;
    for (dir, first, count) in [(Direction::Rising, 2.0 * pi, 3), (Direction::Either, pi, 6)] {
        let sys = Sine { dir, level: 0.0 };
        let mut s = Setup::new(&sys, 0.0, 20.0, None, no_objectives());
        tight(&mut s, 1e-10);
        let traj = s.simulate(&[]).unwrap();
        let got: Vec<f64> = traj.events.iter().map(|e| e.t).collect();
        assert_eq!(got.len(), count, "{dir:?} from zero: events at {got:?}");
        // measured 2.7e-11 (2026-12-02), margin 37×
        assert_within(
            "first event (watched both ways)",
            (got[0] - first).abs(),
            1e-9,
        );
    }
    // both directions watched, default ball
    let p = BouncingBall::default_params();
    let (imp, ..) = ball_oracle::run(&p, 3.0);
    let mut s = Setup::new(&EitherBall, 0.0, 3.0, None, no_objectives());
    tight(&mut s, 1e-10);
    let traj = s.simulate(&p).unwrap();
    assert_eq!(traj.events.len(), imp.len(), "Either-direction ball");
    for (e, t) in traj.events.iter().zip(&imp) {
        // measured 2e-12 (2026-12-02; was 1e-8), margin 25×
        assert_within(
            "impact vs oracle (guard watched both ways)",
            (e.t - t).abs(),
            5e-11,
        );
    }
    // ping-pong
    let s = Setup::new(&PingPong, 0.0, 8.5, None, no_objectives());
    let traj = s.simulate(&[]).unwrap();
    let got: Vec<(usize, f64)> = traj.events.iter().map(|e| (e.guard, e.t)).collect();
    assert_eq!(traj.events.len(), 4, "events {got:?}");
    for (j, e) in traj.events.iter().enumerate() {
        assert_eq!(e.guard, j % 2);
        // measured 1.8e-15 (2026-12-02; was 1e-12), margin 28×
        assert_within(
            &format!("ping-pong event {j}"),
            (e.t - (2 * j + 1) as f64).abs(),
            5e-14,
        );
    }
    // measured 2e-15 (2026-12-02; was 1e-12), margin 25×
    assert_within(
        "ping-pong final state",
        (traj.y_final[0] - 0.5).abs(),
        5e-14,
    );
}

/// The restitution e appears only in the reset: dψ/de ≠ 0 comes through R_p alone, and
/// matches central differences (a tool that ignores R_p reports 0).
#[test]
fn reset_only_parameter_sensitivity() {
    let sys = BouncingBall;
    let p = BouncingBall::default_params();
    let mut s = Setup::new(&sys, 0.0, 3.0, None, vec![ball_objective()]);
    tight(&mut s, 1e-10);
    // premise: e is absent from the flow
    let fj = hybridopt::model::flow_jacobian(&sys, 2, 0, 0.3, &[0.5, -1.0], &[], &p).unwrap();
    assert_eq!(fj.p.column(1).amax(), 0.0);
    let res = gradients_by(&s, &p, &ALL);
    let fd = res[3].2[1];
    println!("dψ/de: fd {fd:e}");
    // not a tolerance: the witness is not a near-zero derivative
    assert!(fd.abs() > 0.05, "dψ/de = {fd} is not a useful witness");
    for (m, _, g) in &res[..3] {
        println!("dψ/de: {} {:e}", m.name(), g[1]);
        // measured 3.9e-11 (2026-12-02; was 1e-6), margin 26×
        assert_within(
            &format!("dψ/de by {} vs fd", m.name()),
            ((g[1] - fd).abs()) / (fd.abs()),
            1e-9,
        );
    }
}

/// Direction filtering on x = sin t against the level 1/2 over [0, 20]: a rising guard
/// fires only at π/6 + 2πk (4 times), a falling one only at 5π/6 + 2πk (3 times), `Either`
/// at all 7.
#[test]
fn direction_filtering() {
    let pi = std::f64::consts::PI;
    let rising: Vec<f64> = (0..4).map(|k| pi / 6.0 + 2.0 * pi * k as f64).collect();
    let falling: Vec<f64> = (0..3)
        .map(|k| 5.0 * pi / 6.0 + 2.0 * pi * k as f64)
        .collect();
    let mut both: Vec<f64> = rising.iter().chain(&falling).copied().collect();
    both.sort_by(|a, b| a.partial_cmp(b).unwrap());
    for (dir, expect) in [
        (Direction::Rising, rising),
        (Direction::Falling, falling),
        (Direction::Either, both),
    ] {
        let sys = Sine { dir, level: 0.5 };
        let mut s = Setup::new(&sys, 0.0, 20.0, None, no_objectives());
        tight(&mut s, 1e-10);
        let traj = s.simulate(&[]).unwrap();
        let got: Vec<f64> = traj.events.iter().map(|e| e.t).collect();
        assert_eq!(got.len(), expect.len(), "{dir:?}: events at {got:?}");
        for (a, b) in got.iter().zip(&expect) {
            // measured 5e-11 (2026-12-02), margin 20×
            assert_within(&format!("{dir:?}: event time"), (a - b).abs(), 1e-9);
        }
    }
}

/// A crossing with zero rate (x = (t − 1)³ through 0 at t = 1) is a grazing event: a typed
/// error naming the time and the guard, for the simulation and for both gradient methods.
#[test]
fn grazing_crossing_is_an_error() {
    for dir in [Direction::Rising, Direction::Either] {
        let sys = Cubic { dir };
        let obj = Objective::new(
            "x(2)",
            vec![Term::plain(Quantity::Terminal { output: 0 }, 1.0)],
        );
        let s = Setup::new(&sys, 0.0, 2.0, None, vec![obj]);
        let check = |r: Result<(), Error>, what: &str| match r {
            Err(Error::Grazing { t, guard, rate, .. }) => {
                println!("{dir:?} {what}: grazing at t = {t}, rate {rate:e}");
                // measured 1.3e-6 (2026-12-02; was 1e-3), margin 24×
                assert_within(
                    &format!("{dir:?} {what}: grazing time"),
                    (t - 1.0).abs(),
                    3e-5,
                );
                assert_eq!(guard, "flat");
            }
            Err(e) => panic!("{dir:?} {what}: expected a grazing error, got {e}"),
            Ok(()) => panic!("{dir:?} {what}: the grazing crossing was accepted"),
        };
        check(s.simulate(&[]).map(|_| ()), "simulate");
        check(evaluate(&s, &[], Direct).map(|_| ()), "direct");
        check(evaluate(&s, &[], Adjoint).map(|_| ()), "adjoint");
    }
}

/// Zeno: the drag-free ball with e = 0.5 dropped from 100 m accumulates impacts at
/// t = 3 t1 ≈ 13.5 s. With max_events = 20 the run stops with `Error::Zeno` at the 21st
/// impact; with the default budget it ends in some typed error (never a hang, a NaN or an
/// `Ok` with garbage). (From y0 = 1 m the 20th rebound's apex, 0.25²⁰ m ≈ 1e-12 m, is
/// below the guard's zero tolerance, and the engine reports `Sticking` before the 21st
/// impact: hence the taller drop.)
#[test]
fn zeno_ball_is_a_typed_error() {
    let sys = BouncingBall;
    let p = [9.81, 0.5, 0.0, 100.0, 0.0];
    let t_zeno = 3.0 * first_impact(p[0], p[3], p[4]);
    let mut s = Setup::new(&sys, 0.0, 60.0, None, vec![ball_objective()]);
    let mut events = s.events();
    events.max_events = 20;
    s = s.to_builder().events(events).build();
    for what in ["simulate", "direct", "adjoint"] {
        let r = match what {
            "simulate" => s.simulate(&p).map(|_| ()),
            "direct" => evaluate(&s, &p, Direct).map(|_| ()),
            _ => evaluate(&s, &p, Adjoint).map(|_| ()),
        };
        match r {
            Err(Error::Zeno {
                t,
                max_events,
                guard,
                ..
            }) => {
                assert_eq!(max_events, 20);
                assert_eq!(guard, "ground");
                // not an accuracy tolerance: the 20th rebound falls in the last 1% before
                // the accumulation time (a geometric series with ratio e = 0.5)
                assert!(
                    t > 0.99 * t_zeno && t < t_zeno,
                    "{what}: Zeno reported at t = {t}"
                );
            }
            Err(e) => panic!("{what}: expected Zeno, got {e}"),
            Ok(()) => panic!("{what}: a Zeno run returned Ok"),
        }
    }
    for y0 in [1.0, 100.0] {
        let p = [9.81, 0.5, 0.0, y0, 0.0];
        let s = Setup::new(&sys, 0.0, 60.0, None, vec![ball_objective()]);
        for what in ["simulate", "direct", "adjoint"] {
            let r = match what {
                "simulate" => s.simulate(&p).map(|_| ()),
                "direct" => evaluate(&s, &p, Direct).map(|_| ()),
                _ => evaluate(&s, &p, Adjoint).map(|_| ()),
            };
            match r {
                Err(
                    e @ (Error::Zeno { .. }
                    | Error::Sticking { .. }
                    | Error::Grazing { .. }
                    | Error::StepSizeUnderflow { .. }),
                ) => {
                    println!("y0 = {y0}, default max_events, {what}: {e}");
                }
                Err(e) => panic!("{what}: unexpected error kind {e}"),
                Ok(()) => panic!("{what}: a Zeno run returned Ok"),
            }
        }
    }
}

/// Non-finite values give `Error::NonFinite` naming t and the mode: a flow that turns NaN
/// after t = 0.5 (every step across 0.5 is rejected until the step size runs out at
/// t ≈ 0.5: reported as the non-finite right-hand side it is, not as a bare step-size
/// underflow), a reset that returns NaN, a NaN start.
#[test]
fn non_finite_values_are_typed_errors() {
    let run = |p: Poison| Setup::new(&Poisoned(p), 0.0, 1.0, None, no_objectives()).simulate(&[]);
    match run(Poison::FlowAfterHalf) {
        Err(Error::NonFinite { t, mode, what }) => {
            // measured 3.5e-15 (2026-12-02; was 1e-6), margin 29×
            assert_within("NaN flow reported at t = 0.5", (t - 0.5).abs(), 1e-13);
            assert_eq!(mode, "after");
            assert!(what.contains("right-hand side"), "what = {what}");
        }
        Err(e) => panic!("NaN flow: unexpected error {e}"),
        Ok(_) => panic!("NaN flow: Ok"),
    }
    match run(Poison::Reset) {
        Err(Error::NonFinite { t, mode, what }) => {
            // measured 5.5e-17 (2026-12-02; was 1e-12), margin 36×
            assert_within("NaN reset reported at t = 0.25", (t - 0.25).abs(), 2e-15);
            assert_eq!(mode, "before");
            assert!(what.contains("quarter"), "what = {what}");
        }
        Err(e) => panic!("NaN reset: unexpected error {e}"),
        Ok(_) => panic!("NaN reset: Ok"),
    }
    match run(Poison::Start) {
        Err(Error::NonFinite { t, mode, .. }) => {
            assert_eq!(t, 0.0);
            assert_eq!(mode, "before");
        }
        Err(e) => panic!("NaN start: unexpected error {e}"),
        Ok(_) => panic!("NaN start: Ok"),
    }
}

/// Event location to near machine precision: ẋ = 1 against `x − q` at several q; the
/// drag-free ball's first impact against (v0 + √(v0² + 2 g y0))/g at rtol = 1e-12.
#[test]
fn event_location_accuracy() {
    let sys = Ramp { terminal: true };
    for q in [1e-3, 0.1, 0.7, 3.3, 12.5, 250.0] {
        let s = Setup::new(&sys, 0.0, 1e3, None, no_objectives());
        let traj = s.simulate(&[q]).unwrap();
        let err = (traj.events[0].t - q).abs();
        // measured 2.3e-16 (2026-12-02; was 1e-12), margin 22×
        assert_within(&format!("q = {q}: |t_e − q|"), (err) / (q.max(1.0)), 5e-15);
    }
    let mut worst = 0.0f64;
    for (g, y0, v0) in [
        (9.81, 1.0, 0.0),
        (9.81, 2.5, 3.0),
        (1.62, 0.3, -0.4),
        (9.81, 1e-3, 10.0),
    ] {
        let mut s = Setup::new(&BouncingBall, 0.0, 50.0, None, no_objectives());
        tight(&mut s, 1e-12);
        let mut events = s.events();
        events.max_events = 1;
        s = s.to_builder().events(events).build();
        let t1 = first_impact(g, y0, v0);
        // a horizon just past the first impact
        s = s.to_builder().horizon(s.t0(), t1 * 1.5).build();
        let traj = s.simulate(&[g, 0.8, 0.0, y0, v0]).unwrap();
        let r = (traj.events[0].t - t1).abs() / t1;
        worst = worst.max(r);
        // measured 4.4e-16 (2026-12-02; was 1e-12), margin 23×
        assert_within(
            &format!("(g, y0, v0) = ({g}, {y0}, {v0}): first impact"),
            r,
            1e-14,
        );
    }
    println!("first impact: worst relative error {worst:e}");
}

/// Snapshot of the integrator's exact counts on the reference problems. The counts pin the
/// step-size controller, the starting step, the event location and the restart after
/// events: any change to the integrator or the event handling changes them. They are
/// pinned exactly on purpose (measured 2026-12-02): when the integrator changes, look at
/// what changed and why, then update these numbers deliberately in the same commit.
///
/// - ball with drag, params (9.81, 0.8, 0.1, 1.0, 0.0), [0, 3], rtol = atol = 1e-10,
///   DOPRI5: 7 impacts (the oracle's count);
/// - the shipped five-bar seed problem (`problems/five_bar_seed.toml`) at its initial θ;
/// - the shipped thrust-control problem (`problems/thrust_control.toml`) at its initial θ.
#[test]
fn ball_step_and_event_counts_snapshot() {
    let sys = BouncingBall;
    let p = BouncingBall::default_params();
    let mut s = Setup::new(&sys, 0.0, 3.0, None, vec![ball_objective()]);
    tight(&mut s, 1e-10);
    let traj = s.simulate(&p).unwrap();
    let st = traj.stats;
    println!("ball snapshot: {st:?}");
    assert_eq!(traj.events.len(), 7);
    assert_eq!(ball_oracle::run(&p, 3.0).0.len(), 7);
    // (steps, rejected, rhs_evals, events)
    let pinned = BALL;
    assert_eq!(
        (st.steps, st.rejected, st.rhs_evals, st.events),
        pinned,
        "ball: (steps, rejected, rhs_evals, events) changed"
    );
    for (name, want) in [("five_bar_seed", FIVE_BAR), ("thrust_control", THRUST)] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("problems")
            .join(format!("{name}.toml"));
        let prob = hybridopt::problem::Problem::load(&path).unwrap();
        let s = prob.setup().unwrap();
        let traj = s.simulate(&prob.theta_values()).unwrap();
        let st = traj.stats;
        println!("{name} snapshot: {st:?}");
        assert_eq!(traj.events.len(), st.events);
        assert_eq!(
            (st.steps, st.rejected, st.rhs_evals, st.events),
            want,
            "{name}: (steps, rejected, rhs_evals, events) changed"
        );
    }
}

/// (steps, rejected, rhs_evals, events), measured 2026-12-02.
const BALL: (usize, usize, usize, usize) = (144, 2, 968, 7);
const FIVE_BAR: (usize, usize, usize, usize) = (1016, 1, 6220, 9);
const THRUST: (usize, usize, usize, usize) = (97, 0, 706, 5);
