//! `checkout` carrying uncommitted changes when both they and the branch checked out changed
//! foreign keys: the keys merged per table as `dolt checkout` merges them, and a table whose
//! keys both changed refused as Dolt refuses it, with nothing written.

use std::path::Path;

use super::api::DoltWriter as ApiWriter;
use super::helpers::column;
use super::tables::table_def::{ForeignKeyAction, ForeignKeyDef, TableDef};
use super::tests::{copy_tree, scenario, sql_meta};
use super::tests_vc::{dolt_at, open, scratch, snapshot};
use super::vc;
use crate::db::{Database, State};

/// The working root of branch `other` after [`writer_made_union`]'s steps, as Dolt 2.3.1
/// makes it from the same statements (`dolt sql -q`, `dolt add -A`, `dolt commit`, `dolt
/// checkout`; read with `Database::root_at`). Root values hold no dates; the Dolt test below
/// checks this.
const UNION_ROOT: &str = "4fb2kpu8ksh1cm3nqk5nbfqtriqr49ud";

const UNION_BASE: &[&str] = &["CREATE TABLE par (id INT PRIMARY KEY)"];
const UNION_OTHER: &[&str] =
    &["CREATE TABLE c1 (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES par(id))"];
const UNION_MAIN: &[&str] = &[
    "CREATE TABLE c2 (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES par(id) ON DELETE CASCADE)",
];

fn working_root(dir: &Path, branch: &str) -> String {
    Database::open(dir)
        .unwrap()
        .root_at(branch, State::Working)
        .unwrap()
        .address
        .to_string()
}

/// The table a `UNION_*` statement creates, as `CREATE TABLE` parsing makes it.
fn def_of(sql: &str) -> TableDef {
    let int = |name: &str, nullable| column(name, "int", nullable, None);
    let (name, on_delete) = match sql {
        s if s == UNION_BASE[0] => {
            return TableDef {
                name: "par".into(),
                columns: vec![int("id", false)],
                primary_key: vec!["id".into()],
                ..TableDef::default()
            }
        }
        s if s == UNION_OTHER[0] => ("c1", ForeignKeyAction::Default),
        s if s == UNION_MAIN[0] => ("c2", ForeignKeyAction::Cascade),
        other => panic!("no definition for {other:?}"),
    };
    TableDef {
        name: name.into(),
        columns: vec![int("id", false), int("p", true)],
        primary_key: vec!["id".into()],
        foreign_keys: vec![ForeignKeyDef {
            name: None,
            columns: vec!["p".into()],
            parent_table: "par".into(),
            parent_columns: vec!["id".into()],
            on_update: ForeignKeyAction::Default,
            on_delete,
        }],
        ..TableDef::default()
    }
}

fn create_all(dir: &Path, statements: &[&str], commit: bool) {
    let mut w = ApiWriter::open(dir).unwrap();
    for sql in statements {
        w.create_table(&def_of(sql)).unwrap();
    }
    if commit {
        w.commit(&super::helpers::meta("step")).unwrap();
    } else {
        w.save(("T", "t@example.com"), 1_704_067_200).unwrap();
    }
}

/// Both sides add a table with a foreign key (the branch checked out commits one, the
/// uncommitted changes hold the other): the carried working root has both keys, the root
/// Dolt's checkout makes.
#[test]
fn writer_made_union() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    copy_tree(&scenario("basic/before"), &dir);
    create_all(&dir, UNION_BASE, true);
    vc::create_branch(&dir, "other", "main").unwrap();
    vc::checkout(&dir, "other").unwrap();
    create_all(&dir, UNION_OTHER, true);
    vc::checkout(&dir, "main").unwrap();
    create_all(&dir, UNION_MAIN, false);
    vc::checkout(&dir, "other").unwrap();
    assert_eq!(working_root(&dir, "other"), UNION_ROOT);
    let db = Database::open(&dir).unwrap();
    let root = db.root_at("other", State::Working).unwrap();
    let names: Vec<&str> = root.tables.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["c1", "c2", "par"]);

    // The same through Dolt.
    let Some((bin, _tmp, theirs)) = scratch("carried foreign keys (writer-made)") else {
        return;
    };
    let d0 = "2024-03-01T00:00:00Z";
    let run = |args: &[&str]| {
        let (ok, out) = dolt_at(&bin, &theirs, d0, args);
        assert!(ok, "dolt {args:?}: {out}");
    };
    run(&["init", "--initial-branch", "main"]);
    run(&["sql", "-q", &UNION_BASE.join("; ")]);
    run(&["add", "-A"]);
    run(&["commit", "-m", "base", "--date", d0]);
    run(&["checkout", "-b", "other"]);
    run(&["sql", "-q", &UNION_OTHER.join("; ")]);
    run(&["add", "-A"]);
    run(&["commit", "-m", "other", "--date", d0]);
    run(&["checkout", "main"]);
    run(&["sql", "-q", &UNION_MAIN.join("; ")]);
    run(&["checkout", "other"]);
    assert_eq!(working_root(&theirs, "other"), UNION_ROOT);
}

/// Dolt makes the state (foreign keys added by `ALTER TABLE` on a table whose index already
/// serves them, so the table itself is unchanged; a staged new table with a key; an unstaged
/// key and row), we check out: the same working and staged roots as `dolt checkout`. Then a
/// key added to the same table on both sides: Dolt refuses, naming the table, and so do we,
/// writing nothing.
#[test]
fn checkout_merges_foreign_keys_as_dolt_does() {
    let Some((bin, tmp, dir)) = scratch("carried foreign keys") else {
        return;
    };
    let d0 = "2024-03-01T00:00:00Z";
    let run = |dir: &Path, args: &[&str]| {
        let (ok, out) = dolt_at(&bin, dir, d0, args);
        assert!(ok, "dolt {args:?}: {out}");
        out
    };
    run(&dir, &["init", "--initial-branch", "main"]);
    run(&dir, &["sql", "-q", "CREATE TABLE par (id INT PRIMARY KEY); CREATE TABLE c (id INT PRIMARY KEY, p INT, KEY ix (p)); CREATE TABLE d (id INT PRIMARY KEY, p INT, KEY ix (p)); INSERT INTO par VALUES (1)"]);
    run(&dir, &["add", "-A"]);
    run(&dir, &["commit", "-m", "base", "--date", d0]);
    run(&dir, &["checkout", "-b", "other"]);
    run(&dir, &["sql", "-q", "CREATE TABLE c1 (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES par(id)); ALTER TABLE c ADD CONSTRAINT fa FOREIGN KEY (p) REFERENCES par(id)"]);
    run(&dir, &["add", "-A"]);
    run(&dir, &["commit", "-m", "other", "--date", d0]);
    run(&dir, &["checkout", "main"]);
    run(&dir, &["sql", "-q", "CREATE TABLE c2 (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES par(id) ON DELETE CASCADE)"]);
    run(&dir, &["add", "c2"]);
    run(&dir, &["sql", "-q", "ALTER TABLE d ADD CONSTRAINT fd FOREIGN KEY (p) REFERENCES par(id); INSERT INTO c VALUES (1, 1)"]);
    let ours = tmp.path().join("ours");
    copy_tree(&dir, &ours);
    let clash = tmp.path().join("clash");
    copy_tree(&dir, &clash);

    // The keys' ALTER left table c as it was: its keys alone differ between the branches.
    let table_c = |d: &Path, branch: &str| {
        let db = Database::open(d).unwrap();
        let root = db.root_at(branch, State::Committed).unwrap();
        root.tables.iter().find(|(n, _)| n == "c").unwrap().1
    };
    assert_eq!(table_c(&dir, "main"), table_c(&dir, "other"));

    run(&dir, &["checkout", "other"]);
    let roots = |d: &Path| {
        let db = Database::open(d).unwrap();
        let r = |b: &str, s| db.root_at(b, s).unwrap().address;
        (
            r("other", State::Working),
            r("other", State::Staged),
            r("main", State::Working),
            r("main", State::Staged),
        )
    };
    let mut w = open(&ours);
    w.checkout("other", &sql_meta(1_709_251_200)).unwrap();
    drop(w);
    assert_eq!(
        roots(&ours),
        roots(&dir),
        "(other working, other staged, main working, main staged)"
    );
    let (ok, out) = dolt_at(
        &bin,
        &ours,
        d0,
        &[
            "sql",
            "-r",
            "csv",
            "-q",
            "SELECT constraint_name FROM information_schema.referential_constraints ORDER BY 1",
        ],
    );
    assert!(ok, "{out}");
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        ["CONSTRAINT_NAME", "c1_ibfk_1", "c2_ibfk_1", "fa", "fd"]
    );

    // Both sides add a key to table c (whose rows only the uncommitted changes touched).
    run(
        &clash,
        &[
            "sql",
            "-q",
            "ALTER TABLE c ADD CONSTRAINT fb FOREIGN KEY (p) REFERENCES par(id)",
        ],
    );
    let (ok, out) = dolt_at(&bin, &clash, d0, &["checkout", "other"]);
    assert!(
        !ok && out.contains("would be overwritten by checkout:\n\tc\n"),
        "{out}"
    );
    let before = snapshot(&clash);
    let mut w = open(&clash);
    let err = w
        .checkout("other", &sql_meta(1_709_251_200))
        .unwrap_err()
        .to_string();
    drop(w);
    assert!(err.contains("would be overwritten by checkout: c"), "{err}");
    assert!(
        snapshot(&clash) == before,
        "a refused checkout changed a file"
    );
}
