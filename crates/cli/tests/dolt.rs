//! End-to-end tests of `prolly dolt DBDIR ...` against the real Dolt databases of the golden
//! vectors (`dolt-db/`): every subcommand's output is compared byte for byte with what the
//! `dolt` CLI printed (the `.expected` folders), on a writable copy of each database whose
//! every file is checked to be unchanged afterwards.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_prolly");

/// Databases the tests must find; any other `dolt-db/<name>` with a `.expected` is tested too.
const REQUIRED: &[&str] = &["vecdb", "vecdb_journal"];

/// The vectors folder (`PROLLY_VECTORS`, else the repository's copy), holding at least the
/// databases in `REQUIRED`; panics naming what is missing.
fn vectors() -> &'static Path {
    for db in REQUIRED {
        prollystore_test_vectors::require(&format!("dolt-db/{db}/.dolt"));
    }
    prollystore_test_vectors::dir()
}

fn run(db: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("dolt")
        .arg(db)
        .args(args)
        .env_remove("PROLLY_STORE")
        .output()
        .expect("run prolly")
}

/// Runs a subcommand that must succeed silently on stderr; returns its stdout.
fn ok(db: &Path, args: &[&str]) -> Vec<u8> {
    let o = run(db, args);
    assert!(
        o.status.success(),
        "prolly dolt {} {args:?} failed: {}",
        db.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    // Not a terminal: no progress bar, nothing else either.
    assert!(
        o.stderr.is_empty(),
        "prolly dolt {args:?} wrote to stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

/// Runs a subcommand that must fail with one `error: ...` line and exit status 1.
fn fails(db: &Path, args: &[&str]) -> String {
    let o = run(db, args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "prolly dolt {args:?}: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "one error line expected, got {err:?}");
    assert!(lines[0].starts_with("error: "), "{err:?}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(o.stdout.is_empty(), "no output expected for {args:?}");
    lines[0].to_string()
}

/// Compares output with an expected file, naming the first differing line.
fn same(got: &[u8], want_file: &Path, what: &str) {
    let want =
        std::fs::read(want_file).unwrap_or_else(|e| panic!("reading {}: {e}", want_file.display()));
    if got == want.as_slice() {
        return;
    }
    let g: Vec<&[u8]> = got.split(|&b| b == b'\n').collect();
    let w: Vec<&[u8]> = want.split(|&b| b == b'\n').collect();
    let line = g.iter().zip(&w).position(|(a, b)| a != b).unwrap_or(0);
    panic!(
        "{what} differs from {} at line {}:\n  got:  {:?}\n  want: {:?}\n({} vs {} bytes)",
        want_file.display(),
        line + 1,
        String::from_utf8_lossy(g.get(line).copied().unwrap_or(b"<end>")),
        String::from_utf8_lossy(w.get(line).copied().unwrap_or(b"<end>")),
        got.len(),
        want.len()
    );
}

/// Every file and directory under `dir` (relative path → contents, `None` for directories),
/// with modification times: the whole state a writer could change.
type Snapshot = BTreeMap<PathBuf, (Option<Vec<u8>>, Option<std::time::SystemTime>)>;

fn snapshot(dir: &Path) -> Snapshot {
    fn walk(root: &Path, dir: &Path, out: &mut Snapshot) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("read dir")
            .map(|e| e.expect("dir entry").path())
            .collect();
        entries.sort();
        for p in entries {
            let rel = p.strip_prefix(root).expect("inside root").to_path_buf();
            let meta = std::fs::symlink_metadata(&p).expect("metadata");
            let mtime = meta.modified().ok();
            if meta.is_dir() {
                out.insert(rel, (None, mtime));
                walk(root, &p, out);
            } else {
                out.insert(rel, (Some(std::fs::read(&p).expect("read file")), mtime));
            }
        }
    }
    let mut out = Snapshot::new();
    walk(dir, dir, &mut out);
    out
}

/// Copies a directory tree, making every copy writable (so a stray write would succeed and be
/// caught by the snapshot comparison rather than fail on a read-only file).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir") {
        let p = e.expect("dir entry").path();
        let dest = to.join(p.file_name().expect("name"));
        if p.is_dir() {
            copy_tree(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).expect("copy");
            let mut perm = std::fs::metadata(&dest).expect("metadata").permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perm.set_readonly(false);
            std::fs::set_permissions(&dest, perm).expect("chmod");
        }
    }
}

/// Rows in an expected CSV file (records after the header).
fn csv_rows(file: &Path) -> u64 {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_path(file)
        .unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
    let mut n = 0;
    for rec in r.byte_records() {
        rec.unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        n += 1;
    }
    n
}

/// Table names listed in an expected `table_hashes.csv`.
fn table_names(file: &Path) -> Vec<String> {
    let mut r = csv::Reader::from_path(file).expect("table_hashes.csv");
    let mut names: Vec<String> = r
        .records()
        .map(|x| x.expect("record").get(0).expect("name").to_string())
        .collect();
    names.sort();
    names
}

fn sorted_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("dir entry").path())
        .collect();
    v.sort();
    v
}

fn name_of(p: &Path) -> String {
    p.file_name()
        .expect("file name")
        .to_string_lossy()
        .into_owned()
}

/// For a branch dir whose `head.csv` shows uncommitted changes (a `working_hash` column), a
/// clean branch dir with the same `log_oneline.txt`; `None` for a clean branch.
fn clean_twin(expected: &Path, dir: &Path) -> Option<PathBuf> {
    let dirty = |d: &Path| {
        std::fs::read_to_string(d.join("head.csv")).is_ok_and(|h| h.contains("working_hash"))
    };
    if !dirty(dir) {
        return None;
    }
    let log = std::fs::read(dir.join("log_oneline.txt")).ok();
    sorted_files(expected)
        .into_iter()
        .find(|d| {
            d.is_dir()
                && !dirty(d)
                && log.is_some()
                && std::fs::read(d.join("log_oneline.txt")).ok() == log
        })
        .or_else(|| Some(dir.join("no-clean-twin")))
}

/// Checks every subcommand on one database (`db`) against `expected`; returns how many
/// outputs were compared.
fn check_database(db: &Path, expected: &Path, scratch: &Path) -> usize {
    let mut compared = 0;
    for f in sorted_files(expected) {
        match name_of(&f).as_str() {
            "branches.txt" => {
                same(&ok(db, &["branches"]), &f, "branches");
                compared += 1;
            }
            "tags.txt" => {
                same(&ok(db, &["tags"]), &f, "tags");
                compared += 1;
            }
            _ => {}
        }
    }
    let branch_dirs: Vec<PathBuf> = sorted_files(expected)
        .into_iter()
        .filter(|p| p.is_dir())
        .collect();
    for dir in &branch_dirs {
        let branch = name_of(dir);
        let b = branch.as_str();
        // A branch without its own log.txt (wip) has the same commits as one that has it.
        for f in sorted_files(dir) {
            let name = name_of(&f);
            let what = format!("{} {b}/{name}", db.display());
            if name == "log.txt" {
                same(&ok(db, &["log", b]), &f, &what);
            } else if name == "log_oneline.txt" {
                same(&ok(db, &["log", "--oneline", b]), &f, &what);
            } else if let Some(table) = name.strip_suffix(".schema.txt") {
                same(
                    &ok(db, &["schema", table, "--branch", b, "--working"]),
                    &f,
                    &what,
                );
                // The head commit's schema is the same here; only the label differs.
                let head = ok(db, &["schema", table, "--branch", b]);
                let want = std::fs::read(&f).expect("read");
                let relabel = String::from_utf8_lossy(&want).replacen(
                    &format!("{table} @ working"),
                    &format!("{table} @ {b}"),
                    1,
                );
                assert_eq!(String::from_utf8_lossy(&head), relabel, "{what} at head");
            } else if let Some(table) = name.strip_suffix(".csv") {
                if table.contains('.') || !dir.join("table_hashes.csv").is_file() {
                    continue; // a view of a table (sku_hex, geometry...), not `select *`
                }
                if !table_names(&dir.join("table_hashes.csv")).contains(&table.to_string()) {
                    continue; // head.csv, table_hashes.csv, dolt_status.csv
                }
                same(
                    &ok(db, &["export", table, "--branch", b, "--working"]),
                    &f,
                    &what,
                );
                // The same through -o FILE (outside the database).
                let out = scratch.join(format!("{b}-{table}.csv"));
                let o = out.to_str().expect("utf-8 path");
                let printed = ok(db, &["export", table, "-b", b, "-w", "-o", o]);
                assert!(printed.is_empty(), "{what}: -o still printed to stdout");
                same(
                    &std::fs::read(&out).expect("read -o"),
                    &f,
                    &format!("{what} -o"),
                );
                // The head commit: equal to the working set on a clean branch; on a branch
                // with uncommitted changes, equal to a clean branch with the same log.
                // A table made after the last commit is not in the head commit.
                let head_args = ["export", table, "--branch", b];
                match clean_twin(expected, dir) {
                    None => same(&ok(db, &head_args), &f, &format!("{what} (head commit)")),
                    Some(twin) if twin.join(&name).is_file() => same(
                        &ok(db, &head_args),
                        &twin.join(&name),
                        &format!("{what} (head commit)"),
                    ),
                    Some(_) => {
                        let e = fails(db, &head_args);
                        assert!(e.contains("not found"), "{what}: {e}");
                    }
                }
            } else {
                continue;
            }
            compared += 1;
        }
        // tables: every table of the branch, with the row count of its expected CSV.
        let hashes = dir.join("table_hashes.csv");
        if hashes.is_file() {
            let mut want = String::new();
            let names = table_names(&hashes);
            let width = names.iter().map(String::len).max().unwrap_or(0);
            for t in &names {
                let rows = csv_rows(&dir.join(format!("{t}.csv")));
                want.push_str(&format!("{t:<width$}  {rows}\n"));
            }
            let got = ok(db, &["tables", "--branch", b, "--working"]);
            assert_eq!(
                String::from_utf8_lossy(&got),
                want,
                "{} {b}: tables",
                db.display()
            );
            compared += 1;
        }
    }
    compared
}

#[test]
fn dolt_subcommands_match_dolt_and_never_write() {
    let vectors = vectors();
    let root = vectors.join("dolt-db");
    let mut dbs: Vec<String> = sorted_files(&root)
        .into_iter()
        .filter(|p| {
            p.join(".dolt").is_dir() && root.join(format!("{}.expected", name_of(p))).is_dir()
        })
        .map(|p| name_of(&p))
        .collect();
    dbs.sort();
    for r in REQUIRED {
        assert!(dbs.iter().any(|d| d == r), "{r} has no .expected folder");
    }
    let scratch = tempfile::tempdir().expect("tempdir");
    for name in &dbs {
        let copy = scratch.path().join("dbs").join(name);
        copy_tree(&root.join(name), &copy);
        let before = snapshot(&copy);
        let out = scratch.path().join("out").join(name);
        std::fs::create_dir_all(&out).expect("mkdir");
        let n = check_database(&copy, &root.join(format!("{name}.expected")), &out);
        assert!(n >= 10, "{name}: only {n} outputs compared");
        // Defaults: the current branch (main), and the errors.
        assert_eq!(
            ok(&copy, &["log"]),
            ok(&copy, &["log", "main"]),
            "{name}: log defaults to the current branch"
        );
        errors(&copy);
        let after = snapshot(&copy);
        assert_eq!(
            before.keys().collect::<Vec<_>>(),
            after.keys().collect::<Vec<_>>(),
            "{name}: files were added or removed"
        );
        for (path, state) in &before {
            assert!(
                after.get(path) == Some(state),
                "{name}: {} changed",
                path.display()
            );
        }
        println!("{name}: {n} outputs identical to dolt's; no file changed");
    }
}

/// Bad names and paths: one line, exit status 1.
fn errors(db: &Path) {
    let e = fails(db, &["export", "no_such_table"]);
    assert!(e.contains("no_such_table"), "{e}");
    let e = fails(db, &["schema", "no_such_table", "--branch", "main"]);
    assert!(e.contains("no_such_table"), "{e}");
    let e = fails(db, &["log", "no_such_branch"]);
    assert!(e.contains("no_such_branch"), "{e}");
    let e = fails(db, &["tables", "--branch", "no_such_branch", "--working"]);
    assert!(e.contains("no_such_branch"), "{e}");
    let e = fails(db, &["tables", "--branch", "no_such_branch"]);
    assert!(e.contains("no_such_branch"), "{e}");
    let missing = db.join("not-a-database");
    let o = run(&missing, &["branches"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.lines().count() == 1 && err.contains("no Dolt database"),
        "{err}"
    );
}

#[test]
fn dolt_reads_the_read_only_originals() {
    let vectors = vectors();
    let db = vectors.join("dolt-db").join("vecdb_journal");
    let expected = vectors.join("dolt-db").join("vecdb_journal.expected");
    same(
        &ok(&db, &["branches"]),
        &expected.join("branches.txt"),
        "branches",
    );
    same(
        &ok(&db, &["export", "orders", "-b", "wip", "-w"]),
        &expected.join("wip").join("orders.csv"),
        "wip orders",
    );
    // A tag resolves like a branch (its commit); --working needs a real branch.
    let tagged = ok(&db, &["log", "--oneline", "v1"]);
    assert!(
        String::from_utf8_lossy(&tagged).starts_with("2ioepuhbvk38drnjltfsbcd79t9dqofb "),
        "{}",
        String::from_utf8_lossy(&tagged)
    );
    let e = fails(&db, &["tables", "--branch", "v1", "--working"]);
    assert!(e.contains("not a branch"), "{e}");
}

#[test]
fn snapshot_sees_writes() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join(".dolt/noms")).expect("mkdir");
    std::fs::write(dir.path().join(".dolt/noms/manifest"), b"a").expect("write");
    let before = snapshot(dir.path());
    std::fs::write(dir.path().join(".dolt/noms/manifest"), b"b").expect("write");
    assert_ne!(before, snapshot(dir.path()), "a changed byte must show");
    let before = snapshot(dir.path());
    std::fs::write(dir.path().join(".dolt/noms/LOCK"), b"").expect("write");
    assert_ne!(before, snapshot(dir.path()), "a new file must show");
}

/// Dolt's CSV output as records, each with its newline.
fn csv_records(text: &[u8]) -> Vec<Vec<u8>> {
    prollystore_dolt::csv_field::csv_records(text)
        .into_iter()
        .map(<[u8]>::to_vec)
        .collect()
}

/// The text of a record's leading unquoted fields (enough for integer and plain-text keys).
fn leading_fields(record: &[u8], n: usize) -> Vec<String> {
    String::from_utf8_lossy(record)
        .trim_end()
        .splitn(n + 1, ',')
        .take(n)
        .map(str::to_string)
        .collect()
}

/// The tables the keyed-read tests compare with Dolt's CSV (database, table, state arguments,
/// expected file): orders (order_no, line) in the wip branch's working set, pairs (a, b)
/// committed on main.
const DOLT_TABLES: [(&str, &str, &[&str], &str); 2] = [
    (
        "vecdb_journal",
        "orders",
        &["-b", "wip", "-w"],
        "wip/orders.csv",
    ),
    ("vecdb", "pairs", &["-b", "main"], "main/pairs.csv"),
];

/// The CSV records (header first) Dolt printed for database `name` at `csv`.
fn expected_records(dbs: &Path, name: &str, csv: &str) -> Vec<Vec<u8>> {
    let file = dbs.join(format!("{name}.expected")).join(csv);
    csv_records(&std::fs::read(&file).expect("expected csv"))
}

#[test]
fn get_and_scan_match_dolt() {
    let vectors = vectors();
    let dbs = vectors.join("dolt-db");
    for (name, table, state, csv) in DOLT_TABLES {
        let db = dbs.join(name);
        let want = expected_records(&dbs, name, csv);
        let (header, rows) = want.split_first().expect("header");
        let with_state = |args: &[&str]| -> Vec<u8> {
            let mut all: Vec<&str> = args.to_vec();
            all.extend(state);
            ok(&db, &all)
        };
        for record in rows.iter().step_by(97) {
            let key = leading_fields(record, 2);
            let mut args = vec!["get", table];
            args.extend(key.iter().map(String::as_str));
            let got = with_state(&args);
            assert_eq!(
                got,
                [header.clone(), record.clone()].concat(),
                "get {key:?}"
            );
        }
        let n = rows.len();
        let (i, j) = (n / 5, n / 2);
        let lo = leading_fields(&rows[i], 2);
        let hi = leading_fields(&rows[j], 2);
        let slice = |r: &[Vec<u8>]| [vec![header.clone()], r.to_vec()].concat().concat();
        let args = [
            "scan", table, "--from", &lo[0], "--from", &lo[1], "--to", &hi[0], "--to", &hi[1],
        ];
        assert_eq!(with_state(&args), slice(&rows[i..=j]), "{table} scan");
        let mut exclusive = args.to_vec();
        exclusive.extend(["--exclusive-from", "--exclusive-to"]);
        assert_eq!(
            with_state(&exclusive),
            slice(&rows[i + 1..j]),
            "{table} exclusive"
        );
        let mut rev = args.to_vec();
        rev.extend(["--reverse", "--limit", "4"]);
        let mut last: Vec<Vec<u8>> = rows[j - 3..=j].to_vec();
        last.reverse();
        assert_eq!(with_state(&rev), slice(&last), "{table} reverse");
        // A prefix of the composite key: every row with that first column.
        let prefix: Vec<Vec<u8>> = rows
            .iter()
            .filter(|r| leading_fields(r, 1) == lo[..1])
            .cloned()
            .collect();
        let args = ["scan", table, "--from", &lo[0], "--to", &lo[0]];
        assert_eq!(with_state(&args), slice(&prefix), "{table} prefix");
    }
    // No such row: the header (as Dolt prints an empty result), then a failure.
    let db = dbs.join("vecdb");
    let o = run(&db, &["get", "pairs", "-999999", "nope", "-b", "main"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(o.stdout, b"a,b,v,f,t,y,s,bits\n");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("error: no row of pairs") && err.lines().count() == 1,
        "{err}"
    );
    let e = fails(&db, &["get", "pairs", "1", "-b", "main"]);
    assert!(e.contains("2 column(s) (a, b); 1 value(s) given"), "{e}");
    let e = fails(&db, &["scan", "pairs", "--from", "x", "-b", "main"]);
    assert!(e.contains("\"pairs\", column \"a\""), "{e}");
    let e = fails(&db, &["scan", "pairs", "--index", "nope", "-b", "main"]);
    assert!(e.contains("index \"nope\""), "{e}");
}

#[test]
fn scan_through_an_index_returns_whole_rows() {
    let vectors = vectors();
    let db = vectors.join("dolt-db").join("vecdb");
    let want = csv_records(
        &std::fs::read(vectors.join("dolt-db/vecdb.expected/main/pairs.csv")).expect("csv"),
    );
    // uniq_v is on column v (third): its rows in v order are Dolt's rows sorted by v.
    let mut rows: Vec<(i64, Vec<u8>)> = want[1..]
        .iter()
        .map(|r| (leading_fields(r, 3)[2].parse().expect("v"), r.clone()))
        .collect();
    rows.sort();
    let got = ok(&db, &["scan", "pairs", "--index", "uniq_v", "-b", "main"]);
    let sorted: Vec<u8> = rows.iter().flat_map(|(_, r)| r.clone()).collect();
    assert_eq!(got, [want[0].clone(), sorted].concat());
    let v = rows[10].0.to_string();
    let got = ok(
        &db,
        &[
            "scan", "pairs", "--index", "uniq_v", "--from", &v, "--to", &v, "-b", "main",
        ],
    );
    assert_eq!(got, [want[0].clone(), rows[10].1.clone()].concat());
}

/// `scan` bound values are CSV fields as `scan` prints them: empty is NULL (the first key),
/// `""` the empty string. Checked against what Dolt printed (`crates/dolt/tests/data/null_keys`).
#[test]
fn scan_bounds_spell_null_as_an_empty_value() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../dolt/tests/data/null_keys");
    let db = data.join("db");
    let want = |name: &str| std::fs::read(data.join(format!("expected/{name}.csv"))).unwrap();
    let scan = |args: &[&str]| ok(&db, &[&["scan", "n", "-b", "main"], args].concat());
    assert_eq!(
        scan(&["--index", "ix_c", "--from", "", "--to", ""]),
        want("c_null")
    );
    assert_eq!(
        scan(&["--index", "ix_c", "--from", "", "--to", "", "--reverse"]),
        want("c_null_rev")
    );
    assert_eq!(
        scan(&["--index", "ix_c", "--to", "1"]),
        want("c_null_or_le_1")
    );
    assert_eq!(
        scan(&[
            "--index",
            "ix_c",
            "--from",
            "",
            "--exclusive-from",
            "--to",
            "1",
            "--exclusive-to"
        ]),
        want("c_lt_1")
    );
    assert_eq!(
        scan(&["--index", "ix_cs", "--from", "", "--from", "b", "--to", ""]),
        want("cs_null_ge_b")
    );
    assert_eq!(
        scan(&["--index", "ix_cs", "--from", "2", "--from", "", "--to", "2", "--to", ""]),
        want("cs_2_null")
    );
    assert_eq!(
        scan(&["--index", "ix_sd", "--from", "\"\"", "--to", "\"\""]),
        want("s_empty")
    );
    let e = fails(
        &db,
        &[
            "scan", "n", "--index", "ix_sd", "--from", "\"a", "-b", "main",
        ],
    );
    assert!(e.contains("quoted CSV field"), "{e}");
}

/// `prolly dolt read-part PART` with no DBDIR (the part names its database), PART a file or `-`.
fn read_part(part: &str, dir: Option<&Path>) -> Output {
    use std::io::Write;
    let mut cmd = Command::new(BIN);
    cmd.arg("dolt");
    if let Some(d) = dir {
        cmd.arg(d);
    }
    let mut child = cmd
        .args(["read-part", "-"])
        .env_remove("PROLLY_STORE")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run prolly");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(part.as_bytes())
        .expect("write part");
    child.wait_with_output().expect("wait")
}

/// `split` cuts a table into parts whose rows, each read on its own by `read-part`, are Dolt's
/// CSV of the table row for row (two databases, a committed state and a working set); a part
/// of chosen columns reads those; a part still reads the rows it was cut from after the branch
/// moves; a description that is not a part, or of another database, is refused by name.
#[test]
fn split_parts_read_back_as_dolt_prints_the_table() {
    let vectors = vectors();
    let dbs = vectors.join("dolt-db");
    for (name, table, state, csv) in DOLT_TABLES {
        let db = dbs.join(name);
        let want = expected_records(&dbs, name, csv);
        let (header, rows) = want.split_first().expect("header");
        let mut args = vec!["split", table, "4"];
        args.extend(state);
        let parts = String::from_utf8(ok(&db, &args)).expect("utf-8");
        let parts: Vec<&str> = parts.lines().collect();
        assert_eq!(parts.len(), 4.min(rows.len()), "{name}");
        let mut got = Vec::new();
        for part in &parts {
            let o = read_part(part, None);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let records = csv_records(&o.stdout);
            assert_eq!(&records[0], header, "{name}: each part's header");
            let n = records.len() as i64 - 1;
            assert!(
                (n - rows.len() as i64 / 4).abs() <= 1,
                "{name}: part of {n} rows"
            );
            got.extend(records.into_iter().skip(1));
        }
        assert!(got == rows, "{name}: the parts' rows are not Dolt's table");
    }

    // Two integer columns of `pairs`, in the order asked.
    let db = dbs.join("vecdb");
    let want = expected_records(&dbs, "vecdb", "main/pairs.csv");
    let parts = ok(
        &db,
        &["split", "pairs", "2", "--columns", "v,a", "-b", "main"],
    );
    let mut got = Vec::new();
    for part in String::from_utf8(parts).unwrap().lines() {
        got.extend(csv_records(&read_part(part, None).stdout));
    }
    let picked: Vec<Vec<u8>> = want
        .iter()
        .map(|r| {
            let f = leading_fields(r, 3);
            format!("{},{}\n", f[2], f[0]).into_bytes()
        })
        .collect();
    assert_eq!(got[0], picked[0], "header");
    let rows: Vec<&Vec<u8>> = got.iter().filter(|r| *r != &picked[0]).collect();
    assert!(rows.iter().copied().eq(picked[1..].iter()), "v,a rows");

    // The branch moves after the cut: the part reads the rows it was cut from.
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("vecdb");
    copy_tree(&db, &copy);
    let parts = String::from_utf8(ok(&copy, &["split", "pairs", "3", "-b", "main"])).unwrap();
    let last = parts.lines().last().unwrap().to_string();
    let before = read_part(&last, None).stdout;
    let one = tmp.path().join("one.csv");
    std::fs::write(&one, [want[0].clone(), want[1].clone()].concat()).unwrap();
    let o = run(
        &copy,
        &["import", "pairs", one.to_str().unwrap(), "--replace"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(
        &copy,
        &["commit", "-m", "one row", "--author", "T <t@example.com>"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        csv_records(&ok(&copy, &["scan", "pairs", "-b", "main"])).len(),
        2
    );
    assert_eq!(
        read_part(&last, None).stdout,
        before,
        "a part after the branch moved"
    );
    assert!(csv_records(&before).len() > 2);

    // Not a part; a part of another database (read where DBDIR says).
    let o = read_part("{\"format\": 1}", None);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("part description"));
    let o = read_part(&last, Some(&dbs.join("vecdb_journal")));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("does not hold table chunk"), "{err}");
}

/// `split-diff` cuts a diff into parts whose rows, each read on its own by `read-part`, are
/// `diff --csv`'s rows in order (the Dolt-made database of the Dolt crate's diff-part tests: a
/// collated VARCHAR key and a non-UTF-8 VARBINARY key, edits spread and clustered); a part
/// of another database is refused.
#[test]
fn split_diff_parts_read_back_as_the_whole_diff() {
    let db = Path::new(env!("CARGO_MANIFEST_DIR")).join("../dolt/tests/data/diff_parts/db");
    for (from, to, table) in [
        ("main~1", "spread", "cs"),
        ("cluster", "spread", "vb"),
        ("main", "main", "cs"),
    ] {
        let whole = ok(&db, &["diff", from, to, table, "--csv"]);
        let parts = String::from_utf8(ok(&db, &["split-diff", from, to, table, "5"])).unwrap();
        let parts: Vec<&str> = parts.lines().collect();
        assert_eq!(
            parts.len(),
            if from == to { 1 } else { 5 },
            "{from} {to} {table}"
        );
        let mut got = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            let o = read_part(part, None);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let header = o.stdout.iter().position(|&b| b == b'\n').unwrap() + 1;
            got.extend_from_slice(if i == 0 {
                &o.stdout
            } else {
                &o.stdout[header..]
            });
        }
        assert!(
            got == whole,
            "{from} {to} {table}: the parts are not the whole diff"
        );
    }
    let parts = String::from_utf8(ok(&db, &["split-diff", "main~1", "main", "vb", "2"])).unwrap();
    let vectors = vectors();
    let o = read_part(
        parts.lines().next().unwrap(),
        Some(&vectors.join("dolt-db/vecdb")),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("does not hold table chunk"), "{err}");
}
