//! `SHOW CREATE TABLE` text as Dolt prints it (`dolt schema show`), from a table's schema, its
//! AUTO_INCREMENT value and the root value's foreign keys.

use prollystore_format::message::generated::serial;

use crate::db::{Database, RootValue, Table};
use crate::error::{DoltError, Result};
use crate::message::fb_root;
use crate::schema::Schema;

/// Collation id of `utf8mb4_0900_bin`, Dolt's default.
const UTF8MB4_0900_BIN: u16 = 309;

fn quote_ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

fn quote_string(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''"))
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
    let coll = fb_root::<serial::ForeignKeyCollection>(&chunk, b"DFKC", root.foreign_keys)?;
    let mut out = Vec::new();
    for fk in coll.foreign_keys().iter().flatten() {
        if fk.child_table_name() != Some(table.name.as_str()) {
            continue;
        }
        let parent_table = fk.parent_table_name().unwrap_or("").to_string();
        let child_tags: Vec<u64> = fk
            .child_table_columns()
            .map(|v| v.iter().collect())
            .unwrap_or_default();
        let parent_tags: Vec<u64> = fk
            .parent_table_columns()
            .map(|v| v.iter().collect())
            .unwrap_or_default();
        let parent_columns = if parent_table == table.name {
            tag_names(&table.schema, &parent_tags)
        } else {
            let parent = db.table(root, &parent_table)?;
            tag_names(&parent.schema, &parent_tags)
        };
        out.push(ForeignKey {
            name: fk.name().unwrap_or("").to_string(),
            child_columns: tag_names(&table.schema, &child_tags),
            parent_table,
            parent_columns,
            on_update: fk.on_update().0,
            on_delete: fk.on_delete().0,
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

/// The `CREATE TABLE` statement (no trailing semicolon).
pub fn create_table(db: &Database, root: &RootValue, table: &Table) -> Result<String> {
    let s = &table.schema;
    if s.collation != UTF8MB4_0900_BIN {
        return Err(DoltError::Unsupported(format!(
            "table collation id {}",
            s.collation
        )));
    }
    let mut lines = Vec::new();
    for i in s.visible_columns() {
        let Some(c) = s.columns.get(i) else { continue };
        // Dolt stores DATETIME/TIMESTAMP with an explicit precision; SHOW CREATE drops `(0)`.
        let ty = ["datetime(0)", "timestamp(0)"]
            .iter()
            .find_map(|p| {
                c.sql_type_text
                    .strip_prefix(p)
                    .map(|rest| format!("{}{rest}", &p[..p.len() - 3]))
            })
            .unwrap_or_else(|| c.sql_type_text.clone());
        let mut l = format!("  {} {ty}", quote_ident(&c.name));
        let not_null = !c.nullable || c.primary_key;
        if c.generated {
            let expr = c.default_value.as_deref().unwrap_or("");
            let kind = if c.virtual_ { "VIRTUAL" } else { "STORED" };
            l.push_str(&format!(" GENERATED ALWAYS AS {expr} {kind}"));
            if not_null {
                l.push_str(" NOT NULL");
            }
        } else {
            if not_null {
                l.push_str(" NOT NULL");
            }
            if let Some(d) = c.default_value.as_deref().filter(|d| !d.is_empty()) {
                l.push_str(&format!(" DEFAULT {d}"));
            }
        }
        if c.auto_increment {
            l.push_str(" AUTO_INCREMENT");
        }
        if let Some(cm) = c.comment.as_deref().filter(|d| !d.is_empty()) {
            l.push_str(&format!(" COMMENT {}", quote_string(cm)));
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
    out.push_str(" DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_bin");
    if let Some(c) = s.comment.as_deref().filter(|c| !c.is_empty()) {
        out.push_str(&format!(" COMMENT={}", quote_string(c)));
    }
    Ok(out)
}
