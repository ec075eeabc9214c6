//! [`SubtreeCounts`]: the rows under each item of a tree message (nodes, blobs, address maps,
//! commit closures), decoded as they are read.

use crate::varint::CountDeltas;

/// Rows under each item of a node, in order (see [`Node::subtree_counts`](super::Node::subtree_counts)).
#[derive(Clone, Debug)]
pub struct SubtreeCounts<'a> {
    pub(super) deltas: Option<CountDeltas<'a>>,
    pub(super) remaining: usize,
}

impl<'a> SubtreeCounts<'a> {
    /// `n` counts of 1 (leaf items).
    pub(crate) fn ones(n: usize) -> Self {
        SubtreeCounts {
            deltas: None,
            remaining: n,
        }
    }

    /// `n` counts decoded from varint deltas.
    pub(crate) fn decode(bytes: &'a [u8], n: usize) -> Self {
        SubtreeCounts {
            deltas: Some(CountDeltas::new(bytes)),
            remaining: n,
        }
    }
}

impl Iterator for SubtreeCounts<'_> {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        match &mut self.deltas {
            None => Some(1),
            Some(d) => match d.next() {
                Some(Ok(c)) => Some(c),
                _ => {
                    // Only reachable through a misused layout.
                    self.remaining = 0;
                    None
                }
            },
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.remaining))
    }
}
