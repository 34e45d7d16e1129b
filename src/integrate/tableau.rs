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
    /// 5th-order weights (equal to the last row of A: FSAL).
    pub const B: [f64; 7] = [
        35.0 / 384.0,
        0.0,
        500.0 / 1113.0,
        125.0 / 192.0,
        -2187.0 / 6784.0,
        11.0 / 84.0,
        0.0,
    ];
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
}
