//! Whole-table batches made ahead on worker threads: worker `w` of `n` builds batches `w`,
//! `w + n`, `w + 2n`, … (each from its first row's ordinal, [`Scan`] on a cursor of its own)
//! and hands them over one at a time through its own channel, so they come out in order and at
//! most two per worker wait in memory. Cold reads (chunks read, decompressed and hash-checked
//! for the first time) and warm decoding both spread over the cores.

use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;
use std::thread::JoinHandle;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use prollystore_dolt::{Database, Table};

use crate::columns::{Builders, Extra, ValueBytes};
use crate::dolt_scan::{Plan, Scan};
use crate::error::{Error, Result};

/// What every worker needs.
struct Job {
    db: Arc<Database>,
    table: Table,
    plan: Plan,
    schema: SchemaRef,
    extras: Vec<Extra>,
    batch_rows: usize,
    rows: u64,
    /// What the string and binary columns' values took per row in the batches so far.
    value_bytes: ValueBytes,
}

impl Job {
    /// Batch `k`: rows `k * batch_rows` up to the next batch or the end.
    fn batch(&self, k: usize) -> Result<RecordBatch> {
        let first = k as u64 * self.batch_rows as u64;
        let n = (self.rows - first).min(self.batch_rows as u64) as usize;
        let mut builders =
            Builders::sized(self.schema.clone(), &self.extras, n, &self.value_bytes)?;
        let mut scan = Scan::new(&self.db, &self.table, self.plan.clone(), first)?;
        let got = scan.fill(&mut builders.builders, n, first)?;
        if got != n {
            return Err(Error::Mismatch(format!(
                "table {:?}: ended at row {} of {}",
                self.table.name,
                first + got as u64,
                self.rows
            )));
        }
        builders.rows = n;
        self.value_bytes.record(&builders);
        builders.finish()
    }
}

/// Batches of a whole table, made on worker threads, returned in order.
pub(crate) struct ReadAhead {
    receivers: Vec<Receiver<Result<RecordBatch>>>,
    workers: Vec<JoinHandle<()>>,
    next: usize,
    batches: usize,
}

impl ReadAhead {
    /// Starts `threads` workers on the `rows` rows of `table`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn start(
        db: Arc<Database>,
        table: Table,
        plan: Plan,
        schema: SchemaRef,
        extras: Vec<Extra>,
        batch_rows: usize,
        rows: u64,
        threads: usize,
    ) -> ReadAhead {
        let batches = rows.div_ceil(batch_rows as u64) as usize;
        let job = Arc::new(Job {
            db,
            table,
            plan,
            value_bytes: ValueBytes::new(schema.fields().len()),
            schema,
            extras,
            batch_rows,
            rows,
        });
        let threads = threads.clamp(1, batches.max(1));
        let mut receivers = Vec::new();
        let mut workers = Vec::new();
        for w in 0..threads {
            let (tx, rx) = sync_channel(1);
            let job = job.clone();
            workers.push(std::thread::spawn(move || {
                for k in (w..batches).step_by(threads) {
                    let batch = job.batch(k);
                    let failed = batch.is_err();
                    // The reader was dropped: stop.
                    if tx.send(batch).is_err() || failed {
                        return;
                    }
                }
            }));
            receivers.push(rx);
        }
        ReadAhead {
            receivers,
            workers,
            next: 0,
            batches,
        }
    }

    /// The next batch in order, `None` after the last (or after an error).
    pub(crate) fn next_batch(&mut self) -> Option<Result<RecordBatch>> {
        if self.next >= self.batches {
            return None;
        }
        let rx = self.receivers.get(self.next % self.receivers.len())?;
        let got = rx.recv().unwrap_or_else(|_| {
            Err(Error::Mismatch(
                "a read-ahead worker stopped without a batch (it panicked)".into(),
            ))
        });
        self.next = if got.is_ok() {
            self.next + 1
        } else {
            self.batches
        };
        Some(got)
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        // Closing the channels stops each worker after the batch it is making.
        self.receivers.clear();
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}
