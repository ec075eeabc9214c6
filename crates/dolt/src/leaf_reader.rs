//! Every leaf of a table's clustered index, in key order, read as fast as the files allow: the
//! bulk path behind the CSV export and the cold Arrow pass.
//!
//! Reading a leaf (positioned read, CRC-32C, snappy, SHA-512 address check, node verification)
//! costs about as much as using its rows, so it happens on reader threads, one per core: a
//! walker thread lists the leaves in key order off a map cursor, in batches of `BATCH`
//! (`FETCHED_BATCH` for a database read in place from a remote, whose level-1 nodes the map's
//! leaf walk fetches in windows ahead of it); each reader takes a batch, reads it (records that
//! lie close together in one positioned read,
//! decompressed into reused buffers), checks every leaf's address, four SHA-512s side by side
//! ([`HashProfile::addresses_of`](prollystore_format::HashProfile::addresses_of)), verifies the
//! nodes and runs the caller's per-batch work on them; the calling thread then takes the
//! batches in key order. A fixed set of batches circulates (walker → reader → caller →
//! walker), which bounds the memory in flight and lets every buffer be reused.

use prollystore_format::message::{Node, NodeLayout};
use prollystore_format::Address;

use crate::db::{Database, Table};
use crate::error::{bad_chunk, DoltError, Result};

/// Leaves per batch handed from the tree walker to a reader and on to the caller.
const BATCH: usize = 64;

/// Leaves per batch when the database is read in place from a remote: each batch is one
/// fetch (a location call and its range requests), and a fetch's cost on both sides is mostly
/// per request (measured on a 1M-row table from `dolt sql-server`: 64 leaves a batch, 623
/// requests; 256, 318 requests and 30% less time).
const FETCHED_BATCH: usize = 256;

/// The leaves per batch for `db`'s chunk source.
fn batch_len(db: &Database) -> usize {
    if db.source().is_fetched() {
        FETCHED_BATCH
    } else {
        BATCH
    }
}

/// Batches in flight per reader thread (read ahead of the caller, or waiting for it).
const BATCHES_PER_READER: usize = 3;

/// Largest gap between two records read with one positioned read (journal record headers
/// sit between consecutive chunks).
const RUN_GAP: u64 = 256;

/// Most bytes fetched with one positioned read.
const RUN_BYTES: u64 = 1 << 20;

/// Most reader threads.
const MAX_READERS: usize = 8;

/// One leaf of a batch: its address, and its bytes and verified layout once read. The byte
/// buffer is reused from batch to batch, so reading a leaf allocates nothing.
#[derive(Default)]
struct LeafBuf {
    address: Address,
    bytes: Vec<u8>,
    layout: Option<NodeLayout>,
}

/// Up to [`batch_len`] consecutive leaves, and what the readers' work made of them (`out`).
#[derive(Default)]
pub(crate) struct LeafBatch<O> {
    /// Position in key order.
    seq: u64,
    /// Leaves in use (the first `n` of `leaves`).
    n: usize,
    leaves: Vec<LeafBuf>,
    /// The per-batch result of the readers' work, reused from batch to batch.
    pub(crate) out: O,
}

impl<O> LeafBatch<O> {
    /// The batch's leaves in key order, as verified nodes.
    pub(crate) fn nodes(&self) -> impl Iterator<Item = Result<Node<'_>>> {
        self.leaves.iter().take(self.n).map(|leaf| {
            let layout = leaf
                .layout
                .ok_or_else(|| bad_chunk(leaf.address, "leaf was not read"))?;
            // SAFETY: a leaf's layout is set only from the verified view of its bytes, and
            // cleared before they are read again (`read_batch`; the roots in `run_leaves`).
            Ok(unsafe { Node::from_verified(&leaf.bytes, layout) })
        })
    }
}

/// What the reader threads do with each batch once its leaves are read and checked, with a
/// scratch state of their own.
pub(crate) type BatchWork<'w, O, S> = dyn Fn(&mut LeafBatch<O>, &mut S) -> Result<()> + Sync + 'w;

/// A reader's answer: the batch's position and the batch read, or the error met.
type Done<O> = (u64, Result<LeafBatch<O>>);

/// The walker's side: fills batches with leaf addresses in key order and sends them to the
/// readers.
struct Walker<'c, O> {
    free: &'c std::sync::mpsc::Receiver<LeafBatch<O>>,
    jobs: std::sync::mpsc::Sender<LeafBatch<O>>,
    current: Option<LeafBatch<O>>,
    seq: u64,
    /// Leaves per batch ([`batch_len`]).
    batch_len: usize,
}

impl<O> Walker<'_, O> {
    /// Queues a leaf; false once the caller has stopped.
    fn push(&mut self, address: Address) -> bool {
        let batch = match &mut self.current {
            Some(b) => b,
            None => match self.free.recv() {
                Ok(mut b) => {
                    b.n = 0;
                    self.current.insert(b)
                }
                Err(_) => return false,
            },
        };
        match batch.leaves.get_mut(batch.n) {
            Some(leaf) => leaf.address = address,
            None => batch.leaves.push(LeafBuf {
                address,
                ..LeafBuf::default()
            }),
        }
        batch.n += 1;
        batch.n < self.batch_len || self.flush()
    }

    /// Sends the batch being filled; false once the readers have stopped.
    fn flush(&mut self) -> bool {
        let Some(mut batch) = self.current.take() else {
            return true;
        };
        batch.seq = self.seq;
        self.seq += 1;
        self.jobs.send(batch).is_ok()
    }
}

/// Reads, decompresses, hash-checks and verifies the leaves of `batch`; with `keep`, also keeps
/// each in the database's chunk arena (where cursors find it later) while the store's budget
/// has room ([`DoltChunkSource::set_bulk_keep_budget`]).
///
/// [`DoltChunkSource::set_bulk_keep_budget`]: crate::chunks::DoltChunkSource::set_bulk_keep_budget
fn read_batch<O>(
    db: &Database,
    batch: &mut LeafBatch<O>,
    scratch: &mut Vec<u8>,
    keep: bool,
) -> Result<()> {
    let n = batch.n.min(FETCHED_BATCH);
    let source = db.source();
    let mut spans = [None; FETCHED_BATCH];
    for (span, leaf) in spans.iter_mut().zip(batch.leaves.iter_mut().take(n)) {
        leaf.layout = None;
        *span = source.record_span(&leaf.address);
    }
    let mut fetched_leaves = [false; FETCHED_BATCH];
    if source.is_fetched() {
        // Leaves no local file holds (a remote read in place): fetched in one call, which
        // groups them into few requests.
        let wanted: Vec<Address> = spans
            .iter()
            .zip(&batch.leaves)
            .take(n)
            .filter(|(span, _)| span.is_none())
            .map(|(_, leaf)| leaf.address)
            .collect();
        let mut fetched = source.fetch_many(&wanted)?.into_iter();
        let leaves = spans
            .iter()
            .zip(batch.leaves.iter_mut())
            .zip(&mut fetched_leaves);
        for ((span, leaf), done) in leaves.take(n) {
            if span.is_none() {
                let chunk = fetched
                    .next()
                    .flatten()
                    .ok_or(DoltError::MissingChunk(leaf.address))?;
                leaf.bytes.clear();
                leaf.bytes.extend_from_slice(&chunk);
                *done = true;
            }
        }
    }
    // Runs of records that lie close together in one file are fetched with one read.
    let mut i = 0;
    while i < n {
        let Some(first) = spans[i] else {
            // An archive's chunk (or a missing one): read on its own, unless fetched above.
            if let Some(leaf) = batch.leaves.get_mut(i).filter(|_| !fetched_leaves[i]) {
                if !source.read_into_unchecked(&leaf.address, scratch, &mut leaf.bytes)? {
                    return Err(DoltError::MissingChunk(leaf.address));
                }
            }
            i += 1;
            continue;
        };
        let mut end = first.offset + first.len as u64;
        let mut j = i + 1;
        while j < n {
            let Some(s) = spans[j] else { break };
            let end_here = s.offset + s.len as u64;
            let near = s.file == first.file && s.offset >= end && s.offset - end <= RUN_GAP;
            if !near || end_here - first.offset > RUN_BYTES {
                break;
            }
            end = end_here;
            j += 1;
        }
        source.read_span(
            first.file,
            first.offset,
            (end - first.offset) as usize,
            scratch,
        )?;
        let run = batch.leaves.get_mut(i..j).unwrap_or_default();
        for (s, leaf) in spans[i..j].iter().flatten().zip(run) {
            let at = (s.offset - first.offset) as usize;
            let record = scratch.get(at..at + s.len).unwrap_or(&[]);
            source.decode_record_into(s.file, record, s.offset, &mut leaf.bytes)?;
        }
        i = j;
    }
    // Every leaf's address is checked, the batch's hashed side by side.
    let mut addresses = [Address::ZERO; FETCHED_BATCH];
    let mut chunks: [&[u8]; FETCHED_BATCH] = [&[]; FETCHED_BATCH];
    for ((a, c), leaf) in addresses.iter_mut().zip(&mut chunks).zip(&batch.leaves) {
        *a = leaf.address;
        *c = &leaf.bytes;
    }
    source.check_addresses(&addresses[..n], &chunks[..n])?;
    for leaf in batch.leaves.iter_mut().take(n) {
        let node = Node::verify(&leaf.bytes).map_err(|e| bad_chunk(leaf.address, e.to_string()))?;
        if !node.is_leaf() {
            return Err(bad_chunk(leaf.address, "expected a leaf node"));
        }
        leaf.layout = Some(node.layout());
        if keep {
            source.keep_verified(leaf.address, &node);
        }
    }
    Ok(())
}

/// Reads every leaf of `table`'s clustered index, runs `work` on each batch of them on the
/// reader threads (in any order), and hands the batches to `take` on the calling thread in key
/// order; `take` returns false to stop early. With `keep`, the leaves stay in the database's
/// chunk arena (later cursor reads and point gets find them there).
pub(crate) fn run_leaves<O: Default + Send, S: Default>(
    db: &Database,
    table: &Table,
    keep: bool,
    work: &BatchWork<'_, O, S>,
    take: &mut dyn FnMut(&mut LeafBatch<O>) -> Result<bool>,
) -> Result<()> {
    let root =
        Node::verify(&table.primary_index).map_err(|e| bad_chunk(table.address, e.to_string()))?;
    if root.is_leaf() {
        let mut batch = LeafBatch {
            seq: 0,
            n: 1,
            leaves: vec![LeafBuf {
                address: table.address,
                bytes: table.primary_index.to_vec(),
                layout: Some(root.layout()),
            }],
            out: O::default(),
        };
        work(&mut batch, &mut S::default())?;
        take(&mut batch)?;
        return Ok(());
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // A database read in place from a remote: twice as many readers as cores, so that while
    // some wait for their fetch the others use the cores (a 1M-row CSV export from a local
    // `dolt sql-server` on 2 cores: 0.73 s with 2 readers, 0.56 s with 4, 0.54 s with 8).
    let readers = match db.source().is_fetched() {
        true => cores * 2,
        false => cores,
    }
    .clamp(1, MAX_READERS);
    let in_flight = readers * BATCHES_PER_READER;
    let (job_tx, job_rx) = std::sync::mpsc::channel::<LeafBatch<O>>();
    let job_rx = std::sync::Mutex::new(job_rx);
    let job_rx = &job_rx;
    std::thread::scope(|s| {
        let (free_tx, free_rx) = std::sync::mpsc::channel::<LeafBatch<O>>();
        for _ in 0..in_flight {
            let _ = free_tx.send(LeafBatch::default());
        }
        let (done_tx, done_rx) = std::sync::mpsc::channel::<Done<O>>();
        for _ in 0..readers {
            let done = done_tx.clone();
            s.spawn(move || {
                let mut scratch = Vec::new();
                let mut work_scratch = S::default();
                loop {
                    let job = match job_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => break,
                    };
                    let Ok(mut batch) = job else { break };
                    let seq = batch.seq;
                    // A panic here would be a bug; caught, it becomes this batch's error
                    // instead of a batch that never comes back (which would hang the caller).
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        read_batch(db, &mut batch, &mut scratch, keep)
                            .and_then(|()| work(&mut batch, &mut work_scratch))
                    }))
                    .unwrap_or_else(|_| {
                        Err(bad_chunk(
                            table.address,
                            "internal error (a bug) while reading leaves",
                        ))
                    })
                    .map(|()| batch);
                    if done.send((seq, r)).is_err() {
                        break;
                    }
                }
            });
        }
        s.spawn(move || {
            let mut walker = Walker {
                free: &free_rx,
                jobs: job_tx,
                current: None,
                seq: 0,
                batch_len: batch_len(db),
            };
            let r = send_leaves(db, table, &mut walker);
            let sent = walker.flush();
            if let Err(e) = r {
                if sent {
                    // After every batch before it, so the caller meets it in order.
                    let _ = done_tx.send((walker.seq, Err(e)));
                }
            }
        });

        // Batches arrive in any order; `pending` holds the early ones (at most `in_flight`).
        let mut pending: Vec<Done<O>> = Vec::with_capacity(in_flight + 1);
        let mut next = 0u64;
        for done in done_rx {
            pending.push(done);
            while let Some(at) = pending.iter().position(|(seq, _)| *seq == next) {
                let (_, r) = pending.swap_remove(at);
                let mut batch = r?;
                if !take(&mut batch)? {
                    // Returning drops the free list: the walker stops, then the readers.
                    return Ok(());
                }
                next += 1;
                // The walker may be done; then the batch is simply dropped.
                let _ = free_tx.send(batch);
            }
        }
        match pending.first() {
            None => Ok(()),
            Some((seq, _)) => Err(bad_chunk(
                table.address,
                format!("leaf batch {next} never arrived (batch {seq} did)"),
            )),
        }
    })
}

/// Queues the leaves of `table`'s clustered index in key order: the map's leaves as their
/// parents list them, without loading a leaf (the readers do). Returns `Ok(false)` when the
/// caller has stopped (then stops quietly).
fn send_leaves<O>(db: &Database, table: &Table, walker: &mut Walker<'_, O>) -> Result<bool> {
    let tree = |e: prollystore::TreeError| bad_chunk(table.address, e.to_string());
    for leaf in table.primary_scan_map(db).leaves().map_err(tree)? {
        let (address, _) = leaf.map_err(tree)?;
        if !walker.push(address) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Calls `each` with every leaf of `table`'s clustered index, in key order, read, decompressed
/// and checked ahead on reader threads (see the module notes); `each` returns false to stop
/// early. With `keep`, each leaf also stays in the database's chunk arena, as a cursor read
/// would leave it (later scans and point gets then find it there; see
/// [`first_leaf_kept`]).
pub fn for_each_leaf(
    db: &Database,
    table: &Table,
    keep: bool,
    each: &mut dyn FnMut(Node<'_>) -> Result<bool>,
) -> Result<()> {
    run_leaves::<(), ()>(db, table, keep, &|_, _| Ok(()), &mut |batch| {
        for node in batch.nodes() {
            if !each(node?)? {
                return Ok(false);
            }
        }
        Ok(true)
    })
}

/// True if the first leaf of `table`'s clustered index is already in the database's chunk
/// arena (read by a cursor, a point get or a kept [`for_each_leaf`] pass): a sign that its
/// leaves are warm and a cursor walk will not touch the files. Also true when the whole index
/// is one node (held in the table itself).
pub fn first_leaf_kept(db: &Database, table: &Table) -> Result<bool> {
    leaf_kept_at(db, table, 0)
}

/// True if the last leaf of `table`'s clustered index is in the database's chunk arena. With
/// [`first_leaf_kept`], the sign that a whole-table read is warm: a bulk pass whose budget ran
/// out ([`DoltChunkSource::set_bulk_keep_budget`]) kept the first leaves but not the last, and
/// a cursor walk over them would read the rest through the arena, keeping them past the
/// budget.
///
/// [`DoltChunkSource::set_bulk_keep_budget`]: crate::chunks::DoltChunkSource::set_bulk_keep_budget
pub fn last_leaf_kept(db: &Database, table: &Table) -> Result<bool> {
    let rows = table.primary_scan_map(db).count()?;
    leaf_kept_at(db, table, rows.saturating_sub(1))
}

/// [`first_leaf_kept`] for the leaf holding row `ordinal` (0: the first row): whether a read
/// that starts there finds its leaves warm. True past the last row.
pub fn leaf_kept_at(db: &Database, table: &Table, ordinal: u64) -> Result<bool> {
    let root =
        Node::verify(&table.primary_index).map_err(|e| bad_chunk(table.address, e.to_string()))?;
    if root.is_leaf() {
        return Ok(true);
    }
    let tree = |e: prollystore::TreeError| bad_chunk(table.address, e.to_string());
    let (mut leaves, _) = table
        .primary_scan_map(db)
        .leaves_from(ordinal)
        .map_err(tree)?;
    match leaves.next() {
        Some(leaf) => Ok(db.source().is_kept(&leaf.map_err(tree)?.0)),
        None => Ok(true),
    }
}

/// One part of a table's rows for [`for_each_part`]: where it lies, and the leaves that hold
/// its rows (with their row counts as their parent gives them).
type Part = (PartSpan, Vec<(Address, u64)>);

/// A part for a worker, or the walker's error met where this part would begin.
type PartJob = Result<Part>;

/// Where a part lies in the table.
#[derive(Clone, Copy, Debug, Default)]
struct PartSpan {
    index: u64,
    first_row: u64,
    rows: u64,
    /// Rows of the part's first leaf that belong to the part before it.
    skip: u64,
}

/// The rows of one part of a table, leaf by leaf ([`for_each_part`]): the leaves are read in
/// batched positioned reads, hash-checked, verified (and kept in the chunk arena if asked) as
/// [`PartLeaves::next_leaf`] reaches them, on the thread that builds the part.
pub struct PartLeaves<'p> {
    db: &'p Database,
    /// The table's address (for errors).
    table: Address,
    keep: bool,
    span: PartSpan,
    /// The part's leaves in key order, with their row counts.
    leaves: &'p [(Address, u64)],
    /// The next leaf of `leaves` to hand out (read into `batch`, at `in_batch`, once
    /// `in_batch < batch.n`).
    next: usize,
    /// The leaves read, and the next one of them to hand out.
    batch: &'p mut LeafBatch<()>,
    in_batch: usize,
    scratch: &'p mut Vec<u8>,
    /// Rows handed out so far.
    taken: u64,
}

impl<'p> PartLeaves<'p> {
    /// A part at its first leaf: `source` is the database, the table's address (for errors)
    /// and whether read leaves are kept in the chunk arena.
    fn new(
        source: (&'p Database, Address, bool),
        span: PartSpan,
        leaves: &'p [(Address, u64)],
        batch: &'p mut LeafBatch<()>,
        scratch: &'p mut Vec<u8>,
    ) -> PartLeaves<'p> {
        let (db, table, keep) = source;
        PartLeaves {
            db,
            table,
            keep,
            span,
            leaves,
            next: 0,
            batch,
            in_batch: 0,
            scratch,
            taken: 0,
        }
    }

    /// The part's number: parts are numbered from 0 in key order.
    pub fn index(&self) -> u64 {
        self.span.index
    }

    /// The table's row number (0: the first row) of the part's first row.
    pub fn first_row(&self) -> u64 {
        self.span.first_row
    }

    /// Rows in the part: the `part_rows` asked for, fewer in the last part.
    pub fn rows(&self) -> u64 {
        self.span.rows
    }

    /// The next leaf of the part and the range of its entries in the part, `None` after the
    /// last. The first and last leaves may hold rows of the neighbouring parts too, outside
    /// the range. An error if a leaf cannot be read or does not hold as many rows as its
    /// parent says.
    pub fn next_leaf(&mut self) -> Result<Option<(Node<'_>, std::ops::Range<usize>)>> {
        if self.taken >= self.span.rows {
            return Ok(None);
        }
        if self.in_batch >= self.batch.n {
            let rest = self.leaves.get(self.next..).unwrap_or_default();
            if rest.is_empty() {
                return Err(bad_chunk(
                    self.table,
                    format!(
                        "part {} of the rows ends at row {} of {}: its leaves hold fewer rows \
                         than their parents say",
                        self.span.index,
                        self.span.first_row + self.taken,
                        self.span.first_row + self.span.rows
                    ),
                ));
            }
            let n = rest.len().min(batch_len(self.db));
            self.batch.n = n;
            for (k, (address, _)) in rest.iter().take(n).enumerate() {
                match self.batch.leaves.get_mut(k) {
                    Some(leaf) => leaf.address = *address,
                    None => self.batch.leaves.push(LeafBuf {
                        address: *address,
                        ..LeafBuf::default()
                    }),
                }
            }
            read_batch(self.db, self.batch, self.scratch, self.keep)?;
            self.in_batch = 0;
        }
        let at = self.next;
        let counted = self.leaves.get(at).map_or(0, |(_, c)| *c);
        let leaf = self
            .batch
            .leaves
            .get(self.in_batch)
            .ok_or_else(|| bad_chunk(self.table, "leaf was not read"))?;
        let layout = leaf
            .layout
            .ok_or_else(|| bad_chunk(leaf.address, "leaf was not read"))?;
        // SAFETY: as in `LeafBatch::nodes`: the layout is of a verified view of these bytes.
        let node = unsafe { Node::from_verified(&leaf.bytes, layout) };
        if node.count() as u64 != counted {
            return Err(bad_chunk(
                leaf.address,
                format!(
                    "the leaf holds {} rows, its parent says {counted}",
                    node.count()
                ),
            ));
        }
        self.next += 1;
        self.in_batch += 1;
        let start = if at == 0 { self.span.skip } else { 0 };
        let end = counted.min(start + (self.span.rows - self.taken));
        self.taken += end.saturating_sub(start);
        Ok(Some((node, start as usize..end as usize)))
    }
}

/// What each worker of [`for_each_part`] does with a part: reads its leaves through the
/// [`PartLeaves`] and makes the part's result.
pub type PartWork<'w, P> = dyn Fn(&mut PartLeaves<'_>) -> Result<P> + Sync + 'w;

/// Parts in flight per worker (queued, being made, or made and waiting for the caller).
const PARTS_PER_WORKER: usize = 2;

/// Splits the rows of `table`'s clustered index into parts of `part_rows` rows in key order
/// (the last one fewer), has `threads` worker threads each make whole parts with `work` — the
/// part's leaves read and checked by the worker itself, as [`for_each_leaf`] reads them — and
/// hands the results to `take` on the calling thread in key order; `take` returns false to
/// stop early. A walker thread lists the leaves with their row counts from their parents and
/// queues the parts; each worker takes the next part when it is free (a worker slowed down by
/// the machine's other work does not hold the others up), and at most two parts per worker are
/// in flight. A leaf whose rows cross a part boundary is read by both parts' workers.
/// With `keep`, the leaves stay in the database's chunk arena (see [`for_each_leaf`]).
///
/// This spreads the work on the rows over the cores when the results must come in parts of a
/// set size (Arrow record batches), where [`for_each_leaf`] leaves it to one thread.
pub fn for_each_part<P: Send>(
    db: &Database,
    table: &Table,
    keep: bool,
    part_rows: u64,
    threads: usize,
    work: &PartWork<'_, P>,
    take: &mut dyn FnMut(P) -> Result<bool>,
) -> Result<()> {
    for_each_part_of(db, table, 0..u64::MAX, keep, part_rows, threads, work, take)
}

/// [`for_each_part`] over the rows at positions `rows` only (0: the table's first row; an end
/// past the last row stops there): the walker starts at the leaf holding `rows.start`, found
/// from the parents' counts, and parts are cut from `rows.start` on (a part of a table cut by
/// row counts, read cold).
#[allow(clippy::too_many_arguments)]
pub fn for_each_part_of<P: Send>(
    db: &Database,
    table: &Table,
    rows: std::ops::Range<u64>,
    keep: bool,
    part_rows: u64,
    threads: usize,
    work: &PartWork<'_, P>,
    take: &mut dyn FnMut(P) -> Result<bool>,
) -> Result<()> {
    if part_rows == 0 {
        return Err(DoltError::Refused(
            "parts of the rows must hold at least one row".into(),
        ));
    }
    let root =
        Node::verify(&table.primary_index).map_err(|e| bad_chunk(table.address, e.to_string()))?;
    if root.is_leaf() {
        // One node, held in the table: its parts are made here, in order.
        let leaves = [(table.address, root.count() as u64)];
        let mut batch = LeafBatch {
            seq: 0,
            n: 0,
            leaves: vec![LeafBuf {
                address: table.address,
                bytes: table.primary_index.to_vec(),
                layout: Some(root.layout()),
            }],
            out: (),
        };
        let mut scratch = Vec::new();
        let end = rows.end.min(root.count() as u64);
        let mut index = 0u64;
        while rows.start.saturating_add(index.saturating_mul(part_rows)) < end {
            let first_row = rows.start + index * part_rows;
            batch.n = 1;
            let span = PartSpan {
                index,
                first_row,
                rows: part_rows.min(end - first_row),
                skip: first_row,
            };
            let mut part = PartLeaves::new(
                (db, table.address, keep),
                span,
                &leaves,
                &mut batch,
                &mut scratch,
            );
            if !take(work(&mut part)?)? {
                break;
            }
            index += 1;
        }
        return Ok(());
    }
    let threads = threads.clamp(1, MAX_READERS);
    // Parts sent to the workers and not yet taken: queued, being made, or made and waiting.
    let window = threads * PARTS_PER_WORKER;
    let (job_tx, job_rx) = std::sync::mpsc::channel::<(u64, PartJob)>();
    let job_rx = std::sync::Mutex::new(job_rx);
    let job_rx = &job_rx;
    std::thread::scope(|s| {
        // One credit per part the walker may send ahead of the caller.
        let (credit_tx, credit_rx) = std::sync::mpsc::channel::<()>();
        for _ in 0..window {
            let _ = credit_tx.send(());
        }
        let (done_tx, done_rx) = std::sync::mpsc::channel::<(u64, Result<P>)>();
        for _ in 0..threads {
            let done = done_tx.clone();
            s.spawn(move || {
                let mut batch = LeafBatch::<()>::default();
                let mut scratch = Vec::new();
                loop {
                    let job = match job_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => break,
                    };
                    let Ok((index, job)) = job else { break };
                    let r = job.and_then(|(span, leaves)| {
                        // A panic here would be a bug; caught, it becomes this part's error
                        // instead of a part that never comes.
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            batch.n = 0;
                            let mut part = PartLeaves::new(
                                (db, table.address, keep),
                                span,
                                &leaves,
                                &mut batch,
                                &mut scratch,
                            );
                            work(&mut part)
                        }))
                        .unwrap_or_else(|_| {
                            Err(bad_chunk(
                                table.address,
                                "internal error (a bug) while making a part of the rows",
                            ))
                        })
                    });
                    let failed = r.is_err();
                    if done.send((index, r)).is_err() || failed {
                        break;
                    }
                }
            });
        }
        drop(done_tx);
        s.spawn(move || {
            let mut index = 0u64;
            let mut send = |job: PartJob| -> bool {
                if credit_rx.recv().is_err() {
                    return false;
                }
                let sent = job_tx.send((index, job)).is_ok();
                index += 1;
                sent
            };
            if let Err(e) = send_parts(db, table, &rows, part_rows, &mut |job| send(Ok(job))) {
                // After every part before it, so the caller meets it in order.
                send(Err(e));
            }
        });
        // Parts arrive in any order; `pending` holds the early ones (at most `window`).
        let mut pending: Vec<(u64, Result<P>)> = Vec::with_capacity(window + 1);
        let mut next = 0u64;
        for done in done_rx {
            pending.push(done);
            while let Some(at) = pending.iter().position(|(index, _)| *index == next) {
                let (_, r) = pending.swap_remove(at);
                if !take(r?)? {
                    // Returning drops the credits and the results: the walker and the
                    // workers stop.
                    return Ok(());
                }
                next += 1;
                let _ = credit_tx.send(());
            }
        }
        match pending.first() {
            None => Ok(()),
            Some((index, _)) => Err(bad_chunk(
                table.address,
                format!("part {next} of the rows never arrived (part {index} did)"),
            )),
        }
    })
}

/// Lists the leaves of `table`'s clustered index that hold the rows at positions `rows`, in key
/// order with their row counts (from their level-1 parents; no leaf is loaded), and sends them
/// to `send` in parts of `part_rows` rows from `rows.start` on. Returns `Ok(())` also when
/// `send` returns false (the caller stopped).
fn send_parts(
    db: &Database,
    table: &Table,
    rows: &std::ops::Range<u64>,
    part_rows: u64,
    send: &mut dyn FnMut(Part) -> bool,
) -> Result<()> {
    let mut span = PartSpan::default();
    let mut leaves: Vec<(Address, u64)> = Vec::new();
    let tree = |e: prollystore::TreeError| bad_chunk(table.address, e.to_string());
    // Rows before the current leaf.
    let (walk, mut at) = table
        .primary_scan_map(db)
        .leaves_from(rows.start)
        .map_err(tree)?;
    for leaf in walk {
        if at >= rows.end {
            break;
        }
        let (address, count) = leaf.map_err(tree)?;
        let end = at.saturating_add(count);
        // The leaf's rows, part by part.
        let mut from = at.max(rows.start);
        while from < end.min(rows.end) {
            if leaves.is_empty() {
                span.first_row = rows.start + span.index.saturating_mul(part_rows);
                span.skip = span.first_row - at;
            }
            leaves.push((address, count));
            let part_end = span.first_row.saturating_add(part_rows).min(rows.end);
            if end < part_end {
                break;
            }
            span.rows = part_end - span.first_row;
            if !send((span, std::mem::take(&mut leaves))) {
                return Ok(());
            }
            span.index += 1;
            from = part_end;
        }
        at = end;
    }
    if !leaves.is_empty() {
        span.rows = at.min(rows.end) - span.first_row;
        send((span, leaves));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::*;
    use crate::chunks::{DoltChunkSource, FetchChunks};
    use crate::write::{ColumnDef, CommitMeta, DoltWriter, TableDef};
    use crate::{SqlValue, State, Table};

    /// Chunks fetched from a local database, counting the calls and the chunks asked for.
    #[derive(Debug)]
    struct Counting {
        db: Database,
        calls: AtomicUsize,
        chunks: AtomicUsize,
    }

    impl FetchChunks for Counting {
        fn name(&self) -> &str {
            "counting"
        }
        fn fetch(&self, addresses: &[Address]) -> Result<Vec<Option<Arc<[u8]>>>> {
            self.calls.fetch_add(1, Ordering::Relaxed);
            self.chunks.fetch_add(addresses.len(), Ordering::Relaxed);
            addresses
                .iter()
                .map(|a| self.db.source().read_uncached(a))
                .collect()
        }
    }

    /// A copy of the vectors' `vecdb` in `parent` with table `name` (`id INT` key, `body`
    /// text of `width` characters) of `rows` rows committed on `main`.
    fn with_table(parent: &Path, name: &str, rows: i64, width: usize) -> PathBuf {
        let dir = prollystore_test_vectors::writable_copy("dolt-db/vecdb", parent).unwrap();
        let mut w = DoltWriter::open(&dir).unwrap();
        let column = |name: &str, sql_type: String| ColumnDef {
            name: name.into(),
            sql_type,
            nullable: name != "id",
            default: None,
            auto_increment: false,
            comment: None,
            tag: None,
            generated: None,
        };
        let def = TableDef {
            name: name.into(),
            columns: vec![
                column("id", "int".into()),
                column("body", format!("varchar({width})")),
            ],
            primary_key: vec!["id".into()],
            ..TableDef::default()
        };
        w.create_table(&def).unwrap();
        let rows: Vec<Vec<SqlValue>> = (0..rows)
            .map(|i| vec![SqlValue::Int(i), SqlValue::Text(format!("{i:0>width$}"))])
            .collect();
        w.insert(name, &["id", "body"], &rows).unwrap();
        w.commit(&CommitMeta::at(
            "T",
            "t@example.com",
            name,
            1_800_000_000_000,
        ))
        .unwrap();
        dir
    }

    /// A kept bulk read leaves each leaf in the arena with the layout it verified, so the
    /// first cursor pass does not verify it again; the cursor then reads the same entries. A
    /// store set not to keep bulk reads keeps none.
    #[test]
    fn kept_leaves_stay_verified() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = with_table(tmp.path(), "kept", 3_000, 60);

        // The leaves' addresses, found on a handle of their own.
        let other = Database::open(&dir).unwrap();
        let root = other.root_at("main", State::Committed).unwrap();
        let table = other.table(&root, "kept").unwrap();
        let leaves: Vec<Address> = table
            .primary_scan_map(&other)
            .leaves()
            .unwrap()
            .map(|l| l.unwrap().0)
            .collect();
        assert!(leaves.len() > 2, "{} leaves", leaves.len());

        let db = Database::open(&dir).unwrap();
        let root = db.root_at("main", State::Committed).unwrap();
        let table = db.table(&root, "kept").unwrap();
        let mut bulk = Vec::new();
        for_each_leaf(&db, &table, true, &mut |node| {
            bulk.extend((0..node.count()).map(|e| node.key(e).to_vec()));
            Ok(true)
        })
        .unwrap();
        for a in &leaves {
            assert!(db.source().kept_verified(a), "leaf {a} kept unverified");
        }
        let map = table.primary_scan_map(&db);
        let mut cursor = map.seek_ordinal(0).unwrap();
        let mut walked = Vec::new();
        while cursor.valid() {
            walked.push(cursor.key().to_vec());
            cursor.advance(db.source()).unwrap();
        }
        assert_eq!(walked, bulk);

        // A store told not to keep bulk reads keeps none of them.
        let db = Database::open(&dir).unwrap();
        db.source().set_keep_bulk_reads(false);
        let root = db.root_at("main", State::Committed).unwrap();
        let table = db.table(&root, "kept").unwrap();
        let mut again = Vec::new();
        for_each_leaf(&db, &table, true, &mut |node| {
            again.extend((0..node.count()).map(|e| node.key(e).to_vec()));
            Ok(true)
        })
        .unwrap();
        assert_eq!(again, bulk);
        assert!(leaves.iter().all(|a| !db.source().is_kept(a)));
    }

    /// A budget bounds what bulk passes keep: the kept leaves come to at most the budget plus
    /// the one that crosses it, every pass reads the same rows as a pass keeping nothing, and
    /// later passes keep nothing more. Budget 0 keeps nothing; clearing the arena resets the
    /// count. Tree reads are not counted.
    #[test]
    fn a_budget_bounds_the_leaves_bulk_reads_keep() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = with_table(tmp.path(), "budget", 3_000, 60);
        let rows = |db: &Database, table: &Table| {
            let mut keys = Vec::new();
            for_each_leaf(db, table, true, &mut |node| {
                keys.extend((0..node.count()).map(|e| node.key(e).to_vec()));
                Ok(true)
            })
            .unwrap();
            keys
        };
        let open = |budget: u64| {
            let db = Database::open(&dir).unwrap();
            db.source().set_bulk_keep_budget(budget);
            let root = db.root_at("main", State::Committed).unwrap();
            let table = db.table(&root, "budget").unwrap();
            (db, table)
        };

        // The leaves and their sizes, and the rows, from a handle that keeps nothing.
        let (cold, table) = open(0);
        assert!(!cold.source().keeps_bulk_reads());
        let want = rows(&cold, &table);
        assert_eq!(want.len(), 3_000);
        let leaves: Vec<(Address, u64)> = table
            .primary_scan_map(&cold)
            .leaves()
            .unwrap()
            .map(|l| {
                let a = l.unwrap().0;
                let chunk = cold.source().read_uncached(&a).unwrap().unwrap();
                (a, chunk.len() as u64)
            })
            .collect();
        assert!(leaves.len() > 8, "{} leaves", leaves.len());
        assert_eq!(cold.source().bulk_kept_bytes(), 0);
        assert!(leaves.iter().all(|(a, _)| !cold.source().is_kept(a)));

        let total: u64 = leaves.iter().map(|(_, len)| len).sum();
        let largest = leaves.iter().map(|(_, len)| *len).max().unwrap();
        let budget = total / 3;
        let (db, table) = open(budget);
        assert_eq!(db.source().bulk_keep_budget(), budget);
        let kept_bytes = |db: &Database| -> u64 {
            let kept = leaves.iter().filter(|(a, _)| db.source().is_kept(a));
            kept.map(|(_, len)| len).sum()
        };
        for pass in 0..2 {
            assert_eq!(rows(&db, &table), want, "pass {pass}");
            let kept = db.source().bulk_kept_bytes();
            assert!(
                kept >= budget && kept < budget + largest,
                "pass {pass}: {kept}"
            );
            assert_eq!(kept_bytes(&db), kept, "pass {pass}");
        }
        assert!(!db.source().is_kept(&leaves[leaves.len() - 1].0));
        assert!(!last_leaf_kept(&db, &table).unwrap());

        // With the default budget everything is kept, and a cursor read counts nothing.
        let (warm, table) = open(0);
        warm.source().set_keep_bulk_reads(true);
        assert!(warm.source().bulk_keep_budget() >= total);
        assert_eq!(rows(&warm, &table), want);
        assert_eq!(warm.source().bulk_kept_bytes(), total);
        assert!(last_leaf_kept(&warm, &table).unwrap());
        let (tree, table) = open(0);
        let map = table.primary_scan_map(&tree);
        let mut cursor = map.seek_ordinal(0).unwrap();
        while cursor.valid() {
            cursor.advance(tree.source()).unwrap();
        }
        assert_eq!(kept_bytes(&tree), total);
        assert_eq!(tree.source().bulk_kept_bytes(), 0);

        // Clearing the arena drops the kept leaves and their count.
        let mut source = DoltChunkSource::open(dir.join(".dolt/noms")).unwrap();
        source.set_bulk_keep_budget(u64::MAX);
        for (a, _) in &leaves {
            let chunk = source.read_uncached(a).unwrap().unwrap();
            source.keep_verified(*a, &Node::verify(&chunk).unwrap());
        }
        assert_eq!(source.bulk_kept_bytes(), total);
        source.clear_arena();
        assert_eq!(source.bulk_kept_bytes(), 0);
        assert!(leaves.iter().all(|(a, _)| !source.is_kept(a)));
    }

    /// A table tall enough for several windows of level-1 parents (its root at level 2 or
    /// more), read through a fetcher: the leaves come in batches and their parents in windows
    /// (at most half as many fetches as a parent at a time would take), and the entries are the
    /// local ones.
    #[test]
    fn fetched_leaves_and_their_parents_come_in_batches() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = with_table(tmp.path(), "tall", 20_000, 900);

        let local = Database::open(&dir).unwrap();
        let root = local.root_at("main", State::Committed).unwrap();
        let table = local.table(&root, "tall").unwrap();
        let map = table.primary_scan_map(&local);
        assert!(
            map.height().unwrap() >= 2,
            "the table needs level-1 parents to fetch"
        );
        let parents = map.nodes_at(1).unwrap().count();
        let leaves = map.leaves().unwrap().count();
        let entries = |db: &Database, t: &Table| {
            let mut out = Vec::new();
            for_each_leaf(db, t, false, &mut |node| {
                out.extend((0..node.count()).map(|e| node.key(e).to_vec()));
                Ok(true)
            })
            .unwrap();
            out
        };
        let want = entries(&local, &table);
        assert_eq!(want.len(), 20_000);

        let fetcher = Arc::new(Counting {
            db: Database::open(&dir).unwrap(),
            calls: AtomicUsize::new(0),
            chunks: AtomicUsize::new(0),
        });
        let source = DoltChunkSource::fetched(local.source().root(), fetcher.clone()).unwrap();
        let remote = Database::from_source("counting", source);
        let root = remote.root_at("main", State::Committed).unwrap();
        let t = remote.table(&root, "tall").unwrap();
        let before = fetcher.calls.load(Ordering::Relaxed);
        assert_eq!(entries(&remote, &t), want);
        let calls = fetcher.calls.load(Ordering::Relaxed) - before;
        let batches = leaves.div_ceil(FETCHED_BATCH);
        assert!(
            calls <= batches + parents / 2,
            "{calls} fetches for {leaves} leaves ({batches} batches) under {parents} parents"
        );
    }
}
