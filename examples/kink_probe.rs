use hybridopt::problem::Problem;
use hybridopt::sensitivity::simultaneous::piece_gradients;
fn main() {
    let p = Problem::load(std::path::Path::new("problems/biped_damping_symmetric.toml")).unwrap();
    let s = p.setup().unwrap();
    let th = p.theta_values();
    let r = piece_gradients(&s, &th).unwrap();
    println!("nonsmooth {} maxdiff {}", r.nonsmooth, r.max_relative_difference);
    for g in &r.groups { println!("{:?}", g); }
}
