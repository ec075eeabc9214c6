//! The physical scan of a Dolt table: each partition reads its positions of the clustered
//! index (or its secondary-index ranges) on a blocking thread, through the Arrow readers of
//! `prollystore-arrow`, and hands batches to DataFusion through a small channel.

use std::any::Any;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use datafusion::arrow::compute::concat_batches;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use datafusion::common::stats::Precision;
use datafusion::common::{Result, Statistics};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::EquivalenceProperties;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::{RecordBatchReceiverStream, RecordBatchStreamAdapter};
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
};
use prollystore_arrow::{GeometryBytes, TableBatches};
use prollystore_dolt::{Database, KeyRange, Table};

use crate::error::arrow_error;

/// Most rows a partition reads on the calling task rather than on a blocking thread.
const INLINE_ROWS: u64 = 4096;

/// One stretch of a partition's reading.
#[derive(Clone, Debug)]
pub(crate) enum Work {
    /// Rows at these positions of the clustered index.
    Ordinals(Range<u64>),
    /// Rows of secondary index `name` whose keys are in `range`, in index order.
    Index { name: String, range: KeyRange },
    /// The row whose whole primary key this range holds, if there is one.
    Point(KeyRange),
}

/// The scan of one Dolt table: partitions of [`Work`].
#[derive(Debug)]
pub(crate) struct DoltScan {
    db: Arc<Database>,
    table: Table,
    schema: SchemaRef,
    /// The visible columns read, in output order (`None`: all).
    columns: Option<Vec<usize>>,
    partitions: Vec<Vec<Work>>,
    /// Rows the scan returns, when known exactly.
    rows: Option<u64>,
    batch_rows: usize,
    properties: PlanProperties,
}

impl DoltScan {
    pub(crate) fn new(
        db: Arc<Database>,
        table: Table,
        schema: SchemaRef,
        columns: Option<Vec<usize>>,
        partitions: Vec<Vec<Work>>,
        rows: Option<u64>,
        batch_rows: usize,
    ) -> DoltScan {
        let properties = PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(partitions.len().max(1)),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        DoltScan {
            db,
            table,
            schema,
            columns,
            partitions,
            rows,
            batch_rows: batch_rows.max(1),
            properties,
        }
    }
}

impl DisplayAs for DoltScan {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let ranges: usize = self.partitions.iter().map(Vec::len).sum();
        let index = self.partitions.iter().flatten().find_map(|w| match w {
            Work::Index { name, .. } => Some(name.as_str()),
            Work::Ordinals(_) | Work::Point(_) => None,
        });
        write!(f, "DoltScan: table={}", self.table.name)?;
        let points = self
            .partitions
            .iter()
            .flatten()
            .filter(|w| matches!(w, Work::Point(_)));
        let points = points.count();
        match index {
            _ if points > 0 => write!(f, ", points={points}")?,
            Some(name) => write!(f, ", index={name}, ranges={ranges}")?,
            None => write!(f, ", ranges={ranges}")?,
        }
        if let Some(rows) = self.rows {
            write!(f, ", rows={rows}")?;
        }
        if let Some(c) = &self.columns {
            let names: Vec<&str> = self
                .schema
                .fields()
                .iter()
                .map(|f| f.name().as_str())
                .collect();
            write!(f, ", columns=[{}]", names.join(", "))?;
            debug_assert_eq!(c.len(), names.len());
        }
        Ok(())
    }
}

impl ExecutionPlan for DoltScan {
    fn name(&self) -> &str {
        "DoltScan"
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
        let work = self.partitions.get(partition).cloned().unwrap_or_default();
        let small = match work.as_slice() {
            [Work::Ordinals(span)] => span.end - span.start <= INLINE_ROWS,
            points => points.iter().all(|w| matches!(w, Work::Point(_))),
        };
        if small {
            // A point or short range: read here, on the task that asked (a thread hand-off
            // would cost more than the read).
            let reader = Reader {
                db: &self.db,
                table: &self.table,
                schema: &self.schema,
                columns: self.columns.as_deref(),
                batch_rows: self.batch_rows,
            };
            let mut batches = Vec::new();
            for w in &work {
                reader.read(w, &mut |b| {
                    batches.push(b);
                    true
                })?;
            }
            // One batch: DataFusion deals batches round robin to its partitions, which would
            // lose the points' key order (`id IN (4, 1, 3)` gives 1, 3, 4, as Dolt does).
            let batch = match batches.len() {
                0 | 1 => batches,
                _ => vec![concat_batches(&self.schema, &batches)?],
            };
            return Ok(Box::pin(RecordBatchStreamAdapter::new(
                self.schema.clone(),
                futures::stream::iter(batch.into_iter().map(Ok)),
            )));
        }
        let mut builder = RecordBatchReceiverStream::builder(self.schema.clone(), 2);
        let tx = builder.tx();
        let (db, table, schema) = (self.db.clone(), self.table.clone(), self.schema.clone());
        let (columns, batch_rows) = (self.columns.clone(), self.batch_rows);
        builder.spawn_blocking(move || {
            for w in work {
                let reader = Reader {
                    db: &db,
                    table: &table,
                    schema: &schema,
                    columns: columns.as_deref(),
                    batch_rows,
                };
                let sent = reader.read(&w, &mut |batch| tx.blocking_send(Ok(batch)).is_ok())?;
                if !sent {
                    break; // the consumer stopped (a LIMIT met, a query cancelled)
                }
            }
            Ok(())
        });
        Ok(builder.build())
    }

    fn partition_statistics(&self, partition: Option<usize>) -> Result<Statistics> {
        let mut stats = Statistics::new_unknown(&self.schema);
        if let (None, Some(rows)) = (partition, self.rows) {
            stats.num_rows = Precision::Exact(usize::try_from(rows).unwrap_or(usize::MAX));
        }
        Ok(stats)
    }
}

/// What one stretch of work reads with.
struct Reader<'a> {
    db: &'a Arc<Database>,
    table: &'a Table,
    schema: &'a SchemaRef,
    columns: Option<&'a [usize]>,
    batch_rows: usize,
}

impl Reader<'_> {
    /// Reads `work`, handing each batch to `send` (false: stop). Returns false if stopped.
    fn read(&self, work: &Work, send: &mut dyn FnMut(RecordBatch) -> bool) -> Result<bool> {
        let keyed = !self.table.schema.keyless;
        match (work, self.columns) {
            // No column asked for (COUNT(*)): a keyed table's positions are its rows.
            (Work::Ordinals(span), Some([])) if keyed => {
                let mut at = span.start;
                while at < span.end {
                    let n = (span.end - at).min(self.batch_rows as u64);
                    let options = RecordBatchOptions::new().with_row_count(Some(n as usize));
                    let batch = RecordBatch::try_new_with_options(
                        self.schema.clone(),
                        Vec::new(),
                        &options,
                    )?;
                    if !send(batch) {
                        return Ok(false);
                    }
                    at += n;
                }
                Ok(true)
            }
            (Work::Ordinals(span), columns) => {
                // Keyless rows with no column asked for: read one, keep the row count.
                let read_cols = match columns {
                    Some([]) => Some(&[0][..]),
                    c => c,
                };
                let batches = TableBatches::ordinals_with(
                    self.db.clone(),
                    self.table.clone(),
                    span.clone(),
                    read_cols,
                    self.batch_rows,
                    GeometryBytes::Stored,
                )
                .map_err(arrow_error)?;
                self.drain(
                    batches,
                    columns.is_some_and(<[usize]>::is_empty).then_some(&[]),
                    send,
                )
            }
            (Work::Point(range), columns) => {
                let batches = TableBatches::range_with(
                    self.db.clone(),
                    self.table.clone(),
                    range,
                    self.batch_rows,
                    GeometryBytes::Stored,
                )
                .map_err(arrow_error)?;
                self.drain(batches, columns, send)
            }
            (Work::Index { name, range }, columns) => {
                let batches = TableBatches::index_range_with(
                    self.db.clone(),
                    self.table.clone(),
                    name,
                    range,
                    self.batch_rows,
                    GeometryBytes::Stored,
                )
                .map_err(arrow_error)?;
                self.drain(batches, columns, send)
            }
        }
    }

    fn drain(
        &self,
        batches: TableBatches,
        project: Option<&[usize]>,
        send: &mut dyn FnMut(RecordBatch) -> bool,
    ) -> Result<bool> {
        for batch in batches {
            let batch = batch?;
            let batch = match project {
                Some(p) => batch.project(p)?,
                None => batch,
            };
            // The scan's schema (its fields' metadata say how geometry is given).
            let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
            let batch = RecordBatch::try_new_with_options(
                self.schema.clone(),
                batch.columns().to_vec(),
                &options,
            )?;
            if !send(batch) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}
