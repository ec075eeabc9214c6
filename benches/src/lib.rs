//! Shared helpers for the benchmarks (fixtures, baselines).

/// The 1M-row map the tree benchmarks and `examples/tree_workload.rs` share: rows of
/// `(int64, int64) -> (int64, int64)`, the shape Dolt's Go engine was measured on.
pub mod int_pairs {
    use prollystore::format::tuple::{TupleDesc, Type};
    use prollystore::format::Encoding;
    use prollystore::map::Edit;
    use prollystore::tuples::TupleSchema;

    /// Rows in the benchmark map.
    pub const N: usize = 1_000_000;

    /// A `(key, value)` row of two 20-byte tuples.
    pub type Row = ([u8; 20], [u8; 20]);

    /// An edit to the map: a key and its new value (`None` deletes).
    pub type OwnedEdit = ([u8; 20], Option<[u8; 20]>);

    /// A two-field int64 tuple: 16 bytes of values, the offset of field 1, the count.
    pub fn tuple(a: i64, b: i64) -> [u8; 20] {
        let mut t = [0u8; 20];
        t[..8].copy_from_slice(&a.to_le_bytes());
        t[8..16].copy_from_slice(&b.to_le_bytes());
        t[16..18].copy_from_slice(&8u16.to_le_bytes());
        t[18..20].copy_from_slice(&2u16.to_le_bytes());
        t
    }

    /// Keys and values both `(int64 not null, int64 not null)`.
    pub fn schema() -> TupleSchema {
        let d = TupleDesc::new(vec![
            Type::not_null(Encoding::Int64),
            Type::not_null(Encoding::Int64),
        ]);
        TupleSchema::new(d.clone(), d)
    }

    /// Rows with even first key fields, so odd ones can be inserted between them.
    pub fn rows(n: usize) -> Vec<Row> {
        (0..n as i64)
            .map(|i| (tuple(2 * i, i % 7), tuple(i * 31, -i)))
            .collect()
    }

    /// Borrowed edits for `Map::apply_sorted`.
    pub fn as_edits(e: &[OwnedEdit]) -> Vec<Edit<'_>> {
        e.iter()
            .map(|(k, v)| (&k[..], v.as_ref().map(|v| &v[..])))
            .collect()
    }

    /// Bytes of edited nodes a scratch store takes before the edit benchmarks replace it by a
    /// fresh copy of the base map: each batch of edits applies to the base map and adds its
    /// rewritten nodes to the store it runs in, so one shared store would grow with
    /// criterion's iteration count (one reached 2.4 GB, and the slope criterion fits
    /// followed the growth, not the edits).
    pub const SCRATCH_GROWTH: usize = 64 << 20;

    /// Batches of `count` edits to run on one scratch store ([`SCRATCH_GROWTH`]): a batch
    /// adds ~4.7 KB per edit in large batches (about one leaf each, plus parents), and at
    /// least four 4 KiB nodes (a leaf and its ancestors).
    pub fn batches_per_scratch(count: usize) -> usize {
        let batch_bytes = (count * 4700).max(16 << 10);
        (SCRATCH_GROWTH / batch_bytes).max(4)
    }

    /// The keys of rows `probes`, copied next to each other in probe order: a probe then
    /// reads its key from a line the previous probe already brought in, where `data[p].0`
    /// is a cache miss of its own in a 40 MB array (the BTreeMap baseline makes its keys from
    /// the row number and pays none).
    pub fn flat_keys(data: &[Row], probes: &[usize]) -> Vec<[u8; 20]> {
        probes.iter().map(|&p| data[p].0).collect()
    }
}
