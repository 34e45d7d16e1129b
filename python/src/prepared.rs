//! A problem with the engine's setup built once. The setup borrows the problem's system,
//! so both live in one self-referential cell (`self_cell`, no unsafe code here); building
//! it runs the reference simulation of tracking terms, which every later call then
//! reuses (as `hybridopt optimize` builds its setup once).

use hybridopt::error::Error;
use hybridopt::problem::Problem;
use hybridopt::setup::Setup;
use hybridopt::systems::Builtin;
use self_cell::self_cell;
use std::sync::Arc;

type SetupOf<'a> = Setup<'a, Builtin>;

self_cell!(
    /// A problem (shared) and the setup built from it.
    pub struct Prepared {
        owner: Arc<Problem>,
        #[covariant]
        dependent: SetupOf,
    }
);

impl Prepared {
    /// Builds the setup of `p` (`Problem::setup`).
    pub fn build(p: Arc<Problem>) -> Result<Prepared, Error> {
        Prepared::try_new(p, |p| p.setup())
    }

    /// The problem the setup was built from.
    pub fn problem(&self) -> &Arc<Problem> {
        self.borrow_owner()
    }

    pub fn setup(&self) -> &Setup<'_, Builtin> {
        self.borrow_dependent()
    }
}
