//! MySQL column types: the one parser of SQL type text (as Dolt stores it in schemas, and as
//! people write it), into [`SqlType`], which knows the type's storage [`Encoding`] and its
//! length limits.

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
    },
    /// SET, with the collation if given.
    Set {
        /// The members, in order.
        members: Vec<String>,
        /// `COLLATE` name, if the type text has one (see [`SqlType::collation`]).
        collation: Option<String>,
    },
    /// CHAR/VARCHAR/TEXT types (UTF-8 text), with the collation if given.
    Text {
        /// The base type name (`varchar(60)`, `longtext`…).
        base: String,
        /// `COLLATE` name, if the type text has one (see [`SqlType::collation`]).
        collation: Option<String>,
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
    /// GEOMETRY and subtypes (the type name).
    Geometry(String),
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
        // After the arguments, so that an ENUM member spelled `collate` is not taken for one.
        let suffix = lower.rfind(')').map_or(lower.as_str(), |at| &lower[at..]);
        let collation = suffix
            .split_whitespace()
            .skip_while(|w| *w != "collate")
            .nth(1)
            .map(str::to_string);
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
            },
            "set" => SqlType::Set {
                members: quoted_members(paren_args(text).unwrap_or("")),
                collation,
            },
            "char" | "varchar" | "tinytext" | "text" | "mediumtext" | "longtext" => SqlType::Text {
                base: base.to_string(),
                collation,
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
            | "multipolygon" | "geometrycollection" | "geomcollection" => {
                SqlType::Geometry(name.to_string())
            }
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
            SqlType::Geometry(name) => name,
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
            SqlType::Geometry(_) => E::GeomAdaptive,
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
        match self {
            SqlType::Text { collation, .. }
            | SqlType::Enum { collation, .. }
            | SqlType::Set { collation, .. } => Some(collation),
            _ => None,
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

    #[test]
    fn parses_stored_types() {
        assert_eq!(
            SqlType::parse("enum('red','gr''een','blue')"),
            SqlType::Enum {
                members: vec!["red".into(), "gr'een".into(), "blue".into()],
                collation: None
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
                collation: Some("utf8mb4_0900_ai_ci".into())
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
