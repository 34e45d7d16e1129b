//! Multiple shooting from a table of states: the program of docs/guide/shooting.md,
//! "From Rust" (`tests/doc_snippets.rs` keeps the guide's block inside this file, so the
//! guide's code compiles and runs).
//!
//! The bouncing ball's restitution e and throw v0 that keep it nearest y = 0.5 over
//! [0, 2], by 8 shooting segments whose nodes start from a "measured" motion: here the
//! ball's own run at e = 0.7, v0 = 0, tabulated by `GuessTable::from_trajectory` (a table
//! in a file is `GuessTable::read_csv`).
//!
//! Run: `cargo run --release --example shooting_guess_table`

use hybridopt::optimize::GuessTable;
use hybridopt::prelude::*;
use hybridopt::systems::BouncingBall;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cost = Objective::new(
        "f",
        vec![Term::squared(Quantity::Integral { output: 0 }, 0.5, 1.0)],
    );
    let setup = Setup::builder(&BouncingBall)
        .horizon(0.0, 2.0)
        .objective(cost)
        .tolerances(1e-12, 1e-12)
        .build();
    let theta = [
        ThetaEntry::fixed("g", 9.81),
        ThetaEntry::free("e", 0.8).with_bounds(Some(0.1), Some(0.95)),
        ThetaEntry::fixed("c", 0.0),
        ThetaEntry::fixed("y0", 1.0),
        ThetaEntry::free("v0", 0.5).with_bounds(Some(-5.0), Some(5.0)),
    ];
    // the "measured" motion: a run at e = 0.7, v0 = 0
    let measured = [9.81, 0.7, 0.0, 1.0, 0.0];
    let run = setup.simulate(&measured)?;

    let table = GuessTable::from_trajectory(&run, setup.dims());
    let shooting = Shooting {
        nodes: NodeTimes::Segments(8),
        guess: Guess::Table(table),
        closure: None,
    };
    let r = optimize_shooting(
        &setup,
        &theta,
        &Constraints::default(),
        &shooting,
        &OptimizerSettings::default(),
        None,
    )?;
    println!(
        "{r}; largest gap {:.1e}",
        r.shooting.as_ref().unwrap().max_defect
    );

    assert!(r.converged(), "{r}");
    assert!(r.shooting.as_ref().unwrap().max_defect < 1e-9);
    Ok(())
}
