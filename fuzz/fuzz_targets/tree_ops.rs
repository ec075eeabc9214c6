//! Batches of operations on a map of Dolt tuples, checked against a `BTreeMap` model.
//!
//! The input (see `tree_ops/input.rs`) picks a key shape and hash profile, then runs
//! operations: puts and deletes are buffered and applied by `Flush` (through `Map::editor` or
//! `Map::apply`); reads (get, contains, ordinal, first/last, ranges both ways with every bound
//! kind, `next_batch`, cursors that seek and step, prefix scans) run against the current
//! version; `Diff` compares any two versions; `Checkout` goes back to an earlier version and
//! `Merge` merges three of them. Every new version is checked for history independence: its
//! root must equal the root of `Map::from_sorted` over the model's rows in a fresh store.
//!
//! Key shapes: `(int64)` and `(int64, int64)` (the integer fast paths of `TupleSchema`),
//! `(int32, uint16)` (the narrow fast path), and `(int64 NULL, varbinary)` (the descriptor's
//! general comparator, NULL first). Values are `(varchar NULL, int64 NULL)` with strings from
//! empty to several hundred bytes, so a few hundred rows make trees of several levels and
//! chunk boundaries move as values change.
#![no_main]

#[path = "tree_ops/input.rs"]
mod input;

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::rc::Rc;
use std::sync::OnceLock;

use input::{Bnd, Input, Op, Val};
use libfuzzer_sys::fuzz_target;
use prollystore::format::tuple::{TupleBuilder, TupleDesc, Type};
use prollystore::format::{Address, Encoding, HashProfile};
use prollystore::tree::merge::{merge, Conflict, Resolution};
use prollystore::tuples::TupleSchema;
use prollystore::{DiffEntry, Map, MemoryStore};

/// Most operations run per input.
const MAX_OPS: usize = 64;
/// Most rows the model may hold (puts beyond it are dropped), bounding the work per input.
const MAX_ROWS: usize = 3000;
/// Most new versions (flushes, checkouts, merges) per input; each costs a build from scratch.
const MAX_VERSIONS: usize = 12;
/// Versions kept for `Diff`, `Checkout` and `Merge`.
const HISTORY: usize = 16;

/// A key in the model; its derived order is the tuple order of every shape (NULL first).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct MKey {
    a: Option<i64>,
    b: i64,
    s: Vec<u8>,
}

#[derive(Clone, Copy, Debug)]
enum Shape {
    I64,
    I64I64,
    I32U16,
    NullI64Bytes,
}

impl Shape {
    fn key_desc(self) -> TupleDesc {
        use Encoding::*;
        TupleDesc::new(match self {
            Shape::I64 => vec![Type::not_null(Int64)],
            Shape::I64I64 => vec![Type::not_null(Int64), Type::not_null(Int64)],
            Shape::I32U16 => vec![Type::not_null(Int32), Type::not_null(Uint16)],
            Shape::NullI64Bytes => vec![Type::nullable(Int64), Type::not_null(Bytes)],
        })
    }

    /// The model key for fuzzer key number `k` (several numbers may give one key).
    fn key(self, k: u16) -> MKey {
        let (a, b, s) = match self {
            Shape::I64 => (Some(i64::from(k as i16) * 1_000_000_007), 0, Vec::new()),
            Shape::I64I64 => (
                Some(i64::from(k >> 5) - 1024),
                (i64::from(k & 31) - 16) * (i64::MAX / 16),
                Vec::new(),
            ),
            Shape::I32U16 => (
                Some((i64::from(k >> 4) - 2048) * 1_000_003),
                i64::from(k & 15) * 4099,
                Vec::new(),
            ),
            Shape::NullI64Bytes => {
                let a = ((k >> 5) & 7 != 0).then(|| i64::from(k >> 8) - 128);
                let byte = [0x00, 0x41, 0x7f, 0xff][usize::from(k & 3)];
                (a, 0, vec![byte; usize::from((k >> 2) & 7)])
            }
        };
        MKey { a, b, s }
    }
}

/// Where value strings may start in [`text`].
const TEXT_START: usize = 1024;

/// Letters that value strings are cut from (a long string would take time to make per row).
fn text() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| {
        let mut x = 0x2545_f491_u32;
        (0..TEXT_START + 250 + 2 * 255)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                char::from(b'a' + (x % 26) as u8)
            })
            .collect()
    })
}

type Bytes = Rc<[u8]>;
/// Model rows: key tuple and value tuple by model key.
type Model = BTreeMap<MKey, (Bytes, Bytes)>;

/// One expected diff entry: key, value before, value after.
type Change<'a> = (&'a [u8], Option<&'a [u8]>, Option<&'a [u8]>);

struct State<'s> {
    shape: Shape,
    store: &'s MemoryStore,
    profile: HashProfile,
    schema: TupleSchema,
    kb: TupleBuilder,
    vb: TupleBuilder,
    map: Map<'s, MemoryStore, TupleSchema>,
    model: Model,
    /// Buffered edits: model key, key tuple, value tuple (`None` deletes).
    pending: Vec<(MKey, Bytes, Option<Bytes>)>,
    /// Versions, oldest first; the last is the current one.
    history: Vec<(Address, Model)>,
    versions: usize,
    /// The operation being run (for failure messages).
    step: usize,
}

impl<'s> State<'s> {
    fn new(store: &'s MemoryStore, profile: HashProfile, shape: Shape) -> State<'s> {
        let value = TupleDesc::new(vec![
            Type::nullable(Encoding::String),
            Type::nullable(Encoding::Int64),
        ]);
        let schema = TupleSchema::new(shape.key_desc(), value);
        let map = Map::empty(store, schema.clone()).expect("empty map");
        State {
            shape,
            store,
            profile,
            kb: TupleBuilder::new(schema.key.clone()),
            vb: TupleBuilder::new(schema.value.clone()),
            schema,
            history: vec![(map.root(), Model::new())],
            map,
            model: Model::new(),
            pending: Vec::new(),
            versions: 0,
            step: 0,
        }
    }

    fn key_bytes(&mut self, m: &MKey) -> Bytes {
        let kb = &mut self.kb;
        match self.shape {
            Shape::I64 => kb.put_int64(0, m.a.unwrap_or(0)),
            Shape::I64I64 => kb
                .put_int64(0, m.a.unwrap_or(0))
                .and_then(|()| kb.put_int64(1, m.b)),
            Shape::I32U16 => kb
                .put_int32(0, m.a.unwrap_or(0) as i32)
                .and_then(|()| kb.put_uint16(1, m.b as u16)),
            Shape::NullI64Bytes => match m.a {
                Some(a) => kb.put_int64(0, a),
                None => kb.put_null(0),
            }
            .and_then(|()| kb.put_bytes(1, &m.s)),
        }
        .expect("key field");
        kb.build().expect("key tuple").as_bytes().into()
    }

    fn value_bytes(&mut self, k: u16, v: Val) -> Bytes {
        let len = if v.big {
            250 + 2 * usize::from(v.len)
        } else {
            usize::from(v.len % 64)
        };
        if len == 0 && !v.big && v.seed & 1 == 1 {
            self.vb.put_null(0).expect("null string");
        } else {
            let start = (usize::from(v.seed) * 7 + usize::from(k)) % TEXT_START;
            let s = &text()[start..start + len];
            self.vb.put_string(0, s).expect("string field");
        }
        match v.int {
            Some(i) => self.vb.put_int64(1, i64::from(i) * 0x0101_0101),
            None => self.vb.put_null(1),
        }
        .expect("int field");
        self.vb.build().expect("value tuple").as_bytes().into()
    }

    fn buffered_rows(&self) -> usize {
        self.model.len() + self.pending.len()
    }

    fn put(&mut self, k: u16, v: Val) {
        if self.buffered_rows() >= MAX_ROWS {
            return;
        }
        let m = self.shape.key(k);
        let key = self.key_bytes(&m);
        let value = self.value_bytes(k, v);
        self.pending.push((m, key, Some(value)));
    }

    fn delete(&mut self, k: u16) {
        let m = self.shape.key(k);
        let key = self.key_bytes(&m);
        self.pending.push((m, key, None));
    }

    fn run(&mut self, op: Op) {
        match op {
            Op::Put { key, val } => self.put(key, val),
            Op::Delete { key } => self.delete(key),
            Op::PutRun { key, n, val } => {
                for j in 0..n {
                    let v = Val {
                        len: val.len.wrapping_add(j.wrapping_mul(29)),
                        big: val.big,
                        seed: val.seed.wrapping_add(j),
                        int: val.int.map(|i| i.wrapping_add(j as i8)),
                    };
                    self.put(key.wrapping_add(u16::from(j)), v);
                }
            }
            Op::DeleteRun { key, n } => {
                for j in 0..u16::from(n) {
                    self.delete(key.wrapping_add(j));
                }
            }
            Op::Flush { editor } => {
                if self.versions < MAX_VERSIONS {
                    self.flush(editor);
                }
            }
            Op::Get { key } => self.check_get(key),
            Op::Ordinal { i } => self.check_ordinal(i),
            Op::Range { lo, hi, rev, batch } => self.check_range(lo, hi, rev, batch),
            Op::Seek { key, steps } => self.check_seek(key, steps),
            Op::Prefix { key } => self.check_prefix(key),
            Op::Diff { back } => {
                let (root, model) = self.version(back);
                let from = self.map.with_root(root);
                check_diff(&from, &self.map, &model, &self.model, self.step);
            }
            Op::Checkout { back } => {
                if self.versions < MAX_VERSIONS {
                    self.flush(false);
                    let (root, model) = self.version(back);
                    self.set_current(root, model);
                }
            }
            Op::Merge {
                base,
                right,
                resolve,
            } => {
                if self.versions < MAX_VERSIONS {
                    self.flush(false);
                    self.merge(base, right, resolve);
                }
            }
        }
    }

    /// The version `back` versions before the current one (modulo the history).
    fn version(&self, back: u8) -> (Address, Model) {
        let n = self.history.len();
        let (root, model) = &self.history[n - 1 - usize::from(back) % n];
        (*root, model.clone())
    }

    /// Makes a checked version current and records it.
    fn set_current(&mut self, root: Address, model: Model) {
        self.versions += 1;
        self.map = self.map.with_root(root);
        self.model = model.clone();
        if self.history.len() == HISTORY {
            self.history.remove(0);
        }
        self.history.push((root, model));
    }

    /// Applies the buffered edits and checks the new version and its diff from the old one.
    fn flush(&mut self, editor: bool) {
        let edits = std::mem::take(&mut self.pending);
        if edits.is_empty() {
            return;
        }
        let mut model = self.model.clone();
        for (m, k, v) in &edits {
            match v {
                Some(v) => model.insert(m.clone(), (k.clone(), v.clone())),
                None => model.remove(m),
            };
        }
        let edited = if editor {
            let mut ed = self.map.editor();
            for (_, k, v) in &edits {
                match v {
                    Some(v) => ed.put(k, v),
                    None => ed.delete(k),
                }
            }
            assert_eq!(ed.len(), edits.len());
            ed.flush()
        } else {
            self.map
                .apply(edits.iter().map(|(_, k, v)| (&k[..], v.as_deref())))
        }
        .unwrap_or_else(|e| panic!("step {}: edits failed: {e}", self.step));
        self.check_version(&edited, &model);
        check_diff(&self.map, &edited, &self.model, &model, self.step);
        let root = edited.root();
        self.set_current(root, model);
    }

    /// Three-way merge of the current version with two earlier ones; the result becomes current.
    fn merge(&mut self, base: u8, right: u8, resolve: u8) {
        let (base_root, base_model) = self.version(base);
        let (right_root, right_model) = self.version(right);
        let left_model = &self.model;
        let resolve = resolve % 3;
        let out = merge(
            self.store,
            &self.schema,
            base_root,
            self.map.root(),
            right_root,
            |_, _, _, r| match resolve {
                0 => Resolution::Value(r.map(<[u8]>::to_vec)),
                1 => Resolution::Conflict,
                _ => Resolution::Value(None),
            },
        )
        .unwrap_or_else(|e| panic!("step {}: merge failed: {e}", self.step));
        let mut keys: Vec<&MKey> = base_model
            .keys()
            .chain(left_model.keys())
            .chain(right_model.keys())
            .collect();
        keys.sort();
        keys.dedup();
        let mut want = Model::new();
        let mut conflicts = Vec::new();
        for m in keys {
            let (b, l, r) = (base_model.get(m), left_model.get(m), right_model.get(m));
            let value = |x: Option<&(Bytes, Bytes)>| x.map(|(_, v)| v.clone());
            let (bv, lv, rv) = (value(b), value(l), value(r));
            let merged = if bv == rv || lv == rv {
                l
            } else if bv == lv {
                r
            } else {
                match resolve {
                    0 => r,
                    1 => {
                        let key = b.or(l).or(r).map(|(k, _)| k.to_vec()).unwrap_or_default();
                        let own = |x: &Option<Bytes>| x.as_deref().map(<[u8]>::to_vec);
                        conflicts.push(Conflict {
                            key,
                            base: own(&bv),
                            left: own(&lv),
                            right: own(&rv),
                        });
                        l
                    }
                    _ => None,
                }
            };
            if let Some(row) = merged {
                want.insert(m.clone(), row.clone());
            }
        }
        if trace() {
            eprintln!(
                "tree_ops: merge, {} conflicts, {} rows",
                conflicts.len(),
                want.len()
            );
        }
        assert_eq!(
            out.conflicts, conflicts,
            "step {}: merge conflicts",
            self.step
        );
        let merged = self.map.with_root(out.root);
        self.check_version(&merged, &want);
        self.set_current(out.root, want);
    }

    /// A new version: same root as a build from scratch, same rows, count, first and last.
    fn check_version(&self, map: &Map<'s, MemoryStore, TupleSchema>, model: &Model) {
        let step = self.step;
        let scratch = MemoryStore::new(self.profile);
        let built = Map::from_sorted(
            &scratch,
            self.schema.clone(),
            model.values().map(|(k, v)| (&k[..], &v[..])),
        )
        .unwrap_or_else(|e| panic!("step {step}: build from scratch failed: {e}"));
        assert_eq!(
            map.root(),
            built.root(),
            "step {step}: root differs from the build from scratch of the same rows"
        );
        assert_eq!(
            map.count().expect("count"),
            model.len() as u64,
            "step {step}: count"
        );
        let rows = map.iter().expect("iter").map(|r| r.expect("row"));
        assert!(rows.eq(model.values().map(pair)), "step {step}: rows");
        let back = map
            .range_rev(Bound::Unbounded, Bound::Unbounded)
            .expect("range_rev")
            .map(|r| r.expect("row"));
        assert!(
            back.eq(model.values().rev().map(pair)),
            "step {step}: rows backward"
        );
        let first = map.first().expect("first");
        let last = map.last().expect("last");
        assert_eq!(first, model.values().next().map(pair), "step {step}: first");
        assert_eq!(
            last,
            model.values().next_back().map(pair),
            "step {step}: last"
        );
    }

    fn check_get(&mut self, k: u16) {
        let m = self.shape.key(k);
        let key = self.key_bytes(&m);
        let want = self.model.get(&m).map(|(_, v)| &v[..]);
        assert_eq!(
            self.map.get(&key).expect("get"),
            want,
            "step {}: get",
            self.step
        );
        assert_eq!(
            self.map.contains(&key).expect("contains"),
            want.is_some(),
            "step {}: contains",
            self.step
        );
    }

    fn check_ordinal(&self, i: u16) {
        let i = usize::from(i) % (self.model.len() + 2);
        let want = self.model.values().nth(i).map(|(k, v)| (&k[..], &v[..]));
        let got = self.map.get_ordinal(i as u64).expect("get_ordinal");
        assert_eq!(got, want, "step {}: ordinal {i}", self.step);
    }

    fn bound(&mut self, b: Bnd) -> (Bound<MKey>, Bound<Bytes>) {
        match b {
            Bnd::Unbounded => (Bound::Unbounded, Bound::Unbounded),
            Bnd::Included(k) => {
                let m = self.shape.key(k);
                let key = self.key_bytes(&m);
                (Bound::Included(m), Bound::Included(key))
            }
            Bnd::Excluded(k) => {
                let m = self.shape.key(k);
                let key = self.key_bytes(&m);
                (Bound::Excluded(m), Bound::Excluded(key))
            }
        }
    }

    fn check_range(&mut self, lo: Bnd, hi: Bnd, rev: bool, batch: u8) {
        let (mlo, lo) = self.bound(lo);
        let (mhi, hi) = self.bound(hi);
        let mut want: Vec<(&[u8], &[u8])> = model_range(&self.model, mlo, mhi)
            .map(|(k, v)| (&k[..], &v[..]))
            .collect();
        if rev {
            want.reverse();
        }
        let (lo, hi) = (as_slice(&lo), as_slice(&hi));
        let mut it = if rev {
            self.map.range_rev(lo, hi)
        } else {
            self.map.range(lo, hi)
        }
        .expect("range");
        let mut got = Vec::new();
        if batch == 0 {
            got.extend(it.by_ref().map(|r| r.expect("range row")));
        } else {
            let max = usize::from(batch);
            loop {
                let n = it
                    .next_batch(max, |k, v| got.push((k, v)))
                    .expect("next_batch");
                assert!(n <= max);
                if n == 0 {
                    break;
                }
            }
        }
        // Exhausted stays exhausted.
        assert!(it.next().is_none(), "step {}: row after the end", self.step);
        assert!(
            got == want,
            "step {}: range {lo:?}..{hi:?} rev={rev} batch={batch}: {} rows, want {}",
            self.step,
            got.len(),
            want.len()
        );
    }

    fn check_seek(&mut self, k: u16, steps: i8) {
        let m = self.shape.key(k);
        let key = self.key_bytes(&m);
        let rows: Vec<&(Bytes, Bytes)> = self.model.values().collect();
        let n = rows.len() as i64;
        // Model position: -1 before the start, n past the end.
        let mut p = self.model.range(..&m).count() as i64;
        let mut c = self.map.seek(&key).expect("seek");
        let store = self.map.store();
        for s in 0..=i32::from(steps).unsigned_abs() {
            if s > 0 {
                let moved = if steps > 0 {
                    let moved = c.advance(store).expect("advance");
                    p = (p + 1).min(n);
                    moved
                } else {
                    let moved = c.retreat(store).expect("retreat");
                    p = (p - 1).max(-1);
                    moved
                };
                assert_eq!(
                    moved,
                    (0..n).contains(&p),
                    "step {}: cursor move",
                    self.step
                );
            }
            let at = (0..n).contains(&p);
            assert_eq!(c.valid(), at, "step {}: cursor validity at {p}", self.step);
            if at {
                let (rk, rv) = rows[p as usize];
                assert_eq!(c.key(), &rk[..], "step {}: cursor key at {p}", self.step);
                assert_eq!(c.value(), &rv[..], "step {}: cursor value", self.step);
            }
            if p >= 0 {
                assert_eq!(c.ordinal(), p as u64, "step {}: cursor ordinal", self.step);
            }
        }
    }

    fn check_prefix(&mut self, k: u16) {
        let m = self.shape.key(k);
        let key = self.key_bytes(&m);
        let want: Vec<(&[u8], &[u8])> = self
            .model
            .iter()
            .filter(|(x, _)| x.a == m.a)
            .map(|(_, (k, v))| (&k[..], &v[..]))
            .collect();
        let got: Vec<(&[u8], &[u8])> = self
            .map
            .prefix_rows(&key, 1)
            .expect("prefix_rows")
            .map(|r| r.expect("prefix row"))
            .collect();
        assert!(got == want, "step {}: prefix rows", self.step);
    }
}

/// `TREE_OPS_TRACE=1` prints what each input built (to check what seeds reach).
fn trace() -> bool {
    static TRACE: OnceLock<bool> = OnceLock::new();
    *TRACE.get_or_init(|| std::env::var_os("TREE_OPS_TRACE").is_some())
}

fn pair((k, v): &(Bytes, Bytes)) -> (&[u8], &[u8]) {
    (k, v)
}

fn as_slice(b: &Bound<Bytes>) -> Bound<&[u8]> {
    match b {
        Bound::Unbounded => Bound::Unbounded,
        Bound::Included(k) => Bound::Included(&k[..]),
        Bound::Excluded(k) => Bound::Excluded(&k[..]),
    }
}

/// `model.range` for any bounds (empty where `BTreeMap::range` would panic).
fn model_range(
    model: &Model,
    lo: Bound<MKey>,
    hi: Bound<MKey>,
) -> impl DoubleEndedIterator<Item = &(Bytes, Bytes)> {
    let empty = match (&lo, &hi) {
        (Bound::Included(a) | Bound::Excluded(a), Bound::Included(b) | Bound::Excluded(b)) => {
            match a.cmp(b) {
                Ordering::Greater => true,
                Ordering::Equal => {
                    matches!((&lo, &hi), (Bound::Excluded(_), Bound::Excluded(_)))
                }
                Ordering::Less => false,
            }
        }
        _ => false,
    };
    let range = if empty {
        None
    } else {
        Some(model.range((lo, hi)).map(|(_, row)| row))
    };
    range.into_iter().flatten()
}

/// The diff from `from` to `to` (and back) equals the models' difference.
fn check_diff(
    from: &Map<'_, MemoryStore, TupleSchema>,
    to: &Map<'_, MemoryStore, TupleSchema>,
    from_model: &Model,
    to_model: &Model,
    step: usize,
) {
    let mut want: Vec<(&MKey, Change<'_>)> = Vec::new();
    for (m, (k, v)) in from_model {
        match to_model.get(m) {
            None => want.push((m, (k, Some(v), None))),
            // Unchanged rows share their bytes; compare only the others.
            Some((_, w)) if !Rc::ptr_eq(v, w) && v != w => want.push((m, (k, Some(v), Some(w)))),
            Some(_) => {}
        }
    }
    for (m, (k, v)) in to_model {
        if !from_model.contains_key(m) {
            want.push((m, (k, None, Some(v))));
        }
    }
    want.sort_by(|a, b| a.0.cmp(b.0));
    check_diff_entries(from, to, &want, &format!("step {step}: diff"));
    for (_, (_, x, y)) in &mut want {
        std::mem::swap(x, y);
    }
    check_diff_entries(to, from, &want, &format!("step {step}: reverse diff"));
}

/// Checks the diff from `a` to `b` against `want`.
fn check_diff_entries(
    a: &Map<'_, MemoryStore, TupleSchema>,
    b: &Map<'_, MemoryStore, TupleSchema>,
    want: &[(&MKey, Change<'_>)],
    what: &str,
) {
    let mut total = 0;
    for (i, e) in a.diff(b).expect("diff").enumerate() {
        let got = match e.expect("diff entry") {
            DiffEntry::Added { key, to } => (key, None, Some(to)),
            DiffEntry::Removed { key, from } => (key, Some(from), None),
            DiffEntry::Modified { key, from, to } => (key, Some(from), Some(to)),
        };
        assert!(
            want.get(i).map(|w| w.1) == Some(got),
            "{what}: entry {i} differs (want {} entries)",
            want.len()
        );
        total += 1;
    }
    assert_eq!(total, want.len(), "{what}: entry count");
}

fuzz_target!(|input: Input| {
    let shape = match input.config & 3 {
        0 => Shape::I64,
        1 => Shape::I64I64,
        2 => Shape::I32U16,
        _ => Shape::NullI64Bytes,
    };
    let profile = if input.config & 4 != 0 {
        HashProfile::Dolt
    } else {
        HashProfile::Blake3
    };
    let store = MemoryStore::new(profile);
    let mut state = State::new(&store, profile, shape);
    for (i, op) in input.ops.into_iter().take(MAX_OPS).enumerate() {
        state.step = i;
        state.run(op);
    }
    state.step = MAX_OPS;
    state.flush(true);
    if trace() {
        let height = state.map.height().expect("height");
        eprintln!(
            "tree_ops: {} versions, {} rows, height {height}",
            state.versions,
            state.model.len()
        );
    }
    // Point lookups of (at most about 500 of) the final rows.
    let keys: Vec<MKey> = state.model.keys().cloned().collect();
    for m in keys.iter().step_by(keys.len() / 500 + 1) {
        let key = state.key_bytes(m);
        let want = state.model.get(m).map(|(_, v)| &v[..]);
        assert_eq!(state.map.get(&key).expect("get"), want, "final get");
    }
});
