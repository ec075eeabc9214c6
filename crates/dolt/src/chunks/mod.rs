//! Chunk sources: every on-disk form Dolt keeps chunks in, read-only.
//!
//! * [`manifest`]: the manifest naming a generation's chunk files and the root.
//! * [`journal`]: the chunk journal and `journal.idx`.
//! * [`journal_record`]: the journal's record layout, encoded and decoded.
//! * [`table_file`]: classic NBS table files.
//! * [`archive`]: `.darc` archives (snappy and zstd-with-dictionary chunks).
//! * [`codec`]: snappy‖CRC and zstd decoding, positioned file reads.
//! * [`source`]: [`DoltChunkSource`], both generations behind one read-only store.
//! * [`keep_budget`]: how many bytes of bulk-read leaves a store keeps by default.
//! * [`fetched`]: [`FetchChunks`], chunks fetched on demand (a remote read in place) behind
//!   the same store.

pub mod archive;
pub mod codec;
pub mod fetched;
pub mod journal;
pub mod journal_record;
pub mod keep_budget;
pub mod manifest;
pub mod source;
pub mod table_file;

pub use fetched::{check_chunks, FetchChunks};
pub use source::{ChunkFile, DoltChunkSource, Generation};
