//! A prollystore map with a typed row schema ([`RowSchema`]) as a DataFusion table: its
//! columns as [`prollystore_arrow::map_schema`] types them, read by
//! [`prollystore_arrow::MapBatches`], cut into partitions of nearly equal row counts by
//! position. Filters are left to DataFusion (the map's keys are compared as encoded tuples,
//! whose order is the row schema's, not always DataFusion's); `LIMIT` and projections are
//! pushed into the scan.

use std::any::Any;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::Session;
use datafusion::common::stats::Precision;
use datafusion::common::{Result, Statistics};
use datafusion::datasource::{TableProvider, TableType};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::Expr;
use datafusion::physical_expr::EquivalenceProperties;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchReceiverStream;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
};
use prollystore::rows::RowSchema;
use prollystore::{Map, StoreFastPaths};
use prollystore_arrow::MapBatches;
use prollystore_format::Address;

use crate::error::arrow_error;

/// Fewest rows a partition is given.
const MIN_PARTITION_ROWS: u64 = 100_000;

/// The map at `root` of `store`, whose rows are `schema`'s, for DataFusion. Partitions read
/// on several threads at once, so the store is `Send + Sync` (the file store is; the memory
/// store is not).
///
/// ```
/// use std::sync::Arc;
/// use datafusion::arrow::array::{Int64Array, RecordBatch, StringArray};
/// use datafusion::prelude::SessionContext;
/// use prollystore::format::HashProfile;
/// use prollystore::FileStore;
/// use prollystore_arrow::{build_map, infer_row_schema};
/// use prollystore_query::MapTable;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let batch = RecordBatch::try_from_iter([
///     ("id", Arc::new(Int64Array::from(vec![1, 2, 3])) as _),
///     ("name", Arc::new(StringArray::from(vec!["a", "b", "c"])) as _),
/// ])?;
/// let schema = infer_row_schema(&batch.schema(), &["id"])?;
/// let dir = tempfile::tempdir()?;
/// let store = Arc::new(FileStore::create(dir.path(), HashProfile::Blake3)?);
/// let root = build_map(store.as_ref(), &schema, [Ok(batch)])?.root();
/// let ctx = SessionContext::new();
/// ctx.register_table("m", Arc::new(MapTable::new(store, root, schema)?))?;
/// let rows = ctx.sql("SELECT name FROM m WHERE id > 1").await?.collect().await?;
/// assert_eq!(rows.iter().map(|b| b.num_rows()).sum::<usize>(), 2);
/// # Ok(())
/// # }
/// ```
pub struct MapTable<S: StoreFastPaths + Send + Sync + ?Sized + 'static> {
    store: Arc<S>,
    root: Address,
    rows: RowSchema,
    schema: SchemaRef,
    count: u64,
}

impl<S: StoreFastPaths + Send + Sync + ?Sized + 'static> std::fmt::Debug for MapTable<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MapTable")
            .field("root", &self.root)
            .field("rows", &self.count)
            .finish_non_exhaustive()
    }
}

impl<S: StoreFastPaths + Send + Sync + ?Sized + 'static> MapTable<S> {
    /// The map at `root` in `store` (its row count read now).
    pub fn new(store: Arc<S>, root: Address, rows: RowSchema) -> crate::Result<MapTable<S>> {
        let count = Map::new(store.as_ref(), root, rows.tuple_schema())
            .count()
            .map_err(|e| crate::Error::Unsupported(format!("map {root}: {e}")))?;
        let schema = prollystore_arrow::map_schema(&rows);
        Ok(MapTable {
            store,
            root,
            rows,
            schema,
            count,
        })
    }
}

#[async_trait]
impl<S: StoreFastPaths + Send + Sync + ?Sized + 'static> TableProvider for MapTable<S> {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let rows = limit.map_or(self.count, |l| self.count.min(l as u64));
        let n = (rows / MIN_PARTITION_ROWS).clamp(1, state.config().target_partitions() as u64);
        let spans: Vec<(u64, u64)> = (0..n).map(|i| (rows * i / n, rows * (i + 1) / n)).collect();
        let schema = match projection {
            Some(p) => Arc::new(self.schema.project(p)?),
            None => self.schema.clone(),
        };
        let properties = PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(spans.len()),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        Ok(Arc::new(MapScan {
            store: self.store.clone(),
            root: self.root,
            rows: self.rows.clone(),
            schema,
            projection: projection.cloned(),
            spans,
            batch_rows: state.config().batch_size().max(1),
            properties,
        }))
    }

    fn statistics(&self) -> Option<Statistics> {
        let mut stats = Statistics::new_unknown(&self.schema);
        stats.num_rows = Precision::Exact(usize::try_from(self.count).ok()?);
        Some(stats)
    }
}

/// The scan of a map: one partition per span of positions.
struct MapScan<S: StoreFastPaths + Send + Sync + ?Sized + 'static> {
    store: Arc<S>,
    root: Address,
    rows: RowSchema,
    schema: SchemaRef,
    projection: Option<Vec<usize>>,
    spans: Vec<(u64, u64)>,
    batch_rows: usize,
    properties: PlanProperties,
}

impl<S: StoreFastPaths + Send + Sync + ?Sized + 'static> std::fmt::Debug for MapScan<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MapScan")
            .field("root", &self.root)
            .field("spans", &self.spans)
            .finish_non_exhaustive()
    }
}

impl<S: StoreFastPaths + Send + Sync + ?Sized + 'static> DisplayAs for MapScan<S> {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let rows: u64 = self.spans.iter().map(|(a, b)| b - a).sum();
        write!(f, "MapScan: root={}, rows={rows}", self.root)
    }
}

impl<S: StoreFastPaths + Send + Sync + ?Sized + 'static> ExecutionPlan for MapScan<S> {
    fn name(&self) -> &str {
        "MapScan"
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> &PlanProperties {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        Vec::new()
    }

    fn with_new_children(
        self: Arc<Self>,
        _: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn execute(
        &self,
        partition: usize,
        _context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let (start, end) = self.spans.get(partition).copied().unwrap_or((0, 0));
        let mut builder = RecordBatchReceiverStream::builder(self.schema.clone(), 2);
        let tx = builder.tx();
        let (store, root, rows) = (self.store.clone(), self.root, self.rows.clone());
        let (projection, batch_rows) = (self.projection.clone(), self.batch_rows);
        builder.spawn_blocking(move || {
            let batches = MapBatches::new(store, root, rows, batch_rows)
                .map_err(arrow_error)?
                .skip_to(start);
            let mut left = end - start;
            for batch in batches {
                if left == 0 {
                    break;
                }
                let batch: RecordBatch = batch?;
                let take = (batch.num_rows() as u64).min(left);
                let batch = batch.slice(0, take as usize);
                left -= take;
                let batch = match &projection {
                    Some(p) => batch.project(p)?,
                    None => batch,
                };
                if tx.blocking_send(Ok(batch)).is_err() {
                    break;
                }
            }
            Ok(())
        });
        Ok(builder.build())
    }

    fn partition_statistics(&self, partition: Option<usize>) -> Result<Statistics> {
        let mut stats = Statistics::new_unknown(&self.schema);
        if partition.is_none() {
            let rows: u64 = self.spans.iter().map(|(a, b)| b - a).sum();
            stats.num_rows = Precision::Exact(usize::try_from(rows).unwrap_or(usize::MAX));
        }
        Ok(stats)
    }
}
