//! The fast whole-table path: a Dolt table's clustered index walked with a map cursor, each
//! stored field appended straight to its column's Arrow builder (no [`SqlValue`] per cell).
//! Chosen per table when every visible column is of a kind it knows ([`FastKind::of`], from
//! the Dolt crate's codec plan, [`RowPlan`]); tables
//! with VIRTUAL generated columns or without a primary key take the row decoder's path.
//!
//! [`SqlValue`]: prollystore_dolt::SqlValue

use prollystore::map::Cursor;
use prollystore_dolt::codec::{payload, set_text, Kind, RowPlan, Slot, Storage};
use prollystore_dolt::schema::SqlType;
use prollystore_dolt::{Database, DoltError, Table};
use prollystore_format::tuple::{Adaptive, Tuple, TupleDesc, Value};
use prollystore_format::Encoding;

use crate::columns::{date_days, ColumnBuilder};
use crate::error::{Error, Result};
use prollystore_format::tuple::text_of;

/// How a column's stored value goes to its builder.
#[derive(Clone, Debug)]
pub(crate) enum FastKind {
    /// As stored: numbers, temporal values, text, bytes, JSON, enum indexes.
    Plain,
    /// A decimal rescaled to the column's scale.
    Decimal(u8),
    /// SET bits shown as the member names, comma-joined.
    Set(Vec<String>),
    /// BINARY(n), zero-padded to n bytes as Dolt shows it.
    Fixed(usize),
}

impl FastKind {
    /// The fast path of a column of kind `kind` (the codec's: its SQL type with its stored
    /// encoding), if there is one; `ty` gives a SET's member names.
    pub(crate) fn of(kind: &Kind, ty: &SqlType) -> Option<FastKind> {
        let stored = |s: &Storage| *s != Storage::Mismatch;
        Some(match kind {
            Kind::Int
            | Kind::Bit
            | Kind::Float
            | Kind::Double
            | Kind::Year
            | Kind::Date
            | Kind::Time(_)
            | Kind::Datetime { .. }
            | Kind::Enum => FastKind::Plain,
            Kind::Decimal { scale, .. } => FastKind::Decimal(*scale),
            Kind::Set => match ty {
                SqlType::Set(m) => FastKind::Set(m.clone()),
                _ => return None,
            },
            Kind::Binary {
                storage,
                fixed: Some(n),
            } => stored(storage).then_some(FastKind::Fixed(*n as usize))?,
            Kind::Text(s) | Kind::Binary { storage: s, .. } | Kind::Json(s) | Kind::Geometry(s) => {
                stored(s).then_some(FastKind::Plain)?
            }
            Kind::Other => return None,
        })
    }
}

/// The common pairs of stored encoding and builder, appended without a [`Value`] in between
/// (one getter and one push; anything unexpected takes the general path). On the mixed 1M-row
/// bench table appending a row took 1,548 instructions instead of 2,073 (callgrind).
#[derive(Clone, Copy, Debug)]
enum Direct {
    Int32,
    Int64,
    Float64,
    Datetime,
    Date,
    Decimal(u8),
    /// Plain text (`String`), when ASCII.
    Text,
    /// Adaptive text or bytes stored inline.
    Inline,
    /// The general path only.
    No,
}

impl Direct {
    fn of(enc: Encoding, kind: &FastKind) -> Direct {
        match (kind, enc) {
            (FastKind::Decimal(scale), Encoding::Decimal) => Direct::Decimal(*scale),
            (FastKind::Plain, Encoding::Int32) => Direct::Int32,
            (FastKind::Plain, Encoding::Int64) => Direct::Int64,
            (FastKind::Plain, Encoding::Float64) => Direct::Float64,
            (FastKind::Plain, Encoding::Datetime) => Direct::Datetime,
            (FastKind::Plain, Encoding::Date) => Direct::Date,
            (FastKind::Plain, Encoding::String) => Direct::Text,
            (FastKind::Plain, e) if e.is_adaptive() => Direct::Inline,
            _ => Direct::No,
        }
    }
}

/// Where a visible column is stored, and how it is appended.
#[derive(Clone, Debug)]
struct Field {
    in_key: bool,
    index: usize,
    kind: FastKind,
    direct: Direct,
}

/// The fast plan of a table: one entry per visible column.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    fields: Vec<Field>,
    key: TupleDesc,
    value: TupleDesc,
}

impl Plan {
    /// The plan for `table`, or `None` when some column needs the row decoder.
    pub(crate) fn for_table(table: &Table) -> Option<Plan> {
        let s = &table.schema;
        if s.keyless {
            return None;
        }
        let rows = RowPlan::new(s, table.schema_address).ok()?;
        let mut fields = Vec::with_capacity(rows.fields.len());
        for f in &rows.fields {
            let (in_key, index) = match f.slot {
                Slot::Key(i) => (true, i),
                Slot::Value(i) => (false, i),
                Slot::Virtual => return None,
            };
            let kind = FastKind::of(&f.kind, &s.columns.get(f.column)?.sql_type)?;
            fields.push(Field {
                in_key,
                index,
                direct: Direct::of(f.enc, &kind),
                kind,
            });
        }
        Some(Plan {
            fields,
            key: rows.key_desc,
            value: rows.value_desc,
        })
    }
}

/// Appends the rows of a table's stored (key, value) pairs to the builders of its visible
/// columns, by its plan.
pub(crate) struct RowAppender<'a> {
    db: &'a Database,
    table: &'a Table,
    plan: Plan,
    /// Reused for out-of-band values and formatted SETs.
    scratch: Vec<u8>,
}

impl<'a> RowAppender<'a> {
    /// The appender of `table`'s rows by `plan`.
    pub(crate) fn new(db: &'a Database, table: &'a Table, plan: Plan) -> RowAppender<'a> {
        RowAppender {
            db,
            table,
            plan,
            scratch: Vec::new(),
        }
    }

    fn bad(&self, row: u64, col: usize, why: impl std::fmt::Display) -> Error {
        let s = &self.table.schema;
        let name = s
            .visible_columns()
            .get(col)
            .and_then(|&i| s.columns.get(i))
            .map(|c| c.name.clone())
            .unwrap_or_default();
        Error::Mismatch(format!(
            "table {:?}, column {name:?}, row {row}: {why}",
            self.table.name
        ))
    }

    /// Appends the row stored as key tuple `kt` and value tuple `vt`, row number `row` (for
    /// error messages), to `builders`.
    #[inline]
    pub(crate) fn append(
        &mut self,
        kt: Tuple<'_>,
        vt: Tuple<'_>,
        builders: &mut [ColumnBuilder],
        row: u64,
    ) -> Result<()> {
        for (c, (f, b)) in self.plan.fields.iter().zip(builders.iter_mut()).enumerate() {
            let (desc, t) = if f.in_key {
                (&self.plan.key, kt)
            } else {
                (&self.plan.value, vt)
            };
            match direct(f, desc, t, b) {
                Ok(true) => continue,
                Ok(false) => {}
                Err(e) => return Err(self.bad(row, c, e)),
            }
            let v = match desc.value(t, f.index) {
                Ok(v) => v,
                Err(e) => return Err(self.bad(row, c, e)),
            };
            let Some(v) = v else {
                b.append_null();
                continue;
            };
            if !append(b, &f.kind, &v, self.db, &mut self.scratch)? {
                return Err(self.bad(row, c, format!("stored value {v:?} does not fit")));
            }
        }
        Ok(())
    }
}

/// Appends field `f` of `t` by its [`Direct`] pair; false if it must take the general path
/// (no direct pair, another builder, non-ASCII text, an out-of-band value).
#[inline(always)]
fn direct(
    f: &Field,
    desc: &TupleDesc,
    t: Tuple<'_>,
    b: &mut ColumnBuilder,
) -> std::result::Result<bool, prollystore_format::tuple::TupleError> {
    use ColumnBuilder as B;
    let i = f.index;
    Ok(match (f.direct, b) {
        (Direct::Int64, B::I64(b)) => {
            b.append_option(desc.get_int64(t, i)?);
            true
        }
        (Direct::Int32, B::I32(b)) => {
            b.append_option(desc.get_int32(t, i)?);
            true
        }
        (Direct::Float64, B::F64(b)) => {
            b.append_option(desc.get_float64(t, i)?);
            true
        }
        (Direct::Datetime, B::Timestamp(b)) => {
            b.append_option(desc.get_datetime(t, i)?);
            true
        }
        (Direct::Date, B::Date(b)) => {
            match desc.get_date(t, i)? {
                Some(d) => b.append_option(date_days(d)),
                None => b.append_null(),
            }
            true
        }
        (Direct::Decimal(scale), b) => match desc.get_decimal(t, i)? {
            Some(d) => b.append_decimal(&d, scale),
            None => {
                b.append_null();
                true
            }
        },
        (Direct::Text, B::Utf8(b)) => match desc.get_string_bytes(t, i)? {
            // Non-ASCII text takes the general path, which checks it as UTF-8.
            Some(bytes) if !bytes.is_ascii() => false,
            Some(bytes) => match text_of(bytes) {
                Some(s) => {
                    b.append_value(s);
                    true
                }
                None => false,
            },
            None => {
                b.append_null();
                true
            }
        },
        (Direct::Inline, b @ (B::Utf8(_) | B::Binary(..))) => match desc.get_adaptive(t, i)? {
            Some(Adaptive::Inline(bytes)) => b.append_bytes(bytes),
            Some(Adaptive::OutOfBand { .. }) => false,
            None => {
                b.append_null();
                true
            }
        },
        _ => false,
    })
}

/// A cursor over a table's clustered index, with the appender of its rows.
pub(crate) struct Scan<'a> {
    cursor: Cursor<'a>,
    rows: RowAppender<'a>,
}

impl<'a> Scan<'a> {
    /// A scan of the rows of `table` in key order from row `ordinal` (0: the first).
    pub(crate) fn new(
        db: &'a Database,
        table: &'a Table,
        plan: Plan,
        ordinal: u64,
    ) -> Result<Scan<'a>> {
        let cursor = table
            .primary_scan_map(db)
            .seek_ordinal(ordinal)
            .map_err(DoltError::from)?;
        Ok(Scan {
            cursor,
            rows: RowAppender::new(db, table, plan),
        })
    }

    /// Appends up to `n` rows to `builders`; returns how many (fewer only at the end).
    /// `first_row` numbers the rows for error messages.
    pub(crate) fn fill(
        &mut self,
        builders: &mut [ColumnBuilder],
        n: usize,
        first_row: u64,
    ) -> Result<usize> {
        let store = self.rows.db.source();
        let table = self.rows.table;
        let mut done = 0;
        while done < n && self.cursor.valid() {
            let row = first_row + done as u64;
            let kt = Tuple::new(self.cursor.key())
                .map_err(|e| self.rows.bad(row, 0, format!("key tuple: {e}")))?;
            let vt = Tuple::new(self.cursor.value())
                .map_err(|e| self.rows.bad(row, 0, format!("value tuple: {e}")))?;
            self.rows.append(kt, vt, builders, row)?;
            self.cursor
                .advance(store)
                .map_err(|e| Error::Dolt(DoltError::from(e)))
                .map_err(|e| match e {
                    Error::Dolt(DoltError::Tree(t)) => {
                        Error::Mismatch(format!("table {:?} ({}): {t}", table.name, table.address))
                    }
                    other => other,
                })?;
            done += 1;
        }
        Ok(done)
    }
}

/// Appends one stored value of a fast column; false if it does not fit.
#[inline]
fn append(
    b: &mut ColumnBuilder,
    kind: &FastKind,
    v: &Value<'_>,
    db: &Database,
    scratch: &mut Vec<u8>,
) -> Result<bool> {
    let bytes = payload(db, v, scratch)?;
    Ok(match (kind, v) {
        (FastKind::Plain, _) => b.append_value(v, bytes),
        (FastKind::Decimal(scale), Value::Decimal(d)) => b.append_decimal(d, *scale),
        (FastKind::Set(names), Value::Set(bits)) => {
            b.append_bytes(set_text(names, *bits).as_bytes())
        }
        (FastKind::Fixed(n), _) => match bytes {
            Some(x) if x.len() >= *n => b.append_bytes(x),
            Some(x) => {
                let mut padded = x.to_vec();
                padded.resize(*n, 0);
                b.append_bytes(&padded)
            }
            None => false,
        },
        _ => false,
    })
}
