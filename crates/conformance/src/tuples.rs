//! Conformance categories `tuples` and `order`: the tuple codec and comparator against Dolt.

use std::path::Path;

use prollystore_format::tuple::{
    datetime_text, time_text, year_from_raw, Adaptive, BlobError, BlobStore, Date, Decimal,
    DecimalForm, Tuple, TupleBuilder, TupleDesc, Type, Value,
};
use prollystore_format::{Address, Encoding};
use serde_json::{json, Value as Json};

use crate::category::Category;
use crate::json::{read_jsonl, truncate, unhex};

/// Category `tuples`: every line of `tuples.jsonl` encodes to its bytes and decodes to its fields.
pub fn check_tuples(dir: &Path) -> Category {
    let path = dir.join("tuples.jsonl");
    if !path.is_file() {
        return Category::missing("tuples", format!("{} not found", path.display()));
    }
    let mut cat = Category::new("tuples");
    match read_jsonl(&path) {
        Err(e) => cat.fail(e),
        Ok(lines) => {
            for (n, line) in lines.iter().enumerate() {
                cat.record(check_tuple_line(line).map_err(|e| {
                    let note = line.get("note").and_then(Json::as_str).unwrap_or("");
                    format!("tuples.jsonl:{} ({}): {e}", n + 1, truncate(note, 80))
                }));
            }
        }
    }
    cat
}

/// Category `order`: every line of `tuple_order.jsonl` compares as Dolt compared it.
pub fn check_order(dir: &Path) -> Category {
    let path = dir.join("tuple_order.jsonl");
    if !path.is_file() {
        return Category::missing("order", format!("{} not found", path.display()));
    }
    let mut cat = Category::new("order");
    match read_jsonl(&path) {
        Err(e) => cat.fail(e),
        Ok(lines) => {
            for (n, line) in lines.iter().enumerate() {
                cat.record(check_order_line(line).map_err(|e| {
                    let note = line.get("note").and_then(Json::as_str).unwrap_or("");
                    format!("tuple_order.jsonl:{} ({}): {e}", n + 1, truncate(note, 80))
                }));
            }
        }
    }
    cat
}

fn check_order_line(line: &Json) -> Result<(), String> {
    let desc = parse_desc(line.get("desc"))?;
    let a = unhex(str_of(line.get("a"), "a")?)?;
    let b = unhex(str_of(line.get("b"), "b")?)?;
    let want = line
        .get("cmp")
        .and_then(Json::as_i64)
        .ok_or("missing cmp")?;
    for (name, t) in [("a", &a), ("b", &b)] {
        desc.validate(t)
            .map_err(|e| format!("tuple {name} does not validate: {e}"))?;
    }
    let got = desc.compare(&a, &b) as i64;
    if got != want {
        return Err(format!("compare gave {got}, Dolt gave {want}"));
    }
    Ok(())
}

fn check_tuple_line(line: &Json) -> Result<(), String> {
    let desc = parse_desc(line.get("desc"))?;
    let fields = line
        .get("fields")
        .and_then(Json::as_array)
        .ok_or("missing fields")?;
    let want = unhex(str_of(line.get("hex"), "hex")?)?;
    let note = line.get("note").and_then(Json::as_str).unwrap_or("");
    if fields.len() != desc.len() {
        return Err(format!("{} fields for {} types", fields.len(), desc.len()));
    }

    // Decode: validate, then every getter result must match the recorded field.
    desc.validate(&want).map_err(|e| format!("validate: {e}"))?;
    let tuple = Tuple::new(&want).map_err(|e| e.to_string())?;
    for (i, (ty, expected)) in desc.types().iter().zip(fields).enumerate() {
        let got = desc
            .value(tuple, i)
            .map_err(|e| format!("decode field {i}: {e}"))?;
        let got = render(ty.enc, got);
        if !same_field(ty.enc, &got, expected) {
            return Err(format!(
                "field {i} ({}) decoded as {got}, expected {expected}",
                ty.enc
            ));
        }
    }

    // Encode: build from the recorded fields.
    let owned: Vec<Owned> = desc
        .types()
        .iter()
        .zip(fields)
        .enumerate()
        .map(|(i, (ty, f))| parse_field(ty.enc, f).map_err(|e| format!("field {i}: {e}")))
        .collect::<Result<_, _>>()?;
    // Lines where Dolt's builder moved an inline value out of band: the payload itself is not
    // recorded, so we put a stand-in payload of the recorded length and let the store answer
    // with the recorded address. This checks the builder's placement decision and the encoding,
    // not the blob bytes (blob trees are another layer's job).
    let moved_by_builder = note.contains("moved it out of band");
    let mut store = ExpectedBlobs { blobs: Vec::new() };
    let mut builder = TupleBuilder::new(desc.clone());
    let mut standins: Vec<Vec<u8>> = Vec::new();
    for o in &owned {
        if let Owned::OutOfBand(len, addr) = o {
            store.blobs.push((*len, *addr));
            if moved_by_builder {
                standins.push(vec![b'x'; *len as usize]);
                continue;
            }
        }
        standins.push(Vec::new());
    }
    for (i, o) in owned.iter().enumerate() {
        match o {
            Owned::OutOfBand(..) if moved_by_builder => {
                let payload = standins.get(i).map(Vec::as_slice).unwrap_or(&[]);
                builder.put_adaptive_inline(i, payload)
            }
            _ => builder.put(i, o.as_value()),
        }
        .map_err(|e| format!("put field {i}: {e}"))?;
    }
    let built = builder
        .build_with(&mut store)
        .map_err(|e| format!("build: {e}"))?;
    if built.as_bytes() != want.as_slice() {
        return Err(format!(
            "built {} expected {}",
            truncate(&hex::encode(built.as_bytes()), 120),
            truncate(&hex::encode(&want), 120)
        ));
    }
    Ok(())
}

/// Answers blob writes with the address the vectors recorded for a payload of that length.
struct ExpectedBlobs {
    blobs: Vec<(u64, Address)>,
}

impl BlobStore for ExpectedBlobs {
    fn write_blob(&mut self, payload: &[u8]) -> Result<Address, BlobError> {
        self.blobs
            .iter()
            .find(|(len, _)| *len == payload.len() as u64)
            .map(|(_, a)| *a)
            .ok_or_else(|| format!("no recorded blob of {} bytes", payload.len()).into())
    }
}

fn str_of<'a>(v: Option<&'a Json>, what: &str) -> Result<&'a str, String> {
    v.and_then(Json::as_str)
        .ok_or_else(|| format!("missing {what}"))
}

fn parse_desc(v: Option<&Json>) -> Result<TupleDesc, String> {
    let arr = v.and_then(Json::as_array).ok_or("missing desc")?;
    let types = arr
        .iter()
        .map(|t| {
            let name = str_of(t.get("enc"), "enc")?;
            let enc =
                Encoding::from_name(name).ok_or_else(|| format!("unknown encoding {name}"))?;
            let code = t.get("code").and_then(Json::as_u64).ok_or("missing code")?;
            if u64::from(enc.code()) != code {
                return Err(format!("{name} has code {code}, expected {}", enc.code()));
            }
            let nullable = t
                .get("nullable")
                .and_then(Json::as_bool)
                .ok_or("missing nullable")?;
            Ok(Type { enc, nullable })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(TupleDesc::new(types))
}

/// A field value parsed from JSON, owning its bytes.
enum Owned {
    Null,
    Scalar(Value<'static>),
    Str(String),
    Bytes(Encoding, Vec<u8>),
    Decimal(DecimalForm, i32, bool, Vec<u8>),
    OutOfBand(u64, Address),
}

impl Owned {
    fn as_value(&self) -> Option<Value<'_>> {
        Some(match self {
            Owned::Null => return None,
            Owned::Scalar(v) => *v,
            Owned::Str(s) => Value::String(s),
            Owned::Bytes(enc, b) => match enc {
                Encoding::Bytes => Value::Bytes(b),
                Encoding::Json => Value::Json(b),
                Encoding::Geometry => Value::Geometry(b),
                Encoding::Extended => Value::Extended(b),
                _ => Value::Adaptive(Adaptive::Inline(b)),
            },
            Owned::Decimal(form, exp, neg, c) => Value::Decimal(match form {
                DecimalForm::Finite => Decimal::finite(*exp, *neg, c),
                DecimalForm::NaN => Decimal::NAN,
                DecimalForm::PosInfinity => Decimal::POS_INFINITY,
                DecimalForm::NegInfinity => Decimal::NEG_INFINITY,
            }),
            Owned::OutOfBand(len, address) => Value::Adaptive(Adaptive::OutOfBand {
                len: *len,
                address: *address,
            }),
        })
    }
}

fn num<T: std::str::FromStr>(f: &Json) -> Result<T, String> {
    let s = f
        .as_str()
        .ok_or_else(|| format!("expected a decimal string, got {f}"))?;
    s.parse().map_err(|_| format!("bad number {s:?}"))
}

fn raw<T: std::str::FromStr>(f: &Json) -> Result<T, String> {
    num(f.get("raw").ok_or("missing raw")?)
}

fn bits(f: &Json) -> Result<u64, String> {
    let s = str_of(f.get("bits"), "bits")?;
    u64::from_str_radix(s.trim_start_matches("0x"), 16).map_err(|e| format!("bits {s}: {e}"))
}

/// Big-endian bytes of a non-negative decimal integer string.
fn decimal_to_be(digits: &str) -> Result<Vec<u8>, String> {
    let mut out: Vec<u8> = Vec::new(); // big-endian
    for c in digits.bytes() {
        let d = c
            .checked_sub(b'0')
            .filter(|d| *d <= 9)
            .ok_or("bad coefficient digit")?;
        let mut carry = u32::from(d);
        for b in out.iter_mut().rev() {
            let v = u32::from(*b) * 10 + carry;
            *b = v as u8;
            carry = v >> 8;
        }
        while carry > 0 {
            out.insert(0, carry as u8);
            carry >>= 8;
        }
    }
    Ok(out)
}

fn parse_field(enc: Encoding, f: &Json) -> Result<Owned, String> {
    use Encoding as E;
    if f.is_null() {
        return Ok(Owned::Null);
    }
    if let Some(oob) = f.get("out_of_band") {
        let len: u64 = num(oob.get("length").ok_or("missing length")?)?;
        let addr =
            Address::from_hex(str_of(oob.get("addr"), "addr")?).map_err(|e| e.to_string())?;
        return Ok(Owned::OutOfBand(len, addr));
    }
    let hexed = || -> Result<Vec<u8>, String> { unhex(f.as_str().ok_or("expected hex")?) };
    let text = || -> Result<Vec<u8>, String> {
        Ok(f.as_str().ok_or("expected a string")?.as_bytes().to_vec())
    };
    Ok(Owned::Scalar(match enc {
        E::Int8 => Value::Int8(num(f)?),
        E::Uint8 => Value::Uint8(num(f)?),
        E::Int16 => Value::Int16(num(f)?),
        E::Uint16 => Value::Uint16(num(f)?),
        E::Int32 => Value::Int32(num(f)?),
        E::Uint32 => Value::Uint32(num(f)?),
        E::Int64 => Value::Int64(num(f)?),
        E::Uint64 => Value::Uint64(num(f)?),
        E::Bit64 => Value::Bit64(num(f)?),
        E::Enum => Value::Enum(num(f)?),
        E::Set => Value::Set(num(f)?),
        E::Float32 => Value::Float32(f32::from_bits(bits(f)? as u32)),
        E::Float64 => Value::Float64(f64::from_bits(bits(f)?)),
        E::Year => Value::Year(year_from_raw(raw(f)?)),
        E::Date => Value::Date(Date::from_raw(raw(f)?)),
        E::Time => Value::Time(raw(f)?),
        E::Datetime => Value::Datetime(raw(f)?),
        E::Hash128 => Value::Hash128(hexed()?.try_into().map_err(|_| "hash128 not 16 bytes")?),
        E::Cell => Value::Cell(hexed()?.try_into().map_err(|_| "cell not 17 bytes")?),
        e if e.is_address() => {
            Value::Address(Address::from_slice(&hexed()?).ok_or("address not 20 bytes")?)
        }
        E::String => {
            return Ok(Owned::Str(
                f.as_str().ok_or("expected a string")?.to_string(),
            ))
        }
        E::Json | E::StringAdaptive | E::JsonAdaptive => return Ok(Owned::Bytes(enc, text()?)),
        E::Bytes
        | E::Geometry
        | E::Extended
        | E::BytesAdaptive
        | E::GeomAdaptive
        | E::ExtendedAdaptive => return Ok(Owned::Bytes(enc, hexed()?)),
        E::Decimal => {
            let form = match str_of(f.get("form"), "form")? {
                "finite" => DecimalForm::Finite,
                "nan" => DecimalForm::NaN,
                "inf" if f.get("neg") == Some(&Json::Bool(true)) => DecimalForm::NegInfinity,
                "inf" => DecimalForm::PosInfinity,
                other => return Err(format!("unknown decimal form {other}")),
            };
            if form != DecimalForm::Finite {
                return Ok(Owned::Decimal(form, 0, false, Vec::new()));
            }
            let exp: i32 = num(f.get("exp").ok_or("missing exp")?)?;
            let neg = f.get("neg").and_then(Json::as_bool).ok_or("missing neg")?;
            let coeff = decimal_to_be(str_of(f.get("coeff"), "coeff")?)?;
            return Ok(Owned::Decimal(form, exp, neg, coeff));
        }
        other => return Err(format!("unsupported encoding {other}")),
    }))
}

/// Our decoded value in the vectors' JSON representation.
fn render(enc: Encoding, v: Option<Value<'_>>) -> Json {
    let Some(v) = v else { return Json::Null };
    let text_or_hex = |b: &[u8]| match enc {
        Encoding::Json | Encoding::StringAdaptive | Encoding::JsonAdaptive => {
            match std::str::from_utf8(b) {
                Ok(s) => json!(s),
                Err(_) => json!({ "invalid_utf8_hex": hex::encode(b) }),
            }
        }
        _ => json!(hex::encode(b)),
    };
    match v {
        Value::Int8(x) => json!(x.to_string()),
        Value::Uint8(x) => json!(x.to_string()),
        Value::Int16(x) => json!(x.to_string()),
        Value::Uint16(x) => json!(x.to_string()),
        Value::Int32(x) => json!(x.to_string()),
        Value::Uint32(x) => json!(x.to_string()),
        Value::Int64(x) => json!(x.to_string()),
        Value::Uint64(x) | Value::Bit64(x) | Value::Set(x) => json!(x.to_string()),
        Value::Enum(x) => json!(x.to_string()),
        Value::Float32(x) => json!({ "bits": format!("0x{:08x}", x.to_bits()) }),
        Value::Float64(x) => json!({ "bits": format!("0x{:016x}", x.to_bits()) }),
        Value::Hash128(x) => json!(hex::encode(x)),
        Value::Cell(x) => json!(hex::encode(x)),
        Value::Address(a) => json!(a.to_hex()),
        Value::Year(y) => {
            let raw = prollystore_format::tuple::year_to_raw(y).map_or(-1, i64::from);
            json!({ "text": format!("{y:04}"), "raw": raw.to_string() })
        }
        Value::Date(d) => json!({ "text": d.to_string(), "raw": d.to_raw().to_string() }),
        Value::Time(t) => json!({ "text": time_text(t), "raw": t.to_string() }),
        Value::Datetime(t) => json!({ "text": datetime_text(t), "raw": t.to_string() }),
        Value::String(s) => json!(s),
        Value::Bytes(b) | Value::Json(b) | Value::Geometry(b) | Value::Extended(b) => {
            text_or_hex(b)
        }
        Value::Adaptive(Adaptive::Inline(b)) => text_or_hex(b),
        Value::Adaptive(Adaptive::OutOfBand { len, address }) => {
            json!({ "out_of_band": { "length": len.to_string(), "addr": address.to_hex() } })
        }
        Value::Decimal(d) => match d.form() {
            DecimalForm::Finite => json!({
                "text": d.to_string(),
                "form": "finite",
                "coeff": d.coefficient_digits(),
                "exp": d.exponent().to_string(),
                "neg": d.is_negative(),
            }),
            form => json!({
                "text": d.to_string(),
                "form": if form == DecimalForm::NaN { "nan" } else { "inf" },
                "coeff": "",
                "exp": "",
                "neg": d.is_negative(),
            }),
        },
    }
}

/// Floats compare by bit pattern only (`repr` is a display aid); everything else exactly.
fn same_field(enc: Encoding, got: &Json, expected: &Json) -> bool {
    match enc {
        Encoding::Float32 | Encoding::Float64 if !expected.is_null() => {
            got.get("bits") == expected.get("bits")
        }
        _ => got == expected,
    }
}
