//! The streamed import (`DoltWriter::apply_fields`, the bulk path into an empty table): the
//! trees, errors and rows the one-by-one inserts give.

use std::borrow::Cow;

use super::helpers::{copy_db, meta, scenario};
use prollystore_dolt::error::DoltError;
use prollystore_dolt::sql_value::SqlValue;
use prollystore_dolt::write::{DoltWriter, RowMode, TableDef};
use prollystore_sql::FromSql;

const CREATE: &str = "CREATE TABLE bulk (
    id int NOT NULL,
    name varchar(20) NOT NULL,
    note text,
    price decimal(8,2),
    score double,
    day date,
    at datetime(6),
    kind enum('a','b','c') DEFAULT 'b',
    code varbinary(8),
    email varchar(40),
    PRIMARY KEY (id),
    KEY by_name (name, day),
    UNIQUE KEY by_email (email)
)";
const COLUMNS: [&str; 9] = [
    "id", "name", "note", "price", "score", "day", "at", "code", "email",
];

/// Rows as text fields (`None`: NULL), in no particular key order, some with NULLs, a
/// long text value, duplicate names and NULL emails (NULLs never clash in a unique index).
fn rows() -> Vec<Vec<Option<String>>> {
    (0..1200)
        .map(|i: i64| {
            let id = (i * 7919) % 10_007;
            let f = |s: String| Some(s);
            vec![
                f(id.to_string()),
                f(format!("name-{}", i % 97)),
                (i % 5 != 0).then(|| "x".repeat((i % 300) as usize * 30)),
                f(format!("{}.{:02}", i % 9999, i % 100)),
                (i % 7 != 0).then(|| format!("{}", i as f64 / 8.0)),
                f(format!(
                    "20{:02}-{:02}-{:02}",
                    i % 30,
                    i % 12 + 1,
                    i % 28 + 1
                )),
                f(format!(
                    "2024-01-01 00:{:02}:{:02}.{:06}",
                    i % 60,
                    i / 60 % 60,
                    i
                )),
                f(format!("c{i}")),
                (i % 3 == 0).then(|| format!("user{i}@example.com")),
            ]
        })
        .collect()
}

fn as_values(rows: &[Vec<Option<String>>]) -> Vec<Vec<Option<SqlValue>>> {
    rows.iter()
        .map(|r| r.iter().map(|f| f.clone().map(SqlValue::Text)).collect())
        .collect()
}

fn fields(rows: &[Vec<Option<String>>]) -> impl Iterator<Item = Vec<Option<Cow<'_, [u8]>>>> {
    rows.iter().map(|r| {
        r.iter()
            .map(|f| f.as_deref().map(|s| Cow::Borrowed(s.as_bytes())))
            .collect()
    })
}

/// A fresh writer on a copy of a Dolt-made database with the table `bulk` created.
fn writer() -> (tempfile::TempDir, DoltWriter) {
    let (tmp, dir) = copy_db(&scenario("branches/after"));
    let mut w = prollystore_sql::writer(&dir).unwrap();
    w.create_table(&TableDef::from_sql(CREATE).unwrap())
        .unwrap();
    (tmp, w)
}

/// Random field texts, plain and odd (signs, spaces, exponents, out of range, bad dates,
/// long text), through the streamed import's direct parsers and through `insert` (every
/// value parsed by the general path): the same commit, or both refused. (Which of two bad
/// rows is named may differ: `insert` converts every row before it checks lengths, the
/// stream stops at the first bad row, as Dolt does.)
#[test]
fn direct_parsers_agree_with_the_general_path() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    const T: &str = "CREATE TABLE fast (id bigint NOT NULL, small smallint, \
        u int unsigned, price decimal(6,2), score double, f float, day date, \
        at datetime(6), name varchar(5), PRIMARY KEY (id))";
    const COLS: [&str; 9] = [
        "id", "small", "u", "price", "score", "f", "day", "at", "name",
    ];
    // Per column: values the direct parsers take, then odd ones (about a third).
    let pools: [&[&'static str]; 8] = [
        &[
            "0", "1", "-1", "32767", "-32768", "12", "+7", " 7", "32768", "7 ",
        ],
        &["0", "7", "4294967295", "123", "4294967296", "-1", "00012"],
        &[
            "1.5", "-0.00", "1234.56", ".5", "5.", "-7.25", "12345.6", "9999.995", "1e3",
        ],
        &[
            "1.5", "-0", "0.1", "-2.75", "1e3", "1E-2", "inf", "NaN", " 2",
        ],
        &["1.5", "0.1", "-3", "3.4028235e38", "1e39", "nan"],
        &[
            "2024-02-29",
            "1999-12-31",
            "0001-01-01",
            "2023-02-29",
            "0000-00-00",
            "2024-1-1",
        ],
        &[
            "2024-01-01 12:34:56",
            "2024-01-01T12:34:56.5",
            "1970-01-01 00:00:00.000001",
            "2024-01-01 24:00:00",
            "2024-01-01 12:34:56.1234567",
            "2024-01-01",
            "2024-01-01 1:2:3",
        ],
        &["abc", "abcde", "ééééé", "", "abcdef", "éééééé", " a"],
    ];
    let row = pools.map(|p| prop::option::weighted(0.9, prop::sample::select(p.to_vec())));
    let agreed_commits = std::cell::Cell::new(0);
    let mut runner = TestRunner::new(Config {
        cases: 400,
        ..Config::default()
    });
    runner
        .run(&prop::collection::vec(row, 1..4), |rows| {
            let rows: Vec<Vec<Option<String>>> = rows
                .into_iter()
                .enumerate()
                .map(|(id, rest): (usize, [Option<&str>; 8])| {
                    std::iter::once(Some(id.to_string()))
                        .chain(rest.into_iter().map(|t| t.map(str::to_string)))
                        .collect()
                })
                .collect();
            let open = || {
                let (tmp, dir) = copy_db(&scenario("branches/after"));
                let mut w = prollystore_sql::writer(&dir).unwrap();
                w.create_table(&TableDef::from_sql(T).unwrap()).unwrap();
                (tmp, w)
            };
            let (_a, mut general) = open();
            let by_values = general
                .insert("fast", &COLS, &as_values(&rows))
                .map_err(|e| e.to_string())
                .map(|_| general.commit(&meta("fast")).unwrap());
            let (_b, mut direct) = open();
            let streamed = direct
                .apply_fields(RowMode::Insert, "fast", &COLS, || fields(&rows))
                .map_err(|e| e.to_string())
                .map(|_| direct.commit(&meta("fast")).unwrap());
            match (by_values, streamed) {
                (Ok(a), Ok(b)) => {
                    agreed_commits.set(agreed_commits.get() + 1);
                    prop_assert_eq!(a, b, "{:?}", rows)
                }
                (Err(_), Err(_)) => {}
                (a, b) => prop_assert!(false, "{a:?} against {b:?} for {rows:?}"),
            }
            Ok(())
        })
        .unwrap();
    // Enough cases where every row was good, so commits were compared at all.
    assert!(agreed_commits.get() >= 20, "{}", agreed_commits.get());
}

#[test]
fn streamed_rows_build_the_trees_inserts_build() {
    let rows = rows();
    // Reference: the rows inserted as values (index keys decoded back from each row),
    // and the same rows inserted in two calls (the later one edits the stored trees).
    let (_a, mut by_values) = writer();
    by_values
        .insert("bulk", &COLUMNS, &as_values(&rows))
        .unwrap();
    let expected = by_values.commit(&meta("bulk")).unwrap();
    let (_b, mut in_parts) = writer();
    for part in rows.chunks(1050) {
        in_parts.insert("bulk", &COLUMNS, &as_values(part)).unwrap();
    }
    assert_eq!(in_parts.commit(&meta("bulk")).unwrap(), expected);
    for mode in [RowMode::Insert, RowMode::Upsert] {
        let (_c, mut streamed) = writer();
        let n = streamed
            .apply_fields(mode, "bulk", &COLUMNS, || fields(&rows))
            .unwrap();
        assert_eq!(n, rows.len());
        assert_eq!(
            streamed.commit(&meta("bulk")).unwrap(),
            expected,
            "{mode:?}"
        );
    }
}

/// Rows in primary-key order under an integer index (its keys sorted by the indexed
/// column alone, ties in row order), some NULLs, some values the direct encoder leaves
/// to the general path (a sign, spaces, a fraction to round): the trees inserts build.
#[test]
fn ordered_rows_under_an_integer_index() {
    const T: &str = "CREATE TABLE ordered (
        id bigint NOT NULL, qty smallint, price decimal(6,2), PRIMARY KEY (id), KEY (qty))";
    let rows: Vec<Vec<Option<String>>> = (0..3000i64)
        .map(|i| {
            let qty = match i % 11 {
                0 => None,
                1 => Some(format!(" {}", i % 37)),
                2 => Some(format!("+{}", i % 37)),
                _ => Some(format!("{}", i % 37 - 18)),
            };
            let price = match i % 5 {
                0 => format!("{}.005", i % 999),
                _ => format!("-{}.{:02}", i % 999, i % 100),
            };
            vec![Some((i * 3).to_string()), qty, Some(price)]
        })
        .collect();
    let columns = ["id", "qty", "price"];
    let open = || {
        let (tmp, dir) = copy_db(&scenario("branches/after"));
        let mut w = prollystore_sql::writer(&dir).unwrap();
        w.create_table(&TableDef::from_sql(T).unwrap()).unwrap();
        (tmp, w)
    };
    let (_a, mut by_values) = open();
    by_values
        .insert("ordered", &columns, &as_values(&rows))
        .unwrap();
    let (_b, mut streamed) = open();
    streamed
        .apply_fields(RowMode::Insert, "ordered", &columns, || fields(&rows))
        .unwrap();
    assert_eq!(
        streamed.commit(&meta("o")).unwrap(),
        by_values.commit(&meta("o")).unwrap()
    );
}

#[test]
fn streamed_rows_fail_and_repeat_keys_as_inserts_do() {
    let mut rows = rows();
    rows.truncate(50);
    // A repeated key: an insert names the later row; an upsert lets the later row win.
    let mut repeated = rows.clone();
    repeated.push(rows[10].clone());
    repeated.last_mut().unwrap()[1] = Some("changed".into());
    let (_a, mut w) = writer();
    let expected = w
        .insert("bulk", &COLUMNS, &as_values(&repeated))
        .unwrap_err()
        .to_string();
    let got = w
        .apply_fields(RowMode::Insert, "bulk", &COLUMNS, || fields(&repeated))
        .unwrap_err();
    assert_eq!(got.to_string(), expected);
    assert!(
        expected.contains("row 50: duplicate primary key"),
        "{expected}"
    );
    let (_b, mut by_values) = writer();
    by_values
        .upsert("bulk", &COLUMNS, &as_values(&repeated))
        .unwrap();
    let (_c, mut streamed) = writer();
    streamed
        .apply_fields(RowMode::Upsert, "bulk", &COLUMNS, || fields(&repeated))
        .unwrap();
    assert_eq!(
        streamed.commit(&meta("m")).unwrap(),
        by_values.commit(&meta("m")).unwrap()
    );
    // A unique value twice, a NULL in a NOT NULL column, a value out of range, bad UTF-8.
    let mut twice = rows.clone();
    twice[20][8] = twice[3][8].clone();
    let mut null = rows.clone();
    null[7][1] = None;
    let mut range = rows.clone();
    range[9][3] = Some("12345678.5".into());
    for bad in [twice, null, range] {
        let expected = w
            .insert("bulk", &COLUMNS, &as_values(&bad))
            .unwrap_err()
            .to_string();
        let got = w
            .apply_fields(RowMode::Insert, "bulk", &COLUMNS, || fields(&bad))
            .unwrap_err();
        assert_eq!(got.to_string(), expected);
    }
    let err = w
        .apply_fields(RowMode::Insert, "bulk", &["id", "name"], || {
            std::iter::once(vec![
                Some(Cow::Borrowed(&b"1"[..])),
                Some(Cow::Borrowed(&b"\xff"[..])),
            ])
        })
        .unwrap_err();
    assert!(
        matches!(&err, DoltError::BadValue { column, reason, .. }
            if column == "name" && reason.contains("row 0: a value is not UTF-8")),
        "{err}"
    );
    // Nothing of the failed calls stayed: the table is still empty.
    assert!(w.tables().unwrap().contains(&"bulk".to_string()));
    let n = w
        .apply_fields(RowMode::Insert, "bulk", &COLUMNS, || fields(&rows))
        .unwrap();
    assert_eq!(n, rows.len());
}
