//! Every row of an import held in memory: key and value tuples in two arenas, with their CSV
//! lines. Imports that cannot stream into a new tree (edits of an existing map, values that may
//! go out of band, input out of key order) read every row into one; it sorts them when needed
//! and names the lines of a duplicate key.

use prollystore::tuples::TupleSchema;
use prollystore::TreeSchema;

use crate::error::{Error, Result};

/// Parsed rows: key and value tuples back to back, with their end offsets and CSV line numbers.
#[derive(Default)]
pub struct Rows {
    pub(super) keys: Vec<u8>,
    pub(super) key_ends: Vec<usize>,
    pub(super) values: Vec<u8>,
    pub(super) value_ends: Vec<usize>,
    pub(super) lines: Vec<u64>,
    /// Row indexes in key order; `None` while the input order is the key order.
    pub(super) order: Option<Vec<u32>>,
    pub(super) sorted_input: bool,
}

fn slice<'a>(arena: &'a [u8], ends: &[usize], i: usize) -> &'a [u8] {
    let start = if i == 0 {
        0
    } else {
        ends.get(i - 1).copied().unwrap_or(0)
    };
    let end = ends.get(i).copied().unwrap_or(start);
    arena.get(start..end).unwrap_or(&[])
}

impl Rows {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.key_ends.len()
    }

    /// True if there are none.
    pub fn is_empty(&self) -> bool {
        self.key_ends.is_empty()
    }

    /// True if the input already came in strictly increasing key order (no sort was needed).
    pub fn sorted_input(&self) -> bool {
        self.sorted_input
    }

    pub(super) fn key(&self, i: usize) -> &[u8] {
        slice(&self.keys, &self.key_ends, i)
    }

    pub(super) fn value(&self, i: usize) -> &[u8] {
        slice(&self.values, &self.value_ends, i)
    }

    /// The rows in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        let n = self.len();
        let idx: Box<dyn Iterator<Item = usize> + '_> = match &self.order {
            Some(o) => Box::new(o.iter().map(|&i| i as usize)),
            None => Box::new(0..n),
        };
        idx.map(move |i| (self.key(i), self.value(i)))
    }

    /// Orders the rows by key (skipped when the input was sorted); duplicate keys are an error
    /// naming both lines.
    pub fn sort(&mut self, schema: &TupleSchema) -> Result<()> {
        if self.sorted_input {
            return Ok(());
        }
        let n = u32::try_from(self.len())
            .map_err(|_| Error::msg("more than 4294967295 rows in one import"))?;
        let mut order: Vec<u32> = (0..n).collect();
        order.sort_by(|&a, &b| {
            schema
                .compare_keys(self.key(a as usize), self.key(b as usize))
                .then(a.cmp(&b))
        });
        for w in order.windows(2) {
            if let [a, b] = *w {
                if schema
                    .compare_keys(self.key(a as usize), self.key(b as usize))
                    .is_eq()
                {
                    let la = self.lines.get(a as usize).copied().unwrap_or(0);
                    let lb = self.lines.get(b as usize).copied().unwrap_or(0);
                    return Err(Error::msg(format!(
                        "line {lb}: duplicate key (same key as line {la})"
                    )));
                }
            }
        }
        self.order = Some(order);
        Ok(())
    }
}
