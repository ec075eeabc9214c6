//! Every commit, tag, working set, store root, root value, table, schema and foreign-key
//! collection chunk in every
//! vector database, decoded into fields and encoded again, gives Dolt's bytes exactly (hence the
//! same address): the database-level encoders reproduce Dolt's Go code byte for byte.

use std::collections::BTreeMap;
use std::path::PathBuf;

use prollystore_dolt::DoltChunkSource;
use prollystore_format::message::file_id;
use prollystore_format::message::objects::{
    CommitFields, ForeignKeyCollectionFields, RootValueFields, StoreRootFields, TableFields,
    TableSchemaFields, TagFields, WorkingSetFields,
};
use prollystore_format::message::MessageError;

/// Every `.dolt/noms` store of the vectors: the four `dolt-db` databases and every
/// `dolt-write` scenario's `before/` and `after/`, each with its stats store.
fn stores() -> Vec<PathBuf> {
    let mut dbs = Vec::new();
    let dolt_db = prollystore_test_vectors::require("dolt-db");
    for db in prollystore_test_vectors::DOLT_DATABASES {
        dbs.push(dolt_db.join(db));
    }
    let write = prollystore_test_vectors::require("dolt-write");
    for scenario in std::fs::read_dir(&write).unwrap() {
        let scenario = scenario.unwrap().path();
        if scenario.join("ops.jsonl").is_file() {
            dbs.push(scenario.join("before"));
            dbs.push(scenario.join("after"));
        }
    }
    let mut out = Vec::new();
    for db in dbs {
        out.push(db.join(".dolt/noms"));
        let stats = db.join(".dolt/stats/.dolt/noms");
        if stats.is_dir() {
            out.push(stats);
        }
    }
    out
}

fn reencode(id: &[u8; 4], chunk: &[u8]) -> Option<Result<Vec<u8>, MessageError>> {
    Some(match id {
        b"DCMT" => CommitFields::decode(chunk).and_then(|f| f.encode()),
        b"DTAG" => TagFields::decode(chunk).and_then(|f| f.encode()),
        b"WRST" => WorkingSetFields::decode(chunk).and_then(|f| f.encode()),
        b"STRT" => StoreRootFields::decode(chunk).and_then(|f| f.encode()),
        b"RTVL" => RootValueFields::decode(chunk).and_then(|f| f.encode()),
        b"DTBL" => TableFields::decode(chunk).and_then(|f| f.encode()),
        b"DSCH" => TableSchemaFields::decode(chunk).and_then(|f| f.encode()),
        b"DFKC" => ForeignKeyCollectionFields::decode(chunk).and_then(|f| f.encode()),
        _ => return None,
    })
}

#[test]
fn every_database_object_re_encodes_to_dolts_bytes() {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for noms in stores() {
        let src = DoltChunkSource::open(&noms).unwrap();
        for (_, address) in src.all_addresses().unwrap() {
            let chunk = src.chunk(&address).unwrap();
            let Ok(id) = file_id(&chunk) else { continue };
            let Some(again) = reencode(&id, &chunk) else {
                continue;
            };
            let kind = String::from_utf8_lossy(&id).into_owned();
            let again =
                again.unwrap_or_else(|e| panic!("{} {kind} {address}: {e}", noms.display()));
            assert!(
                again == chunk[..],
                "{} {kind} {address}: re-encoded bytes differ\n dolt: {:02x?}\n ours: {:02x?}",
                noms.display(),
                &chunk[..],
                &again
            );
            assert_eq!(
                prollystore_format::HashProfile::Dolt.address_of(&again),
                address
            );
            *seen.entry(kind).or_default() += 1;
        }
    }
    eprintln!("re-encoded identically: {seen:?}");
    for kind in [
        "DCMT", "DTAG", "WRST", "STRT", "RTVL", "DTBL", "DSCH", "DFKC",
    ] {
        assert!(
            seen.get(kind).copied().unwrap_or(0) > 0,
            "no {kind} chunk in the vectors"
        );
    }
}
