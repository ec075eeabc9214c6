//! Chunk messages: Dolt's 4-byte prefix (kind byte 0x1B, u24 big-endian body length) followed by
//! a FlatBuffers body whose file identifier names the table.
//!
//! * [`Node`] (`TUPM`, `ProllyTreeNode`): row-map and index nodes; [`NodeWriter`] writes them.
//! * [`BlobNode`] (`BLOB`): pieces of large values; [`BlobWriter`] writes them.
//! * [`AddressMapNode`] (`ADRM`): name → address maps; [`AddressMapWriter`] writes them.
//! * [`CommitClosureNode`] (`CMCL`): commit-ancestry sets.
//! * [`Message::verify`] dispatches on the file identifier.
//!
//! Views can only be made by verification: prefix, file identifier, the FlatBuffers verifier
//! (a fresh verifier per chunk, with tight limits), then structural checks specific to each
//! table. After that, accessors read cached positions and never allocate or fail. Writers
//! reproduce the Go FlatBuffers builder and Dolt's call order, so equal content gives equal
//! bytes (and addresses) to Dolt's.
//!
//! Forward compatibility: like Dolt's generated Go readers, a table whose vtable declares more
//! fields than the schema knows is rejected ([`MessageError::UnknownFields`]), so a newer
//! writer's optional fields are never silently ignored.

mod address_map;
mod blob;
mod builder;
mod commit_closure;
mod error;
pub mod generated;
mod node;
mod table;

pub use address_map::{AddressMapNode, AddressMapWriter};
pub use blob::{BlobNode, BlobWriter};
pub use commit_closure::{CommitClosureNode, CommitClosureWriter, COMMIT_CLOSURE_KEY_LEN};
pub use error::MessageError;
pub use node::{InternalInput, LeafInput, Node, NodeLayout, NodeWriter, SubtreeCounts};

use builder::{MESSAGE_KIND, PREFIX_LEN};

/// The file identifier of `ProllyTreeNode` chunks.
pub const FILE_ID_PROLLY: &[u8; 4] = b"TUPM";
/// The file identifier of `Blob` chunks.
pub const FILE_ID_BLOB: &[u8; 4] = b"BLOB";
/// The file identifier of `AddressMap` chunks.
pub const FILE_ID_ADDRESS_MAP: &[u8; 4] = b"ADRM";
/// The file identifier of `CommitClosure` chunks.
pub const FILE_ID_COMMIT_CLOSURE: &[u8; 4] = b"CMCL";

/// The file identifier of a message chunk (bytes 8..12), after checking the 4-byte prefix.
///
/// Lets a reader decide how to open a chunk before verifying it.
pub fn file_id(chunk: &[u8]) -> Result<[u8; 4], MessageError> {
    body(chunk)?;
    let id: [u8; 4] = chunk
        .get(8..12)
        .and_then(|b| b.try_into().ok())
        .ok_or(MessageError::TooShort { len: chunk.len() })?;
    Ok(id)
}

/// Checks the prefix and returns the FlatBuffers body (`chunk[4..]`).
fn body(chunk: &[u8]) -> Result<&[u8], MessageError> {
    if chunk.len() < 12 {
        return Err(MessageError::TooShort { len: chunk.len() });
    }
    let (prefix, body) = chunk.split_at(PREFIX_LEN);
    if prefix[0] != MESSAGE_KIND {
        return Err(MessageError::BadKind { byte: prefix[0] });
    }
    let declared =
        (usize::from(prefix[1]) << 16) | (usize::from(prefix[2]) << 8) | usize::from(prefix[3]);
    if declared != body.len() {
        return Err(MessageError::LengthMismatch {
            declared,
            actual: body.len(),
        });
    }
    Ok(body)
}

/// Checks the prefix and that the file identifier is `expected`; returns the body.
fn body_with_id<'a>(chunk: &'a [u8], expected: &'static [u8; 4]) -> Result<&'a [u8], MessageError> {
    let body = body(chunk)?;
    let found = body.get(4..8).unwrap_or(&[]);
    if found != expected {
        return Err(MessageError::WrongFileId {
            expected: id_text(expected),
            found: String::from_utf8_lossy(found).into_owned(),
        });
    }
    Ok(body)
}

fn id_text(id: &'static [u8; 4]) -> &'static str {
    std::str::from_utf8(id).unwrap_or("????")
}

/// Limits for the FlatBuffers verifier: every message here is one flat table.
fn verifier_options() -> flatbuffers::VerifierOptions {
    flatbuffers::VerifierOptions {
        max_depth: 8,
        max_tables: 16,
        max_apparent_size: 1 << 26,
        ignore_missing_null_terminator: false,
    }
}

/// Runs the generated FlatBuffers verifier for table `T` over `body`.
fn run_verifier<'a, T>(body: &'a [u8], table: &'static str) -> Result<(), MessageError>
where
    T: flatbuffers::Follow<'a> + flatbuffers::Verifiable + 'a,
{
    flatbuffers::root_with_opts::<T>(&verifier_options(), body)
        .map(|_| ())
        .map_err(|e| MessageError::FlatBuffers {
            table,
            detail: e.to_string(),
        })
}

/// Checks an offsets vector (n+1 little-endian u16: 0, non-decreasing, ending at `items_len`)
/// and returns n.
fn check_offsets(
    offsets: &[u8],
    items_len: usize,
    field: &'static str,
) -> Result<usize, MessageError> {
    let entries = offsets.len() / 2;
    if entries == 0 {
        return Err(MessageError::CountMismatch {
            field,
            expected: 1,
            found: 0,
        });
    }
    let mut prev = 0usize;
    for (index, pair) in offsets.chunks_exact(2).enumerate() {
        let value = usize::from(u16::from_le_bytes([pair[0], pair[1]]));
        if index == 0 && value != 0 {
            return Err(MessageError::BadOffset {
                field,
                index,
                value,
                reason: "the first offset must be 0",
            });
        }
        if value < prev {
            return Err(MessageError::BadOffset {
                field,
                index,
                value,
                reason: "offsets must not decrease",
            });
        }
        prev = value;
    }
    if prev != items_len {
        return Err(MessageError::BadOffset {
            field,
            index: entries - 1,
            value: prev,
            reason: "the last offset must equal the length of the items",
        });
    }
    Ok(entries - 1)
}

/// Decodes subtree-count varints: exactly `n` of them, all bytes consumed, summing to `total`.
fn check_counts(
    bytes: &[u8],
    n: usize,
    total: u64,
    field: &'static str,
) -> Result<(), MessageError> {
    let mut pos = 0usize;
    let mut prev = 0u64;
    let mut sum = 0u64;
    for _ in 0..n {
        let rest = bytes.get(pos..).unwrap_or(&[]);
        let Some((delta, used)) = crate::varint::get_signed(rest) else {
            return Err(MessageError::BadCounts {
                field,
                offset: pos,
                reason: "malformed or missing varint",
            });
        };
        pos += used;
        prev = prev.wrapping_add(delta as u64);
        sum = sum.checked_add(prev).ok_or(MessageError::BadCounts {
            field,
            offset: pos,
            reason: "counts overflow u64",
        })?;
    }
    if pos != bytes.len() {
        return Err(MessageError::BadCounts {
            field,
            offset: pos,
            reason: "bytes left after one count per child",
        });
    }
    if sum != total {
        return Err(MessageError::CountMismatch {
            field: "tree_count (sum of subtree counts)",
            expected: sum,
            found: total,
        });
    }
    Ok(())
}

/// Checks writer-side offsets (n+1 entries from 0, non-decreasing, ending at `items_len`).
fn check_input_offsets(
    offsets: &[u16],
    items_len: usize,
    field: &'static str,
) -> Result<usize, MessageError> {
    if items_len > usize::from(u16::MAX) {
        return Err(MessageError::TooLarge {
            field,
            len: items_len,
            max: usize::from(u16::MAX),
        });
    }
    let bad = |reason| MessageError::BadInput { field, reason };
    let (&first, _) = offsets
        .split_first()
        .ok_or(bad("needs n+1 offsets (at least one)"))?;
    if first != 0 {
        return Err(bad("the first offset must be 0"));
    }
    if offsets.windows(2).any(|w| w[1] < w[0]) {
        return Err(bad("offsets must not decrease"));
    }
    if offsets.last().map(|&l| usize::from(l)) != Some(items_len) {
        return Err(bad("the last offset must equal the items' length"));
    }
    Ok(offsets.len() - 1)
}

/// Any verified message, by file identifier.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Message<'a> {
    /// `TUPM`.
    ProllyTree(Node<'a>),
    /// `BLOB`.
    Blob(BlobNode<'a>),
    /// `ADRM`.
    AddressMap(AddressMapNode<'a>),
    /// `CMCL`.
    CommitClosure(CommitClosureNode<'a>),
}

impl<'a> Message<'a> {
    /// Verifies a chunk of any supported kind. Unknown identifiers give
    /// [`MessageError::UnknownFileId`].
    pub fn verify(chunk: &'a [u8]) -> Result<Message<'a>, MessageError> {
        let id = file_id(chunk)?;
        match &id {
            FILE_ID_PROLLY => Node::verify(chunk).map(Message::ProllyTree),
            FILE_ID_BLOB => BlobNode::verify(chunk).map(Message::Blob),
            FILE_ID_ADDRESS_MAP => AddressMapNode::verify(chunk).map(Message::AddressMap),
            FILE_ID_COMMIT_CLOSURE => CommitClosureNode::verify(chunk).map(Message::CommitClosure),
            _ => Err(MessageError::UnknownFileId {
                found: String::from_utf8_lossy(&id).into_owned(),
            }),
        }
    }

    /// The chunk's bytes.
    pub fn chunk(&self) -> &'a [u8] {
        match self {
            Message::ProllyTree(n) => n.chunk(),
            Message::Blob(n) => n.chunk(),
            Message::AddressMap(n) => n.chunk(),
            Message::CommitClosure(n) => n.chunk(),
        }
    }

    /// Tree level (0 = leaf).
    pub fn level(&self) -> u8 {
        match self {
            Message::ProllyTree(n) => n.level(),
            Message::Blob(n) => n.level(),
            Message::AddressMap(n) => n.level(),
            Message::CommitClosure(n) => n.level(),
        }
    }

    /// Every chunk address this message references (children, and out-of-band values of
    /// leaves), in stored order. For reachability walks (GC, pull, fsck).
    pub fn for_each_ref(&self, mut f: impl FnMut(crate::Address)) {
        match self {
            Message::ProllyTree(n) => {
                if n.is_leaf() {
                    for off in n.value_address_offsets() {
                        let at = usize::from(off);
                        let bytes = n.value_items().get(at..at + crate::ADDRESS_LEN);
                        if let Some(a) = bytes.and_then(crate::Address::from_slice) {
                            f(a)
                        }
                    }
                } else {
                    (0..n.count()).for_each(|i| f(n.child(i)));
                }
            }
            Message::Blob(n) => (0..n.child_count()).for_each(|i| f(n.child(i))),
            Message::AddressMap(n) => (0..n.count()).for_each(|i| f(n.address(i))),
            Message::CommitClosure(n) => (0..n.child_count()).for_each(|i| f(n.child(i))),
        }
    }
}

#[cfg(test)]
mod tests;
