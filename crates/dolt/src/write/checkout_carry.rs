//! `dolt checkout BRANCH` with uncommitted changes: they move to the branch checked out, table
//! by table, as Dolt's command-line checkout moves them (`RootsForBranch`), and the branch left
//! is reset to its head.
//!
//! For each of the working and staged roots, a table takes the target head's version when the
//! change left it as the current head had it, the changed version when the target head has it
//! as the current head does, and otherwise stops the checkout (the target changed the table the
//! changes touch). The foreign-key collection moves the same way; where both sides changed it,
//! Dolt merges the two per table, which is refused here with the same kind of error.

use std::collections::{BTreeMap, BTreeSet};

use prollystore_format::message::objects::RootValueFields;
use prollystore_format::Address;

use super::address_map::{address_map_entries, edit_address_map, empty_address_map};
use super::chunk_io::ChunkIo;
use super::writer::DoltWriter;
use crate::error::{bad_chunk, DoltError, Result};

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
    let bytes = r
        .encode()
        .map_err(|e| DoltError::Unsupported(format!("root value: {e}")))?;
    io.put(&bytes)
}

/// The working and staged roots the target branch gets when uncommitted changes move from a
/// branch whose head root is `old_root` (working `working`, staged `staged`) to a branch whose
/// head root is `new_root`. Refused, naming the tables, when both changed the same table.
pub(crate) fn carried_roots(
    w: &mut DoltWriter,
    old_root: Address,
    new_root: Address,
    working: Address,
    staged: Address,
) -> Result<(Address, Address)> {
    let old = root_parts(w, old_root)?;
    let new = root_parts(w, new_root)?;
    let mut conflicts = BTreeSet::new();
    let mut moved = Vec::new();
    for changed_root in [working, staged] {
        let changed = root_parts(w, changed_root)?;
        let tables = move_tables(&old, &new, &changed, &mut conflicts);
        let fk = if old.foreign_keys == changed.foreign_keys {
            new.foreign_keys
        } else if old.foreign_keys == new.foreign_keys {
            changed.foreign_keys
        } else {
            return Err(DoltError::Refused(
                "checkout: both the uncommitted changes and the branch checked out changed \
                 foreign keys (Dolt merges them per table; not done here)"
                    .into(),
            ));
        };
        moved.push((tables, fk));
    }
    if !conflicts.is_empty() {
        let list: Vec<String> = conflicts.into_iter().collect();
        return Err(DoltError::Refused(format!(
            "your local changes to the following tables would be overwritten by checkout: {}",
            list.join(", ")
        )));
    }
    let mut out = Vec::new();
    for (tables, fk) in &moved {
        out.push(with_tables(w, new_root, &new, tables, *fk)?);
    }
    Ok((out[0], out[1]))
}
