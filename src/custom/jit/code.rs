//! The memory the compiled functions live in, with the nodes their helper calls read
//! (`super::helpers`): shared by every program compiled into it (an `Arc`), freed with the
//! last one.

use super::super::expr::Node;
use cranelift_jit::JITModule;

/// A finalized module and the helper calls' nodes.
pub(super) struct Code {
    /// `None` only while dropping.
    module: Option<JITModule>,
    /// Boxed one by one: the code holds their addresses, which never move.
    #[allow(clippy::vec_box, reason = "the code holds each node's address")]
    _nodes: Vec<Box<Node>>,
}

impl Code {
    /// Owns `module` (finalized) and `nodes` (the helpers' table) from now on.
    #[allow(clippy::vec_box, reason = "the code holds each node's address")]
    pub(super) fn new(module: JITModule, nodes: Vec<Box<Node>>) -> Code {
        Code {
            module: Some(module),
            _nodes: nodes,
        }
    }
}

impl Drop for Code {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // SAFETY: the last `Arc<Code>` is going, and with it every `Compiled` that
            // held one of this module's function pointers (they are private to it).
            unsafe { m.free_memory() }
        }
    }
}

// SAFETY: once finalized the module is never used again but to free its memory, in `drop`,
// which owns the value; the code and the nodes are only read, by any thread.
unsafe impl Send for Code {}
unsafe impl Sync for Code {}
