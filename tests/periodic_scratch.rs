use hybridopt::integrate::{EventOptions, SolverOptions};
use hybridopt::periodic::map::{fd_monodromy, return_map, MapOptions};
use hybridopt::periodic::newton::{solve, JacobianSource, NewtonOptions};
use hybridopt::periodic::section::Section;
use hybridopt::periodic::stability::spectrum;
use hybridopt::systems::simplest_walker::SimplestWalker;
use hybridopt::systems::compass_gait::CompassGait;

fn walker_guess(th: f64, dth: f64) -> Vec<f64> {
    let c = (2.0 * th).cos();
    vec![th, 2.0 * th, dth, c * (1.0 - c) * dth]
}

#[test]
fn scratch() {
    let sys = SimplestWalker;
    let sec = Section { guard: 0, count: 1, mode: 0, free: vec![0, 2] };
    let mut solver = SolverOptions::default();
    solver.rtol = 1e-12;
    solver.atol = 1e-12;
    let opts = MapOptions { solver, events: EventOptions::default(), t_max: 20.0 };
    let p = [0.009, 0.0, 0.0, 0.0, 0.0];
    for g in [(0.2, -0.2), (0.19, -0.2), (0.1, -0.1), (0.15,-0.15)] {
        let x0 = walker_guess(g.0, g.1);
        match solve(&sys, &sec, &opts, &NewtonOptions::default(), &p, &x0, JacobianSource::Exact) {
            Ok(fp) => {
                let names: Vec<String> = ["theta","phi","dtheta","dphi"].iter().map(|s| s.to_string()).collect();
                let sp = spectrum(&fp.ret.monodromy, &sec.free, &names).unwrap();
                println!("x* = {:?} T = {} hist {:?} sec {:?} mono {:?}", fp.x.as_slice(), fp.ret.period, fp.history, sp.section, sp.monodromy);
                let fd = fd_monodromy(&sys, &sec, &opts, &p, fp.x.as_slice(), 1e-5, hybridopt::periodic::map::Stencil::Second).unwrap();
                println!("DP-FD max {:e}", (&fd - &fp.ret.monodromy).amax());
                let (tb, f) = hybridopt::periodic::map::section_basis(&sys, &sec, &p, fp.x.as_slice()).unwrap();
                println!("M f = {:?}", (&fp.ret.monodromy * &f).as_slice());
                for j in 0..3 {
                    let d = tb.column(j);
                    let dr = hybridopt::periodic::second::monodromy_derivative(&sys, &sec, &opts, &p, fp.x.as_slice(), &[0.0;5], d.as_slice()).unwrap();
                    let md = &fp.ret.monodromy * d;
                    println!("dual d_return - M d = {:e}; dual M - M {:e}", (nalgebra::DVector::from_vec(dr.d_return.clone()) - &md).amax(), (&dr.monodromy - &fp.ret.monodromy).amax());
                    let h = 1e-4;
                    let x = fp.x.clone();
                    let (a,_,_) = hybridopt::periodic::map::return_value(&sys,&sec,&opts,&p,(&x + d*h).as_slice()).unwrap();
                    let (b,_,_) = hybridopt::periodic::map::return_value(&sys,&sec,&opts,&p,(&x - d*h).as_slice()).unwrap();
                    let (c0,_,_) = hybridopt::periodic::map::return_value(&sys,&sec,&opts,&p,x.as_slice()).unwrap();
                    println!("  fwd {:?}\n  bwd {:?}\n  Md {:?}", ((&a-&c0)/h).as_slice(), ((&c0-&b)/h).as_slice(), md.as_slice());
                }
                for h in [1e-3, 3e-4, 1e-4, 3e-5, 1e-5] {
                    let fd = fd_monodromy(&sys, &sec, &opts, &p, fp.x.as_slice(), h, hybridopt::periodic::map::Stencil::Fourth).unwrap();
                    println!("h {h:e}: tangent gap {:e}", ((&fd - &fp.ret.monodromy) * &tb).amax());
                }
            }
            Err(e) => println!("guess {g:?}: {e}"),
        }
    }
    let _ = return_map(&sys, &sec, &opts, &p, &walker_guess(0.2, -0.2)).unwrap();
    // compass gait: simulate one step from a guess
    let cg = CompassGait;
    let pc = CompassGait::default_params();
    let s = 3f64.to_radians();
    for (a, dn, ds) in [(0.22, -0.4, 1.2), (0.2, -0.3, 1.0), (0.25,-0.5,1.4), (0.3, -0.6, 1.5)] {
        let x0 = vec![a + s, -a + s, dn, ds];
        match hybridopt::periodic::map::return_value(&cg, &sec, &opts, &pc[..], &x0) {
            Ok((xn, t, _)) => println!("cg {x0:?} -> {:?} T {t}", xn.as_slice()),
            Err(e) => println!("cg {x0:?}: {e}"),
        }
        match solve(&cg, &Section{free: vec![1,2,3], ..sec.clone()}, &opts, &NewtonOptions::default(), &pc, &x0, JacobianSource::Exact) {
            Ok(fp) => println!("cg fixed {:?} T {} hist {:?}", fp.x.as_slice(), fp.ret.period, fp.history),
            Err(e) => println!("cg solve: {e}"),
        }
    }
}
