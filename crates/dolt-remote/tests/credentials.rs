//! Credentials against the real Dolt: a `dolt sql-server` whose `root` has a password and which
//! has a second user. We clone, fetch, read in place and push as a user with the right
//! password (what `dolt --user` with `DOLT_REMOTE_PASSWORD` sends); a wrong password, or no
//! credentials at all (the server then takes `root` with an empty password), is refused in one
//! line that names the remote and the user, and writes nothing.
//!
//! Needs `PROLLY_DOLT=/path/to/dolt`; without it the tests print why and pass.

use std::path::Path;

use prollystore_dolt::write::{CommitMeta, DoltWriter, RowMode};
use prollystore_dolt_remote::{
    clone, fetch, open_remote, push, CloneOptions, Credentials, OpenOptions, PushOutcome,
    RemoteError,
};

mod common;
use common::{dolt, dolt_bin, home, Server};

fn alice(password: &str) -> Option<Credentials> {
    Some(Credentials {
        user: "alice".into(),
        password: password.into(),
    })
}

fn with(credentials: Option<Credentials>) -> CloneOptions {
    CloneOptions {
        credentials,
        ..Default::default()
    }
}

/// A refusal of `user`'s credentials: one line naming the remote and the user.
fn check_refused(e: &RemoteError, url: &str, user: &str) {
    let text = e.to_string();
    eprintln!("refused: {text}");
    assert!(matches!(e, RemoteError::Credentials { .. }), "{e:?}");
    assert!(!text.contains('\n') && text.contains(url), "{text}");
    assert!(text.contains(user), "names the user: {text}");
}

#[test]
fn a_password_protected_server_takes_right_credentials_and_refuses_others() {
    let Some(bin) = dolt_bin() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let home = home(root);
    let served = root.join("served");
    let src = served.join("src");
    std::fs::create_dir_all(&src).unwrap();
    let d = |dir: &Path, args: &[&str]| dolt(&bin, &home, dir, args);
    d(&src, &["init"]);
    d(
        &src,
        &[
            "sql",
            "-q",
            "create table t (id int primary key, v varchar(20))",
        ],
    );
    d(
        &src,
        &["sql", "-q", "insert into t values (1, 'one'), (2, 'two')"],
    );
    d(&src, &["add", "-A"]);
    d(&src, &["commit", "-m", "rows"]);
    // The users live beside the served databases, where the server keeps its privileges.
    d(
        &served,
        &[
            "sql",
            "-q",
            "create user alice@'%' identified by 'secret'; grant all on *.* to alice@'%' \
             with grant option; alter user root@localhost identified by 'rootpw'",
        ],
    );
    let server = Server::start(&bin, &home, &served);
    let url = server.url("src");

    // Right credentials: clone, fetch, read in place, push.
    let ours = root.join("ours");
    let report = clone(&url, &ours, &with(alice("secret"))).unwrap();
    assert_eq!(report.branch, "main");
    fetch(&ours, "origin", &with(alice("secret"))).unwrap();
    let read = OpenOptions {
        credentials: alice("secret"),
        ..Default::default()
    };
    let db = open_remote(&url, &read).unwrap();
    assert_eq!(db.branches().unwrap().len(), 1);
    let mut w = DoltWriter::open(&ours).unwrap();
    w.apply_text(
        RowMode::Insert,
        "t",
        &["id", "v"],
        &[vec![Some("3"), Some("three")]],
    )
    .unwrap();
    let commit = w
        .commit(&CommitMeta::now("Cred", "cred@example.com", "as alice"))
        .unwrap();
    drop(w);
    let pushed = push(&ours, "origin", "main", &with(alice("secret"))).unwrap();
    assert!(
        matches!(pushed.outcome, PushOutcome::Pushed { to, .. } if to == commit),
        "{:?}",
        pushed.outcome
    );

    // A wrong password, and none at all (root with an empty password): refused, nothing
    // written.
    for (credentials, user) in [(alice("wrong"), "alice"), (None, "root")] {
        let dir = root.join(format!("refused-{user}"));
        let e = clone(&url, &dir, &with(credentials.clone())).unwrap_err();
        check_refused(&e, &url, user);
        assert!(!dir.exists(), "a refused clone leaves no directory");
        let before = common::snapshot(&ours);
        let e = fetch(&ours, "origin", &with(credentials.clone())).unwrap_err();
        check_refused(&e, &url, user);
        let e = push(&ours, "origin", "main", &with(credentials.clone())).unwrap_err();
        check_refused(&e, &url, user);
        assert_eq!(
            common::snapshot(&ours),
            before,
            "a refused call changes nothing"
        );
        let read = OpenOptions {
            credentials,
            ..Default::default()
        };
        check_refused(&open_remote(&url, &read).unwrap_err(), &url, user);
    }

    // Dolt sees what alice pushed.
    let check = root.join("check");
    let mut clone_cmd = common::dolt_cmd(&bin, &home, root, &["clone", "--user", "alice", &url]);
    let out = clone_cmd
        .arg(check.to_str().unwrap())
        .env("DOLT_REMOTE_PASSWORD", "secret")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = d(&check, &["log", "--oneline", "-n", "1"]);
    assert!(log.contains(&commit.to_string()), "{log}");
}
