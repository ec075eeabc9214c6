//! JSON documents in the order Dolt sorts them (`ORDER BY` a JSON column, and so the output
//! order of keyless tables with JSON columns).
//!
//! Dolt follows MySQL's JSON comparison rules in outline: values of different types order by
//! type, `null < number < string < object < array < boolean`; values of one type by value:
//!
//! * numbers as IEEE doubles (Dolt parses every JSON number into a double, so
//!   `9007199254740993` equals `9007199254740992` and `-0` equals `0`);
//! * strings by the bytes of their unescaped UTF-8 text;
//! * arrays element by element, a proper prefix first;
//! * objects by their keys in byte order: at the first position where the sorted key lists
//!   differ, the object with the smaller key is the *greater* one; under equal keys the values
//!   decide; when one key list is a prefix of the other, the shorter object is smaller;
//! * `false < true`.
//!
//! These rules were checked against `dolt sql` (`crates/format/tests/json_order_dolt.rs`).
//! The documents come from stored rows, so they are untrusted: malformed text is an error from
//! [`try_compare`], and [`compare`] orders it after every well-formed document.

use std::cmp::Ordering;

pub use crate::json::JsonError;
use crate::json::{parse, Value};

/// Nesting deeper than this is refused rather than risking the stack.
pub const MAX_DEPTH: usize = 1000;

/// Orders two JSON documents as Dolt does; total over arbitrary bytes: malformed documents
/// sort after all well-formed ones, and among themselves by their bytes.
pub fn compare(a: &[u8], b: &[u8]) -> Ordering {
    match (parse(a, MAX_DEPTH), parse(b, MAX_DEPTH)) {
        (Ok(x), Ok(y)) => x.cmp_dolt(&y),
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        (Err(_), Err(_)) => a.cmp(b),
    }
}

/// Orders two JSON documents as Dolt does, or says which one is malformed and where.
pub fn try_compare(a: &[u8], b: &[u8]) -> Result<Ordering, JsonError> {
    Ok(parse(a, MAX_DEPTH)?.cmp_dolt(&parse(b, MAX_DEPTH)?))
}

/// A key of document `doc` whose byte order is Dolt's order of the documents ([`compare`]):
/// for engines that sort and group by bytes (DataFusion's `ORDER BY` of a JSON column in
/// `prollystore-query`). Equal documents under Dolt's order (`1` and `1.0`, member order,
/// escapes) have equal keys; a malformed document's key sorts after every well-formed one's.
pub fn sort_key(doc: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(doc.len() + 8);
    match parse(doc, MAX_DEPTH) {
        Ok(v) => v.write_key(&mut key),
        Err(_) => {
            key.push(MALFORMED);
            key.extend_from_slice(doc);
        }
    }
    key
}

/// The first byte of a malformed document's [`sort_key`]: above every kind's.
const MALFORMED: u8 = 0xFF;

impl Value {
    /// Appends this value's [`sort_key`]: its kind's rank, then a prefix-free encoding of
    /// its value in which bytes compare as [`Value::cmp_dolt`] does.
    fn write_key(&self, out: &mut Vec<u8>) {
        out.push(self.rank() + 1);
        match self {
            Value::Null => {}
            Value::Number(x) => {
                // -0 is 0; negative doubles' bits are inverted, positive ones' sign bit set.
                let bits = if *x == 0.0 { 0 } else { x.to_bits() };
                let ordered = if bits >> 63 == 1 {
                    !bits
                } else {
                    bits | 1 << 63
                };
                out.extend_from_slice(&ordered.to_be_bytes());
            }
            Value::String(s) => write_key_bytes(s, 0, out),
            Value::Bool(b) => out.push(u8::from(*b)),
            // Elements one after another (each begins with its rank, at least 1); 0 ends the
            // array, so a prefix comes first.
            Value::Array(items) => {
                for item in items {
                    item.write_key(out);
                }
                out.push(0);
            }
            // Each member: 1, its key with every byte inverted (the smaller key ranks
            // higher), its value; 0 ends the object.
            Value::Object(members) => {
                for (k, v) in members {
                    out.push(1);
                    write_key_bytes(k, 0xFF, out);
                    v.write_key(out);
                }
                out.push(0);
            }
        }
    }

    /// Position of the type in Dolt's type precedence.
    fn rank(&self) -> u8 {
        match self {
            Value::Null => 0,
            Value::Number(_) => 1,
            Value::String(_) => 2,
            Value::Object(_) => 3,
            Value::Array(_) => 4,
            Value::Bool(_) => 5,
        }
    }

    fn cmp_dolt(&self, other: &Value) -> Ordering {
        match (self, other) {
            (Value::Null, Value::Null) => Ordering::Equal,
            (Value::Number(a), Value::Number(b)) => a.partial_cmp(b).unwrap_or(Ordering::Equal),
            (Value::String(a), Value::String(b)) => a.cmp(b),
            (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
            (Value::Array(a), Value::Array(b)) => {
                for (x, y) in a.iter().zip(b) {
                    let o = x.cmp_dolt(y);
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                a.len().cmp(&b.len())
            }
            (Value::Object(a), Value::Object(b)) => {
                for ((ka, va), (kb, vb)) in a.iter().zip(b) {
                    // The object holding the smaller key (absent from the other) is greater.
                    let o = kb.cmp(ka).then_with(|| va.cmp_dolt(vb));
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                a.len().cmp(&b.len())
            }
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

/// Appends `bytes` prefix-free, each byte XORed with `flip` (0: byte order; 0xFF: reversed):
/// a 0 byte written as 0, 0xFF and the end as 0, 1, so a prefix sorts first.
fn write_key_bytes(bytes: &[u8], flip: u8, out: &mut Vec<u8>) {
    for &b in bytes {
        if b == 0 {
            out.extend_from_slice(&[flip, 0xFF ^ flip]);
        } else {
            out.push(b ^ flip);
        }
    }
    out.extend_from_slice(&[flip, 1 ^ flip]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;
    use Ordering::*;

    /// A JSON value as the model sees it: integers, strings over a small alphabet, objects as
    /// sorted maps.
    #[derive(Clone, Debug)]
    enum Model {
        Null,
        Int(i32),
        Str(String),
        Obj(BTreeMap<String, Model>),
        Arr(Vec<Model>),
        Bool(bool),
    }

    fn model_cmp(a: &Model, b: &Model) -> Ordering {
        fn rank(m: &Model) -> u8 {
            match m {
                Model::Null => 0,
                Model::Int(_) => 1,
                Model::Str(_) => 2,
                Model::Obj(_) => 3,
                Model::Arr(_) => 4,
                Model::Bool(_) => 5,
            }
        }
        match (a, b) {
            (Model::Int(x), Model::Int(y)) => x.cmp(y),
            (Model::Str(x), Model::Str(y)) => x.as_bytes().cmp(y.as_bytes()),
            (Model::Bool(x), Model::Bool(y)) => x.cmp(y),
            (Model::Arr(x), Model::Arr(y)) => x
                .iter()
                .zip(y)
                .map(|(p, q)| model_cmp(p, q))
                .find(|o| *o != Equal)
                .unwrap_or(x.len().cmp(&y.len())),
            (Model::Obj(x), Model::Obj(y)) => x
                .iter()
                .zip(y)
                .map(|((kx, vx), (ky, vy))| ky.cmp(kx).then_with(|| model_cmp(vx, vy)))
                .find(|o| *o != Equal)
                .unwrap_or(x.len().cmp(&y.len())),
            _ => rank(a).cmp(&rank(b)),
        }
    }

    /// Writes `m` as JSON text, choosing among equivalent spellings with `style`.
    fn render(m: &Model, style: u32, out: &mut String) {
        let space = if style & 1 == 1 { " \n" } else { "" };
        match m {
            Model::Null => out.push_str("null"),
            Model::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Model::Int(i) => match style % 3 {
                0 => out.push_str(&i.to_string()),
                1 => out.push_str(&format!("{i}.0")),
                _ => out.push_str(&format!("{i}e0")),
            },
            Model::Str(s) => {
                out.push('"');
                for c in s.chars() {
                    if style & 2 == 2 {
                        let mut units = [0u16; 2];
                        for u in c.encode_utf16(&mut units) {
                            out.push_str(&format!("\\u{u:04x}"));
                        }
                    } else {
                        out.push(c);
                    }
                }
                out.push('"');
            }
            Model::Arr(items) => {
                out.push('[');
                for (n, v) in items.iter().enumerate() {
                    if n > 0 {
                        out.push(',');
                    }
                    out.push_str(space);
                    render(v, style.rotate_left(3), out);
                }
                out.push_str(space);
                out.push(']');
            }
            Model::Obj(members) => {
                out.push('{');
                // Members in reverse key order: the order written must not matter.
                for (n, (k, v)) in members.iter().rev().enumerate() {
                    if n > 0 {
                        out.push(',');
                    }
                    render(&Model::Str(k.clone()), style, out);
                    out.push_str(space);
                    out.push(':');
                    render(v, style.rotate_left(5), out);
                }
                out.push('}');
            }
        }
    }

    fn model() -> impl Strategy<Value = Model> {
        let leaf = prop_oneof![
            Just(Model::Null),
            any::<bool>().prop_map(Model::Bool),
            (-3i32..3).prop_map(Model::Int),
            "[ab\u{e9}\u{1F600}]{0,3}".prop_map(Model::Str),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Model::Arr),
                prop::collection::btree_map("[ab]{0,2}", inner, 0..4).prop_map(Model::Obj),
            ]
        })
    }

    proptest! {
        #[test]
        fn agrees_with_the_model(a in model(), b in model(), sa in any::<u32>(), sb in any::<u32>()) {
            let (mut ta, mut tb) = (String::new(), String::new());
            render(&a, sa, &mut ta);
            render(&b, sb, &mut tb);
            prop_assert_eq!(try_compare(ta.as_bytes(), tb.as_bytes()).unwrap(), model_cmp(&a, &b), "{} vs {}", ta, tb);
            // The sort keys' byte order is the same order.
            prop_assert_eq!(sort_key(ta.as_bytes()).cmp(&sort_key(tb.as_bytes())), model_cmp(&a, &b), "keys of {} vs {}", ta, tb);
        }
    }

    #[test]
    #[cfg_attr(miri, ignore)] // 1,156 pairs parsed: no unsafe here; slow under Miri
    fn sort_keys_order_as_compare() {
        let docs = [
            "null",
            "-1e308",
            "-0.5",
            "-0",
            "0",
            "1",
            "1.0",
            "1e2",
            "\"\"",
            "\"\\u0000\"",
            "\"\\u0000\\u0000\"",
            "\"\\u0001\"",
            "\"a\"",
            "\"a\\u0000\"",
            "\"ab\"",
            "\"\\u00ff\"",
            "{}",
            r#"{"b":0}"#,
            r#"{"a":0}"#,
            r#"{"a":1}"#,
            r#"{"a":1,"c":1}"#,
            r#"{"a\u0000":1}"#,
            r#"{"":[]}"#,
            "[]",
            "[null]",
            "[0]",
            "[0,0]",
            "[[]]",
            "[{}]",
            "false",
            "true",
            "{",
            "[1,",
            "nul",
        ];
        for a in docs {
            for b in docs {
                assert_eq!(
                    sort_key(a.as_bytes()).cmp(&sort_key(b.as_bytes())),
                    compare(a.as_bytes(), b.as_bytes()),
                    "{a} vs {b}"
                );
            }
        }
    }

    fn cmp(a: &str, b: &str) -> Ordering {
        try_compare(a.as_bytes(), b.as_bytes()).unwrap()
    }

    #[test]
    fn types_order_by_precedence() {
        let ascending = [
            "null", "-1e308", "0", "\"\"", "\"a\"", "{}", "[]", "false", "true",
        ];
        for pair in ascending.windows(2) {
            assert_eq!(cmp(pair[0], pair[1]), Less, "{pair:?}");
            assert_eq!(cmp(pair[1], pair[0]), Greater, "{pair:?}");
        }
    }

    #[test]
    fn values_within_a_type() {
        assert_eq!(cmp("9007199254740993", "9007199254740992"), Equal);
        assert_eq!(cmp("-0.0", "0"), Equal);
        assert_eq!(cmp("1e2", "100.0"), Equal);
        assert_eq!(cmp("\"\\u00e9\"", "\"é\""), Equal);
        assert_eq!(cmp("\"\\ud83d\\ude00\"", "\"😀\""), Equal);
        assert_eq!(cmp("\"A\"", "\"a\""), Less);
        assert_eq!(cmp("[1, 2]", "[1,2,3]"), Less);
        assert_eq!(cmp("[1, \"a\"]", "[2]"), Less);
        assert_eq!(cmp(r#"{"c":1}"#, r#"{"b":0}"#), Less);
        assert_eq!(cmp(r#"{"a":1}"#, r#"{"a":1,"c":1}"#), Less);
        assert_eq!(cmp(r#"{"a":1,"c":1}"#, r#"{"a":1,"b":1}"#), Less);
        assert_eq!(cmp(r#"{"b":1,"aa":0}"#, r#"{"aa":1, "b":0}"#), Less);
        assert_eq!(cmp(r#"{"a":1,"a":2}"#, r#"{"a":2}"#), Equal);
    }

    #[test]
    fn malformed_documents_are_errors_and_sort_last() {
        for bad in [
            "",
            "[",
            "{\"a\"}",
            "01",
            "1.",
            "tru",
            "\"\\x\"",
            "\"\u{1}\"",
            "[1,]",
            "1 2",
            "-",
            "\"\\u12\"",
        ] {
            let err = try_compare(bad.as_bytes(), b"1").unwrap_err();
            assert!(err.offset <= bad.len(), "{bad:?}: {err}");
            assert_eq!(compare(bad.as_bytes(), b"true"), Greater, "{bad:?}");
        }
        let deep = "[".repeat(MAX_DEPTH + 2) + &"]".repeat(MAX_DEPTH + 2);
        assert!(try_compare(deep.as_bytes(), b"1").is_err());
    }
}
