//! Batches of encoded rows on their way from the parsing thread to the tree builder, reused
//! rather than made per batch.

use crate::error::{Error, Result};

/// Encoded rows on their way from the parser to the tree builder (reused, never shrunk).
///
/// While every row's key and value have the same sizes as the first row's (always so for
/// schemas of fixed-width, non-null columns), no ends are listed: row `i` is at `i` times those
/// sizes. The first row of another size lists the ends of all rows from then on.
#[derive(Default)]
pub(super) struct Batch {
    pub(super) keys: Vec<u8>,
    pub(super) values: Vec<u8>,
    /// Number of rows.
    rows: usize,
    /// Key and value sizes of every row, while `key_ends` is empty.
    sizes: (usize, usize),
    key_ends: Vec<u32>,
    value_ends: Vec<u32>,
    /// The first row not known to be in key order: from the first row out of order in the
    /// input on, no row is checked (the builder sorts them).
    pub(super) first_unsorted: Option<usize>,
}

impl Batch {
    pub(super) fn clear(&mut self) {
        self.keys.clear();
        self.key_ends.clear();
        self.values.clear();
        self.value_ends.clear();
        self.rows = 0;
        self.sizes = (0, 0);
        self.first_unsorted = None;
    }

    pub(super) fn len(&self) -> usize {
        self.rows
    }

    /// True while rows are found from their sizes (no ends listed).
    fn uniform(&self) -> bool {
        self.key_ends.is_empty()
    }

    /// Counts the tuples appended since the lengths `(ks, vs)` of `keys` and `values` as one
    /// row; an error if the batch outgrows 4 GiB.
    #[inline]
    pub(super) fn end_row(&mut self, ks: usize, vs: usize) -> Result<()> {
        let sizes = (self.keys.len() - ks, self.values.len() - vs);
        self.end_rows(1, sizes)
    }

    /// Counts `n` rows of `sizes` (key and value bytes) appended last as rows.
    #[inline]
    pub(super) fn end_rows(&mut self, n: usize, sizes: (usize, usize)) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        if self.uniform() && (self.rows == 0 || self.sizes == sizes) {
            self.sizes = sizes;
            self.rows += n;
            return Ok(());
        }
        let too_big = || Error::msg("a batch of rows grew past 4 GiB");
        // Every end listed below is at most these.
        if u32::try_from(self.keys.len()).is_err() || u32::try_from(self.values.len()).is_err() {
            return Err(too_big());
        }
        if self.uniform() {
            // The first row of other sizes: list the ends of the rows before it.
            let (ks, vs) = self.sizes;
            for r in 1..=self.rows {
                let ke = u32::try_from(r * ks).map_err(|_| too_big())?;
                let ve = u32::try_from(r * vs).map_err(|_| too_big())?;
                self.key_ends.push(ke);
                self.value_ends.push(ve);
            }
        }
        let (mut ke, mut ve) = (
            self.keys.len() - n * sizes.0,
            self.values.len() - n * sizes.1,
        );
        for _ in 0..n {
            ke += sizes.0;
            ve += sizes.1;
            self.key_ends
                .push(u32::try_from(ke).map_err(|_| too_big())?);
            self.value_ends
                .push(u32::try_from(ve).map_err(|_| too_big())?);
        }
        self.rows += n;
        Ok(())
    }

    pub(super) fn key(&self, i: usize) -> &[u8] {
        self.row(i).0
    }

    /// Row `i` (empty tuples if there is none).
    pub(super) fn row(&self, i: usize) -> (&[u8], &[u8]) {
        let ((ks, ke), (vs, ve)) = if self.uniform() {
            let (k, v) = self.sizes;
            ((i * k, (i + 1) * k), (i * v, (i + 1) * v))
        } else {
            let end = |ends: &[u32], i: usize| ends.get(i).map_or(0, |&e| e as usize);
            let start = |ends: &[u32]| i.checked_sub(1).map_or(0, |p| end(ends, p));
            (
                (start(&self.key_ends), end(&self.key_ends, i)),
                (start(&self.value_ends), end(&self.value_ends, i)),
            )
        };
        (
            self.keys.get(ks..ke).unwrap_or(&[]),
            self.values.get(vs..ve).unwrap_or(&[]),
        )
    }

    /// Calls `f` with every row in order, until it fails.
    #[inline]
    pub(super) fn for_each<E>(
        &self,
        mut f: impl FnMut(&[u8], &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        match self.sizes {
            (ks, vs) if self.uniform() && ks > 0 && vs > 0 => {
                // `keys` and `values` hold exactly `rows` tuples of these sizes.
                let keys = self.keys.chunks_exact(ks);
                let values = self.values.chunks_exact(vs);
                for (k, v) in keys.zip(values) {
                    f(k, v)?;
                }
            }
            _ => {
                for i in 0..self.rows {
                    let (k, v) = self.row(i);
                    f(k, v)?;
                }
            }
        }
        Ok(())
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_list_ends_once_sizes_differ() {
        let mut b = Batch::default();
        let push = |b: &mut Batch, k: &[u8], v: &[u8]| {
            let (ks, vs) = (b.keys.len(), b.values.len());
            b.keys.extend_from_slice(k);
            b.values.extend_from_slice(v);
            b.end_row(ks, vs).unwrap();
        };
        push(&mut b, b"k1", b"v1x");
        push(&mut b, b"k2", b"v2x");
        assert!(b.uniform());
        b.keys.extend_from_slice(b"k3k4");
        b.values.extend_from_slice(b"v3xv4x");
        b.end_rows(2, (2, 3)).unwrap();
        assert!(b.uniform());
        push(&mut b, b"k5long", b"");
        assert!(!b.uniform());
        b.keys.extend_from_slice(b"k6k7");
        b.values.extend_from_slice(b"v6xv7x");
        b.end_rows(2, (2, 3)).unwrap();
        push(&mut b, b"k8", b"v8x");
        let want: Vec<(&[u8], &[u8])> = vec![
            (b"k1", b"v1x"),
            (b"k2", b"v2x"),
            (b"k3", b"v3x"),
            (b"k4", b"v4x"),
            (b"k5long", b""),
            (b"k6", b"v6x"),
            (b"k7", b"v7x"),
            (b"k8", b"v8x"),
        ];
        assert_eq!(b.len(), want.len());
        let mut got = Vec::new();
        b.for_each(|k, v| {
            got.push((k.to_vec(), v.to_vec()));
            Ok::<(), ()>(())
        })
        .unwrap();
        let got: Vec<(&[u8], &[u8])> = got.iter().map(|(k, v)| (&k[..], &v[..])).collect();
        assert_eq!(got, want);
        for (i, &(k, v)) in want.iter().enumerate() {
            assert_eq!(b.row(i), (k, v));
            assert_eq!(b.key(i), k);
        }
        b.clear();
        assert!(b.uniform() && b.len() == 0);
        // Empty values (a keys-only map): uniform, still walked row by row.
        push(&mut b, b"a", b"");
        push(&mut b, b"b", b"");
        let mut n = 0;
        b.for_each(|_, v| {
            assert!(v.is_empty());
            n += 1;
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(n, 2);
    }
}
