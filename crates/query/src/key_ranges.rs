//! Which `WHERE` filters become key ranges: the filters on a table's leading primary-key
//! columns (or, failing those, on a secondary index's leading columns) that the tree can seek
//! to, and whether DataFusion may drop them afterwards.
//!
//! A range must never leave out a row that DataFusion's own comparison would keep, so a
//! column's values are pushed down only where the stored key order agrees with DataFusion's:
//!
//! | column type | `=`, `IN` | `<`, `<=`, `>`, `>=`, `BETWEEN` | `LIKE 'p%'` | exact |
//! |---|---|---|---|---|
//! | integers, `DATE` | yes | yes | — | yes |
//! | `DATETIME`, `TIMESTAMP` | yes | yes | — | no |
//! | text in `utf8mb4_0900_bin` (Dolt's default; byte order) | yes | yes | yes | `=`, `IN` |
//! | text in any other collation | yes | — | — | `=`, `IN` (the collation's equality) |
//! | `VARBINARY`, `BLOB` | yes | yes | yes | `=`, `IN` |
//! | `BINARY(n)` (stored padded) | yes | yes | yes | no |
//! | floats, decimals, `ENUM`, `SET`, `BIT`, `YEAR`, JSON, spatial | — | — | — | — |
//!
//! "Exact" is for the primary key. An equality on a text key with a case- or
//! accent-insensitive collation finds the values equal under that collation, as Dolt does
//! (`k = 'apple'` finds `Apple`), and DataFusion keeps them; a range under such a
//! collation could miss rows DataFusion's byte order keeps, so it is not pushed. Filters on a
//! secondary index are never exact (its keys may be cut to a prefix or hold NULLs), so
//! DataFusion always checks them again.

use std::ops::Bound;

use datafusion::common::ScalarValue;
use datafusion::logical_expr::{Between, BinaryExpr, Expr, Like, Operator};
use prollystore_dolt::schema::{Column, SqlType};
use prollystore_dolt::{KeyRange, SqlValue, Table};

/// Most ranges one scan seeks (`a IN (…) AND b IN (…)` multiplies): past this, fewer key
/// columns are used.
const MAX_RANGES: usize = 4096;

/// How far a filter pushed into the scan holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pushed {
    /// Not used: DataFusion applies it.
    No,
    /// Used to narrow the scan; DataFusion applies it again.
    Inexact,
    /// The scan returns exactly the rows that pass it.
    Exact,
}

/// What the scan seeks: key ranges of the clustered index or of one secondary index.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeyPlan {
    /// `None`: the primary key; `Some(name)`: that secondary index.
    pub index: Option<String>,
    /// The ranges, in no particular order (`None`: the whole table).
    pub ranges: Option<Vec<KeyRange>>,
    /// For each filter given, how it was used.
    pub pushed: Vec<Pushed>,
}

/// How a column's stored key order compares with DataFusion's order of its Arrow values.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Agreement {
    /// Same order and same equality: ranges and equalities are exact.
    Exact,
    /// Same order: ranges and equalities narrow the scan.
    Ordered,
    /// Only byte-equal values are equal in both: equalities narrow the scan.
    EqualityOnly,
    /// Nothing is pushed.
    None,
}

fn agreement(col: &Column) -> Agreement {
    match &col.sql_type {
        SqlType::Int { .. } | SqlType::Date => Agreement::Exact,
        SqlType::Datetime(_) | SqlType::Timestamp(_) => Agreement::Ordered,
        SqlType::Binary { .. } => Agreement::Ordered,
        SqlType::Text { .. } => match col.sql_type.collation() {
            Some("utf8mb4_0900_bin") => Agreement::Ordered,
            _ => Agreement::EqualityOnly,
        },
        _ => Agreement::None,
    }
}

/// Whether the key's equality is exactly the rows a primary-key seek finds: integers and
/// dates, text (byte equality in `utf8mb4_0900_bin`; any other collation's own equality, as
/// Dolt compares), `VARBINARY`/`BLOB`. Not `DATETIME` (a literal finer than the column's
/// precision is rounded to seek) nor `BINARY(n)` (stored padded).
fn equality_exact(col: &Column) -> bool {
    match &col.sql_type {
        SqlType::Int { .. } | SqlType::Date | SqlType::Text { .. } => true,
        SqlType::Binary { fixed, .. } => fixed.is_none(),
        _ => false,
    }
}

/// One filter's hold on one column.
#[derive(Clone, Debug)]
enum Hold {
    /// `c = v` or `c IN (v, …)`.
    Equal(Vec<SqlValue>),
    /// `c > v`, `c >= v`.
    Lower(Bound<SqlValue>),
    /// `c < v`, `c <= v`.
    Upper(Bound<SqlValue>),
    /// `c BETWEEN a AND b`.
    Between(Bound<SqlValue>, Bound<SqlValue>),
    /// `c LIKE 'p%'`: from `p` up to the least value past every value starting with it.
    Prefix(Bound<SqlValue>, Bound<SqlValue>),
}

/// Plans the seek for `filters` over `table` (its visible columns, in order).
pub(crate) fn plan(table: &Table, filters: &[&Expr]) -> KeyPlan {
    let schema = &table.schema;
    let visible: Vec<&Column> = schema
        .visible_columns()
        .into_iter()
        .filter_map(|i| schema.columns.get(i))
        .collect();
    let holds: Vec<Option<(usize, Hold)>> = filters.iter().map(|f| hold(f, &visible)).collect();
    let none = || KeyPlan {
        index: None,
        ranges: None,
        pushed: vec![Pushed::No; filters.len()],
    };
    let primary = schema.key_positions();
    if let Some(p) = plan_on(&primary, &visible, &holds, true) {
        return KeyPlan { index: None, ..p };
    }
    for index in &schema.indexes {
        if index.spatial || index.fulltext {
            continue;
        }
        if let Some(p) = plan_on(&index.positions(schema), &visible, &holds, false) {
            return KeyPlan {
                index: Some(index.name.clone()),
                ..p
            };
        }
    }
    none()
}

/// The seek over key columns `key` (visible positions, in key order), if any filter holds its
/// first column.
fn plan_on(
    key: &[usize],
    visible: &[&Column],
    holds: &[Option<(usize, Hold)>],
    primary: bool,
) -> Option<KeyPlan> {
    let mut pushed = vec![Pushed::No; holds.len()];
    // Equalities on leading columns, then at most one column with bounds.
    let mut prefixes: Vec<Vec<SqlValue>> = vec![Vec::new()];
    let mut bounds: Option<(Bound<SqlValue>, Bound<SqlValue>)> = None;
    for &col in key {
        let Some(c) = visible.get(col) else { break };
        let agree = agreement(c);
        if agree == Agreement::None {
            break;
        }
        // Equality on a collated primary-key column seeks exactly the values equal under
        // its collation, as Dolt compares them (`k = 'apple'` finds `Apple` under a
        // case-insensitive collation): exact, so DataFusion keeps Dolt's answer.
        let exact_equal = |p: &mut Pushed| {
            *p = if primary && equality_exact(c) {
                Pushed::Exact
            } else {
                Pushed::Inexact
            }
        };
        let exact = |p: &mut Pushed| {
            *p = if primary && agree == Agreement::Exact {
                Pushed::Exact
            } else {
                Pushed::Inexact
            }
        };
        let on_col = || {
            holds
                .iter()
                .enumerate()
                .filter_map(move |(i, h)| h.as_ref().filter(|(c, _)| *c == col).map(|h| (i, &h.1)))
        };
        if let Some((i, values)) = on_col()
            .filter_map(|(i, h)| match h {
                Hold::Equal(v) => Some((i, v)),
                _ => None,
            })
            .min_by_key(|(_, v)| v.len())
        {
            if prefixes.len() * values.len().max(1) > MAX_RANGES {
                break;
            }
            prefixes = prefixes
                .iter()
                .flat_map(|p| {
                    values.iter().map(move |v| {
                        let mut p = p.clone();
                        p.push(v.clone());
                        p
                    })
                })
                .collect();
            exact_equal(&mut pushed[i]);
            if prefixes.is_empty() {
                // Equal to no value the column holds: nothing to read.
                return Some(KeyPlan {
                    index: None,
                    ranges: Some(Vec::new()),
                    pushed,
                });
            }
            continue;
        }
        if agree == Agreement::EqualityOnly {
            break;
        }
        let (mut lo, mut hi) = (Bound::Unbounded, Bound::Unbounded);
        for (i, h) in on_col() {
            let (l, u) = match h {
                Hold::Lower(l) => (Some(l), None),
                Hold::Upper(u) => (None, Some(u)),
                Hold::Between(l, u) | Hold::Prefix(l, u) => (Some(l), Some(u)),
                Hold::Equal(_) => (None, None),
            };
            // One lower and one upper bound: the others stay with DataFusion.
            let takes_lo = l.is_some() && matches!(lo, Bound::Unbounded);
            let takes_hi = u.is_some() && matches!(hi, Bound::Unbounded);
            if (l.is_some() && !takes_lo) || (u.is_some() && !takes_hi) {
                continue;
            }
            if let Some(l) = l {
                lo = l.clone();
            }
            if let Some(u) = u {
                hi = u.clone();
            }
            // A LIKE prefix narrows the scan but is never exact.
            if matches!(h, Hold::Prefix(..)) {
                pushed[i] = Pushed::Inexact;
            } else {
                exact(&mut pushed[i]);
            }
        }
        if !matches!((&lo, &hi), (Bound::Unbounded, Bound::Unbounded)) {
            bounds = Some((lo, hi));
        }
        break;
    }
    if prefixes[0].is_empty() && bounds.is_none() {
        return None;
    }
    let ranges = prefixes
        .into_iter()
        .map(|p| match &bounds {
            None => KeyRange::prefix(p),
            Some((lo, hi)) => {
                let side = |b: &Bound<SqlValue>| -> Bound<Vec<Option<SqlValue>>> {
                    let with = |v: &SqlValue| {
                        let mut k: Vec<Option<SqlValue>> = p.iter().cloned().map(Some).collect();
                        k.push(Some(v.clone()));
                        k
                    };
                    match b {
                        Bound::Included(v) => Bound::Included(with(v)),
                        Bound::Excluded(v) => Bound::Excluded(with(v)),
                        Bound::Unbounded if p.is_empty() => Bound::Unbounded,
                        Bound::Unbounded => Bound::Included(p.iter().cloned().map(Some).collect()),
                    }
                };
                KeyRange {
                    from: side(lo),
                    to: side(hi),
                    ..KeyRange::all()
                }
            }
        })
        .collect();
    Some(KeyPlan {
        index: None,
        ranges: Some(ranges),
        pushed,
    })
}

/// The hold of filter `e` on one visible column, if it has a form the seek uses.
fn hold(e: &Expr, visible: &[&Column]) -> Option<(usize, Hold)> {
    match e {
        // `c = a OR c = b`: DataFusion writes short IN lists so.
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::Or,
            right,
        }) => {
            let (Some((lc, Hold::Equal(mut lv))), Some((rc, Hold::Equal(rv)))) =
                (hold(left, visible), hold(right, visible))
            else {
                return None;
            };
            if lc != rc {
                return None;
            }
            lv.extend(rv);
            Some((lc, Hold::Equal(lv)))
        }
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
            let (col, value, op) = match (column(left, visible), column(right, visible)) {
                (Some(c), None) => (c, right.as_ref(), *op),
                (None, Some(c)) => (c, left.as_ref(), op.swap()?),
                _ => return None,
            };
            let v = literal(value, visible[col])?;
            if !fits(visible[col], &v) {
                // Equal to no stored value; a bound beyond the type is DataFusion's to apply.
                return (op == Operator::Eq).then_some((col, Hold::Equal(Vec::new())));
            }
            let h = match op {
                Operator::Eq => Hold::Equal(vec![v]),
                Operator::Gt => Hold::Lower(Bound::Excluded(v)),
                Operator::GtEq => Hold::Lower(Bound::Included(v)),
                Operator::Lt => Hold::Upper(Bound::Excluded(v)),
                Operator::LtEq => Hold::Upper(Bound::Included(v)),
                _ => return None,
            };
            Some((col, h))
        }
        Expr::InList(list) if !list.negated => {
            let col = column(&list.expr, visible)?;
            let mut values = list
                .list
                .iter()
                .map(|v| literal(v, visible[col]))
                .collect::<Option<Vec<_>>>()?;
            if values.is_empty() {
                return None;
            }
            values.retain(|v| fits(visible[col], v));
            Some((col, Hold::Equal(values)))
        }
        Expr::Between(Between {
            expr,
            negated: false,
            low,
            high,
        }) => {
            let col = column(expr, visible)?;
            let lo = literal(low, visible[col]).filter(|v| fits(visible[col], v))?;
            let hi = literal(high, visible[col]).filter(|v| fits(visible[col], v))?;
            Some((col, Hold::Between(Bound::Included(lo), Bound::Included(hi))))
        }
        Expr::Like(Like {
            negated: false,
            expr,
            pattern,
            escape_char,
            case_insensitive: false,
        }) => {
            let col = column(expr, visible)?;
            let c = visible[col];
            let prefix_type = match &c.sql_type {
                SqlType::Binary { .. } => true,
                SqlType::Text { .. } => agreement(c) == Agreement::Ordered,
                _ => false,
            };
            if !prefix_type {
                return None;
            }
            let Expr::Literal(ScalarValue::Utf8(Some(p)) | ScalarValue::Utf8View(Some(p)), _) =
                pattern.as_ref()
            else {
                return None;
            };
            let prefix = p.strip_suffix('%')?;
            let escape = escape_char.unwrap_or('\\');
            if prefix.is_empty() || prefix.contains(['%', '_', escape]) {
                return None;
            }
            let value = |s: &str| match &c.sql_type {
                SqlType::Binary { .. } => SqlValue::Bytes(s.as_bytes().to_vec()),
                _ => SqlValue::Text(s.to_string()),
            };
            let upper = match next_prefix(prefix) {
                Some(n) => Bound::Excluded(value(&n)),
                None => Bound::Unbounded,
            };
            Some((col, Hold::Prefix(Bound::Included(value(prefix)), upper)))
        }
        _ => None,
    }
}

/// The least string above every string that starts with `prefix` (its last character that
/// can grow, grown by one code point), `None` if there is none.
fn next_prefix(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(c) = chars.pop() {
        let next = (u32::from(c) + 1..=0x10FFFF).find_map(char::from_u32);
        if let Some(n) = next {
            chars.push(n);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

/// The visible column `e` names (a plain column, or one widened by a cast that keeps every
/// value and its order).
fn column(e: &Expr, visible: &[&Column]) -> Option<usize> {
    match e {
        Expr::Column(c) => visible.iter().position(|v| v.name == c.name),
        Expr::Cast(cast) if cast.data_type.is_integer() => {
            let col = column(&cast.expr, visible)?;
            matches!(visible[col].sql_type, SqlType::Int { .. }).then_some(col)
        }
        _ => None,
    }
}

/// Whether column `c` can hold `v`: an integer beyond its type's range (`id = 4294967296` on
/// an `INT UNSIGNED`) equals no stored value, and is no key to seek.
fn fits(c: &Column, v: &SqlValue) -> bool {
    let Some((lo, hi)) = c.sql_type.int_range() else {
        return true;
    };
    let x = match v {
        SqlValue::Int(x) => i128::from(*x),
        SqlValue::Uint(x) => i128::from(*x),
        _ => return true,
    };
    (lo..=hi).contains(&x)
}

/// Literal `e` as a value of column `c`'s type, if it is one exactly.
fn literal(e: &Expr, c: &Column) -> Option<SqlValue> {
    let Expr::Literal(v, _) = e else { return None };
    if v.is_null() {
        return None;
    }
    let int = || -> Option<i128> {
        Some(match v {
            ScalarValue::Int8(Some(x)) => (*x).into(),
            ScalarValue::Int16(Some(x)) => (*x).into(),
            ScalarValue::Int32(Some(x)) => (*x).into(),
            ScalarValue::Int64(Some(x)) => (*x).into(),
            ScalarValue::UInt8(Some(x)) => (*x).into(),
            ScalarValue::UInt16(Some(x)) => (*x).into(),
            ScalarValue::UInt32(Some(x)) => (*x).into(),
            ScalarValue::UInt64(Some(x)) => (*x).into(),
            _ => return None,
        })
    };
    match &c.sql_type {
        SqlType::Int {
            unsigned: false, ..
        } => i64::try_from(int()?).ok().map(SqlValue::Int),
        SqlType::Int { unsigned: true, .. } => u64::try_from(int()?).ok().map(SqlValue::Uint),
        SqlType::Date => match v {
            ScalarValue::Date32(Some(d)) => {
                prollystore_arrow::date_from_days((*d).into()).map(SqlValue::Date)
            }
            _ => None,
        },
        SqlType::Datetime(fsp) | SqlType::Timestamp(fsp) => match v {
            ScalarValue::TimestampMicrosecond(Some(us), _) => Some(SqlValue::Datetime(*us, *fsp)),
            _ => None,
        },
        SqlType::Text { .. } => match v {
            ScalarValue::Utf8(Some(s))
            | ScalarValue::LargeUtf8(Some(s))
            | ScalarValue::Utf8View(Some(s)) => Some(SqlValue::Text(s.clone())),
            _ => None,
        },
        SqlType::Binary { .. } => match v {
            ScalarValue::Binary(Some(b))
            | ScalarValue::LargeBinary(Some(b))
            | ScalarValue::BinaryView(Some(b))
            | ScalarValue::FixedSizeBinary(_, Some(b)) => Some(SqlValue::Bytes(b.clone())),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::next_prefix;

    #[test]
    fn a_prefix_is_followed_by_its_successor() {
        assert_eq!(next_prefix("ab").as_deref(), Some("ac"));
        assert_eq!(next_prefix("a\u{10FFFF}").as_deref(), Some("b"));
        assert_eq!(next_prefix("\u{D7FF}").as_deref(), Some("\u{E000}"));
        assert_eq!(next_prefix("\u{10FFFF}"), None);
    }
}
