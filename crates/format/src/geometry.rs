//! Dolt's stored geometry values (SRID u32 little-endian, then WKB) as MySQL's WKT text
//! (`ST_AsText`), with geographic SRID 4326 printed latitude first like MySQL; and values to
//! store, from WKT (as `ST_GeomFromText` reads it) or from SRID + WKB bytes (as `dolt table
//! import` takes them), in the form Dolt stores (always little-endian), checked against a
//! column's type and SRID as Dolt's SQL engine checks them.

use crate::geometry_srids::check_srid;
pub use crate::geometry_srids::srid_supported;
use crate::sql_type::SqlType;

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
    little: bool,
}

impl Reader<'_> {
    fn u32(&mut self) -> Option<u32> {
        let s: [u8; 4] = self.b.get(self.pos..self.pos + 4)?.try_into().ok()?;
        self.pos += 4;
        Some(if self.little {
            u32::from_le_bytes(s)
        } else {
            u32::from_be_bytes(s)
        })
    }
    fn f64(&mut self) -> Option<f64> {
        let s: [u8; 8] = self.b.get(self.pos..self.pos + 8)?.try_into().ok()?;
        self.pos += 8;
        Some(if self.little {
            f64::from_le_bytes(s)
        } else {
            f64::from_be_bytes(s)
        })
    }
    fn byte_order(&mut self) -> Option<()> {
        let o = *self.b.get(self.pos)?;
        self.pos += 1;
        self.little = o == 1;
        Some(())
    }
}

fn num(v: f64) -> String {
    let mut out = Vec::with_capacity(24);
    crate::value_text::write_f64(&mut out, v);
    String::from_utf8_lossy(&out).into_owned()
}

fn point(r: &mut Reader<'_>, swap: bool) -> Option<String> {
    let x = r.f64()?;
    let y = r.f64()?;
    let (a, b) = if swap { (y, x) } else { (x, y) };
    Some(format!("{} {}", num(a), num(b)))
}

fn points(r: &mut Reader<'_>, swap: bool) -> Option<String> {
    let n = r.u32()?;
    let mut v = Vec::new();
    for _ in 0..n {
        v.push(point(r, swap)?);
    }
    Some(v.join(","))
}

fn body(r: &mut Reader<'_>, swap: bool, depth: usize) -> Option<String> {
    if depth > 16 {
        return None;
    }
    r.byte_order()?;
    let kind = r.u32()?;
    Some(match kind {
        1 => format!("POINT({})", point(r, swap)?),
        2 => format!("LINESTRING({})", points(r, swap)?),
        3 => {
            let n = r.u32()?;
            let mut rings = Vec::new();
            for _ in 0..n {
                rings.push(format!("({})", points(r, swap)?));
            }
            format!("POLYGON({})", rings.join(","))
        }
        4..=7 => {
            let n = r.u32()?;
            let mut parts = Vec::new();
            for _ in 0..n {
                let inner = body(r, swap, depth + 1)?;
                // Members of MULTI* print without their type name.
                let stripped = if kind == 7 {
                    inner
                } else {
                    inner
                        .trim_start_matches(|c: char| c.is_ascii_uppercase())
                        .to_string()
                };
                parts.push(stripped);
            }
            let name = [
                "MULTIPOINT",
                "MULTILINESTRING",
                "MULTIPOLYGON",
                "GEOMETRYCOLLECTION",
            ]
            .get(kind as usize - 4)
            .copied()
            .unwrap_or("");
            format!("{name}({})", parts.join(","))
        }
        _ => return None,
    })
}

/// The WKT text of a stored geometry (SRID prefix + WKB), or `None` if malformed.
pub fn wkt(stored: &[u8]) -> Option<String> {
    let srid = u32::from_le_bytes(stored.get(..4)?.try_into().ok()?);
    let mut r = Reader {
        b: stored,
        pos: 4,
        little: true,
    };
    body(&mut r, srid == 4326, 0)
}

/// WKB type ids, 1..=7, as the names Dolt stores for the column types.
const TYPE_NAMES: [&str; 7] = [
    "point",
    "linestring",
    "polygon",
    "multipoint",
    "multilinestring",
    "multipolygon",
    "geometrycollection",
];

/// The geographic SRID whose WKT gives latitude first (stored x is the longitude).
const GEOGRAPHIC: u32 = 4326;

/// Deepest nesting of geometry collections read (Dolt has no limit; this keeps the stack
/// bounded on hostile input).
const MAX_DEPTH: usize = 64;

type Pt = [f64; 2];
/// A polygon's rings.
type Rings = Vec<Vec<Pt>>;

/// A geometry value, points as stored (x, y).
#[derive(Clone, Debug, PartialEq)]
enum Geom {
    Point(Pt),
    Line(Vec<Pt>),
    Poly(Vec<Vec<Pt>>),
    MPoint(Vec<Pt>),
    MLine(Vec<Vec<Pt>>),
    MPoly(Vec<Rings>),
    Coll(Vec<Geom>),
}

impl Geom {
    fn type_id(&self) -> u32 {
        match self {
            Geom::Point(_) => 1,
            Geom::Line(_) => 2,
            Geom::Poly(_) => 3,
            Geom::MPoint(_) => 4,
            Geom::MLine(_) => 5,
            Geom::MPoly(_) => 6,
            Geom::Coll(_) => 7,
        }
    }

    /// Writes the WKB body (after the type header), little-endian, as Dolt serializes it.
    fn write_data(&self, out: &mut Vec<u8>) {
        fn pt(out: &mut Vec<u8>, p: &Pt) {
            out.extend_from_slice(&p[0].to_le_bytes());
            out.extend_from_slice(&p[1].to_le_bytes());
        }
        fn count(out: &mut Vec<u8>, n: usize) {
            out.extend_from_slice(&(n as u32).to_le_bytes());
        }
        fn line(out: &mut Vec<u8>, l: &[Pt]) {
            count(out, l.len());
            l.iter().for_each(|p| pt(out, p));
        }
        fn poly(out: &mut Vec<u8>, rings: &[Vec<Pt>]) {
            count(out, rings.len());
            rings.iter().for_each(|r| line(out, r));
        }
        fn header(out: &mut Vec<u8>, typ: u32) {
            out.push(1);
            out.extend_from_slice(&typ.to_le_bytes());
        }
        match self {
            Geom::Point(p) => pt(out, p),
            Geom::Line(l) => line(out, l),
            Geom::Poly(r) => poly(out, r),
            Geom::MPoint(ps) => {
                count(out, ps.len());
                for p in ps {
                    header(out, 1);
                    pt(out, p);
                }
            }
            Geom::MLine(ls) => {
                count(out, ls.len());
                for l in ls {
                    header(out, 2);
                    line(out, l);
                }
            }
            Geom::MPoly(ps) => {
                count(out, ps.len());
                for p in ps {
                    header(out, 3);
                    poly(out, p);
                }
            }
            Geom::Coll(gs) => {
                count(out, gs.len());
                for g in gs {
                    header(out, g.type_id());
                    g.write_data(out);
                }
            }
        }
    }

    /// The stored form: SRID, then WKB, all little-endian.
    fn serialize(&self, srid: u32) -> Vec<u8> {
        let mut out = Vec::with_capacity(32);
        out.extend_from_slice(&srid.to_le_bytes());
        out.push(1);
        out.extend_from_slice(&self.type_id().to_le_bytes());
        self.write_data(&mut out);
        out
    }

    fn swap(&mut self) {
        fn line(l: &mut [Pt]) {
            l.iter_mut().for_each(|p| p.swap(0, 1));
        }
        match self {
            Geom::Point(p) => p.swap(0, 1),
            Geom::Line(l) | Geom::MPoint(l) => line(l),
            Geom::Poly(r) | Geom::MLine(r) => r.iter_mut().for_each(|l| line(l)),
            Geom::MPoly(ps) => ps.iter_mut().flatten().for_each(|l| line(l)),
            Geom::Coll(gs) => gs.iter_mut().for_each(Geom::swap),
        }
    }
}

fn invalid(what: &str) -> String {
    format!("invalid GIS data ({what})")
}

/// Reads WKB as go-mysql-server's deserializers read it (the ones Dolt reads stored values
/// with): each part's minimum length checked against the bytes that remain, counts taken as
/// given. Where Go would index past the end or allocate without bound, an error instead.
struct WkbReader<'a> {
    b: &'a [u8],
}

impl WkbReader<'_> {
    fn count(b: &[u8], big: bool) -> u32 {
        let c = [b[0], b[1], b[2], b[3]];
        if big {
            u32::from_be_bytes(c)
        } else {
            u32::from_le_bytes(c)
        }
    }

    /// A point's 16 bytes at the start of `b` (`None` when fewer remain).
    fn point(b: &[u8], big: bool) -> Option<Pt> {
        let x: [u8; 8] = b.get(..8)?.try_into().ok()?;
        let y: [u8; 8] = b.get(8..16)?.try_into().ok()?;
        Some(if big {
            [f64::from_be_bytes(x), f64::from_be_bytes(y)]
        } else {
            [f64::from_le_bytes(x), f64::from_le_bytes(y)]
        })
    }

    /// `(big_endian, type)` of a WKB header at the start of `b`.
    fn header(b: &[u8]) -> Result<(bool, u32), String> {
        if b.len() < 5 {
            return Err(invalid("a WKB header is cut short"));
        }
        let big = b[0] == 0;
        Ok((big, Self::count(&b[1..], big)))
    }

    fn line(b: &[u8], big: bool) -> Result<(Vec<Pt>, usize), String> {
        if b.len() < 4 + 32 {
            return Err(invalid("a linestring is cut short"));
        }
        let n = Self::count(b, big) as usize;
        if n > (b.len() - 4) / 16 {
            return Err(invalid("a linestring has fewer points than its count"));
        }
        let pts = (0..n)
            .map(|i| Self::point(&b[4 + 16 * i..], big))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| invalid("a linestring is cut short"))?;
        Ok((pts, 4 + 16 * n))
    }

    fn poly(b: &[u8], big: bool) -> Result<(Vec<Vec<Pt>>, usize), String> {
        if b.len() < 4 + 4 + 64 {
            return Err(invalid("a polygon is cut short"));
        }
        let n = Self::count(b, big);
        let mut at = 4;
        let mut rings = Vec::new();
        for _ in 0..n {
            let (l, used) = Self::line(&b[at..], big)?;
            rings.push(l);
            at += used;
        }
        Ok((rings, at))
    }

    fn mpoint(b: &[u8], big: bool) -> Result<(Vec<Pt>, usize), String> {
        if b.len() < 4 + 5 + 16 {
            return Err(invalid("a multipoint is cut short"));
        }
        let n = Self::count(b, big) as usize;
        if n > (b.len() - 4) / 21 {
            return Err(invalid("a multipoint has fewer points than its count"));
        }
        let mut pts = Vec::with_capacity(n);
        let mut at = 4;
        for _ in 0..n {
            let (big, typ) = Self::header(&b[at..])?;
            if typ != 1 {
                return Err(invalid("a multipoint holds a non-point"));
            }
            at += 5;
            pts.push(Self::point(&b[at..], big).ok_or_else(|| invalid("a point is cut short"))?);
            at += 16;
        }
        Ok((pts, at))
    }

    fn mline(b: &[u8], big: bool) -> Result<(Vec<Vec<Pt>>, usize), String> {
        if b.len() < 4 + 5 + 4 + 32 {
            return Err(invalid("a multilinestring is cut short"));
        }
        let n = Self::count(b, big);
        let mut at = 4;
        let mut lines = Vec::new();
        for _ in 0..n {
            let (big, typ) = Self::header(&b[at..])?;
            if typ != 2 {
                return Err(invalid("a multilinestring holds a non-linestring"));
            }
            at += 5;
            let (l, used) = Self::line(&b[at..], big)?;
            lines.push(l);
            at += used;
        }
        Ok((lines, at))
    }

    fn mpoly(b: &[u8], big: bool) -> Result<(Vec<Rings>, usize), String> {
        if b.len() < 4 + 5 + 8 + 64 {
            return Err(invalid("a multipolygon is cut short"));
        }
        let n = Self::count(b, big);
        let mut at = 4;
        let mut polys = Vec::new();
        for _ in 0..n {
            let (big, typ) = Self::header(&b[at..])?;
            if typ != 3 {
                return Err(invalid("a multipolygon holds a non-polygon"));
            }
            at += 5;
            let (p, used) = Self::poly(&b[at..], big)?;
            polys.push(p);
            at += used;
        }
        Ok((polys, at))
    }

    fn coll(b: &[u8], big: bool, depth: usize) -> Result<(Vec<Geom>, usize), String> {
        if depth > MAX_DEPTH {
            return Err(invalid("geometry collections nested too deep"));
        }
        if b.len() < 4 {
            return Err(invalid("a geometry collection is cut short"));
        }
        let n = Self::count(b, big);
        let mut at = 4;
        let mut geoms = Vec::new();
        for _ in 0..n {
            let (big, typ) = Self::header(&b[at..])?;
            at += 5;
            let (g, used) = Self::body(&b[at..], big, typ, false, depth + 1)?;
            geoms.push(g);
            at += used;
        }
        Ok((geoms, at))
    }

    /// The geometry of type `typ` whose body starts `b`, and the bytes it used; a point at the
    /// top level (`exact`) must be all of `b`.
    fn body(
        b: &[u8],
        big: bool,
        typ: u32,
        exact: bool,
        depth: usize,
    ) -> Result<(Geom, usize), String> {
        Ok(match typ {
            1 => {
                if exact && b.len() != 16 {
                    return Err(invalid("a point is not 16 bytes"));
                }
                let p = Self::point(b, big).ok_or_else(|| invalid("a point is cut short"))?;
                (Geom::Point(p), 16)
            }
            2 => Self::line(b, big).map(|(l, n)| (Geom::Line(l), n))?,
            3 => Self::poly(b, big).map(|(r, n)| (Geom::Poly(r), n))?,
            4 => Self::mpoint(b, big).map(|(p, n)| (Geom::MPoint(p), n))?,
            5 => Self::mline(b, big).map(|(l, n)| (Geom::MLine(l), n))?,
            6 => Self::mpoly(b, big).map(|(p, n)| (Geom::MPoly(p), n))?,
            7 => Self::coll(b, big, depth).map(|(g, n)| (Geom::Coll(g), n))?,
            _ => return Err(invalid("an unknown geometry type")),
        })
    }

    /// A whole value: SRID (little-endian), WKB header, body (bytes after a non-point body
    /// are ignored, as Dolt ignores them).
    fn value(&self) -> Result<(u32, Geom), String> {
        let b = self.b;
        if b.len() < 9 {
            return Err(invalid("shorter than an SRID and a WKB header"));
        }
        let srid = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let (big, typ) = Self::header(&b[4..])?;
        let (g, _) = Self::body(&b[9..], big, typ, true, 0)?;
        Ok((srid, g))
    }
}

/// Go's `math.Min`: NaN wins, and -0 is below +0.
fn go_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == 0.0 && b == 0.0 {
        if a.is_sign_negative() {
            a
        } else {
            b
        }
    } else if a < b {
        a
    } else {
        b
    }
}

/// Go's `math.Max`: NaN wins, and +0 is above -0.
fn go_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == 0.0 && b == 0.0 {
        if a.is_sign_positive() {
            a
        } else {
            b
        }
    } else if a > b {
        a
    } else {
        b
    }
}

impl Geom {
    /// The bounding box `[min x, min y, max x, max y]` as go-mysql-server's `FindBBox`
    /// computes it (an empty geometry: the inverted box of the largest floats).
    fn bbox(&self) -> [f64; 4] {
        let mut r = [f64::MAX, f64::MAX, -f64::MAX, -f64::MAX];
        let mut add = |b: [f64; 4]| {
            r = [
                go_min(r[0], b[0]),
                go_min(r[1], b[1]),
                go_max(r[2], b[2]),
                go_max(r[3], b[3]),
            ];
        };
        let pt = |p: &Pt| [p[0], p[1], p[0], p[1]];
        match self {
            Geom::Point(p) => return pt(p),
            Geom::Line(l) | Geom::MPoint(l) => l.iter().for_each(|p| add(pt(p))),
            Geom::Poly(rs) | Geom::MLine(rs) => {
                rs.iter().flatten().for_each(|p| add(pt(p)));
            }
            Geom::MPoly(ps) => ps.iter().flatten().flatten().for_each(|p| add(pt(p))),
            Geom::Coll(gs) => gs.iter().for_each(|g| add(g.bbox())),
        }
        r
    }
}

/// A float's bits ordered as the floats are (Dolt's `LexFloat`).
fn lex_float(f: f64) -> u64 {
    let b = f.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b ^ (1 << 63)
    }
}

/// The low 32 bits of `x` and `y` interleaved, `x` in the even bits.
fn interleave(x: u64, y: u64) -> u64 {
    let spread = |mut v: u64| {
        v = (v | (v << 16)) & 0x0000_FFFF_0000_FFFF;
        v = (v | (v << 8)) & 0x00FF_00FF_00FF_00FF;
        v = (v | (v << 4)) & 0x0F0F_0F0F_0F0F_0F0F;
        v = (v | (v << 2)) & 0x3333_3333_3333_3333;
        (v | (v << 1)) & 0x5555_5555_5555_5555
    };
    spread(x) | (spread(y) << 1)
}

/// A point's Z-order value: its lexed coordinates' bits interleaved, high halves first.
fn z_value(x: f64, y: f64) -> [u64; 2] {
    let (x, y) = (lex_float(x), lex_float(y));
    [
        interleave(x >> 32, y >> 32),
        interleave(x & 0xFFFF_FFFF, y & 0xFFFF_FFFF),
    ]
}

/// The spatial cell Dolt keys an index entry of a stored geometry value by (its `ZCell`):
/// a level byte, then the Z-order value of the bounding box's low corner with the bits below
/// that level cleared (big-endian); `None` for bytes that are not a stored value.
pub fn z_cell(stored: &[u8]) -> Option<[u8; 17]> {
    let (_, g) = WkbReader { b: stored }.value().ok()?;
    let b = g.bbox();
    let (lo, hi) = (z_value(b[0], b[1]), z_value(b[2], b[3]));
    let bits = |v: u64| 64 - v.leading_zeros();
    let level = if lo[0] != hi[0] {
        ((bits(lo[0] ^ hi[0]) + 1) >> 1) as u8 + 32
    } else {
        ((bits(lo[1] ^ hi[1]) + 1) >> 1) as u8
    };
    let mut cell = [0u8; 17];
    cell[0] = level;
    let clear = |v: u64, shift: u32| {
        v.checked_shr(shift)
            .unwrap_or(0)
            .checked_shl(shift)
            .unwrap_or(0)
    };
    if level < 32 {
        cell[1..9].copy_from_slice(&lo[0].to_be_bytes());
        cell[9..].copy_from_slice(&clear(lo[1], u32::from(level) << 1).to_be_bytes());
    } else {
        cell[1..9].copy_from_slice(&clear(lo[0], u32::from(level - 32) << 1).to_be_bytes());
    }
    Some(cell)
}

/// Serializes `g` and checks that Dolt can read the result back (its readers want more bytes
/// than some values take, e.g. a linestring of fewer than two points at the end of a value).
fn stored_form(g: &Geom, srid: u32) -> Result<Vec<u8>, String> {
    let out = g.serialize(srid);
    WkbReader { b: &out }
        .value()
        .map_err(|e| format!("{e}: Dolt could not read this value back"))?;
    Ok(out)
}

/// A stored geometry value from SRID + WKB bytes (either byte order, as `dolt table import`
/// takes them and `dolt sql -r csv` prints them): re-encoded little-endian, as Dolt stores
/// it. Errors for malformed bytes and unknown SRIDs.
pub fn from_ewkb(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let (srid, g) = WkbReader { b: bytes }.value()?;
    check_srid(srid)?;
    stored_form(&g, srid)
}

/// A stored geometry value from WKT, as `ST_GeomFromText(text, srid)` makes it (coordinates
/// of geographic SRID 4326 read latitude first, stored longitude first).
pub fn from_wkt(text: &str, srid: u32) -> Result<Vec<u8>, String> {
    check_srid(srid)?;
    let mut g = wkt_geometry(text.trim(), 0).ok_or_else(|| invalid("not WKT Dolt reads"))?;
    if srid == GEOGRAPHIC {
        g.swap();
    }
    stored_form(&g, srid)
}

/// A stored geometry value from text: `hex:` or `0x` and the hex of SRID + WKB bytes;
/// `SRID=n;` and WKT (`ST_GeomFromText(wkt, n)`); WKT (`ST_GeomFromText(wkt)`, SRID 0); or
/// the SRID + WKB bytes themselves.
pub fn from_text(text: &str) -> Result<Vec<u8>, String> {
    let t = text.trim_start();
    if let Some(hex) = t.strip_prefix("hex:").or_else(|| t.strip_prefix("0x")) {
        let bytes = crate::value_parse::parse_hex(hex)
            .ok_or_else(|| format!("{text:?} is not hex digits"))?;
        return from_ewkb(&bytes);
    }
    let upper = t.get(..5).map(str::to_ascii_uppercase);
    if upper.as_deref() == Some("SRID=") {
        let (n, wkt) = t[5..]
            .split_once(';')
            .ok_or_else(|| format!("{text:?}: SRID=n; and WKT expected"))?;
        let srid: u32 = n
            .trim()
            .parse()
            .map_err(|_| format!("{text:?}: {n:?} is not an SRID"))?;
        return from_wkt(wkt, srid);
    }
    if t.starts_with(|c: char| c.is_ascii_alphabetic()) {
        if let Ok(v) = from_wkt(t, 0) {
            return Ok(v);
        }
    }
    from_ewkb(text.as_bytes())
        .map_err(|e| format!("{text:?} is neither WKT nor SRID + WKB bytes Dolt reads ({e})"))
}

/// The WKB type name of a stored value (`point`, …), if it has a known one.
pub fn type_name(stored: &[u8]) -> Option<&'static str> {
    let (_, typ) = WkbReader::header(stored.get(4..)?).ok()?;
    TYPE_NAMES.get((typ as usize).checked_sub(1)?).copied()
}

/// The SRID of a stored value.
pub fn srid(stored: &[u8]) -> Option<u32> {
    Some(u32::from_le_bytes(stored.get(..4)?.try_into().ok()?))
}

/// What a geometry column of type `ty` takes: the one WKB type name it takes (`None`: any,
/// for `geometry` or a type that is not spatial) and its SRID, if declared.
fn column_constraint(ty: &SqlType) -> (Option<&'static str>, Option<u32>) {
    let SqlType::Geometry { name, srid } = ty else {
        return (None, None);
    };
    let kind = TYPE_NAMES
        .iter()
        .copied()
        .find(|&n| n == name || (name == "geomcollection" && n == "geometrycollection"));
    (kind, *srid)
}

/// Checks a stored value against a column of type `ty` as Dolt's SQL engine checks it: the
/// column's geometry type (any for `geometry`) and its SRID, if declared.
/// (`dolt table import` skips both checks for SRID + WKB bytes, and takes SRIDs Dolt does
/// not know: values SQL could not store; writes here refuse them everywhere.)
pub fn check_column(stored: &[u8], ty: &SqlType, column: &str) -> Result<(), String> {
    let (kind, want) = column_constraint(ty);
    let got_kind = type_name(stored).ok_or_else(|| invalid("no geometry type"))?;
    if let Some(k) = kind.filter(|&k| k != got_kind) {
        return Err(format!(
            "cannot put a {} value in the {} column {column:?}",
            got_kind.to_ascii_uppercase(),
            k.to_ascii_uppercase()
        ));
    }
    let got = srid(stored).unwrap_or_default();
    if let Some(want) = want.filter(|&w| w != got) {
        return Err(format!(
            "the SRID of the geometry does not match the SRID of the column {column:?}: \
             the geometry's is {got}, the column's is {want}"
        ));
    }
    Ok(())
}

/// A coordinate as Go's `strconv.ParseFloat` reads decimal text; infinite and NaN values,
/// which MySQL refuses, are errors.
fn coordinate(t: &str) -> Option<f64> {
    if !t
        .bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// `x y`.
fn wkt_point(s: &str) -> Option<Pt> {
    let mut f = s.split_whitespace();
    let (x, y) = (f.next()?, f.next()?);
    if f.next().is_some() {
        return None;
    }
    Some([coordinate(x)?, coordinate(y)?])
}

/// `x y, x y, …` (at least one point).
fn wkt_points(s: &str) -> Option<Vec<Pt>> {
    if s.is_empty() {
        return None;
    }
    s.split(',').map(|p| wkt_point(p.trim())).collect()
}

/// The text inside the parentheses opening `s` (trimmed) and the length of `s` through the
/// closing one.
fn parenthesized(s: &str) -> Option<(&str, usize)> {
    if !s.starts_with('(') {
        return None;
    }
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some((s[1..i].trim(), i + 1));
                }
            }
            _ => {}
        }
    }
    None
}

/// `(a), (b), …` with each part read by `part`.
fn wkt_list<T>(s: &str, mut part: impl FnMut(&str) -> Option<T>) -> Option<Vec<T>> {
    if s.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    let mut rest = s;
    loop {
        let (inner, end) = parenthesized(rest)?;
        out.push(part(inner)?);
        rest = rest[end..].trim_start();
        if rest.is_empty() {
            return Some(out);
        }
        rest = rest.strip_prefix(',')?.trim_start();
    }
}

/// A polygon ring: at least four points, closed.
fn wkt_ring(s: &str) -> Option<Vec<Pt>> {
    let pts = wkt_points(s)?;
    (pts.len() >= 4 && pts.first() == pts.last()).then_some(pts)
}

fn wkt_polygon(s: &str) -> Option<Vec<Vec<Pt>>> {
    wkt_list(s, wkt_ring)
}

/// One tagged geometry at the start of `s` (`NAME(…)` or `GEOMETRYCOLLECTION EMPTY`) and
/// the length of its text.
fn wkt_tagged(s: &str, depth: usize) -> Option<(Geom, usize)> {
    if depth > MAX_DEPTH {
        return None;
    }
    let name_end = s.find(['(', ',']).unwrap_or(s.len());
    let name = s[..name_end].trim().to_ascii_lowercase();
    let mut words = name.split_whitespace();
    if let (Some("geometrycollection"), Some("empty"), None) =
        (words.next(), words.next(), words.next())
    {
        return Some((Geom::Coll(Vec::new()), name_end));
    }
    let (data, len) = parenthesized(&s[name_end..])?;
    let g = match name.as_str() {
        "point" => Geom::Point(wkt_point(data)?),
        "linestring" => Geom::Line(wkt_points(data)?),
        "polygon" => Geom::Poly(wkt_polygon(data)?),
        "multipoint" if data.starts_with('(') => Geom::MPoint(wkt_list(data, wkt_point)?),
        "multipoint" => Geom::MPoint(wkt_points(data)?),
        "multilinestring" => Geom::MLine(wkt_list(data, wkt_points)?),
        "multipolygon" => Geom::MPoly(wkt_list(data, wkt_polygon)?),
        "geometrycollection" => {
            let mut gs = Vec::new();
            let mut rest = data;
            while !rest.is_empty() {
                let (g, used) = wkt_tagged(rest, depth + 1)?;
                gs.push(g);
                rest = rest[used..].trim_start();
                if !rest.is_empty() {
                    rest = rest.strip_prefix(',')?.trim_start();
                    if rest.is_empty() {
                        return None;
                    }
                }
            }
            Geom::Coll(gs)
        }
        _ => return None,
    };
    Some((g, name_end + len))
}

/// A whole WKT text.
fn wkt_geometry(s: &str, depth: usize) -> Option<Geom> {
    let (g, used) = wkt_tagged(s, depth)?;
    s[used..].trim().is_empty().then_some(g)
}

#[cfg(test)]
mod write_tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02X}")).collect()
    }

    /// Stored bytes as `HEX(ST_GeomFromText(…))` printed them in `dolt sql` (dolt 2.3.1).
    #[test]
    fn wkt_as_dolt_stores_it() {
        let cases = [
            ("POINT(1 2)", 0, "000000000101000000000000000000F03F0000000000000040"),
            ("POINT(1 2)", 4326, "E610000001010000000000000000000040000000000000F03F"),
            ("point ( -1.5e3   .25 )", 0, "00000000010100000000000000007097C0000000000000D03F"),
            ("LINESTRING(0 0,1 1.5)", 0, "0000000001020000000200000000000000000000000000000000000000000000000000F03F000000000000F83F"),
            ("LINESTRING(0 0, 1 1.5, -2 3)", 4326, "E610000001020000000300000000000000000000000000000000000000000000000000F83F000000000000F03F000000000000084000000000000000C0"),
            ("POLYGON((0 0,1 0,1 1,0 0))", 0, "000000000103000000010000000400000000000000000000000000000000000000000000000000F03F0000000000000000000000000000F03F000000000000F03F00000000000000000000000000000000"),
            ("POLYGON((0 0,4 0,4 4,0 4,0 0),(1 1,2 1,2 2,1 1))", 3857, "110F000001030000000200000005000000000000000000000000000000000000000000000000001040000000000000000000000000000010400000000000001040000000000000000000000000000010400000000000000000000000000000000004000000000000000000F03F000000000000F03F0000000000000040000000000000F03F00000000000000400000000000000040000000000000F03F000000000000F03F"),
            ("MULTIPOINT(1 2,3 4)", 0, "000000000104000000020000000101000000000000000000F03F0000000000000040010100000000000000000008400000000000001040"),
            ("MULTIPOINT((1 2),(3 4))", 4326, "E610000001040000000200000001010000000000000000000040000000000000F03F010100000000000000000010400000000000000840"),
            ("MULTILINESTRING((0 0,1 1),(2 2,3 3))", 0, "0000000001050000000200000001020000000200000000000000000000000000000000000000000000000000F03F000000000000F03F0102000000020000000000000000000040000000000000004000000000000008400000000000000840"),
            ("MULTIPOLYGON(((0 0,1 0,1 1,0 0)),((5 5,6 5,6 6,5 5)))", 0, "000000000106000000020000000103000000010000000400000000000000000000000000000000000000000000000000F03F0000000000000000000000000000F03F000000000000F03F000000000000000000000000000000000103000000010000000400000000000000000014400000000000001440000000000000184000000000000014400000000000001840000000000000184000000000000014400000000000001440"),
            ("GEOMETRYCOLLECTION(POINT(1 2),LINESTRING(0 0,1 1))", 4326, "E610000001070000000200000001010000000000000000000040000000000000F03F01020000000200000000000000000000000000000000000000000000000000F03F000000000000F03F"),
            ("GEOMETRYCOLLECTION EMPTY", 0, "00000000010700000000000000"),
            ("GEOMETRYCOLLECTION()", 0, "00000000010700000000000000"),
            ("GEOMETRYCOLLECTION(GEOMETRYCOLLECTION(POINT(1 2)),MULTIPOINT(0 0),POLYGON((0 0,1 0,1 1,0 0)))", 0, "000000000107000000030000000107000000010000000101000000000000000000F03F00000000000000400104000000010000000101000000000000000000000000000000000000000103000000010000000400000000000000000000000000000000000000000000000000F03F0000000000000000000000000000F03F000000000000F03F00000000000000000000000000000000"),
            ("POINT(0.1 -0)", 0, "0000000001010000009A9999999999B93F0000000000000080"),
            ("POINT(1e-320 123456789012345678901234567890)", 0, "000000000101000000E8070000000000003E376CFF90EEF845"),
        ];
        for (wkt, srid, stored) in cases {
            let ours = from_wkt(wkt, srid).unwrap_or_else(|e| panic!("{wkt}: {e}"));
            assert_eq!(hex(&ours), stored, "{wkt} {srid}");
            // The same through the text forms, and back from the stored bytes.
            let text = if srid == 0 {
                wkt.to_string()
            } else {
                format!("SRID={srid};{wkt}")
            };
            assert_eq!(from_text(&text).unwrap(), ours, "{text}");
            assert_eq!(from_text(&format!("hex:{stored}")).unwrap(), ours);
            assert_eq!(from_ewkb(&ours).unwrap(), ours);
            let back = wkt_geometry(&super::wkt(&ours).unwrap(), 0).unwrap();
            let mut again = back;
            if srid == GEOGRAPHIC {
                again.swap();
            }
            assert_eq!(again.serialize(srid), ours, "{wkt}");
        }
    }

    /// Big-endian input is stored little-endian; bytes after a non-point body are dropped;
    /// a point must be exactly its 16 bytes (as `dolt table import` took and stored these,
    /// dolt 2.3.1).
    #[test]
    fn ewkb_as_dolt_imports_it() {
        let mut big = vec![0, 0, 0, 0, 0, 0, 0, 0, 1];
        big.extend_from_slice(&1f64.to_be_bytes());
        big.extend_from_slice(&2f64.to_be_bytes());
        let stored = from_ewkb(&big).unwrap();
        assert_eq!(
            hex(&stored),
            "000000000101000000000000000000F03F0000000000000040"
        );
        let mut line = from_wkt("LINESTRING(0 0,1 1)", 0).unwrap();
        let want = line.clone();
        line.extend_from_slice(b"xyz");
        assert_eq!(from_ewkb(&line).unwrap(), want);
        let mut point = stored.clone();
        point.push(b'z');
        assert!(from_ewkb(&point).is_err());
        // SRIDs Dolt does not know are refused (ST_GeomFromText refuses them).
        assert!(from_wkt("POINT(1 2)", 12345).is_err());
        assert!(srid_supported(0) && srid_supported(4326) && srid_supported(3857));
        assert!(!srid_supported(1) && !srid_supported(u32::MAX));
    }

    #[test]
    fn columns_check_type_and_srid() {
        let p = from_wkt("POINT(1 2)", 0).unwrap();
        let g = from_wkt("POINT(1 2)", 4326).unwrap();
        let l = from_wkt("LINESTRING(1 2,3 4)", 4326).unwrap();
        let t = SqlType::parse;
        assert!(check_column(&p, &t("point"), "c").is_ok());
        assert!(check_column(&l, &t("geometry"), "c").is_ok());
        assert!(check_column(&g, &t("point SRID 4326"), "c").is_ok());
        let e = check_column(&p, &t("point SRID 4326"), "c").unwrap_err();
        assert!(e.contains("SRID") && e.contains("4326"), "{e}");
        let e = check_column(&l, &t("point SRID 4326"), "c").unwrap_err();
        assert!(e.contains("LINESTRING") && e.contains("POINT"), "{e}");
        assert!(check_column(&p, &t("geometrycollection"), "c").is_err());
        assert_eq!(
            column_constraint(&t("geometry SRID 3857")),
            (None, Some(3857))
        );
        assert_eq!(
            column_constraint(&t("geomcollection")),
            (Some("geometrycollection"), None)
        );
    }

    #[test]
    fn hostile_bytes_are_errors() {
        // Huge counts, cut-short bodies, deep nesting: errors, not panics or allocations.
        let mut v = vec![0, 0, 0, 0, 1, 2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff];
        v.extend_from_slice(&[0; 40]);
        assert!(from_ewkb(&v).is_err());
        let mut deep = vec![0, 0, 0, 0];
        for _ in 0..200 {
            deep.extend_from_slice(&[1, 7, 0, 0, 0, 1, 0, 0, 0]);
        }
        assert!(from_ewkb(&deep).is_err());
        for n in 0..deep.len() {
            let _ = from_ewkb(&deep[..n]);
        }
        assert!(from_text("POINT(1 2) x").is_err());
        assert!(from_text("POINT(nan 2)").is_err());
        assert!(from_text("LINESTRING(1 2)").is_err());
        let _ = hex(&[]);
    }
}
