//! A table's diff between two states cut into parts of nearly equal work, for distributed
//! engines: each [`DiffPart`] is a small JSON description that any process can open on its
//! own and read just its rows of the diff (the Arrow crate's `DiffBatches::part` and
//! `open_diff_part` read one as record batches with `dolt_diff`'s columns). The parts'
//! outputs, one after the other, are the whole diff's rows in the whole diff's order.
//!
//! Why by key ranges, cut at leaf ends: a diff's rows are not positions of one tree, so they
//! cannot be counted the way a table's are ([`crate::parts`]). What can be known without
//! reading a leaf is where the diff's work is: walking the two row trees' internal levels
//! only, down through the subtrees whose addresses differ (the diff's own walk, one level
//! up: [`prollystore::Map::changed_leaves`]), lists the leaves the two states do not share
//! with their row counts from their parents. Those rows are what the diff compares; the
//! cumulative count is cut into `n` nearly equal pieces at leaf ends. Internal nodes list
//! each child by its *last* key, so a cut falls just after a key: a part holds the keys after
//! `after_key` (exclusive) up to `last_key` (inclusive), `null` meaning unbounded — a
//! `[start, end)` range would need the first key of the next leaf, one more leaf read per
//! cut.
//!
//! What is balanced is the rows compared, not the rows changed: a leaf with one changed row
//! counts as much as a leaf whose every row changed (the number of changed rows is only known
//! by reading the leaves). A diff whose changes are spread evenly over its changed leaves
//! gives parts of nearly equal output; a table added or dropped (every row changes) is cut at
//! exact positions. Two states that share the table's rows give a single empty part, so a
//! reader still gets the schema.
//!
//! Why pinned: a part records, for each side, the state as asked for, the commit and root
//! value it resolved to, the table chunk (`null` when the table is not in that state), its
//! row data's root and the date `dolt_diff` shows for it. It reads those table chunks,
//! whatever the branches hold later, and refuses a database that lacks them. Its boundary
//! keys are stored keys of one side or the other, which the reader checks.
//!
//! Schema changes are read as [`TableDiff`] reads them: each side's columns from its own
//! schema; a changed primary key refuses the cut as it refuses the rows.
//!
//! ```
//! use prollystore_dolt::diff_parts::{split_diff, DiffPart};
//! use prollystore_dolt::Database;
//!
//! # fn main() -> prollystore_dolt::Result<()> {
//! # let dir = prollystore_test_vectors::require("dolt-db/vecdb");
//! let db = Database::open(&dir)?;
//! let parts = split_diff(&db, "main", "feature", "items", 4, None)?;
//! let json: Vec<String> = parts.iter().map(DiffPart::to_json).collect(); // sent to workers
//!
//! // On a worker: the part alone says where and what to read.
//! let part = DiffPart::from_json(&json[0])?;
//! let db = part.open_database()?;
//! let diff = part.diff(&db)?;
//! let rows = diff.rows()?.count();
//! # let _ = rows;
//! # Ok(())
//! # }
//! ```

use std::path::PathBuf;

use prollystore_format::Address;
use serde::{Deserialize, Serialize};

use crate::db::{Database, Table};
use crate::error::{bad_input, Result};
use crate::parts::{
    address_text, local_path, location, opt_address_text, opt_hex, parse_description, pinned_table,
    Located, Origin,
};
use crate::table_diff::{commit_micros, now_micros, DiffSide, TableDiff};

/// The `format` every diff part description carries; a reader refuses others.
pub const DIFF_PART_FORMAT: &str = "prollystore.dolt.diff-part/1";

/// One part of a table's diff: where the database is, the two states and table chunks it was
/// cut from, and the key range it covers. Serialized as JSON ([`DiffPart::to_json`],
/// [`DiffPart::from_json`]); every field is checked when parsed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffPart {
    /// [`DIFF_PART_FORMAT`].
    pub format: String,
    /// The database: a `file://` URL of the directory holding `.dolt` (a plain path is also
    /// read), or the location the caller gave.
    pub database: String,
    /// The table's name (in the `to` state, else the `from` state).
    pub table: String,
    /// The state the diff is from.
    pub from: DiffPartSide,
    /// The state the diff is to.
    pub to: DiffPartSide,
    /// This part's number, from 0.
    pub index: u64,
    /// How many parts the diff was cut into.
    pub of: u64,
    /// The part's rows have stored keys after this one (exclusive), hex; `null` for the
    /// first part.
    #[serde(with = "opt_hex")]
    pub after_key: Option<Vec<u8>>,
    /// ... and up to this one (inclusive), hex; `null` for the last part.
    #[serde(with = "opt_hex")]
    pub last_key: Option<Vec<u8>>,
    /// Stored rows the part compares (of the leaves the two states do not share): the
    /// measure the parts were balanced by, not the number of rows it gives.
    pub rows_compared: u64,
}

/// One state of a [`DiffPart`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffPartSide {
    /// The state as asked for (a branch, tag, commit, `HEAD~N`, `WORKING`, `STAGED`,
    /// `BRANCH@WORKING`); `dolt_diff` shows it as `from_commit` / `to_commit`.
    pub at: String,
    /// The commit it resolved to, for committed states.
    #[serde(with = "opt_address_text")]
    pub commit: Option<Address>,
    /// The root value it resolved to.
    #[serde(with = "address_text")]
    pub root: Address,
    /// The table chunk in that state; `null` when the table is not in it.
    #[serde(with = "opt_address_text")]
    pub table_hash: Option<Address>,
    /// The root of that table's row data, checked on open; `null` with `table_hash`.
    #[serde(with = "opt_address_text")]
    pub rows_root: Option<Address>,
    /// The date `dolt_diff` shows for the state (`from_commit_date` / `to_commit_date`),
    /// Unix microseconds: the commit's date, or for an uncommitted state the time of the cut.
    pub date_micros: i64,
}

/// Cuts the diff of table `table` from state `from` to state `to` (each as
/// [`Origin::resolve`] takes it) into at most `n` parts of nearly equal work (see the module
/// documentation; [`TableDiff::cuts`]). `location`: where readers open the database, if not
/// the directory it was opened from.
pub fn split_diff(
    db: &Database,
    from: &str,
    to: &str,
    table: &str,
    n: usize,
    location: Option<&str>,
) -> Result<Vec<DiffPart>> {
    if n == 0 {
        return Err(bad_input(
            format!("splitting the diff of table {table:?} into 0 parts"),
            "ask for at least one part",
        ));
    }
    let database = match location {
        Some(l) => l.to_string(),
        None => self::location(db)?,
    };
    let (from, to) = (resolve(db, from, table)?, resolve(db, to, table)?);
    if from.1.table.is_none() && to.1.table.is_none() {
        return Err(crate::DoltError::NotFound(format!(
            "table {table:?} in {:?} and in {:?}",
            from.0.at, to.0.at
        )));
    }
    let sides = [
        side(db, &from.0, &from.1.table, from.1.date_micros),
        side(db, &to.0, &to.1.table, to.1.date_micros),
    ];
    let diff = TableDiff::from_sides(db, from.1, to.1)?;
    let cuts = diff.cuts(n)?;
    let of = cuts.len() as u64;
    let mut after_key = None;
    let mut parts = Vec::with_capacity(cuts.len());
    for (index, (last_key, rows_compared)) in cuts.into_iter().enumerate() {
        parts.push(DiffPart {
            format: DIFF_PART_FORMAT.to_string(),
            database: database.clone(),
            table: diff.name().to_string(),
            from: sides[0].clone(),
            to: sides[1].clone(),
            index: index as u64,
            of,
            after_key: after_key.take(),
            last_key: last_key.clone(),
            rows_compared,
        });
        after_key = last_key;
    }
    Ok(parts)
}

/// State `at` resolved once (as a table part resolves it) and the diff side it gives.
fn resolve(db: &Database, at: &str, table: &str) -> Result<(Origin, DiffSide)> {
    let origin = Origin::resolve(db, at)?;
    let date = match origin.commit {
        Some(c) => commit_micros(db.commit(c)?.timestamp_millis),
        None => now_micros(),
    };
    let root = db.root_value(origin.root)?;
    let side = DiffSide::in_root(db, at, &root, date, table)?;
    Ok((origin, side))
}

fn side(db: &Database, origin: &Origin, table: &Option<Table>, date: i64) -> DiffPartSide {
    DiffPartSide {
        at: origin.at.clone(),
        commit: origin.commit,
        root: origin.root,
        table_hash: table.as_ref().map(|t| t.address),
        rows_root: table.as_ref().map(|t| t.primary_scan_map(db).root()),
        date_micros: date,
    }
}

impl DiffPart {
    /// The part as one line of JSON.
    pub fn to_json(&self) -> String {
        // Strings, numbers and options only: serializing cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Parses a part written by [`DiffPart::to_json`]. Anything else — not JSON, a missing or
    /// unknown field, a bad hash or hex key, another format, numbers that do not make a part —
    /// is a [`crate::DoltError::BadInput`] that says what.
    pub fn from_json(text: &str) -> Result<DiffPart> {
        let what = "a diff part description (JSON)";
        let kind = "a diff part";
        let part: DiffPart = parse_description(text, what, kind, DIFF_PART_FORMAT)?;
        let sides_agree = |s: &DiffPartSide| s.table_hash.is_some() == s.rows_root.is_some();
        if part.index >= part.of
            || !sides_agree(&part.from)
            || !sides_agree(&part.to)
            || (part.from.table_hash.is_none() && part.to.table_hash.is_none())
        {
            return Err(bad_input(
                what,
                format!(
                    "part {} of {} of the diff of table {:?} is not a part (a part needs \
                     index < of, and the table in at least one state, with its rows root)",
                    part.index, part.of, part.table
                ),
            ));
        }
        Ok(part)
    }

    /// What errors name this part by.
    pub fn describe(&self) -> String {
        format!(
            "part {} of {} of the diff of table {:?} from {:?} to {:?}",
            self.index, self.of, self.table, self.from.at, self.to.at
        )
    }

    /// The local directory of the database: a `file://` URL's path, or a plain path. Other
    /// schemes are refused here: `prollystore_dolt_remote::open_part_database` opens any part's
    /// database, remote ones included (or open it yourself and use [`DiffPart::diff`]).
    pub fn database_path(&self) -> Result<PathBuf> {
        local_path(&self.database, &self.describe(), "DiffPart::diff")
    }

    /// Opens the part's database for reading (without a SQL expression engine: tables with
    /// VIRTUAL columns need one, `prollystore_sql::open(part.database_path()?)`).
    pub fn open_database(&self) -> Result<Database> {
        Database::open(self.database_path()?)
    }

    /// The two sides the part was cut from, read from `db` by their table chunks (see
    /// [`crate::parts::Part::table`] for the errors).
    pub fn sides(&self, db: &Database) -> Result<(DiffSide, DiffSide)> {
        let what = self.describe();
        let side = |s: &DiffPartSide| -> Result<DiffSide> {
            let table = match (s.table_hash, s.rows_root) {
                (Some(hash), Some(rows)) => Some(pinned_table(db, &what, &self.table, hash, rows)?),
                _ => None,
            };
            Ok(DiffSide {
                spec: s.at.clone(),
                table,
                date_micros: s.date_micros,
            })
        };
        Ok((side(&self.from)?, side(&self.to)?))
    }

    /// The part's diff: the two pinned tables' diff restricted to the part's keys
    /// ([`TableDiff::between`]). Its boundary keys are checked to be stored keys of one side
    /// (a tampered description is an error, never other rows).
    pub fn diff<'d>(&self, db: &'d Database) -> Result<TableDiff<'d>> {
        let (from, to) = self.sides(db)?;
        let diff = TableDiff::from_sides(db, from, to)?;
        for key in [&self.after_key, &self.last_key].into_iter().flatten() {
            if !diff.holds_key(key)? {
                return Err(bad_input(
                    self.describe(),
                    format!(
                        "its boundary key {} is a key of neither state: the description was \
                         changed after it was cut",
                        hex::encode(key)
                    ),
                ));
            }
        }
        Ok(diff.between(self.after_key.clone(), self.last_key.clone()))
    }
}

impl Located for DiffPart {
    fn database(&self) -> &str {
        &self.database
    }
    fn describe(&self) -> String {
        DiffPart::describe(self)
    }
    fn database_path(&self) -> Result<PathBuf> {
        DiffPart::database_path(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DoltError;

    /// The fuzz target's seed is a description that parses (and writes back as itself).
    #[test]
    fn the_fuzz_seed_parses() {
        let seed = include_str!("../../../fuzz/seeds/dolt_part_json/diff_part1.json");
        let p = DiffPart::from_json(seed.trim()).unwrap();
        assert_eq!(DiffPart::from_json(&p.to_json()).unwrap(), p);
        assert_eq!((p.index, p.of, p.rows_compared), (1, 3, 480));
    }

    fn sample() -> DiffPart {
        let a = |b| Address::from_slice(&[b; 20]).unwrap();
        DiffPart {
            format: DIFF_PART_FORMAT.into(),
            database: "file:///tmp/db/".into(),
            table: "t".into(),
            from: DiffPartSide {
                at: "main~1".into(),
                commit: Some(a(1)),
                root: a(2),
                table_hash: Some(a(3)),
                rows_root: Some(a(4)),
                date_micros: 1_700_000_000_000_000,
            },
            to: DiffPartSide {
                at: "WORKING".into(),
                commit: None,
                root: a(5),
                table_hash: None,
                rows_root: None,
                date_micros: 1_700_000_001_000_000,
            },
            index: 1,
            of: 4,
            after_key: Some(vec![0, 0xff, 7]),
            last_key: None,
            rows_compared: 512,
        }
    }

    #[test]
    fn json_round_trips() {
        let p = sample();
        let json = p.to_json();
        assert!(json.contains("\"after_key\":\"00ff07\""), "{json}");
        assert_eq!(DiffPart::from_json(&json).unwrap(), p);
    }

    #[test]
    fn bad_descriptions_are_errors_that_say_what() {
        let good = sample().to_json();
        let cases = [
            ("", "does not parse"),
            ("{", "does not parse"),
            ("null", "does not parse"),
            (&good.replace("\"00ff07\"", "\"0g\""), "not hex"),
            (
                &good.replace("\"table\":\"t\",", ""),
                "missing field `table`",
            ),
            (
                &good.replace("\"at\":\"WORKING\"", "\"at\":\"WORKING\",\"x\":1"),
                "unknown field `x`",
            ),
            (
                &good.replace(DIFF_PART_FORMAT, "prollystore.dolt.part/1"),
                "this reader reads",
            ),
            (&good.replace("\"index\":1", "\"index\":4"), "is not a part"),
            (
                &good.replace(&Address::from_slice(&[4; 20]).unwrap().to_base32(), "x"),
                "not a chunk hash",
            ),
        ];
        for (text, want) in cases {
            let e = DiffPart::from_json(text).unwrap_err();
            assert!(matches!(e, DoltError::BadInput { .. }), "{text}: {e:?}");
            assert!(e.to_string().contains(want), "{text}: {e}");
        }
    }
}
