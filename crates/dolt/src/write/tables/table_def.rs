//! A new table's definition (what `CREATE TABLE` declares) and the schema message Dolt stores
//! for it: the stored type text and storage encoding of every column, the clustered index,
//! secondary and unique indexes, checks, the table collation and comment.

use std::collections::HashSet;

use prollystore_format::collation::Collation;
use prollystore_format::message::objects::{
    CheckFields, ColumnFields, IndexFields, TableSchemaFields,
};
use prollystore_format::sql_type::TypeTextError;
use prollystore_format::Encoding;

use super::column_tags::{kind_of, tags_for_new_table};
use crate::error::{bad_input, collation_input, encode, DoltError, Result};
use crate::schema::SqlType;

/// One declared column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnDef {
    /// Name.
    pub name: String,
    /// The type as `dolt schema show` prints it (`int`, `varchar(30)`, `decimal(10,2)`,
    /// `enum('a','b')`, `varchar(40) COLLATE utf8mb4_0900_ai_ci`); a spatial type with its
    /// SRID attribute as Dolt stores it, `point SRID 4326`.
    pub sql_type: String,
    /// May hold NULL (primary-key columns never do).
    pub nullable: bool,
    /// The default as printed after `DEFAULT` (`'new'`, `CURRENT_TIMESTAMP`), if any.
    pub default: Option<String>,
    /// AUTO_INCREMENT.
    pub auto_increment: bool,
    /// Column comment (unescaped), if any.
    pub comment: Option<String>,
    /// Dolt's column tag; `None` derives it as Dolt does for a new column.
    pub tag: Option<u64>,
    /// A generated column's expression and kind (`None`: an ordinary column).
    pub generated: Option<GeneratedDef>,
}

/// A generated column (`[GENERATED ALWAYS] AS (expr) [STORED | VIRTUAL]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratedDef {
    /// The expression as Dolt stores it (`(`id` + 1)`: in Dolt's CHECK spelling inside
    /// parentheses; `prollystore-sql` writes it so from `CREATE TABLE` text).
    pub expr: String,
    /// STORED (computed when a row is written, kept in the row) rather than VIRTUAL (computed
    /// when read).
    pub stored: bool,
}

/// One declared secondary index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexDef {
    /// Name.
    pub name: String,
    /// Indexed column names, in index order.
    pub columns: Vec<String>,
    /// UNIQUE.
    pub unique: bool,
    /// Per indexed column, its prefix length (`name(10)`; 0: the whole value), or empty when
    /// no column has one. Dolt keeps the first that many *bytes* of the value in the index
    /// (for text too, though MySQL counts characters), so a cut may end inside a character.
    pub prefix_lengths: Vec<u16>,
    /// SPATIAL: one NOT NULL spatial column, keyed by its values' spatial cells.
    pub spatial: bool,
}

/// One declared CHECK constraint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckDef {
    /// Name; empty for an unnamed check, which the writer names as Dolt 2.3.1 does
    /// (`<table>_chk_` and 8 characters of the stored expression's address).
    pub name: String,
    /// The expression as `dolt schema show` prints it inside `CHECK (...)`.
    pub expr: String,
}

impl CheckDef {
    /// The name Dolt 2.3.1 gives an unnamed check of table `table` (its `generateCheckName`):
    /// `<table>_chk_` and the first 8 characters of the address (SHA-512, base32) of the
    /// stored expression text, deterministic; while that name is `taken` (case-insensitively,
    /// by a check or foreign key of the table) `_0`, `_1`, … is appended.
    pub(crate) fn dolt_name(table: &str, expr: &str, taken: impl Fn(&str) -> bool) -> String {
        let hash = prollystore_format::HashProfile::Dolt
            .address_of(expr.as_bytes())
            .to_base32();
        let base = format!("{table}_chk_{}", &hash[..8]);
        let mut name = base.clone();
        let mut i = 0;
        while taken(&name) {
            name = format!("{base}_{i}");
            i += 1;
        }
        name
    }
}

impl TableDef {
    /// Names the unnamed checks as Dolt names them, in order (each sees the checks before it
    /// and the foreign keys `fk_names`, as Dolt adds checks one by one after the keys).
    pub(crate) fn name_checks(&mut self, fk_names: &[String]) {
        for i in 0..self.checks.len() {
            if !self.checks[i].name.is_empty() {
                continue;
            }
            let (before, rest) = self.checks.split_at(i);
            let name = CheckDef::dolt_name(&self.name, &rest[0].expr, |n| {
                before.iter().any(|c| c.name.eq_ignore_ascii_case(n))
                    || fk_names.iter().any(|f| f.eq_ignore_ascii_case(n))
            });
            self.checks[i].name = name;
        }
    }
}

/// What a foreign key does to child rows when their parent row is deleted or its referenced
/// columns change (stored as Dolt's `ForeignKeyReferentialAction`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ForeignKeyAction {
    /// Not declared (enforced as RESTRICT).
    #[default]
    Default,
    /// CASCADE: child rows are deleted with their parent, or given its new values.
    Cascade,
    /// NO ACTION (enforced as RESTRICT, as in MySQL).
    NoAction,
    /// RESTRICT.
    Restrict,
    /// SET NULL: child rows' referencing columns become NULL when their parent row goes or
    /// its referenced values change.
    SetNull,
}

impl ForeignKeyAction {
    /// The stored code (`serial.ForeignKeyReferentialAction`).
    pub fn code(self) -> u8 {
        match self {
            ForeignKeyAction::Default => 0,
            ForeignKeyAction::Cascade => 1,
            ForeignKeyAction::NoAction => 2,
            ForeignKeyAction::Restrict => 3,
            ForeignKeyAction::SetNull => 4,
        }
    }

    /// The action stored as `code`, if it is one.
    pub fn from_code(code: u8) -> Option<ForeignKeyAction> {
        Some(match code {
            0 => ForeignKeyAction::Default,
            1 => ForeignKeyAction::Cascade,
            2 => ForeignKeyAction::NoAction,
            3 => ForeignKeyAction::Restrict,
            4 => ForeignKeyAction::SetNull,
            _ => return None,
        })
    }
}

/// One declared foreign key of a new table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForeignKeyDef {
    /// Constraint name; `None` takes Dolt's generated `<table>_ibfk_<n>`.
    pub name: Option<String>,
    /// Referencing columns of the new table, in key order.
    pub columns: Vec<String>,
    /// The referenced table (an existing table, or the new table itself).
    pub parent_table: String,
    /// Referenced columns (the leading columns of its primary key or of one of its indexes).
    pub parent_columns: Vec<String>,
    /// ON UPDATE.
    pub on_update: ForeignKeyAction,
    /// ON DELETE.
    pub on_delete: ForeignKeyAction,
}

/// A table as `CREATE TABLE` declares it (`TableDef::default()`: no name, no columns).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableDef {
    /// Table name.
    pub name: String,
    /// Columns in declaration order.
    pub columns: Vec<ColumnDef>,
    /// Primary-key column names in key order; empty for a keyless table.
    pub primary_key: Vec<String>,
    /// Secondary indexes (unique or not).
    pub indexes: Vec<IndexDef>,
    /// CHECK constraints.
    pub checks: Vec<CheckDef>,
    /// Foreign keys (an index on the referencing columns is added as Dolt adds it when no
    /// index starts with them).
    pub foreign_keys: Vec<ForeignKeyDef>,
    /// The table's default collation (`utf8mb4_0900_bin` when `None`).
    pub collation: Option<String>,
    /// Table comment, if any.
    pub comment: Option<String>,
}

/// A table definition the caller gave that Dolt would refuse.
fn bad(what: String) -> DoltError {
    bad_input("table definition", what)
}

/// Column `col`'s type, parsed from its declared text and checked as Dolt checks it (its
/// collation, its SRID): the one way the writer reads a column definition's type.
pub(crate) fn column_type(table: &str, col: &ColumnDef) -> Result<SqlType> {
    let column = || format!("table {table:?}, column {:?}", col.name);
    SqlType::parse_checked(&col.sql_type).map_err(|e| match e {
        TypeTextError::Collation(e) => collation_input(column(), e),
        TypeTextError::BinaryCharset => DoltError::Unsupported(format!("{}: {e}", column())),
        e => bad(format!("{}: type {:?}: {e}", column(), col.sql_type.trim())),
    })
}

/// The encoding the writer stores `ty` in; `None` for the types it does not write yet
/// (VECTOR, the GEOMCOLLECTION spelling, types it does not know).
fn written_encoding(ty: &SqlType) -> Option<Encoding> {
    match ty {
        SqlType::Vector(_) => None,
        SqlType::Geometry { name, .. } if name == "geomcollection" => None,
        t => t.encoding(),
    }
}

/// How a schema message lists the primary-key columns that end each secondary index's key.
///
/// Only the message's bytes differ: Dolt reads an index's key as its own columns followed by
/// the primary key's in key order, whatever the message lists (readers must too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyOrder {
    /// In primary-key order, as the index's rows are keyed (how Dolt writes a schema it built
    /// or read whole).
    PrimaryKey,
    /// In column order: how Dolt 2.3.1 writes a schema after changing a column in place (its
    /// `modifyColumn` adds the indexes before it sets the key order).
    Columns,
}

/// A table definition resolved into what the schema message holds.
#[derive(Clone, Debug)]
pub(crate) struct ResolvedTable {
    /// Stored type text per column.
    pub type_texts: Vec<String>,
    /// Storage encoding per column.
    pub encodings: Vec<Encoding>,
    /// Tag per column.
    pub tags: Vec<u64>,
    /// Primary-key column positions, in key order.
    pub key_columns: Vec<u16>,
    /// Per secondary index: indexed column positions and key column positions.
    pub index_columns: Vec<(Vec<u16>, Vec<u16>)>,
    /// The table collation's id.
    pub collation: u16,
    /// Per secondary index: added by Dolt (for a foreign key), not declared.
    pub system_defined: Vec<bool>,
    /// Per secondary index: prefix lengths as Dolt stores them (empty when none is set).
    pub prefix_lengths: Vec<Vec<u16>>,
}

impl TableDef {
    /// Checks the definition and resolves types, encodings, tags (new tags avoid `used`, the
    /// tags of the database's other tables, and are added to it) and index layouts.
    pub(crate) fn resolve(&self, used: &mut HashSet<u64>) -> Result<ResolvedTable> {
        let t = &self.name;
        if self.columns.is_empty() {
            return Err(bad(format!("table {t:?} has no columns")));
        }
        let table_collation = match &self.collation {
            Some(name) => Collation::from_name(name)
                .map_err(|e| collation_input(format!("table {t:?}"), e))?,
            None => {
                Collation::from_id(309).map_err(|e| collation_input(format!("table {t:?}"), e))?
            }
        };
        let mut seen = HashSet::new();
        let (mut type_texts, mut encodings, mut types) = (Vec::new(), Vec::new(), Vec::new());
        for c in &self.columns {
            if !seen.insert(c.name.to_ascii_lowercase()) {
                return Err(bad(format!(
                    "table {t:?}: column {:?} is declared twice",
                    c.name
                )));
            }
            let ty = column_type(t, c)?;
            let enc = match written_encoding(&ty) {
                Some(enc) => enc,
                None if matches!(ty, SqlType::Other(_)) => {
                    return Err(bad(format!(
                        "table {t:?}, column {:?}: unknown type {:?}",
                        c.name, c.sql_type
                    )))
                }
                None => {
                    return Err(DoltError::Unsupported(format!(
                        "table {t:?}, column {:?}: type {:?} (not done yet)",
                        c.name, c.sql_type
                    )))
                }
            };
            type_texts.push(ty.stored_text(&c.sql_type, table_collation));
            encodings.push(enc);
            types.push(ty);
        }
        let position = |name: &str| -> Result<u16> {
            self.columns
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(name))
                .map(|p| p as u16)
                .ok_or_else(|| bad(format!("table {t:?} has no column {name:?}")))
        };
        let key_columns = self
            .primary_key
            .iter()
            .map(|n| position(n))
            .collect::<Result<Vec<u16>>>()?;
        if let Some(&k) = key_columns
            .iter()
            .find(|&&k| encodings[k as usize] == Encoding::GeomAdaptive)
        {
            return Err(bad(format!(
                "table {t:?}: spatial column {:?} in the primary key (Dolt refuses it)",
                self.columns[k as usize].name
            )));
        }
        let mut index_columns = Vec::new();
        let mut prefix_lengths = Vec::new();
        for ix in &self.indexes {
            let cols = ix
                .columns
                .iter()
                .map(|n| position(n))
                .collect::<Result<Vec<u16>>>()?;
            if ix.spatial {
                let bad = |e: &str| {
                    Err(bad(format!(
                        "table {t:?}, SPATIAL index {:?}: {e} (as Dolt requires)",
                        ix.name
                    )))
                };
                if cols.len() != 1 {
                    return bad("one column only");
                }
                let c = cols[0] as usize;
                if encodings[c] != Encoding::GeomAdaptive {
                    return bad("a spatial column only");
                }
                if self.columns[c].nullable && !key_columns.contains(&cols[0]) {
                    return bad("its column must be NOT NULL");
                }
            }
            if let Some(&g) = cols
                .iter()
                .find(|&&p| ix.unique && encodings[p as usize] == Encoding::GeomAdaptive)
            {
                return Err(DoltError::Unsupported(format!(
                    "table {t:?}, index {:?}: UNIQUE over spatial column {:?} (not done yet: \
                     Dolt keys it by the value's spatial cell)",
                    ix.name, self.columns[g as usize].name
                )));
            }
            prefix_lengths.push(self.index_prefixes(ix, &cols, &type_texts)?);
            let mut keys = cols.clone();
            keys.extend(key_columns.iter().filter(|k| !cols.contains(k)));
            index_columns.push((cols, keys));
        }
        // Tags: given ones are taken as they are; missing ones derived in column order.
        let mut tags = Vec::with_capacity(self.columns.len());
        if self.columns.iter().all(|c| c.tag.is_some()) {
            tags.extend(self.columns.iter().filter_map(|c| c.tag));
            used.extend(tags.iter().copied());
        } else {
            let kinds = self
                .columns
                .iter()
                .zip(&types)
                .map(|(c, ty)| {
                    kind_of(ty).map(|k| (c.name.as_str(), k)).ok_or_else(|| {
                        DoltError::Unsupported(format!(
                            "table {t:?}, column {:?}: a tag for type {:?} (not done yet)",
                            c.name, c.sql_type
                        ))
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            tags = tags_for_new_table(used, t, &kinds);
            for (tag, c) in tags.iter_mut().zip(&self.columns) {
                if let Some(given) = c.tag {
                    *tag = given;
                }
            }
        }
        Ok(ResolvedTable {
            type_texts,
            encodings,
            tags,
            key_columns,
            index_columns,
            collation: table_collation.id(),
            system_defined: vec![false; self.indexes.len()],
            prefix_lengths,
        })
    }

    /// Index `ix`'s prefix lengths as Dolt stores them (none when all are 0), checked as
    /// go-mysql-server checks them: only on text and binary columns, at most the column's
    /// length (characters for text, bytes for binary) and 3072 bytes; a TEXT or BLOB column
    /// of an index that is not UNIQUE needs one. `cols` are the indexed columns' positions,
    /// `type_texts` every column's stored type text.
    fn index_prefixes(
        &self,
        ix: &IndexDef,
        cols: &[u16],
        type_texts: &[String],
    ) -> Result<Vec<u16>> {
        let t = &self.name;
        if !ix.prefix_lengths.is_empty() && ix.prefix_lengths.len() != cols.len() {
            return Err(bad(format!(
                "table {t:?}, index {:?}: {} prefix lengths for {} columns",
                ix.name,
                ix.prefix_lengths.len(),
                cols.len()
            )));
        }
        for (k, &c) in cols.iter().enumerate() {
            let p = u64::from(ix.prefix_lengths.get(k).copied().unwrap_or(0));
            let col = &self.columns[usize::from(c)];
            let text = &type_texts[usize::from(c)];
            let bad = |why: String| {
                bad(format!(
                    "table {t:?}, index {:?}, column {:?}: {why}",
                    ix.name, col.name
                ))
            };
            let ty = SqlType::parse(text);
            let base = ty.name().unwrap_or_default();
            let lob = ty.is_lob();
            if p == 0 {
                if lob && !ix.unique {
                    return Err(bad(format!(
                        "a {base} column in an index needs a prefix length ({}(n))",
                        col.name
                    )));
                }
                continue;
            }
            // Characters for text (at most 3072 bytes' worth), bytes for binary.
            let per_char = ty.max_char_bytes();
            let (max, key_max) = match base {
                "char" | "varchar" => (ty.length(), 3072 / per_char),
                "tinytext" => (Some(255 / per_char), 3072 / per_char),
                "text" => (Some(65_535 / per_char), 3072 / per_char),
                "mediumtext" => (Some(16_777_215 / per_char), 3072 / per_char),
                "longtext" => (Some(4_294_967_295 / per_char), 3072 / per_char),
                "binary" | "varbinary" => (ty.length(), 3072),
                "tinyblob" => (Some(255), 3072),
                "blob" => (Some(65_535), 3072),
                "mediumblob" => (Some(16_777_215), 3072),
                "longblob" => (Some(4_294_967_295), 3072),
                _ => return Err(bad(format!("a prefix length on a {base} column"))),
            };
            if p > key_max {
                return Err(bad(format!("prefix length {p} makes the key too long")));
            }
            if max.is_some_and(|m| p > m) {
                return Err(bad(format!("prefix length {p} is longer than {text}")));
            }
        }
        Ok(if ix.prefix_lengths.iter().any(|&p| p > 0) {
            ix.prefix_lengths.clone()
        } else {
            Vec::new()
        })
    }

    /// The schema message's fields (Dolt's `serializeSchemaAsFlatbuffer` input).
    pub(crate) fn schema_fields<'a>(&'a self, r: &'a ResolvedTable) -> TableSchemaFields<'a> {
        let keyless = r.key_columns.is_empty();
        let n = self.columns.len() as u16;
        let columns = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let enc = r.encodings[i];
                let pk = r.key_columns.contains(&(i as u16));
                ColumnFields {
                    name: &c.name,
                    sql_type: &r.type_texts[i],
                    default_value: match &c.generated {
                        Some(g) => &g.expr,
                        None => c.default.as_deref().unwrap_or(""),
                    },
                    comment: c.comment.as_deref().unwrap_or(""),
                    display_order: i as i16,
                    tag: r.tags[i],
                    encoding: enc as u8,
                    primary_key: pk,
                    nullable: c.nullable && !pk,
                    auto_increment: c.auto_increment,
                    hidden: false,
                    generated: c.generated.is_some(),
                    virtual_: c.generated.as_ref().is_some_and(|g| !g.stored),
                    on_update_value: "",
                    uses_adaptive_encoding: enc.is_adaptive(),
                    hidden_system: false,
                }
            })
            .collect();
        let (key_columns, value_columns) = if keyless {
            (vec![n], std::iter::once(n + 1).chain(0..n).collect())
        } else {
            (
                r.key_columns.clone(),
                (0..n).filter(|p| !r.key_columns.contains(p)).collect(),
            )
        };
        let secondary_indexes = self
            .indexes
            .iter()
            .zip(&r.index_columns)
            .enumerate()
            .map(|(i, (ix, (cols, keys)))| IndexFields {
                name: &ix.name,
                index_columns: cols.clone(),
                key_columns: keys.clone(),
                unique_key: ix.unique,
                system_defined: r.system_defined[i],
                prefix_lengths: r.prefix_lengths[i].clone(),
                spatial_key: ix.spatial,
                ..IndexFields::default()
            })
            .collect();
        let checks = self
            .checks
            .iter()
            .map(|c| CheckFields {
                name: &c.name,
                expression: &c.expr,
                enforced: true,
                is_not_valid: false,
            })
            .collect();
        TableSchemaFields {
            columns,
            keyless,
            clustered_index: IndexFields {
                index_columns: key_columns.clone(),
                key_columns,
                value_columns,
                unique_key: true,
                ..IndexFields::default()
            },
            secondary_indexes,
            checks,
            collation: r.collation,
            comment: self.comment.as_deref().unwrap_or(""),
            target_row_size: 2048,
        }
    }

    /// The encoded schema message (`DSCH`).
    pub fn schema_chunk(&self, used: &mut HashSet<u64>) -> Result<Vec<u8>> {
        self.schema_chunk_with_system_indexes(used, &[])
    }

    /// [`TableDef::schema_chunk`] with the indexes named in `system` marked as added by Dolt
    /// (the index it adds for a foreign key no declared index serves).
    pub(crate) fn schema_chunk_with_system_indexes(
        &self,
        used: &mut HashSet<u64>,
        system: &[String],
    ) -> Result<Vec<u8>> {
        self.schema_chunk_as_written(used, system, KeyOrder::PrimaryKey)
    }

    /// [`TableDef::schema_chunk_with_system_indexes`], with the secondary indexes' key columns
    /// listed as `order` says.
    pub(crate) fn schema_chunk_as_written(
        &self,
        used: &mut HashSet<u64>,
        system: &[String],
        order: KeyOrder,
    ) -> Result<Vec<u8>> {
        let mut r = self.resolve(used)?;
        for (flag, ix) in r.system_defined.iter_mut().zip(&self.indexes) {
            *flag = system.contains(&ix.name);
        }
        if order == KeyOrder::Columns {
            let mut pk = r.key_columns.clone();
            pk.sort_unstable();
            for (cols, keys) in &mut r.index_columns {
                keys.truncate(cols.len());
                keys.extend(pk.iter().filter(|k| !cols.contains(k)));
            }
        }
        self.schema_fields(&r)
            .encode()
            .map_err(|e| encode(format!("the schema of table {:?}", self.name), e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_type_texts() {
        let col = |ty: &str| ColumnDef {
            name: "c".into(),
            sql_type: ty.into(),
            nullable: true,
            default: None,
            auto_increment: false,
            comment: None,
            tag: None,
            generated: None,
        };
        let bin = Collation::from_name("utf8mb4_0900_bin").unwrap();
        let stored = |ty: &str| column_type("t", &col(ty)).unwrap().stored_text(ty, bin);
        assert_eq!(stored("datetime"), "datetime(0)");
        assert_eq!(stored("timestamp"), "timestamp(0)");
        assert_eq!(stored("datetime(6)"), "datetime(6)");
        assert_eq!(stored("varchar(30)"), "varchar(30)");
        assert_eq!(
            stored("varchar(30) COLLATE utf8mb4_0900_ai_ci"),
            "varchar(30) COLLATE utf8mb4_0900_ai_ci"
        );
        assert_eq!(
            stored("varchar(30) CHARACTER SET latin1 COLLATE latin1_swedish_ci"),
            "varchar(30) CHARACTER SET latin1 COLLATE latin1_swedish_ci"
        );
        assert_eq!(stored("enum('a COLLATE b','c')"), "enum('a COLLATE b','c')");
        assert_eq!(stored("point SRID 4326"), "point SRID 4326");
        let ai = Collation::from_name("utf8mb4_0900_ai_ci").unwrap();
        let ty = column_type("t", &col("text")).unwrap();
        assert_eq!(
            ty.stored_text("text", ai),
            "text COLLATE utf8mb4_0900_ai_ci"
        );
        let err = |ty: &str| column_type("t", &col(ty)).unwrap_err().to_string();
        assert!(err("varchar(3) COLLATE nope").contains("nope"));
        assert!(err("varchar(3) CHARACTER SET nope").contains("Unknown character set: nope"));
        assert_eq!(
            stored("varchar(3) CHARACTER SET latin1"),
            "varchar(3) CHARACTER SET latin1 COLLATE latin1_swedish_ci"
        );
        assert!(err("point SRID 1").contains("no spatial reference with SRID 1"));
        assert!(err("point SRID x").contains("SRID n expected"));
        assert!(err("point srid").contains("SRID n expected"));
    }
}
