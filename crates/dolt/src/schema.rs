//! Table schemas (`DSCH`): columns with their SQL types and storage encodings, the primary key,
//! keyless tables, secondary indexes, and the tuple descriptors that decode rows.

use prollystore_format::message::generated::serial;
pub use prollystore_format::sql_type::SqlType;
use prollystore_format::tuple::{TupleDesc, Type};
use prollystore_format::{Address, Encoding};

use crate::error::{bad_chunk, Result};
use crate::message::fb_root;

/// One column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// Name.
    pub name: String,
    /// The MySQL type text as stored.
    pub sql_type_text: String,
    /// The parsed type.
    pub sql_type: SqlType,
    /// Storage encoding (authoritative for decoding).
    pub encoding: Encoding,
    /// Dolt's column tag.
    pub tag: u64,
    /// Part of the primary key.
    pub primary_key: bool,
    /// May hold NULL (as stored; primary-key columns never do).
    pub nullable: bool,
    /// AUTO_INCREMENT.
    pub auto_increment: bool,
    /// Hidden (keyless tables' internal columns).
    pub hidden: bool,
    /// A generated column.
    pub generated: bool,
    /// A virtual generated column (not stored in rows).
    pub virtual_: bool,
    /// Default value or generation expression.
    pub default_value: Option<String>,
    /// `ON UPDATE` expression (e.g. `CURRENT_TIMESTAMP(6)`).
    pub on_update: Option<String>,
    /// Column comment.
    pub comment: Option<String>,
}

/// A secondary index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Index {
    /// Name.
    pub name: String,
    /// Indexed columns (positions in [`Schema::columns`]; positions in rows:
    /// [`Index::positions`]).
    pub columns: Vec<usize>,
    /// Key columns (indexed, then remaining primary-key columns).
    pub key_columns: Vec<usize>,
    /// UNIQUE.
    pub unique: bool,
    /// Prefix lengths, per indexed column (empty if none).
    pub prefix_lengths: Vec<u16>,
    /// SPATIAL.
    pub spatial: bool,
    /// FULLTEXT.
    pub fulltext: bool,
    /// Added by Dolt, not declared (the index it adds for a foreign key no index serves).
    pub system_defined: bool,
}

impl Index {
    /// The indexed columns as positions in rows (visible columns), in index order.
    pub fn positions(&self, schema: &Schema) -> Vec<usize> {
        self.columns
            .iter()
            .filter_map(|&i| schema.visible_position(i))
            .collect()
    }
}

/// A table schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schema {
    /// All columns in schema order (keyless tables include the two hidden trailing columns).
    pub columns: Vec<Column>,
    /// Primary-key column positions in [`Schema::columns`], in key order (keyless: the hidden
    /// hash column); positions in rows: [`Schema::key_positions`].
    pub key_columns: Vec<usize>,
    /// Column positions of the stored value tuple fields, in order (virtual columns removed;
    /// keyless: the cardinality column first).
    pub value_columns: Vec<usize>,
    /// True for a table without a primary key.
    pub keyless: bool,
    /// Secondary indexes.
    pub indexes: Vec<Index>,
    /// CHECK constraints: (name, expression, enforced).
    pub checks: Vec<(String, String, bool)>,
    /// Table collation id (MySQL's numbering; 309 = `utf8mb4_0900_bin`).
    pub collation: u16,
    /// Table comment.
    pub comment: Option<String>,
}

impl Schema {
    /// Decodes a `DSCH` chunk.
    pub fn decode(chunk: &[u8], address: Address) -> Result<Schema> {
        let s = fb_root::<serial::TableSchema>(chunk, b"DSCH", address)?;
        let mut columns = Vec::new();
        for c in s.columns() {
            let text = c.sql_type().unwrap_or("").to_string();
            let code = c.encoding().0;
            let encoding = Encoding::from_code(code).ok_or_else(|| {
                bad_chunk(
                    address,
                    format!("column {:?} has unknown encoding {code}", c.name()),
                )
            })?;
            columns.push(Column {
                name: c.name().to_string(),
                sql_type: SqlType::parse(&text),
                sql_type_text: text,
                encoding,
                tag: c.tag(),
                primary_key: c.primary_key(),
                nullable: c.nullable(),
                auto_increment: c.auto_increment(),
                hidden: c.hidden(),
                generated: c.generated(),
                virtual_: c.virtual_(),
                default_value: c.default_value().map(str::to_string),
                on_update: c.on_update_value().map(str::to_string),
                comment: c.comment().map(str::to_string),
            });
        }
        let n = columns.len();
        let pos = |v: u16| -> Result<usize> {
            let i = usize::from(v);
            if i < n {
                Ok(i)
            } else {
                Err(bad_chunk(
                    address,
                    format!("index refers to column {i} of {n}"),
                ))
            }
        };
        let ci = s.clustered_index();
        let key_columns = ci
            .key_columns()
            .iter()
            .map(pos)
            .collect::<Result<Vec<_>>>()?;
        let all_values = ci
            .value_columns()
            .map(|v| v.iter().map(pos).collect::<Result<Vec<_>>>())
            .transpose()?
            .unwrap_or_default();
        let keyless = n >= 2
            && columns
                .get(n - 2)
                .is_some_and(|c| c.name == "keyless_hash_id" && c.hidden)
            && columns
                .get(n - 1)
                .is_some_and(|c| c.name == "keyless_cardinality");
        let value_columns = all_values
            .into_iter()
            .filter(|&i| !columns.get(i).is_some_and(|c| c.virtual_))
            .collect();
        let mut indexes = Vec::new();
        for ix in s.secondary_indexes().iter().flatten() {
            let columns: Vec<usize> = ix.index_columns().iter().map(pos).collect::<Result<_>>()?;
            // A keyed table's index is keyed by its columns, then the primary key's others in
            // key order, which Dolt derives again when it reads a schema: the stored list may
            // have them in column order (Dolt 2.3.1 writes it so after changing a column in
            // place), and the index's rows are not keyed that way.
            let key_columns = if keyless {
                ix.key_columns().iter().map(pos).collect::<Result<_>>()?
            } else {
                let rest = key_columns.iter().filter(|k| !columns.contains(k));
                columns.iter().chain(rest).copied().collect()
            };
            indexes.push(Index {
                name: ix.name().unwrap_or("").to_string(),
                columns,
                key_columns,
                unique: ix.unique_key(),
                prefix_lengths: ix
                    .prefix_lengths()
                    .map(|v| v.iter().collect())
                    .unwrap_or_default(),
                spatial: ix.spatial_key(),
                fulltext: ix.fulltext_key(),
                system_defined: ix.system_defined(),
            });
        }
        let checks = s
            .checks()
            .iter()
            .flatten()
            .map(|c| {
                (
                    c.name().unwrap_or("").to_string(),
                    c.expression().unwrap_or("").to_string(),
                    c.enforced(),
                )
            })
            .collect();
        Ok(Schema {
            columns,
            key_columns,
            value_columns,
            keyless,
            indexes,
            checks,
            collation: s.collation().0,
            comment: s.comment().map(str::to_string),
        })
    }

    /// The columns a `SELECT *` shows (hidden columns left out), as positions.
    pub fn visible_columns(&self) -> Vec<usize> {
        (0..self.columns.len())
            .filter(|&i| !self.columns.get(i).is_some_and(|c| c.hidden))
            .collect()
    }

    /// Where column `i` of [`Schema::columns`] is in rows (which hold the visible columns
    /// only); `None` for a hidden column.
    pub fn visible_position(&self, i: usize) -> Option<usize> {
        let c = self.columns.get(i)?;
        if c.hidden {
            return None;
        }
        Some(self.columns[..i].iter().filter(|c| !c.hidden).count())
    }

    /// The primary-key columns as positions in rows (visible columns), in key order; empty
    /// for a keyless table (its key is a hidden hash).
    ///
    /// ```
    /// use prollystore_dolt::Database;
    ///
    /// # fn main() -> prollystore_dolt::Result<()> {
    /// # let dir = prollystore_test_vectors::require("dolt-db/vecdb");
    /// let db = Database::open(&dir)?;
    /// let pairs = db.table_at("main", Default::default(), "pairs")?;
    /// assert_eq!(pairs.schema.key_positions(), [0, 1]); // PRIMARY KEY (a, b)
    /// let ix = &pairs.schema.indexes[0];
    /// assert_eq!((ix.name.as_str(), ix.positions(&pairs.schema)), ("uniq_v", vec![2]));
    /// # Ok(())
    /// # }
    /// ```
    pub fn key_positions(&self) -> Vec<usize> {
        if self.keyless {
            return Vec::new();
        }
        self.key_columns
            .iter()
            .filter_map(|&i| self.visible_position(i))
            .collect()
    }

    /// Descriptor of the clustered index's key tuples.
    pub fn key_desc(&self) -> TupleDesc {
        if self.keyless {
            return TupleDesc::new(vec![Type::not_null(Encoding::Hash128)]);
        }
        TupleDesc::new(
            self.key_columns
                .iter()
                .filter_map(|&i| self.columns.get(i))
                .map(|c| Type::not_null(key_encoding(c.encoding)))
                .collect(),
        )
    }

    /// Descriptor of the clustered index's value tuples.
    pub fn value_desc(&self) -> TupleDesc {
        TupleDesc::new(
            self.value_columns
                .iter()
                .enumerate()
                .filter_map(|(f, &i)| Some((f, self.columns.get(i)?)))
                .map(|(f, c)| {
                    if self.keyless && f == 0 {
                        Type::not_null(Encoding::Uint64)
                    } else {
                        Type::nullable(c.encoding)
                    }
                })
                .collect(),
        )
    }
}

/// The encoding a column has inside a key tuple: adaptive text/blob types are stored inline
/// (String/Bytes) and geometry as a spatial cell.
pub fn key_encoding(enc: Encoding) -> Encoding {
    match enc {
        Encoding::StringAdaptive | Encoding::StringAddr => Encoding::String,
        Encoding::BytesAdaptive | Encoding::BytesAddr => Encoding::Bytes,
        Encoding::GeomAdaptive | Encoding::GeomAddr | Encoding::Geometry => Encoding::Cell,
        e => e,
    }
}
