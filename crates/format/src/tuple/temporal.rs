//! Dolt's date and time encodings: YEAR, DATE, TIME and DATETIME, their text forms, and the
//! chronological order of dates as Go's `time.Date` normalises them.

use std::fmt;

/// Stored byte of year 0 (`zeroToken`).
pub const YEAR_ZERO_TOKEN: u8 = 255;
/// First year YEAR can hold besides 0.
pub const MIN_YEAR: u16 = 1901;
/// Last year YEAR can hold.
pub const MAX_YEAR: u16 = 2155;

/// The year a stored YEAR byte means (0 for the 255 token).
#[inline]
pub fn year_from_raw(raw: u8) -> u16 {
    if raw == YEAR_ZERO_TOKEN {
        0
    } else {
        MIN_YEAR + u16::from(raw)
    }
}

/// The stored byte of a year, if YEAR can hold it (0 or 1901..=2155).
#[inline]
pub fn year_to_raw(year: u16) -> Option<u8> {
    match year {
        0 => Some(YEAR_ZERO_TOKEN),
        MIN_YEAR..=MAX_YEAR => Some((year - MIN_YEAR) as u8),
        _ => None,
    }
}

/// A DATE as stored: `year << 16 | month << 8 | day`. The zero date is all zeros.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Date {
    /// Year (0..=65535; MySQL uses 0..=9999).
    pub year: u16,
    /// Month, 1..=12 (0 in zero dates).
    pub month: u8,
    /// Day of month, 1..=31 (0 in zero dates).
    pub day: u8,
}

impl Date {
    /// MySQL's zero date `0000-00-00`.
    pub const ZERO: Date = Date {
        year: 0,
        month: 0,
        day: 0,
    };

    /// Unpacks the stored u32.
    #[inline]
    pub fn from_raw(raw: u32) -> Date {
        Date {
            year: (raw >> 16) as u16,
            month: (raw >> 8) as u8,
            day: raw as u8,
        }
    }

    /// Packs into the stored u32.
    #[inline]
    pub fn to_raw(self) -> u32 {
        (u32::from(self.year) << 16) | (u32::from(self.month) << 8) | u32::from(self.day)
    }

    /// Days since 1970-01-01 of the date Go's `time.Date(y, m, d)` makes of these parts, which
    /// normalises month 0 to the previous December and day 0 to the previous month's last day
    /// (so the zero date is −0001-11-30). Dolt orders dates by this.
    #[inline]
    pub fn normalized_days(self) -> i64 {
        let m0 = i64::from(self.month) - 1;
        let y = i64::from(self.year) + m0.div_euclid(12);
        let m = m0.rem_euclid(12) + 1;
        days_from_civil(y, m, 1) + i64::from(self.day) - 1
    }
}

/// A `chrono::NaiveDate` whose year is outside a DATE's `0..=9999`.
#[cfg(feature = "chrono")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("year {0} is outside a DATE's 0..=9999")]
pub struct YearOutOfRange(pub i32);

/// A calendar date as a DATE (years `0..=9999`, as MySQL's).
///
/// ```
/// use prollystore_format::tuple::Date;
/// let d = chrono::NaiveDate::from_ymd_opt(2024, 2, 29).unwrap();
/// assert_eq!(Date::try_from(d).unwrap().to_string(), "2024-02-29");
/// assert_eq!(Date::try_from(d).unwrap().to_naive_date(), Some(d));
/// assert_eq!(Date::ZERO.to_naive_date(), None); // 0000-00-00 is no calendar date
/// ```
#[cfg(feature = "chrono")]
impl TryFrom<chrono::NaiveDate> for Date {
    type Error = YearOutOfRange;

    fn try_from(d: chrono::NaiveDate) -> Result<Date, YearOutOfRange> {
        use chrono::Datelike;
        let year = u16::try_from(d.year())
            .ok()
            .filter(|y| *y <= 9999)
            .ok_or(YearOutOfRange(d.year()))?;
        Ok(Date {
            year,
            month: d.month() as u8,
            day: d.day() as u8,
        })
    }
}

#[cfg(feature = "chrono")]
impl Date {
    /// The calendar date, or `None` for a date with zero parts (`0000-00-00`, `2024-00-00`)
    /// or parts no calendar has.
    pub fn to_naive_date(self) -> Option<chrono::NaiveDate> {
        let (m, d) = (u32::from(self.month), u32::from(self.day));
        chrono::NaiveDate::from_ymd_opt(i32::from(self.year), m, d)
    }
}

impl fmt::Display for Date {
    /// `YYYY-MM-DD` of the stored parts (the zero date is `0000-00-00`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (month 1..=12).
#[inline]
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    // Stored years (0..=65535, one less for January and February of year 0 aside): unsigned
    // arithmetic, where each division by a constant is one multiplication (a table scan
    // converts a date per row; docs/PERF.md, "SQL").
    if let (Ok(y), Ok(m @ 1..=12)) = (u32::try_from(y), u32::try_from(m)) {
        if y <= 1 << 20 {
            let (era, yoe) = (y / 400, y % 400);
            let mp = if m > 2 { m - 3 } else { m + 9 };
            let doe = yoe * 365 + yoe / 4 - yoe / 100 + (153 * mp + 2) / 5;
            return i64::from(era * 146_097 + doe) + d - 1 - 719_468;
        }
    }
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian `(year, month, day)` of a day number since 1970-01-01 (the
/// inverse of [`days_from_civil`]).
#[inline]
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

const MICROS_PER_SECOND: i64 = 1_000_000;
const MICROS_PER_DAY: i64 = 86_400 * MICROS_PER_SECOND;

/// The stored value of Dolt's zero DATETIME (`0000-00-00 00:00:00`, which Go normalises to
/// −0001-11-30T00:00:00Z).
pub const ZERO_DATETIME_MICROS: i64 = -62_169_984_000_000_000;

/// A DATETIME or TIMESTAMP (Unix microseconds) rounded to `fsp` fraction digits, half up in
/// wall-clock time, as Dolt stores a value with more digits than its column keeps
/// (`12:00:00.6` in a DATETIME is stored as `12:00:01`, `1969-12-31 23:59:59.5` as
/// `1970-01-01 00:00:00`).
///
/// ```
/// use prollystore_format::tuple::round_datetime;
/// assert_eq!(round_datetime(600_000, 0), 1_000_000);
/// assert_eq!(round_datetime(-500_000, 0), 0);
/// assert_eq!(round_datetime(125_000, 2), 130_000);
/// assert_eq!(round_datetime(-1, 6), -1);
/// ```
pub fn round_datetime(micros: i64, fsp: u8) -> i64 {
    if fsp >= 6 || micros == ZERO_DATETIME_MICROS {
        return micros;
    }
    let unit = 10i64.pow(6 - u32::from(fsp));
    let below = micros.rem_euclid(unit);
    let down = micros - below;
    if below * 2 >= unit {
        down.saturating_add(unit)
    } else {
        down
    }
}

/// Text of a TIME (signed microseconds) as Dolt prints it: `[-]HH:MM:SS` with at least two
/// hour digits, and `.ffffff` only when the fraction is non-zero.
pub fn time_text(micros: i64) -> String {
    let sign = if micros < 0 { "-" } else { "" };
    let a = micros.unsigned_abs();
    let frac = a % 1_000_000;
    let secs = a / 1_000_000;
    let (h, m, s) = (secs / 3600, (secs / 60) % 60, secs % 60);
    if frac == 0 {
        format!("{sign}{h:02}:{m:02}:{s:02}")
    } else {
        format!("{sign}{h:02}:{m:02}:{s:02}.{frac:06}")
    }
}

/// Text of a DATETIME (Unix microseconds, UTC): `YYYY-MM-DD HH:MM:SS.ffffff`; the zero datetime
/// is `0000-00-00 00:00:00.000000`.
pub fn datetime_text(micros: i64) -> String {
    if micros == ZERO_DATETIME_MICROS {
        return "0000-00-00 00:00:00.000000".to_string();
    }
    let days = micros.div_euclid(MICROS_PER_DAY);
    let rem = micros.rem_euclid(MICROS_PER_DAY);
    let (y, mo, d) = civil_from_days(days);
    let secs = rem / MICROS_PER_SECOND;
    let frac = rem % MICROS_PER_SECOND;
    format!(
        "{y:04}-{mo:02}-{d:02} {:02}:{:02}:{:02}.{frac:06}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_from_vectors() {
        assert_eq!(time_text(-3_020_399_000_000), "-838:59:59");
        assert_eq!(time_text(-1), "-00:00:00.000001");
        assert_eq!(
            datetime_text(951_827_696_123_456),
            "2000-02-29 12:34:56.123456"
        );
        assert_eq!(datetime_text(-1), "1969-12-31 23:59:59.999999");
        assert_eq!(
            datetime_text(ZERO_DATETIME_MICROS),
            "0000-00-00 00:00:00.000000"
        );
        assert_eq!(Date::from_raw(132_645_405).to_string(), "2024-02-29");
        assert_eq!(Date::from_raw(0).to_string(), "0000-00-00");
        assert_eq!(year_from_raw(98), 1999);
        assert_eq!(year_to_raw(0), Some(255));
        assert_eq!(year_to_raw(1900), None);
    }

    #[test]
    fn normalisation_matches_go() {
        // time.Date(0,0,0) = -0001-11-30; 1970-01-01 = 0.
        assert_eq!(Date::ZERO.normalized_days(), days_from_civil(-1, 11, 30));
        assert_eq!(
            Date {
                year: 1970,
                month: 1,
                day: 1
            }
            .normalized_days(),
            0
        );
        assert_eq!(
            Date {
                year: 2024,
                month: 3,
                day: 0
            }
            .normalized_days(),
            Date {
                year: 2024,
                month: 2,
                day: 29
            }
            .normalized_days()
        );
        for z in [-800_000i64, -1, 0, 1, 59, 11_016, 2_932_896] {
            let (y, m, d) = civil_from_days(z);
            assert_eq!(days_from_civil(y, i64::from(m), i64::from(d)), z);
        }
    }
}
