//! MySQL column types: the one parser of SQL type text (as Dolt stores it in schemas, and as
//! people write it), into [`SqlType`], which knows the type's storage [`Encoding`], its
//! length limits, its character set, collation and SRID, and how Dolt prints it.

use crate::collation::{Collation, CollationError};
use crate::Encoding;

/// A column's SQL type, parsed from MySQL type text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SqlType {
    /// TINYINT … BIGINT (`bits` 8, 16, 24, 32, 64).
    Int {
        /// Width in bits.
        bits: u8,
        /// UNSIGNED.
        unsigned: bool,
    },
    /// FLOAT.
    Float,
    /// DOUBLE.
    Double,
    /// DECIMAL(precision, scale).
    Decimal {
        /// Total digits.
        precision: u8,
        /// Digits after the point.
        scale: u8,
    },
    /// BIT(n).
    Bit(u8),
    /// YEAR.
    Year,
    /// DATE.
    Date,
    /// TIME(fsp).
    Time(u8),
    /// DATETIME(fsp).
    Datetime(u8),
    /// TIMESTAMP(fsp).
    Timestamp(u8),
    /// ENUM, with the collation if given.
    Enum {
        /// The members, in order.
        members: Vec<String>,
        /// `COLLATE` name, if the type text has one (see [`SqlType::collation`]).
        collation: Option<String>,
        /// `CHARACTER SET` name, if the type text has one (see [`SqlType::charset`]).
        charset: Option<String>,
    },
    /// SET, with the collation if given.
    Set {
        /// The members, in order.
        members: Vec<String>,
        /// `COLLATE` name, if the type text has one (see [`SqlType::collation`]).
        collation: Option<String>,
        /// `CHARACTER SET` name, if the type text has one (see [`SqlType::charset`]).
        charset: Option<String>,
    },
    /// CHAR/VARCHAR/TEXT types (UTF-8 text), with the collation if given.
    Text {
        /// The base type name (`varchar(60)`, `longtext`…).
        base: String,
        /// `COLLATE` name, if the type text has one (see [`SqlType::collation`]).
        collation: Option<String>,
        /// `CHARACTER SET` name, if the type text has one (see [`SqlType::charset`]).
        charset: Option<String>,
    },
    /// BINARY/VARBINARY/BLOB types.
    Binary {
        /// The base type name.
        base: String,
        /// BINARY(n): the fixed width (values are zero-padded to it).
        fixed: Option<u32>,
    },
    /// JSON.
    Json,
    /// GEOMETRY and subtypes.
    Geometry {
        /// The type name as written (`point`, `geomcollection`).
        name: String,
        /// The `SRID n` attribute, if the type text has one.
        srid: Option<u32>,
    },
    /// VECTOR(n).
    Vector(u32),
    /// Anything else, kept as text.
    Other(String),
}

fn paren_args(s: &str) -> Option<&str> {
    let open = s.find('(')?;
    let close = s.rfind(')')?;
    s.get(open + 1..close)
}

fn first_num(s: &str) -> Option<u32> {
    paren_args(s)?.split(',').next()?.trim().parse().ok()
}

/// Splits `'a','b''c'` into members.
fn quoted_members(list: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = list.chars().peekable();
    let mut inside = false;
    while let Some(ch) = chars.next() {
        if inside {
            if ch == '\'' {
                if chars.peek() == Some(&'\'') {
                    cur.push('\'');
                    chars.next();
                } else {
                    inside = false;
                    out.push(std::mem::take(&mut cur));
                }
            } else if ch == '\\' {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            } else {
                cur.push(ch);
            }
        } else if ch == '\'' {
            inside = true;
        }
    }
    out
}

/// The largest number in `base`'s parentheses (`varchar(40)` → 40).
fn paren_limit(base: &str) -> Option<u64> {
    let base = base.split(' ').next().unwrap_or_default();
    let n = base.split_once('(')?.1.trim_end_matches(')');
    n.parse().ok()
}

/// The word after the words `keyword` (`collate`, `character set`) in lower-case type text
/// `lower`, looked for after its arguments: an ENUM member spelled `collate` is not one.
fn attribute(lower: &str, keyword: &[&str]) -> Option<String> {
    let tail = lower.rfind(')').map_or(lower, |at| &lower[at..]);
    let words: Vec<&str> = tail.split_whitespace().collect();
    let n = keyword.len();
    words
        .windows(n + 1)
        .find(|w| w[..n] == *keyword)
        .map(|w| w[n].to_string())
}

/// A spatial type's `SRID n` attribute in lower-case type text `lower`: `Ok(None)` without
/// one, `Err` when the words after the type name are not one.
fn srid_attribute(lower: &str) -> Result<Option<u32>, ()> {
    let mut words = lower.split_whitespace().skip(1);
    match (words.next(), words.next(), words.next()) {
        (None, _, _) => Ok(None),
        (Some("srid"), Some(n), None) => n.parse().map(Some).map_err(drop),
        _ => Err(()),
    }
}

/// `text` without its `CHARACTER SET` and `COLLATE` attributes (`varchar(40)`), as written.
fn base_text(text: &str) -> &str {
    let lower = text.to_ascii_lowercase();
    let tail = lower.rfind(')').unwrap_or(0);
    let cut = [" character set ", " collate "]
        .iter()
        .filter_map(|kw| lower[tail..].find(kw))
        .min()
        .map_or(text.len(), |at| tail + at);
    text[..cut].trim()
}

/// Why [`SqlType::parse_checked`] refuses a column's type text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TypeTextError {
    /// Its `COLLATE` names no collation this library orders by.
    #[error(transparent)]
    Collation(CollationError),
    /// `CHARACTER SET` names a set Dolt does not know (Dolt's words).
    #[error("Unknown character set: {0}")]
    UnknownCharset(String),
    /// `CHARACTER SET` and `COLLATE` disagree (Dolt's words).
    #[error("{charset} is not a valid character set for {collation}")]
    CharsetMismatch {
        /// The set named.
        charset: String,
        /// The collation named, of another set.
        collation: String,
    },
    /// `TIME(n)` with `n` other than 6: Dolt keeps TIME's microseconds and refuses any other
    /// fraction length (in its words).
    #[error("TIME length not yet supported")]
    TimeLength,
    /// `CHARACTER SET` on a type that holds no text (Dolt's words).
    #[error("Only character columns, enums, and sets can have a CHARACTER SET option")]
    CharsetOnNonText,
    /// `CHARACTER SET binary`, which MySQL turns into a binary type.
    #[error("CHARACTER SET binary: declare the binary type (BINARY, VARBINARY, BLOB) instead")]
    BinaryCharset,
    /// A spatial type's attribute is not `SRID n` with an SRID Dolt knows.
    #[error("{0}")]
    Srid(String),
}

/// The character set of collation `name` (the name itself when no collation this library
/// orders by has that name).
pub fn collation_charset(name: &str) -> &str {
    Collation::from_name(name).map_or(name, |c| c.charset())
}

/// Each character set Dolt accepts and the collation a column or table that names only the
/// set takes: the `Default collation` column of Dolt 2.3.1's `SHOW CHARACTER SET`.
const CHARSET_DEFAULTS: [(&str, &str); 14] = [
    ("armscii8", "armscii8_general_ci"),
    ("ascii", "ascii_general_ci"),
    ("binary", "binary"),
    ("cp1256", "cp1256_general_ci"),
    ("cp1257", "cp1257_general_ci"),
    ("dec8", "dec8_swedish_ci"),
    ("geostd8", "geostd8_general_ci"),
    ("latin1", "latin1_swedish_ci"),
    ("latin7", "latin7_general_ci"),
    ("swe7", "swe7_swedish_ci"),
    ("utf16", "utf16_general_ci"),
    ("utf32", "utf32_general_ci"),
    ("utf8mb3", "utf8mb3_general_ci"),
    ("utf8mb4", "utf8mb4_0900_ai_ci"),
];

/// Character set `name` (any letter case; `utf8` is `utf8mb3`'s other name) as Dolt names it,
/// with the collation a column or table naming only the set takes; `None` for a set Dolt
/// does not know.
pub fn charset_default(name: &str) -> Option<(&'static str, &'static str)> {
    let name = name.to_ascii_lowercase();
    let name = if name == "utf8" { "utf8mb3" } else { &name };
    CHARSET_DEFAULTS.iter().copied().find(|(cs, _)| *cs == name)
}

/// The collation of a text, ENUM or SET column whose type names none, as Dolt stores it.
pub const DEFAULT_COLLATION: &str = "utf8mb4_0900_bin";

/// The words a declared type may have besides its name and arguments.
const DECLARED_WORDS: [&str; 5] = ["unsigned", "signed", "zerofill", "precision", "varying"];

impl SqlType {
    /// Parses MySQL column-type text as Dolt stores it (`varchar(60) COLLATE x`,
    /// `bigint unsigned`, `enum('a','b')`); text it does not know is kept as
    /// [`SqlType::Other`].
    pub fn parse(text: &str) -> SqlType {
        let lower = text.to_ascii_lowercase();
        let base = lower.split_whitespace().next().unwrap_or("");
        let name = base.split('(').next().unwrap_or("");
        let unsigned = lower.contains(" unsigned");
        let collation = attribute(&lower, &["collate"]);
        let charset = attribute(&lower, &["character", "set"]);
        let fsp = || first_num(base).unwrap_or(0) as u8;
        match name {
            "tinyint" | "bool" | "boolean" => SqlType::Int { bits: 8, unsigned },
            "smallint" => SqlType::Int { bits: 16, unsigned },
            "mediumint" => SqlType::Int { bits: 24, unsigned },
            "int" | "integer" => SqlType::Int { bits: 32, unsigned },
            "bigint" => SqlType::Int { bits: 64, unsigned },
            "float" => SqlType::Float,
            "double" | "real" => SqlType::Double,
            "decimal" | "numeric" => {
                let args = paren_args(base).unwrap_or("10,0");
                let mut it = args.split(',').map(|p| p.trim().parse::<u8>().unwrap_or(0));
                let precision = it.next().unwrap_or(10);
                let scale = it.next().unwrap_or(0);
                SqlType::Decimal { precision, scale }
            }
            "bit" => SqlType::Bit(first_num(base).unwrap_or(1) as u8),
            "year" => SqlType::Year,
            "date" => SqlType::Date,
            "time" => SqlType::Time(fsp()),
            "datetime" => SqlType::Datetime(fsp()),
            "timestamp" => SqlType::Timestamp(fsp()),
            "enum" => SqlType::Enum {
                members: quoted_members(paren_args(text).unwrap_or("")),
                collation,
                charset,
            },
            "set" => SqlType::Set {
                members: quoted_members(paren_args(text).unwrap_or("")),
                collation,
                charset,
            },
            "char" | "varchar" | "tinytext" | "text" | "mediumtext" | "longtext" => SqlType::Text {
                base: base.to_string(),
                collation,
                charset,
            },
            "binary" => SqlType::Binary {
                base: base.to_string(),
                fixed: Some(first_num(base).unwrap_or(1)),
            },
            "varbinary" | "tinyblob" | "blob" | "mediumblob" | "longblob" => SqlType::Binary {
                base: base.to_string(),
                fixed: None,
            },
            "json" => SqlType::Json,
            "geometry" | "point" | "linestring" | "polygon" | "multipoint" | "multilinestring"
            | "multipolygon" | "geometrycollection" | "geomcollection" => SqlType::Geometry {
                name: name.to_string(),
                srid: srid_attribute(&lower).ok().flatten(),
            },
            "vector" => SqlType::Vector(first_num(base).unwrap_or(0)),
            _ => SqlType::Other(text.to_string()),
        }
    }

    /// Parses a type as people write it (`BIGINT UNSIGNED`, `DECIMAL(12, 4)`, `double
    /// precision`, `character varying(40)`, `dec`, `nvarchar(10)`), any case; `None` for text
    /// that is not a SQL type (an unknown name or word, UNSIGNED on a type that is not an
    /// integer).
    pub fn parse_declared(text: &str) -> Option<SqlType> {
        let text = text.trim();
        let lower = text.to_ascii_lowercase();
        let (head, args, after) = match lower.find('(') {
            Some(open) => {
                let close = lower.rfind(')')?;
                (
                    lower.get(..open)?.trim(),
                    text.get(open..=close)?,
                    lower.get(close + 1..)?.trim(),
                )
            }
            None => (lower.as_str(), "", ""),
        };
        let mut words = head.split_whitespace().chain(after.split_whitespace());
        let name = words.next()?;
        let (mut unsigned, mut varying) = (false, false);
        for w in words {
            if !DECLARED_WORDS.contains(&w) {
                return None;
            }
            unsigned |= w == "unsigned";
            varying |= w == "varying";
        }
        let name = match name {
            "dec" | "fixed" => "decimal",
            "character" | "nchar" | "char" if varying => "varchar",
            "character" | "nchar" => "char",
            "nvarchar" => "varchar",
            n => n,
        };
        // Stored type text has no spaces in its arguments (ENUM and SET members aside).
        let args: String = match name {
            "enum" | "set" => args.to_string(),
            _ => args.split_whitespace().collect(),
        };
        let t = SqlType::parse(&format!("{name}{args}"));
        match t {
            SqlType::Other(_) => None,
            SqlType::Int { bits, .. } => Some(SqlType::Int { bits, unsigned }),
            _ if unsigned => None,
            t => Some(t),
        }
    }

    /// The base type name, lower case (`varchar`, `int`, `point`); `None` for
    /// [`SqlType::Other`].
    pub fn name(&self) -> Option<&str> {
        Some(match self {
            SqlType::Int { bits, .. } => match bits {
                8 => "tinyint",
                16 => "smallint",
                24 => "mediumint",
                32 => "int",
                _ => "bigint",
            },
            SqlType::Float => "float",
            SqlType::Double => "double",
            SqlType::Decimal { .. } => "decimal",
            SqlType::Bit(_) => "bit",
            SqlType::Year => "year",
            SqlType::Date => "date",
            SqlType::Time(_) => "time",
            SqlType::Datetime(_) => "datetime",
            SqlType::Timestamp(_) => "timestamp",
            SqlType::Enum { .. } => "enum",
            SqlType::Set { .. } => "set",
            SqlType::Text { base, .. } | SqlType::Binary { base, .. } => {
                base.split('(').next().unwrap_or_default()
            }
            SqlType::Json => "json",
            SqlType::Geometry { name, .. } => name,
            SqlType::Vector(_) => "vector",
            SqlType::Other(_) => return None,
        })
    }

    /// The encoding Dolt stores the type in (in value tuples; see [`Encoding`] for keys);
    /// `None` for [`SqlType::Other`].
    pub fn encoding(&self) -> Option<Encoding> {
        use Encoding as E;
        let int = |unsigned: bool, signed: E, uns: E| if unsigned { uns } else { signed };
        Some(match self {
            SqlType::Int { bits, unsigned } => match bits {
                8 => int(*unsigned, E::Int8, E::Uint8),
                16 => int(*unsigned, E::Int16, E::Uint16),
                24 | 32 => int(*unsigned, E::Int32, E::Uint32),
                _ => int(*unsigned, E::Int64, E::Uint64),
            },
            SqlType::Float => E::Float32,
            SqlType::Double => E::Float64,
            SqlType::Decimal { .. } => E::Decimal,
            SqlType::Bit(_) => E::Uint64,
            SqlType::Year => E::Year,
            SqlType::Date => E::Date,
            SqlType::Time(_) => E::Time,
            SqlType::Datetime(_) | SqlType::Timestamp(_) => E::Datetime,
            SqlType::Enum { .. } => E::Enum,
            SqlType::Set { .. } => E::Set,
            SqlType::Text { .. } if self.is_lob() => E::StringAdaptive,
            SqlType::Text { .. } => E::String,
            SqlType::Binary { .. } if self.is_lob() => E::BytesAdaptive,
            SqlType::Binary { .. } => E::Bytes,
            SqlType::Json => E::JsonAdaptive,
            SqlType::Geometry { .. } => E::GeomAdaptive,
            SqlType::Vector(_) => E::BytesAdaptive,
            SqlType::Other(_) => return None,
        })
    }

    /// A TEXT or BLOB type (`tinytext` … `longblob`): stored out of line when large, and
    /// indexed only through a prefix.
    pub fn is_lob(&self) -> bool {
        matches!(
            self.name(),
            Some(
                "tinytext"
                    | "text"
                    | "mediumtext"
                    | "longtext"
                    | "tinyblob"
                    | "blob"
                    | "mediumblob"
                    | "longblob"
            )
        )
    }

    /// For a text type: the most text a value may hold (`None`: no limit the writer checks),
    /// and whether that is counted in bytes (the TEXT types) rather than characters.
    /// `None` for other types.
    pub fn text_limit(&self) -> Option<(Option<u64>, bool)> {
        let SqlType::Text { base, .. } = self else {
            return None;
        };
        let max = match self.name()? {
            "tinytext" => Some(255),
            "text" => Some(65_535),
            "mediumtext" => Some(16_777_215),
            "longtext" => None,
            _ => paren_limit(base),
        };
        Some((max, base.contains("text")))
    }

    /// The fraction digits a DATETIME or TIMESTAMP keeps; 6 for every other type (Dolt keeps
    /// a TIME's microseconds whatever its type says).
    pub fn fsp(&self) -> u8 {
        match self {
            SqlType::Datetime(f) | SqlType::Timestamp(f) => *f,
            _ => 6,
        }
    }

    /// For a binary type: the most bytes a value may hold (`None`: no limit the writer
    /// checks, or not a binary type).
    pub fn byte_limit(&self) -> Option<u64> {
        let SqlType::Binary { base, .. } = self else {
            return None;
        };
        match self.name()? {
            "tinyblob" => Some(255),
            "blob" => Some(65_535),
            "mediumblob" => Some(16_777_215),
            "longblob" => None,
            _ => paren_limit(base),
        }
    }

    /// The collation a text, ENUM or SET type's values are in: the one its text names, else
    /// [`DEFAULT_COLLATION`] (Dolt stores a column in that one naming none); `None` for other
    /// types.
    pub fn collation(&self) -> Option<&str> {
        self.collation_field()
            .map(|c| c.as_deref().unwrap_or(DEFAULT_COLLATION))
    }

    /// The collation the type text names (`COLLATE x`), if any.
    pub fn named_collation(&self) -> Option<&str> {
        self.collation_field()?.as_deref()
    }

    fn collation_field(&self) -> Option<&Option<String>> {
        self.text_attributes().map(|(collation, _)| collation)
    }

    /// A text, ENUM or SET type's `COLLATE` and `CHARACTER SET` names.
    fn text_attributes(&self) -> Option<(&Option<String>, &Option<String>)> {
        match self {
            SqlType::Text {
                collation, charset, ..
            }
            | SqlType::Enum {
                collation, charset, ..
            }
            | SqlType::Set {
                collation, charset, ..
            } => Some((collation, charset)),
            _ => None,
        }
    }

    /// The character set a text, ENUM or SET type's values are in: the one its text names,
    /// else its collation's; `None` for other types.
    pub fn charset(&self) -> Option<&str> {
        let (_, named) = self.text_attributes()?;
        let collation = self.collation()?;
        Some(
            named
                .as_deref()
                .unwrap_or_else(|| collation_charset(collation)),
        )
    }

    /// The most bytes one character of the type's character set takes (4, utf8mb4's, for a
    /// type that is not text).
    pub fn max_char_bytes(&self) -> u64 {
        match self.charset().unwrap_or("utf8mb4") {
            "utf8mb4" | "utf16" | "utf32" => 4,
            "utf8mb3" | "utf8" => 3,
            "ucs2" => 2,
            _ => 1,
        }
    }

    /// A spatial type's SRID attribute (`point SRID 4326` → 4326), if it has one.
    pub fn srid(&self) -> Option<u32> {
        match self {
            SqlType::Geometry { srid, .. } => *srid,
            _ => None,
        }
    }

    /// Parses a column's type text as a table definition declares it (`varchar(40) COLLATE
    /// x`, `char(3) CHARACTER SET latin1`, `point SRID 4326`), refusing what the writer cannot
    /// store as Dolt does: a collation it does not order by, a character set Dolt does not
    /// know or that is not the collation's, a spatial attribute other than `SRID n` or an
    /// SRID Dolt does not know. A `CHARACTER SET` without `COLLATE` takes the set's default
    /// collation, as in Dolt, and the type names both.
    pub fn parse_checked(text: &str) -> Result<SqlType, TypeTextError> {
        let text = text.trim();
        let lower = text.to_ascii_lowercase();
        let collation = attribute(&lower, &["collate"])
            .map(|c| Collation::from_name(&c).map_err(TypeTextError::Collation))
            .transpose()?;
        let mut ty = SqlType::parse(text);
        if matches!(ty, SqlType::Time(fsp) if fsp != 6) && base_text(text).contains('(') {
            return Err(TypeTextError::TimeLength);
        }
        if let Some(named) = attribute(&lower, &["character", "set"]) {
            if ty.text_attributes().is_none() {
                return Err(TypeTextError::CharsetOnNonText);
            }
            let (charset, default) =
                charset_default(&named).ok_or(TypeTextError::UnknownCharset(named))?;
            let collation = match collation {
                Some(c) if c.charset() != charset => {
                    return Err(TypeTextError::CharsetMismatch {
                        charset: charset.to_string(),
                        collation: c.name().to_string(),
                    })
                }
                Some(c) => c.name(),
                None if charset == "binary" => return Err(TypeTextError::BinaryCharset),
                None => default,
            };
            ty = SqlType::parse(&format!(
                "{} CHARACTER SET {charset} COLLATE {collation}",
                base_text(text)
            ));
        }
        if let SqlType::Geometry { .. } = ty {
            let srid = srid_attribute(&lower)
                .map_err(|()| TypeTextError::Srid("SRID n expected after the type name".into()))?;
            if let Some(n) = srid {
                crate::geometry_srids::check_srid(n).map_err(TypeTextError::Srid)?;
            }
        }
        Ok(ty)
    }

    /// The type text Dolt stores for a column of this type declared as `declared`
    /// (`sqlTypeString`), in a table of collation `table_collation`: DATETIME and TIMESTAMP
    /// with their precision, a spatial type as `name SRID n`, a text, ENUM or SET type with
    /// ` CHARACTER SET x` when its collation (its own, else the table's) is not utf8mb4's and
    /// ` COLLATE y` when it is not [`DEFAULT_COLLATION`]; other types as declared.
    pub fn stored_text(&self, declared: &str, table_collation: Collation) -> String {
        let mut text = self.text_without_attributes(declared, true);
        if let Some(n) = self.srid() {
            text.push_str(&format!(" SRID {n}"));
        }
        if self.collation().is_some() {
            let c = self
                .named_collation()
                .and_then(|n| Collation::from_name(n).ok())
                .unwrap_or(table_collation);
            if c.charset() != "utf8mb4" {
                text.push_str(" CHARACTER SET ");
                text.push_str(c.charset());
            }
            if c.name() != DEFAULT_COLLATION {
                text.push_str(" COLLATE ");
                text.push_str(c.name());
            }
        }
        text
    }

    /// The type as `SHOW CREATE TABLE` prints a column of stored type text `stored` in a
    /// table of collation `table_collation`: DATETIME and TIMESTAMP without a `(0)`, a
    /// spatial type without its SRID (printed later in the line, see [`SqlType::srid`]),
    /// `CHARACTER SET` only where the column's differs from the table's and `COLLATE` only
    /// where the collation does.
    pub fn shown_text(&self, stored: &str, table_collation: &str) -> String {
        let mut text = self.text_without_attributes(stored, false);
        if let (Some(coll), Some(cs)) = (self.collation(), self.charset()) {
            if !cs.eq_ignore_ascii_case(collation_charset(table_collation)) {
                text.push_str(" CHARACTER SET ");
                text.push_str(cs);
            }
            if !coll.eq_ignore_ascii_case(table_collation) {
                text.push_str(" COLLATE ");
                text.push_str(coll);
            }
        }
        text
    }

    /// `text` without its `CHARACTER SET`, `COLLATE` and `SRID` attributes; a DATETIME or
    /// TIMESTAMP with its precision, spelled out when 0 only if `zero_fsp`.
    fn text_without_attributes(&self, text: &str, zero_fsp: bool) -> String {
        let name = self.name().unwrap_or_default();
        match self {
            SqlType::Datetime(0) | SqlType::Timestamp(0) if !zero_fsp => name.to_string(),
            SqlType::Datetime(f) | SqlType::Timestamp(f) => format!("{name}({f})"),
            SqlType::Geometry { .. } => name.to_string(),
            _ => base_text(text).to_string(),
        }
    }

    /// The length a CHAR, VARCHAR, BINARY or VARBINARY is declared with (`varchar(40)` → 40).
    pub fn length(&self) -> Option<u64> {
        let (SqlType::Text { base, .. } | SqlType::Binary { base, .. }) = self else {
            return None;
        };
        let sized = matches!(self.name()?, "char" | "varchar" | "binary" | "varbinary");
        sized.then(|| paren_limit(base)).flatten()
    }

    /// Whether `other` is the same type, its collation named or left to the default.
    pub fn same_type(&self, other: &SqlType) -> bool {
        use SqlType as T;
        let same = match (self, other) {
            (T::Text { base: a, .. }, T::Text { base: b, .. }) => a == b,
            (T::Enum { members: a, .. }, T::Enum { members: b, .. })
            | (T::Set { members: a, .. }, T::Set { members: b, .. }) => a == b,
            _ => return self == other,
        };
        same && self.collation() == other.collation()
    }

    /// Whether `to` is this CHAR, VARCHAR, BINARY or VARBINARY made no shorter, in the same
    /// collation: a change that keeps every stored value as it is.
    pub fn lengthened_to(&self, to: &SqlType) -> bool {
        self.name() == to.name()
            && self.collation() == to.collation()
            && matches!((self.length(), to.length()), (Some(a), Some(b)) if b >= a)
    }

    /// Whether text `s` fits a text type's length (in characters, or bytes for the TEXT
    /// types); `Err` says why not, naming the type as `shown`. Other types take any text.
    pub fn check_text(&self, s: &str, shown: &str) -> Result<(), String> {
        let Some((Some(max), in_bytes)) = self.text_limit() else {
            return Ok(());
        };
        let len = if in_bytes {
            s.len() as u64
        } else {
            s.chars().count() as u64
        };
        if len <= max {
            return Ok(());
        }
        let unit = if in_bytes { "bytes" } else { "characters" };
        Err(format!(
            "{len} {unit} is longer than {shown} allows ({max})"
        ))
    }

    /// Whether `b` fits a binary type's length; `Err` says why not, naming the type as
    /// `shown`. Other types take any bytes.
    pub fn check_bytes(&self, b: &[u8], shown: &str) -> Result<(), String> {
        match self.byte_limit() {
            Some(max) if b.len() as u64 > max => Err(format!(
                "{} bytes is longer than {shown} allows ({max})",
                b.len()
            )),
            _ => Ok(()),
        }
    }

    /// Whether `x` fits a BIT(n)'s bits; `Err` says why not, naming the type as `shown`.
    /// Other types take any number here (their ranges are checked as they are encoded).
    pub fn check_bits(&self, x: u64, shown: &str) -> Result<(), String> {
        match self {
            SqlType::Bit(n) if *n < 64 && x >> n != 0 => Err(format!("{x} does not fit {shown}")),
            _ => Ok(()),
        }
    }

    /// The values an integer type holds, as MySQL checks them (`None` for other types):
    /// MEDIUMINT's 24 bits, though Dolt stores it in 32.
    pub fn int_range(&self) -> Option<(i128, i128)> {
        let SqlType::Int { bits, unsigned } = self else {
            return None;
        };
        let bits = u32::from(*bits);
        Some(if *unsigned {
            (0, (1i128 << bits) - 1)
        } else {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        })
    }

    /// Whether decimal text `d`, rounded to a DECIMAL's scale, has no more whole digits than
    /// its precision leaves; `Err` says why not (or that `d` is no decimal), naming the type
    /// as `shown`. Other types take any decimal here.
    pub fn check_decimal(&self, d: &str, shown: &str) -> Result<(), String> {
        let SqlType::Decimal { precision, scale } = self else {
            return Ok(());
        };
        let scaled = crate::value_parse::decimal_at_scale(d, *scale)?;
        let whole = scaled
            .trim_start_matches('-')
            .split('.')
            .next()
            .unwrap_or("");
        let whole = whole.trim_start_matches('0');
        if whole.len() > usize::from(precision.saturating_sub(*scale)) {
            return Err(format!("{d} is out of range for {shown}"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Stored type text comes from chunks: any text parses, and every reading and printing
        /// of the parsed type returns (no slicing past a boundary, no panic).
        #[test]
        fn any_type_text_reads_and_prints(text in "[a-zA-Z0-9 ()',é_]{0,40}( (COLLATE|collate|CHARACTER SET|SRID|character set) [a-z0-9_é]{0,12}){0,3}") {
            let bin = Collation::from_name(DEFAULT_COLLATION).unwrap();
            for ty in [Some(SqlType::parse(&text)), SqlType::parse_checked(&text).ok()].into_iter().flatten() {
                let _ = (ty.name(), ty.encoding(), ty.collation(), ty.charset(), ty.srid());
                let _ = (ty.length(), ty.max_char_bytes(), ty.same_type(&ty));
                let _ = ty.stored_text(&text, bin);
                let _ = ty.shown_text(&text, DEFAULT_COLLATION);
            }
        }
    }

    #[test]
    fn parses_stored_types() {
        assert_eq!(
            SqlType::parse("enum('red','gr''een','blue')"),
            SqlType::Enum {
                members: vec!["red".into(), "gr'een".into(), "blue".into()],
                collation: None,
                charset: None
            }
        );
        let e = SqlType::parse("enum('a collate b','c') COLLATE utf8mb4_0900_ai_ci");
        assert_eq!(e.named_collation(), Some("utf8mb4_0900_ai_ci"));
        let e = SqlType::parse("set('a collate b','c')");
        assert_eq!(e.named_collation(), None);
        assert_eq!(e.collation(), Some(DEFAULT_COLLATION));
        assert_eq!(SqlType::parse("int").collation(), None);
        assert_eq!(
            SqlType::parse("decimal(12,4)"),
            SqlType::Decimal {
                precision: 12,
                scale: 4
            }
        );
        assert_eq!(SqlType::parse("datetime(6)"), SqlType::Datetime(6));
        assert_eq!(
            SqlType::parse("bigint unsigned"),
            SqlType::Int {
                bits: 64,
                unsigned: true
            }
        );
        assert_eq!(
            SqlType::parse("varchar(60) COLLATE utf8mb4_0900_ai_ci"),
            SqlType::Text {
                base: "varchar(60)".into(),
                collation: Some("utf8mb4_0900_ai_ci".into()),
                charset: None
            }
        );
    }

    #[test]
    fn declared_types_and_their_encodings() {
        let enc = |t: &str| SqlType::parse_declared(t).and_then(|t| t.encoding());
        assert_eq!(enc("BIGINT UNSIGNED"), Some(Encoding::Uint64));
        assert_eq!(enc("mediumint"), Some(Encoding::Int32));
        assert_eq!(enc("DECIMAL(12, 4)"), Some(Encoding::Decimal));
        assert_eq!(enc("double precision"), Some(Encoding::Float64));
        assert_eq!(enc("character varying(40)"), Some(Encoding::String));
        assert_eq!(enc("nchar(3)"), Some(Encoding::String));
        assert_eq!(enc("text"), Some(Encoding::StringAdaptive));
        assert_eq!(enc("varbinary(8)"), Some(Encoding::Bytes));
        assert_eq!(enc("vector(3)"), Some(Encoding::BytesAdaptive));
        assert_eq!(enc("geomcollection"), Some(Encoding::GeomAdaptive));
        assert_eq!(enc("bit(3) unsigned"), None);
        assert_eq!(enc("int frob"), None);
        assert_eq!(enc("frob"), None);
        assert_eq!(
            SqlType::parse_declared("DECIMAL(12, 4)"),
            Some(SqlType::Decimal {
                precision: 12,
                scale: 4
            })
        );
    }

    #[test]
    fn limits() {
        let t = |s: &str| SqlType::parse(s);
        assert_eq!(t("varchar(40)").text_limit(), Some((Some(40), false)));
        assert_eq!(t("text").text_limit(), Some((Some(65_535), true)));
        assert_eq!(t("longtext").text_limit(), Some((None, true)));
        assert_eq!(t("blob").byte_limit(), Some(65_535));
        assert_eq!(t("varbinary(9)").byte_limit(), Some(9));
        assert_eq!(t("int").text_limit(), None);
        assert!(t("mediumblob").is_lob() && !t("varchar(3)").is_lob());
        assert_eq!(
            t("varchar(3)").check_text("abcd", "v"),
            Err("4 characters is longer than v allows (3)".into())
        );
        assert_eq!(
            t("tinytext").check_text(&"é".repeat(128), "v"),
            Err("256 bytes is longer than v allows (255)".into())
        );
        assert_eq!(t("longtext").check_text("abcd", "v"), Ok(()));
        assert_eq!(
            t("binary(2)").check_bytes(b"abc", "b"),
            Err("3 bytes is longer than b allows (2)".into())
        );
        assert_eq!(
            t("bit(3)").check_bits(8, "b"),
            Err("8 does not fit b".into())
        );
        assert_eq!(t("bit(64)").check_bits(u64::MAX, "b"), Ok(()));
        let d = t("decimal(4,2)");
        assert_eq!(d.check_decimal("99.994", "d"), Ok(()));
        assert_eq!(
            d.check_decimal("99.995", "d"),
            Err("99.995 is out of range for d".into())
        );
        assert!(d.check_decimal("x", "d").is_err());
    }

    #[test]
    fn attributes_and_printing() {
        let t = |s: &str| SqlType::parse(s);
        let latin = t("varchar(9) CHARACTER SET latin1 COLLATE latin1_swedish_ci");
        assert_eq!(latin.charset(), Some("latin1"));
        assert_eq!(latin.max_char_bytes(), 1);
        assert_eq!(t("text").charset(), Some("utf8mb4"));
        assert_eq!(t("int").charset(), None);
        assert_eq!(t("point SRID 4326").srid(), Some(4326));
        assert_eq!(t("point").srid(), None);
        let bin = "utf8mb4_0900_bin";
        assert_eq!(
            latin.shown_text(
                "varchar(9) CHARACTER SET latin1 COLLATE latin1_swedish_ci",
                bin
            ),
            "varchar(9) CHARACTER SET latin1 COLLATE latin1_swedish_ci"
        );
        assert_eq!(
            latin.shown_text("varchar(9) CHARACTER SET latin1", "latin1_swedish_ci"),
            "varchar(9)"
        );
        assert_eq!(
            t("text").shown_text("text", "latin1_bin"),
            "text CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_bin"
        );
        assert_eq!(t("datetime(0)").shown_text("datetime(0)", bin), "datetime");
        assert_eq!(
            t("datetime(3)").shown_text("datetime(3)", bin),
            "datetime(3)"
        );
        assert_eq!(t("point SRID 0").shown_text("point SRID 0", bin), "point");
        let e = "enum('a collate b') COLLATE utf8mb4_0900_ai_ci";
        assert_eq!(t(e).shown_text(e, bin), e);
        // A set without a collation takes the set's default (Dolt's SHOW CHARACTER SET).
        let latin = SqlType::parse_checked("varchar(3) character set latin1").unwrap();
        assert_eq!(latin.collation(), Some("latin1_swedish_ci"));
        assert_eq!(latin.charset(), Some("latin1"));
        let utf8 = SqlType::parse_checked("char(3) CHARACTER SET UTF8").unwrap();
        assert_eq!(utf8.collation(), Some("utf8mb3_general_ci"));
        assert_eq!(utf8.charset(), Some("utf8mb3"));
        assert_eq!(
            SqlType::parse_checked("text character set utf8mb4")
                .unwrap()
                .collation(),
            Some("utf8mb4_0900_ai_ci")
        );
        assert_eq!(
            SqlType::parse_checked("varchar(3) character set nope"),
            Err(TypeTextError::UnknownCharset("nope".into()))
        );
        assert_eq!(
            SqlType::parse_checked("varchar(3) character set latin1 collate utf8mb4_bin")
                .unwrap_err()
                .to_string(),
            "latin1 is not a valid character set for utf8mb4_bin"
        );
        assert_eq!(
            SqlType::parse_checked("int CHARACTER SET latin1"),
            Err(TypeTextError::CharsetOnNonText)
        );
        assert_eq!(
            SqlType::parse_checked("varbinary(5) character set latin1"),
            Err(TypeTextError::CharsetOnNonText)
        );
        assert_eq!(
            SqlType::parse_checked("time(2)"),
            Err(TypeTextError::TimeLength)
        );
        assert!(SqlType::parse_checked("time").is_ok());
        assert!(SqlType::parse_checked("time(6)").is_ok());
        assert!(SqlType::parse_checked("time(0)").is_err());
        assert_eq!(
            SqlType::parse_checked("varchar(3) character set binary"),
            Err(TypeTextError::BinaryCharset)
        );
        assert!(SqlType::parse_checked("point SRID 4326 x").is_err());
        assert!(SqlType::parse_checked("text COLLATE LATIN1_BIN").is_ok());
    }

    #[test]
    fn type_changes() {
        let t = |s: &str| SqlType::parse(s);
        assert_eq!(t("char(5)").length(), Some(5));
        assert_eq!(t("varbinary(9)").length(), Some(9));
        assert_eq!(t("text").length(), None);
        assert!(t("varchar(5)").same_type(&t("VARCHAR(5) COLLATE utf8mb4_0900_bin")));
        assert!(!t("varchar(5)").same_type(&t("varchar(5) COLLATE utf8mb4_0900_ai_ci")));
        assert!(!t("enum('a')").same_type(&t("enum('a') COLLATE utf8mb4_0900_ai_ci")));
        assert!(t("varchar(5)").lengthened_to(&t("varchar(5)")));
        assert!(t("varchar(5)").lengthened_to(&t("varchar(9)")));
        assert!(!t("varchar(9)").lengthened_to(&t("varchar(5)")));
        assert!(!t("varchar(5)").lengthened_to(&t("varchar(9) COLLATE utf8mb4_0900_ai_ci")));
        assert!(!t("varchar(5)").lengthened_to(&t("char(9)")));
    }
}
