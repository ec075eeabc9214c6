//! Rows streamed into an empty table (a new table, or one truncated for a replace): the import
//! path. Each row is checked and encoded once, straight into packed buffers (clustered key and
//! value, and one key per secondary index made from the row's cells rather than decoded back
//! from the encoded row); then each index is sorted and built bottom-up. The trees are the
//! ones row-by-row inserts give, since a prolly tree does not depend on its edit history.

use std::cmp::Ordering;

use prollystore::blob::StoreBlobs;
use prollystore::Map;
use prollystore_format::tuple::{Tuple, TupleBuilder, TupleDesc};

use super::checks::RowChecks;
use super::overlay::Overlay;
use super::table_edit::{bad, empty_value, index_schema, tree, Cell, EditTable};
use crate::error::Result;
use crate::schema::key_encoding;

/// Byte strings packed end to end: two allocations for millions of short tuples instead of one
/// per tuple.
#[derive(Default)]
struct Packed {
    bytes: Vec<u8>,
    /// Where each string ends in `bytes`.
    ends: Vec<usize>,
}

impl Packed {
    fn len(&self) -> usize {
        self.ends.len()
    }

    fn get(&self, i: usize) -> &[u8] {
        let start = match i {
            0 => 0,
            _ => self.ends[i - 1],
        };
        &self.bytes[start..self.ends[i]]
    }

    /// Ends the string appended to `bytes` since the last one.
    fn seal(&mut self) {
        self.ends.push(self.bytes.len());
    }

    fn push(&mut self, b: &[u8]) {
        self.bytes.extend_from_slice(b);
        self.seal();
    }

    /// Positions `0..len` in the order of `desc` (ties: by position); already ordered strings
    /// cost one pass. Keys made only of integers (most secondary indexes: the indexed column
    /// and the primary key) are sorted as numbers that order as the tuples do.
    fn sorted(&self, desc: &TupleDesc) -> Vec<u32> {
        let ascending =
            (1..self.len()).all(|i| desc.compare(self.get(i - 1), self.get(i)) == Ordering::Less);
        if ascending {
            return (0..self.len() as u32).collect();
        }
        if let Some(mut numbered) = (0..self.len())
            .map(|i| Some((int_sort_key(desc, self.get(i))?, i as u32)))
            .collect::<Option<Vec<(u128, u32)>>>()
        {
            numbered.sort_unstable();
            return numbered.into_iter().map(|(_, i)| i).collect();
        }
        let mut order: Vec<u32> = (0..self.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| {
            desc.compare(self.get(a as usize), self.get(b as usize))
                .then(a.cmp(&b))
        });
        order
    }
}

/// A number that orders as `tuple` does under `desc`, when every field is an integer and
/// they fit in 128 bits together (a nullable field takes a bit more: NULL sorts first);
/// `None` for any other descriptor or a field not stored as its encoding says.
fn int_sort_key(desc: &TupleDesc, tuple: &[u8]) -> Option<u128> {
    let t = Tuple::new_unverified(tuple);
    let (mut key, mut bits) = (0u128, 0u32);
    for (i, ty) in desc.types().iter().enumerate() {
        let (width, signed) = ty.enc.integer()?;
        let field = desc.field(t, i);
        bits += 8 * width as u32 + u32::from(ty.nullable);
        if bits > 128 {
            return None;
        }
        if ty.nullable {
            key = key << 1 | u128::from(field.is_some());
        }
        let value = match field {
            None if ty.nullable => 0,
            None => return None,
            Some(b) if b.len() != width => return None,
            Some(b) => {
                let mut le = [0u8; 8];
                le[..width].copy_from_slice(b);
                let raw = u64::from_le_bytes(le);
                // Signed: flip the sign bit so that negative numbers come first.
                if signed {
                    raw ^ 1 << (8 * width - 1)
                } else {
                    raw
                }
            }
        };
        key = key << (8 * width) | u128::from(value);
    }
    Some(key)
}

/// What [`EditTable::insert_into_empty`] did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum BulkInsert {
    /// Every row went in; this many.
    Inserted(usize),
    /// An upsert repeats a primary key (a later row updates an earlier one): nothing changed,
    /// the caller applies the rows one by one.
    RepeatedKey,
}

impl EditTable {
    /// Inserts `rows` (each: column positions with values) into this table, which must have
    /// a primary key and no rows. The same checks, defaults, AUTO_INCREMENT values, errors
    /// and trees as [`EditTable::insert`] (or [`EditTable::upsert`] when `upsert`); all rows
    /// or none.
    pub(crate) fn insert_into_empty(
        &mut self,
        store: &Overlay<'_>,
        rows: impl Iterator<Item = Result<Vec<(usize, Cell)>>>,
        upsert: bool,
    ) -> Result<BulkInsert> {
        let s = self.schema.clone();
        let checks = RowChecks::for_schema(&s)?;
        let primary = s.primary_tuple_schema()?;
        let index_schemas = s
            .indexes
            .iter()
            .map(|ix| index_schema(&s, ix))
            .collect::<Result<Vec<_>>>()?;
        let mut kb = TupleBuilder::new(s.key_desc());
        let mut vb = TupleBuilder::new(s.value_desc());
        let mut index_builders: Vec<TupleBuilder> = index_schemas
            .iter()
            .map(|x| TupleBuilder::new(x.key.clone()))
            .collect();
        let mut blobs = StoreBlobs::new(store);
        let (mut keys, mut values) = (Packed::default(), Packed::default());
        let mut index_keys: Vec<Packed> = s.indexes.iter().map(|_| Packed::default()).collect();
        let auto_increment = self.auto_increment;
        for (r, given) in rows.enumerate() {
            let mut cells = self.full_row(r, given?)?;
            if upsert {
                // An upsert reads every key first: a NULL there is named as such.
                for &c in &s.key_columns {
                    if matches!(cells[c], Cell::Null) {
                        let what = format!("row {r}: NULL in the key");
                        return Err(bad(&self.name, &s.columns[c].name, what));
                    }
                }
            }
            self.assign_auto_increment(&mut cells)?;
            for (c, cell) in cells.iter().enumerate() {
                if !s.columns[c].hidden {
                    self.check_cell(r, c, cell)?;
                }
            }
            if let Some(checks) = &checks {
                let visible = self.visible_values(checks.visible(), &cells)?;
                checks.check(&self.name, r, visible)?;
            }
            let row_error =
                |e: &dyn std::fmt::Display| bad(&self.name, "", format!("row {r}: {e}"));
            for (f, &c) in s.value_columns.iter().enumerate() {
                self.put_cell(&mut vb, f, c, s.columns[c].encoding, r, &cells[c])?;
            }
            vb.build_into(&mut blobs, &mut values.bytes)
                .map_err(|e| row_error(&e))?;
            values.seal();
            for (f, &c) in s.key_columns.iter().enumerate() {
                let enc = key_encoding(s.columns[c].encoding);
                self.put_cell(&mut kb, f, c, enc, r, &cells[c])?;
            }
            keys.push(kb.build().map_err(|e| row_error(&e))?.as_bytes());
            for ((ix, b), out) in s
                .indexes
                .iter()
                .zip(&mut index_builders)
                .zip(&mut index_keys)
            {
                for (f, &c) in ix.key_columns.iter().enumerate() {
                    let enc = key_encoding(s.columns[c].encoding);
                    self.put_cell(b, f, c, enc, 0, &cells[c])?;
                }
                out.push(b.build().map_err(tree)?.as_bytes());
            }
        }
        let order = keys.sorted(&primary.key);
        if let Some(w) = order.windows(2).find(|w| {
            primary
                .key
                .compare(keys.get(w[0] as usize), keys.get(w[1] as usize))
                .is_eq()
        }) {
            if upsert {
                self.auto_increment = auto_increment;
                return Ok(BulkInsert::RepeatedKey);
            }
            let what = format!("row {}: duplicate primary key", w[1]);
            return Err(bad(&self.name, &self.key_names(), what));
        }
        let empty = empty_value()?;
        let mut roots = Vec::with_capacity(s.indexes.len());
        for ((ix, schema), ikeys) in s.indexes.iter().zip(index_schemas).zip(&index_keys) {
            if !keys.ends.is_empty() {
                self.refuse_content_hashed(ix)?;
            }
            if ix.unique {
                let all = (0..ikeys.len()).map(|i| (ikeys.get(i), i));
                self.unique_new_keys(ix, &schema.key, all)?;
            }
            let sorted = ikeys.sorted(&schema.key);
            let items = sorted.iter().map(|&i| (ikeys.get(i as usize), &empty[..]));
            roots.push(Map::from_sorted(store, schema, items).map_err(tree)?.root());
        }
        let items = order
            .iter()
            .map(|&i| (keys.get(i as usize), values.get(i as usize)));
        self.primary = Map::from_sorted(store, primary, items)
            .map_err(tree)?
            .root();
        self.indexes = roots;
        Ok(BulkInsert::Inserted(keys.len()))
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::super::api::{DoltWriter, RowMode};
    use super::super::api_tests::meta;
    use super::super::table_def::TableDef;
    use super::super::tests::{copy_db, scenario};
    use crate::error::DoltError;
    use crate::sql_value::SqlValue;

    const CREATE: &str = "CREATE TABLE bulk (
        id int NOT NULL,
        name varchar(20) NOT NULL,
        note text,
        price decimal(8,2),
        score double,
        day date,
        at datetime(6),
        kind enum('a','b','c') DEFAULT 'b',
        code varbinary(8),
        email varchar(40),
        PRIMARY KEY (id),
        KEY by_name (name, day),
        UNIQUE KEY by_email (email)
    )";
    const COLUMNS: [&str; 9] = [
        "id", "name", "note", "price", "score", "day", "at", "code", "email",
    ];

    /// Rows as text fields (`None`: NULL), in no particular key order, some with NULLs, a
    /// long text value, duplicate names and NULL emails (NULLs never clash in a unique index).
    fn rows() -> Vec<Vec<Option<String>>> {
        (0..1200)
            .map(|i: i64| {
                let id = (i * 7919) % 10_007;
                let f = |s: String| Some(s);
                vec![
                    f(id.to_string()),
                    f(format!("name-{}", i % 97)),
                    (i % 5 != 0).then(|| "x".repeat((i % 300) as usize * 30)),
                    f(format!("{}.{:02}", i % 9999, i % 100)),
                    (i % 7 != 0).then(|| format!("{}", i as f64 / 8.0)),
                    f(format!(
                        "20{:02}-{:02}-{:02}",
                        i % 30,
                        i % 12 + 1,
                        i % 28 + 1
                    )),
                    f(format!(
                        "2024-01-01 00:{:02}:{:02}.{:06}",
                        i % 60,
                        i / 60 % 60,
                        i
                    )),
                    f(format!("c{i}")),
                    (i % 3 == 0).then(|| format!("user{i}@example.com")),
                ]
            })
            .collect()
    }

    fn as_values(rows: &[Vec<Option<String>>]) -> Vec<Vec<Option<SqlValue>>> {
        rows.iter()
            .map(|r| r.iter().map(|f| f.clone().map(SqlValue::Text)).collect())
            .collect()
    }

    fn fields(rows: &[Vec<Option<String>>]) -> impl Iterator<Item = Vec<Option<Cow<'_, [u8]>>>> {
        rows.iter().map(|r| {
            r.iter()
                .map(|f| f.as_deref().map(|s| Cow::Borrowed(s.as_bytes())))
                .collect()
        })
    }

    /// A fresh writer on a copy of a Dolt-made database with the table `bulk` created.
    fn writer() -> (tempfile::TempDir, DoltWriter) {
        let (tmp, dir) = copy_db(&scenario("branches/after"));
        let mut w = DoltWriter::open(&dir).unwrap();
        w.create_table(&TableDef::from_sql(CREATE).unwrap())
            .unwrap();
        (tmp, w)
    }

    #[test]
    fn integer_keys_sort_as_their_tuples() {
        use prollystore_format::tuple::{TupleBuilder, TupleDesc, Type};
        use prollystore_format::Encoding;
        let desc = TupleDesc::new(vec![
            Type::nullable(Encoding::Int32),
            Type::nullable(Encoding::Uint8),
            Type::not_null(Encoding::Int64),
        ]);
        let mut keys = super::Packed::default();
        let mut b = TupleBuilder::new(desc.clone());
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..2000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = (x >> 33) as i64;
            if v % 5 != 0 {
                b.put_int32(0, [i32::MIN, -7, 0, 3, i32::MAX][(v % 5) as usize])
                    .unwrap();
            }
            if v % 3 != 0 {
                b.put_uint8(1, (v % 256) as u8).unwrap();
            }
            b.put_int64(2, [i64::MIN, -1, 0, 1, i64::MAX, v][(v % 6) as usize])
                .unwrap();
            keys.push(b.build().unwrap().as_bytes());
        }
        let fast = keys.sorted(&desc);
        let mut slow: Vec<u32> = (0..keys.len() as u32).collect();
        slow.sort_by(|&a, &b| {
            desc.compare(keys.get(a as usize), keys.get(b as usize))
                .then(a.cmp(&b))
        });
        assert_eq!(fast, slow);
        assert!(super::int_sort_key(&desc, keys.get(0)).is_some());
        let text = TupleDesc::new(vec![Type::nullable(Encoding::String)]);
        assert_eq!(super::int_sort_key(&text, keys.get(0)), None);
    }

    #[test]
    fn streamed_rows_build_the_trees_inserts_build() {
        let rows = rows();
        // Reference: the rows inserted as values (index keys decoded back from each row),
        // and the same rows inserted in two calls (the later one edits the stored trees).
        let (_a, mut by_values) = writer();
        by_values
            .insert("bulk", &COLUMNS, &as_values(&rows))
            .unwrap();
        let expected = by_values.commit(&meta("bulk")).unwrap();
        let (_b, mut in_parts) = writer();
        for part in rows.chunks(1050) {
            in_parts.insert("bulk", &COLUMNS, &as_values(part)).unwrap();
        }
        assert_eq!(in_parts.commit(&meta("bulk")).unwrap(), expected);
        for mode in [RowMode::Insert, RowMode::Upsert] {
            let (_c, mut streamed) = writer();
            let n = streamed
                .apply_fields(mode, "bulk", &COLUMNS, || fields(&rows))
                .unwrap();
            assert_eq!(n, rows.len());
            assert_eq!(
                streamed.commit(&meta("bulk")).unwrap(),
                expected,
                "{mode:?}"
            );
        }
    }

    #[test]
    fn streamed_rows_fail_and_repeat_keys_as_inserts_do() {
        let mut rows = rows();
        rows.truncate(50);
        // A repeated key: an insert names the later row; an upsert lets the later row win.
        let mut repeated = rows.clone();
        repeated.push(rows[10].clone());
        repeated.last_mut().unwrap()[1] = Some("changed".into());
        let (_a, mut w) = writer();
        let expected = w
            .insert("bulk", &COLUMNS, &as_values(&repeated))
            .unwrap_err()
            .to_string();
        let got = w
            .apply_fields(RowMode::Insert, "bulk", &COLUMNS, || fields(&repeated))
            .unwrap_err();
        assert_eq!(got.to_string(), expected);
        assert!(
            expected.contains("row 50: duplicate primary key"),
            "{expected}"
        );
        let (_b, mut by_values) = writer();
        by_values
            .upsert("bulk", &COLUMNS, &as_values(&repeated))
            .unwrap();
        let (_c, mut streamed) = writer();
        streamed
            .apply_fields(RowMode::Upsert, "bulk", &COLUMNS, || fields(&repeated))
            .unwrap();
        assert_eq!(
            streamed.commit(&meta("m")).unwrap(),
            by_values.commit(&meta("m")).unwrap()
        );
        // A unique value twice, a NULL in a NOT NULL column, a value out of range, bad UTF-8.
        let mut twice = rows.clone();
        twice[20][8] = twice[3][8].clone();
        let mut null = rows.clone();
        null[7][1] = None;
        let mut range = rows.clone();
        range[9][3] = Some("12345678.5".into());
        for bad in [twice, null, range] {
            let expected = w
                .insert("bulk", &COLUMNS, &as_values(&bad))
                .unwrap_err()
                .to_string();
            let got = w
                .apply_fields(RowMode::Insert, "bulk", &COLUMNS, || fields(&bad))
                .unwrap_err();
            assert_eq!(got.to_string(), expected);
        }
        let err = w
            .apply_fields(RowMode::Insert, "bulk", &["id", "name"], || {
                std::iter::once(vec![
                    Some(Cow::Borrowed(&b"1"[..])),
                    Some(Cow::Borrowed(&b"\xff"[..])),
                ])
            })
            .unwrap_err();
        assert!(
            matches!(&err, DoltError::BadValue { column, reason, .. }
                if column == "name" && reason.contains("row 0: a value is not UTF-8")),
            "{err}"
        );
        // Nothing of the failed calls stayed: the table is still empty.
        assert!(w.tables().unwrap().contains(&"bulk".to_string()));
        let n = w
            .apply_fields(RowMode::Insert, "bulk", &COLUMNS, || fields(&rows))
            .unwrap();
        assert_eq!(n, rows.len());
    }
}
