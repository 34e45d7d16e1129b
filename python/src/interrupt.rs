//! Ctrl-C during a call. On Python's main thread (the one that receives signals), the
//! computation runs on a scoped worker thread with the GIL released, while the calling
//! thread waits for its result and, every [`POLL`], lets Python run its signal handlers
//! (`check_signals`). On any other thread the computation runs on the calling thread with
//! the GIL released (no signal reaches it; the worker thread costs tens of µs a call).
//! When a handler raises (KeyboardInterrupt on SIGINT), the library is asked to stop
//! ([`hybridopt::interrupt::request`]): the computation returns at its next check (the
//! integrator checks before every step, the optimizer before every evaluation), writes no
//! results folder, and the handler's exception propagates. The request is then withdrawn,
//! so the next call runs normally.

use crate::errors::IntoPy;
use hybridopt::error::Error;
use pyo3::prelude::*;
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::Duration;

/// How often the waiting thread lets Python handle signals.
const POLL: Duration = Duration::from_millis(50);

enum Waited<T> {
    Done(Result<T, Error>),
    Interrupted(PyErr),
}

/// Runs `work` with the GIL released, interruptible by Ctrl-C; its error as a Python
/// exception.
pub fn run<T: Send>(py: Python<'_>, work: impl FnOnce() -> Result<T, Error> + Send) -> PyResult<T> {
    if !on_main_thread(py)? {
        return py.detach(work).or_raise(py);
    }
    let waited = py.detach(|| {
        std::thread::scope(|scope| {
            let (tx, rx) = channel();
            scope.spawn(move || {
                // the receiver is gone only after an interruption, when the result is moot
                let _ = tx.send(work());
            });
            loop {
                match rx.recv_timeout(POLL) {
                    Ok(r) => return Some(Waited::Done(r)),
                    Err(RecvTimeoutError::Timeout) => {
                        if let Err(e) = Python::attach(|py| py.check_signals()) {
                            hybridopt::interrupt::request();
                            // wait for the worker to stop at its next check
                            let _ = rx.recv();
                            hybridopt::interrupt::clear();
                            return Some(Waited::Interrupted(e));
                        }
                    }
                    // the worker panicked; the scope re-raises its panic on exit
                    Err(RecvTimeoutError::Disconnected) => return None,
                }
            }
        })
    });
    match waited {
        Some(Waited::Done(r)) => r.or_raise(py),
        Some(Waited::Interrupted(e)) => Err(e),
        None => Err(pyo3::exceptions::PyRuntimeError::new_err(
            "internal: the computation ended without a result",
        )),
    }
}

/// Whether the calling thread is Python's main thread.
fn on_main_thread(py: Python<'_>) -> PyResult<bool> {
    let threading = py.import("threading")?;
    let main = threading.call_method0("main_thread")?;
    Ok(threading.call_method0("current_thread")?.is(&main))
}
