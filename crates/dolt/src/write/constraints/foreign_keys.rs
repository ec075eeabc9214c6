//! Foreign keys as Dolt keeps them: the root value's `ForeignKeyCollection` (keys sorted by
//! name, columns by tag, the indexes they use by name), new keys resolved as Dolt's
//! `CREATE TABLE` resolves them (generated names, the index Dolt adds on the referencing
//! columns), and the checks a row change must pass (a child row needs its parent; a parent
//! row still referenced may not go). Only tables named in a key pay for these checks.

use prollystore::store::ChunkStore;
use prollystore::tuples::TupleSchema;
use prollystore::Map;
use prollystore_format::collation::Collation;
use prollystore_format::message::objects::{
    ForeignKeyCollectionFields, ForeignKeyFields, RootValueFields,
};
use prollystore_format::tuple::{Tuple, TupleBuilder, TupleDesc};
use prollystore_format::Address;

use crate::error::{bad_chunk, DoltError, Result};
use crate::schema::{key_encoding, Schema, SqlType};
use crate::sql_value::SqlValue;
use crate::write::merges::row_merge::{key_text, row_changes};
use crate::write::storage::overlay::Overlay;
use crate::write::tables::table_def::{ForeignKeyAction, IndexDef, TableDef};
use crate::write::tables::table_edit::{copies, index_schema, Cell, EditTable};

/// One stored foreign key (owned fields of `serial.ForeignKey`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StoredForeignKey {
    pub name: String,
    pub child_table: String,
    pub child_index: String,
    pub child_columns: Vec<u64>,
    pub parent_table: String,
    pub parent_index: String,
    pub parent_columns: Vec<u64>,
    pub on_update: u8,
    pub on_delete: u8,
    pub unresolved_child: Option<Vec<String>>,
    pub unresolved_parent: Option<Vec<String>>,
    pub is_not_valid: bool,
    pub match_type: u8,
}

/// [`DoltError::BadInput`] for a foreign key definition that cannot be added.
fn bad_foreign_key(what: String) -> DoltError {
    crate::error::bad_input("FOREIGN KEY", what)
}

/// The foreign keys of root value `root` (none when its collection address is zero).
pub(crate) fn load(store: &Overlay<'_>, root: Address) -> Result<Vec<StoredForeignKey>> {
    let chunk = store.get(&root)?.ok_or(DoltError::MissingChunk(root))?;
    let r = RootValueFields::decode(chunk).map_err(|e| bad_chunk(root, e.to_string()))?;
    let at = Address(r.foreign_key_addr);
    if at.is_zero() {
        return Ok(Vec::new());
    }
    let chunk = store.get(&at)?.ok_or(DoltError::MissingChunk(at))?;
    decode_collection(chunk, at)
}

/// The keys of the foreign-key collection chunk `chunk` (at address `at`).
pub(crate) fn decode_collection(chunk: &[u8], at: Address) -> Result<Vec<StoredForeignKey>> {
    let c = ForeignKeyCollectionFields::decode(chunk).map_err(|e| bad_chunk(at, e.to_string()))?;
    let owned = |v: &Option<Vec<&str>>| {
        v.as_ref()
            .map(|v| v.iter().map(|s| s.to_string()).collect())
    };
    Ok(c.foreign_keys
        .iter()
        .map(|f| StoredForeignKey {
            name: f.name.into(),
            child_table: f.child_table.into(),
            child_index: f.child_index.into(),
            child_columns: f.child_columns.clone(),
            parent_table: f.parent_table.into(),
            parent_index: f.parent_index.into(),
            parent_columns: f.parent_columns.clone(),
            on_update: f.on_update,
            on_delete: f.on_delete,
            unresolved_child: owned(&f.unresolved_child_columns),
            unresolved_parent: owned(&f.unresolved_parent_columns),
            is_not_valid: f.is_not_valid,
            match_type: f.match_type,
        })
        .collect())
}

/// The collection chunk of `fks`, sorted by name as Dolt's `AllKeys` writes them.
pub(crate) fn encode_collection(fks: &[StoredForeignKey]) -> Result<Vec<u8>> {
    let mut sorted: Vec<&StoredForeignKey> = fks.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let fields = ForeignKeyCollectionFields {
        foreign_keys: sorted
            .iter()
            .map(|f| ForeignKeyFields {
                name: &f.name,
                child_table: &f.child_table,
                child_index: &f.child_index,
                child_columns: f.child_columns.clone(),
                parent_table: &f.parent_table,
                parent_index: &f.parent_index,
                parent_columns: f.parent_columns.clone(),
                on_update: f.on_update,
                on_delete: f.on_delete,
                unresolved_child_columns: f
                    .unresolved_child
                    .as_ref()
                    .map(|v| v.iter().map(String::as_str).collect()),
                unresolved_parent_columns: f
                    .unresolved_parent
                    .as_ref()
                    .map(|v| v.iter().map(String::as_str).collect()),
                is_not_valid: f.is_not_valid,
                match_type: f.match_type,
            })
            .collect(),
    };
    fields
        .encode()
        .map_err(|e| crate::error::encode("foreign keys", e))
}

/// Root value `root` with its foreign-key collection replaced by `fks` (sorted by name, as
/// Dolt's `AllKeys` writes them; none: the zero address, as Dolt's `SetForeignKeyMap`);
/// returns the new root's address.
pub(crate) fn set_root_foreign_keys(
    store: &Overlay<'_>,
    root: Address,
    fks: &[StoredForeignKey],
) -> Result<Address> {
    // An empty collection is not written: the root then holds the zero address.
    let fk_address = if fks.is_empty() {
        Address::ZERO
    } else {
        store.put(&encode_collection(fks)?)?
    };
    let base = store.get(&root)?.ok_or(DoltError::MissingChunk(root))?;
    let mut r = RootValueFields::decode(base).map_err(|e| bad_chunk(root, e.to_string()))?;
    r.foreign_key_addr = fk_address.0;
    let new = r
        .encode()
        .map_err(|e| crate::error::encode("root value", e))?;
    Ok(store.put(&new)?)
}

/// The column position (in `schema.columns`) of each name, case-insensitively.
fn positions(schema: &Schema, table: &str, names: &[String]) -> Result<Vec<usize>> {
    names
        .iter()
        .map(|n| {
            schema
                .columns
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(n))
                .ok_or_else(|| bad_foreign_key(format!("table {table:?} has no column {n:?}")))
        })
        .collect()
}

/// Dolt's `FindIndexWithPrefix`: the secondary index whose leading columns are `cols` (in
/// any order), preferring one of exactly that length, then longer ones, unique ones, and
/// names in order; `""` (the primary key) when none.
fn index_for(schema: &Schema, cols: &[usize]) -> String {
    let mut found: Vec<&crate::schema::Index> = schema
        .indexes
        .iter()
        .filter(|ix| {
            ix.columns.len() >= cols.len()
                && ix.prefix_lengths.is_empty()
                && cols.iter().all(|c| ix.columns[..cols.len()].contains(c))
        })
        .collect();
    let n = cols.len();
    found.sort_by(|a, b| {
        let (la, lb) = (a.columns.len(), b.columns.len());
        (lb == n)
            .cmp(&(la == n))
            .then(lb.cmp(&la))
            .then(b.unique.cmp(&a.unique))
            .then(a.name.cmp(&b.name))
    });
    found.first().map(|ix| ix.name.clone()).unwrap_or_default()
}

/// True when `cols`, in this order, lead the primary key or one of the indexes (GMS's
/// `FindFKIndexWithPrefix`: no Dolt-added index is needed then).
fn has_ordered_prefix(pk: &[usize], indexes: &[Vec<usize>], cols: &[usize]) -> bool {
    std::iter::once(pk)
        .chain(indexes.iter().map(Vec::as_slice))
        .any(|ix| ix.len() >= cols.len() && ix[..cols.len()] == *cols)
}

/// The keys `def` declares, named as Dolt names them, with the index Dolt adds for keys no
/// index serves added to `def.indexes` (kept in name order). Returns the key names, in
/// declaration order, and the names of the added indexes.
pub(crate) fn prepare_new_table(
    def: &mut TableDef,
    existing: &[StoredForeignKey],
) -> Result<(Vec<String>, Vec<String>)> {
    let mut added = Vec::new();
    let t = def.name.clone();
    let prefix = format!("{}_ibfk_", t.to_ascii_lowercase());
    let mut names: Vec<String> = Vec::new();
    let col_pos = |def: &TableDef, n: &str| {
        def.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(n))
            .ok_or_else(|| bad_foreign_key(format!("table {t:?} has no column {n:?}")))
    };
    for fk in def.foreign_keys.clone() {
        if fk.columns.is_empty() || fk.columns.len() != fk.parent_columns.len() {
            return Err(bad_foreign_key(format!(
                "table {t:?}: a foreign key needs as many referenced columns as columns"
            )));
        }
        let generated = fk.name.is_none();
        let name = match &fk.name {
            Some(n) => {
                let taken = existing.iter().any(|e| {
                    e.child_table.eq_ignore_ascii_case(&t) && e.name.eq_ignore_ascii_case(n)
                }) || names.iter().any(|e| e.eq_ignore_ascii_case(n));
                if taken {
                    return Err(bad_foreign_key(format!(
                        "table {t:?}: duplicate foreign key name {n:?}"
                    )));
                }
                n.clone()
            }
            None => {
                // The highest number among this table's keys, declared before or now.
                let highest = names
                    .iter()
                    .map(String::as_str)
                    .chain(
                        existing
                            .iter()
                            .filter(|e| e.child_table.eq_ignore_ascii_case(&t))
                            .map(|e| e.name.as_str()),
                    )
                    .filter_map(|n| n.strip_prefix(&prefix)?.parse::<u32>().ok())
                    .max()
                    .unwrap_or(0);
                format!("{prefix}{}", highest + 1)
            }
        };
        let cols = fk
            .columns
            .iter()
            .map(|n| col_pos(def, n))
            .collect::<Result<Vec<_>>>()?;
        let pk = def
            .primary_key
            .iter()
            .map(|n| col_pos(def, n))
            .collect::<Result<Vec<_>>>()?;
        // An index with a prefix length never serves a key (GMS passes over them).
        let indexes = def
            .indexes
            .iter()
            .filter(|ix| ix.prefix_lengths.iter().all(|&p| p == 0))
            .map(|ix| ix.columns.iter().map(|n| col_pos(def, n)).collect())
            .collect::<Result<Vec<Vec<usize>>>>()?;
        if !has_ordered_prefix(&pk, &indexes, &cols) {
            let taken = |n: &str| {
                n.eq_ignore_ascii_case("PRIMARY")
                    || def.indexes.iter().any(|ix| ix.name.eq_ignore_ascii_case(n))
            };
            let index_name = if generated {
                let first = def.columns[cols[0]].name.clone();
                let mut n = first.clone();
                let mut i = 2;
                while taken(&n) {
                    n = format!("{first}_{i}");
                    i += 1;
                }
                n
            } else if taken(&name) {
                return Err(bad_foreign_key(format!(
                    "table {t:?}: duplicate key name {name:?}"
                )));
            } else {
                name.clone()
            };
            added.push(index_name.clone());
            def.indexes.push(IndexDef {
                name: index_name,
                columns: cols.iter().map(|&c| def.columns[c].name.clone()).collect(),
                unique: false,
                prefix_lengths: Vec::new(),
                spatial: false,
            });
        }
        names.push(name);
    }
    if !added.is_empty() {
        def.indexes.sort_by_key(|ix| ix.name.to_ascii_lowercase());
    }
    Ok((names, added))
}

/// The stored keys of new table `child` (just created from `def`, keys named `names`);
/// `parent_of` opens a referenced table other than `child`.
pub(crate) fn resolve_new(
    def: &TableDef,
    names: &[String],
    child: &EditTable,
    parent_of: &dyn Fn(&str) -> Result<EditTable>,
) -> Result<Vec<StoredForeignKey>> {
    let mut out = Vec::new();
    for (fk, name) in def.foreign_keys.iter().zip(names) {
        let cols = positions(&child.schema, &child.name, &fk.columns)?;
        let self_ref = fk.parent_table.eq_ignore_ascii_case(&child.name);
        let parent_owned;
        let parent = if self_ref {
            child
        } else {
            parent_owned = parent_of(&fk.parent_table)?;
            &parent_owned
        };
        let pcols = positions(&parent.schema, &parent.name, &fk.parent_columns)?;
        for (&c, &p) in cols.iter().zip(&pcols) {
            let (cc, pc) = (&child.schema.columns[c], &parent.schema.columns[p]);
            if !comparable_types(&cc.sql_type, &pc.sql_type) {
                return Err(bad_foreign_key(format!(
                    "foreign key {name:?}: column {:?} ({}) and referenced column {:?} ({}) differ in type",
                    cc.name, cc.sql_type_text, pc.name, pc.sql_type_text
                )));
            }
            if cc.encoding.is_adaptive() {
                return Err(bad_foreign_key(format!(
                    "foreign key {name:?}: TEXT/BLOB column {:?} cannot be in a foreign key",
                    cc.name
                )));
            }
            let set_null = fk.on_delete == ForeignKeyAction::SetNull
                || fk.on_update == ForeignKeyAction::SetNull;
            if set_null && !cc.nullable {
                return Err(bad_foreign_key(format!(
                    "foreign key {name:?}: SET NULL on NOT NULL column {:?}",
                    cc.name
                )));
            }
        }
        let ordered_pk = parent.schema.key_columns.len() >= pcols.len()
            && parent.schema.key_columns[..pcols.len()] == pcols[..];
        // GMS looks for the referenced columns among the indexes extended by the primary key.
        let ordered_ix = parent.schema.indexes.iter().any(|ix| {
            ix.prefix_lengths.is_empty()
                && !ix.spatial
                && ix.key_columns.len() >= pcols.len()
                && ix.key_columns[..pcols.len()] == pcols[..]
        });
        if !ordered_pk && !ordered_ix {
            return Err(bad_foreign_key(format!(
                "foreign key {name:?}: table {:?} has no index starting with the referenced columns",
                parent.name
            )));
        }
        let tags = |s: &Schema, cs: &[usize]| cs.iter().map(|&c| s.columns[c].tag).collect();
        out.push(StoredForeignKey {
            name: name.clone(),
            child_table: child.name.clone(),
            child_index: index_for(&child.schema, &cols),
            child_columns: tags(&child.schema, &cols),
            parent_table: parent.name.clone(),
            parent_index: index_for(&parent.schema, &pcols),
            parent_columns: tags(&parent.schema, &pcols),
            on_update: fk.on_update.code(),
            on_delete: fk.on_delete.code(),
            unresolved_child: Some(
                cols.iter()
                    .map(|&c| child.schema.columns[c].name.clone())
                    .collect(),
            ),
            unresolved_parent: Some(
                pcols
                    .iter()
                    .map(|&c| parent.schema.columns[c].name.clone())
                    .collect(),
            ),
            is_not_valid: false,
            match_type: 0,
        });
    }
    Ok(out)
}

/// GMS's `foreignKeyComparableTypes` for the types this writer has: the same type; DECIMAL,
/// ENUM or SET on both sides whatever their arguments; text types (CHAR, VARCHAR, TEXT…) of
/// one character set, of any lengths; binary types (BINARY, VARBINARY, BLOB…).
fn comparable_types(a: &SqlType, b: &SqlType) -> bool {
    let charset = |t: &SqlType| {
        Collation::from_name(t.collation()?)
            .map(Collation::charset)
            .ok()
    };
    match (a, b) {
        (SqlType::Text { .. }, SqlType::Text { .. }) => charset(a) == charset(b),
        (SqlType::Binary { .. }, SqlType::Binary { .. })
        | (SqlType::Decimal { .. }, SqlType::Decimal { .. })
        | (SqlType::Enum { .. }, SqlType::Enum { .. })
        | (SqlType::Set { .. }, SqlType::Set { .. }) => true,
        _ => a == b,
    }
}

/// A table's rows looked up by a set of its columns: the index (or primary key) whose
/// leading fields they are, and where each of them sits in it.
pub(in crate::write) struct Lookup {
    schema: TupleSchema,
    root: Address,
    /// Per looked-up column, its field in the index key.
    fields: Vec<usize>,
    /// Per index key field, its column.
    key_columns: Vec<usize>,
    /// True for the clustered index (the primary key).
    primary: bool,
}

pub(in crate::write) fn lookup(t: &EditTable, index: &str, cols: &[usize]) -> Result<Lookup> {
    let s = &t.schema;
    // A key keeps the name of its index when the index was dropped for another that serves
    // it (Dolt updates only the referenced side's): that other one is used.
    // The index's leading key fields (an index's are extended by the primary key) must be
    // the looked-up columns; else another that serves is used: a key keeps the name of an
    // index that was dropped for another (Dolt re-resolves only the referenced side), and a
    // key on a unique index extended by the primary key is stored with no index (`""`).
    let serves = |key_columns: &[usize]| {
        key_columns.len() >= cols.len()
            && cols.iter().all(|c| key_columns[..cols.len()].contains(c))
    };
    let named = if index.is_empty() {
        Some(&s.key_columns)
    } else {
        s.indexes
            .iter()
            .find(|ix| ix.name == index)
            .map(|ix| &ix.key_columns)
    };
    let fallback;
    let index = if named.is_some_and(|k| serves(k)) {
        index
    } else {
        fallback = s
            .indexes
            .iter()
            .filter(|ix| ix.prefix_lengths.is_empty() && !ix.spatial && !ix.fulltext)
            .find(|ix| serves(&ix.key_columns))
            .map(|ix| ix.name.clone())
            .unwrap_or_else(|| index.to_string());
        fallback.as_str()
    };
    let (schema, root, key_columns) = if index.is_empty() {
        (s.primary_tuple_schema()?, t.primary, s.key_columns.clone())
    } else {
        let i = s
            .indexes
            .iter()
            .position(|ix| ix.name == index)
            .ok_or_else(|| {
                crate::error::malformed(
                    "a stored foreign key",
                    format!("table {:?} has no index {index:?}", t.name),
                )
            })?;
        (
            index_schema(s, &s.indexes[i])?,
            t.indexes[i],
            s.indexes[i].key_columns.clone(),
        )
    };
    let fields = cols
        .iter()
        .map(|c| {
            key_columns[..cols.len().min(key_columns.len())]
                .iter()
                .position(|k| k == c)
                .ok_or_else(|| {
                    crate::error::malformed(
                        "a stored foreign key",
                        format!(
                            "index {index:?} of table {:?} does not start with the key's columns",
                            t.name
                        ),
                    )
                })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Lookup {
        schema,
        root,
        fields,
        key_columns,
        primary: index.is_empty(),
    })
}

/// The lookup prefix of `values` (stored cells of the looked-up columns, in their order):
/// a tuple of the index's leading fields.
fn prefix_of(t: &EditTable, l: &Lookup, values: &[Cell]) -> Result<Vec<u8>> {
    let desc = TupleDesc::new(l.schema.key.types()[..values.len()].to_vec());
    let mut b = TupleBuilder::new(desc);
    for (v, &f) in values.iter().zip(&l.fields) {
        let col = l.key_columns[f];
        let enc = key_encoding(t.schema.columns[col].encoding);
        t.put_cell(&mut b, f, col, enc, 0, v)?;
    }
    Ok(b.build()
        .map_err(|e| crate::error::encode("a foreign key lookup key", e))?
        .as_bytes()
        .to_vec())
}

/// True when table `t` has a row whose columns `cols` hold `values` (stored cells of the
/// other table's columns, of the same types).
fn has_row(store: &Overlay<'_>, t: &EditTable, l: &Lookup, values: &[Cell]) -> Result<bool> {
    // Only the leading fields are compared: a tuple of just those is the prefix.
    let prefix = prefix_of(t, l, values)?;
    let map = Map::new(store, l.root, l.schema.clone());
    let mut rows = map
        .prefix_rows(&prefix, values.len())
        .map_err(DoltError::from)?;
    Ok(rows.next().transpose().map_err(DoltError::from)?.is_some())
}

/// The stored rows `(key, value)` of table `t` whose columns hold `values` (stored cells, in
/// the order of the columns `l` looks up), found through `l`'s index: none when a value is
/// NULL (a NULL refers to nothing).
pub(in crate::write) fn matching_rows(
    store: &Overlay<'_>,
    t: &EditTable,
    l: &Lookup,
    values: &[Cell],
) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    if values.iter().any(|v| matches!(v, Cell::Null)) {
        return Ok(Vec::new());
    }
    let err = DoltError::from;
    let prefix = prefix_of(t, l, values)?;
    let map = Map::new(store, l.root, l.schema.clone());
    let found = map
        .prefix_rows(&prefix, values.len())
        .map_err(err)?
        .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(err)?;
    if l.primary {
        return Ok(found);
    }
    let s = &t.schema;
    let lookup = |e: prollystore_format::tuple::TupleError| {
        crate::error::malformed_from(
            "a stored index entry",
            "its fields do not make a row key",
            e,
        )
    };
    // The stored row whose clustered key `b` holds.
    let row_of = |mut b: TupleBuilder| -> Result<(Vec<u8>, Vec<u8>)> {
        let key = b.build().map_err(lookup)?.as_bytes().to_vec();
        t.find(store, &key)?.ok_or_else(|| {
            crate::error::malformed(
                "a foreign key lookup",
                format!("an index of table {:?} names a missing row", t.name),
            )
        })
    };
    if s.keyless {
        // A keyless table's index key ends with the row hash, its clustered key.
        let n = l.key_columns.len();
        let mut rows = Vec::with_capacity(found.len());
        for (ikey, _) in found {
            let hash = l
                .schema
                .key
                .field(Tuple::new_unverified(&ikey), n)
                .ok_or_else(|| {
                    crate::error::malformed(
                        "a foreign key lookup",
                        format!("an index entry of table {:?} lacks the row hash", t.name),
                    )
                })?;
            let mut b = TupleBuilder::new(s.key_desc());
            b.put_raw(0, hash).map_err(lookup)?;
            rows.push(row_of(b)?);
        }
        return Ok(rows);
    }
    // A secondary index's key ends with the primary key's columns: the row is found by them.
    let at = s
        .key_columns
        .iter()
        .map(|c| {
            l.key_columns.iter().position(|k| k == c).ok_or_else(|| {
                crate::error::malformed(
                    "a foreign key lookup",
                    format!("an index of table {:?} lacks a key column", t.name),
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let mut rows = Vec::with_capacity(found.len());
    for (ikey, _) in found {
        let mut b = TupleBuilder::new(s.key_desc());
        for (f, &i) in at.iter().enumerate() {
            let put = match l.schema.key.field(Tuple::new_unverified(&ikey), i) {
                Some(bytes) => b.put_raw(f, bytes),
                None => b.put_null(f),
            };
            put.map_err(lookup)?;
        }
        rows.push(row_of(b)?);
    }
    Ok(rows)
}

/// True when `a` and `b` (stored cells of the columns `l` looks up in table `t`) are equal
/// as the index compares them (under its collations; NULL equals only NULL), as GMS's
/// `ColumnsUpdated` compares a parent row's old and new referenced values.
pub(in crate::write) fn same_values(
    t: &EditTable,
    l: &Lookup,
    a: &[Cell],
    b: &[Cell],
) -> Result<bool> {
    let (pa, pb) = (prefix_of(t, l, a)?, prefix_of(t, l, b)?);
    Ok(l.schema.key.compare_prefix(&pa, &pb, a.len()).is_eq())
}

/// A stored row as text: its primary key (`(1)`, `(1,'a')`), or for a keyless table
/// (whose key is a hash) its visible values, from `cells`.
pub(in crate::write) fn row_label(t: &EditTable, key: &[u8], cells: &[Cell]) -> String {
    if t.schema.keyless {
        let parts: Vec<String> = t
            .schema
            .visible_columns()
            .into_iter()
            .filter_map(|c| Some(cell_label(&t.schema.columns[c], cells.get(c)?)))
            .collect();
        return format!("({})", parts.join(","));
    }
    format!("({})", key_text(&t.schema, key).join(","))
}

/// One cell of column `col` as text, as `dolt sql` prints it (text quoted).
fn cell_label(col: &crate::schema::Column, cell: &Cell) -> String {
    let value = match cell {
        Cell::Null => return "NULL".into(),
        Cell::Value(v) => v.clone(),
        Cell::Stored(b) => match super::checks::stored_value(col, b) {
            Ok(Some(v)) => v,
            Ok(None) => return "NULL".into(),
            Err(_) => return "?".into(),
        },
    };
    match value {
        SqlValue::Text(s) => format!("'{s}'"),
        v => v.to_string(),
    }
}

fn column_names(t: &EditTable, cols: &[usize]) -> String {
    cols.iter()
        .map(|&c| t.schema.columns[c].name.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

pub(in crate::write) fn cols_of_tags(t: &EditTable, tags: &[u64], fk: &str) -> Result<Vec<usize>> {
    tags.iter()
        .map(|tag| {
            t.schema
                .columns
                .iter()
                .position(|c| c.tag == *tag)
                .ok_or_else(|| {
                    crate::error::malformed(
                        "a stored foreign key",
                        format!("{fk:?}: table {:?} has no column of tag {tag}", t.name),
                    )
                })
        })
        .collect()
}

/// Checks the change of table `old` → `new` against every key naming it; `open` opens
/// another table of the new working root; `acted`: the keys' referential actions were
/// carried out (not so for TRUNCATE). An error names the key, table, columns and row.
///
/// In a keyless table a row's count is its number of copies: more copies of a child row
/// are new references (checked like a new row). A CASCADE or SET NULL key whose child is
/// keyless may leave children of a value that went: the engine changes one copy of each
/// distinct child row per parent row (`fk_actions`), and Dolt keeps what is left.
pub(crate) fn check_change(
    store: &Overlay<'_>,
    fks: &[StoredForeignKey],
    old: &EditTable,
    new: &EditTable,
    open: &dyn Fn(&str) -> Result<EditTable>,
    acted: bool,
) -> Result<()> {
    let name = &new.name;
    let mine: Vec<&StoredForeignKey> = fks
        .iter()
        .filter(|f| f.child_table == *name || f.parent_table == *name)
        .collect();
    if mine.is_empty() || (old.primary == new.primary) {
        return Ok(());
    }
    let keyless = new.schema.keyless;
    let count = |v: &Option<Vec<u8>>| -> Result<u64> {
        match v {
            Some(v) if keyless => copies(v),
            Some(_) => Ok(1),
            None => Ok(0),
        }
    };
    let ts = new.schema.primary_tuple_schema()?;
    let (before, after) = (
        Map::new(store, old.primary, ts.clone()),
        Map::new(store, new.primary, ts),
    );
    let changes = row_changes(&before, &after).map_err(DoltError::from)?;
    let same = |a: &[Cell], b: &[Cell]| {
        a.iter().zip(b).all(|(x, y)| match (x, y) {
            (Cell::Null, Cell::Null) => true,
            (Cell::Stored(p), Cell::Stored(q)) => p == q,
            _ => false,
        })
    };
    let pick = |cells: &[Cell], cols: &[usize]| -> Vec<Cell> {
        cols.iter().map(|&c| cells[c].clone()).collect()
    };
    for fk in mine {
        let other_name = if fk.child_table == *name {
            &fk.parent_table
        } else {
            &fk.child_table
        };
        let other_owned;
        let other = if other_name == name {
            new
        } else {
            other_owned = open(other_name)?;
            &other_owned
        };
        let (child, parent) = if fk.child_table == *name {
            (new, other)
        } else {
            (other, new)
        };
        let ccols = cols_of_tags(child, &fk.child_columns, &fk.name)?;
        let pcols = cols_of_tags(parent, &fk.parent_columns, &fk.name)?;
        for (key, from, to) in &changes {
            let old_cells = match from {
                Some(v) => Some(old.cells_of(store, key, v)?),
                None => None,
            };
            let new_cells = match to {
                Some(v) => Some(new.cells_of(store, key, v)?),
                None => None,
            };
            // This table as the child: a new or changed reference needs its parent.
            if fk.child_table == *name {
                if let Some(nc) = &new_cells {
                    let vals = pick(nc, &ccols);
                    let unchanged = old_cells
                        .as_ref()
                        .is_some_and(|oc| same(&pick(oc, &ccols), &vals))
                        && count(to)? <= count(from)?;
                    if !unchanged && !vals.iter().any(|v| matches!(v, Cell::Null)) {
                        let l = lookup(parent, &fk.parent_index, &pcols)?;
                        if !has_row(store, parent, &l, &vals)? {
                            return Err(DoltError::BadValue {
                                table: name.clone(),
                                column: column_names(child, &ccols),
                                reason: format!(
                                    "row {}: foreign key {:?} violated: no row of table {:?} has ({}) equal to this row's values",
                                    row_label(new, key, nc),
                                    fk.name,
                                    parent.name,
                                    column_names(parent, &pcols)
                                ),
                            });
                        }
                    }
                }
            }
            // This table as the parent: a referenced value that goes away must not be used.
            if fk.parent_table == *name {
                let Some(oc) = &old_cells else { continue };
                let vals = pick(oc, &pcols);
                if vals.iter().any(|v| matches!(v, Cell::Null)) {
                    continue;
                }
                if new_cells
                    .as_ref()
                    .is_some_and(|nc| same(&pick(nc, &pcols), &vals))
                {
                    continue;
                }
                let pl = lookup(new, &fk.parent_index, &pcols)?;
                if has_row(store, new, &pl, &vals)? {
                    continue;
                }
                let action = if new_cells.is_some() {
                    fk.on_update
                } else {
                    fk.on_delete
                };
                let acts = matches!(
                    ForeignKeyAction::from_code(action),
                    Some(ForeignKeyAction::Cascade | ForeignKeyAction::SetNull)
                );
                if acted && acts && child.schema.keyless {
                    continue;
                }
                let cl = lookup(child, &fk.child_index, &ccols)?;
                if !has_row(store, child, &cl, &vals)? {
                    continue;
                }
                // Any action: ON … CASCADE and SET NULL have changed the children already
                // (see `fk_actions`), unless the change was made without them (TRUNCATE).
                let what = if new_cells.is_some() {
                    "updated"
                } else {
                    "deleted"
                };
                let reason = format!(
                    "row {}: cannot be {what}: rows of table {:?} refer to it through foreign key {:?}",
                    row_label(old, key, oc),
                    child.name,
                    fk.name
                );
                return Err(DoltError::BadValue {
                    table: name.clone(),
                    column: column_names(parent, &pcols),
                    reason,
                });
            }
        }
    }
    Ok(())
}

/// Every row of `child` whose columns of `fk` are all set has a row of `parent` holding the
/// same values: the check Dolt makes of a table's rows when `ALTER TABLE … ADD FOREIGN KEY`
/// adds a key to it. The error names the key, the tables and the first row without a parent.
pub(crate) fn check_rows_have_parents(
    store: &Overlay<'_>,
    fk: &StoredForeignKey,
    child: &EditTable,
    parent: &EditTable,
) -> Result<()> {
    let ccols = cols_of_tags(child, &fk.child_columns, &fk.name)?;
    let pcols = cols_of_tags(parent, &fk.parent_columns, &fk.name)?;
    let l = lookup(parent, &fk.parent_index, &pcols)?;
    let map = Map::new(store, child.primary, child.schema.primary_tuple_schema()?);
    for r in map.iter().map_err(DoltError::from)? {
        let (k, v) = r.map_err(DoltError::from)?;
        let cells = child.cells_of(store, k, v)?;
        let vals: Vec<Cell> = ccols.iter().map(|&c| cells[c].clone()).collect();
        if vals.iter().any(|v| matches!(v, Cell::Null)) || has_row(store, parent, &l, &vals)? {
            continue;
        }
        return Err(DoltError::BadValue {
            table: child.name.clone(),
            column: column_names(child, &ccols),
            reason: format!(
                "cannot add foreign key {:?}: row {} has no parent: no row of table {:?} has ({}) equal to its ({})",
                fk.name,
                row_label(child, k, &cells),
                parent.name,
                column_names(parent, &pcols),
                ccols
                    .iter()
                    .map(|&c| cell_label(&child.schema.columns[c], &cells[c]))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        });
    }
    Ok(())
}

/// After index `dropped` of table `t` went: the keys that named it as their referenced
/// index take the index Dolt's `FindIndexWithPrefix` finds now (`""`: the primary key), as
/// Dolt's index drop re-resolves them; the referencing side keeps its name.
pub(crate) fn reresolve_parent_index(
    fks: &mut [StoredForeignKey],
    t: &EditTable,
    dropped: &str,
) -> Result<()> {
    for fk in fks
        .iter_mut()
        .filter(|f| f.parent_table == t.name && f.parent_index.eq_ignore_ascii_case(dropped))
    {
        let pcols = cols_of_tags(t, &fk.parent_columns, &fk.name)?;
        fk.parent_index = index_for(&t.schema, &pcols);
    }
    Ok(())
}
