//! `SHOW CREATE TABLE` text as Dolt prints it (`dolt schema show`), from a table's schema, its
//! AUTO_INCREMENT value and the root value's foreign keys.

use prollystore_dolt::{Column, Database, DoltError, Result, RootValue, Schema, SqlType, Table};
use prollystore_format::collation::{Collation, CollationError};
use prollystore_format::message::objects::ForeignKeyCollectionFields;
use prollystore_format::sql_type::collation_charset;

fn quote_ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// One foreign key of a table, with its column names resolved.
struct ForeignKey {
    name: String,
    child_columns: Vec<String>,
    parent_table: String,
    parent_columns: Vec<String>,
    on_update: u8,
    on_delete: u8,
}

fn tag_names(schema: &Schema, tags: &[u64]) -> Vec<String> {
    tags.iter()
        .map(|t| {
            schema
                .columns
                .iter()
                .find(|c| c.tag == *t)
                .map(|c| c.name.clone())
                .unwrap_or_else(|| format!("<tag {t}>"))
        })
        .collect()
}

fn foreign_keys(db: &Database, root: &RootValue, table: &Table) -> Result<Vec<ForeignKey>> {
    if root.foreign_keys.is_zero() {
        return Ok(Vec::new());
    }
    let chunk = db.source().chunk(&root.foreign_keys)?;
    let coll = ForeignKeyCollectionFields::decode(&chunk).map_err(|e| DoltError::BadChunk {
        address: root.foreign_keys,
        reason: format!("foreign key collection: {e}"),
    })?;
    let mut out = Vec::new();
    for fk in &coll.foreign_keys {
        if fk.child_table != table.name.as_str() {
            continue;
        }
        let parent_table = fk.parent_table.to_string();
        let child_tags = &fk.child_columns;
        let parent_tags = &fk.parent_columns;
        let parent_columns = if parent_table == table.name {
            tag_names(&table.schema, parent_tags)
        } else {
            let parent = db.table(root, &parent_table)?;
            tag_names(&parent.schema, parent_tags)
        };
        out.push(ForeignKey {
            name: fk.name.to_string(),
            child_columns: tag_names(&table.schema, child_tags),
            parent_table,
            parent_columns,
            on_update: fk.on_update,
            on_delete: fk.on_delete,
        });
    }
    Ok(out)
}

fn action(code: u8) -> Option<&'static str> {
    match code {
        1 => Some("CASCADE"),
        2 => Some("NO ACTION"),
        3 => Some("RESTRICT"),
        4 => Some("SET NULL"),
        _ => None,
    }
}

fn ident_list(names: &[String]) -> String {
    names
        .iter()
        .map(|n| quote_ident(n))
        .collect::<Vec<_>>()
        .join(",")
}

/// The MySQL name of collation `id` (also for collations whose order is not implemented).
fn collation_name(id: u16) -> Result<&'static str> {
    match Collation::from_id(id) {
        Ok(c) => Ok(c.name()),
        Err(CollationError::NotImplemented { name, .. }) => Ok(name),
        Err(e) => Err(prollystore_dolt::error::collation_stored(
            format!("collation id {id}"),
            e,
        )),
    }
}

/// The text of a single-quoted SQL string literal as Dolt stores defaults (`''` for a quote,
/// backslash escapes), or `None` if `d` is not one.
fn unquote(d: &str) -> Option<String> {
    let inner = d.strip_prefix('\'')?.strip_suffix('\'')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(ch) = chars.next() {
        match ch {
            '\'' => {
                // A doubled quote inside the literal.
                chars.next();
                out.push('\'');
            }
            '\\' => out.push(match chars.next() {
                Some('n') => '\n',
                Some('t') => '\t',
                Some('r') => '\r',
                Some('0') => '\0',
                Some('b') => '\u{8}',
                Some('Z') => '\u{1a}',
                Some(other) => other,
                None => '\\',
            }),
            other => out.push(other),
        }
    }
    Some(out)
}

/// Index of ENUM member `name` (1-based), as Dolt shows an ENUM default.
fn enum_index(members: &[String], name: &str) -> Option<usize> {
    // An exact match first (`enum('a','A')` under a binary collation), then one that only
    // differs in ASCII case (what a case-insensitive collation accepts).
    members
        .iter()
        .position(|m| m == name)
        .or_else(|| members.iter().position(|m| m.eq_ignore_ascii_case(name)))
        .map(|i| i + 1)
}

/// A stored default as `SHOW CREATE TABLE` prints it: expressions, `NULL`, functions such as
/// `CURRENT_TIMESTAMP` and quoted text/temporal literals as stored; numbers quoted; ENUM
/// defaults as the member's index and SET defaults as the members' bitmask (both quoted); BIT
/// defaults as `b'…'` binary; binary strings (stored as `0x…` hex) unquoted, in upper case; TIME
/// defaults given as numbers as times.
fn default_text(c: &Column, d: &str) -> String {
    if let Some(hex) = d.strip_prefix("0x") {
        return format!("0x{}", hex.to_ascii_uppercase());
    }
    match &c.sql_type {
        SqlType::Time(_) => {
            // A number given for a TIME default is stored as given and shown as the time it
            // means (HHMMSS: `5` is `00:00:05`, `10203` is `01:02:03`).
            if let Ok(v) = d.parse::<i64>() {
                let a = v.unsigned_abs();
                let sign = if v < 0 { "-" } else { "" };
                return format!(
                    "'{sign}{:02}:{:02}:{:02}'",
                    a / 10_000,
                    a / 100 % 100,
                    a % 100
                );
            }
        }
        SqlType::Bit(_) => {
            if let Ok(v) = d.parse::<u64>() {
                return format!("b'{v:b}'");
            }
        }
        SqlType::Enum { members, .. } => {
            if let Some(i) = unquote(d).and_then(|n| enum_index(members, &n)) {
                return format!("'{i}'");
            }
        }
        SqlType::Set { members, .. } => {
            if let Some(chosen) = unquote(d) {
                let mut bits = 0u64;
                for name in chosen.split(',').filter(|n| !n.is_empty()) {
                    if let Some(i) = enum_index(members, name).filter(|&i| i <= 64) {
                        bits |= 1 << (i - 1);
                    }
                }
                return format!("'{bits}'");
            }
        }
        _ => {}
    }
    let numeric = d
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_digit() || b == b'-' || b == b'+' || b == b'.');
    if numeric {
        format!("'{d}'")
    } else {
        d.to_string()
    }
}

/// A comment as `SHOW CREATE TABLE` quotes it (inside single quotes): `'` doubled and
/// backslash escapes for `\`, `"`, line breaks and NUL.
fn escape_comment(s: &str) -> String {
    s.replace('\'', "''")
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
        .replace('\r', "\\r")
        .replace('\0', "\\0")
}

/// The `CREATE TABLE` statement (no trailing semicolon).
pub fn create_table(db: &Database, root: &RootValue, table: &Table) -> Result<String> {
    let s = &table.schema;
    let table_collation = collation_name(s.collation)?;
    let mut lines = Vec::new();
    for i in s.visible_columns() {
        let Some(c) = s.columns.get(i) else { continue };
        let ty = c.sql_type.shown_text(&c.sql_type_text, table_collation);
        let mut l = format!("  {} {ty}", quote_ident(&c.name));
        if !c.nullable || c.primary_key {
            l.push_str(" NOT NULL");
        }
        if c.auto_increment {
            l.push_str(" AUTO_INCREMENT");
        }
        if let Some(id) = c.sql_type.srid() {
            l.push_str(&format!(" /*!80003 SRID {id} */"));
        }
        if c.generated {
            let expr = c.default_value.as_deref().unwrap_or("");
            l.push_str(&format!(" GENERATED ALWAYS AS {expr}"));
            if !c.virtual_ {
                l.push_str(" STORED");
            }
        } else if let Some(d) = c.default_value.as_deref().filter(|d| !d.is_empty()) {
            l.push_str(&format!(" DEFAULT {}", default_text(c, d)));
        }
        if let Some(u) = c.on_update.as_deref().filter(|u| !u.is_empty()) {
            l.push_str(&format!(" ON UPDATE {u}"));
        }
        if let Some(cm) = c.comment.as_deref().filter(|d| !d.is_empty()) {
            l.push_str(&format!(" COMMENT '{}'", escape_comment(cm)));
        }
        lines.push(l);
    }
    if !s.keyless {
        let pk: Vec<String> = s
            .key_columns
            .iter()
            .filter_map(|&i| s.columns.get(i).map(|c| c.name.clone()))
            .collect();
        lines.push(format!("  PRIMARY KEY ({})", ident_list(&pk)));
    }
    for ix in &s.indexes {
        let cols: Vec<String> = ix
            .columns
            .iter()
            .enumerate()
            .filter_map(|(k, &i)| {
                let name = quote_ident(&s.columns.get(i)?.name);
                Some(match ix.prefix_lengths.get(k).filter(|&&p| p > 0) {
                    Some(p) => format!("{name}({p})"),
                    None => name,
                })
            })
            .collect();
        let kind = if ix.unique {
            "UNIQUE KEY"
        } else if ix.spatial {
            "SPATIAL KEY"
        } else if ix.fulltext {
            "FULLTEXT KEY"
        } else {
            "KEY"
        };
        lines.push(format!(
            "  {kind} {} ({})",
            quote_ident(&ix.name),
            cols.join(",")
        ));
    }
    for fk in foreign_keys(db, root, table)? {
        let mut l = format!(
            "  CONSTRAINT {} FOREIGN KEY ({}) REFERENCES {} ({})",
            quote_ident(&fk.name),
            ident_list(&fk.child_columns),
            quote_ident(&fk.parent_table),
            ident_list(&fk.parent_columns)
        );
        if let Some(a) = action(fk.on_delete) {
            l.push_str(&format!(" ON DELETE {a}"));
        }
        if let Some(a) = action(fk.on_update) {
            l.push_str(&format!(" ON UPDATE {a}"));
        }
        lines.push(l);
    }
    for (name, expr, enforced) in &s.checks {
        let mut l = format!("  CONSTRAINT {} CHECK ({expr})", quote_ident(name));
        if !enforced {
            l.push_str(" /*!80016 NOT ENFORCED */");
        }
        lines.push(l);
    }
    let mut out = format!(
        "CREATE TABLE {} (\n{}\n) ENGINE=InnoDB",
        quote_ident(&table.name),
        lines.join(",\n")
    );
    if s.columns.iter().any(|c| c.auto_increment) && table.auto_increment > 0 {
        out.push_str(&format!(" AUTO_INCREMENT={}", table.auto_increment));
    }
    out.push_str(&format!(
        " DEFAULT CHARSET={} COLLATE={table_collation}",
        collation_charset(table_collation)
    ));
    // Dolt leaves the table comment out when the table has a VIRTUAL column (the table it
    // shows is then a wrapper that does not pass the comment on).
    let has_virtual = s.columns.iter().any(|c| c.virtual_);
    if let Some(c) = s
        .comment
        .as_deref()
        .filter(|c| !c.is_empty() && !has_virtual)
    {
        out.push_str(&format!(" COMMENT='{}'", escape_comment(c)));
    }
    Ok(out)
}
