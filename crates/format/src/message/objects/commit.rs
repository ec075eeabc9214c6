//! `Commit` (`DCMT`): one commit — root value, parents, their ancestry closure, author and
//! committer metadata. Dolt writes the committer name and email only when they differ from the
//! author's, so commits whose committer is the author hash as they did before those fields existed.

use super::super::builder::Builder;
use super::super::generated::serial::Commit;
use super::super::MessageError;
use super::{address_field, open, FILE_ID_COMMIT};

const TABLE: &str = "Commit";
const NUM_FIELDS: usize = 12;

/// The fields of a commit message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitFields<'a> {
    /// Address of the commit's root value.
    pub root: [u8; 20],
    /// Height: 1 for a commit without parents, else 1 + the highest parent height.
    pub height: u64,
    /// Parent commit addresses, 20 bytes each, first parent first.
    pub parent_addrs: &'a [u8],
    /// Address of the parents' `CommitClosure` tree; all zeros for a commit without parents
    /// (Dolt writes that), `None` only for messages that lack the field.
    pub parent_closure: Option<[u8; 20]>,
    /// Author name.
    pub name: &'a str,
    /// Author email.
    pub email: &'a str,
    /// Commit message.
    pub description: &'a str,
    /// Committer time, milliseconds since the Unix epoch.
    pub timestamp_millis: u64,
    /// Author time, milliseconds since the Unix epoch.
    pub user_timestamp_millis: i64,
    /// Signature text, when signed.
    pub signature: Option<&'a str>,
    /// Committer name; `None` when it is the author's (Dolt then leaves the field out).
    pub committer_name: Option<&'a str>,
    /// Committer email; `None` when it is the author's.
    pub committer_email: Option<&'a str>,
}

impl<'a> CommitFields<'a> {
    /// Reads the fields of a verified `DCMT` chunk.
    pub fn decode(chunk: &'a [u8]) -> Result<CommitFields<'a>, MessageError> {
        let c = open::<Commit>(chunk, FILE_ID_COMMIT, TABLE)?;
        let parent_addrs = c.parent_addrs().bytes();
        if !parent_addrs.len().is_multiple_of(20) {
            return Err(MessageError::UnexpectedField {
                table: TABLE,
                field: "parent_addrs",
                reason: "must hold 20 bytes per parent",
            });
        }
        Ok(CommitFields {
            root: address_field(c.root().bytes(), TABLE, "root")?,
            height: c.height(),
            parent_addrs,
            parent_closure: c
                .parent_closure()
                .map(|v| address_field(v.bytes(), TABLE, "parent_closure"))
                .transpose()?,
            name: c.name(),
            email: c.email(),
            description: c.description(),
            timestamp_millis: c.timestamp_millis(),
            user_timestamp_millis: c.user_timestamp_millis(),
            signature: c.signature(),
            committer_name: c.committer_name(),
            committer_email: c.committer_email(),
        })
    }

    /// Encodes the message as Dolt's `commit_flatbuffer` does (an empty signature is left
    /// out; a committer equal to the author should be passed as `None`).
    pub fn encode(&self) -> Result<Vec<u8>, MessageError> {
        if !self.parent_addrs.len().is_multiple_of(20) {
            return Err(MessageError::BadInput {
                field: "parent_addrs",
                reason: "must hold 20 bytes per parent",
            });
        }
        let mut b = Builder::default();
        b.reset();
        let root = b.create_byte_vector(&self.root);
        let parents = b.create_byte_vector(self.parent_addrs);
        let closure = self.parent_closure.map_or(0, |c| b.create_byte_vector(&c));
        let name = b.create_string(self.name);
        let email = b.create_string(self.email);
        let desc = b.create_string(self.description);
        let sig = match self.signature {
            Some(s) if !s.is_empty() => b.create_string(s),
            _ => 0,
        };
        let committer_name = self.committer_name.map_or(0, |s| b.create_string(s));
        let committer_email = self.committer_email.map_or(0, |s| b.create_string(s));
        b.start_object(NUM_FIELDS);
        b.add_offset(0, root);
        b.add_u64(1, self.height, 0);
        b.add_offset(2, parents);
        b.add_offset(3, closure);
        b.add_offset(4, name);
        b.add_offset(5, email);
        b.add_offset(6, desc);
        b.add_u64(7, self.timestamp_millis, 0);
        b.add_i64(8, self.user_timestamp_millis, 0);
        b.add_offset(9, sig);
        b.add_offset(10, committer_name);
        b.add_offset(11, committer_email);
        let end = b.end_object();
        Ok(b.finish_message(end, FILE_ID_COMMIT)?.to_vec())
    }
}
