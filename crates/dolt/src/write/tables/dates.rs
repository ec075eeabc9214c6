//! Dates as `dolt commit --date` takes them.

use prollystore_format::tuple::days_from_civil;

/// A date as the ops and Dolt's `--date` take it (`2024-01-02T09:30:00Z`,
/// `2024-01-02T09:30:00`, `2024-01-02`, or with a `±HH:MM` offset), in Unix milliseconds.
pub fn parse_date_millis(date: &str) -> Option<i64> {
    let d = date.trim();
    let n = |s: &str| s.parse::<i64>().ok();
    let (y, m, day) = (n(d.get(0..4)?)?, n(d.get(5..7)?)?, n(d.get(8..10)?)?);
    if d.get(4..5)? != "-" || d.get(7..8)? != "-" {
        return None;
    }
    let mut secs = days_from_civil(y, m, day) * 86_400;
    let rest = &d[10..];
    if rest.is_empty() {
        return Some(secs * 1000);
    }
    let rest = rest.strip_prefix(['T', ' '])?;
    let (hh, mm, ss) = (
        n(rest.get(0..2)?)?,
        n(rest.get(3..5)?)?,
        n(rest.get(6..8)?)?,
    );
    secs += hh * 3600 + mm * 60 + ss;
    let mut tail = &rest[8..];
    let mut millis = 0;
    if let Some(frac) = tail.strip_prefix('.') {
        let digits = frac.len() - frac.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let f = format!("{:0<3}", &frac[..digits]);
        millis = n(&f[..3])?;
        tail = &frac[digits..];
    }
    let offset = match tail {
        "" | "Z" => 0,
        t => {
            let sign = match t.get(0..1)? {
                "+" => 1,
                "-" => -1,
                _ => return None,
            };
            sign * (n(t.get(1..3)?)? * 3600 + n(t.get(4..6)?)? * 60)
        }
    };
    Some((secs - offset) * 1000 + millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(parse_date_millis("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_date_millis("2024-01-01T00:00:00Z"),
            Some(1_704_067_200_000)
        );
        assert_eq!(parse_date_millis("2024-01-01"), Some(1_704_067_200_000));
        assert_eq!(
            parse_date_millis("2024-01-01T01:00:00+01:00"),
            Some(1_704_067_200_000)
        );
        assert_eq!(
            parse_date_millis("2024-01-01T00:00:00.250Z"),
            Some(1_704_067_200_250)
        );
        assert_eq!(parse_date_millis("2024/01/01"), None);
    }
}
