//! Three-way merge of a table schema as `dolt merge` does it (Dolt's `SchemaMerge`): columns
//! matched by tag (then by name), a column changed on one side only taking that side's
//! definition, columns added on either side kept (ours first, in our order, then theirs'),
//! columns dropped on either side dropped; indexes and CHECK constraints merged by the same
//! rule; the table collation from the side that changed it. Conflicting changes (both sides
//! changed one column differently, a column changed here and dropped there, a new NOT NULL
//! column without a default, two different indexes or checks under one name…) come back as
//! messages naming the columns.
//!
//! The merged schema is written as Dolt writes the schema it builds: from the merged columns
//! alone, so the table comment and a non-default target row size are not carried (Dolt drops
//! them too). When Dolt sees the three schemas as equal (it ignores comments, among other
//! things) it keeps ours as it is.
//!
//! Of Dolt's type-compatibility rules for a column type changed on one side, these are
//! reproduced: VARCHAR widening (merged, rows as they are) and narrowing (a conflict), a
//! VARCHAR collation change, ENUM members appended, and a string or binary type moved between
//! inline and out-of-line storage (VARCHAR/CHAR ↔ TEXT, VARBINARY ↔ BLOB: merged with the rows
//! rewritten when the character set stays and the new type holds as many bytes, else a
//! conflict); any other change within the string, binary, ENUM and SET families is an error
//! naming the column, and a change outside them is a conflict, as Dolt has it.

use std::collections::{BTreeMap, HashSet};

use prollystore_format::message::objects::{
    CheckFields, ColumnFields, IndexFields, TableSchemaFields,
};

use crate::error::{encode, DoltError, Result};
use crate::schema::SqlType;
use prollystore_format::collation::Collation;

/// Dolt's default target row size, which a merged schema always has.
const DEFAULT_TARGET_ROW_SIZE: u16 = 2048;

/// Which sides' rows must be rewritten into the merged schema, and whether a side's schema
/// change makes every one of its rows count as changed (Dolt's `MergeInfo` and
/// `ThreeWayDiffInfo`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(in crate::write) struct RowRewrites {
    /// Our rows need rewriting (a column added or dropped on the merged branch, …).
    pub left_rewrite: bool,
    /// Their rows need rewriting.
    pub right_rewrite: bool,
    /// Our schema change changes how our rows read: every row counts as changed on our side.
    pub left_change: bool,
    /// The same for their side.
    pub right_change: bool,
    /// An `ALTER TABLE` (ours and theirs are the same table): generated columns' stored
    /// values are carried as Dolt's rewrite projects them, new STORED ones computed. (A merge
    /// of two sides' rows with generated columns is not done yet.)
    pub alter: bool,
}

/// What merging three schemas gave.
#[derive(Debug)]
pub(in crate::write) enum SchemaMerge {
    /// The three are equal as Dolt compares schemas: ours is kept as it is.
    Ours,
    /// A new schema.
    Merged {
        /// The merged schema message.
        chunk: Vec<u8>,
        /// How rows are carried over.
        rewrites: RowRewrites,
        /// Names of the merged indexes our side already has with the same definition (their
        /// trees are edited; every other index is rebuilt from the merged rows).
        kept_indexes: HashSet<String>,
    },
    /// Schema conflicts, one message each (Dolt stops the merge on them).
    Conflicts(Vec<String>),
}

/// Dolt's `Column.Default` (a generated column keeps its expression in the same field).
fn default_of<'a>(c: &ColumnFields<'a>) -> &'a str {
    if c.generated {
        ""
    } else {
        c.default_value
    }
}

/// Dolt's `Column.EqualsWithoutTag`: name, key membership, type, default and NOT NULL
/// (comments, AUTO_INCREMENT and the rest do not count).
fn same_definition(a: &ColumnFields<'_>, b: &ColumnFields<'_>) -> bool {
    a.name == b.name
        && a.primary_key == b.primary_key
        && same_type(a, b)
        && default_of(a) == default_of(b)
        && a.nullable == b.nullable
}

/// Dolt's `Column.Equals`.
fn same_column(a: &ColumnFields<'_>, b: &ColumnFields<'_>) -> bool {
    a.tag == b.tag && same_definition(a, b)
}

fn same_type(a: &ColumnFields<'_>, b: &ColumnFields<'_>) -> bool {
    a.sql_type == b.sql_type && a.encoding == b.encoding
}

/// A column by tag, else by name ignoring case (Dolt's `mapColumns` lookups).
fn find_column<'s, 'a>(
    cols: &'s [ColumnFields<'a>],
    c: &ColumnFields<'_>,
) -> Option<&'s ColumnFields<'a>> {
    cols.iter()
        .find(|x| x.tag == c.tag)
        .or_else(|| cols.iter().find(|x| x.name.eq_ignore_ascii_case(c.name)))
}

/// A secondary index with its indexed columns' tags.
#[derive(Clone)]
struct Ix<'a> {
    fields: IndexFields<'a>,
    tags: Vec<u64>,
}

fn indexes_of<'a>(s: &TableSchemaFields<'a>) -> Vec<Ix<'a>> {
    s.secondary_indexes
        .iter()
        .map(|f| Ix {
            fields: f.clone(),
            tags: f
                .index_columns
                .iter()
                .map(|&p| s.columns.get(usize::from(p)).map_or(u64::MAX, |c| c.tag))
                .collect(),
        })
        .collect()
}

/// Dolt's `Index.Equals`: the indexed columns' tags, uniqueness, spatial, prefix lengths,
/// comment, predicate and name.
fn same_index(a: &Ix<'_>, b: &Ix<'_>) -> bool {
    a.tags == b.tags
        && a.fields.unique_key == b.fields.unique_key
        && a.fields.spatial_key == b.fields.spatial_key
        && a.fields.prefix_lengths == b.fields.prefix_lengths
        && a.fields.comment == b.fields.comment
        && a.fields.predicate == b.fields.predicate
        && a.fields.name == b.fields.name
}

/// The primary-key columns in key order.
fn key_columns<'s, 'a>(s: &'s TableSchemaFields<'a>) -> Vec<&'s ColumnFields<'a>> {
    s.clustered_index
        .key_columns
        .iter()
        .filter_map(|&p| s.columns.get(usize::from(p)))
        .collect()
}

fn same_check(a: &CheckFields<'_>, b: &CheckFields<'_>) -> bool {
    a.name == b.name
        && a.expression == b.expression
        && a.enforced == b.enforced
        && a.is_not_valid == b.is_not_valid
}

/// Dolt's `SchemasAreEqual`.
fn schemas_equal(a: &TableSchemaFields<'_>, b: &TableSchemaFields<'_>) -> bool {
    let cols = a.columns.len() == b.columns.len()
        && a.columns
            .iter()
            .zip(&b.columns)
            .all(|(x, y)| same_definition(x, y));
    let (ka, kb) = (key_columns(a), key_columns(b));
    let keys = ka.len() == kb.len() && ka.iter().zip(&kb).all(|(x, y)| same_definition(x, y));
    let checks = a.checks.len() == b.checks.len()
        && a.checks
            .iter()
            .zip(&b.checks)
            .all(|(x, y)| same_check(x, y));
    cols && keys
        && checks
        && a.keyless == b.keyless
        && a.collation == b.collation
        && a.target_row_size == b.target_row_size
        && index_sets_equal(&indexes_of(a), &indexes_of(b))
}

/// Dolt's `IndexCollection.Equals`: by name, else by indexed columns.
fn index_sets_equal(a: &[Ix<'_>], b: &[Ix<'_>]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let by_name = a.iter().all(|x| {
        b.iter()
            .find(|y| y.fields.name.eq_ignore_ascii_case(x.fields.name))
            .is_some_and(|y| same_index(x, y))
    });
    by_name
        || a.iter().all(|x| {
            b.iter()
                .find(|y| y.tags == x.tags)
                .is_some_and(|y| same_index(x, y))
        })
}

/// One column across the three schemas.
struct Mapping<'s, 'a> {
    anc: Option<&'s ColumnFields<'a>>,
    ours: Option<&'s ColumnFields<'a>>,
    theirs: Option<&'s ColumnFields<'a>>,
}

/// Dolt's `mapColumns`: our columns in order, then their columns not matched.
fn map_columns<'s, 'a>(
    ours: &'s [ColumnFields<'a>],
    theirs: &'s [ColumnFields<'a>],
    anc: &'s [ColumnFields<'a>],
) -> Vec<Mapping<'s, 'a>> {
    let mut matched: HashSet<u64> = HashSet::new();
    let mut out = Vec::new();
    for o in ours {
        let t = find_column(theirs, o);
        if let Some(t) = t {
            matched.insert(t.tag);
        }
        out.push(Mapping {
            anc: find_column(anc, o),
            ours: Some(o),
            theirs: t,
        });
    }
    for t in theirs {
        if !matched.contains(&t.tag) {
            out.push(Mapping {
                anc: find_column(anc, t),
                ours: None,
                theirs: Some(t),
            });
        }
    }
    out
}

/// A column's definition as a conflict message shows it.
fn describe(c: &ColumnFields<'_>) -> String {
    let mut s = c.sql_type.to_string();
    if !c.nullable {
        s.push_str(" NOT NULL");
    }
    let d = default_of(c);
    if !d.is_empty() {
        s.push_str(" DEFAULT ");
        s.push_str(d);
    }
    s
}

/// Dolt's `checkSchemaConflicts` and `checkUnmergeableNewColumns`, as messages.
fn column_conflicts(table: &str, mappings: &[Mapping<'_, '_>]) -> Vec<String> {
    let mut out = Vec::new();
    for m in mappings {
        match (m.anc, m.ours, m.theirs) {
            (_, Some(o), Some(t)) if same_column(o, t) => {}
            (Some(a), Some(o), None) if !same_definition(a, o) => out.push(format!(
                "table {table:?}: column {:?} was changed here and dropped on the merged branch",
                o.name
            )),
            (Some(a), Some(o), Some(t)) if !same_column(a, o) && !same_column(a, t) => {
                out.push(format!(
                    "table {table:?}: column {:?} was changed differently on both sides \
                     (here {:?}: {}; merged branch {:?}: {})",
                    o.name,
                    o.name,
                    describe(o),
                    t.name,
                    describe(t)
                ))
            }
            (None, Some(o), Some(t)) => out.push(format!(
                "table {table:?}: column {:?} was added on both sides with different \
                 definitions (here: {}; merged branch: {})",
                o.name,
                describe(o),
                describe(t)
            )),
            (Some(a), None, Some(t)) if !same_definition(a, t) => out.push(format!(
                "table {table:?}: column {:?} was dropped here and changed on the merged branch",
                t.name
            )),
            _ => {}
        }
    }
    for m in mappings {
        if m.anc.is_none() && m.ours.is_some() != m.theirs.is_some() {
            let c = m.ours.or(m.theirs).expect("one side has the column");
            if !c.nullable && default_of(c).is_empty() {
                out.push(format!(
                    "table {table:?}: new column {:?} is NOT NULL and has no default, so \
                     existing rows cannot take it (Dolt refuses this merge too)",
                    c.name
                ));
            }
        }
    }
    out
}

/// Dolt's verdict on a column type changed on one side only, for the changes decided here:
/// `Some(true)` merges (a VARCHAR widened under the same collation, rows as they are; a
/// string moved to or from out-of-line storage, rows rewritten),
/// `Some(false)` is a schema conflict (a VARCHAR narrowed; any change outside the string,
/// binary, ENUM and SET families, which Dolt never merges), `None` is not known here.
fn type_change_merges(from: &ColumnFields<'_>, to: &ColumnFields<'_>) -> Option<bool> {
    if same_type(from, to) {
        return Some(true);
    }
    let family = |text: &str| match SqlType::parse(text) {
        SqlType::Text { .. } => 1,
        SqlType::Binary { .. } => 2,
        SqlType::Enum { .. } => 3,
        SqlType::Set { .. } => 4,
        _ => 0,
    };
    let (ff, tf) = (family(from.sql_type), family(to.sql_type));
    if ff == 0 || ff != tf {
        return Some(false);
    }
    if from.encoding != to.encoding {
        // Inline (CHAR/VARCHAR, BINARY/VARBINARY) to out-of-line (TEXT, BLOB) storage or back:
        // Dolt's string type handler merges it when the character set stays and the new type
        // holds at least as many bytes (its `MaxByteLength`); the rows are rewritten into the
        // other storage (see `merge_columns`).
        return string_bytes(from.sql_type)
            .zip(string_bytes(to.sql_type))
            .map(|((fc, fb), (tc, tb))| fc == tc && tb >= fb);
    }
    // ENUM members appended at the end: every stored member number still names the same
    // member, so rows merge as they are (Dolt merges this without a rewrite).
    if let (SqlType::Enum { members: f, .. }, SqlType::Enum { members: t, .. }) =
        (SqlType::parse(from.sql_type), SqlType::parse(to.sql_type))
    {
        return (t.len() > f.len() && t.starts_with(&f)).then_some(true);
    }
    let varchar = |text: &str| {
        let t = SqlType::parse(text);
        let n = t.length().filter(|_| t.name() == Some("varchar"))?;
        Some((n, t.collation().map(str::to_string)))
    };
    match (varchar(from.sql_type), varchar(to.sql_type)) {
        (Some((f, fc)), Some((t, tc))) if fc == tc => Some(t >= f),
        // A collation changed (the length kept): the stored strings stay as they are; an
        // index over the column is rebuilt in the new order (see `kept_indexes`).
        (Some((f, _)), Some((t, _))) if f == t => Some(true),
        _ => None,
    }
}

/// A string or binary type's character set and the most bytes a value holds (GMS's
/// `MaxByteLength`: characters times the character set's widest character for CHAR and
/// VARCHAR, the type's byte limit for BINARY, VARBINARY, TEXT and BLOB types); `None` for other
/// types and character sets not known here.
fn string_bytes(text: &str) -> Option<(&'static str, u64)> {
    const LONG: u64 = 4_294_967_295;
    let ty = SqlType::parse(text);
    match &ty {
        SqlType::Text { collation, .. } => {
            let charset = match collation {
                Some(name) => Collation::from_name(name).ok()?.charset(),
                None => "utf8mb4",
            };
            let per_char = match charset {
                "utf8mb4" => 4,
                "utf8mb3" => 3,
                "latin1" | "ascii" => 1,
                _ => return None,
            };
            let (max, in_bytes) = ty.text_limit()?;
            let max = max.unwrap_or(LONG);
            Some((charset, if in_bytes { max } else { max * per_char }))
        }
        SqlType::Binary { .. } => Some(("binary", ty.byte_limit().unwrap_or(LONG))),
        _ => None,
    }
}

/// Dolt's `mergeColumns`: the merged columns and how rows move, or the columns whose type
/// change does not merge.
fn merge_columns<'s, 'a>(
    table: &str,
    mappings: &[Mapping<'s, 'a>],
) -> Result<(Vec<&'s ColumnFields<'a>>, RowRewrites, Vec<String>)> {
    let mut r = RowRewrites::default();
    let mut merged = Vec::new();
    let mut conflicts = Vec::new();
    let mut type_change = |from: &ColumnFields<'_>, to: &ColumnFields<'_>| -> Result<bool> {
        match type_change_merges(from, to) {
            Some(true) => Ok(true),
            Some(false) => {
                conflicts.push(format!(
                    "table {table:?}: column {:?} changed type from {} to {} on one side, \
                     which does not merge",
                    to.name, from.sql_type, to.sql_type
                ));
                Ok(false)
            }
            None => Err(DoltError::Unsupported(format!(
                "merging table {table:?}: column {:?} changed type from {} to {}; merging \
                 this column type change is not done here",
                to.name, from.sql_type, to.sql_type
            ))),
        }
    };
    for m in mappings {
        match (m.anc, m.ours, m.theirs) {
            (None, None, Some(t)) => {
                r.left_rewrite = true;
                r.right_change = true;
                merged.push(t);
            }
            (None, Some(o), None) => {
                r.right_rewrite = true;
                r.left_change = true;
                merged.push(o);
            }
            (Some(_), None, Some(_)) => {
                r.right_rewrite = true;
                r.left_change = true;
            }
            (Some(_), Some(_), None) => {
                r.left_rewrite = true;
                r.right_change = true;
            }
            (_, None, None) => {
                r.left_change = true;
                r.right_change = true;
            }
            (Some(a), Some(o), Some(t)) => {
                let (oc, tc) = (!same_column(a, o), !same_column(a, t));
                if oc && tc {
                    r.left_change = true;
                    r.right_change = true;
                    if same_column(o, t) {
                        merged.push(t);
                    }
                } else if tc {
                    if type_change(o, t)? {
                        merged.push(t);
                    }
                    // A string moved between inline and out-of-line storage (Dolt's
                    // `RewriteRows`): our rows are rewritten, and every row of theirs reads
                    // differently from the ancestor's.
                    if o.encoding != t.encoding {
                        r.left_rewrite = true;
                        r.right_change = true;
                    }
                } else if oc {
                    r.right_rewrite = true;
                    if type_change(t, o)? {
                        merged.push(o);
                    }
                    if o.encoding != t.encoding {
                        r.left_change = true;
                    }
                } else {
                    merged.push(o);
                }
            }
            (None, Some(o), Some(t)) => {
                r.left_change = true;
                r.right_change = true;
                if same_column(o, t) {
                    merged.push(o);
                }
            }
        }
    }
    Ok((merged, r, conflicts))
}

/// Dolt's `checkForColumnConflicts`: two merged columns with one name (ignoring case) or tag.
fn duplicate_columns(table: &str, merged: &[&ColumnFields<'_>]) -> Vec<String> {
    let mut out = Vec::new();
    let (mut names, mut tags) = (HashSet::new(), HashSet::new());
    for c in merged {
        if !names.insert(c.name.to_lowercase()) {
            out.push(format!(
                "table {table:?}: two merged columns are named {:?}",
                c.name
            ));
        }
        if !tags.insert(c.tag) {
            out.push(format!(
                "table {table:?}: column {:?} has the tag of another merged column",
                c.name
            ));
        }
    }
    out
}

/// Dolt's `mergeIndexes`: the merged indexes (by lower-case name), or conflict messages.
fn merge_indexes<'a>(
    table: &str,
    tags: &HashSet<u64>,
    ours: &[Ix<'a>],
    theirs: &[Ix<'a>],
    anc: &[Ix<'a>],
) -> (BTreeMap<String, Ix<'a>>, Vec<String>) {
    let mut common: BTreeMap<String, Ix<'a>> = BTreeMap::new();
    let mut conflicts = Vec::new();
    let covered = |ix: &Ix<'_>| ix.tags.iter().all(|t| tags.contains(t));
    let with_tags = |set: &'_ [Ix<'a>], t: &[u64]| -> Vec<Ix<'a>> {
        set.iter().filter(|x| x.tags == t).cloned().collect()
    };
    let clash =
        |a: &str, b: &str| format!("table {table:?}: indexes {a:?} and {b:?} cannot be merged");
    for o in ours {
        if !covered(o) {
            continue;
        }
        let t = with_tags(theirs, &o.tags);
        let t = match t.len() {
            0 => continue,
            1 => t[0].clone(),
            _ => {
                conflicts.push(format!(
                    "table {table:?}: several indexes cover the columns of index {:?}",
                    o.fields.name
                ));
                break;
            }
        };
        if with_tags(ours, &o.tags).len() > 1 {
            conflicts.push(format!(
                "table {table:?}: several indexes cover the columns of index {:?}",
                o.fields.name
            ));
            break;
        }
        if same_index(o, &t) {
            common.insert(o.fields.name.to_lowercase(), o.clone());
            continue;
        }
        let Some(a) = anc.iter().find(|x| x.tags == o.tags) else {
            conflicts.push(clash(o.fields.name, t.fields.name));
            continue;
        };
        let pick = if same_index(a, &t) {
            o.clone()
        } else if same_index(a, o) {
            t
        } else {
            conflicts.push(clash(o.fields.name, t.fields.name));
            continue;
        };
        match common.entry(pick.fields.name.to_lowercase()) {
            std::collections::btree_map::Entry::Occupied(_) => {
                conflicts.push(clash(o.fields.name, pick.fields.name))
            }
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(pick);
            }
        }
    }
    let new_on = |side: &[Ix<'a>]| -> Vec<Ix<'a>> {
        side.iter()
            .filter(|x| covered(x) && !anc.iter().any(|a| a.tags == x.tags))
            .cloned()
            .collect()
    };
    let (ours_new, theirs_new) = (new_on(ours), new_on(theirs));
    for o in &ours_new {
        if let Some(t) = theirs_new
            .iter()
            .find(|t| t.fields.name.eq_ignore_ascii_case(o.fields.name))
        {
            if !same_index(o, t) {
                conflicts.push(clash(o.fields.name, t.fields.name));
            }
        }
    }
    for ix in ours_new.into_iter().chain(theirs_new) {
        common.insert(ix.fields.name.to_lowercase(), ix);
    }
    (common, conflicts)
}

/// The column names a CHECK expression refers to (Dolt stores check expressions with quoted
/// identifiers, so these are the back-quoted names), lower-cased.
fn check_columns(expression: &str) -> Vec<String> {
    expression
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_lowercase)
        .collect()
}

/// Dolt's `mergeChecks`, followed by its check that every merged check's columns remain.
fn merge_checks<'a>(
    table: &str,
    ours: &[CheckFields<'a>],
    theirs: &[CheckFields<'a>],
    anc: &[CheckFields<'a>],
    columns: &HashSet<String>,
) -> (Vec<CheckFields<'a>>, Vec<String>) {
    let mut conflicts = Vec::new();
    let named = |set: &'_ [CheckFields<'a>], n: &str| set.iter().find(|c| c.name == n).cloned();
    let mut common = Vec::new();
    for o in ours {
        let Some(t) = named(theirs, o.name) else {
            continue;
        };
        if same_check(o, &t) {
            common.push(o.clone());
            continue;
        }
        match named(anc, o.name) {
            Some(a) if same_check(&a, &t) => common.push(o.clone()),
            Some(a) if same_check(&a, o) => common.push(t),
            _ => conflicts.push(format!(
                "table {table:?}: check {:?} differs on the two sides",
                o.name
            )),
        }
    }
    let minus = |l: &'_ [CheckFields<'a>], r: &[CheckFields<'a>]| -> Vec<CheckFields<'a>> {
        l.iter()
            .filter(|c| !r.iter().any(|x| x.name == c.name))
            .cloned()
            .collect()
    };
    let (ours_new, theirs_new) = (minus(ours, anc), minus(theirs, anc));
    for o in &ours_new {
        if let Some(t) = theirs_new.iter().find(|t| t.name == o.name) {
            if !same_check(o, t) {
                conflicts.push(format!(
                    "table {table:?}: check {:?} was added on both sides differently",
                    o.name
                ));
            }
        }
    }
    if !conflicts.is_empty() {
        return (Vec::new(), conflicts);
    }
    for o in &ours_new {
        for col in check_columns(o.expression) {
            let others: Vec<&CheckFields<'_>> = theirs_new
                .iter()
                .filter(|t| check_columns(t.expression).contains(&col))
                .collect();
            if !others.is_empty() && !others.iter().any(|t| same_check(t, o)) {
                for t in others {
                    conflicts.push(format!(
                        "table {table:?}: checks {:?} and {:?} both refer to column {col:?}",
                        o.name, t.name
                    ));
                }
                break;
            }
        }
    }
    let modified = |side: &'_ [CheckFields<'a>]| -> Vec<CheckFields<'a>> {
        side.iter()
            .filter(|c| named(anc, c.name).is_some_and(|a| !same_check(&a, c)))
            .cloned()
            .collect()
    };
    for (deleted, changed) in [
        (minus(anc, ours), modified(theirs)),
        (minus(anc, theirs), modified(ours)),
    ] {
        for c in changed {
            if deleted.iter().any(|d| d.name == c.name) {
                conflicts.push(format!(
                    "table {table:?}: check {:?} was dropped on one side and changed on the other",
                    c.name
                ));
            }
        }
    }
    if !conflicts.is_empty() {
        return (Vec::new(), conflicts);
    }
    let mut all: Vec<CheckFields<'a>> = Vec::new();
    for c in common.into_iter().chain(ours_new).chain(theirs_new) {
        if !all.iter().any(|x| x.name == c.name) {
            all.push(c);
        }
    }
    for c in &all {
        if let Some(col) = check_columns(c.expression)
            .into_iter()
            .find(|col| !columns.contains(col))
        {
            conflicts.push(format!(
                "table {table:?}: check {:?} refers to column {col:?}, which the merge drops",
                c.name
            ));
        }
    }
    (all, conflicts)
}

fn decode<'a>(chunk: &'a [u8], table: &str) -> Result<TableSchemaFields<'a>> {
    TableSchemaFields::decode(chunk).map_err(|e| {
        crate::error::malformed_from(format!("the schema of {table:?}"), "cannot be decoded", e)
    })
}

/// Merges the schema messages `base`, `ours` and `theirs` of table `table`.
pub(in crate::write) fn merge_schemas(
    table: &str,
    base: &[u8],
    ours: &[u8],
    theirs: &[u8],
) -> Result<SchemaMerge> {
    let (a, o, t) = (
        decode(base, table)?,
        decode(ours, table)?,
        decode(theirs, table)?,
    );
    if schemas_equal(&a, &o) && schemas_equal(&a, &t) {
        return Ok(SchemaMerge::Ours);
    }
    if a.keyless || o.keyless || t.keyless {
        if !(a.keyless && o.keyless && t.keyless) {
            return Err(DoltError::Refused(format!(
                "cannot merge table {table:?}: its primary key differs between the two sides"
            )));
        }
        return Err(DoltError::Unsupported(format!(
            "merging schema changes of keyless table {table:?} is not done here"
        )));
    }
    // Dolt's `ArePrimaryKeySetsDiffable`: the same key columns (tags and types), in order.
    let keys_match = |x: &TableSchemaFields<'_>, y: &TableSchemaFields<'_>| {
        let (kx, ky) = (key_columns(x), key_columns(y));
        kx.len() == ky.len()
            && kx
                .iter()
                .zip(&ky)
                .all(|(c, d)| c.tag == d.tag && c.sql_type == d.sql_type)
    };
    if !keys_match(&o, &t) || !keys_match(&o, &a) {
        return Err(DoltError::Refused(format!(
            "cannot merge table {table:?}: its primary key changed"
        )));
    }
    let mappings = map_columns(&o.columns, &t.columns, &a.columns);
    let conflicts = column_conflicts(table, &mappings);
    if !conflicts.is_empty() {
        return Ok(SchemaMerge::Conflicts(conflicts));
    }
    let (merged, rewrites, conflicts) = merge_columns(table, &mappings)?;
    if !conflicts.is_empty() {
        return Ok(SchemaMerge::Conflicts(conflicts));
    }
    let conflicts = duplicate_columns(table, &merged);
    if !conflicts.is_empty() {
        return Ok(SchemaMerge::Conflicts(conflicts));
    }
    let tags: HashSet<u64> = merged.iter().map(|c| c.tag).collect();
    let (ours_ix, theirs_ix) = (indexes_of(&o), indexes_of(&t));
    let (indexes, conflicts) = merge_indexes(table, &tags, &ours_ix, &theirs_ix, &indexes_of(&a));
    if !conflicts.is_empty() {
        return Ok(SchemaMerge::Conflicts(conflicts));
    }
    let (collation_o, collation_t) = (o.collation != a.collation, t.collation != a.collation);
    if collation_o && collation_t && o.collation != t.collation {
        return Ok(SchemaMerge::Conflicts(vec![format!(
            "table {table:?}: its default collation changed differently on both sides"
        )]));
    }
    let collation = if collation_t {
        t.collation
    } else {
        o.collation
    };
    let names: HashSet<String> = merged.iter().map(|c| c.name.to_lowercase()).collect();
    let (checks, conflicts) = merge_checks(table, &o.checks, &t.checks, &a.checks, &names);
    if !conflicts.is_empty() {
        return Ok(SchemaMerge::Conflicts(conflicts));
    }

    // The schema Dolt builds: merged columns in order, our key order, indexes by name.
    let position = |tag: u64| -> Result<u16> {
        merged
            .iter()
            .position(|c| c.tag == tag)
            .and_then(|p| u16::try_from(p).ok())
            .ok_or_else(|| {
                // The merged indexes cover merged columns only: a bug if reached.
                encode(
                    format!("the merged schema of {table:?}"),
                    format!(
                        "column tag {tag}, used by a key or an index, is not one of its columns"
                    ),
                )
            })
    };
    let key_positions = o.clustered_index.key_columns.clone();
    if key_positions
        .iter()
        .any(|&p| !merged.get(usize::from(p)).is_some_and(|c| c.primary_key))
    {
        return Err(DoltError::Unsupported(format!(
            "merging {table:?}: the columns before the primary key moved"
        )));
    }
    let key_tags: Vec<u64> = key_positions
        .iter()
        .map(|&p| merged[usize::from(p)].tag)
        .collect();
    let columns: Vec<ColumnFields<'_>> = merged
        .iter()
        .enumerate()
        .map(|(i, c)| ColumnFields {
            display_order: i16::try_from(i).unwrap_or(i16::MAX),
            ..(*c).clone()
        })
        .collect();
    let value_columns = (0..columns.len())
        .filter(|&i| !columns[i].primary_key)
        .map(|i| u16::try_from(i).unwrap_or(u16::MAX))
        .collect();
    let mut secondary = Vec::new();
    let mut kept_indexes = HashSet::new();
    let mut sorted: Vec<&Ix<'_>> = indexes.values().collect();
    sorted.sort_by(|x, y| x.fields.name.cmp(y.fields.name));
    for ix in sorted {
        let index_columns = ix
            .tags
            .iter()
            .map(|&t| position(t))
            .collect::<Result<Vec<_>>>()?;
        let mut all = ix.tags.clone();
        all.extend(key_tags.iter().filter(|t| !ix.tags.contains(t)));
        let key_columns = all
            .iter()
            .map(|&t| position(t))
            .collect::<Result<Vec<_>>>()?;
        // An index over a column whose type (a collation) the merge changed orders its keys
        // differently: it is rebuilt, not edited.
        let same_columns = ix.tags.iter().all(|&tag| {
            let ours_col = o.columns.iter().find(|c| c.tag == tag);
            let merged_col = merged.iter().find(|c| c.tag == tag);
            ours_col
                .zip(merged_col)
                .is_some_and(|(x, y)| same_type(x, y))
        });
        if same_columns
            && ours_ix
                .iter()
                .any(|x| x.fields.name.eq_ignore_ascii_case(ix.fields.name) && same_index(x, ix))
        {
            kept_indexes.insert(ix.fields.name.to_string());
        }
        secondary.push(IndexFields {
            index_columns,
            key_columns,
            value_columns: Vec::new(),
            ..ix.fields.clone()
        });
    }
    let fields = TableSchemaFields {
        columns,
        keyless: false,
        clustered_index: IndexFields {
            name: "",
            comment: "",
            index_columns: key_positions.clone(),
            key_columns: key_positions,
            value_columns,
            unique_key: true,
            system_defined: false,
            prefix_lengths: Vec::new(),
            spatial_key: false,
            predicate: "",
        },
        secondary_indexes: secondary,
        checks,
        collation,
        comment: "",
        target_row_size: DEFAULT_TARGET_ROW_SIZE,
    };
    let chunk = fields
        .encode()
        .map_err(|e| encode(format!("the merged schema of {table:?}"), e))?;
    Ok(SchemaMerge::Merged {
        chunk,
        rewrites,
        kept_indexes,
    })
}
