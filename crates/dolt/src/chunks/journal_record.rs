//! The chunk journal's record layout, in one place: the tags, kinds, lengths and checksums of
//! Dolt's `journal_record.go`, with the encoder the appender uses ([`chunk_record`],
//! [`root_record`]) and the decoder the reader uses ([`frame`], [`decode`]).
//!
//! A record is `length (u32 BE, the whole record) ‖ fields ‖ CRC-32C (u32 BE) of what precedes
//! it`. Fields are a one-byte tag and a value: kind (1 byte), address (20 bytes), timestamp (u64
//! BE Unix seconds) or payload (the rest of the record before the CRC). Dolt writes a chunk
//! record as kind, address, payload (a snappy block ‖ CRC-32C of it) and a root record as kind,
//! timestamp, address.
//!
//! Decoding never panics, whatever the bytes.

use prollystore_format::Address;

use super::codec::{be_u32, be_u64};
use crate::error::{corrupt, encode, DoltError, Result};

/// Field tag: the record kind (`kindJournalRecTag`).
pub const TAG_KIND: u8 = 1;
/// Field tag: a chunk or root address.
pub const TAG_ADDRESS: u8 = 2;
/// Field tag: the payload, running to the CRC.
pub const TAG_PAYLOAD: u8 = 3;
/// Field tag: a Unix-seconds timestamp.
pub const TAG_TIMESTAMP: u8 = 4;
/// Record kind: a root update.
pub const KIND_ROOT: u8 = 1;
/// Record kind: a chunk.
pub const KIND_CHUNK: u8 = 2;

/// Largest record Dolt reads or writes (its journal writer's buffer size).
pub const MAX_RECORD_LEN: u32 = 5 * 1024 * 1024;
/// Smallest length Dolt checksums (a length and a CRC); shorter ones are damage.
pub const MIN_RECORD_LEN: u32 = 8;
/// Size of a root record (`rootHashRecordSize`): length, kind, timestamp, address, CRC.
pub const ROOT_RECORD_LEN: usize = 4 + 2 + 9 + 21 + 4;
/// Bytes of a chunk record besides its compressed chunk: length, kind, address, payload tag,
/// the payload's CRC, the record's CRC.
pub const CHUNK_RECORD_OVERHEAD: usize = 4 + 2 + 21 + 1 + 4 + 4;
/// Offset of the payload in a chunk record as Dolt writes it.
pub const CHUNK_PAYLOAD_AT: usize = 4 + 2 + 21 + 1;

/// Why no record could be framed at a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScanStop {
    /// Reached the end of the bytes exactly after a record.
    End,
    /// A zero length: the rest is pre-allocated zeros.
    ZeroLength,
    /// The last record is incomplete (being written, or cut off).
    TruncatedTail,
    /// A record's CRC does not match.
    BadChecksum,
    /// A record's length is below [`MIN_RECORD_LEN`] or above [`MAX_RECORD_LEN`].
    BadLength,
}

impl ScanStop {
    /// Words for error messages.
    pub fn describe(&self) -> &'static str {
        match self {
            ScanStop::End => "the end of the file",
            ScanStop::ZeroLength => "a zero record length",
            ScanStop::TruncatedTail => "a record cut short by the end of the file",
            ScanStop::BadChecksum => "a record whose CRC-32C does not match",
            ScanStop::BadLength => "a record length out of range",
        }
    }
}

/// The complete, checksummed record at the start of `bytes` (length through CRC), or why there
/// is none — Dolt's `validateJournalRecord` with the length checks before it.
pub fn frame(bytes: &[u8]) -> std::result::Result<&[u8], ScanStop> {
    let len = be_u32(bytes, 0).ok_or(ScanStop::TruncatedTail)?;
    if len == 0 {
        return Err(ScanStop::ZeroLength);
    }
    if len > MAX_RECORD_LEN {
        return Err(ScanStop::BadLength);
    }
    let record = bytes.get(..len as usize).ok_or(ScanStop::TruncatedTail)?;
    if len < MIN_RECORD_LEN {
        return Err(ScanStop::BadLength);
    }
    let body_end = record.len() - 4;
    match (record.get(..body_end), be_u32(record, body_end)) {
        (Some(body), Some(stored)) if crc32c::crc32c(body) == stored => Ok(record),
        _ => Err(ScanStop::BadChecksum),
    }
}

/// What is wrong inside a framed record (its CRC matched): where, and why. Reading a journal
/// turns it into [`DoltError::Corrupt`] with the file and the record's offset
/// ([`RecordError::in_file`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{why} (offset {offset} of the record)")]
pub struct RecordError {
    /// Offset of the fault within the record (0: the record as a whole).
    pub offset: u64,
    /// What is wrong.
    pub why: RecordFault,
}

/// What is wrong with a record (see [`RecordError`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordFault {
    /// A field runs into the CRC: `"kind"`, `"address"` or `"timestamp"`.
    #[error("{0} field cut short")]
    FieldCut(&'static str),
    /// A field tag Dolt does not write.
    #[error("unknown record field tag {0}")]
    UnknownTag(u8),
    /// A record kind other than chunk and root.
    #[error("unknown record kind {0}")]
    UnknownKind(u8),
    /// A chunk record without its address or payload, or a root record without its address
    /// (or with a payload).
    #[error("record lacks a required field")]
    MissingField,
}

impl RecordError {
    fn new(offset: u64, why: RecordFault) -> RecordError {
        RecordError { offset, why }
    }

    /// The corruption of `file` this is, for the record at offset `record_at` of the file.
    pub fn in_file(self, file: &str, record_at: u64) -> DoltError {
        corrupt(file, record_at + self.offset, self.why.to_string())
    }
}

/// A record's fields as Dolt's `readJournalRecord` reads them, before any check of which are
/// there: each is the last one of its tag.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fields {
    /// The kind byte.
    pub kind: Option<u8>,
    /// The address.
    pub address: Option<Address>,
    /// The timestamp, Unix seconds.
    pub timestamp: Option<u64>,
    /// The payload's offset within the record and its length.
    pub payload: Option<(u64, u32)>,
}

/// Reads the fields of a framed `record` (length through CRC). Errors: an unknown tag, or a
/// field cut short by the CRC.
pub fn fields(record: &[u8]) -> std::result::Result<Fields, RecordError> {
    let body = record.get(..record.len().saturating_sub(4)).unwrap_or(&[]);
    let mut out = Fields::default();
    let mut p = 4usize;
    while p < body.len() {
        let tag = body.get(p).copied().unwrap_or(0);
        let field_at = p as u64;
        let cut = |what: &'static str| RecordError::new(field_at, RecordFault::FieldCut(what));
        p += 1;
        match tag {
            TAG_KIND => {
                out.kind = Some(*body.get(p).ok_or_else(|| cut("kind"))?);
                p += 1;
            }
            TAG_ADDRESS => {
                let a = body
                    .get(p..p + 20)
                    .and_then(Address::from_slice)
                    .ok_or_else(|| cut("address"))?;
                out.address = Some(a);
                p += 20;
            }
            TAG_PAYLOAD => {
                out.payload = Some((p as u64, (body.len() - p) as u32));
                p = body.len();
            }
            TAG_TIMESTAMP => {
                out.timestamp = Some(be_u64(body, p).ok_or_else(|| cut("timestamp"))?);
                p += 8;
            }
            t => return Err(RecordError::new(field_at, RecordFault::UnknownTag(t))),
        }
    }
    Ok(out)
}

/// One decoded record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
    /// A chunk: its address, and its payload's offset within the record and length.
    Chunk {
        /// The chunk's address.
        address: Address,
        /// Offset of the payload (snappy ‖ CRC) within the record.
        payload_at: u64,
        /// Length of the payload.
        payload_len: u32,
    },
    /// A root update and its timestamp.
    Root {
        /// The store root after this update.
        root: Address,
        /// Unix seconds, if the record has a timestamp.
        timestamp: Option<u64>,
    },
}

/// Decodes a framed `record` (length through CRC, as [`frame`] gives it).
pub fn decode(record: &[u8]) -> std::result::Result<Record, RecordError> {
    // The two layouts Dolt (and our encoder) write, recognized whole: the same results as the
    // field walk below gives for them, without it (opening a journal decodes every record).
    let body_len = record.len().saturating_sub(4);
    match record.get(4..7) {
        Some(&[TAG_KIND, KIND_CHUNK, TAG_ADDRESS])
            if body_len >= CHUNK_PAYLOAD_AT && record.get(27) == Some(&TAG_PAYLOAD) =>
        {
            if let Some(address) = record.get(7..27).and_then(Address::from_slice) {
                return Ok(Record::Chunk {
                    address,
                    payload_at: CHUNK_PAYLOAD_AT as u64,
                    payload_len: (body_len - CHUNK_PAYLOAD_AT) as u32,
                });
            }
        }
        Some(&[TAG_KIND, KIND_ROOT, TAG_TIMESTAMP])
            if record.len() == ROOT_RECORD_LEN && record.get(15) == Some(&TAG_ADDRESS) =>
        {
            if let Some(root) = record.get(16..36).and_then(Address::from_slice) {
                return Ok(Record::Root {
                    root,
                    timestamp: be_u64(record, 7),
                });
            }
        }
        _ => {}
    }
    let f = fields(record)?;
    match (f.kind, f.address, f.payload) {
        (Some(KIND_CHUNK), Some(address), Some((payload_at, payload_len))) => Ok(Record::Chunk {
            address,
            payload_at,
            payload_len,
        }),
        (Some(KIND_ROOT), Some(root), None) => Ok(Record::Root {
            root,
            timestamp: f.timestamp,
        }),
        (Some(k), _, _) if k != KIND_ROOT && k != KIND_CHUNK => {
            Err(RecordError::new(4, RecordFault::UnknownKind(k)))
        }
        _ => Err(RecordError::new(0, RecordFault::MissingField)),
    }
}

/// Appends the record of a chunk stored under `address` to `out`, laid out as Dolt's
/// `writeChunkRecord`: length, kind, address, payload (snappy block ‖ CRC-32C of it), CRC-32C.
/// The chunk is compressed straight into `out`.
pub fn chunk_record(address: Address, chunk: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let start = out.len();
    let max = snap::raw::max_compress_len(chunk.len());
    out.resize(start + CHUNK_PAYLOAD_AT + max, 0);
    let compressed = snap::raw::Encoder::new()
        .compress(chunk, &mut out[start + CHUNK_PAYLOAD_AT..])
        .map_err(|e| {
            out.truncate(start);
            encode(format!("the journal record of chunk {address}"), e)
        })?;
    out.truncate(start + CHUNK_PAYLOAD_AT + compressed);
    let payload_crc = crc32c::crc32c(&out[start + CHUNK_PAYLOAD_AT..]);
    out.extend_from_slice(&payload_crc.to_be_bytes());
    close_chunk_record(address, start, out)
}

/// [`chunk_record`] for a chunk whose payload is at hand: its snappy block ‖ CRC-32C, the
/// form a table file's record and a journal's payload share. A chunk read from either (a
/// clone's) is kept as it was compressed instead of being compressed again. The caller has
/// checked the payload: its CRC, and the chunk it holds against `address`.
pub fn chunk_record_from_payload(
    address: Address,
    payload: &[u8],
    out: &mut Vec<u8>,
) -> Result<()> {
    let start = out.len();
    out.resize(start + CHUNK_PAYLOAD_AT, 0);
    out.extend_from_slice(payload);
    close_chunk_record(address, start, out)
}

/// Completes the chunk record that starts at `start` of `out`, whose payload follows its head
/// there: fills in the head (length, kind, address) and appends the record's CRC-32C; refuses
/// (and removes the record) when it is longer than Dolt's journal takes.
fn close_chunk_record(address: Address, start: usize, out: &mut Vec<u8>) -> Result<()> {
    let len = out.len() - start + 4;
    if len > MAX_RECORD_LEN as usize {
        out.truncate(start);
        return Err(encode(
            format!("the journal record of chunk {address}"),
            format!("it needs {len} bytes; Dolt's journal takes at most {MAX_RECORD_LEN}"),
        ));
    }
    let head = &mut out[start..start + CHUNK_PAYLOAD_AT];
    head[..4].copy_from_slice(&(len as u32).to_be_bytes());
    head[4..7].copy_from_slice(&[TAG_KIND, KIND_CHUNK, TAG_ADDRESS]);
    head[7..27].copy_from_slice(address.as_bytes());
    head[27] = TAG_PAYLOAD;
    let crc = crc32c::crc32c(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
    Ok(())
}

/// A root record as Dolt's `writeRootHashRecord` lays it out: length, kind, timestamp, address,
/// CRC-32C.
pub fn root_record(root: Address, timestamp_secs: u64) -> [u8; ROOT_RECORD_LEN] {
    let mut r = [0u8; ROOT_RECORD_LEN];
    r[..4].copy_from_slice(&(ROOT_RECORD_LEN as u32).to_be_bytes());
    r[4] = TAG_KIND;
    r[5] = KIND_ROOT;
    r[6] = TAG_TIMESTAMP;
    r[7..15].copy_from_slice(&timestamp_secs.to_be_bytes());
    r[15] = TAG_ADDRESS;
    r[16..36].copy_from_slice(root.as_bytes());
    let crc = crc32c::crc32c(&r[..36]);
    r[36..].copy_from_slice(&crc.to_be_bytes());
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::*;

    /// What a journal holds: chunks (with their addresses) and root updates.
    #[derive(Clone, Debug)]
    enum Item {
        Chunk([u8; 20], Vec<u8>),
        Root([u8; 20], u64),
    }

    fn item() -> impl Strategy<Value = Item> {
        prop_oneof![
            (
                any::<[u8; 20]>(),
                prop_oneof![
                    proptest::collection::vec(any::<u8>(), 0..3000),
                    proptest::collection::vec(0u8..3, 0..20_000),
                ]
            )
                .prop_map(|(a, c)| Item::Chunk(a, c)),
            (any::<[u8; 20]>(), any::<u64>()).prop_map(|(a, t)| Item::Root(a, t)),
        ]
    }

    proptest! {
        /// Encode → frame → decode, over records laid end to end as the journal holds them,
        /// gives back each address and chunk (through the payload's snappy block and its CRC)
        /// or root and timestamp, and the framing ends exactly at the end.
        #[test]
        fn records_round_trip(items in proptest::collection::vec(item(), 1..24)) {
            let mut journal = Vec::new();
            for it in &items {
                match it {
                    Item::Chunk(a, c) => {
                        chunk_record(Address::from_slice(a).unwrap(), c, &mut journal).unwrap()
                    }
                    Item::Root(a, t) => {
                        journal.extend_from_slice(&root_record(Address::from_slice(a).unwrap(), *t))
                    }
                }
            }
            let mut pos = 0;
            for it in &items {
                let framed = frame(&journal[pos..]).unwrap();
                match (decode(framed).unwrap(), it) {
                    (Record::Chunk { address, payload_at, payload_len }, Item::Chunk(a, c)) => {
                        prop_assert_eq!(address.as_bytes(), &a[..]);
                        prop_assert_eq!(payload_at, CHUNK_PAYLOAD_AT as u64);
                        prop_assert_eq!(framed.len(), CHUNK_RECORD_OVERHEAD + payload_len as usize - 4);
                        let payload = &framed[payload_at as usize..][..payload_len as usize];
                        let (block, crc) = payload.split_at(payload.len() - 4);
                        prop_assert_eq!(&crc32c::crc32c(block).to_be_bytes()[..], crc);
                        prop_assert_eq!(&snap::raw::Decoder::new().decompress_vec(block).unwrap(), c);
                    }
                    (Record::Root { root, timestamp }, Item::Root(a, t)) => {
                        prop_assert_eq!(root.as_bytes(), &a[..]);
                        prop_assert_eq!(timestamp, Some(*t));
                        prop_assert_eq!(framed.len(), ROOT_RECORD_LEN);
                    }
                    (got, want) => prop_assert!(false, "{:?} decoded as {:?}", want, got),
                }
                pos += framed.len();
            }
            prop_assert_eq!(pos, journal.len());
            prop_assert_eq!(frame(&journal[pos..]), Err(ScanStop::TruncatedTail));
        }

        /// A record made around a chunk's stored payload (a clone keeps a table file's
        /// snappy block ‖ CRC-32C as it is) is byte for byte the record made by compressing
        /// the chunk, when the payload is that compression.
        #[test]
        fn records_from_payloads_equal_compressed_ones(
            a in any::<[u8; 20]>(),
            chunk in prop_oneof![
                proptest::collection::vec(any::<u8>(), 0..3000),
                proptest::collection::vec(0u8..3, 0..20_000),
            ],
        ) {
            let address = Address::from_slice(&a).unwrap();
            let mut compressed = Vec::new();
            chunk_record(address, &chunk, &mut compressed).unwrap();
            let payload = &compressed[CHUNK_PAYLOAD_AT..compressed.len() - 4];
            let mut kept = vec![7u8; 3];
            chunk_record_from_payload(address, payload, &mut kept).unwrap();
            prop_assert_eq!(&kept[..3], &[7u8; 3][..]);
            prop_assert_eq!(&kept[3..], &compressed[..]);
        }

        /// The whole-layout fast path of `decode` agrees with the field walk on any record
        /// whose head looks like one of Dolt's layouts.
        #[test]
        fn fast_layouts_agree_with_the_field_walk(
            kind in prop_oneof![Just(KIND_CHUNK), Just(KIND_ROOT), any::<u8>()],
            tag in prop_oneof![Just(TAG_PAYLOAD), Just(TAG_ADDRESS), Just(TAG_TIMESTAMP), any::<u8>()],
            mut body in proptest::collection::vec(any::<u8>(), 0..80),
        ) {
            let third = if kind == KIND_ROOT { TAG_TIMESTAMP } else { TAG_ADDRESS };
            let mut record = vec![0, 0, 0, 0, TAG_KIND, kind, third];
            record.append(&mut body);
            if record.len() > 27 {
                record[if kind == KIND_ROOT { 15 } else { 27 }] = tag;
            }
            record.extend_from_slice(&[0; 4]);
            let n = record.len();
            record[..4].copy_from_slice(&(n as u32).to_be_bytes());
            let walked = fields(&record).and_then(|f| match (f.kind, f.address, f.payload) {
                (Some(KIND_CHUNK), Some(address), Some((payload_at, payload_len))) => {
                    Ok(Record::Chunk { address, payload_at, payload_len })
                }
                (Some(KIND_ROOT), Some(root), None) => Ok(Record::Root { root, timestamp: f.timestamp }),
                _ => Err(RecordError::new(0, RecordFault::MissingField)),
            });
            match (decode(&record), walked) {
                (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
                (Err(_), Err(_)) => {}
                (a, b) => prop_assert!(false, "decode {:?}, field walk {:?}", a, b),
            }
        }

        /// Arbitrary bytes frame and decode without a panic.
        #[test]
        fn arbitrary_bytes_decode_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Ok(framed) = frame(&bytes) {
                let _ = decode(framed);
            }
            let _ = fields(&bytes);
        }
    }

    /// Faults inside a checksummed record say where (offset within the record, then within
    /// the file) and why.
    #[test]
    fn faults_carry_their_offset_and_reason() {
        let record = |body: &[u8]| {
            let mut r = vec![0u8; 4];
            r.extend_from_slice(body);
            r.extend_from_slice(&[0; 4]);
            let n = r.len() as u32;
            r[..4].copy_from_slice(&n.to_be_bytes());
            r
        };
        let unknown_tag = record(&[TAG_KIND, KIND_ROOT, 9]);
        assert_eq!(
            decode(&unknown_tag),
            Err(RecordError {
                offset: 6,
                why: RecordFault::UnknownTag(9)
            })
        );
        let cut = record(&[TAG_KIND, KIND_ROOT, TAG_TIMESTAMP, 1, 2]);
        assert_eq!(
            fields(&cut),
            Err(RecordError {
                offset: 6,
                why: RecordFault::FieldCut("timestamp")
            })
        );
        let kind = record(&[TAG_KIND, 7]);
        assert_eq!(decode(&kind).unwrap_err().why, RecordFault::UnknownKind(7));
        let missing = record(&[TAG_KIND, KIND_CHUNK]);
        let e = decode(&missing).unwrap_err();
        assert_eq!(e.why, RecordFault::MissingField);
        match decode(&unknown_tag).unwrap_err().in_file("vvvv", 100) {
            DoltError::Corrupt {
                file,
                offset,
                reason,
            } => {
                assert_eq!((file.as_str(), offset), ("vvvv", 106));
                assert_eq!(reason, "unknown record field tag 9");
            }
            other => panic!("{other:?}"),
        }
    }

    /// Every prefix and every single-byte change of a record frames or decodes to an error, or
    /// (a change that keeps the CRC valid being impossible here) never to another record.
    #[test]
    fn damaged_records_never_decode() {
        let root = root_record(Address::from_slice(&[7; 20]).unwrap(), 1_700_000_000);
        let mut chunk = Vec::new();
        chunk_record(
            Address::from_slice(&[9; 20]).unwrap(),
            b"hello hello hello",
            &mut chunk,
        )
        .unwrap();
        for record in [&root[..], &chunk[..]] {
            for cut in 0..record.len() {
                assert!(frame(&record[..cut]).is_err(), "cut at {cut}");
            }
            for at in 0..record.len() {
                let mut bad = record.to_vec();
                bad[at] ^= 0x41;
                assert!(frame(&bad).is_err(), "byte {at}");
            }
        }
    }
}
