//! Diffs cut into parts ([`prollystore_dolt::diff_parts`]) and read back as Arrow
//! ([`DiffBatches::part`]): against a model, random tables (keyed and keyless) edited at random
//! and cut into a random number of parts give, part after part, exactly the whole diff's
//! batches, and as many rows as the model says changed; a part keeps reading the states it was
//! cut from after the branch moved; a part of another database, or a changed description, is
//! an error that says what.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use prollystore_arrow::DiffBatches;
use prollystore_dolt::diff_parts::{split_diff, DiffPart};
use prollystore_dolt::write::{CommitMeta, DoltWriter, TableDef};
use prollystore_dolt::{Database, SqlValue};
use prollystore_sql::FromSql;
use proptest::prelude::*;

/// Every batch cut into one-row batches, so reads batched differently compare.
fn rows_of(reader: DiffBatches) -> Vec<RecordBatch> {
    reader
        .map(|b| b.unwrap())
        .flat_map(|b| (0..b.num_rows()).map(move |i| b.slice(i, 1)))
        .collect()
}

/// The parts read through their JSON on a database opened afresh, as a worker reads them.
fn read_parts(parts: &[DiffPart], batch_rows: usize) -> Vec<RecordBatch> {
    let mut out = Vec::new();
    for p in parts {
        let p = DiffPart::from_json(&p.to_json()).unwrap();
        out.extend(rows_of(
            DiffBatches::open_diff_part(&p, batch_rows).unwrap(),
        ));
    }
    out
}

/// One edit of the model, over key positions.
#[derive(Clone, Debug)]
enum Op {
    Update(i64, u32),
    Insert(i64, u32),
    Delete(i64),
    /// `len` keys from `k`: deleted (0), inserted or updated.
    Run(i64, i64, u8, u32),
}

fn op(n: i64) -> impl Strategy<Value = Op> {
    let n = n.max(1);
    prop_oneof![
        3 => (0..n, any::<u32>()).prop_map(|(k, s)| Op::Update(k, s)),
        3 => (0..n, any::<u32>()).prop_map(|(k, s)| Op::Insert(k, s)),
        3 => (0..n).prop_map(Op::Delete),
        1 => (0..n, 1..600i64, 0..3u8, any::<u32>()).prop_map(|(k, l, w, s)| Op::Run(k, l, w, s)),
    ]
}

fn text(k: i64, salt: u32) -> String {
    format!("v{k}-{salt:x}-{}", "x".repeat((salt % 13) as usize))
}

/// A database with table `t` (keyed) and `k` (keyless) holding the rows of `base` at `HEAD~1`
/// and of `base` edited by `ops` at `HEAD`; returns the model's two states of `t`.
type Model = BTreeMap<i64, String>;

fn make(dir: &std::path::Path, n: i64, ops: &[Op]) -> (Model, Model) {
    let base: Model = (0..n).map(|i| (2 * i, text(2 * i, 0))).collect();
    let mut to = base.clone();
    for o in ops {
        match *o {
            Op::Update(k, s) | Op::Insert(k, s) => {
                let k = if matches!(o, Op::Update(..)) {
                    2 * k
                } else {
                    2 * k + 1
                };
                to.insert(k, text(k, s));
            }
            Op::Delete(k) => {
                to.remove(&(2 * k));
            }
            Op::Run(k, l, what, s) => {
                for i in k..k + l {
                    match what {
                        0 => {
                            to.remove(&(2 * i));
                        }
                        1 => {
                            to.insert(2 * i + 1, text(2 * i + 1, s));
                        }
                        _ => {
                            if to.contains_key(&(2 * i)) {
                                to.insert(2 * i, text(2 * i, s));
                            }
                        }
                    }
                }
            }
        }
    }
    let rows = |m: &Model| -> Vec<Vec<Option<SqlValue>>> {
        m.iter()
            .map(|(k, v)| vec![Some(SqlValue::Int(*k)), Some(SqlValue::Text(v.clone()))])
            .collect()
    };
    let mut w = DoltWriter::open(dir).unwrap();
    for sql in [
        "CREATE TABLE t (id BIGINT PRIMARY KEY, v VARCHAR(100))",
        "CREATE TABLE k (id BIGINT, v VARCHAR(100))",
    ] {
        w.create_table(&TableDef::from_sql(sql).unwrap()).unwrap();
    }
    for table in ["t", "k"] {
        w.insert(table, &["id", "v"], &rows(&base)).unwrap();
    }
    w.commit(&CommitMeta::now("T", "t@example.com", "base"))
        .unwrap();
    let gone: Vec<Vec<SqlValue>> = base
        .keys()
        .filter(|k| !to.contains_key(k))
        .map(|k| vec![SqlValue::Int(*k)])
        .collect();
    // The keyless table: the rows that left, then the rows that came (each once).
    let left: Model = base
        .iter()
        .filter(|(k, v)| to.get(k) != Some(v))
        .map(|(k, v)| (*k, v.clone()))
        .collect();
    let came: Model = to
        .iter()
        .filter(|(k, v)| base.get(k) != Some(v))
        .map(|(k, v)| (*k, v.clone()))
        .collect();
    w.delete("t", &gone).unwrap();
    w.upsert("t", &["id", "v"], &rows(&came)).unwrap();
    w.delete_rows("k", &rows(&left)).unwrap();
    w.insert("k", &["id", "v"], &rows(&came)).unwrap();
    w.commit(&CommitMeta::now("T", "t@example.com", "edits"))
        .unwrap();
    (base, to)
}

fn check(n: i64, ops: &[Op], cuts: &[usize]) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = prollystore_test_vectors::writable_copy("dolt-db/vecdb", tmp.path()).unwrap();
    let (from, to) = make(&dir, n, ops);
    let changed = from
        .keys()
        .chain(to.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|k| from.get(k) != to.get(k))
        .count();
    let db = Arc::new(Database::open(&dir).unwrap());
    for table in ["t", "k"] {
        let whole = rows_of(DiffBatches::new(db.clone(), "HEAD~1", "HEAD", table, 1000).unwrap());
        if table == "t" {
            assert_eq!(whole.len(), changed, "the diff has the model's changes");
        }
        for &parts in cuts {
            let cut = split_diff(&db, "HEAD~1", "HEAD", table, parts, None).unwrap();
            assert!(!cut.is_empty() && cut.len() <= parts);
            for (i, p) in cut.iter().enumerate() {
                assert_eq!((p.index, p.of), (i as u64, cut.len() as u64));
            }
            for w in cut.windows(2) {
                assert_eq!(w[0].last_key, w[1].after_key);
            }
            let got = read_parts(&cut, 97);
            assert!(
                got == whole,
                "{table}: {parts} parts give other rows than the diff"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10))]

    #[test]
    fn parts_concatenated_equal_the_whole_diff(
        (n, ops, cuts) in (0..4000i64).prop_flat_map(|n| (
            Just(n),
            prop::collection::vec(op(n), 0..30),
            prop::collection::vec(1..40usize, 1..4),
        ))
    ) {
        check(n, &ops, &cuts);
    }
}

/// Two equal states: one empty part, which still gives the diff's columns.
#[test]
fn equal_states_give_one_empty_part() {
    let db = Arc::new(Database::open(prollystore_test_vectors::require("dolt-db/vecdb")).unwrap());
    let parts = split_diff(&db, "main", "main", "items", 8, None).unwrap();
    assert_eq!(parts.len(), 1);
    assert_eq!((&parts[0].after_key, &parts[0].last_key), (&None, &None));
    assert_eq!(parts[0].rows_compared, 0);
    let reader = DiffBatches::part(db.clone(), &parts[0], 10).unwrap();
    let whole = DiffBatches::new(db, "main", "main", "items", 10).unwrap();
    use arrow_array::RecordBatchReader;
    assert_eq!(reader.schema(), whole.schema());
    assert_eq!(reader.count(), 0);
}

/// A part cut before the branch moved reads the states it was cut from; one opened on another
/// database, or a changed description, is refused with a message that says why.
#[test]
fn parts_are_pinned_and_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = prollystore_test_vectors::writable_copy("dolt-db/vecdb", tmp.path()).unwrap();
    let (_, _) = make(&dir, 3000, &[Op::Run(100, 400, 2, 9), Op::Delete(2000)]);
    let db = Arc::new(Database::open(&dir).unwrap());
    let whole = rows_of(DiffBatches::new(db.clone(), "HEAD~1", "main", "t", 1000).unwrap());
    let parts = split_diff(&db, "HEAD~1", "main", "t", 3, None).unwrap();
    assert!(parts.len() > 1, "{parts:?}");
    drop(db);
    // main moves on.
    let mut w = DoltWriter::open(&dir).unwrap();
    w.delete("t", &[vec![SqlValue::Int(0)]]).unwrap();
    w.commit(&CommitMeta::now("T", "t@example.com", "moved"))
        .unwrap();
    drop(w);
    assert_eq!(
        read_parts(&parts, 50),
        whole,
        "the states cut, not main's new one"
    );

    // Another database holds neither table chunk.
    let other =
        Arc::new(Database::open(prollystore_test_vectors::require("dolt-db/vecdb")).unwrap());
    let e = DiffBatches::part(other, &parts[0], 10)
        .unwrap_err()
        .to_string();
    assert!(e.contains("another database") && e.contains("\"t\""), "{e}");

    // A boundary key that is no stored key, a rows root that is not the table's.
    let db = Arc::new(Database::open(&dir).unwrap());
    let mut bad = parts[0].clone();
    bad.last_key = Some(vec![1, 2, 3]);
    let e = DiffBatches::part(db.clone(), &bad, 10)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("boundary key 010203") && e.contains("changed after"),
        "{e}"
    );
    let mut bad = parts[1].clone();
    bad.to.rows_root = bad.from.rows_root;
    let e = DiffBatches::part(db, &bad, 10).unwrap_err().to_string();
    assert!(
        e.contains("row data root") && e.contains("changed after"),
        "{e}"
    );
    // Not a diff part at all.
    let e = DiffPart::from_json("{\"format\":\"prollystore.dolt.part/1\"}").unwrap_err();
    assert!(e.to_string().contains("diff part"), "{e}");
}
