//! Dates as `dolt commit --date` takes them.

use prollystore_format::value_parse::{parse_datetime, parse_u64};

/// A date as the ops and Dolt's `--date` take it (`2024-01-02T09:30:00Z`,
/// `2024-01-02T09:30:00`, `2024-01-02`, or with a `±HH:MM` offset), in Unix milliseconds. The
/// date and time are read as every other datetime text is ([`parse_datetime`]).
pub fn parse_date_millis(date: &str) -> Option<i64> {
    let d = date.trim();
    let time_at = d.find(['T', ' ']).map_or(d.len(), |p| p + 1);
    let (local, offset_secs) = if let Some(local) = d.strip_suffix('Z') {
        (local, 0)
    } else if let Some(at) = d[time_at..].rfind(['+', '-']).map(|p| time_at + p) {
        let (local, zone) = d.split_at(at);
        let (h, m) = zone[1..].split_once(':')?;
        let (h, m) = (parse_u64(h.as_bytes())?, parse_u64(m.as_bytes())?);
        if h > 23 || m > 59 {
            return None;
        }
        let secs = (h * 3600 + m * 60) as i64;
        (local, if zone.starts_with('-') { -secs } else { secs })
    } else {
        (d, 0)
    };
    let micros = parse_datetime(local.as_bytes())?;
    Some(micros.div_euclid(1000) - offset_secs * 1000)
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
        assert_eq!(
            parse_date_millis("2024-02-05 18:45:00-02:00"),
            Some(1_707_165_900_000)
        );
        assert_eq!(parse_date_millis("2024/01/01"), None);
        assert_eq!(parse_date_millis("2024-13-01"), None);
        assert_eq!(parse_date_millis("2024-01-01T00:00:00+25:00"), None);
        assert_eq!(parse_date_millis("yesterday"), None);
    }
}
