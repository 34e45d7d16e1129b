//! Cooperative interruption (Ctrl-C).
//!
//! The command line installs a SIGINT handler that only calls [`request`] (an atomic
//! store, safe in a signal handler). The long-running loops poll the flag: the hybrid
//! integrator before every step and the optimizer before every evaluation return
//! [`Error::Interrupted`], and [`crate::output::atomic::Staging::commit`] refuses to swap in a
//! results folder once an interruption was requested, so the staging folder is deleted and
//! an earlier result stays as it was. A library user that never calls [`request`] sees no
//! change.

use crate::error::Error;
use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Asks the running computation to stop at its next check (async-signal-safe).
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Whether an interruption was requested.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// Withdraws a request (for a program that handles an interruption and carries on).
pub fn clear() {
    REQUESTED.store(false, Ordering::SeqCst);
}

/// `Err(Error::Interrupted)` if an interruption was requested.
pub fn check() -> Result<(), Error> {
    if requested() {
        Err(Error::Interrupted)
    } else {
        Ok(())
    }
}
