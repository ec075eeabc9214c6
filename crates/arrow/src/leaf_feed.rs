//! The cold pass over a whole table or a part of it: batches built from the leaves the bulk
//! leaf reader hands over ([`for_each_part_of`]), leaves read in batched positioned reads and hash-checked as the CSV
//! export reads them, instead of one chunk at a time through a cursor. The table's rows are cut
//! into parts of one batch each; each worker thread takes the next batch when it is free, reading
//! the leaves of its own batch and appending their rows, so both the reading and the building
//! spread over the cores. A thread of its own gathers the batches in key order and hands them
//! over through a channel. The leaves stay in the chunk arena, so later passes find them warm
//! and take the cursor paths.

use std::ops::Range;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;
use std::thread::JoinHandle;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use prollystore_dolt::leaf_reader::{for_each_part_of, PartLeaves};
use prollystore_dolt::{Database, Table};

use crate::columns::{Builders, Extra, ValueBytes};
use crate::dolt_scan::{Plan, RowAppender};
use crate::error::{Error, Result};

/// Finished batches waiting for the reader.
const QUEUED_BATCHES: usize = 2;

/// What every worker needs to make a batch.
struct Job {
    db: Arc<Database>,
    table: Table,
    plan: Plan,
    schema: SchemaRef,
    extras: Vec<Extra>,
    /// What the string and binary columns' values took per row in the batches so far.
    value_bytes: ValueBytes,
}

impl Job {
    /// The batch of one part of the table's rows.
    fn batch(&self, part: &mut PartLeaves<'_>) -> Result<RecordBatch> {
        let rows = usize::try_from(part.rows())
            .map_err(|_| Error::Mismatch("a batch of more rows than memory holds".into()))?;
        let mut builders =
            Builders::sized(self.schema.clone(), &self.extras, rows, &self.value_bytes)?;
        let mut appender = RowAppender::new(&self.db, &self.table, self.plan.clone());
        let mut row = part.first_row();
        while let Some((node, range)) = part.next_leaf()? {
            let n = range.len() as u64;
            appender.append_leaf(&node, range, &mut builders.builders, row)?;
            row += n;
        }
        builders.rows = rows;
        self.value_bytes.record(&builders);
        builders.finish()
    }
}

/// Batches of a whole table built by worker threads from the bulk leaf reader, in key order.
pub(crate) struct LeafFeed {
    /// Batches, then `Ok(None)` at the end (or an error).
    receiver: Option<Receiver<Result<Option<RecordBatch>>>>,
    worker: Option<JoinHandle<()>>,
}

impl LeafFeed {
    /// Starts building the batches of the rows of `table` at positions `rows` (`0..u64::MAX`:
    /// every row), `batch_rows` rows each, on `threads` workers.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn start(
        db: Arc<Database>,
        table: Table,
        rows: Range<u64>,
        plan: Plan,
        schema: SchemaRef,
        extras: Vec<Extra>,
        batch_rows: usize,
        threads: usize,
    ) -> LeafFeed {
        let (tx, rx) = sync_channel(QUEUED_BATCHES);
        let job = Job {
            db,
            table,
            plan,
            value_bytes: ValueBytes::new(schema.fields().len()),
            schema,
            extras,
        };
        let worker = std::thread::spawn(move || {
            // A batch's error, reading or building (the walker's come back from
            // `for_each_part`).
            let mut failed: Option<Error> = None;
            let mut stopped = false;
            let work = |part: &mut PartLeaves<'_>| Ok(job.batch(part));
            let read = for_each_part_of(
                &job.db,
                &job.table,
                rows,
                true,
                batch_rows as u64,
                threads,
                &work,
                &mut |batch| match batch {
                    Ok(b) => {
                        stopped = tx.send(Ok(Some(b))).is_err();
                        Ok(!stopped)
                    }
                    Err(e) => {
                        failed = Some(e);
                        Ok(false)
                    }
                },
            );
            let end = match (read, failed) {
                (Err(e), _) => Err(e.into()),
                (Ok(()), Some(e)) => Err(e),
                (Ok(()), None) if stopped => return,
                (Ok(()), None) => Ok(None),
            };
            let _ = tx.send(end);
        });
        LeafFeed {
            receiver: Some(rx),
            worker: Some(worker),
        }
    }

    /// The next batch in order, `None` after the last (or after an error).
    pub(crate) fn next_batch(&mut self) -> Option<Result<RecordBatch>> {
        let got = self.receiver.as_ref()?.recv().unwrap_or_else(|_| {
            Err(Error::Mismatch(
                "the batch builder thread stopped without a batch (it panicked)".into(),
            ))
        });
        if !matches!(got, Ok(Some(_))) {
            self.receiver = None;
        }
        got.transpose()
    }
}

impl Drop for LeafFeed {
    fn drop(&mut self) {
        // Closing the channel stops the builders at their next batch, and with them the reads.
        self.receiver = None;
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}
