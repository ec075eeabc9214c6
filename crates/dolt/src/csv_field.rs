//! One CSV field as `dolt sql -r csv` writes it: when it is quoted, and how.

/// Appends one CSV field as Dolt writes it: NULL is empty, an empty string is `""`, and fields
/// with a comma, quote, CR/LF, a leading space or equal to `\.` are quoted.
pub fn write_csv_field(field: Option<&[u8]>, out: &mut Vec<u8>) {
    let Some(f) = field else { return };
    if !needs_quotes(f) {
        out.extend_from_slice(f);
        return;
    }
    out.reserve(f.len() + 2);
    out.push(b'"');
    let mut rest = f;
    while let Some(p) = rest.iter().position(|&b| b == b'"') {
        let (upto, after) = rest.split_at(p + 1);
        out.extend_from_slice(upto);
        out.push(b'"');
        rest = after;
    }
    out.extend_from_slice(rest);
    out.push(b'"');
}

/// Whether Dolt's CSV writer quotes `f`.
#[inline]
fn needs_quotes(f: &[u8]) -> bool {
    let Some(&first) = f.first() else {
        return true;
    };
    let first_is_space = if first.is_ascii() {
        // `char::is_whitespace` on ASCII: TAB, LF, VT, FF, CR and space.
        matches!(first, b' ' | b'\t'..=b'\r')
    } else {
        first_char_is_whitespace(f)
    };
    first_is_space || f == b"\\." || f.iter().any(|&b| matches!(b, b',' | b'"' | b'\r' | b'\n'))
}

/// Whether the first UTF-8 character of `f` is Unicode whitespace (false if it is not valid
/// UTF-8).
fn first_char_is_whitespace(f: &[u8]) -> bool {
    (1..=f.len().min(4))
        .find_map(|n| std::str::from_utf8(f.get(..n)?).ok())
        .and_then(|s| s.chars().next())
        .is_some_and(char::is_whitespace)
}

/// Appends one row of values as a CSV line (newline included), each field as
/// [`write_csv_field`] writes it.
pub fn write_csv_row(row: &[Option<crate::sql_value::SqlValue>], out: &mut Vec<u8>) {
    let mut field = Vec::new();
    for (n, v) in row.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        if let Some(v) = v {
            field.clear();
            v.csv_bytes(&mut field);
            write_csv_field(Some(&field), out);
        }
    }
    out.push(b'\n');
}

/// Appends a CSV header line of column names.
pub fn write_csv_header<'n>(names: impl IntoIterator<Item = &'n str>, out: &mut Vec<u8>) {
    for (n, name) in names.into_iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        write_csv_field(Some(name.as_bytes()), out);
    }
    out.push(b'\n');
}

/// Splits CSV text as Dolt writes it into records, each with its newline (a newline inside
/// quotes stays in its record); a last record without a newline is kept as it is. For reading
/// Dolt's output back (tests, conformance).
pub fn csv_records(text: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut quoted = false;
    let mut start = 0;
    for (i, &b) in text.iter().enumerate() {
        if b == b'"' {
            quoted = !quoted;
        } else if b == b'\n' && !quoted {
            out.push(&text[start..=i]);
            start = i + 1;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// The fields of one CSV record (its newline, if any, removed), unquoted.
pub fn csv_fields(record: &[u8]) -> Vec<Vec<u8>> {
    let record = record.strip_suffix(b"\n").unwrap_or(record);
    let mut out = Vec::new();
    let mut cur = Vec::new();
    let mut quoted = false;
    let mut i = 0;
    while let Some(&b) = record.get(i) {
        match b {
            b'"' if quoted && record.get(i + 1) == Some(&b'"') => {
                cur.push(b'"');
                i += 1;
            }
            b'"' => quoted = !quoted,
            b',' if !quoted => out.push(std::mem::take(&mut cur)),
            _ => cur.push(b),
        }
        i += 1;
    }
    out.push(cur);
    out
}
