//! NULL keys in bounds (`None`, as in rows): `IS NULL` lookups through secondary indexes and
//! ranges that take NULLs in (they sort first, as in Dolt's indexes) or leave them out, checked
//! against what the real Dolt printed for the same questions (`data/null_keys`, made by
//! `data/make_null_keys.sh`; see `data/README.md`).

use std::ops::Bound::{self, Excluded, Included, Unbounded};
use std::path::PathBuf;

use prollystore_dolt::csv_field::{write_csv_header, write_csv_row};
use prollystore_dolt::{Database, KeyRange, SqlValue, State};

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/null_keys")
}

fn expected(name: &str) -> String {
    std::fs::read_to_string(data().join("expected").join(format!("{name}.csv"))).unwrap()
}

/// How an answer is compared: in order, by id (an index that cuts values returns rows in
/// stored order), or as a multiset of lines (a keyless table's index orders by row hash).
#[derive(Clone, Copy, Debug)]
enum Order {
    Exact,
    ById,
    Lines,
}

/// NULL in a bound: `None`, as in rows.
fn null() -> Option<SqlValue> {
    None
}

fn int(i: i64) -> Option<SqlValue> {
    Some(SqlValue::Int(i))
}

fn text(s: &str) -> Option<SqlValue> {
    Some(SqlValue::Text(s.into()))
}

type Key = Vec<Option<SqlValue>>;

fn range(from: Bound<Key>, to: Bound<Key>, reverse: bool) -> KeyRange {
    KeyRange {
        from,
        to,
        reverse,
        limit: None,
    }
}

/// The CSV an index scan gives, as `dolt sql -r csv` prints it.
fn scan_csv(db: &Database, table: &str, index: &str, r: &KeyRange) -> String {
    let t = db.table_at("main", State::Committed, table).unwrap();
    let reader = t.reader(db).unwrap();
    let mut out = Vec::new();
    write_csv_header(reader.column_names(), &mut out);
    for row in reader.index_scan(index, r).unwrap() {
        write_csv_row(&row.unwrap(), &mut out);
    }
    String::from_utf8(out).unwrap()
}

fn normalized(csv: &str, order: Order) -> Vec<String> {
    let mut lines: Vec<String> = csv.lines().map(str::to_string).collect();
    let body = &mut lines[1..];
    match order {
        Order::Exact => {}
        Order::ById => body.sort_by_key(|l| l.split(',').next().unwrap().parse::<i64>().unwrap()),
        Order::Lines => body.sort(),
    }
    lines
}

#[test]
fn null_lookups_and_ranges_match_dolt() {
    let db = Database::open(data().join("db")).unwrap();
    let cases: Vec<(&str, &str, &str, KeyRange, Order)> = vec![
        (
            "c_null",
            "n",
            "ix_c",
            KeyRange::prefix(vec![null()]),
            Order::Exact,
        ),
        (
            "c_null_rev",
            "n",
            "ix_c",
            KeyRange {
                reverse: true,
                ..KeyRange::prefix(vec![null()])
            },
            Order::Exact,
        ),
        (
            "c_null_or_le_1",
            "n",
            "ix_c",
            range(Unbounded, Included(vec![int(1)]), false),
            Order::Exact,
        ),
        (
            "c_null_or_le_1",
            "n",
            "ix_c",
            range(Included(vec![null()]), Included(vec![int(1)]), false),
            Order::Exact,
        ),
        (
            "c_le_1",
            "n",
            "ix_c",
            range(Excluded(vec![null()]), Included(vec![int(1)]), false),
            Order::Exact,
        ),
        (
            "c_lt_1",
            "n",
            "ix_c",
            range(Excluded(vec![null()]), Excluded(vec![int(1)]), false),
            Order::Exact,
        ),
        (
            "c_ge_null",
            "n",
            "ix_c",
            range(Included(vec![null()]), Unbounded, false),
            Order::Exact,
        ),
        (
            "c_gt_null_rev",
            "n",
            "ix_c",
            range(Excluded(vec![null()]), Unbounded, true),
            Order::Exact,
        ),
        (
            "cs_null_null",
            "n",
            "ix_cs",
            KeyRange::prefix(vec![null(), null()]),
            Order::Exact,
        ),
        (
            "cs_null_ge_b",
            "n",
            "ix_cs",
            range(
                Included(vec![null(), text("b")]),
                Included(vec![null()]),
                false,
            ),
            Order::Exact,
        ),
        (
            "cs_null_upto_b",
            "n",
            "ix_cs",
            range(
                Included(vec![null()]),
                Included(vec![null(), text("b")]),
                false,
            ),
            Order::Exact,
        ),
        (
            "cs_2_null",
            "n",
            "ix_cs",
            KeyRange::prefix(vec![int(2), null()]),
            Order::Exact,
        ),
        (
            "sd_a_null",
            "n",
            "ix_sd",
            KeyRange::prefix(vec![text("a"), null()]),
            Order::Exact,
        ),
        (
            "sd_null",
            "n",
            "ix_sd",
            KeyRange::prefix(vec![null()]),
            Order::Exact,
        ),
        (
            "s_empty",
            "n",
            "ix_sd",
            KeyRange::prefix(vec![text("")]),
            Order::Exact,
        ),
        (
            "t_null",
            "n",
            "ix_t",
            KeyRange::prefix(vec![null()]),
            Order::ById,
        ),
        (
            "t_null_or_lt_b",
            "n",
            "ix_t",
            range(Unbounded, Excluded(vec![text("b")]), false),
            Order::ById,
        ),
        (
            "t_lt_b",
            "n",
            "ix_t",
            range(Excluded(vec![null()]), Excluded(vec![text("b")]), false),
            Order::ById,
        ),
        (
            "u_null",
            "n",
            "ux_u",
            KeyRange::prefix(vec![null()]),
            Order::Exact,
        ),
        (
            "nk_null",
            "nk",
            "ix_c",
            KeyRange::prefix(vec![null()]),
            Order::Lines,
        ),
        (
            "nk_le_1",
            "nk",
            "ix_c",
            range(Excluded(vec![null()]), Included(vec![int(1)]), false),
            Order::Lines,
        ),
    ];
    for (name, table, index, r, order) in cases {
        let want = expected(name);
        let got = scan_csv(&db, table, index, &r);
        assert_eq!(
            normalized(&got, order),
            normalized(&want, order),
            "{name}: {index} over {r:?}"
        );
        if matches!(order, Order::Exact) {
            // Byte for byte, as Dolt printed it.
            assert_eq!(got, want, "{name}");
        }
    }
}

#[test]
fn null_in_primary_key_bounds() {
    let db = Database::open(data().join("db")).unwrap();
    let t = db.table_at("main", State::Committed, "n").unwrap();
    let reader = t.reader(&db).unwrap();
    // No primary key is NULL.
    assert_eq!(reader.get(&[null()]).unwrap(), None);
    assert_eq!(
        reader
            .scan(&KeyRange::prefix(vec![null()]))
            .unwrap()
            .count(),
        0
    );
    // NULL is below every key: from it, inclusive or not, is the whole table.
    for from in [Included(vec![null()]), Excluded(vec![null()])] {
        let n = reader
            .scan(&range(from, Included(vec![int(10)]), false))
            .unwrap()
            .count();
        assert_eq!(n, 10);
    }
    // Through an index, a NULL for a primary-key column (never NULL) of the index key: below
    // every value of it, so `c = 2 AND id IS NULL` is empty, and from (2, NULL) on is c >= 2.
    let ids = |r: &KeyRange| {
        reader
            .index_scan("ix_c", r)
            .unwrap()
            .map(|row| row.unwrap()[0].clone().unwrap())
            .collect::<Vec<_>>()
    };
    assert!(ids(&KeyRange::prefix(vec![int(2), null()])).is_empty());
    assert_eq!(
        ids(&range(Included(vec![int(2), null()]), Unbounded, false)),
        ids(&range(Included(vec![int(2)]), Unbounded, false)),
    );
    // A lookup through `index_lookup` spells NULL the same way.
    let via_lookup = reader.index_lookup("ix_c", &[null()]).unwrap().count();
    assert_eq!(via_lookup, expected("c_null").lines().count() - 1);
}

#[test]
fn null_value_text() {
    let mut out = Vec::new();
    write_csv_row(&[null(), text("")], &mut out);
    assert_eq!(out, b",\"\"\n");
}
