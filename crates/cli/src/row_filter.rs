//! `--where COL=VALUE` (also `!=`, `<`, `<=`, `>`, `>=`) for `scan` and `export`: rows kept
//! when every condition holds, comparing the stored field with the value parsed as that
//! column's type, in the map's own order for that type. A NULL field meets no condition
//! except `COL=<null text>` (and `COL!=<null text>` meets every non-NULL field).

use std::cmp::Ordering;

use prollystore_format::tuple::{NoBlobStore, Tuple, TupleBuilder, TupleDesc, Type};

use crate::error::{Error, Result};
use crate::field_text::{FieldParser, NullText};
use crate::map_schema::MapSchema;

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    fn holds(self, o: Ordering) -> bool {
        match self {
            Op::Eq => o.is_eq(),
            Op::Ne => o.is_ne(),
            Op::Lt => o.is_lt(),
            Op::Le => o.is_le(),
            Op::Gt => o.is_gt(),
            Op::Ge => o.is_ge(),
        }
    }
}

/// One parsed condition.
#[derive(Debug)]
struct Condition {
    /// In the key tuple (else the value tuple).
    in_key: bool,
    field: usize,
    op: Op,
    /// The value as a one-field tuple of the column's type; `None`: the NULL text.
    value: Option<Vec<u8>>,
    /// Orders the column's fields.
    desc: TupleDesc,
}

/// The conditions of a scan (all must hold).
#[derive(Debug, Default)]
pub struct RowFilter {
    conditions: Vec<Condition>,
}

impl RowFilter {
    /// Parses `--where` texts against `schema`; errors name the condition and the column.
    pub fn parse(schema: &MapSchema, texts: &[String], null: &NullText) -> Result<RowFilter> {
        let mut conditions = Vec::with_capacity(texts.len());
        for text in texts {
            conditions.push(condition(schema, text, null)?);
        }
        Ok(RowFilter { conditions })
    }

    /// Whether there are no conditions.
    pub fn is_empty(&self) -> bool {
        self.conditions.is_empty()
    }

    /// Whether the row `(key, value)` meets every condition.
    pub fn admits(&self, key: &[u8], value: &[u8]) -> bool {
        self.conditions.iter().all(|c| {
            let tuple = Tuple::new_unverified(if c.in_key { key } else { value });
            let field = tuple.field(c.field);
            match (field, &c.value) {
                (None, None) => c.op == Op::Eq,
                (Some(_), None) => c.op == Op::Ne,
                (None, Some(_)) => false,
                (Some(f), Some(v)) => {
                    let v = Tuple::new_unverified(v).field(0).unwrap_or(&[]);
                    c.op.holds(c.desc.compare_field(0, f, v))
                }
            }
        })
    }
}

/// Splits `COL<op>VALUE` at its first operator.
fn split(text: &str) -> Option<(&str, Op, &str)> {
    let i = text.find(['=', '!', '<', '>'])?;
    let rest = &text[i..];
    let (op, len) = match rest.as_bytes() {
        [b'!', b'=', ..] => (Op::Ne, 2),
        [b'<', b'=', ..] => (Op::Le, 2),
        [b'>', b'=', ..] => (Op::Ge, 2),
        [b'<', b'>', ..] => (Op::Ne, 2),
        [b'=', ..] => (Op::Eq, 1),
        [b'<', ..] => (Op::Lt, 1),
        [b'>', ..] => (Op::Gt, 1),
        _ => return None,
    };
    Some((text[..i].trim(), op, &rest[len..]))
}

fn condition(schema: &MapSchema, text: &str, null: &NullText) -> Result<Condition> {
    let shown: String = text.chars().take(80).collect();
    let Some((name, op, value)) = split(text) else {
        return Err(Error::msg(format!(
            "--where {shown:?}: expected COLUMN=VALUE (or !=, <, <=, >, >=)"
        )));
    };
    let found = schema
        .key
        .iter()
        .position(|c| c.name == name)
        .map(|i| (true, i, &schema.key[i]))
        .or_else(|| {
            let i = schema.value.iter().position(|c| c.name == name)?;
            Some((false, i, &schema.value[i]))
        });
    let Some((in_key, field, col)) = found else {
        return Err(Error::msg(format!(
            "--where {shown:?}: no column {name:?} (columns: {})",
            schema
                .key
                .iter()
                .chain(&schema.value)
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    };
    if col.ty.enc.is_adaptive() || col.ty.enc.is_address() {
        return Err(Error::msg(format!(
            "--where {shown:?}: column {name:?} ({}) may be stored out of line; filters on it \
             are not supported",
            col.ty.enc
        )));
    }
    let ty = Type::nullable(col.ty.enc);
    let desc = TupleDesc::new(vec![ty]);
    let is_null = match &null.marker {
        Some(m) => value.as_bytes() == &m[..],
        None => value.is_empty() && col.ty.nullable,
    };
    let value = if is_null {
        if !matches!(op, Op::Eq | Op::Ne) {
            return Err(Error::msg(format!(
                "--where {shown:?}: NULL can only be compared with = or !="
            )));
        }
        None
    } else {
        let mut b = TupleBuilder::new(desc.clone());
        FieldParser::default()
            .put(&mut b, 0, ty, value.as_bytes(), &mut NoBlobStore)
            .map_err(|e| Error::msg(format!("--where {shown:?}: column {name:?}: {e}")))?;
        Some(b.build()?.as_bytes().to_vec())
    };
    Ok(Condition {
        in_key,
        field,
        op,
        value,
        desc,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(schema: &MapSchema, key: &[&str], value: &[&str]) -> (Vec<u8>, Vec<u8>) {
        let build = |desc: TupleDesc, texts: &[&str]| {
            let mut b = TupleBuilder::new(desc.clone());
            let mut p = FieldParser::default();
            for (i, t) in texts.iter().enumerate() {
                if !t.is_empty() {
                    let ty = desc.types()[i];
                    p.put(&mut b, i, ty, t.as_bytes(), &mut NoBlobStore)
                        .unwrap();
                }
            }
            b.build().unwrap().as_bytes().to_vec()
        };
        let ts = schema.tuple_schema();
        (build(ts.key.clone(), key), build(ts.value.clone(), value))
    }

    #[test]
    fn conditions_compare_in_the_columns_types() {
        let schema = MapSchema::parse("id:bigint", "name:string?,price:double").unwrap();
        let null = NullText::default();
        let f = |w: &[&str]| {
            let w: Vec<String> = w.iter().map(|s| s.to_string()).collect();
            RowFilter::parse(&schema, &w, &null).unwrap()
        };
        let (k, v) = row(&schema, &["10"], &["pear", "2.5"]);
        let (k2, v2) = row(&schema, &["9"], &["", "100"]);
        assert!(f(&["id>=10", "price<3"]).admits(&k, &v));
        // 9 < 10 as numbers although "9" > "10" as text.
        assert!(f(&["id<10"]).admits(&k2, &v2));
        assert!(!f(&["id<10"]).admits(&k, &v));
        assert!(f(&["name=pear"]).admits(&k, &v));
        assert!(f(&["name!=apple"]).admits(&k, &v));
        assert!(f(&["name="]).admits(&k2, &v2));
        assert!(!f(&["name=pear"]).admits(&k2, &v2));
        assert!(!f(&["name!="]).admits(&k2, &v2));
    }

    #[test]
    fn bad_conditions_name_what_is_wrong() {
        let schema = MapSchema::parse("id:bigint", "name:string?").unwrap();
        let null = NullText::default();
        let e = |w: &str| {
            RowFilter::parse(&schema, &[w.to_string()], &null)
                .unwrap_err()
                .to_string()
        };
        assert!(e("nope=1").contains("no column \"nope\" (columns: id, name)"));
        assert!(e("id").contains("expected COLUMN=VALUE"));
        assert!(e("id=abc").contains("column \"id\""));
        assert!(e("name<").contains("NULL can only"));
    }
}
