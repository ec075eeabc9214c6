//! `CREATE TABLE` text (MySQL dialect, parsed with `sqlparser`) as a [`TableDef`]: column
//! types spelled as `dolt schema show` prints them, NOT NULL, defaults, comments, collations,
//! AUTO_INCREMENT, the primary key, UNIQUE and plain indexes (key parts with prefix lengths,
//! `name(10)`, included), CHECK constraints (an unnamed one named by the writer as Dolt
//! names it), and the table's collation and comment, foreign keys with their ON DELETE /
//! ON UPDATE actions, spatial types with their SRID attribute. Clauses this writer cannot
//! store as Dolt does (expression key parts, partitions, …) are errors naming the clause.

use sqlparser::ast::{
    ColumnOption, CreateTable, Expr, ReferentialAction, SqlOption, Statement, TableConstraint,
    Value,
};
use sqlparser::dialect::MySqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

use prollystore_dolt::write::{
    CheckDef, ColumnDef, ForeignKeyAction, ForeignKeyDef, GeneratedDef, IndexDef, TableDef,
};
use prollystore_dolt::{DoltError, Result};
use prollystore_format::sql_type::charset_default;
use prollystore_format::Collation;

fn unsupported(what: impl std::fmt::Display) -> DoltError {
    DoltError::Unsupported(format!("CREATE TABLE: {what}"))
}

/// Lower case outside single quotes, without spaces after commas outside quotes.
fn normalize_type(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quoted = false;
    let mut after_comma = false;
    for c in text.chars() {
        if c == '\'' {
            quoted = !quoted;
        }
        if !quoted && after_comma && c == ' ' {
            continue;
        }
        after_comma = !quoted && c == ',';
        out.push(if quoted { c } else { c.to_ascii_lowercase() });
    }
    out
}

/// A declared type as Dolt prints it (`INTEGER` → `int`, `BOOL` → `tinyint(1)`, display
/// widths dropped, `DECIMAL` → `decimal(10,0)`, …).
fn printed_type(declared: &str) -> String {
    let t = normalize_type(declared.trim());
    let (base, rest) = match t.find(['(', ' ']) {
        Some(at) => (&t[..at], &t[at..]),
        None => (t.as_str(), ""),
    };
    let (args, tail) = match rest.strip_prefix('(') {
        Some(r) => match r.find(')') {
            Some(end) if !base.starts_with("enum") && !base.starts_with("set") => {
                (Some(&r[..end]), r[end + 1..].trim())
            }
            _ => (None, rest.trim()),
        },
        None => (None, rest.trim()),
    };
    let unsigned = tail.contains("unsigned");
    let suffix = if unsigned { " unsigned" } else { "" };
    match base {
        "integer" | "int" => format!("int{suffix}"),
        "tinyint" if args == Some("1") && !unsigned => "tinyint(1)".into(),
        "bool" | "boolean" => "tinyint(1)".into(),
        "tinyint" | "smallint" | "mediumint" | "bigint" => format!("{base}{suffix}"),
        "dec" | "numeric" | "decimal" | "fixed" => match args {
            Some(a) if a.contains(',') => format!("decimal({a})"),
            Some(a) => format!("decimal({a},0)"),
            None => "decimal(10,0)".into(),
        },
        "real" | "double" => "double".into(),
        "float" => "float".into(),
        "char" | "binary" | "bit" if args.is_none() => format!("{base}(1)"),
        "datetime" | "timestamp" | "time" if args == Some("0") => base.to_string(),
        _ => t.trim().to_string(),
    }
}

/// A CHECK expression as Dolt stores it (go-mysql-server's printing of the parsed
/// expression): identifiers in backquotes, every binary operation in parentheses, `<>` and
/// `!=` as `(NOT((a = b)))`, `NOT x` as `(NOT(x))`, `x IS NOT NULL` as `(NOT(x IS NULL))`,
/// function names in lower case with arguments joined by `,`; `(x IN (a, b))`,
/// `(x BETWEEN a AND b)`, `NOT IN`/`NOT BETWEEN` as `(NOT((…)))`, `CASE [x] WHEN … THEN …
/// [ELSE …] END` unparenthesized (two spaces after a `CASE` without operand), `x LIKE p` and
/// `x IS TRUE` unparenthesized, `NOT LIKE` as `(NOT(x LIKE p))`,
/// `IS NOT TRUE` as `(NOT(x IS TRUE))`, TRUE/FALSE as `true`/`false` but as `1`/`0` when
/// compared, a leading `+` dropped. Forms whose printing is not known here (numbers with an
/// exponent, which Dolt prints evaluated, among them) are an error: a guess would store a
/// schema Dolt would not.
fn check_text(expr: &Expr) -> Result<String> {
    use sqlparser::ast::UnaryOperator as U;
    use sqlparser::ast::{BinaryOperator as B, FunctionArg, FunctionArgExpr, FunctionArguments};
    let unknown = || {
        unsupported(format!(
            "CHECK expression {expr}: its form as Dolt stores it (not done yet)"
        ))
    };
    Ok(match expr {
        Expr::Nested(inner) => check_text(inner)?,
        Expr::Identifier(id) => format!("`{}`", id.value.replace('`', "``")),
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) if !n.contains(['e', 'E']) => n.to_string(),
            Value::Boolean(b) => b.to_string(),
            Value::SingleQuotedString(t) | Value::DoubleQuotedString(t) => {
                format!("'{}'", t.replace('\'', "''"))
            }
            Value::Null => "NULL".into(),
            _ => return Err(unknown()),
        },
        Expr::UnaryOp {
            op: U::Minus,
            expr: inner,
        } if matches!(**inner, Expr::Value(_) | Expr::Identifier(_)) => {
            format!("-{}", check_text(inner)?)
        }
        Expr::UnaryOp {
            op: U::Plus,
            expr: inner,
        } if matches!(**inner, Expr::Value(_)) => check_text(inner)?,
        Expr::UnaryOp {
            op: U::Not,
            expr: inner,
        } => format!("(NOT({}))", check_text(inner)?),
        Expr::IsNull(x) => format!("{} IS NULL", check_text(x)?),
        Expr::IsNotNull(x) => format!("(NOT({} IS NULL))", check_text(x)?),
        Expr::IsTrue(x) => format!("{} IS TRUE", check_text(x)?),
        Expr::IsNotTrue(x) => format!("(NOT({} IS TRUE))", check_text(x)?),
        Expr::IsFalse(x) => format!("{} IS FALSE", check_text(x)?),
        Expr::IsNotFalse(x) => format!("(NOT({} IS FALSE))", check_text(x)?),
        Expr::In {
            expr: x,
            target: sqlparser::ast::InTarget::List(list),
            negated,
            global: false,
        } => {
            if list.iter().any(|e| bool_literal(e).is_some()) {
                return Err(unknown());
            }
            let items = list.iter().map(check_text).collect::<Result<Vec<_>>>()?;
            negated_if(
                *negated,
                format!("({} IN ({}))", check_text(x)?, items.join(", ")),
            )
        }
        Expr::Like {
            negated,
            any: false,
            expr: x,
            pattern,
            escape_char: None,
        } if bool_literal(x).is_none() && bool_literal(pattern).is_none() => negated_if(
            *negated,
            format!("{} LIKE {}", check_text(x)?, check_text(pattern)?),
        ),
        Expr::Between {
            expr: x,
            negated,
            low,
            high,
        } => {
            if [x, low, high].iter().any(|e| bool_literal(e).is_some()) {
                return Err(unknown());
            }
            let (x, low, high) = (check_text(x)?, check_text(low)?, check_text(high)?);
            negated_if(*negated, format!("({x} BETWEEN {low} AND {high})"))
        }
        Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            let mut text = format!(
                "CASE {}",
                operand
                    .as_deref()
                    .map(check_text)
                    .transpose()?
                    .unwrap_or_default()
            );
            for w in conditions {
                text += &format!(
                    " WHEN {} THEN {}",
                    check_text(&w.condition)?,
                    check_text(&w.result)?
                );
            }
            if let Some(e) = else_result {
                text += &format!(" ELSE {}", check_text(e)?);
            }
            text + " END"
        }
        Expr::BinaryOp { left, op, right } => {
            // The parser binds XOR tighter than MySQL does: only parenthesized operands are
            // read as written.
            let nested = |e: &Expr| matches!(e, Expr::Nested(_) | Expr::Identifier(_));
            if matches!(op, B::Xor) && !(nested(left) && nested(right)) {
                return Err(unsupported(format!(
                    "CHECK expression {expr}: put each operand of XOR in parentheses"
                )));
            }
            let compared = matches!(
                op,
                B::Eq | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq | B::Spaceship
            );
            // A compared TRUE/FALSE is stored as the number it stands for.
            let operand = |e: &Expr| match bool_literal(e) {
                Some(b) if compared => Ok(u8::from(b).to_string()),
                _ => check_text(e),
            };
            let (l, r) = (operand(left)?, operand(right)?);
            let op = match op {
                B::NotEq => return Ok(format!("(NOT(({l} = {r})))")),
                B::Plus => "+",
                B::Minus => "-",
                B::Multiply => "*",
                B::Divide => "/",
                B::Modulo => "%",
                B::Eq => "=",
                B::Lt => "<",
                B::LtEq => "<=",
                B::Gt => ">",
                B::GtEq => ">=",
                B::Spaceship => "<=>",
                B::And => "AND",
                B::Or => "OR",
                B::Xor => "XOR",
                _ => return Err(unknown()),
            };
            format!("({l} {op} {r})")
        }
        Expr::Function(f) => {
            let args = match &f.args {
                FunctionArguments::None => Vec::new(),
                FunctionArguments::List(list)
                    if list.duplicate_treatment.is_none() && list.clauses.is_empty() =>
                {
                    list.args
                        .iter()
                        .map(|a| match a {
                            FunctionArg::Unnamed(FunctionArgExpr::Expr(x))
                                if bool_literal(x).is_none() =>
                            {
                                check_text(x)
                            }
                            _ => Err(unknown()),
                        })
                        .collect::<Result<Vec<_>>>()?
                }
                _ => return Err(unknown()),
            };
            if f.filter.is_some() || f.over.is_some() || !f.within_group.is_empty() {
                return Err(unknown());
            }
            format!(
                "{}({})",
                f.name.to_string().to_ascii_lowercase(),
                args.join(",")
            )
        }
        _ => return Err(unknown()),
    })
}

/// `text` as Dolt stores `NOT (…)` around it when `negated`.
fn negated_if(negated: bool, text: String) -> String {
    if negated {
        format!("(NOT({text}))")
    } else {
        text
    }
}

/// The value of a TRUE/FALSE literal (parenthesized or not).
fn bool_literal(e: &Expr) -> Option<bool> {
    match e {
        Expr::Nested(inner) => bool_literal(inner),
        Expr::Value(v) => match v.value {
            Value::Boolean(b) => Some(b),
            _ => None,
        },
        _ => None,
    }
}

/// A default value as Dolt stores it: string literals quoted, numbers as the column's type
/// prints them (`1.5` in `decimal(5,2)` → `1.50`), `TRUE`/`FALSE` as `1`/`0`, bit literals
/// as numbers, `NULL`; `NOW()`, `CURRENT_TIMESTAMP` and synonyms as `CURRENT_TIMESTAMP` (with
/// a precision when one is given); `(expr)` as the expression in Dolt's CHECK spelling inside
/// parentheses (`(id + 3)` → `((`id` + 3))`), so forms whose spelling is not known are errors.
pub(crate) fn default_text(expr: &Expr, printed: &str) -> Result<String> {
    let inner = match expr {
        Expr::Nested(inner) => inner.as_ref(),
        other => other,
    };
    if let Expr::Function(f) = inner {
        let name = f.name.to_string().to_ascii_lowercase();
        if matches!(
            name.as_str(),
            "now" | "current_timestamp" | "localtime" | "localtimestamp"
        ) {
            let args = match &f.args {
                sqlparser::ast::FunctionArguments::List(l) if !l.args.is_empty() => {
                    format!(
                        "({})",
                        l.args
                            .iter()
                            .map(|a| a.to_string())
                            .collect::<Vec<_>>()
                            .join(",")
                    )
                }
                _ => String::new(),
            };
            return Ok(format!("CURRENT_TIMESTAMP{args}"));
        }
    }
    if let Expr::Nested(inner) = expr {
        return check_text(inner).map(|t| format!("({t})")).map_err(|_| {
            unsupported(format!(
                "DEFAULT {expr}: its form as Dolt stores it (not done yet)"
            ))
        });
    }
    let Expr::Value(v) = expr else {
        return Ok(expr.to_string());
    };
    Ok(match &v.value {
        Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => {
            format!("'{}'", s.replace('\'', "''"))
        }
        Value::Boolean(b) => u8::from(*b).to_string(),
        Value::SingleQuotedByteStringLiteral(bits)
            if bits.bytes().all(|c| c == b'0' || c == b'1') =>
        {
            u64::from_str_radix(bits, 2).map_or_else(|_| v.to_string(), |n| n.to_string())
        }
        Value::Number(n, _) if printed.starts_with("decimal(") => {
            let scale = printed
                .trim_start_matches("decimal(")
                .split([',', ')'])
                .nth(1)
                .and_then(|s| s.parse::<usize>().ok())
                .unwrap_or(0);
            let n = n.to_string();
            let (whole, frac) = n.split_once('.').unwrap_or((&n, ""));
            if frac.len() <= scale && !n.contains(['e', 'E']) {
                let pad = "0".repeat(scale - frac.len());
                if scale == 0 {
                    whole.to_string()
                } else {
                    format!("{whole}.{frac}{pad}")
                }
            } else {
                n
            }
        }
        other => other.to_string(),
    })
}

/// The number of a column's `SRID n` attribute.
fn srid_of(column: &str, e: &Expr) -> Result<u32> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => n.parse().ok(),
            _ => None,
        },
        _ => None,
    }
    .ok_or_else(|| {
        prollystore_dolt::error::bad_input(
            "CREATE TABLE",
            format!("column {column:?}: SRID {e}: a number expected"),
        )
    })
}

/// An index's column names and prefix lengths (`name(10)` is column `name`, prefix 10; empty
/// when no column has one).
fn index_columns(cols: &[sqlparser::ast::IndexColumn]) -> Result<(Vec<String>, Vec<u16>)> {
    let mut names = Vec::with_capacity(cols.len());
    let mut prefixes = Vec::with_capacity(cols.len());
    for c in cols {
        let (name, prefix) = match &c.column.expr {
            Expr::Identifier(id) => (id.value.clone(), 0),
            Expr::Function(f) => (
                f.name.to_string().trim_matches('`').to_string(),
                prefix_length(f).ok_or_else(|| {
                    unsupported(format!("index part {f} (an expression; not done yet)"))
                })?,
            ),
            other => {
                return Err(unsupported(format!(
                    "index part {other} (an expression; not done yet)"
                )))
            }
        };
        names.push(name);
        prefixes.push(prefix);
    }
    if prefixes.iter().all(|&p| p == 0) {
        prefixes.clear();
    }
    Ok((names, prefixes))
}

/// The length of a prefix key part (`name(10)`, parsed as a call of `name` with one integer
/// argument), if `f` is one.
fn prefix_length(f: &sqlparser::ast::Function) -> Option<u16> {
    use sqlparser::ast::{FunctionArg, FunctionArgExpr, FunctionArguments};
    if f.name.0.len() != 1 || f.filter.is_some() || f.over.is_some() {
        return None;
    }
    let FunctionArguments::List(list) = &f.args else {
        return None;
    };
    let [FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(v)))] = list.args.as_slice() else {
        return None;
    };
    match &v.value {
        Value::Number(n, _) => n.parse::<u16>().ok().filter(|&p| p > 0),
        _ => None,
    }
}

/// A `[CONSTRAINT name] FOREIGN KEY (cols) REFERENCES parent (cols) [ON DELETE a] [ON UPDATE a]`
/// clause.
fn foreign_key(fk: &sqlparser::ast::ForeignKeyConstraint) -> Result<ForeignKeyDef> {
    if fk.index_name.is_some() || fk.match_kind.is_some() || fk.characteristics.is_some() {
        return Err(unsupported(format!(
            "{fk}: an index name, MATCH or characteristics on a foreign key (not done yet)"
        )));
    }
    let action = |a: &Option<ReferentialAction>| -> Result<ForeignKeyAction> {
        Ok(match a {
            None => ForeignKeyAction::Default,
            Some(ReferentialAction::Restrict) => ForeignKeyAction::Restrict,
            Some(ReferentialAction::Cascade) => ForeignKeyAction::Cascade,
            Some(ReferentialAction::SetNull) => ForeignKeyAction::SetNull,
            Some(ReferentialAction::NoAction) => ForeignKeyAction::NoAction,
            // Dolt's MySQL dialect parses SET DEFAULT and refuses it with this message
            // (go-mysql-server's `ErrForeignKeySetDefault`), creating nothing.
            Some(ReferentialAction::SetDefault) => {
                return Err(prollystore_dolt::error::bad_input(
                    "CREATE TABLE",
                    format!(
                        "{fk}: \"SET DEFAULT\" is not supported (Dolt refuses ON DELETE and ON \
                     UPDATE SET DEFAULT too)"
                    ),
                ))
            }
        })
    };
    let parent_table = fk
        .foreign_table
        .0
        .last()
        .and_then(|p| p.as_ident())
        .map(|i| i.value.clone())
        .ok_or_else(|| {
            prollystore_dolt::error::bad_input("CREATE TABLE", format!("{fk}: no referenced table"))
        })?;
    if fk.foreign_table.0.len() > 1 {
        return Err(unsupported(format!(
            "{fk}: a referenced table in another database"
        )));
    }
    Ok(ForeignKeyDef {
        name: fk.name.as_ref().map(|i| i.value.clone()),
        columns: fk.columns.iter().map(|i| i.value.clone()).collect(),
        parent_table,
        parent_columns: fk
            .referred_columns
            .iter()
            .map(|i| i.value.clone())
            .collect(),
        on_update: action(&fk.on_update)?,
        on_delete: action(&fk.on_delete)?,
    })
}

/// The collation of a table declared with character set `named` and collation `collate`
/// (if any): the collation, which must be of that set, else the set's default, as in Dolt.
fn table_collation(named: &str, collate: Option<String>) -> Result<String> {
    let bad = |what: String| prollystore_dolt::error::bad_input("CREATE TABLE", what);
    let (charset, default) =
        charset_default(named).ok_or_else(|| bad(format!("Unknown character set: {named}")))?;
    match collate {
        None => Ok(default.to_string()),
        Some(c) => match Collation::from_name(&c) {
            Ok(k) if k.charset() != charset => Err(bad(format!(
                "{charset} is not a valid character set for {c}"
            ))),
            // An unknown collation is the writer's to report, with the others.
            _ => Ok(c),
        },
    }
}

/// Parses one `CREATE TABLE` statement. Column tags are left for the writer to derive as
/// Dolt does. (`TableDef::from_sql` with [`crate::FromSql`] in scope.)
pub fn table_def(sql: &str) -> Result<TableDef> {
    let statements = Parser::parse_sql(&MySqlDialect {}, sql)
        .map_err(|e| prollystore_dolt::error::unparsable_sql("CREATE TABLE", sql, e))?;
    let [Statement::CreateTable(ct)] = statements.as_slice() else {
        return Err(prollystore_dolt::error::bad_input(
            "CREATE TABLE",
            "expected exactly one CREATE TABLE statement",
        ));
    };
    from_create(ct)
}

/// Adds column `c` to `def` (its inline PRIMARY KEY and UNIQUE become the table's key and
/// indexes). `ALTER TABLE` parses its column definitions through this too.
pub(crate) fn column_into(def: &mut TableDef, c: &sqlparser::ast::ColumnDef) -> Result<()> {
    let mut col = ColumnDef {
        name: c.name.value.clone(),
        sql_type: printed_type(&c.data_type.to_string()),
        nullable: true,
        default: None,
        auto_increment: false,
        comment: None,
        tag: None,
        generated: None,
    };
    let mut collate = None;
    let mut charset = None;
    let mut srid = None;
    for o in &c.options {
        match &o.option {
            ColumnOption::Null => col.nullable = true,
            ColumnOption::NotNull => col.nullable = false,
            ColumnOption::Default(e) => col.default = Some(default_text(e, &col.sql_type)?),
            ColumnOption::Comment(s) => col.comment = Some(s.clone()),
            ColumnOption::Srid(e) => srid = Some(srid_of(&col.name, e)?),
            ColumnOption::Collation(n) => collate = Some(n.to_string()),
            ColumnOption::CharacterSet(n) => charset = Some(n.to_string()),
            ColumnOption::Generated {
                generation_expr: Some(e),
                generation_expr_mode,
                ..
            } => {
                let expr = check_text(e).map(|t| format!("({t})")).map_err(|_| {
                    unsupported(format!(
                        "column {:?}: AS ({e}): its form as Dolt stores it (not done yet)",
                        col.name
                    ))
                })?;
                col.generated = Some(GeneratedDef {
                    expr,
                    stored: matches!(
                        generation_expr_mode,
                        Some(sqlparser::ast::GeneratedExpressionMode::Stored)
                    ),
                });
            }
            ColumnOption::PrimaryKey(_) => {
                col.nullable = false;
                def.primary_key = vec![col.name.clone()];
            }
            ColumnOption::Check(c) => {
                constraint_into(def, &TableConstraint::Check(c.clone()))?;
            }
            ColumnOption::Unique(_) => def.indexes.push(IndexDef {
                name: col.name.clone(),
                columns: vec![col.name.clone()],
                unique: true,
                prefix_lengths: Vec::new(),
                spatial: false,
            }),
            ColumnOption::DialectSpecific(tokens)
                if tokens.iter().any(
                    |t| matches!(t, Token::Word(w) if w.keyword == Keyword::AUTO_INCREMENT),
                ) =>
            {
                col.auto_increment = true
            }
            other => {
                return Err(unsupported(format!(
                    "column {:?}: {other} (not done yet)",
                    col.name
                )))
            }
        }
    }
    // The writer checks the set and the collation and gives a set named alone its default
    // collation, as Dolt does (`SqlType::parse_checked`).
    if let Some(cs) = charset {
        col.sql_type = format!("{} CHARACTER SET {}", col.sql_type, cs.to_ascii_lowercase());
    }
    if let Some(c) = collate {
        col.sql_type = format!("{} COLLATE {}", col.sql_type, c.to_ascii_lowercase());
    }
    if let Some(n) = srid {
        col.sql_type = format!("{} SRID {n}", col.sql_type);
    }
    def.columns.push(col);
    Ok(())
}

/// Adds table constraint `k` (PRIMARY KEY, UNIQUE, INDEX, CHECK, FOREIGN KEY, SPATIAL) to
/// `def`. `ALTER TABLE … ADD` parses its constraints through this too.
pub(crate) fn constraint_into(def: &mut TableDef, k: &TableConstraint) -> Result<()> {
    match k {
        TableConstraint::PrimaryKey(pk) => {
            let (columns, prefixes) = index_columns(&pk.columns)?;
            if !prefixes.is_empty() {
                // Dolt refuses these too ("prefix index on string column … unsupported").
                return Err(prollystore_dolt::error::bad_input(
                    "CREATE TABLE",
                    "a prefix length in the PRIMARY KEY",
                ));
            }
            def.primary_key = columns;
            for c in def.columns.iter_mut() {
                if def
                    .primary_key
                    .iter()
                    .any(|k| k.eq_ignore_ascii_case(&c.name))
                {
                    c.nullable = false;
                }
            }
        }
        TableConstraint::Unique(u) => {
            let (columns, prefix_lengths) = index_columns(&u.columns)?;
            let name = u
                .index_name
                .as_ref()
                .or(u.name.as_ref())
                .map(|i| i.value.clone())
                .unwrap_or_else(|| columns[0].clone());
            def.indexes.push(IndexDef {
                name,
                columns,
                unique: true,
                prefix_lengths,
                spatial: false,
            });
        }
        TableConstraint::Index(ix) => {
            let (columns, prefix_lengths) = index_columns(&ix.columns)?;
            let name = ix
                .name
                .as_ref()
                .map(|i| i.value.clone())
                .unwrap_or_else(|| columns[0].clone());
            def.indexes.push(IndexDef {
                name,
                columns,
                unique: false,
                prefix_lengths,
                spatial: false,
            });
        }
        TableConstraint::Check(c) => {
            if c.enforced == Some(false) {
                return Err(unsupported(format!("{k}: NOT ENFORCED (not done yet)")));
            }
            // Unnamed: the writer names it as Dolt does.
            let name = c.name.as_ref().map(|i| i.value.clone()).unwrap_or_default();
            def.checks.push(CheckDef {
                name,
                expr: check_text(&c.expr)?,
            });
        }
        TableConstraint::ForeignKey(fk) => def.foreign_keys.push(foreign_key(fk)?),
        TableConstraint::FulltextOrSpatial(ix) if !ix.fulltext => {
            let (columns, prefix_lengths) = index_columns(&ix.columns)?;
            if !prefix_lengths.is_empty() {
                return Err(prollystore_dolt::error::bad_input(
                    "CREATE TABLE",
                    format!("{ix}: a prefix length in a SPATIAL index (MySQL refuses it)"),
                ));
            }
            let name = ix
                .opt_index_name
                .as_ref()
                .map(|i| i.value.clone())
                .unwrap_or_else(|| columns[0].clone());
            def.indexes.push(IndexDef {
                name,
                columns,
                unique: false,
                prefix_lengths,
                spatial: true,
            });
        }
        TableConstraint::FulltextOrSpatial(ix) => {
            return Err(unsupported(format!(
                "{ix}: FULLTEXT indexes (not done yet)"
            )))
        }
        other => return Err(unsupported(format!("{other} (not done yet)"))),
    }
    Ok(())
}

fn from_create(ct: &CreateTable) -> Result<TableDef> {
    if ct.query.is_some() || ct.like.is_some() || ct.clone.is_some() {
        return Err(unsupported("CREATE TABLE … AS / LIKE / CLONE"));
    }
    let name = ct
        .name
        .0
        .last()
        .and_then(|p| p.as_ident())
        .map(|i| i.value.clone())
        .ok_or_else(|| prollystore_dolt::error::bad_input("CREATE TABLE", "no table name"))?;
    let mut def = TableDef {
        name: name.clone(),
        ..TableDef::default()
    };
    for c in &ct.columns {
        column_into(&mut def, c)?;
    }
    for k in &ct.constraints {
        constraint_into(&mut def, k)?;
    }
    if let Some(c) = &ct.comment {
        def.comment = Some(match c {
            sqlparser::ast::CommentDef::WithEq(s) | sqlparser::ast::CommentDef::WithoutEq(s) => {
                s.clone()
            }
        });
    }
    let options: &[SqlOption] = match &ct.table_options {
        sqlparser::ast::CreateTableOptions::None => &[],
        sqlparser::ast::CreateTableOptions::Plain(o) => o,
        other => return Err(unsupported(format!("table options {other}"))),
    };
    let mut charset = None;
    for o in options {
        match o {
            SqlOption::KeyValue { key, value } => {
                let k = key.to_string().to_ascii_uppercase();
                let v = value.to_string().trim_matches('\'').to_string();
                match k.as_str() {
                    "ENGINE" => {}
                    "COLLATE" | "DEFAULT COLLATE" => def.collation = Some(v.to_ascii_lowercase()),
                    "CHARSET" | "DEFAULT CHARSET" | "CHARACTER SET" | "DEFAULT CHARACTER SET" => {
                        charset = Some(v)
                    }
                    _ => return Err(unsupported(format!("table option {o} (not done yet)"))),
                }
            }
            SqlOption::Comment(c) => {
                def.comment = Some(match c {
                    sqlparser::ast::CommentDef::WithEq(s)
                    | sqlparser::ast::CommentDef::WithoutEq(s) => s.clone(),
                })
            }
            other => return Err(unsupported(format!("table option {other} (not done yet)"))),
        }
    }
    if let Some(named) = charset {
        def.collation = Some(table_collation(&named, def.collation.take())?);
    }
    // Dolt keeps indexes ordered by name.
    def.indexes.sort_by(|a, b| {
        a.name
            .to_ascii_lowercase()
            .cmp(&b.name.to_ascii_lowercase())
    });
    Ok(def)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::FromSql;

    #[test]
    fn printed_types() {
        assert_eq!(printed_type("INT"), "int");
        assert_eq!(printed_type("INTEGER(11) UNSIGNED"), "int unsigned");
        assert_eq!(printed_type("VARCHAR(30)"), "varchar(30)");
        assert_eq!(printed_type("DECIMAL(10, 2)"), "decimal(10,2)");
        assert_eq!(printed_type("DECIMAL"), "decimal(10,0)");
        assert_eq!(printed_type("BOOLEAN"), "tinyint(1)");
        assert_eq!(printed_type("ENUM('Small', 'b c')"), "enum('Small','b c')");
        assert_eq!(printed_type("DATETIME(6)"), "datetime(6)");
        assert_eq!(printed_type("TIME(6)"), "time(6)");
        assert_eq!(printed_type("BIGINT UNSIGNED"), "bigint unsigned");
        assert_eq!(printed_type("MEDIUMBLOB"), "mediumblob");
    }

    /// Expression defaults as Dolt stored them (read back from the schema chunk Dolt wrote
    /// for `CREATE TABLE` with these defaults, dolt 2.3.1-ish at the vectors' source commit).
    #[test]
    fn expression_defaults_as_dolt_stores_them() {
        let cases = [
            ("CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP"),
            ("CURRENT_TIMESTAMP(3)", "CURRENT_TIMESTAMP(3)"),
            ("(NOW())", "CURRENT_TIMESTAMP"),
            ("NOW()", "CURRENT_TIMESTAMP"),
            ("(uuid())", "(uuid())"),
            ("(-id)", "(-`id`)"),
            ("(lower('AB'))", "(lower('AB'))"),
            ("(id + 3)", "((`id` + 3))"),
            ("(concat('x', id))", "(concat('x',`id`))"),
            ("(id * 1.5)", "((`id` * 1.5))"),
        ];
        for (written, stored) in cases {
            let sql = format!("CREATE TABLE d (id INT PRIMARY KEY, c DATETIME DEFAULT {written})");
            let def = TableDef::from_sql(&sql).unwrap();
            assert_eq!(def.columns[1].default.as_deref(), Some(stored), "{written}");
        }
    }

    /// CHECK texts as Dolt stored them (printed by `dolt schema show` after `CREATE TABLE`
    /// with these expressions, dolt 2.3.1-ish at the vectors' source commit).
    #[test]
    fn check_texts_as_dolt_stores_them() {
        let cases = [
            ("qty > 0", "(`qty` > 0)"),
            ("price * qty <= 1000", "((`price` * `qty`) <= 1000)"),
            (
                "LENGTH(name) >= 2 OR name IS NULL",
                "((length(`name`) >= 2) OR `name` IS NULL)",
            ),
            ("a + b - 1 > -5", "(((`a` + `b`) - 1) > -5)"),
            (
                "a / 2 < 10 AND s IS NOT NULL",
                "(((`a` / 2) < 10) AND (NOT(`s` IS NULL)))",
            ),
            (
                "NOT (a = 1) OR s = 'it''s'",
                "((NOT((`a` = 1))) OR (`s` = 'it''s'))",
            ),
            (
                "(a >= 1.5) XOR (b != 2)",
                "((`a` >= 1.5) XOR (NOT((`b` = 2))))",
            ),
            (
                "CONCAT(s, 'x') <> 'ax' AND a % 2 = 0",
                "((NOT((concat(`s`,'x') = 'ax'))) AND ((`a` % 2) = 0))",
            ),
            // Printed by `dolt schema show` (dolt 2.3.1) after CREATE TABLE with these checks.
            ("a IN (1, 2, 3)", "(`a` IN (1, 2, 3))"),
            ("b NOT IN (4, 5)", "(NOT((`b` IN (4, 5))))"),
            ("a BETWEEN 0 AND 10", "(`a` BETWEEN 0 AND 10)"),
            ("b NOT BETWEEN -3 AND -1", "(NOT((`b` BETWEEN -3 AND -1)))"),
            ("s IN ('x', 'y''z')", "(`s` IN ('x', 'y''z'))"),
            (
                "CASE WHEN a > 1 THEN b > 0 ELSE TRUE END",
                "CASE  WHEN (`a` > 1) THEN (`b` > 0) ELSE true END",
            ),
            (
                "CASE a WHEN 1 THEN b = 1 WHEN 2 THEN b = 2 END",
                "CASE `a` WHEN 1 THEN (`b` = 1) WHEN 2 THEN (`b` = 2) END",
            ),
            (
                "a IS TRUE OR b IS NOT FALSE",
                "(`a` IS TRUE OR (NOT(`b` IS FALSE)))",
            ),
            (
                "UPPER(s) = 'X' AND TRUE AND a <=> b",
                "(((upper(`s`) = 'X') AND true) AND (`a` <=> `b`))",
            ),
            (
                "a IN (1) AND b BETWEEN a AND a * 2",
                "((`a` IN (1)) AND (`b` BETWEEN `a` AND (`a` * 2)))",
            ),
            (
                "(CASE WHEN a > 1 THEN 1 ELSE 0 END) = 1 OR a IS NULL",
                "((CASE  WHEN (`a` > 1) THEN 1 ELSE 0 END = 1) OR `a` IS NULL)",
            ),
            (
                "NOT (a IN (3)) AND b IS NOT TRUE",
                "((NOT((`a` IN (3)))) AND (NOT(`b` IS TRUE)))",
            ),
            (
                "(a BETWEEN 1 AND 2) = (b > 0)",
                "((`a` BETWEEN 1 AND 2) = (`b` > 0))",
            ),
            (
                "a = FALSE OR a IN (-1, +2, 1.50)",
                "((`a` = 0) OR (`a` IN (-1, 2, 1.50)))",
            ),
            (
                "CASE WHEN a IS NULL THEN NULL END IS NULL",
                "CASE  WHEN `a` IS NULL THEN NULL END IS NULL",
            ),
            ("s LIKE 'a%'", "`s` LIKE 'a%'"),
            ("s NOT LIKE '%b'", "(NOT(`s` LIKE '%b'))"),
        ];
        for (sql, stored) in cases {
            let def = TableDef::from_sql(&format!(
                "CREATE TABLE t (a INT, b INT, s TEXT, qty INT, price INT, name TEXT, CONSTRAINT k CHECK ({sql}))"
            ))
            .unwrap();
            assert_eq!(def.checks[0].expr, stored, "{sql}");
        }
        // Forms whose stored spelling is not known here: an escape clause, an exponent (Dolt
        // stores `0.5e1` evaluated, as 5), TRUE/FALSE in an IN list.
        for sql in ["s LIKE 'a|%' ESCAPE '|'", "a > 0.5e1", "a IN (TRUE, 2)"] {
            let err = TableDef::from_sql(&format!(
                "CREATE TABLE t (a INT, s TEXT, CONSTRAINT k CHECK ({sql}))"
            ))
            .unwrap_err();
            assert!(err.to_string().contains("not done yet"), "{sql}: {err}");
        }
    }

    /// Prefix key parts: their lengths per column (none stored when no column has one), and
    /// the forms go-mysql-server refuses refused here too, naming the column.
    #[test]
    fn prefix_lengths_parse_and_are_checked() {
        let def = TableDef::from_sql(
            "CREATE TABLE t (id INT PRIMARY KEY, a INT, n VARCHAR(20), b BLOB, \
             KEY kn (n(10)), UNIQUE KEY ub (a, b(3)), KEY plain (a, n))",
        )
        .unwrap();
        let prefixes: Vec<(&str, &[u16])> = def
            .indexes
            .iter()
            .map(|ix| (ix.name.as_str(), ix.prefix_lengths.as_slice()))
            .collect();
        assert_eq!(
            prefixes,
            [("kn", &[10][..]), ("plain", &[][..]), ("ub", &[0, 3][..])]
        );
        let mut used = HashSet::new();
        def.schema_chunk(&mut used).unwrap();
        for (sql, says) in [
            ("a INT, KEY k (a(2))", "a prefix length on a int column"),
            ("n VARCHAR(5), KEY k (n(6))", "longer than varchar(5)"),
            ("t TEXT, KEY k (t(769))", "too long"),
            ("b BLOB, KEY k (b(3073))", "too long"),
            ("t TEXT, KEY k (t)", "needs a prefix length"),
            ("n VARCHAR(5), PRIMARY KEY (n(2))", "PRIMARY KEY"),
            ("n VARCHAR(5), KEY k ((lower(n)))", "expression"),
        ] {
            let sql = format!("CREATE TABLE t (id INT, {sql})");
            let err = TableDef::from_sql(&sql)
                .and_then(|d| d.schema_chunk(&mut HashSet::new()))
                .unwrap_err()
                .to_string();
            assert!(err.contains(says), "{sql}: {err}");
        }
        // A UNIQUE key over a whole TEXT column stays allowed (Dolt hashes its values).
        TableDef::from_sql("CREATE TABLE t (id INT PRIMARY KEY, t TEXT, UNIQUE KEY u (t))")
            .unwrap()
            .schema_chunk(&mut HashSet::new())
            .unwrap();
    }

    #[test]
    fn spatial_columns() {
        let def = TableDef::from_sql(
            "CREATE TABLE g (id INT PRIMARY KEY, a GEOMETRY, b POINT SRID 4326 NOT NULL, \
             c LineString, d POLYGON SRID 0, e MULTIPOINT, f MULTILINESTRING, \
             h MULTIPOLYGON, i GEOMETRYCOLLECTION SRID 3857)",
        )
        .unwrap();
        let types: Vec<&str> = def.columns.iter().map(|c| c.sql_type.as_str()).collect();
        assert_eq!(
            types,
            [
                "int",
                "geometry",
                "point SRID 4326",
                "linestring",
                "polygon SRID 0",
                "multipoint",
                "multilinestring",
                "multipolygon",
                "geometrycollection SRID 3857"
            ]
        );
        assert!(!def.columns[2].nullable);
        let chunk = def.schema_chunk(&mut HashSet::new()).unwrap();
        let stored =
            prollystore_dolt::Schema::decode(&chunk, prollystore_format::Address::ZERO).unwrap();
        assert_eq!(stored.columns[2].sql_type_text, "point SRID 4326");
        assert!(stored
            .columns
            .iter()
            .skip(1)
            .all(|c| c.encoding == prollystore_format::Encoding::GeomAdaptive));
        for (sql, what) in [
            (
                "CREATE TABLE g (id INT PRIMARY KEY, p POINT, SPATIAL INDEX (p))",
                "NOT NULL",
            ),
            (
                "CREATE TABLE g (id INT PRIMARY KEY, p INT NOT NULL, SPATIAL INDEX (p))",
                "spatial column only",
            ),
            (
                "CREATE TABLE g (id INT PRIMARY KEY, p POINT NOT NULL, q POINT NOT NULL, \
                 SPATIAL INDEX (p, q))",
                "one column only",
            ),
            (
                "CREATE TABLE g (id INT PRIMARY KEY, p TEXT, FULLTEXT INDEX (p))",
                "FULLTEXT",
            ),
            (
                "CREATE TABLE g (id INT PRIMARY KEY, p POINT, UNIQUE INDEX (p))",
                "UNIQUE over spatial column",
            ),
            ("CREATE TABLE g (p POINT PRIMARY KEY)", "primary key"),
            (
                "CREATE TABLE g (id INT PRIMARY KEY, p POINT SRID 12345)",
                "12345",
            ),
            (
                "CREATE TABLE g (id INT PRIMARY KEY, p GEOMCOLLECTION)",
                "geomcollection",
            ),
        ] {
            let err = TableDef::from_sql(sql)
                .and_then(|d| d.schema_chunk(&mut HashSet::new()).map(|_| ()))
                .unwrap_err();
            assert!(err.to_string().contains(what), "{sql}: {err}");
        }
    }

    #[test]
    fn unsupported_clauses_are_named() {
        let err = TableDef::from_sql(
            "CREATE TABLE c (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES par(id) ON DELETE SET DEFAULT)",
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("\"SET DEFAULT\" is not supported"),
            "{err}"
        );
        let err = TableDef::from_sql("SELECT 1").unwrap_err();
        assert!(err.to_string().contains("CREATE TABLE"), "{err}");
    }
}
