//! Keyed reads of one table state: rows by primary key, key ranges in either direction (whole
//! keys or a prefix of a composite key, inclusive or exclusive bounds, a row limit), and
//! lookups and ranges through a named secondary index that return whole rows. Everything
//! reads through the table's index maps ([`crate::index_map`]); rows come out of an
//! [`Iterator`], keyless rows repeated by their cardinality as Dolt shows them.

use std::borrow::Cow;
use std::ops::Bound;

use prollystore::map::{KeyWindow, Window};
use prollystore::{Map, TreeError};
use prollystore_format::tuple::{Tuple, TupleBuilder, TupleDesc};

use crate::chunks::DoltChunkSource;
use crate::codec::encode::KeyEncoder;
use crate::db::{Database, Table};
use crate::error::{bad_chunk, bad_input, DoltError, Result};
use crate::index_map::IndexMap;
use crate::schema::{Column, Index};
use crate::sql_value::{Nullable, SqlValue};
use crate::table_rows::RowDecoder;

/// One row: a value per visible column, `None` for NULL.
pub type Row = Vec<Option<SqlValue>>;

/// Which keys a scan visits: bounds on the leading key columns (a bound with fewer values than
/// the key has columns bounds a prefix of a composite key), the direction, and a row limit.
///
/// Bounds are in key order, where NULL (`None` in a bound, as in rows) is a key like any other
/// and sorts first, as in Dolt's indexes. So an unbounded lower end takes the rows whose
/// column is NULL in, `KeyRange::prefix(vec![None::<SqlValue>])` is SQL's `c IS NULL`, and
/// SQL's `c < x` (which leaves NULLs out) is `from: Excluded(vec![None])` to
/// `Excluded(vec![Some(x)])`.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyRange {
    /// Lower bound (`None` for NULL).
    pub from: Bound<Vec<Option<SqlValue>>>,
    /// Upper bound (`None` for NULL).
    pub to: Bound<Vec<Option<SqlValue>>>,
    /// Descending key order.
    pub reverse: bool,
    /// At most this many rows (keyless row copies count one each).
    pub limit: Option<u64>,
}

impl Default for KeyRange {
    fn default() -> Self {
        KeyRange::all()
    }
}

impl KeyRange {
    /// Every row, in key order.
    pub fn all() -> KeyRange {
        KeyRange {
            from: Bound::Unbounded,
            to: Bound::Unbounded,
            reverse: false,
            limit: None,
        }
    }

    /// The rows between two bounds, in key order. Bound values are anything that becomes an
    /// `Option<SqlValue>`: `SqlValue`s, or `Option<SqlValue>`s where a bound holds NULL.
    ///
    /// ```
    /// use std::ops::Bound;
    /// use prollystore_dolt::{KeyRange, SqlValue};
    /// let r = KeyRange::between(Bound::Included(vec![SqlValue::Int(1)]), Bound::Unbounded);
    /// assert_eq!(r.from, Bound::Included(vec![Some(SqlValue::Int(1))]));
    /// assert_eq!((r.reverse, r.limit), (false, None));
    /// ```
    pub fn between<V: Into<Option<SqlValue>>>(from: Bound<Vec<V>>, to: Bound<Vec<V>>) -> KeyRange {
        KeyRange {
            from: nullable_bound(from),
            to: nullable_bound(to),
            ..KeyRange::all()
        }
    }

    /// The rows whose leading key columns equal `prefix` (a `None` among them matches NULL,
    /// as `IS NULL` does).
    ///
    /// ```
    /// use prollystore_dolt::{KeyRange, SqlValue};
    /// let is_null = KeyRange::prefix(vec![None::<SqlValue>]); // c IS NULL
    /// let is_one = KeyRange::prefix(vec![SqlValue::Int(1)]); // c = 1
    /// assert_ne!(is_null, is_one);
    /// ```
    pub fn prefix<V: Into<Option<SqlValue>>>(prefix: Vec<V>) -> KeyRange {
        let prefix: Vec<Option<SqlValue>> = prefix.into_iter().map(Into::into).collect();
        KeyRange {
            from: Bound::Included(prefix.clone()),
            to: Bound::Included(prefix),
            ..KeyRange::all()
        }
    }
}

/// A bound of values as a bound of `Option<SqlValue>`s.
fn nullable_bound<V: Into<Option<SqlValue>>>(b: Bound<Vec<V>>) -> Bound<Vec<Option<SqlValue>>> {
    let all = |v: Vec<V>| v.into_iter().map(Into::into).collect();
    match b {
        Bound::Included(v) => Bound::Included(all(v)),
        Bound::Excluded(v) => Bound::Excluded(all(v)),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// Keyed access to one table: made once, then any number of gets and scans.
pub struct TableReader<'a> {
    db: &'a Database,
    table: &'a Table,
    decoder: RowDecoder<'a>,
    /// The clustered index in byte order, for whole scans.
    scan_map: IndexMap<'a>,
    /// The clustered index in Dolt's key order and its key encoder; `None` for keyless tables
    /// and keys whose collation is not implemented (the methods that need it say why).
    primary: Option<(IndexMap<'a>, KeyEncoder)>,
}

impl std::fmt::Debug for TableReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableReader")
            .field("table", &self.table.name)
            .finish_non_exhaustive()
    }
}

impl Table {
    /// Every row in primary-key order (keyless tables: stored order, each row repeated by its
    /// cardinality). A whole scan never compares keys, so it works for any key collation.
    pub fn rows<'a>(&'a self, db: &'a Database) -> Result<Rows<'a>> {
        TableReader::new(db, self)?.scan(&KeyRange::all())
    }

    /// A reader for keyed access to this table.
    pub fn reader<'a>(&'a self, db: &'a Database) -> Result<TableReader<'a>> {
        TableReader::new(db, self)
    }
}

impl<'a> TableReader<'a> {
    /// The reader of `table`. Fails for tables whose rows cannot be shown (see
    /// [`RowDecoder::new`]).
    pub fn new(db: &'a Database, table: &'a Table) -> Result<TableReader<'a>> {
        let decoder = RowDecoder::shared(db, table)?;
        let scan_map = table.primary_scan_map(db);
        let s = &table.schema;
        let primary = match table.primary_order(db) {
            Ok(schema) if !s.keyless => {
                let enc = encoder(table, &s.key_columns, schema.key.clone());
                Some((Map::new(db.source(), scan_map.root(), schema), enc))
            }
            _ => None,
        };
        Ok(TableReader {
            db,
            table,
            decoder,
            scan_map,
            primary,
        })
    }

    /// The table read.
    pub fn table(&self) -> &'a Table {
        self.table
    }

    /// The database the table is read from.
    pub fn database(&self) -> &'a Database {
        self.db
    }

    /// Names of the visible columns, in row order.
    pub fn column_names(&self) -> Vec<&'a str> {
        let s = &self.table.schema;
        s.visible_columns()
            .into_iter()
            .filter_map(|i| s.columns.get(i).map(|c| c.name.as_str()))
            .collect()
    }

    /// The encoder of primary-key values (refused for keyless tables: their key is a hash).
    pub fn primary_key(&self) -> Result<KeyEncoder> {
        if let Some((_, enc)) = &self.primary {
            return Ok(enc.clone());
        }
        let s = &self.table.schema;
        if s.keyless {
            return Err(bad_input(
                format!("a primary-key lookup in table {:?}", self.table.name),
                "the table has no primary key (keyless): scan it, or look up through an index",
            ));
        }
        let desc = s.primary_tuple_schema()?.key;
        Ok(encoder(self.table, &s.key_columns, desc))
    }

    /// The encoder of the key values of secondary index `name` (its columns, then the primary
    /// key's).
    pub fn index_key(&self, name: &str) -> Result<KeyEncoder> {
        let index = self.index(name)?;
        let desc = self.table.schema.index_tuple_schema(index)?.key;
        // A keyless table's index keys end with the row hash, which no one types.
        let n = if self.table.schema.keyless {
            index.columns.len()
        } else {
            index.key_columns.len()
        };
        let hashed = self.table.schema.content_hashed(index);
        Ok(
            encoder(self.table, index.key_columns.get(..n).unwrap_or(&[]), desc)
                .with_content_hashed(hashed),
        )
    }

    /// The clustered index in Dolt's key order with its key encoder (errors as
    /// [`TableReader::primary_key`]).
    fn primary(&self) -> Result<(&IndexMap<'a>, &KeyEncoder)> {
        match &self.primary {
            Some((map, enc)) => Ok((map, enc)),
            None => self.primary_key().and(Err(bad_input(
                format!("a primary-key read of table {:?}", self.table.name),
                "the table has no primary key order",
            ))),
        }
    }

    fn index(&self, name: &str) -> Result<&'a Index> {
        let index = self
            .table
            .schema
            .indexes
            .iter()
            .find(|ix| ix.name == name)
            .ok_or_else(|| {
                DoltError::NotFound(format!("index {name:?} of table {:?}", self.table.name))
            })?;
        if index.fulltext || index.spatial {
            return Err(DoltError::Unsupported(format!(
                "index {name:?} of table {:?}: lookups through FULLTEXT and SPATIAL indexes \
                 (scan the table, or use another index)",
                self.table.name
            )));
        }
        Ok(index)
    }

    /// The row whose primary key is `key` (a value per key column), if any. Text keys match
    /// under the column's collation, as in Dolt.
    ///
    /// ```
    /// use prollystore_dolt::{Database, SqlValue, State};
    /// # fn main() -> prollystore_dolt::Result<()> {
    /// # let dir = prollystore_test_vectors::require("dolt-db/vecdb");
    /// let db = Database::open(&dir)?;
    /// let pairs = db.table_at("main", State::Committed, "pairs")?;
    /// let reader = pairs.reader(&db)?;
    /// let key = [SqlValue::Int(-140), SqlValue::Text("b07500".into())]; // PRIMARY KEY (a, b)
    /// let row = reader.get(&key)?.expect("a row");
    /// assert_eq!(row[2], Some(SqlValue::Int(-594478844756599092))); // v
    /// assert_eq!(row[4].as_ref().map(SqlValue::to_text).as_deref(), Some("427:04:32.000000"));
    /// assert_eq!(reader.get(&[SqlValue::Int(0), SqlValue::Text("x".into())])?, None);
    /// # Ok(())
    /// # }
    /// ```
    pub fn get<V: Nullable>(&self, key: &[V]) -> Result<Option<Row>> {
        let (_, enc) = self.primary()?;
        if key.len() != enc.columns().len() {
            let names: Vec<&str> = enc.columns().iter().map(|c| c.name.as_str()).collect();
            return Err(DoltError::BadValue {
                table: self.table.name.clone(),
                column: names.join(", "),
                reason: format!(
                    "a get needs all {} primary-key values, {} given (scan a prefix instead)",
                    enc.columns().len(),
                    key.len()
                ),
            });
        }
        if key.iter().any(|v| v.as_value().is_none()) {
            // A primary key is never NULL (and `= NULL` matches nothing in SQL either).
            return Ok(None);
        }
        let k = enc.encode(key)?;
        self.get_stored(&k, |key, value| self.decode(key, value))
    }

    /// Looks up the whole primary key tuple `key` (encoded as [`TableReader::primary_key`]'s
    /// encoder encodes it) and, when a row has it, calls `f` with the stored key and value
    /// tuples. For callers that decode rows their own way (language bindings) without
    /// building [`SqlValue`]s.
    pub fn get_stored<R>(
        &self,
        key: &[u8],
        f: impl FnOnce(&[u8], &[u8]) -> Result<R>,
    ) -> Result<Option<R>> {
        let (map, _) = self.primary()?;
        let err = |e| tree_error(self.table, e);
        let mut c = map.seek(key).map_err(err)?;
        if !c.valid() {
            c.advance(self.db.source()).map_err(err)?;
        }
        // The stored key may differ in bytes from `key` (another spelling under a collation):
        // the row shows the stored one, as Dolt does.
        if !c.valid() || !map.schema().key.compare(c.key(), key).is_eq() {
            return Ok(None);
        }
        f(c.key(), c.value()).map(Some)
    }

    /// The stored value of the row whose primary key tuple is `key`, found by the map's point
    /// lookup (node hints, no cursor): cheaper than [`TableReader::get_stored`], but it gives
    /// no stored key, so it suits keys whose equal values have equal bytes (no collated text),
    /// where the stored key is `key` itself.
    pub fn get_stored_value(&self, key: &[u8]) -> Result<Option<&'a [u8]>> {
        let (map, _) = self.primary()?;
        map.get(key).map_err(|e| tree_error(self.table, e))
    }

    /// The visible column values of one stored (key, value) pair of the clustered index.
    pub fn decode(&self, key: &[u8], value: &[u8]) -> Result<Row> {
        let mut row = Vec::new();
        self.decoder.decode_into(self.db, key, value, &mut row)?;
        Ok(row)
    }

    /// The rows of the primary key range `range`.
    ///
    /// ```
    /// use prollystore_dolt::{Database, KeyRange, SqlValue, State};
    /// # fn main() -> prollystore_dolt::Result<()> {
    /// # let dir = prollystore_test_vectors::require("dolt-db/vecdb");
    /// let db = Database::open(&dir)?;
    /// let items = db.table_at("main", State::Committed, "items")?;
    /// let last_two = KeyRange { reverse: true, limit: Some(2), ..KeyRange::all() };
    /// let rows: Vec<_> = items.reader(&db)?.scan(&last_two)?.collect::<Result<_, _>>()?;
    /// assert_eq!(rows.len(), 2);
    /// assert_eq!((&rows[0][0], &rows[1][0]), (&Some(SqlValue::Int(2659)), &Some(SqlValue::Int(2658))));
    /// # Ok(())
    /// # }
    /// ```
    pub fn scan(&self, range: &KeyRange) -> Result<Rows<'a>> {
        let unbounded = matches!(
            (&range.from, &range.to),
            (Bound::Unbounded, Bound::Unbounded)
        );
        if unbounded {
            // No key compares: the byte-order descriptor serves any collation.
            return self.rows_of(self.scan_map.clone(), None, range, None);
        }
        let (map, enc) = self.primary()?;
        let range = without_impossible_nulls(range, enc.desc());
        self.rows_of(map.clone(), Some(enc.clone()), &range, None)
    }

    /// The rows stored at positions `ordinals` of the clustered index (0: the first), in key
    /// order: a part of the table cut by row counts ([`crate::parts`]). Positions count
    /// stored entries, so a keyless row comes with all its copies. A whole-index walk from a
    /// position never compares keys: it works for any key collation.
    pub fn scan_ordinals(&self, ordinals: std::ops::Range<u64>) -> Result<Rows<'a>> {
        let window = PrefixWindow {
            key: self.scan_map.schema().key.clone(),
            from: None,
            to: None,
        };
        let entries = self
            .scan_map
            .window_from_ordinal(ordinals.start, window)
            .map_err(|e| tree_error(self.table, e))?;
        let mut rows = self.rows_at(entries, None, None);
        rows.entries_left = Some(ordinals.end.saturating_sub(ordinals.start));
        Ok(rows)
    }

    /// The positions in the clustered index (as [`TableReader::scan_ordinals`] takes them) of
    /// the rows of primary-key range `range`, found by two descents (no row is read past
    /// them). A `limit` shortens the end; a `reverse` range is refused (positions run in key
    /// order).
    ///
    /// ```
    /// use std::ops::Bound;
    /// use prollystore_dolt::{Database, KeyRange, SqlValue, State};
    /// # fn main() -> prollystore_dolt::Result<()> {
    /// # let dir = prollystore_test_vectors::require("dolt-db/vecdb");
    /// let db = Database::open(&dir)?;
    /// let items = db.table_at("main", State::Committed, "items")?;
    /// let reader = items.reader(&db)?;
    /// let range = KeyRange::between(Bound::Included(vec![SqlValue::Int(100)]), Bound::Excluded(vec![SqlValue::Int(200)]));
    /// let at = reader.ordinals(&range)?;
    /// let by_key: Vec<_> = reader.scan(&range)?.collect::<Result<_, _>>()?;
    /// let by_position: Vec<_> = reader.scan_ordinals(at)?.collect::<Result<_, _>>()?;
    /// assert_eq!(by_key, by_position);
    /// # Ok(())
    /// # }
    /// ```
    pub fn ordinals(&self, range: &KeyRange) -> Result<std::ops::Range<u64>> {
        if range.reverse {
            return Err(bad_input(
                format!("the positions of a range of table {:?}", self.table.name),
                "the range is reversed (positions run in key order)",
            ));
        }
        let unbounded = matches!(
            (&range.from, &range.to),
            (Bound::Unbounded, Bound::Unbounded)
        );
        let err = |e| tree_error(self.table, e);
        let (start, end) = if unbounded {
            (0, self.scan_map.count().map_err(err)?)
        } else {
            let (map, enc) = self.primary()?;
            let range = without_impossible_nulls(range, enc.desc());
            let encode = |b: &Bound<Vec<Option<SqlValue>>>| -> Result<_> {
                Ok(match b {
                    Bound::Unbounded => None,
                    Bound::Included(v) => Some((enc.encode(v)?, v.len(), true)),
                    Bound::Excluded(v) => Some((enc.encode(v)?, v.len(), false)),
                })
            };
            let window = PrefixWindow {
                key: map.schema().key.clone(),
                from: encode(&range.from)?,
                to: encode(&range.to)?,
            };
            let first = map
                .seek_partition(|k| window.below(k), false)
                .map_err(err)?;
            let past = map
                .seek_partition(|k| !window.above(k), false)
                .map_err(err)?;
            (first.ordinal(), past.ordinal().max(first.ordinal()))
        };
        let end = match range.limit {
            Some(n) => end.min(start.saturating_add(n)),
            None => end,
        };
        Ok(start..end)
    }

    /// The rows whose index `index` keys are in `range`, as whole rows, in index order.
    ///
    /// An index that does not hold whole values — a prefix length (`KEY (name(3))`; Dolt cuts
    /// at that many bytes), or a UNIQUE index on TEXT/BLOB (Dolt stores those columns
    /// content-hashed) — is scanned over a range of its stored keys that surely holds every
    /// matching row, and each row is checked against `range` on its whole values under the
    /// column's collation: the rows are exactly SQL's, in stored order. Such a scan is narrow
    /// for binary and code-point-ordered text columns (and equality on a content-hashed column
    /// stored as an address); otherwise it reads the stretch the columns before it bound.
    /// FULLTEXT and SPATIAL indexes are refused.
    ///
    /// ```
    /// use std::ops::Bound;
    /// use prollystore_dolt::{Database, KeyRange, SqlValue, State};
    /// # fn main() -> prollystore_dolt::Result<()> {
    /// # let dir = prollystore_test_vectors::require("dolt-db/vecdb");
    /// let db = Database::open(&dir)?;
    /// let items = db.table_at("main", State::Committed, "items")?;
    /// let reader = items.reader(&db)?;
    /// // KEY idx_name (name): the names from "a" up to "b", in index order.
    /// let range = KeyRange::between(
    ///     Bound::Included(vec![SqlValue::from("a")]),
    ///     Bound::Excluded(vec![SqlValue::from("b")]),
    /// );
    /// let name = reader.column_names().iter().position(|&c| c == "name").unwrap();
    /// for row in reader.index_scan("idx_name", &range)? {
    ///     let row = row?;
    ///     assert!(matches!(&row[name], Some(SqlValue::Text(n)) if n.starts_with('a')));
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn index_scan(&self, index: &str, range: &KeyRange) -> Result<Rows<'a>> {
        let ix = self.index(index)?;
        let map = self.table.index_map(self.db, index)?;
        let enc = self.index_key(index)?;
        let range = &without_impossible_nulls(range, enc.desc());
        let s = &self.table.schema;
        // A keyless table's index keys end with the row hash (its primary key) after the
        // index's own columns.
        let pk_fields = if s.keyless {
            vec![ix.key_columns.len()]
        } else {
            s.key_columns
                .iter()
                .map(|c| {
                    ix.key_columns.iter().position(|k| k == c).ok_or_else(|| {
                        bad_chunk(
                            self.table.schema_address,
                            format!("index {index:?} lacks primary-key column {c}"),
                        )
                    })
                })
                .collect::<Result<Vec<_>>>()?
        };
        let lookup = IndexLookup {
            name: ix.name.clone(),
            primary: self.scan_map.clone(),
            pk_fields,
            builder: TupleBuilder::new(s.key_desc()),
        };
        match self.inexact_bounds(ix, &enc, range)? {
            None => self.rows_of(map, Some(enc), range, Some(lookup)),
            Some((stored, filter)) => {
                let mut rows = self.rows_of(map, Some(enc), &stored, Some(lookup))?;
                rows.filter = Some(filter);
                Ok(rows)
            }
        }
    }

    /// For an index that does not hold every bounded column's whole value (a prefix length,
    /// or a content-hashed column), the range over its stored keys that surely holds every
    /// row of `range`, and the filter that keeps exactly those rows; `None` when the index
    /// holds whole values and `range` can be used as it is. Rows then come in stored order.
    fn inexact_bounds(
        &self,
        ix: &Index,
        enc: &KeyEncoder,
        range: &KeyRange,
    ) -> Result<Option<(KeyRange, RowFilter)>> {
        let s = &self.table.schema;
        let bounded = |b: &Bound<Vec<Option<SqlValue>>>| match b {
            Bound::Included(v) | Bound::Excluded(v) => v.len(),
            Bound::Unbounded => 0,
        };
        let n = bounded(&range.from).max(bounded(&range.to));
        let prefix = |k: usize| ix.prefix_lengths.get(k).copied().unwrap_or(0);
        let Some(j) = (0..n).find(|&k| prefix(k) > 0 || enc.is_hashed(k)) else {
            return Ok(None);
        };
        let col = &enc.columns()[j];
        let order = s.index_value_order(ix)?;
        let byte_ordered = match s.column_collation(col)? {
            None => true,
            Some(c) => c.is_code_point_order(),
        };
        let equality = matches!((&range.from, &range.to),
            (Bound::Included(a), Bound::Included(b)) if a == b);
        // Column `j`'s part of each stored bound (see `stored_bound`), or none.
        let cut = |b: &Bound<Vec<Option<SqlValue>>>, upper: bool| -> Bound<Vec<Option<SqlValue>>> {
            let v = match b {
                Bound::Included(v) | Bound::Excluded(v) if v.len() > j => v,
                other => return other.clone(),
            };
            let mut head = v[..j].to_vec();
            let Some(value) = &v[j] else {
                // NULL is stored as NULL, never cut or hashed: exact.
                head.push(None);
                return Bound::Included(head);
            };
            let part = if enc.is_hashed(j) {
                // Equal addresses are equal bytes: exact only where equal bytes is equality.
                // Adaptive values are ordered by their contents, and a large one's contents
                // are out of band, where a key compare cannot see them: not bounded.
                let by_address = !col.encoding.is_adaptive();
                (equality && byte_ordered && by_address).then(|| (value.clone(), true))
            } else if byte_ordered {
                stored_bound(value, usize::from(prefix(j)), upper)
            } else {
                None
            };
            match part {
                Some((value, inclusive)) => {
                    head.push(Some(value));
                    if inclusive {
                        Bound::Included(head)
                    } else {
                        Bound::Excluded(head)
                    }
                }
                None if head.is_empty() => Bound::Unbounded,
                None => Bound::Included(head),
            }
        };
        let stored = KeyRange {
            from: cut(&range.from, false),
            to: cut(&range.to, true),
            reverse: range.reverse,
            limit: range.limit,
        };
        let columns: Vec<Column> = ix.key_columns[..n]
            .iter()
            .filter_map(|&c| s.columns.get(c).cloned())
            .collect();
        let visible = s.visible_columns();
        let positions = ix.key_columns[..n]
            .iter()
            .map(|c| visible.iter().position(|v| v == c).unwrap_or(usize::MAX))
            .collect();
        let whole = KeyEncoder::new(&self.table.name, columns, order.clone());
        let encode = |b: &Bound<Vec<Option<SqlValue>>>| -> Result<Option<(Vec<u8>, usize, bool)>> {
            Ok(match b {
                Bound::Unbounded => None,
                Bound::Included(v) => Some((whole.encode(v)?, v.len(), true)),
                Bound::Excluded(v) => Some((whole.encode(v)?, v.len(), false)),
            })
        };
        let filter = RowFilter {
            from: encode(&range.from)?,
            to: encode(&range.to)?,
            encoder: whole,
            order,
            positions,
            values: Vec::new(),
        };
        Ok(Some((stored, filter)))
    }

    /// The rows of index `index` whose leading key columns equal `values` (`None` matches
    /// NULL).
    pub fn index_lookup<V: Nullable>(&self, index: &str, values: &[V]) -> Result<Rows<'a>> {
        let values: Vec<Option<SqlValue>> = values.iter().map(|v| v.as_value().cloned()).collect();
        self.index_scan(index, &KeyRange::prefix(values))
    }

    fn rows_of(
        &self,
        map: IndexMap<'a>,
        enc: Option<KeyEncoder>,
        range: &KeyRange,
        lookup: Option<IndexLookup<'a>>,
    ) -> Result<Rows<'a>> {
        let encode = |b: &Bound<Vec<Option<SqlValue>>>| -> Result<Option<(Vec<u8>, usize, bool)>> {
            Ok(match (b, &enc) {
                (Bound::Unbounded, _) | (_, None) => None,
                (Bound::Included(v), Some(e)) => Some((e.encode(v)?, v.len(), true)),
                (Bound::Excluded(v), Some(e)) => Some((e.encode(v)?, v.len(), false)),
            })
        };
        let window = PrefixWindow {
            key: map.schema().key.clone(),
            from: encode(&range.from)?,
            to: encode(&range.to)?,
        };
        let entries = map
            .window(window, range.reverse)
            .map_err(|e| tree_error(self.table, e))?;
        Ok(self.rows_at(entries, lookup, range.limit))
    }

    /// The rows of `entries`, at most `limit` of them.
    fn rows_at(
        &self,
        entries: Window<'a, DoltChunkSource, PrefixWindow>,
        lookup: Option<IndexLookup<'a>>,
        limit: Option<u64>,
    ) -> Rows<'a> {
        Rows {
            db: self.db,
            table: self.table,
            decoder: self.decoder.clone(),
            entries,
            lookup,
            pk: Vec::new(),
            left: limit,
            entries_left: None,
            repeat: Vec::new(),
            repeats: 0,
            filter: None,
            done: false,
        }
    }
}

/// `range` without NULLs for key columns that cannot hold one (a primary key's, a NOT NULL
/// column's). NULL sorts before every value, so such a bound is a bound on the columns before
/// it: a lower bound takes every value of the column from there on, an upper bound none.
/// Keys are then never built with a NULL where the key has no room for one.
fn without_impossible_nulls<'r>(range: &'r KeyRange, desc: &TupleDesc) -> Cow<'r, KeyRange> {
    let impossible = |b: &Bound<Vec<Option<SqlValue>>>| match b {
        Bound::Included(v) | Bound::Excluded(v) => v
            .iter()
            .enumerate()
            .position(|(j, x)| x.is_none() && desc.types().get(j).is_some_and(|t| !t.nullable)),
        Bound::Unbounded => None,
    };
    let (from_at, to_at) = (impossible(&range.from), impossible(&range.to));
    if from_at.is_none() && to_at.is_none() {
        return Cow::Borrowed(range);
    }
    let head = |b: &Bound<Vec<Option<SqlValue>>>, j: usize| match b {
        Bound::Included(v) | Bound::Excluded(v) => v[..j].to_vec(),
        Bound::Unbounded => Vec::new(),
    };
    let mut r = range.clone();
    if let Some(j) = from_at {
        r.from = match j {
            0 => Bound::Unbounded,
            _ => Bound::Included(head(&range.from, j)),
        };
    }
    if let Some(j) = to_at {
        // Excluding the first `j` values (none: every key) leaves exactly the keys before.
        r.to = Bound::Excluded(head(&range.to, j));
    }
    Cow::Owned(r)
}

/// The encoder of keys over `positions` of `table`'s columns, described by `desc`.
fn encoder(table: &Table, positions: &[usize], desc: TupleDesc) -> KeyEncoder {
    let s = &table.schema;
    let columns = positions
        .iter()
        .filter_map(|&i| s.columns.get(i).cloned())
        .collect();
    KeyEncoder::new(&table.name, columns, desc)
}

/// A scan's range as bounds on the leading fields of keys: each bound is a key tuple of the
/// fields it bounds, their number, and whether it is inclusive.
struct PrefixWindow {
    key: TupleDesc,
    from: Option<(Vec<u8>, usize, bool)>,
    to: Option<(Vec<u8>, usize, bool)>,
}

impl KeyWindow for PrefixWindow {
    fn below(&self, k: &[u8]) -> bool {
        self.from.as_ref().is_some_and(|(b, n, incl)| {
            let o = self.key.compare_prefix(k, b, *n);
            o.is_lt() || (!incl && o.is_eq())
        })
    }

    fn above(&self, k: &[u8]) -> bool {
        self.to.as_ref().is_some_and(|(b, n, incl)| {
            let o = self.key.compare_prefix(k, b, *n);
            o.is_gt() || (!incl && o.is_eq())
        })
    }
}

/// How an index scan turns index keys into rows.
struct IndexLookup<'a> {
    name: String,
    primary: IndexMap<'a>,
    /// Per primary-key field, its position in the index key.
    pk_fields: Vec<usize>,
    builder: TupleBuilder,
}

/// The rows of a scan (see [`TableReader::scan`], [`TableReader::index_scan`],
/// [`Table::rows`]). After an error the iteration ends. [`Rows::next_into`] reuses the caller's
/// row: no allocation per row for fixed-width columns.
pub struct Rows<'a> {
    db: &'a Database,
    table: &'a Table,
    decoder: RowDecoder<'a>,
    entries: Window<'a, DoltChunkSource, PrefixWindow>,
    lookup: Option<IndexLookup<'a>>,
    /// Index scans: the primary key of the current entry (reused).
    pk: Vec<u8>,
    /// Rows still allowed by the limit.
    left: Option<u64>,
    /// Stored entries still to read (a scan by positions).
    entries_left: Option<u64>,
    /// A keyless row still owed, and how many more copies of it.
    repeat: Row,
    repeats: u64,
    /// Rows an inexact index returns are checked against the range here.
    filter: Option<RowFilter>,
    done: bool,
}

impl std::fmt::Debug for Rows<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rows")
            .field("table", &self.table.name)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

/// A stored entry of a scan: the primary key (`None`: in `Rows::pk`) and the row value.
type Entry<'a> = (Option<&'a [u8]>, &'a [u8]);

impl<'a> Rows<'a> {
    /// The next stored entry within the range, as (primary key, row value), stepping past it.
    /// Index scans leave the primary key in `self.pk` and return `None` for it.
    fn next_entry(&mut self) -> Result<Option<Entry<'a>>> {
        if self.done || self.entries_left == Some(0) {
            return Ok(None);
        }
        let Some(entry) = self.entries.next() else {
            return Ok(None);
        };
        if let Some(n) = &mut self.entries_left {
            *n -= 1;
        }
        let (k, v) = entry.map_err(|e| tree_error(self.table, e))?;
        let Some(lookup) = &mut self.lookup else {
            return Ok(Some((Some(k), v)));
        };
        let bad = |e: &dyn std::fmt::Display| {
            bad_chunk(
                self.table.address,
                format!("index {:?} key: {e}", lookup.name),
            )
        };
        let t = Tuple::new(k).map_err(|e| bad(&e))?;
        for (i, &f) in lookup.pk_fields.iter().enumerate() {
            let field = t.field(f).unwrap_or(&[]);
            lookup.builder.put_raw(i, field).map_err(|e| bad(&e))?;
        }
        let pk = lookup.builder.build().map_err(|e| bad(&e))?;
        self.pk.clear();
        self.pk.extend_from_slice(pk.as_bytes());
        let v = lookup
            .primary
            .get(&self.pk)
            .map_err(|e| tree_error(self.table, e))?
            .ok_or_else(|| bad(&"names a row the primary index does not hold"))?;
        Ok(Some((None, v)))
    }

    /// Decodes the next row into `row` (cleared first, its allocation reused); false at the
    /// end of the range.
    pub fn next_into(&mut self, row: &mut Row) -> Result<bool> {
        let r = self.step_into(row);
        if !matches!(r, Ok(true)) {
            self.done = true;
        }
        r
    }

    fn step_into(&mut self, row: &mut Row) -> Result<bool> {
        loop {
            if self.left == Some(0) {
                return Ok(false);
            }
            if self.repeats > 0 {
                self.repeats -= 1;
                row.clone_from(&self.repeat);
                self.count_one();
                return Ok(true);
            }
            let Some((key, value)) = self.next_entry()? else {
                return Ok(false);
            };
            let key = key.unwrap_or(&self.pk);
            let copies = self.decoder.decode_into(self.db, key, value, row)?;
            if copies == 0 {
                continue;
            }
            if let Some(f) = &mut self.filter {
                if !f.admits(row)? {
                    continue;
                }
            }
            if copies > 1 {
                self.repeat.clone_from(row);
                self.repeats = copies - 1;
            }
            self.count_one();
            return Ok(true);
        }
    }

    fn count_one(&mut self) {
        if let Some(n) = &mut self.left {
            *n -= 1;
        }
    }
}

impl Iterator for Rows<'_> {
    type Item = Result<Row>;

    fn next(&mut self) -> Option<Result<Row>> {
        let mut row = Vec::new();
        match self.next_into(&mut row) {
            Ok(true) => Some(Ok(row)),
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

/// The rows an index that cuts or hashes values returns, checked against the range on
/// whole values (see [`TableReader::index_scan`]).
struct RowFilter {
    /// Encodes a row's values of the bounded index columns in `order`.
    encoder: KeyEncoder,
    order: TupleDesc,
    /// Per bounded index column, its position in a row.
    positions: Vec<usize>,
    from: Option<(Vec<u8>, usize, bool)>,
    to: Option<(Vec<u8>, usize, bool)>,
    values: Vec<Option<SqlValue>>,
}

impl RowFilter {
    fn admits(&mut self, row: &Row) -> Result<bool> {
        self.values.clear();
        for &p in &self.positions {
            self.values.push(row.get(p).cloned().flatten());
        }
        let key = self.encoder.encode(&self.values)?;
        if let Some((b, n, inclusive)) = &self.from {
            let o = self.order.compare_prefix(&key, b, *n);
            if o.is_lt() || (o.is_eq() && !inclusive) {
                return Ok(false);
            }
        }
        if let Some((b, n, inclusive)) = &self.to {
            let o = self.order.compare_prefix(&key, b, *n);
            if o.is_gt() || (o.is_eq() && !inclusive) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The part of a bound on a column that a prefix index cuts at `len` (Dolt cuts at `len`
/// bytes, even inside a character) that surely contains, in stored order, every row of the
/// whole-value bound, for columns ordered by bytes or code points: `(value, inclusive)`, or
/// `None` when the column cannot be bounded.
///
/// Bytes: the cut itself, inclusive (cutting keeps byte order). Text: a cut that ends on a
/// character boundary at most `len - 3` bytes in, so every row's stored key holds whole
/// characters over its length; a lower bound is that cut, an upper bound the smallest text
/// after every text starting with it (last character + 1), exclusive.
fn stored_bound(v: &SqlValue, len: usize, upper: bool) -> Option<(SqlValue, bool)> {
    match v {
        SqlValue::Bytes(b) => Some((SqlValue::Bytes(b[..b.len().min(len)].to_vec()), true)),
        SqlValue::Text(t) => {
            let keep = len.saturating_sub(3);
            let mut end = t.len().min(keep);
            while !t.is_char_boundary(end) {
                end -= 1;
            }
            let mut cut: Vec<char> = t[..end].chars().collect();
            if !upper {
                return (!cut.is_empty())
                    .then(|| (SqlValue::Text(cut.into_iter().collect()), true));
            }
            // Increment the last character that has a successor; drop the ones that do not.
            while let Some(last) = cut.pop() {
                let next = (u32::from(last) + 1..=0x10FFFF).find_map(char::from_u32);
                if let Some(next) = next {
                    cut.push(next);
                    return Some((SqlValue::Text(cut.into_iter().collect()), false));
                }
            }
            None
        }
        _ => None,
    }
}

/// A tree error while reading `table`: store failures keep their own variant (a missing chunk,
/// an I/O error, a damaged file), the rest name the table.
fn tree_error(table: &Table, e: TreeError) -> DoltError {
    match DoltError::from(e) {
        DoltError::Tree(e) => bad_chunk(table.address, format!("table {:?}: {e}", table.name)),
        other => other,
    }
}
