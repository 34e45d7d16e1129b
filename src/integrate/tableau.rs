//! Method coefficients as data: each tableau with its order and its reference.

/// Dormand–Prince 5(4) (Dormand & Prince 1980, "A family of embedded Runge–Kutta
/// formulae", J. Comput. Appl. Math. 6; the coefficients as in Hairer, Nørsett & Wanner,
/// *Solving ODEs I*, Table II.5.2). FSAL: stage 7 is evaluated at the new point.
pub mod dopri5 {
    /// Order of the propagated solution.
    pub const ORDER: usize = 5;
    /// Order of the embedded solution (the error estimate is O(h^5)).
    pub const EMBEDDED_ORDER: usize = 4;
    pub const C: [f64; 7] = [0.0, 1.0 / 5.0, 3.0 / 10.0, 4.0 / 5.0, 8.0 / 9.0, 1.0, 1.0];
    pub const A: [[f64; 6]; 7] = [
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [1.0 / 5.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [3.0 / 40.0, 9.0 / 40.0, 0.0, 0.0, 0.0, 0.0],
        [44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0, 0.0, 0.0, 0.0],
        [
            19372.0 / 6561.0,
            -25360.0 / 2187.0,
            64448.0 / 6561.0,
            -212.0 / 729.0,
            0.0,
            0.0,
        ],
        [
            9017.0 / 3168.0,
            -355.0 / 33.0,
            46732.0 / 5247.0,
            49.0 / 176.0,
            -5103.0 / 18656.0,
            0.0,
        ],
        [
            35.0 / 384.0,
            0.0,
            500.0 / 1113.0,
            125.0 / 192.0,
            -2187.0 / 6784.0,
            11.0 / 84.0,
        ],
    ];
    /// 5th-order weights, for the record (the stepper uses A's last row): A's last row with
    /// `b₇ = 0` (FSAL), taken from A so that the two cannot disagree.
    #[allow(dead_code)]
    pub const B: [f64; 7] = {
        let b = A[6];
        [b[0], b[1], b[2], b[3], b[4], b[5], 0.0]
    };
    /// b − b̂: the difference to the embedded 4th-order weights.
    pub const E: [f64; 7] = [
        71.0 / 57600.0,
        0.0,
        -71.0 / 16695.0,
        71.0 / 1920.0,
        -17253.0 / 339200.0,
        22.0 / 525.0,
        -1.0 / 40.0,
    ];
    /// Dense-output weights of the 4th-order continuous extension (Hairer, Nørsett &
    /// Wanner I, §II.6, as used in their code DOPRI5: the coefficient of the fifth
    /// Hermite-like term).
    pub const D: [f64; 7] = [
        -12715105075.0 / 11282082432.0,
        0.0,
        87487479700.0 / 32700410799.0,
        -10690763975.0 / 1880347072.0,
        701980252875.0 / 199316789632.0,
        -1453857185.0 / 822651844.0,
        69997945.0 / 29380423.0,
    ];
}

/// Alexander's three-stage, third-order, L-stable, stiffly accurate SDIRK method
/// (R. Alexander 1977, "Diagonally implicit Runge–Kutta methods for stiff ODEs",
/// SIAM J. Numer. Anal. 14; Hairer & Wanner II, Table IV.6.5 family). γ is the root in
/// (1/6, 1/2) of 6γ³ − 18γ² + 9γ − 1 = 0 (computed, not typed in). The embedded weights
/// b̂ (order 2, b̂₃ = 0) are ours: the unique pair with Σb̂ = 1, Σb̂c = 1/2.
#[derive(Debug, Clone, Copy)]
pub struct Sdirk3 {
    pub gamma: f64,
    pub c: [f64; 3],
    pub a: [[f64; 3]; 3],
    pub b: [f64; 3],
    pub b_hat: [f64; 3],
}

impl Sdirk3 {
    pub const ORDER: usize = 3;
    pub const EMBEDDED_ORDER: usize = 2;

    pub fn new() -> Self {
        // Newton on 6γ³ − 18γ² + 9γ − 1 from 0.43.
        let mut g: f64 = 0.43;
        for _ in 0..50 {
            let f = ((6.0 * g - 18.0) * g + 9.0) * g - 1.0;
            let df = (18.0 * g - 36.0) * g + 9.0;
            g -= f / df;
        }
        let b1 = -(6.0 * g * g - 16.0 * g + 1.0) / 4.0;
        let b2 = (6.0 * g * g - 20.0 * g + 5.0) / 4.0;
        let c2 = (1.0 + g) / 2.0;
        let bh2 = (0.5 - g) / (c2 - g);
        Sdirk3 {
            gamma: g,
            c: [g, c2, 1.0],
            a: [[g, 0.0, 0.0], [(1.0 - g) / 2.0, g, 0.0], [b1, b2, g]],
            b: [b1, b2, g],
            b_hat: [1.0 - bh2, bh2, 0.0],
        }
    }
}

impl Default for Sdirk3 {
    fn default() -> Self {
        Self::new()
    }
}

/// The three-stage Radau IIA collocation method of order 5 (Ehle 1969; Hairer & Wanner,
/// *Solving ODEs II*, Table IV.5.6 for `c`, `A`, `b`; §IV.8, (8.19)–(8.20) and their code
/// RADAU5 for the error estimate). Stiffly accurate (`b` is the last row of `A`, so
/// `y1 = Y3`) and L-stable. Nodes `c = ((4 − √6)/10, (4 + √6)/10, 1)` are the zeros of the
/// Radau right polynomial; the coefficients are evaluated from their closed forms (√6 and
/// cube roots computed here, not typed as decimals).
///
/// Error estimate (Hairer & Wanner II, (IV.8.19)): with the stage increments `Z_i = Y_i − y0`,
///
/// ```text
/// err = (I − hγ0 J)⁻¹ [γ0 h f(t0, y0) + γ0 (d1 Z1 + d2 Z2 + d3 Z3)]
/// ```
///
/// where γ0 is the real eigenvalue of A, `γ0 = (6 + 81^{1/3} − 9^{1/3})/30` (the inverse of
/// RADAU5's `U1`), and `d = (−(13 + 7√6)/3, (−13 + 7√6)/3, −1/3)` (RADAU5's `DD1..DD3`): the
/// difference between the solution and an embedded formula of order 3 that also uses
/// f(t0, y0) with weight γ0.
#[derive(Debug, Clone, Copy)]
pub struct Radau5 {
    pub c: [f64; 3],
    pub a: [[f64; 3]; 3],
    /// The weights (A's last row: the method is stiffly accurate), written for the record.
    #[allow(dead_code)]
    pub b: [f64; 3],
    /// The real eigenvalue of A.
    pub gamma0: f64,
    /// RADAU5's `DD` coefficients of the embedded estimate.
    pub d: [f64; 3],
}

impl Radau5 {
    pub const ORDER: usize = 5;
    /// Order of the embedded formula (the estimate is O(h⁴)).
    pub const EMBEDDED_ORDER: usize = 3;

    pub fn new() -> Self {
        let s6 = 6f64.sqrt();
        let a = [
            [
                (88.0 - 7.0 * s6) / 360.0,
                (296.0 - 169.0 * s6) / 1800.0,
                (-2.0 + 3.0 * s6) / 225.0,
            ],
            [
                (296.0 + 169.0 * s6) / 1800.0,
                (88.0 + 7.0 * s6) / 360.0,
                (-2.0 - 3.0 * s6) / 225.0,
            ],
            [(16.0 - s6) / 36.0, (16.0 + s6) / 36.0, 1.0 / 9.0],
        ];
        Radau5 {
            c: [(4.0 - s6) / 10.0, (4.0 + s6) / 10.0, 1.0],
            a,
            b: a[2],
            gamma0: (6.0 + 81f64.cbrt() - 9f64.cbrt()) / 30.0,
            d: [
                -(13.0 + 7.0 * s6) / 3.0,
                (-13.0 + 7.0 * s6) / 3.0,
                -1.0 / 3.0,
            ],
        }
    }
}

impl Default for Radau5 {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dopri5_order_conditions() {
        use dopri5::*;
        let s: f64 = B.iter().sum();
        assert!((s - 1.0).abs() < 1e-15);
        let bc: f64 = (0..7).map(|i| B[i] * C[i]).sum();
        assert!((bc - 0.5).abs() < 1e-15);
        let bc4: f64 = (0..7).map(|i| B[i] * C[i].powi(4)).sum();
        assert!((bc4 - 0.2).abs() < 1e-15);
        for i in 0..7 {
            let row: f64 = A[i].iter().sum();
            assert!((row - C[i]).abs() < 1e-14);
        }
        let e: f64 = E.iter().sum();
        assert!(e.abs() < 1e-15);
    }

    #[test]
    fn sdirk3_order_conditions() {
        let m = Sdirk3::new();
        let (b, c, a) = (m.b, m.c, m.a);
        assert!((b.iter().sum::<f64>() - 1.0).abs() < 1e-14);
        assert!(((0..3).map(|i| b[i] * c[i]).sum::<f64>() - 0.5).abs() < 1e-14);
        assert!(((0..3).map(|i| b[i] * c[i] * c[i]).sum::<f64>() - 1.0 / 3.0).abs() < 1e-14);
        let bac: f64 = (0..3)
            .map(|i| b[i] * (0..3).map(|j| a[i][j] * c[j]).sum::<f64>())
            .sum();
        assert!((bac - 1.0 / 6.0).abs() < 1e-14);
        for i in 0..3 {
            assert!((a[i].iter().sum::<f64>() - c[i]).abs() < 1e-14);
        }
        let bh = m.b_hat;
        assert!((bh.iter().sum::<f64>() - 1.0).abs() < 1e-14);
        assert!(((0..3).map(|i| bh[i] * c[i]).sum::<f64>() - 0.5).abs() < 1e-14);
    }

    /// Radau IIA(5): the simplifying conditions B(5) (order 5 of the quadrature) and C(3)
    /// (stage order 3), which with D(2) give order 5; stiff accuracy; γ0 an eigenvalue of A;
    /// and the embedded formula `γ0 h f0 + h Σ (Aᵀ γ0 d)_j f_j` of order 3 (it must vanish
    /// on 1, c, c² with the node c0 = 0 carrying weight γ0).
    #[test]
    fn radau5_order_conditions() {
        let m = Radau5::new();
        let (a, b, c) = (m.a, m.b, m.c);
        for k in 1..=5 {
            let q: f64 = (0..3).map(|i| b[i] * c[i].powi(k - 1)).sum();
            assert!((q - 1.0 / k as f64).abs() < 1e-15, "B({k}): {q}");
        }
        for k in 1..=3 {
            for i in 0..3 {
                let q: f64 = (0..3).map(|j| a[i][j] * c[j].powi(k - 1)).sum();
                let want = c[i].powi(k) / k as f64;
                assert!((q - want).abs() < 1e-15, "C({k}), row {i}: {q} vs {want}");
            }
        }
        for k in 1..=2 {
            for j in 0..3 {
                // D(k): Σ_i b_i c_i^{k−1} a_ij = b_j (1 − c_j^k)/k
                let q: f64 = (0..3).map(|i| b[i] * c[i].powi(k - 1) * a[i][j]).sum();
                let want = b[j] * (1.0 - c[j].powi(k)) / k as f64;
                assert!((q - want).abs() < 1e-15, "D({k}), column {j}");
            }
        }
        assert_eq!(b, a[2]);
        assert_eq!(c[2], 1.0);
        // det(A − γ0 I) = 0
        let g = m.gamma0;
        let s = |i: usize, j: usize| a[i][j] - if i == j { g } else { 0.0 };
        let det = s(0, 0) * (s(1, 1) * s(2, 2) - s(1, 2) * s(2, 1))
            - s(0, 1) * (s(1, 0) * s(2, 2) - s(1, 2) * s(2, 0))
            + s(0, 2) * (s(1, 0) * s(2, 1) - s(1, 1) * s(2, 0));
        assert!(det.abs() < 1e-15, "det(A − γ0 I) = {det:e}");
        assert!((g - 0.274_888_829_595_676_6).abs() < 1e-12, "γ0 = {g}");
        // embedded weights relative to the solution: δ0 = γ0, δ_j = γ0 Σ_i d_i a_ij
        let dj: Vec<f64> = (0..3)
            .map(|j| g * (0..3).map(|i| m.d[i] * a[i][j]).sum::<f64>())
            .collect();
        let q0 = g + dj.iter().sum::<f64>();
        let q1: f64 = (0..3).map(|j| dj[j] * c[j]).sum();
        let q2: f64 = (0..3).map(|j| dj[j] * c[j] * c[j]).sum();
        assert!(
            q0.abs() < 1e-14 && q1.abs() < 1e-14 && q2.abs() < 1e-14,
            "{q0:e} {q1:e} {q2:e}"
        );
        let q3: f64 = (0..3).map(|j| dj[j] * c[j].powi(3)).sum();
        assert!(
            q3.abs() > 1e-3,
            "the embedded formula is of order 3 exactly: {q3:e}"
        );
    }
}
