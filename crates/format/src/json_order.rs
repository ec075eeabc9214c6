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

use thiserror::Error;

/// Nesting deeper than this is refused rather than risking the stack.
pub const MAX_DEPTH: usize = 1000;

/// Why a document is not well-formed JSON.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("malformed JSON at byte {offset}: {what}")]
pub struct JsonError {
    /// Byte offset of the problem in the document.
    pub offset: usize,
    /// What was wrong there.
    pub what: &'static str,
}

/// Orders two JSON documents as Dolt does; total over arbitrary bytes: malformed documents
/// sort after all well-formed ones, and among themselves by their bytes.
pub fn compare(a: &[u8], b: &[u8]) -> Ordering {
    match (parse(a), parse(b)) {
        (Ok(x), Ok(y)) => x.cmp_dolt(&y),
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        (Err(_), Err(_)) => a.cmp(b),
    }
}

/// Orders two JSON documents as Dolt does, or says which one is malformed and where.
pub fn try_compare(a: &[u8], b: &[u8]) -> Result<Ordering, JsonError> {
    Ok(parse(a)?.cmp_dolt(&parse(b)?))
}

/// A parsed JSON value, reduced to what ordering needs.
#[derive(Debug)]
enum Value {
    Null,
    Number(f64),
    String(Vec<u8>),
    /// Members sorted by key (bytes), one per key (the last one written wins, as in Dolt).
    Object(Vec<(Vec<u8>, Value)>),
    Array(Vec<Value>),
    Bool(bool),
}

impl Value {
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

/// Parses one whole document.
fn parse(text: &[u8]) -> Result<Value, JsonError> {
    let mut p = Parser { text, at: 0 };
    let v = p.value(0)?;
    p.skip_space();
    if p.at != text.len() {
        return Err(p.error("text after the value"));
    }
    Ok(v)
}

struct Parser<'a> {
    text: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn error(&self, what: &'static str) -> JsonError {
        JsonError {
            offset: self.at,
            what,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8, what: &'static str) -> Result<(), JsonError> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(what))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, JsonError> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        self.skip_space();
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b't') => self.literal(b"true", Value::Bool(true)),
            Some(b'f') => self.literal(b"false", Value::Bool(false)),
            Some(b'n') => self.literal(b"null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error("expected a value")),
            None => Err(self.error("expected a value, found the end")),
        }
    }

    fn literal(&mut self, word: &[u8], v: Value) -> Result<Value, JsonError> {
        if self.text[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(v)
        } else {
            Err(self.error("unknown literal"))
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, JsonError> {
        self.at += 1;
        let mut members: Vec<(Vec<u8>, Value)> = Vec::new();
        self.skip_space();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.skip_space();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected an object key"));
            }
            let key = self.string()?;
            self.skip_space();
            self.expect(b':', "expected ':' after an object key")?;
            let v = self.value(depth + 1)?;
            members.push((key, v));
            self.skip_space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    break;
                }
                _ => return Err(self.error("expected ',' or '}' in an object")),
            }
        }
        // Stable sort, then keep the last member of each key.
        members.sort_by(|a, b| a.0.cmp(&b.0));
        let mut unique: Vec<(Vec<u8>, Value)> = Vec::with_capacity(members.len());
        for m in members {
            match unique.last_mut() {
                Some(last) if last.0 == m.0 => *last = m,
                _ => unique.push(m),
            }
        }
        Ok(Value::Object(unique))
    }

    fn array(&mut self, depth: usize) -> Result<Value, JsonError> {
        self.at += 1;
        let mut items = Vec::new();
        self.skip_space();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            self.skip_space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.error("expected ',' or ']' in an array")),
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        self.at - start
    }

    fn number(&mut self) -> Result<Value, JsonError> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.error("expected a digit")),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return Err(self.error("expected a digit after '.'"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if self.digits() == 0 {
                return Err(self.error("expected a digit in the exponent"));
            }
        }
        // The grammar above admits only ASCII digits, signs, '.', 'e' and 'E'.
        let text = std::str::from_utf8(&self.text[start..self.at])
            .map_err(|_| self.error("number is not ASCII"))?;
        text.parse::<f64>()
            .map(Value::Number)
            .map_err(|_| self.error("number out of range"))
    }

    /// A string literal (the cursor is on its opening quote), unescaped to UTF-8.
    fn string(&mut self) -> Result<Vec<u8>, JsonError> {
        self.at += 1;
        let mut out = Vec::new();
        loop {
            let Some(b) = self.peek() else {
                return Err(self.error("unterminated string"));
            };
            self.at += 1;
            match b {
                b'"' => return Ok(out),
                b'\\' => self.escape(&mut out)?,
                0..=0x1F => {
                    self.at -= 1;
                    return Err(self.error("control character in a string"));
                }
                _ => out.push(b),
            }
        }
    }

    fn escape(&mut self, out: &mut Vec<u8>) -> Result<(), JsonError> {
        let Some(b) = self.peek() else {
            return Err(self.error("unterminated escape"));
        };
        self.at += 1;
        let simple = match b {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0C,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let hi = self.hex4()?;
                let cp =
                    if (0xD800..0xDC00).contains(&hi) && self.text[self.at..].starts_with(b"\\u") {
                        let save = self.at;
                        self.at += 2;
                        let lo = self.hex4()?;
                        if (0xDC00..0xE000).contains(&lo) {
                            0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                        } else {
                            // Not a pair: the lone high surrogate becomes U+FFFD, and the
                            // second escape is read on its own.
                            self.at = save;
                            0xFFFD
                        }
                    } else {
                        hi
                    };
                let c = char::from_u32(cp).unwrap_or(char::REPLACEMENT_CHARACTER);
                let mut buf = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                return Ok(());
            }
            _ => {
                self.at -= 1;
                return Err(self.error("unknown escape"));
            }
        };
        out.push(simple);
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let Some(digits) = self.text.get(self.at..self.at + 4) else {
            return Err(self.error("cut-off \\u escape"));
        };
        let mut v = 0;
        for &d in digits {
            let x = match d {
                b'0'..=b'9' => d - b'0',
                b'a'..=b'f' => d - b'a' + 10,
                b'A'..=b'F' => d - b'A' + 10,
                _ => return Err(self.error("bad hex digit in a \\u escape")),
            };
            v = (v << 4) | u32::from(x);
        }
        self.at += 4;
        Ok(v)
    }
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
