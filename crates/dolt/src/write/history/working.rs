//! Branches' working roots while tables are changed: each change makes a new root value in
//! memory (tables created, dropped or edited); a commit writes what the new root reaches and
//! commits it to the branch as `dolt add -A` + `dolt commit` do. A change that fails leaves the
//! working root as it was, and nothing of it reaches the database.

use std::collections::{HashMap, HashSet};

use prollystore::store::ChunkStore;
use prollystore_format::message::objects::{CommitFields, RootValueFields, WorkingSetFields};
use prollystore_format::Address;

use super::commit::NewCommit;
use crate::error::{bad_chunk, encode, DoltError, Result};
use crate::write::constraints::fk_actions;
use crate::write::constraints::foreign_keys;
use crate::write::maps::address_map::{address_map_entries, edit_address_map, empty_address_map};
use crate::write::storage::overlay::{Overlay, OverlayIo};
use crate::write::storage::writer::{StoreWriter, WorkingSetMeta};
use crate::write::tables::table_def::TableDef;
use crate::write::tables::table_edit::EditTable;

/// Uncommitted table changes of an open writer, per branch (their chunks are in the writer's
/// session store).
#[derive(Debug, Default)]
pub(crate) struct WorkingEdits {
    /// Branch → its working root value, once changed here.
    working: HashMap<String, Address>,
}

impl WorkingEdits {
    /// The chunks `w` reads, with this session's over them.
    pub(crate) fn overlay<'a>(&'a self, w: &'a StoreWriter) -> Overlay<'a> {
        Overlay {
            base: w.database().source(),
            new: w.session(),
            engine: w.database().engine(),
        }
    }

    /// `branch`'s working root: as changed here, else its working set's, else its head's.
    pub(crate) fn working_root(&self, w: &StoreWriter, branch: &str) -> Result<Address> {
        if let Some(a) = self.working.get(branch) {
            return Ok(*a);
        }
        let datasets = w.datasets()?;
        let find = |name: String| {
            datasets
                .iter()
                .find(|(k, _)| k.as_slice() == name.as_bytes())
                .map(|(_, a)| *a)
        };
        if let Some(ws) = find(format!("workingSets/heads/{branch}")) {
            let chunk = w.chunk(&ws)?;
            let f = WorkingSetFields::decode(&chunk).map_err(|e| bad_chunk(ws, e.to_string()))?;
            return Ok(Address(f.working_root_addr));
        }
        let head = find(format!("refs/heads/{branch}"))
            .ok_or_else(|| DoltError::NotFound(format!("branch {branch:?}")))?;
        let chunk = w.chunk(&head)?;
        let c = CommitFields::decode(&chunk).map_err(|e| bad_chunk(head, e.to_string()))?;
        Ok(Address(c.root))
    }

    /// Makes `root` `branch`'s working root (a root value written to this session's chunks).
    pub(crate) fn set_working_root(&mut self, branch: &str, root: Address) {
        self.working.insert(branch.to_string(), root);
    }

    /// The tables of root value `root`: name → table chunk address.
    pub(crate) fn tables(&self, w: &StoreWriter, root: Address) -> Result<Vec<(String, Address)>> {
        let store = self.overlay(w);
        root_tables(&store, root)
    }

    /// Creates table `def.name` on `branch`'s working root.
    pub(crate) fn create_table(
        &mut self,
        w: &StoreWriter,
        branch: &str,
        def: &TableDef,
    ) -> Result<()> {
        let root = self.working_root(w, branch)?;
        let store = self.overlay(w);
        let tables = root_tables(&store, root)?;
        if tables
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(&def.name))
        {
            return Err(DoltError::BadValue {
                table: def.name.clone(),
                column: String::new(),
                reason: "a table of this name exists".into(),
            });
        }
        let mut used = HashSet::new();
        for (_, a) in &tables {
            let t = EditTable::load(&store, "", *a)?;
            used.extend(t.schema.columns.iter().map(|c| c.tag));
        }
        let existing = if def.foreign_keys.is_empty() {
            Vec::new()
        } else {
            foreign_keys::load(&store, root)?
        };
        let mut def = def.clone();
        let (names, added) = foreign_keys::prepare_new_table(&mut def, &existing)?;
        def.name_checks(&names);
        let schema = def.schema_chunk_with_system_indexes(&mut used, &added)?;
        let table = EditTable::create(&store, &def.name, &schema)?;
        // A CHECK the evaluator cannot run is refused now, not at the first row.
        crate::write::constraints::checks::RowChecks::for_schema(
            store.engine,
            &def.name,
            &table.schema,
        )?;
        let address = table.store(&store)?;
        let mut new_root = set_root_tables(&store, root, &[(&def.name, Some(address))])?;
        if !def.foreign_keys.is_empty() {
            let open = |n: &str| -> Result<EditTable> {
                let (name, a) = tables
                    .iter()
                    .find(|(t, _)| t.eq_ignore_ascii_case(n))
                    .ok_or_else(|| {
                        DoltError::NotFound(format!("table {n:?} (referenced by a foreign key)"))
                    })?;
                EditTable::load(&store, name, *a)
            };
            let mut all = existing;
            all.extend(foreign_keys::resolve_new(&def, &names, &table, &open)?);
            new_root = foreign_keys::set_root_foreign_keys(&store, new_root, &all)?;
        }
        self.working.insert(branch.to_string(), new_root);
        Ok(())
    }

    /// Drops table `name` from `branch`'s working root.
    pub(crate) fn drop_table(&mut self, w: &StoreWriter, branch: &str, name: &str) -> Result<()> {
        let root = self.working_root(w, branch)?;
        let store = self.overlay(w);
        if !root_tables(&store, root)?.iter().any(|(n, _)| n == name) {
            return Err(DoltError::NotFound(format!("table {name:?}")));
        }
        let fks = foreign_keys::load(&store, root)?;
        if let Some(fk) = fks
            .iter()
            .find(|f| f.parent_table == name && f.child_table != name)
        {
            return Err(DoltError::BadValue {
                table: name.to_string(),
                column: String::new(),
                reason: format!(
                    "cannot drop: table {:?} refers to it through foreign key {:?}",
                    fk.child_table, fk.name
                ),
            });
        }
        let mut new_root = set_root_tables(&store, root, &[(name, None)])?;
        if fks.iter().any(|f| f.child_table == name) {
            let kept: Vec<_> = fks.into_iter().filter(|f| f.child_table != name).collect();
            new_root = foreign_keys::set_root_foreign_keys(&store, new_root, &kept)?;
        }
        self.working.insert(branch.to_string(), new_root);
        Ok(())
    }

    /// Runs `change` on table `name` of `branch`'s working root, carries out the foreign keys'
    /// referential actions it triggers (ON DELETE/UPDATE CASCADE, SET NULL: child rows of
    /// other tables changed too) and keeps the result only if all of it succeeds and every
    /// key still holds.
    pub(crate) fn edit_table<F>(
        &mut self,
        w: &StoreWriter,
        branch: &str,
        name: &str,
        change: F,
    ) -> Result<()>
    where
        F: FnOnce(&mut EditTable, &Overlay<'_>) -> Result<()>,
    {
        self.edit_table_with(w, branch, name, true, change)
    }

    /// [`WorkingEdits::edit_table`]; without `actions` (TRUNCATE), no referential action is
    /// carried out: a row still referred to is an error whatever the key's action.
    pub(crate) fn edit_table_with<F>(
        &mut self,
        w: &StoreWriter,
        branch: &str,
        name: &str,
        actions: bool,
        change: F,
    ) -> Result<()>
    where
        F: FnOnce(&mut EditTable, &Overlay<'_>) -> Result<()>,
    {
        let root = self.working_root(w, branch)?;
        let store = self.overlay(w);
        let tables = root_tables(&store, root)?;
        let (_, address) = tables
            .iter()
            .find(|(n, _)| n == name)
            .ok_or_else(|| DoltError::NotFound(format!("table {name:?}")))?;
        let mut table = EditTable::load(&store, name, *address)?;
        let fks = foreign_keys::load(&store, root)?;
        let involved = fks
            .iter()
            .any(|f| f.child_table == name || f.parent_table == name);
        table.in_foreign_key = involved;
        let before = involved.then(|| table.clone());
        change(&mut table, &store)?;
        let changed = match before {
            Some(before) => {
                let mut session = fk_actions::Tables::new(&store, &tables, &fks, before, table);
                if actions {
                    session.carry_out(name)?;
                }
                session.check()?;
                session.changed(name)
            }
            None => vec![table],
        };
        let mut addresses = Vec::with_capacity(changed.len());
        for t in &changed {
            addresses.push((t.name.as_str(), Some(t.store(&store)?)));
        }
        let new_root = set_root_tables(&store, root, &addresses)?;
        self.working.insert(branch.to_string(), new_root);
        Ok(())
    }

    /// Opens table `name` of `branch`'s working root (read only).
    pub(crate) fn table(&self, w: &StoreWriter, branch: &str, name: &str) -> Result<EditTable> {
        let root = self.working_root(w, branch)?;
        let store = self.overlay(w);
        let (_, a) = root_tables(&store, root)?
            .into_iter()
            .find(|(n, _)| n == name)
            .ok_or_else(|| DoltError::NotFound(format!("table {name:?}")))?;
        EditTable::load(&store, name, a)
    }

    /// Commits `branch`'s working root (all of it staged, as `dolt add -A`): writes every new
    /// chunk the root reaches, then the commit, branch head and working set. `commit.root`
    /// and `commit.parents` are filled in here (the branch's head is the only parent).
    pub(crate) fn commit(
        &mut self,
        w: &mut StoreWriter,
        branch: &str,
        commit: NewCommit<'_>,
        meta: &WorkingSetMeta<'_>,
        timestamp_secs: u64,
    ) -> Result<Address> {
        let root = self.working_root(w, branch)?;
        let head = w
            .datasets()?
            .into_iter()
            .find(|(k, _)| k.as_slice() == format!("refs/heads/{branch}").as_bytes())
            .map(|(_, a)| a)
            .ok_or_else(|| DoltError::NotFound(format!("branch {branch:?}")))?;
        w.write_reachable(root)?;
        let commit = NewCommit {
            root,
            parents: vec![head],
            ..commit
        };
        let address = w.commit_to_branch(branch, &commit, meta, timestamp_secs)?;
        self.working.remove(branch);
        Ok(address)
    }

    /// Writes `branch`'s working root as its working set (uncommitted: the staged root stays
    /// what it was), as Dolt does at the end of each SQL transaction, so that other processes
    /// (`dolt status`, `dolt diff`, a later commit) see the changes.
    pub(crate) fn save(
        &mut self,
        w: &mut StoreWriter,
        branch: &str,
        meta: &WorkingSetMeta<'_>,
        timestamp_secs: u64,
    ) -> Result<()> {
        let Some(&root) = self.working.get(branch) else {
            return Ok(());
        };
        let ws_ref = format!("workingSets/heads/{branch}");
        let datasets = w.datasets()?;
        let find = |name: &str| {
            datasets
                .iter()
                .find(|(k, _)| k.as_slice() == name.as_bytes())
                .map(|(_, a)| *a)
        };
        // The stored working root, and the staged one beside it.
        let (working, staged) = match find(&ws_ref) {
            Some(ws) => {
                let chunk = w.chunk(&ws)?;
                let f =
                    WorkingSetFields::decode(&chunk).map_err(|e| bad_chunk(ws, e.to_string()))?;
                (
                    f.working_root_addr,
                    f.staged_root_addr.unwrap_or(f.working_root_addr),
                )
            }
            None => {
                let head = find(&format!("refs/heads/{branch}"))
                    .ok_or_else(|| DoltError::NotFound(format!("branch {branch:?}")))?;
                let chunk = w.chunk(&head)?;
                let root = CommitFields::decode(&chunk)
                    .map_err(|e| bad_chunk(head, e.to_string()))?
                    .root;
                (root, root)
            }
        };
        // Edits that changed nothing (deletes of absent keys, rows set to what they hold)
        // write nothing.
        if Address(working) == root {
            return Ok(());
        }
        w.write_reachable(root)?;
        let ws = WorkingSetFields {
            working_root_addr: root.0,
            staged_root_addr: Some(staged),
            name: meta.name,
            email: meta.email,
            desc: meta.description,
            timestamp_millis: meta.timestamp_secs,
            merge_state: None,
            rebase_state: None,
        }
        .encode()
        .map_err(|e| encode("working set", e))?;
        let ws = w.put(&ws)?;
        w.update_datasets(&[(&ws_ref, Some(ws))], timestamp_secs)?;
        Ok(())
    }
}

/// The tables of a root value: name → table chunk address.
pub(crate) fn root_tables(store: &Overlay<'_>, root: Address) -> Result<Vec<(String, Address)>> {
    let chunk = store.get(&root)?.ok_or(DoltError::MissingChunk(root))?;
    let r = RootValueFields::decode(chunk).map_err(|e| bad_chunk(root, e.to_string()))?;
    if r.tables.is_empty() {
        return Ok(Vec::new());
    }
    address_map_entries(&OverlayIo(store), r.tables)?
        .into_iter()
        .map(|(k, a)| {
            let name =
                String::from_utf8(k).map_err(|_| bad_chunk(root, "a table name is not UTF-8"))?;
            Ok((name, a))
        })
        .collect()
}

/// Root value `base` with `changes` to its table map (`Some` sets a table, `None` drops it),
/// edited as Dolt edits the map; returns the new root's address.
pub(crate) fn set_root_tables(
    store: &Overlay<'_>,
    base: Address,
    changes: &[(&str, Option<Address>)],
) -> Result<Address> {
    let chunk = store.get(&base)?.ok_or(DoltError::MissingChunk(base))?;
    let mut r = RootValueFields::decode(chunk).map_err(|e| bad_chunk(base, e.to_string()))?;
    let empty;
    let old: &[u8] = if r.tables.is_empty() {
        empty = empty_address_map()?;
        &empty
    } else {
        r.tables
    };
    let edits: Vec<(&[u8], Option<Address>)> =
        changes.iter().map(|(n, a)| (n.as_bytes(), *a)).collect();
    let map = edit_address_map(&mut OverlayIo(store), old, &edits)?;
    r.tables = &map;
    let new = r.encode().map_err(|e| encode("root value", e))?;
    Ok(store.put(&new)?)
}
