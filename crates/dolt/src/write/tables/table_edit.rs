//! Row changes to one table as Dolt's SQL engine makes them: rows encoded into key and value
//! tuples (large text, blob and JSON values moved into blob trees), the clustered index and
//! every secondary index edited together, keyless tables keyed by row hash with a count of
//! copies, and the checks Dolt applies (NOT NULL, ranges, lengths, members, duplicate keys,
//! CHECK constraints)
//! with errors naming the row and column. Every edit goes into the session's memory store
//! through an [`Overlay`]; nothing reaches the database until a commit.

use prollystore::blob::StoreBlobs;
use prollystore::store::ChunkStore;
use prollystore::tuples::{field_bytes, TupleSchema};
use prollystore::{Map, TreeError};
use prollystore_format::message::objects::TableFields;
use prollystore_format::tuple::{Tuple, TupleBuilder, TupleDesc, TupleError};
use prollystore_format::{Address, Encoding};

use crate::codec::encode::{parse_value, put_field};
use crate::error::{bad_chunk, bad_input, encode, malformed, malformed_from, DoltError, Result};
use crate::expressions::{is_expression_default, DefaultExprs, Engine, VirtualColumns};
use crate::schema::{key_encoding, Index, Schema, SqlType};
use crate::sql_value::SqlValue;
use crate::write::constraints::checks::{stored_value, RowChecks};
use crate::write::maps::address_map::{address_map_entries, empty_address_map, new_address_map};
use crate::write::storage::overlay::{Overlay, OverlayIo};

/// A table of a working root, opened for editing.
#[derive(Clone, Debug)]
pub(crate) struct EditTable {
    /// Table name.
    pub name: String,
    /// The table chunk it was read from (kept for the fields edits do not change).
    pub chunk: Vec<u8>,
    /// Its schema.
    pub schema: Schema,
    /// Root of the clustered index.
    pub primary: Address,
    /// Root of each secondary index, in `schema.indexes` order.
    pub indexes: Vec<Address>,
    /// The stored AUTO_INCREMENT counter.
    pub auto_increment: u64,
    /// The schema's expression defaults, compiled when a row first needs one.
    expression_defaults: std::sync::OnceLock<Option<DefaultExprs>>,
    /// The schema's VIRTUAL generated columns (or why they cannot be computed), compiled when
    /// an index over one first needs a value.
    virtuals: std::sync::OnceLock<std::result::Result<Option<VirtualColumns>, String>>,
    /// The table is a foreign key's parent or child: Dolt then writes every updated row, even
    /// one equal to the old under the columns' types (see [`EditTable::update`]).
    pub(crate) in_foreign_key: bool,
    /// The writer's SQL expression engine, which compiles the expressions above.
    engine: Engine,
}

/// One column's new value in a row change.
#[derive(Clone, Debug)]
pub(crate) enum Cell {
    /// NULL.
    Null,
    /// A value to encode.
    Value(SqlValue),
    /// A field kept from the stored row: its bytes in the column's value encoding, or for an
    /// adaptive column the value's payload (re-placed inline or out of band as Dolt does).
    Stored(Vec<u8>),
}

/// The value of a secondary-index entry: a tuple of no fields.
pub(in crate::write) fn empty_value() -> Result<Vec<u8>> {
    Ok(TupleBuilder::new(TupleDesc::new(Vec::new()))
        .build()
        .map_err(tree)?
        .as_bytes()
        .to_vec())
}

pub(in crate::write) fn bad(table: &str, column: &str, reason: String) -> DoltError {
    DoltError::BadValue {
        table: table.to_string(),
        column: column.to_string(),
        reason,
    }
}

pub(in crate::write) fn tree(e: impl EditFailure) -> DoltError {
    e.into_dolt()
}

/// A failure of the layers under the table editor, as the error kind it is: tree errors keep
/// theirs (`From<TreeError>`: a missing or damaged chunk, a refused edit), a tuple the editor
/// could not build is [`DoltError::Encode`].
pub(in crate::write) trait EditFailure {
    /// The error as a [`DoltError`].
    fn into_dolt(self) -> DoltError;
}

impl EditFailure for TreeError {
    fn into_dolt(self) -> DoltError {
        self.into()
    }
}

impl EditFailure for TupleError {
    fn into_dolt(self) -> DoltError {
        encode("a row or index tuple", self)
    }
}

impl EditTable {
    /// Reads table `name` from its table chunk.
    pub(crate) fn load(store: &Overlay<'_>, name: &str, address: Address) -> Result<EditTable> {
        let chunk = store
            .get(&address)?
            .ok_or(DoltError::MissingChunk(address))?
            .to_vec();
        let t = TableFields::decode(&chunk).map_err(|e| bad_chunk(address, e.to_string()))?;
        let schema_address = Address(t.schema);
        let schema_chunk = store
            .get(&schema_address)?
            .ok_or(DoltError::MissingChunk(schema_address))?;
        let schema = Schema::decode(schema_chunk, schema_address)?;
        let primary = store.put(t.primary_index)?;
        let trees = address_map_entries(&OverlayIo(store), t.secondary_indexes)?;
        let mut indexes = Vec::with_capacity(schema.indexes.len());
        for ix in &schema.indexes {
            let (_, tree) = trees
                .iter()
                .find(|(n, _)| n.as_slice() == ix.name.as_bytes())
                .ok_or_else(|| bad_chunk(address, format!("index {:?} has no tree", ix.name)))?;
            indexes.push(*tree);
        }
        let auto_increment = t.auto_increment_value;
        Ok(EditTable {
            name: name.to_string(),
            chunk,
            schema,
            primary,
            indexes,
            auto_increment,
            expression_defaults: std::sync::OnceLock::new(),
            virtuals: std::sync::OnceLock::new(),
            in_foreign_key: false,
            engine: store.engine.clone(),
        })
    }

    /// A new, empty table with schema chunk `schema_chunk`.
    pub(crate) fn create(
        store: &Overlay<'_>,
        name: &str,
        schema_chunk: &[u8],
    ) -> Result<EditTable> {
        let schema_address = store.put(schema_chunk)?;
        let schema = Schema::decode(schema_chunk, schema_address)?;
        let empty = |s: TupleSchema| Map::empty(store, s).map(|m| m.root()).map_err(tree);
        let primary = empty(schema.primary_tuple_schema()?)?;
        let indexes = schema
            .indexes
            .iter()
            .map(|ix| empty(index_schema(&schema, ix)?))
            .collect::<Result<Vec<_>>>()?;
        let auto_increment = u64::from(schema.columns.iter().any(|c| c.auto_increment));
        let zero = [0u8; 20];
        let no_indexes = empty_address_map()?;
        let placeholder = TableFields {
            schema: schema_address.0,
            primary_index: store
                .get(&primary)?
                .ok_or(DoltError::MissingChunk(primary))?,
            secondary_indexes: &no_indexes,
            auto_increment_value: 0,
            conflicts: prollystore_format::message::objects::ConflictsFields {
                data: &zero,
                our_schema: &zero,
                their_schema: &zero,
                ancestor_schema: &zero,
            },
            violations: &zero,
            artifacts: &zero,
        }
        .encode()
        .map_err(|e| encode(format!("table {name:?}"), e))?;
        Ok(EditTable {
            name: name.to_string(),
            chunk: placeholder,
            schema,
            primary,
            indexes,
            auto_increment,
            expression_defaults: std::sync::OnceLock::new(),
            virtuals: std::sync::OnceLock::new(),
            in_foreign_key: false,
            engine: store.engine.clone(),
        })
    }

    /// A table of schema `schema` with no trees, for building index keys of rows read
    /// elsewhere (a merge's changed rows).
    pub(crate) fn for_schema(store: &Overlay<'_>, name: &str, schema: Schema) -> EditTable {
        EditTable {
            name: name.to_string(),
            chunk: Vec::new(),
            schema,
            primary: Address([0; 20]),
            indexes: Vec::new(),
            auto_increment: 0,
            expression_defaults: std::sync::OnceLock::new(),
            virtuals: std::sync::OnceLock::new(),
            in_foreign_key: false,
            engine: store.engine.clone(),
        }
    }

    /// Writes the table chunk for the current state; returns its address.
    pub(crate) fn store(&self, store: &Overlay<'_>) -> Result<Address> {
        let old = TableFields::decode(&self.chunk).map_err(|e| {
            malformed_from(
                format!("the table chunk of {:?}", self.name),
                "its fields",
                e,
            )
        })?;
        let root_node = store
            .get(&self.primary)?
            .ok_or(DoltError::MissingChunk(self.primary))?;
        let entries: Vec<(Vec<u8>, Address)> = self
            .schema
            .indexes
            .iter()
            .zip(&self.indexes)
            .map(|(ix, a)| (ix.name.as_bytes().to_vec(), *a))
            .collect();
        // An index tree Dolt left in the table's index map though its schema no longer has
        // the index (an ALTER that rewrites the rows keeps the dropped column's index) stays.
        let mut entries = entries;
        for (name, tree) in address_map_entries(&OverlayIo(store), old.secondary_indexes)? {
            if !entries.iter().any(|(n, _)| *n == name) {
                entries.push((name, tree));
            }
        }
        let index_map = new_address_map(&mut OverlayIo(store), &entries)?;
        let chunk = TableFields {
            primary_index: root_node,
            secondary_indexes: &index_map,
            auto_increment_value: self.auto_increment,
            ..old
        }
        .encode()
        .map_err(|e| encode(format!("table {:?}", self.name), e))?;
        Ok(store.put(&chunk)?)
    }

    /// Position (in `schema.columns`) of the visible column `name` (case-insensitive).
    pub(crate) fn column(&self, name: &str) -> Result<usize> {
        self.schema
            .visible_columns()
            .into_iter()
            .find(|&i| self.schema.columns[i].name.eq_ignore_ascii_case(name))
            .ok_or_else(|| DoltError::NotFound(format!("column {name:?} of table {:?}", self.name)))
    }

    fn primary_map<'s>(&self, store: &'s Overlay<'s>) -> Result<Map<'s, Overlay<'s>, TupleSchema>> {
        Ok(Map::new(
            store,
            self.primary,
            self.schema.primary_tuple_schema()?,
        ))
    }

    /// Checks one value against its column (NOT NULL, lengths; ranges and members are checked
    /// when it is encoded).
    pub(in crate::write) fn check_cell(&self, row: usize, col: usize, cell: &Cell) -> Result<()> {
        let c = &self.schema.columns[col];
        let what = |reason: String| bad(&self.name, &c.name, format!("row {row}: {reason}"));
        let v = match cell {
            Cell::Null if !c.nullable || c.primary_key => {
                return Err(what("NULL in a NOT NULL column".into()))
            }
            Cell::Value(v) => v,
            _ => return Ok(()),
        };
        let (ty, shown) = (&c.sql_type, c.sql_type_text.as_str());
        match v {
            SqlValue::Text(s) => ty.check_text(s, shown),
            SqlValue::Bytes(b) => ty.check_bytes(b, shown),
            SqlValue::Uint(x) => ty.check_bits(*x, shown),
            SqlValue::Decimal(d) => ty.check_decimal(d, shown),
            _ => Ok(()),
        }
        .map_err(what)
    }

    /// Encodes a full row (`cells` per column of `schema.columns`, hidden ones ignored) into
    /// its clustered-index key and value. For a keyless table the value starts with the count
    /// `copies` and the key is the row hash.
    pub(in crate::write) fn encode(
        &self,
        store: &Overlay<'_>,
        row: usize,
        cells: &[Cell],
        copies: u64,
    ) -> Result<(Vec<u8>, Vec<u8>)> {
        let s = &self.schema;
        let mut blobs = StoreBlobs::new(store);
        let value_desc = s.value_desc();
        let mut vb = TupleBuilder::new(value_desc.clone());
        let mut first = 0;
        if s.keyless {
            vb.put_uint64(0, copies).map_err(tree)?;
            first = 1;
        }
        for (f, &c) in s.value_columns.iter().enumerate().skip(first) {
            self.put_cell(&mut vb, f, c, s.columns[c].encoding, row, &cells[c])?;
        }
        let mut value = Vec::new();
        vb.build_into(&mut blobs, &mut value).map_err(|e| {
            let column = self.widest(&s.value_columns, cells);
            bad(&self.name, column, format!("row {row}: {e}"))
        })?;
        let mut kb = TupleBuilder::new(s.key_desc());
        if s.keyless {
            let h = xxhash_rust::xxh3::xxh3_128(&value[8..]);
            let mut hash = [0u8; 16];
            hash[..8].copy_from_slice(&(h as u64).to_le_bytes());
            hash[8..].copy_from_slice(&((h >> 64) as u64).to_le_bytes());
            kb.put_hash128(0, &hash).map_err(tree)?;
        } else {
            for (f, &c) in s.key_columns.iter().enumerate() {
                let enc = key_encoding(s.columns[c].encoding);
                self.put_cell(&mut kb, f, c, enc, row, &cells[c])?;
            }
        }
        let key = kb
            .build()
            .map_err(|e| {
                let column = self.widest(&s.key_columns, cells);
                bad(&self.name, column, format!("row {row}: {e}"))
            })?
            .as_bytes()
            .to_vec();
        Ok((key, value))
    }

    /// The name of the column among `columns` whose value in `cells` is the largest: the
    /// one to name when their tuple is refused as a whole (too large).
    pub(in crate::write) fn widest(&self, columns: &[usize], cells: &[Cell]) -> &str {
        let size = |c: &Cell| match c {
            Cell::Null => 0,
            Cell::Stored(b) => b.len(),
            Cell::Value(SqlValue::Bytes(b)) => b.len(),
            Cell::Value(SqlValue::Text(t) | SqlValue::Json(t) | SqlValue::Decimal(t)) => t.len(),
            Cell::Value(_) => 8,
        };
        columns
            .iter()
            .filter_map(|&c| Some((c, size(cells.get(c)?))))
            .max_by_key(|&(_, n)| n)
            .map_or("", |(c, _)| self.schema.columns[c].name.as_str())
    }

    /// The names of the table's VIRTUAL generated columns (named when computing them fails;
    /// the message says which expression).
    fn virtual_names(&self) -> String {
        let names: Vec<&str> = self
            .schema
            .columns
            .iter()
            .filter(|c| c.virtual_)
            .map(|c| c.name.as_str())
            .collect();
        names.join(", ")
    }

    /// A full row (a cell per column) encoded as its clustered key and value (the merge's
    /// rows rewritten into a merged schema).
    pub(in crate::write) fn encode_full_row(
        &self,
        store: &Overlay<'_>,
        cells: &[Cell],
    ) -> Result<(Vec<u8>, Vec<u8>)> {
        self.encode(store, 0, cells, 1)
    }

    pub(crate) fn put_cell(
        &self,
        b: &mut TupleBuilder,
        f: usize,
        col: usize,
        enc: Encoding,
        row: usize,
        cell: &Cell,
    ) -> Result<()> {
        let c = &self.schema.columns[col];
        let what = |reason: String| bad(&self.name, &c.name, format!("row {row}: {reason}"));
        if enc == Encoding::Cell {
            // An index over a spatial column keys its entries by the value's spatial cell.
            let stored = match cell {
                Cell::Null => return b.put_null(f).map_err(|e| what(e.to_string())),
                Cell::Value(SqlValue::Bytes(v)) | Cell::Stored(v) => {
                    std::borrow::Cow::Borrowed(v.as_slice())
                }
                Cell::Value(SqlValue::Text(t)) => {
                    crate::geometry::from_text(t).map_err(what)?.into()
                }
                Cell::Value(other) => return Err(what(format!("{other:?} is not a geometry"))),
            };
            let z = crate::geometry::z_cell(&stored)
                .or_else(|| {
                    crate::geometry::from_ewkb(&stored)
                        .ok()
                        .and_then(|v| crate::geometry::z_cell(&v))
                })
                .ok_or_else(|| what("not a geometry value".into()))?;
            return b.put_cell(f, &z).map_err(|e| what(e.to_string()));
        }
        match cell {
            Cell::Null => b.put_null(f).map_err(|e| what(e.to_string())),
            Cell::Value(v) => put_field(b, f, c, enc, Some(v)).map_err(what),
            Cell::Stored(bytes) if enc.is_adaptive() => b
                .put_adaptive_inline(f, bytes)
                .map_err(|e| what(e.to_string())),
            Cell::Stored(bytes) if enc == Encoding::String && c.encoding.is_adaptive() => b
                .put_string_bytes(f, bytes)
                .map_err(|e| what(e.to_string())),
            Cell::Stored(bytes) if enc == Encoding::Bytes && c.encoding.is_adaptive() => {
                b.put_bytes(f, bytes).map_err(|e| what(e.to_string()))
            }
            Cell::Stored(bytes) => b.put_raw(f, bytes).map_err(|e| what(e.to_string())),
        }
    }

    /// The stored row `(key, value)` as cells per column (adaptive values as payloads).
    pub(crate) fn cells_of(
        &self,
        store: &Overlay<'_>,
        key: &[u8],
        value: &[u8],
    ) -> Result<Vec<Cell>> {
        let s = &self.schema;
        let (kd, vd) = (s.key_desc(), s.value_desc());
        let mut cells = vec![Cell::Null; s.columns.len()];
        let mut take = |desc: &TupleDesc, t: &[u8], f: usize, c: usize| -> Result<()> {
            let adaptive = desc.types().get(f).is_some_and(|ty| ty.enc.is_adaptive());
            let bytes = if adaptive {
                field_bytes(store, desc, t, f)
                    .map_err(tree)?
                    .map(|b| b.into_owned())
            } else {
                desc.field(Tuple::new_unverified(t), f).map(<[u8]>::to_vec)
            };
            cells[c] = bytes.map_or(Cell::Null, Cell::Stored);
            Ok(())
        };
        for (f, &c) in s.key_columns.iter().enumerate() {
            take(&kd, key, f, c)?;
        }
        for (f, &c) in s.value_columns.iter().enumerate() {
            take(&vd, value, f, c)?;
        }
        Ok(cells)
    }

    /// Index `i`'s key for the stored row `(key, value)`.
    pub(crate) fn index_key(
        &self,
        store: &Overlay<'_>,
        i: usize,
        key: &[u8],
        value: &[u8],
    ) -> Result<Vec<u8>> {
        let s = &self.schema;
        let ix = &s.indexes[i];
        self.refuse_content_hashed(ix)?;
        let cells = self.cells_of(store, key, value)?;
        let desc = index_schema(s, ix)?.key;
        let mut b = TupleBuilder::new(desc);
        self.put_index_fields(&mut b, ix, &cells, 0)?;
        if s.keyless {
            // A keyless table's index keys end with the row hash (its clustered key).
            let hash: &[u8; 16] =
                key.get(..16)
                    .and_then(|h| h.try_into().ok())
                    .ok_or_else(|| {
                        malformed(
                            "a keyless table's clustered key",
                            "shorter than its row hash",
                        )
                    })?;
            b.put_hash128(ix.key_columns.len(), hash).map_err(tree)?;
        }
        Ok(b.build().map_err(tree)?.as_bytes().to_vec())
    }

    /// Puts index `ix`'s key column fields of the row whose cells are `cells` (row `row` of
    /// a call) into `b`, as Dolt's index writer makes them: a VIRTUAL generated column's value
    /// computed from the row (it is in no row tuple), and a column with a prefix length cut
    /// to its first that many bytes (Dolt slices the value's bytes, for text too, so a cut
    /// may end inside a character; a TEXT or BLOB value stored out of band is read whole
    /// first, and the cut value is stored inline).
    pub(in crate::write) fn put_index_fields(
        &self,
        b: &mut TupleBuilder,
        ix: &Index,
        cells: &[Cell],
        row: usize,
    ) -> Result<()> {
        let s = &self.schema;
        let computed = if ix.key_columns.iter().any(|&c| s.columns[c].virtual_) {
            Some(self.virtual_cells(row, cells)?)
        } else {
            None
        };
        for (f, &c) in ix.key_columns.iter().enumerate() {
            let enc = key_encoding(s.columns[c].encoding);
            let cell = match &computed {
                Some(v) if s.columns[c].virtual_ => &v[c],
                _ => &cells[c],
            };
            let prefix = ix.prefix_lengths.get(f).copied().unwrap_or(0);
            if prefix == 0 || f >= ix.columns.len() || matches!(cell, Cell::Null) {
                self.put_cell(b, f, c, enc, row, cell)?;
                continue;
            }
            // The whole value as its key field would hold it, then its first bytes.
            let mut one = TupleBuilder::new(TupleDesc::new(vec![
                prollystore_format::tuple::Type::nullable(enc),
            ]));
            self.put_cell(&mut one, 0, c, enc, row, cell)?;
            let whole = one.build().map_err(tree)?;
            let field = whole.field(0).unwrap_or_default();
            // String and byte fields end with a 0x00 terminator.
            let bytes = field.strip_suffix(&[0]).unwrap_or(field);
            let cut = &bytes[..bytes.len().min(usize::from(prefix))];
            let c_name = &s.columns[c].name;
            match enc {
                Encoding::String => b.put_string_bytes(f, cut),
                Encoding::Bytes => b.put_bytes(f, cut),
                other => {
                    return Err(bad(
                        &self.name,
                        c_name,
                        format!("a prefix length on a column stored as {other:?}"),
                    ))
                }
            }
            .map_err(|e| bad(&self.name, c_name, format!("row {row}: {e}")))?;
        }
        Ok(())
    }

    /// `cells` with every VIRTUAL generated column's value computed from the others.
    fn virtual_cells(&self, row: usize, cells: &[Cell]) -> Result<Vec<Cell>> {
        let s = &self.schema;
        let virtuals = self.virtuals.get_or_init(|| {
            VirtualColumns::for_schema(&self.engine, &self.name, s).map_err(|e| e.to_string())
        });
        let mut out = cells.to_vec();
        let Some(virtuals) = virtuals
            .as_ref()
            .map_err(|e| bad(&self.name, &self.virtual_names(), format!("row {row}: {e}")))?
        else {
            return Ok(out);
        };
        let visible = s.visible_columns();
        let mut values = self.visible_values(&visible, cells)?;
        virtuals
            .fill(&mut values)
            .map_err(|e| bad(&self.name, &self.virtual_names(), format!("row {row}: {e}")))?;
        for (v, &c) in values.into_iter().zip(&visible) {
            if s.columns[c].virtual_ {
                out[c] = v.map_or(Cell::Null, Cell::Value);
            }
        }
        Ok(out)
    }

    /// Rows cannot be written under an index whose key Dolt keeps content-hashed: Dolt orders
    /// such keys by the contents of out-of-band values, which the index edits here cannot see
    /// yet.
    pub(in crate::write) fn refuse_content_hashed(&self, ix: &Index) -> Result<()> {
        if self.schema.content_hashed(ix).contains(&true) {
            return Err(DoltError::Unsupported(format!(
                "table {:?}: writing rows under UNIQUE index {:?}, whose TEXT/BLOB columns Dolt \
                 keeps content-hashed (a VARCHAR column works)",
                self.name, ix.name
            )));
        }
        Ok(())
    }

    /// The error for row `row` repeating a value of unique index `ix`.
    fn duplicate_entry(&self, ix: &Index, row: usize) -> DoltError {
        let names: Vec<&str> = ix
            .columns
            .iter()
            .map(|&c| self.schema.columns[c].name.as_str())
            .collect();
        bad(
            &self.name,
            &names.join(","),
            format!("row {row}: duplicate entry for unique key {:?}", ix.name),
        )
    }

    /// Puts `(key, value)` into the clustered index and its index keys into every secondary
    /// index; fails (nothing changed) on a unique-index duplicate.
    fn put_row(&mut self, store: &Overlay<'_>, row: usize, key: &[u8], value: &[u8]) -> Result<()> {
        let s = self.schema.clone();
        let empty = empty_value()?;
        let mut new_indexes = self.indexes.clone();
        for (i, ix) in s.indexes.iter().enumerate() {
            let ikey = self.index_key(store, i, key, value)?;
            let schema = index_schema(&s, ix)?;
            let map = Map::new(store, self.indexes[i], schema);
            if let Some(k) = unique_holder(&map, ix, &ikey)? {
                if s.keyless || k != ikey.as_slice() {
                    return Err(self.duplicate_entry(ix, row));
                }
            }
            new_indexes[i] = map
                .apply([(&ikey[..], Some(&empty[..]))])
                .map_err(tree)?
                .root();
        }
        let primary = self.primary_map(store)?;
        self.primary = primary.apply([(key, Some(value))]).map_err(tree)?.root();
        self.indexes = new_indexes;
        Ok(())
    }

    /// The name of the first unique index in which the stored row `(key, value)` has no NULL
    /// in the indexed columns (so another copy of it would be a duplicate there).
    fn unique_with_values(
        &self,
        store: &Overlay<'_>,
        key: &[u8],
        value: &[u8],
    ) -> Result<Option<String>> {
        let s = &self.schema;
        for (i, ix) in s.indexes.iter().enumerate().filter(|(_, ix)| ix.unique) {
            let ikey = self.index_key(store, i, key, value)?;
            let desc = index_schema(s, ix)?.key;
            let t = Tuple::new_unverified(&ikey);
            if (0..ix.columns.len()).all(|f| desc.field(t, f).is_some()) {
                return Ok(Some(ix.name.clone()));
            }
        }
        Ok(None)
    }

    /// Removes the stored row `(key, value)` from the clustered index and every index.
    fn remove_row(&mut self, store: &Overlay<'_>, key: &[u8], value: &[u8]) -> Result<()> {
        let s = self.schema.clone();
        for (i, ix) in s.indexes.iter().enumerate() {
            let ikey = self.index_key(store, i, key, value)?;
            let map = Map::new(store, self.indexes[i], index_schema(&s, ix)?);
            self.indexes[i] = map.apply([(&ikey[..], None)]).map_err(tree)?.root();
        }
        let primary = self.primary_map(store)?;
        self.primary = primary.apply([(key, None)]).map_err(tree)?.root();
        Ok(())
    }

    /// The stored row whose key equals `key` under the key's collations.
    pub(in crate::write) fn find(
        &self,
        store: &Overlay<'_>,
        key: &[u8],
    ) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let map = self.primary_map(store)?;
        let n = map.schema().key.len();
        let mut it = map.prefix_rows(key, n).map_err(tree)?;
        match it.next() {
            Some(r) => {
                let (k, v) = r.map_err(tree)?;
                Ok(Some((k.to_vec(), v.to_vec())))
            }
            None => Ok(None),
        }
    }

    /// Fills a row's cells from `given` (column positions and values); columns not given get
    /// their default (NULL when none and nullable).
    pub(in crate::write) fn full_row(
        &self,
        row: usize,
        given: impl IntoIterator<Item = (usize, Cell)>,
    ) -> Result<Vec<Cell>> {
        self.fill_row(row, given, false)
    }

    /// A stored row carried into this table's layout (a schema change): like
    /// [`full_row`](Self::full_row), but the generated columns' values given are kept as they
    /// were stored (as Dolt's rewrite projects them) and only the STORED generated columns not
    /// given (new ones) are computed.
    pub(in crate::write) fn carried_row(
        &self,
        given: impl IntoIterator<Item = (usize, Cell)>,
    ) -> Result<Vec<Cell>> {
        self.fill_row(0, given, true)
    }

    fn fill_row(
        &self,
        row: usize,
        given: impl IntoIterator<Item = (usize, Cell)>,
        carried: bool,
    ) -> Result<Vec<Cell>> {
        let s = &self.schema;
        let mut cells: Vec<Option<Cell>> = vec![None; s.columns.len()];
        let mut computed = Vec::new();
        let mut kept = Vec::new();
        for (c, v) in given {
            if carried {
                kept.push(c);
            } else {
                self.refuse_generated(row, c)?;
            }
            cells[c] = Some(v);
        }
        // Collected in place (the bulk import calls this for every row).
        let mut out = Vec::with_capacity(cells.len());
        for (i, cell) in cells.into_iter().enumerate() {
            let col = &s.columns[i];
            let cell = match cell {
                Some(c) => c,
                None if col.hidden || col.generated => Cell::Null,
                None => match col.default_value.as_deref().filter(|d| !d.is_empty()) {
                    None if col.nullable && !col.primary_key => Cell::Null,
                    None if col.auto_increment => Cell::Null,
                    // A NOT NULL column added without a default: the rows already stored take
                    // the type's implicit value, as Dolt's ALTER gives them.
                    None if carried && implicit_default(col).is_some() => {
                        let text = implicit_default(col).unwrap_or_default();
                        default_cell(col, text)
                            .map_err(|e| bad(&self.name, &col.name, format!("row {row}: {e}")))?
                    }
                    None => {
                        return Err(bad(
                            &self.name,
                            &col.name,
                            format!("row {row}: no value and no default"),
                        ))
                    }
                    Some(d) if is_expression_default(d) => {
                        computed.push(i);
                        Cell::Null
                    }
                    Some(d) => default_cell(col, d)
                        .map_err(|e| bad(&self.name, &col.name, format!("row {row}: {e}")))?,
                },
            };
            out.push(cell);
        }
        computed.extend(
            self.stored_generated()
                .into_iter()
                .filter(|c| !kept.contains(c)),
        );
        if !computed.is_empty() {
            self.fill_computed(row, &computed, &mut out)?;
        }
        Ok(out)
    }

    /// The stored row `(key, value)` with its STORED generated columns computed again from its
    /// other values: what Dolt's merge does to a row it merged cell by cell.
    pub(in crate::write) fn regenerated(
        &self,
        store: &Overlay<'_>,
        key: &[u8],
        value: &[u8],
    ) -> Result<Vec<u8>> {
        let mut cells = self.cells_of(store, key, value)?;
        self.fill_computed(0, &self.stored_generated(), &mut cells)?;
        Ok(self.encode_full_row(store, &cells)?.1)
    }

    /// Computes columns `columns` of row `row` (expression defaults, STORED generated
    /// columns) from its other values, in order (so a later one may use an earlier one).
    fn fill_computed(&self, row: usize, columns: &[usize], cells: &mut [Cell]) -> Result<()> {
        let s = &self.schema;
        let computed = self
            .expression_defaults
            .get_or_init(|| DefaultExprs::for_schema(&self.engine, &self.name, s));
        let visible = s.visible_columns();
        for &c in columns {
            let col = &s.columns[c];
            let err = |e: String| bad(&self.name, &col.name, format!("row {row}: {e}"));
            let Some(computed) = computed.as_ref().filter(|d| d.has(c)) else {
                return Err(err("computed column (not done yet)".into()));
            };
            let mut values = self.visible_values(&visible, cells)?;
            if col.generated {
                computed.fill_virtuals(&mut values).map_err(err)?;
            }
            cells[c] = match computed.value(col, c, &values).map_err(err)? {
                None => Cell::Null,
                Some(v) => Cell::Value(v),
            };
        }
        Ok(())
    }

    /// The STORED generated columns of the table, in column order (not a keyless table's
    /// hidden columns, which Dolt also marks generated).
    fn stored_generated(&self) -> Vec<usize> {
        let cols = &self.schema.columns;
        (0..cols.len())
            .filter(|&c| cols[c].generated && !cols[c].virtual_ && !cols[c].hidden)
            .collect()
    }

    /// Refuses a value given for a generated column, as MySQL does.
    fn refuse_generated(&self, row: usize, column: usize) -> Result<()> {
        let col = &self.schema.columns[column];
        if col.generated && !col.hidden {
            return Err(bad(
                &self.name,
                &col.name,
                format!(
                    "row {row}: a value for generated column {:?} is not allowed",
                    col.name
                ),
            ));
        }
        Ok(())
    }

    /// Inserts rows (each: column positions with values). A duplicate primary key or unique
    /// key is an error.
    pub(crate) fn insert(
        &mut self,
        store: &Overlay<'_>,
        rows: &[Vec<(usize, Cell)>],
    ) -> Result<()> {
        self.insert_rows(store, rows, false)
    }

    /// [`insert`](Self::insert) of stored rows carried into this table's layout by a schema
    /// change (see [`carried_row`](Self::carried_row)): a NOT NULL column they lack takes its
    /// type's implicit value.
    pub(in crate::write) fn insert_carried(
        &mut self,
        store: &Overlay<'_>,
        rows: &[Vec<(usize, Cell)>],
    ) -> Result<()> {
        self.insert_rows(store, rows, true)
    }

    fn insert_rows(
        &mut self,
        store: &Overlay<'_>,
        rows: &[Vec<(usize, Cell)>],
        carried: bool,
    ) -> Result<()> {
        let mut batch = Vec::new();
        let checks = RowChecks::for_schema(&self.engine, &self.name, &self.schema)?;
        for (r, given) in rows.iter().enumerate() {
            let mut cells = self.fill_row(r, given.iter().cloned(), carried)?;
            self.assign_auto_increment(&mut cells)?;
            for (c, cell) in cells.iter().enumerate() {
                if !self.schema.columns[c].hidden {
                    self.check_cell(r, c, cell)?;
                }
            }
            if let Some(checks) = &checks {
                checks.check(
                    &self.name,
                    r,
                    self.visible_values(checks.visible(), &cells)?,
                )?;
            }
            if self.schema.keyless {
                // Another copy of a stored row: its count goes up; a unique index refuses it
                // as Dolt's does (the row's own entry has the same prefix).
                self.add_copy(store, r, &cells)?;
                continue;
            }
            let (key, value) = self.encode(store, r, &cells, 1)?;
            batch.push((key, value, r));
        }
        if !batch.is_empty() {
            self.put_new_rows(store, &batch)?;
        }
        Ok(())
    }

    /// Puts rows with new primary keys, all in one edit of each index: duplicates among them,
    /// with stored rows, or in a unique index are errors naming the (later) row, and change
    /// nothing.
    fn put_new_rows(
        &mut self,
        store: &Overlay<'_>,
        rows: &[(Vec<u8>, Vec<u8>, usize)],
    ) -> Result<()> {
        let s = self.schema.clone();
        let primary = self.primary_map(store)?;
        let kd = primary.schema().key.clone();
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by(|&a, &b| kd.compare(&rows[a].0, &rows[b].0).then(a.cmp(&b)));
        let duplicate = |r: usize, what: &str, column: &str| {
            bad(&self.name, column, format!("row {r}: {what}"))
        };
        for w in order.windows(2) {
            if kd.compare(&rows[w[0]].0, &rows[w[1]].0).is_eq() {
                return Err(duplicate(
                    rows[w[1]].2,
                    "duplicate primary key",
                    &self.key_names(),
                ));
            }
        }
        // An empty table (new, or truncated for a replace) is built bottom-up from the
        // sorted rows: the same trees as edits give, without descending per row.
        let bulk = primary.count().map_err(tree)? == 0;
        if !bulk {
            for (key, _, r) in rows {
                if self.find(store, key)?.is_some() {
                    return Err(duplicate(*r, "duplicate primary key", &self.key_names()));
                }
            }
        }
        let empty = empty_value()?;
        let mut new_indexes = self.indexes.clone();
        for (i, ix) in s.indexes.iter().enumerate() {
            let map = Map::new(store, self.indexes[i], index_schema(&s, ix)?);
            let mut ikeys = rows
                .iter()
                .map(|(k, v, r)| Ok((self.index_key(store, i, k, v)?, *r)))
                .collect::<Result<Vec<_>>>()?;
            if ix.unique {
                let keyed = self.unique_new_keys(
                    ix,
                    &map.schema().key,
                    ikeys.iter().map(|(k, r)| (&k[..], *r)),
                )?;
                if !bulk {
                    let n = ix.columns.len();
                    for (k, r) in &keyed {
                        if map.prefix_rows(k, n).map_err(tree)?.next().is_some() {
                            return Err(self.duplicate_entry(ix, *r));
                        }
                    }
                }
            }
            new_indexes[i] = if bulk {
                let desc = &map.schema().key;
                ikeys.sort_by(|a, b| desc.compare(&a.0, &b.0));
                Map::from_sorted(
                    store,
                    map.schema().clone(),
                    ikeys.iter().map(|(k, _)| (&k[..], &empty[..])),
                )
                .map_err(tree)?
                .root()
            } else {
                map.apply(ikeys.iter().map(|(k, _)| (&k[..], Some(&empty[..]))))
                    .map_err(tree)?
                    .root()
            };
        }
        self.primary = if bulk {
            Map::from_sorted(
                store,
                primary.schema().clone(),
                order.iter().map(|&i| (&rows[i].0[..], &rows[i].1[..])),
            )
            .map_err(tree)?
            .root()
        } else {
            primary
                .apply(rows.iter().map(|(k, v, _)| (&k[..], Some(&v[..]))))
                .map_err(tree)?
                .root()
        };
        self.indexes = new_indexes;
        Ok(())
    }

    /// The new keys `keys` (index key, row) of UNIQUE index `ix` (key order `desc`) whose
    /// unique columns hold no NULL (NULLs never clash); two with the same unique values are an
    /// error naming the later row.
    pub(in crate::write) fn unique_new_keys<'k>(
        &self,
        ix: &Index,
        desc: &TupleDesc,
        keys: impl Iterator<Item = (&'k [u8], usize)>,
    ) -> Result<Vec<(&'k [u8], usize)>> {
        let n = ix.columns.len();
        let non_null = |k: &[u8]| (0..n).all(|f| desc.field(Tuple::new_unverified(k), f).is_some());
        let mut keyed: Vec<(&[u8], usize)> = keys.filter(|(k, _)| non_null(k)).collect();
        keyed.sort_by(|a, b| desc.compare_prefix(a.0, b.0, n).then(a.1.cmp(&b.1)));
        for w in keyed.windows(2) {
            if desc.compare_prefix(w[0].0, w[1].0, n).is_eq() {
                return Err(self.duplicate_entry(ix, w[1].1));
            }
        }
        Ok(keyed)
    }

    /// The values of the columns at `positions` of a row's cells, for CHECK constraints.
    pub(in crate::write) fn visible_values(
        &self,
        positions: &[usize],
        cells: &[Cell],
    ) -> Result<Vec<Option<SqlValue>>> {
        positions
            .iter()
            .map(|&c| match &cells[c] {
                Cell::Null => Ok(None),
                Cell::Value(v) => Ok(Some(v.clone())),
                Cell::Stored(bytes) => stored_value(&self.schema.columns[c], bytes),
            })
            .collect()
    }

    pub(in crate::write) fn key_names(&self) -> String {
        self.schema
            .key_columns
            .iter()
            .map(|&c| self.schema.columns[c].name.as_str())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// AUTO_INCREMENT: a NULL in the column gets the counter; any value at or above the
    /// counter moves it past that value.
    pub(in crate::write) fn assign_auto_increment(&mut self, cells: &mut [Cell]) -> Result<()> {
        let Some(c) = self.schema.columns.iter().position(|c| c.auto_increment) else {
            return Ok(());
        };
        let next = self.auto_increment.max(1);
        let v = match &cells[c] {
            Cell::Null => {
                cells[c] = Cell::Value(match self.schema.columns[c].sql_type {
                    SqlType::Int { unsigned: true, .. } => SqlValue::Uint(next),
                    _ => SqlValue::Int(next as i64),
                });
                next
            }
            Cell::Value(SqlValue::Int(x)) => *x as u64,
            Cell::Value(SqlValue::Uint(x)) => *x,
            _ => return Ok(()),
        };
        if v >= self.auto_increment {
            self.auto_increment = v + 1;
        }
        Ok(())
    }

    /// Updates rows by primary key: each row gives every key column and the columns to set;
    /// the key finds the stored row under the key's collations, and the new key spelling
    /// replaces the stored one. A missing row is an error.
    pub(crate) fn update(
        &mut self,
        store: &Overlay<'_>,
        rows: &[Vec<(usize, Cell)>],
    ) -> Result<()> {
        if self.schema.keyless {
            return Err(bad_input(
                format!("an update of table {:?} by key", self.name),
                "the table has no primary key",
            ));
        }
        let checks = RowChecks::for_schema(&self.engine, &self.name, &self.schema)?;
        for (r, given) in rows.iter().enumerate() {
            let key = self.key_of_given(r, given)?;
            let Some((old_key, old_value)) = self.find(store, &key)? else {
                return Err(bad(
                    &self.name,
                    &self.key_names(),
                    format!("row {r}: no row has this key"),
                ));
            };
            let mut cells = self.cells_of(store, &old_key, &old_value)?;
            for (c, v) in given {
                self.refuse_generated(r, *c)?;
                self.check_cell(r, *c, v)?;
                cells[*c] = v.clone();
            }
            let generated = self.stored_generated();
            if !generated.is_empty() {
                self.fill_computed(r, &generated, &mut cells)?;
            }
            self.assign_auto_increment(&mut cells)?;
            if let Some(checks) = &checks {
                checks.check(
                    &self.name,
                    r,
                    self.visible_values(checks.visible(), &cells)?,
                )?;
            }
            let (key, value) = self.encode(store, r, &cells, 1)?;
            // Dolt leaves a row alone when the new one equals it under the columns' types
            // (go-mysql-server compares old and new rows): a respelling equal under a `_ci`
            // collation, of the key or of a value, changes nothing. Not so in a table a
            // foreign key joins (Dolt 2.3.1 writes the respelling there).
            let keys = self.schema.primary_tuple_schema()?.key;
            let values = self.schema.collated_value_desc()?;
            if !self.in_foreign_key
                && keys.compare(&key, &old_key).is_eq()
                && values.compare(&value, &old_value).is_eq()
            {
                continue;
            }
            if key == old_key {
                self.replace_row(store, r, (&old_key, &old_value), &value)?;
            } else {
                self.remove_row(store, &old_key, &old_value)?;
                self.put_row(store, r, &key, &value)?;
            }
        }
        Ok(())
    }

    /// Replaces the value of the stored row `old` (same key bytes) by `value`: one edit of the
    /// clustered index, and of each index whose key changes (the same trees as removing and
    /// putting the row, with half the tree edits and none for unchanged index keys); fails
    /// (nothing changed) on a unique-index duplicate.
    fn replace_row(
        &mut self,
        store: &Overlay<'_>,
        row: usize,
        old: (&[u8], &[u8]),
        value: &[u8],
    ) -> Result<()> {
        let (key, old_value) = old;
        let mut new_indexes = self.indexes.clone();
        for (i, ix) in self.schema.indexes.iter().enumerate() {
            let old_ikey = self.index_key(store, i, key, old_value)?;
            let ikey = self.index_key(store, i, key, value)?;
            if old_ikey == ikey {
                continue;
            }
            let map = Map::new(store, self.indexes[i], index_schema(&self.schema, ix)?);
            if let Some(k) = unique_holder(&map, ix, &ikey)? {
                // The row's own old entry goes; any other is a duplicate.
                if k != old_ikey.as_slice() && k != ikey.as_slice() {
                    return Err(self.duplicate_entry(ix, row));
                }
            }
            let empty = empty_value()?;
            let mut edits = [(&old_ikey[..], None), (&ikey[..], Some(&empty[..]))];
            edits.sort_by(|a, b| map.schema().key.compare(a.0, b.0));
            new_indexes[i] = map.apply(edits).map_err(tree)?.root();
        }
        let primary = self.primary_map(store)?;
        self.primary = primary.apply([(key, Some(value))]).map_err(tree)?.root();
        self.indexes = new_indexes;
        Ok(())
    }

    /// Replaces the stored row `old` by `cells` (a value per column), as a foreign key's ON
    /// UPDATE CASCADE or SET NULL rewrites a child row: stored generated columns recomputed,
    /// then the checks of an update (NOT NULL, CHECK constraints, unique keys); a new primary
    /// key another row holds is a duplicate. Nothing changes on an error.
    /// In a keyless table one copy of the row changes: see [`EditTable::rewrite_copy`].
    pub(in crate::write) fn rewrite_row(
        &mut self,
        store: &Overlay<'_>,
        old: (&[u8], &[u8]),
        mut cells: Vec<Cell>,
    ) -> Result<()> {
        for (c, cell) in cells.iter().enumerate() {
            if !self.schema.columns[c].hidden {
                self.check_cell(0, c, cell)?;
            }
        }
        let generated = self.stored_generated();
        if !generated.is_empty() {
            self.fill_computed(0, &generated, &mut cells)?;
        }
        if let Some(checks) = RowChecks::for_schema(&self.engine, &self.name, &self.schema)? {
            checks.check(
                &self.name,
                0,
                self.visible_values(checks.visible(), &cells)?,
            )?;
        }
        if self.schema.keyless {
            return self.rewrite_copy(store, old, &cells);
        }
        let (key, value) = self.encode(store, 0, &cells, 1)?;
        if key == old.0 {
            return self.replace_row(store, 0, old, &value);
        }
        // The row itself, respelled under the key's collation, is no duplicate.
        if self.find(store, &key)?.is_some_and(|(k, _)| k != old.0) {
            return Err(bad(
                &self.name,
                &self.key_names(),
                "row 0: duplicate primary key".into(),
            ));
        }
        let before = (self.primary, self.indexes.clone());
        self.remove_row(store, old.0, old.1)?;
        if let Err(e) = self.put_row(store, 0, &key, &value) {
            (self.primary, self.indexes) = before;
            return Err(e);
        }
        Ok(())
    }

    /// Removes the stored row `(key, value)` (a child row an ON DELETE CASCADE deletes); in a
    /// keyless table, one copy of it (Dolt's engine finds each distinct row once through the
    /// child's index and deletes it once, so other copies stay).
    pub(in crate::write) fn delete_stored(
        &mut self,
        store: &Overlay<'_>,
        key: &[u8],
        value: &[u8],
    ) -> Result<()> {
        if self.schema.keyless {
            return self.remove_copy(store, key, value);
        }
        self.remove_row(store, key, value)
    }

    /// Removes one copy of the stored keyless row `(key, value)`: its count goes down, and
    /// at the last copy the row and its index entries go.
    fn remove_copy(&mut self, store: &Overlay<'_>, key: &[u8], value: &[u8]) -> Result<()> {
        let n = copies(value)?;
        if n > 1 {
            let nv = with_copies(value, n - 1);
            let primary = self.primary_map(store)?;
            self.primary = primary.apply([(key, Some(&nv[..]))]).map_err(tree)?.root();
            Ok(())
        } else {
            self.remove_row(store, key, value)
        }
    }

    /// Adds one copy of keyless row `cells` (of row number `row`, for errors): another copy
    /// of a stored row raises its count (refused when a unique index holds its values, as
    /// Dolt refuses it), a new row is put with its index entries.
    fn add_copy(&mut self, store: &Overlay<'_>, row: usize, cells: &[Cell]) -> Result<()> {
        let (key, value) = self.encode(store, row, cells, 1)?;
        match self.find(store, &key)? {
            Some((_, old)) => {
                if let Some(ix) = self.unique_with_values(store, &key, &old)? {
                    return Err(bad(
                        &self.name,
                        &ix,
                        format!("row {row}: duplicate entry for a unique key"),
                    ));
                }
                let new_value = with_copies(&old, copies(&old)? + 1);
                let primary = self.primary_map(store)?;
                self.primary = primary
                    .apply([(&key[..], Some(&new_value[..]))])
                    .map_err(tree)?
                    .root();
                Ok(())
            }
            None => self.put_row(store, row, &key, &value),
        }
    }

    /// One copy of the stored keyless row `old` replaced by `cells` (already checked by
    /// [`EditTable::rewrite_row`]), as the engine updates a keyless child row found through an
    /// index (ON UPDATE CASCADE, SET NULL): one copy of the old row removed and one of the new
    /// added. Nothing changes on an error.
    fn rewrite_copy(
        &mut self,
        store: &Overlay<'_>,
        old: (&[u8], &[u8]),
        cells: &[Cell],
    ) -> Result<()> {
        let before = (self.primary, self.indexes.clone());
        self.remove_copy(store, old.0, old.1)?;
        if let Err(e) = self.add_copy(store, 0, cells) {
            (self.primary, self.indexes) = before;
            return Err(e);
        }
        Ok(())
    }

    /// The clustered key of a row given as column positions and values (its key columns).
    fn key_of_given(&self, row: usize, given: &[(usize, Cell)]) -> Result<Vec<u8>> {
        let mut cells: Vec<Cell> = vec![Cell::Null; self.schema.columns.len()];
        for (c, v) in given {
            cells[*c] = v.clone();
        }
        self.key_of(row, &cells)
    }

    /// The clustered key of `cells` (only the key columns are read).
    fn key_of(&self, row: usize, cells: &[Cell]) -> Result<Vec<u8>> {
        let s = &self.schema;
        let mut kb = TupleBuilder::new(s.key_desc());
        for (f, &c) in s.key_columns.iter().enumerate() {
            let enc = key_encoding(s.columns[c].encoding);
            if matches!(cells[c], Cell::Null) {
                return Err(bad(
                    &self.name,
                    &s.columns[c].name,
                    format!("row {row}: NULL in the key"),
                ));
            }
            self.put_cell(&mut kb, f, c, enc, row, &cells[c])?;
        }
        Ok(kb.build().map_err(tree)?.as_bytes().to_vec())
    }

    /// Deletes rows by primary key (values in primary-key order). Missing rows are skipped, as
    /// `DELETE … WHERE` skips them.
    pub(crate) fn delete_keys(&mut self, store: &Overlay<'_>, keys: &[Vec<Cell>]) -> Result<()> {
        for (r, key_cells) in keys.iter().enumerate() {
            if key_cells.len() != self.schema.key_columns.len() {
                return Err(bad(
                    &self.name,
                    &self.key_names(),
                    format!(
                        "row {r}: {} key values for {} key columns",
                        key_cells.len(),
                        self.schema.key_columns.len()
                    ),
                ));
            }
            let mut cells = vec![Cell::Null; self.schema.columns.len()];
            for (&c, v) in self.schema.key_columns.iter().zip(key_cells) {
                cells[c] = v.clone();
            }
            let key = self.key_of(r, &cells)?;
            if let Some((k, v)) = self.find(store, &key)? {
                self.remove_row(store, &k, &v)?;
            }
        }
        Ok(())
    }

    /// Inserts rows whose key is new; for the others sets the given columns (keyless tables:
    /// every row is inserted).
    pub(crate) fn upsert(
        &mut self,
        store: &Overlay<'_>,
        rows: &[Vec<(usize, Cell)>],
    ) -> Result<()> {
        if self.schema.keyless {
            return self.insert(store, rows);
        }
        // Rows of stored keys are updates, one by one; the others are inserted in one batch
        // unless a key repeats among them (then row by row, the later row updating the
        // earlier, as in Dolt).
        let primary = self.primary_map(store)?;
        let kd = primary.schema().key.clone();
        let empty = primary.count().map_err(tree)? == 0;
        let (mut updates, mut inserts) = (Vec::new(), Vec::new());
        let mut keys = Vec::with_capacity(rows.len());
        for (r, given) in rows.iter().enumerate() {
            let key = self.key_of_given(r, given)?;
            if !empty && self.find(store, &key)?.is_some() {
                updates.push(r);
            } else {
                inserts.push(r);
                keys.push(key);
            }
        }
        let mut sorted: Vec<&Vec<u8>> = keys.iter().collect();
        sorted.sort_by(|a, b| kd.compare(a, b));
        if sorted.windows(2).any(|w| kd.compare(w[0], w[1]).is_eq()) {
            return self.upsert_each(store, rows);
        }
        for &r in &updates {
            self.update(store, std::slice::from_ref(&rows[r]))
                .map_err(|e| renumber(e, r))?;
        }
        let new_rows: Vec<Vec<(usize, Cell)>> = inserts.iter().map(|&r| rows[r].clone()).collect();
        self.insert(store, &new_rows)
            .map_err(|e| renumber_in(e, &inserts))
    }

    /// [`EditTable::upsert`] row by row.
    fn upsert_each(&mut self, store: &Overlay<'_>, rows: &[Vec<(usize, Cell)>]) -> Result<()> {
        for (r, given) in rows.iter().enumerate() {
            let key = self.key_of_given(r, given)?;
            let one = std::slice::from_ref(given);
            if self.find(store, &key)?.is_some() {
                self.update(store, one)
            } else {
                self.insert(store, one)
            }
            .map_err(|e| renumber(e, r))?;
        }
        Ok(())
    }

    /// Deletes the rows with the keys of the given rows (keyless tables: one copy of each row).
    pub(crate) fn delete_matching(
        &mut self,
        store: &Overlay<'_>,
        rows: &[Vec<(usize, Cell)>],
    ) -> Result<()> {
        if self.schema.keyless {
            return self.delete_rows(store, rows);
        }
        let keys = rows
            .iter()
            .enumerate()
            .map(|(r, given)| {
                self.schema
                    .key_columns
                    .iter()
                    .map(|k| {
                        given
                            .iter()
                            .find(|(c, _)| c == k)
                            .map(|(_, v)| v.clone())
                            .ok_or_else(|| {
                                bad(
                                    &self.name,
                                    &self.schema.columns[*k].name,
                                    format!("row {r}: no value for this key column"),
                                )
                            })
                    })
                    .collect::<Result<Vec<Cell>>>()
            })
            .collect::<Result<Vec<_>>>()?;
        self.delete_keys(store, &keys)
    }

    /// Removes every row (the clustered index and every secondary index become empty).
    pub(crate) fn truncate(&mut self, store: &Overlay<'_>) -> Result<()> {
        let s = self.schema.clone();
        self.primary = Map::empty(store, s.primary_tuple_schema()?)
            .map_err(tree)?
            .root();
        for (i, ix) in s.indexes.iter().enumerate() {
            self.indexes[i] = Map::empty(store, index_schema(&s, ix)?)
                .map_err(tree)?
                .root();
        }
        Ok(())
    }

    /// Deletes one copy of each full row of a keyless table (`DELETE … LIMIT 1`).
    pub(crate) fn delete_rows(
        &mut self,
        store: &Overlay<'_>,
        rows: &[Vec<(usize, Cell)>],
    ) -> Result<()> {
        if !self.schema.keyless {
            return Err(bad_input(
                format!("a delete of whole rows from table {:?}", self.name),
                "the table has a primary key: delete by key",
            ));
        }
        for (r, given) in rows.iter().enumerate() {
            let mut cells = vec![Cell::Null; self.schema.columns.len()];
            for (c, v) in given {
                cells[*c] = v.clone();
            }
            let (key, _) = self.encode(store, r, &cells, 1)?;
            let Some((k, v)) = self.find(store, &key)? else {
                continue;
            };
            self.remove_copy(store, &k, &v)?;
        }
        Ok(())
    }
}

/// An error about "row 0" of a one-row call, renumbered as row `r` of the caller's rows.
fn renumber(e: DoltError, r: usize) -> DoltError {
    e.map_reason(|reason| reason.replacen("row 0", &format!("row {r}"), 1))
}

/// The tuple schema of secondary index `ix` as stored: its key columns, and for a keyless
/// table the row hash after them (Dolt appends it to every index key).
pub(crate) fn index_schema(s: &Schema, ix: &crate::schema::Index) -> Result<TupleSchema> {
    let schema = s.index_tuple_schema(ix)?;
    if !s.keyless {
        return Ok(schema);
    }
    let key = &schema.key;
    let mut types = key.types().to_vec();
    let mut collations: Vec<_> = (0..types.len()).map(|i| key.collation(i)).collect();
    types.push(prollystore_format::tuple::Type::not_null(Encoding::Hash128));
    collations.push(None);
    Ok(TupleSchema::new(
        TupleDesc::new(types).with_collations(collations),
        schema.value,
    ))
}

/// An error about "row i" of a call given the rows `rows` of the caller's, renumbered as the
/// caller's row.
fn renumber_in(e: DoltError, rows: &[usize]) -> DoltError {
    match e {
        DoltError::BadValue {
            table,
            column,
            reason,
        } => {
            let fixed = reason
                .strip_prefix("row ")
                .and_then(|rest| {
                    let digits =
                        rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                    let i: usize = rest[..digits].parse().ok()?;
                    Some(format!("row {}{}", rows.get(i)?, &rest[digits..]))
                })
                .unwrap_or(reason);
            DoltError::BadValue {
                table,
                column,
                reason: fixed,
            }
        }
        other => other,
    }
}

/// A keyless row value's count of copies (its first field, a little-endian u64).
pub(in crate::write) fn copies(value: &[u8]) -> Result<u64> {
    let b: [u8; 8] = value
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| {
            malformed(
                "a keyless row's value",
                "shorter than its 8-byte copy count",
            )
        })?;
    Ok(u64::from_le_bytes(b))
}

fn with_copies(value: &[u8], n: u64) -> Vec<u8> {
    let mut v = value.to_vec();
    v[..8].copy_from_slice(&n.to_le_bytes());
    v
}

/// The value MySQL gives a NOT NULL column that has no default, as default text: zero,
/// the empty string, the zero date; `None` where ours was not shown to match Dolt's (TIME,
/// which Dolt stores otherwise; ENUM, YEAR, JSON, geometry, vectors).
fn implicit_default(col: &crate::schema::Column) -> Option<&'static str> {
    use crate::schema::SqlType as T;
    Some(match &col.sql_type {
        T::Int { .. } | T::Float | T::Double | T::Decimal { .. } | T::Bit(_) => "0",
        T::Text { .. } | T::Binary { .. } | T::Set { .. } => "''",
        T::Date => "'0000-00-00'",
        T::Datetime(_) | T::Timestamp(_) => "'0000-00-00 00:00:00'",
        _ => return None,
    })
}

/// A column default as printed (`'new'`, `'0'`, `NULL`, `42`) as a cell.
fn default_cell(col: &crate::schema::Column, text: &str) -> std::result::Result<Cell, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("null") {
        return Ok(Cell::Null);
    }
    let unquoted = match t.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        Some(inner) => inner.replace("''", "'"),
        None => t.to_string(),
    };
    parse_value(col, &unquoted).map(Cell::Value)
}

/// A value as the ops files and `dolt sql -r csv` print it, as a cell of column `col`: binary
/// columns as `hex:` + lowercase hex (their raw bytes otherwise), everything else as
/// [`parse_value`] reads it.
pub(crate) fn cell_from_text(
    col: &crate::schema::Column,
    text: Option<&str>,
) -> std::result::Result<Cell, String> {
    let Some(t) = text else {
        return Ok(Cell::Null);
    };
    if let (SqlType::Binary { fixed, .. }, Some(hex)) = (&col.sql_type, t.strip_prefix("hex:")) {
        let mut bytes = crate::value_parse::parse_hex(hex)
            .ok_or_else(|| format!("{t:?} is not hex: and hex digits"))?;
        if let Some(n) = fixed {
            bytes.resize((*n as usize).max(bytes.len()), 0);
        }
        return Ok(Cell::Value(SqlValue::Bytes(bytes)));
    }
    if let SqlType::Binary { fixed, .. } = &col.sql_type {
        let mut bytes = t.as_bytes().to_vec();
        if let Some(n) = fixed {
            bytes.resize((*n as usize).max(bytes.len()), 0);
        }
        return Ok(Cell::Value(SqlValue::Bytes(bytes)));
    }
    parse_value(col, t).map(Cell::Value)
}

/// For a UNIQUE index `ix` (as the map `map`), the stored key that already holds the unique
/// values of index key `ikey`, if any; `None` also when `ix` is not unique or a unique value
/// is NULL (NULLs never clash).
fn unique_holder<'m>(
    map: &Map<'m, Overlay<'_>, TupleSchema>,
    ix: &Index,
    ikey: &[u8],
) -> Result<Option<&'m [u8]>> {
    if !ix.unique {
        return Ok(None);
    }
    let n = ix.columns.len();
    let desc = &map.schema().key;
    if (0..n).any(|f| desc.field(Tuple::new_unverified(ikey), f).is_none()) {
        return Ok(None);
    }
    match map.prefix_rows(ikey, n).map_err(tree)?.next() {
        Some(found) => Ok(Some(found.map_err(tree)?.0)),
        None => Ok(None),
    }
}
