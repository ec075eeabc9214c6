//! Address maps and commit closures of many nodes, re-made from their entries and parents and
//! compared with the ones Dolt wrote: a database `tests/data/make_vc_chunked.sh` makes with the
//! `dolt` named by `PROLLY_DOLT` (442 commits with 8 merges, 300 tables, 200 branches, 12 tags;
//! about 30 s), or the one `PROLLY_VC_CHUNKED_DB` names. Skipped without either.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use prollystore_format::message::objects::{CommitFields, RootValueFields, StoreRootFields};
use prollystore_format::message::{AddressMapNode, CommitClosureNode};
use prollystore_format::{Address, HashProfile};

use super::address_map::{address_map_entries, edit_address_map, empty_address_map};
use super::chunk_io::ChunkIo;
use super::closure::put_parent_closure;
use crate::db::Database;
use crate::error::Result;

/// Reads from a database, keeps puts in memory.
pub(super) struct MemIo<'a> {
    pub db: &'a Database,
    pub put: HashMap<Address, Arc<[u8]>>,
}

impl ChunkIo for MemIo<'_> {
    fn chunk(&self, address: &Address) -> Result<Arc<[u8]>> {
        match self.put.get(address) {
            Some(c) => Ok(c.clone()),
            None => self.db.source().chunk(address),
        }
    }
    fn put(&mut self, chunk: &[u8]) -> Result<Address> {
        let a = HashProfile::Dolt.address_of(chunk);
        self.put.insert(a, Arc::from(chunk));
        Ok(a)
    }
}

/// The database, made once per test process.
fn data() -> Option<PathBuf> {
    static DB: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    DB.get_or_init(|| {
        if let Some(dir) = std::env::var_os("PROLLY_VC_CHUNKED_DB").filter(|v| !v.is_empty()) {
            return Some(PathBuf::from(dir));
        }
        let dolt = std::env::var_os("PROLLY_DOLT").filter(|v| !v.is_empty())?;
        let tmp = tempfile::tempdir().unwrap().keep();
        let dir = tmp.join("db");
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/make_vc_chunked.sh");
        let out = std::process::Command::new("bash")
            .arg(script)
            .arg(&dir)
            .env("DOLT", dolt)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some(dir)
    })
    .clone()
}

/// Every commit reachable from the database's branches and tags.
fn all_commits(db: &Database) -> Vec<Address> {
    let mut todo: Vec<Address> = db.branches().unwrap().into_iter().map(|(_, a)| a).collect();
    todo.extend(db.tags().unwrap().into_iter().map(|t| t.commit));
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    while let Some(a) = todo.pop() {
        if !seen.insert(a) {
            continue;
        }
        out.push(a);
        let chunk = db.source().chunk(&a).unwrap();
        let c = CommitFields::decode(&chunk).unwrap();
        todo.extend(
            c.parent_addrs
                .chunks_exact(20)
                .map(|p| Address::from_slice(p).unwrap()),
        );
    }
    out
}

#[test]
fn every_parent_closure_is_dolts() {
    let Some(dir) = data() else {
        eprintln!("PROLLY_DOLT not set: chunked maps and closures not checked against Dolt");
        return;
    };
    let db = Database::open(&dir).unwrap();
    let mut io = MemIo {
        db: &db,
        put: HashMap::new(),
    };
    let (mut checked, mut merges, mut multi_node) = (0, 0, 0);
    for commit in all_commits(&db) {
        let chunk = db.source().chunk(&commit).unwrap();
        let c = CommitFields::decode(&chunk).unwrap();
        let parents: Vec<Address> = c
            .parent_addrs
            .chunks_exact(20)
            .map(|p| Address::from_slice(p).unwrap())
            .collect();
        let (closure, height) = put_parent_closure(&mut io, &parents).unwrap();
        assert_eq!(
            closure,
            Address(c.parent_closure.unwrap_or([0; 20])),
            "closure of {commit}"
        );
        assert_eq!(height, c.height, "height of {commit}");
        checked += 1;
        merges += usize::from(parents.len() > 1);
        if !closure.is_zero() {
            let root = io.chunk(&closure).unwrap();
            multi_node += usize::from(!CommitClosureNode::verify(&root).unwrap().is_leaf());
        }
    }
    eprintln!("{checked} closures equal Dolt's ({merges} merges, {multi_node} of several nodes)");
    assert!(
        checked >= 400 && merges >= 8 && multi_node >= 100,
        "{checked} {merges} {multi_node}"
    );
}

/// Re-makes the address map `root` from its entries twice: built from empty in one edit, and
/// by removing every third entry then putting them back; both must give Dolt's bytes.
fn assert_address_map_remade(io: &mut MemIo<'_>, root: &[u8], what: &str) -> bool {
    let entries = address_map_entries(io, root).unwrap();
    let sets: Vec<(&[u8], Option<Address>)> = entries
        .iter()
        .map(|(k, a)| (k.as_slice(), Some(*a)))
        .collect();
    let fresh = edit_address_map(io, &empty_address_map().unwrap(), &sets).unwrap();
    assert!(fresh[..] == root[..], "{what}: a fresh build differs");
    let removals: Vec<(&[u8], Option<Address>)> = entries
        .iter()
        .step_by(3)
        .map(|(k, _)| (k.as_slice(), None))
        .collect();
    let fewer = edit_address_map(io, root, &removals).unwrap();
    assert_eq!(
        address_map_entries(io, &fewer).unwrap().len(),
        entries.len() - removals.len()
    );
    let back: Vec<(&[u8], Option<Address>)> = entries
        .iter()
        .step_by(3)
        .map(|(k, a)| (k.as_slice(), Some(*a)))
        .collect();
    let again = edit_address_map(io, &fewer, &back).unwrap();
    assert!(again[..] == root[..], "{what}: remove and put back differs");
    !AddressMapNode::verify(root).unwrap().is_leaf()
}

#[test]
fn dataset_and_table_maps_are_dolts() {
    let Some(dir) = data() else {
        eprintln!("PROLLY_DOLT not set: chunked maps and closures not checked against Dolt");
        return;
    };
    let db = Database::open(&dir).unwrap();
    let mut io = MemIo {
        db: &db,
        put: HashMap::new(),
    };
    let store_root = db.source().chunk(&db.source().root()).unwrap();
    let sr = StoreRootFields::decode(&store_root).unwrap();
    assert!(assert_address_map_remade(
        &mut io,
        sr.address_map,
        "dataset map"
    ));
    let mut multi = 0;
    let mut roots = HashSet::new();
    for commit in all_commits(&db) {
        roots.insert(db.commit(commit).unwrap().root);
    }
    for root in &roots {
        let chunk = db.source().chunk(root).unwrap();
        let rv = RootValueFields::decode(&chunk).unwrap();
        multi += usize::from(assert_address_map_remade(&mut io, rv.tables, "table map"));
    }
    eprintln!(
        "{} table maps equal Dolt's, {multi} of several nodes",
        roots.len()
    );
    assert!(multi > 50, "{multi}");
}

#[test]
#[ignore]
fn scratch_dump_tables() {
    use prollystore_format::message::objects::TableFields;
    let db = Database::open(&prollystore_test_vectors::require(
        "dolt-write/branches/after",
    ))
    .unwrap();
    for t in [
        "4iue0djhpviuc22tcghk7nbllgfah17l",
        "71i57t0f9jhdof4ddjhd5m92gens4fe6",
        "dtua01daeoreqjpqivvpm65vnuadk09g",
        "so2h30afk87vosdb229ubv4plft2d7te",
    ] {
        let a = Address::from_base32(t).unwrap();
        let c = db.source().chunk(&a).unwrap();
        let f = TableFields::decode(&c).unwrap();
        let h = |b: &[u8]| HashProfile::Dolt.address_of(b);
        eprintln!(
            "{t}: schema {} pk {} sec {} ai {} viol {:?} art {:?} conf {:?}/{:?}/{:?}/{:?}",
            Address(f.schema),
            h(f.primary_index),
            h(f.secondary_indexes),
            f.auto_increment_value,
            f.violations,
            f.artifacts,
            f.conflicts.data,
            f.conflicts.our_schema,
            f.conflicts.their_schema,
            f.conflicts.ancestor_schema
        );
        let io = MemIo {
            db: &db,
            put: HashMap::new(),
        };
        for (k, v) in address_map_entries(&io, f.secondary_indexes).unwrap() {
            eprintln!("   {} {}", String::from_utf8_lossy(&k), v);
        }
    }
}
