//! An independent reference for the five-bar mechanism (issue 14, item 5).
//!
//! The engine integrates the five-bar in natural coordinates (six point coordinates, four
//! distance constraints, index-1 with Baumgarte stabilization; `src/multibody/`). This file
//! integrates the same physical system in **minimal coordinates** `q = (x2, y2)` (point 2,
//! reference-models.md §2: "degrees of freedom (x2, y2); dependent: points 1 and 3"), with
//! the dependent points P1 and P3 solved in closed form from the loop closure
//! (circle–circle intersections), the equations of motion derived by Lagrange in `q`, a
//! fixed-step classical RK4 written here, event location on the step map itself, and the
//! impact reset `(ẋ2, ẏ2)⁺ = (ẋ2, −ẏ2)⁻` — in minimal coordinates that *is* the kinematic
//! reversal, so the dependent velocities follow without `Φ_q v = 0`. Nothing here calls
//! the library's model, multibody or integrate code; only the engine's results under test
//! come from the public API (`Problem`, `Setup::simulate`, `sensitivity`).
//!
//! Model facts copied from reference-models.md §2 (not read at run time): pivots
//! A = (−0.5, 0), B = (0.5, 0); initial points P1 = (−1.5, −1), P2 = (0, −2), P3 = (1.5, −1)
//! at rest; uniform slender bars A–P1, P1–P2, P2–P3, P3–B (masses m1..m4 = 1, 1.5, 1.5, 1)
//! with the initial lengths √2, √3.25, √3.25, √2; springs k1 (B–P1, L1 = 2.24) and
//! k2 (B–P2, L2 = 2.06), k1 = k2 = 100 N/m; gravity 9.81 m/s² along −y; event
//! `y2 + 2.35 = 0` falling; t ∈ [0, 5] s. Parameter order as the engine's five_bar:
//! `(k1, k2, L1, L2, m1, m2, m3, m4)`.
//!
//! Accuracy of the reference (measured by the tests themselves): impact times to ~1e-14 s
//! (RK4 at H = 2e-4 and H/2 differ by ≤ 1.6e-13; the error ∝ H⁴); the gradients (central
//! differences, Richardson-combined) to ~1e-9 relative per component (2H vs H and the
//! FD-step check). Round-off, not truncation, limits both, which is why the steps are
//! anchored at each flight's start and the state update is Kahan-compensated.
//!
//! What the engine (rtol = atol = 1e-10) is held to: impact times to 2e-12 … 3.2e-10 s;
//! direct and adjoint event-time gradients to ≤ 1.3e-9 relative; the gradient of
//! ψ = ∫₀⁵ ẏ2 dt (= y2(5) − y2(0)) to 3.1e-8 (direct) and 8.5e-8 (adjoint) relative — the
//! engine's integration error, shrinking linearly with its tolerance (9.7e-9 at 1e-11,
//! 2.0e-9 at 1e-12).

use hybridopt::problem::Problem;
use hybridopt::sensitivity::{evaluate, GradientMethod};
use std::path::Path;
use std::time::Instant;

type V2 = [f64; 2];
/// A 2×2 matrix, row-major: `m[row][col]`.
type M2 = [[f64; 2]; 2];

/// Ground pivot A (reference-models §2).
const PIVOT_A: V2 = [-0.5, 0.0];
/// Ground pivot B (reference-models §2).
const PIVOT_B: V2 = [0.5, 0.0];
/// P1, P2, P3 at t = 0 (reference-models §2).
const P0: [V2; 3] = [[-1.5, -1.0], [0.0, -2.0], [1.5, -1.0]];
/// Gravity (m/s², along −y; reference-models §2).
const GRAVITY: f64 = 9.81;
/// Ground height of the event `y2 − GROUND = 0` (reference-models §2).
const GROUND: f64 = -2.35;
/// Horizon (s).
const T_END: f64 = 5.0;
/// Reference parameters `(k1, k2, L1, L2, m1, m2, m3, m4)` (reference-models §2).
const PARAMS: [f64; 8] = [100.0, 100.0, 2.24, 2.06, 1.0, 1.5, 1.5, 1.0];
/// The engine's parameter names, in the same order (for messages).
const NAMES: [&str; 8] = ["k1", "k2", "L1", "L2", "m1", "m2", "m3", "m4"];

/// `a − b`.
fn sub(a: V2, b: V2) -> V2 {
    [a[0] - b[0], a[1] - b[1]]
}
/// `a · b`.
fn dot(a: V2, b: V2) -> f64 {
    a[0] * b[0] + a[1] * b[1]
}
/// `|a| = √(a · a)`.
fn norm(a: V2) -> f64 {
    dot(a, a).sqrt()
}
/// `m · v`.
fn mul(m: M2, v: V2) -> V2 {
    [dot(m[0], v), dot(m[1], v)]
}
/// `mᵀ · v`.
fn mul_t(m: M2, v: V2) -> V2 {
    [
        m[0][0] * v[0] + m[1][0] * v[1],
        m[0][1] * v[0] + m[1][1] * v[1],
    ]
}
/// `aᵀ b`: `(aᵀ b)_kl = Σ_r a_rk b_rl`.
fn tmul(a: M2, b: M2) -> M2 {
    std::array::from_fn(|k| std::array::from_fn(|l| a[0][k] * b[0][l] + a[1][k] * b[1][l]))
}
/// `m⁻¹ r` by Cramer's rule.
fn solve2(m: M2, r: V2) -> V2 {
    let det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
    assert!(det.abs() > 1e-12, "singular 2×2 system (det {det:e})");
    [
        (r[0] * m[1][1] - m[0][1] * r[1]) / det,
        (m[0][0] * r[1] - m[1][0] * r[0]) / det,
    ]
}
/// The counter-clockwise perpendicular `(−d_y, d_x)`.
fn perp(d: V2) -> V2 {
    [-d[1], d[0]]
}

/// Loop closure of one side (reference-models §2, the constraints
/// `|P − C|² = r_c²`, `|P − P2|² = r_2²` with a fixed pivot C):
/// the circle–circle intersection
/// `P = C + (a/d) e + σ (h/d) e⊥`, `e = P2 − C`, `d = |e|`, `a = (r_c² − r_2² + d²)/(2d)`,
/// `h = √(r_c² − a²)`, branch `σ = ±1` (continuous with the initial configuration).
fn closure(c: V2, r_c: f64, p2: V2, r_2: f64, sigma: f64) -> V2 {
    let e = sub(p2, c);
    let d = norm(e);
    let a = (r_c * r_c - r_2 * r_2 + d * d) / (2.0 * d);
    let h2 = r_c * r_c - a * a;
    assert!(h2 > 0.0, "loop closure singular (h² = {h2:e})");
    let (s, t) = (a / d, sigma * h2.sqrt() / d);
    let n = perp(e);
    [c[0] + s * e[0] + t * n[0], c[1] + s * e[1] + t * n[1]]
}

/// Velocity map and quadratic-velocity term of a dependent point P on a fixed pivot C,
/// by implicit differentiation of the closure `(P − C)·(P − C) = r_c²`,
/// `(P − P2)·(P − P2) = r_2²` (theory §5: `Φ_q v = 0`, `Φ_q a = −Φ̇_q v`, here solved for the
/// dependent point): with `G = [(P − C)ᵀ; (P − P2)ᵀ]`,
/// `G v = (0, (P − P2)·v2)` ⇒ `v = J v2`, `J = G⁻¹ e₂ (P − P2)ᵀ`, and
/// `G a = (−|v|², (P − P2)·a2 − |v − v2|²)` ⇒ `a = J a2 + c`, `c = G⁻¹ (−|v|², −|v − v2|²)`
/// (c is `J̇ q̇`). Returns `(J, v, c)`.
fn dependent_velocity(c: V2, p: V2, p2: V2, v2: V2) -> (M2, V2, V2) {
    let g: M2 = [sub(p, c), sub(p, p2)];
    let w = solve2(g, [0.0, 1.0]);
    let r = sub(p, p2);
    let jac: M2 = [[w[0] * r[0], w[0] * r[1]], [w[1] * r[0], w[1] * r[1]]];
    let v = mul(jac, v2);
    let dv = sub(v, v2);
    let cq = solve2(g, [-dot(v, v), -dot(dv, dv)]);
    (jac, v, cq)
}

/// The five-bar in minimal coordinates `q = (x2, y2)`.
#[derive(Clone, Copy)]
struct MinimalFiveBar {
    /// `(k1, k2, L1, L2, m1, m2, m3, m4)`.
    p: [f64; 8],
    /// Bar lengths |A–P1|, |P1–P2|, |P2–P3|, |P3–B| (from the initial points).
    len: [f64; 4],
    /// Closure branches of P1 and P3.
    sigma: [f64; 2],
}

/// Positions, velocities, velocity maps `J_i = ∂P_i/∂q` and `c_i = J̇_i q̇` of P1, P2, P3.
struct Kinematics {
    pos: [V2; 3],
    vel: [V2; 3],
    jac: [M2; 3],
    quad: [V2; 3],
}

impl MinimalFiveBar {
    /// The reference-models §2 mechanism with parameters `p`; the closure branches are those
    /// of the initial points (σ = sign of `(P − C)·(P2 − C)⊥` at t = 0).
    fn new(p: [f64; 8]) -> Self {
        let [p1, p2, p3] = P0;
        let len = [
            norm(sub(p1, PIVOT_A)),
            norm(sub(p2, p1)),
            norm(sub(p3, p2)),
            norm(sub(PIVOT_B, p3)),
        ];
        let sigma = [
            dot(sub(p1, PIVOT_A), perp(sub(p2, PIVOT_A))).signum(),
            dot(sub(p3, PIVOT_B), perp(sub(p2, PIVOT_B))).signum(),
        ];
        MinimalFiveBar { p, len, sigma }
    }

    /// The dependent points from the loop closure ([`closure`]) and their velocities
    /// ([`dependent_velocity`]); `J2 = I`, `c2 = 0`.
    fn kinematics(&self, q: V2, qd: V2) -> Kinematics {
        let p1 = closure(PIVOT_A, self.len[0], q, self.len[1], self.sigma[0]);
        let p3 = closure(PIVOT_B, self.len[3], q, self.len[2], self.sigma[1]);
        let (j1, v1, c1) = dependent_velocity(PIVOT_A, p1, q, qd);
        let (j3, v3, c3) = dependent_velocity(PIVOT_B, p3, q, qd);
        Kinematics {
            pos: [p1, q, p3],
            vel: [v1, qd, v3],
            jac: [j1, [[1.0, 0.0], [0.0, 1.0]], j3],
            quad: [c1, [0.0, 0.0], c3],
        }
    }

    /// Natural-coordinate mass coefficients `μ_ij` (block `μ_ij I₂` between points i and j):
    /// a uniform bar of mass m between moving points i, j has kinetic energy
    /// `(m/6)(|v_i|² + v_i·v_j + |v_j|²)`, i.e. blocks `(m/3) I` and `(m/6) I`; with one end
    /// fixed `(m/6)|v|²`, i.e. `(m/3) I` (reference-models §2).
    fn mass_coefficients(&self) -> [[f64; 3]; 3] {
        let [m1, m2, m3, m4] = [self.p[4], self.p[5], self.p[6], self.p[7]];
        [
            [(m1 + m2) / 3.0, m2 / 6.0, 0.0],
            [m2 / 6.0, (m2 + m3) / 3.0, m3 / 6.0],
            [0.0, m3 / 6.0, (m3 + m4) / 3.0],
        ]
    }

    /// Applied forces on P1, P2, P3 (reference-models §2): gravity `−m g/2` (y) at each end
    /// of each bar; spring `−k (ℓ − L0)(r_a − r_b)/ℓ` on a, for k1 (P1–B, L1) and k2 (P2–B, L2).
    fn forces(&self, pos: &[V2; 3]) -> [V2; 3] {
        let [k1, k2, l1, l2, m1, m2, m3, m4] = self.p;
        let g = GRAVITY;
        let spring = |a: V2, k: f64, l0: f64| {
            let d = sub(a, PIVOT_B);
            let l = norm(d);
            let s = -k * (l - l0) / l;
            [s * d[0], s * d[1]]
        };
        let s1 = spring(pos[0], k1, l1);
        let s2 = spring(pos[1], k2, l2);
        [
            [s1[0], s1[1] - g * (m1 + m2) / 2.0],
            [s2[0], s2[1] - g * (m2 + m3) / 2.0],
            [0.0, -g * (m3 + m4) / 2.0],
        ]
    }

    /// Lagrange's equations in minimal coordinates (theory §5 reduced to the independent
    /// coordinates): with point velocities `v_i = J_i q̇` and the constant natural mass
    /// matrix, `T = ½ Σ μ_ij v_i·v_j` gives
    /// `(Σ_ij μ_ij J_iᵀ J_j) q̈ = Σ_i J_iᵀ (F_i − Σ_j μ_ij c_j)`, `c_j = J̇_j q̇`.
    /// State `z = (x2, y2, ẋ2, ẏ2)`; returns `ż`.
    fn rhs(&self, z: [f64; 4]) -> [f64; 4] {
        let k = self.kinematics([z[0], z[1]], [z[2], z[3]]);
        let mu = self.mass_coefficients();
        let f = self.forces(&k.pos);
        let mut mq = [[0.0; 2]; 2];
        let mut rhs = [0.0; 2];
        for (i, mu_i) in mu.iter().enumerate() {
            let mut fi = f[i];
            for (j, &m_ij) in mu_i.iter().enumerate() {
                let jtj = tmul(k.jac[i], k.jac[j]);
                for (row, jtj_row) in mq.iter_mut().zip(jtj) {
                    row[0] += m_ij * jtj_row[0];
                    row[1] += m_ij * jtj_row[1];
                }
                fi[0] -= m_ij * k.quad[j][0];
                fi[1] -= m_ij * k.quad[j][1];
            }
            let g = mul_t(k.jac[i], fi);
            rhs[0] += g[0];
            rhs[1] += g[1];
        }
        let acc = solve2(mq, rhs);
        [z[2], z[3], acc[0], acc[1]]
    }

    /// Energy `T + V`: `T = ½ Σ μ_ij v_i·v_j`, `V = Σ_bars (m g/2)(y_i + y_j) + Σ ½k(ℓ − L0)²`
    /// (reference-models §2; the pivots are at y = 0).
    fn energy(&self, z: [f64; 4]) -> f64 {
        let k = self.kinematics([z[0], z[1]], [z[2], z[3]]);
        let mu = self.mass_coefficients();
        let [k1, k2, l1, l2, m1, m2, m3, m4] = self.p;
        let mut t = 0.0;
        for (mu_i, &v_i) in mu.iter().zip(&k.vel) {
            for (&m_ij, &v_j) in mu_i.iter().zip(&k.vel) {
                t += 0.5 * m_ij * dot(v_i, v_j);
            }
        }
        let y = [k.pos[0][1], k.pos[1][1], k.pos[2][1]];
        let g = GRAVITY;
        let vg = g / 2.0 * (m1 * y[0] + m2 * (y[0] + y[1]) + m3 * (y[1] + y[2]) + m4 * y[2]);
        let s1 = norm(sub(k.pos[0], PIVOT_B)) - l1;
        let s2 = norm(sub(k.pos[1], PIVOT_B)) - l2;
        t + vg + 0.5 * k1 * s1 * s1 + 0.5 * k2 * s2 * s2
    }

    /// The increment of one classical RK4 step of size `h` (Kutta 1901):
    /// `Δz = h/6 (k1 + 2k2 + 2k3 + k4)`, `k1 = f(z)`, `k2 = f(z + h/2 k1)`,
    /// `k3 = f(z + h/2 k2)`, `k4 = f(z + h k3)`.
    fn rk4_increment(&self, z: [f64; 4], h: f64) -> [f64; 4] {
        let ax = |k: [f64; 4], s: f64| -> [f64; 4] {
            [
                z[0] + s * k[0],
                z[1] + s * k[1],
                z[2] + s * k[2],
                z[3] + s * k[3],
            ]
        };
        let k1 = self.rhs(z);
        let k2 = self.rhs(ax(k1, h / 2.0));
        let k3 = self.rhs(ax(k2, h / 2.0));
        let k4 = self.rhs(ax(k3, h));
        std::array::from_fn(|i| h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]))
    }

    /// One RK4 step `z + Δz` ([`Self::rk4_increment`]).
    fn rk4(&self, z: [f64; 4], h: f64) -> [f64; 4] {
        let d = self.rk4_increment(z, h);
        std::array::from_fn(|i| z[i] + d[i])
    }

    /// The hybrid run on [0, T_END] with RK4 steps of size `h`, anchored at the start of each
    /// flight (`t = t_flight + n h`, no accumulated sum of steps) and with Kahan-compensated
    /// state updates, so that round-off does not accumulate over the ~10⁴ steps (it would
    /// otherwise dominate central differences of the event times).
    ///
    /// A falling crossing of `g = y2 − GROUND` within a step (g > 0 at its start, ≤ 0 at its
    /// end) is located on the step map itself: `s* ∈ (0, h]` with `g(RK4(z, s*)) = 0` by the
    /// Illinois method to machine precision, so the discrete solution (and with it every
    /// event time) is a smooth function of the parameters. Reset (reference-models §2, in
    /// minimal coordinates): `(ẋ2, ẏ2)⁺ = (ẋ2, −ẏ2)⁻`; the next flight starts at the event.
    fn simulate(&self, h: f64) -> Run {
        let guard = |z: [f64; 4]| z[1] - GROUND;
        let mut z = [P0[1][0], P0[1][1], 0.0, 0.0];
        let mut comp = [0.0; 4];
        let (mut t_flight, mut n) = (0.0, 0u32);
        let mut run = Run {
            events: Vec::new(),
            y2_range: [z[1], z[1]],
            z_end: z,
            energy_drift: 0.0,
        };
        let mut e_flight = self.energy(z);
        loop {
            let t = t_flight + f64::from(n) * h;
            if t >= T_END {
                break;
            }
            let step = h.min(T_END - t);
            let dz = self.rk4_increment(z, step);
            let mut zn = z;
            let mut cn = comp;
            for i in 0..4 {
                let y = dz[i] - comp[i];
                zn[i] = z[i] + y;
                cn[i] = (zn[i] - z[i]) - y;
            }
            let (g0, g1) = (guard(z), guard(zn));
            if g0 > 0.0 && g1 <= 0.0 {
                // Illinois (modified regula falsi) on s ↦ g(RK4(z, s)), bracket [0, step]
                let (mut a, mut ga, mut b, mut gb) = (0.0, g0, step, g1);
                let mut side = 0i8;
                let mut s = b;
                for _ in 0..200 {
                    s = (a * gb - b * ga) / (gb - ga);
                    if !(s > a && s < b) {
                        s = 0.5 * (a + b);
                    }
                    let gs = guard(self.rk4(z, s));
                    if gs == 0.0 || b - a <= 4.0 * f64::EPSILON * (t + b) {
                        break;
                    }
                    if gs > 0.0 {
                        (a, ga) = (s, gs);
                        if side == 1 {
                            gb *= 0.5;
                        }
                        side = 1;
                    } else {
                        (b, gb) = (s, gs);
                        if side == -1 {
                            ga *= 0.5;
                        }
                        side = -1;
                    }
                }
                let mut ze = self.rk4(z, s);
                run.energy_drift = run.energy_drift.max((self.energy(ze) - e_flight).abs());
                run.events.push(t + s);
                ze[3] = -ze[3];
                z = ze;
                comp = [0.0; 4];
                (t_flight, n) = (t + s, 0);
                e_flight = self.energy(z);
            } else {
                (z, comp) = (zn, cn);
                n += 1;
                run.energy_drift = run.energy_drift.max((self.energy(z) - e_flight).abs());
                if step < h {
                    break;
                }
            }
            run.y2_range = [run.y2_range[0].min(z[1]), run.y2_range[1].max(z[1])];
        }
        run.z_end = z;
        run
    }
}

/// What a reference run reports.
#[derive(Debug, Clone)]
struct Run {
    /// Impact times.
    events: Vec<f64>,
    /// min and max of y2 over the step ends and events.
    y2_range: [f64; 2],
    /// `(x2, y2, ẋ2, ẏ2)` at T_END.
    z_end: [f64; 4],
    /// Largest |E − E(segment start)| within a flight (energy is conserved between impacts).
    energy_drift: f64,
}

/// The engine's five-bar exactly as problems/five_bar_seed.toml configures it (index-1,
/// Baumgarte ξ = 1, ω = 10, rtol = atol = 1e-10, the reference-models §2 parameters), with
/// the objectives: the seed cost ψ = ∫₀⁵ ẏ2 dt, the terminal y2(5) (the same gradient through
/// another code path), and the times of impacts 1, 3 and 9.
fn engine_problem() -> Problem {
    let mut text = String::from(
        r#"
name = "five_bar_reference"

[system]
kind = "five_bar"
formulation = "index1"
xi = 1.0
omega = 10.0

[simulation]
t_end = 5.0
rtol = 1e-10
atol = 1e-10

[parameters]
k1 = { value = 100.0 }
k2 = { value = 100.0 }
L1 = { value = 2.24 }
L2 = { value = 2.06 }
m1 = { value = 1.0 }
m2 = { value = 1.5 }
m3 = { value = 1.5 }
m4 = { value = 1.0 }

[[cost]]
objective = "int_vy2"
kind = "integral"
output = "vy2"

[[cost]]
objective = "y2_end"
kind = "terminal"
output = "y2"
"#,
    );
    for occ in EVENT_OBJECTIVES {
        text.push_str(&format!(
            "\n[[cost]]\nobjective = \"t{occ}\"\nkind = \"event_time\"\nguard = \"ground\"\noccurrence = {occ}\n"
        ));
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("five_bar_reference.toml");
    let p = Problem::parse(&text, &path).unwrap();
    assert_eq!(
        p.theta_values(),
        PARAMS.to_vec(),
        "θ = the reference parameters"
    );
    p
}

/// Impacts whose time is an engine objective (adjoint and direct gradients).
const EVENT_OBJECTIVES: [usize; 3] = [1, 3, 9];

/// RK4 step (s) of the reference runs; the convergence checks rerun at H/2 (impact times)
/// and 2H (gradients).
const H: f64 = 2e-4;
/// Relative parameter step of the reference's central differences; the check reruns at
/// [`REL_FD_CHECK`].
const REL_FD: f64 = 3e-5;
const REL_FD_CHECK: f64 = 1e-4;

/// `[a, b, …]` in `{:.p e}` format (for messages).
fn fmt(v: &[f64], p: usize) -> String {
    let s: Vec<String> = v.iter().map(|x| format!("{x:.p$e}")).collect();
    format!("[{}]", s.join(", "))
}

/// Per-component relative difference `|a_j − b_j| / max(|b_j|, 1e-6 max_k |b_k|)` (b the
/// reference; the floor guards a near-zero component, none of which occurs here).
fn rel_components(a: &[f64], b: &[f64]) -> Vec<f64> {
    assert_eq!(a.len(), b.len());
    let big = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() / y.abs().max(1e-6 * big))
        .collect()
}

/// Reference derivatives with respect to the 8 parameters: `(dt_e/dp per impact, dy2(T)/dp)`
/// for each parameter, from central differences of [`MinimalFiveBar::simulate`] (RK4 step
/// `h`) with `δ = rel·p_j` and `2δ`, Richardson-combined: `D = (4 D(δ) − D(2δ))/3`,
/// `D(δ) = (F(p + δ) − F(p − δ))/(2δ)`, error O(δ⁴) plus round-off O(ε/δ).
fn reference_gradients(h: f64, rel: f64) -> Vec<(Vec<f64>, f64)> {
    let cd = |j: usize, dp: f64| {
        let mut pp = PARAMS;
        pp[j] = PARAMS[j] + dp;
        let a = MinimalFiveBar::new(pp).simulate(h);
        pp[j] = PARAMS[j] - dp;
        let b = MinimalFiveBar::new(pp).simulate(h);
        assert_eq!(a.events.len(), 9, "perturbed run of {}", NAMES[j]);
        assert_eq!(b.events.len(), 9, "perturbed run of {}", NAMES[j]);
        let dt: Vec<f64> = a
            .events
            .iter()
            .zip(&b.events)
            .map(|(x, y)| (x - y) / (2.0 * dp))
            .collect();
        (dt, (a.z_end[1] - b.z_end[1]) / (2.0 * dp))
    };
    (0..8)
        .map(|j| {
            let dp = rel * PARAMS[j];
            let (t1, y1) = cd(j, dp);
            let (t2, y2) = cd(j, 2.0 * dp);
            let t = t1
                .iter()
                .zip(&t2)
                .map(|(a, b)| (4.0 * a - b) / 3.0)
                .collect();
            (t, (4.0 * y1 - y2) / 3.0)
        })
        .collect()
}

/// The gradients as rows: 9 rows `dt_e/dp` (one per impact), then `dy2(T)/dp`.
fn rows(g: &[(Vec<f64>, f64)]) -> Vec<Vec<f64>> {
    let mut r: Vec<Vec<f64>> = (0..9).map(|e| g.iter().map(|c| c.0[e]).collect()).collect();
    r.push(g.iter().map(|c| c.1).collect());
    r
}

/// The reference's own consistency, independent of the engine: the closure holds at the
/// solved points and reproduces the initial configuration; the implicit-differentiation
/// velocities `J q̇` and `J̇ q̇` agree with central differences of the closed-form points
/// along `q + s q̇`; the energy is conserved within each flight.
#[test]
fn reference_closure_velocities_and_energy() {
    let m = MinimalFiveBar::new(PARAMS);
    let pts = |q: V2| {
        [
            closure(PIVOT_A, m.len[0], q, m.len[1], m.sigma[0]),
            closure(PIVOT_B, m.len[3], q, m.len[2], m.sigma[1]),
        ]
    };
    // the branch is that of the initial configuration: measured 2.2e-16 (one ulp); 1e-14
    let p_init = pts(P0[1]);
    let dev = [norm(sub(p_init[0], P0[0])), norm(sub(p_init[1], P0[2]))];
    assert!(
        dev[0] <= 1e-14 && dev[1] <= 1e-14,
        "initial P1, P3 off by {dev:?}"
    );

    let q = [0.13, -2.21];
    let qd = [0.7, -1.3];
    let k = m.kinematics(q, qd);
    // closure residuals: measured 4.4e-16; 1e-14
    let res = [
        norm(sub(k.pos[0], PIVOT_A)) - m.len[0],
        norm(sub(k.pos[0], q)) - m.len[1],
        norm(sub(k.pos[2], q)) - m.len[2],
        norm(sub(k.pos[2], PIVOT_B)) - m.len[3],
    ];
    assert!(
        res.iter().all(|r| r.abs() <= 1e-14),
        "closure residuals {res:?}"
    );

    let eps = 1e-4;
    let at = |s: f64| pts([q[0] + s * qd[0], q[1] + s * qd[1]]);
    let (pp, p0, pm) = (at(eps), at(0.0), at(-eps));
    let mut worst = [0.0f64; 2];
    for (n, i) in [(0, 0), (1, 2)] {
        for r in 0..2 {
            let v_fd = (pp[n][r] - pm[n][r]) / (2.0 * eps);
            let a_fd = (pp[n][r] - 2.0 * p0[n][r] + pm[n][r]) / (eps * eps);
            worst[0] = worst[0].max((v_fd - k.vel[i][r]).abs());
            worst[1] = worst[1].max((a_fd - k.quad[i][r]).abs());
        }
    }
    println!(
        "closure velocities: |J q̇ − FD| {:.1e}, |J̇ q̇ − FD| {:.1e} (step 1e-4)",
        worst[0], worst[1]
    );
    // the FD truncation at step 1e-4: measured 2.5e-9 (first) and 3.9e-8 (second
    // difference); 10× margin each
    assert!(worst[0] <= 2.5e-8, "J q̇ vs FD: {:e}", worst[0]);
    assert!(worst[1] <= 4e-7, "J̇ q̇ vs FD: {:e}", worst[1]);

    // energy within flights: a wrong mass matrix, force or J̇q̇ term would not conserve it
    let run = m.simulate(H);
    let e0 = m.energy([P0[1][0], P0[1][1], 0.0, 0.0]);
    println!(
        "energy E(0) = {e0:.6} J, largest drift within a flight {:.1e} J",
        run.energy_drift
    );
    // measured 7.1e-14 J at H = 2e-4 (|E| ≈ 54 J); 10×
    assert!(
        run.energy_drift <= 7e-13,
        "energy drift {:e}",
        run.energy_drift
    );
}

/// The engine's impact times against the minimal-coordinate reference.
#[test]
fn impact_times_match_the_minimal_coordinate_reference() {
    let clock = Instant::now();
    let m = MinimalFiveBar::new(PARAMS);
    let coarse = m.simulate(H);
    let fine = m.simulate(H / 2.0);
    let t_ref = &fine.events;
    println!("reference runs (H, H/2): {:.2?}", clock.elapsed());
    // 9 impacts and y2 ∈ [−2.35, −2.0] by the reference itself (sampled at the step ends and
    // events; y2 starts at −2.0 at rest and touches −2.35 at each impact)
    assert_eq!(
        coarse.events.len(),
        9,
        "reference impacts {:?}",
        coarse.events
    );
    assert_eq!(fine.events.len(), 9, "reference impacts {:?}", fine.events);
    let [lo, hi] = fine.y2_range;
    println!("reference y2 ∈ [{lo}, {hi}]");
    assert!(
        lo >= GROUND - 1e-12 && hi <= -2.0 + 1e-12,
        "y2 range [{lo}, {hi}]"
    );
    // own convergence: RK4 at H vs H/2
    let conv: Vec<f64> = coarse
        .events
        .iter()
        .zip(t_ref)
        .map(|(a, b)| (a - b).abs())
        .collect();
    let conv_max = conv.iter().fold(0.0f64, |m, v| m.max(*v));
    println!(
        "reference t_e(H) − t_e(H/2): {} (error of the H/2 run ≈ 1/15 of this)",
        fmt(&conv, 1)
    );
    // measured 1.6e-13 (RK4 error ∝ H⁴: 2.5e-12 between 2H and H, 1.2e-14 between H/2 and
    // H/4), so the H/2 reference is good to ~1e-14; 10×
    assert!(conv_max <= 1.6e-12, "reference not converged: {conv_max:e}");

    let p = engine_problem();
    let s = p.setup().unwrap();
    let tr = s.simulate(&p.theta_values()).unwrap();
    let t_eng: Vec<f64> = tr.events.iter().map(|e| e.t).collect();
    println!("engine    {}", fmt(&t_eng, 12));
    println!("reference {}", fmt(t_ref, 12));
    assert_eq!(t_eng.len(), 9, "engine impacts {t_eng:?}");
    let diff: Vec<f64> = t_eng.iter().zip(t_ref).map(|(a, b)| a - b).collect();
    println!("engine − reference {}", fmt(&diff, 1));
    // measured 2.0e-12, 9.4e-12, 2.5e-11, 5.4e-11, 8.9e-11, 1.2e-10, 1.7e-10, 2.5e-10,
    // 3.2e-10 at t = 0.29 … 4.73 s: the engine's global error (rtol = atol = 1e-10) grows
    // ~t²; tolerance 1e-9·t², a margin of 41× … 78× per impact
    for (i, (&d, &t)) in diff.iter().zip(t_ref).enumerate() {
        assert!(
            d.abs() <= 1e-9 * t * t,
            "impact {}: engine {} reference {t} (difference {d:e})",
            i + 1,
            t_eng[i]
        );
    }
    // ψ = ∫ ẏ2 dt = y2(5) − y2(0) (y2 is continuous at impacts): the engine's final y2
    let y_end = tr.y_final[3];
    let dy = y_end - fine.z_end[1];
    println!("y2(5): engine {y_end} reference {} ({dy:e})", fine.z_end[1]);
    // measured 2.0e-10; 10×
    assert!(
        dy.abs() <= 2e-9,
        "y2(5): engine {y_end} reference {}",
        fine.z_end[1]
    );
    println!("test time {:.2?}", clock.elapsed());
}

/// The engine's adjoint and direct gradients (all 8 parameters) of the impact times and of
/// ψ = ∫₀⁵ ẏ2 dt against central differences of the reference.
#[test]
fn gradients_match_the_minimal_coordinate_reference() {
    let clock = Instant::now();
    let g_ref = rows(&reference_gradients(H, REL_FD));
    // own accuracy: the same differences at 2H (integration) and at REL_FD_CHECK (its
    // truncation is (REL_FD_CHECK/REL_FD)⁴ ≈ 120× that of REL_FD)
    let g_h = rows(&reference_gradients(2.0 * H, REL_FD));
    let g_d = rows(&reference_gradients(H, REL_FD_CHECK));
    println!("reference gradients: {:.2?}", clock.elapsed());
    let worst_of = |g: &[Vec<f64>], rows: std::ops::Range<usize>| {
        rows.map(|r| {
            rel_components(&g[r], &g_ref[r])
                .into_iter()
                .fold(0.0f64, f64::max)
        })
        .fold(0.0f64, f64::max)
    };
    let own = [
        worst_of(&g_h, 0..9),
        worst_of(&g_h, 9..10),
        worst_of(&g_d, 0..9),
        worst_of(&g_d, 9..10) / 120.0,
    ];
    println!(
        "reference self-check (relative, per component): 2H vs H: dt_e {:.1e}, dy2 {:.1e}; \
         δ: dt_e {:.1e}, dy2 (scaled to REL_FD) {:.1e}",
        own[0], own[1], own[2], own[3]
    );
    // measured 8.6e-10, 1.9e-9 (the 2H run's error: the H run's is ≤ 1/16 of it plus
    // round-off), 7.8e-10, 7.9e-10 (truncation at REL_FD from the 9.5e-8 of dy2/dL2 at
    // REL_FD_CHECK, /120; the dt_e differences are round-off, ~ε/δ); 10× each
    for (v, tol) in own.iter().zip([8.6e-9, 1.9e-8, 7.8e-9, 8e-9]) {
        assert!(
            *v <= tol,
            "reference not converged: {} (tolerance {tol:e})",
            fmt(&own, 1)
        );
    }

    let p = engine_problem();
    let s = p.setup().unwrap();
    let th = p.theta_values();
    let adj = evaluate(&s, &th, GradientMethod::Adjoint).unwrap();
    let dir = hybridopt::testing::forward_sensitivity(&s, &th).unwrap();
    println!("engine gradients: {:.2?}", clock.elapsed());
    assert_eq!(dir.events.len(), 9);
    let names = s.theta_names();
    assert_eq!(names, NAMES.to_vec());

    // ψ's values: ∫ẏ2 = y2(5) + 2 and y2(5), against the reference's y2(5) at H
    let y_ref = MinimalFiveBar::new(PARAMS).simulate(H).z_end[1];
    let dv = [adj.values[0] - (y_ref + 2.0), adj.values[1] - y_ref];
    println!("ψ values: engine − reference {}", fmt(&dv, 1));
    // measured 2.0e-10 (both); 10×
    assert!(
        dv.iter().all(|d| d.abs() <= 2e-9),
        "ψ values off by {}",
        fmt(&dv, 1)
    );

    // (label, engine row, reference row, tolerance)
    let mut checks: Vec<(String, Vec<f64>, &Vec<f64>, f64)> = Vec::new();
    // direct τ of every impact: measured ≤ 1.2e-9 (at the reference's own noise, 1e-9); 1e-8
    for (e, ev) in dir.events.iter().enumerate() {
        checks.push((
            format!("direct dt{}/dp", e + 1),
            ev.tau.clone(),
            &g_ref[e],
            1e-8,
        ));
    }
    // adjoint event-time objectives: measured ≤ 1.3e-9; 1e-8
    for (k, &occ) in EVENT_OBJECTIVES.iter().enumerate() {
        let g = adj.gradients[2 + k].clone();
        checks.push((format!("adjoint dt{occ}/dp"), g, &g_ref[occ - 1], 1e-8));
    }
    // ψ = ∫ẏ2 and y2(5): measured 8.5e-8 (adjoint) and 3.1e-8 (direct), both the engine's
    // integration error at rtol = atol = 1e-10: with 1e-11 and 1e-12 the same comparison
    // gives 9.7e-9 and 2.0e-9 (linear in the tolerance), while the reference is good to
    // ~1e-9; 1e-6 and 3e-7 (12× and 10×)
    for (i, name) in [(0, "∫ẏ2"), (1, "y2(5)")] {
        let (a, d) = (adj.gradients[i].clone(), dir.gradients[i].clone());
        checks.push((format!("adjoint d{name}/dp"), a, &g_ref[9], 1e-6));
        checks.push((format!("direct d{name}/dp"), d, &g_ref[9], 3e-7));
    }
    let mut failures = Vec::new();
    for (label, eng, refr, tol) in &checks {
        let r = rel_components(eng, refr);
        let worst = r.iter().fold(0.0f64, |m, v| m.max(*v));
        println!("{label}: worst relative {worst:.1e} (tolerance {tol:.0e})");
        for j in 0..8 {
            if r[j] > *tol {
                failures.push(format!(
                    "{label} [{}]: engine {:e} reference {:e} (relative {:.1e})",
                    names[j], eng[j], refr[j], r[j]
                ));
            }
        }
    }
    println!("reference dt1/dp {}", fmt(&g_ref[0], 10));
    println!("reference dt9/dp {}", fmt(&g_ref[8], 10));
    println!("reference dy2(5)/dp {}", fmt(&g_ref[9], 10));
    println!("test time {:.2?}", clock.elapsed());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
