//! Revision specs and branch states resolve as Dolt resolves them.

use prollystore_dolt::{Database, State};

#[test]
fn ancestry_head_and_states() {
    let dir = prollystore_test_vectors::require("dolt-db/vecdb_journal");
    let db = Database::open(&dir).unwrap();
    let current = db.current_branch().unwrap();
    let head = db.branch_head(&current).unwrap();
    assert_eq!(db.resolve_revision("HEAD").unwrap(), head);
    let log: Vec<_> = db.log(head).collect::<Result<_, _>>().unwrap();
    for (n, c) in log.iter().enumerate().take(4) {
        if c.parents.len() > 1 {
            break;
        }
        assert_eq!(
            db.resolve_revision(&format!("HEAD~{n}")).unwrap(),
            c.address
        );
        assert_eq!(
            db.resolve_revision(&format!("{current}{}", "^".repeat(n)))
                .unwrap(),
            c.address
        );
    }
    let committed = db.root_at("HEAD", State::Committed).unwrap();
    assert_eq!(committed.address, db.commit(head).unwrap().root);
    let working = db.root_at("WORKING", State::Committed).unwrap();
    assert_eq!(working, db.root_at(&current, State::Working).unwrap());
    db.root_at("STAGED", State::Committed).unwrap();
    let err = db
        .resolve_revision(&format!("HEAD~{}", log.len()))
        .unwrap_err();
    assert!(err.to_string().contains("past the first commit"), "{err}");
    let first_tag = db.tags().unwrap().into_iter().next();
    if let Some(tag) = first_tag {
        let err = db.root_at(&tag.name, State::Working).unwrap_err();
        assert!(err.to_string().contains("belong to branches"), "{err}");
    }
}
