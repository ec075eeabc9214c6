//! `Tag` (`DTAG`): an annotated tag — the tagged commit and the tagger's metadata.

use super::super::builder::Builder;
use super::super::generated::serial::Tag;
use super::super::MessageError;
use super::{address_field, open, FILE_ID_TAG};

const TABLE: &str = "Tag";
const NUM_FIELDS: usize = 6;

/// The fields of a tag message. Dolt always writes the metadata (`NewTagMeta`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TagFields<'a> {
    /// The tagged commit.
    pub commit_addr: [u8; 20],
    /// Tagger name.
    pub name: &'a str,
    /// Tagger email.
    pub email: &'a str,
    /// Tag message.
    pub desc: &'a str,
    /// Tag time, milliseconds since the Unix epoch.
    pub timestamp_millis: u64,
    /// User-given tag time, milliseconds since the Unix epoch.
    pub user_timestamp_millis: i64,
}

impl<'a> TagFields<'a> {
    /// Reads the fields of a verified `DTAG` chunk.
    pub fn decode(chunk: &'a [u8]) -> Result<TagFields<'a>, MessageError> {
        let t = open::<Tag>(chunk, FILE_ID_TAG, TABLE)?;
        Ok(TagFields {
            commit_addr: address_field(t.commit_addr().bytes(), TABLE, "commit_addr")?,
            name: t.name(),
            email: t.email(),
            desc: t.desc(),
            timestamp_millis: t.timestamp_millis(),
            user_timestamp_millis: t.user_timestamp_millis(),
        })
    }

    /// Encodes the message as Dolt's `tagSerialMessage` does.
    pub fn encode(&self) -> Result<Vec<u8>, MessageError> {
        let mut b = Builder::default();
        b.reset();
        let addr = b.create_byte_vector(&self.commit_addr);
        let name = b.create_string(self.name);
        let email = b.create_string(self.email);
        let desc = b.create_string(self.desc);
        b.start_object(NUM_FIELDS);
        b.add_offset(0, addr);
        b.add_offset(1, name);
        b.add_offset(2, email);
        b.add_offset(3, desc);
        b.add_u64(4, self.timestamp_millis, 0);
        b.add_i64(5, self.user_timestamp_millis, 0);
        let end = b.end_object();
        Ok(b.finish_message(end, FILE_ID_TAG)?.to_vec())
    }
}
