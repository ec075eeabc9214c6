//! The chunk addresses a chunk refers to, for every message kind a Dolt database holds, so a
//! writer can copy everything reachable from a root value or commit into another store.
//!
//! Embedded tree roots (a store root's dataset map, a root value's table map, a table's primary
//! index and index map) are not chunks of their own; their children are followed instead.

use prollystore_format::message::objects::{
    CommitFields, RootValueFields, StoreRootFields, TableFields, TagFields, WorkingSetFields,
};
use prollystore_format::message::{file_id, Message};
use prollystore_format::Address;

use crate::error::{bad_chunk, Result};

/// Calls `f` with every address `chunk` (stored at `address`) refers to. Zero addresses (Dolt's
/// "none") are skipped. Unknown message kinds are an error, so nothing is silently left behind.
pub(crate) fn for_each_ref(
    address: Address,
    chunk: &[u8],
    f: &mut dyn FnMut(Address),
) -> Result<()> {
    let bad = |e: &dyn std::fmt::Display| bad_chunk(address, e.to_string());
    let id = file_id(chunk).map_err(|e| bad(&e))?;
    let mut addr = |bytes: &[u8]| {
        if let Some(a) = Address::from_slice(bytes).filter(|a| !a.is_zero()) {
            f(a)
        }
    };
    match &id {
        b"TUPM" | b"BLOB" | b"ADRM" | b"CMCL" => embedded(address, chunk, &mut addr)?,
        b"STRT" => {
            let s = StoreRootFields::decode(chunk).map_err(|e| bad(&e))?;
            embedded(address, s.address_map, &mut addr)?;
        }
        b"RTVL" => {
            let r = RootValueFields::decode(chunk).map_err(|e| bad(&e))?;
            embedded(address, r.tables, &mut addr)?;
            addr(&r.foreign_key_addr);
        }
        b"DTBL" => {
            let t = TableFields::decode(chunk).map_err(|e| bad(&e))?;
            addr(&t.schema);
            embedded(address, t.primary_index, &mut addr)?;
            embedded(address, t.secondary_indexes, &mut addr)?;
            addr(t.violations);
            addr(t.artifacts);
            addr(t.conflicts.data);
        }
        b"DCMT" => {
            let c = CommitFields::decode(chunk).map_err(|e| bad(&e))?;
            addr(&c.root);
            c.parent_addrs.chunks_exact(20).for_each(&mut addr);
            if let Some(p) = c.parent_closure {
                addr(&p);
            }
        }
        b"WRST" => {
            let w = WorkingSetFields::decode(chunk).map_err(|e| bad(&e))?;
            addr(&w.working_root_addr);
            if let Some(s) = w.staged_root_addr {
                addr(&s);
            }
            if let Some(m) = &w.merge_state {
                addr(&m.pre_working_root_addr);
                addr(&m.from_commit_addr);
                if let Some(h) = m.pre_merge_head_commit_addr {
                    addr(&h);
                }
            }
            if let Some(r) = &w.rebase_state {
                addr(&r.pre_working_root_addr);
                addr(&r.onto_commit_addr);
            }
        }
        b"DTAG" => {
            let t = TagFields::decode(chunk).map_err(|e| bad(&e))?;
            addr(&t.commit_addr);
        }
        // Schemas and foreign-key collections refer to no chunk.
        b"DSCH" | b"DFKC" => {}
        other => {
            return Err(bad_chunk(
                address,
                format!(
                    "cannot follow the references of a {} message",
                    String::from_utf8_lossy(other)
                ),
            ))
        }
    }
    Ok(())
}

/// Walks depth first from each of `tops` in turn, in the order of the children `enter`
/// gives, and calls `leave` for each chunk once everything under it is done: children before
/// parents. `enter(a)` returns the chunks `a` refers to, or `None` to leave `a` (and what is
/// under it) out of the walk; each chunk is entered once. Writers queue chunks in this order so
/// that every prefix of a batch is closed under references: a write cut short leaves no chunk
/// whose children are missing.
pub(crate) fn children_first(
    tops: impl IntoIterator<Item = Address>,
    mut enter: impl FnMut(Address) -> Result<Option<Vec<Address>>>,
    mut leave: impl FnMut(Address) -> Result<()>,
) -> Result<()> {
    let mut entered = std::collections::HashSet::new();
    let mut todo: Vec<(Address, bool)> = Vec::new();
    for top in tops {
        todo.push((top, false));
        while let Some((a, done)) = todo.pop() {
            if done {
                leave(a)?;
                continue;
            }
            if !entered.insert(a) {
                continue;
            }
            let Some(children) = enter(a)? else {
                continue;
            };
            todo.push((a, true));
            todo.extend(children.into_iter().rev().map(|c| (c, false)));
        }
    }
    Ok(())
}

/// The references of a tree node (a chunk, or a root embedded in another message).
fn embedded(owner: Address, node: &[u8], f: &mut dyn FnMut(&[u8])) -> Result<()> {
    let m = Message::verify(node).map_err(|e| bad_chunk(owner, e.to_string()))?;
    m.for_each_ref(|a| f(a.as_bytes()));
    Ok(())
}
