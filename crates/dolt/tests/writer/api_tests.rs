//! The public writer against Dolt-made databases: rejected changes leave every byte as it
//! was, accepted ones commit and read back, and (with `PROLLY_DOLT` naming a `dolt` binary)
//! Dolt itself logs, selects, diffs and commits on top of what we wrote.

use prollystore_sql::FromSql;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::helpers::{copy_db, copy_tree, scenario};
pub(crate) use super::helpers::{dolt_user as dolt, meta, snapshot};
use prollystore_dolt::db::{Database, State};
use prollystore_dolt::error::DoltError;
use prollystore_dolt::sql_value::SqlValue;
use prollystore_dolt::write::{CommitMeta, DoltWriter, RowMode};

fn int(v: i64) -> Option<SqlValue> {
    Some(SqlValue::Int(v))
}

fn text(v: &str) -> Option<SqlValue> {
    Some(SqlValue::Text(v.into()))
}

#[test]
fn rejected_changes_leave_every_byte_as_it_was() {
    let (_tmp, dir) = copy_db(&scenario("branches/after"));
    let before = snapshot(&dir);
    {
        let mut w = prollystore_sql::writer(&dir).unwrap();
        let cols = ["id", "email", "name", "city"];
        // A unique-key duplicate: user2's email (as the feature branch merged it) on a new id.
        let err = w
            .insert(
                "customers",
                &cols,
                &[vec![
                    int(900),
                    text("user2.f@example.com"),
                    text("X"),
                    text("Y"),
                ]],
            )
            .unwrap_err();
        assert!(
            matches!(&err, DoltError::BadValue { column, reason, .. }
                if column == "email" && reason.contains("uq_email")),
            "{err}"
        );
        // Duplicates among the rows of one call: a key, then a unique value.
        let err = w
            .insert(
                "customers",
                &cols,
                &[
                    vec![int(700), text("p@example.com"), None, None],
                    vec![int(701), text("q@example.com"), None, None],
                    vec![int(700), text("r@example.com"), None, None],
                ],
            )
            .unwrap_err();
        assert!(
            err.to_string().contains("row 2") && err.to_string().contains("duplicate primary key"),
            "{err}"
        );
        let err = w
            .insert(
                "customers",
                &cols,
                &[
                    vec![int(700), text("p@example.com"), None, None],
                    vec![int(701), text("p@example.com"), None, None],
                ],
            )
            .unwrap_err();
        assert!(
            err.to_string().contains("row 1") && err.to_string().contains("uq_email"),
            "{err}"
        );
        // A duplicate primary key.
        let err = w
            .insert(
                "customers",
                &cols,
                &[vec![int(1), text("new@example.com"), None, None]],
            )
            .unwrap_err();
        assert!(err.to_string().contains("duplicate primary key"), "{err}");
        // NULL in a NOT NULL column, named with its row.
        let err = w
            .insert(
                "customers",
                &cols,
                &[
                    vec![int(901), text("a@example.com"), None, None],
                    vec![int(902), None, None, None],
                ],
            )
            .unwrap_err();
        assert!(
            err.to_string().contains("row 1") && err.to_string().contains("email"),
            "{err}"
        );
        // Too long for varchar(30); out of range for int; not a member; not a number.
        let long = "x".repeat(31);
        let err = w
            .apply_text(
                RowMode::Insert,
                "customers",
                &cols,
                &[vec![Some("903"), Some("b@example.com"), None, Some(&long)]],
            )
            .unwrap_err();
        assert!(err.to_string().contains("city"), "{err}");
        let err = w
            .apply_text(
                RowMode::Insert,
                "customers",
                &cols,
                &[vec![Some("3000000000"), Some("c@example.com"), None, None]],
            )
            .unwrap_err();
        assert!(err.to_string().contains("id"), "{err}");
        // Updating a missing row.
        let err = w
            .update(
                "customers",
                &["id", "name"],
                &[vec![int(99_999), text("Z")]],
            )
            .unwrap_err();
        assert!(err.to_string().contains("no row"), "{err}");
        // Nothing was accepted: saving writes nothing either.
        w.save(("Test Writer", "writer@example.com"), 1_710_000_000)
            .unwrap();
    }
    assert!(
        snapshot(&dir) == before,
        "a rejected change wrote something"
    );
}

#[test]
fn accepted_changes_commit_and_read_back() {
    let (_tmp, dir) = copy_db(&scenario("branches/after"));
    let mut w = prollystore_sql::writer(&dir).unwrap();
    let cols = ["id", "email", "name", "city"];
    w.insert(
        "customers",
        &cols,
        &[vec![
            int(900),
            text("new900@example.com"),
            text("New"),
            text("Rome"),
        ]],
    )
    .unwrap();
    // The freed email can be taken by another row once its owner changes it.
    w.update(
        "customers",
        &["id", "email"],
        &[vec![int(1), text("changed1@example.com")]],
    )
    .unwrap();
    w.upsert(
        "customers",
        &["id", "email", "city"],
        &[
            vec![int(901), text("user1.f@example.com"), text("Oslo")],
            vec![int(2), text("user2.g@example.com"), text("Lima")],
        ],
    )
    .unwrap();
    w.delete("customers", &[vec![SqlValue::Int(3)]]).unwrap();
    let commit = w.commit(&meta("API changes")).unwrap();
    drop(w);
    let db = prollystore_sql::open(&dir).unwrap();
    assert_eq!(db.branch_head("main").unwrap(), commit);
    let c = db.commit(commit).unwrap();
    assert_eq!(c.message, "API changes");
    let t = db.table_at("main", State::Committed, "customers").unwrap();
    let r = t.reader(&db).unwrap();
    let row = |id: i64| r.get(&[SqlValue::Int(id)]).unwrap();
    assert_eq!(row(1).unwrap()[1], text("changed1@example.com"));
    assert_eq!(row(901).unwrap()[1], text("user1.f@example.com"));
    assert_eq!(row(901).unwrap()[3], text("Oslo"));
    assert_eq!(row(2).unwrap()[1], text("user2.g@example.com"));
    assert!(row(3).is_none());
    // The unique index agrees with the rows.
    let hits: Vec<_> = r
        .index_lookup("uq_email", &[SqlValue::Text("user1.f@example.com".into())])
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0][0], int(901));
}

/// Tables with clauses the scenarios lack (defaults of every kind, comments, collations,
/// AUTO_INCREMENT, named checks, table options), created by Dolt from SQL: our schema from the
/// same SQL is byte-identical to Dolt's.
#[test]
fn create_table_sql_gives_dolts_schema_bytes() {
    use prollystore_format::message::objects::TableFields;
    use std::collections::HashSet;
    let statements = [
        "CREATE TABLE d1 (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, n INT DEFAULT 0, s VARCHAR(10) NOT NULL DEFAULT 'x''y', dec1 DECIMAL(5,2) DEFAULT 1.5, t DATETIME DEFAULT CURRENT_TIMESTAMP, f DOUBLE DEFAULT -2.5, nn INT DEFAULT NULL)",
        "CREATE TABLE d2 (id BIGINT PRIMARY KEY COMMENT 'the key', name VARCHAR(40) COLLATE utf8mb4_0900_ai_ci, note TEXT, words INT, CONSTRAINT words_nonneg CHECK (words >= 0)) COMMENT='two'",
        "CREATE TABLE d3 (k VARCHAR(20) PRIMARY KEY, v INT, UNIQUE KEY uv (v), KEY kv (v, k)) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci",
        "CREATE TABLE d4 (a INT, b BOOLEAN DEFAULT TRUE, c ENUM('x','y') DEFAULT 'y', d SET('p','q') DEFAULT 'p,q', e YEAR, f BIT(4) DEFAULT b'101')",
    ];
    let Some((_tmp, dir)) = fresh_dolt_db("schema bytes") else {
        return;
    };
    let mut used = HashSet::new();
    let mut mismatches = Vec::new();
    for sql in statements {
        dolt(&dir, &["sql", "-q", sql]).unwrap();
        let ours = prollystore_dolt::write::TableDef::from_sql(sql).unwrap();
        let chunk = ours.schema_chunk(&mut used).unwrap();
        let db = prollystore_sql::open(&dir).unwrap();
        let t = db.table_at("main", State::Working, &ours.name).unwrap();
        let tc = db.source().chunk(&t.address).unwrap();
        let tf = TableFields::decode(&tc).unwrap();
        let theirs = db
            .source()
            .chunk(&prollystore_format::Address(tf.schema))
            .unwrap();
        if chunk != theirs.to_vec() {
            use prollystore_format::message::objects::TableSchemaFields;
            mismatches.push(format!(
                "{}:\nours {:#?}\ntheirs {:#?}",
                ours.name,
                TableSchemaFields::decode(&chunk).unwrap(),
                TableSchemaFields::decode(&theirs).unwrap()
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// A database just made by `dolt init` (author `T <t@example.com>`) in a temporary
/// directory, or `None` (with a note naming `what`) when `PROLLY_DOLT` is not set.
pub(super) fn fresh_dolt_db(what: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("a");
    std::fs::create_dir_all(&dir).unwrap();
    if dolt(&dir, &["init", "--name", "T", "--email", "t@example.com"]).is_none() {
        eprintln!("PROLLY_DOLT not set: {what} not checked against Dolt");
        return None;
    }
    Some((tmp, dir))
}

/// Runs `dolt` with both commit dates pinned to `date`.
pub(super) fn dolt_dated(dir: &Path, args: &[&str], date: &str) {
    let bin = std::env::var_os("PROLLY_DOLT").unwrap();
    let home = dir.parent().unwrap().join("home");
    let out = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env("HOME", &home)
        .env("TZ", "UTC")
        .env("DOLT_AUTHOR_DATE", date)
        .env("DOLT_COMMITTER_DATE", date)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "dolt {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The same changes made by Dolt (SQL) and by our writer (API) on copies of one fresh
/// database, committed with the same author and dates: the commits must be the same.
/// Returns the temporary directory and the two databases (Dolt's, ours) for further checks.
pub(super) fn differential(
    name: &str,
    sql: &[&str],
    ours: &dyn Fn(&mut DoltWriter),
) -> Option<(tempfile::TempDir, PathBuf, PathBuf)> {
    let (tmp, a) = fresh_dolt_db(name)?;
    let b = tmp.path().join("b");
    copy_tree(&a, &b);
    let date = "2024-01-01T00:00:00";
    for q in sql {
        dolt(&a, &["sql", "-q", q]).unwrap();
    }
    dolt(&a, &["add", "-A"]).unwrap();
    dolt_dated(
        &a,
        &[
            "commit",
            "-m",
            "m",
            "--author",
            "T <t@example.com>",
            "--date",
            date,
        ],
        date,
    );
    let mut w = prollystore_sql::writer(&b).unwrap();
    ours(&mut w);
    let ours_commit = w
        .commit(&CommitMeta {
            message: "m".into(),
            author_name: "T".into(),
            author_email: "t@example.com".into(),
            author_millis: 1_704_067_200_000,
            committer: None,
            committer_millis: None,
        })
        .unwrap();
    drop(w);
    let (da, db) = (
        prollystore_sql::open(&a).unwrap(),
        prollystore_sql::open(&b).unwrap(),
    );
    let theirs = da.branch_head("main").unwrap();
    if theirs != ours_commit {
        let ra = da.root_at("main", State::Committed).unwrap();
        let rb = db.root_at("main", State::Committed).unwrap();
        let mut detail = String::new();
        for (t, _) in &ra.tables {
            let (ta, tb) = (da.table(&ra, t).unwrap(), db.table(&rb, t).unwrap());
            let dump = |d: &Database, m: prollystore_dolt::IndexMap<'_>| -> Vec<String> {
                let _ = d;
                m.iter()
                    .unwrap()
                    .map(|r| {
                        let (k, v) = r.unwrap();
                        format!("{k:02x?} => {v:02x?}")
                    })
                    .collect()
            };
            let pa = dump(&da, ta.primary_scan_map(&da));
            let pb = dump(&db, tb.primary_scan_map(&db));
            detail.push_str(&format!(
                "table {t}: schema same {}, primary same {}, indexes Dolt {:?} ours {:?}\n",
                ta.schema_address == tb.schema_address,
                pa == pb,
                ta.secondary_indexes,
                tb.secondary_indexes
            ));
            if pa != pb {
                detail.push_str(&format!("Dolt {pa:#?}\nours {pb:#?}\n"));
            }
            for (ix, _) in &ta.secondary_indexes {
                let ia = dump(&da, ta.index_map(&da, ix).unwrap());
                let ib = dump(&db, tb.index_map(&db, ix).unwrap());
                if ia != ib {
                    detail.push_str(&format!("index {ix}: Dolt {ia:#?}\nours {ib:#?}\n"));
                }
            }
            detail.push_str(&format!(
                "auto_increment Dolt {} ours {}\n",
                ta.auto_increment, tb.auto_increment
            ));
        }
        panic!("{name}: commit {ours_commit} (Dolt {theirs})\n{detail}");
    }
    Some((tmp, a, b))
}

fn row(values: &[Option<&str>]) -> Vec<Option<SqlValue>> {
    values
        .iter()
        .map(|v| v.map(|s| SqlValue::Text(s.to_string())))
        .collect()
}

#[test]
fn auto_increment_as_dolt_assigns_it() {
    let create = "CREATE TABLE ai (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10))";
    differential(
        "auto_increment",
        &[
            create,
            "INSERT INTO ai (v) VALUES ('a'),('b')",
            "INSERT INTO ai VALUES (10,'c')",
            "INSERT INTO ai (v) VALUES ('d')",
        ],
        &|w| {
            w.create_table(&prollystore_dolt::write::TableDef::from_sql(create).unwrap())
                .unwrap();
            w.insert("ai", &["v"], &[row(&[Some("a")]), row(&[Some("b")])])
                .unwrap();
            w.insert("ai", &["id", "v"], &[row(&[Some("10"), Some("c")])])
                .unwrap();
            w.insert("ai", &["v"], &[row(&[Some("d")])]).unwrap();
        },
    );
}

/// Expression defaults (`DEFAULT (expr)`) are computed from the row's other values as Dolt
/// computes them: the same commit as Dolt's.
#[test]
fn expression_defaults_as_dolt_computes_them() {
    let create = "CREATE TABLE d (id INT PRIMARY KEY, y INT DEFAULT (id + 3), \
                  s VARCHAR(20) DEFAULT (concat('x', id)), z DECIMAL(6,2) DEFAULT (id * 1.5), \
                  w INT DEFAULT 7)";
    differential(
        "expression defaults",
        &[
            create,
            "INSERT INTO d (id) VALUES (1),(2)",
            "INSERT INTO d (id, y) VALUES (3, 100)",
        ],
        &|w| {
            w.create_table(&prollystore_dolt::write::TableDef::from_sql(create).unwrap())
                .unwrap();
            w.insert("d", &["id"], &[row(&[Some("1")]), row(&[Some("2")])])
                .unwrap();
            w.insert("d", &["id", "y"], &[row(&[Some("3"), Some("100")])])
                .unwrap();
        },
    );
}

/// STORED and VIRTUAL generated columns as Dolt keeps them: the schema, STORED values
/// computed on insert and recomputed on update (with an index over one), VIRTUAL ones not
/// stored: the same commit as Dolt's. A value given for a generated column is refused.
#[test]
fn generated_columns_as_dolt_keeps_them() {
    let create = "CREATE TABLE g (id INT PRIMARY KEY, a INT, v INT AS (id + a) STORED, \
                  w VARCHAR(20) AS (concat('a', id)) VIRTUAL, x INT GENERATED ALWAYS AS (id * 2), \
                  s VARCHAR(30) AS (concat(w, '-', v)) STORED, KEY kv (v))";
    let ours = |w: &mut DoltWriter| {
        w.create_table(&prollystore_dolt::write::TableDef::from_sql(create).unwrap())
            .unwrap();
        w.insert(
            "g",
            &["id", "a"],
            &[row(&[Some("1"), Some("10")]), row(&[Some("2"), Some("20")])],
        )
        .unwrap();
        w.update("g", &["id", "a"], &[row(&[Some("1"), Some("5")])])
            .unwrap();
        let err = w
            .insert("g", &["id", "v"], &[row(&[Some("3"), Some("1")])])
            .unwrap_err()
            .to_string();
        assert!(err.contains("generated column \"v\""), "{err}");
    };
    differential(
        "generated columns",
        &[
            create,
            "INSERT INTO g (id, a) VALUES (1, 10), (2, 20)",
            "UPDATE g SET a = 5 WHERE id = 1",
        ],
        &ours,
    );
    // Without Dolt: the rows read back with every generated column.
    let (_tmp, dir) = copy_db(&scenario("branches/after"));
    let mut w = prollystore_sql::writer(&dir).unwrap();
    ours(&mut w);
    w.commit(&meta("generated")).unwrap();
    drop(w);
    let db = prollystore_sql::open(&dir).unwrap();
    let t = db.table_at("main", State::Committed, "g").unwrap();
    let r = t.reader(&db).unwrap();
    let got = r.get(&[SqlValue::Int(1)]).unwrap().unwrap();
    assert_eq!(
        got,
        vec![int(1), int(5), int(6), text("a1"), int(2), text("a1-6")]
    );
}

/// `DEFAULT CURRENT_TIMESTAMP` gives the time of the write; a default the evaluator lacks is
/// an error naming the column and the expression, with nothing written.
#[test]
fn current_timestamp_defaults_and_unknown_forms() {
    let (_tmp, dir) = copy_db(&scenario("branches/after"));
    let mut w = prollystore_sql::writer(&dir).unwrap();
    w.create_table(
        &prollystore_dolt::write::TableDef::from_sql(
            "CREATE TABLE ts (id INT PRIMARY KEY, at DATETIME DEFAULT CURRENT_TIMESTAMP, \
             u VARCHAR(40) DEFAULT (uuid()))",
        )
        .unwrap(),
    )
    .unwrap();
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    w.insert("ts", &["id", "u"], &[vec![int(1), text("given")]])
        .unwrap();
    let err = w
        .insert("ts", &["id"], &[vec![int(2)]])
        .unwrap_err()
        .to_string();
    assert!(err.contains("\"u\"") && err.contains("uuid"), "{err}");
    w.commit(&meta("defaults")).unwrap();
    drop(w);
    let db = prollystore_sql::open(&dir).unwrap();
    let t = db.table_at("main", State::Committed, "ts").unwrap();
    let r = t.reader(&db).unwrap();
    assert!(r.get(&[SqlValue::Int(2)]).unwrap().is_none());
    let row = r.get(&[SqlValue::Int(1)]).unwrap().unwrap();
    let Some(SqlValue::Datetime(micros, 0)) = row[1] else {
        panic!("{row:?}");
    };
    let secs = micros / 1_000_000;
    assert!((before..before + 60).contains(&secs), "{secs} vs {before}");
}

#[test]
fn a_collated_key_respelled_by_update_as_dolt_does() {
    let create =
        "CREATE TABLE c (k VARCHAR(10) COLLATE utf8mb4_0900_ai_ci PRIMARY KEY, v INT, KEY iv (v))";
    differential(
        "collated",
        &[
            create,
            "INSERT INTO c VALUES ('Abc',1),('def',2)",
            "UPDATE c SET k='ABC', v=3 WHERE k='ABC'",
        ],
        &|w| {
            w.create_table(&prollystore_dolt::write::TableDef::from_sql(create).unwrap())
                .unwrap();
            w.insert(
                "c",
                &["k", "v"],
                &[
                    row(&[Some("Abc"), Some("1")]),
                    row(&[Some("def"), Some("2")]),
                ],
            )
            .unwrap();
            w.update("c", &["k", "v"], &[row(&[Some("ABC"), Some("3")])])
                .unwrap();
        },
    );
}

#[test]
fn keyless_with_an_index_and_large_values_as_dolt_keeps_them() {
    let create = "CREATE TABLE kl (a INT, b VARCHAR(5), t LONGTEXT, KEY ib (b))";
    let long = "z".repeat(100_000);
    let long_sql = format!("INSERT INTO kl VALUES (1,'x',NULL),(1,'x',NULL),(2,'y','{long}')");
    differential(
        "keyless",
        &[create, &long_sql, "DELETE FROM kl WHERE a = 1 LIMIT 1"],
        &|w| {
            w.create_table(&prollystore_dolt::write::TableDef::from_sql(create).unwrap())
                .unwrap();
            let cols = ["a", "b", "t"];
            w.insert(
                "kl",
                &cols,
                &[
                    row(&[Some("1"), Some("x"), None]),
                    row(&[Some("1"), Some("x"), None]),
                    row(&[Some("2"), Some("y"), Some(&long)]),
                ],
            )
            .unwrap();
            w.delete_rows("kl", &[row(&[Some("1"), Some("x"), None])])
                .unwrap();
        },
    );
}

#[test]
fn unique_nullable_blob_and_json_as_dolt_stores_them() {
    let create =
        "CREATE TABLE u (id INT PRIMARY KEY, e VARCHAR(20), b MEDIUMBLOB, j JSON, UNIQUE KEY ue (e))";
    differential(
        "unique",
        &[
            create,
            "INSERT INTO u VALUES (1,NULL,NULL,NULL),(2,NULL,X'00ff','{\"b\":1,\"a\":[1,2]}'),\
             (3,'x',UNHEX(REPEAT('ab',70000)),'[]')",
        ],
        &|w| {
            w.create_table(&prollystore_dolt::write::TableDef::from_sql(create).unwrap())
                .unwrap();
            let big = vec![0xab_u8; 70_000];
            w.insert(
                "u",
                &["id", "e", "b", "j"],
                &[
                    vec![int(1), None, None, None],
                    vec![
                        int(2),
                        None,
                        Some(SqlValue::Bytes(vec![0, 255])),
                        Some(SqlValue::Json("{\"a\":[1,2],\"b\":1}".into())),
                    ],
                    vec![
                        int(3),
                        text("x"),
                        Some(SqlValue::Bytes(big)),
                        Some(SqlValue::Json("[]".into())),
                    ],
                ],
            )
            .unwrap();
        },
    );
}

#[test]
fn rows_under_a_content_hashed_unique_index_are_refused_and_nothing_changes() {
    let (_tmp, dir) = copy_db(&scenario("branches/after"));
    let create = "CREATE TABLE ut (id INT PRIMARY KEY, t TEXT, UNIQUE KEY ux (t))";
    {
        let mut w = prollystore_sql::writer(&dir).unwrap();
        w.create_table(&prollystore_dolt::write::TableDef::from_sql(create).unwrap())
            .unwrap();
        w.commit(&meta("unique text")).unwrap();
    }
    let before = snapshot(&dir);
    {
        let mut w = prollystore_sql::writer(&dir).unwrap();
        let err = w
            .insert("ut", &["id", "t"], &[vec![int(1), text("x")]])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("content-hashed") && err.contains("ux"),
            "{err}"
        );
    }
    assert_eq!(snapshot(&dir), before);
}

/// Changes that change nothing — deleting keys no row has, setting rows to what they hold,
/// upserting them as they are — write nothing: no journal record, no byte of the database.
#[test]
fn changes_that_change_nothing_write_nothing() {
    let (_tmp, dir) = copy_db(&scenario("basic/before"));
    let create = "CREATE TABLE n (id INT PRIMARY KEY, name VARCHAR(10), js JSON)";
    {
        let mut w = prollystore_sql::writer(&dir).unwrap();
        w.create_table(&prollystore_dolt::write::TableDef::from_sql(create).unwrap())
            .unwrap();
        w.insert(
            "n",
            &["id", "name", "js"],
            &[row(&[Some("1"), Some("a"), Some("{\"a\":1}")])],
        )
        .unwrap();
        w.commit(&meta("n")).unwrap();
    }
    let before = snapshot(&dir);
    let mut w = prollystore_sql::writer(&dir).unwrap();
    w.delete("n", &[vec![SqlValue::Int(2)]]).unwrap();
    w.save(("T", "t@example.com"), 5).unwrap();
    w.update("n", &["id", "name"], &[row(&[Some("1"), Some("a")])])
        .unwrap();
    w.save(("T", "t@example.com"), 6).unwrap();
    w.apply_text(
        RowMode::Upsert,
        "n",
        &["id", "js"],
        &[vec![Some("1"), Some("{ \"a\" : 1.0 }")]],
    )
    .unwrap();
    w.save(("T", "t@example.com"), 7).unwrap();
    drop(w);
    assert!(snapshot(&dir) == before, "a change of nothing wrote bytes");
}
