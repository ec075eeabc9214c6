//! Conformance categories `maps`, `edits` and `diffs`: prolly maps dumped by Dolt must read back
//! row for row and rebuild to the same root and the same chunks; edit batches must give Dolt's
//! edited roots; two-way diffs must equal Dolt's, entry for entry.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use prollystore::blob::{read_blob, BlobBuilder};
use prollystore::format::tuple::{Adaptive, Tuple, TupleDesc, Type};
use prollystore::format::{Address, Encoding, HashProfile};
use prollystore::tuples::TupleSchema;
use prollystore::{Diff, DiffEntry, Map, MemoryStore};
use serde_json::Value;

use crate::category::Category;
use crate::json::{read_jsonl, unhex};
use crate::records::load_chunks;

/// A map's metadata file, parsed.
pub struct MapMeta {
    /// File stem.
    pub name: String,
    /// Key and value descriptors.
    pub schema: TupleSchema,
    /// Root address.
    pub root: Address,
    /// Rows after de-duplication.
    pub row_count: u64,
    /// Root level.
    pub tree_level: u64,
    /// Smallest and largest keys (absent for an empty map).
    pub first_key: Option<Vec<u8>>,
    /// See `first_key`.
    pub last_key: Option<Vec<u8>>,
    /// The dump of every reachable chunk.
    pub chunk_file: PathBuf,
    /// Number of records in the dump.
    pub chunk_count: u64,
}

fn desc_from_json(v: &Value) -> Result<TupleDesc, String> {
    let fields = v.as_array().ok_or("descriptor is not a list")?;
    let mut types = Vec::new();
    for f in fields {
        let code = f["code"].as_u64().ok_or("field without code")?;
        let enc = Encoding::from_code(code as u8).ok_or(format!("unknown encoding {code}"))?;
        let nullable = f["nullable"].as_bool().unwrap_or(false);
        types.push(Type { enc, nullable });
    }
    Ok(TupleDesc::new(types))
}

/// Reads `maps/<name>.json`.
pub fn read_meta(path: &Path) -> Result<MapMeta, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let name = v["name"].as_str().ok_or("no name")?.to_string();
    let key = desc_from_json(&v["key_desc"])?;
    let value = desc_from_json(&v["value_desc"])?;
    let root =
        Address::from_hex(v["root"].as_str().ok_or("no root")?).map_err(|e| e.to_string())?;
    let opt_hex = |k: &str| -> Result<Option<Vec<u8>>, String> {
        match v[k].as_str() {
            Some(h) => unhex(h).map(Some),
            None => Ok(None),
        }
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    Ok(MapMeta {
        name,
        schema: TupleSchema::new(key, value),
        root,
        row_count: v["row_count"].as_u64().ok_or("no row_count")?,
        tree_level: v["tree_level"].as_u64().ok_or("no tree_level")?,
        first_key: opt_hex("first_key")?,
        last_key: opt_hex("last_key")?,
        chunk_file: dir.join(v["chunk_file"].as_str().ok_or("no chunk_file")?),
        chunk_count: v["chunk_count"].as_u64().ok_or("no chunk_count")?,
    })
}

/// The map metadata files in `dir/maps`, sorted by name.
pub fn map_files(dir: &Path) -> Option<Vec<PathBuf>> {
    let maps = dir.join("maps");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&maps)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    out.sort();
    Some(out)
}

/// Copies every blob a value tuple references from `from` into `to` with the blob builder and
/// checks that the rebuilt blob has the same address.
fn rebuild_blobs(
    from: &MemoryStore,
    to: &MemoryStore,
    desc: &TupleDesc,
    value: &[u8],
    builder: &mut BlobBuilder,
    buf: &mut Vec<u8>,
) -> Result<(), String> {
    let t = Tuple::new_unverified(value);
    for (i, ty) in desc.types().iter().enumerate() {
        let Some(raw) = desc.field(t, i) else {
            continue;
        };
        let address = if ty.enc.is_adaptive() {
            match Adaptive::from_bytes(raw) {
                Some(Adaptive::OutOfBand { address, .. }) => address,
                _ => continue,
            }
        } else if ty.enc.is_address() && ty.enc != Encoding::CommitAddr {
            Address::from_slice(raw).ok_or("bad address field")?
        } else {
            continue;
        };
        buf.clear();
        read_blob(from, &address, buf).map_err(|e| format!("reading blob {address}: {e}"))?;
        let again = builder.write(to, buf).map_err(|e| e.to_string())?;
        if again != address {
            return Err(format!(
                "blob of {} bytes rebuilt to {} instead of {}",
                buf.len(),
                again.to_hex(),
                address.to_hex()
            ));
        }
    }
    Ok(())
}

fn check_one_map(meta: &MapMeta) -> Result<(), String> {
    let store = MemoryStore::new(HashProfile::Dolt);
    let order = load_chunks(&store, &meta.chunk_file)?;
    if order.first() != Some(&meta.root) {
        return Err("the first record is not the root".into());
    }
    if order.len() as u64 != meta.chunk_count {
        return Err(format!(
            "{} records, metadata says {}",
            order.len(),
            meta.chunk_count
        ));
    }
    let map = Map::new(&store, meta.root, meta.schema.clone());
    let count = map.count().map_err(|e| e.to_string())?;
    if count != meta.row_count {
        return Err(format!(
            "root tree_count {count}, expected {}",
            meta.row_count
        ));
    }
    let level = map.height().map_err(|e| e.to_string())?;
    if u64::from(level) != meta.tree_level {
        return Err(format!("root level {level}, expected {}", meta.tree_level));
    }
    let rows: Vec<(&[u8], &[u8])> = map
        .iter()
        .map_err(|e| e.to_string())?
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    if rows.len() as u64 != meta.row_count {
        return Err(format!(
            "iterated {} rows, expected {}",
            rows.len(),
            meta.row_count
        ));
    }
    if rows.first().map(|r| r.0.to_vec()) != meta.first_key {
        return Err("first key differs".into());
    }
    if rows.last().map(|r| r.0.to_vec()) != meta.last_key {
        return Err("last key differs".into());
    }
    for (i, (k, v)) in rows.iter().enumerate().step_by(97) {
        match map.get(k).map_err(|e| e.to_string())? {
            Some(got) if got == *v => {}
            _ => return Err(format!("get of row {i} failed")),
        }
    }
    // Rebuild from the rows into a fresh store: same root, same chunks.
    let fresh = MemoryStore::new(HashProfile::Dolt);
    let mut builder = BlobBuilder::new();
    let mut buf = Vec::new();
    if meta.schema.value.may_carry_addresses() {
        for (_, v) in &rows {
            rebuild_blobs(
                &store,
                &fresh,
                &meta.schema.value,
                v,
                &mut builder,
                &mut buf,
            )?;
        }
    }
    let rebuilt = Map::from_sorted(&fresh, meta.schema.clone(), rows.iter().copied())
        .map_err(|e| e.to_string())?;
    if rebuilt.root() != meta.root {
        return Err(format!(
            "rebuilt root {} differs from {}",
            rebuilt.root().to_hex(),
            meta.root.to_hex()
        ));
    }

    let got: BTreeSet<Address> = fresh.addresses().into_iter().collect();
    let want: BTreeSet<Address> = order.into_iter().collect();
    if got != want {
        return Err(format!(
            "rebuilt chunk set differs: {} extra, {} missing",
            got.difference(&want).count(),
            want.difference(&got).count()
        ));
    }
    Ok(())
}

/// Category `maps`: every map reads back and rebuilds to the same root and chunks.
pub fn check_maps(dir: &Path) -> Category {
    let Some(files) = map_files(dir) else {
        return Category::missing("maps", format!("{}/maps not found", dir.display()));
    };
    let mut cat = Category::new("maps");
    for path in files {
        let result = read_meta(&path).and_then(|m| check_one_map(&m));
        cat.record(result.map_err(|e| format!("{}: {e}", path.display())));
    }
    cat
}

/// One edit read from a file: key and new value (`None` deletes).
pub type OwnedEdit = (Vec<u8>, Option<Vec<u8>>);

/// Reads an edits file: `(key, Some(value) | None)` in file order.
pub fn read_edits(path: &Path) -> Result<Vec<OwnedEdit>, String> {
    read_jsonl(path)?
        .iter()
        .map(|e| {
            let key = unhex(e["key"].as_str().ok_or("edit without key")?)?;
            let value = match e["op"].as_str() {
                Some("put") => Some(unhex(e["value"].as_str().ok_or("put without value")?)?),
                Some("delete") => None,
                other => return Err(format!("unknown op {other:?}")),
            };
            Ok((key, value))
        })
        .collect()
}

fn check_one_edit(edited_json: &Path) -> Result<(), String> {
    let edited = read_meta(edited_json)?;
    let text = std::fs::read_to_string(edited_json).map_err(|e| e.to_string())?;
    let v: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let dir = edited_json.parent().unwrap_or(Path::new("."));
    let base_name = v["edited"]["base_map"].as_str().ok_or("no base_map")?;
    let base = read_meta(&dir.join(format!("{base_name}.json")))?;
    let edits_file = dir.join(v["edited"]["edits_file"].as_str().ok_or("no edits_file")?);
    let store = MemoryStore::new(HashProfile::Dolt);
    load_chunks(&store, &base.chunk_file)?;
    let owned = read_edits(&edits_file)?;
    let edits = owned.iter().map(|(k, v)| (&k[..], v.as_deref()));
    let root = Map::new(&store, base.root, &base.schema)
        .apply(edits)
        .map_err(|e| e.to_string())?
        .root();
    if root != edited.root {
        return Err(format!(
            "edited root {} differs from Dolt's {}",
            root.to_hex(),
            edited.root.to_hex()
        ));
    }
    let map = Map::new(&store, root, base.schema.clone());
    if map.count().map_err(|e| e.to_string())? != edited.row_count {
        return Err("row count after edits differs".into());
    }
    Ok(())
}

/// Category `edits`: applying each edits file to its base map gives Dolt's edited root.
pub fn check_edits(dir: &Path) -> Category {
    let Some(files) = map_files(dir) else {
        return Category::missing("edits", format!("{}/maps not found", dir.display()));
    };
    let mut cat = Category::new("edits");
    for path in files
        .iter()
        .filter(|p| p.to_string_lossy().ends_with("-edited.json"))
    {
        cat.record(check_one_edit(path).map_err(|e| format!("{}: {e}", path.display())));
    }
    cat
}

fn entry_json(e: &DiffEntry<'_>) -> (String, String, Option<String>, Option<String>) {
    match *e {
        DiffEntry::Added { key, to } => (
            "added".into(),
            hex::encode(key),
            None,
            Some(hex::encode(to)),
        ),
        DiffEntry::Removed { key, from } => (
            "removed".into(),
            hex::encode(key),
            Some(hex::encode(from)),
            None,
        ),
        DiffEntry::Modified { key, from, to } => (
            "modified".into(),
            hex::encode(key),
            Some(hex::encode(from)),
            Some(hex::encode(to)),
        ),
    }
}

fn check_one_diff(dir: &Path, diff_file: &Path) -> Result<(), String> {
    let stem = diff_file
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".diff.jsonl"))
        .ok_or("bad diff file name")?;
    let base = read_meta(&dir.join("maps").join(format!("{stem}.json")))?;
    let edited = read_meta(&dir.join("maps").join(format!("{stem}-edited.json")))?;
    let store = MemoryStore::new(HashProfile::Dolt);
    load_chunks(&store, &base.chunk_file)?;
    load_chunks(&store, &edited.chunk_file)?;
    let want = read_jsonl(diff_file)?;
    let got: Vec<DiffEntry<'_>> = Diff::new(&store, &base.schema, base.root, edited.root)
        .map_err(|e| e.to_string())?
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    if got.len() != want.len() {
        return Err(format!("{} entries, Dolt has {}", got.len(), want.len()));
    }
    for (i, (g, w)) in got.iter().zip(want.iter()).enumerate() {
        let (t, k, f, to) = entry_json(g);
        let same = w["type"].as_str() == Some(&t)
            && w["key"].as_str() == Some(&k)
            && w["from"].as_str().map(str::to_string) == f
            && w["to"].as_str().map(str::to_string) == to;
        if !same {
            return Err(format!("entry {i} differs: got {t} {k}, Dolt has {w}"));
        }
    }
    Ok(())
}

/// Category `diffs`: each two-way diff equals Dolt's, entry for entry.
pub fn check_diffs(dir: &Path) -> Category {
    let diff_dir = dir.join("diff");
    let Ok(rd) = std::fs::read_dir(&diff_dir) else {
        return Category::missing("diffs", format!("{} not found", diff_dir.display()));
    };
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".diff.jsonl"))
        .collect();
    files.sort();
    let mut cat = Category::new("diffs");
    for f in files {
        cat.record(check_one_diff(dir, &f).map_err(|e| format!("{}: {e}", f.display())));
    }
    cat
}
