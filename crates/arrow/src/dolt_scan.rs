//! The fast whole-table path: a Dolt table's clustered index walked with a map cursor, each
//! stored field decoded by the Dolt crate's codec ([`RowPlan::decode`]) straight into its
//! column's Arrow builder, the codec's builder sink (no [`SqlValue`] per cell). Chosen per
//! table when every visible column is of a kind the sink takes; tables with VIRTUAL generated
//! columns or without a primary key take the row decoder's path.
//!
//! [`SqlValue`]: prollystore_dolt::SqlValue

use std::ops::Range;

use prollystore::map::Cursor;
use prollystore_dolt::codec::{set_text, FieldSink, Kind, RowPlan, Slot, Storage};
use prollystore_dolt::{Database, DoltError, Table};
use prollystore_format::message::Node;
use prollystore_format::tuple::{Date, Decimal, Tuple};

use crate::columns::{date_days, ColumnBuilder};
use crate::error::{Error, Result};

/// True if the codec's sink into builders shows a column of kind `kind` as the row decoder's
/// typed values do: every kind but those read by their stored value alone.
fn direct(kind: &Kind) -> bool {
    match kind {
        Kind::Other => false,
        Kind::Text(s) | Kind::Binary { storage: s, .. } | Kind::Json(s) | Kind::Geometry(s) => {
            *s != Storage::Mismatch
        }
        _ => true,
    }
}

/// The fast plan of a table: the codec's row plan, every visible column stored and of a kind
/// [`direct`] takes.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    rows: RowPlan,
}

impl Plan {
    /// The plan for `table`, or `None` when some column needs the row decoder.
    pub(crate) fn for_table(table: &Table) -> Option<Plan> {
        if table.schema.keyless {
            return None;
        }
        let rows = RowPlan::new(&table.schema, table.schema_address).ok()?;
        rows.fields
            .iter()
            .all(|f| f.slot != Slot::Virtual && direct(&f.kind))
            .then_some(Plan { rows })
    }

    /// The plan of only the visible columns at `columns` (in that order): the others are not
    /// decoded.
    pub(crate) fn project(mut self, columns: &[usize]) -> Plan {
        let fields = std::mem::take(&mut self.rows.fields);
        self.rows.fields = columns
            .iter()
            .filter_map(|&c| fields.get(c).cloned())
            .collect();
        self
    }
}

/// The builders' sink of the codec: each decoded value appended straight to its column's
/// builder (one getter and one push for the common pairs; no [`Value`] in between). On the
/// mixed 1M-row bench table appending a row took 1,548 instructions instead of 2,073 through
/// values (callgrind, docs/PERF.md). The appends of fixed-width values are inlined into the
/// codec's loop over a column (`#[inline(always)]`: left to the compiler, each stayed a call,
/// with a call of the builder's own inside; a warm GROUP BY ran 16 % more instructions).
///
/// [`Value`]: prollystore_format::tuple::Value
impl FieldSink for ColumnBuilder {
    #[inline]
    fn null(&mut self) {
        self.append_null();
    }
    #[inline(always)]
    fn int(&mut self, v: i64) -> bool {
        // BIGINT and INT columns, the common ones, straight to their builders.
        match self {
            ColumnBuilder::I64(b) => b.append_value(v),
            ColumnBuilder::I32(b) => match i32::try_from(v) {
                Ok(v) => b.append_value(v),
                Err(_) => return false,
            },
            _ => return self.append_int(v),
        }
        true
    }
    #[inline]
    fn uint(&mut self, v: u64) -> bool {
        self.append_uint(v)
    }
    #[inline(always)]
    fn float(&mut self, v: f32) -> bool {
        match self {
            ColumnBuilder::F32(b) => b.append_value(v),
            _ => return false,
        }
        true
    }
    #[inline(always)]
    fn double(&mut self, v: f64) -> bool {
        match self {
            ColumnBuilder::F64(b) => b.append_value(v),
            _ => return false,
        }
        true
    }
    #[inline(always)]
    fn decimal(&mut self, d: &Decimal<'_>, scale: u8) -> bool {
        self.append_decimal(d, scale)
    }
    #[inline]
    fn year(&mut self, y: u16) -> bool {
        self.append_uint(u64::from(y))
    }
    #[inline(always)]
    fn date(&mut self, d: Date) -> bool {
        match self {
            ColumnBuilder::Date(b) => b.append_option(date_days(d)),
            _ => return false,
        }
        true
    }
    #[inline(always)]
    fn time(&mut self, us: i64) -> bool {
        match self {
            ColumnBuilder::Duration(b) => b.append_value(us),
            _ => return false,
        }
        true
    }
    #[inline(always)]
    fn datetime(&mut self, us: i64, _fsp: u8, _timestamp: bool) -> bool {
        match self {
            ColumnBuilder::Timestamp(b) => b.append_value(us),
            _ => return false,
        }
        true
    }
    #[inline]
    fn enumeration(&mut self, index: u16, _members: &[String]) -> bool {
        match self {
            ColumnBuilder::Enum(b, values) => {
                let key = index
                    .checked_sub(1)
                    .filter(|k| usize::from(*k) < values.len());
                b.append_option(key);
                true
            }
            _ => self.append_uint(u64::from(index)),
        }
    }
    fn set(&mut self, bits: u64, members: &[String]) -> bool {
        self.append_bytes(set_text(members, bits).as_bytes())
    }
    #[inline]
    fn str(&mut self, s: &str) -> bool {
        match self {
            ColumnBuilder::Utf8(b) => {
                b.append_value(s);
                true
            }
            _ => self.append_bytes(s.as_bytes()),
        }
    }
    #[inline]
    fn text(&mut self, b: &[u8]) -> bool {
        self.append_bytes(b)
    }
    #[inline]
    fn json(&mut self, b: &[u8]) -> bool {
        self.append_bytes(b)
    }
    #[inline]
    fn bytes(&mut self, b: &[u8]) -> bool {
        self.append_bytes(b)
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

    /// An error about field `col` of the plan (a visible column, or a projected one).
    fn bad(&self, row: u64, col: usize, why: impl std::fmt::Display) -> Error {
        let s = &self.table.schema;
        let name = self
            .plan
            .rows
            .fields
            .get(col)
            .and_then(|f| s.columns.get(f.column))
            .map(|c| c.name.clone())
            .unwrap_or_default();
        Error::Mismatch(format!(
            "table {:?}, column {name:?}, row {row}: {why}",
            self.table.name
        ))
    }

    /// Appends the rows of `leaf`'s `entries`, row numbers from `first_row` (for error
    /// messages), to `builders`: a column at a time ([`RowPlan::decode_column`]). A verified
    /// leaf's keys and values are valid tuples.
    ///
    /// [`RowPlan::decode_column`]: prollystore_dolt::codec::RowPlan::decode_column
    pub(crate) fn append_leaf(
        &mut self,
        leaf: &Node<'_>,
        entries: Range<usize>,
        builders: &mut [ColumnBuilder],
        first_row: u64,
    ) -> Result<()> {
        let rows = &self.plan.rows;
        let want = entries.len();
        for (c, (f, b)) in rows.fields.iter().zip(builders.iter_mut()).enumerate() {
            let (db, table, scratch) = (self.db, self.table, &mut self.scratch);
            let tuples = match f.slot {
                Slot::Key(_) => leaf.keys_in(entries.clone()),
                _ => leaf.values_in(entries.clone()),
            };
            let tuples = tuples.map(Tuple::new_unverified);
            let got = rows.decode_column(db, table, f, tuples, scratch, b);
            let at = |n: usize| first_row + n as u64;
            match got {
                Ok(n) if n == want => {}
                Ok(n) => {
                    return Err(self.bad(at(n), c, "the stored value does not fit its Arrow type"))
                }
                Err((n, e)) => return Err(self.bad(at(n), c, e)),
            }
        }
        Ok(())
    }
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
        // A leaf (or what the batch has room for) at a time, decoded a column at a time.
        while done < n && self.cursor.valid() {
            let (leaf, rest) = self.cursor.rest_of_leaf();
            let take = rest.len().min(n - done);
            let entries = rest.start..rest.start + take;
            self.rows
                .append_leaf(&leaf, entries, builders, first_row + done as u64)?;
            self.cursor
                .advance_by(store, take)
                .map_err(|e| Error::Dolt(DoltError::from(e)))
                .map_err(|e| match e {
                    Error::Dolt(DoltError::Tree(t)) => {
                        Error::Mismatch(format!("table {:?} ({}): {t}", table.name, table.address))
                    }
                    other => other,
                })?;
            done += take;
        }
        Ok(done)
    }
}
