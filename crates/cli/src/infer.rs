//! `prolly import --infer`: a schema guessed from a CSV file's header and first rows, printed
//! in the `--key`/`--value` syntax so that it can be edited and given again. The first column
//! is the key; each column gets the narrowest type every sampled value parses as (`bigint`,
//! `double`, `date`, `datetime(6)`, else `string`), nullable when a sampled field is NULL.

use std::path::Path;

use crate::error::{Error, Result};
use crate::field_text::NullText;
use prollystore_format::value_parse::parse_i64;

/// How many data rows the guess reads.
pub const SAMPLE_ROWS: usize = 10_000;

/// What the sampled values of one column all are.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Guess {
    Int,
    Double,
    Date,
    Datetime,
    Text,
}

impl Guess {
    fn of(text: &[u8]) -> Guess {
        if parse_i64(text).is_some() {
            Guess::Int
        } else if is_number(text) {
            Guess::Double
        } else if is_date(text) {
            Guess::Date
        } else if is_datetime(text) {
            Guess::Datetime
        } else {
            Guess::Text
        }
    }

    /// The type both guesses fit: numbers widen to double, dates to datetimes, the rest to
    /// text.
    fn join(self, other: Guess) -> Guess {
        use Guess::*;
        match (self.min(other), self.max(other)) {
            (a, b) if a == b => a,
            (Int, Double) => Double,
            (Date, Datetime) => Datetime,
            _ => Text,
        }
    }

    fn sql(self) -> &'static str {
        match self {
            Guess::Int => "bigint",
            Guess::Double => "double",
            Guess::Date => "date",
            Guess::Datetime => "datetime(6)",
            Guess::Text => "string",
        }
    }
}

/// A decimal number as `double` reads it: digits with an optional sign, point and exponent.
fn is_number(t: &[u8]) -> bool {
    let s = std::str::from_utf8(t).unwrap_or("");
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    body.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && body
            .bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'-' | b'+'))
        && s.parse::<f64>().is_ok_and(f64::is_finite)
}

/// `YYYY-MM-DD`.
fn is_date(t: &[u8]) -> bool {
    t.len() == 10
        && t.iter().enumerate().all(|(i, &c)| match i {
            4 | 7 => c == b'-',
            _ => c.is_ascii_digit(),
        })
}

/// `YYYY-MM-DD HH:MM:SS` with up to six fractional digits.
fn is_datetime(t: &[u8]) -> bool {
    if t.len() < 19 || !is_date(&t[..10]) || t[10] != b' ' {
        return false;
    }
    let time = &t[11..19];
    let fits = time.iter().enumerate().all(|(i, &c)| match i {
        2 | 5 => c == b':',
        _ => c.is_ascii_digit(),
    });
    let frac = &t[19..];
    fits && (frac.is_empty()
        || (frac[0] == b'.'
            && (2..=7).contains(&frac.len())
            && frac[1..].iter().all(u8::is_ascii_digit)))
}

/// The `--key` and `--value` texts guessed from `file` (see the module docs). Errors name the
/// file, and the column and line where a guess cannot be made.
pub fn infer_schema(file: &Path, null: &NullText) -> Result<(String, String)> {
    let in_file = |e: String| Error::msg(format!("{}: {e}", file.display()));
    let mut r = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_path(file)
        .map_err(|e| in_file(e.to_string()))?;
    let names: Vec<String> = r
        .byte_headers()
        .map_err(|e| in_file(e.to_string()))?
        .iter()
        .map(|h| String::from_utf8_lossy(h).trim().to_string())
        .collect();
    for n in &names {
        if n.is_empty() || n.contains([',', ':', '?']) {
            let shown: String = n.chars().take(60).collect();
            return Err(in_file(format!(
                "header column {shown:?} cannot be named in a schema (empty, or has ',' ':' '?'): \
                 give --key/--value with other names and a file without the header's names"
            )));
        }
    }
    let mut guesses: Vec<Option<Guess>> = vec![None; names.len()];
    let mut nullable = vec![false; names.len()];
    let mut rec = csv::ByteRecord::new();
    for _ in 0..SAMPLE_ROWS {
        if !r
            .read_byte_record(&mut rec)
            .map_err(|e| in_file(e.to_string()))?
        {
            break;
        }
        for (i, field) in rec.iter().enumerate().take(names.len()) {
            let is_null = match &null.marker {
                Some(m) => field == &m[..],
                None => field.is_empty(),
            };
            if is_null {
                nullable[i] = true;
                continue;
            }
            let g = Guess::of(field);
            guesses[i] = Some(guesses[i].map_or(g, |old| old.join(g)));
        }
    }
    let Some(key_name) = names.first() else {
        return Err(in_file("no columns in the header".into()));
    };
    if nullable[0] {
        let line = r.position().line();
        return Err(in_file(format!(
            "key column {key_name:?} has NULL (empty) values in the first {} lines: a key \
             cannot be NULL",
            line
        )));
    }
    let column = |i: usize| {
        let ty = guesses[i].unwrap_or(Guess::Text).sql();
        let q = if nullable[i] { "?" } else { "" };
        format!("{}:{ty}{q}", names[i])
    };
    let key = column(0);
    let value = (1..names.len()).map(column).collect::<Vec<_>>().join(",");
    Ok((key, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn infer(csv: &str) -> Result<(String, String)> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.csv");
        std::fs::write(&path, csv).unwrap();
        infer_schema(&path, &NullText::default())
    }

    #[test]
    fn narrowest_types_and_nulls() {
        let (k, v) = infer(
            "id,name,price,qty,day,at,mixed\n\
             1,apple,1.5,3,2024-01-02,2024-01-02 03:04:05,1\n\
             2,,2,,2024-02-03,2024-01-02 03:04:05.25,x\n",
        )
        .unwrap();
        assert_eq!(k, "id:bigint");
        assert_eq!(
            v,
            "name:string?,price:double,qty:bigint?,day:date,at:datetime(6),mixed:string"
        );
    }

    #[test]
    fn dates_widen_to_datetimes_and_empty_columns_are_text() {
        let (_, v) = infer("k,d,e\na,2024-01-02,\nb,2024-01-02 00:00:00,\n").unwrap();
        assert_eq!(v, "d:datetime(6),e:string?");
    }

    #[test]
    fn a_null_key_and_unusable_names_are_errors() {
        let e = infer("id,v\n,1\n").unwrap_err().to_string();
        assert!(e.contains("key column \"id\""), "{e}");
        let e = infer("id,a:b\n1,2\n").unwrap_err().to_string();
        assert!(e.contains("a:b"), "{e}");
    }
}
