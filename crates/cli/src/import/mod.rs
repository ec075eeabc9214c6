//! CSV import: parse rows into key and value tuples, then build a tree or edit an existing one.
//!
//! Records come from [`RecordReader`] (plain lines split in place, the rest through
//! `csv-core`); tuples of all-fixed-width descriptors are written directly
//! ([`FixedEncoder`](crate::field_text::FixedEncoder)), others through a reused
//! [`TupleBuilder`](prollystore_format::tuple::TupleBuilder). Nothing is allocated per row.
//! Schemas of integer columns have fast paths that read plain records straight from the
//! reader's buffer (`IntRows`, and for one to four `int64` key and value fields
//! `Int64Layout`); any record they decline goes the general way, which makes the same tuples
//! or error.
//!
//! A new tree ([`build_csv`]) is built while the input is still being read: one thread parses
//! rows into batches of tuples, the calling thread adds them to the tree, and the batches go
//! back to the parser for reuse, so the rows never pile up in memory. That needs the input in
//! key order, which is only known at its end; when a row comes out of order the parser keeps
//! the rest, the rows already built are read back from the partial tree, and the caller gets
//! every row to sort and build ([`Built::Unsorted`]). Edits of an existing tree, and schemas
//! whose values may go out of band, read every row first ([`read_csv`]).
//!
//! The parts, each in its own module: `collected_rows` (every row held in memory, to sort),
//! `row_maker` (records to tuples, the general way), `int_rows` and `int64_layout` (the integer
//! fast paths) over `int_tuple` (the tuples they write), and `pipeline` with `batch` (the
//! parsing thread of a new map and the batches it hands to the builder).

mod batch;
mod collected_rows;
mod int64_layout;
mod int_rows;
mod int_tuple;
mod pipeline;
mod row_maker;
#[cfg(test)]
mod test_input;

use std::io::Read;
use std::sync::mpsc::sync_channel;
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use prollystore::blob::StoreBlobs;
use prollystore::builder::SortingBuilder;
use prollystore::process::background_hashing;
use prollystore::store::StoreFastPaths;
use prollystore::tree::build::TreeBuilder;
use prollystore::tuples::TupleSchema;
use prollystore::{Map, TreeError};
use prollystore_format::tuple::TupleDesc;
use prollystore_format::Address;

use crate::error::{Error, Result};
use crate::field_text::NullText;
use crate::map_schema::MapSchema;
use crate::records::RecordReader;

use batch::Batch;
pub use collected_rows::Rows;
use pipeline::{parse_batches, LineMap, BATCHES};
use row_maker::{collect_rows, RowMaker};

/// Reads CSV rows (header required, columns matched by name) into tuples. With `keys_only`,
/// only the key columns are read (other columns are ignored) and values are empty; otherwise
/// every header column must be a schema column. Large values go out of band into `store`.
pub fn read_csv<R: Read, S: StoreFastPaths + ?Sized>(
    input: R,
    len_hint: Option<u64>,
    schema: &MapSchema,
    null: &NullText,
    store: &S,
    keys_only: bool,
    progress: &ProgressBar,
) -> Result<Rows> {
    let mut rdr = RecordReader::new(input);
    let mut maker = RowMaker::new(&mut rdr, schema, null, keys_only)?;
    let mut blobs = StoreBlobs::new(store);
    let mut rows = Rows {
        sorted_input: true,
        ..Rows::default()
    };
    let ts = schema.tuple_schema();
    collect_rows(
        &mut rdr, &mut maker, null, &mut blobs, &ts, len_hint, progress, &mut rows,
    )?;
    Ok(rows)
}

/// The outcome of [`build_csv`].
pub enum Built {
    /// The input came in key order and the tree is built.
    Tree {
        /// Its root.
        root: Address,
        /// Its row count.
        rows: usize,
        /// How long reading and parsing the input took (the build ran alongside).
        parse_time: Duration,
    },
    /// The input was not in key order: every row, to sort ([`Rows::sort`], which also finds
    /// duplicate keys) and build ([`build`]).
    Unsorted {
        /// The rows.
        rows: Rows,
        /// True if `store` got chunks of a partial tree (built before the first row out of
        /// order) that nothing refers to, and nothing else: a caller that does not want them
        /// kept can drop its uncommitted chunks before building. False if `store` holds
        /// values of `rows` written out of band.
        partial_tree: bool,
    },
    /// The input was not in key order, and its rows are in a sorting builder (memory bounded,
    /// the rest on disk): build them with [`SortingRows::build`].
    Sorting {
        /// The rows.
        rows: Box<SortingRows>,
        /// True if `store` got chunks of a partial tree (built before the first row out of
        /// order) that nothing refers to, and nothing else: a caller that does not want them
        /// kept can drop its uncommitted chunks before building.
        partial_tree: bool,
    },
}

/// True if tuples of `desc` may need a blob store (values written out of band).
fn needs_blobs(desc: &TupleDesc) -> bool {
    desc.types()
        .iter()
        .any(|t| t.enc.is_adaptive() || t.enc.is_address())
}

/// Reads CSV rows (header required, every header column a schema column) and builds a new tree
/// of them, parsing on a second thread while this one builds. See [`Built`] for input that is
/// not in key order.
pub fn build_csv<R: Read + Send, S: StoreFastPaths + ?Sized>(
    input: R,
    len_hint: Option<u64>,
    schema: &MapSchema,
    null: &NullText,
    store: &S,
    progress: &ProgressBar,
) -> Result<Built> {
    let started = Instant::now();
    let ts = schema.tuple_schema();
    if needs_blobs(&ts.key) || needs_blobs(&ts.value) {
        // The parser needs the store, which stays on this thread.
        let rows = read_csv(input, len_hint, schema, null, store, false, progress)?;
        if !rows.sorted_input() {
            return Ok(Built::Unsorted {
                rows,
                partial_tree: false,
            });
        }
        let parse_time = started.elapsed();
        return Ok(Built::Tree {
            root: build(store, &ts, &rows)?,
            rows: rows.len(),
            parse_time,
        });
    }
    let (full_tx, full_rx) = sync_channel::<Batch>(BATCHES - 2);
    let (empty_tx, empty_rx) = sync_channel::<Batch>(BATCHES);
    std::thread::scope(|scope| {
        let parser =
            scope.spawn(move || parse_batches(input, schema, null, progress, full_tx, empty_rx));
        let mut builder = TreeBuilder::new(store, &ts);
        if background_hashing() {
            // A third thread: it pays when the parser leaves the build thread the bottleneck.
            builder = builder.with_hash_thread();
        }
        let mut sink = Sink::Tree(builder);
        let mut failed = None;
        for batch in full_rx.iter() {
            if let Err(e) = sink.add(&batch, store, &ts) {
                failed = Some(e);
                break;
            }
            // The parser may have finished and gone: then the batch is simply dropped.
            let _ = empty_tx.send(batch);
        }
        drop(full_rx);
        drop(empty_tx);
        let parsed = match parser.join() {
            Ok(p) => p,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        if let Some(e) = failed {
            return Err(e.into());
        }
        let parsed = match parsed {
            Ok(p) => p,
            Err(Some(e)) => return Err(e),
            Err(None) => return Err(Error::msg("the tree builder stopped taking rows")),
        };
        let parse_time = parsed.done.duration_since(started);
        match sink {
            Sink::Tree(builder) => Ok(Built::Tree {
                root: builder.finish()?,
                rows: usize::try_from(parsed.lines.rows).unwrap_or(usize::MAX),
                parse_time,
            }),
            Sink::Sorting(builder) => Ok(Built::Sorting {
                rows: Box::new(SortingRows {
                    builder,
                    lines: parsed.lines,
                }),
                partial_tree: true,
            }),
        }
    })
}

/// Memory the sorting of an import out of key order may keep rows in; the rest goes to
/// temporary files ([`SortingBuilder`]).
pub const SORT_MEMORY: usize = 256 << 20;

/// Where the building thread puts rows: the tree while they come in key order; from the
/// first row out of order on, a sorting builder, which gets the rows of the partial tree
/// first (so its item numbers are input row numbers).
// One per import, on the stack: the size difference costs nothing.
#[allow(clippy::large_enum_variant)]
enum Sink<'s, S: StoreFastPaths + ?Sized> {
    Tree(TreeBuilder<'s, S, TupleSchema>),
    Sorting(SortingBuilder<TupleSchema>),
}

impl<S: StoreFastPaths + ?Sized> Sink<'_, S> {
    fn add(&mut self, batch: &Batch, store: &S, ts: &TupleSchema) -> Result<(), TreeError> {
        let from = match (&mut *self, batch.first_unsorted) {
            (Sink::Tree(b), None) => return batch.for_each(|k, v| b.add(k, v)),
            (Sink::Sorting(_), _) => 0,
            (Sink::Tree(b), Some(first)) => {
                for i in 0..first {
                    let (k, v) = batch.row(i);
                    b.add(k, v)?;
                }
                let Sink::Tree(b) = std::mem::replace(
                    self,
                    Sink::Sorting(SortingBuilder::new(ts.clone(), SORT_MEMORY)),
                ) else {
                    return Err(TreeError::Internal("import sink changed kind"));
                };
                let root = b.finish()?;
                if let Sink::Sorting(sorter) = self {
                    for row in Map::new(store, root, ts.clone()).iter()? {
                        let (k, v) = row?;
                        sorter.add(k, v)?;
                    }
                }
                first
            }
        };
        if let Sink::Sorting(sorter) = self {
            for i in from..batch.len() {
                let (k, v) = batch.row(i);
                sorter.add(k, v)?;
            }
        }
        Ok(())
    }
}

/// Rows of an import that came out of key order, in a sorting builder (memory bounded by
/// [`SORT_MEMORY`], the rest on disk), with their CSV lines for the errors.
pub struct SortingRows {
    builder: SortingBuilder<TupleSchema>,
    lines: LineMap,
}

impl SortingRows {
    /// Number of rows.
    pub fn len(&self) -> usize {
        usize::try_from(self.builder.len()).unwrap_or(usize::MAX)
    }

    /// True if there are none.
    pub fn is_empty(&self) -> bool {
        self.builder.is_empty()
    }

    /// Sorts the rows and builds their tree in `store`; returns its root. Duplicate keys are
    /// an error naming both lines.
    pub fn build<S: StoreFastPaths + ?Sized>(self, store: &S) -> Result<Address> {
        let lines = self.lines;
        match self.builder.finish(store) {
            Ok(map) => Ok(map.root()),
            Err(TreeError::DuplicateKey { first, second }) => Err(Error::msg(format!(
                "line {}: duplicate key (same key as line {})",
                lines.get(second),
                lines.get(first)
            ))),
            Err(e) => Err(e.into()),
        }
    }
}

/// Builds a new tree of the (sorted) rows; returns its root.
pub fn build<S: StoreFastPaths + ?Sized>(
    store: &S,
    schema: &TupleSchema,
    rows: &Rows,
) -> Result<Address> {
    let mut b = TreeBuilder::new(store, schema);
    for (k, v) in rows.iter() {
        b.add(k, v)?;
    }
    Ok(b.finish()?)
}

/// Puts every row into the map at `root` (rows replace values of existing keys); returns the
/// new root.
pub fn upsert<S: StoreFastPaths + ?Sized>(
    store: &S,
    schema: &TupleSchema,
    root: Address,
    rows: &Rows,
) -> Result<Address> {
    let map = Map::new(store, root, schema.clone());
    Ok(map.apply(rows.iter().map(|(k, v)| (k, Some(v))))?.root())
}

/// Deletes every row's key from the map at `root`; returns the new root.
pub fn delete<S: StoreFastPaths + ?Sized>(
    store: &S,
    schema: &TupleSchema,
    root: Address,
    rows: &Rows,
) -> Result<Address> {
    let map = Map::new(store, root, schema.clone());
    Ok(map.apply(rows.iter().map(|(k, _)| (k, None)))?.root())
}

/// Parses, sorts and builds in one call, for benchmarks and library users: the root of a new
/// map of the CSV rows, and their count.
pub fn import_new<S: StoreFastPaths + ?Sized>(
    input: &[u8],
    schema: &MapSchema,
    null: &NullText,
    store: &S,
) -> Result<(Address, usize)> {
    let len = Some(input.len() as u64);
    match build_csv(input, len, schema, null, store, &ProgressBar::hidden())? {
        Built::Tree { root, rows, .. } => Ok((root, rows)),
        Built::Unsorted { mut rows, .. } => {
            let ts = schema.tuple_schema();
            rows.sort(&ts)?;
            Ok((build(store, &ts, &rows)?, rows.len()))
        }
        Built::Sorting { rows, .. } => {
            let n = rows.len();
            Ok((rows.build(store)?, n))
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use prollystore::format::HashProfile;
    use prollystore::MemoryStore;
    use prollystore_format::tuple::TupleBuilder;

    use super::int_rows::IntRows;
    use super::pipeline::tests::{batched, Path};
    use super::test_input::{csv_of, int_schema, row, xorshift};

    /// The root of the rows built from tuples with the library, not through CSV.
    fn library_root(store: &MemoryStore, ids: &[i64]) -> Address {
        let schema = int_schema();
        let mut kb = TupleBuilder::new(schema.key_desc());
        let mut vb = TupleBuilder::new(schema.value_desc());
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        let mut rows = Vec::new();
        for i in ids {
            let (a, b, c, d) = row(i);
            kb.put_int64(0, a).unwrap();
            kb.put_int64(1, b).unwrap();
            vb.put_int64(0, c).unwrap();
            vb.put_int64(1, d).unwrap();
            rows.push((
                kb.build().unwrap().as_bytes().to_vec(),
                vb.build().unwrap().as_bytes().to_vec(),
            ));
        }
        Map::from_sorted(
            store,
            schema.tuple_schema(),
            rows.iter().map(|(k, v)| (&k[..], &v[..])),
        )
        .unwrap()
        .root()
    }

    fn import(text: &str, schema: &MapSchema) -> Result<(Address, usize)> {
        let store = MemoryStore::new(HashProfile::Blake3);
        import_new(text.as_bytes(), schema, &NullText::default(), &store)
    }

    /// The same CSV through `read_csv` (every row first): the error, or the root after sorting.
    fn import_collected(text: &str, schema: &MapSchema) -> Result<Address> {
        let store = MemoryStore::new(HashProfile::Blake3);
        let ts = schema.tuple_schema();
        let mut rows = read_csv(
            text.as_bytes(),
            None,
            schema,
            &NullText::default(),
            &store,
            false,
            &ProgressBar::hidden(),
        )?;
        rows.sort(&ts)?;
        build(&store, &ts, &rows)
    }

    #[test]
    fn sorted_and_unsorted_input_give_the_library_root() {
        let n = 30_000i64;
        let sorted: Vec<i64> = (0..n).collect();
        let store = MemoryStore::new(HashProfile::Blake3);
        let want = library_root(&store, &sorted);
        let schema = int_schema();
        assert_eq!(
            import(&csv_of(&sorted), &schema).unwrap(),
            (want, n as usize)
        );
        // Out of order from the start, in the middle, and at the very end (after batches
        // have been built: they are read back).
        let mut early = sorted.clone();
        early.swap(0, 1);
        let mut middle = sorted.clone();
        middle.swap(15_000, 15_001);
        let mut late = sorted.clone();
        late.swap(29_998, 29_999);
        let mut reversed = sorted.clone();
        reversed.reverse();
        for ids in [early, middle, late, reversed] {
            let text = csv_of(&ids);
            assert_eq!(import(&text, &schema).unwrap(), (want, n as usize));
            assert_eq!(import_collected(&text, &schema).unwrap(), want);
        }
        // An empty file with a header: an empty map.
        let empty = library_root(&store, &[]);
        assert_eq!(import("a,b,c,d\n", &schema).unwrap(), (empty, 0));
    }

    #[test]
    fn general_path_gives_the_same_tuples() {
        // Nullable columns and a NULL marker turn the integer fast path off, and `int32`
        // fields go through the general encoder: the tuples must not change.
        let text = csv_of(&(0..5000).collect::<Vec<_>>());
        let fast = import(&text, &int_schema()).unwrap();
        let nullable = MapSchema::parse("a:int64,b:int64", "c:int64?,d:int64?").unwrap();
        let store = MemoryStore::new(HashProfile::Blake3);
        let marker = NullText {
            marker: Some(b"7".to_vec()),
        };
        let slow = import_new(text.as_bytes(), &nullable, &NullText::default(), &store).unwrap();
        // Nullability does not change the tuple bytes, so the roots agree.
        assert_eq!(slow, fast);
        // A marker that is an integer text disables the fast path; rows with `7` become NULL.
        let store = MemoryStore::new(HashProfile::Blake3);
        let with_marker =
            import_new(b"a,b,c,d\n1,2,7,4\n2,3,4,5\n", &nullable, &marker, &store).unwrap();
        let store = MemoryStore::new(HashProfile::Blake3);
        let with_empty = import_new(
            b"a,b,c,d\n1,2,,4\n2,3,4,5\n",
            &nullable,
            &NullText::default(),
            &store,
        )
        .unwrap();
        assert_eq!(with_marker, with_empty);
    }

    #[test]
    fn errors_name_the_line() {
        let schema = int_schema();
        let ids: Vec<i64> = (0..20_000).collect();
        let good = csv_of(&ids);
        let lines: Vec<&str> = good.lines().collect();
        // A bad value far into the file (after batches were built), on its line number.
        let mut bad = lines.clone();
        bad[15_000] = "15000,1,x,3";
        let bad = bad.join("\n") + "\n";
        // (Blank lines count: `lines` holds them too.)
        let want = "line 15001: column \"c\": int64 \"x\" is not ";
        for e in [
            import(&bad, &schema).unwrap_err().to_string(),
            import_collected(&bad, &schema).unwrap_err().to_string(),
        ] {
            assert!(e.starts_with(want), "{e} / {want}");
        }
        // A record with another field count: the csv crate's own message.
        let mut short = lines.clone();
        short[12_000] = "1,2,3";
        let short = short.join("\n") + "\n";
        let mut r = csv::Reader::from_reader(short.as_bytes());
        let mut rec = csv::ByteRecord::new();
        let want = loop {
            match r.read_byte_record(&mut rec) {
                Ok(true) => {}
                Ok(false) => panic!("no error"),
                Err(e) => break e.to_string(),
            }
        };
        assert_eq!(import(&short, &schema).unwrap_err().to_string(), want);
        assert_eq!(
            import_collected(&short, &schema).unwrap_err().to_string(),
            want
        );
        // Duplicate keys, early and late, both named by line.
        for (at, dup_of) in [(3usize, 2usize), (19_990, 19_000)] {
            let mut dup = lines.clone();
            dup[at] = dup[dup_of];
            let dup = dup.join("\n") + "\n";
            let want = format!(
                "line {}: duplicate key (same key as line {})",
                at + 1,
                dup_of + 1
            );
            assert_eq!(import(&dup, &schema).unwrap_err().to_string(), want);
            assert_eq!(
                import_collected(&dup, &schema).unwrap_err().to_string(),
                want
            );
        }
    }

    #[test]
    fn integer_keys_in_numeric_order_are_in_key_order() {
        // The fast path checks the input order on the parsed integers: it must agree with
        // the key comparator, signs and widths included.
        let schema = MapSchema::parse("a:int32,b:uint16,c:int64", "v:int8").unwrap();
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let mut keys: Vec<(i64, i64, i64)> = (0..20_000)
            .map(|_| {
                let a = (next() % 7) as i64 - 3;
                let b = (next() % 5) as i64;
                let c = (next() % 2_000_001) as i64 - 1_000_000;
                (a * 700_000_000 * i64::from(next().is_multiple_of(2)), b, c)
            })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let mut text = String::from("a,b,c,v\n");
        for (a, b, c) in &keys {
            text.push_str(&format!("{a},{b},{c},{}\n", c % 100));
        }
        let (root, n) = import(&text, &schema).unwrap();
        assert_eq!(n, keys.len());
        assert_eq!(import_collected(&text, &schema).unwrap(), root);
        let store = MemoryStore::new(HashProfile::Blake3);
        let rows = read_csv(
            text.as_bytes(),
            None,
            &schema,
            &NullText::default(),
            &store,
            false,
            &ProgressBar::hidden(),
        )
        .unwrap();
        assert!(rows.sorted_input(), "numeric order is key order");
    }

    #[test]
    fn nullable_int64_rows_mix_tuple_sizes() {
        // NULLs (empty fields) make shorter tuples among the fast path's rows: the batches
        // list their ends, and every path hands over the same rows.
        let schema = MapSchema::parse("a:int64", "b:int64?,c:int64?").unwrap();
        let header = [b"a".to_vec(), b"b".to_vec(), b"c".to_vec()];
        let rows = IntRows::new(&schema, &header, &NullText::default(), false);
        assert!(
            rows.is_some_and(|r| r.int64.is_some()),
            "the fast path applies"
        );
        let mut text = String::from("a,b,c\n");
        for i in 0..3000 {
            match i % 7 {
                3 => text.push_str(&format!("{i},,{}\n", i * 3)),
                5 => text.push_str(&format!("{i},{},\n", -i)),
                _ => text.push_str(&format!("{i},{},{}\n", -i, i * 3)),
            }
        }
        let fastest = batched(&text, &schema, Path::Fastest, 256 << 10).unwrap();
        assert_eq!(fastest.0.len(), 3000);
        assert_eq!(
            fastest,
            batched(&text, &schema, Path::General, 256 << 10).unwrap()
        );
        assert_eq!(fastest, batched(&text, &schema, Path::Ints, 100).unwrap());
        let (root, n) = import(&text, &schema).unwrap();
        assert_eq!(n, 3000);
        assert_eq!(import_collected(&text, &schema).unwrap(), root);
    }
}
