//! Navigation with Dolt's meaning: store root → datasets (branches, tags, working sets) →
//! commits and the log → root values → tables. (The log as text: the `log_text` module.)

use std::path::{Path, PathBuf};
use std::sync::Arc;

use prollystore_format::message::generated::serial;
use prollystore_format::message::AddressMapNode;
use prollystore_format::Address;

use crate::chunk_memo::ChunkMemo;
use crate::chunks::DoltChunkSource;
use crate::error::{bad_chunk, DoltError, Result};
use crate::expressions::{Engine, Expressions};
use crate::message::{addr_field, fb_root};
use crate::schema::Schema;

/// Newest RootValue feature version this reader understands.
pub const MAX_FEATURE_VERSION: i64 = 7;

/// A commit (`DCMT`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Commit {
    /// The commit's own address (its hash in `dolt log`).
    pub address: Address,
    /// Address of the commit's RootValue.
    pub root: Address,
    /// 1 + the greatest parent height.
    pub height: u64,
    /// Parents, first parent first.
    pub parents: Vec<Address>,
    /// Author name.
    pub name: String,
    /// Author email.
    pub email: String,
    /// The commit message.
    pub message: String,
    /// Committer date, Unix milliseconds.
    pub timestamp_millis: u64,
    /// Author date, Unix milliseconds (what `dolt log` shows).
    pub user_timestamp_millis: i64,
    /// Committer name when it differs from the author's.
    pub committer_name: Option<String>,
    /// Committer email when it differs from the author's.
    pub committer_email: Option<String>,
}

/// An annotated tag (`DTAG`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tag {
    /// Tag name (without `refs/tags/`).
    pub name: String,
    /// The tag chunk's address.
    pub address: Address,
    /// The tagged commit.
    pub commit: Address,
    /// Tagger name.
    pub tagger_name: String,
    /// Tagger email.
    pub tagger_email: String,
    /// Tag message.
    pub message: String,
    /// Tag date (Unix milliseconds, the user timestamp).
    pub user_timestamp_millis: i64,
}

/// A branch's working set (`WRST`): its uncommitted state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkingSet {
    /// The working set's address.
    pub address: Address,
    /// Working root value.
    pub working_root: Address,
    /// Staged root value, if recorded.
    pub staged_root: Option<Address>,
    /// Whether a merge is in progress.
    pub merging: bool,
}

/// A root value (`RTVL`): the tables of one database state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RootValue {
    /// Its address (`dolt_hashof_db`).
    pub address: Address,
    /// Feature version.
    pub feature_version: i64,
    /// Tables: name (schema-qualified names as `\0schema\0name`) → Table chunk address.
    pub tables: Vec<(String, Address)>,
    /// Foreign-key collection address (zero if none).
    pub foreign_keys: Address,
}

impl RootValue {
    /// The names of the tables, in stored order: plain names, and `schema.name` for tables in
    /// a named schema (stored as `\0schema\0name`).
    ///
    /// ```
    /// use prollystore_dolt::Database;
    /// # fn main() -> prollystore_dolt::Result<()> {
    /// # let dir = prollystore_test_vectors::require("dolt-db/vecdb");
    /// let db = Database::open(&dir)?;
    /// let root = db.root_at("main~1", Default::default())?;
    /// for name in root.table_names() {
    ///     let table = db.table(&root, &name)?;
    ///     println!("{name}: {} columns", table.schema.visible_columns().len());
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn table_names(&self) -> Vec<String> {
        self.tables.iter().map(|(n, _)| display_name(n)).collect()
    }
}

/// A stored table name as people write it: `\0schema\0name` becomes `schema.name`, and a
/// name in the empty schema is the name alone.
fn display_name(stored: &str) -> String {
    match stored.strip_prefix('\0').and_then(|r| r.split_once('\0')) {
        Some(("", name)) => name.to_string(),
        Some((schema, name)) => format!("{schema}.{name}"),
        None => stored.to_string(),
    }
}

/// Commits in `dolt log` order, read one at a time ([`Database::log`]).
#[derive(Debug)]
pub struct History<'a> {
    db: &'a Database,
    pending: Vec<Commit>,
    seen: std::collections::HashSet<Address>,
    /// The first commit, until it is read.
    start: Option<Address>,
}

impl Iterator for History<'_> {
    type Item = Result<Commit>;

    fn next(&mut self) -> Option<Result<Commit>> {
        if let Some(start) = self.start.take() {
            match self.db.commit(start) {
                Ok(c) => self.pending.push(c),
                Err(e) => return Some(Err(e)),
            }
        }
        let best = self
            .pending
            .iter()
            .enumerate()
            .max_by(|(_, a), (_, b)| {
                a.height
                    .cmp(&b.height)
                    .then(a.user_timestamp_millis.cmp(&b.user_timestamp_millis))
                    .then(b.address.cmp(&a.address))
            })
            .map(|(i, _)| i)?;
        let c = self.pending.swap_remove(best);
        for p in &c.parents {
            if self.seen.insert(*p) {
                match self.db.commit(*p) {
                    Ok(parent) => self.pending.push(parent),
                    Err(e) => {
                        // The walk cannot go on past an unreadable parent.
                        self.pending.clear();
                        return Some(Err(e));
                    }
                }
            }
        }
        Some(Ok(c))
    }
}

/// A table (`DTBL`) with its schema.
#[derive(Clone, Debug)]
pub struct Table {
    /// The table's name.
    pub name: String,
    /// The Table chunk's address (`dolt_hashof_table`).
    pub address: Address,
    /// The TableSchema chunk's address.
    pub schema_address: Address,
    /// The decoded schema.
    pub schema: Schema,
    /// The clustered index root node bytes (embedded in the Table chunk).
    pub primary_index: Arc<[u8]>,
    /// Secondary indexes: name → root node address.
    pub secondary_indexes: Vec<(String, Address)>,
    /// The next AUTO_INCREMENT value (0 if none).
    pub auto_increment: u64,
}

/// A store root's dataset map, as kept in the memo.
struct Datasets(Vec<(String, Address)>);

/// Which state of a branch to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum State {
    /// The commit itself (a branch's head commit).
    #[default]
    Committed,
    /// The branch's working set: its uncommitted changes (the head commit's root if it has
    /// no working set).
    Working,
    /// The branch's staged root (the working root if nothing is recorded as staged).
    Staged,
}

/// Reads a state as people write it into the spec and state [`Database::root_at`] takes:
/// `WORKING`, `STAGED`, `HEAD`, a branch, tag or commit (optionally with `~N`/`^`), or
/// `BRANCH@WORKING` / `BRANCH@STAGED`.
///
/// ```
/// use prollystore_dolt::{db::parse_at, State};
/// assert_eq!(parse_at("main"), ("main", State::Committed));
/// assert_eq!(parse_at("feature@WORKING"), ("feature", State::Working));
/// assert_eq!(parse_at("main@STAGED"), ("main", State::Staged));
/// ```
pub fn parse_at(at: &str) -> (&str, State) {
    if let Some(b) = at.strip_suffix("@WORKING") {
        (b, State::Working)
    } else if let Some(b) = at.strip_suffix("@STAGED") {
        (b, State::Staged)
    } else {
        (at, State::Committed)
    }
}

/// An open Dolt database, for reading (writing: [`crate::write::DoltWriter`]).
///
/// ```
/// use prollystore_dolt::{csv_export::export_csv, table_rows::for_each_row, Database, State};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = prollystore_test_vectors::require("dolt-db/vecdb");
/// let db = Database::open(&dir)?; // the directory holding `.dolt`
/// for (branch, head) in db.branches()? {
///     println!("{branch} at {head}: {}", db.commit(head)?.message);
/// }
/// let table = db.table_at("main", State::Committed, "items")?;
/// let mut rows = 0;
/// for_each_row(&db, &table, &mut |row| {
///     rows += 1;
///     assert_eq!(row.len(), 11); // one value per visible column; None is NULL
///     Ok(())
/// })?;
/// let mut csv = Vec::new();
/// assert_eq!(export_csv(&db, &table, &mut csv)?, rows); // as `dolt sql -r csv` prints it
///
/// // Every index is a prollystore map in Dolt's key order.
/// let primary = table.primary_map(&db)?;
/// assert_eq!(primary.count()?, rows);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Database {
    dir: PathBuf,
    source: DoltChunkSource,
    memo: ChunkMemo,
    /// The SQL expression engine that computes VIRTUAL generated columns, if one was given.
    expressions: Engine,
}

impl Database {
    /// Opens a database directory (the one containing `.dolt`, or the `.dolt` directory
    /// itself). Never writes to it.
    pub fn open(path: impl AsRef<Path>) -> Result<Database> {
        let path = path.as_ref();
        let dot = if path.join(".dolt").is_dir() {
            path.join(".dolt")
        } else {
            path.to_path_buf()
        };
        let source = DoltChunkSource::open(dot.join("noms"))?;
        Ok(Database {
            dir: dot,
            source,
            memo: ChunkMemo::default(),
            expressions: None,
        })
    }

    /// A database read from `source` alone, with no directory of its own: a remote read in
    /// place ([`DoltChunkSource::fetched`]). `name` (the remote's URL) stands where a local
    /// database's `.dolt` directory would ([`Database::dot_dolt`]); there is no
    /// `repo_state.json`, so [`Database::current_branch`] is `None`.
    pub fn from_source(name: impl Into<PathBuf>, source: DoltChunkSource) -> Database {
        Database {
            dir: name.into(),
            source,
            memo: ChunkMemo::default(),
            expressions: None,
        }
    }

    /// The same database with `engine` computing its VIRTUAL generated columns on read (see
    /// [`crate::expressions`]; `prollystore_sql::open` opens a database with MySQL's engine).
    /// Without one, reading a table with such a column is an error naming it.
    pub fn with_expressions(mut self, engine: Arc<dyn Expressions>) -> Self {
        self.set_engine(Some(engine));
        self
    }

    /// Installs (or removes) the expression engine in place.
    pub(crate) fn set_engine(&mut self, engine: Engine) {
        self.expressions = engine;
        // Decode plans made so far were made with the engine before.
        self.memo = ChunkMemo::default();
    }

    /// The expression engine given with [`Database::with_expressions`], if any.
    pub fn expressions(&self) -> Option<&Arc<dyn Expressions>> {
        self.expressions.as_ref()
    }

    /// The engine, as the crate's users of it take it.
    pub(crate) fn engine(&self) -> &Engine {
        &self.expressions
    }

    /// Values derived from chunks (key orders and decode plans per schema address).
    pub(crate) fn memo(&self) -> &ChunkMemo {
        &self.memo
    }

    /// Sets whether chunk hashes are checked on read (see
    /// [`DoltChunkSource::with_verify_hashes`]; on by default).
    pub fn with_verify_hashes(mut self, verify: bool) -> Self {
        self.source = self.source.with_verify_hashes(verify);
        self
    }

    /// The `.dolt` directory.
    pub fn dot_dolt(&self) -> &Path {
        &self.dir
    }

    /// The chunk store.
    pub fn source(&self) -> &DoltChunkSource {
        &self.source
    }

    /// The current branch as recorded in `repo_state.json` (`head`), if readable.
    pub fn current_branch(&self) -> Option<String> {
        let text = std::fs::read_to_string(self.dir.join("repo_state.json")).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        let head = v.get("head")?.as_str()?;
        Some(head.strip_prefix("refs/heads/").unwrap_or(head).to_string())
    }

    /// Every dataset in the store root: name → address, in stored (bytewise) order.
    pub fn datasets(&self) -> Result<Vec<(String, Address)>> {
        let root = self.source.root();
        if root.is_zero() {
            return Ok(Vec::new());
        }
        let datasets = self
            .memo
            .get_or_make(root, || self.decode_datasets(root).map(Datasets))?;
        Ok(datasets.0.clone())
    }

    /// The dataset map of store root `root`.
    fn decode_datasets(&self, root: Address) -> Result<Vec<(String, Address)>> {
        let chunk = self.source.chunk(&root)?;
        let sr = fb_root::<serial::StoreRoot>(&chunk, b"STRT", root)?;
        let map = sr.address_map().map(|v| v.bytes()).unwrap_or(&[]);
        let mut out = Vec::new();
        if !map.is_empty() {
            self.address_map_entries(map, root, 0, &mut out)?;
        }
        Ok(out)
    }

    /// Appends every (name, address) of an AddressMap tree rooted at `node` (bytes).
    pub fn address_map_entries(
        &self,
        node: &[u8],
        owner: Address,
        depth: usize,
        out: &mut Vec<(String, Address)>,
    ) -> Result<()> {
        if depth > 32 {
            return Err(bad_chunk(owner, "address map is too deep"));
        }
        let n = AddressMapNode::verify(node).map_err(|e| bad_chunk(owner, e.to_string()))?;
        for i in 0..n.count() {
            if n.is_leaf() {
                let key = String::from_utf8_lossy(n.key(i)).into_owned();
                out.push((key, n.address(i)));
            } else {
                let child = n.address(i);
                let bytes = self.source.chunk(&child)?;
                self.address_map_entries(&bytes, child, depth + 1, out)?;
            }
        }
        Ok(())
    }

    fn datasets_with_prefix(&self, prefix: &str) -> Result<Vec<(String, Address)>> {
        Ok(self
            .datasets()?
            .into_iter()
            .filter_map(|(k, a)| k.strip_prefix(prefix).map(|n| (n.to_string(), a)))
            .collect())
    }

    /// Branches: name → head commit address, sorted by name.
    ///
    /// ```
    /// use prollystore_dolt::Database;
    /// # fn main() -> prollystore_dolt::Result<()> {
    /// # let dir = prollystore_test_vectors::require("dolt-db/vecdb");
    /// let db = Database::open(&dir)?;
    /// let names: Vec<String> = db.branches()?.into_iter().map(|(name, _)| name).collect();
    /// assert_eq!(names, ["feature", "main"]);
    /// assert_eq!(db.current_branch().as_deref(), Some("main"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn branches(&self) -> Result<Vec<(String, Address)>> {
        self.datasets_with_prefix("refs/heads/")
    }

    /// Tags, sorted by name.
    pub fn tags(&self) -> Result<Vec<Tag>> {
        let mut out = Vec::new();
        for (name, address) in self.datasets_with_prefix("refs/tags/")? {
            let chunk = self.source.chunk(&address)?;
            let t = fb_root::<serial::Tag>(&chunk, b"DTAG", address)?;
            out.push(Tag {
                name,
                address,
                commit: addr_field(t.commit_addr().bytes(), address, "commit_addr")?,
                tagger_name: t.name().to_string(),
                tagger_email: t.email().to_string(),
                message: t.desc().to_string(),
                user_timestamp_millis: t.user_timestamp_millis(),
            });
        }
        Ok(out)
    }

    /// The head commit of `branch`.
    pub fn branch_head(&self, branch: &str) -> Result<Address> {
        let key = format!("refs/heads/{branch}");
        self.datasets()?
            .into_iter()
            .find(|(k, _)| *k == key)
            .map(|(_, a)| a)
            .ok_or_else(|| DoltError::NotFound(format!("branch {branch:?}")))
    }

    /// Resolves a branch name, tag name, remote-tracking branch (`origin/main`), full ref
    /// (`refs/heads/main`) or commit hash to a commit address. Names are tried as Dolt tries
    /// them: `refs/NAME`, `refs/heads/NAME`, `refs/tags/NAME`, `refs/remotes/NAME` (a name
    /// starting with `refs/` first as given), then a commit hash.
    ///
    /// ```
    /// use prollystore_dolt::Database;
    /// # fn main() -> prollystore_dolt::Result<()> {
    /// # let dir = prollystore_test_vectors::require("dolt-db/vecdb");
    /// let db = Database::open(&dir)?;
    /// assert_eq!(db.resolve("refs/heads/main")?, db.resolve("main")?);
    /// assert!(db.resolve("origin/main").is_err()); // no remote-tracking refs here
    /// # Ok(())
    /// # }
    /// ```
    pub fn resolve(&self, spec: &str) -> Result<Address> {
        let datasets = self.datasets()?;
        let exact = spec.starts_with("refs/").then(|| spec.to_string());
        let candidates = exact.into_iter().chain(
            ["refs/", "refs/heads/", "refs/tags/", "refs/remotes/"]
                .iter()
                .map(|p| format!("{p}{spec}")),
        );
        for candidate in candidates {
            if let Some(tag) = candidate.strip_prefix("refs/tags/") {
                if let Some(t) = self.tags()?.into_iter().find(|t| t.name == tag) {
                    return Ok(t.commit);
                }
            } else if let Some((_, a)) = datasets.iter().find(|(k, _)| *k == candidate) {
                return Ok(*a);
            }
        }
        if let Ok(a) = Address::from_base32(spec) {
            if self.source.contains(&a) {
                return Ok(a);
            }
        }
        Err(DoltError::NotFound(format!(
            "branch, tag or commit {spec:?}"
        )))
    }

    /// Reads the commit at `address`.
    pub fn commit(&self, address: Address) -> Result<Commit> {
        let commit = self
            .memo
            .get_or_make(address, || self.decode_commit(address))?;
        Ok(Commit::clone(&commit))
    }

    fn decode_commit(&self, address: Address) -> Result<Commit> {
        let chunk = self.source.chunk(&address)?;
        let c = fb_root::<serial::Commit>(&chunk, b"DCMT", address)?;
        let parent_bytes = c.parent_addrs().bytes();
        if parent_bytes.len() % 20 != 0 {
            return Err(bad_chunk(
                address,
                "parent_addrs is not a multiple of 20 bytes",
            ));
        }
        Ok(Commit {
            address,
            root: addr_field(c.root().bytes(), address, "root")?,
            height: c.height(),
            parents: parent_bytes
                .chunks_exact(20)
                .filter_map(Address::from_slice)
                .collect(),
            name: c.name().to_string(),
            email: c.email().to_string(),
            message: c.description().to_string(),
            timestamp_millis: c.timestamp_millis(),
            user_timestamp_millis: c.user_timestamp_millis(),
            committer_name: c.committer_name().map(str::to_string),
            committer_email: c.committer_email().map(str::to_string),
        })
    }

    /// Commits reachable from `start`, in `dolt log` order, read as they are taken: a reverse
    /// topological walk that always takes the pending commit of greatest height, then newest
    /// author date. `db.log(head).take(10)` reads about ten commits, not the whole history;
    /// `collect::<Result<Vec<_>>>()` gives all of them.
    ///
    /// ```
    /// use prollystore_dolt::Database;
    ///
    /// # fn main() -> prollystore_dolt::Result<()> {
    /// # let dir = prollystore_test_vectors::require("dolt-db/vecdb");
    /// let db = Database::open(&dir)?;
    /// let head = db.resolve_revision("main")?;
    /// for commit in db.log(head).take(3) {
    ///     let commit = commit?;
    ///     println!("{} {} {}", commit.address, commit.name, commit.message);
    /// }
    /// let all = db.log(head).collect::<prollystore_dolt::Result<Vec<_>>>()?;
    /// assert_eq!(all[0].address, head);
    /// # Ok(())
    /// # }
    /// ```
    pub fn log(&self, start: Address) -> History<'_> {
        History {
            db: self,
            pending: Vec::new(),
            seen: std::collections::HashSet::from([start]),
            start: Some(start),
        }
    }

    /// The working set of `branch`, if it has one.
    pub fn working_set(&self, branch: &str) -> Result<Option<WorkingSet>> {
        let key = format!("workingSets/heads/{branch}");
        let Some((_, address)) = self.datasets()?.into_iter().find(|(k, _)| *k == key) else {
            return Ok(None);
        };
        let chunk = self.source.chunk(&address)?;
        let w = fb_root::<serial::WorkingSet>(&chunk, b"WRST", address)?;
        Ok(Some(WorkingSet {
            address,
            working_root: addr_field(w.working_root_addr().bytes(), address, "working_root_addr")?,
            staged_root: w
                .staged_root_addr()
                .map(|v| addr_field(v.bytes(), address, "staged_root_addr"))
                .transpose()?,
            merging: w.merge_state().is_some(),
        }))
    }

    /// Reads the root value at `address`.
    pub fn root_value(&self, address: Address) -> Result<RootValue> {
        let root = self
            .memo
            .get_or_make(address, || self.decode_root_value(address))?;
        Ok(RootValue::clone(&root))
    }

    fn decode_root_value(&self, address: Address) -> Result<RootValue> {
        let chunk = self.source.chunk(&address)?;
        let r = fb_root::<serial::RootValue>(&chunk, b"RTVL", address)?;
        if r.feature_version() > MAX_FEATURE_VERSION {
            return Err(DoltError::Unsupported(format!(
                "root value {address} has feature version {} (newest supported {MAX_FEATURE_VERSION})",
                r.feature_version()
            )));
        }
        let mut tables = Vec::new();
        if let Some(t) = r.tables() {
            if !t.bytes().is_empty() {
                self.address_map_entries(t.bytes(), address, 0, &mut tables)?;
            }
        }
        let foreign_keys = r
            .foreign_key_addr()
            .and_then(|v| Address::from_slice(v.bytes()))
            .unwrap_or(Address::ZERO);
        Ok(RootValue {
            address,
            feature_version: r.feature_version(),
            tables,
            foreign_keys,
        })
    }

    /// The tables of the current branch's working root (what `dolt ls` lists), by name
    /// ([`RootValue::table_names`]).
    ///
    /// ```
    /// use prollystore_dolt::Database;
    ///
    /// # fn main() -> prollystore_dolt::Result<()> {
    /// # let dir = prollystore_test_vectors::require("dolt-db/vecdb");
    /// let db = Database::open(&dir)?;
    /// assert_eq!(db.tables()?, ["docs", "items", "keyless_log", "pairs"]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn tables(&self) -> Result<Vec<String>> {
        Ok(self.root_at("HEAD", State::Working)?.table_names())
    }

    /// Opens table `name` of a root value (a plain name, or `schema.name` for a table in a
    /// named schema).
    pub fn table(&self, root: &RootValue, name: &str) -> Result<Table> {
        let address = root
            .tables
            .iter()
            .find(|(n, _)| n == name)
            .or_else(|| root.tables.iter().find(|(n, _)| display_name(n) == name))
            .map(|(_, a)| *a)
            .ok_or_else(|| {
                DoltError::NotFound(format!(
                    "table {name:?} (tables: {})",
                    root.table_names().join(", ")
                ))
            })?;
        self.table_by_address(address, name)
    }

    /// The table stored in table chunk `address` (`dolt_hashof_table`), named `name`: what a
    /// root value lists, read without the root value (a table cut into parts is read by its
    /// chunk, whatever root holds it now).
    pub fn table_by_address(&self, address: Address, name: &str) -> Result<Table> {
        // A table chunk decodes the same wherever it is listed: decoded once per open
        // database (the schema parse and the chunk's checks are most of a diff's set-up).
        let decoded = self
            .memo
            .get_or_make(address, || self.decode_table(address))?;
        let mut table = Table::clone(&decoded);
        table.name = name.to_string();
        Ok(table)
    }

    /// Decodes table chunk `address` (the name is left empty).
    fn decode_table(&self, address: Address) -> Result<Table> {
        let chunk = self.source.chunk(&address)?;
        let t = fb_root::<serial::Table>(&chunk, b"DTBL", address)?;
        let schema_address = addr_field(t.schema().bytes(), address, "schema")?;
        let schema_chunk = self.source.chunk(&schema_address)?;
        let schema = Schema::decode(&schema_chunk, schema_address)?;
        let mut secondary_indexes = Vec::new();
        if let Some(ix) = t.secondary_indexes() {
            if !ix.bytes().is_empty() {
                self.address_map_entries(ix.bytes(), address, 0, &mut secondary_indexes)?;
            }
        }
        Ok(Table {
            name: String::new(),
            address,
            schema_address,
            schema,
            primary_index: Arc::from(t.primary_index().bytes()),
            secondary_indexes,
            auto_increment: t.auto_increment_value(),
        })
    }

    /// The root value of `spec` (branch, tag, commit hash, `HEAD` for the current branch, each
    /// optionally followed by `~N` or `^` ancestry) in `state`. `Working` and `Staged` need a
    /// branch (or `HEAD`). Dolt's own spellings `WORKING` and `STAGED` as the spec mean that
    /// state of the current branch.
    pub fn root_at(&self, spec: &str, state: State) -> Result<RootValue> {
        let (spec, state) = match spec {
            "WORKING" => ("HEAD", State::Working),
            "STAGED" => ("HEAD", State::Staged),
            _ => (spec, state),
        };
        if state == State::Committed {
            let commit = self.commit(self.resolve_revision(spec)?)?;
            return self.root_value(commit.root);
        }
        let branch = if spec == "HEAD" {
            self.current_branch()
                .ok_or_else(|| DoltError::NotFound("the current branch".into()))?
        } else {
            spec.to_string()
        };
        let head = self.branch_head(&branch).map_err(|_| {
            DoltError::NotFound(format!(
                "branch {branch:?} (the working and staged states belong to branches)"
            ))
        })?;
        let root = match self.working_set(&branch)? {
            Some(ws) if state == State::Working => ws.working_root,
            Some(ws) => ws.staged_root.unwrap_or(ws.working_root),
            None => self.commit(head)?.root,
        };
        self.root_value(root)
    }

    /// Resolves a revision: [`Database::resolve`]'s names, `HEAD` (the current branch's head),
    /// and any of them followed by `~N` (N first parents back) or `^` (one back), repeatable.
    ///
    /// ```
    /// use prollystore_dolt::Database;
    /// # fn main() -> prollystore_dolt::Result<()> {
    /// # let dir = prollystore_test_vectors::require("dolt-db/vecdb");
    /// let db = Database::open(&dir)?;
    /// let head = db.resolve_revision("HEAD")?; // the current branch, main
    /// assert_eq!(head, db.resolve("main")?);
    /// let first_parent = db.commit(head)?.parents[0];
    /// assert_eq!(db.resolve_revision("main~1")?, first_parent);
    /// assert_eq!(db.resolve_revision("main^")?, first_parent);
    /// assert!(db.resolve_revision("nope").is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn resolve_revision(&self, spec: &str) -> Result<Address> {
        let cut = spec.find(['~', '^']).unwrap_or(spec.len());
        let (base, mut rest) = spec.split_at(cut);
        let mut at = if base == "HEAD" {
            let branch = self
                .current_branch()
                .ok_or_else(|| DoltError::NotFound("the current branch".into()))?;
            self.branch_head(&branch)?
        } else {
            self.resolve(base)?
        };
        while let Some(c) = rest.chars().next() {
            rest = &rest[1..];
            let digits = rest.len() - rest.trim_start_matches(|d: char| d.is_ascii_digit()).len();
            let steps: usize = match (c, digits) {
                (_, 0) => 1,
                ('~', n) => rest[..n].parse().map_err(|_| {
                    DoltError::NotFound(format!("revision {spec:?}: bad ancestry count"))
                })?,
                _ => {
                    return Err(DoltError::NotFound(format!(
                        "revision {spec:?}: only `~N` and `^` ancestry are understood"
                    )))
                }
            };
            rest = &rest[digits..];
            for _ in 0..steps {
                at = *self.commit(at)?.parents.first().ok_or_else(|| {
                    DoltError::NotFound(format!("revision {spec:?}: goes past the first commit"))
                })?;
            }
        }
        Ok(at)
    }

    /// Table `name` of `spec` in `state` (see [`Database::root_at`]).
    ///
    /// ```
    /// use prollystore_dolt::{Database, State};
    /// # fn main() -> prollystore_dolt::Result<()> {
    /// # let dir = prollystore_test_vectors::require("dolt-db/vecdb");
    /// let db = Database::open(&dir)?;
    /// let items = db.table_at("main", State::Committed, "items")?;
    /// assert_eq!(items.address.to_string(), "qosmsutbmbhs8qo168su650votha8jin"); // dolt_hashof_table
    /// let before_merge = db.table_at("main~1", State::Committed, "items")?; // first parent
    /// println!("items before the merge: {}", before_merge.address);
    /// assert!(db.table_at("main", State::Working, "no_such_table").is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn table_at(&self, spec: &str, state: State, name: &str) -> Result<Table> {
        let root = self.root_at(spec, state)?;
        self.table(&root, name)
    }
}

#[cfg(test)]
mod tests {
    use super::display_name;

    #[test]
    fn stored_table_names_as_people_write_them() {
        assert_eq!(display_name("items"), "items");
        assert_eq!(display_name("\0\0items"), "items");
        assert_eq!(display_name("\0app\0items"), "app.items");
        // A name that merely starts with NUL but has no second one stays as stored.
        assert_eq!(display_name("\0odd"), "\0odd");
    }
}
