//! The chain of N masses of `benches/scaling.rs` as a problem file (a `kind = "custom"`
//! system whose flow Jacobian is banded: the reference large sparse problem, shared by the
//! scaling benchmark and `tests/sparse.rs`).

/// The chain's parameters and their values (all optimized).
pub const CHAIN_PARAMETERS: [(&str, f64); 6] = [
    ("k", 50.0),
    ("c", 0.5),
    ("k0", 10.0),
    ("d", 0.05),
    ("e", 0.8),
    ("u0", 1.0),
];

/// The chain of `n` masses (n ≥ 2) as a problem file for integrator `method`: states
/// x0…x{n−1}, v0…v{n−1}; x_i' = v_i, v_i' = −k0 x_i − k (2 x_i − x_{i−1} − x_{i+1}) − c v_i
/// (x_{−1} = 0; the last mass has one neighbour); the last mass starts with v = u0 and
/// strikes a stop at x_{n−1} = d (rising), v_{n−1} ← −e v_{n−1}.
pub fn chain_problem(n: usize, method: &str) -> String {
    assert!(n >= 2, "the chain needs two masses");
    let last = n - 1;
    let quoted = |names: &mut dyn Iterator<Item = String>| {
        names
            .map(|s| format!("\"{s}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut t = String::new();
    t.push_str(&format!(
        "name = \"chain{n}_{method}\"\n\
         description = \"Chain of {n} masses ({} states) striking a stop (benches/scaling.rs)\"\n\n",
        2 * n
    ));
    t.push_str("[system]\nkind = \"custom\"\n");
    t.push_str(&format!(
        "states = [{}]\n",
        quoted(
            &mut (0..n)
                .map(|i| format!("x{i}"))
                .chain((0..n).map(|i| format!("v{i}")))
        )
    ));
    t.push_str(&format!(
        "parameters = [{}]\n",
        quoted(&mut CHAIN_PARAMETERS.iter().map(|(p, _)| p.to_string()))
    ));
    t.push_str(&format!(
        "outputs = [{{ name = \"xe\", expr = \"x{last}\" }}]\n\n"
    ));
    t.push_str("[system.initial]\n");
    for i in 0..n {
        t.push_str(&format!("x{i} = \"0\"\n"));
    }
    for i in 0..n {
        let v0 = if i == last { "u0" } else { "0" };
        t.push_str(&format!("v{i} = \"{v0}\"\n"));
    }
    t.push_str("\n[[system.modes]]\nname = \"free\"\n\n[system.modes.flow]\n");
    for i in 0..n {
        t.push_str(&format!("x{i} = \"v{i}\"\n"));
        let coupling = match i {
            0 => "2*x0 - x1".to_string(),
            i if i == last => format!("x{i} - x{}", i - 1),
            i => format!("2*x{i} - x{} - x{}", i - 1, i + 1),
        };
        t.push_str(&format!("v{i} = \"-k0*x{i} - k*({coupling}) - c*v{i}\"\n"));
    }
    t.push_str(&format!(
        "\n[[system.modes.guards]]\nname = \"stop\"\nexpr = \"x{last} - d\"\n\
         direction = \"rising\"\nreset = {{ v{last} = \"-e*v{last}\" }}\n\n"
    ));
    t.push_str(&format!(
        "[simulation]\nt_end = 5.0\nrtol = 1e-8\natol = 1e-8\nmethod = \"{method}\"\n\
         max_events = 10000\n\n[parameters]\n"
    ));
    for (p, v) in CHAIN_PARAMETERS {
        t.push_str(&format!("{p} = {{ value = {v:?}, optimize = true }}\n"));
    }
    t.push_str(
        "\n[[cost]]\nkind = \"integral_squared\"\noutput = \"xe\"\ntarget = 0.0\n\n\
         [[cost]]\nkind = \"terminal_squared\"\noutput = \"xe\"\ntarget = 0.0\n",
    );
    t
}
