//! Helpers shared by the integration tests: a deterministic PRNG, relative errors, and the
//! four gradient methods side by side.
#![allow(dead_code)]

pub mod ball;
pub mod chain;
pub mod corner_case;

use hybridopt::sensitivity::{evaluate, GradientMethod};
use hybridopt::setup::Setup;
use hybridopt::HybridSystem;
use std::path::PathBuf;

/// A scratch folder for one test, `<temp>/hybridopt-<module>-<pid>-<tag>`, emptied of what
/// an earlier run left; created when `create` (else left for the command under test to
/// make).
pub fn scratch(module: &str, tag: &str, create: bool) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hybridopt-{module}-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    if create {
        std::fs::create_dir_all(&d).unwrap();
    }
    d
}

/// splitmix64: a tiny deterministic PRNG (fixed seeds give fixed "random" data).
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [a, b).
    pub fn uniform(&mut self, a: f64, b: f64) -> f64 {
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        a + (b - a) * u
    }
    pub fn vec(&mut self, n: usize, a: f64, b: f64) -> Vec<f64> {
        (0..n).map(|_| self.uniform(a, b)).collect()
    }
}

/// ‖a − b‖₂ / ‖b‖₂ (b the reference).
pub fn rel_l2(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "length mismatch");
    let num = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt();
    let den = b.iter().map(|y| y * y).sum::<f64>().sqrt().max(1e-300);
    num / den
}

/// Least-squares slope of log(err) against log(h).
pub fn loglog_slope(h: &[f64], err: &[f64]) -> f64 {
    assert_eq!(h.len(), err.len());
    let xs: Vec<f64> = h.iter().map(|v| v.ln()).collect();
    let ys: Vec<f64> = err.iter().map(|v| v.ln()).collect();
    let n = xs.len() as f64;
    let mx = xs.iter().sum::<f64>() / n;
    let my = ys.iter().sum::<f64>() / n;
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    sxy / sxx
}

/// Values and the gradient of objective 0 by each of `methods`.
pub fn gradients_by<S: HybridSystem>(
    setup: &Setup<'_, S>, theta: &[f64], methods: &[GradientMethod],
) -> Vec<(GradientMethod, f64, Vec<f64>)> {
    methods
        .iter()
        .map(|&m| {
            let ev = evaluate(setup, theta, m)
                .unwrap_or_else(|e| panic!("{} evaluation failed: {e}", m.name()));
            (m, ev.values[0], ev.gradients[0].clone())
        })
        .collect()
}

/// Worst per-component error of `a` against the reference `b`:
/// `max_i |a_i − b_i| / max(|b_i|, floor · max_j |b_j|)`, with the index where it occurs.
/// The floor keeps components that are (near) zero from demanding round-off agreement while
/// still holding each of them to `tol` relative to the largest entry.
pub fn worst_component(a: &[f64], b: &[f64], floor: f64) -> (f64, usize) {
    assert_eq!(a.len(), b.len(), "length mismatch");
    let big = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let mut worst = (0.0f64, 0usize);
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let den = y.abs().max(floor * big).max(1e-300);
        let e = (x - y).abs() / den;
        // NaN counts as the worst possible error
        if e.is_nan() || e > worst.0 {
            worst = (if e.is_nan() { f64::INFINITY } else { e }, i);
        }
    }
    worst
}

/// The per-component check used by every test: each `a_i` is within
/// `tol · max(|b_i|, floor · max_j |b_j|)` of the reference `b_i`. Prints the measured worst
/// error (so that tolerances can be set from it) and panics naming the worst component,
/// its index and both values. Returns the worst error.
#[track_caller]
pub fn assert_close(what: &str, a: &[f64], b: &[f64], tol: f64, floor: f64) -> f64 {
    let (e, i) = worst_component(a, b, floor);
    println!("measured {what}: {e:.2e} (tol {tol:.0e}, component {i})");
    assert!(
        e <= tol,
        "{what}: component {i}: {} vs reference {} (error {e:.3e} relative to \
         max(|b_i|, {floor:e}·max|b|); tol {tol:e})\n  a = {a:?}\n  b = {b:?}",
        a[i],
        b[i]
    );
    e
}

/// A scalar check with the same report: `err ≤ tol`, printing the measured value.
#[track_caller]
pub fn assert_within(what: &str, err: f64, tol: f64) -> f64 {
    println!("measured {what}: {err:.2e} (tol {tol:.0e})");
    assert!(err <= tol, "{what}: error {err:.3e} > tol {tol:e}");
    err
}

/// The CPU time (user + system, seconds) process `pid` has used, from `/proc/PID/stat`
/// (Linux); `None` where there is no such file.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // the fields after the command name, which is in parentheses and may hold spaces
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of stat(5), 12 and 13 after the name
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    // SAFETY: sysconf reads a constant of the system.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Some(ticks / hz)
}

/// Waits until the child `pid` has used `cpu` seconds of CPU time — real work done,
/// however loaded the machine is — polling every 10 ms, for at most `timeout`; where CPU
/// time cannot be read, waits `cpu` seconds of wall time instead. Panics at the timeout.
pub fn wait_for_cpu(pid: u32, cpu: f64, timeout: std::time::Duration) {
    let start = std::time::Instant::now();
    if cpu_seconds(pid).is_none() {
        std::thread::sleep(std::time::Duration::from_secs_f64(cpu));
        return;
    }
    while cpu_seconds(pid).is_some_and(|c| c < cpu) {
        assert!(
            start.elapsed() < timeout,
            "the child did not start working within {timeout:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Waits for the child to exit, for at most `timeout` (then kills it and panics): a bound
/// on a hang, not a timing check.
pub fn wait_with_timeout(
    mut child: std::process::Child, timeout: std::time::Duration,
) -> std::process::Output {
    let start = std::time::Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > timeout {
            let _ = child.kill();
            panic!("the child did not exit within {timeout:?} of the signal");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.wait_with_output().expect("output")
}

/// The 4th-order central difference of `psi` at θ in every entry,
/// `(−ψ(θ+2h e_j) + 8ψ(θ+h e_j) − 8ψ(θ−h e_j) + ψ(θ−2h e_j)) / 12h` with
/// `h = 1e-4 · max(|θ_j|, 0.01)` (error O(h⁴) plus the runs' noise over h).
pub fn central4(theta: &[f64], psi: impl Fn(&[f64]) -> f64) -> Vec<f64> {
    (0..theta.len())
        .map(|j| {
            let h = 1e-4 * theta[j].abs().max(0.01);
            let at = |k: f64| {
                let mut t = theta.to_vec();
                t[j] += k * h;
                psi(&t)
            };
            (-at(2.0) + 8.0 * at(1.0) - 8.0 * at(-1.0) + at(-2.0)) / (12.0 * h)
        })
        .collect()
}
