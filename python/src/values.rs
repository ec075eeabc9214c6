//! Python values to and from the library's values: Dolt's [`SqlValue`]s (rows of Dolt tables,
//! keys to look up) and the tuple [`Value`]s of native maps.
//!
//! Natural Python types: `int`, `float`, `decimal.Decimal`, `str`, `bytes`, `datetime.date`,
//! `datetime.datetime` (naive for DATETIME, aware UTC for TIMESTAMP), `datetime.timedelta`
//! (TIME), JSON as its text (`str`). A date or datetime Python cannot represent (MySQL's zero
//! date, year 0 or past 9999) comes back as the text Dolt prints.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDate, PyDateTime, PyString, PyTuple, PyTzInfo};

use prollystore::format::tuple::{civil_from_days, Adaptive, Date, Decimal, Value};
use prollystore::format::Encoding;
use prollystore_dolt::schema::{Column as DoltColumn, SqlType};
use prollystore_dolt::SqlValue;

/// The Python classes values are made of, looked up once.
struct Classes {
    decimal: Py<PyAny>,
    /// `create_decimal` of a private `decimal.Context` with the largest precision and
    /// exponent range: it never rounds, so it makes the same `Decimal` as the class from any
    /// finite text, and as a method of a C type it skips the class call's keyword parsing
    /// and context lookup (`py_decimal`).
    exact_decimal: Py<PyAny>,
    date: Py<PyAny>,
    datetime: Py<PyAny>,
    timedelta: Py<PyAny>,
    utc: Py<PyAny>,
}

static CLASSES: PyOnceLock<Classes> = PyOnceLock::new();

fn classes(py: Python<'_>) -> PyResult<&Classes> {
    CLASSES.get_or_try_init(py, || {
        let dt = py.import("datetime")?;
        let dec = py.import("decimal")?;
        let kw = [
            ("prec", dec.getattr("MAX_PREC")?),
            ("Emax", dec.getattr("MAX_EMAX")?),
            ("Emin", dec.getattr("MIN_EMIN")?),
        ]
        .into_py_dict(py)?;
        let context = dec.getattr("Context")?.call((), Some(&kw))?;
        Ok(Classes {
            decimal: dec.getattr("Decimal")?.unbind(),
            exact_decimal: context.getattr("create_decimal")?.unbind(),
            date: dt.getattr("date")?.unbind(),
            datetime: dt.getattr("datetime")?.unbind(),
            timedelta: dt.getattr("timedelta")?.unbind(),
            utc: dt.getattr("timezone")?.getattr("utc")?.unbind(),
        })
    })
}

const MICROS_PER_SECOND: i64 = 1_000_000;
const MICROS_PER_DAY: i64 = 86_400 * MICROS_PER_SECOND;

/// A `datetime.date`, or `None` when Python has no such date. Made by the datetime module's C
/// constructor (a class call under the limited API).
pub(crate) fn py_date(py: Python<'_>, d: Date) -> PyResult<Option<Py<PyAny>>> {
    if !(1..=9999).contains(&d.year) || !(1..=12).contains(&d.month) || d.day == 0 {
        return Ok(None);
    }
    match PyDate::new(py, i32::from(d.year), d.month, d.day) {
        Ok(v) => Ok(Some(v.into_any().unbind())),
        Err(_) => Ok(None),
    }
}

/// A `datetime.datetime` for Unix microseconds (aware UTC if `utc`), or `None` when Python has
/// no such instant. Made by the datetime module's C constructor, as dates are.
pub(crate) fn py_datetime(py: Python<'_>, micros: i64, utc: bool) -> PyResult<Option<Py<PyAny>>> {
    let days = micros.div_euclid(MICROS_PER_DAY);
    let rem = micros.rem_euclid(MICROS_PER_DAY);
    let (y, mo, d) = civil_from_days(days);
    if !(1..=9999).contains(&y) {
        return Ok(None);
    }
    // In range by construction: a year of 1..=9999, a day's seconds and microseconds.
    let secs = rem / MICROS_PER_SECOND;
    let part = |v: i64| u8::try_from(v).unwrap_or(0);
    let us = u32::try_from(rem % MICROS_PER_SECOND).unwrap_or(0);
    let tz = if utc { Some(PyTzInfo::utc(py)?) } else { None };
    let v = PyDateTime::new(
        py,
        i32::try_from(y).unwrap_or(1),
        part(i64::from(mo)),
        part(i64::from(d)),
        part(secs / 3600),
        part((secs / 60) % 60),
        part(secs % 60),
        us,
        tz.as_deref(),
    )?;
    Ok(Some(v.into_any().unbind()))
}

/// A `decimal.Decimal` from its text (a finite number, as the library writes decimals).
pub(crate) fn py_decimal<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    classes(py)?.exact_decimal.bind(py).call1((text,))
}

fn py_timedelta(py: Python<'_>, micros: i64) -> PyResult<Py<PyAny>> {
    let kw = [("microseconds", micros)].into_py_dict(py)?;
    classes(py)?.timedelta.call(py, (), Some(&kw))
}

use pyo3::types::IntoPyDict;

/// A Dolt value as a Python value; `utc` makes datetimes aware (TIMESTAMP columns).
pub fn sql_to_py(py: Python<'_>, v: &SqlValue, utc: bool) -> PyResult<Py<PyAny>> {
    Ok(match v {
        SqlValue::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        SqlValue::Uint(u) => u.into_pyobject(py)?.into_any().unbind(),
        SqlValue::Float(f) => f64::from(*f).into_pyobject(py)?.into_any().unbind(),
        SqlValue::Double(f) => f.into_pyobject(py)?.into_any().unbind(),
        SqlValue::Decimal(text) => classes(py)?.decimal.call1(py, (text.as_str(),))?,
        SqlValue::Year(y) => y.into_pyobject(py)?.into_any().unbind(),
        SqlValue::Date(d) => match py_date(py, *d)? {
            Some(v) => v,
            None => PyString::new(py, &v.to_text()).into_any().unbind(),
        },
        SqlValue::Time(us) => py_timedelta(py, *us)?,
        SqlValue::Datetime(us, _) => match py_datetime(py, *us, utc)? {
            Some(v) => v,
            None => PyString::new(py, &v.to_text()).into_any().unbind(),
        },
        SqlValue::Enum(_, s) | SqlValue::Set(_, s) | SqlValue::Text(s) | SqlValue::Json(s) => {
            PyString::new(py, s).into_any().unbind()
        }
        SqlValue::Bytes(b) => PyBytes::new(py, b).into_any().unbind(),
    })
}

/// A row of Dolt values as a tuple; `utc[i]` says whether column `i` is a TIMESTAMP.
pub fn sql_row_to_py<'py>(
    py: Python<'py>,
    row: &[Option<SqlValue>],
    utc: &[bool],
) -> PyResult<Bound<'py, PyTuple>> {
    let mut items = Vec::with_capacity(row.len());
    for (i, v) in row.iter().enumerate() {
        items.push(match v {
            None => py.None(),
            Some(v) => sql_to_py(py, v, utc.get(i).copied().unwrap_or(false))?,
        });
    }
    PyTuple::new(py, items)
}

fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// `TypeError` for a value of the wrong Python type.
pub fn wrong_type(place: &str, expected: &str, v: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!(
        "{place}: expected {expected}, got {} {}",
        type_name(v),
        v.repr().map(|r| r.to_string()).unwrap_or_default()
    ))
}

fn is_instance(v: &Bound<'_, PyAny>, cls: &Py<PyAny>) -> PyResult<bool> {
    v.is_instance(cls.bind(v.py()))
}

/// The module of `v`'s type (`numpy`, `pandas._libs.missing`, …).
fn type_module(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .getattr("__module__")
        .and_then(|m| m.extract::<String>())
        .unwrap_or_default()
}

/// True for pandas' and NumPy's missing values (`pandas.NA`, `pandas.NaT`, `numpy`'s `NaT`, a
/// float NaN given to a column that takes no float), which stand for NULL as `None` does.
/// Asked only of values refused as they are, so that plain values pay nothing for it.
fn is_missing(v: &Bound<'_, PyAny>) -> bool {
    // pandas' default string and object columns mark a missing value with a float NaN.
    if v.is_instance_of::<pyo3::types::PyFloat>() {
        return v.extract::<f64>().is_ok_and(f64::is_nan);
    }
    let module = type_module(v);
    if module.starts_with("pandas") {
        return matches!(type_name(v).as_str(), "NAType" | "NaTType");
    }
    module == "numpy"
        && v.py()
            .import("numpy")
            .and_then(|np| np.call_method1("isnat", (v,)))
            .and_then(|b| b.extract::<bool>())
            .unwrap_or(false)
}

/// A NumPy scalar (`numpy.int32`, `numpy.float32`, `numpy.bool_`, `numpy.datetime64`, …) as
/// the plain Python value it holds (a `datetime64` as a `datetime.datetime` to the
/// microsecond); `None` for any other value.
fn numpy_plain<'py>(v: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    if type_module(v) != "numpy" || !v.hasattr("item")? {
        return Ok(None);
    }
    let kind: String = v.getattr("dtype")?.getattr("kind")?.extract()?;
    let plain = match kind.as_str() {
        "M" => v
            .call_method1("astype", ("datetime64[us]",))?
            .call_method0("item"),
        "m" => v
            .call_method1("astype", ("timedelta64[us]",))?
            .call_method0("item"),
        _ => v.call_method0("item"),
    }?;
    Ok(Some(plain))
}

/// `convert(v)`, and when that refuses `v`'s type: NULL (`None`) for a missing value, else
/// `convert` of the plain Python value of a NumPy scalar. Plain values take no extra step.
fn or_numpy<'py, T>(
    v: &Bound<'py, PyAny>,
    convert: impl Fn(&Bound<'py, PyAny>) -> PyResult<T>,
) -> PyResult<Option<T>> {
    if v.is_none() {
        return Ok(None);
    }
    match convert(v) {
        Err(e) if e.is_instance_of::<PyTypeError>(v.py()) => {
            if is_missing(v) {
                return Ok(None);
            }
            match numpy_plain(v)? {
                Some(p) if !p.is_none() => convert(&p).map(Some),
                Some(_) => Ok(None),
                None => Err(e),
            }
        }
        r => r.map(Some),
    }
}

/// Microseconds of a `timedelta`.
fn timedelta_micros(v: &Bound<'_, PyAny>) -> PyResult<i64> {
    let days: i64 = v.getattr("days")?.extract()?;
    let secs: i64 = v.getattr("seconds")?.extract()?;
    let us: i64 = v.getattr("microseconds")?.extract()?;
    Ok((days * 86_400 + secs) * MICROS_PER_SECOND + us)
}

/// Unix microseconds of a `datetime` (an aware one converted to UTC, a naive one taken as
/// UTC wall-clock time); `need_zone` refuses naive ones.
fn datetime_micros(v: &Bound<'_, PyAny>, place: &str, need_zone: bool) -> PyResult<i64> {
    let py = v.py();
    let c = classes(py)?;
    let aware = !v.getattr("tzinfo")?.is_none() && !v.call_method0("utcoffset")?.is_none();
    if need_zone && !aware {
        return Err(PyValueError::new_err(format!(
            "{place}: a naive datetime {}; this column is a TIMESTAMP (a UTC instant), give a \
             datetime with a tzinfo",
            v.repr()?
        )));
    }
    let v = if aware {
        v.call_method1("astimezone", (c.utc.bind(py),))?
    } else {
        v.clone()
    };
    let (y, m, d): (i64, i64, i64) = (
        v.getattr("year")?.extract()?,
        v.getattr("month")?.extract()?,
        v.getattr("day")?.extract()?,
    );
    let (h, mi, s, us): (i64, i64, i64, i64) = (
        v.getattr("hour")?.extract()?,
        v.getattr("minute")?.extract()?,
        v.getattr("second")?.extract()?,
        v.getattr("microsecond")?.extract()?,
    );
    let days = prollystore::format::tuple::days_from_civil(y, m, d);
    Ok(days * MICROS_PER_DAY + ((h * 60 + mi) * 60 + s) * MICROS_PER_SECOND + us)
}

fn date_parts(v: &Bound<'_, PyAny>) -> PyResult<Date> {
    Ok(Date {
        year: v.getattr("year")?.extract()?,
        month: v.getattr("month")?.extract()?,
        day: v.getattr("day")?.extract()?,
    })
}

/// A finite `Decimal` (or int) checked: NaN and infinities are refused.
fn check_decimal<'py>(v: &Bound<'py, PyAny>, place: &str) -> PyResult<Bound<'py, PyAny>> {
    let py = v.py();
    let c = classes(py)?;
    if v.is_instance_of::<pyo3::types::PyBool>() {
        return Err(wrong_type(place, "a decimal.Decimal or int", v));
    }
    let d = if is_instance(v, &c.decimal)? {
        v.clone()
    } else if v.is_instance_of::<pyo3::types::PyInt>() || v.is_instance_of::<PyString>() {
        c.decimal.bind(py).call1((v,))?
    } else if v.is_instance_of::<pyo3::types::PyFloat>() {
        let f: f64 = v.extract()?;
        if !f.is_finite() {
            return Err(PyValueError::new_err(format!(
                "{place}: {f} is not a finite number; a DECIMAL holds none"
            )));
        }
        // The shortest text of the float (a NumPy float's own repr names its type).
        c.decimal
            .bind(py)
            .call1((pyo3::types::PyFloat::new(py, f).repr()?,))?
    } else {
        return Err(wrong_type(place, "a decimal.Decimal or int", v));
    };
    if !d.call_method0("is_finite")?.extract::<bool>()? {
        return Err(PyValueError::new_err(format!(
            "{place}: {} is not a finite number; a DECIMAL holds none",
            d.repr()?
        )));
    }
    Ok(d)
}

fn int_value(v: &Bound<'_, PyAny>, place: &str) -> PyResult<i64> {
    if !v.is_instance_of::<pyo3::types::PyInt>() {
        return Err(wrong_type(place, "an int", v));
    }
    v.extract::<i64>()
        .map_err(|_| PyValueError::new_err(format!("{place}: {} is out of range", v)))
}

fn uint_value(v: &Bound<'_, PyAny>, place: &str) -> PyResult<u64> {
    if !v.is_instance_of::<pyo3::types::PyInt>() {
        return Err(wrong_type(place, "an int", v));
    }
    v.extract::<u64>()
        .map_err(|_| PyValueError::new_err(format!("{place}: {} is out of range", v)))
}

fn float_value(v: &Bound<'_, PyAny>, place: &str) -> PyResult<f64> {
    if v.is_instance_of::<pyo3::types::PyFloat>() || v.is_instance_of::<pyo3::types::PyInt>() {
        v.extract::<f64>()
    } else {
        Err(wrong_type(place, "a float", v))
    }
}

fn str_value(v: &Bound<'_, PyAny>, place: &str) -> PyResult<String> {
    v.downcast::<PyString>()
        .map_err(|_| wrong_type(place, "a str", v))?
        .to_cow()
        .map(|c| c.into_owned())
}

fn bytes_value(v: &Bound<'_, PyAny>, place: &str) -> PyResult<Vec<u8>> {
    if let Ok(b) = v.downcast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if v.is_instance_of::<pyo3::types::PyByteArray>()
        || v.is_instance_of::<pyo3::types::PyMemoryView>()
    {
        return v
            .call_method0("__bytes__")
            .or_else(|_| v.py().get_type::<PyBytes>().call1((v,)))?
            .extract();
    }
    Err(wrong_type(place, "bytes", v))
}

/// A Python value as the Dolt value of `col` of table `table` (for keys and range bounds),
/// `None` for NULL. Integers and text of the right Python type take a short path (point
/// gets); everything else, and every error, the checked one ([`py_to_sql_at`]).
pub fn py_to_sql(
    v: &Bound<'_, PyAny>,
    col: &DoltColumn,
    table: &str,
) -> PyResult<Option<SqlValue>> {
    match &col.sql_type {
        SqlType::Int {
            unsigned: false, ..
        } if v.is_exact_instance_of::<pyo3::types::PyInt>() => {
            if let Ok(i) = v.extract::<i64>() {
                return Ok(Some(SqlValue::Int(i)));
            }
        }
        SqlType::Int { unsigned: true, .. } if v.is_exact_instance_of::<pyo3::types::PyInt>() => {
            if let Ok(u) = v.extract::<u64>() {
                return Ok(Some(SqlValue::Uint(u)));
            }
        }
        SqlType::Text { .. } => {
            if let Ok(s) = v.downcast::<PyString>() {
                return Ok(Some(SqlValue::Text(s.to_cow()?.into_owned())));
            }
        }
        _ => {}
    }
    let place = format!("table {table:?}, column {:?}", col.name);
    py_to_sql_at(v, col, &place)
}

/// A Python value as the Dolt value of `col`, every check made; `None` for NULL (`None`,
/// `pandas.NA`, `NaT`). NumPy scalars are taken as the Python values they hold. `place`
/// (table, row, column) starts error messages.
pub fn py_to_sql_at(
    v: &Bound<'_, PyAny>,
    col: &DoltColumn,
    place: &str,
) -> PyResult<Option<SqlValue>> {
    or_numpy(v, |v| sql_value(v, col, place))
}

fn sql_value(v: &Bound<'_, PyAny>, col: &DoltColumn, place: &str) -> PyResult<SqlValue> {
    let py = v.py();
    let c = classes(py)?;
    let parse = |text: &str| {
        prollystore_dolt::codec::encode::parse_value(col, text)
            .map_err(|e| PyValueError::new_err(format!("{place}: {e}")))
    };
    Ok(match &col.sql_type {
        SqlType::Int {
            unsigned: false, ..
        } => SqlValue::Int(int_value(v, place)?),
        SqlType::Int { unsigned: true, .. } | SqlType::Bit(_) => {
            SqlValue::Uint(uint_value(v, place)?)
        }
        SqlType::Float => SqlValue::Float(float_value(v, place)? as f32),
        SqlType::Double => SqlValue::Double(float_value(v, place)?),
        SqlType::Text { .. } => SqlValue::Text(str_value(v, place)?),
        SqlType::Binary { .. } => SqlValue::Bytes(bytes_value(v, place)?),
        SqlType::Decimal { .. } => {
            let d = check_decimal(v, place)?;
            parse(&d.str()?.to_string())?
        }
        SqlType::Year => SqlValue::Year(
            u16::try_from(int_value(v, place)?)
                .map_err(|_| PyValueError::new_err(format!("{place}: {v} is not a year")))?,
        ),
        SqlType::Date => {
            if !is_instance(v, &c.date)? || is_instance(v, &c.datetime)? {
                return Err(wrong_type(place, "a datetime.date", v));
            }
            SqlValue::Date(date_parts(v)?)
        }
        SqlType::Time(_) => {
            if !is_instance(v, &c.timedelta)? {
                return Err(wrong_type(place, "a datetime.timedelta", v));
            }
            SqlValue::Time(timedelta_micros(v)?)
        }
        SqlType::Datetime(fsp) | SqlType::Timestamp(fsp) => {
            if !is_instance(v, &c.datetime)? {
                return Err(wrong_type(place, "a datetime.datetime", v));
            }
            let need_zone = matches!(col.sql_type, SqlType::Timestamp(_));
            SqlValue::Datetime(datetime_micros(v, place, need_zone)?, *fsp)
        }
        SqlType::Enum { .. } | SqlType::Set { .. } => {
            if v.is_instance_of::<pyo3::types::PyInt>() {
                parse(&v.str()?.to_string())?
            } else {
                parse(&str_value(v, place)?)?
            }
        }
        _ => {
            if let Ok(s) = v.downcast::<PyString>() {
                parse(&s.to_cow()?)?
            } else {
                SqlValue::Bytes(bytes_value(v, place)?)
            }
        }
    })
}

/// A Python value held for encoding into a native map's tuple field: owns what a [`Value`]
/// borrows.
#[derive(Debug)]
pub enum Held {
    /// NULL.
    Null,
    /// A value with no borrowed part.
    Plain(Value<'static>),
    /// Text or bytes.
    Bytes(Vec<u8>, Encoding),
    /// A decimal: exponent, sign, big-endian coefficient.
    Decimal(i32, bool, Vec<u8>),
}

impl Held {
    /// The tuple value.
    pub fn value(&self) -> Option<Value<'_>> {
        match self {
            Held::Null => None,
            Held::Plain(v) => Some(*v),
            Held::Decimal(e, n, c) => Some(Value::Decimal(Decimal::finite(*e, *n, c))),
            Held::Bytes(b, enc) => Some(match enc {
                Encoding::String => Value::String(std::str::from_utf8(b).unwrap_or_default()),
                Encoding::Json => Value::Json(b),
                Encoding::Geometry => Value::Geometry(b),
                e if e.is_adaptive() => Value::Adaptive(Adaptive::Inline(b)),
                _ => Value::Bytes(b),
            }),
        }
    }
}

/// A Python value as the native-map field of encoding `enc`; `place` names the column (and
/// row) in errors.
pub fn py_to_held(v: &Bound<'_, PyAny>, enc: Encoding, place: &str) -> PyResult<Held> {
    Ok(or_numpy(v, |v| held_value(v, enc, place))?.unwrap_or(Held::Null))
}

fn held_value(v: &Bound<'_, PyAny>, enc: Encoding, place: &str) -> PyResult<Held> {
    use Encoding as E;
    let py = v.py();
    let c = classes(py)?;
    let range =
        |what: &str| PyValueError::new_err(format!("{place}: {v} is out of range for {what}"));
    Ok(Held::Plain(match enc {
        E::Int8 => Value::Int8(int_value(v, place)?.try_into().map_err(|_| range("int8"))?),
        E::Int16 => Value::Int16(
            int_value(v, place)?
                .try_into()
                .map_err(|_| range("int16"))?,
        ),
        E::Int32 => Value::Int32(
            int_value(v, place)?
                .try_into()
                .map_err(|_| range("int32"))?,
        ),
        E::Int64 => Value::Int64(int_value(v, place)?),
        E::Uint8 => Value::Uint8(
            uint_value(v, place)?
                .try_into()
                .map_err(|_| range("uint8"))?,
        ),
        E::Uint16 => Value::Uint16(
            uint_value(v, place)?
                .try_into()
                .map_err(|_| range("uint16"))?,
        ),
        E::Uint32 => Value::Uint32(
            uint_value(v, place)?
                .try_into()
                .map_err(|_| range("uint32"))?,
        ),
        E::Uint64 => Value::Uint64(uint_value(v, place)?),
        E::Bit64 => Value::Bit64(uint_value(v, place)?),
        E::Enum => Value::Enum(
            uint_value(v, place)?
                .try_into()
                .map_err(|_| range("enum"))?,
        ),
        E::Set => Value::Set(uint_value(v, place)?),
        E::Float32 => Value::Float32(float_value(v, place)? as f32),
        E::Float64 => Value::Float64(float_value(v, place)?),
        E::Year => Value::Year(int_value(v, place)?.try_into().map_err(|_| range("year"))?),
        E::Date => {
            if !is_instance(v, &c.date)? || is_instance(v, &c.datetime)? {
                return Err(wrong_type(place, "a datetime.date", v));
            }
            Value::Date(date_parts(v)?)
        }
        E::Time => {
            if !is_instance(v, &c.timedelta)? {
                return Err(wrong_type(place, "a datetime.timedelta", v));
            }
            Value::Time(timedelta_micros(v)?)
        }
        E::Datetime => {
            if !is_instance(v, &c.datetime)? {
                return Err(wrong_type(place, "a datetime.datetime", v));
            }
            Value::Datetime(datetime_micros(v, place, false)?)
        }
        E::Decimal => {
            let d = check_decimal(v, place)?;
            let t = d.call_method0("as_tuple")?;
            let sign: i64 = t.getattr("sign")?.extract()?;
            let exponent: i32 = t.getattr("exponent")?.extract()?;
            let digits: Vec<u8> = t.getattr("digits")?.extract()?;
            return Ok(Held::Decimal(exponent, sign == 1, digits_to_be(&digits)));
        }
        E::String | E::StringAdaptive => {
            return Ok(Held::Bytes(str_value(v, place)?.into_bytes(), enc));
        }
        E::Json | E::JsonAdaptive => {
            let text = if v.is_instance_of::<PyString>() {
                str_value(v, place)?
            } else {
                py.import("json")?.call_method1("dumps", (v,))?.extract()?
            };
            return Ok(Held::Bytes(text.into_bytes(), enc));
        }
        E::Hash128 => {
            let b = bytes_value(v, place)?;
            let a: [u8; 16] = b
                .try_into()
                .map_err(|_| PyValueError::new_err(format!("{place}: a hash128 is 16 bytes")))?;
            Value::Hash128(a)
        }
        _ => return Ok(Held::Bytes(bytes_value(v, place)?, enc)),
    }))
}

/// Big-endian bytes of the decimal number whose digits (most significant first) are `digits`.
fn digits_to_be(digits: &[u8]) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::new(); // little-endian while building
    for &d in digits {
        let mut carry = u32::from(d);
        for byte in out.iter_mut() {
            let x = u32::from(*byte) * 10 + carry;
            *byte = (x & 0xff) as u8;
            carry = x >> 8;
        }
        while carry > 0 {
            out.push((carry & 0xff) as u8);
            carry >>= 8;
        }
    }
    out.reverse();
    out
}

/// A native-map field as a Python value; `blob` reads out-of-band payloads.
pub fn value_to_py(
    py: Python<'_>,
    v: &Value<'_>,
    enc: Encoding,
    blob: &mut dyn FnMut(&prollystore::format::Address, &mut Vec<u8>) -> PyResult<()>,
) -> PyResult<Py<PyAny>> {
    let obj = |x: Bound<'_, PyAny>| x.unbind();
    Ok(match v {
        Value::Int8(x) => obj(x.into_pyobject(py)?.into_any()),
        Value::Uint8(x) => obj(x.into_pyobject(py)?.into_any()),
        Value::Int16(x) => obj(x.into_pyobject(py)?.into_any()),
        Value::Uint16(x) => obj(x.into_pyobject(py)?.into_any()),
        Value::Int32(x) => obj(x.into_pyobject(py)?.into_any()),
        Value::Uint32(x) => obj(x.into_pyobject(py)?.into_any()),
        Value::Int64(x) => obj(x.into_pyobject(py)?.into_any()),
        Value::Uint64(x) | Value::Bit64(x) | Value::Set(x) => obj(x.into_pyobject(py)?.into_any()),
        Value::Float32(x) => obj(f64::from(*x).into_pyobject(py)?.into_any()),
        Value::Float64(x) => obj(x.into_pyobject(py)?.into_any()),
        Value::Year(x) | Value::Enum(x) => obj(x.into_pyobject(py)?.into_any()),
        Value::Hash128(b) => obj(PyBytes::new(py, b).into_any()),
        Value::Cell(b) => obj(PyBytes::new(py, b).into_any()),
        Value::Date(d) => match py_date(py, *d)? {
            Some(x) => x,
            None => obj(
                PyString::new(py, &format!("{:04}-{:02}-{:02}", d.year, d.month, d.day)).into_any(),
            ),
        },
        Value::Time(us) => py_timedelta(py, *us)?,
        Value::Datetime(us) => match py_datetime(py, *us, false)? {
            Some(x) => x,
            None => {
                obj(PyString::new(py, &prollystore::format::tuple::datetime_text(*us)).into_any())
            }
        },
        Value::Decimal(d) => classes(py)?.decimal.call1(py, (d.to_string(),))?,
        Value::String(s) => obj(PyString::new(py, s).into_any()),
        Value::Json(b) => obj(PyString::new(py, &String::from_utf8_lossy(b)).into_any()),
        Value::Bytes(b) | Value::Geometry(b) | Value::Extended(b) => {
            obj(PyBytes::new(py, b).into_any())
        }
        Value::Address(a) => obj(PyString::new(py, &a.to_string()).into_any()),
        Value::Adaptive(a) => {
            let mut buf = Vec::new();
            let payload: &[u8] = match a {
                Adaptive::Inline(p) => p,
                Adaptive::OutOfBand { address, .. } => {
                    blob(address, &mut buf)?;
                    &buf
                }
            };
            match enc {
                Encoding::StringAdaptive | Encoding::JsonAdaptive => obj(PyString::new(
                    py,
                    std::str::from_utf8(payload)
                        .map_err(|_| PyValueError::new_err("stored text is not UTF-8"))?,
                )
                .into_any()),
                _ => obj(PyBytes::new(py, payload).into_any()),
            }
        }
    })
}
