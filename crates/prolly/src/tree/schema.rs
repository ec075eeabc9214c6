//! What tree code needs to know about the tuples it stores: how keys are ordered and where the
//! chunk addresses inside values are.

use std::cmp::Ordering;

use prollystore_format::message::Node;

/// The order of a tree's keys and the addresses its values carry.
///
/// Row and index maps use their tuple descriptors (Dolt's comparator); address maps and tests
/// use plain byte order ([`BytesSchema`]).
pub trait TreeSchema {
    /// Orders two keys (total; Dolt's order for the tree's kind).
    fn compare_keys(&self, a: &[u8], b: &[u8]) -> Ordering;

    /// True if some value may hold chunk addresses (out-of-band fields). When false, builders
    /// skip [`TreeSchema::push_value_address_offsets`] entirely.
    fn values_have_addresses(&self) -> bool;

    /// Appends `base +` the byte offset of every chunk address in `value`, in Dolt's order
    /// (last field first within the tuple).
    fn push_value_address_offsets(&self, value: &[u8], base: usize, out: &mut Vec<u16>);

    /// True if two different value byte strings mean the same value (Dolt's diff does not
    /// report such a change, e.g. decimal `1.5` → `1.50`). Only called on unequal bytes.
    fn values_equivalent(&self, a: &[u8], b: &[u8]) -> bool {
        let _ = (a, b);
        false
    }

    /// Smallest `i` with `key <= node.key(i)` (`node.count()` if none): the search every
    /// descent does. A schema with a cheaper way to order keys against one fixed key
    /// overrides it; the answer must equal this default's.
    ///
    /// The default brings all of the node's keys into cache first (one independent load per
    /// cache line), then binary-searches with [`TreeSchema::compare_keys`].
    #[inline]
    fn lower_bound(&self, node: &Node<'_>, key: &[u8]) -> usize {
        super::prefetch::touch_keys(node);
        node.partition_point(|k| self.compare_keys(k, key) == Ordering::Less)
    }

    /// [`TreeSchema::lower_bound`] on a node whose keys are known to lie after `after` and up
    /// to `last` (the parent's keys around the entry that led here: a descent knows them for
    /// free). The answer is the same whatever the bounds, even wrong ones; a schema may use
    /// them to guess where `key` falls before reading the node. The default ignores them.
    #[inline]
    fn lower_bound_within(
        &self,
        node: &Node<'_>,
        key: &[u8],
        after: Option<&[u8]>,
        last: Option<&[u8]>,
    ) -> usize {
        let _ = (after, last);
        self.lower_bound(node, key)
    }

    /// True where the store keeps this tree's nodes in another format than `ProllyTreeNode`
    /// (Dolt's address maps and commit closures: the store turns each node it is given into
    /// its own kind and back) and so gives a node its address only when it stores it: builds
    /// and edits then never hash nodes themselves (no batches, no hash thread). False (the
    /// default) for every tree of `ProllyTreeNode`s.
    #[inline]
    fn foreign_nodes(&self) -> bool {
        false
    }

    /// False where leaves are stored without their values (a commit closure's), so that a leaf
    /// read back holds smaller items than were appended when it was written, and where its
    /// nodes end depends on which items were appended together. An edit then re-chunks as
    /// Dolt's `ApplyMutations` does: it takes no shortcut that assumes an old leaf's items
    /// re-read end where they ended, and a rewritten region ends only where an old leaf's own
    /// last item, re-read, ends a node. True (the default): leaves keep their values.
    #[inline]
    fn leaf_values_kept(&self) -> bool {
        true
    }

    /// A word that orders keys as [`TreeSchema::compare_keys`] does, as far as it goes, for
    /// sorting many keys fast (the sorting builder): for two keys with words, a smaller word
    /// means a smaller key; equal words say nothing unless both words are exact (the `bool`),
    /// in which case the keys are equal. `None` (the default) for keys without such a word.
    #[inline]
    fn sort_word(&self, key: &[u8]) -> Option<(u64, bool)> {
        let _ = key;
        None
    }
}

/// Bytewise key order and values without addresses.
#[derive(Clone, Copy, Debug, Default)]
pub struct BytesSchema;

impl TreeSchema for BytesSchema {
    #[inline]
    fn compare_keys(&self, a: &[u8], b: &[u8]) -> Ordering {
        a.cmp(b)
    }
    fn values_have_addresses(&self) -> bool {
        false
    }
    fn push_value_address_offsets(&self, _: &[u8], _: usize, _: &mut Vec<u16>) {}
    #[inline]
    fn sort_word(&self, key: &[u8]) -> Option<(u64, bool)> {
        // The first eight bytes, zero-padded: a shorter key pads below any longer one that
        // shares its bytes, so equal words are never exact.
        let mut w = [0u8; 8];
        let n = key.len().min(8);
        w[..n].copy_from_slice(&key[..n]);
        Some((u64::from_be_bytes(w), false))
    }
}

impl<T: TreeSchema + ?Sized> TreeSchema for &T {
    #[inline]
    fn compare_keys(&self, a: &[u8], b: &[u8]) -> Ordering {
        (**self).compare_keys(a, b)
    }
    fn values_have_addresses(&self) -> bool {
        (**self).values_have_addresses()
    }
    fn push_value_address_offsets(&self, value: &[u8], base: usize, out: &mut Vec<u16>) {
        (**self).push_value_address_offsets(value, base, out)
    }
    fn values_equivalent(&self, a: &[u8], b: &[u8]) -> bool {
        (**self).values_equivalent(a, b)
    }
    #[inline]
    fn sort_word(&self, key: &[u8]) -> Option<(u64, bool)> {
        (**self).sort_word(key)
    }
    #[inline]
    fn foreign_nodes(&self) -> bool {
        (**self).foreign_nodes()
    }
    #[inline]
    fn leaf_values_kept(&self) -> bool {
        (**self).leaf_values_kept()
    }
    #[inline]
    fn lower_bound(&self, node: &Node<'_>, key: &[u8]) -> usize {
        (**self).lower_bound(node, key)
    }
    #[inline]
    fn lower_bound_within(
        &self,
        node: &Node<'_>,
        key: &[u8],
        after: Option<&[u8]>,
        last: Option<&[u8]>,
    ) -> usize {
        (**self).lower_bound_within(node, key, after, last)
    }
}
