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
    /// ENUM members.
    Enum(Vec<String>),
    /// SET members.
    Set(Vec<String>),
    /// CHAR/VARCHAR/TEXT types (UTF-8 text), with the collation if given.
    Text {
        /// The base type name (`varchar(60)`, `longtext`…).
        base: String,
        /// `COLLATE` name, if the type text has one (default `utf8mb4_0900_bin`).
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
        let collation = lower
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
            "enum" => SqlType::Enum(quoted_members(paren_args(text).unwrap_or(""))),
            "set" => SqlType::Set(quoted_members(paren_args(text).unwrap_or(""))),
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
            SqlType::Enum(_) => "enum",
            SqlType::Set(_) => "set",
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
            SqlType::Enum(_) => E::Enum,
            SqlType::Set(_) => E::Set,
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stored_types() {
        assert_eq!(
            SqlType::parse("enum('red','gr''een','blue')"),
            SqlType::Enum(vec!["red".into(), "gr'een".into(), "blue".into()])
        );
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
    }
}
