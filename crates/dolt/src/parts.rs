//! A table cut into parts of nearly equal row counts, for distributed engines (Dask, Ray,
//! Spark): each [`Part`] is a small JSON description that any process can open on its own
//! and read just its rows (the Arrow crate's `TableBatches::part` and `open_part` read one
//! as record batches).
//!
//! Why by positions: every internal node of a prolly tree stores the row count under each
//! child, so the row at position `k` is found by one descent that reads a single leaf. Part
//! `i` of `n` over positions `[lo, hi)` covers `[lo + i·m/n, lo + (i+1)·m/n)` (`m = hi - lo`):
//! parts differ by at most one row, whatever the keys look like, and cutting 64 parts costs
//! 63 descents, not a scan. Positions count stored entries, so a keyless table is cut by
//! distinct rows (each comes with all its copies).
//!
//! Why pinned: a part records the table chunk it was cut from (`table_hash`), the root value
//! and commit above it, and its row data's root. Chunks are immutable, so a part opened after
//! its branch moved still reads exactly the rows it was cut from; if that table chunk is gone
//! (`dolt gc` after the branch moved, or a part from another database) opening it is an error
//! that says so, never other rows. A part also records its boundary keys (the stored key
//! tuples at its first position and just past its last, hex): the reader checks them, and an
//! engine that reads by key can seek to them.
//!
//! ```
//! use prollystore_dolt::parts::{split, Part, SplitOptions};
//! use prollystore_dolt::Database;
//!
//! # fn main() -> prollystore_dolt::Result<()> {
//! # let dir = prollystore_test_vectors::require("dolt-db/vecdb");
//! let db = Database::open(&dir)?;
//! let parts = split(&db, "main", "items", 4, &SplitOptions::default())?;
//! let json: Vec<String> = parts.iter().map(Part::to_json).collect(); // sent to workers
//!
//! // On a worker: the part alone says where and what to read.
//! let part = Part::from_json(&json[1])?;
//! let db = part.open_database()?;
//! let table = part.table(&db)?;
//! let rows = table.reader(&db)?.scan_ordinals(part.ordinals())?.count();
//! assert_eq!(rows as u64, part.rows());
//! # Ok(())
//! # }
//! ```

use std::ops::Range;
use std::path::PathBuf;

use prollystore_format::Address;
use serde::{Deserialize, Serialize};

use crate::db::{parse_at, Database, State, Table};
use crate::error::{bad_input, bad_input_from, DoltError, Result};
use crate::table_reader::KeyRange;

/// The `format` every part description carries; a reader refuses others.
pub const PART_FORMAT: &str = "prollystore.dolt.part/1";

/// One part of a table: where the database is, what state and table chunk it was cut from,
/// which positions (and keys) it covers and which columns to read. Serialized as JSON
/// ([`Part::to_json`], [`Part::from_json`]); every field is checked when parsed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Part {
    /// [`PART_FORMAT`].
    pub format: String,
    /// The database: a `file://` URL of the directory holding `.dolt` (a plain path is also
    /// read), or the location a caller gave ([`SplitOptions::location`]).
    pub database: String,
    /// The state as asked for: a branch, tag, commit or `HEAD~N`, or `BRANCH@WORKING` /
    /// `BRANCH@STAGED` (for people; the part reads `table_hash`).
    pub at: String,
    /// The commit that state resolved to, for committed states.
    #[serde(with = "opt_address_text")]
    pub commit: Option<Address>,
    /// The root value the part was cut from (`dolt_hashof_db`).
    #[serde(with = "address_text")]
    pub root: Address,
    /// The table's name.
    pub table: String,
    /// The table chunk the part was cut from (`dolt_hashof_table`): what it reads.
    #[serde(with = "address_text")]
    pub table_hash: Address,
    /// The root of the table's row data (its clustered index), checked on open.
    #[serde(with = "address_text")]
    pub rows_root: Address,
    /// This part's number, from 0.
    pub index: u64,
    /// How many parts the table (or range) was cut into.
    pub of: u64,
    /// The first position (row ordinal in key order, 0: the table's first row).
    pub start: u64,
    /// One past the last position.
    pub end: u64,
    /// The stored key tuple at `start`, hex; `null` when the part is empty.
    #[serde(with = "opt_hex")]
    pub start_key: Option<Vec<u8>>,
    /// The stored key tuple at `end` (the next part's first), hex; `null` at the table's end.
    #[serde(with = "opt_hex")]
    pub end_key: Option<Vec<u8>>,
    /// The columns to read, in this order; `null`: every visible column.
    pub columns: Option<Vec<String>>,
}

/// What to cut besides the table: a primary-key range, the columns to read, and where
/// readers will find the database.
#[derive(Clone, Debug, Default)]
pub struct SplitOptions {
    /// Only the rows of this primary-key range (in key order; a `limit` shortens it, a
    /// `reverse` range is refused). Default: every row.
    pub range: KeyRange,
    /// The columns every part reads, in this order (default: every visible column).
    pub columns: Option<Vec<String>>,
    /// Where readers open the database, if not the directory it was opened from (a path as
    /// the workers mount it, say).
    pub location: Option<String>,
}

/// A state resolved once, for cutting tables of it: what parts record of where they come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The state as asked for ([`parse_at`]'s forms).
    pub at: String,
    /// The commit it resolved to (committed states).
    pub commit: Option<Address>,
    /// The root value it resolved to.
    pub root: Address,
}

impl Origin {
    /// Resolves `at` (as [`parse_at`] reads it) in `db`. A committed state is resolved once,
    /// to a commit and then its root, so the two agree however the branch moves meanwhile.
    pub fn resolve(db: &Database, at: &str) -> Result<Origin> {
        let (spec, state) = parse_at(at);
        let (commit, root) = match state {
            State::Committed if !matches!(spec, "WORKING" | "STAGED") => {
                let commit = db.resolve_revision(spec)?;
                (Some(commit), db.commit(commit)?.root)
            }
            _ => (None, db.root_at(spec, state)?.address),
        };
        Ok(Origin {
            at: at.to_string(),
            commit,
            root,
        })
    }
}

/// Cuts table `table` of state `at` (as [`parse_at`] reads it: a branch, tag, commit,
/// `HEAD~N`, `WORKING`, `BRANCH@WORKING`, `BRANCH@STAGED`) into `n` parts of nearly equal row
/// counts ([`split_table`]).
pub fn split(
    db: &Database,
    at: &str,
    table: &str,
    n: usize,
    options: &SplitOptions,
) -> Result<Vec<Part>> {
    let origin = Origin::resolve(db, at)?;
    let t = db.table(&db.root_value(origin.root)?, table)?;
    split_table(db, &origin, &t, n, options)
}

/// Cuts `table` (read from `origin`'s root) into `n` parts of nearly equal row counts (they
/// differ by at most one row) from the tree's internal counts: one descent per boundary, no
/// scan. Fewer parts when the range has fewer than `n` rows (one row each), and a single
/// empty part for an empty range, so a reader still gets the schema.
pub fn split_table(
    db: &Database,
    origin: &Origin,
    table: &Table,
    n: usize,
    options: &SplitOptions,
) -> Result<Vec<Part>> {
    if n == 0 {
        return Err(bad_input(
            format!("splitting table {:?} into 0 parts", table.name),
            "ask for at least one part",
        ));
    }
    let t = table;
    if let Some(columns) = &options.columns {
        projection(t, columns)?;
    }
    let database = match &options.location {
        Some(l) => l.clone(),
        None => location(db)?,
    };
    let reader = t.reader(db)?;
    let Range { start: lo, end: hi } = reader.ordinals(&options.range)?;
    let map = t.primary_scan_map(db);
    let total = hi - lo;
    let count = (n as u64).min(total).max(1);
    // The key at each boundary position: a descent through the parents' counts to one leaf.
    let rows_end = map.count().map_err(DoltError::from)?;
    let key_at = |pos: u64| -> Result<Option<Vec<u8>>> {
        if pos >= rows_end {
            return Ok(None);
        }
        Ok(map
            .get_ordinal(pos)
            .map_err(DoltError::from)?
            .map(|(k, _)| k.to_vec()))
    };
    let bound = |i: u64| lo + (i as u128 * total as u128 / count as u128) as u64;
    let mut parts = Vec::with_capacity(count as usize);
    let mut start_key = key_at(lo)?;
    for i in 0..count {
        let (start, end) = (bound(i), bound(i + 1));
        let end_key = key_at(end)?;
        parts.push(Part {
            format: PART_FORMAT.to_string(),
            database: database.clone(),
            at: origin.at.clone(),
            commit: origin.commit,
            root: origin.root,
            table: t.name.clone(),
            table_hash: t.address,
            rows_root: map.root(),
            index: i,
            of: count,
            start,
            end,
            start_key: if start < end { start_key } else { None },
            end_key: end_key.clone(),
            columns: options.columns.clone(),
        });
        start_key = end_key;
    }
    Ok(parts)
}

/// The `file://` URL of the directory `db` was opened from (the one holding `.dolt`). A
/// database read in place from a remote ([`Database::from_source`]) is located by its URL.
pub(crate) fn location(db: &Database) -> Result<String> {
    let dot = db.dot_dolt();
    if let Some(url) = dot.to_str().filter(|s| s.contains("://")) {
        return Ok(url.to_string());
    }
    let dir = if dot.file_name().is_some_and(|n| n == ".dolt") {
        dot.parent().unwrap_or(dot)
    } else {
        dot
    };
    let dir = std::fs::canonicalize(dir).map_err(|e| DoltError::Io {
        file: dir.display().to_string(),
        source: e,
    })?;
    url::Url::from_directory_path(&dir)
        .map(String::from)
        .map_err(|()| {
            bad_input(
                format!("the database at {}", dir.display()),
                "its path cannot be written as a file:// URL; give SplitOptions::location",
            )
        })
}

/// Positions among `table`'s visible columns of `columns`, in the order given.
pub fn projection(table: &Table, columns: &[String]) -> Result<Vec<usize>> {
    let s = &table.schema;
    let visible: Vec<&str> = s
        .visible_columns()
        .into_iter()
        .filter_map(|i| s.columns.get(i).map(|c| c.name.as_str()))
        .collect();
    columns
        .iter()
        .map(|c| {
            visible
                .iter()
                .position(|v| v.eq_ignore_ascii_case(c))
                .ok_or_else(|| {
                    DoltError::NotFound(format!(
                        "column {c:?} of table {:?} (columns: {})",
                        table.name,
                        visible.join(", ")
                    ))
                })
        })
        .collect()
}

impl Part {
    /// The part as one line of JSON.
    pub fn to_json(&self) -> String {
        // Strings, numbers and options only: serializing cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Parses a part written by [`Part::to_json`]. Anything else — not JSON, a missing or
    /// unknown field, a bad hash or hex key, another format, positions that do not make a
    /// part — is a [`DoltError::BadInput`] that says what.
    pub fn from_json(text: &str) -> Result<Part> {
        let what = "a part description (JSON)";
        let part: Part = parse_description(text, what, "a part", PART_FORMAT)?;
        if part.start > part.end || part.index >= part.of {
            return Err(bad_input(
                what,
                format!(
                    "part {} of {} over positions {}..{} of table {:?} is not a part",
                    part.index, part.of, part.start, part.end, part.table
                ),
            ));
        }
        Ok(part)
    }

    /// Rows (stored entries) in the part.
    pub fn rows(&self) -> u64 {
        self.end - self.start
    }

    /// The positions the part covers.
    pub fn ordinals(&self) -> Range<u64> {
        self.start..self.end
    }

    /// What errors name this part by.
    pub fn describe(&self) -> String {
        format!(
            "part {} of {} of table {:?} (cut at {:?}, root {}, table {})",
            self.index, self.of, self.table, self.at, self.root, self.table_hash
        )
    }

    /// The local directory of the database: a `file://` URL's path, or a plain path. Other
    /// schemes are refused here: `prollystore_dolt_remote::open_part_database` opens any part's
    /// database, remote ones included (or open it yourself and use [`Part::table`]).
    pub fn database_path(&self) -> Result<PathBuf> {
        local_path(&self.database, &self.describe(), "Part::table")
    }

    /// Opens the part's database for reading (without a SQL expression engine: tables with
    /// VIRTUAL columns need one, `prollystore_sql::open(part.database_path()?)`), to read
    /// this part: the leaves its read brings in are not kept
    /// ([`DoltChunkSource::set_keep_bulk_reads`](crate::chunks::DoltChunkSource::set_keep_bulk_reads)).
    pub fn open_database(&self) -> Result<Database> {
        let db = Database::open(self.database_path()?)?;
        db.source().set_keep_bulk_reads(false);
        Ok(db)
    }

    /// The table the part was cut from, read from `db` by its chunk: the same rows however the
    /// branch moved since. A database that does not hold that chunk (a part from another
    /// database, or one whose state was garbage-collected) or whose table does not match the
    /// part's row data is an error naming both.
    pub fn table(&self, db: &Database) -> Result<Table> {
        let what = self.describe();
        let table = pinned_table(db, &what, &self.table, self.table_hash, self.rows_root)?;
        let map = table.primary_scan_map(db);
        let count = map.count().map_err(DoltError::from)?;
        if self.end > count {
            return Err(bad_input(
                self.describe(),
                format!(
                    "positions {}..{} run past the table's {count} rows",
                    self.start, self.end
                ),
            ));
        }
        // The recorded boundary keys are where the positions are (two descents).
        let key_at = |pos: u64| -> Result<Option<&[u8]>> {
            Ok(map
                .get_ordinal(pos)
                .map_err(DoltError::from)?
                .map(|(k, _)| k))
        };
        let start_key = if self.start < self.end {
            key_at(self.start)?
        } else {
            None
        };
        for (at, want, got) in [
            (self.start, self.start_key.as_deref(), start_key),
            (self.end, self.end_key.as_deref(), key_at(self.end)?),
        ] {
            if want != got {
                let hex = |k: Option<&[u8]>| k.map_or("none".into(), hex::encode);
                return Err(bad_input(
                    self.describe(),
                    format!(
                        "the stored key at position {at} is {}, the part recorded {}: the \
                         description was changed after it was cut",
                        hex(got),
                        hex(want)
                    ),
                ));
            }
        }
        Ok(table)
    }
}

/// A part description of kind `kind` parsed from JSON and checked to carry `format` (`what`
/// names the text in errors). The format is read first, so that a description of another kind
/// (a table's part given to the diff part reader, or the reverse) is refused as such rather
/// than by its first field this kind lacks.
pub(crate) fn parse_description<T: serde::de::DeserializeOwned>(
    text: &str,
    what: &str,
    kind: &str,
    format: &str,
) -> Result<T> {
    /// Only the `format` of any JSON object (other fields ignored).
    #[derive(Deserialize)]
    struct Format {
        format: String,
    }
    // Text without a string `format` fails the full parse below, which says why.
    if let Ok(Format { format: got }) = serde_json::from_str::<Format>(text) {
        if got != format {
            return Err(bad_input(
                what,
                format!("its format is {got:?}; this reader reads {format:?}"),
            ));
        }
    }
    serde_json::from_str(text)
        .map_err(|e| bad_input_from(what, format!("it does not parse as {kind}"), e))
}

/// What any kind of part says about where its database is: a table's [`Part`] or a diff's
/// [`crate::diff_parts::DiffPart`], for code that opens either kind's database.
pub trait Located {
    /// The database's location as the part records it.
    fn database(&self) -> &str;
    /// What errors name the part by.
    fn describe(&self) -> String;
    /// The local directory of the database, or an error if the location is not local.
    fn database_path(&self) -> Result<PathBuf>;
}

impl Located for Part {
    fn database(&self) -> &str {
        &self.database
    }
    fn describe(&self) -> String {
        Part::describe(self)
    }
    fn database_path(&self) -> Result<PathBuf> {
        Part::database_path(self)
    }
}

/// The local directory a part's `database` names: a `file://` URL's path, or a plain path.
/// Other schemes are refused (the caller opens such a database itself and reads the part with
/// `reader`, which `what` names).
pub(crate) fn local_path(location: &str, what: &str, reader: &str) -> Result<PathBuf> {
    let l = location;
    if l.starts_with("file:") {
        let url = url::Url::parse(l)
            .map_err(|e| bad_input_from(what, format!("database {l:?} is not a URL"), e))?;
        return url
            .to_file_path()
            .map_err(|()| bad_input(what, format!("database {l:?} is not a local file:// URL")));
    }
    if l.contains("://") {
        return Err(DoltError::Unsupported(format!(
            "{what}: database {l:?} is not local: open it yourself and read the part with {reader}"
        )));
    }
    Ok(PathBuf::from(l))
}

/// Table `name` read from `db` by its chunk `table_hash`, checked to hold row data `rows_root`:
/// what a part was cut from, whatever its branch holds now. A database without that chunk (a
/// part from another database, or one whose state was garbage-collected) or a table whose row
/// data differs is an error naming the part (`what`) and why.
pub(crate) fn pinned_table(
    db: &Database,
    what: &str,
    name: &str,
    table_hash: Address,
    rows_root: Address,
) -> Result<Table> {
    let table = match db.table_by_address(table_hash, name) {
        Ok(t) => t,
        Err(DoltError::MissingChunk(a)) if a == table_hash => {
            return Err(bad_input(
                what,
                format!(
                    "the database at {} does not hold table chunk {}: the part comes from \
                     another database, or the state it was cut from was removed (dolt gc \
                     after its branch moved); split the table again",
                    db.dot_dolt().display(),
                    table_hash
                ),
            ))
        }
        Err(e) => return Err(e),
    };
    let root = table.primary_scan_map(db).root();
    if root != rows_root {
        return Err(bad_input(
            what,
            format!(
                "its row data root is {rows_root} but the table chunk's is {root}: the \
                 description was changed after it was cut"
            ),
        ));
    }
    Ok(table)
}

/// Addresses as the base32 text Dolt shows.
pub(crate) mod address_text {
    use prollystore_format::Address;
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(a: &Address, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&a.to_base32())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Address, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Address::from_base32(&text)
            .map_err(|e| D::Error::custom(format!("{text:?} is not a chunk hash ({e})")))
    }
}

/// Optional addresses: base32 text or `null`.
pub(crate) mod opt_address_text {
    use prollystore_format::Address;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(a: &Option<Address>, s: S) -> Result<S::Ok, S::Error> {
        match a {
            Some(a) => super::address_text::serialize(a, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Address>, D::Error> {
        #[derive(Deserialize)]
        struct Wrapped(#[serde(with = "super::address_text")] Address);
        Ok(Option::<Wrapped>::deserialize(d)?.map(|w| w.0))
    }
}

/// Optional byte strings as lowercase hex or `null`.
pub(crate) mod opt_hex {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(b: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match b {
            Some(b) => s.serialize_str(&hex::encode(b)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
        let Some(text) = Option::<std::borrow::Cow<'de, str>>::deserialize(d)? else {
            return Ok(None);
        };
        hex::decode(text.as_bytes())
            .map(Some)
            .map_err(|e| D::Error::custom(format!("a key is not hex ({e})")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Part {
        Part {
            format: PART_FORMAT.into(),
            database: "file:///tmp/db/".into(),
            at: "main".into(),
            commit: Some(Address::from_slice(&[1; 20]).unwrap()),
            root: Address::from_slice(&[2; 20]).unwrap(),
            table: "t".into(),
            table_hash: Address::from_slice(&[3; 20]).unwrap(),
            rows_root: Address::from_slice(&[4; 20]).unwrap(),
            index: 1,
            of: 4,
            start: 10,
            end: 20,
            start_key: Some(vec![0, 0xff, 7]),
            end_key: None,
            columns: Some(vec!["a".into()]),
        }
    }

    #[test]
    fn json_round_trips() {
        let p = sample();
        let json = p.to_json();
        assert!(json.contains("\"start_key\":\"00ff07\""), "{json}");
        assert_eq!(Part::from_json(&json).unwrap(), p);
        let none = Part {
            commit: None,
            columns: None,
            ..p
        };
        assert_eq!(Part::from_json(&none.to_json()).unwrap(), none);
    }

    #[test]
    fn bad_descriptions_are_errors_that_say_what() {
        let good = sample().to_json();
        let cases = [
            ("", "does not parse"),
            ("{", "does not parse"),
            ("[]", "does not parse"),
            (
                &good.replace("\"start_key\":\"00ff07\"", "\"start_key\":\"0g\""),
                "not hex",
            ),
            (
                &good.replace("\"table\":\"t\",", ""),
                "missing field `table`",
            ),
            (
                &good.replace("\"at\":", "\"nope\":1,\"at\":"),
                "unknown field `nope`",
            ),
            (&good.replace(PART_FORMAT, "other/9"), "this reader reads"),
            (
                &good.replace("\"start\":10", "\"start\":30"),
                "is not a part",
            ),
            (&good.replace("\"index\":1", "\"index\":4"), "is not a part"),
            (
                &good.replace("\"start\":10", "\"start\":-1"),
                "does not parse",
            ),
        ];
        for (text, want) in cases {
            let e = Part::from_json(text).unwrap_err();
            assert!(matches!(e, DoltError::BadInput { .. }), "{text}: {e:?}");
            assert!(e.to_string().contains(want), "{text}: {e}");
        }
        let root = good.replace(&sample().root.to_base32(), "xyz");
        let e = Part::from_json(&root).unwrap_err().to_string();
        assert!(e.contains("\"xyz\" is not a chunk hash"), "{e}");
    }

    /// A database opened for a part keeps none of the leaves its read brings in (a handle
    /// the caller opens keeps them); the part reads the same rows either way.
    #[test]
    fn part_databases_keep_no_bulk_reads() {
        let dir = prollystore_test_vectors::require("dolt-db/vecdb");
        let db = Database::open(&dir).unwrap();
        assert!(db.source().keeps_bulk_reads());
        let parts = split(&db, "main", "items", 2, &SplitOptions::default()).unwrap();
        let opened = parts[1].open_database().unwrap();
        assert!(!opened.source().keeps_bulk_reads());
        let rows = |db: &Database| {
            let t = parts[1].table(db).unwrap();
            let mut keys = Vec::new();
            crate::leaf_reader::for_each_leaf(db, &t, true, &mut |n| {
                keys.extend((0..n.count()).map(|e| n.key(e).to_vec()));
                Ok(true)
            })
            .unwrap();
            keys
        };
        assert_eq!(rows(&opened), rows(&db));
        assert!(
            !crate::leaf_reader::first_leaf_kept(&opened, &parts[1].table(&opened).unwrap())
                .unwrap()
        );
        assert!(crate::leaf_reader::first_leaf_kept(&db, &parts[1].table(&db).unwrap()).unwrap());
    }

    #[test]
    fn locations() {
        let mut p = sample();
        assert_eq!(p.database_path().unwrap(), PathBuf::from("/tmp/db/"));
        p.database = "/srv/db".into();
        assert_eq!(p.database_path().unwrap(), PathBuf::from("/srv/db"));
        p.database = "s3://bucket/db".into();
        assert!(matches!(
            p.database_path(),
            Err(DoltError::Unsupported(m)) if m.contains("not local")
        ));
        p.database = "file://host/x".into();
        assert!(p.database_path().is_err());
    }
}
