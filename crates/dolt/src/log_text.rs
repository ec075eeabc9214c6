//! The text of the commit log as `dolt log` and `dolt log --oneline` print it.

use crate::db::Commit;
use crate::value_text::civil_from_days;

/// Formats Unix milliseconds as Go's `Mon Jan 02 15:04:05 -0700 2006` in UTC (what `dolt log`
/// prints).
pub fn log_date(millis: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = millis.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let wd = DAYS
        .get(days.rem_euclid(7) as usize)
        .copied()
        .unwrap_or("???");
    let mon = MONTHS
        .get((m as usize).wrapping_sub(1))
        .copied()
        .unwrap_or("???");
    format!(
        "{wd} {mon} {d:02} {:02}:{:02}:{:02} +0000 {y}",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// `dolt log` text for a list of commits (as [`Database::log`](crate::Database::log) returns
/// them).
pub fn log_text(commits: &[Commit]) -> String {
    let mut s = String::new();
    for c in commits {
        s.push_str(&format!("commit {} \n", c.address));
        if c.parents.len() > 1 {
            let ps: Vec<String> = c.parents.iter().map(|p| p.to_string()).collect();
            s.push_str(&format!("Merge: {}\n", ps.join(" ")));
        }
        s.push_str(&format!("Author: {} <{}>\n", c.name, c.email));
        s.push_str(&format!("Date:  {}\n\n", log_date(c.user_timestamp_millis)));
        for line in c.message.lines() {
            s.push_str(&format!("\t{line}\n"));
        }
        s.push('\n');
    }
    s
}

/// `dolt log --oneline` text.
pub fn log_oneline_text(commits: &[Commit]) -> String {
    let mut s = String::new();
    for c in commits {
        s.push_str(&format!("{} {}\n", c.address, c.message));
    }
    s
}
