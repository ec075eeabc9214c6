//! The text of the commit log as `dolt log` and `dolt log --oneline` print it.

use crate::db::Commit;
use prollystore_format::tuple::civil_from_days;

/// Formats Unix milliseconds as Go's `Mon Jan 02 15:04:05 -0700 2006` in UTC, dropping the
/// milliseconds (what `dolt tag -v` prints; `dolt log` rounds first, see [`commit_date`]).
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

/// A commit's time as `dolt log` prints it: rounded to the nearest second (half a second
/// rounds up), then as [`log_date`].
pub fn commit_date(millis: i64) -> String {
    log_date(
        millis
            .div_euclid(1000)
            .saturating_add(i64::from(millis.rem_euclid(1000) >= 500))
            * 1000,
    )
}

/// `text` with every line break replaced by `sep`, as Dolt lays out messages (a message ending
/// in a line break keeps an empty last line).
fn replace_breaks(text: &str, sep: &str) -> String {
    text.replace('\n', sep)
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
        s.push_str(&format!(
            "Date:  {}\n\n",
            commit_date(c.user_timestamp_millis)
        ));
        s.push_str(&format!("\t{}\n\n", replace_breaks(&c.message, "\n\t")));
    }
    s
}

/// `dolt log --oneline` text (line breaks in messages become spaces).
pub fn log_oneline_text(commits: &[Commit]) -> String {
    let mut s = String::new();
    for c in commits {
        s.push_str(&format!(
            "{} {}\n",
            c.address,
            replace_breaks(&c.message, " ")
        ));
    }
    s
}

/// One tag as `dolt tag -v` prints it: name and commit, tagger, date, and the message (each
/// line indented by a tab) only when there is one.
pub fn tag_text(tag: &crate::db::Tag) -> String {
    let mut s = format!(
        "{}\t{}\nTagger: {} <{}>\nDate:   {}\n",
        tag.name,
        tag.commit,
        tag.tagger_name,
        tag.tagger_email,
        log_date(tag.user_timestamp_millis)
    );
    if !tag.message.is_empty() {
        s.push_str(&format!("\n\t{}\n", replace_breaks(&tag.message, "\n\t")));
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_dates_round_to_the_second() {
        // 2026-11-26 22:52:52 UTC plus some milliseconds.
        let base = 1_795_733_572_000i64;
        assert_eq!(commit_date(base + 499), log_date(base));
        assert_eq!(commit_date(base + 500), log_date(base + 1000));
        assert_eq!(log_date(base + 999), log_date(base));
        assert_eq!(log_date(base), "Thu Nov 26 22:52:52 +0000 2026");
    }
}
