//! End-to-end tests of the `prolly` binary: every command on a generated CSV of ~10k rows.

use std::path::Path;
use std::process::{Command, Output};

use prollystore::{Map, MemoryStore};
use prollystore_format::tuple::{Decimal, TupleBuilder, TupleDesc, Type};
use prollystore_format::Encoding;
use prollystore_format::HashProfile;

const BIN: &str = env!("CARGO_BIN_EXE_prolly");

const KEY: &str = "id:int64";
const VALUE: &str = "name:string?,price:decimal,qty:int32?,when:datetime?,day:date?,ratio:float64?,tag:uint16,data:bytes_adaptive?,note:string_adaptive?";

fn run(store: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("--store")
        .arg(store)
        .args(args)
        .output()
        .expect("run prolly")
}

/// Runs a command that must succeed; returns its stdout.
fn ok(store: &Path, args: &[&str]) -> String {
    let o = run(store, args);
    assert!(
        o.status.success(),
        "prolly {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("utf-8 output")
}

/// Runs a command that must fail with one `error: ...` line; returns that line.
fn fails(store: &Path, args: &[&str]) -> String {
    let o = run(store, args);
    assert_eq!(
        o.status.code(),
        Some(1),
        "prolly {args:?} should fail with 1"
    );
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "one error line expected, got {err:?}");
    assert!(lines[0].starts_with("error: "), "{err:?}");
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{err}"
    );
    lines[0].to_string()
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// One CSV line of row `id` in canonical text (what export prints), version `v`.
fn row(id: i64, v: u64) -> String {
    let mut r = Rng((id as u64).wrapping_mul(7919).wrapping_add(v * 104729 + 1));
    let name = match r.below(10) {
        0 => String::new(),
        1 => format!("\"quoted, \"\"name\"\" {id}\""),
        _ => format!("name{}", r.below(100000)),
    };
    let price = format!("{}.{:02}", r.below(100000) as i64 - 5000, r.below(100));
    let qty = if r.below(7) == 0 {
        String::new()
    } else {
        (r.below(2000) as i64 - 1000).to_string()
    };
    let when = if r.below(5) == 0 {
        String::new()
    } else if r.below(2) == 0 {
        format!(
            "20{:02}-0{}-1{} 0{}:2{}:3{}",
            r.below(100),
            1 + r.below(9),
            r.below(10),
            r.below(10),
            r.below(10),
            r.below(10)
        )
    } else {
        format!("1999-12-31 23:59:59.{:06}", 1 + r.below(999_999))
    };
    let day = if r.below(4) == 0 {
        String::new()
    } else {
        format!("2024-02-{:02}", 1 + r.below(29))
    };
    let ratio = if r.below(6) == 0 {
        String::new()
    } else {
        format!("{}", (r.next() as f64) / 1e9 - 4000.0)
    };
    let tag = r.below(65536).to_string();
    let data = match r.below(50) {
        0 => (0..3000).map(|i| (i * 31 + id) as u8).collect::<Vec<u8>>(), // out of band
        1..=20 => Vec::new(),
        _ => (0..r.below(40)).map(|i| (i as i64 ^ id) as u8).collect(),
    };
    let data = if data.is_empty() && r.below(2) == 0 {
        String::new()
    } else {
        hex(&data)
    };
    let note = match r.below(200) {
        0 => "x".repeat(5000), // out of band
        1..=100 => String::new(),
        _ => format!("note {id}"),
    };
    format!("{id},{name},{price},{qty},{when},{day},{ratio},{tag},{data},{note}")
}

const HEADER: &str = "id,name,price,qty,when,day,ratio,tag,data,note";

fn csv_of(ids: &[i64], v: u64) -> String {
    let mut s = String::from(HEADER);
    s.push('\n');
    for &id in ids {
        s.push_str(&row(id, v));
        s.push('\n');
    }
    s
}

fn shuffled(mut ids: Vec<i64>, seed: u64) -> Vec<i64> {
    let mut r = Rng(seed);
    for i in (1..ids.len()).rev() {
        let j = r.below(i as u64 + 1) as usize;
        ids.swap(i, j);
    }
    ids
}

fn base_ids() -> Vec<i64> {
    (0..10_000).map(|i| i * 3 - 5000).collect()
}

/// A store with map `m` imported from a shuffled 10k-row CSV; returns (tempdir, store path).
fn setup() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    ok(&store, &["create"]);
    let csv = dir.path().join("base.csv");
    std::fs::write(&csv, csv_of(&shuffled(base_ids(), 42), 0)).unwrap();
    ok(
        &store,
        &[
            "import",
            "--map",
            "m",
            "--key",
            KEY,
            "--value",
            VALUE,
            csv.to_str().unwrap(),
        ],
    );
    (dir, store)
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn import_get_scan_export_round_trip() {
    let (dir, store) = setup();
    // Export is the input sorted by key, byte for byte.
    let out = dir.path().join("out.csv");
    ok(
        &store,
        &["export", "--map", "m", "-o", out.to_str().unwrap()],
    );
    let expected = csv_of(&base_ids(), 0);
    let got = std::fs::read_to_string(&out).unwrap();
    assert_eq!(got.lines().count(), 10_001);
    assert_eq!(got, expected);
    assert_eq!(ok(&store, &["export", "--map", "m"]), expected);

    // get, by one CSV argument or one argument per field.
    assert_eq!(
        ok(&store, &["get", "--map", "m", "-5000"]),
        format!("{}\n", row(-5000, 0))
    );
    assert_eq!(
        ok(&store, &["get", "--map", "m", "1"]),
        format!("{}\n", row(1, 0))
    );
    assert_eq!(
        ok(&store, &["get", "--map", "m", "--header", "24994"]),
        format!("{HEADER}\n{}\n", row(24994, 0))
    );
    assert!(fails(&store, &["get", "--map", "m", "2"]).contains("not found"));

    // scan: from inclusive, to exclusive, limit, reverse.
    let s = ok(
        &store,
        &[
            "scan",
            "--map",
            "m",
            "--from",
            "-2",
            "--to",
            "10",
            "--no-header",
        ],
    );
    assert_eq!(
        s,
        [-2, 1, 4, 7]
            .iter()
            .map(|&i| row(i, 0) + "\n")
            .collect::<String>()
    );
    let s = ok(
        &store,
        &[
            "scan",
            "--map",
            "m",
            "--from",
            "24990",
            "--reverse",
            "--no-header",
        ],
    );
    assert_eq!(
        s,
        format!("{}\n{}\n{}\n", row(24997, 0), row(24994, 0), row(24991, 0))
    );
    let s = ok(
        &store,
        &[
            "scan",
            "--map",
            "m",
            "--to",
            "4",
            "--limit",
            "2",
            "--reverse",
            "--no-header",
        ],
    );
    assert_eq!(s, format!("{}\n{}\n", row(1, 0), row(-2, 0)));
    let s = ok(&store, &["scan", "--map", "m", "--limit", "3"]);
    assert_eq!(s.lines().count(), 4);
    assert_eq!(s.lines().next(), Some(HEADER));

    // stats and verify.
    let st = ok(&store, &["stats", "--map", "m"]);
    assert!(st.contains("rows: 10000"), "{st}");
    assert!(st.contains("levels: "), "{st}");
    assert!(st.contains("level 0: "), "{st}");
    assert!(st.contains("blob chunks: "), "{st}");
    assert!(st.contains("chunk sizes:"), "{st}");
    let v = ok(&store, &["verify"]);
    assert!(v.contains("map \"m\": 10000 rows"), "{v}");
    assert!(v.trim_end().ends_with("ok"), "{v}");
    let roots = ok(&store, &["roots"]);
    assert!(roots.contains("m.schema"), "{roots}");
    assert!(roots.contains("10000 rows"), "{roots}");
}

#[test]
fn edit_diff_merge() {
    let (dir, store) = setup();
    let d = dir.path();
    ok(&store, &["branch", "m", "left"]);
    ok(&store, &["branch", "m", "right"]);
    // Left: modify ids 1, 4 and add 2; right: modify 7, add 5, delete -2.
    let l = write(d, "l.csv", &csv_of(&[4, 1, 2], 1));
    ok(&store, &["import", "--map", "left", l.as_str()]);
    let r = write(d, "r.csv", &csv_of(&[7, 5], 2));
    ok(&store, &["import", "--map", "right", r.as_str()]);
    let del = write(d, "del.csv", "id\n-2\n");
    ok(
        &store,
        &["import", "--map", "right", "--delete", del.as_str()],
    );

    let diff = ok(&store, &["diff", "m", "right"]);
    let expect = format!(
        "- {}\n+ {}\n~ {} (was {})\n",
        row(-2, 0),
        row(5, 2),
        row(7, 2),
        row(7, 0)
    );
    assert_eq!(diff, expect);
    let csvd = ok(&store, &["diff", "m", "left", "--csv"]);
    let lines: Vec<&str> = csvd.lines().collect();
    assert_eq!(lines.len(), 4, "{csvd}");
    assert!(lines[0].starts_with("op,id,name,"), "{csvd}");
    assert!(lines[0].ends_with(",old.data,old.note"), "{csvd}");
    assert!(lines[1].starts_with("modified,1,"));
    assert!(lines[2].starts_with("added,2,"));
    assert!(lines[3].starts_with("modified,4,"));
    // Diff by root addresses.
    let roots = ok(&store, &["roots"]);
    let addr = |name: &str| {
        roots
            .lines()
            .find(|l| l.split('\t').next() == Some(name))
            .and_then(|l| l.split('\t').nth(1))
            .unwrap()
            .to_string()
    };
    let by_root = ok(
        &store,
        &[
            "diff",
            "--from-root",
            &addr("m"),
            "--to-root",
            &addr("right"),
            "--schema",
            "m",
        ],
    );
    assert_eq!(by_root, expect);

    // A clean merge.
    let out = ok(
        &store,
        &[
            "merge", "--base", "m", "--left", "left", "--right", "right", "--into", "merged",
        ],
    );
    assert!(out.contains("10001 rows"), "{out}");
    let mut ids = base_ids();
    ids.retain(|&i| i != -2);
    ids.extend([2, 5]);
    ids.sort();
    let expected: String = std::iter::once(format!("{HEADER}\n"))
        .chain(ids.iter().map(|&i| {
            let v = match i {
                1 | 4 | 2 => 1,
                7 | 5 => 2,
                _ => 0,
            };
            row(i, v) + "\n"
        }))
        .collect();
    assert_eq!(ok(&store, &["export", "--map", "merged"]), expected);

    // Conflicts: both sides change id 10.
    let l = write(d, "l2.csv", &csv_of(&[10], 3));
    ok(&store, &["import", "--map", "left", l.as_str()]);
    let r = write(d, "r2.csv", &csv_of(&[10], 4));
    ok(&store, &["import", "--map", "right", r.as_str()]);
    let before = ok(&store, &["roots"]);
    let o = run(
        &store,
        &["merge", "--base", "m", "--left", "left", "--right", "right"],
    );
    assert_eq!(o.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.starts_with("! 10: base=("), "{stdout}");
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("1 conflict(s)"));
    assert_eq!(
        ok(&store, &["roots"]),
        before,
        "a failed merge writes nothing"
    );
    ok(
        &store,
        &[
            "merge", "--base", "m", "--left", "left", "--right", "right", "--prefer", "right",
        ],
    );
    assert_eq!(
        ok(&store, &["get", "--map", "left", "10"]),
        row(10, 4) + "\n"
    );
    assert_eq!(ok(&store, &["get", "--map", "left", "7"]), row(7, 2) + "\n");
    assert_eq!(ok(&store, &["get", "--map", "left", "4"]), row(4, 1) + "\n");
    ok(&store, &["verify"]);
}

#[test]
fn replace_then_gc_and_compact() {
    let (dir, store) = setup();
    let before = ok(&store, &["stats"]);
    let chunks = |s: &str| -> u64 {
        s.lines()
            .find_map(|l| l.strip_prefix("stored chunks: "))
            .unwrap()
            .parse()
            .unwrap()
    };
    let n0 = chunks(&before);
    let small = write(dir.path(), "small.csv", &csv_of(&[1, 2, 3], 5));
    ok(
        &store,
        &["import", "--map", "m", "--replace", small.as_str()],
    );
    let mid = ok(&store, &["stats"]);
    assert!(mid.contains("unreachable chunks: "), "{mid}");
    let gc = ok(&store, &["gc"]);
    assert!(gc.starts_with("gc: chunks "), "{gc}");
    let after = ok(&store, &["stats"]);
    assert!(chunks(&after) < n0 / 10, "{before}\n{after}");
    assert!(after.contains("unreachable chunks: 0"), "{after}");
    assert_eq!(ok(&store, &["export", "--map", "m"]), csv_of(&[1, 2, 3], 5));
    // More commits make more files; compact merges them.
    for i in 0..3 {
        let f = write(dir.path(), &format!("e{i}.csv"), &csv_of(&[100 + i], 0));
        ok(&store, &["import", "--map", "m", f.as_str()]);
    }
    let c = ok(&store, &["compact"]);
    assert!(c.contains("-> 1,"), "{c}");
    ok(&store, &["verify"]);
    ok(&store, &["drop", "m"]);
    ok(&store, &["gc"]);
    assert!(ok(&store, &["stats"]).contains("stored chunks: 0"));
}

#[test]
fn errors_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let store = d.join("s");
    let missing = fails(&d.join("nope"), &["roots"]);
    assert!(missing.contains("no store at"), "{missing}");
    ok(&store, &["create"]);
    assert!(fails(&store, &["create"]).contains("already exists"));
    let f = write(d, "a.csv", "id,name\n1,a\n2,b\n3,c\n");
    let e = fails(
        &store,
        &["import", "--map", "m", "--key", "id:int65", f.as_str()],
    );
    assert!(e.contains("unknown type \"int65\""), "{e}");
    let e = fails(&store, &["import", "--map", "m", "--key", "id", f.as_str()]);
    assert!(e.contains("NAME:TYPE"), "{e}");
    let e = fails(&store, &["import", "--map", "m", f.as_str()]);
    assert!(e.contains("--key"), "{e}");
    let bad = write(d, "bad.csv", "id,name\n1,a\n2,b\nthree,c\n");
    let e = fails(
        &store,
        &[
            "import",
            "--map",
            "m",
            "--key",
            KEY,
            "--value",
            "name:string",
            bad.as_str(),
        ],
    );
    assert!(
        e.contains("line 4") && e.contains("column \"id\"") && e.contains("three"),
        "{e}"
    );
    let dup = write(d, "dup.csv", "id,name\n5,a\n2,b\n5,c\n");
    let e = fails(
        &store,
        &[
            "import",
            "--map",
            "m",
            "--key",
            KEY,
            "--value",
            "name:string",
            dup.as_str(),
        ],
    );
    assert!(
        e.contains("line 4: duplicate key (same key as line 2)"),
        "{e}"
    );
    let extra = write(d, "extra.csv", "id,name,zzz\n1,a,b\n");
    let e = fails(
        &store,
        &[
            "import",
            "--map",
            "m",
            "--key",
            KEY,
            "--value",
            "name:string",
            extra.as_str(),
        ],
    );
    assert!(e.contains("zzz"), "{e}");
    let nulls = write(d, "nulls.csv", "id,name\n1,\n");
    let e = fails(
        &store,
        &[
            "import",
            "--map",
            "m",
            "--key",
            KEY,
            "--value",
            "name:int8",
            nulls.as_str(),
        ],
    );
    assert!(e.contains("line 2") && e.contains("non-nullable"), "{e}");
    let ragged = write(d, "ragged.csv", "id,name\n1,a\n2\n");
    fails(
        &store,
        &[
            "import",
            "--map",
            "m",
            "--key",
            KEY,
            "--value",
            "name:string",
            ragged.as_str(),
        ],
    );
    let e = fails(
        &store,
        &[
            "import",
            "--map",
            "m",
            "--key",
            KEY,
            "--value",
            "name:string",
            "/nonexistent.csv",
        ],
    );
    assert!(e.contains("/nonexistent.csv"), "{e}");
    // Nothing was committed by the failures.
    assert_eq!(ok(&store, &["roots"]), "");
    ok(
        &store,
        &[
            "import",
            "--map",
            "m",
            "--key",
            KEY,
            "--value",
            "name:string",
            f.as_str(),
        ],
    );
    // Schema mismatch with an existing map.
    let e = fails(
        &store,
        &[
            "import",
            "--map",
            "m",
            "--key",
            KEY,
            "--value",
            "name:string?",
            f.as_str(),
        ],
    );
    assert!(e.contains("--replace"), "{e}");
    assert!(fails(&store, &["get", "--map", "nosuch", "1"]).contains("maps: m"));
    assert!(fails(&store, &["get", "--map", "m", "1", "2"]).contains("key has 1 field"));
    assert!(fails(&store, &["get", "--map", "m", "x"]).contains("int64"));
    assert!(fails(&store, &["import", "--map", "m.schema", f.as_str()]).contains("reserved"));
    // A second writer gets a clear error.
    let held = prollystore::store::FileStore::open_writer(&store).unwrap();
    let e = fails(&store, &["import", "--map", "m", f.as_str()]);
    assert!(e.contains("locked by another writer"), "{e}");
    assert!(fails(&store, &["gc"]).contains("locked"));
    // Readers still work meanwhile.
    assert_eq!(ok(&store, &["get", "--map", "m", "2"]), "2,b\n");
    drop(held);
    ok(&store, &["gc"]);
}

#[test]
fn null_marker_and_empty_strings() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    ok(&store, &["create"]);
    let f = write(dir.path(), "n.csv", "k,a,b\n1,\\N,5\n2,,\\N\n");
    ok(
        &store,
        &[
            "import",
            "--map",
            "m",
            "--key",
            "k:int8",
            "--value",
            "a:string?,b:int16?",
            "--null",
            "\\N",
            f.as_str(),
        ],
    );
    // With a marker, an empty field in a string column is the empty string.
    assert_eq!(
        ok(&store, &["export", "--map", "m", "--null", "\\N"]),
        "k,a,b\n1,\\N,5\n2,,\\N\n"
    );
    // Without one, NULL and the empty string both print as an empty field.
    assert_eq!(ok(&store, &["export", "--map", "m"]), "k,a,b\n1,,5\n2,,\n");
    let e = fails(
        &store,
        &[
            "import",
            "--map",
            "m",
            "--null",
            "\\N",
            write(dir.path(), "e.csv", "k,a,b\n3,x,\n").as_str(),
        ],
    );
    assert!(e.contains("line 2") && e.contains("int16"), "{e}");
}

#[test]
fn dolt_profile_root_equals_library_build() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    ok(&store, &["create", "--profile", "dolt"]);
    let ids: Vec<i64> = (0..3000).map(|i| i * 7 - 100).collect();
    let mut csv = String::from("id,name,price\n");
    for &i in shuffled(ids.clone(), 7).iter() {
        let name = if i % 5 == 0 {
            String::new()
        } else {
            format!("n{i}")
        };
        let cents = i.rem_euclid(1000) * 37 + 5;
        csv.push_str(&format!("{i},{name},{}.{:02}\n", cents / 100, cents % 100));
    }
    let f = write(dir.path(), "d.csv", &csv);
    ok(
        &store,
        &[
            "import",
            "--map",
            "t",
            "--key",
            "id:int64",
            "--value",
            "name:string?,price:decimal",
            f.as_str(),
        ],
    );

    // The same rows built with the library directly.
    let kd = TupleDesc::new(vec![Type::not_null(Encoding::Int64)]);
    let vd = TupleDesc::new(vec![
        Type::nullable(Encoding::String),
        Type::not_null(Encoding::Decimal),
    ]);
    let mem = MemoryStore::new(HashProfile::Dolt);
    let mut kb = TupleBuilder::new(kd.clone());
    let mut vb = TupleBuilder::new(vd.clone());
    let mut rows = Vec::new();
    for &i in &ids {
        kb.put_int64(0, i).unwrap();
        let k = kb.build().unwrap().as_bytes().to_vec();
        if i % 5 != 0 {
            vb.put_string(0, &format!("n{i}")).unwrap();
        }
        let cents = (i.rem_euclid(1000) * 37 + 5) as u64;
        vb.put_decimal(1, &Decimal::finite(-2, false, &cents.to_be_bytes()))
            .unwrap();
        rows.push((k, vb.build().unwrap().as_bytes().to_vec()));
    }
    let schema = prollystore::tuples::TupleSchema::new(kd, vd);
    let map = Map::from_sorted(&mem, schema, rows.iter().map(|(k, v)| (&k[..], &v[..]))).unwrap();
    let roots = ok(&store, &["roots"]);
    let line = roots.lines().find(|l| l.starts_with("t\t")).unwrap();
    assert_eq!(
        line.split('\t').nth(1).unwrap(),
        map.root().to_string(),
        "{roots}"
    );
}

#[test]
fn import_out_of_order_keeps_no_partial_tree() {
    // Integer rows in key order except near the end: the tree is built while the file is
    // read, then the rows are sorted and built again. The store must end up as if the file
    // had been sorted: same root, same stored chunks (none left from the first build).
    let dir = tempfile::tempdir().unwrap();
    let n = 50_000i64;
    let text = |ids: &[i64]| {
        let mut s = String::from("a,b,c\n");
        for i in ids {
            s.push_str(&format!("{i},{},{}\n", i * 7, -i));
        }
        s
    };
    let sorted: Vec<i64> = (0..n).collect();
    let mut late = sorted.clone();
    late.swap(49_990, 49_991);
    let mut stats = Vec::new();
    for (name, ids) in [("sorted", &sorted), ("late", &late)] {
        let store = dir.path().join(name);
        ok(&store, &["create"]);
        let f = write(dir.path(), &format!("{name}.csv"), &text(ids));
        let out = run(
            &store,
            &[
                "import",
                "--map",
                "t",
                "--key",
                "a:int64",
                "--value",
                "b:int64,c:int64",
                f.as_str(),
            ],
        );
        assert!(out.status.success());
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(
            err.contains("input already sorted"),
            name == "sorted",
            "{err}"
        );
        let root = err.rsplit("root ").next().unwrap_or("").trim().to_string();
        let s = ok(&store, &["stats"]);
        let chunks = s
            .lines()
            .find(|l| l.starts_with("stored chunks:"))
            .unwrap_or("")
            .to_string();
        stats.push((root, chunks));
    }
    assert!(
        !stats[0].0.is_empty() && !stats[0].1.is_empty(),
        "{stats:?}"
    );
    assert_eq!(stats[0], stats[1]);
}

/// Schemas a tuple cannot hold are refused before anything is written, and user text in an
/// error line is quoted bounded: a 1 MiB header name gives a short line.
#[test]
fn oversized_input_gives_short_errors_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let store = d.join("s");
    ok(&store, &["create"]);
    let f = write(d, "a.csv", "id,name\n1,a\n");
    let wide: Vec<String> = (0..4097).map(|i| format!("c{i}:int64?")).collect();
    let wide = wide.join(",");
    let e = fails(
        &store,
        &[
            "import",
            "--map",
            "m",
            "--key",
            KEY,
            "--value",
            &wide,
            f.as_str(),
        ],
    );
    assert!(e.contains("at most 4096"), "{e}");
    assert!(!ok(&store, &["roots"]).contains('m'), "nothing was created");

    let huge_name = "h".repeat(1 << 20);
    let big = write(d, "big.csv", &format!("id,{huge_name}\n1,a\n"));
    let e = fails(
        &store,
        &[
            "import",
            "--map",
            "m",
            "--key",
            KEY,
            "--value",
            "name:string",
            big.as_str(),
        ],
    );
    assert!(e.len() < 1000, "error line of {} bytes", e.len());
    assert!(e.contains("bytes)"), "{e}");

    let many = write(d, "many.csv", "id,x1,x2,name,x3\n1,a,b,c,d\n");
    let e = fails(
        &store,
        &[
            "import",
            "--map",
            "m",
            "--key",
            KEY,
            "--value",
            "name:string",
            many.as_str(),
        ],
    );
    for c in ["\"x1\"", "\"x2\"", "\"x3\""] {
        assert!(e.contains(c), "every unknown column at once: {e}");
    }
}

#[test]
fn inferred_schema_and_where_filters() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    ok(&store, &["create"]);
    let csv = write(
        dir.path(),
        "items.csv",
        "id,name,price,day\n3,pear,2.5,2024-01-03\n1,apple,1.25,2024-01-01\n2,,10,2024-01-02\n",
    );
    let o = run(&store, &["import", "--map", "items", "--infer", &csv]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--key 'id:bigint' --value 'name:string?,price:double,day:date'"),
        "{err}"
    );
    assert_eq!(
        ok(&store, &["scan", "--map", "items", "--where", "price<3"]),
        "id,name,price,day\n1,apple,1.25,2024-01-01\n3,pear,2.5,2024-01-03\n"
    );
    assert_eq!(
        ok(&store, &["export", "--map", "items", "--where", "name="]),
        "id,name,price,day\n2,,10,2024-01-02\n"
    );
    let both = [
        "scan",
        "--map",
        "items",
        "--where",
        "day>=2024-01-02",
        "--where",
        "id!=3",
    ];
    assert_eq!(ok(&store, &both), "id,name,price,day\n2,,10,2024-01-02\n");
    let e = fails(&store, &["scan", "--map", "items", "--where", "nope=1"]);
    assert!(
        e.contains("no column \"nope\" (columns: id, name, price, day)"),
        "{e}"
    );
    let e = fails(&store, &["scan", "--map", "items", "--where", "price<abc"]);
    assert!(e.contains("column \"price\""), "{e}");
}
