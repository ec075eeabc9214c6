//! `ALTER TABLE` text (MySQL dialect) as an [`AlterStatement`] of [`AlterOp`]s, which the
//! writer applies ([`DoltWriter::alter_table`](prollystore_dolt::write::DoltWriter::alter_table)).
//! Column definitions and table
//! constraints are parsed by `create_sql` (one parser of column definitions and types); the
//! clauses `sqlparser` does not know in MySQL's spelling (`RENAME INDEX a TO b`, `DROP CHECK c`,
//! `COMMENT = '…'`) are read from its tokens here. A clause this writer does not do is an
//! error naming it, before anything is written.

use sqlparser::ast::{
    AlterColumnOperation, AlterTableOperation, ColumnOption, ColumnOptionDef, MySQLColumnPosition,
    Statement,
};
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer};

use prollystore_dolt::write::{
    AlterOp, AlterStatement, ColumnDef, DefaultText, Position, TableDef,
};
use prollystore_dolt::{DoltError, Result};

use crate::create_sql::{column_into, constraint_into, default_text};

fn bad(sql: &str, why: impl std::fmt::Display) -> DoltError {
    prollystore_dolt::error::bad_input("ALTER TABLE", format!("{why} (in {sql:?})"))
}

fn unquote(s: &str) -> String {
    s.trim_matches('`').to_string()
}

/// The clauses `sqlparser` does not read, from the statement's tokens.
fn special(sql: &str) -> Result<Option<AlterStatement>> {
    let tokens = Tokenizer::new(&MySqlDialect {}, sql)
        .tokenize()
        .map_err(|e| prollystore_dolt::error::unparsable_sql("ALTER TABLE", sql, e))?;
    let words: Vec<&Token> = tokens
        .iter()
        .filter(|t| !matches!(t, Token::Whitespace(_) | Token::SemiColon))
        .collect();
    let word = |i: usize| -> Option<String> {
        match words.get(i) {
            Some(Token::Word(w)) => Some(w.value.clone()),
            _ => None,
        }
    };
    let upper = |i: usize| word(i).map(|w| w.to_ascii_uppercase());
    if upper(0).as_deref() != Some("ALTER") || upper(1).as_deref() != Some("TABLE") {
        return Ok(None);
    }
    let Some(table) = word(2) else {
        return Ok(None);
    };
    let op = match upper(3).as_deref() {
        Some("RENAME") if matches!(upper(4).as_deref(), Some("INDEX" | "KEY")) => {
            match (word(5), upper(6).as_deref(), word(7), words.len()) {
                (Some(from), Some("TO"), Some(to), 8) => AlterOp::RenameIndex(from, to),
                _ => return Err(bad(sql, "expected RENAME INDEX old TO new")),
            }
        }
        Some("DROP") if matches!(upper(4).as_deref(), Some("CHECK" | "CONSTRAINT")) => {
            match (word(5), words.len()) {
                (Some(name), 6) => AlterOp::DropConstraint(name),
                _ => return Err(bad(sql, "expected DROP CHECK name")),
            }
        }
        Some("COMMENT") => {
            let at = if matches!(words.get(4), Some(Token::Eq)) {
                5
            } else {
                4
            };
            match (words.get(at), words.len() == at + 1) {
                (Some(Token::SingleQuotedString(s)), true) => AlterOp::Comment(s.clone()),
                _ => return Err(bad(sql, "expected COMMENT = 'text'")),
            }
        }
        _ => return Ok(None),
    };
    Ok(Some(AlterStatement {
        table,
        ops: vec![op],
    }))
}

/// One column definition parsed by `create_sql`, with the clauses its inline keys and checks
/// stand for (`ADD COLUMN id INT PRIMARY KEY` adds the column, then the primary key).
fn column_with_keys(
    sql: &str,
    name: &sqlparser::ast::Ident,
    data_type: &sqlparser::ast::DataType,
    options: Vec<ColumnOptionDef>,
) -> Result<(ColumnDef, Vec<AlterOp>)> {
    let mut scratch = TableDef::default();
    let c = sqlparser::ast::ColumnDef {
        name: name.clone(),
        data_type: data_type.clone(),
        options,
    };
    column_into(&mut scratch, &c).map_err(|e| e.in_sql("ALTER TABLE", sql))?;
    let mut keys = Vec::new();
    if !scratch.primary_key.is_empty() {
        keys.push(AlterOp::AddPrimaryKey(std::mem::take(
            &mut scratch.primary_key,
        )));
    }
    keys.extend(scratch.indexes.drain(..).map(AlterOp::AddIndex));
    keys.extend(scratch.checks.drain(..).map(AlterOp::AddCheck));
    Ok((scratch.columns.remove(0), keys))
}

/// MODIFY and CHANGE with an inline PRIMARY KEY: go-mysql-server ignores it on the table's
/// own key column and refuses it elsewhere; not done yet here.
fn no_inline_primary_key(sql: &str, keys: &[AlterOp]) -> Result<()> {
    if keys.iter().any(|k| matches!(k, AlterOp::AddPrimaryKey(_))) {
        return Err(prollystore_dolt::error::unsupported_sql(
            "ALTER TABLE",
            sql,
            "an inline PRIMARY KEY in MODIFY or CHANGE (not done yet: use DROP PRIMARY KEY, ADD \
             PRIMARY KEY)",
        ));
    }
    Ok(())
}

fn position(p: &Option<MySQLColumnPosition>) -> Option<Position> {
    p.as_ref().map(|p| match p {
        MySQLColumnPosition::First => Position::First,
        MySQLColumnPosition::After(i) => Position::After(i.value.clone()),
    })
}

/// The table of a `DROP TABLE [IF EXISTS] name` statement, and whether it said IF EXISTS
/// (`None` for any other statement). Several tables at once are not done.
pub(crate) fn parse_drop_table(sql: &str) -> Result<Option<(String, bool)>> {
    let Ok(statements) = Parser::parse_sql(&MySqlDialect {}, sql) else {
        return Ok(None);
    };
    match statements.as_slice() {
        [Statement::Drop {
            object_type: sqlparser::ast::ObjectType::Table,
            if_exists,
            names,
            temporary: false,
            ..
        }] => match names.as_slice() {
            [one] => Ok(Some((unquote(&one.to_string()), *if_exists))),
            _ => Err(prollystore_dolt::error::unsupported_sql(
                "DROP TABLE",
                sql,
                "DROP TABLE of several tables (not done yet)",
            )),
        },
        _ => Ok(None),
    }
}

/// Parses one `ALTER TABLE` statement (or `RENAME TABLE a TO b`).
pub fn parse_alter(sql: &str) -> Result<AlterStatement> {
    if let Some(s) = special(sql)? {
        return Ok(s);
    }
    let statements = Parser::parse_sql(&MySqlDialect {}, sql)
        .map_err(|e| prollystore_dolt::error::unparsable_sql("ALTER TABLE", sql, e))?;
    let stmt = match statements.as_slice() {
        [one] => one,
        _ => return Err(bad(sql, "expected exactly one ALTER TABLE statement")),
    };
    let (table, operations) = match stmt {
        Statement::AlterTable(a) => (a.name.to_string(), &a.operations),
        Statement::RenameTable(r) => match r.as_slice() {
            [one] => {
                return Ok(AlterStatement {
                    table: unquote(&one.old_name.to_string()),
                    ops: vec![AlterOp::RenameTable(unquote(&one.new_name.to_string()))],
                })
            }
            _ => {
                return Err(prollystore_dolt::error::unsupported_sql(
                    "ALTER TABLE",
                    sql,
                    "RENAME TABLE of several tables (not done yet)",
                ))
            }
        },
        _ => return Err(bad(sql, "not an ALTER TABLE statement")),
    };
    let mut ops = Vec::new();
    for o in operations {
        ops.push(match o {
            AlterTableOperation::AddColumn {
                column_def,
                column_position,
                if_not_exists: false,
                ..
            } => {
                let (col, keys) = column_with_keys(
                    sql,
                    &column_def.name,
                    &column_def.data_type,
                    column_def.options.clone(),
                )?;
                ops.push(AlterOp::AddColumn(col, position(column_position)));
                ops.extend(keys);
                continue;
            }
            AlterTableOperation::DropColumn {
                column_names,
                if_exists: false,
                drop_behavior: None,
                ..
            } if column_names.len() == 1 => AlterOp::DropColumn(column_names[0].value.clone()),
            AlterTableOperation::RenameColumn {
                old_column_name,
                new_column_name,
            } => {
                AlterOp::RenameColumn(old_column_name.value.clone(), new_column_name.value.clone())
            }
            AlterTableOperation::ChangeColumn {
                old_name,
                new_name,
                data_type,
                options,
                column_position,
            } => {
                let (col, keys) = column_with_keys(sql, new_name, data_type, wrap(options))?;
                no_inline_primary_key(sql, &keys)?;
                if !keys.is_empty() && old_name.value != new_name.value {
                    // go-mysql-server looks the key's column up by its old name.
                    return Err(bad(
                        sql,
                        format!("key column '{}' doesn't exist in table", new_name.value),
                    ));
                }
                ops.push(AlterOp::ChangeColumn(
                    old_name.value.clone(),
                    col,
                    position(column_position),
                ));
                ops.extend(keys);
                continue;
            }
            AlterTableOperation::ModifyColumn {
                col_name,
                data_type,
                options,
                column_position,
            } => {
                let (col, keys) = column_with_keys(sql, col_name, data_type, wrap(options))?;
                no_inline_primary_key(sql, &keys)?;
                ops.push(AlterOp::ChangeColumn(
                    col_name.value.clone(),
                    col,
                    position(column_position),
                ));
                ops.extend(keys);
                continue;
            }
            AlterTableOperation::AlterColumn { column_name, op } => match op {
                AlterColumnOperation::SetDefault { value } => {
                    // Printed for the column's type when the clause runs.
                    let value = value.clone();
                    AlterOp::SetDefault(
                        column_name.value.clone(),
                        Some(DefaultText::new(move |ty| default_text(&value, ty))),
                    )
                }
                AlterColumnOperation::DropDefault => {
                    AlterOp::SetDefault(column_name.value.clone(), None)
                }
                other => {
                    return Err(prollystore_dolt::error::unsupported_sql(
                        "ALTER TABLE",
                        sql,
                        format!("ALTER COLUMN … {other} (not done yet)"),
                    ))
                }
            },
            AlterTableOperation::AddConstraint { constraint, .. } => {
                let mut scratch = TableDef {
                    name: table.clone(),
                    ..TableDef::default()
                };
                constraint_into(&mut scratch, constraint)
                    .map_err(|e| e.in_sql("ALTER TABLE", sql))?;
                if !scratch.primary_key.is_empty() {
                    AlterOp::AddPrimaryKey(scratch.primary_key)
                } else if let Some(ix) = scratch.indexes.pop() {
                    AlterOp::AddIndex(ix)
                } else if let Some(c) = scratch.checks.pop() {
                    AlterOp::AddCheck(c)
                } else if let Some(fk) = scratch.foreign_keys.pop() {
                    AlterOp::AddForeignKey(fk)
                } else {
                    return Err(prollystore_dolt::error::unsupported_sql(
                        "ALTER TABLE",
                        sql,
                        format!("ADD {constraint} (not done yet)"),
                    ));
                }
            }
            AlterTableOperation::DropIndex { name } => AlterOp::DropIndex(name.value.clone()),
            AlterTableOperation::DropPrimaryKey {
                drop_behavior: None,
            } => AlterOp::DropPrimaryKey,
            AlterTableOperation::DropForeignKey { name, .. } => {
                AlterOp::DropForeignKey(name.value.clone())
            }
            AlterTableOperation::DropConstraint {
                name,
                if_exists: false,
                drop_behavior: None,
            } => AlterOp::DropConstraint(name.value.clone()),
            AlterTableOperation::RenameTable { table_name } => {
                let name = match table_name {
                    sqlparser::ast::RenameTableNameKind::As(n)
                    | sqlparser::ast::RenameTableNameKind::To(n) => n,
                };
                AlterOp::RenameTable(unquote(&name.to_string()))
            }
            AlterTableOperation::AutoIncrement { value, .. } => {
                let n = value.value.to_string();
                AlterOp::AutoIncrement(
                    n.parse().map_err(|_| {
                        bad(sql, format!("AUTO_INCREMENT = {n}: not a whole number"))
                    })?,
                )
            }
            other => {
                return Err(prollystore_dolt::error::unsupported_sql(
                    "ALTER TABLE",
                    sql,
                    format!("{other} (not done yet)"),
                ))
            }
        });
    }
    if ops.is_empty() {
        return Err(bad(sql, "no change named"));
    }
    Ok(AlterStatement {
        table: unquote(&table),
        ops,
    })
}

fn wrap(options: &[ColumnOption]) -> Vec<ColumnOptionDef> {
    options
        .iter()
        .map(|o| ColumnOptionDef {
            name: None,
            option: o.clone(),
        })
        .collect()
}
