//! Diffs between database states against Dolt's own answers: `tests/data/dolt_diff` holds a
//! small database made by the real Dolt CLI (`make.sh`) and, for each line of `queries.txt`,
//! what `dolt_diff(FROM, TO, TABLE)` (or `dolt_diff_summary(FROM, TO)` for `-`) returned.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use prollystore_dolt::sql_value::SqlValue;
use prollystore_dolt::table_diff::{table_changes, write_summary_csv, ChangeKind, Row, TableDiff};
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
    let db = Database::open(dir.join("db")).unwrap();
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
    let db = Database::open(data_dir().join("db")).unwrap();
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

/// Every table's rows at `commit`, as decoded values: keyed tables by their key values' text,
/// keyless tables as a multiset (row text → count).
fn snapshot(
    db: &Database,
    commit: prollystore_format::Address,
    name: &str,
) -> Option<(prollystore_format::Address, bool, Snapshot)> {
    use prollystore_dolt::table_rows::for_each_row;
    let root = db.root_value(db.commit(commit).ok()?.root).ok()?;
    let table = db.table(&root, name).ok()?;
    let visible = table.schema.visible_columns();
    let keys: Vec<usize> = table
        .schema
        .key_columns
        .iter()
        .filter_map(|k| visible.iter().position(|v| v == k))
        .collect();
    let text = |row: &[Option<SqlValue>], cols: &mut dyn Iterator<Item = usize>| -> String {
        cols.map(|i| match row.get(i).cloned().flatten() {
            Some(v) => format!("{v:?}"),
            None => "NULL".into(),
        })
        .collect::<Vec<_>>()
        .join("|")
    };
    let mut snap = Snapshot::default();
    let keyless = table.schema.keyless;
    for_each_row(db, &table, &mut |row| {
        if keyless {
            *snap
                .copies
                .entry(text(row, &mut (0..row.len())))
                .or_default() += 1;
        } else {
            snap.rows
                .insert(text(row, &mut keys.iter().copied()), row.to_vec());
        }
        Ok(())
    })
    .ok()?;
    Some((table.schema_address, keyless, snap))
}

/// A change as (row before, row after).
type Pair = (Option<Row>, Option<Row>);

#[derive(Default)]
struct Snapshot {
    rows: BTreeMap<String, Vec<Option<SqlValue>>>,
    copies: BTreeMap<String, i64>,
}

/// Model check on the vector databases: between any two commits of `main` and `feature` whose
/// table schema is the same, the diff is exactly the difference of the two full reads (keyed
/// tables: per key; keyless tables: per row, counting copies).
#[test]
fn diffs_between_any_two_commits_equal_the_difference_of_full_reads() {
    let dir = prollystore_test_vectors::require("dolt-db");
    let mut checked = 0;
    for name in prollystore_test_vectors::DOLT_DATABASES {
        let db = Database::open(dir.join(name)).unwrap();
        let mut commits: Vec<_> = ["main", "feature"]
            .iter()
            .filter_map(|b| db.branch_head(b).ok())
            .flat_map(|h| db.log(h).map(Result::unwrap))
            .map(|c| c.address)
            .collect();
        commits.sort();
        commits.dedup();
        commits.truncate(6);
        let head = db.commit(db.branch_head("main").unwrap()).unwrap();
        let tables: Vec<String> = db
            .root_value(head.root)
            .unwrap()
            .tables
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        for table in &tables {
            let snaps: Vec<_> = commits.iter().map(|c| snapshot(&db, *c, table)).collect();
            for (i, a) in commits.iter().enumerate() {
                for (j, b) in commits.iter().enumerate() {
                    let (Some(sa), Some(sb)) = (&snaps[i], &snaps[j]) else {
                        continue;
                    };
                    if i == j || sa.0 != sb.0 {
                        continue;
                    }
                    let (from, to) = (a.to_string(), b.to_string());
                    let d = TableDiff::new(&db, &from, &to, table).unwrap();
                    let changes: Vec<_> = d.rows().unwrap().map(Result::unwrap).collect();
                    let keyless = sa.1;
                    if keyless {
                        let mut net: BTreeMap<String, i64> = BTreeMap::new();
                        for (row, n) in &sb.2.copies {
                            *net.entry(row.clone()).or_default() += n;
                        }
                        for (row, n) in &sa.2.copies {
                            *net.entry(row.clone()).or_default() -= n;
                        }
                        net.retain(|_, n| *n != 0);
                        let mut got: BTreeMap<String, i64> = BTreeMap::new();
                        for c in &changes {
                            let (row, sign) = match c.kind {
                                ChangeKind::Added => (c.to.as_ref().unwrap(), 1),
                                _ => (c.from.as_ref().unwrap(), -1),
                            };
                            let key = row
                                .iter()
                                .map(|v| match v {
                                    Some(v) => format!("{v:?}"),
                                    None => "NULL".into(),
                                })
                                .collect::<Vec<_>>()
                                .join("|");
                            *got.entry(key).or_default() += sign;
                        }
                        assert_eq!(got, net, "{name} {table} {from}..{to}");
                    } else {
                        let (ra, rb) = (&sa.2.rows, &sb.2.rows);
                        let mut expected = Vec::new();
                        for k in ra.keys().chain(rb.keys()).collect::<BTreeSet<_>>() {
                            match (ra.get(k), rb.get(k)) {
                                (Some(x), Some(y)) if x == y => {}
                                (x, y) => expected.push((x.cloned(), y.cloned())),
                            }
                        }
                        let got: Vec<_> = changes
                            .iter()
                            .map(|c| (c.from.clone(), c.to.clone()))
                            .collect();
                        // Both in key order: the map diff's order is the table's key order.
                        let sort = |mut v: Vec<Pair>| {
                            v.sort_by_key(|(f, t)| format!("{f:?}{t:?}"));
                            v
                        };
                        assert_eq!(sort(got), sort(expected), "{name} {table} {from}..{to}");
                    }
                    checked += 1;
                }
            }
        }
    }
    println!("{checked} commit pairs checked");
    assert!(checked >= 20, "only {checked} commit pairs checked");
}
