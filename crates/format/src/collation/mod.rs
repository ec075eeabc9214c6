//! MySQL collations as Dolt orders them (`val.CompareCollatedStrings`).
//!
//! Dolt does not run a full collation algorithm. It gives every code point one integer
//! weight (its rank among all single code points under the collation) and compares two
//! UTF-8 strings like this:
//!
//! 1. skip the common byte prefix; if one side ends there, the shorter string is smaller;
//! 2. step both sides back to the start of the code point the difference falls in;
//! 3. decode both sides one code point at a time (Go's rules: a malformed byte is U+FFFD of
//!    length 1); where the code points differ, the smaller weight is the smaller string, equal
//!    weights go on;
//! 4. when one side runs out, the side with fewer bytes left is smaller.
//!
//! So there are no contractions or expansions, no level-by-level comparison across the
//! string, and no PAD SPACE trimming; `ß` is one code point ranked after `s`, and two strings
//! are equal only when they have the same length in bytes after the last weight difference.
//! [`Collation::compare`] reproduces exactly that. The weights come from published data
//! (see `scripts/gen_collations.py` and [`Collation::from_id`] for what is covered).

mod charset;
mod charsets;
mod han;
mod like;
mod registry;
mod runs;
mod tables;
mod tailoring;
mod utf8;

use std::cmp::Ordering;
use std::fmt;

use thiserror::Error;

pub use self::like::LikePattern;

use self::charset::CharsetTable;
use self::runs::RunTable;
use self::tailoring::Tailoring;

/// Weight of a code point outside a collation's character set: above every real weight, and
/// the same for all such code points (Dolt's `math.MaxInt32`).
const OUTSIDE: u32 = u32::MAX;

/// The largest code point.
const MAX_CP: u32 = 0x10FFFF;

/// How a collation weighs code points.
#[derive(Clone, Copy)]
enum Weights {
    /// The code point itself (`binary`, `utf8mb4_0900_bin`, `utf8mb4_bin`, ...): on valid
    /// UTF-8 this is byte order.
    CodePoint,
    /// The code point up to a limit, [`OUTSIDE`] above it (`ascii_bin`, `utf8mb3_bin`).
    CodePointUpTo(u32),
    /// ASCII with lower case folded to upper case, [`OUTSIDE`] beyond ASCII
    /// (`ascii_general_ci`).
    AsciiCaseFolded,
    /// A single-byte character set whose bytes 0x00..=0x7F are ASCII and whose bytes
    /// 0x80..=0xFF are the code points in `high` (0 = undefined): the byte, or its entry in
    /// the 256-entry `sort` table when there is one; [`OUTSIDE`] for code points the set
    /// lacks (`latin1_bin`, `latin1_swedish_ci`, `latin1_german1_ci`, `latin7_bin`, `cp1257_bin`).
    SingleByte {
        high: &'static [u32; 128],
        sort: Option<&'static [u8; 256]>,
    },
    /// A generated rank table (the UCA-based collations), [`OUTSIDE`] above the code point
    /// limit (utf8mb3 collations leave out the supplementary planes).
    Table(&'static RunTable, u32),
    /// A language tailoring over a generated rank table, [`OUTSIDE`] above the code point
    /// limit.
    Tailored(&'static Tailoring, u32),
    /// A single-byte character set collation given as the weights of the code points the set
    /// encodes ([`OUTSIDE`] for the others): `dec8_swedish_ci`, `cp1256_general_ci`, ...
    Charset(&'static CharsetTable),
    /// Dolt accepts the collation but this library has no weights for it yet.
    Missing,
}

impl Weights {
    /// The weight of code point `cp` (at most U+10FFFF, never a surrogate).
    #[inline(always)]
    fn weight(self, cp: u32) -> u32 {
        match self {
            Weights::CodePoint => cp,
            Weights::CodePointUpTo(limit) => {
                if cp <= limit {
                    cp
                } else {
                    OUTSIDE
                }
            }
            Weights::AsciiCaseFolded => match cp {
                0x61..=0x7A => cp - 0x20,
                0..=0x7F => cp,
                _ => OUTSIDE,
            },
            Weights::SingleByte { high, sort } => match single_byte(high, cp) {
                Some(b) => sort.map_or(u32::from(b), |sort| u32::from(sort[usize::from(b)])),
                None => OUTSIDE,
            },
            Weights::Table(table, limit) => {
                if cp <= limit {
                    table.weight(cp)
                } else {
                    OUTSIDE
                }
            }
            Weights::Tailored(tailoring, limit) => {
                if cp <= limit {
                    tailoring.weight(cp)
                } else {
                    OUTSIDE
                }
            }
            Weights::Charset(table) => table.weight(cp),
            Weights::Missing => cp,
        }
    }
}

/// The byte that encodes `cp` in the single-byte character set with upper half `high`.
fn single_byte(high: &[u32; 128], cp: u32) -> Option<u8> {
    if cp < 0x80 {
        return u8::try_from(cp).ok();
    }
    high.iter()
        .position(|&c| c == cp)
        .and_then(|k| u8::try_from(0x80 + k).ok())
}

/// One row of the collation list.
struct Info {
    id: u16,
    name: &'static str,
    charset: &'static str,
    pad_space: bool,
    weights: Weights,
}

/// A MySQL collation whose order this library reproduces exactly as Dolt compares keys.
///
/// Cheap to copy; two values are equal when their MySQL ids are.
#[derive(Clone, Copy)]
pub struct Collation(&'static Info);

/// A collation id or name this library cannot order by.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum CollationError {
    /// No collation Dolt accepts has this id.
    #[error("unknown collation id {0}: Dolt accepts no collation with this MySQL id")]
    UnknownId(u16),
    /// No collation Dolt accepts has this name.
    #[error("unknown collation name {0:?}: Dolt accepts no collation with this name")]
    UnknownName(String),
    /// Dolt accepts the collation, but its weights are not in this library yet.
    #[error("collation {name} (id {id}) is accepted by Dolt, but its weights are not implemented here yet")]
    NotImplemented {
        /// MySQL id.
        id: u16,
        /// MySQL name.
        name: &'static str,
    },
}

impl Collation {
    /// `utf8mb4_0900_bin`, which Dolt uses for string fields without a collation.
    pub const DEFAULT_ID: u16 = 309;

    /// The collation with MySQL id `id` (as stored in Dolt schemas). Id 0 ("unspecified") is
    /// Dolt's default, `utf8mb4_0900_bin`.
    ///
    /// Implemented: `binary`, `utf8mb4_0900_bin`, `utf8mb4_bin`, `utf8mb3_bin`, `utf16_bin`,
    /// `utf32_bin`, `ascii_bin`, `ascii_general_ci`, `latin1_bin`, `latin1_swedish_ci`,
    /// `latin1_german1_ci`, `latin7_bin`, `cp1257_bin`, `utf8mb4_0900_ai_ci`,
    /// `utf8mb4_0900_as_ci`, `utf8mb4_0900_as_cs`, the `general_ci`, `unicode_ci` and
    /// `unicode_520_ci` collations of utf8mb4, utf8mb3, utf16 and utf32,
    /// `utf8mb3_general_mysql500_ci`, `utf8mb3_tolower_ci`, the language tailorings of
    /// UCA 4.0.0 (`utf8mb4_swedish_ci`, `utf16_turkish_ci`, ...: 22 languages in all four
    /// Unicode character sets) and of UCA 9.0.0 (`utf8mb4_sv_0900_ai_ci`,
    /// `utf8mb4_ru_0900_as_cs`, `utf8mb4_da_0900_as_cs` with upper case first, ...: 21
    /// languages, both strengths), `utf8mb4_zh_0900_as_cs` (pinyin), and every other
    /// single-byte character set collation. The other collations Dolt accepts
    /// (`utf8mb4_ja_0900_as_cs` and `utf8mb4_ja_0900_as_cs_ks`) give
    /// [`CollationError::NotImplemented`] rather than a wrong order.
    pub fn from_id(id: u16) -> Result<Collation, CollationError> {
        let id = if id == 0 { Self::DEFAULT_ID } else { id };
        let info = registry::by_id(id).ok_or(CollationError::UnknownId(id))?;
        Self::implemented(info)
    }

    /// The collation named `name` (case-insensitive; the `utf8_` aliases of `utf8mb3_`
    /// collations are accepted, as in Dolt).
    pub fn from_name(name: &str) -> Result<Collation, CollationError> {
        let info =
            registry::by_name(name).ok_or_else(|| CollationError::UnknownName(name.to_owned()))?;
        Self::implemented(info)
    }

    fn implemented(info: &'static Info) -> Result<Collation, CollationError> {
        match info.weights {
            Weights::Missing => Err(CollationError::NotImplemented {
                id: info.id,
                name: info.name,
            }),
            _ => Ok(Collation(info)),
        }
    }

    /// Every collation this library implements, by id.
    pub fn all() -> impl Iterator<Item = Collation> {
        registry::ALL
            .iter()
            .filter_map(|info| Self::implemented(info).ok())
    }

    /// The MySQL id.
    pub fn id(self) -> u16 {
        self.0.id
    }

    /// The MySQL name, e.g. `utf8mb4_0900_ai_ci`.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// The MySQL character set, e.g. `utf8mb4`.
    pub fn charset(self) -> &'static str {
        self.0.charset
    }

    /// MySQL's pad attribute: `true` for PAD SPACE, `false` for NO PAD. Informational only:
    /// Dolt's key order does not trim or pad trailing spaces for either.
    pub fn pad_space(self) -> bool {
        self.0.pad_space
    }

    /// Whether the weights are the code points themselves, so that on valid UTF-8 the order
    /// is plain byte order (Dolt still weighs malformed bytes as U+FFFD; see
    /// [`Collation::compare`]).
    pub fn is_code_point_order(self) -> bool {
        matches!(self.0.weights, Weights::CodePoint)
    }

    /// The weight Dolt gives code point `cp` under this collation; only its order relative to
    /// other weights of the same collation means anything. Code points outside the collation's
    /// character set share the largest weight.
    pub fn weight(self, cp: char) -> u32 {
        self.0.weights.weight(u32::from(cp))
    }

    /// Orders two stored strings (UTF-8, without Dolt's terminator) exactly as Dolt's
    /// `CompareCollatedStrings` does; total over arbitrary bytes, never panics.
    #[inline]
    pub fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        match self.0.weights {
            Weights::CodePoint | Weights::Missing => collate(a, b, |cp| cp),
            Weights::Table(table, MAX_CP) => collate(a, b, |cp| table.weight(cp)),
            Weights::Table(table, limit) => collate(a, b, |cp| {
                if cp <= limit {
                    table.weight(cp)
                } else {
                    OUTSIDE
                }
            }),
            Weights::Tailored(tailoring, limit) => collate(a, b, |cp| {
                if cp <= limit {
                    tailoring.weight(cp)
                } else {
                    OUTSIDE
                }
            }),
            weights => collate(a, b, |cp| weights.weight(cp)),
        }
    }
}

impl Collation {
    /// Appends the sort key of stored string `s` to `out`: the weight of each code point (as
    /// [`Collation::compare`] decodes them) in four big-endian bytes. Two keys compare as
    /// bytes exactly as [`Collation::compare`] orders their strings, so an engine that knows
    /// nothing of collations sorts, groups, joins and compares text as Dolt does by using the
    /// keys in place of the text. (On malformed UTF-8, where Dolt's comparison steps each
    /// side back to a code point start separately, the two may disagree.)
    pub fn sort_key(self, s: &[u8], out: &mut Vec<u8>) {
        out.reserve(s.len() * 4);
        for cp in utf8::code_points(s) {
            out.extend_from_slice(&self.0.weights.weight(cp).to_be_bytes());
        }
    }
}

/// Dolt's collated comparison (module docs) with weight function `weight`.
#[inline(always)]
fn collate(a: &[u8], b: &[u8], weight: impl Fn(u32) -> u32) -> Ordering {
    let same = common_prefix(a, b);
    if same == a.len() || same == b.len() {
        return a.len().cmp(&b.len());
    }
    let (mut a, mut b) = (&a[rune_start(a, same)..], &b[rune_start(b, same)..]);
    while let (Some(&x), Some(&y)) = (a.first(), b.first()) {
        let (cx, nx, cy, ny) = if x < 0x80 && y < 0x80 {
            (u32::from(x), 1, u32::from(y), 1)
        } else {
            let (cx, nx) = utf8::decode(a);
            let (cy, ny) = utf8::decode(b);
            (cx, nx, cy, ny)
        };
        a = &a[nx..];
        b = &b[ny..];
        if cx != cy {
            let ord = weight(cx).cmp(&weight(cy));
            if ord != Ordering::Equal {
                return ord;
            }
            // Equal weights of different code points (case or accent differences) are
            // often followed by a long identical stretch: skip its ASCII part in one go.
            let same = same_ascii_prefix(a, b);
            a = &a[same..];
            b = &b[same..];
        }
    }
    a.len().cmp(&b.len())
}

/// Length of the common prefix of `a` and `b` made of ASCII bytes only. Decoding it would
/// give the same code points of length 1 on both sides, so it can be skipped without
/// changing the result.
#[inline(always)]
fn same_ascii_prefix(a: &[u8], b: &[u8]) -> usize {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let (Some(x), Some(y)) = (a[i..].first_chunk::<8>(), b[i..].first_chunk::<8>()) else {
            break;
        };
        let (x, y) = (u64::from_le_bytes(*x), u64::from_le_bytes(*y));
        if x != y || x & HIGH != 0 {
            break;
        }
        i += 8;
    }
    while i < n && a[i] == b[i] && a[i] < 0x80 {
        i += 1;
    }
    i
}

/// Length of the common byte prefix, eight bytes at a time.
#[inline(always)]
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let (Some(x), Some(y)) = (a[i..].first_chunk::<8>(), b[i..].first_chunk::<8>()) else {
            break;
        };
        let diff = u64::from_le_bytes(*x) ^ u64::from_le_bytes(*y);
        if diff != 0 {
            return i + (diff.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// Steps back from `at` to the nearest byte that is not a UTF-8 continuation byte (or 0).
#[inline(always)]
fn rune_start(s: &[u8], mut at: usize) -> usize {
    while at > 0 && !utf8::is_rune_start(s[at]) {
        at -= 1;
    }
    at
}

impl PartialEq for Collation {
    fn eq(&self, other: &Self) -> bool {
        self.0.id == other.0.id
    }
}

impl Eq for Collation {}

impl fmt::Debug for Collation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Collation({} = {})", self.0.name, self.0.id)
    }
}

impl fmt::Display for Collation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

#[cfg(test)]
mod tests;
