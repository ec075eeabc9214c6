//! The field encodings of Dolt tuples (`serial.Encoding`), with their widths and classes.

/// How one tuple field is stored. The numeric values are Dolt's (`serial/encoding.fbs`) and are
/// what schemas and the golden vectors record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
#[non_exhaustive]
pub enum Encoding {
    /// Signed 8-bit integer (also BOOL).
    Int8 = 1,
    /// Unsigned 8-bit integer.
    Uint8 = 2,
    /// Signed 16-bit integer, little-endian.
    Int16 = 3,
    /// Unsigned 16-bit integer, little-endian.
    Uint16 = 4,
    /// Signed 32-bit integer, little-endian (also MEDIUMINT).
    Int32 = 7,
    /// Unsigned 32-bit integer, little-endian.
    Uint32 = 8,
    /// Signed 64-bit integer, little-endian.
    Int64 = 9,
    /// Unsigned 64-bit integer, little-endian (also BIT(n) columns).
    Uint64 = 10,
    /// IEEE-754 single, bits little-endian.
    Float32 = 11,
    /// IEEE-754 double, bits little-endian.
    Float64 = 12,
    /// 64-bit bit field, little-endian.
    Bit64 = 13,
    /// 16 raw bytes (keyless row ids).
    Hash128 = 14,
    /// One byte: `year - 1901`, or 255 for year 0.
    Year = 15,
    /// `year << 16 | month << 8 | day`, u32 little-endian; 0 is the zero date.
    Date = 16,
    /// Signed microseconds, i64 little-endian.
    Time = 17,
    /// Unix microseconds UTC, i64 little-endian (DATETIME and TIMESTAMP).
    Datetime = 18,
    /// 1-based enum member index, u16 little-endian (0 = empty).
    Enum = 19,
    /// Set member bitmask, u64 little-endian.
    Set = 20,
    /// Address of a blob tree holding bytes.
    BytesAddr = 21,
    /// Address of a commit.
    CommitAddr = 22,
    /// Address of a blob tree holding UTF-8 text.
    StringAddr = 23,
    /// Address of a JSON document tree (or plain blob tree).
    JsonAddr = 24,
    /// Spatial index cell: level byte + 16-byte Z-value.
    Cell = 25,
    /// Address of a blob tree holding serialized geometry.
    GeomAddr = 26,
    /// Address of a blob holding a handler-serialized value.
    ExtendedAddr = 27,
    /// UTF-8 text followed by a 0x00 terminator.
    String = 128,
    /// Raw bytes followed by a 0x00 terminator.
    Bytes = 129,
    /// Decimal: i32 LE exponent, sign byte, big-endian coefficient in 8-byte words.
    Decimal = 130,
    /// Legacy inline JSON text + 0x00.
    Json = 131,
    /// Legacy inline serialized geometry + 0x00.
    Geometry = 133,
    /// Handler-serialized bytes, no terminator.
    Extended = 134,
    /// Adaptive (inline or out-of-band) UTF-8 text.
    StringAdaptive = 135,
    /// Adaptive bytes (BLOB, VECTOR).
    BytesAdaptive = 136,
    /// Adaptive handler bytes.
    ExtendedAdaptive = 137,
    /// Adaptive serialized geometry.
    GeomAdaptive = 138,
    /// Adaptive JSON text.
    JsonAdaptive = 139,
}

/// Every encoding, in code order.
pub const ALL_ENCODINGS: [Encoding; 36] = [
    Encoding::Int8,
    Encoding::Uint8,
    Encoding::Int16,
    Encoding::Uint16,
    Encoding::Int32,
    Encoding::Uint32,
    Encoding::Int64,
    Encoding::Uint64,
    Encoding::Float32,
    Encoding::Float64,
    Encoding::Bit64,
    Encoding::Hash128,
    Encoding::Year,
    Encoding::Date,
    Encoding::Time,
    Encoding::Datetime,
    Encoding::Enum,
    Encoding::Set,
    Encoding::BytesAddr,
    Encoding::CommitAddr,
    Encoding::StringAddr,
    Encoding::JsonAddr,
    Encoding::Cell,
    Encoding::GeomAddr,
    Encoding::ExtendedAddr,
    Encoding::String,
    Encoding::Bytes,
    Encoding::Decimal,
    Encoding::Json,
    Encoding::Geometry,
    Encoding::Extended,
    Encoding::StringAdaptive,
    Encoding::BytesAdaptive,
    Encoding::ExtendedAdaptive,
    Encoding::GeomAdaptive,
    Encoding::JsonAdaptive,
];

impl Encoding {
    /// Dolt's numeric code.
    #[inline]
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The encoding with Dolt's numeric `code`, if there is one (0, 5, 6 and 132 are unused).
    pub fn from_code(code: u8) -> Option<Encoding> {
        ALL_ENCODINGS.iter().copied().find(|e| e.code() == code)
    }

    /// The lower-case name used by the golden vectors (`int64`, `string_adaptive`, ...).
    pub fn name(self) -> &'static str {
        use Encoding::*;
        match self {
            Int8 => "int8",
            Uint8 => "uint8",
            Int16 => "int16",
            Uint16 => "uint16",
            Int32 => "int32",
            Uint32 => "uint32",
            Int64 => "int64",
            Uint64 => "uint64",
            Float32 => "float32",
            Float64 => "float64",
            Bit64 => "bit64",
            Hash128 => "hash128",
            Year => "year",
            Date => "date",
            Time => "time",
            Datetime => "datetime",
            Enum => "enum",
            Set => "set",
            BytesAddr => "bytes_addr",
            CommitAddr => "commit_addr",
            StringAddr => "string_addr",
            JsonAddr => "json_addr",
            Cell => "cell",
            GeomAddr => "geom_addr",
            ExtendedAddr => "extended_addr",
            String => "string",
            Bytes => "bytes",
            Decimal => "decimal",
            Json => "json",
            Geometry => "geometry",
            Extended => "extended",
            StringAdaptive => "string_adaptive",
            BytesAdaptive => "bytes_adaptive",
            ExtendedAdaptive => "extended_adaptive",
            GeomAdaptive => "geom_adaptive",
            JsonAdaptive => "json_adaptive",
        }
    }

    /// Inverse of [`Encoding::name`].
    pub fn from_name(name: &str) -> Option<Encoding> {
        ALL_ENCODINGS.iter().copied().find(|e| e.name() == name)
    }

    /// The stored width of a fixed-width encoding; `None` for variable-width ones.
    #[inline]
    pub fn fixed_width(self) -> Option<usize> {
        use Encoding::*;
        Some(match self {
            Int8 | Uint8 | Year => 1,
            Int16 | Uint16 | Enum => 2,
            Int32 | Uint32 | Float32 | Date => 4,
            Int64 | Uint64 | Float64 | Bit64 | Time | Datetime | Set => 8,
            Hash128 => 16,
            Cell => 17,
            BytesAddr | CommitAddr | StringAddr | JsonAddr | GeomAddr | ExtendedAddr => 20,
            _ => return None,
        })
    }

    /// For the integer encodings, their width in bytes and whether they are signed (stored
    /// little-endian; callers that sort them as numbers flip the sign bit of signed ones).
    pub fn integer(self) -> Option<(usize, bool)> {
        Some(match self {
            Encoding::Int8 => (1, true),
            Encoding::Uint8 => (1, false),
            Encoding::Int16 => (2, true),
            Encoding::Uint16 => (2, false),
            Encoding::Int32 => (4, true),
            Encoding::Uint32 => (4, false),
            Encoding::Int64 => (8, true),
            Encoding::Uint64 => (8, false),
            _ => return None,
        })
    }

    /// A 20-byte chunk address field (`*Addr`).
    #[inline]
    pub fn is_address(self) -> bool {
        use Encoding::*;
        matches!(
            self,
            BytesAddr | CommitAddr | StringAddr | JsonAddr | GeomAddr | ExtendedAddr
        )
    }

    /// An address field whose non-zero values are listed in a leaf's `value_address_offsets`
    /// (every address encoding except `ExtendedAddr`, as in Dolt's `IterAddressFields`).
    #[inline]
    pub fn is_listed_address(self) -> bool {
        self.is_address() && self != Encoding::ExtendedAddr
    }

    /// An adaptive (inline or out-of-band) encoding.
    #[inline]
    pub fn is_adaptive(self) -> bool {
        use Encoding::*;
        matches!(
            self,
            StringAdaptive | BytesAdaptive | ExtendedAdaptive | GeomAdaptive | JsonAdaptive
        )
    }

    /// An encoding whose order belongs to an external type handler.
    #[inline]
    pub fn is_extended(self) -> bool {
        use Encoding::*;
        matches!(self, Extended | ExtendedAddr | ExtendedAdaptive)
    }
}

impl std::fmt::Display for Encoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_round_trip() {
        for e in ALL_ENCODINGS {
            assert_eq!(Encoding::from_code(e.code()), Some(e));
            assert_eq!(Encoding::from_name(e.name()), Some(e));
        }
        for unused in [0u8, 5, 6, 132, 140, 255] {
            assert_eq!(Encoding::from_code(unused), None);
        }
    }
}
