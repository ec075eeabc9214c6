//! Foreign keys' ON DELETE/UPDATE CASCADE and SET NULL: the rows they leave (read back, and
//! every index agreeing with them), the changes they refuse with every byte left as it was,
//! and (with `PROLLY_DOLT` naming a `dolt` binary) the same statements run by Dolt giving the
//! same commit, rows and errors.

use super::api_tests::{differential, dolt, fresh_dolt_db, meta, snapshot};
use super::helpers::{copy_tree, scenario};
use prollystore_dolt::db::State;
use prollystore_dolt::sql_value::SqlValue;
use prollystore_dolt::table_reader::KeyRange;
use prollystore_dolt::write::TableDef;
use prollystore_dolt::write::{DoltWriter, RowMode};
use prollystore_sql::FromSql;

/// One step: a `CREATE TABLE`, or rows given to the API in a mode; `sql` is the statement
/// Dolt runs for it.
#[derive(Clone, Copy)]
pub(super) enum Op {
    Create(&'static str),
    Rows {
        sql: &'static str,
        mode: RowMode,
        table: &'static str,
        columns: &'static [&'static str],
        rows: &'static [&'static [Option<&'static str>]],
    },
}

impl Op {
    pub(super) fn sql(&self) -> &'static str {
        match self {
            Op::Create(sql) | Op::Rows { sql, .. } => sql,
        }
    }

    pub(super) fn apply(&self, w: &mut DoltWriter) -> prollystore_dolt::Result<()> {
        match *self {
            Op::Create(sql) => w.create_table(&TableDef::from_sql(sql)?),
            Op::Rows {
                mode,
                table,
                columns,
                rows,
                ..
            } => {
                let rows: Vec<Vec<Option<&str>>> = rows.iter().map(|r| r.to_vec()).collect();
                w.apply_text(mode, table, columns, &rows)
            }
        }
    }
}

pub(super) const fn rows(
    sql: &'static str,
    mode: RowMode,
    table: &'static str,
    columns: &'static [&'static str],
    rows: &'static [&'static [Option<&'static str>]],
) -> Op {
    Op::Rows {
        sql,
        mode,
        table,
        columns,
        rows,
    }
}

use RowMode::{Delete, Insert, Update};

/// Deletes cascading two levels (and through a second key of the same parent, SET NULL),
/// an update cascading through a parent's unique column, and a self-referencing tree.
const CASCADES: &[Op] = &[
    Op::Create("CREATE TABLE p (id INT PRIMARY KEY, code INT, name VARCHAR(20), UNIQUE KEY ucode (code))"),
    Op::Create("CREATE TABLE c (id INT PRIMARY KEY, pid INT, pcode INT, tag VARCHAR(10), \
        UNIQUE KEY utag (tag, pcode), KEY kt (pcode, tag), CONSTRAINT tag_ok CHECK (tag <> 'bad'), \
        CONSTRAINT c_p FOREIGN KEY (pid) REFERENCES p(id) ON DELETE CASCADE, \
        CONSTRAINT c_code FOREIGN KEY (pcode) REFERENCES p(code) ON UPDATE CASCADE ON DELETE SET NULL)"),
    Op::Create("CREATE TABLE g (id INT PRIMARY KEY, cid INT, note VARCHAR(10), \
        CONSTRAINT g_c FOREIGN KEY (cid) REFERENCES c(id) ON DELETE SET NULL)"),
    Op::Create("CREATE TABLE tree (id INT PRIMARY KEY, up INT, \
        FOREIGN KEY (up) REFERENCES tree(id) ON DELETE CASCADE)"),
    rows(
        "INSERT INTO p VALUES (1,10,'a'),(2,20,'b'),(3,30,'c'),(4,40,'d')",
        Insert,
        "p",
        &["id", "code", "name"],
        &[
            &[Some("1"), Some("10"), Some("a")],
            &[Some("2"), Some("20"), Some("b")],
            &[Some("3"), Some("30"), Some("c")],
            &[Some("4"), Some("40"), Some("d")],
        ],
    ),
    rows(
        "INSERT INTO c VALUES (1,1,10,'x'),(2,1,20,'y'),(3,2,20,'x'),(4,3,30,'z'),(5,NULL,10,'w'),(6,4,30,'v')",
        Insert,
        "c",
        &["id", "pid", "pcode", "tag"],
        &[
            &[Some("1"), Some("1"), Some("10"), Some("x")],
            &[Some("2"), Some("1"), Some("20"), Some("y")],
            &[Some("3"), Some("2"), Some("20"), Some("x")],
            &[Some("4"), Some("3"), Some("30"), Some("z")],
            &[Some("5"), None, Some("10"), Some("w")],
            &[Some("6"), Some("4"), Some("30"), Some("v")],
        ],
    ),
    rows(
        "INSERT INTO g VALUES (1,1,'g1'),(2,3,'g2'),(3,4,'g3'),(4,NULL,'g4')",
        Insert,
        "g",
        &["id", "cid", "note"],
        &[
            &[Some("1"), Some("1"), Some("g1")],
            &[Some("2"), Some("3"), Some("g2")],
            &[Some("3"), Some("4"), Some("g3")],
            &[Some("4"), None, Some("g4")],
        ],
    ),
    rows(
        "INSERT INTO tree VALUES (1,NULL),(2,1),(3,1),(4,2),(5,NULL),(6,5)",
        Insert,
        "tree",
        &["id", "up"],
        &[
            &[Some("1"), None],
            &[Some("2"), Some("1")],
            &[Some("3"), Some("1")],
            &[Some("4"), Some("2")],
            &[Some("5"), None],
            &[Some("6"), Some("5")],
        ],
    ),
    rows(
        "DELETE FROM p WHERE id = 1",
        Delete,
        "p",
        &["id"],
        &[&[Some("1")]],
    ),
    rows(
        "UPDATE p SET code = 21 WHERE id = 2",
        Update,
        "p",
        &["id", "code"],
        &[&[Some("2"), Some("21")]],
    ),
    rows(
        "DELETE FROM p WHERE id = 3",
        Delete,
        "p",
        &["id"],
        &[&[Some("3")]],
    ),
    rows(
        "DELETE FROM tree WHERE id = 1",
        Delete,
        "tree",
        &["id"],
        &[&[Some("1")]],
    ),
];

/// What [`CASCADES`] leaves (traced by hand, and what Dolt 2.3.1 prints).
const CASCADES_ROWS: &[(&str, &[&str])] = &[
    ("p", &["2,21,b", "4,40,d"]),
    ("c", &["3,2,21,x", "5,NULL,NULL,w", "6,4,NULL,v"]),
    ("g", &["1,NULL,g1", "2,3,g2", "3,NULL,g3", "4,NULL,g4"]),
    ("tree", &["5,NULL", "6,5"]),
];

/// ON UPDATE CASCADE into a child's primary key and on through a two-column key to a
/// grandchild, ON DELETE SET NULL of two columns, ON UPDATE SET NULL, and a parent value
/// respelled under a case-insensitive collation (not a change: nothing cascades).
const UPDATES: &[Op] = &[
    Op::Create("CREATE TABLE p (id INT PRIMARY KEY, code VARCHAR(10), UNIQUE KEY uc (code))"),
    Op::Create("CREATE TABLE c (code VARCHAR(10), n INT, note VARCHAR(10), PRIMARY KEY (code, n), \
        UNIQUE KEY un (note), FOREIGN KEY (code) REFERENCES p(code) ON UPDATE CASCADE ON DELETE CASCADE)"),
    Op::Create("CREATE TABLE g (id INT PRIMARY KEY, ccode VARCHAR(10), cn INT, KEY kc (ccode, cn), \
        FOREIGN KEY (ccode, cn) REFERENCES c(code, n) ON UPDATE CASCADE ON DELETE SET NULL)"),
    Op::Create("CREATE TABLE h (id INT PRIMARY KEY, pcode VARCHAR(10), \
        FOREIGN KEY (pcode) REFERENCES p(code) ON UPDATE SET NULL)"),
    Op::Create("CREATE TABLE q (id INT PRIMARY KEY, code VARCHAR(10) COLLATE utf8mb4_0900_ai_ci, UNIQUE KEY uq (code))"),
    Op::Create("CREATE TABLE r (id INT PRIMARY KEY, qcode VARCHAR(10) COLLATE utf8mb4_0900_ai_ci, \
        FOREIGN KEY (qcode) REFERENCES q(code) ON UPDATE CASCADE)"),
    rows(
        "INSERT INTO p VALUES (1,'a'),(2,'b')",
        Insert,
        "p",
        &["id", "code"],
        &[&[Some("1"), Some("a")], &[Some("2"), Some("b")]],
    ),
    rows(
        "INSERT INTO c VALUES ('a',1,'x'),('a',2,'y'),('b',1,'z')",
        Insert,
        "c",
        &["code", "n", "note"],
        &[
            &[Some("a"), Some("1"), Some("x")],
            &[Some("a"), Some("2"), Some("y")],
            &[Some("b"), Some("1"), Some("z")],
        ],
    ),
    rows(
        "INSERT INTO g VALUES (1,'a',1),(2,'a',2),(3,'b',1),(4,NULL,NULL)",
        Insert,
        "g",
        &["id", "ccode", "cn"],
        &[
            &[Some("1"), Some("a"), Some("1")],
            &[Some("2"), Some("a"), Some("2")],
            &[Some("3"), Some("b"), Some("1")],
            &[Some("4"), None, None],
        ],
    ),
    rows(
        "INSERT INTO h VALUES (1,'a'),(2,'b')",
        Insert,
        "h",
        &["id", "pcode"],
        &[&[Some("1"), Some("a")], &[Some("2"), Some("b")]],
    ),
    rows(
        "INSERT INTO q VALUES (1,'k'),(2,'m')",
        Insert,
        "q",
        &["id", "code"],
        &[&[Some("1"), Some("k")], &[Some("2"), Some("m")]],
    ),
    rows(
        "INSERT INTO r VALUES (1,'k'),(2,'m')",
        Insert,
        "r",
        &["id", "qcode"],
        &[&[Some("1"), Some("k")], &[Some("2"), Some("m")]],
    ),
    rows(
        "UPDATE p SET code = 'aa' WHERE id = 1",
        Update,
        "p",
        &["id", "code"],
        &[&[Some("1"), Some("aa")]],
    ),
    rows(
        "DELETE FROM c WHERE code = 'b' AND n = 1",
        Delete,
        "c",
        &["code", "n"],
        &[&[Some("b"), Some("1")]],
    ),
    rows(
        "UPDATE p SET code = 'B' WHERE id = 2",
        Update,
        "p",
        &["id", "code"],
        &[&[Some("2"), Some("B")]],
    ),
    rows(
        "UPDATE q SET code = 'K' WHERE id = 1",
        Update,
        "q",
        &["id", "code"],
        &[&[Some("1"), Some("K")]],
    ),
    rows(
        "UPDATE q SET code = 'n' WHERE id = 2",
        Update,
        "q",
        &["id", "code"],
        &[&[Some("2"), Some("n")]],
    ),
];

/// What [`UPDATES`] leaves (as Dolt 2.3.1 prints it), each table in key order.
const UPDATES_ROWS: &[(&str, &[&str])] = &[
    ("p", &["1,aa", "2,B"]),
    ("c", &["aa,1,x", "aa,2,y"]),
    ("g", &["1,aa,1", "2,aa,2", "3,NULL,NULL", "4,NULL,NULL"]),
    ("h", &["1,NULL", "2,NULL"]),
    ("q", &["1,K", "2,n"]),
    ("r", &["1,k", "2,n"]),
];

/// Keys on a parent index that is not unique: a parent row's delete or change cascades to
/// every child holding its old value, even while another parent row holds it too.
const NON_UNIQUE: &[Op] = &[
    Op::Create("CREATE TABLE p (id INT PRIMARY KEY, v INT, KEY kv (v))"),
    Op::Create(
        "CREATE TABLE c (id INT PRIMARY KEY, v INT, \
        FOREIGN KEY (v) REFERENCES p(v) ON DELETE CASCADE ON UPDATE CASCADE)",
    ),
    rows(
        "INSERT INTO p VALUES (1,5),(2,5),(3,7),(4,7)",
        Insert,
        "p",
        &["id", "v"],
        &[
            &[Some("1"), Some("5")],
            &[Some("2"), Some("5")],
            &[Some("3"), Some("7")],
            &[Some("4"), Some("7")],
        ],
    ),
    rows(
        "INSERT INTO c VALUES (1,5),(2,7)",
        Insert,
        "c",
        &["id", "v"],
        &[&[Some("1"), Some("5")], &[Some("2"), Some("7")]],
    ),
    rows(
        "DELETE FROM p WHERE id = 1",
        Delete,
        "p",
        &["id"],
        &[&[Some("1")]],
    ),
    rows(
        "UPDATE p SET v = 8 WHERE id = 3",
        Update,
        "p",
        &["id", "v"],
        &[&[Some("3"), Some("8")]],
    ),
];

/// What [`NON_UNIQUE`] leaves (as Dolt 2.3.1 prints it).
const NON_UNIQUE_ROWS: &[(&str, &[&str])] = &[("p", &["2,5", "3,8", "4,7"]), ("c", &["2,8"])];

/// ON DELETE SET NULL within one table (and its ON UPDATE CASCADE left alone by a change no
/// row refers to), and one statement deleting several parents whose children cascade.
const SELF_AND_BATCH: &[Op] = &[
    Op::Create(
        "CREATE TABLE s (id INT PRIMARY KEY, code INT, up INT, UNIQUE KEY us (code), \
        FOREIGN KEY (up) REFERENCES s(code) ON UPDATE CASCADE ON DELETE SET NULL)",
    ),
    Op::Create("CREATE TABLE p (id INT PRIMARY KEY)"),
    Op::Create(
        "CREATE TABLE c (id INT PRIMARY KEY, pid INT, \
        FOREIGN KEY (pid) REFERENCES p(id) ON DELETE CASCADE)",
    ),
    rows(
        "INSERT INTO s VALUES (1,100,NULL),(2,200,100),(3,300,200),(4,400,300)",
        Insert,
        "s",
        &["id", "code", "up"],
        &[
            &[Some("1"), Some("100"), None],
            &[Some("2"), Some("200"), Some("100")],
            &[Some("3"), Some("300"), Some("200")],
            &[Some("4"), Some("400"), Some("300")],
        ],
    ),
    rows(
        "INSERT INTO p VALUES (1),(2),(3)",
        Insert,
        "p",
        &["id"],
        &[&[Some("1")], &[Some("2")], &[Some("3")]],
    ),
    rows(
        "INSERT INTO c VALUES (1,1),(2,1),(3,2),(4,3),(5,NULL)",
        Insert,
        "c",
        &["id", "pid"],
        &[
            &[Some("1"), Some("1")],
            &[Some("2"), Some("1")],
            &[Some("3"), Some("2")],
            &[Some("4"), Some("3")],
            &[Some("5"), None],
        ],
    ),
    rows(
        "DELETE FROM s WHERE id = 1",
        Delete,
        "s",
        &["id"],
        &[&[Some("1")]],
    ),
    rows(
        "UPDATE s SET code = 401 WHERE id = 4",
        Update,
        "s",
        &["id", "code"],
        &[&[Some("4"), Some("401")]],
    ),
    rows(
        "DELETE FROM s WHERE id = 2",
        Delete,
        "s",
        &["id"],
        &[&[Some("2")]],
    ),
    rows(
        "DELETE FROM p WHERE id IN (1, 3)",
        Delete,
        "p",
        &["id"],
        &[&[Some("1")], &[Some("3")]],
    ),
];

/// What [`SELF_AND_BATCH`] leaves (as Dolt 2.3.1 prints it).
const SELF_AND_BATCH_ROWS: &[(&str, &[&str])] = &[
    ("s", &["3,300,NULL", "4,401,300"]),
    ("p", &["2"]),
    ("c", &["3,2", "5,NULL"]),
];

fn show(v: &Option<SqlValue>) -> String {
    match v {
        None => "NULL".into(),
        Some(SqlValue::Int(i)) => i.to_string(),
        Some(SqlValue::Text(s)) => s.clone(),
        Some(other) => format!("{other:?}"),
    }
}

/// The committed rows of `table` as text, in key order, after checking that every
/// secondary index holds exactly these rows.
pub(super) fn committed_rows(dir: &std::path::Path, table: &str) -> Vec<String> {
    let db = prollystore_sql::open(dir).unwrap();
    let t = db.table_at("main", State::Committed, table).unwrap();
    let line = |r: Vec<Option<SqlValue>>| r.iter().map(show).collect::<Vec<_>>().join(",");
    let all: Vec<String> = t.rows(&db).unwrap().map(|r| line(r.unwrap())).collect();
    let reader = t.reader(&db).unwrap();
    for (ix, _) in &t.secondary_indexes {
        let mut via: Vec<String> = reader
            .index_scan(ix, &KeyRange::all())
            .unwrap()
            .map(|r| line(r.unwrap()))
            .collect();
        via.sort();
        let mut want = all.clone();
        want.sort();
        assert_eq!(via, want, "index {ix} of {table}");
    }
    all
}

/// A writable database (the `basic/before` write scenario) with `ops` applied by our writer
/// and committed.
pub(super) fn ours_committed(ops: &[Op]) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    copy_tree(&scenario("basic/before"), &dir);
    let mut w = prollystore_sql::writer(&dir).unwrap();
    for op in ops {
        op.apply(&mut w)
            .unwrap_or_else(|e| panic!("{}: {e}", op.sql()));
    }
    w.commit(&meta("actions")).unwrap();
    (tmp, dir)
}

pub(super) fn assert_rows(dir: &std::path::Path, want: &[(&str, &[&str])]) {
    for (table, rows) in want {
        assert_eq!(committed_rows(dir, table), *rows, "table {table}");
    }
}

/// Dolt's rows of `table` (CSV, in key order) as our readers show them.
pub(super) fn dolt_rows(dir: &std::path::Path, table: &str) -> Vec<String> {
    let q = format!("SELECT * FROM {table}");
    dolt(dir, &["sql", "-r", "csv", "-q", &q])
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            l.split(',')
                .map(|f| if f.is_empty() { "NULL" } else { f })
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect()
}

/// Runs `ops` through Dolt (`dolt sql -q` per statement, then `dolt add -A` and `dolt
/// commit` with a pinned author and date) and through our writer on a copy of the same
/// fresh database: the same commit (so the same root value and table hashes), and Dolt
/// shows the rows `want` in both.
pub(super) fn same_as_dolt(name: &str, ops: &[Op], want: &[(&str, &[&str])]) {
    let sql: Vec<&str> = ops.iter().map(Op::sql).collect();
    let Some((_tmp, theirs, ours)) = differential(name, &sql, &|w| {
        for op in ops {
            op.apply(w).unwrap_or_else(|e| panic!("{}: {e}", op.sql()));
        }
    }) else {
        return;
    };
    for (table, rows) in want {
        assert_eq!(dolt_rows(&theirs, table), *rows, "Dolt's {table}");
        assert_eq!(dolt_rows(&ours, table), *rows, "our {table}");
        assert_eq!(
            committed_rows(&ours, table),
            *rows,
            "our {table}, read back"
        );
    }
}

#[test]
fn deletes_cascade_and_set_null_through_every_key() {
    let (_tmp, dir) = ours_committed(CASCADES);
    assert_rows(&dir, CASCADES_ROWS);
}

#[test]
fn deletes_cascade_and_set_null_as_dolt_does() {
    same_as_dolt("ON DELETE actions", CASCADES, CASCADES_ROWS);
}

#[test]
fn updates_cascade_and_set_null_through_every_key() {
    let (_tmp, dir) = ours_committed(UPDATES);
    assert_rows(&dir, UPDATES_ROWS);
}

#[test]
fn updates_cascade_and_set_null_as_dolt_does() {
    same_as_dolt("ON UPDATE actions", UPDATES, UPDATES_ROWS);
}

#[test]
fn cascades_from_a_parent_index_that_is_not_unique() {
    let (_tmp, dir) = ours_committed(NON_UNIQUE);
    assert_rows(&dir, NON_UNIQUE_ROWS);
    same_as_dolt(
        "actions on a non-unique parent index",
        NON_UNIQUE,
        NON_UNIQUE_ROWS,
    );
}

#[test]
fn set_null_within_a_table_and_several_parents_at_once() {
    let (_tmp, dir) = ours_committed(SELF_AND_BATCH);
    assert_rows(&dir, SELF_AND_BATCH_ROWS);
    same_as_dolt(
        "SET NULL in one table, several parents",
        SELF_AND_BATCH,
        SELF_AND_BATCH_ROWS,
    );
}

/// One statement deleting a row and the row its SET NULL changes: both go, and the index
/// on the referencing column keeps no entry of either. (Dolt 2.3.1 leaves the second row's
/// nulled entry in that index when it deletes the row: `DELETE FROM s WHERE id IN (2, 3)`
/// after these rows leaves `up`'s index an entry `(NULL, 3)` for a row that is gone, so this
/// case is not compared with Dolt.)
#[test]
fn deleting_a_row_and_the_row_its_set_null_changed() {
    let mut ops = SELF_AND_BATCH[..4].to_vec();
    ops.push(rows(
        "DELETE FROM s WHERE id IN (2, 3)",
        Delete,
        "s",
        &["id"],
        &[&[Some("2")], &[Some("3")]],
    ));
    let (_tmp, dir) = ours_committed(&ops);
    assert_rows(&dir, &[("s", &["1,100,NULL", "4,400,NULL"])]);
}

/// A self-referencing chain of `n` rows (each the child of the one before) and the delete of
/// its head, as Dolt's statements and as our rows.
fn chain(n: usize) -> (Vec<String>, Vec<Vec<Option<SqlValue>>>) {
    let create = "CREATE TABLE t (id INT PRIMARY KEY, up INT, \
        FOREIGN KEY (up) REFERENCES t(id) ON DELETE CASCADE)";
    let values: Vec<String> = (1..=n)
        .map(|i| match i {
            1 => "(1,NULL)".to_string(),
            _ => format!("({i},{})", i - 1),
        })
        .collect();
    let sql = vec![
        create.to_string(),
        format!("INSERT INTO t VALUES {}", values.join(",")),
    ];
    let rows = (1..=n as i64)
        .map(|i| {
            vec![
                Some(SqlValue::Int(i)),
                (i > 1).then_some(SqlValue::Int(i - 1)),
            ]
        })
        .collect();
    (sql, rows)
}

/// Cascading deletes stop at MySQL's depth of 15: a self-referencing chain (a cycle of
/// keys: one level less) of 14 rows goes whole, one of 15 is refused; a chain of tables
/// (no cycle) goes 15 levels deep and no further. Dolt agrees on each.
#[test]
fn cascades_stop_at_the_depth_dolt_stops_at() {
    for (n, ok) in [(14, true), (15, false)] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        copy_tree(&scenario("basic/before"), &dir);
        let (sql, rows) = chain(n);
        let mut w = prollystore_sql::writer(&dir).unwrap();
        w.create_table(&TableDef::from_sql(&sql[0]).unwrap())
            .unwrap();
        w.insert("t", &["id", "up"], &rows).unwrap();
        w.commit(&meta("chain")).unwrap();
        let before = snapshot(&dir);
        let done = w.delete("t", &[vec![SqlValue::Int(1)]]);
        assert_eq!(done.is_ok(), ok, "{n} rows: {done:?}");
        if ok {
            w.commit(&meta("deleted")).unwrap();
            drop(w);
            assert!(committed_rows(&dir, "t").is_empty());
        } else {
            assert!(done.unwrap_err().to_string().contains("deeper than 15"));
            drop(w);
            assert!(
                snapshot(&dir) == before,
                "a refused cascade wrote something"
            );
        }
        if let Some((_t, theirs)) = fresh_dolt_db("cascade depth") {
            for q in &sql {
                dolt(&theirs, &["sql", "-q", q]).unwrap();
            }
            let out = std::process::Command::new(std::env::var_os("PROLLY_DOLT").unwrap())
                .args(["sql", "-q", "DELETE FROM t WHERE id = 1"])
                .current_dir(&theirs)
                .env("HOME", theirs.parent().unwrap().join("home"))
                .output()
                .unwrap();
            let failed = String::from_utf8_lossy(&out.stderr).contains("max depth of 15")
                || String::from_utf8_lossy(&out.stdout).contains("max depth of 15");
            assert_eq!(!failed, ok, "Dolt, {n} rows");
        }
    }
    // Tables t0 ← t1 ← … ← t16, each row the child of the one before.
    let table_chain = |levels: usize| -> Vec<Op> {
        let mut ops = Vec::new();
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        ops.push(Op::Create("CREATE TABLE t0 (id INT PRIMARY KEY)"));
        for i in 1..=levels {
            ops.push(Op::Create(leak(format!(
                "CREATE TABLE t{i} (id INT PRIMARY KEY, up INT, \
                 FOREIGN KEY (up) REFERENCES t{}(id) ON DELETE CASCADE)",
                i - 1
            ))));
        }
        for i in 0..=levels {
            let (columns, row): (&'static [&'static str], &'static [Option<&'static str>]) =
                if i == 0 {
                    (&["id"], &[Some("1")])
                } else {
                    (&["id", "up"], &[Some("1"), Some("1")])
                };
            ops.push(Op::Rows {
                sql: leak(if i == 0 {
                    "INSERT INTO t0 VALUES (1)".into()
                } else {
                    format!("INSERT INTO t{i} VALUES (1,1)")
                }),
                mode: Insert,
                table: leak(format!("t{i}")),
                columns,
                rows: Box::leak(vec![row].into_boxed_slice()),
            });
        }
        ops
    };
    for (levels, ok) in [(14, true), (15, false)] {
        let mut ops = table_chain(levels);
        let (_tmp, dir) = ours_committed(&ops);
        let mut w = prollystore_sql::writer(&dir).unwrap();
        let done = w.delete("t0", &[vec![SqlValue::Int(1)]]);
        assert_eq!(done.is_ok(), ok, "{levels} levels: {done:?}");
        drop(w);
        if ok {
            ops.push(rows(
                "DELETE FROM t0 WHERE id = 1",
                Delete,
                "t0",
                &["id"],
                &[&[Some("1")]],
            ));
            let want: Vec<(String, Vec<&str>)> =
                (0..=levels).map(|i| (format!("t{i}"), vec![])).collect();
            let want: Vec<(&str, &[&str])> =
                want.iter().map(|(t, r)| (t.as_str(), &r[..])).collect();
            same_as_dolt("cascade through tables", &ops, &want);
        }
    }
}

/// Changes a key refuses anywhere in the cascade: nothing is written, and Dolt refuses the
/// same statements (the CHECK case aside: see below).
#[test]
fn refused_cascades_write_nothing() {
    let setup: &[Op] = &[
        Op::Create("CREATE TABLE p (id INT PRIMARY KEY, code INT, UNIQUE KEY uc (code))"),
        Op::Create("CREATE TABLE c (id INT PRIMARY KEY, pid INT, pcode INT, CONSTRAINT code_ok CHECK (pcode <> 99), \
            FOREIGN KEY (pid) REFERENCES p(id) ON DELETE CASCADE, \
            FOREIGN KEY (pcode) REFERENCES p(code) ON UPDATE CASCADE ON DELETE CASCADE)"),
        Op::Create("CREATE TABLE d (id INT PRIMARY KEY, cid INT, FOREIGN KEY (cid) REFERENCES c(id))"),
        Op::Create("CREATE TABLE s (id INT PRIMARY KEY, code INT, up INT, UNIQUE KEY us (code), \
            FOREIGN KEY (up) REFERENCES s(code) ON UPDATE CASCADE ON DELETE SET NULL)"),
        Op::Create("CREATE TABLE nu (id INT PRIMARY KEY, v INT, KEY kv (v))"),
        Op::Create("CREATE TABLE nr (id INT PRIMARY KEY, v INT, FOREIGN KEY (v) REFERENCES nu(v))"),
        rows(
            "INSERT INTO p VALUES (1,10),(2,20)",
            Insert,
            "p",
            &["id", "code"],
            &[&[Some("1"), Some("10")], &[Some("2"), Some("20")]],
        ),
        rows(
            "INSERT INTO c VALUES (1,1,10),(2,2,20)",
            Insert,
            "c",
            &["id", "pid", "pcode"],
            &[
                &[Some("1"), Some("1"), Some("10")],
                &[Some("2"), Some("2"), Some("20")],
            ],
        ),
        rows(
            "INSERT INTO d VALUES (1,1)",
            Insert,
            "d",
            &["id", "cid"],
            &[&[Some("1"), Some("1")]],
        ),
        rows(
            "INSERT INTO s VALUES (1,100,NULL),(2,200,100)",
            Insert,
            "s",
            &["id", "code", "up"],
            &[
                &[Some("1"), Some("100"), None],
                &[Some("2"), Some("200"), Some("100")],
            ],
        ),
        rows(
            "INSERT INTO nu VALUES (1,9),(2,9)",
            Insert,
            "nu",
            &["id", "v"],
            &[&[Some("1"), Some("9")], &[Some("2"), Some("9")]],
        ),
        rows(
            "INSERT INTO nr VALUES (1,9)",
            Insert,
            "nr",
            &["id", "v"],
            &[&[Some("1"), Some("9")]],
        ),
    ];
    let (_tmp, dir) = ours_committed(setup);
    let before = snapshot(&dir);
    let mut w = prollystore_sql::writer(&dir).unwrap();
    let refused: &[(Op, &str, &str)] = &[
        // A RESTRICT key refuses a referenced value's delete though another parent row
        // holds the same value.
        (
            rows(
                "DELETE FROM nu WHERE id = 1",
                Delete,
                "nu",
                &["id"],
                &[&[Some("1")]],
            ),
            "nr_ibfk_1",
            "nr_ibfk_1",
        ),
        // The cascade reaches a child row a RESTRICT key still refers to.
        (
            rows(
                "DELETE FROM p WHERE id = 1",
                Delete,
                "p",
                &["id"],
                &[&[Some("1")]],
            ),
            "d_ibfk_1",
            "d_ibfk_1",
        ),
        // ON UPDATE CASCADE back into the table being updated acts as RESTRICT.
        (
            rows(
                "UPDATE s SET code = 101 WHERE id = 1",
                Update,
                "s",
                &["id", "code"],
                &[&[Some("1"), Some("101")]],
            ),
            "s_ibfk_1",
            "s_ibfk_1",
        ),
        // A cascaded value the child's CHECK refuses. Dolt runs no CHECK on rows a cascade
        // changes (MySQL refuses such a key at CREATE TABLE): we refuse the change.
        (
            rows(
                "UPDATE p SET code = 99 WHERE id = 2",
                Update,
                "p",
                &["id", "code"],
                &[&[Some("2"), Some("99")]],
            ),
            "check",
            "",
        ),
    ];
    for (op, ours, theirs) in refused {
        let e = op.apply(&mut w).unwrap_err().to_string();
        assert!(e.to_lowercase().contains(ours), "{}: {e}", op.sql());
        let _ = theirs;
    }
    // TRUNCATE carries out no action: a referenced row stops it.
    let e = w.truncate("p").unwrap_err().to_string();
    assert!(e.contains("cannot be deleted"), "{e}");
    drop(w);
    assert!(snapshot(&dir) == before, "a refused change wrote something");
    // Dolt refuses the same statements (naming the same keys), except the CHECK case.
    let Some((_t, dolt_dir)) = fresh_dolt_db("refused cascades") else {
        return;
    };
    for op in setup {
        dolt(&dolt_dir, &["sql", "-q", op.sql()]).unwrap();
    }
    for (op, _, theirs) in refused {
        let out = std::process::Command::new(std::env::var_os("PROLLY_DOLT").unwrap())
            .args(["sql", "-q", op.sql()])
            .current_dir(&dolt_dir)
            .env("HOME", dolt_dir.parent().unwrap().join("home"))
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if theirs.is_empty() {
            assert!(!text.contains("error"), "Dolt refused {}: {text}", op.sql());
        } else {
            assert!(text.contains(theirs), "Dolt accepted {}: {text}", op.sql());
        }
    }
}

/// ON DELETE / ON UPDATE SET DEFAULT: Dolt 2.3.1 refuses the `CREATE TABLE` (its MySQL
/// dialect parses the action and rejects it: `"SET DEFAULT" is not supported`) and creates
/// nothing; so do we, every byte left as it was.
#[test]
fn set_default_is_refused_as_dolt_refuses_it() {
    let statements = [
        "CREATE TABLE c (id INT PRIMARY KEY, p INT DEFAULT 5, FOREIGN KEY (p) REFERENCES p(id) ON DELETE SET DEFAULT)",
        "CREATE TABLE c (id INT PRIMARY KEY, p INT DEFAULT 5, FOREIGN KEY (p) REFERENCES p(id) ON UPDATE SET DEFAULT)",
        "CREATE TABLE c (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES p(id) ON UPDATE CASCADE ON DELETE SET DEFAULT)",
    ];
    let setup = [Op::Create("CREATE TABLE p (id INT PRIMARY KEY)")];
    let (_tmp, dir) = ours_committed(&setup);
    let before = snapshot(&dir);
    let mut w = prollystore_sql::writer(&dir).unwrap();
    for sql in statements {
        let e = Op::Create(sql).apply(&mut w).unwrap_err().to_string();
        assert!(e.contains("\"SET DEFAULT\" is not supported"), "{sql}: {e}");
    }
    drop(w);
    assert!(
        snapshot(&dir) == before,
        "a refused CREATE TABLE wrote something"
    );

    let Some((_t, dolt_dir)) = fresh_dolt_db("SET DEFAULT") else {
        return;
    };
    dolt(&dolt_dir, &["sql", "-q", setup[0].sql()]).unwrap();
    for sql in statements {
        let out = std::process::Command::new(std::env::var_os("PROLLY_DOLT").unwrap())
            .args(["sql", "-q", sql])
            .current_dir(&dolt_dir)
            .env("HOME", dolt_dir.parent().unwrap().join("home"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stderr).into_owned()
            + &String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("\"SET DEFAULT\" is not supported"),
            "Dolt accepted {sql}: {text}"
        );
    }
    let tables = dolt(&dolt_dir, &["sql", "-r", "csv", "-q", "SHOW TABLES"]).unwrap();
    assert_eq!(tables.lines().skip(1).collect::<Vec<_>>(), ["p"]);
}
