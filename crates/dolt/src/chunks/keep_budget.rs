//! The default byte budget for the leaves bulk reads keep in a [`super::DoltChunkSource`]'s
//! arena ([`super::DoltChunkSource::set_bulk_keep_budget`]): a quarter of the machine's
//! memory, or [`KEEP_BUDGET_VAR`] when it is set.

use crate::error::{DoltError, Result};

/// The environment variable that sets the default budget, in bytes with an optional `K`, `M`
/// or `G` suffix (powers of 1024); read when a source is opened.
pub const KEEP_BUDGET_VAR: &str = "PROLLY_KEEP_BUDGET";

/// The budget where the machine's memory is not known.
const FALLBACK_BUDGET: u64 = 2 << 30;

/// The budget a source opened now starts with: [`KEEP_BUDGET_VAR`] if set, else a quarter of
/// physical memory. A value that is not a byte count is an error, not ignored: a typo would
/// otherwise quietly keep gigabytes.
pub(crate) fn default_keep_budget() -> Result<u64> {
    budget_from(std::env::var_os(KEEP_BUDGET_VAR).as_deref())
}

/// [`default_keep_budget`] with [`KEEP_BUDGET_VAR`] set to `value`.
fn budget_from(value: Option<&std::ffi::OsStr>) -> Result<u64> {
    match value {
        None => Ok(physical_memory().map_or(FALLBACK_BUDGET, |m| m / 4)),
        Some(value) => value
            .to_str()
            .and_then(parse_bytes)
            .ok_or_else(|| DoltError::BadInput {
                what: format!("{KEEP_BUDGET_VAR}={value:?}"),
                reason: "not a byte count (digits with an optional K, M or G suffix, such as \
                         512M)"
                    .to_string(),
                source: None,
            }),
    }
}

/// `512`, `64K`, `512M`, `4G` (either case; powers of 1024) as bytes; `None` for anything
/// else, or a count past `u64::MAX`.
fn parse_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, shift) = match text.as_bytes().last()?.to_ascii_uppercase() {
        b'K' => (&text[..text.len() - 1], 10),
        b'M' => (&text[..text.len() - 1], 20),
        b'G' => (&text[..text.len() - 1], 30),
        _ => (text, 0),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// The machine's physical memory in bytes, where the system says.
#[cfg(unix)]
fn physical_memory() -> Option<u64> {
    // SAFETY: `sysconf` only reads system configuration; it takes no pointers.
    let (pages, page_size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let (pages, page_size) = (u64::try_from(pages).ok()?, u64::try_from(page_size).ok()?);
    pages.checked_mul(page_size).filter(|&m| m > 0)
}

/// The machine's physical memory in bytes, where the system says.
#[cfg(not(unix))]
fn physical_memory() -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_parse_with_their_suffixes() {
        let cases = [
            ("0", Some(0)),
            ("4096", Some(4096)),
            (" 64k ", Some(64 << 10)),
            ("512M", Some(512 << 20)),
            ("4g", Some(4 << 30)),
            ("18446744073709551615", Some(u64::MAX)),
            ("17179869184G", None),
            ("", None),
            ("G", None),
            ("-1", None),
            ("1.5G", None),
            ("12X", None),
            ("1 G", None),
            ("1GB", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_bytes(text), want, "{text:?}");
        }
    }

    #[test]
    fn the_variable_sets_the_default_and_a_bad_value_is_an_error() {
        let memory = physical_memory();
        assert!(
            cfg!(not(unix)) || memory.is_some_and(|m| m >= 1 << 20),
            "{memory:?}"
        );
        let unset = budget_from(None).unwrap();
        assert_eq!(unset, memory.map_or(FALLBACK_BUDGET, |m| m / 4));
        assert_eq!(budget_from(Some("64M".as_ref())).unwrap(), 64 << 20);
        let e = budget_from(Some("12X".as_ref())).unwrap_err().to_string();
        assert!(
            e.contains("PROLLY_KEEP_BUDGET=\"12X\"") && e.contains("512M"),
            "{e}"
        );
    }
}
