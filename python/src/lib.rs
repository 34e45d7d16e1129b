//! The extension module `hybridopt._native`: the Python classes over the hybridopt
//! library. The package `hybridopt` (hybridopt/__init__.py) re-exports them with the
//! exception hierarchy of `hybridopt/errors.py`.
//!
//! Every simulation, gradient and optimization runs with the GIL released
//! (`Python::detach`) and can be interrupted by Ctrl-C ([`interrupt`]): the problem is
//! shared as an `Arc`, and the engine's setup, which borrows its system, lives beside it in
//! one cell ([`prepared`]), built on first use and again after the values change.

mod errors;
mod feedback;
mod interrupt;
mod prepared;
mod problem;
mod results;
mod runs;
mod theta;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<problem::PyProblem>()?;
    m.add_class::<results::Simulation>()?;
    m.add_class::<results::Gradient>()?;
    m.add_class::<results::Event>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
