//! JSON text as Dolt reads and stores it.
//!
//! Dolt reads a JSON document into plain values (every number a double, objects as maps: one
//! member per key, the last one written) and stores what Go's `encoding/json` writes back for
//! them without HTML escapes: no spaces, object members sorted by the bytes of their keys,
//! numbers in the shortest form that reads back (exponent form below 1e-6 and from 1e21, as
//! `1e-7` and `1e+21`), strings with only `"`, `\`, control characters, U+2028 and U+2029
//! escaped. [`normalize`] turns text into those bytes, or says why Dolt refuses it (not JSON,
//! text after the value, a number beyond a double, nesting deeper than [`MAX_NESTING`]).
//! The same parser serves [`crate::json_order`]. Checked against Dolt's stored bytes in
//! `crates/dolt/tests/json_dolt.rs`.

use thiserror::Error;

/// Arrays and objects nested deeper than this are refused, as Dolt refuses them.
pub const MAX_NESTING: usize = 10_000;

/// The longest text Dolt takes for a JSON value: 1 GiB counted at 4 bytes a character.
pub const MAX_TEXT_LEN: usize = 1 << 28;

/// Why a document is not well-formed JSON.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("malformed JSON at byte {offset}: {what}")]
pub struct JsonError {
    /// Byte offset of the problem in the document.
    pub offset: usize,
    /// What was wrong there.
    pub what: &'static str,
}

/// The bytes Dolt stores for JSON text `text`, or why Dolt refuses it.
pub fn normalize(text: &[u8]) -> Result<Vec<u8>, JsonError> {
    if text.len() > MAX_TEXT_LEN {
        return Err(JsonError {
            offset: MAX_TEXT_LEN,
            what: "longer than Dolt takes for a JSON value (1 GiB at 4 bytes a character)",
        });
    }
    let work = || -> Result<Vec<u8>, JsonError> {
        let value = parse(text, MAX_NESTING)?;
        let mut out = Vec::with_capacity(text.len());
        write(&value, &mut out);
        Ok(out)
    };
    // Parsing and writing recurse once per level: deep documents get a stack to match.
    if nesting(text) <= 200 {
        return work();
    }
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn_scoped(s, work)
            .map_err(|_| JsonError {
                offset: 0,
                what: "no thread to read a deeply nested document",
            })?
            .join()
            .unwrap_or(Err(JsonError {
                offset: 0,
                what: "reading the document failed",
            }))
    })
}

/// How deeply arrays and objects nest in `text` (read as JSON tokens, without checking it).
fn nesting(text: &[u8]) -> usize {
    let (mut depth, mut max, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in text {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Writes `v` as Dolt stores it.
fn write(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(x) => crate::value_text::write_json_f64(out, *x),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(item, out);
            }
            out.push(b']');
        }
        Value::Object(members) => {
            out.push(b'{');
            for (i, (key, value)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_string(key, out);
                out.push(b':');
                write(value, out);
            }
            out.push(b'}');
        }
    }
}

/// A string (valid UTF-8) quoted and escaped as Dolt stores it.
fn write_string(s: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    write_escaped(s, out);
    out.push(b'"');
}

/// Bytes as a JSON string, quoted, as Go's `encoding/json` writes them without HTML escapes
/// (Dolt's `-r json` rows): text escaped as Dolt stores it, and each byte that does not
/// begin a valid UTF-8 sequence (a `VARBINARY`'s) written `\ufffd` (a U+FFFD that is in the
/// text stays as it is).
pub fn write_go_string(bytes: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for chunk in bytes.utf8_chunks() {
        write_escaped(chunk.valid().as_bytes(), out);
        for _ in chunk.invalid() {
            out.extend_from_slice(b"\\ufffd");
        }
    }
    out.push(b'"');
}

/// Valid UTF-8 `s` escaped as Dolt stores a JSON string (no quotes).
fn write_escaped(s: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0C => out.extend_from_slice(b"\\f"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0..=0x1F => {
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 0xF)]);
            }
            // U+2028 and U+2029 (E2 80 A8 / A9).
            0xE2 if s.get(i + 1) == Some(&0x80) && matches!(s.get(i + 2), Some(0xA8 | 0xA9)) => {
                out.extend_from_slice(if s[i + 2] == 0xA8 {
                    b"\\u2028"
                } else {
                    b"\\u2029"
                });
                i += 3;
                continue;
            }
            _ => out.push(b),
        }
        i += 1;
    }
}

/// `bytes` with every byte that does not begin a valid UTF-8 sequence replaced by U+FFFD
/// (one replacement a byte, as Go decodes).
fn valid_utf8(bytes: Vec<u8>) -> Vec<u8> {
    if std::str::from_utf8(&bytes).is_ok() {
        return bytes;
    }
    let mut out = Vec::with_capacity(bytes.len() + 8);
    let mut rest = &bytes[..];
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.extend_from_slice(s.as_bytes());
                return out;
            }
            Err(e) => {
                let good = e.valid_up_to();
                out.extend_from_slice(&rest[..good]);
                out.extend_from_slice("\u{FFFD}".as_bytes());
                rest = &rest[good + 1..];
            }
        }
    }
}

/// A parsed JSON document: what ordering compares and what Dolt stores.
#[derive(Debug)]
pub(crate) enum Value {
    Null,
    Number(f64),
    String(Vec<u8>),
    /// Members sorted by key (bytes), one per key (the last one written wins, as in Dolt).
    Object(Vec<(Vec<u8>, Value)>),
    Array(Vec<Value>),
    Bool(bool),
}

/// Parses one whole document, refusing arrays and objects nested more than `max_depth` deep.
pub(crate) fn parse(text: &[u8], max_depth: usize) -> Result<Value, JsonError> {
    let mut p = Parser {
        text,
        at: 0,
        max_depth,
    };
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
    max_depth: usize,
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

    /// A value inside `depth` arrays and objects.
    fn value(&mut self, depth: usize) -> Result<Value, JsonError> {
        self.skip_space();
        match self.peek() {
            Some(b'{' | b'[') if depth >= self.max_depth => Err(self.error("nested too deeply")),
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
        // Dolt reads every number as a double and refuses one too large for it (`1e400`); one
        // too small becomes 0.
        text.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .map(Value::Number)
            .ok_or_else(|| self.error("number out of range"))
    }

    /// A string literal (the cursor is on its opening quote), unescaped to UTF-8: as in Dolt,
    /// each byte that does not begin a valid UTF-8 sequence reads as U+FFFD.
    fn string(&mut self) -> Result<Vec<u8>, JsonError> {
        self.at += 1;
        let mut out = Vec::new();
        loop {
            let Some(b) = self.peek() else {
                return Err(self.error("unterminated string"));
            };
            self.at += 1;
            match b {
                b'"' => return Ok(valid_utf8(out)),
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

    proptest! {
        /// Arbitrary text (biased towards JSON's alphabet): no panic; what is accepted is
        /// UTF-8 and stays as it is when normalized again (the fuzz target `json_normalize`
        /// checks the same at length).
        #[test]
        fn accepted_text_is_stored_stably(text in "[\\[\\]{}\",:0-9eE.+\\-a-z\\\\ \u{e9}\u{2028}\u{1}]{0,40}") {
            if let Ok(stored) = normalize(text.as_bytes()) {
                prop_assert!(std::str::from_utf8(&stored).is_ok());
                prop_assert_eq!(normalize(&stored).unwrap(), stored);
            }
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = normalize(&bytes);
        }
    }

    fn norm(text: &str) -> String {
        String::from_utf8(normalize(text.as_bytes()).unwrap()).unwrap()
    }

    /// Stored bytes read back from a Dolt 2.3.1 database after `INSERT`s of these texts.
    #[test]
    fn stores_what_dolt_stores() {
        for (text, stored) in [
            (r#"{"b": 1,  "a": 2}"#, r#"{"a":2,"b":1}"#),
            (r#"{"a":1,"a":2}"#, r#"{"a":2}"#),
            ("1e-400", "0"),
            ("-0", "-0"),
            ("-0.0", "-0"),
            ("12345678901234567890", "12345678901234567000"),
            ("123456789012345678", "123456789012345680"),
            ("1.0", "1"),
            ("1e21", "1e+21"),
            ("1e20", "100000000000000000000"),
            ("0.000001", "0.000001"),
            ("0.0000001", "1e-7"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("5e-324", "5e-324"),
            ("1E+2", "100"),
            ("[1, 2.50, -3E2]", "[1,2.5,-300]"),
            (" true ", "true"),
            (r#""a\/b""#, r#""a/b""#),
            (
                r#""\u00e9\b\f\u2028<>&\u0001""#,
                r#""é\b\f\u2028<>&\u0001""#,
            ),
            (r#""\ud800""#, "\"\u{FFFD}\""),
            (r#""\ud83d\ude00""#, "\"😀\""),
            (r#"{"é":1,"e":2,"Z":3}"#, r#"{"Z":3,"e":2,"é":1}"#),
            ("[]", "[]"),
            ("{}", "{}"),
        ] {
            assert_eq!(norm(text), stored, "{text}");
        }
    }

    #[test]
    fn refuses_what_dolt_refuses() {
        for bad in [
            "{oops",
            "hello",
            "[1,",
            "nul",
            "{\"a\":1} trailing",
            "1e400",
            "",
            "01",
            ".5",
            "[1,]",
            "\"a\tb\"",
        ] {
            assert!(normalize(bad.as_bytes()).is_err(), "{bad:?}");
        }
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "10,000 levels parsed and written take minutes under Miri (no unsafe code here)"
    )]
    fn nesting_as_deep_as_dolt_takes() {
        let deep = |n: usize| "[".repeat(n) + &"]".repeat(n);
        assert_eq!(norm(&deep(MAX_NESTING)), deep(MAX_NESTING));
        assert!(normalize(deep(MAX_NESTING + 1).as_bytes()).is_err());
    }

    #[test]
    fn invalid_utf8_reads_as_replacement_characters() {
        assert_eq!(
            normalize(b"\"a\xffb\xe2\x82\"").unwrap(),
            "\"a\u{FFFD}b\u{FFFD}\u{FFFD}\"".as_bytes()
        );
    }

    #[test]
    fn normalized_text_is_a_fixed_point() {
        for text in [r#"{"b":[1.5e300,-2e-9,"x\u001f"],"a":null}"#, "\"\\u2029\""] {
            let once = normalize(text.as_bytes()).unwrap();
            assert_eq!(normalize(&once).unwrap(), once);
        }
    }
}
