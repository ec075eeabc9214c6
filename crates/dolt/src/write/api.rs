//! [`DoltWriter`]: a Dolt database open for writing tables and committing them, in Rust.
//!
//! Changes go to one branch's working root in memory; [`DoltWriter::save`] writes it as the
//! branch's working set (what `dolt status` then lists, as after a `dolt sql` transaction) and
//! [`DoltWriter::commit`] stages everything and commits it (`dolt add -A` + `dolt commit`).
//! A change that fails (a duplicate key, a NULL in a NOT NULL column, a value out of range)
//! changes nothing, in memory or on disk.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use prollystore::Map;

use prollystore_format::message::objects::{CommitFields, WorkingSetFields};
use prollystore_format::Address;

use super::history::commit::{NewCommit, Person};
use super::history::working::{root_tables, WorkingEdits};
use super::storage::overlay::Overlay;
use super::storage::writer::{self, WorkingSetMeta};
use super::tables::alter_op::AlterStatement;
use super::tables::bulk_insert::BulkInsert;
use super::tables::table_def::TableDef;
use super::tables::table_edit::{cell_from_text, Cell, EditTable};
use crate::codec::encode::parse_value;
use crate::error::{DoltError, Result};
use crate::expressions::Expressions;
use crate::schema::{Column, SqlType};
use crate::sql_value::{Nullable, SqlValue};

/// Who and when, for a commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitMeta {
    /// The commit message.
    pub message: String,
    /// Author name.
    pub author_name: String,
    /// Author email.
    pub author_email: String,
    /// Author time, Unix milliseconds.
    pub author_millis: i64,
    /// Committer name and email when not the author (Dolt then stores them).
    pub committer: Option<(String, String)>,
    /// Committer time, Unix milliseconds (`None`: the author time, as `dolt commit --date`).
    pub committer_millis: Option<i64>,
}

impl CommitMeta {
    /// A commit by `name <email>` with `message`, made now (the system clock).
    ///
    /// ```
    /// use prollystore_dolt::write::CommitMeta;
    /// let meta = CommitMeta::now("Ada", "ada@example.com", "Add notes");
    /// assert_eq!((meta.author_name.as_str(), meta.committer), ("Ada", None));
    /// assert!(meta.author_millis > 1_700_000_000_000);
    /// ```
    pub fn now(name: &str, email: &str, message: &str) -> CommitMeta {
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        CommitMeta::at(
            name,
            email,
            message,
            i64::try_from(millis).unwrap_or(i64::MAX),
        )
    }

    /// A commit by `name <email>` with `message`, dated `millis` (Unix milliseconds; as
    /// `dolt commit --date`), committed by its author.
    ///
    /// ```
    /// use prollystore_dolt::write::CommitMeta;
    /// let meta = CommitMeta::at("Ada", "ada@example.com", "Add notes", 1_704_067_200_000);
    /// assert_eq!(meta.committer_millis, None); // the author's time
    /// ```
    pub fn at(name: &str, email: &str, message: &str, millis: i64) -> CommitMeta {
        CommitMeta {
            message: message.to_string(),
            author_name: name.to_string(),
            author_email: email.to_string(),
            author_millis: millis,
            committer: None,
            committer_millis: None,
        }
    }
}

/// A Dolt database open for writing (Dolt's writer lock held until dropped).
///
/// Tables come from `CREATE TABLE` text; rows are values per named column (`None` is NULL);
/// [`DoltWriter::commit`] makes a commit Dolt itself would make from the same changes.
///
/// ```
/// use prollystore_dolt::write::{CommitMeta, DoltWriter, TableDef};
/// use prollystore_sql::FromSql; // CREATE TABLE text, from the prollystore-sql crate
/// use prollystore_dolt::{Database, SqlValue};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let tmp = tempfile::tempdir()?;
/// # let dir = prollystore_test_vectors::writable_copy("dolt-db/vecdb", tmp.path())?;
/// let mut w = DoltWriter::open(&dir)?; // the directory holding `.dolt`
/// w.create_table(&TableDef::from_sql(
///     "CREATE TABLE notes (id INT PRIMARY KEY, body VARCHAR(100), KEY by_body (body))",
/// )?)?;
/// // One value per listed column: `SqlValue`s, or `Option<SqlValue>`s where NULLs are.
/// let note = |i: i64| vec![SqlValue::from(i), format!("note {i}").into()];
/// let rows: Vec<_> = (1..=3).map(note).collect();
/// w.insert("notes", &["id", "body"], &rows)?;
/// w.insert("notes", &["id", "body"], &[vec![Some(SqlValue::Int(4)), None]])?;
/// let commit = w.commit(&CommitMeta::now("Ada", "ada@example.com", "Add notes"))?;
/// drop(w); // releases the writer lock
///
/// let db = Database::open(&dir)?;
/// assert_eq!(db.log(db.resolve("main")?).next().unwrap()?.address, commit);
/// assert!(db.tables()?.contains(&"notes".to_string()));
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct DoltWriter {
    store: writer::StoreWriter,
    edits: WorkingEdits,
    branch: String,
    /// AUTO_INCREMENT counters shared by every branch (lower-case table name → next value),
    /// as Dolt's per-process tracker keeps them; read from the database at the first insert
    /// into a table with such a column.
    auto_increments: Option<HashMap<String, u64>>,
}

impl DoltWriter {
    /// Opens the database at `path` (the directory holding `.dolt`) for writing, on its
    /// current branch (`repo_state.json`). Fails with [`DoltError::Locked`] while Dolt or
    /// another writer has it open for writing.
    pub fn open(path: impl AsRef<Path>) -> Result<DoltWriter> {
        let path = path.as_ref();
        let store = writer::StoreWriter::open(path)?;
        let branch = store
            .database()
            .current_branch()
            .ok_or_else(|| DoltError::NotFound("the current branch (repo_state.json)".into()))?;
        Ok(DoltWriter {
            store,
            edits: WorkingEdits::default(),
            branch,
            auto_increments: None,
        })
    }

    /// The same writer with `engine` computing expression defaults, STORED generated columns
    /// and CHECK constraints of written rows, and VIRTUAL columns indexes use (see
    /// [`crate::expressions`]; `prollystore_sql::writer` opens one with MySQL's engine).
    /// Without one, writing a row that needs an expression is an error naming it.
    pub fn with_expressions(mut self, engine: Arc<dyn Expressions>) -> DoltWriter {
        self.store.set_engine(Some(engine));
        self
    }

    /// The branch whose working root changes go to.
    pub fn branch(&self) -> &str {
        &self.branch
    }

    /// The tables of the working root, by name.
    pub fn tables(&self) -> Result<Vec<String>> {
        let root = self.edits.working_root(&self.store, &self.branch)?;
        Ok(self
            .edits
            .tables(&self.store, root)?
            .into_iter()
            .map(|(n, _)| n)
            .collect())
    }

    /// The visible columns of `table`, in order.
    ///
    /// ```
    /// use prollystore_dolt::write::DoltWriter;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let tmp = tempfile::tempdir()?;
    /// # let dir = prollystore_test_vectors::writable_copy("dolt-db/vecdb", tmp.path())?;
    /// let w = DoltWriter::open(&dir)?;
    /// let names: Vec<String> = w.columns("pairs")?.into_iter().map(|c| c.name).collect();
    /// assert_eq!(names, ["a", "b", "v", "f", "t", "y", "s", "bits"]);
    /// assert_eq!(w.tables()?, ["docs", "items", "keyless_log", "pairs"]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn columns(&self, table: &str) -> Result<Vec<Column>> {
        let t = self.edits.table(&self.store, &self.branch, table)?;
        Ok(t.schema
            .visible_columns()
            .into_iter()
            .map(|i| t.schema.columns[i].clone())
            .collect())
    }

    /// Creates a table (schema, empty indexes, column tags as Dolt derives them for columns
    /// without one).
    pub fn create_table(&mut self, def: &TableDef) -> Result<()> {
        self.edits.create_table(&self.store, &self.branch, def)
    }

    /// Runs one `ALTER TABLE` statement (or `RENAME TABLE a TO b`) on the working root as
    /// Dolt 2.3.1 runs it: the same schema, column tags, rows and index trees, so the same
    /// table, root value and commit hashes as `dolt sql -q "ALTER TABLE …"` and `dolt commit`.
    /// A clause Dolt refuses is refused with its reason; one this writer does not do yet is
    /// refused by name. Either way nothing changes. (`prollystore-sql` reads the statement
    /// from its text: `w.alter(sql)` with its `SqlWriter` trait in scope.)
    pub fn alter_table(&mut self, stmt: &AlterStatement) -> Result<()> {
        self.edits.alter_table(&self.store, &self.branch, stmt)?;
        // AUTO_INCREMENT = n and RENAME TO change the counters: read them again.
        self.auto_increments = None;
        Ok(())
    }

    /// Drops a table.
    pub fn drop_table(&mut self, table: &str) -> Result<()> {
        self.edits.drop_table(&self.store, &self.branch, table)
    }

    /// Inserts rows: each gives one value per name in `columns` (`None` = NULL); columns left
    /// out get their default. A duplicate primary or unique key is an error.
    pub fn insert<V: Nullable>(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &[Vec<V>],
    ) -> Result<()> {
        self.apply(RowMode::Insert, table, columns, rows)
    }

    /// Updates rows by primary key: `columns` must include every key column; the other listed
    /// columns are set. A missing row is an error. A changed value a foreign key refers to
    /// is refused (RESTRICT / NO ACTION), given to the child rows (ON UPDATE CASCADE) or
    /// cleared in them (SET NULL), as Dolt does.
    ///
    /// ```
    /// use prollystore_dolt::write::DoltWriter;
    /// use prollystore_dolt::SqlValue;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let tmp = tempfile::tempdir()?;
    /// # let dir = prollystore_test_vectors::writable_copy("dolt-db/vecdb", tmp.path())?;
    /// let mut w = DoltWriter::open(&dir)?;
    /// let key = [SqlValue::Int(-140), SqlValue::Text("b07500".into())];
    /// let row = vec![Some(key[0].clone()), Some(key[1].clone()), Some(SqlValue::Int(7))];
    /// w.update("pairs", &["a", "b", "v"], &[row])?;
    /// w.delete("pairs", &[key.to_vec()])?;
    /// w.save(("Ada", "ada@example.com"), 1_704_067_200)?; // the working set, uncommitted
    /// assert!(!w.is_clean()?);
    /// # Ok(())
    /// # }
    /// ```
    pub fn update<V: Nullable>(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &[Vec<V>],
    ) -> Result<()> {
        self.apply(RowMode::Update, table, columns, rows)
    }

    /// Inserts rows whose key is new and updates the listed columns of the others.
    pub fn upsert<V: Nullable>(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &[Vec<V>],
    ) -> Result<()> {
        self.apply(RowMode::Upsert, table, columns, rows)
    }

    /// Applies `rows` (values for `columns`: `Option<SqlValue>`s with `None` = NULL, or
    /// plain `SqlValue`s, see [`Nullable`]; text given for a non-text column is parsed as
    /// Dolt prints such values) in `mode`. All rows or none: an error changes nothing.
    pub fn apply<V: Nullable>(
        &mut self,
        mode: RowMode,
        table: &str,
        columns: &[&str],
        rows: &[Vec<V>],
    ) -> Result<()> {
        let rows = self.cells(table, columns, rows)?;
        self.apply_cells(mode, table, &rows)
    }

    fn apply_cells(
        &mut self,
        mode: RowMode,
        table: &str,
        rows: &[Vec<(usize, Cell)>],
    ) -> Result<()> {
        self.change_rows(mode, table, |t, s| match mode {
            RowMode::Insert => t.insert(s, rows),
            RowMode::Update => t.update(s, rows),
            RowMode::Upsert => t.upsert(s, rows),
            RowMode::Delete => t.delete_matching(s, rows),
        })
    }

    /// [`DoltWriter::apply`] for rows read from a file: each row gives one field per name in
    /// `columns`, `None` for NULL, else its bytes (the raw value of a binary column, else UTF-8
    /// text parsed as Dolt prints the column's values). `rows` makes the rows' iterator; it is
    /// called once, or a second time when an upsert into an empty table repeats a key.
    ///
    /// Inserts and upserts into an empty table (new, or truncated for a replace) stream: each
    /// row is checked and encoded once and the indexes are built bottom-up, without holding
    /// the rows as values. Returns the number of rows.
    pub fn apply_fields<'a, I>(
        &mut self,
        mode: RowMode,
        table: &str,
        columns: &[&str],
        mut rows: impl FnMut() -> I,
    ) -> Result<usize>
    where
        I: Iterator<Item = Vec<Option<Cow<'a, [u8]>>>>,
    {
        type Never<'a> = std::iter::Empty<Vec<Option<Cow<'a, [u8]>>>>;
        self.apply_field_parts(mode, table, columns, || (rows(), None::<Never<'a>>))
    }

    /// [`DoltWriter::apply_fields`] for rows in two parts, the rows of the second following
    /// those of the first (numbered on from them). Same result and errors; a streamed insert
    /// or upsert encodes the second part on another thread meanwhile (where the machine has a
    /// second core and [`prollystore::process::background_hashing`] allows threads), as far as
    /// its values are of the common column types; anything else is taken in order after the
    /// first part. `parts` is called once, or a second time when an upsert into an empty
    /// table repeats a key.
    pub fn apply_fields_in_two<'a, I, J>(
        &mut self,
        mode: RowMode,
        table: &str,
        columns: &[&str],
        mut parts: impl FnMut() -> (I, J),
    ) -> Result<usize>
    where
        I: Iterator<Item = Vec<Option<Cow<'a, [u8]>>>>,
        J: Iterator<Item = Vec<Option<Cow<'a, [u8]>>>> + Send,
    {
        self.apply_field_parts(mode, table, columns, || {
            let (first, second) = parts();
            (first, Some(second))
        })
    }

    fn apply_field_parts<'a, I, J>(
        &mut self,
        mode: RowMode,
        table: &str,
        columns: &[&str],
        mut rows: impl FnMut() -> (I, Option<J>),
    ) -> Result<usize>
    where
        I: Iterator<Item = Vec<Option<Cow<'a, [u8]>>>>,
        J: Iterator<Item = Vec<Option<Cow<'a, [u8]>>>> + Send,
    {
        let t = self.edits.table(&self.store, &self.branch, table)?;
        let positions = columns
            .iter()
            .map(|n| t.column(n))
            .collect::<Result<Vec<_>>>()?;
        let to_cells = |r: usize, row: Vec<Option<Cow<'a, [u8]>>>| -> Result<Vec<(usize, Cell)>> {
            if row.len() != positions.len() {
                return Err(row_width_error(table, r, row.len(), positions.len()));
            }
            positions
                .iter()
                .zip(row)
                .map(|(&c, v)| Ok((c, field_cell(&t, &t.schema.columns[c], r, v)?)))
                .collect()
        };
        let empty = !t.schema.keyless
            && Map::new(
                &self.edits.overlay(&self.store),
                t.primary,
                t.schema.primary_tuple_schema()?,
            )
            .count()
            .map_err(DoltError::from)?
                == 0;
        if empty && matches!(mode, RowMode::Insert | RowMode::Upsert) {
            let mut outcome = BulkInsert::RepeatedKey;
            let upsert = mode == RowMode::Upsert;
            self.change_rows(mode, table, |t, s| {
                let (first, second) = rows();
                outcome = t.insert_into_empty(s, first, second, &positions, to_cells, upsert)?;
                Ok(())
            })?;
            if let BulkInsert::Inserted(n) = outcome {
                return Ok(n);
            }
        }
        let (first, second) = rows();
        let cells = first
            .chain(second.into_iter().flatten())
            .enumerate()
            .map(|(r, row)| to_cells(r, row))
            .collect::<Result<Vec<_>>>()?;
        self.apply_cells(mode, table, &cells)?;
        Ok(cells.len())
    }

    /// Runs `change` on `table` of the working root (kept only if it succeeds), with the
    /// AUTO_INCREMENT counter shared by all branches when `mode` inserts.
    fn change_rows(
        &mut self,
        mode: RowMode,
        table: &str,
        change: impl FnOnce(&mut EditTable, &Overlay<'_>) -> Result<()>,
    ) -> Result<()> {
        // Inserts into a table with an AUTO_INCREMENT column continue the counter shared by
        // all branches, and store it in the table (Dolt's tracker: the largest value any
        // branch's working root or remote branch holds, advanced by every insert since).
        let inserts = matches!(mode, RowMode::Insert | RowMode::Upsert);
        let shared = if inserts && self.has_auto_increment(table)? {
            Some(self.shared_auto_increment(table)?)
        } else {
            None
        };
        let mut advanced = None;
        self.edits
            .edit_table(&self.store, &self.branch, table, |t, s| {
                if let Some(next) = shared {
                    t.auto_increment = t.auto_increment.max(next);
                }
                change(t, s)?;
                advanced = Some(t.auto_increment);
                Ok(())
            })?;
        if let (Some(next), Some(counters)) = (
            advanced.filter(|_| shared.is_some()),
            &mut self.auto_increments,
        ) {
            let c = counters.entry(table.to_ascii_lowercase()).or_insert(0);
            *c = (*c).max(next);
        }
        Ok(())
    }

    fn has_auto_increment(&self, table: &str) -> Result<bool> {
        let t = self.edits.table(&self.store, &self.branch, table)?;
        Ok(t.schema.columns.iter().any(|c| c.auto_increment))
    }

    /// The shared counter of `table` (0 when no branch has the table yet), reading every
    /// branch's working root (its head's root without a working set) and every remote
    /// branch's root the first time.
    fn shared_auto_increment(&mut self, table: &str) -> Result<u64> {
        if self.auto_increments.is_none() {
            let mut counters: HashMap<String, u64> = HashMap::new();
            let datasets = self.store.datasets()?;
            let find = |name: &str| {
                datasets
                    .iter()
                    .find(|(k, _)| k.as_slice() == name.as_bytes())
                    .map(|(_, a)| *a)
            };
            let mut roots = Vec::new();
            for (k, a) in &datasets {
                let Ok(name) = std::str::from_utf8(k) else {
                    continue;
                };
                if let Some(branch) = name.strip_prefix("refs/heads/") {
                    if let Some(ws) = find(&format!("workingSets/heads/{branch}")) {
                        let chunk = self.store.chunk(&ws)?;
                        let f = WorkingSetFields::decode(&chunk)
                            .map_err(|e| crate::error::bad_chunk(ws, e.to_string()))?;
                        roots.push(Address(f.working_root_addr));
                        continue;
                    }
                } else if !name.starts_with("refs/remotes/") {
                    continue;
                }
                let chunk = self.store.chunk(a)?;
                let c = CommitFields::decode(&chunk)
                    .map_err(|e| crate::error::bad_chunk(*a, e.to_string()))?;
                roots.push(Address(c.root));
            }
            let store = self.edits.overlay(&self.store);
            for root in roots {
                for (name, address) in root_tables(&store, root)? {
                    let t = EditTable::load(&store, &name, address)?;
                    if t.schema.columns.iter().any(|c| c.auto_increment) {
                        let c = counters.entry(name.to_ascii_lowercase()).or_insert(0);
                        *c = (*c).max(t.auto_increment);
                    }
                }
            }
            self.auto_increments = Some(counters);
        }
        Ok(self
            .auto_increments
            .as_ref()
            .and_then(|c| c.get(&table.to_ascii_lowercase()).copied())
            .unwrap_or(0))
    }

    /// True when the working root is the head commit's (nothing to commit).
    pub fn is_clean(&self) -> Result<bool> {
        let working = self.edits.working_root(&self.store, &self.branch)?;
        let head = self
            .store
            .datasets()?
            .into_iter()
            .find(|(k, _)| k.as_slice() == format!("refs/heads/{}", self.branch).as_bytes())
            .map(|(_, a)| a)
            .ok_or_else(|| DoltError::NotFound(format!("branch {:?}", self.branch)))?;
        let chunk = self.store.chunk(&head)?;
        let c = prollystore_format::message::objects::CommitFields::decode(&chunk)
            .map_err(|e| crate::error::bad_chunk(head, e.to_string()))?;
        Ok(Address(c.root) == working)
    }

    /// Deletes rows by primary key (values in primary-key order); absent keys are skipped.
    /// Foreign keys referring to a deleted row act as declared: RESTRICT / NO ACTION refuse
    /// the delete, CASCADE deletes the child rows, SET NULL clears their references (and so
    /// on through the keys referring to those rows, as Dolt does).
    pub fn delete(&mut self, table: &str, keys: &[Vec<SqlValue>]) -> Result<()> {
        let t = self.edits.table(&self.store, &self.branch, table)?;
        let keys = keys
            .iter()
            .map(|k| {
                k.iter()
                    .zip(&t.schema.key_columns)
                    .map(|(v, &c)| to_cell(&t, &t.schema.columns[c], Some(v.clone())))
                    .collect::<Result<Vec<Cell>>>()
            })
            .collect::<Result<Vec<_>>>()?;
        self.edits
            .edit_table(&self.store, &self.branch, table, |t, s| {
                t.delete_keys(s, &keys)
            })
    }

    /// Deletes one copy of each given row of a keyless table (values for every column).
    pub fn delete_rows<V: Nullable>(&mut self, table: &str, rows: &[Vec<V>]) -> Result<()> {
        let names = self.column_names(table)?;
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let rows = self.cells(table, &names, rows)?;
        self.edits
            .edit_table(&self.store, &self.branch, table, |t, s| {
                t.delete_rows(s, &rows)
            })
    }

    /// Deletes every row of `table` (its indexes emptied too). No foreign key's ON DELETE
    /// action runs (Dolt refuses to TRUNCATE a table another table's key refers to): a row
    /// still referred to is an error.
    pub fn truncate(&mut self, table: &str) -> Result<()> {
        self.edits
            .edit_table_with(&self.store, &self.branch, table, false, |t, s| {
                t.truncate(s)
            })
    }

    /// [`DoltWriter::insert`], [`update`](DoltWriter::update) or
    /// [`upsert`](DoltWriter::upsert) with values as `dolt sql -r csv` prints them (binary
    /// columns as `hex:` + hex digits, or their raw text).
    pub fn apply_text(
        &mut self,
        mode: RowMode,
        table: &str,
        columns: &[&str],
        rows: &[Vec<Option<&str>>],
    ) -> Result<()> {
        let rows = self.rows_as_cells(table, columns, rows, |t, col, v: &Option<&str>| {
            cell_from_text(col, *v).map_err(|reason| DoltError::BadValue {
                table: t.name.clone(),
                column: col.name.clone(),
                reason,
            })
        })?;
        self.apply_cells(mode, table, &rows)
    }

    /// Writes the working root as the branch's working set (uncommitted), stamped with `who`
    /// (name, email) and `timestamp_secs`. Without changes, writes nothing.
    pub fn save(&mut self, who: (&str, &str), timestamp_secs: u64) -> Result<()> {
        let meta = WorkingSetMeta {
            name: who.0,
            email: who.1,
            description: "sql transaction",
            timestamp_secs,
        };
        self.edits
            .save(&mut self.store, &self.branch, &meta, timestamp_secs)
    }

    /// Stages every change of the working root and commits it to the branch (as `dolt add -A`
    /// and `dolt commit`); returns the commit's address.
    pub fn commit(&mut self, meta: &CommitMeta) -> Result<Address> {
        let author = Person {
            name: &meta.author_name,
            email: &meta.author_email,
        };
        let committer = meta
            .committer
            .as_ref()
            .map(|(n, e)| Person { name: n, email: e });
        let committer_millis = meta.committer_millis.unwrap_or(meta.author_millis);
        let commit = NewCommit {
            root: Address::ZERO,
            parents: Vec::new(),
            author,
            committer,
            message: &meta.message,
            author_millis: meta.author_millis,
            committer_millis: committer_millis.max(0) as u64,
        };
        let secs = (committer_millis / 1000).max(0) as u64;
        let who = committer.unwrap_or(author);
        let ws = WorkingSetMeta {
            name: who.name,
            email: who.email,
            description: "sql transaction",
            timestamp_secs: secs,
        };
        self.edits
            .commit(&mut self.store, &self.branch, commit, &ws, secs)
    }

    fn column_names(&self, table: &str) -> Result<Vec<String>> {
        Ok(self.columns(table)?.into_iter().map(|c| c.name).collect())
    }

    fn cells<V: Nullable>(
        &self,
        table: &str,
        columns: &[&str],
        rows: &[Vec<V>],
    ) -> Result<Vec<Vec<(usize, Cell)>>> {
        self.rows_as_cells(table, columns, rows, |t, col, v: &V| {
            to_cell(t, col, v.as_value().cloned())
        })
    }

    /// Rows of values for `columns` as cells by column position, each value made a cell by
    /// `cell`; errors name the row.
    fn rows_as_cells<V>(
        &self,
        table: &str,
        columns: &[&str],
        rows: &[Vec<V>],
        cell: impl Fn(&EditTable, &Column, &V) -> Result<Cell>,
    ) -> Result<Vec<Vec<(usize, Cell)>>> {
        let t = self.edits.table(&self.store, &self.branch, table)?;
        let positions = columns
            .iter()
            .map(|n| t.column(n))
            .collect::<Result<Vec<_>>>()?;
        rows.iter()
            .enumerate()
            .map(|(r, row)| {
                if row.len() != positions.len() {
                    return Err(row_width_error(table, r, row.len(), positions.len()));
                }
                positions
                    .iter()
                    .zip(row)
                    .map(|(&c, v)| {
                        let cell = cell(&t, &t.schema.columns[c], v)
                            .map_err(|e| e.map_reason(|reason| format!("row {r}: {reason}")))?;
                        Ok((c, cell))
                    })
                    .collect()
            })
            .collect()
    }
}

/// What [`DoltWriter::apply_text`] does with each row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowMode {
    /// Insert (a duplicate key is an error).
    Insert,
    /// Update by primary key (a missing row is an error).
    Update,
    /// Insert or update.
    Upsert,
    /// Delete the row with this primary key (keyless tables: one copy of this row).
    Delete,
}

/// The error for row `row` of `table` giving `got` values for `want` columns.
fn row_width_error(table: &str, row: usize, got: usize, want: usize) -> DoltError {
    DoltError::BadValue {
        table: table.to_string(),
        column: String::new(),
        reason: format!("row {row}: {got} values for {want} columns"),
    }
}

/// Field `field` of row `row` (see [`DoltWriter::apply_fields`]) as the cell to store in
/// `col`: the bytes of a binary column as they are, anything else as text given for it.
fn field_cell(
    t: &EditTable,
    col: &Column,
    row: usize,
    field: Option<Cow<'_, [u8]>>,
) -> Result<Cell> {
    let Some(bytes) = field else {
        return Ok(Cell::Null);
    };
    if let SqlType::Binary { .. } = col.sql_type {
        return Ok(Cell::Value(SqlValue::Bytes(bytes.into_owned())));
    }
    let bad = |reason: String| DoltError::BadValue {
        table: t.name.clone(),
        column: col.name.clone(),
        reason: format!("row {row}: {reason}"),
    };
    if let SqlType::Geometry { .. } = col.sql_type {
        // SRID + WKB bytes as `dolt table import` takes them; WKT and the other text forms too.
        let stored = match crate::geometry::from_ewkb(&bytes) {
            Ok(v) => v,
            Err(e) => match std::str::from_utf8(&bytes) {
                Ok(text) => crate::geometry::from_text(text).map_err(bad)?,
                Err(_) => return Err(bad(e)),
            },
        };
        crate::geometry::check_column(&stored, &col.sql_type, &col.name).map_err(bad)?;
        return Ok(Cell::Value(SqlValue::Bytes(stored)));
    }
    let text = std::str::from_utf8(&bytes).map_err(|_| bad("a value is not UTF-8".into()))?;
    Ok(Cell::Value(match col.sql_type {
        SqlType::Text { .. } | SqlType::Json => SqlValue::Text(text.to_string()),
        _ => parse_value(col, text).map_err(bad)?,
    }))
}

/// A value given for `col` as the cell to store: text given for a non-text column is parsed
/// as Dolt prints such values; text for a binary column is its bytes.
fn to_cell(t: &EditTable, col: &Column, v: Option<SqlValue>) -> Result<Cell> {
    let Some(v) = v else {
        return Ok(Cell::Null);
    };
    let v = match (&col.sql_type, v) {
        (SqlType::Text { .. } | SqlType::Json, v) => v,
        (SqlType::Binary { .. }, SqlValue::Text(s)) => {
            return cell_from_text(col, Some(&s)).map_err(|reason| DoltError::BadValue {
                table: t.name.clone(),
                column: col.name.clone(),
                reason,
            })
        }
        (_, SqlValue::Text(s)) => parse_value(col, &s).map_err(|reason| DoltError::BadValue {
            table: t.name.clone(),
            column: col.name.clone(),
            reason,
        })?,
        (_, v) => v,
    };
    Ok(Cell::Value(v))
}
