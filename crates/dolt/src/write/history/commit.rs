//! Commits as Dolt makes them (`store/datas/commit.go` `newCommitForValue`): the parents'
//! ancestry closure, the height, and the commit message with committer fields only when the
//! committer is not the author.

use prollystore_format::message::objects::CommitFields;
use prollystore_format::Address;

use crate::error::Result;
use crate::write::maps::closure::put_parent_closure;
use crate::write::storage::chunk_io::ChunkIo;

/// A name and email.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Person<'a> {
    /// Name.
    pub name: &'a str,
    /// Email.
    pub email: &'a str,
}

/// What a new commit records.
#[derive(Clone, Debug)]
pub(crate) struct NewCommit<'a> {
    /// The root value committed (must be in the store).
    pub root: Address,
    /// Parents, first parent first (empty for a first commit).
    pub parents: Vec<Address>,
    /// Author.
    pub author: Person<'a>,
    /// Committer, when not the author.
    pub committer: Option<Person<'a>>,
    /// Commit message.
    pub message: &'a str,
    /// Author time, Unix milliseconds.
    pub author_millis: i64,
    /// Committer time, Unix milliseconds.
    pub committer_millis: u64,
}

/// Puts the commit (and its parents' closure) into the writer's pending chunks; returns the
/// commit's address and height.
pub(crate) fn put_commit(w: &mut dyn ChunkIo, c: &NewCommit<'_>) -> Result<(Address, u64)> {
    let (parent_closure, height) = put_parent_closure(w, &c.parents)?;
    // Dolt leaves out committer fields equal to the author's, one by one.
    let committer = c.committer.unwrap_or(c.author);
    let parent_addrs: Vec<u8> = c.parents.iter().flat_map(|p| p.0).collect();
    let fields = CommitFields {
        root: c.root.0,
        height,
        parent_addrs: &parent_addrs,
        parent_closure: Some(parent_closure.0),
        name: c.author.name,
        email: c.author.email,
        description: c.message,
        timestamp_millis: c.committer_millis,
        user_timestamp_millis: c.author_millis,
        signature: None,
        committer_name: (committer.name != c.author.name).then_some(committer.name),
        committer_email: (committer.email != c.author.email).then_some(committer.email),
    };
    let chunk = fields
        .encode()
        .map_err(|e| crate::error::encode("commit", e))?;
    Ok((w.put(&chunk)?, height))
}
