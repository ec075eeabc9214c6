//! Dolt's most-queried system tables, with the columns and rows Dolt 2.3.1 gives them:
//!
//! * `dolt_log`: the commits reachable from the state's commit, in `dolt log` order, with
//!   `parents`, `refs` (`HEAD -> ` before the refs of the session's head commit; branches,
//!   then remote branches, then `tag: x`) and the author's fields.
//! * `dolt_branches`: every branch, its head commit's fields, its upstream (from
//!   `repo_state.json`) and whether its working set differs from its head (`dirty`).
//! * `dolt_diff_<table>`: the table's changes over history, as Dolt walks it: commits depth
//!   first from the state's commit (a merge's last parent first), each diffed against the
//!   commit walked just before that lists it as a parent, skipping commits that left the
//!   table as it was; a working state adds its changes against the head as `WORKING`. Every
//!   row has the state's columns, `to_`/`from_` prefixed, matched by name.
//!
//! Each is computed when a query scans it.

use std::any::Any;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::{
    new_null_array, Array, ArrayRef, BooleanArray, RecordBatch, StringArray,
    TimestampMicrosecondArray, UInt64Array,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use datafusion::catalog::Session;
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::memory::MemorySourceConfig;
use datafusion::datasource::{TableProvider, TableType};
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::ExecutionPlan;
use prollystore_arrow::dolt_types::SQL_TYPE_METADATA;
use prollystore_arrow::{arrow_field, DiffBatches, DEFAULT_BATCH_ROWS};
use prollystore_dolt::db::{parse_at, RootValue, State};
use prollystore_dolt::parts::Origin;
use prollystore_dolt::table_diff::DiffSide;
use prollystore_dolt::{Commit, Database};
use prollystore_format::Address;

use crate::error::{arrow_error, dolt_error};

const LOG: &str = "dolt_log";
const BRANCHES: &str = "dolt_branches";
const DIFF_PREFIX: &str = "dolt_diff_";

/// The system tables of a state whose user tables are `user`.
pub(crate) fn names(user: &[String]) -> Vec<String> {
    let mut names = vec![LOG.to_string(), BRANCHES.to_string()];
    names.extend(user.iter().map(|t| format!("{DIFF_PREFIX}{t}")));
    names
}

/// Whether `name` is a system table (`user_table` finds a user table's stored name).
pub(crate) fn exists(name: &str, user_table: impl Fn(&str) -> Option<String>) -> bool {
    let lower = name.to_ascii_lowercase();
    lower == LOG
        || lower == BRANCHES
        || lower
            .strip_prefix(DIFF_PREFIX)
            .is_some_and(|t| user_table(&name[name.len() - t.len()..]).is_some())
}

/// System table `name` of the state `origin` resolved to, if it is one.
pub(crate) fn table(
    db: &Arc<Database>,
    origin: &Origin,
    root: &RootValue,
    name: &str,
    user_table: impl Fn(&str) -> Option<String>,
) -> Result<Option<Arc<dyn TableProvider>>> {
    let lower = name.to_ascii_lowercase();
    let head = head_commit(db, origin)?;
    let system: Computed = if lower == LOG {
        Computed::new(log_schema(), {
            let db = db.clone();
            move || log_batch(&db, head)
        })
    } else if lower == BRANCHES {
        Computed::new(branches_schema(), {
            let db = db.clone();
            move || branches_batch(&db)
        })
    } else if let Some(stored) = lower
        .strip_prefix(DIFF_PREFIX)
        .and_then(|t| user_table(&name[name.len() - t.len()..]))
    {
        let table = db.table(root, &stored).map_err(dolt_error)?;
        let schema = diff_schema(&table);
        let working = !matches!(parse_at(&origin.at), (s, State::Committed) if !matches!(s, "WORKING" | "STAGED"));
        let (db, root) = (db.clone(), root.clone());
        Computed::new(schema.clone(), move || {
            diff_history(&db, head, working.then_some(&root), &stored, &schema)
        })
    } else {
        return Ok(None);
    };
    Ok(Some(Arc::new(system)))
}

/// The commit a state's history starts from: its commit, or for a working or staged state
/// its branch's head.
fn head_commit(db: &Database, origin: &Origin) -> Result<Address> {
    if let Some(c) = origin.commit {
        return Ok(c);
    }
    let (spec, _) = parse_at(&origin.at);
    let spec = if matches!(spec, "WORKING" | "STAGED") {
        "HEAD"
    } else {
        spec
    };
    db.resolve_revision(spec).map_err(dolt_error)
}

/// A table computed when scanned.
struct Computed {
    schema: SchemaRef,
    make: Box<dyn Fn() -> Result<RecordBatch> + Send + Sync>,
}

impl std::fmt::Debug for Computed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Computed")
            .field("schema", &self.schema)
            .finish()
    }
}

impl Computed {
    fn new(
        schema: SchemaRef,
        make: impl Fn() -> Result<RecordBatch> + Send + Sync + 'static,
    ) -> Computed {
        Computed {
            schema,
            make: Box::new(make),
        }
    }
}

#[async_trait]
impl TableProvider for Computed {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::View
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let batch = (self.make)()?;
        Ok(MemorySourceConfig::try_new_exec(
            &[vec![batch]],
            self.schema.clone(),
            projection.cloned(),
        )?)
    }
}

fn text(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::Utf8, nullable)
}

/// A DATETIME(3) column, as Dolt's commit dates are.
fn date3(name: &str) -> Field {
    Field::new(
        name,
        DataType::Timestamp(TimeUnit::Microsecond, None),
        false,
    )
    .with_metadata(HashMap::from([(
        SQL_TYPE_METADATA.to_string(),
        "datetime(3)".to_string(),
    )]))
}

fn log_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        text("commit_hash", false),
        text("committer", false),
        text("email", false),
        date3("date"),
        text("message", false),
        Field::new("commit_order", DataType::UInt64, false),
        text("parents", true),
        text("refs", false),
        text("signature", true),
        text("author", false),
        text("author_email", false),
        date3("author_date"),
    ]))
}

/// Commit fields both tables show: committer and author names, emails and dates.
struct People<'c> {
    committer: &'c str,
    committer_email: &'c str,
    date: i64,
    author_date: i64,
}

fn people(c: &Commit) -> People<'_> {
    People {
        committer: c.committer_name.as_deref().unwrap_or(&c.name),
        committer_email: c.committer_email.as_deref().unwrap_or(&c.email),
        date: i64::try_from(c.timestamp_millis).unwrap_or(i64::MAX / 1000) * 1000,
        author_date: c.user_timestamp_millis.saturating_mul(1000),
    }
}

/// Each commit's refs as `dolt_log` shows them: branches, remote branches, then tags.
fn refs(db: &Database) -> Result<HashMap<Address, Vec<String>>> {
    let mut refs: HashMap<Address, Vec<String>> = HashMap::new();
    let datasets = db.datasets().map_err(dolt_error)?;
    for prefix in ["refs/heads/", "refs/remotes/"] {
        for (name, address) in &datasets {
            if let Some(short) = name.strip_prefix(prefix) {
                refs.entry(*address).or_default().push(short.to_string());
            }
        }
    }
    for tag in db.tags().map_err(dolt_error)? {
        refs.entry(tag.commit)
            .or_default()
            .push(format!("tag: {}", tag.name));
    }
    Ok(refs)
}

fn log_batch(db: &Database, head: Address) -> Result<RecordBatch> {
    let refs = refs(db)?;
    let session_head = db.resolve_revision("HEAD").ok();
    let commits = db
        .log(head)
        .collect::<prollystore_dolt::Result<Vec<Commit>>>()
        .map_err(dolt_error)?;
    let col = |f: &dyn Fn(&Commit) -> String| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(commits.iter().map(f)))
    };
    let dates = |f: &dyn Fn(&People) -> i64| -> ArrayRef {
        Arc::new(TimestampMicrosecondArray::from_iter_values(
            commits.iter().map(|c| f(&people(c))),
        ))
    };
    let columns: Vec<ArrayRef> = vec![
        col(&|c| c.address.to_string()),
        col(&|c| people(c).committer.to_string()),
        col(&|c| people(c).committer_email.to_string()),
        dates(&|p| p.date),
        col(&|c| c.message.clone()),
        Arc::new(UInt64Array::from_iter_values(
            commits.iter().map(|c| c.height),
        )),
        col(&|c| {
            c.parents
                .iter()
                .map(Address::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        }),
        col(&|c| match refs.get(&c.address) {
            Some(r) if Some(c.address) == session_head => format!("HEAD -> {}", r.join(", ")),
            Some(r) => r.join(", "),
            None => String::new(),
        }),
        col(&|_| String::new()),
        col(&|c| c.name.clone()),
        col(&|c| c.email.clone()),
        dates(&|p| p.author_date),
    ];
    Ok(RecordBatch::try_new(log_schema(), columns)?)
}

fn branches_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        text("name", false),
        text("hash", false),
        text("latest_committer", false),
        text("latest_committer_email", false),
        date3("latest_commit_date"),
        text("latest_commit_message", false),
        text("remote", false),
        text("branch", false),
        Field::new("dirty", DataType::Boolean, true),
        text("latest_author", false),
        text("latest_author_email", false),
        date3("latest_author_date"),
    ]))
}

/// One branch as `dolt_branches` shows it.
struct BranchRow {
    name: String,
    commit: Commit,
    dirty: bool,
    upstream: Option<prollystore_dolt::write::repo_state::BranchConfig>,
}

fn branches_batch(db: &Database) -> Result<RecordBatch> {
    let repo = prollystore_dolt::write::repo_state::RepoState::read(db.dot_dolt()).ok();
    let mut rows = Vec::new();
    for (name, address) in db.branches().map_err(dolt_error)? {
        let commit = db.commit(address).map_err(dolt_error)?;
        // Dirty: the working set's working root differs from its staged root, or from the
        // head commit's root (no working set: never dirty).
        let dirty = match db.working_set(&name).map_err(dolt_error)? {
            None => false,
            Some(ws) => {
                let staged = ws.staged_root.unwrap_or(ws.working_root);
                ws.working_root != staged || commit.root != ws.working_root
            }
        };
        let upstream = repo.as_ref().and_then(|r| r.branches.get(&name)).cloned();
        rows.push(BranchRow {
            name,
            commit,
            dirty,
            upstream,
        });
    }
    let col = |f: &dyn Fn(&BranchRow) -> String| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(rows.iter().map(f)))
    };
    let dates = |f: &dyn Fn(&People) -> i64| -> ArrayRef {
        Arc::new(TimestampMicrosecondArray::from_iter_values(
            rows.iter().map(|r| f(&people(&r.commit))),
        ))
    };
    let columns: Vec<ArrayRef> = vec![
        col(&|r| r.name.clone()),
        col(&|r| r.commit.address.to_string()),
        col(&|r| people(&r.commit).committer.to_string()),
        col(&|r| people(&r.commit).committer_email.to_string()),
        dates(&|p| p.date),
        col(&|r| r.commit.message.clone()),
        col(&|r| {
            r.upstream
                .as_ref()
                .map_or(String::new(), |u| u.remote.clone())
        }),
        col(&|r| {
            r.upstream.as_ref().map_or(String::new(), |u| {
                let m = u.merge.as_str();
                m.strip_prefix("refs/heads/").unwrap_or(m).to_string()
            })
        }),
        Arc::new(rows.iter().map(|r| Some(r.dirty)).collect::<BooleanArray>()),
        col(&|r| r.commit.name.clone()),
        col(&|r| r.commit.email.clone()),
        dates(&|p| p.author_date),
    ];
    Ok(RecordBatch::try_new(branches_schema(), columns)?)
}

/// `dolt_diff_<table>`'s columns: the state's columns as `to_…`, `to_commit`,
/// `to_commit_date`, the same as `from_…`, then `diff_type`.
fn diff_schema(table: &prollystore_dolt::Table) -> SchemaRef {
    let side = |prefix: &str| -> Vec<Field> {
        let s = &table.schema;
        let mut fields: Vec<Field> = s
            .visible_columns()
            .into_iter()
            .filter_map(|i| s.columns.get(i))
            .map(|c| {
                let f = arrow_field(c);
                let name = format!("{prefix}{}", f.name());
                f.with_name(name).with_nullable(true)
            })
            .collect();
        fields.push(text(&format!("{prefix}commit"), true));
        fields.push(Field::new(
            format!("{prefix}commit_date"),
            DataType::Timestamp(TimeUnit::Microsecond, None),
            true,
        ));
        fields
    };
    let mut fields = side("to_");
    fields.extend(side("from_"));
    fields.push(text("diff_type", false));
    Arc::new(Schema::new(fields))
}

/// One step of the walk: the state a commit is diffed to (its child in walk order).
#[derive(Clone)]
struct Side {
    /// `WORKING` or a commit hash.
    spec: String,
    /// Committer date (`None` for `WORKING`).
    date: Option<i64>,
    /// The table's chunk there (`None`: no such table).
    table: Option<Address>,
    root: RootValue,
}

fn diff_history(
    db: &Arc<Database>,
    head: Address,
    working: Option<&RootValue>,
    name: &str,
    schema: &SchemaRef,
) -> Result<RecordBatch> {
    let table_in = |root: &RootValue| root.tables.iter().find(|(n, _)| n == name).map(|(_, a)| *a);
    let head_commit = db.commit(head).map_err(dolt_error)?;
    let head_root = db.root_value(head_commit.root).map_err(dolt_error)?;
    let start_root = working.cloned().unwrap_or(head_root);
    let mut to_of: HashMap<Address, Side> = HashMap::from([(
        head,
        Side {
            spec: "WORKING".into(),
            date: None,
            table: table_in(&start_root),
            root: start_root,
        },
    )]);
    let mut pairs: Vec<(Side, Side)> = Vec::new();
    // Depth first, as Dolt's commit iterator walks: each commit's unseen parents pushed in
    // order, the last pushed walked next.
    let mut added: HashSet<Address> = HashSet::from([head]);
    let mut stack = vec![head];
    while let Some(at) = stack.pop() {
        let commit = db.commit(at).map_err(dolt_error)?;
        let root = db.root_value(commit.root).map_err(dolt_error)?;
        let here = Side {
            spec: at.to_string(),
            date: Some(people(&commit).date),
            table: table_in(&root),
            root,
        };
        if let Some(to) = to_of.get(&at) {
            if to.table != here.table {
                pairs.push((to.clone(), here.clone()));
            }
        }
        for p in &commit.parents {
            to_of.insert(*p, here.clone());
            if added.insert(*p) {
                stack.push(*p);
            }
        }
    }
    let mut batches = Vec::new();
    for (to, from) in pairs {
        let side = |s: &Side| -> Result<DiffSide> {
            let table = match table_in(&s.root) {
                Some(_) => Some(db.table(&s.root, name).map_err(dolt_error)?),
                None => None,
            };
            Ok(DiffSide {
                spec: s.spec.clone(),
                table,
                date_micros: s.date.unwrap_or(0),
            })
        };
        let diff =
            DiffBatches::from_sides(db.clone(), side(&from)?, side(&to)?, DEFAULT_BATCH_ROWS)
                .map_err(arrow_error)?;
        for batch in diff {
            let batch = batch?;
            batches.push(conform(&batch, schema, to.date.is_none())?);
        }
    }
    Ok(datafusion::arrow::compute::concat_batches(
        schema, &batches,
    )?)
}

/// `batch` (one diff's columns) with `schema`'s columns, matched by name: cast where a
/// column's type changed since, NULL where it did not exist; `to_commit_date` NULL for
/// `WORKING`.
fn conform(batch: &RecordBatch, schema: &SchemaRef, working: bool) -> Result<RecordBatch> {
    let rows = batch.num_rows();
    let columns = schema
        .fields()
        .iter()
        .map(|f| -> Result<ArrayRef> {
            if working && f.name() == "to_commit_date" {
                return Ok(new_null_array(f.data_type(), rows));
            }
            match batch.column_by_name(f.name()) {
                Some(a) if a.data_type() == f.data_type() => Ok(a.clone()),
                Some(a) => Ok(cast(a, f.data_type())?),
                None => Ok(new_null_array(f.data_type(), rows)),
            }
        })
        .collect::<Result<Vec<_>>>()?;
    RecordBatch::try_new(schema.clone(), columns).map_err(DataFusionError::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_names_follow_user_tables() {
        let n = names(&["t".into(), "U".into()]);
        assert_eq!(
            n,
            ["dolt_log", "dolt_branches", "dolt_diff_t", "dolt_diff_U"]
        );
        let user = |t: &str| (t.eq_ignore_ascii_case("u")).then(|| "U".to_string());
        assert!(exists("dolt_diff_u", user));
        assert!(exists("DOLT_LOG", user));
        assert!(!exists("dolt_diff_v", user));
    }
}
