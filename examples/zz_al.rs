use hybridopt::prelude::*;
use hybridopt::sensitivity::evaluate;
use nalgebra::DMatrix;
use std::path::Path;
use std::time::Instant;

fn gap(a: &[f64], b: &[f64]) -> f64 {
    let d = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    d / b.iter().map(|v| v.abs()).fold(0.0, f64::max)
}

fn with(p: &Problem, th: &[f64]) -> Vec<ThetaEntry> {
    let mut t = p.theta.clone();
    for (e, v) in t.iter_mut().zip(th) {
        e.value = *v;
    }
    t
}

fn hessian(p: &Problem, th: &[f64], free: &[usize]) -> DMatrix<f64> {
    let setup = p.setup().unwrap();
    let n = free.len();
    let mut h = DMatrix::zeros(n, n);
    for (a, &i) in free.iter().enumerate() {
        let s = 1e-4 * th[i].abs().max(1.0);
        let g = |d: f64| {
            let mut t = th.to_vec();
            t[i] += d;
            evaluate(&setup, &t, GradientMethod::Adjoint)
                .unwrap()
                .gradients[0]
                .clone()
        };
        let (gp, gm) = (g(s), g(-s));
        for (b, &j) in free.iter().enumerate() {
            h[(b, a)] = (gp[j] - gm[j]) / (2.0 * s);
        }
    }
    (&h + h.transpose()) * 0.5
}

fn step1(rtol: &str) {
    let text = std::fs::read_to_string("problems/thrust_control.toml")
        .unwrap()
        .replace("rtol = 1e-9", &format!("rtol = {rtol}"))
        .replace("atol = 1e-9", &format!("atol = {rtol}"));
    let mut p = Problem::parse(&text, Path::new("problems/x.toml")).unwrap();
    p.optimizer.tol_grad = 1e-12;
    p.optimizer.max_iters = 500;
    let setup = p.setup().unwrap();
    let mut d = p.clone();
    d.optimizer.solver = SolverKind::Ddp;
    let t = Instant::now();
    let ddp = d.optimize(&setup, &p.theta, None).unwrap();
    println!(
        "rtol {rtol} DDP {} its {:.3}s {} ψ {:.15e} |g| {:.2e}",
        ddp.iterations,
        t.elapsed().as_secs_f64(),
        ddp.termination,
        ddp.final_cost,
        ddp.final_grad_norm
    );
    let none = Constraints::default();
    let mut s = p.optimizer.clone();
    s.max_iters = 2000;
    let t = Instant::now();
    let sqp = optimize_constrained(&setup, &p.theta, &none, &s, None).unwrap();
    println!(
        "SQP {} its {:.3}s {} ψ {:.15e} kkt {:.2e}",
        sqp.iterations,
        t.elapsed().as_secs_f64(),
        sqp.termination,
        sqp.final_cost,
        sqp.final_grad_norm
    );
    println!(
        "  Δθ {:.2e} Δψ/ψ {:.2e}",
        gap(&ddp.theta_final, &sqp.theta_final),
        (ddp.final_cost - sqp.final_cost).abs() / sqp.final_cost
    );
    let mut s2 = s.clone();
    s2.tol_kkt = 1e-12;
    let sqp2 = optimize_constrained(&setup, &with(&p, &ddp.theta_final), &none, &s2, None).unwrap();
    println!(
        "SQP tol 1e-12 from DDP: {} its {} ψ {:.15e}, Δθ to DDP {:.2e}",
        sqp2.iterations,
        sqp2.termination,
        sqp2.final_cost,
        gap(&sqp2.theta_final, &ddp.theta_final)
    );
    let sqp3 = optimize_constrained(&setup, &p.theta, &none, &s2, None).unwrap();
    println!(
        "SQP tol 1e-12 from start: {} its {} ψ {:.15e}, Δθ to DDP {:.2e}",
        sqp3.iterations,
        sqp3.termination,
        sqp3.final_cost,
        gap(&sqp3.theta_final, &ddp.theta_final)
    );
    let ddp2 = d
        .optimize(&setup, &with(&p, &sqp.theta_final), None)
        .unwrap();
    println!(
        "DDP from SQP: {} its {} ψ {:.15e} Δθ to DDP {:.2e}",
        ddp2.iterations,
        ddp2.termination,
        ddp2.final_cost,
        gap(&ddp2.theta_final, &ddp.theta_final)
    );
    let free: Vec<usize> = (5..p.theta.len())
        .filter(|&i| ddp.theta_final[i].abs() < 15.0 - 1e-9)
        .collect();
    println!("free (off bounds) {} of {}", free.len(), p.theta.len() - 5);
    let h = hessian(&p, &ddp.theta_final, &free);
    let eig = h.clone().symmetric_eigen();
    let mut ev: Vec<f64> = eig.eigenvalues.iter().copied().collect();
    ev.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "Hessian eigenvalues: min {:.3e} {:.3e} {:.3e} max {:.3e} cond {:.2e}",
        ev[0],
        ev[1],
        ev[2],
        ev[ev.len() - 1],
        ev[ev.len() - 1] / ev[0]
    );
    // Newton step from the SQP's point: predicted distance to the optimum
    let g = evaluate(&setup, &sqp.theta_final, GradientMethod::Adjoint)
        .unwrap()
        .gradients[0]
        .clone();
    let gf = nalgebra::DVector::from_iterator(free.len(), free.iter().map(|&i| g[i]));
    let dx = h.clone().lu().solve(&gf).unwrap();
    println!(
        "SQP point: |g|inf {:.2e}, Newton distance max|H⁻¹g| {:.2e} (θ scale {:.2})",
        gf.amax(),
        dx.amax(),
        ddp.theta_final
            .iter()
            .skip(5)
            .fold(0.0f64, |m, v| m.max(v.abs()))
    );
    let gd = evaluate(&setup, &ddp.theta_final, GradientMethod::Adjoint)
        .unwrap()
        .gradients[0]
        .clone();
    let gdf = nalgebra::DVector::from_iterator(free.len(), free.iter().map(|&i| gd[i]));
    println!(
        "DDP point: |g|inf {:.2e}, Newton distance {:.2e}",
        gdf.amax(),
        h.lu().solve(&gdf).unwrap().amax()
    );
}

fn step2(name: &str) {
    let p0 = Problem::load(Path::new(&format!("problems/{name}.toml"))).unwrap();
    let p = &p0;
    let setup = p.setup().unwrap();
    let t = Instant::now();
    let sqp = p.optimize(&setup, &p.theta, None).unwrap();
    let ts = t.elapsed().as_secs_f64();
    let mut tight = p.clone();
    tight.optimizer.tol_kkt = 1e-12;
    tight.optimizer.max_iters = 2000;
    let sqpt = tight.optimize(&setup, &p.theta, None).unwrap();
    let kinds = if std::env::var("ZZ_GN").is_ok() {
        vec![SolverKind::Ddp, SolverKind::Ilqr]
    } else {
        vec![SolverKind::Ddp]
    };
    for kind in kinds {
        let mut q = p.clone();
        q.optimizer.solver = kind;
        if let Ok(t) = std::env::var("ZZ_TOL") {
            q.optimizer.tol_kkt = t.parse().unwrap();
        }
        let t = Instant::now();
        let r = q.optimize(&setup, &p.theta, None);
        let td = t.elapsed().as_secs_f64();
        let r = match r {
            Ok(r) => r,
            Err(e) => {
                println!("{name} {}: {e}", kind.name());
                continue;
            }
        };
        let (a, b) = (
            r.constrained.as_ref().unwrap(),
            sqp.constrained.as_ref().unwrap(),
        );
        let bt = sqpt.constrained.as_ref().unwrap();
        println!(
            "{name} {}: {} its {td:.3}s {} | SQP {} its {ts:.3}s {} (tight: {} its {})",
            kind.name(),
            r.iterations,
            r.termination,
            sqp.iterations,
            sqp.termination,
            sqpt.iterations,
            sqpt.termination
        );
        println!(
            "  Δθ {:.2e} (tight {:.2e}) Δψ/ψ {:.2e} (tight {:.2e}) viol {:.1e} kkt {:.1e}",
            gap(&r.theta_final, &sqp.theta_final),
            gap(&r.theta_final, &sqpt.theta_final),
            (r.final_cost - sqp.final_cost).abs() / sqp.final_cost,
            (r.final_cost - sqpt.final_cost).abs() / sqpt.final_cost,
            a.max_violation,
            a.kkt_residual
        );
        for ((c, d), e) in a
            .constraints
            .iter()
            .zip(&b.constraints)
            .zip(&bt.constraints)
        {
            println!(
                "   {} value {:.12} λ {:.10} SQP λ {:.10} tight {:.10} rel {:.1e}",
                c.name,
                c.value,
                c.multiplier,
                d.multiplier,
                e.multiplier,
                (c.multiplier - e.multiplier).abs() / e.multiplier.abs()
            );
        }
        for h in &r.history {
            println!(
                "    it {} f {:.10} st {:.2e} viol {:.2e}",
                h.iteration,
                h.cost,
                h.grad_norm,
                h.max_violation.unwrap()
            );
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args[1].as_str() {
        "1" => step1(args.get(2).map_or("1e-9", |s| s.as_str())),
        "2" => step2(&args[2]),
        _ => {}
    }
}
