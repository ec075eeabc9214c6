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

use super::maps::address_map::{address_map_entries, edit_address_map, empty_address_map};
use super::maps::closure::put_parent_closure;
use super::storage::chunk_io::ChunkIo;
use crate::db::Database;
use crate::error::Result;

/// Reads from a database, keeps puts in memory.
pub(super) struct MemIo<'a> {
    pub db: Option<&'a Database>,
    pub put: HashMap<Address, Arc<[u8]>>,
}

impl ChunkIo for MemIo<'_> {
    fn chunk(&self, address: &Address) -> Result<Arc<[u8]>> {
        match (self.put.get(address), self.db) {
            (Some(c), _) => Ok(c.clone()),
            (None, Some(db)) => db.source().chunk(address),
            (None, None) => Err(crate::error::DoltError::MissingChunk(*address)),
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
        db: Some(&db),
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
        db: Some(&db),
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

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(24))]
    /// Address maps are history independent in Dolt (every item's value is its 20-byte address
    /// whether added or re-read), so any sequence of edit batches must end at the bytes of a
    /// fresh build of the final entries, and at the entries of a `BTreeMap` model.
    #[test]
    fn address_map_edits_equal_a_fresh_build(
        batches in proptest::collection::vec(
            proptest::collection::vec((0u16..3000, proptest::option::of(0u8..255)), 1..400),
            1..6,
        )
    ) {
        let mut io = MemIo { db: None, put: HashMap::new() };
        let mut model = std::collections::BTreeMap::new();
        let mut root = empty_address_map().unwrap();
        for batch in &batches {
            let names: Vec<(Vec<u8>, Option<Address>)> = batch
                .iter()
                .map(|(n, v)| {
                    (
                        format!("refs/heads/branch-number-{n:05}").into_bytes(),
                        v.map(|b| Address([b; 20])),
                    )
                })
                .collect();
            for (n, v) in &names {
                match v {
                    Some(a) => model.insert(n.clone(), *a),
                    None => model.remove(n),
                };
            }
            let changes: Vec<(&[u8], Option<Address>)> =
                names.iter().map(|(n, v)| (n.as_slice(), *v)).collect();
            root = edit_address_map(&mut io, &root, &changes).unwrap().to_vec();
        }
        let entries = address_map_entries(&io, &root).unwrap();
        let want: Vec<(Vec<u8>, Address)> = model.into_iter().collect();
        proptest::prop_assert_eq!(&entries, &want);
        let sets: Vec<(&[u8], Option<Address>)> =
            want.iter().map(|(k, a)| (k.as_slice(), Some(*a))).collect();
        let fresh = edit_address_map(&mut io, &empty_address_map().unwrap(), &sets).unwrap();
        proptest::prop_assert!(fresh[..] == root[..]);
    }
}
