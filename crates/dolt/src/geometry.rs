//! Dolt's stored geometry values (SRID u32 little-endian, then WKB) as MySQL's WKT text
//! (`ST_AsText`), with geographic SRID 4326 printed latitude first like MySQL.

use crate::sql_value::SqlValue;

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
    SqlValue::Double(v).to_text()
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
