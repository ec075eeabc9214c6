//! # prollystore-sql
//!
//! The SQL beside `prollystore-dolt`'s storage core, as Dolt keeps it in its SQL engine apart
//! from its store: MySQL expressions, `CREATE TABLE` and `ALTER TABLE` text, and `SHOW CREATE
//! TABLE` text. The storage crate parses no SQL; it takes structured values
//! ([`TableDef`],
//! [`AlterStatement`](prollystore_dolt::write::AlterStatement)) and asks an expression engine
//! ([`prollystore_dolt::expressions`]) given to it explicitly. This crate makes those values
//! from SQL text and is that engine.
//!
//! Modules:
//! * [`generated`]: the MySQL expression engine ([`MySqlExpressions`]) — compiler,
//!   evaluator, decimal arithmetic, LIKE under collations, JSON paths — for VIRTUAL and
//!   STORED generated columns, expression defaults and CHECK constraints.
//! * [`create_sql`]: `CREATE TABLE` text as a `TableDef` ([`FromSql`]).
//! * [`alter_sql`]: `ALTER TABLE` text as an `AlterStatement` ([`parse_alter`]).
//! * [`show_create`]: a table's `SHOW CREATE TABLE` text, as `dolt schema show` prints it.
//!
//! One dependency and one `use` give a Rust user everything with SQL in it:
//!
//! ```
//! use prollystore_dolt::write::{CommitMeta, TableDef};
//! use prollystore_dolt::{KeyRange, SqlValue, State};
//! use prollystore_sql::{FromSql, SqlWriter};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let tmp = tempfile::tempdir()?;
//! # let dir = prollystore_test_vectors::writable_copy("dolt-db/vecdb", tmp.path())?;
//! let mut w = prollystore_sql::writer(&dir)?; // expressions, defaults and CHECKs computed
//! w.create_table(&TableDef::from_sql(
//!     "CREATE TABLE t (id INT PRIMARY KEY, n INT, d INT AS (n * 2), CONSTRAINT pos CHECK (n > 0))",
//! )?)?;
//! w.create_table_sql("CREATE TABLE notes (id INT PRIMARY KEY)")?;
//! w.alter("ALTER TABLE notes ADD COLUMN note VARCHAR(20) DEFAULT 'x'")?;
//! w.insert("t", &["id", "n"], &[vec![SqlValue::from(1), SqlValue::from(21)]])?;
//! let bad = vec![SqlValue::from(2), SqlValue::from(0)];
//! assert!(w.insert("t", &["id", "n"], &[bad]).is_err()); // CHECK (n > 0)
//! w.commit(&CommitMeta::now("Ada", "ada@example.com", "t"))?;
//! drop(w);
//! let db = prollystore_sql::open(&dir)?; // VIRTUAL columns computed on read
//! let t = db.table_at("main", State::Committed, "t")?;
//! let row = t.reader(&db)?.scan(&KeyRange::all())?.next().unwrap()?;
//! assert_eq!(row[2], Some(SqlValue::from(42))); // d = n * 2
//! let root = db.root_at("main", State::Committed)?;
//! println!("{}", prollystore_sql::show_create_table(&db, &root, &t)?);
//! # Ok(())
//! # }
//! ```

use std::path::Path;
use std::sync::Arc;

use prollystore_dolt::write::{DoltWriter, TableDef};
use prollystore_dolt::{Database, Expressions, Result};

pub mod alter_sql;
pub mod create_sql;
pub mod generated;
pub mod show_create;

pub use alter_sql::parse_alter;
pub use generated::MySqlExpressions;
pub use show_create::create_table as show_create_table;

/// The MySQL expression engine, to give a [`Database`], a [`DoltWriter`] or a merge
/// ([`prollystore_dolt::write::vc::MergeOptions::expressions`]).
pub fn engine() -> Arc<dyn Expressions> {
    Arc::new(MySqlExpressions)
}

/// Opens a database for reading with the MySQL expression engine installed (VIRTUAL
/// generated columns computed): [`Database::open`] then [`Database::with_expressions`].
pub fn open(path: impl AsRef<Path>) -> Result<Database> {
    let path = path.as_ref();
    Ok(Database::open(path)?.with_expressions(engine()))
}

/// Opens a database for writing with the MySQL expression engine installed (expression
/// defaults, generated columns and CHECKs computed): [`DoltWriter::open`] then
/// [`DoltWriter::with_expressions`].
pub fn writer(path: impl AsRef<Path>) -> Result<DoltWriter> {
    let path = path.as_ref();
    Ok(DoltWriter::open(path)?.with_expressions(engine()))
}

/// `CREATE TABLE` text as a [`TableDef`]: `TableDef::from_sql(sql)` with this trait in scope.
pub trait FromSql: Sized {
    /// Parses one `CREATE TABLE` statement (MySQL dialect). Column tags are left for the
    /// writer to derive as Dolt does.
    fn from_sql(sql: &str) -> Result<Self>;
}

impl FromSql for TableDef {
    fn from_sql(sql: &str) -> Result<TableDef> {
        create_sql::table_def(sql)
    }
}

/// The writer's calls that take SQL text, with this trait in scope.
pub trait SqlWriter {
    /// Creates a table from one `CREATE TABLE` statement.
    fn create_table_sql(&mut self, sql: &str) -> Result<()>;

    /// Runs one `ALTER TABLE …` statement (or `RENAME TABLE a TO b`, or `DROP TABLE [IF
    /// EXISTS] t`) on the working root as Dolt 2.3.1 runs it (see
    /// [`DoltWriter::alter_table`]); nothing changes when it fails.
    fn alter(&mut self, sql: &str) -> Result<()>;
}

impl SqlWriter for DoltWriter {
    fn create_table_sql(&mut self, sql: &str) -> Result<()> {
        self.create_table(&TableDef::from_sql(sql)?)
    }

    fn alter(&mut self, sql: &str) -> Result<()> {
        if let Some((table, if_exists)) = alter_sql::parse_drop_table(sql)? {
            if if_exists
                && !self
                    .tables()?
                    .iter()
                    .any(|t| t.eq_ignore_ascii_case(&table))
            {
                return Ok(());
            }
            return self.drop_table(&table);
        }
        self.alter_table(&parse_alter(sql)?)
    }
}
