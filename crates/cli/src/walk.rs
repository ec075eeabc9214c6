//! Walking every chunk reachable from some roots: each chunk is fetched (hash-checked on first
//! read), verified as a message, counted, and its references followed. Used by `stats` and
//! `verify`.

use std::collections::{BTreeMap, HashSet};

use indicatif::ProgressBar;
use prollystore::store::{StoreError, StoreFastPaths};
use prollystore_format::message::Message;
use prollystore_format::Address;

use crate::error::Result;

/// Chunk counts and sizes by kind, and a size histogram.
#[derive(Default, Debug, Clone)]
pub struct ChunkStats {
    /// Prolly-tree chunks by level: (count, bytes).
    pub tree_levels: BTreeMap<u8, (u64, u64)>,
    /// Blob chunks: (count, bytes).
    pub blobs: (u64, u64),
    /// Other messages (address maps, commit closures): (count, bytes).
    pub other: (u64, u64),
    /// Chunks per size bucket `k` (sizes in `[2^k, 2^(k+1))`).
    pub histogram: BTreeMap<u32, u64>,
}

impl ChunkStats {
    /// Total chunks.
    pub fn chunks(&self) -> u64 {
        self.tree_levels.values().map(|v| v.0).sum::<u64>() + self.blobs.0 + self.other.0
    }

    /// Total bytes.
    pub fn bytes(&self) -> u64 {
        self.tree_levels.values().map(|v| v.1).sum::<u64>() + self.blobs.1 + self.other.1
    }

    fn add(&mut self, m: &Message<'_>) {
        let len = m.chunk().len() as u64;
        let slot = match m {
            Message::ProllyTree(n) => self.tree_levels.entry(n.level()).or_default(),
            Message::Blob(_) => &mut self.blobs,
            _ => &mut self.other,
        };
        slot.0 += 1;
        slot.1 += len;
        *self.histogram.entry(len.max(1).ilog2()).or_default() += 1;
    }

    /// Human-readable lines.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let tree: (u64, u64) = self
            .tree_levels
            .values()
            .fold((0, 0), |a, v| (a.0 + v.0, a.1 + v.1));
        s.push_str(&format!(
            "chunks: {} ({})\n  tree chunks: {} ({})\n",
            self.chunks(),
            size(self.bytes()),
            tree.0,
            size(tree.1)
        ));
        for (level, (n, b)) in &self.tree_levels {
            s.push_str(&format!(
                "    level {level}: {n} chunks, {}, average {}\n",
                size(*b),
                size(b / (*n).max(1))
            ));
        }
        s.push_str(&format!(
            "  blob chunks: {} ({})\n",
            self.blobs.0,
            size(self.blobs.1)
        ));
        if self.other.0 > 0 {
            s.push_str(&format!(
                "  other chunks: {} ({})\n",
                self.other.0,
                size(self.other.1)
            ));
        }
        s.push_str("chunk sizes:\n");
        let max = self.histogram.values().copied().max().unwrap_or(1).max(1);
        for (k, n) in &self.histogram {
            let bar = "#".repeat(((n * 40).div_ceil(max)) as usize);
            s.push_str(&format!(
                "  {:>9} .. {:<9} {:>9}  {bar}\n",
                size(1u64 << k),
                size(1u64 << (k + 1)),
                n
            ));
        }
        s
    }
}

/// `1.5 KiB`-style size.
pub fn size(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Visits every chunk reachable from `roots` not already in `seen`, adding it to `stats`.
pub fn walk<S: StoreFastPaths + ?Sized>(
    store: &S,
    roots: impl IntoIterator<Item = Address>,
    seen: &mut HashSet<Address>,
    stats: &mut ChunkStats,
    progress: &ProgressBar,
) -> Result<()> {
    let mut stack: Vec<Address> = roots.into_iter().collect();
    while let Some(a) = stack.pop() {
        if a.is_zero() || !seen.insert(a) {
            continue;
        }
        let chunk = store.get(&a)?.ok_or(StoreError::Missing(a))?;
        let m = Message::verify(chunk)
            .map_err(|source| StoreError::BadMessage { address: a, source })?;
        stats.add(&m);
        m.for_each_ref(|r| {
            if !seen.contains(&r) {
                stack.push(r)
            }
        });
        progress.inc(1);
    }
    Ok(())
}
