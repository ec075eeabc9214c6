//! The database-level message decoders (commits, root values, tables, schemas, working sets,
//! store roots, tags, foreign-key collections) over arbitrary bytes: never panic, and whatever decodes encodes into a
//! chunk that decodes again.
//!
//! The first input byte picks a mode: odd = the rest is taken as a whole chunk; even = the rest
//! is a FlatBuffers body that gets Dolt's 4-byte prefix and a message kind's file identifier
//! (chosen by the byte), so the fuzzer reaches the table checks quickly.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prollystore_format::message::objects::{
    CommitFields, ForeignKeyCollectionFields, RootValueFields, StoreRootFields, TableFields,
    TableSchemaFields, TagFields, WorkingSetFields,
};

const IDS: [&[u8; 4]; 8] = [
    b"DCMT", b"RTVL", b"DTBL", b"DSCH", b"WRST", b"STRT", b"DTAG", b"DFKC",
];

/// Decodes `chunk` as kind `$t`; if it decodes, its encoding must decode too.
macro_rules! round_trip {
    ($t:ty, $chunk:expr) => {
        if let Ok(fields) = <$t>::decode($chunk) {
            if let Ok(bytes) = fields.encode() {
                <$t>::decode(&bytes).expect("what the encoder writes decodes");
            }
        }
    };
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let owned;
    let chunk: &[u8] = if mode & 1 == 1 {
        rest
    } else {
        let n = rest.len().max(8);
        let mut c = Vec::with_capacity(n + 4);
        c.extend_from_slice(&[0x1b, (n >> 16) as u8, (n >> 8) as u8, n as u8]);
        c.extend_from_slice(rest);
        c.resize(n + 4, 0);
        c[8..12].copy_from_slice(IDS[usize::from(mode >> 1) % IDS.len()]);
        owned = c;
        &owned
    };
    round_trip!(CommitFields, chunk);
    round_trip!(RootValueFields, chunk);
    round_trip!(TableFields, chunk);
    round_trip!(TableSchemaFields, chunk);
    round_trip!(WorkingSetFields, chunk);
    round_trip!(StoreRootFields, chunk);
    round_trip!(TagFields, chunk);
    round_trip!(ForeignKeyCollectionFields, chunk);
});
