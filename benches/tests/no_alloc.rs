//! The hot read paths allocate nothing: node verification, scans, searches, tuple comparison
//! and every typed getter, checked with a global allocator that counts this thread's
//! allocations.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::hint::black_box;

use prollystore_format::message::{LeafInput, Node, NodeWriter};
use prollystore_format::tuple::{Date, Decimal, Tuple, TupleBuilder, TupleDesc, Type};
use prollystore_format::{Address, Encoding};

/// Forwards to the system allocator and counts allocations made by the current thread (other
/// test-harness threads do not disturb the count).
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count_one() {
    // `try_with`: no panic if called while the thread's locals are being torn down.
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// `GlobalAlloc` contract is `System`'s; the counter is a const-initialised thread-local `Cell`
// that never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: same contract as ours (non-zero-size layout, guaranteed by our caller).
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` through this allocator with this `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        // SAFETY: `ptr` came from `System` with `layout`; `new_size` is our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations `f` makes on this thread.
fn allocations(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

fn tuple2(out: &mut Vec<u8>, a: i64, b: i64) {
    out.extend_from_slice(&a.to_le_bytes());
    out.extend_from_slice(&b.to_le_bytes());
    out.extend_from_slice(&8u16.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
}

#[test]
fn the_counter_counts() {
    assert_eq!(allocations(|| drop(black_box(vec![1u8; 10]))), 1);
}

#[test]
fn node_reads_do_not_allocate() {
    let (mut keys, mut values) = (Vec::new(), Vec::new());
    let (mut ko, mut vo) = (vec![0u16], vec![0u16]);
    for i in 0..100i64 {
        tuple2(&mut keys, 2 * i, i);
        tuple2(&mut values, 3 * i, -i);
        ko.push(keys.len() as u16);
        vo.push(values.len() as u16);
    }
    let chunk = NodeWriter::new()
        .write_leaf(&LeafInput {
            key_items: &keys,
            key_offsets: &ko,
            value_items: &values,
            value_offsets: &vo,
            value_address_offsets: &[],
        })
        .unwrap()
        .to_vec();
    let desc = TupleDesc::new(vec![
        Type::not_null(Encoding::Int64),
        Type::not_null(Encoding::Int64),
    ]);
    let mut absent = Vec::new();
    tuple2(&mut absent, 51, 0);
    let mut corrupt = chunk.clone();
    let last = corrupt.len() - 30;
    corrupt[last] ^= 0xff;

    let n = allocations(|| {
        let node = Node::verify(black_box(&chunk)).unwrap();
        let k0 = desc.fixed_field::<8>(0, Encoding::Int64).unwrap();
        let mut acc = 0i64;
        for (k, v) in node.entries() {
            let (k, v) = (Tuple::new_unverified(k), Tuple::new_unverified(v));
            acc ^= i64::from_le_bytes(k0.read(k).unwrap().unwrap());
            acc ^= desc.get_int64(v, 1).unwrap().unwrap();
        }
        for i in 0..node.count() {
            acc ^= desc
                .get_int64(Tuple::new_unverified(node.key(i)), 0)
                .unwrap()
                .unwrap();
        }
        black_box(acc);
        let _ = black_box(node.search_by(|k| desc.compare(k, &absent)));
        black_box(node.partition_point(|k| desc.compare(k, &absent).is_lt()));
        // Rejecting a corrupt chunk may build an error message; it must not crash either way.
        black_box(Node::verify(&corrupt).is_ok());
    });
    // The corrupt chunk's error may own a String (FlatBuffers details); nothing else allocates.
    assert!(n <= 1, "{n} allocations");
    let n = allocations(|| {
        black_box(Node::verify(black_box(&chunk)).unwrap());
    });
    assert_eq!(n, 0, "verification allocated");
}

#[test]
fn getters_and_compare_do_not_allocate() {
    use Encoding as E;
    let types = vec![
        Type::not_null(E::Int64),
        Type::nullable(E::Int8),
        Type::nullable(E::Uint16),
        Type::nullable(E::Int32),
        Type::nullable(E::Uint64),
        Type::nullable(E::Float32),
        Type::nullable(E::Float64),
        Type::nullable(E::Bit64),
        Type::nullable(E::Hash128),
        Type::nullable(E::Year),
        Type::nullable(E::Date),
        Type::nullable(E::Time),
        Type::nullable(E::Datetime),
        Type::nullable(E::Enum),
        Type::nullable(E::Set),
        Type::nullable(E::String),
        Type::nullable(E::Bytes),
        Type::nullable(E::Decimal),
        Type::nullable(E::StringAdaptive),
        Type::nullable(E::BytesAddr),
        Type::nullable(E::Cell),
    ];
    let desc = TupleDesc::new(types);
    let mut b = TupleBuilder::new(desc.clone());
    let coeff = 12_345u32.to_be_bytes();
    let row = |b: &mut TupleBuilder, x: i64| {
        b.put_int64(0, x).unwrap();
        b.put_int8(1, -3).unwrap();
        b.put_uint16(2, 7).unwrap();
        b.put_int32(3, -9).unwrap();
        b.put_uint64(4, 11).unwrap();
        b.put_float32(5, 1.5).unwrap();
        b.put_float64(6, -2.5).unwrap();
        b.put_bit64(7, 5).unwrap();
        b.put_hash128(8, &[7; 16]).unwrap();
        b.put_year(9, 2024).unwrap();
        b.put_date(10, Date::from_raw(0x0fd1_0c1f)).unwrap();
        b.put_time(11, 3_600_000_000).unwrap();
        b.put_datetime(12, 1_717_243_200_000_000).unwrap();
        b.put_enum(13, 2).unwrap();
        b.put_set(14, 6).unwrap();
        b.put_string(15, "hello").unwrap();
        b.put_bytes(16, b"\x00\x01").unwrap();
        b.put_decimal(17, &Decimal::finite(-2, false, &coeff))
            .unwrap();
        b.put_adaptive_inline(18, b"inline text").unwrap();
        b.put_address(19, &Address([9; 20])).unwrap();
        b.put_cell(20, &[3; 17]).unwrap();
        b.build().unwrap().as_bytes().to_vec()
    };
    let (r1, r2) = (row(&mut b, 1), row(&mut b, 2));
    let n = allocations(|| {
        let t = Tuple::new(&r1).unwrap();
        black_box(desc.get_int64(t, 0).unwrap());
        black_box(desc.get_int8(t, 1).unwrap());
        black_box(desc.get_uint16(t, 2).unwrap());
        black_box(desc.get_int32(t, 3).unwrap());
        black_box(desc.get_uint64(t, 4).unwrap());
        black_box(desc.get_float32(t, 5).unwrap());
        black_box(desc.get_float64(t, 6).unwrap());
        black_box(desc.get_bit64(t, 7).unwrap());
        black_box(desc.get_hash128(t, 8).unwrap());
        black_box(desc.get_year(t, 9).unwrap());
        black_box(desc.get_date(t, 10).unwrap());
        black_box(desc.get_time(t, 11).unwrap());
        black_box(desc.get_datetime(t, 12).unwrap());
        black_box(desc.get_enum(t, 13).unwrap());
        black_box(desc.get_set(t, 14).unwrap());
        black_box(desc.get_string(t, 15).unwrap());
        black_box(desc.get_bytes(t, 16).unwrap());
        black_box(desc.get_decimal(t, 17).unwrap());
        black_box(desc.get_adaptive(t, 18).unwrap());
        black_box(desc.get_address(t, 19).unwrap());
        black_box(desc.get_cell(t, 20).unwrap());
        for i in 0..desc.len() {
            black_box(desc.value(t, i).unwrap());
        }
        black_box(desc.validate(&r1).is_ok());
        black_box(desc.compare(&r1, &r2));
        black_box(desc.compare(&r2, &r2));
        // A getter error (wrong encoding) is a plain value too.
        black_box(desc.get_string(t, 0).unwrap_err());
    });
    assert_eq!(n, 0, "{n} allocations");
}

#[test]
fn map_gets_do_not_allocate() {
    use prollystore::format::HashProfile;
    use prollystore::{Map, MemoryStore};
    use prollystore_benches::int_pairs::{rows, schema};
    // Enough rows for three levels, so descents go through internal nodes twice.
    let data = rows(200_000);
    let store = MemoryStore::new(HashProfile::Blake3);
    let map =
        Map::from_sorted(&store, schema(), data.iter().map(|(k, v)| (&k[..], &v[..]))).unwrap();
    assert!(map.height().unwrap() >= 2);
    let probes: Vec<usize> = (0..5000).map(|i| (i * 7919) % data.len()).collect();
    // The first read of a node verifies it and the first descent through an internal node
    // lists its children's places (one allocation each); later gets allocate nothing.
    for &p in &probes {
        assert!(map.get(&data[p].0).unwrap().is_some());
    }
    let n = allocations(|| {
        for &p in &probes {
            black_box(map.get(black_box(&data[p].0)).unwrap());
        }
        let mut missing = data[3].0;
        missing[0] ^= 1;
        black_box(map.get(&missing).unwrap());
    });
    assert_eq!(n, 0, "gets allocated");
}
