//! A new table as Dolt makes it from `CREATE TABLE` and `INSERT`s: its schema message, its
//! primary index (a prolly tree of key and value tuples, built with Dolt's chunk boundaries and
//! hash), and the table message, plus the root value that lists it.
//!
//! First slice, enough for integer, `VARCHAR`, `DECIMAL`, `DATE` and `DATETIME` columns with
//! the table's collation, a primary key, no secondary indexes: other types and clauses are a
//! clear error. Column tags come from the caller (see `column_tags` for how Dolt derives them).

use prollystore::store::{ChunkStore, MemoryStore};
use prollystore::tree::build::build_tree;
use prollystore::tuples::TupleSchema;
use prollystore_format::message::objects::{
    ColumnFields, ConflictsFields, IndexFields, RootValueFields, TableFields, TableSchemaFields,
};
use prollystore_format::tuple::{Decimal, TupleBuilder};
use prollystore_format::{Address, Encoding, HashProfile};

use super::maps::address_map::{empty_address_map, new_address_map};
use super::storage::chunk_io::ChunkIo;
use crate::codec::encode::decimal_parts;
use crate::error::{DoltError, Result};
use crate::schema::{Schema, SqlType};
use prollystore_format::value_parse::parse_datetime;

/// A column as declared.
#[derive(Clone, Debug)]
pub(crate) struct ColumnSpec<'a> {
    /// Name.
    pub name: &'a str,
    /// SQL type as `dolt schema show` prints it (`int`, `varchar(30)`, `decimal(10,2)`).
    pub sql_type: &'a str,
    /// Nullable.
    pub nullable: bool,
    /// Column tag.
    pub tag: u64,
}

fn unsupported(what: String) -> DoltError {
    DoltError::Unsupported(what)
}

/// Dolt's stored type text and storage encoding for a declared type (the types of this
/// slice, spelled as Dolt stores them).
fn stored_type(sql_type: &str) -> Result<(String, Encoding)> {
    let t = sql_type.trim().to_ascii_lowercase();
    let ty = SqlType::parse(&t);
    let args = t.contains('(');
    let spelled = ty.name() == t.split('(').next() && !t.contains(' ');
    let enc = match (&ty, args) {
        (SqlType::Int { bits, .. }, false) if *bits != 24 => ty.encoding(),
        (SqlType::Text { .. }, true) if ty.name() == Some("varchar") => ty.encoding(),
        (SqlType::Decimal { .. }, true) | (SqlType::Date, false) | (SqlType::Datetime(_), _) => {
            ty.encoding()
        }
        _ => None,
    };
    match enc {
        Some(Encoding::Datetime) if spelled && !args => {
            Ok(("datetime(0)".into(), Encoding::Datetime))
        }
        Some(enc) if spelled => Ok((t, enc)),
        _ => Err(unsupported(format!(
            "column type {sql_type:?} (not done yet)"
        ))),
    }
}

/// The schema message's fields for a table with `columns` and primary key `primary_key`
/// (column names in key order), in collation `collation`.
pub(crate) fn schema_fields<'a>(
    columns: &'a [ColumnSpec<'a>],
    stored: &'a [(String, Encoding)],
    primary_key: &[&str],
    collation: u16,
) -> Result<TableSchemaFields<'a>> {
    if primary_key.is_empty() {
        return Err(unsupported("keyless tables (not done yet)".into()));
    }
    let position = |name: &str| {
        columns
            .iter()
            .position(|c| c.name == name)
            .ok_or_else(|| unsupported(format!("primary key column {name:?} is not a column")))
    };
    let key_columns = primary_key
        .iter()
        .map(|n| position(n).map(|p| p as u16))
        .collect::<Result<Vec<u16>>>()?;
    let value_columns = (0..columns.len() as u16)
        .filter(|p| !key_columns.contains(p))
        .collect();
    let cols = columns
        .iter()
        .zip(stored)
        .enumerate()
        .map(|(i, (c, (text, enc)))| ColumnFields {
            name: c.name,
            sql_type: text,
            default_value: "",
            comment: "",
            display_order: i as i16,
            tag: c.tag,
            encoding: *enc as u8,
            primary_key: key_columns.contains(&(i as u16)),
            nullable: c.nullable,
            auto_increment: false,
            hidden: false,
            generated: false,
            virtual_: false,
            on_update_value: "",
            uses_adaptive_encoding: false,
            hidden_system: false,
        })
        .collect();
    Ok(TableSchemaFields {
        columns: cols,
        keyless: false,
        clustered_index: IndexFields {
            index_columns: key_columns.clone(),
            key_columns,
            value_columns,
            unique_key: true,
            ..IndexFields::default()
        },
        secondary_indexes: Vec::new(),
        checks: Vec::new(),
        collation,
        comment: "",
        target_row_size: 2048,
    })
}

/// Dolt's stored types for `columns`.
pub(crate) fn stored_types(columns: &[ColumnSpec<'_>]) -> Result<Vec<(String, Encoding)>> {
    columns.iter().map(|c| stored_type(c.sql_type)).collect()
}

/// Puts the value whose text is `text` (as `dolt sql -r csv` prints it) into field `i`.
fn put_text(b: &mut TupleBuilder, i: usize, enc: Encoding, text: Option<&str>) -> Result<()> {
    let bad = |what: &str| unsupported(format!("value {text:?} as {what}"));
    let Some(t) = text else {
        return b.put_null(i).map_err(|e| bad(&e.to_string()));
    };
    let r = match enc {
        Encoding::Int8 => b.put_int8(i, t.parse().map_err(|_| bad("tinyint"))?),
        Encoding::Int16 => b.put_int16(i, t.parse().map_err(|_| bad("smallint"))?),
        Encoding::Int32 => b.put_int32(i, t.parse().map_err(|_| bad("int"))?),
        Encoding::Int64 => b.put_int64(i, t.parse().map_err(|_| bad("bigint"))?),
        Encoding::String => b.put_string(i, t),
        Encoding::Decimal => {
            let (negative, digits, exponent) = decimal_parts(t).map_err(|_| bad("decimal"))?;
            let coefficient: u128 = digits.parse().map_err(|_| bad("decimal"))?;
            let be = coefficient.to_be_bytes();
            let d = Decimal::finite(exponent, negative, &be);
            b.put_decimal(i, &d)
        }
        Encoding::Datetime => b.put_datetime(
            i,
            parse_datetime(t.as_bytes()).ok_or_else(|| bad("datetime"))?,
        ),
        _ => return Err(bad("this encoding (not done yet)")),
    };
    r.map_err(|e| bad(&e.to_string()))
}

/// The primary index of `rows` (values in column order, as text; `None` = NULL) under
/// `schema`: a prolly tree built with Dolt's boundaries and hash into a memory store. Returns
/// the store and the root.
pub(crate) fn primary_index(
    schema: &Schema,
    rows: &[Vec<Option<&str>>],
) -> Result<(MemoryStore, Address)> {
    let (key_desc, value_desc) = (schema.key_desc(), schema.value_desc());
    let mut kb = TupleBuilder::new(key_desc.clone());
    let mut vb = TupleBuilder::new(value_desc.clone());
    let mut items: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(rows.len());
    for row in rows {
        if row.len() != schema.columns.len() {
            return Err(unsupported(format!(
                "a row of {} values for {} columns",
                row.len(),
                schema.columns.len()
            )));
        }
        kb.reset();
        vb.reset();
        for (f, &c) in schema.key_columns.iter().enumerate() {
            put_text(&mut kb, f, schema.columns[c].encoding, row[c])?;
        }
        for (f, &c) in schema.value_columns.iter().enumerate() {
            put_text(&mut vb, f, schema.columns[c].encoding, row[c])?;
        }
        let k = kb
            .build()
            .map_err(|e| unsupported(e.to_string()))?
            .as_bytes()
            .to_vec();
        let v = vb
            .build()
            .map_err(|e| unsupported(e.to_string()))?
            .as_bytes()
            .to_vec();
        items.push((k, v));
    }
    let tuple_schema = TupleSchema::new(key_desc.clone(), value_desc);
    items.sort_by(|a, b| key_desc.compare(&a.0, &b.0));
    if items
        .windows(2)
        .any(|w| key_desc.compare(&w[0].0, &w[1].0).is_eq())
    {
        return Err(unsupported("two rows with one primary key".into()));
    }
    let store = MemoryStore::new(HashProfile::Dolt);
    let root = build_tree(
        &store,
        &tuple_schema,
        items.iter().map(|(k, v)| (&k[..], &v[..])),
    )
    .map_err(|e| unsupported(format!("building the primary index: {e}")))?;
    Ok((store, root))
}

/// The table message of a table without secondary indexes, merge leftovers or auto-increment
/// (Dolt writes the zero address in each conflict, violation and artifact field of a clean
/// table).
pub(crate) fn table_chunk(schema: Address, primary_root_node: &[u8]) -> Result<Vec<u8>> {
    let no_indexes = empty_address_map()?;
    let zero = [0u8; 20];
    TableFields {
        schema: schema.0,
        primary_index: primary_root_node,
        secondary_indexes: &no_indexes,
        auto_increment_value: 0,
        conflicts: ConflictsFields {
            data: &zero,
            our_schema: &zero,
            their_schema: &zero,
            ancestor_schema: &zero,
        },
        violations: &zero,
        artifacts: &zero,
    }
    .encode()
    .map_err(|e| unsupported(format!("table: {e}")))
}

/// `base` (a root value chunk) with its table map set to `tables` (the map's nodes below its
/// root put into `io`).
pub(crate) fn root_with_tables(
    io: &mut dyn ChunkIo,
    base: &[u8],
    tables: &[(Vec<u8>, Address)],
) -> Result<Vec<u8>> {
    let mut r =
        RootValueFields::decode(base).map_err(|e| unsupported(format!("root value: {e}")))?;
    let map = new_address_map(io, tables)?;
    r.tables = &map;
    r.encode()
        .map_err(|e| unsupported(format!("root value: {e}")))
}

/// Every chunk of a memory store, for copying a built tree into the database.
pub(crate) fn store_chunks(store: &MemoryStore) -> Result<Vec<Vec<u8>>> {
    store
        .addresses()
        .iter()
        .map(|a| {
            store
                .get(a)
                .map_err(|e| unsupported(e.to_string()))?
                .map(<[u8]>::to_vec)
                .ok_or(DoltError::MissingChunk(*a))
        })
        .collect()
}
