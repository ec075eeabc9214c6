//! The public writer against Dolt-made databases: rejected changes leave every byte as it
//! was, accepted ones commit and read back, and (with `PROLLY_DOLT` naming a `dolt` binary)
//! Dolt itself logs, selects, diffs and commits on top of what we wrote.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::api::{CommitMeta, DoltWriter, RowMode};
use super::ops::apply_ops;
use crate::db::{Database, State};
use crate::error::DoltError;
use crate::sql_value::SqlValue;

fn scenario(name: &str) -> PathBuf {
    prollystore_test_vectors::require("dolt-write").join(name)
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::write(&target, std::fs::read(entry.path()).unwrap()).unwrap();
        }
    }
}

fn copy_db(from: &Path) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    copy_tree(from, &dir);
    (tmp, dir)
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn meta(message: &str) -> CommitMeta {
    CommitMeta {
        message: message.into(),
        author_name: "Test Writer".into(),
        author_email: "writer@example.com".into(),
        author_millis: 1_710_000_000_000,
        committer: None,
        committer_millis: None,
    }
}

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
        let mut w = DoltWriter::open(&dir).unwrap();
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
    let mut w = DoltWriter::open(&dir).unwrap();
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
    let db = Database::open(&dir).unwrap();
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

/// Runs `dolt args…` in `dir` with a throwaway HOME, if `PROLLY_DOLT` is set.
fn dolt(dir: &Path, args: &[&str]) -> Option<String> {
    dolt_bytes(dir, args).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// [`dolt`]'s standard output as bytes (binary columns print raw).
fn dolt_bytes(dir: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let bin = std::env::var_os("PROLLY_DOLT").filter(|v| !v.is_empty())?;
    let home = dir.parent().unwrap().join("home");
    std::fs::create_dir_all(home.join(".dolt")).unwrap();
    std::fs::write(
        home.join(".dolt/config_global.json"),
        r#"{"user.name":"Dolt User","user.email":"dolt@example.com","metrics.disabled":"true"}"#,
    )
    .unwrap();
    let out = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env("HOME", &home)
        .env("TZ", "UTC")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "dolt {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(out.stdout)
}

/// Dolt logs, selects, diffs and commits on databases our writer made from the scenarios'
/// ops, and our reader reads what Dolt then wrote.
#[test]
fn dolt_works_on_what_we_wrote() {
    for name in ["basic", "types"] {
        let base = scenario(name);
        let (_tmp, dir) = copy_db(&base.join("before"));
        let ops = std::fs::read_to_string(base.join("ops.jsonl")).unwrap();
        apply_ops(&dir, &ops, &mut |_| Ok(())).unwrap();
        let Some(log) = dolt(&dir, &["log", "--oneline"]) else {
            eprintln!("PROLLY_DOLT not set: Dolt's reading of our {name} database not checked");
            return;
        };
        let want = std::fs::read_to_string(base.join("expected/branch/main/log_oneline.plain.txt"))
            .unwrap();
        assert_eq!(log, want, "{name}: dolt log --oneline");
        for table in std::fs::read_to_string(base.join("expected/branch/main/tables.txt"))
            .unwrap()
            .lines()
        {
            let theirs =
                std::fs::read(base.join(format!("expected/branch/main/{table}.csv"))).unwrap();
            let t = Database::open(&dir)
                .unwrap()
                .table_at("main", State::Committed, table)
                .unwrap();
            let order = match t.schema.keyless {
                true => t
                    .schema
                    .visible_columns()
                    .iter()
                    .map(|&i| t.schema.columns[i].name.clone())
                    .collect::<Vec<_>>(),
                false => t
                    .schema
                    .key_columns
                    .iter()
                    .map(|&i| t.schema.columns[i].name.clone())
                    .collect(),
            };
            let q = format!("SELECT * FROM {table} ORDER BY {}", order.join(", "));
            let csv = dolt_bytes(&dir, &["sql", "-r", "csv", "-q", &q]).unwrap();
            assert!(csv == theirs, "{name}: dolt sql {q}");
        }
        let diff = dolt(&dir, &["diff", "HEAD~1"]).unwrap();
        assert!(diff.contains("diff --dolt"), "{name}: {diff}");
        let status = dolt(&dir, &["status"]).unwrap();
        assert!(status.contains("nothing to commit"), "{name}: {status}");
        if name == "basic" {
            dolt(
                &dir,
                &[
                    "sql",
                    "-q",
                    "INSERT INTO items VALUES (1000, 'from dolt', 1, 2.50, NULL)",
                ],
            )
            .unwrap();
            dolt(
                &dir,
                &[
                    "commit",
                    "-am",
                    "Dolt on top",
                    "--date",
                    "2024-02-01T00:00:00",
                ],
            )
            .unwrap();
            let db = Database::open(&dir).unwrap();
            let head = db.branch_head("main").unwrap();
            let c = db.commit(head).unwrap();
            assert_eq!(c.message, "Dolt on top");
            let t = db.table_at("main", State::Committed, "items").unwrap();
            let r = t.reader(&db).unwrap();
            let row = r.get(&[SqlValue::Int(1000)]).unwrap().unwrap();
            assert_eq!(row[1], text("from dolt"));
            // And we write on top of Dolt's commit again.
            drop(db);
            let mut w = DoltWriter::open(&dir).unwrap();
            w.delete("items", &[vec![SqlValue::Int(1000)]]).unwrap();
            w.commit(&meta("Ours after Dolt's")).unwrap();
            drop(w);
            let log = dolt(&dir, &["log", "--oneline", "-n", "3"]).unwrap();
            assert!(
                log.contains("Ours after Dolt's") && log.contains("Dolt on top"),
                "{log}"
            );
            let count = dolt(
                &dir,
                &["sql", "-r", "csv", "-q", "SELECT COUNT(*) FROM items"],
            )
            .unwrap();
            assert_eq!(count, "COUNT(*)\n232\n");
        }
    }
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
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    std::fs::create_dir_all(&dir).unwrap();
    if dolt(&dir, &["init", "--name", "T", "--email", "t@example.com"]).is_none() {
        eprintln!("PROLLY_DOLT not set: not checked against Dolt");
        return;
    }
    let mut used = HashSet::new();
    let mut mismatches = Vec::new();
    for sql in statements {
        dolt(&dir, &["sql", "-q", sql]).unwrap();
        let ours = super::table_def::TableDef::from_sql(sql).unwrap();
        let chunk = ours.schema_chunk(&mut used).unwrap();
        let db = Database::open(&dir).unwrap();
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
