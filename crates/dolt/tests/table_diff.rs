//! Diffs between database states against Dolt's own answers: `tests/data/dolt_diff` holds a
//! small database made by the real Dolt CLI (`make.sh`) and, for each line of `queries.txt`,
//! what `dolt_diff(FROM, TO, TABLE)` (or `dolt_diff_summary(FROM, TO)` for `-`) returned.

use std::path::{Path, PathBuf};

use prollystore_dolt::table_diff::{table_changes, write_summary_csv, ChangeKind, TableDiff};
use prollystore_dolt::Database;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/dolt_diff")
}

/// Replaces the date after each `WORKING,` / `STAGED,`: Dolt prints the time of the query
/// there, which no second run can reproduce.
fn mask_clock(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(p) = rest.find("WORKING,").or_else(|| rest.find("STAGED,")) {
        let p = [rest.find("WORKING,"), rest.find("STAGED,")]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(p);
        let label = if rest[p..].starts_with("WORKING,") {
            8
        } else {
            7
        };
        out.push_str(&rest[..p + label]);
        out.push_str("<now>");
        let after = &rest[p + label..];
        rest = after.get(26..).unwrap_or("");
    }
    out.push_str(rest);
    out
}

#[test]
fn dolt_diff_outputs_match_dolt() {
    let dir = data_dir();
    let db = Database::open(&dir.join("db")).unwrap();
    let queries = std::fs::read_to_string(dir.join("queries.txt")).unwrap();
    let mut checked = 0;
    for (n, line) in queries.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        let (from, to, table) = (parts[0], parts[1], parts[2]);
        let expected = std::fs::read(dir.join(format!("expected/{}.csv", n + 1))).unwrap();
        // Blobs are raw bytes in Dolt's CSV; compare them as lossy text (both sides alike).
        let expected = String::from_utf8_lossy(&expected);
        let mut got = Vec::new();
        if table == "-" {
            let changes = table_changes(&db, from, to).unwrap();
            write_summary_csv(&changes, &mut got).unwrap();
        } else {
            TableDiff::new(&db, from, to, table)
                .unwrap()
                .write_csv(&mut got)
                .unwrap();
        }
        let got = String::from_utf8_lossy(&got);
        assert_eq!(mask_clock(&got), mask_clock(&expected), "query {line:?}");
        checked += 1;
    }
    assert!(checked >= 20);
}

#[test]
fn row_changes_carry_both_sides() {
    let db = Database::open(&data_dir().join("db")).unwrap();
    let d = TableDiff::new(&db, "HEAD~2", "HEAD~1", "t").unwrap();
    assert!(!d.schema_changed());
    assert_eq!(d.from_columns(), ["id", "name", "score"]);
    let rows: Vec<_> = d.rows().unwrap().map(Result::unwrap).collect();
    let kinds: Vec<ChangeKind> = rows.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        [ChangeKind::Modified, ChangeKind::Removed, ChangeKind::Added]
    );
    assert!(rows[0].from.is_some() && rows[0].to.is_some());
    assert!(rows[1].to.is_none() && rows[2].from.is_none());
    // Table names match as SQL names do, ignoring case.
    let upper = TableDiff::new(&db, "HEAD~2", "HEAD~1", "T").unwrap();
    assert_eq!(upper.name(), "t");
    let later = TableDiff::new(&db, "HEAD~1", "HEAD", "t").unwrap();
    assert!(later.schema_changed() && !later.primary_key_changed());
    // pk's primary key was widened in HEAD: Dolt's `dolt diff` skips the data diff ("Primary
    // key sets differ") and dolt_diff_summary leaves the table out; here rows() says why.
    let pk = TableDiff::new(&db, "HEAD~1", "HEAD", "pk").unwrap();
    assert!(pk.primary_key_changed() && pk.schema_changed());
    let err = pk.rows().unwrap_err();
    assert!(err.to_string().contains("primary key"), "{err}");
    let changes = table_changes(&db, "HEAD~1", "HEAD").unwrap();
    assert!(changes
        .iter()
        .any(|c| c.to_name.as_deref() == Some("pk") && c.primary_key_changed));
    // A table in neither state is an error naming it.
    let err = TableDiff::new(&db, "HEAD~2", "HEAD~1", "nope").unwrap_err();
    assert!(err.to_string().contains("nope"), "{err}");
}
