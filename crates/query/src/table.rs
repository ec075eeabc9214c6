//! A Dolt table at one state as a DataFusion table: its visible columns as Arrow types
//! ([`prollystore_arrow::table_schema`]), scanned by key ranges where the filters allow
//! ([`crate::key_ranges`]), only the columns asked for decoded, cut into partitions of nearly
//! equal row counts by the tree's internal counts so every core works.

use std::any::Any;
use std::ops::{Bound, Range};
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::Session;
use datafusion::common::stats::Precision;
use datafusion::common::{Constraint, Constraints, DFSchema, Result, Statistics};
use datafusion::datasource::{TableProvider, TableType};
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::ExecutionPlan;
use prollystore_arrow::dolt_types::{GEOMETRY_BYTES_METADATA, SQL_TYPE_METADATA};
use prollystore_dolt::schema::SqlType;
use prollystore_dolt::{Database, SqlValue, Table};

use crate::error::dolt_error;
use crate::key_ranges::{self, Pushed};
use crate::scan::{DoltScan, Work};

/// Fewest rows a partition is given: below this, one thread reads faster than several
/// start.
const MIN_PARTITION_ROWS: u64 = 100_000;

/// Most whole-key lookups a scan makes one by one (a longer `IN` list is read as ranges of
/// positions).
const MAX_POINTS: usize = 64;

/// A Dolt table at one state, for DataFusion.
///
/// ```
/// use std::sync::Arc;
/// use datafusion::prelude::SessionContext;
/// use prollystore_dolt::{Database, State};
/// use prollystore_query::DoltTable;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = prollystore_test_vectors::require("dolt-db/vecdb");
/// let db = Arc::new(Database::open(&dir)?);
/// let items = db.table_at("main", State::Committed, "items")?;
/// let ctx = SessionContext::new();
/// ctx.register_table("items", Arc::new(DoltTable::new(db, items)))?;
/// let batches = ctx.sql("SELECT count(*) FROM items WHERE id < 3").await?.collect().await?;
/// assert_eq!(batches[0].num_rows(), 1);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct DoltTable {
    db: Arc<Database>,
    table: Table,
    schema: SchemaRef,
    /// The primary key: DataFusion then knows a `GROUP BY` of it decides every column
    /// (`SELECT * FROM t GROUP BY id`, which MySQL and Dolt answer).
    constraints: Constraints,
}

impl DoltTable {
    /// The names of the primary-key columns, in key order (none for a keyless table): the
    /// order Dolt reads the rows in.
    pub(crate) fn key_names(&self) -> Vec<String> {
        let schema = &self.table.schema;
        if schema.keyless {
            return Vec::new();
        }
        schema
            .key_columns
            .iter()
            .filter_map(|&i| schema.columns.get(i).map(|c| c.name.clone()))
            .collect()
    }

    /// `table` of `db`, as [`Database::table_at`] or [`Database::table`] opened it.
    pub fn new(db: Arc<Database>, table: Table) -> DoltTable {
        // Geometry as Dolt stores it and MySQL returns it (SRID, then WKB), so every value
        // keeps its SRID.
        let fields = prollystore_arrow::table_schema(&table.schema)
            .fields()
            .iter()
            .map(|f| {
                let geometry = f
                    .metadata()
                    .get(SQL_TYPE_METADATA)
                    .is_some_and(|t| matches!(SqlType::parse(t), SqlType::Geometry { .. }));
                let mut f = f.as_ref().clone();
                if geometry {
                    let mut meta = f.metadata().clone();
                    meta.insert(GEOMETRY_BYTES_METADATA.into(), "stored".into());
                    f = f.with_metadata(meta);
                }
                f
            })
            .collect::<Vec<_>>();
        let schema = Arc::new(datafusion::arrow::datatypes::Schema::new(fields));
        let mut table = DoltTable {
            db,
            table,
            schema,
            constraints: Constraints::default(),
        };
        let key: Option<Vec<usize>> = table
            .key_names()
            .iter()
            .map(|n| table.schema.index_of(n).ok())
            .collect();
        if let Some(key) = key.filter(|k| !k.is_empty()) {
            table.constraints = Constraints::new_unverified(vec![Constraint::PrimaryKey(key)]);
        }
        table
    }

    /// The Dolt table read.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// How each filter would be used by a scan (for `EXPLAIN`-like checks and tests):
    /// `Exact`, `Inexact` (narrows the scan, checked again) or `Unsupported`.
    pub fn pushdown(&self, filters: &[&Expr]) -> Vec<TableProviderFilterPushDown> {
        key_ranges::plan(&self.table, filters)
            .pushed
            .into_iter()
            .map(|p| match p {
                Pushed::No => TableProviderFilterPushDown::Unsupported,
                Pushed::Inexact => TableProviderFilterPushDown::Inexact,
                Pushed::Exact => TableProviderFilterPushDown::Exact,
            })
            .collect()
    }

    /// The scan's work: positions of the clustered index, or ranges of a secondary index,
    /// and the exact row count when known.
    fn work(
        &self,
        plan: &key_ranges::KeyPlan,
        limit: Option<usize>,
    ) -> Result<(Vec<Work>, Option<u64>)> {
        let limit = limit.map(|l| l as u64);
        // Whole primary keys (`id = 5`, `id IN (…)`): each looked up when the scan runs, with
        // no positions found first (a point query's planning is most of its time).
        if let Some(ranges) = self.whole_keys(plan) {
            let mut points: Vec<prollystore_dolt::KeyRange> = Vec::with_capacity(ranges.len());
            for r in ranges {
                if !points.contains(r) {
                    points.push(r.clone());
                }
            }
            if points.len() > 1 {
                points = self.in_key_order(points)?;
            }
            return Ok((points.into_iter().map(Work::Point).collect(), None));
        }
        let reader = self.table.reader(&self.db).map_err(dolt_error)?;
        if let (Some(index), Some(ranges)) = (&plan.index, &plan.ranges) {
            let work = ranges
                .iter()
                .map(|r| Work::Index {
                    name: index.clone(),
                    range: r.clone(),
                })
                .collect();
            return Ok((work, None));
        }
        let mut spans: Vec<Range<u64>> = match &plan.ranges {
            None => vec![reader
                .ordinals(&prollystore_dolt::KeyRange::all())
                .map_err(dolt_error)?],
            Some(ranges) => ranges
                .iter()
                .map(|r| reader.ordinals(r).map_err(dolt_error))
                .collect::<Result<_>>()?,
        };
        // Disjoint and in key order (IN lists may repeat a value or come in any order).
        spans.retain(|s| !s.is_empty());
        spans.sort_by_key(|s| s.start);
        let mut merged: Vec<Range<u64>> = Vec::with_capacity(spans.len());
        for s in spans {
            match merged.last_mut() {
                Some(last) if s.start <= last.end => last.end = last.end.max(s.end),
                _ => merged.push(s),
            }
        }
        if let Some(mut left) = limit {
            merged.retain_mut(|s| {
                let take = (s.end - s.start).min(left);
                s.end = s.start + take;
                left -= take;
                take > 0
            });
        }
        let rows: u64 = merged.iter().map(|s| s.end - s.start).sum();
        // Keyless tables: a position holds a row and its count of copies.
        let exact = (!self.table.schema.keyless).then_some(rows);
        Ok((merged.into_iter().map(Work::Ordinals).collect(), exact))
    }
}

impl DoltTable {
    /// The ranges of `plan` if each holds one whole primary key (and there are at most
    /// [`MAX_POINTS`]): the scan looks each up rather than finding positions.
    fn whole_keys<'p>(
        &self,
        plan: &'p key_ranges::KeyPlan,
    ) -> Option<&'p [prollystore_dolt::KeyRange]> {
        let key_len = self.table.schema.key_positions().len();
        let (None, Some(ranges)) = (&plan.index, &plan.ranges) else {
            return None;
        };
        let whole = |r: &prollystore_dolt::KeyRange| {
            matches!((&r.from, &r.to), (Bound::Included(a), Bound::Included(b))
                if a == b && a.len() == key_len)
        };
        (key_len > 0 && ranges.len() <= MAX_POINTS && ranges.iter().all(whole))
            .then_some(ranges.as_slice())
    }

    /// True if a scan with `filters` looks up whole primary keys and returns exactly the rows
    /// that pass every filter: no filter is left to check, no position to find
    /// ([`crate::point_select`] plans such a query without DataFusion's planner).
    pub(crate) fn looks_up_exactly(&self, filters: &[&Expr]) -> bool {
        let plan = key_ranges::plan(&self.table, filters);
        plan.pushed.iter().all(|p| *p == Pushed::Exact) && self.whole_keys(&plan).is_some()
    }

    /// Whole-key `points` in the order Dolt reads an `IN` list: by the values' own order
    /// (`id IN (4, 1)` gives 1 then 4; text by its bytes, not its collation: `k IN ('zoe',
    /// 'emile')` gives `emile` first under any collation), each row once (Dolt returns a row
    /// twice for `'zoe'` and `'Zoë'` under a case- and accent-insensitive collation; MySQL
    /// once). A point whose key does not encode is no stored key: it is dropped.
    fn in_key_order(
        &self,
        points: Vec<prollystore_dolt::KeyRange>,
    ) -> Result<Vec<prollystore_dolt::KeyRange>> {
        let reader = self.table.reader(&self.db).map_err(dolt_error)?;
        let key = reader.primary_key().map_err(dolt_error)?;
        fn values(p: &prollystore_dolt::KeyRange) -> &[Option<SqlValue>] {
            match &p.from {
                Bound::Included(v) => v,
                _ => &[],
            }
        }
        let mut keyed: Vec<(Vec<u8>, &prollystore_dolt::KeyRange)> = points
            .iter()
            .filter_map(|p| Some((key.encode(values(p)).ok()?, p)))
            .collect();
        keyed.sort_by(|(_, a), (_, b)| prollystore_dolt::compare_rows(values(a), values(b), &[]));
        let mut once: Vec<(Vec<u8>, &prollystore_dolt::KeyRange)> = Vec::with_capacity(keyed.len());
        for (encoded, p) in keyed {
            if !once
                .iter()
                .any(|(e, _)| key.desc().compare(e, &encoded).is_eq())
            {
                once.push((encoded, p));
            }
        }
        Ok(once.into_iter().map(|(_, p)| p.clone()).collect())
    }
}

/// Cuts `work` into at most `n` partitions of nearly equal row counts (positions only; index
/// ranges stay in one partition, in order).
fn spread(work: Vec<Work>, rows: u64, n: usize) -> Vec<Vec<Work>> {
    let n = (rows / MIN_PARTITION_ROWS).clamp(1, n.max(1) as u64);
    if n == 1 || work.iter().any(|w| !matches!(w, Work::Ordinals(_))) {
        return vec![work];
    }
    let share = rows.div_ceil(n);
    let mut parts: Vec<Vec<Work>> = vec![Vec::new()];
    let mut room = share;
    for w in work {
        let Work::Ordinals(mut span) = w else {
            unreachable!("index and point work returned above")
        };
        while !span.is_empty() {
            if room == 0 {
                parts.push(Vec::new());
                room = share;
            }
            let take = (span.end - span.start).min(room);
            let part = parts.last_mut().expect("one part at least");
            part.push(Work::Ordinals(span.start..span.start + take));
            span.start += take;
            room -= take;
        }
    }
    parts
}

#[async_trait]
impl TableProvider for DoltTable {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn constraints(&self) -> Option<&Constraints> {
        Some(&self.constraints)
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(self.pushdown(filters))
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let refs: Vec<&Expr> = filters.iter().collect();
        let plan = key_ranges::plan(&self.table, &refs);
        // The filters this seek does not answer exactly. DataFusion's optimizer may ask about
        // filters one at a time and hand them over together, and a filter exact alone (one
        // range) may not be exact beside another on the same column (one range per column):
        // whatever the seek leaves is applied here, on the rows read, so every filter given
        // to the scan holds on its output.
        let residual: Vec<Expr> = filters
            .iter()
            .zip(&plan.pushed)
            .filter(|(_, p)| **p != Pushed::Exact)
            .map(|(f, _)| f.clone())
            .collect();
        let limit = if residual.is_empty() { limit } else { None };
        let (work, exact_rows) = self.work(&plan, limit)?;
        let rows = exact_rows.unwrap_or_else(|| {
            work.iter()
                .map(|w| match w {
                    Work::Ordinals(s) => s.end - s.start,
                    Work::Index { .. } | Work::Point(_) => 0,
                })
                .sum()
        });
        let config = state.config();
        let partitions = spread(work, rows, config.target_partitions());
        let wanted: Vec<usize> = match projection {
            Some(p) => p.clone(),
            None => (0..self.schema.fields().len()).collect(),
        };
        // The residual filters' columns are read too, then projected away.
        let mut columns = wanted.clone();
        for e in &residual {
            for c in e.column_refs() {
                let i = self.schema.index_of(&c.name)?;
                if !columns.contains(&i) {
                    columns.push(i);
                }
            }
        }
        let schema = Arc::new(self.schema.project(&columns)?);
        let scan: Arc<dyn ExecutionPlan> = Arc::new(DoltScan::new(
            self.db.clone(),
            self.table.clone(),
            schema.clone(),
            Some(columns.clone()),
            partitions,
            exact_rows.filter(|_| residual.is_empty()),
            config.batch_size(),
        ));
        let Some(predicate) = conjunction(residual) else {
            return Ok(scan);
        };
        let df_schema = DFSchema::try_from(schema.as_ref().clone())?;
        // Collated text compared as Dolt compares it (the plan's own filters are keyed by the
        // optimizer rule; the ones handed to the scan are as written).
        let predicate = crate::collated_compare::collated(predicate, &df_schema)?;
        let predicate = state.create_physical_expr(predicate, &df_schema)?;
        let filtered: Arc<dyn ExecutionPlan> = Arc::new(FilterExec::try_new(predicate, scan)?);
        if columns.len() == wanted.len() {
            return Ok(filtered);
        }
        let keep = wanted.iter().enumerate().map(|(at, _)| {
            let name = schema.field(at).name().clone();
            (
                Arc::new(Column::new(&name, at)) as Arc<dyn PhysicalExpr>,
                name,
            )
        });
        Ok(Arc::new(ProjectionExec::try_new(keep, filtered)?))
    }

    fn statistics(&self) -> Option<Statistics> {
        if self.table.schema.keyless {
            return None;
        }
        let rows = self.table.primary_scan_map(&self.db).count().ok()?;
        let mut stats = Statistics::new_unknown(&self.schema);
        stats.num_rows = Precision::Exact(usize::try_from(rows).ok()?);
        Some(stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_cuts_positions_into_nearly_equal_parts() {
        let work = vec![Work::Ordinals(0..250_000), Work::Ordinals(300_000..450_000)];
        let parts = spread(work, 400_000, 4);
        assert_eq!(parts.len(), 4);
        let sizes: Vec<u64> = parts
            .iter()
            .map(|p| {
                p.iter()
                    .map(|w| match w {
                        Work::Ordinals(s) => s.end - s.start,
                        Work::Index { .. } | Work::Point(_) => 0,
                    })
                    .sum()
            })
            .collect();
        assert_eq!(sizes, [100_000; 4]);
        // Few rows: one partition.
        assert_eq!(spread(vec![Work::Ordinals(0..10)], 10, 8).len(), 1);
    }
}
