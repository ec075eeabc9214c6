//! Foreign keys against the real Dolt (with `PROLLY_DOLT` naming a `dolt` binary): tables
//! made from the same `CREATE TABLE` text and changed by the same rows give Dolt's commit,
//! and Dolt shows the same rows and schemas; changes a key forbids are refused with every
//! byte left as it was.

use super::api_tests::{differential, dolt, fresh_dolt_db, meta, snapshot};
use super::helpers::copy_tree;
use prollystore_dolt::error::DoltError;
use prollystore_dolt::sql_value::SqlValue;
use prollystore_dolt::write::TableDef;
use prollystore_dolt::write::{DoltWriter, RowMode};
use prollystore_sql::FromSql;

const PARENT: &str = "CREATE TABLE par (id INT PRIMARY KEY, v INT, KEY iv (v))";
const CHILD: &str =
    "CREATE TABLE ch (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES par(id))";
const CHILD2: &str = "CREATE TABLE ch2 (id INT PRIMARY KEY, p INT, q INT, KEY pq (p,q), \
    CONSTRAINT fkn FOREIGN KEY (p) REFERENCES par(id) ON DELETE CASCADE ON UPDATE SET NULL)";
const CHILD3: &str = "CREATE TABLE ch3 (id INT PRIMARY KEY, a INT, b INT, \
    CONSTRAINT named FOREIGN KEY (a) REFERENCES par(v) ON DELETE RESTRICT ON UPDATE NO ACTION, \
    FOREIGN KEY (b) REFERENCES par(id))";
const TREE: &str =
    "CREATE TABLE tree (id INT PRIMARY KEY, up INT, FOREIGN KEY (up) REFERENCES tree(id))";

fn ints(values: &[Option<i64>]) -> Vec<Option<SqlValue>> {
    values.iter().map(|v| v.map(SqlValue::Int)).collect()
}

fn create_all(w: &mut DoltWriter) {
    for sql in [PARENT, CHILD, CHILD2, CHILD3, TREE] {
        w.create_table(&TableDef::from_sql(sql).unwrap()).unwrap();
    }
}

fn fill(w: &mut DoltWriter) {
    w.insert(
        "par",
        &["id", "v"],
        &[ints(&[Some(1), Some(10)]), ints(&[Some(2), Some(20)])],
    )
    .unwrap();
    w.insert(
        "ch",
        &["id", "p"],
        &[ints(&[Some(1), Some(1)]), ints(&[Some(2), None])],
    )
    .unwrap();
    w.insert(
        "ch2",
        &["id", "p", "q"],
        &[ints(&[Some(1), Some(2), Some(5)])],
    )
    .unwrap();
    w.insert(
        "ch3",
        &["id", "a", "b"],
        &[ints(&[Some(1), Some(10), Some(2)])],
    )
    .unwrap();
    w.insert(
        "tree",
        &["id", "up"],
        &[ints(&[Some(1), None]), ints(&[Some(2), Some(1)])],
    )
    .unwrap();
    w.update("par", &["id", "v"], &[ints(&[Some(2), Some(21)])])
        .unwrap();
    w.delete("ch", &[vec![SqlValue::Int(1)]]).unwrap();
    w.delete("par", &[vec![SqlValue::Int(1)]]).unwrap_err();
}

const FILL_SQL: &[&str] = &[
    "INSERT INTO par VALUES (1,10),(2,20)",
    "INSERT INTO ch VALUES (1,1),(2,NULL)",
    "INSERT INTO ch2 VALUES (1,2,5)",
    "INSERT INTO ch3 VALUES (1,10,2)",
    "INSERT INTO tree VALUES (1,NULL),(2,1)",
    "UPDATE par SET v = 21 WHERE id = 2",
    "DELETE FROM ch WHERE id = 1",
];

/// Tables with foreign keys of every declared form (generated and given names, an index
/// Dolt adds and one it reuses, a parent index other than the primary key, a self
/// reference, every action), then rows that satisfy them: the same commit as Dolt's, and
/// Dolt prints the same rows and schemas for both databases.
#[test]
fn foreign_keys_as_dolt_stores_them() {
    let mut sql = vec![PARENT, CHILD, CHILD2, CHILD3, TREE];
    sql.extend_from_slice(FILL_SQL);
    let Some((_tmp, theirs, ours)) = differential("foreign keys", &sql, &|w| {
        create_all(w);
        fill(w);
    }) else {
        return;
    };
    for t in ["par", "ch", "ch2", "ch3", "tree"] {
        let q = format!("SELECT * FROM {t} ORDER BY id");
        let a = dolt(&theirs, &["sql", "-r", "csv", "-q", &q]).unwrap();
        let b = dolt(&ours, &["sql", "-r", "csv", "-q", &q]).unwrap();
        assert_eq!(a, b, "{t}");
        let a = dolt(&theirs, &["schema", "show", t]).unwrap();
        let b = dolt(&ours, &["schema", "show", t]).unwrap();
        assert_eq!(a, b, "{t}");
    }
    // Dolt enforces the keys we stored: a child row without its parent is refused.
    let out = std::process::Command::new(std::env::var_os("PROLLY_DOLT").unwrap())
        .args(["sql", "-q", "INSERT INTO ch VALUES (9, 99)"])
        .current_dir(&ours)
        .env("HOME", ours.parent().unwrap().join("home"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("ch_ibfk_1"));
}

/// Every change a key forbids is refused naming the key, table, columns and row, and the
/// database keeps every byte.
#[test]
fn changes_foreign_keys_forbid_leave_every_byte_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let src = super::helpers::scenario("basic/before");
    let dir = tmp.path().join("db");
    copy_tree(&src, &dir);
    {
        let mut w = prollystore_sql::writer(&dir).unwrap();
        create_all(&mut w);
        fill(&mut w);
        w.commit(&meta("keys")).unwrap();
    }
    let before = snapshot(&dir);
    let mut w = prollystore_sql::writer(&dir).unwrap();
    let text = |e: DoltError| e.to_string();
    // A child row without its parent.
    let e = text(
        w.insert("ch", &["id", "p"], &[ints(&[Some(5), Some(7)])])
            .unwrap_err(),
    );
    assert!(
        e.contains("ch_ibfk_1") && e.contains("\"ch\"") && e.contains("(5)") && e.contains("par"),
        "{e}"
    );
    // A child updated to a missing parent (through the parent's secondary index).
    let e = text(
        w.update("ch3", &["id", "a"], &[ints(&[Some(1), Some(99)])])
            .unwrap_err(),
    );
    assert!(e.contains("named") && e.contains("ch3"), "{e}");
    // A self reference to a missing row.
    let e = text(
        w.insert("tree", &["id", "up"], &[ints(&[Some(3), Some(9)])])
            .unwrap_err(),
    );
    assert!(e.contains("tree_ibfk_1"), "{e}");
    // Deleting a referenced parent (RESTRICT by default), and one referenced through an index.
    let e = text(w.delete("par", &[vec![SqlValue::Int(2)]]).unwrap_err());
    assert!(
        e.contains("par") && e.contains("(2)") && e.contains("cannot be deleted"),
        "{e}"
    );
    // Changing a referenced value (NO ACTION).
    let e = text(
        w.update("par", &["id", "v"], &[ints(&[Some(1), Some(11)])])
            .unwrap_err(),
    );
    assert!(
        e.contains("named") && e.contains("cannot be updated"),
        "{e}"
    );
    // Once no RESTRICT key refers to it, the parent goes and ON DELETE CASCADE takes its
    // child row with it (unsaved here: the files stay as they were).
    w.delete("ch3", &[vec![SqlValue::Int(1)]]).unwrap();
    w.delete("par", &[vec![SqlValue::Int(2)]]).unwrap();
    // Dropping a referenced table.
    let e = text(w.drop_table("par").unwrap_err());
    assert!(e.contains("cannot drop"), "{e}");
    // Upsert through text: the same check.
    let e = w
        .apply_text(
            RowMode::Upsert,
            "ch",
            &["id", "p"],
            &[vec![Some("2"), Some("42")]],
        )
        .unwrap_err();
    assert!(e.to_string().contains("ch_ibfk_1"), "{e}");
    drop(w);
    assert!(
        snapshot(&dir) == before,
        "a refused change changed the files"
    );
}

/// Our collection of keys re-encodes Dolt's (decode then encode gives its bytes) and the
/// keys given as a `TableDef` store as the same text gives them.
#[test]
fn foreign_key_collections_of_dolt_reencode() {
    use prollystore_format::message::objects::ForeignKeyCollectionFields;
    let Some((_tmp, dir)) = fresh_dolt_db("foreign key collections") else {
        return;
    };
    for q in [PARENT, CHILD, CHILD2, CHILD3, TREE] {
        dolt(&dir, &["sql", "-q", q]).unwrap();
    }
    let db = prollystore_sql::open(&dir).unwrap();
    let root = db
        .root_at("main", prollystore_dolt::db::State::Working)
        .unwrap();
    let chunk = db.source().chunk(&root.foreign_keys).unwrap();
    let fields = ForeignKeyCollectionFields::decode(&chunk).unwrap();
    assert_eq!(fields.foreign_keys.len(), 5);
    assert_eq!(fields.encode().unwrap(), chunk.to_vec());
}

const CHECKED: &str = "CREATE TABLE chk (id INT PRIMARY KEY, qty INT, price DECIMAL(6,2), \
    name VARCHAR(20), CONSTRAINT qty_pos CHECK (qty > 0), \
    CONSTRAINT cheap CHECK (price * qty <= 1000), \
    CONSTRAINT named CHECK (LENGTH(name) >= 2 OR name IS NULL), \
    CONSTRAINT k5 CHECK (CONCAT(name, 'x') <> 'ax' AND id % 100 <> 99), \
    CONSTRAINT k4 CHECK ((NOT (qty = 13)) XOR (id = -7)))";

/// Rows that pass every CHECK (NULL passes) commit as Dolt's do; rows that fail one are
/// refused naming table, check and row, every byte left as it was.
#[test]
fn check_constraints_as_dolt_enforces_them() {
    let sql = [
        CHECKED,
        "INSERT INTO chk VALUES (1, 2, 10.50, 'ab'), (2, NULL, NULL, NULL), (3, 5, 200, 'xyz')",
        "UPDATE chk SET qty = 4 WHERE id = 3",
    ];
    let ours = |w: &mut DoltWriter| {
        w.create_table(&TableDef::from_sql(CHECKED).unwrap())
            .unwrap();
        let t = |v: &str| Some(SqlValue::Text(v.into()));
        w.insert(
            "chk",
            &["id", "qty", "price", "name"],
            &[
                vec![t("1"), t("2"), t("10.50"), t("ab")],
                vec![t("2"), None, None, None],
                vec![t("3"), t("5"), t("200"), t("xyz")],
            ],
        )
        .unwrap();
        w.update("chk", &["id", "qty"], &[vec![t("3"), t("4")]])
            .unwrap();
    };
    if let Some((_tmp, theirs, ours_dir)) = differential("checks", &sql, &ours) {
        let q = "SELECT * FROM chk ORDER BY id";
        assert_eq!(
            dolt(&theirs, &["sql", "-r", "csv", "-q", q]),
            dolt(&ours_dir, &["sql", "-r", "csv", "-q", q])
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    copy_tree(&super::helpers::scenario("basic/before"), &dir);
    {
        let mut w = prollystore_sql::writer(&dir).unwrap();
        ours(&mut w);
        w.commit(&meta("checks")).unwrap();
    }
    let before = snapshot(&dir);
    let mut w = prollystore_sql::writer(&dir).unwrap();
    let t = |v: &str| Some(SqlValue::Text(v.into()));
    let cols = ["id", "qty", "price", "name"];
    let e = w
        .insert(
            "chk",
            &cols,
            &[
                vec![t("7"), t("1"), t("1"), t("ok")],
                vec![t("8"), t("0"), None, None],
            ],
        )
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("qty_pos") && e.contains("row 1") && e.contains("chk"),
        "{e}"
    );
    // An update makes the product too large (the stored price of row 3 is 200.00).
    let e = w
        .update("chk", &["id", "qty"], &[vec![t("3"), t("6")]])
        .unwrap_err()
        .to_string();
    assert!(e.contains("cheap") && e.contains("row 0"), "{e}");
    let e = w
        .insert("chk", &cols, &[vec![t("9"), t("1"), t("1"), t("x")]])
        .unwrap_err()
        .to_string();
    assert!(e.contains("named"), "{e}");
    // A check the evaluator does not cover (given as a TableDef): refused when the table is
    // created; as CREATE TABLE text, refused when parsed.
    let mut def =
        TableDef::from_sql("CREATE TABLE odd (id INT PRIMARY KEY, s VARCHAR(9))").unwrap();
    def.checks.push(prollystore_dolt::write::CheckDef {
        name: "rx".into(),
        expr: "(`s` REGEXP '^a')".into(),
    });
    let e = w.create_table(&def).unwrap_err().to_string();
    assert!(e.contains("rx"), "{e}");
    let e = TableDef::from_sql(
        "CREATE TABLE odd (id INT PRIMARY KEY, s VARCHAR(9), CONSTRAINT rx CHECK (s REGEXP '^a'))",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("REGEXP"), "{e}");
    drop(w);
    assert!(
        snapshot(&dir) == before,
        "a refused change changed the files"
    );
}

/// Runs `sql` with the real Dolt (`PROLLY_DOLT`) in `dir` and asserts that Dolt refuses it
/// with a message naming `check`.
fn dolt_refuses(dir: &std::path::Path, sql: &str, check: &str) {
    let bin = std::env::var_os("PROLLY_DOLT").unwrap();
    let out = std::process::Command::new(bin)
        .args(["sql", "-q", sql])
        .current_dir(dir)
        .env("HOME", dir.parent().unwrap().join("home"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr) + String::from_utf8_lossy(&out.stdout);
    assert!(said.contains(check), "{sql}: {said}");
}

const CHECKED_FORMS: &str = "CREATE TABLE chk2 (id INT PRIMARY KEY, a INT, b INT, \
    s VARCHAR(10), CONSTRAINT in_list CHECK (a IN (1, 2, 3)), \
    CONSTRAINT not_in CHECK (b NOT IN (4, 5)), CONSTRAINT btw CHECK (a BETWEEN 0 AND 10), \
    CONSTRAINT s_in CHECK (s IN ('x', 'y')), \
    CONSTRAINT cased CHECK (CASE WHEN a > 1 THEN b > 0 ELSE TRUE END), \
    CONSTRAINT truth CHECK (b IS NOT FALSE))";

/// IN, NOT IN, BETWEEN, CASE and IS [NOT] TRUE/FALSE checks: stored in Dolt's spelling (the
/// same commit as Dolt's) and enforced with MySQL's NULL rules (a NULL operand passes).
#[test]
fn check_forms_in_between_case_truth() {
    let t = |v: &str| Some(SqlValue::Text(v.into()));
    let cols = ["id", "a", "b", "s"];
    let ours = |w: &mut DoltWriter| {
        w.create_table(&TableDef::from_sql(CHECKED_FORMS).unwrap())
            .unwrap();
        w.insert(
            "chk2",
            &cols,
            &[
                vec![t("1"), t("1"), t("7"), t("x")],
                vec![t("2"), t("2"), None, None],
                vec![t("3"), t("3"), t("1"), t("y")],
            ],
        )
        .unwrap();
    };
    let sql = [
        CHECKED_FORMS,
        "INSERT INTO chk2 VALUES (1, 1, 7, 'x'), (2, 2, NULL, NULL), (3, 3, 1, 'y')",
    ];
    if let Some((_tmp, theirs, ours_dir)) = differential("check forms", &sql, &ours) {
        let q = "SELECT * FROM chk2 ORDER BY id";
        assert_eq!(
            dolt(&theirs, &["sql", "-r", "csv", "-q", q]),
            dolt(&ours_dir, &["sql", "-r", "csv", "-q", q])
        );
        // Dolt refuses the rows we refuse below, naming the same check.
        for (row, check) in [
            ("(9, 4, 1, 'x')", "in_list"),
            ("(9, 1, 4, 'x')", "not_in"),
            ("(9, 1, 1, 'z')", "s_in"),
            ("(9, 2, -1, 'x')", "cased"),
            ("(9, 1, 0, 'x')", "truth"),
        ] {
            dolt_refuses(&theirs, &format!("INSERT INTO chk2 VALUES {row}"), check);
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    copy_tree(&super::helpers::scenario("basic/before"), &dir);
    {
        let mut w = prollystore_sql::writer(&dir).unwrap();
        ours(&mut w);
        w.commit(&meta("check forms")).unwrap();
    }
    let before = snapshot(&dir);
    let mut w = prollystore_sql::writer(&dir).unwrap();
    // Each row breaks exactly one check.
    for (row, check) in [
        (["9", "4", "1", "x"], "in_list"),
        (["9", "1", "4", "x"], "not_in"),
        (["9", "1", "1", "z"], "s_in"),
        (["9", "2", "-1", "x"], "cased"),
        (["9", "1", "0", "x"], "truth"),
    ] {
        let e = w
            .insert("chk2", &cols, &[row.iter().map(|v| t(v)).collect()])
            .unwrap_err()
            .to_string();
        assert!(e.contains(check), "{row:?}: {e}");
    }
    drop(w);
    assert!(
        snapshot(&dir) == before,
        "a refused change changed the files"
    );
}

const CHECKED_CI: &str = "CREATE TABLE chk3 (id INT PRIMARY KEY, \
    nm VARCHAR(10) COLLATE utf8mb4_0900_ai_ci, b VARCHAR(10), \
    CONSTRAINT not_bad CHECK (nm <> 'bad'), CONSTRAINT listed CHECK (nm IN ('a', 'b', 'BAD')), \
    CONSTRAINT ranged CHECK (b BETWEEN 'a' AND 'c'), \
    CONSTRAINT starts CHECK (nm LIKE 'A%' OR nm LIKE 'B_%' OR nm LIKE '_'), \
    CONSTRAINT shaped CHECK (b NOT LIKE '%z%z%'))";

/// Checks over text compare as Dolt compares: `<>`, BETWEEN and LIKE under the column's
/// collation (`'BAD' <> 'bad'` is false and `'a' LIKE 'A%'` true on a `_ci` column), IN
/// bytewise (`'A' IN ('a')` is false).
#[test]
fn checks_compare_text_under_the_column_collation() {
    let t = |v: &str| Some(SqlValue::Text(v.into()));
    let cols = ["id", "nm", "b"];
    let ours = |w: &mut DoltWriter| {
        w.create_table(&TableDef::from_sql(CHECKED_CI).unwrap())
            .unwrap();
        w.insert(
            "chk3",
            &cols,
            &[vec![t("1"), t("a"), t("b")], vec![t("2"), t("b"), t("bz")]],
        )
        .unwrap();
    };
    let refused = [
        (["9", "BAD", "b"], "not_bad"),
        (["9", "A", "b"], "listed"),
        (["9", "a", "B"], "ranged"),
        (["9", "a", "bzaz"], "shaped"),
    ];
    let sql = [
        CHECKED_CI,
        "INSERT INTO chk3 VALUES (1, 'a', 'b'), (2, 'b', 'bz')",
    ];
    if let Some((_tmp, theirs, _ours_dir)) = differential("check collations", &sql, &ours) {
        for (row, check) in refused {
            let q = format!(
                "INSERT INTO chk3 VALUES ({}, '{}', '{}')",
                row[0], row[1], row[2]
            );
            dolt_refuses(&theirs, &q, check);
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    copy_tree(&super::helpers::scenario("basic/before"), &dir);
    let mut w = prollystore_sql::writer(&dir).unwrap();
    ours(&mut w);
    for (row, check) in refused {
        let e = w
            .insert("chk3", &cols, &[row.iter().map(|v| t(v)).collect()])
            .unwrap_err()
            .to_string();
        assert!(e.contains(check), "{row:?}: {e}");
    }
}

/// Opens `dir` for writing, waiting out a lock that a `dolt` child process of a parallel test
/// inherited for the moment between its fork and exec (the lock is the open file's).
fn open_retrying(dir: &std::path::Path) -> DoltWriter {
    for _ in 0..50 {
        match prollystore_sql::writer(dir) {
            Err(DoltError::Locked { .. }) => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            other => return other.unwrap(),
        }
    }
    prollystore_sql::writer(dir).unwrap()
}

/// Two branches insert into one AUTO_INCREMENT table: the counter is shared as Dolt shares
/// it (main's next row after branch `b` took 3 gets 4), and both branches' commits are
/// Dolt's.
#[test]
fn auto_increment_is_shared_across_branches_as_in_dolt() {
    use super::api_tests::dolt_dated;
    use prollystore_dolt::write::vc;
    use prollystore_dolt::write::CommitMeta;
    let Some((tmp, a)) = fresh_dolt_db("shared AUTO_INCREMENT") else {
        return;
    };
    let b = tmp.path().join("b");
    copy_tree(&a, &b);
    let create = "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v INT)";
    let date = "2024-01-01T00:00:00";
    let commit_a = |m: &str| {
        dolt(&a, &["add", "-A"]).unwrap();
        dolt_dated(
            &a,
            &[
                "commit",
                "-m",
                m,
                "--author",
                "T <t@example.com>",
                "--date",
                date,
            ],
            date,
        );
    };
    dolt(&a, &["sql", "-q", create]).unwrap();
    dolt(&a, &["sql", "-q", "INSERT INTO t (v) VALUES (1),(2)"]).unwrap();
    commit_a("c1");
    dolt(&a, &["checkout", "-b", "b"]).unwrap();
    dolt(&a, &["sql", "-q", "INSERT INTO t (v) VALUES (3)"]).unwrap();
    commit_a("c2");
    dolt(&a, &["checkout", "main"]).unwrap();
    dolt(&a, &["sql", "-q", "INSERT INTO t (v) VALUES (4)"]).unwrap();
    commit_a("c3");

    let cm = |m: &str| CommitMeta {
        message: m.into(),
        author_name: "T".into(),
        author_email: "t@example.com".into(),
        author_millis: 1_704_067_200_000,
        committer: None,
        committer_millis: None,
    };
    let insert = |v: i64, m: &str| {
        let mut w = open_retrying(&b);
        w.insert("t", &["v"], &[ints(&[Some(v)])]).unwrap();
        w.commit(&cm(m)).unwrap();
    };
    {
        let mut w = open_retrying(&b);
        w.create_table(&TableDef::from_sql(create).unwrap())
            .unwrap();
        w.insert("t", &["v"], &[ints(&[Some(1)]), ints(&[Some(2)])])
            .unwrap();
        w.commit(&cm("c1")).unwrap();
    }
    vc::create_branch(&b, "b", "main").unwrap();
    vc::checkout(&b, "b").unwrap();
    insert(3, "c2");
    vc::checkout(&b, "main").unwrap();
    insert(4, "c3");
    let (da, db) = (
        prollystore_sql::open(&a).unwrap(),
        prollystore_sql::open(&b).unwrap(),
    );
    for branch in ["main", "b"] {
        assert_eq!(
            da.branch_head(branch).unwrap(),
            db.branch_head(branch).unwrap(),
            "{branch}"
        );
    }
    let q = "SELECT * FROM t ORDER BY id";
    assert_eq!(
        dolt(&a, &["sql", "-r", "csv", "-q", q]),
        dolt(&b, &["sql", "-r", "csv", "-q", q])
    );
    assert!(dolt(&b, &["sql", "-r", "csv", "-q", q])
        .unwrap()
        .contains("4,4"));
}

/// Dropping a child table removes its keys from the collection as Dolt removes them.
#[test]
fn dropping_a_child_table_drops_its_keys_as_dolt_does() {
    differential(
        "drop child",
        &[PARENT, CHILD, CHILD3, "DROP TABLE ch"],
        &|w| {
            for sql in [PARENT, CHILD, CHILD3] {
                w.create_table(&TableDef::from_sql(sql).unwrap()).unwrap();
            }
            w.drop_table("ch").unwrap();
        },
    );
    differential("drop last child", &[PARENT, CHILD, "DROP TABLE ch"], &|w| {
        for sql in [PARENT, CHILD] {
            w.create_table(&TableDef::from_sql(sql).unwrap()).unwrap();
        }
        w.drop_table("ch").unwrap();
    });
}
