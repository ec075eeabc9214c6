//! Point `get` by primary key made cheap from Python: a plan made once per table says how to
//! build the key tuple from the call's arguments (a reused [`TupleBuilder`]) and how to turn
//! each stored field straight into a Python object, so a get builds no [`SqlValue`] row, no
//! owned strings and no intermediate vectors. Anything the plan does not cover (VIRTUAL
//! columns, enums, sets, JSON, blobs, out-of-band text, dates Python cannot hold) takes the
//! general route through [`TableReader::decode`].

use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use prollystore::format::tuple::{Date, Decimal, Tuple, TupleBuilder, TupleDesc};
use prollystore::format::Encoding;
use prollystore_dolt::codec::encode::{put_field, KeyEncoder};
use prollystore_dolt::codec::{FieldSink, Kind, RowPlan, Slot, Storage};
use prollystore_dolt::schema::key_encoding;
use prollystore_dolt::sql_value::write_decimal;
use prollystore_dolt::{Column, DoltError, SqlValue, Table, TableReader};

use crate::errors::dolt_err;
use crate::values::{py_date, py_datetime, py_decimal, py_to_sql, sql_row_to_py};

/// True if the Python sink ([`PySink`]) takes every value of a column of kind `kind`:
/// integers, BIT, YEAR, FLOAT, DOUBLE, text, DECIMAL, DATETIME/TIMESTAMP and DATE. Tables with
/// another kind of column take the general route.
fn direct(kind: &Kind) -> bool {
    matches!(
        kind,
        Kind::Int
            | Kind::Bit
            | Kind::Year
            | Kind::Float
            | Kind::Double
            | Kind::Text(Storage::Plain | Storage::Adaptive)
            | Kind::Decimal { .. }
            | Kind::Datetime { .. }
            | Kind::Date
    )
}

/// The Python sink of the codec: each decoded value as a Python object pushed to `items`.
/// Refuses (false) what the general route must make (values of other kinds, text that is not
/// UTF-8, dates and datetimes Python cannot hold), and keeps the first Python error raised.
struct PySink<'s, 'py> {
    py: Python<'py>,
    items: &'s mut Vec<Py<PyAny>>,
    text: &'s mut Vec<u8>,
    dates: &'s mut DateCache,
    err: Option<PyErr>,
}

impl PySink<'_, '_> {
    #[inline]
    fn push(&mut self, made: PyResult<Option<Py<PyAny>>>) -> bool {
        match made {
            Ok(Some(obj)) => {
                self.items.push(obj);
                true
            }
            Ok(None) => false,
            Err(e) => {
                self.err = Some(e);
                false
            }
        }
    }
}

impl FieldSink for PySink<'_, '_> {
    #[inline]
    fn null(&mut self) {
        self.items.push(self.py.None());
    }
    #[inline]
    fn int(&mut self, v: i64) -> bool {
        let obj = v.into_pyobject(self.py).map(|o| o.into_any().unbind());
        self.push(Ok(obj.ok()))
    }
    #[inline]
    fn uint(&mut self, v: u64) -> bool {
        let obj = v.into_pyobject(self.py).map(|o| o.into_any().unbind());
        self.push(Ok(obj.ok()))
    }
    #[inline]
    fn float(&mut self, v: f32) -> bool {
        self.double(f64::from(v))
    }
    #[inline]
    fn double(&mut self, v: f64) -> bool {
        let obj = v.into_pyobject(self.py).map(|o| o.into_any().unbind());
        self.push(Ok(obj.ok()))
    }
    fn decimal(&mut self, d: &Decimal<'_>, scale: u8) -> bool {
        self.text.clear();
        write_decimal(self.text, d, scale);
        let made = py_decimal(self.py, std::str::from_utf8(self.text).unwrap_or("NaN"));
        self.push(made.map(|o| Some(o.unbind())))
    }
    #[inline]
    fn year(&mut self, y: u16) -> bool {
        self.uint(u64::from(y))
    }
    #[inline]
    fn date(&mut self, d: Date) -> bool {
        let made = self.dates.date(self.py, d);
        self.push(made)
    }
    fn time(&mut self, _us: i64) -> bool {
        false
    }
    #[inline]
    fn datetime(&mut self, us: i64, _fsp: u8, timestamp: bool) -> bool {
        let made = py_datetime(self.py, us, timestamp);
        self.push(made)
    }
    fn enumeration(&mut self, _index: u16, _members: &[String]) -> bool {
        false
    }
    fn set(&mut self, _bits: u64, _members: &[String]) -> bool {
        false
    }
    #[inline]
    fn text(&mut self, b: &[u8]) -> bool {
        let made = py_str(self.py, b);
        self.push(Ok(made))
    }
    #[inline]
    fn stored_str(&mut self, b: &[u8]) -> Option<bool> {
        // CPython checks the UTF-8 as it decodes (text that is not takes the general route,
        // which reports it).
        Some(self.text(b))
    }
    fn json(&mut self, _b: &[u8]) -> bool {
        false
    }
    fn bytes(&mut self, _b: &[u8]) -> bool {
        false
    }
}

/// A `str` of UTF-8 `bytes`, checked as it is decoded; `None` if they are not UTF-8 (the
/// general route then reports them).
fn py_str(py: Python<'_>, bytes: &[u8]) -> Option<Py<PyAny>> {
    let len = pyo3::ffi::Py_ssize_t::try_from(bytes.len()).ok()?;
    // SAFETY: `bytes` is valid for `len` bytes during the call, which only reads them; a null
    // `errors` asks for strict decoding; `py` proves the GIL is held. Saves the second UTF-8
    // check that `PyString::new` needs a `&str` for (~500 instructions a row, docs/PERF.md).
    let p =
        unsafe { pyo3::ffi::PyUnicode_DecodeUTF8(bytes.as_ptr().cast(), len, std::ptr::null()) };
    // SAFETY: `p` is a new reference, or null with the decoding error set (taken and dropped
    // here).
    unsafe { Bound::from_owned_ptr_or_err(py, p) }
        .ok()
        .map(Bound::unbind)
}

/// Slots of a table's cache of `date` objects: dates within about 11 years of each other never
/// evict one another. At most 64 KiB of slots and as many small objects per table.
const DATE_CACHE: usize = 4096;

/// The `datetime.date` objects a table's gets made last, by day (a direct-mapped cache): a
/// DATE column holds few distinct values next to its row count (a day per row at most, and
/// usually far fewer), and a date is immutable, so handing out the same object again is
/// safe and spares the constructor. Bounded: [`DATE_CACHE`] objects per table.
struct DateCache {
    /// Per slot, the date's key ([`DateCache::key`]) and its object; made on the first date.
    slots: Vec<Option<(u32, Py<PyAny>)>>,
    /// The number of slots; 0 when the table has no DATE column (or for a get's own
    /// scratch, see [`GetPlan::get`]).
    size: usize,
}

impl DateCache {
    fn new(size: usize) -> DateCache {
        DateCache {
            slots: Vec::new(),
            size,
        }
    }

    /// The date as one number (every field kept: equal keys, equal dates).
    fn key(d: Date) -> u32 {
        (u32::from(d.year) << 16) | (u32::from(d.month) << 8) | u32::from(d.day)
    }

    /// The `date` of `d` (`None` when Python has no such date), from the cache if it is there.
    fn date(&mut self, py: Python<'_>, d: Date) -> PyResult<Option<Py<PyAny>>> {
        let n = self.size;
        if n == 0 {
            return py_date(py, d);
        }
        if self.slots.is_empty() {
            self.slots.resize_with(n, || None);
        }
        let key = Self::key(d);
        // Consecutive days take consecutive slots (a month counts 31 days, a year 372).
        let at =
            (u32::from(d.year) * 372 + u32::from(d.month) * 31 + u32::from(d.day)) as usize % n;
        let Some(slot) = self.slots.get_mut(at) else {
            return py_date(py, d);
        };
        if let Some((k, obj)) = slot {
            if *k == key {
                return Ok(Some(obj.clone_ref(py)));
            }
        }
        let made = py_date(py, d)?;
        if let Some(obj) = &made {
            *slot = Some((key, obj.clone_ref(py)));
        }
        Ok(made)
    }
}

/// What a get reuses from one call to the next: the key builder, the row's items, the text of
/// a decimal, an out-of-band value's bytes and the cache of dates.
#[derive(Default)]
struct RowParts {
    items: Vec<Py<PyAny>>,
    text: Vec<u8>,
    blob: Vec<u8>,
}

/// What a get reuses from one call to the next.
struct Scratch {
    builder: TupleBuilder,
    parts: RowParts,
    dates: DateCache,
}

/// The parts of [`Scratch`] a row's conversion uses (the key builder stays borrowed by the
/// key it built).
struct RowScratch<'s> {
    parts: &'s mut RowParts,
    dates: &'s mut DateCache,
}

/// A table's plan for point gets.
pub struct GetPlan {
    /// The key columns, in key order.
    key_columns: Vec<Column>,
    /// What gets reuse (a get that finds it busy, on another thread or re-entered from a
    /// constructor's finalizer, makes its own, without the cache of dates).
    scratch: Mutex<Scratch>,
    /// The descriptor of whole key tuples (for builders made when the shared one is busy).
    key_tuple_desc: TupleDesc,
    /// The table's row plan, when every visible column is stored and of a kind the Python
    /// sink takes ([`direct`]); `None` when some column needs the general route (then every
    /// get takes it).
    rows: Option<RowPlan>,
    /// Visible column names as Python strings, made once (dict rows).
    names: Vec<Py<PyString>>,
    /// Per visible column: a TIMESTAMP (general route: aware datetimes).
    utc: Vec<bool>,
    /// Every key column is stored as a fixed-width number (integers, dates, datetimes…), so
    /// equal keys have equal bytes and the map's point lookup serves (it gives no stored key).
    plain_key: bool,
}

/// True if equal values of `col` have equal stored bytes in a key.
fn plain_key_column(col: &Column) -> bool {
    use Encoding as E;
    matches!(
        key_encoding(col.encoding),
        E::Int8
            | E::Int16
            | E::Int32
            | E::Int64
            | E::Uint8
            | E::Uint16
            | E::Uint32
            | E::Uint64
            | E::Year
            | E::Date
            | E::Time
            | E::Datetime
            | E::Bit64
            | E::Enum
    )
}

impl GetPlan {
    /// The plan of `table`, whose primary key `enc` encodes; `utc` marks its visible
    /// TIMESTAMP columns.
    pub fn new(py: Python<'_>, table: &Table, enc: &KeyEncoder, utc: Vec<bool>) -> GetPlan {
        let s = &table.schema;
        let visible = s.visible_columns();
        let rows = RowPlan::new(s, table.schema_address).ok().filter(|rows| {
            rows.fields
                .iter()
                .all(|f| f.slot != Slot::Virtual && direct(&f.kind))
        });
        let names = visible
            .iter()
            .filter_map(|&i| s.columns.get(i))
            .map(|c| PyString::intern(py, &c.name).unbind())
            .collect();
        let dates = match &rows {
            Some(r) if r.fields.iter().any(|f| f.kind == Kind::Date) => DATE_CACHE,
            _ => 0,
        };
        GetPlan {
            plain_key: enc.columns().iter().all(plain_key_column),
            key_columns: enc.columns().to_vec(),
            scratch: Mutex::new(Scratch {
                builder: TupleBuilder::new(enc.desc().clone()),
                parts: RowParts::default(),
                dates: DateCache::new(dates),
            }),
            key_tuple_desc: enc.desc().clone(),
            rows,
            names,
            utc,
        }
    }

    /// The key columns, in key order.
    pub fn key_columns(&self) -> &[Column] {
        &self.key_columns
    }

    /// The row of `reader` whose primary key is `key` (one Python value per key column, the
    /// count already checked), as a tuple or a dict, or None.
    pub fn get<'py>(
        &self,
        py: Python<'py>,
        reader: &TableReader<'_>,
        table: &str,
        key: &Bound<'py, PyTuple>,
        as_dict: bool,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        // Python values become Dolt values before the scratch is taken: converting them may
        // run Python code, which must not happen while a lock is held. A key of one column
        // (the usual case) needs no vector.
        let one;
        let many: Vec<Option<SqlValue>>;
        let vals: &[Option<SqlValue>] =
            if let ([col], Ok(v)) = (&self.key_columns[..], key.get_item(0)) {
                one = [py_to_sql(&v, col, table)?];
                &one
            } else {
                let mut v = Vec::with_capacity(self.key_columns.len());
                for (x, col) in key.iter().zip(&self.key_columns) {
                    v.push(py_to_sql(&x, col, table)?);
                }
                many = v;
                &many
            };
        let mut own;
        let mut guard = self.scratch.try_lock();
        let scratch: &mut Scratch = match guard.as_deref_mut() {
            Ok(s) => s,
            Err(_) => {
                own = Scratch {
                    builder: TupleBuilder::new(self.key_tuple_desc.clone()),
                    parts: RowParts::default(),
                    dates: DateCache::new(0),
                };
                &mut own
            }
        };
        let Scratch {
            builder: b,
            parts,
            dates,
        } = scratch;
        let mut row = RowScratch { parts, dates };
        b.reset();
        for (i, (col, v)) in self.key_columns.iter().zip(vals).enumerate() {
            put_field(b, i, col, key_encoding(col.encoding), v.as_ref()).map_err(|reason| {
                dolt_err(DoltError::BadValue {
                    table: table.to_string(),
                    column: col.name.clone(),
                    reason,
                })
            })?;
        }
        let k = b.build().map_err(|e| {
            dolt_err(DoltError::BadValue {
                table: table.to_string(),
                column: String::new(),
                reason: e.to_string(),
            })
        })?;
        let found = if self.plain_key {
            reader
                .get_stored_value(k.as_bytes())
                .map_err(dolt_err)?
                .map(|sv| {
                    self.fast_row(py, reader, k.as_bytes(), sv, as_dict, &mut row)
                        .transpose()
                })
        } else {
            reader
                .get_stored(k.as_bytes(), |sk, sv| {
                    Ok(self
                        .fast_row(py, reader, sk, sv, as_dict, &mut row)
                        .transpose())
                })
                .map_err(dolt_err)?
        };
        match found {
            None => Ok(None),
            Some(Some(row)) => row.map(Some),
            Some(None) => {
                // The general route: decode the stored pair found again by key.
                let row = reader
                    .get_stored(k.as_bytes(), |sk, sv| reader.decode(sk, sv))
                    .map_err(dolt_err)?;
                match row {
                    None => Ok(None),
                    Some(row) => {
                        let t = sql_row_to_py(py, &row, &self.utc)?;
                        if as_dict {
                            self.dict(py, t.iter()).map(|d| Some(d.into_any()))
                        } else {
                            Ok(Some(t.into_any()))
                        }
                    }
                }
            }
        }
    }

    /// A dict of column name to value.
    fn dict<'py>(
        &self,
        py: Python<'py>,
        values: impl Iterator<Item = Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (name, v) in self.names.iter().zip(values) {
            d.set_item(name.bind(py), v)?;
        }
        Ok(d)
    }

    /// The row of a stored pair converted field by field; `Ok(None)` when a value needs the
    /// general route.
    fn fast_row<'py>(
        &self,
        py: Python<'py>,
        reader: &TableReader<'_>,
        key: &[u8],
        value: &[u8],
        as_dict: bool,
        scratch: &mut RowScratch<'_>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        scratch.parts.items.clear();
        let row = self.fast_fields(py, reader, key, value, scratch);
        let items = &mut scratch.parts.items;
        match row {
            Ok(true) => {}
            Ok(false) => {
                items.clear();
                return Ok(None);
            }
            Err(e) => {
                items.clear();
                return Err(e);
            }
        }
        // `drain` keeps the vector's memory for the next get.
        Ok(Some(if as_dict {
            self.dict(py, items.drain(..).map(|v| v.into_bound(py)))?
                .into_any()
        } else {
            PyTuple::new(py, items.drain(..))?.into_any()
        }))
    }

    /// Converts the fields of a stored pair into `scratch`'s items through the codec's
    /// decoder and the Python sink; false when a value needs the general route.
    fn fast_fields(
        &self,
        py: Python<'_>,
        reader: &TableReader<'_>,
        key: &[u8],
        value: &[u8],
        scratch: &mut RowScratch<'_>,
    ) -> PyResult<bool> {
        let Some(rows) = &self.rows else {
            return Ok(false);
        };
        // Both are valid tuples: the key was built here, the value comes from a tree node,
        // verified (tuples included) when it was read. Unchecked views never read out of
        // bounds either way.
        let kt = Tuple::new_unverified(key);
        let vt = Tuple::new_unverified(value);
        let RowParts { items, text, blob } = &mut *scratch.parts;
        let mut sink = PySink {
            py,
            items,
            text,
            dates: &mut *scratch.dates,
            err: None,
        };
        let (db, table) = (reader.database(), reader.table());
        for f in &rows.fields {
            if !rows
                .decode(db, table, f, kt, vt, blob, &mut sink)
                .map_err(dolt_err)?
            {
                return match sink.err.take() {
                    Some(e) => Err(e),
                    None => Ok(false),
                };
            }
        }
        Ok(true)
    }
}
