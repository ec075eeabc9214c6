//! Foreign keys on keyless tables: a keyless child (the index Dolt adds ends with the row
//! hash), keyless parents with a unique and a non-unique index, ON DELETE CASCADE, ON UPDATE
//! CASCADE and SET NULL reaching keyless children (one copy of each distinct child row per
//! parent row, as Dolt's engine changes them), and the changes Dolt refuses. Without Dolt the
//! root value is compared with the one Dolt 2.3.1 made from the same statements; with
//! `PROLLY_DOLT` set the whole commit is compared, and Dolt's refusals too.

use super::api_tests::{dolt, fresh_dolt_db, snapshot};
use super::tests_fk_actions::{assert_rows, ours_committed, rows, same_as_dolt, Op};
use prollystore_dolt::db::State;

use prollystore_dolt::write::RowMode::{Delete, Insert, Update};

/// Keyless children of a keyed parent (CASCADE; ON UPDATE CASCADE with ON DELETE SET NULL),
/// a keyless parent with a unique index (a keyed child with SET NULL, a keyless child with
/// CASCADE), a keyless parent with a non-unique index, and plain keyless row changes.
const KEYLESS: &[Op] = &[
    Op::Create("CREATE TABLE par (id INT PRIMARY KEY, code INT, UNIQUE KEY uc (code))"),
    Op::Create(
        "CREATE TABLE kc (p INT, v INT, FOREIGN KEY (p) REFERENCES par(id) ON DELETE CASCADE)",
    ),
    Op::Create(
        "CREATE TABLE ku (pc INT, v INT, \
        FOREIGN KEY (pc) REFERENCES par(code) ON UPDATE CASCADE ON DELETE SET NULL)",
    ),
    Op::Create("CREATE TABLE kp (id INT, UNIQUE KEY u (id))"),
    Op::Create(
        "CREATE TABLE kpc (id INT PRIMARY KEY, p INT, \
        FOREIGN KEY (p) REFERENCES kp(id) ON DELETE SET NULL)",
    ),
    Op::Create(
        "CREATE TABLE kk (p INT, w VARCHAR(10), \
        FOREIGN KEY (p) REFERENCES kp(id) ON DELETE CASCADE)",
    ),
    Op::Create("CREATE TABLE kq (id INT, KEY nq (id))"),
    Op::Create("CREATE TABLE kqc (id INT PRIMARY KEY, q INT, FOREIGN KEY (q) REFERENCES kq(id))"),
    rows(
        "INSERT INTO par VALUES (1,10),(2,20),(3,30)",
        Insert,
        "par",
        &["id", "code"],
        &[
            &[Some("1"), Some("10")],
            &[Some("2"), Some("20")],
            &[Some("3"), Some("30")],
        ],
    ),
    rows(
        "INSERT INTO kc VALUES (1,1),(1,1),(1,2),(2,1),(NULL,5)",
        Insert,
        "kc",
        &["p", "v"],
        &[
            &[Some("1"), Some("1")],
            &[Some("1"), Some("1")],
            &[Some("1"), Some("2")],
            &[Some("2"), Some("1")],
            &[None, Some("5")],
        ],
    ),
    rows(
        "INSERT INTO ku VALUES (10,1),(10,1),(20,2),(20,2),(30,3)",
        Insert,
        "ku",
        &["pc", "v"],
        &[
            &[Some("10"), Some("1")],
            &[Some("10"), Some("1")],
            &[Some("20"), Some("2")],
            &[Some("20"), Some("2")],
            &[Some("30"), Some("3")],
        ],
    ),
    rows(
        "INSERT INTO kp VALUES (1),(2),(3)",
        Insert,
        "kp",
        &["id"],
        &[&[Some("1")], &[Some("2")], &[Some("3")]],
    ),
    rows(
        "INSERT INTO kpc VALUES (1,1),(2,2),(3,NULL)",
        Insert,
        "kpc",
        &["id", "p"],
        &[
            &[Some("1"), Some("1")],
            &[Some("2"), Some("2")],
            &[Some("3"), None],
        ],
    ),
    rows(
        "INSERT INTO kk VALUES (1,'a'),(1,'a'),(2,'b')",
        Insert,
        "kk",
        &["p", "w"],
        &[
            &[Some("1"), Some("a")],
            &[Some("1"), Some("a")],
            &[Some("2"), Some("b")],
        ],
    ),
    rows(
        "INSERT INTO kq VALUES (5),(5),(6)",
        Insert,
        "kq",
        &["id"],
        &[&[Some("5")], &[Some("5")], &[Some("6")]],
    ),
    rows(
        "INSERT INTO kqc VALUES (1,5)",
        Insert,
        "kqc",
        &["id", "q"],
        &[&[Some("1"), Some("5")]],
    ),
    // ON UPDATE CASCADE: one of the two copies of (20,2) follows the new code; the other
    // stays, referring to a code no parent row has any more (as Dolt leaves it).
    rows(
        "UPDATE par SET code = 21 WHERE id = 2",
        Update,
        "par",
        &["id", "code"],
        &[&[Some("2"), Some("21")]],
    ),
    // ON DELETE CASCADE removes one copy of (1,1) and the one (1,2); ON DELETE SET NULL
    // changes one copy of (10,1).
    rows(
        "DELETE FROM par WHERE id = 1",
        Delete,
        "par",
        &["id"],
        &[&[Some("1")]],
    ),
    // A keyless parent's row: its keyed child is set NULL, one copy of its keyless child goes.
    rows(
        "DELETE FROM kp WHERE id = 1",
        Delete,
        "kp",
        &["id"],
        &[&[Some("1")]],
    ),
    rows(
        "INSERT INTO kc VALUES (3,7),(3,7)",
        Insert,
        "kc",
        &["p", "v"],
        &[&[Some("3"), Some("7")], &[Some("3"), Some("7")]],
    ),
    rows(
        "DELETE FROM kc WHERE p = 3 AND v = 7 LIMIT 1",
        Delete,
        "kc",
        &["p", "v"],
        &[&[Some("3"), Some("7")]],
    ),
    rows(
        "DELETE FROM kq WHERE id = 6",
        Delete,
        "kq",
        &["id"],
        &[&[Some("6")]],
    ),
];

/// What [`KEYLESS`] leaves, as Dolt 2.3.1 prints it (keyless tables in row-hash order).
const KEYLESS_ROWS: &[(&str, &[&str])] = &[
    ("par", &["2,21", "3,30"]),
    ("kc", &["1,1", "2,1", "3,7", "NULL,5"]),
    ("ku", &["10,1", "20,2", "30,3", "21,2", "NULL,1"]),
    ("kp", &["2", "3"]),
    ("kpc", &["1,NULL", "2,2", "3,NULL"]),
    ("kk", &["2,b", "1,a"]),
    ("kq", &["5", "5"]),
    ("kqc", &["1,5"]),
];

/// The root value Dolt 2.3.1 commits after [`KEYLESS`] (`dolt sql -q` per statement on a
/// fresh database, `dolt add -A`, `dolt commit`; read with `Database::root_at`): its tables
/// and foreign-key collection, independent of commit dates. The Dolt test below checks it.
const KEYLESS_ROOT: &str = "gojshd9dh4cm4av87codlchn02pb6bpb";

fn committed_root(dir: &std::path::Path) -> String {
    let db = prollystore_sql::open(dir).unwrap();
    db.root_at("main", State::Committed)
        .unwrap()
        .address
        .to_string()
}

#[test]
fn keyless_tables_take_part_in_foreign_keys() {
    let (_tmp, dir) = ours_committed(KEYLESS);
    assert_rows(&dir, KEYLESS_ROWS);
    assert_eq!(committed_root(&dir), KEYLESS_ROOT, "the root Dolt made");
}

#[test]
fn keyless_foreign_keys_as_dolt_does() {
    same_as_dolt("foreign keys on keyless tables", KEYLESS, KEYLESS_ROWS);
    let Some((_t, dir)) = fresh_dolt_db("the keyless root") else {
        return;
    };
    for op in KEYLESS {
        dolt(&dir, &["sql", "-q", op.sql()]).unwrap();
    }
    dolt(&dir, &["add", "-A"]).unwrap();
    dolt(&dir, &["commit", "-m", "keyless"]).unwrap();
    assert_eq!(committed_root(&dir), KEYLESS_ROOT);
}

/// Changes Dolt refuses after [`KEYLESS`]: each leaves every byte as it was, and Dolt
/// refuses each (naming the same key, or the same kind of error).
#[test]
fn refused_keyless_changes_write_nothing() {
    let (_tmp, dir) = ours_committed(KEYLESS);
    let before = snapshot(&dir);
    let mut w = prollystore_sql::writer(&dir).unwrap();
    let refused: &[(Op, &str, &str)] = &[
        // A new child row without its parent.
        (
            rows(
                "INSERT INTO kc VALUES (9,1)",
                Insert,
                "kc",
                &["p", "v"],
                &[&[Some("9"), Some("1")]],
            ),
            "kc_ibfk_1",
            "kc_ibfk_1",
        ),
        // Another copy of the row the cascade left behind refers to a parent that is gone.
        (
            rows(
                "INSERT INTO kc VALUES (1,1)",
                Insert,
                "kc",
                &["p", "v"],
                &[&[Some("1"), Some("1")]],
            ),
            "kc_ibfk_1",
            "kc_ibfk_1",
        ),
        (
            rows(
                "INSERT INTO ku VALUES (20,2)",
                Insert,
                "ku",
                &["pc", "v"],
                &[&[Some("20"), Some("2")]],
            ),
            "ku_ibfk_1",
            "ku_ibfk_1",
        ),
        // One copy of a keyless parent row goes while another stays: still refused while a
        // child refers to the value (RESTRICT).
        (
            rows(
                "DELETE FROM kq WHERE id = 5 LIMIT 1",
                Delete,
                "kq",
                &["id"],
                &[&[Some("5")]],
            ),
            "kqc_ibfk_1",
            "kqc_ibfk_1",
        ),
        // The keyless parent's unique index.
        (
            rows(
                "INSERT INTO kp VALUES (2)",
                Insert,
                "kp",
                &["id"],
                &[&[Some("2")]],
            ),
            "unique",
            "duplicate unique key",
        ),
    ];
    for (op, ours, _) in refused {
        let e = op.apply(&mut w).unwrap_err().to_string();
        assert!(e.to_lowercase().contains(ours), "{}: {e}", op.sql());
    }
    // TRUNCATE of a referenced keyless parent (Dolt refuses it outright).
    let e = w.truncate("kp").unwrap_err().to_string();
    assert!(e.contains("cannot be deleted"), "{e}");
    drop(w);
    assert!(snapshot(&dir) == before, "a refused change wrote something");

    let Some((_t, dolt_dir)) = fresh_dolt_db("refused keyless changes") else {
        return;
    };
    for op in KEYLESS {
        dolt(&dolt_dir, &["sql", "-q", op.sql()]).unwrap();
    }
    let mut statements: Vec<(&str, &str)> =
        refused.iter().map(|(op, _, t)| (op.sql(), *t)).collect();
    statements.push(("TRUNCATE kp", "cannot truncate table kp"));
    for (sql, theirs) in statements {
        let out = std::process::Command::new(std::env::var_os("PROLLY_DOLT").unwrap())
            .args(["sql", "-q", sql])
            .current_dir(&dolt_dir)
            .env("HOME", dolt_dir.parent().unwrap().join("home"))
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains(theirs), "Dolt accepted {sql}: {text}");
    }
}
