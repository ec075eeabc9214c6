//! An `ALTER TABLE` statement as structured clauses ([`AlterStatement`], [`AlterOp`]), which
//! [`super::DoltWriter::alter_table`] applies (`alter`). Reading them from SQL text is the
//! `prollystore-sql` crate's (`DoltWriter::alter(sql)` with its `SqlWriter` trait in scope).

use std::fmt;
use std::sync::Arc;

use super::table_def::{CheckDef, ColumnDef, ForeignKeyDef, IndexDef};
use crate::error::Result;

/// Where ADD/MODIFY/CHANGE COLUMN puts the column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Position {
    /// `FIRST`.
    First,
    /// `AFTER name`.
    After(String),
}

/// A new default's stored text, made when its clause runs from the column's type text then
/// (numbers print as the column's type prints them: `1.5` in `decimal(5,2)` is `1.50`).
#[derive(Clone)]
pub struct DefaultText(Arc<DefaultFn>);

/// What makes a default's stored text from a column's type text.
type DefaultFn = dyn Fn(&str) -> Result<String> + Send + Sync;

impl DefaultText {
    /// The default whose stored text `f` makes from the column's type text.
    pub fn new(f: impl Fn(&str) -> Result<String> + Send + Sync + 'static) -> DefaultText {
        DefaultText(Arc::new(f))
    }

    /// The stored text for a column of type `sql_type`.
    pub fn for_type(&self, sql_type: &str) -> Result<String> {
        (self.0)(sql_type)
    }
}

impl fmt::Debug for DefaultText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DefaultText(..)")
    }
}

/// One clause of an `ALTER TABLE`.
#[derive(Clone, Debug)]
pub enum AlterOp {
    /// `ADD COLUMN`.
    AddColumn(ColumnDef, Option<Position>),
    /// `DROP COLUMN name`.
    DropColumn(String),
    /// `RENAME COLUMN old TO new`.
    RenameColumn(String, String),
    /// `CHANGE old new …` and `MODIFY name …` (old name, new definition).
    ChangeColumn(String, ColumnDef, Option<Position>),
    /// `ALTER COLUMN c SET DEFAULT x` / `DROP DEFAULT`.
    SetDefault(String, Option<DefaultText>),
    /// `ADD INDEX`, `ADD UNIQUE KEY`, …
    AddIndex(IndexDef),
    /// `DROP INDEX name`.
    DropIndex(String),
    /// `RENAME INDEX old TO new`.
    RenameIndex(String, String),
    /// `ADD PRIMARY KEY (columns)`.
    AddPrimaryKey(Vec<String>),
    /// `DROP PRIMARY KEY`.
    DropPrimaryKey,
    /// `ADD CONSTRAINT … CHECK (…)`.
    AddCheck(CheckDef),
    /// `DROP CHECK c` / `DROP CONSTRAINT c` (a check, an index or a foreign key).
    DropConstraint(String),
    /// `ADD FOREIGN KEY`.
    AddForeignKey(ForeignKeyDef),
    /// `DROP FOREIGN KEY name`.
    DropForeignKey(String),
    /// `COMMENT = 'text'`.
    Comment(String),
    /// `AUTO_INCREMENT = n`.
    AutoIncrement(u64),
    /// `RENAME TO name` (and `RENAME TABLE a TO b`).
    RenameTable(String),
}

/// An `ALTER TABLE`: the table and its clauses in order.
#[derive(Clone, Debug)]
pub struct AlterStatement {
    /// The table.
    pub table: String,
    /// Its clauses, applied in order.
    pub ops: Vec<AlterOp>,
}
