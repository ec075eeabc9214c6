//! Foreign keys' referential actions, carried out as Dolt's SQL engine (go-mysql-server's
//! foreign key editor) carries them out: a parent row deleted, or its referenced columns
//! changed, deletes the child rows referring to it (ON DELETE CASCADE), gives them the new
//! values (ON UPDATE CASCADE) or sets their referencing columns NULL (SET NULL). Each child
//! change goes through the normal row path (every index kept, NOT NULL, CHECK and unique
//! keys enforced) and on to the keys referring to the child in turn.
//!
//! As in the engine: a row is changed only after the RESTRICT keys referring to it found no
//! child; ON UPDATE CASCADE and SET NULL reaching a table already changed on the way act as
//! RESTRICT (a self-referencing table's among them); the cascade stops with an error below
//! depth 15 (the statement's own row is depth 1; a table on or leading to a cycle of keys
//! fails one level earlier for deletes, as MySQL does). A child row referring to a value a
//! parent row takes away is refused by a RESTRICT key even when another parent row holds
//! the same value (a parent index need not be unique), and cascaded to by a CASCADE key.
//! The statement's own rows are changed all together first, then each changed row's keys
//! are enforced in key order; the keys every changed table takes part in are then checked
//! on the final rows (`check_change`). Any error leaves every table as it was.
//!
//! Keyless tables keep copies of a row as a count. The engine finds each distinct child row
//! once through the child's index, so a CASCADE or SET NULL changes one copy of it per parent
//! row, and copies left over keep referring to the value that went (Dolt 2.3.1 leaves them
//! so). Each copy of a keyless parent row that goes is a deleted row of its own.

use std::collections::{BTreeMap, HashMap, HashSet};

use prollystore::Map;
use prollystore_format::Address;

use super::foreign_keys::{
    check_change, cols_of_tags, lookup, matching_rows, row_label, same_values, StoredForeignKey,
};
use crate::error::{malformed, DoltError, Result};
use crate::write::merges::row_merge::row_changes;
use crate::write::storage::overlay::Overlay;
use crate::write::tables::table_def::ForeignKeyAction;
use crate::write::tables::table_edit::{copies, Cell, EditTable};

/// MySQL's limit on the depth of cascading changes.
const MAX_DEPTH: usize = 15;

/// The tables one change of a working root reads and changes, with the keys of the root.
pub(crate) struct Tables<'s, 'o> {
    store: &'s Overlay<'o>,
    root_tables: &'s [(String, Address)],
    fks: &'s [StoredForeignKey],
    /// Tables opened here: name → (as in the working root, as changed).
    open: BTreeMap<String, (EditTable, EditTable)>,
    /// Per table, whether the keys lead from it to a cycle of keys (memo).
    cyclical: HashMap<String, bool>,
    /// True once the keys' actions were carried out ([`Tables::carry_out`]).
    acted: bool,
}

/// A key referring to a changed row whose referenced values the change takes away: the key,
/// the parent's referenced columns, the old values.
type Affected<'k> = (&'k StoredForeignKey, Vec<usize>, Vec<Cell>);

fn pick(cells: &[Cell], cols: &[usize]) -> Vec<Cell> {
    cols.iter().map(|&c| cells[c].clone()).collect()
}

impl<'s, 'o> Tables<'s, 'o> {
    /// The tables of `root_tables` with table `name` changed from `before` to `after`.
    pub(crate) fn new(
        store: &'s Overlay<'o>,
        root_tables: &'s [(String, Address)],
        fks: &'s [StoredForeignKey],
        before: EditTable,
        after: EditTable,
    ) -> Tables<'s, 'o> {
        let mut open = BTreeMap::new();
        open.insert(after.name.clone(), (before, after));
        Tables {
            store,
            root_tables,
            fks,
            open,
            cyclical: HashMap::new(),
            acted: false,
        }
    }

    /// Table `name` as changed so far (opened from the working root the first time).
    fn table(&mut self, name: &str) -> Result<&mut EditTable> {
        if !self.open.contains_key(name) {
            let (n, a) = self
                .root_tables
                .iter()
                .find(|(t, _)| t == name)
                .ok_or_else(|| DoltError::NotFound(format!("table {name:?}")))?;
            let t = EditTable::load(self.store, n, *a)?;
            self.open.insert(name.to_string(), (t.clone(), t));
        }
        self.open
            .get_mut(name)
            .map(|(_, now)| now)
            .ok_or_else(|| DoltError::NotFound(format!("table {name:?}")))
    }

    /// True when following the keys from parent to child leads from table `name` to a table
    /// that leads back to itself (the engine's `Cyclical` editor).
    fn is_cyclical(&mut self, name: &str) -> bool {
        if let Some(&c) = self.cyclical.get(name) {
            return c;
        }
        let fks = self.fks;
        let c = std::iter::once(name)
            .chain(reach(fks, name))
            .any(|t| reach(fks, t).contains(t));
        self.cyclical.insert(name.to_string(), c);
        c
    }

    /// Enforces the keys referring to table `name` for each row the change given to
    /// [`Tables::new`] deleted or whose referenced columns it changed: RESTRICT keys refuse
    /// it while a child row refers to the old values, CASCADE and SET NULL keys are carried
    /// out.
    pub(crate) fn carry_out(&mut self, name: &str) -> Result<()> {
        self.acted = true;
        if !self.fks.iter().any(|f| f.parent_table == name) {
            return Ok(());
        }
        let (before, after) = self.open.get(name).cloned().ok_or_else(|| {
            DoltError::NotFound(format!(
                "table {name:?} among those open for foreign key actions"
            ))
        })?;
        if before.primary == after.primary {
            return Ok(());
        }
        let ts = after.schema.primary_tuple_schema()?;
        let changes = row_changes(
            &Map::new(self.store, before.primary, ts.clone()),
            &Map::new(self.store, after.primary, ts),
        )
        .map_err(DoltError::from)?;
        let store = self.store;
        for (key, from, to) in changes {
            let Some(from) = from else { continue };
            let old = before.cells_of(store, &key, &from)?;
            if after.schema.keyless {
                // Each copy that went is a row the statement deleted (a keyless row's values
                // never change in place; more copies refer to nothing).
                let left = to.as_deref().map(copies).transpose()?.unwrap_or(0);
                for _ in left..copies(&from)? {
                    self.restrict(name, &key, &old, None, &[name.to_string()])?;
                    self.actions(name, &old, None, 1, &mut Vec::new())?;
                }
                continue;
            }
            // A key spelled anew under its collation is a change of the same row.
            let new = match to {
                Some(v) => Some(after.cells_of(store, &key, &v)?),
                None => match after.find(store, &key)? {
                    Some((k, v)) => Some(after.cells_of(store, &k, &v)?),
                    None => None,
                },
            };
            // As the engine does row by row: the RESTRICT keys first (a child row referring
            // to the old value refuses the change, even when another parent row holds the
            // same value), then the actions.
            let chain = vec![name.to_string()];
            self.restrict(name, &key, &old, new.as_deref(), &chain)?;
            self.actions(name, &old, new.as_deref(), 1, &mut Vec::new())?;
        }
        Ok(())
    }

    /// The key `fk`'s action for a change of its parent row (`new`: `None` when deleted),
    /// with ON UPDATE CASCADE and SET NULL into a table of `chain` (the tables changed on
    /// the way, this parent's included) acting as RESTRICT.
    /// A stored SET DEFAULT (code 5) is refused: Dolt's MySQL dialect never creates one
    /// (`CREATE TABLE` refuses it), though Dolt's engine, given one, sets the child's
    /// columns to their defaults (not done here). Any other unknown code is malformed data.
    fn action(fk: &StoredForeignKey, updated: bool, chain: &[String]) -> Result<ForeignKeyAction> {
        let code = if updated { fk.on_update } else { fk.on_delete };
        let on = if updated { "UPDATE" } else { "DELETE" };
        let action = ForeignKeyAction::from_code(code).ok_or_else(|| {
            if code == 5 {
                DoltError::Unsupported(format!(
                    "foreign key {:?}: ON {on} SET DEFAULT (action code 5; not done: Dolt's \
                     MySQL dialect refuses to create it)",
                    fk.name
                ))
            } else {
                malformed(
                    format!("foreign key {:?}", fk.name),
                    format!("ON {on} action code {code} is none Dolt writes"),
                )
            }
        })?;
        Ok(match action {
            ForeignKeyAction::Cascade | ForeignKeyAction::SetNull
                if updated && chain.contains(&fk.child_table) =>
            {
                ForeignKeyAction::Restrict
            }
            other => other,
        })
    }

    /// The keys referring to table `name` whose referenced columns the change of row `old`
    /// → `new` (`None`: deleted) takes away: each key with its parent columns and the old
    /// referenced values.
    fn affected<'k>(
        &mut self,
        name: &str,
        old: &[Cell],
        new: Option<&[Cell]>,
    ) -> Result<Vec<Affected<'k>>>
    where
        's: 'k,
    {
        let fks: &'s [StoredForeignKey] = self.fks;
        let mut out = Vec::new();
        for fk in fks.iter().filter(|f| f.parent_table == name) {
            let parent = self.table(name)?;
            let pcols = cols_of_tags(parent, &fk.parent_columns, &fk.name)?;
            let values = pick(old, &pcols);
            if values.iter().any(|v| matches!(v, Cell::Null)) {
                continue;
            }
            if let Some(new) = new {
                let pl = lookup(parent, &fk.parent_index, &pcols)?;
                if same_values(parent, &pl, &values, &pick(new, &pcols))? {
                    continue;
                }
            }
            out.push((fk, pcols, values));
        }
        Ok(out)
    }

    /// The RESTRICT (NO ACTION, default) keys referring to table `name`: an error when a
    /// child row refers to a value row `key` (`old` → `new`) takes away. `chain`: the tables
    /// changed on the way, `name` last.
    fn restrict(
        &mut self,
        name: &str,
        key: &[u8],
        old: &[Cell],
        new: Option<&[Cell]>,
        chain: &[String],
    ) -> Result<()> {
        let store = self.store;
        for (fk, pcols, values) in self.affected(name, old, new)? {
            if !matches!(
                Self::action(fk, new.is_some(), chain)?,
                ForeignKeyAction::Default | ForeignKeyAction::Restrict | ForeignKeyAction::NoAction
            ) {
                continue;
            }
            let child = self.table(&fk.child_table)?;
            let ccols = cols_of_tags(child, &fk.child_columns, &fk.name)?;
            let cl = lookup(child, &fk.child_index, &ccols)?;
            if matching_rows(store, child, &cl, &values)?.is_empty() {
                continue;
            }
            let child_name = child.name.clone();
            let parent = self.table(name)?;
            let columns: Vec<&str> = pcols
                .iter()
                .map(|&c| parent.schema.columns[c].name.as_str())
                .collect();
            return Err(DoltError::BadValue {
                table: name.to_string(),
                column: columns.join(","),
                reason: format!(
                    "row {}: cannot be {}: rows of table {child_name:?} refer to it through \
                     foreign key {:?}",
                    row_label(parent, key, old),
                    if new.is_some() { "updated" } else { "deleted" },
                    fk.name
                ),
            });
        }
        Ok(())
    }

    /// Carries out the CASCADE and SET NULL keys referring to table `name` for its row
    /// changed from `old` to `new` (`None`: deleted), already written at depth `depth`;
    /// `chain`: the tables changed on the way to it.
    fn actions(
        &mut self,
        name: &str,
        old: &[Cell],
        new: Option<&[Cell]>,
        depth: usize,
        chain: &mut Vec<String>,
    ) -> Result<()> {
        chain.push(name.to_string());
        let done = self.actions_in_chain(name, old, new, depth, chain);
        chain.pop();
        done
    }

    fn actions_in_chain(
        &mut self,
        name: &str,
        old: &[Cell],
        new: Option<&[Cell]>,
        depth: usize,
        chain: &mut Vec<String>,
    ) -> Result<()> {
        let store = self.store;
        for (fk, pcols, values) in self.affected(name, old, new)? {
            let action = Self::action(fk, new.is_some(), chain)?;
            if !matches!(
                action,
                ForeignKeyAction::Cascade | ForeignKeyAction::SetNull
            ) {
                continue;
            }
            let child_name = fk.child_table.clone();
            let (ccols, cl, rows) = {
                let child = self.table(&child_name)?;
                let ccols = cols_of_tags(child, &fk.child_columns, &fk.name)?;
                let cl = lookup(child, &fk.child_index, &ccols)?;
                let rows = matching_rows(store, child, &cl, &values)?;
                (ccols, cl, rows)
            };
            if rows.is_empty() {
                continue;
            }
            let next = depth + 1;
            // The engine's bound: deletes from a table leading to a cycle stop one level
            // earlier (MySQL's behaviour, kept by go-mysql-server).
            let cyclical = new.is_none() && self.is_cyclical(name);
            for (k, _) in rows {
                if next > MAX_DEPTH || (next >= MAX_DEPTH && cyclical) {
                    return Err(DoltError::BadValue {
                        table: child_name.clone(),
                        column: String::new(),
                        reason: format!(
                            "foreign key {:?}: cascading deletes and updates deeper than \
                             {MAX_DEPTH} (MySQL's limit)",
                            fk.name
                        ),
                    });
                }
                // An earlier row's actions may have changed or removed this one.
                let child = self.table(&child_name)?;
                let Some((k, v)) = child.find(store, &k)? else {
                    continue;
                };
                let cells = child.cells_of(store, &k, &v)?;
                if !same_values(child, &cl, &pick(&cells, &ccols), &values)? {
                    continue;
                }
                let changed = match (action, new) {
                    (ForeignKeyAction::Cascade, None) => None,
                    (ForeignKeyAction::Cascade, Some(new)) => {
                        let mut c = cells.clone();
                        for (&cc, &pc) in ccols.iter().zip(&pcols) {
                            c[cc] = new[pc].clone();
                        }
                        Some(c)
                    }
                    _ => {
                        let mut c = cells.clone();
                        for &cc in &ccols {
                            c[cc] = Cell::Null;
                        }
                        Some(c)
                    }
                };
                chain.push(child_name.clone());
                let checked = self.restrict(&child_name, &k, &cells, changed.as_deref(), chain);
                chain.pop();
                checked?;
                let child = self.table(&child_name)?;
                let label = row_label(child, &k, &cells);
                let written = match &changed {
                    None => child.delete_stored(store, &k, &v),
                    Some(c) => child.rewrite_row(store, (&k, &v), c.clone()),
                };
                written.map_err(|e| in_cascade(e, &label, fk, name))?;
                self.actions(&child_name, &cells, changed.as_deref(), next, chain)?;
            }
        }
        Ok(())
    }

    /// Checks the keys of every table changed here on its final rows.
    pub(crate) fn check(&self) -> Result<()> {
        let open = |n: &str| -> Result<EditTable> {
            if let Some((_, now)) = self.open.get(n) {
                return Ok(now.clone());
            }
            let (t, a) = self
                .root_tables
                .iter()
                .find(|(t, _)| t == n)
                .ok_or_else(|| DoltError::NotFound(format!("table {n:?}")))?;
            EditTable::load(self.store, t, *a)
        };
        for (before, now) in self.open.values() {
            check_change(self.store, self.fks, before, now, &open, self.acted)?;
        }
        Ok(())
    }

    /// The tables to store: `name` (the table the change was given) and every other one
    /// whose rows changed.
    pub(crate) fn changed(self, name: &str) -> Vec<EditTable> {
        self.open
            .into_iter()
            .filter(|(n, (before, now))| n == name || before.primary != now.primary)
            .map(|(_, (_, now))| now)
            .collect()
    }
}

/// The tables reached from table `from` by one key or more (parent to child).
fn reach<'f>(fks: &'f [StoredForeignKey], from: &str) -> HashSet<&'f str> {
    let mut seen: HashSet<&'f str> = HashSet::new();
    let mut todo: Vec<&str> = vec![from];
    while let Some(t) = todo.pop() {
        for fk in fks.iter().filter(|f| f.parent_table == t) {
            if seen.insert(fk.child_table.as_str()) {
                todo.push(&fk.child_table);
            }
        }
    }
    seen
}

/// An error of a child row changed by `fk` (parent table `parent`), naming the row by its key
/// and the key that changed it.
fn in_cascade(e: DoltError, row: &str, fk: &StoredForeignKey, parent: &str) -> DoltError {
    e.map_reason(|reason| {
        format!(
            "{} (changed through foreign key {:?} by a change of table {parent:?})",
            reason.replacen("row 0", &format!("row {row}"), 1),
            fk.name
        )
    })
}
