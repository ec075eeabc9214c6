//! `prolly remote add`, `push`, `clone`, `pull`, `remote gc` and reads of a remote in place (`-s URL`),
//! through a `file://` remote (the remote crate's tests cover MinIO).

use std::path::Path;
use std::process::Command;

fn prolly(args: &[&str], dir: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_prolly"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("running prolly");
    assert!(
        out.status.success(),
        "prolly {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

#[test]
fn push_clone_pull_and_read_in_place() {
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    let mut csv = String::from("id,name\n");
    for i in 0..3000 {
        csv.push_str(&format!("{i},name {i}\n"));
    }
    std::fs::write(d.join("a.csv"), csv).expect("csv");
    std::fs::write(d.join("e.csv"), "id,name\n7,changed\n").expect("csv");
    let url = format!("file://{}/remote", d.display());
    prolly(&["-s", "a", "create"], d);
    prolly(
        &[
            "-s",
            "a",
            "import",
            "--map",
            "p",
            "--key",
            "id:int64",
            "--value",
            "name:string",
            "a.csv",
        ],
        d,
    );
    prolly(&["-s", "a", "remote", "add", "origin", &url], d);
    assert!(prolly(&["-s", "a", "remote", "list"], d).contains(&url));
    assert!(prolly(&["-s", "a", "push", "origin", "p"], d).starts_with("pushed 2 roots"));
    prolly(&["clone", &url, "b"], d);
    assert_eq!(
        prolly(&["-s", "b", "get", "--map", "p", "2999"], d),
        "2999,name 2999\n"
    );
    assert_eq!(
        prolly(&["-s", &url, "get", "--map", "p", "12"], d),
        "12,name 12\n"
    );
    let scan = prolly(&["-s", &url, "scan", "--map", "p"], d);
    assert_eq!(scan.lines().count(), 3001);
    assert_eq!(scan, prolly(&["-s", "a", "scan", "--map", "p"], d));
    // A remote scan (the bounded one) with a range and a limit, against the local one.
    for args in [
        &[
            "scan", "--map", "p", "--from", "100", "--to", "2000", "--limit", "700",
        ][..],
        &["scan", "--map", "p", "--from", "2990", "--no-header"][..],
        &["scan", "--map", "p", "--to", "5", "--reverse"][..],
    ] {
        let remote: Vec<&str> = ["-s", &url]
            .into_iter()
            .chain(args.iter().copied())
            .collect();
        let local: Vec<&str> = ["-s", "a"]
            .into_iter()
            .chain(args.iter().copied())
            .collect();
        assert_eq!(prolly(&remote, d), prolly(&local, d), "{args:?}");
    }
    prolly(&["-s", "a", "import", "--map", "p", "e.csv"], d);
    prolly(&["-s", "a", "push", "origin"], d);
    assert!(prolly(&["-s", "b", "pull", "origin"], d).contains("1 roots updated"));
    assert_eq!(
        prolly(&["-s", "b", "get", "--map", "p", "7"], d),
        "7,changed\n"
    );
    // Nothing is orphaned: every file the pushes uploaded is named.
    let gc = prolly(&["-s", "a", "remote", "gc", "origin", "--grace", "0"], d);
    assert!(gc.contains("0 orphans deleted"), "{gc}");
}
