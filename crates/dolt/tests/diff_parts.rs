//! Diffs cut into parts ([`prollystore_dolt::diff_parts`]) against Dolt's own answers: the
//! parts' rows, one part after the other, printed as `dolt_diff` prints them, are exactly what
//! `dolt sql -r csv -q "select * from dolt_diff(...)"` printed, for any number of parts.
//! `tests/data/diff_parts` (made by its `make.sh` with Dolt 2.3.1) has 24,000-row tables over
//! hundreds of leaves keyed by a utf8mb4_0900_ai_ci VARCHAR and by a non-UTF-8 VARBINARY, with
//! spread and clustered edits on branches; `tests/data/dolt_diff` has schema changes, keyless
//! tables, tables added and dropped, staged and working states.

use std::path::{Path, PathBuf};

use prollystore_dolt::diff_parts::{split_diff, DiffPart};
use prollystore_dolt::Database;
use sha2::{Digest, Sha256};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// The diff's CSV rebuilt from `n` parts (each through its JSON, read on its own): the first
/// part's header, then every part's rows. Also the parts' `rows_compared`.
fn csv_from_parts(
    db: &Database,
    from: &str,
    to: &str,
    table: &str,
    n: usize,
) -> (Vec<u8>, Vec<u64>) {
    let parts = split_diff(db, from, to, table, n, None).unwrap();
    assert!(!parts.is_empty() && parts.len() <= n);
    let mut out = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let p = DiffPart::from_json(&p.to_json()).unwrap();
        let mut csv = Vec::new();
        p.diff(db).unwrap().write_csv(&mut csv).unwrap();
        let body = match csv.iter().position(|&b| b == b'\n') {
            Some(header) if i > 0 => &csv[header + 1..],
            _ => &csv[..],
        };
        out.extend_from_slice(body);
    }
    (out, parts.iter().map(|p| p.rows_compared).collect())
}

#[test]
fn parts_of_dolt_made_diffs_print_what_dolt_prints() {
    let dir = data("diff_parts");
    let db = Database::open(dir.join("db")).unwrap();
    let expected = std::fs::read_to_string(dir.join("expected.txt")).unwrap();
    let mut checked = 0;
    for line in expected.lines().filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (from, to, table, lines, sha) = (f[0], f[1], f[2], f[3], f[4]);
        for n in [1, 2, 3, 8, 64] {
            let (csv, compared) = csv_from_parts(&db, from, to, table, n);
            let what = format!("{from} {to} {table}, {n} parts ({compared:?})");
            let count = csv.iter().filter(|&&b| b == b'\n').count();
            assert_eq!(count.to_string(), lines, "{what}: line count");
            assert_eq!(hex(&Sha256::digest(&csv)), sha, "{what}: not Dolt's text");
            if from != to && n <= 8 {
                // Edits over dozens of leaves at least: as many parts as asked for.
                assert_eq!(compared.len(), n, "{what}");
            }
        }
        checked += 1;
    }
    assert!(checked >= 9);
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Replaces the date after each `WORKING,` / `STAGED,` (the time of the query, in Dolt's
/// output and in ours).
fn mask_clock(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    loop {
        let at = [rest.find("WORKING,"), rest.find("STAGED,")]
            .into_iter()
            .flatten()
            .min();
        let Some(p) = at else { break };
        let label = if rest[p..].starts_with("WORKING,") {
            8
        } else {
            7
        };
        out.push_str(&rest[..p + label]);
        out.push_str("<now>");
        rest = rest[p + label..].get(26..).unwrap_or("");
    }
    out.push_str(rest);
    out
}

/// Schema changes (columns added and dropped), keyless tables, tables only in one state, and
/// uncommitted states: the parts give Dolt's rows.
#[test]
fn parts_of_schema_changes_keyless_and_working_diffs() {
    let dir = data("dolt_diff");
    let db = Database::open(dir.join("db")).unwrap();
    let queries = std::fs::read_to_string(dir.join("queries.txt")).unwrap();
    let mut checked = 0;
    for (i, line) in queries.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f[2] == "-" {
            continue;
        }
        let expected = std::fs::read(dir.join(format!("expected/{}.csv", i + 1))).unwrap();
        for n in [1, 2, 5] {
            let (csv, _) = csv_from_parts(&db, f[0], f[1], f[2], n);
            assert_eq!(
                mask_clock(&String::from_utf8_lossy(&csv)),
                mask_clock(&String::from_utf8_lossy(&expected)),
                "{line}, {n} parts"
            );
        }
        checked += 1;
    }
    assert!(checked >= 15);
    // A changed primary key: no row diff, so no parts either, with the same reason.
    let e = split_diff(&db, "HEAD~1", "HEAD", "pk", 4, None).unwrap_err();
    assert!(e.to_string().contains("primary key"), "{e}");
    let e = split_diff(&db, "HEAD~1", "HEAD", "nope", 4, None).unwrap_err();
    assert!(e.to_string().contains("nope"), "{e}");
    let e = split_diff(&db, "HEAD~1", "HEAD", "t", 0, None).unwrap_err();
    assert!(e.to_string().contains("0 parts"), "{e}");
}
