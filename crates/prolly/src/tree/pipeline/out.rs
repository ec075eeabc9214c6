//! Where completed nodes go: the store, the schema, and a node writer borrowed from a small
//! per-thread pool.

use prollystore_format::message::NodeWriter;
use prollystore_format::Address;

use crate::error::TreeError;
use crate::store::StoreFastPaths;
use crate::tree::schema::TreeSchema;

/// Where completed nodes go: the store, a reusable serializer, and the schema.
pub(crate) struct NodeOut<'a, S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized> {
    pub store: &'a S,
    pub schema: &'a T,
    pub writer: NodeWriter,
    pub with_addresses: bool,
}

thread_local! {
    /// Serializers whose buffers have grown to node size, kept between builds and edits so
    /// that a small edit does not pay for growing them again (process-wide state: see
    /// [`crate::process`]).
    static WRITERS: std::cell::RefCell<Vec<NodeWriter>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Serializers the calling thread keeps.
const KEPT_WRITERS: usize = 4;

/// Drops the serializers the calling thread keeps.
pub(crate) fn release_thread_writers() {
    let _ = WRITERS.try_with(|w| w.borrow_mut().clear());
}

impl<'a, S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized> NodeOut<'a, S, T> {
    pub fn new(store: &'a S, schema: &'a T) -> Self {
        let writer = WRITERS
            .try_with(|w| w.borrow_mut().pop())
            .ok()
            .flatten()
            .unwrap_or_default();
        NodeOut {
            store,
            schema,
            writer,
            with_addresses: schema.values_have_addresses(),
        }
    }
}

impl<S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized> Drop for NodeOut<'_, S, T> {
    fn drop(&mut self) {
        let writer = std::mem::take(&mut self.writer);
        let _ = WRITERS.try_with(|w| {
            let mut w = w.borrow_mut();
            if w.len() < KEPT_WRITERS {
                w.push(writer);
            }
        });
    }
}

/// Receives each completed node: `(out, last key, address, tree count)`.
pub(crate) type Emit<'e, S, T> =
    dyn FnMut(&mut NodeOut<'_, S, T>, &[u8], Address, u64) -> Result<(), TreeError> + 'e;
