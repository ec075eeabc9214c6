//! A table's diff cut into parts through the C ABI (`prolly_dolt_split_diff`,
//! `prolly_dolt_diff_part_arrow`), over the Dolt-made database `crates/dolt/tests/data/diff_parts`
//! (24,000-row tables keyed by a VARCHAR in `utf8mb4_0900_ai_ci` and by a non-UTF-8 VARBINARY;
//! branches `spread`, `cluster` and two commits on `main`):
//!
//! * for every diff of its `queries.txt` and 1, 2, 3 and 8 parts, the parts' streams, one after
//!   the other, give the rows of the whole diff's stream (`prolly_dolt_diff_arrow`) row for row,
//!   as many as Dolt's `dolt_diff` printed (the line counts of its CSV in `expected.txt`), each
//!   part's stream batch for batch what the Rust `DiffBatches::part` gives;
//! * bad input returns its code with a message saying what, and writes no output;
//! * `tests/c/test_dolt_diff_parts.c` does the same from C (CI also runs it under valgrind and
//!   the sanitizers, `scripts/c-tests.sh`).

#![cfg(feature = "arrow")]

use std::ffi::{c_char, CStr, CString};
use std::path::PathBuf;
use std::ptr;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use arrow_array::{Array, RecordBatch, RecordBatchReader};
use arrow_schema::{DataType, SchemaRef};
use prollystore_arrow::DiffBatches;
use prollystore_dolt::diff_parts::DiffPart;
use prollystore_ffi::arrow::{
    prolly_dolt_diff_arrow, prolly_dolt_diff_part_arrow, prolly_dolt_part_arrow,
};
use prollystore_ffi::dolt::{
    prolly_dolt, prolly_dolt_free, prolly_dolt_open, prolly_dolt_parts_count,
    prolly_dolt_parts_free, prolly_dolt_parts_get, prolly_dolt_split, prolly_dolt_split_diff,
};
use prollystore_ffi::result::{prolly_last_error_message, prolly_result};

mod common;

/// The Dolt-made database of diffs and its directory.
fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../dolt/tests/data/diff_parts")
}

fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

fn last_error() -> String {
    let mut buf = vec![0u8; 4096];
    let n = prolly_last_error_message(buf.as_mut_ptr().cast::<c_char>(), buf.len());
    String::from_utf8_lossy(&buf[..n.min(4095)]).into_owned()
}

/// A database opened through the C ABI, freed on drop.
struct Db(*mut prolly_dolt);

impl Db {
    fn open(dir: &std::path::Path) -> Db {
        let path = c(dir.to_str().unwrap());
        let mut db = ptr::null_mut();
        assert_eq!(prolly_dolt_open(path.as_ptr(), &mut db), prolly_result::Ok);
        Db(db)
    }

    /// `prolly_dolt_split_diff`'s parts as JSON, or the code it returned.
    fn split_diff(
        &self,
        from: &str,
        to: &str,
        table: &str,
        n: u64,
    ) -> Result<Vec<String>, prolly_result> {
        let (from, to, table) = (c(from), c(to), c(table));
        let mut parts = ptr::null_mut();
        let r = prolly_dolt_split_diff(
            self.0,
            from.as_ptr(),
            to.as_ptr(),
            table.as_ptr(),
            n,
            &mut parts,
        );
        if r != prolly_result::Ok {
            assert!(parts.is_null(), "an output written on failure");
            return Err(r);
        }
        let mut count = 0;
        assert_eq!(
            prolly_dolt_parts_count(parts, &mut count),
            prolly_result::Ok
        );
        let json = (0..count)
            .map(|i| {
                let mut s = ptr::null();
                assert_eq!(prolly_dolt_parts_get(parts, i, &mut s), prolly_result::Ok);
                // SAFETY: a NUL-terminated string the list owns, copied before the free.
                unsafe { CStr::from_ptr(s) }.to_str().unwrap().to_string()
            })
            .collect();
        let mut s = ptr::null();
        assert_eq!(
            prolly_dolt_parts_get(parts, count, &mut s),
            prolly_result::ErrInvalidArgument
        );
        prolly_dolt_parts_free(parts);
        Ok(json)
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        prolly_dolt_free(self.0);
    }
}

/// A stream's schema and batches.
fn read(stream: FFI_ArrowArrayStream) -> (SchemaRef, Vec<RecordBatch>) {
    let reader = ArrowArrayStreamReader::try_new(stream).unwrap();
    let schema = reader.schema();
    (schema, reader.map(Result::unwrap).collect())
}

/// Batches cut into one-row batches: the same rows compare equal however they were batched.
fn rows(batches: &[RecordBatch]) -> Vec<RecordBatch> {
    batches
        .iter()
        .flat_map(|b| (0..b.num_rows()).map(move |i| b.slice(i, 1)))
        .collect()
}

/// A diff part read through `prolly_dolt_diff_part_arrow`, or the code it returned.
fn read_part(json: &str, batch_rows: u64) -> Result<(SchemaRef, Vec<RecordBatch>), prolly_result> {
    let json = c(json);
    let mut s = FFI_ArrowArrayStream::empty();
    match prolly_dolt_diff_part_arrow(json.as_ptr(), batch_rows, &mut s) {
        prolly_result::Ok => Ok(read(s)),
        r => {
            assert!(s.release.is_none(), "a stream written on failure");
            Err(r)
        }
    }
}

/// Dolt's answers: each diff of queries.txt with the number of lines of the CSV Dolt printed
/// for `select * from dolt_diff(…)`.
fn dolt_diffs() -> Vec<(String, String, String, usize)> {
    let text = std::fs::read_to_string(data().join("expected.txt")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].into(), f[1].into(), f[2].into(), f[3].parse().unwrap())
        })
        .collect()
}

/// The lines Dolt's CSV of these rows has: a header, a line a row, and one more for each line
/// break inside a cell (the VARBINARY keys' bytes hold some; no other cell of this database
/// does).
fn csv_lines(rows: &[RecordBatch]) -> usize {
    let breaks = |a: &dyn Array| -> usize {
        let count = |v: &[u8]| v.iter().filter(|&&b| b == b'\n').count();
        match a.data_type() {
            DataType::Utf8 => a
                .as_string::<i32>()
                .iter()
                .flatten()
                .map(|v| count(v.as_bytes()))
                .sum(),
            DataType::Binary => a.as_binary::<i32>().iter().flatten().map(count).sum(),
            _ => 0,
        }
    };
    let cells: usize = rows
        .iter()
        .flat_map(|b| b.columns().iter().map(|c| breaks(c.as_ref())))
        .sum();
    1 + rows.iter().map(RecordBatch::num_rows).sum::<usize>() + cells
}

#[test]
fn diff_parts_from_c_give_the_whole_diff() {
    let dir = data().join("db");
    let db = Db::open(&dir);
    let rust_db = Arc::new(prollystore_sql::open(&dir).unwrap());
    let diffs = dolt_diffs();
    assert_eq!(diffs.len(), 9);
    for (from, to, table, dolt_lines) in &diffs {
        let (cf, ct, ctable) = (c(from), c(to), c(table));
        let mut s = FFI_ArrowArrayStream::empty();
        assert_eq!(
            prolly_dolt_diff_arrow(db.0, cf.as_ptr(), ct.as_ptr(), ctable.as_ptr(), 0, &mut s),
            prolly_result::Ok
        );
        let (schema, whole) = read(s);
        let whole = rows(&whole);
        assert_eq!(csv_lines(&whole), *dolt_lines, "{from} {to} {table}");
        for n in [1u64, 2, 3, 8] {
            let what = format!("{from}..{to} {table}, {n} parts");
            let parts = db.split_diff(from, to, table, n).unwrap();
            assert!(!parts.is_empty() && parts.len() as u64 <= n, "{what}");
            let mut got = Vec::new();
            for (i, json) in parts.iter().enumerate() {
                let part = DiffPart::from_json(json).unwrap();
                assert_eq!(
                    (part.index, part.of),
                    (i as u64, parts.len() as u64),
                    "{what}"
                );
                let (part_schema, batches) = read_part(json, 97).unwrap();
                assert_eq!(part_schema, schema, "{what}: part {i}'s schema");
                // What the Rust reader gives, batch for batch.
                let want: Vec<RecordBatch> = DiffBatches::part(rust_db.clone(), &part, 97)
                    .unwrap()
                    .map(Result::unwrap)
                    .collect();
                assert_eq!(batches, want, "{what}: part {i}");
                got.extend(rows(&batches));
            }
            assert_eq!(got.len(), whole.len(), "{what}");
            assert!(
                got == whole,
                "{what}: the parts' rows differ from the diff's"
            );
        }
    }
    // The diffs over many leaves did give several non-empty parts.
    let parts = db.split_diff("main~1", "spread", "vb", 8).unwrap();
    assert_eq!(parts.len(), 8);
    let sizes: Vec<usize> = parts
        .iter()
        .map(|p| {
            read_part(p, 0)
                .unwrap()
                .1
                .iter()
                .map(|b| b.num_rows())
                .sum()
        })
        .collect();
    assert!(sizes.iter().all(|&n| n > 0), "{sizes:?}");
}

#[test]
fn bad_input_is_a_clear_error() {
    let dir = data().join("db");
    let db = Db::open(&dir);
    let (main1, main, cs) = (c("main~1"), c("main"), c("cs"));
    let mut out = ptr::null_mut();

    // Unknown state, table in neither state, zero parts: nothing written.
    assert_eq!(
        db.split_diff("nope", "main", "cs", 2),
        Err(prolly_result::NotFound)
    );
    assert!(last_error().contains("nope"), "{}", last_error());
    assert_eq!(
        db.split_diff("main~1", "main", "nope", 2),
        Err(prolly_result::NotFound)
    );
    assert!(last_error().contains("\"nope\""), "{}", last_error());
    assert_eq!(
        db.split_diff("main~1", "main", "cs", 0),
        Err(prolly_result::ErrInvalidArgument)
    );
    assert!(last_error().contains("0 parts"), "{}", last_error());
    // NULL pointers.
    let null_cases = [
        prolly_dolt_split_diff(
            ptr::null(),
            main1.as_ptr(),
            main.as_ptr(),
            cs.as_ptr(),
            2,
            &mut out,
        ),
        prolly_dolt_split_diff(db.0, ptr::null(), main.as_ptr(), cs.as_ptr(), 2, &mut out),
        prolly_dolt_split_diff(db.0, main1.as_ptr(), ptr::null(), cs.as_ptr(), 2, &mut out),
        prolly_dolt_split_diff(
            db.0,
            main1.as_ptr(),
            main.as_ptr(),
            ptr::null(),
            2,
            &mut out,
        ),
        prolly_dolt_split_diff(
            db.0,
            main1.as_ptr(),
            main.as_ptr(),
            cs.as_ptr(),
            2,
            ptr::null_mut(),
        ),
    ];
    assert!(
        null_cases
            .iter()
            .all(|&r| r == prolly_result::ErrNullArgument),
        "{null_cases:?}"
    );
    assert!(out.is_null());

    let diff_part = db.split_diff("main~1", "main", "cs", 2).unwrap().remove(1);
    let mut s = FFI_ArrowArrayStream::empty();
    assert_eq!(
        prolly_dolt_diff_part_arrow(ptr::null(), 0, &mut s),
        prolly_result::ErrNullArgument
    );
    let json = c(&diff_part);
    assert_eq!(
        prolly_dolt_diff_part_arrow(json.as_ptr(), 0, ptr::null_mut()),
        prolly_result::ErrNullArgument
    );

    // Not JSON.
    assert_eq!(
        read_part("{not json", 0).unwrap_err(),
        prolly_result::ErrInvalidArgument
    );
    assert!(
        last_error().contains("does not parse as a diff part"),
        "{}",
        last_error()
    );

    // A table part given to the diff reader, and a diff part to the table reader.
    let mut parts = ptr::null_mut();
    assert_eq!(
        prolly_dolt_split(db.0, main.as_ptr(), cs.as_ptr(), 2, ptr::null(), &mut parts),
        prolly_result::Ok
    );
    let mut table_part = ptr::null();
    assert_eq!(
        prolly_dolt_parts_get(parts, 0, &mut table_part),
        prolly_result::Ok
    );
    // SAFETY: a NUL-terminated string the list owns, copied before the free.
    let table_part = unsafe { CStr::from_ptr(table_part) }
        .to_str()
        .unwrap()
        .to_string();
    prolly_dolt_parts_free(parts);
    assert_eq!(
        read_part(&table_part, 0).unwrap_err(),
        prolly_result::ErrInvalidArgument
    );
    let want = "its format is \"prollystore.dolt.part/1\"; this reader reads \"prollystore.dolt.diff-part/1\"";
    assert!(last_error().contains(want), "{}", last_error());
    assert_eq!(
        prolly_dolt_part_arrow(json.as_ptr(), 0, &mut s),
        prolly_result::ErrInvalidArgument
    );
    let want = "its format is \"prollystore.dolt.diff-part/1\"; this reader reads \"prollystore.dolt.part/1\"";
    assert!(last_error().contains(want), "{}", last_error());
    assert!(s.release.is_none());

    // A part naming another database (the description is the dolt crate's to write): that
    // database lacks the table chunks the part was cut from.
    let mut other = DiffPart::from_json(&diff_part).unwrap();
    let elsewhere = data().join("../dolt_diff/db");
    other.database = elsewhere.to_str().unwrap().to_string();
    assert_eq!(
        read_part(&other.to_json(), 0).unwrap_err(),
        prolly_result::ErrInvalidArgument
    );
    assert!(
        last_error().contains("does not hold table chunk")
            && last_error().contains("another database"),
        "{}",
        last_error()
    );
    // A database that is not there.
    other.database = data().join("no-such-db").to_str().unwrap().to_string();
    let r = read_part(&other.to_json(), 0).unwrap_err();
    assert_eq!(r, prolly_result::NotFound, "{}", last_error());
    assert!(last_error().contains("no-such-db"), "{}", last_error());
    // A boundary key changed after the cut.
    let mut tampered = DiffPart::from_json(&diff_part).unwrap();
    tampered.after_key = Some(vec![1, 2, 3]);
    assert_eq!(
        read_part(&tampered.to_json(), 0).unwrap_err(),
        prolly_result::ErrInvalidArgument
    );
    assert!(last_error().contains("changed after"), "{}", last_error());
    // The untouched part still reads.
    assert!(read_part(&diff_part, 0).is_ok());
}

#[test]
fn c_reads_diff_parts() {
    let out_dir = tempfile::tempdir().expect("temp dir");
    let bin = common::compile_c_test("test_dolt_diff_parts", out_dir.path());
    common::run_c(&bin, &[data().join("db").to_str().unwrap()]);
}
