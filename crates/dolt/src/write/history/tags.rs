//! Tags as Dolt makes them (`dolt tag -m MSG NAME REF`): a tag object (`DTAG`: the commit, the
//! tagger, the message, and the time twice) stored as the dataset `refs/tags/NAME`. Dolt stamps
//! both times with the wall clock; the caller gives the time here.

use prollystore_format::message::objects::TagFields;
use prollystore_format::Address;

use super::branches::check_ref_name;
use super::commit::Person;
use crate::error::{encode, DoltError, Result};
use crate::write::storage::writer::StoreWriter;

/// The dataset holding a tag.
pub(crate) fn tag_ref(name: &str) -> String {
    format!("refs/tags/{name}")
}

impl StoreWriter {
    /// Tags the commit `commit_spec` names as `name`; `millis` is the tag time (Unix
    /// milliseconds; Dolt uses the current time). Refused if the tag exists or the name is
    /// invalid. Returns the tag object's address.
    pub(crate) fn tag(
        &mut self,
        name: &str,
        commit_spec: &str,
        message: &str,
        tagger: Person<'_>,
        millis: i64,
    ) -> Result<Address> {
        check_ref_name(name, "tag")?;
        if self.dataset(&tag_ref(name))?.is_some() {
            return Err(DoltError::Refused(format!("tag {name:?} already exists")));
        }
        let commit = self.resolve_commit(commit_spec)?;
        let chunk = TagFields {
            commit_addr: commit.0,
            name: tagger.name,
            email: tagger.email,
            desc: message,
            timestamp_millis: millis.max(0) as u64,
            user_timestamp_millis: millis,
        }
        .encode()
        .map_err(|e| encode("tag", e))?;
        let tag = self.put(&chunk)?;
        self.update_datasets(
            &[(&tag_ref(name), Some(tag))],
            (millis.max(0) / 1000) as u64,
        )?;
        Ok(tag)
    }

    /// `dolt tag -d NAME`: removes a tag.
    pub(crate) fn delete_tag(&mut self, name: &str, timestamp_secs: u64) -> Result<()> {
        if self.dataset(&tag_ref(name))?.is_none() {
            return Err(DoltError::NotFound(format!("tag {name:?}")));
        }
        self.update_datasets(&[(&tag_ref(name), None)], timestamp_secs)?;
        Ok(())
    }
}
