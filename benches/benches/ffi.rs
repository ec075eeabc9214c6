//! The C ABI against the Rust API, in the same run over the same file store (200k rows of
//! `(int64) -> (string, int64)`): random point gets and a full forward scan; and over two
//! memory stores holding the same rows, a batch of 1,000 edits (which on a memory store takes
//! the lending fast path, from C as from Rust). The C ABI side calls the exported `extern "C"`
//! functions (the same code a C program runs). After criterion's groups, a direct interleaved
//! measurement prints the overhead ratios.

use std::ffi::CString;
use std::hint::black_box;
use std::ptr;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use prollystore::format::tuple::{TupleBuilder, TupleDesc, Type};
use prollystore::format::{Address, Encoding, HashProfile};
use prollystore::store::{FileStore, RootUpdate};
use prollystore::tuples::TupleSchema;
use prollystore::Map;
use prollystore::MemoryStore;
use prollystore_ffi::iter::{
    prolly_bound, prolly_cursor, prolly_cursor_free, prolly_cursor_next, prolly_cursor_next_batch,
    prolly_map_range,
};
use prollystore_ffi::map::{
    prolly_edit, prolly_map, prolly_map_apply, prolly_map_builder_append,
    prolly_map_builder_finish, prolly_map_builder_new, prolly_map_free, prolly_map_get,
    prolly_map_open, prolly_row,
};
use prollystore_ffi::result::prolly_result;
use prollystore_ffi::schema::{prolly_schema, prolly_schema_free, prolly_schema_new, prolly_type};
use prollystore_ffi::store::{
    prolly_address, prolly_store, prolly_store_free, prolly_store_new_memory,
    prolly_store_open_file, prolly_store_root_get,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const ROWS: i64 = 200_000;
const GETS: usize = 1000;
/// Edits per batch in the edit measurement (updates of existing keys and inserts between them).
const EDITS: usize = 1000;
/// Distinct batches of edits, more than either side applies in the measurement: every batch
/// makes new chunks (a batch applied again would only find its chunks stored already).
const EDIT_BATCHES: usize = 64;

fn schema() -> TupleSchema {
    TupleSchema::new(
        TupleDesc::new(vec![Type::not_null(Encoding::Int64)]),
        TupleDesc::new(vec![
            Type::not_null(Encoding::String),
            Type::not_null(Encoding::Int64),
        ]),
    )
}

struct Fixture {
    dir: tempfile::TempDir,
    rust: FileStore,
    keys: Vec<Vec<u8>>,
    c_store: *mut prolly_store,
    c_schema: *mut prolly_schema,
    c_map: *mut prolly_map,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        prolly_map_free(self.c_map);
        prolly_schema_free(self.c_schema);
        prolly_store_free(self.c_store);
    }
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let s = schema();
    {
        let mut w = FileStore::create(dir.path(), HashProfile::Blake3).unwrap();
        let (mut kb, mut vb) = (
            TupleBuilder::new(s.key.clone()),
            TupleBuilder::new(s.value.clone()),
        );
        let rows: Vec<(Vec<u8>, Vec<u8>)> = (0..ROWS)
            .map(|i| {
                kb.put_int64(0, i * 3).unwrap();
                vb.put_string(0, &format!("name-{i:08}")).unwrap();
                vb.put_int64(1, i).unwrap();
                (
                    kb.build().unwrap().as_bytes().to_vec(),
                    vb.build().unwrap().as_bytes().to_vec(),
                )
            })
            .collect();
        let m =
            Map::from_sorted(&w, s.clone(), rows.iter().map(|(k, v)| (&k[..], &v[..]))).unwrap();
        let root = m.root();
        w.commit(&[RootUpdate::new("main", None, Some(root))])
            .unwrap();
    }
    let rust = FileStore::open(dir.path()).unwrap();
    let mut rng = SmallRng::seed_from_u64(7);
    let mut kb = TupleBuilder::new(s.key.clone());
    let keys = (0..GETS)
        .map(|_| {
            kb.put_int64(0, rng.gen_range(0..ROWS) * 3).unwrap();
            kb.build().unwrap().as_bytes().to_vec()
        })
        .collect();

    let path = CString::new(dir.path().to_str().unwrap()).unwrap();
    let mut c_store = ptr::null_mut();
    assert_eq!(
        prolly_store_open_file(path.as_ptr(), 0, &mut c_store),
        prolly_result::Ok
    );
    let kt = [prolly_type {
        encoding: Encoding::Int64.code(),
        nullable: 0,
    }];
    let vt = [
        prolly_type {
            encoding: Encoding::String.code(),
            nullable: 0,
        },
        prolly_type {
            encoding: Encoding::Int64.code(),
            nullable: 0,
        },
    ];
    let mut c_schema = ptr::null_mut();
    assert_eq!(
        prolly_schema_new(kt.as_ptr(), 1, vt.as_ptr(), 2, &mut c_schema),
        prolly_result::Ok
    );
    let mut root = prolly_address::default();
    let name = CString::new("main").unwrap();
    assert_eq!(
        prolly_store_root_get(c_store, name.as_ptr(), &mut root),
        prolly_result::Ok
    );
    let mut c_map = ptr::null_mut();
    assert_eq!(
        prolly_map_open(c_store, c_schema, &root, &mut c_map),
        prolly_result::Ok
    );
    Fixture {
        dir,
        rust,
        keys,
        c_store,
        c_schema,
        c_map,
    }
}

#[inline(never)]
fn rust_gets(f: &Fixture, map: &Map<'_, FileStore, TupleSchema>) -> usize {
    let mut n = 0;
    for k in &f.keys {
        n += map.get(k).unwrap().map_or(0, <[u8]>::len);
    }
    n
}

#[inline(never)]
fn c_gets(f: &Fixture) -> usize {
    let mut n = 0;
    for k in &f.keys {
        let (mut v, mut len) = (ptr::null(), 0usize);
        let r = prolly_map_get(f.c_map, k.as_ptr(), k.len(), &mut v, &mut len);
        debug_assert_eq!(r, prolly_result::Ok);
        n += len;
    }
    n
}

#[inline(never)]
fn rust_scan(map: &Map<'_, FileStore, TupleSchema>) -> usize {
    let mut n = 0;
    for row in map.iter().unwrap() {
        let (k, v) = row.unwrap();
        n += k.len() + v.len();
    }
    n
}

#[inline(never)]
fn c_scan(f: &Fixture) -> usize {
    let open = prolly_bound {
        kind: 0,
        key: ptr::null(),
        key_len: 0,
    };
    let mut c: *mut prolly_cursor = ptr::null_mut();
    assert_eq!(
        prolly_map_range(f.c_map, &open, &open, 0, &mut c),
        prolly_result::Ok
    );
    let mut row = prolly_row {
        key: ptr::null(),
        key_len: 0,
        value: ptr::null(),
        value_len: 0,
    };
    let mut n = 0;
    while prolly_cursor_next(c, &mut row) == prolly_result::Ok {
        n += row.key_len + row.value_len;
    }
    prolly_cursor_free(c);
    n
}

#[inline(never)]
fn c_scan_batch(f: &Fixture) -> usize {
    let open = prolly_bound {
        kind: 0,
        key: ptr::null(),
        key_len: 0,
    };
    let mut c: *mut prolly_cursor = ptr::null_mut();
    assert_eq!(
        prolly_map_range(f.c_map, &open, &open, 0, &mut c),
        prolly_result::Ok
    );
    let empty = prolly_row {
        key: ptr::null(),
        key_len: 0,
        value: ptr::null(),
        value_len: 0,
    };
    let mut rows = [empty; 64];
    let mut got = 0usize;
    let mut n = 0;
    while prolly_cursor_next_batch(c, rows.as_mut_ptr(), rows.len(), &mut got) == prolly_result::Ok
    {
        for r in &rows[..got] {
            n += r.key_len + r.value_len;
        }
    }
    prolly_cursor_free(c);
    n
}

#[inline(never)]
fn once_rust_gets(f: &Fixture, map: &Map<'_, FileStore, TupleSchema>) -> usize {
    rust_gets(f, map)
}

#[inline(never)]
fn once_c_gets(f: &Fixture) -> usize {
    c_gets(f)
}

#[inline(never)]
fn once_rust_scan(map: &Map<'_, FileStore, TupleSchema>) -> usize {
    rust_scan(map)
}

#[inline(never)]
fn once_c_scan(f: &Fixture) -> usize {
    c_scan(f)
}

#[inline(never)]
fn once_c_scan_batch(f: &Fixture) -> usize {
    c_scan_batch(f)
}

/// Median ns per unit of `f` over `rounds` runs.
fn median_ns(rounds: usize, units: usize, mut f: impl FnMut() -> usize) -> f64 {
    let mut t: Vec<f64> = (0..rounds)
        .map(|_| {
            let s = Instant::now();
            black_box(f());
            s.elapsed().as_nanos() as f64 / units as f64
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[rounds / 2]
}

fn bench_ffi(c: &mut Criterion) {
    let f = fixture();
    let root = f.rust.root("main").unwrap();
    let map = Map::new(&f.rust, root, schema());
    assert_eq!(rust_gets(&f, &map), c_gets(&f));
    assert_eq!(rust_scan(&map), c_scan(&f));
    assert_eq!(rust_scan(&map), c_scan_batch(&f));
    if std::env::var_os("PROLLY_FFI_SCAN_ONCE").is_some() {
        // After the warm-up above, one round of gets and one scan of each kind, each in a
        // function of its own, and nothing else: for instruction counts, e.g.
        // `valgrind --tool=callgrind --collect-atstart=no --toggle-collect='ffi::once_c_gets'`.
        black_box(once_rust_gets(&f, &map));
        black_box(once_c_gets(&f));
        black_box(once_rust_scan(&map));
        black_box(once_c_scan(&f));
        black_box(once_c_scan_batch(&f));
        return;
    }

    // `PROLLY_FFI_QUICK` skips criterion's groups and runs only the interleaved measurement
    // below (for quick A/B runs of two builds).
    if std::env::var_os("PROLLY_FFI_QUICK").is_none() {
        criterion_groups(c, &f, &map);
    }
    interleaved(&f, &map, root);
}

fn criterion_groups(c: &mut Criterion, f: &Fixture, map: &Map<'_, FileStore, TupleSchema>) {
    let mut g = c.benchmark_group("ffi/get");
    g.throughput(Throughput::Elements(GETS as u64));
    g.bench_function("rust_api", |b| b.iter(|| black_box(rust_gets(f, map))));
    g.bench_function("c_abi", |b| b.iter(|| black_box(c_gets(f))));
    g.finish();

    let mut g = c.benchmark_group("ffi/scan");
    g.sample_size(20);
    g.throughput(Throughput::Elements(ROWS as u64));
    g.bench_function("rust_api", |b| b.iter(|| black_box(rust_scan(map))));
    g.bench_function("c_abi", |b| b.iter(|| black_box(c_scan(f))));
    g.bench_function("c_abi_batch64", |b| b.iter(|| black_box(c_scan_batch(f))));
    g.finish();
}

/// Interleaved rounds, so both sides see the same machine state; prints the overhead ratios.
fn interleaved(f: &Fixture, map: &Map<'_, FileStore, TupleSchema>, root: Address) {
    let (mut rg, mut cg, mut rs, mut cs) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut cb = Vec::new();
    for _ in 0..15 {
        rg.push(median_ns(21, GETS, || rust_gets(f, map)));
        cg.push(median_ns(21, GETS, || c_gets(f)));
        rs.push(median_ns(3, ROWS as usize, || rust_scan(map)));
        cs.push(median_ns(3, ROWS as usize, || c_scan(f)));
        cb.push(median_ns(3, ROWS as usize, || c_scan_batch(f)));
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (rg, cg, rs, cs) = (med(&mut rg), med(&mut cg), med(&mut rs), med(&mut cs));
    // Control: the Rust API through a second handle on the same directory (the C side has its
    // own handle too), measured the same way.
    let second = FileStore::open(f.dir.path()).unwrap();
    let map2 = Map::new(&second, root, schema());
    let mut r2: Vec<f64> = (0..15)
        .map(|_| median_ns(3, ROWS as usize, || rust_scan(&map2)))
        .collect();
    println!(
        "control: Rust scan via a second handle {:.2} ns/row",
        med(&mut r2)
    );
    let cb = med(&mut cb);
    let e = edit_fixture(f.c_schema);
    let (mut re, mut ce) = (Vec::new(), Vec::new());
    for _ in 0..15 {
        re.push(median_ns(3, EDITS, || rust_edits(&e)));
        ce.push(median_ns(3, EDITS, || c_edits(&e)));
    }
    let (re, ce) = (med(&mut re), med(&mut ce));
    println!(
        "ffi overhead: {EDITS} edits on a memory store {ce:.0} ns/edit (C ABI) vs {re:.0} ns/edit \
         (Rust) = {:.3}x",
        ce / re
    );
    println!(
        "ffi overhead: get {cg:.1} ns (C ABI) vs {rg:.1} ns (Rust) = {:.3}x; \
         scan {cs:.2} ns/row (cursor_next) / {cb:.2} ns/row (next_batch 64) vs {rs:.2} ns/row \
         (Rust) = {:.3}x / {:.3}x",
        cg / rg,
        cs / rs,
        cb / rs
    );
}

criterion_group!(benches, bench_ffi);
criterion_main!(benches);

/// The same rows in a Rust memory store and in a memory store made through the C ABI, and one
/// batch of edits for both.
struct EditFixture {
    rust: MemoryStore,
    rust_root: Address,
    c_store: *mut prolly_store,
    c_map: *mut prolly_map,
    batches: Vec<Vec<(Vec<u8>, Vec<u8>)>>,
    /// The next batch each side applies.
    rust_next: std::cell::Cell<usize>,
    c_next: std::cell::Cell<usize>,
}

impl EditFixture {
    /// The next batch of edits for one side.
    fn next(&self, side: &std::cell::Cell<usize>) -> &[(Vec<u8>, Vec<u8>)] {
        let i = side.get();
        side.set((i + 1) % EDIT_BATCHES);
        &self.batches[i]
    }
}

impl Drop for EditFixture {
    fn drop(&mut self) {
        prolly_map_free(self.c_map);
        prolly_store_free(self.c_store);
    }
}

fn edit_fixture(c_schema: *mut prolly_schema) -> EditFixture {
    let s = schema();
    let (mut kb, mut vb) = (
        TupleBuilder::new(s.key.clone()),
        TupleBuilder::new(s.value.clone()),
    );
    let mut row = |k: i64, name: String| {
        kb.put_int64(0, k).unwrap();
        vb.put_string(0, &name).unwrap();
        vb.put_int64(1, k).unwrap();
        (
            kb.build().unwrap().as_bytes().to_vec(),
            vb.build().unwrap().as_bytes().to_vec(),
        )
    };
    let rows: Vec<(Vec<u8>, Vec<u8>)> = (0..ROWS).map(|i| row(i * 3, "row".into())).collect();
    let rust = MemoryStore::new(HashProfile::Blake3);
    let rust_root = Map::from_sorted(&rust, s, rows.iter().map(|(k, v)| (&k[..], &v[..])))
        .unwrap()
        .root();

    let mut c_store = ptr::null_mut();
    assert_eq!(prolly_store_new_memory(1, &mut c_store), prolly_result::Ok);
    let mut builder = ptr::null_mut();
    assert_eq!(
        prolly_map_builder_new(c_store, c_schema, &mut builder),
        prolly_result::Ok
    );
    for (k, v) in &rows {
        let r = prolly_map_builder_append(builder, k.as_ptr(), k.len(), v.as_ptr(), v.len());
        assert_eq!(r, prolly_result::Ok);
    }
    let mut c_map = ptr::null_mut();
    assert_eq!(
        prolly_map_builder_finish(builder, &mut c_map),
        prolly_result::Ok
    );

    let mut rng = SmallRng::seed_from_u64(11);
    let batches = (0..EDIT_BATCHES)
        .map(|b| {
            let mut edits: Vec<(Vec<u8>, Vec<u8>)> = (0..EDITS)
                .map(|i| {
                    let key = rng.gen_range(0..ROWS) * 3 + (i % 2) as i64;
                    row(key, format!("edit {b}"))
                })
                .collect();
            edits.sort();
            edits.dedup_by(|a, b| a.0 == b.0);
            edits
        })
        .collect();
    EditFixture {
        rust,
        rust_root,
        c_store,
        c_map,
        batches,
        rust_next: std::cell::Cell::new(0),
        c_next: std::cell::Cell::new(0),
    }
}

/// One batch of edits through the Rust API; the new root's first byte (to keep it alive).
#[inline(never)]
fn rust_edits(f: &EditFixture) -> usize {
    let map = Map::new(&f.rust, f.rust_root, schema());
    let edits = f.next(&f.rust_next);
    let edited = map
        .apply(edits.iter().map(|(k, v)| (&k[..], Some(&v[..]))))
        .unwrap();
    usize::from(edited.root().0[0])
}

/// The same batch through `prolly_map_apply`.
#[inline(never)]
fn c_edits(f: &EditFixture) -> usize {
    let edits: Vec<prolly_edit> = f
        .next(&f.c_next)
        .iter()
        .map(|(k, v)| prolly_edit {
            key: k.as_ptr(),
            key_len: k.len(),
            value: v.as_ptr(),
            value_len: v.len(),
        })
        .collect();
    let mut out = ptr::null_mut();
    assert_eq!(
        prolly_map_apply(f.c_map, edits.as_ptr(), edits.len(), &mut out),
        prolly_result::Ok
    );
    prolly_map_free(out);
    edits.len()
}
