//! Clone against the real Dolt: a database made by `dolt` (two tables, one with a secondary
//! index, 60,000 rows — several tree levels —, three branches, a tag) is served by `dolt
//! sql-server --remotesapi-port` started here; we clone it and `dolt clone` clones it; then in
//! our clone `dolt log`, `dolt branch -a`, `dolt status`, `dolt sql … -r csv` and the tags
//! equal the source's (and `dolt clone`'s), `dolt fsck` passes, `repo_state.json` equals
//! `dolt clone`'s, and our reader reads it. Bad input (unknown scheme, no such database, a
//! port that is not a Dolt remote, a non-empty destination) fails with one line and writes
//! nothing.
//!
//! Needs `PROLLY_DOLT=/path/to/dolt`; without it the tests print why and pass.

use std::net::TcpListener;
use std::path::Path;

use prollystore_dolt_remote::{clone, CloneOptions, RemoteError};

mod common;
use common::{dolt, dolt_bin, free_port, home, Server};

/// The source database: made by Dolt alone.
fn make_source(bin: &Path, home: &Path, dir: &Path, rows: usize) {
    std::fs::create_dir_all(dir).unwrap();
    let d = |args: &[&str]| dolt(bin, home, dir, args);
    d(&["init"]);
    d(&[
        "sql",
        "-q",
        "create table t (id int primary key, name varchar(60), grp int, amount decimal(12,2), key by_grp (grp, name)); \
         create table u (k varchar(20) primary key, v double)",
    ]);
    let csv = dir.parent().unwrap().join("t.csv");
    let mut text = String::from("id,name,grp,amount\n");
    for i in 0..rows {
        text.push_str(&format!(
            "{i},name-{:08x}-{i},{},{}.{:02}\n",
            (i as u64).wrapping_mul(2654435761) % (1 << 32),
            i % 113,
            i * 7,
            i % 100
        ));
    }
    std::fs::write(&csv, text).unwrap();
    d(&["table", "import", "-u", "t", csv.to_str().unwrap()]);
    d(&["sql", "-q", "insert into u values ('a', 1.5), ('b', -2.25)"]);
    d(&["add", "-A"]);
    d(&["commit", "-m", "first: t and u"]);
    d(&["tag", "v1", "-m", "the first release"]);
    d(&["branch", "feature"]);
    d(&["checkout", "feature"]);
    d(&["sql", "-q", "update t set grp = grp + 1000 where id < 500"]);
    d(&["commit", "-am", "feature: regroup"]);
    d(&["checkout", "main"]);
    d(&["branch", "other"]);
    d(&[
        "sql",
        "-q",
        "delete from u where k = 'a'; insert into t values (-1, 'minus', 0, 0)",
    ]);
    d(&["commit", "-am", "main: second"]);
}

/// What must be equal between a clone and its source (or two clones); `feature` names the
/// feature branch there (`feature` in the source, `origin/feature` in a clone).
fn views(bin: &Path, home: &Path, dir: &Path, feature: &str) -> Vec<(String, String)> {
    let label = |args: &[&str]| args.join(" ").replace(feature, "FEATURE");
    let mut out = Vec::new();
    let grouped = format!(
        "select grp, count(*), sum(amount) from t as of '{feature}' group by grp order by grp"
    );
    for args in [
        vec!["log"],
        vec!["log", feature],
        vec!["tag", "-v"],
        vec!["sql", "-r", "csv", "-q", "select * from t order by id"],
        vec!["sql", "-r", "csv", "-q", "select * from u order by k"],
        vec!["sql", "-r", "csv", "-q", &grouped],
        vec![
            "sql",
            "-r",
            "csv",
            "-q",
            "select name from t use index (by_grp) where grp = 7 order by name",
        ],
        vec!["schema", "show"],
    ] {
        out.push((label(&args), dolt(bin, home, dir, &args)));
    }
    out
}

#[test]
fn clone_from_dolt_sql_server_equals_dolt_clone() {
    let Some(bin) = dolt_bin() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let home = home(root);
    let served = root.join("served");
    make_source(&bin, &home, &served.join("src"), 60_000);
    let server = Server::start(&bin, &home, &served);
    let url = server.url("src");

    let ours = root.join("ours");
    let report = clone(&url, &ours, &CloneOptions::default()).unwrap();
    eprintln!("our clone: {report:?}");
    assert_eq!(report.branch, "main");
    assert!(report.levels >= 4, "{report:?}");

    let theirs_parent = root.join("theirs");
    std::fs::create_dir_all(&theirs_parent).unwrap();
    dolt(&bin, &home, &theirs_parent, &["clone", &url, "db"]);
    let theirs = theirs_parent.join("db");

    // Everything a user sees equals the source's and `dolt clone`'s.
    let source_views = views(&bin, &home, &served.join("src"), "feature");
    assert_eq!(views(&bin, &home, &ours, "origin/feature"), source_views);
    assert_eq!(views(&bin, &home, &theirs, "origin/feature"), source_views);
    for args in [
        vec!["branch", "-a"],
        vec!["status"],
        vec!["remote", "-v"],
        vec![
            "sql",
            "-r",
            "csv",
            "-q",
            "select name, hash, remote, branch from dolt_branches",
        ],
        vec![
            "sql",
            "-r",
            "csv",
            "-q",
            "select name, hash from dolt_remote_branches order by name",
        ],
    ] {
        assert_eq!(
            dolt(&bin, &home, &ours, &args),
            dolt(&bin, &home, &theirs, &args),
            "dolt {args:?}"
        );
    }
    dolt(&bin, &home, &ours, &["fsck"]);
    assert_eq!(
        std::fs::read_to_string(ours.join(".dolt/repo_state.json")).unwrap(),
        std::fs::read_to_string(theirs.join(".dolt/repo_state.json")).unwrap()
    );

    // Our reader reads it: the same branches and rows as in Dolt's clone.
    let db = prollystore_dolt::Database::open(&ours).unwrap();
    let ours_branches = db.branches().unwrap();
    let theirs_db = prollystore_dolt::Database::open(&theirs).unwrap();
    assert_eq!(ours_branches, theirs_db.branches().unwrap());
    assert_eq!(
        db.datasets().unwrap().len(),
        theirs_db.datasets().unwrap().len()
    );
    for (name, a) in db.datasets().unwrap() {
        if !name.starts_with("workingSets/") {
            assert!(
                theirs_db.datasets().unwrap().contains(&(name.clone(), a)),
                "{name}"
            );
        }
    }

    // Dolt keeps working in our clone: a commit, then `dolt fsck` again.
    dolt(
        &bin,
        &home,
        &ours,
        &["sql", "-q", "insert into u values ('c', 3)"],
    );
    dolt(&bin, &home, &ours, &["commit", "-am", "after the clone"]);
    dolt(&bin, &home, &ours, &["fsck"]);
    drop(server);
}

#[test]
fn bad_remotes_fail_with_one_line_and_write_nothing() {
    let Some(bin) = dolt_bin() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let home = home(root);
    let served = root.join("served");
    make_source(&bin, &home, &served.join("src"), 10);
    let server = Server::start(&bin, &home, &served);
    let dest = root.join("dest");
    let nothing_written = |e: RemoteError, want: &str| {
        let text = e.to_string();
        assert!(!text.contains('\n'), "{text}");
        assert!(text.contains(want), "{text:?} should say {want:?}");
        assert!(!dest.exists(), "{text}: {} was written", dest.display());
        let leftovers: Vec<_> = std::fs::read_dir(root)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains("prolly-clone"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        eprintln!("refused as expected: {text}");
    };
    let o = CloneOptions::default();
    nothing_written(
        clone("gopher://x/y", &dest, &o).unwrap_err(),
        "unknown remote scheme",
    );
    nothing_written(
        clone(&server.url("nosuchdb"), &dest, &o).unwrap_err(),
        "no such database (database not found: nosuchdb)",
    );
    // Nothing listening.
    nothing_written(
        clone(&format!("http://127.0.0.1:{}/src", free_port()), &dest, &o).unwrap_err(),
        "cannot connect",
    );
    // Something that answers, but not Dolt's gRPC service (an HTTP/1.1 server).
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let http_port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            use std::io::{Read, Write};
            let mut stream = stream;
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n");
        }
    });
    nothing_written(
        clone(&format!("http://127.0.0.1:{http_port}/src"), &dest, &o).unwrap_err(),
        "not a Dolt remote",
    );
    // A non-empty destination is refused before anything is read.
    std::fs::create_dir_all(&dest).unwrap();
    std::fs::write(dest.join("keep"), "x").unwrap();
    let e = clone(&server.url("src"), &dest, &o)
        .unwrap_err()
        .to_string();
    assert!(e.contains("not empty"), "{e}");
    assert_eq!(std::fs::read_dir(&dest).unwrap().count(), 1);
    drop(server);
}

#[test]
fn clone_from_a_file_remote_dolt_pushed_to_equals_dolt_clone() {
    let Some(bin) = dolt_bin() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let home = home(root);
    let src = root.join("src");
    make_source(&bin, &home, &src, 20_000);
    let remote = root.join("file-remote");
    std::fs::create_dir_all(&remote).unwrap();
    let url = format!("file://{}", remote.display());
    dolt(&bin, &home, &src, &["remote", "add", "origin", &url]);
    for b in ["main", "feature", "other"] {
        dolt(&bin, &home, &src, &["push", "origin", b]);
    }
    dolt(&bin, &home, &src, &["push", "origin", "v1"]);
    assert!(
        std::fs::read_dir(&remote).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .ends_with(".darc")),
        "dolt push wrote no archive"
    );

    let ours = root.join("ours");
    let report = clone(&url, &ours, &CloneOptions::default()).unwrap();
    eprintln!("our clone of {url}: {report:?}");
    dolt(&bin, &home, root, &["clone", &url, "theirs"]);
    let theirs = root.join("theirs");
    assert_eq!(
        views(&bin, &home, &ours, "origin/feature"),
        views(&bin, &home, &src, "feature")
    );
    for args in [vec!["branch", "-a"], vec!["status"], vec!["tag"]] {
        assert_eq!(
            dolt(&bin, &home, &ours, &args),
            dolt(&bin, &home, &theirs, &args),
            "dolt {args:?}"
        );
    }
    dolt(&bin, &home, &ours, &["fsck"]);
    assert_eq!(
        std::fs::read_to_string(ours.join(".dolt/repo_state.json")).unwrap(),
        std::fs::read_to_string(theirs.join(".dolt/repo_state.json")).unwrap()
    );

    // Not a Dolt remote / no such directory: one line, nothing written.
    let dest = root.join("dest");
    let empty = root.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    for (u, want) in [
        (format!("file://{}", empty.display()), "holds no manifest"),
        (
            format!("file://{}/nothing", root.display()),
            "no such database",
        ),
    ] {
        let e = clone(&u, &dest, &CloneOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains(want) && !e.contains('\n'), "{e}");
        assert!(!dest.exists());
    }
}
