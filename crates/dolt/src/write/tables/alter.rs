//! `ALTER TABLE` on a branch's working root, as Dolt 2.3.1 carries it out: the table's stored
//! schema is read back as a [`TableDef`], each clause ([`AlterOp`]) changes it, and the
//! new schema message is written the way `CREATE TABLE` writes one. Rows are rewritten exactly
//! when Dolt rewrites them (go-mysql-server's `ShouldRewriteTable` and Dolt's
//! `AddColumnToRows`): a dropped column, a column added with a DEFAULT, NOT NULL or anywhere but
//! after the last non-key column, a column moved or given a type stored differently. A column
//! added at the end as nullable leaves the stored rows as they are (they read NULL there). The
//! rows are carried by the schema merge's row rewriter (`schema_merge_rows`), which also keeps,
//! builds and drops secondary indexes; a changed primary key re-inserts every row, and so does
//! any rewrite of a keyless table (its rows are keyed by the hash of their values).
//!
//! Where Dolt differs from MySQL, this follows Dolt:
//! - a text column's new collation rewrites the table, its indexes (and, for a key column, the
//!   primary index) then ordered by it; values equal under it break a primary or unique key;
//! - `DROP COLUMN` drops every index over the column, however many columns it has, and
//!   leaves the index's map in the table, unreferenced;
//! - a column changed in place (no rewrite) writes the schema with each secondary index's
//!   trailing primary-key columns in column order ([`KeyOrder::Columns`]);
//! - `RENAME COLUMN c TO C` is refused ("Column already exists").
//!
//! One deliberate difference: a nullable column added FIRST or AFTER another to a keyless
//! table. Dolt 2.3.1 leaves the stored rows in the old layout and cannot read the table
//! afterwards; this rewrites them, and Dolt reads the result.
//!
//! New columns get their tags as Dolt's `GenerateTagsForNewColumns` picks them: seeded by the
//! table's column kinds, avoiding every tag of the working and head roots.

use std::collections::HashSet;

use prollystore::store::ChunkStore;
use prollystore::Map;
use prollystore_format::sql_type::DEFAULT_COLLATION;

use super::alter_op::{AlterOp, AlterStatement, Position};
use super::column_tags::{auto_generate_tag, kind_of};
use super::table_def::{
    column_type, CheckDef, ColumnDef, ForeignKeyAction, GeneratedDef, IndexDef, KeyOrder, TableDef,
};
use super::table_edit::{copies, Cell, EditTable};
use crate::error::{bad_chunk, DoltError, Result};
use crate::schema::{Schema, SqlType};
use crate::write::constraints::checks::{stored_value, RowChecks};
use crate::write::constraints::foreign_keys::{self, StoredForeignKey};
use crate::write::history::working::{root_tables, set_root_tables, WorkingEdits};
use crate::write::maps::address_map::{address_map_entries, new_address_map};
use crate::write::merges::row_merge::OverlayIo;
use crate::write::merges::row_merge::{ConflictChoice, MergeConflict};
use crate::write::merges::schema_merge::RowRewrites;
use crate::write::merges::schema_merge_rows::{merge_rows, Sides};
use crate::write::storage::overlay::Overlay;
use crate::write::storage::writer::StoreWriter;
use prollystore_format::collation::Collation;
use prollystore_format::message::objects::TableFields;
use prollystore_format::Address;

fn refused(table: &str, why: impl std::fmt::Display) -> DoltError {
    DoltError::Unsupported(format!("ALTER TABLE {table}: {why}"))
}

/// A statement Dolt refuses: about `column` of `table`, or the table itself when `column` is
/// empty (no message names a column `""`).
fn bad(table: &str, column: &str, reason: impl Into<String>) -> DoltError {
    if column.is_empty() {
        return crate::error::bad_input(format!("ALTER TABLE {table}"), reason);
    }
    DoltError::BadValue {
        table: table.to_string(),
        column: column.to_string(),
        reason: reason.into(),
    }
}

/// A stored schema as the definition that writes it again (tags kept).
pub(crate) fn table_def_of(name: &str, s: &Schema) -> Result<TableDef> {
    let table_collation = Collation::from_id(s.collation)
        .map_err(|e| crate::error::collation_stored(format!("the schema of table {name:?}"), e))?;
    let mut columns = Vec::new();
    for c in s.columns.iter().filter(|c| !c.hidden) {
        if c.on_update.is_some() {
            return Err(refused(
                name,
                format!("column {:?} has ON UPDATE (not done yet)", c.name),
            ));
        }
        let mut sql_type = c.sql_type_text.clone();
        // A text column stored without COLLATE has utf8mb4_0900_bin, whatever the table's.
        if table_collation.id() != 309 && names_no_collation(&c.sql_type) {
            sql_type.push_str(" COLLATE ");
            sql_type.push_str(DEFAULT_COLLATION);
        }
        let default = c.default_value.clone().filter(|d| !d.is_empty());
        columns.push(ColumnDef {
            name: c.name.clone(),
            sql_type,
            nullable: c.nullable,
            default: if c.generated { None } else { default.clone() },
            auto_increment: c.auto_increment,
            comment: c.comment.clone().filter(|d| !d.is_empty()),
            tag: Some(c.tag),
            generated: c.generated.then(|| GeneratedDef {
                expr: default.unwrap_or_default(),
                stored: !c.virtual_,
            }),
        });
    }
    let names = |cols: &[usize]| -> Vec<String> {
        cols.iter().map(|&i| s.columns[i].name.clone()).collect()
    };
    let mut indexes = Vec::new();
    for ix in &s.indexes {
        if ix.fulltext {
            return Err(refused(
                name,
                format!("FULLTEXT index {:?} (not done yet)", ix.name),
            ));
        }
        indexes.push(IndexDef {
            name: ix.name.clone(),
            columns: names(&ix.columns),
            unique: ix.unique,
            prefix_lengths: ix.prefix_lengths.clone(),
            spatial: ix.spatial,
        });
    }
    let mut checks = Vec::new();
    for (n, expr, enforced) in &s.checks {
        if !enforced {
            return Err(refused(
                name,
                format!("CHECK {n:?} NOT ENFORCED (not done yet)"),
            ));
        }
        checks.push(CheckDef {
            name: n.clone(),
            expr: expr.clone(),
        });
    }
    Ok(TableDef {
        name: name.to_string(),
        columns,
        primary_key: if s.keyless {
            Vec::new()
        } else {
            names(&s.key_columns)
        },
        indexes,
        checks,
        foreign_keys: Vec::new(),
        collation: Some(table_collation.name().to_string()),
        comment: s.comment.clone().filter(|c| !c.is_empty()),
    })
}

/// What the clauses did besides changing the definition.
#[derive(Default)]
struct Effects {
    /// Dolt rewrites every row.
    rewrite: bool,
    /// The primary key or a column's stored type changed: every row is re-inserted (values
    /// converted), as Dolt's rewrite re-inserts them.
    key_changed: bool,
    /// `AUTO_INCREMENT = n`.
    auto_increment: Option<u64>,
    /// `RENAME TO`.
    rename: Option<String>,
    /// Columns whose stored rows must be checked against the new definition (NOT NULL added,
    /// a type narrowed): new positions.
    check_columns: Vec<String>,
    /// The names of the foreign keys the table declares (an unnamed CHECK's name avoids them).
    fk_names: Vec<String>,
    /// A CHECK constraint was added: every stored row must meet it, as Dolt refuses the
    /// ALTER otherwise.
    check_added: bool,
    /// The last clause changed a column in place (no rewrite: Dolt's `modifyColumn`), so
    /// the schema is written as that path writes it.
    modified_in_place: bool,
}

fn find_column(def: &TableDef, name: &str) -> Result<usize> {
    def.columns
        .iter()
        .position(|c| c.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| bad(&def.name, name, "no such column"))
}

fn insert_at(def: &mut TableDef, col: ColumnDef, at: &Option<Position>) -> Result<usize> {
    let at = match at {
        None => def.columns.len(),
        Some(Position::First) => 0,
        Some(Position::After(a)) => find_column(def, a)? + 1,
    };
    def.columns.insert(at, col);
    Ok(at)
}

fn is_key(def: &TableDef, name: &str) -> bool {
    def.primary_key.iter().any(|k| k.eq_ignore_ascii_case(name))
}

/// True when `name` is the last column that is not part of the primary key.
fn last_non_key(def: &TableDef, name: &str) -> bool {
    def.columns
        .iter()
        .rev()
        .find(|c| !is_key(def, &c.name))
        .is_some_and(|c| c.name.eq_ignore_ascii_case(name))
}

/// A text, ENUM or SET type that names no collation (so is in the default one, whatever the
/// table's).
fn names_no_collation(t: &SqlType) -> bool {
    t.collation().is_some() && t.named_collation().is_none()
}

/// Dolt's `IsTypeChangeCompatible` for the changes this writer does: the same type, or a
/// VARCHAR/VARBINARY made longer, reads the stored rows as they are; any other change rewrites
/// them. A new collation rewrites them too: Dolt counts it as invalidating the secondary
/// indexes (their order changes), and go-mysql-server then rewrites the whole table.
fn needs_rewrite(from: &str, to: &str) -> bool {
    let (from, to) = (SqlType::parse(from), SqlType::parse(to));
    let widened = matches!(from.name(), Some("varchar" | "varbinary")) && from.lengthened_to(&to);
    !(from.same_type(&to) || widened)
}

fn apply(
    def: &mut TableDef,
    op: &AlterOp,
    fx: &mut Effects,
    used: &mut HashSet<u64>,
) -> Result<()> {
    let t = def.name.clone();
    fx.modified_in_place = false;
    match op {
        AlterOp::AddColumn(col, at) => {
            if def
                .columns
                .iter()
                .any(|c| c.name.eq_ignore_ascii_case(&col.name))
            {
                return Err(bad(&t, &col.name, "Duplicate column name"));
            }
            let kind = |c: &ColumnDef| {
                kind_of(&column_type(&t, c)?).ok_or_else(|| {
                    refused(
                        &t,
                        format!("column {:?}: a tag for type {:?}", c.name, c.sql_type),
                    )
                })
            };
            let kinds = def
                .columns
                .iter()
                .map(|c| kind(c).map(|k| k as u8))
                .collect::<Result<Vec<u8>>>()?;
            let tag = auto_generate_tag(used, &t, &kinds, &col.name, kind(col)?);
            used.insert(tag);
            let mut col = col.clone();
            col.tag = Some(tag);
            let rewrite = col.default.is_some()
                || col.generated.is_some()
                || !col.nullable
                || col.auto_increment;
            let name = col.name.clone();
            insert_at(def, col, at)?;
            if rewrite {
                fx.rewrite = true;
                def.comment = None;
            } else if !last_non_key(def, &name) {
                fx.rewrite = true;
            }
        }
        AlterOp::DropColumn(name) => {
            let at = find_column(def, name)?;
            if def.columns.len() == 1 {
                return Err(bad(
                    &t,
                    name,
                    "cannot drop the only column (use DROP TABLE)",
                ));
            }
            if is_key(def, name) {
                return Err(refused(
                    &t,
                    format!("dropping primary-key column {name:?} (not done yet)"),
                ));
            }
            if let Some(c) = def.checks.iter().find(|c| mentions(&c.expr, name)) {
                return Err(bad(
                    &t,
                    name,
                    format!("CHECK {:?} uses the column (drop the check first)", c.name),
                ));
            }
            let gone = def.columns.remove(at).name;
            // Every index over the column goes, however many columns it has (Dolt's
            // `dropIndexesOnDroppedColumn`; MySQL would keep the others). Its map stays in the
            // table, stale, as Dolt leaves it.
            def.indexes
                .retain(|ix| !ix.columns.iter().any(|c| c.eq_ignore_ascii_case(&gone)));
            fx.rewrite = true;
            def.comment = None;
        }
        AlterOp::RenameColumn(from, to) => {
            let at = find_column(def, from)?;
            // Any column of the name, the renamed one too (in any case), as go-mysql-server
            // refuses it.
            if find_column(def, to).is_ok() {
                return Err(bad(&t, to, format!("Column {to:?} already exists")));
            }
            rename_everywhere(def, &def.columns[at].name.clone(), to);
            fx.modified_in_place = true;
        }
        AlterOp::ChangeColumn(old, col, at) => {
            let from = find_column(def, old)?;
            let old_col = def.columns[from].clone();
            if !old_col.name.eq_ignore_ascii_case(&col.name) && find_column(def, &col.name).is_ok()
            {
                return Err(bad(&t, &col.name, "Duplicate column name"));
            }
            if old_col.generated.is_some() || col.generated.is_some() {
                return Err(refused(
                    &t,
                    format!("changing generated column {old:?} (not done yet)"),
                ));
            }
            if col.auto_increment != old_col.auto_increment {
                return Err(refused(
                    &t,
                    format!("adding or removing AUTO_INCREMENT on {old:?} (not done yet)"),
                ));
            }
            let key = is_key(def, &old_col.name);
            let mut new = col.clone();
            new.tag = old_col.tag;
            if key {
                new.nullable = false;
            }
            // The table's collation applies to a text column given without one.
            if let Some(tc) = &def.collation {
                if tc != DEFAULT_COLLATION && names_no_collation(&SqlType::parse(&new.sql_type)) {
                    new.sql_type = format!("{} COLLATE {tc}", new.sql_type);
                }
            }
            if needs_rewrite(&old_col.sql_type, &new.sql_type) {
                fx.rewrite = true;
                fx.key_changed = true;
            } else if old_col.nullable && !new.nullable {
                // go-mysql-server rewrites the table to check the rows.
                fx.check_columns.push(new.name.clone());
            } else {
                fx.modified_in_place = true;
            }
            let new_name = new.name.clone();
            def.columns.remove(from);
            let to = match at {
                None => {
                    def.columns.insert(from, new);
                    from
                }
                Some(_) => insert_at(def, new, at)?,
            };
            if to != from {
                fx.rewrite = true;
                fx.modified_in_place = false;
            }
            if !old_col.name.eq_ignore_ascii_case(&new_name) || old_col.name != new_name {
                let keep = def.columns[to].clone();
                rename_everywhere(def, &old_col.name, &new_name);
                def.columns[to] = keep;
            }
            def.comment = None;
        }
        AlterOp::SetDefault(name, value) => {
            let at = find_column(def, name)?;
            let c = &mut def.columns[at];
            c.default = match value {
                Some(d) => Some(d.for_type(&c.sql_type)?),
                None => None,
            };
            fx.modified_in_place = true;
        }
        AlterOp::AddIndex(ix) => {
            if def
                .indexes
                .iter()
                .any(|x| x.name.eq_ignore_ascii_case(&ix.name))
            {
                return Err(bad(&t, "", format!("Duplicate key name {:?}", ix.name)));
            }
            for c in &ix.columns {
                find_column(def, c)?;
            }
            if ix.spatial {
                return Err(refused(&t, "ADD SPATIAL INDEX (not done yet)"));
            }
            def.indexes.push(ix.clone());
            sort_indexes(def);
        }
        AlterOp::DropIndex(name) => {
            let at = def
                .indexes
                .iter()
                .position(|x| x.name.eq_ignore_ascii_case(name))
                .ok_or_else(|| bad(&t, "", format!("no index named {name:?}")))?;
            def.indexes.remove(at);
        }
        AlterOp::RenameIndex(from, to) => {
            let at = def
                .indexes
                .iter()
                .position(|x| x.name.eq_ignore_ascii_case(from))
                .ok_or_else(|| bad(&t, "", format!("no index named {from:?}")))?;
            if def.indexes.iter().any(|x| x.name.eq_ignore_ascii_case(to)) {
                return Err(bad(&t, "", format!("Duplicate key name {to:?}")));
            }
            def.indexes[at].name = to.clone();
            sort_indexes(def);
        }
        AlterOp::AddCheck(c) => {
            let mut c = c.clone();
            if c.name.is_empty() {
                c.name = CheckDef::dolt_name(&t, &c.expr, |n| {
                    def.checks.iter().any(|x| x.name.eq_ignore_ascii_case(n))
                        || fx.fk_names.iter().any(|f| f.eq_ignore_ascii_case(n))
                });
            }
            if def
                .checks
                .iter()
                .any(|x| x.name.eq_ignore_ascii_case(&c.name))
            {
                return Err(bad(
                    &t,
                    "",
                    format!("a constraint named {:?} exists", c.name),
                ));
            }
            fx.check_added = true;
            def.checks.push(c);
        }
        AlterOp::DropConstraint(name) => {
            if let Some(at) = def
                .checks
                .iter()
                .position(|x| x.name.eq_ignore_ascii_case(name))
            {
                def.checks.remove(at);
            } else {
                return Err(bad(&t, "", format!("no CHECK constraint named {name:?}")));
            }
        }
        AlterOp::AddPrimaryKey(cols) => {
            if !def.primary_key.is_empty() {
                return Err(bad(&t, "", "Multiple primary key defined"));
            }
            for c in cols {
                let at = find_column(def, c)?;
                def.columns[at].nullable = false;
            }
            def.primary_key = cols.clone();
            fx.key_changed = true;
            fx.rewrite = true;
            def.comment = None;
        }
        AlterOp::DropPrimaryKey => {
            if def.primary_key.is_empty() {
                return Err(bad(
                    &t,
                    "",
                    "Can't DROP 'PRIMARY'; check that column/key exists",
                ));
            }
            if def.columns.iter().any(|c| c.auto_increment) {
                return Err(bad(
                    &t,
                    "",
                    "there can be only one auto column and it must be defined as a key",
                ));
            }
            def.primary_key.clear();
            fx.key_changed = true;
            fx.rewrite = true;
            def.comment = None;
        }
        AlterOp::AddForeignKey(_) | AlterOp::DropForeignKey(_) => {
            // Carried out by `alter_root` (they change the root's key collection).
        }
        AlterOp::Comment(c) => def.comment = Some(c.clone()).filter(|c| !c.is_empty()),
        AlterOp::AutoIncrement(n) => {
            if !def.columns.iter().any(|c| c.auto_increment) {
                return Err(refused(
                    &t,
                    "AUTO_INCREMENT = n on a table without an AUTO_INCREMENT column (not done yet)",
                ));
            }
            fx.auto_increment = Some(*n);
        }
        AlterOp::RenameTable(to) => fx.rename = Some(to.clone()),
    }
    Ok(())
}

/// Whether a stored CHECK expression names column `name` (as `` `name` ``).
fn mentions(expr: &str, name: &str) -> bool {
    expr.to_ascii_lowercase()
        .contains(&format!("`{}`", name.to_ascii_lowercase()))
}

/// Renames a column in the key, indexes and checks.
fn rename_everywhere(def: &mut TableDef, from: &str, to: &str) {
    let same = |a: &str| a.eq_ignore_ascii_case(from);
    for c in &mut def.columns {
        if same(&c.name) {
            c.name = to.to_string();
        }
    }
    for k in &mut def.primary_key {
        if same(k) {
            *k = to.to_string();
        }
    }
    for ix in &mut def.indexes {
        for c in &mut ix.columns {
            if same(c) {
                *c = to.to_string();
            }
        }
    }
    for ch in &mut def.checks {
        ch.expr = replace_quoted(&ch.expr, from, to);
    }
    // Generated columns' and expression defaults' references follow, as GMS renames them.
    for c in &mut def.columns {
        if let Some(g) = &mut c.generated {
            g.expr = replace_quoted(&g.expr, from, to);
        }
        if let Some(d) = c.default.as_mut().filter(|d| d.starts_with('(')) {
            *d = replace_quoted(d, from, to);
        }
    }
}

fn replace_quoted(expr: &str, from: &str, to: &str) -> String {
    let mut out = String::new();
    let mut rest = expr;
    while let Some(at) = rest.find('`') {
        let Some(end) = rest[at + 1..].find('`') else {
            break;
        };
        out.push_str(&rest[..at]);
        let ident = &rest[at + 1..at + 1 + end];
        out.push('`');
        out.push_str(if ident.eq_ignore_ascii_case(from) {
            to
        } else {
            ident
        });
        out.push('`');
        rest = &rest[at + end + 2..];
    }
    out.push_str(rest);
    out
}

fn sort_indexes(def: &mut TableDef) {
    def.indexes.sort_by(|a, b| {
        a.name
            .to_ascii_lowercase()
            .cmp(&b.name.to_ascii_lowercase())
    });
}

/// Every tag of the tables of `roots`.
fn tags_of(store: &Overlay<'_>, roots: &[Address]) -> Result<HashSet<u64>> {
    let mut used = HashSet::new();
    for &r in roots {
        for (_, a) in root_tables(store, r)? {
            let t = EditTable::load(store, "", a)?;
            used.extend(t.schema.columns.iter().map(|c| c.tag));
        }
    }
    Ok(used)
}

/// Every row of `old` re-inserted into a new empty table of `schema` (a changed primary key).
fn reinsert(store: &Overlay<'_>, old: &EditTable, schema: &[u8]) -> Result<EditTable> {
    let mut new = EditTable::create(store, &old.name, schema)?;
    let map = Map::new(store, old.primary, old.schema.primary_tuple_schema()?);
    let tree = DoltError::from;
    let position: Vec<Option<usize>> = old
        .schema
        .columns
        .iter()
        .map(|c| {
            // Generated columns are computed again by the insert (from the values they were
            // computed from, which the rewrite keeps).
            (!c.hidden && !c.generated)
                .then(|| new.schema.columns.iter().position(|n| n.tag == c.tag))
                .flatten()
        })
        .collect();
    let mut rows = Vec::new();
    for r in map.iter().map_err(tree)? {
        let (k, v) = r.map_err(tree)?;
        let cells = old.cells_of(store, k, v)?;
        let mut row = Vec::with_capacity(cells.len());
        for (o, (p, c)) in position.iter().zip(cells).enumerate() {
            let Some(p) = *p else { continue };
            let (from, to) = (&old.schema.columns[o], &new.schema.columns[p]);
            let c = match c {
                Cell::Stored(bytes) if from.sql_type_text != to.sql_type_text => {
                    stored_value(from, &bytes)?.map_or(Cell::Null, Cell::Value)
                }
                c => c,
            };
            row.push((p, c));
        }
        let n = if old.schema.keyless { copies(v)? } else { 1 };
        for _ in 0..n {
            rows.push(row.clone());
        }
    }
    new.insert_carried(store, &rows)?;
    // A column made AUTO_INCREMENT here numbered the rows (in stored order, as Dolt does):
    // the counter goes on from them.
    new.auto_increment = new.auto_increment.max(old.auto_increment);
    Ok(new)
}

/// Calls `f` with each stored row of `table` (its number and cells), in key order.
fn for_each_row(
    store: &Overlay<'_>,
    table: &EditTable,
    mut f: impl FnMut(usize, &[Cell]) -> Result<()>,
) -> Result<()> {
    let map = Map::new(store, table.primary, table.schema.primary_tuple_schema()?);
    let tree = DoltError::from;
    for (row, r) in map.iter().map_err(tree)?.enumerate() {
        let (k, v) = r.map_err(tree)?;
        f(row, &table.cells_of(store, k, v)?)?;
    }
    Ok(())
}

/// NOT NULL and lengths of `columns` checked over every row of `table` (after a MODIFY).
fn check_rows(store: &Overlay<'_>, table: &EditTable, columns: &[String]) -> Result<()> {
    let cols: Vec<usize> = columns
        .iter()
        .filter_map(|n| table.schema.columns.iter().position(|c| &c.name == n))
        .collect();
    if cols.is_empty() {
        return Ok(());
    }
    for_each_row(store, table, |row, cells| {
        for &c in &cols {
            let cell = match &cells[c] {
                Cell::Stored(bytes) => {
                    stored_value(&table.schema.columns[c], bytes)?.map_or(Cell::Null, Cell::Value)
                }
                other => other.clone(),
            };
            table.check_cell(row, c, &cell)?;
        }
        Ok(())
    })
}

/// Every row of `table` checked against its enforced CHECK constraints (after one was added).
fn check_constraints(store: &Overlay<'_>, table: &EditTable) -> Result<()> {
    let Some(checks) = RowChecks::for_schema(store.engine, &table.name, &table.schema)? else {
        return Ok(());
    };
    for_each_row(store, table, |row, cells| {
        checks.check(
            &table.name,
            row,
            table.visible_values(checks.visible(), cells)?,
        )
    })
}

impl WorkingEdits {
    /// Runs one `ALTER TABLE` (or `RENAME TABLE`) statement on `branch`'s working root. Nothing
    /// changes when it fails.
    pub(crate) fn alter_table(
        &mut self,
        w: &StoreWriter,
        branch: &str,
        stmt: &AlterStatement,
    ) -> Result<()> {
        let root = self.working_root(w, branch)?;
        let head_root = w.commit_root(w.head_of(branch)?)?;
        let new_root = {
            let store = self.overlay(w);
            alter_root(&store, root, head_root, stmt)?
        };
        self.set_working_root(branch, new_root);
        Ok(())
    }
}

fn alter_root(
    store: &Overlay<'_>,
    root: Address,
    head_root: Address,
    stmt: &AlterStatement,
) -> Result<Address> {
    let tables = root_tables(store, root)?;
    let (name, address) = tables
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(&stmt.table))
        .cloned()
        .ok_or_else(|| DoltError::NotFound(format!("table {:?}", stmt.table)))?;
    let mut fks = foreign_keys::load(store, root)?;
    let fks_before = fks.clone();
    let old = EditTable::load(store, &name, address)?;
    let mut def = table_def_of(&name, &old.schema)?;
    let before = def.clone();
    // The indexes Dolt added for foreign keys keep their mark through the rewrite.
    let mut system: Vec<String> = old
        .schema
        .indexes
        .iter()
        .filter(|ix| ix.system_defined)
        .map(|ix| ix.name.clone())
        .collect();
    let mut used = tags_of(store, &[root, head_root])?;
    let mut fx = Effects {
        fk_names: fks
            .iter()
            .filter(|f| f.child_table == name)
            .map(|f| f.name.clone())
            .collect(),
        ..Effects::default()
    };
    let mut added_fks = Vec::new();
    // Indexes Dolt added for foreign keys that a user's index over the same columns replaced.
    let mut replaced: Vec<String> = Vec::new();
    let mut dropped_indexes = Vec::new();
    for op in &stmt.ops {
        match op {
            AlterOp::AddForeignKey(fk) => added_fks.push(fk.clone()),
            AlterOp::DropForeignKey(n) => drop_foreign_key(&name, n, &mut fks)?,
            AlterOp::DropConstraint(n)
                if !def.checks.iter().any(|c| c.name.eq_ignore_ascii_case(n))
                    && fks
                        .iter()
                        .any(|f| f.child_table == name && f.name.eq_ignore_ascii_case(n)) =>
            {
                drop_foreign_key(&name, n, &mut fks)?
            }
            _ => {
                let prev = def.clone();
                if let AlterOp::DropColumn(n) = op {
                    // Before the other checks of a dropped column, as GMS makes it.
                    column_in_no_key(&name, &prev, n, &fks)?;
                }
                // An index over the same columns as an existing one (Dolt's
                // `GetIndexByColumnNames`): one Dolt added for a foreign key is replaced, and
                // the keys that used the existing index use the new one (Dolt moves them for
                // a user's index too).
                let same_columns = match op {
                    AlterOp::AddIndex(ix) => prev
                        .indexes
                        .iter()
                        .find(|x| {
                            x.columns.len() == ix.columns.len()
                                && tags(&prev, &x.columns) == tags(&prev, &ix.columns)
                        })
                        .map(|x| x.name.clone()),
                    _ => None,
                };
                if let Some(old) = &same_columns {
                    if let Some(at) = system.iter().position(|s| s == old) {
                        system.remove(at);
                        def.indexes.retain(|x| &x.name != old);
                        replaced.push(old.clone());
                    }
                }
                apply(&mut def, op, &mut fx, &mut used)?;
                follow_foreign_keys(&name, &prev, &def, op, &mut fks)?;
                if let (Some(old), AlterOp::AddIndex(ix)) = (&same_columns, op) {
                    for f in fks.iter_mut() {
                        if f.child_table == name && &f.child_index == old {
                            f.child_index = ix.name.clone();
                        }
                        if f.parent_table == name && &f.parent_index == old {
                            f.parent_index = ix.name.clone();
                        }
                    }
                }
                match op {
                    AlterOp::DropIndex(n) => dropped_indexes.push(n.clone()),
                    AlterOp::RenameIndex(from, to) => {
                        for s in system.iter_mut().filter(|s| s.eq_ignore_ascii_case(from)) {
                            *s = to.clone();
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    // New keys: named, and given the index Dolt adds when none serves them.
    let mut fk_names = Vec::new();
    if !added_fks.is_empty() {
        def.foreign_keys = added_fks;
        let (names, added) = foreign_keys::prepare_new_table(&mut def, &fks)?;
        fk_names = names;
        system.extend(added);
    }
    system.retain(|s| def.indexes.iter().any(|ix| &ix.name == s));
    let new_name = fx.rename.clone().unwrap_or_else(|| name.clone());
    if let Some(to) = &fx.rename {
        if !to.eq_ignore_ascii_case(&name) && tables.iter().any(|(n, _)| n.eq_ignore_ascii_case(to))
        {
            return Err(bad(to, "", "a table of this name exists"));
        }
        rename_in_foreign_keys(&name, &stmt.table, to, &mut fks);
    }
    let new_address = if def_equal(&def, &before) && !fx.modified_in_place {
        address
    } else {
        let order = if fx.modified_in_place {
            KeyOrder::Columns
        } else {
            KeyOrder::PrimaryKey
        };
        let schema = def.schema_chunk_as_written(&mut used.clone(), &system, order)?;
        // A keyless table's rows are keyed by the hash of their values: a rewrite that
        // changes the values moves every row.
        let table = if fx.key_changed || (fx.rewrite && old.schema.keyless) {
            let t = reinsert(store, &old, &schema)?;
            t.store(store)?
        } else {
            let kept: HashSet<String> = def
                .indexes
                .iter()
                .filter(|ix| {
                    before.indexes.iter().any(|b| {
                        b.name == ix.name
                            && b.unique == ix.unique
                            && b.prefix_lengths == ix.prefix_lengths
                            && tags(&before, &b.columns) == tags(&def, &ix.columns)
                    })
                })
                .map(|ix| ix.name.clone())
                .collect();
            let rewrites = RowRewrites {
                left_rewrite: fx.rewrite,
                right_rewrite: false,
                left_change: fx.rewrite,
                right_change: false,
                alter: true,
            };
            let sides = Sides {
                base: address,
                ours: address,
                theirs: address,
            };
            let mut conflicts: Vec<MergeConflict> = Vec::new();
            let chunk = merge_rows(
                store,
                &name,
                &sides,
                &schema,
                rewrites,
                &kept,
                ConflictChoice::Stop,
                &mut conflicts,
            )?;
            match (chunk, conflicts.first()) {
                (Some(chunk), None) => store.put(&chunk)?,
                (_, Some(c)) => {
                    return Err(bad(
                        &name,
                        "",
                        format!(
                            "Duplicate entry for key ({}): {}",
                            c.key.join(","),
                            c.reason
                        ),
                    ))
                }
                (None, None) => return Err(refused(&name, "the rows could not be carried")),
            }
        };
        let mut t = EditTable::load(store, &new_name, table)?;
        check_rows(store, &t, &fx.check_columns)?;
        if fx.check_added {
            check_constraints(store, &t)?;
        }
        if let Some(n) = fx.auto_increment {
            t.auto_increment = n;
            t.store(store)?
        } else {
            table
        }
    };
    let new_address = match fx.auto_increment {
        Some(n) if new_address == address => {
            let mut t = EditTable::load(store, &new_name, address)?;
            t.auto_increment = n;
            t.store(store)?
        }
        _ => new_address,
    };
    let forget: Vec<String> = stmt
        .ops
        .iter()
        .filter_map(|op| match op {
            AlterOp::DropIndex(n) | AlterOp::RenameIndex(n, _) if !fx.rewrite => Some(n.clone()),
            _ => None,
        })
        .chain(replaced)
        .collect();
    let new_address = keep_stale_indexes(store, address, new_address, &forget)?;
    if !fk_names.is_empty() || !dropped_indexes.is_empty() {
        let child = EditTable::load(store, &new_name, new_address)?;
        for ix in &dropped_indexes {
            foreign_keys::reresolve_parent_index(&mut fks, &child, ix)?;
        }
        let open = |n: &str| -> Result<EditTable> {
            let (tn, a) = tables
                .iter()
                .find(|(t, _)| t.eq_ignore_ascii_case(n))
                .ok_or_else(|| {
                    DoltError::NotFound(format!("table {n:?} (referenced by a foreign key)"))
                })?;
            EditTable::load(store, tn, *a)
        };
        for fk in foreign_keys::resolve_new(&def, &fk_names, &child, &open)? {
            let parent = if fk.parent_table == child.name {
                child.clone()
            } else {
                open(&fk.parent_table)?
            };
            foreign_keys::check_rows_have_parents(store, &fk, &child, &parent)?;
            if fks
                .iter()
                .any(|f| f.name.eq_ignore_ascii_case(&fk.name) && f.child_table == fk.child_table)
            {
                return Err(bad(
                    &name,
                    "",
                    format!("duplicate foreign key name {:?}", fk.name),
                ));
            }
            fks.push(fk);
        }
    }
    let mut changes: Vec<(&str, Option<Address>)> = Vec::new();
    if new_name != name {
        changes.push((&name, None));
    }
    changes.push((&new_name, Some(new_address)));
    let new_root = set_root_tables(store, root, &changes)?;
    if fks == fks_before {
        return Ok(new_root);
    }
    foreign_keys::set_root_foreign_keys(store, new_root, &fks)
}

/// `DROP FOREIGN KEY name` of table `table`.
fn drop_foreign_key(table: &str, name: &str, fks: &mut Vec<StoredForeignKey>) -> Result<()> {
    let at = fks
        .iter()
        .position(|f| f.child_table == table && f.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            bad(
                table,
                "",
                format!("foreign key {name:?} not found on table {table:?}"),
            )
        })?;
    fks.remove(at);
    Ok(())
}

/// The tag of column `name` of `def`.
fn tag_of(def: &TableDef, name: &str) -> Option<u64> {
    def.columns
        .iter()
        .find(|c| c.name.eq_ignore_ascii_case(name))
        .and_then(|c| c.tag)
}

/// The keys of `fks` that use column `tag` of table `table` (as the referencing or the
/// referenced side).
fn keys_using<'a>(
    fks: &'a [StoredForeignKey],
    table: &'a str,
    tag: u64,
) -> impl Iterator<Item = &'a StoredForeignKey> + 'a {
    fks.iter().filter(move |f| {
        (f.child_table == table && f.child_columns.contains(&tag))
            || (f.parent_table == table && f.parent_columns.contains(&tag))
    })
}

/// A column a foreign key uses may not be dropped.
fn column_in_no_key(
    table: &str,
    def: &TableDef,
    column: &str,
    fks: &[StoredForeignKey],
) -> Result<()> {
    let Some(tag) = tag_of(def, column) else {
        return Ok(());
    };
    match keys_using(fks, table, tag).next() {
        Some(f) => Err(bad(
            table,
            column,
            format!(
                "cannot drop column `{column}` as it is used in foreign key `{}`",
                f.name
            ),
        )),
        None => Ok(()),
    }
}

/// True when a column a key uses may change from type `from` to `to`, as GMS allows it: the
/// same type, or a CHAR/VARCHAR/BINARY/VARBINARY made no shorter in the same collation.
fn fk_type_change_allowed(from: &str, to: &str) -> bool {
    let (from, to) = (SqlType::parse(from), SqlType::parse(to));
    from.same_type(&to) || from.lengthened_to(&to)
}

/// What clause `op` (which turned `prev` into `def`) does to the foreign keys of `table`, as
/// Dolt and GMS treat them: a column a key uses may not change type (but for a string made
/// longer), nor become NOT NULL under a SET NULL key; a renamed column is
/// renamed in the keys; an index a key needs may not be dropped; a dropped primary key moves
/// the keys that reference it to another index (or is refused when none serves).
fn follow_foreign_keys(
    table: &str,
    prev: &TableDef,
    def: &TableDef,
    op: &AlterOp,
    fks: &mut [StoredForeignKey],
) -> Result<()> {
    if !fks
        .iter()
        .any(|f| f.child_table == table || f.parent_table == table)
    {
        return Ok(());
    }
    let renamed = |fks: &mut [StoredForeignKey], tag: u64, to: &str| {
        for f in fks.iter_mut() {
            if f.child_table == table {
                for (i, _) in f
                    .child_columns
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| **t == tag)
                {
                    if let Some(u) = f.unresolved_child.as_mut().and_then(|u| u.get_mut(i)) {
                        *u = to.to_string();
                    }
                }
            }
            if f.parent_table == table {
                for (i, _) in f
                    .parent_columns
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| **t == tag)
                {
                    if let Some(u) = f.unresolved_parent.as_mut().and_then(|u| u.get_mut(i)) {
                        *u = to.to_string();
                    }
                }
            }
        }
    };
    match op {
        AlterOp::RenameColumn(from, to) => {
            if let Some(tag) = tag_of(prev, from) {
                if keys_using(fks, table, tag).next().is_some() {
                    renamed(fks, tag, to);
                }
            }
        }
        AlterOp::ChangeColumn(old, col, _) => {
            let Some(tag) = tag_of(prev, old) else {
                return Ok(());
            };
            if keys_using(fks, table, tag).next().is_none() {
                return Ok(());
            }
            let (Some(a), Some(b)) = (
                prev.columns.iter().find(|c| c.tag == Some(tag)),
                def.columns.iter().find(|c| c.tag == Some(tag)),
            ) else {
                return Ok(());
            };
            if !fk_type_change_allowed(&a.sql_type, &b.sql_type) {
                return Err(bad(
                    table,
                    old,
                    format!(
                        "unable to change type of column `{old}` as it is used by foreign keys"
                    ),
                ));
            }
            if !b.nullable {
                let set_null = |code: u8| code == ForeignKeyAction::SetNull.code();
                if let Some(f) = fks.iter().find(|f| {
                    f.child_table == table
                        && f.child_columns.contains(&tag)
                        && (set_null(f.on_update) || set_null(f.on_delete))
                }) {
                    return Err(bad(
                        table,
                        old,
                        format!(
                            "column `{old}` cannot be NOT NULL: foreign key `{}` sets it to NULL (SET NULL)",
                            f.name
                        ),
                    ));
                }
            }
            if a.name != col.name {
                renamed(fks, tag, &b.name);
            }
        }
        AlterOp::DropIndex(n) => {
            let pos = |names: &[String]| -> Vec<Option<u64>> {
                names.iter().map(|c| tag_of(def, c)).collect()
            };
            let pk = pos(&def.primary_key);
            let serving: Vec<Vec<Option<u64>>> = def
                .indexes
                .iter()
                .filter(|ix| !ix.spatial && ix.prefix_lengths.iter().all(|&p| p == 0))
                .map(|ix| pos(&ix.columns))
                .collect();
            let serves = |cols: &[u64], extended: bool| {
                let cols: Vec<Option<u64>> = cols.iter().map(|&c| Some(c)).collect();
                let prefix =
                    |ix: &[Option<u64>]| ix.len() >= cols.len() && ix[..cols.len()] == cols[..];
                prefix(&pk)
                    || serving.iter().any(|ix| {
                        prefix(ix)
                            || (extended && {
                                let mut x = ix.clone();
                                x.extend(pk.iter().copied());
                                prefix(&x)
                            })
                    })
            };
            for f in fks.iter() {
                let needs = (f.child_table == table && !serves(&f.child_columns, false))
                    || (f.parent_table == table && !serves(&f.parent_columns, true));
                if needs {
                    return Err(bad(
                        table,
                        "",
                        format!(
                            "cannot drop index: `{n}` is used by foreign key `{}`",
                            f.name
                        ),
                    ));
                }
            }
        }
        AlterOp::DropPrimaryKey => {
            // Dolt (go-mysql-server) refuses to drop the primary key of a key's child table
            // when the key uses the primary key, or no other index serves the key's columns.
            let served = |cols: &[u64]| {
                def.indexes
                    .iter()
                    .filter(|ix| !ix.spatial && ix.prefix_lengths.iter().all(|&p| p == 0))
                    .any(|ix| {
                        ix.columns.len() >= cols.len()
                            && ix.columns[..cols.len()]
                                .iter()
                                .zip(cols)
                                .all(|(c, &t)| tag_of(def, c) == Some(t))
                    })
            };
            let needed = |f: &StoredForeignKey| {
                bad(
                    table,
                    "",
                    format!(
                        "can't drop index 'PRIMARY': needed in foreign key constraint {}",
                        f.name
                    ),
                )
            };
            if let Some(f) = fks.iter().find(|f| {
                f.child_table == table && (f.child_index.is_empty() || !served(&f.child_columns))
            }) {
                return Err(needed(f));
            }
            // A key that references the primary key moves to the index Dolt's
            // `backupFkcIndexesForPkDrop` picks: one whose first columns are all the primary
            // key's; else the drop is refused.
            let backup = backup_index(prev);
            for f in fks
                .iter_mut()
                .filter(|f| f.parent_table == table && f.parent_index.is_empty())
            {
                match &backup {
                    Some(ix) => f.parent_index = ix.clone(),
                    None => return Err(needed(f)),
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// Dolt's `FindIndexWithPrefix` over the primary key's columns of `def`: among the indexes
/// whose first columns are the key's columns (in any order), one of exactly the key's length,
/// else the longest; then a unique one; then the first by name.
fn backup_index(def: &TableDef) -> Option<String> {
    let pk: Vec<String> = def
        .primary_key
        .iter()
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let n = pk.len();
    let mut found: Vec<&IndexDef> = def
        .indexes
        .iter()
        .filter(|ix| {
            let cols: Vec<String> = ix.columns.iter().map(|c| c.to_ascii_lowercase()).collect();
            cols.len() >= n && pk.iter().all(|c| cols[..n].contains(c))
        })
        .collect();
    found.sort_by(|a, b| {
        let (la, lb) = (a.columns.len(), b.columns.len());
        (lb == n)
            .cmp(&(la == n))
            .then(lb.cmp(&la))
            .then(b.unique.cmp(&a.unique))
            .then(a.name.cmp(&b.name))
    });
    found.first().map(|ix| ix.name.clone())
}

/// RENAME TABLE `from` (spelled `spelled` in the statement) TO `to` in the keys: their
/// tables, and the names Dolt generated for the table's own keys (`from_ibfk_n`).
fn rename_in_foreign_keys(from: &str, spelled: &str, to: &str, fks: &mut [StoredForeignKey]) {
    let prefix = format!("{spelled}_ibfk_");
    for f in fks.iter_mut() {
        if f.child_table == from {
            f.child_table = to.to_string();
            if f.name.len() > prefix.len() && f.name.starts_with(&prefix) {
                f.name = format!("{to}_ibfk_{}", &f.name[prefix.len()..]);
            }
        }
        if f.parent_table == from {
            f.parent_table = to.to_string();
        }
    }
}

/// Table `new` with the index trees of table `old` that Dolt keeps in the index map though
/// the new schema has no such index (`forget`: those the statement dropped by name).
fn keep_stale_indexes(
    store: &Overlay<'_>,
    old: Address,
    new: Address,
    forget: &[String],
) -> Result<Address> {
    let read = |a: Address| -> Result<Vec<u8>> {
        Ok(store.get(&a)?.ok_or(DoltError::MissingChunk(a))?.to_vec())
    };
    let (old_chunk, new_chunk) = (read(old)?, read(new)?);
    let of = TableFields::decode(&old_chunk).map_err(|e| bad_chunk(old, e.to_string()))?;
    let nf = TableFields::decode(&new_chunk).map_err(|e| bad_chunk(new, e.to_string()))?;
    let mut io = OverlayIo(store);
    let mut entries = address_map_entries(&io, nf.secondary_indexes)?;
    let before = entries.len();
    for (name, a) in address_map_entries(&io, of.secondary_indexes)? {
        let text = String::from_utf8_lossy(&name);
        if !entries.iter().any(|(n, _)| *n == name)
            && !forget.iter().any(|f| f.eq_ignore_ascii_case(&text))
        {
            entries.push((name, a));
        }
    }
    if entries.len() == before {
        return Ok(new);
    }
    let map = new_address_map(&mut io, &entries)?;
    let chunk = TableFields {
        secondary_indexes: &map,
        ..nf
    }
    .encode()
    .map_err(|e| crate::error::encode("table with its kept indexes", e))?;
    Ok(store.put(&chunk)?)
}

fn tags(def: &TableDef, cols: &[String]) -> Vec<Option<u64>> {
    cols.iter()
        .map(|c| {
            def.columns
                .iter()
                .find(|x| x.name.eq_ignore_ascii_case(c))
                .and_then(|x| x.tag)
        })
        .collect()
}

/// The same stored schema (the keys a definition declares are kept in the root, not in it).
fn def_equal(a: &TableDef, b: &TableDef) -> bool {
    let strip = |d: &TableDef| TableDef {
        foreign_keys: Vec::new(),
        ..d.clone()
    };
    format!("{:?}", strip(a)) == format!("{:?}", strip(b))
}
