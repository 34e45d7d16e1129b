//! A periodic orbit on the section just after a reset that maps the state off the guard's
//! surface: the rimless wheel (McGeer 1990) written as a custom system. Stance is an
//! inverted pendulum `θ̈ = sin θ` (g/l = 1), the next spoke strikes at `θ = γ + α` and the
//! stance restarts at `θ⁺ = γ − α` with `ω⁺ = cos(2α) ω⁻`, so the start on the section has
//! `g = θ − γ − α = −2α`: off the surface, but the reset's image of it (issue 31).
//!
//! The closed-form oracle: energy over one stance, `ω⁻² = ω⁺² + 2(cos(γ−α) − cos(γ+α))
//! = ω⁺² + K` with `K = 4 sin γ sin α`; the return map on ω is `P(ω) = c √(ω² + K)`,
//! `c = cos 2α`, so the fixed point is `ω* = c √(K / (1 − c²))`, its multiplier
//! `P′(ω*) = c ω*/ω⁻ = c²`, and `dω*/dγ = ω* cos γ / (2 sin γ)`.

use std::path::PathBuf;
use std::process::{Command, Output};

const GAMMA: f64 = 0.2;
const ALPHA: f64 = std::f64::consts::FRAC_PI_8;

fn problem(theta: f64) -> String {
    format!(
        r#"name = "rimless_wheel"

[system]
kind = "custom"
states = ["theta", "omega"]
parameters = ["gamma", "alpha", "theta0", "omega0"]
initial = {{ theta = "theta0", omega = "omega0" }}
outputs = [{{ name = "theta", expr = "theta" }}, {{ name = "omega", expr = "omega" }}]

[[system.modes]]
name = "stance"
flow = {{ theta = "omega", omega = "sin(theta)" }}
guards = [
  {{ name = "strike", expr = "theta - gamma - alpha", direction = "rising", reset = {{ theta = "gamma - alpha", omega = "cos(2*alpha)*omega" }} }},
]

[simulation]
t_end = 5.0
rtol = 1e-12
atol = 1e-12

[parameters]
gamma = {{ value = {GAMMA:?} }}
alpha = {{ value = {ALPHA:?} }}
theta0 = {{ value = {theta:?} }}
omega0 = {{ value = 0.5 }}

[periodic]
guard = "strike"
count = 1
free = ["omega"]
guess = {{ theta = {theta:?}, omega = 0.5 }}
t_max = 20.0
tol = 1e-12
sensitivities = ["gamma"]
"#
    )
}

fn run_periodic(tag: &str, theta: f64) -> (Output, PathBuf) {
    let dir = std::env::temp_dir().join(format!("hybridopt-rimless-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("rimless_wheel.toml");
    std::fs::write(&file, problem(theta)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hybridopt"))
        .args(["periodic", file.to_str().unwrap(), "--json", "--out"])
        .arg(dir.join("out"))
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("runs");
    (out, dir)
}

#[test]
fn rimless_wheel_starts_at_the_resets_image_and_matches_the_closed_form() {
    let (out, dir) = run_periodic("image", GAMMA - ALPHA);
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let c = (2.0 * ALPHA).cos();
    let k = 4.0 * GAMMA.sin() * ALPHA.sin();
    let omega = c * (k / (1.0 - c * c)).sqrt();
    let got = v["fixed_point"]["omega"].as_f64().unwrap();
    let theta = v["fixed_point"]["theta"].as_f64().unwrap();
    let mult = v["multipliers"][0][0].as_f64().unwrap();
    let domega = v["sensitivities"]["fixed_point"]["omega"]["gamma"]
        .as_f64()
        .unwrap();
    let domega_exact = omega * GAMMA.cos() / (2.0 * GAMMA.sin());
    println!(
        "ω* gap {:e}, θ gap {:e}, multiplier gap {:e}, dω*/dγ gap {:e}",
        got - omega,
        theta - (GAMMA - ALPHA),
        mult - c * c,
        domega - domega_exact
    );
    // measured: 1.6e-13, 0, 1.3e-13, 6.4e-13 (the integration's 1e-12 tolerances)
    assert!((got - omega).abs() < 5e-12, "ω* = {got}, exact {omega}");
    assert!((theta - (GAMMA - ALPHA)).abs() < 1e-14, "θ* = {theta}");
    assert!(
        (mult - c * c).abs() < 4e-12,
        "multiplier {mult}, exact {}",
        c * c
    );
    assert!(
        (domega - domega_exact).abs() < 2e-11,
        "dω*/dγ = {domega}, exact {domega_exact}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_start_neither_on_the_surface_nor_the_resets_image_is_refused() {
    // θ = γ − α − 0.01 is off the surface (g = −2α − 0.01, the firing side) and not the
    // image (which is θ = γ − α): refused before any run, with the section's guard named
    let (out, dir) = run_periodic("off", GAMMA - ALPHA - 0.01);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    println!("{err}");
    for word in ["not on the section", "strike", "reset's image"] {
        assert!(err.contains(word), "{word}: {err}");
    }
    let _ = std::fs::remove_dir_all(dir);
}
