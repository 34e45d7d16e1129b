//! How a setup holds its system.

use std::sync::Arc;

/// How a setup holds its system: borrowed for a scoped run, or shared through an `Arc`
/// so that the setup owns what it needs and can live inside long-lived objects (a Python
/// handle, a job of a thread pool) as a `Setup<'static, S>`.
pub enum SystemRef<'a, S> {
    Borrowed(&'a S),
    Shared(Arc<S>),
}

impl<S> Clone for SystemRef<'_, S> {
    fn clone(&self) -> Self {
        match self {
            SystemRef::Borrowed(s) => SystemRef::Borrowed(s),
            SystemRef::Shared(s) => SystemRef::Shared(Arc::clone(s)),
        }
    }
}

impl<S> std::ops::Deref for SystemRef<'_, S> {
    type Target = S;
    fn deref(&self) -> &S {
        match self {
            SystemRef::Borrowed(s) => s,
            SystemRef::Shared(s) => s,
        }
    }
}
