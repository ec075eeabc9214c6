//! `dolt checkout BRANCH` with uncommitted changes: they move to the branch checked out, table
//! by table, as Dolt's command-line checkout moves them (`RootsForBranch`), and the branch left
//! is reset to its head.
//!
//! For each of the working and staged roots, a table takes the target head's version when the
//! change left it as the current head had it, the changed version when the target head has it
//! as the current head does, and otherwise stops the checkout (the target changed the table the
//! changes touch). The foreign-key collection moves the same way; where both sides changed it,
//! the keys are merged per table as Dolt's `mergeForeignKeyChanges` merges them: a table's
//! declared keys come from the side that changed them, and a table whose keys both sides
//! changed stops the checkout with the same error as a table both changed.

use std::collections::{BTreeMap, BTreeSet};

use prollystore_format::message::objects::RootValueFields;
use prollystore_format::Address;

use crate::error::{bad_chunk, encode, DoltError, Result};
use crate::write::constraints::foreign_keys::{
    decode_collection, encode_collection, StoredForeignKey,
};
use crate::write::maps::address_map::{address_map_entries, edit_address_map, empty_address_map};
use crate::write::storage::chunk_io::ChunkIo;
use crate::write::storage::writer::StoreWriter;

/// A root value's tables by name and its foreign-key collection address.
struct RootParts {
    tables: BTreeMap<Vec<u8>, Address>,
    foreign_keys: [u8; 20],
}

fn root_parts(io: &dyn ChunkIo, root: Address) -> Result<RootParts> {
    let chunk = io.chunk(&root)?;
    let r = RootValueFields::decode(&chunk).map_err(|e| bad_chunk(root, e.to_string()))?;
    let tables = if r.tables.is_empty() {
        BTreeMap::new()
    } else {
        address_map_entries(io, r.tables)?.into_iter().collect()
    };
    Ok(RootParts {
        tables,
        foreign_keys: r.foreign_key_addr,
    })
}

/// The tables of `changed` (a working or staged root over `old`, the current head's root)
/// moved onto `new` (the target head's root), as `(name, address)` per table kept; tables both
/// sides changed go to `conflicts`.
fn move_tables(
    old: &RootParts,
    new: &RootParts,
    changed: &RootParts,
    conflicts: &mut BTreeSet<String>,
) -> BTreeMap<Vec<u8>, Address> {
    let mut out = BTreeMap::new();
    for (name, &new_addr) in &new.tables {
        let (o, c) = (old.tables.get(name), changed.tables.get(name));
        if o == c {
            out.insert(name.clone(), new_addr);
        } else if o == Some(&new_addr) {
            if let Some(&c) = c {
                out.insert(name.clone(), c);
            }
        } else {
            conflicts.insert(String::from_utf8_lossy(name).into_owned());
        }
    }
    for (name, &c) in &changed.tables {
        if new.tables.contains_key(name) {
            continue;
        }
        match old.tables.get(name) {
            None => {
                out.insert(name.clone(), c);
            }
            Some(&o) if o != c => {
                conflicts.insert(String::from_utf8_lossy(name).into_owned());
            }
            Some(_) => {}
        }
    }
    out
}

/// Root value `new_root` with exactly `tables` and the foreign-key collection `foreign_keys`;
/// returns its address.
fn with_tables(
    io: &mut dyn ChunkIo,
    new_root: Address,
    new: &RootParts,
    tables: &BTreeMap<Vec<u8>, Address>,
    foreign_keys: [u8; 20],
) -> Result<Address> {
    if *tables == new.tables && foreign_keys == new.foreign_keys {
        return Ok(new_root);
    }
    let mut changes: Vec<(&[u8], Option<Address>)> = Vec::new();
    for name in new.tables.keys() {
        if !tables.contains_key(name) {
            changes.push((name, None));
        }
    }
    for (name, &a) in tables {
        if new.tables.get(name) != Some(&a) {
            changes.push((name, Some(a)));
        }
    }
    let chunk = io.chunk(&new_root)?;
    let mut r = RootValueFields::decode(&chunk).map_err(|e| bad_chunk(new_root, e.to_string()))?;
    let empty;
    let old_map: &[u8] = if r.tables.is_empty() {
        empty = empty_address_map()?;
        &empty
    } else {
        r.tables
    };
    let map = edit_address_map(io, old_map, &changes)?;
    r.tables = &map;
    r.foreign_key_addr = foreign_keys;
    let bytes = r.encode().map_err(|e| encode("root value", e))?;
    io.put(&bytes)
}

/// The working and staged roots the target branch gets when uncommitted changes move from a
/// branch whose head root is `old_root` (working `working`, staged `staged`) to a branch whose
/// head root is `new_root`. Refused, naming the tables, when both changed the same table.
pub(crate) fn carried_roots(
    w: &mut StoreWriter,
    old_root: Address,
    new_root: Address,
    working: Address,
    staged: Address,
) -> Result<(Address, Address)> {
    let old = root_parts(w, old_root)?;
    let new = root_parts(w, new_root)?;
    // As Dolt: the tables of both roots first (their conflicts together), then the keys of
    // the working root, then those of the staged root.
    let mut conflicts = BTreeSet::new();
    let mut moved = Vec::new();
    for changed_root in [working, staged] {
        let changed = root_parts(w, changed_root)?;
        let tables = move_tables(&old, &new, &changed, &mut conflicts);
        moved.push((changed, tables));
    }
    if !conflicts.is_empty() {
        return Err(would_overwrite(conflicts));
    }
    let mut out = Vec::new();
    for (changed, tables) in &moved {
        let fk = move_foreign_keys(w, &old, &new, changed)?;
        out.push((tables, fk));
    }
    let mut roots = Vec::new();
    for (tables, fk) in out {
        roots.push(with_tables(w, new_root, &new, tables, fk)?);
    }
    Ok((roots[0], roots[1]))
}

/// Dolt's refusal of a checkout that would overwrite uncommitted changes to `tables`.
fn would_overwrite(tables: BTreeSet<String>) -> DoltError {
    let list: Vec<String> = tables.into_iter().collect();
    DoltError::Refused(format!(
        "your local changes to the following tables would be overwritten by checkout: {}",
        list.join(", ")
    ))
}

/// The foreign-key collection (its address) `changed` takes to the branch checked out
/// (`moveForeignKeys`): the target's when the changes left the keys alone, the changed one
/// when the target has the current head's, else the two merged per table.
fn move_foreign_keys(
    io: &mut dyn ChunkIo,
    old: &RootParts,
    new: &RootParts,
    changed: &RootParts,
) -> Result<[u8; 20]> {
    if old.foreign_keys == changed.foreign_keys {
        return Ok(new.foreign_keys);
    }
    if old.foreign_keys == new.foreign_keys {
        return Ok(changed.foreign_keys);
    }
    let (o, n, c) = (
        collection(io, old.foreign_keys)?,
        collection(io, new.foreign_keys)?,
        collection(io, changed.foreign_keys)?,
    );
    let merged = merge_foreign_keys(&o, &n, &c, &new.tables, &changed.tables)?;
    if merged.is_empty() {
        return Ok(Address::ZERO.0);
    }
    Ok(io.put(&encode_collection(&merged)?)?.0)
}

/// The keys of the collection at `at` (none at the zero address).
fn collection(io: &dyn ChunkIo, at: [u8; 20]) -> Result<Vec<StoredForeignKey>> {
    let at = Address(at);
    if at.is_zero() {
        return Ok(Vec::new());
    }
    decode_collection(&io.chunk(&at)?, at)
}

/// The keys table `table` declares (its name compared case-insensitively), by name, each as
/// the bytes Dolt's `ForeignKey.HashOf` hashes: two tables' key lists compare as Dolt's
/// `CombinedHash` compares them (commit-time fields such as NOT VALID left out, as there).
fn declared<'k>(
    keys: &'k [StoredForeignKey],
    table: &str,
) -> (Vec<&'k StoredForeignKey>, Vec<Vec<u8>>) {
    let mut mine: Vec<&StoredForeignKey> = keys
        .iter()
        .filter(|k| k.child_table.to_lowercase() == table.to_lowercase())
        .collect();
    mine.sort_by(|a, b| a.name.cmp(&b.name));
    let identity = mine
        .iter()
        .map(|k| {
            let mut b = Vec::new();
            b.extend_from_slice(k.name.as_bytes());
            b.extend_from_slice(k.child_table.as_bytes());
            b.extend_from_slice(k.child_index.as_bytes());
            for c in &k.child_columns {
                b.extend_from_slice(&c.to_le_bytes());
            }
            b.extend_from_slice(k.parent_table.as_bytes());
            b.extend_from_slice(k.parent_index.as_bytes());
            for c in &k.parent_columns {
                b.extend_from_slice(&c.to_le_bytes());
            }
            b.push(k.on_update);
            b.push(k.on_delete);
            for c in k.unresolved_child.iter().flatten() {
                b.extend_from_slice(c.as_bytes());
            }
            for c in k.unresolved_parent.iter().flatten() {
                b.extend_from_slice(c.as_bytes());
            }
            b
        })
        .collect();
    (mine, identity)
}

/// Dolt's `mergeForeignKeyChanges`: keys `old` (the current head's), `new` (the target
/// head's) and `changed` (the uncommitted root's) merged per declaring table. For each table
/// of the target, its keys come from the target when the changes left them as the head had
/// them, else from the changes when the target did, else the table is a conflict; a table
/// only the changes have brings its keys when the head declared none there, and is a
/// conflict when it changed keys the head declared. Keys of tables neither has are dropped.
fn merge_foreign_keys(
    old: &[StoredForeignKey],
    new: &[StoredForeignKey],
    changed: &[StoredForeignKey],
    new_tables: &BTreeMap<Vec<u8>, Address>,
    changed_tables: &BTreeMap<Vec<u8>, Address>,
) -> Result<Vec<StoredForeignKey>> {
    let mut by_table: BTreeMap<String, Vec<StoredForeignKey>> = BTreeMap::new();
    let mut conflicts = BTreeSet::new();
    for name in new_tables.keys() {
        let t = String::from_utf8_lossy(name).into_owned();
        let (o, n, c) = (declared(old, &t), declared(new, &t), declared(changed, &t));
        let keys = if o.1 == c.1 {
            n.0
        } else if o.1 == n.1 {
            c.0
        } else {
            conflicts.insert(t);
            continue;
        };
        by_table.insert(t, keys.into_iter().cloned().collect());
    }
    for name in changed_tables.keys() {
        let t = String::from_utf8_lossy(name).into_owned();
        if by_table.contains_key(&t) || conflicts.contains(&t) {
            continue;
        }
        let (o, c) = (declared(old, &t), declared(changed, &t));
        if o.1.is_empty() {
            by_table.insert(t, c.0.into_iter().cloned().collect());
        } else if o.1 != c.1 {
            conflicts.insert(t);
        }
    }
    if !conflicts.is_empty() {
        return Err(would_overwrite(conflicts));
    }
    Ok(by_table.into_values().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str, child: &str, on_delete: u8) -> StoredForeignKey {
        StoredForeignKey {
            name: name.into(),
            child_table: child.into(),
            child_index: "p".into(),
            child_columns: vec![7],
            parent_table: "par".into(),
            parent_index: String::new(),
            parent_columns: vec![3],
            on_update: 0,
            on_delete,
            unresolved_child: Some(vec!["p".into()]),
            unresolved_parent: Some(vec!["id".into()]),
            is_not_valid: false,
            match_type: 0,
        }
    }

    fn tables(names: &[&str]) -> BTreeMap<Vec<u8>, Address> {
        names
            .iter()
            .map(|n| (n.as_bytes().to_vec(), Address([1; 20])))
            .collect()
    }

    fn names(keys: &[StoredForeignKey]) -> Vec<&str> {
        let mut v: Vec<&str> = keys.iter().map(|k| k.name.as_str()).collect();
        v.sort_unstable();
        v
    }

    /// Each table's keys come from the side that changed them; keys of a table neither root
    /// has go; a table only the changes have keeps its keys when the head declared none.
    #[test]
    fn keys_merge_per_table() {
        let old = [key("a", "t", 0), key("gone", "x", 0)];
        let new = [key("a", "t", 0), key("b", "u", 0)];
        let changed = [key("a2", "t", 1), key("gone", "x", 0), key("n", "fresh", 0)];
        let merged = merge_foreign_keys(
            &old,
            &new,
            &changed,
            &tables(&["par", "t", "u"]),
            &tables(&["par", "t", "x", "fresh"]),
        )
        .unwrap();
        // t: changed by the changes only; u: by the target only; x: only the changes have
        // it, with the head's keys unchanged (dropped, as Dolt drops them); fresh: new.
        assert_eq!(names(&merged), ["a2", "b", "n"]);
    }

    /// NOT VALID and MATCH are not part of a key's identity (Dolt's `HashOf` leaves them
    /// out); a child table's name is compared case-insensitively.
    #[test]
    fn identity_is_dolts() {
        let mut not_valid = key("a", "t", 0);
        not_valid.is_not_valid = true;
        not_valid.match_type = 1;
        let merged = merge_foreign_keys(
            &[key("a", "t", 0)],
            &[key("a", "t", 4), key("b", "u", 0)],
            &[not_valid, key("c", "V", 0)],
            &tables(&["par", "t", "u"]),
            &tables(&["par", "t", "v"]),
        )
        .unwrap();
        assert_eq!(names(&merged), ["a", "b", "c"]);
        assert_eq!(merged.iter().find(|k| k.name == "a").unwrap().on_delete, 4);
    }

    /// A table whose keys both sides changed, and a table only the changes have whose head
    /// keys they changed: the checkout is refused, naming them.
    #[test]
    fn keys_both_changed_are_refused() {
        let err = merge_foreign_keys(
            &[key("a", "x", 0)],
            &[key("b", "t", 0)],
            &[key("c", "t", 0), key("a", "x", 1)],
            &tables(&["par", "t"]),
            &tables(&["par", "t", "x"]),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.ends_with("would be overwritten by checkout: t, x"),
            "{err}"
        );
    }
}
