//! The cold whole-table pass: batches built from the leaves the CSV export's bulk reader hands
//! over ([`for_each_leaf`]), leaves read in batched positioned reads and hash-checked side by
//! side on its reader threads, instead of one chunk at a time through a cursor. One builder
//! thread appends their rows and sends finished batches through a channel; the leaves stay in
//! the chunk arena, so later passes find them warm and take the cursor paths.

use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;
use std::thread::JoinHandle;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use prollystore_dolt::leaf_reader::for_each_leaf;
use prollystore_dolt::{Database, Table};
use prollystore_format::tuple::Tuple;

use crate::columns::{Builders, Extra};
use crate::dolt_scan::{Plan, RowAppender};
use crate::error::{Error, Result};

/// Finished batches waiting for the reader.
const QUEUED_BATCHES: usize = 2;

/// Batches of a whole table built on a thread from the bulk leaf reader, in key order.
pub(crate) struct LeafFeed {
    /// Batches, then `Ok(None)` at the end (or an error).
    receiver: Option<Receiver<Result<Option<RecordBatch>>>>,
    worker: Option<JoinHandle<()>>,
}

impl LeafFeed {
    /// Starts building the batches of `table`, `batch_rows` rows each.
    pub(crate) fn start(
        db: Arc<Database>,
        table: Table,
        plan: Plan,
        schema: SchemaRef,
        extras: Vec<Extra>,
        batch_rows: usize,
    ) -> LeafFeed {
        let (tx, rx) = sync_channel(QUEUED_BATCHES);
        let worker = std::thread::spawn(move || {
            let mut builders = match Builders::new(schema, &extras, batch_rows) {
                Ok(b) => b,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            };
            let mut rows = RowAppender::new(&db, &table, plan);
            let mut row = 0u64;
            // An error of the builders (the reader's errors come back from `for_each_leaf`).
            let mut failed: Option<Error> = None;
            let mut stopped = false;
            let read = for_each_leaf(&db, &table, true, &mut |node| {
                let mut step = || -> Result<bool> {
                    for e in 0..node.count() {
                        // A verified node's keys and leaf values are valid tuples.
                        let kt = Tuple::new_unverified(node.key(e));
                        let vt = Tuple::new_unverified(node.value(e));
                        rows.append(kt, vt, &mut builders.builders, row)?;
                        builders.rows += 1;
                        row += 1;
                        if builders.rows == batch_rows {
                            let batch = builders.finish()?;
                            if tx.send(Ok(Some(batch))).is_err() {
                                return Ok(false);
                            }
                        }
                    }
                    Ok(true)
                };
                match step() {
                    Ok(go_on) => {
                        stopped = !go_on;
                        Ok(go_on)
                    }
                    Err(e) => {
                        failed = Some(e);
                        Ok(false)
                    }
                }
            });
            let end = match (read, failed) {
                (Err(e), _) => Err(e.into()),
                (Ok(()), Some(e)) => Err(e),
                (Ok(()), None) if stopped => return,
                (Ok(()), None) if builders.rows == 0 => Ok(None),
                (Ok(()), None) => match builders.finish() {
                    Ok(last) => {
                        if tx.send(Ok(Some(last))).is_err() {
                            return;
                        }
                        Ok(None)
                    }
                    Err(e) => Err(e),
                },
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
        // Closing the channel stops the builder at its next batch, and with it the readers.
        self.receiver = None;
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}
