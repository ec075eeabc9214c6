//! [`Entries`]: the scan over a node's (key, value) pairs, and finding one item among a
//! node's items.

/// Item `i` of `items` delimited by the u16 offsets in `offsets`; empty if out of range (which
/// a verified node never is).
#[inline(always)]
pub(super) fn item<'a>(items: &'a [u8], offsets: &[u8], i: usize) -> &'a [u8] {
    match offsets.get(2 * i..2 * i + 4) {
        Some(&[a, b, c, d]) => {
            let start = usize::from(u16::from_le_bytes([a, b]));
            let end = usize::from(u16::from_le_bytes([c, d]));
            items.get(start..end).unwrap_or(&[])
        }
        _ => &[],
    }
}

/// Item `i` of `items` when every item is `width` bytes long; empty if out of range.
#[inline(always)]
pub(super) fn fixed_item(items: &[u8], width: usize, i: usize) -> &[u8] {
    items.get(i * width..(i + 1) * width).unwrap_or(&[])
}

/// Iterator over a node's (key, value) pairs (see [`Node::entries`](super::Node::entries)).
///
/// Keeps one index: each pair is found from it by the node's common key and value widths
/// where it has them (no offsets read), else from the offsets. One counter is all the state
/// a step updates. The default value is empty.
#[derive(Clone, Debug, Default)]
pub struct Entries<'a> {
    pub(super) key_items: &'a [u8],
    pub(super) key_offsets: &'a [u8],
    /// Leaf: the value items; internal: the child addresses.
    pub(super) values: &'a [u8],
    /// Leaf: the value offsets (unused on internal nodes).
    pub(super) value_offsets: &'a [u8],
    /// Length of every key, or 0 to read the offsets.
    pub(super) key_width: usize,
    /// The same for values (always 20 on internal nodes).
    pub(super) value_width: usize,
    /// Index of the next pair.
    pub(super) next: usize,
    /// One past the last pair.
    pub(super) end: usize,
}

impl<'a> Entries<'a> {
    /// The pair at `i` (`i < end`).
    #[inline(always)]
    fn pair(&self, i: usize) -> (&'a [u8], &'a [u8]) {
        let key = match self.key_width {
            0 => item(self.key_items, self.key_offsets, i),
            w => fixed_item(self.key_items, w, i),
        };
        let value = match self.value_width {
            0 => item(self.values, self.value_offsets, i),
            w => fixed_item(self.values, w, i),
        };
        (key, value)
    }

    /// Skips `n` pairs.
    #[inline]
    pub fn skip_pairs(&mut self, n: usize) {
        self.next = self.next.saturating_add(n).min(self.end);
    }

    /// Keeps at most the next `n` pairs (like `Vec::truncate` on what is left).
    #[inline]
    pub fn truncate(&mut self, n: usize) {
        self.end = self.next.saturating_add(n).min(self.end);
    }

    /// On a node whose keys all have one width and whose values all have one width: the bytes
    /// of the pairs not yet returned, as `(keys, key width, values, value width)`, each slice
    /// a whole number of items. `None` on other nodes (or a layout that does not fit).
    #[inline]
    pub fn fixed_parts(&self) -> Option<(&'a [u8], usize, &'a [u8], usize)> {
        let (kw, vw) = (self.key_width, self.value_width);
        if kw == 0 || vw == 0 {
            return None;
        }
        let keys = self.key_items.get(self.next * kw..self.end * kw)?;
        let values = self.values.get(self.next * vw..self.end * vw)?;
        Some((keys, kw, values, vw))
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = (&'a [u8], &'a [u8]);

    /// The next pair: exactly `(key(i), value(i))` (on a layout that does not belong to the
    /// chunk, empty or wrong bytes, never an out-of-bounds read).
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.end {
            return None;
        }
        let i = self.next;
        self.next += 1;
        Some(self.pair(i))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.next;
        (n, Some(n))
    }

    #[inline]
    fn fold<B, F: FnMut(B, Self::Item) -> B>(mut self, init: B, mut f: F) -> B {
        let mut acc = init;
        let (kw, vw) = (self.key_width, self.value_width);
        if kw != 0 && vw != 0 {
            // Common widths: walk both arrays in fixed steps, no offsets and no index math.
            let keys = self
                .key_items
                .get(self.next * kw..self.end * kw)
                .unwrap_or(&[]);
            let values = self
                .values
                .get(self.next * vw..self.end * vw)
                .unwrap_or(&[]);
            for pair in keys.chunks_exact(kw).zip(values.chunks_exact(vw)) {
                acc = f(acc, pair);
            }
            return acc;
        }
        while self.next < self.end {
            let i = self.next;
            self.next += 1;
            acc = f(acc, self.pair(i));
        }
        acc
    }
}

impl ExactSizeIterator for Entries<'_> {}

/// Iterator over one side of a node's items in a range: its keys, or a leaf's values (see
/// [`Node::keys_in`](super::Node::keys_in), [`Node::values_in`](super::Node::values_in)).
/// [`Entries`] gives both sides of each pair; a reader that decodes a column at a time needs
/// one, and finding the other for every row cost a fifth of reading a field.
#[derive(Clone, Debug, Default)]
pub struct Items<'a> {
    pub(super) items: &'a [u8],
    pub(super) offsets: &'a [u8],
    /// Length of every item, or 0 to read the offsets.
    pub(super) width: usize,
    pub(super) next: usize,
    pub(super) end: usize,
}

impl<'a> Iterator for Items<'a> {
    type Item = &'a [u8];

    /// The next item (on a layout that does not belong to the chunk, empty or wrong bytes,
    /// never an out-of-bounds read).
    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        if self.next >= self.end {
            return None;
        }
        let i = self.next;
        self.next += 1;
        Some(match self.width {
            0 => item(self.items, self.offsets, i),
            w => fixed_item(self.items, w, i),
        })
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.next;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Items<'_> {}
