//! The compact schema syntax (`id:int64,name:string?`) and the schema text stored with each map.
//!
//! A column is `NAME:TYPE` where `TYPE` is one of Dolt's encoding names
//! ([`Encoding::from_name`]: `int64`, `decimal`, `string_adaptive`, ...) and a trailing `?` makes
//! it nullable. Columns are separated by commas.

use prollystore::tuples::TupleSchema;
use prollystore_format::tuple::{needs_external_order, TupleDesc, Type, MAX_TUPLE_FIELDS};
use prollystore_format::Encoding;

use crate::error::{quoted, Error};

/// One named, typed column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// The column's name (the CSV header).
    pub name: String,
    /// Its encoding and nullability.
    pub ty: Type,
}

/// Key and value columns of a map: what the tool needs to read and write its rows as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapSchema {
    /// Key columns, in key order.
    pub key: Vec<Column>,
    /// Value columns.
    pub value: Vec<Column>,
}

/// First line of the stored schema text (a format version for later changes).
const STORED_MAGIC: &str = "prolly-schema 1";

/// Parses a column list such as `id:int64,name:string?` (empty text: no columns).
pub fn parse_columns(spec: &str) -> Result<Vec<Column>, Error> {
    let mut out: Vec<Column> = Vec::new();
    if spec.trim().is_empty() {
        return Ok(out);
    }
    for part in spec.split(',') {
        let part = part.trim();
        let Some((name, ty)) = part.split_once(':') else {
            return Err(Error::msg(format!(
                "bad column {}: expected NAME:TYPE (for example id:int64 or note:string?)",
                quoted(part)
            )));
        };
        let name = name.trim();
        let ty = ty.trim();
        if name.is_empty() {
            return Err(Error::msg(format!(
                "bad column {}: empty name",
                quoted(part)
            )));
        }
        let (ty_name, nullable) = match ty.strip_suffix('?') {
            Some(t) => (t.trim(), true),
            None => (ty, false),
        };
        let Some(enc) = Encoding::from_name(ty_name) else {
            return Err(Error::msg(format!(
                "bad column {}: unknown type {} (known: {})",
                quoted(part),
                quoted(ty_name),
                known_types()
            )));
        };
        if out.iter().any(|c| c.name == name) {
            return Err(Error::msg(format!("column {} appears twice", quoted(name))));
        }
        let ty = if nullable {
            Type::nullable(enc)
        } else {
            Type::not_null(enc)
        };
        out.push(Column {
            name: name.to_string(),
            ty,
        });
    }
    Ok(out)
}

fn known_types() -> String {
    prollystore_format::encoding::ALL_ENCODINGS
        .iter()
        .map(|e| e.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The column list in the compact syntax.
pub fn format_columns(cols: &[Column]) -> String {
    cols.iter()
        .map(|c| {
            format!(
                "{}:{}{}",
                c.name,
                c.ty.enc.name(),
                if c.ty.nullable { "?" } else { "" }
            )
        })
        .collect::<Vec<_>>()
        .join(",")
}

impl MapSchema {
    /// A schema from `--key` and `--value` specs, checked: at least one key column, no name in
    /// both lists, no key column whose order needs an external type handler.
    pub fn parse(key: &str, value: &str) -> Result<MapSchema, Error> {
        let key = parse_columns(key)?;
        let value = parse_columns(value)?;
        if key.is_empty() {
            return Err(Error::msg("the key needs at least one column"));
        }
        for (side, cols) in [("key", &key), ("value", &value)] {
            if cols.len() > MAX_TUPLE_FIELDS {
                return Err(Error::msg(format!(
                    "the {side} has {} columns; a tuple holds at most {MAX_TUPLE_FIELDS}",
                    cols.len()
                )));
            }
        }
        for c in &key {
            if needs_external_order(c.ty.enc) {
                return Err(Error::msg(format!(
                    "key column {}: type {} is ordered by an external handler and cannot be a key here",
                    quoted(&c.name), c.ty.enc
                )));
            }
            if value.iter().any(|v| v.name == c.name) {
                return Err(Error::msg(format!(
                    "column {} is in both the key and the value",
                    quoted(&c.name)
                )));
            }
        }
        Ok(MapSchema { key, value })
    }

    /// The text stored in the map's schema root (see the crate README).
    pub fn to_stored(&self) -> String {
        format!(
            "{STORED_MAGIC}\nkey {}\nvalue {}\n",
            format_columns(&self.key),
            format_columns(&self.value)
        )
    }

    /// Parses [`MapSchema::to_stored`]'s text.
    pub fn from_stored(text: &str) -> Result<MapSchema, Error> {
        let bad = || Error::msg("the stored schema is malformed");
        let mut lines = text.lines();
        if lines.next() != Some(STORED_MAGIC) {
            return Err(Error::msg(
                "the stored schema has an unknown format (not written by this tool?)",
            ));
        }
        let key = lines
            .next()
            .and_then(|l| l.strip_prefix("key "))
            .ok_or_else(bad)?;
        let value = lines
            .next()
            .and_then(|l| l.strip_prefix("value").map(str::trim))
            .ok_or_else(bad)?;
        MapSchema::parse(key, value)
    }

    /// The key and value schemas in the compact syntax, for messages.
    pub fn describe(&self) -> String {
        format!(
            "key={} value={}",
            format_columns(&self.key),
            format_columns(&self.value)
        )
    }

    /// Descriptor of key tuples.
    pub fn key_desc(&self) -> TupleDesc {
        TupleDesc::new(self.key.iter().map(|c| c.ty).collect())
    }

    /// Descriptor of value tuples.
    pub fn value_desc(&self) -> TupleDesc {
        TupleDesc::new(self.value.iter().map(|c| c.ty).collect())
    }

    /// The tree schema (key order, value addresses) of the map.
    pub fn tuple_schema(&self) -> TupleSchema {
        TupleSchema::new(self.key_desc(), self.value_desc())
    }

    /// Every column, key first.
    pub fn columns(&self) -> impl Iterator<Item = &Column> {
        self.key.iter().chain(self.value.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_round_trips() {
        let s = MapSchema::parse(
            "id:int64, k2:string",
            "name:string?,price:decimal,when:datetime?",
        )
        .unwrap();
        assert_eq!(s.key.len(), 2);
        assert!(s.value[0].ty.nullable);
        assert_eq!(s.value[1].ty.enc, Encoding::Decimal);
        let back = MapSchema::from_stored(&s.to_stored()).unwrap();
        assert_eq!(back, s);
        let keyonly = MapSchema::parse("id:int64", "").unwrap();
        assert_eq!(
            MapSchema::from_stored(&keyonly.to_stored()).unwrap(),
            keyonly
        );
    }

    #[test]
    fn rejects_bad_specs() {
        for (k, v) in [
            ("", "a:int64"),
            ("id", ""),
            ("id:int65", ""),
            ("id:int64,id:int8", ""),
            ("id:int64", "id:int8"),
            ("x:extended", ""),
            (":int64", ""),
        ] {
            assert!(MapSchema::parse(k, v).is_err(), "{k} / {v}");
        }
    }
}
