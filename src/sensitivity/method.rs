//! The four ways a gradient is computed: the two methods (adjoint, direct) and the two
//! witnesses (central finite differences, a whole-simulation dual run).

/// How a gradient is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GradientMethod {
    /// Continuous adjoint (theory §4): one backward pass per objective.
    Adjoint,
    /// Forward (direct) sensitivities (theory §2–3): one column per parameter.
    Direct,
    /// Central finite differences of ψ (a witness).
    Fd,
    /// The whole simulation in dual numbers, one run per parameter (a witness: the exact
    /// derivative of the discretised solution).
    Dual,
}

impl GradientMethod {
    pub fn name(self) -> &'static str {
        match self {
            GradientMethod::Adjoint => "adjoint",
            GradientMethod::Direct => "direct",
            GradientMethod::Fd => "fd",
            GradientMethod::Dual => "dual",
        }
    }
    pub fn all() -> [GradientMethod; 4] {
        [
            GradientMethod::Adjoint,
            GradientMethod::Direct,
            GradientMethod::Dual,
            GradientMethod::Fd,
        ]
    }
}
