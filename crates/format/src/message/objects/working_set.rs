//! `WorkingSet` (`WRST`): a branch's uncommitted state — working and staged root values, an
//! unfinished merge or rebase, and metadata of the write (its time is wall-clock time in Dolt).

use super::super::builder::Builder;
use super::super::generated::serial::WorkingSet;
use super::super::MessageError;
use super::{address_field, open, FILE_ID_WORKING_SET};

const TABLE: &str = "WorkingSet";
const NUM_FIELDS: usize = 8;

/// An unfinished merge, cherry-pick or revert.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergeStateFields<'a> {
    /// The working root before the merge started.
    pub pre_working_root_addr: [u8; 20],
    /// The commit being merged.
    pub from_commit_addr: [u8; 20],
    /// How the user named it.
    pub from_commit_spec_str: &'a str,
    /// Tables whose schemas could not be merged.
    pub unmergable_tables: Vec<&'a str>,
    /// A cherry-pick rather than a merge.
    pub is_cherry_pick: bool,
    /// A revert.
    pub is_revert: bool,
    /// The HEAD commit before the merge, when recorded.
    pub pre_merge_head_commit_addr: Option<[u8; 20]>,
    /// Commits still to revert; written only when non-empty.
    pub pending_commit_hashes: Vec<&'a str>,
}

/// An unfinished interactive rebase.
#[derive(Clone, Debug, PartialEq)]
pub struct RebaseStateFields<'a> {
    /// The working root before the rebase started.
    pub pre_working_root_addr: [u8; 20],
    /// The branch being rebased.
    pub branch: &'a [u8],
    /// The commit rebased onto.
    pub onto_commit_addr: [u8; 20],
    /// Dolt's empty-commit handling code.
    pub empty_commit_handling: u8,
    /// Dolt's commit-becomes-empty handling code.
    pub commit_becomes_empty_handling: u8,
    /// The last step attempted.
    pub last_attempted_step: f32,
    /// Whether the rebase has started.
    pub rebasing_started: bool,
    /// Whether commit verification is skipped.
    pub skip_verification: bool,
}

/// The fields of a working-set message. Dolt always writes the metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkingSetFields<'a> {
    /// The working root value.
    pub working_root_addr: [u8; 20],
    /// The staged root value (Dolt always records one).
    pub staged_root_addr: Option<[u8; 20]>,
    /// Writer name.
    pub name: &'a str,
    /// Writer email.
    pub email: &'a str,
    /// Description.
    pub desc: &'a str,
    /// Time of the write, milliseconds since the Unix epoch (wall-clock time in Dolt).
    pub timestamp_millis: u64,
    /// An unfinished merge.
    pub merge_state: Option<MergeStateFields<'a>>,
    /// An unfinished rebase.
    pub rebase_state: Option<RebaseStateFields<'a>>,
}

fn strings<'a>(
    v: Option<flatbuffers::Vector<'a, flatbuffers::ForwardsUOffset<&'a str>>>,
) -> Vec<&'a str> {
    v.map(|v| v.iter().collect()).unwrap_or_default()
}

impl<'a> WorkingSetFields<'a> {
    /// Reads the fields of a verified `WRST` chunk.
    pub fn decode(chunk: &'a [u8]) -> Result<WorkingSetFields<'a>, MessageError> {
        let w = open::<WorkingSet>(chunk, FILE_ID_WORKING_SET, TABLE)?;
        let addr = |bytes: &[u8], field| address_field(bytes, TABLE, field);
        let merge_state = match w.merge_state() {
            None => None,
            Some(m) => Some(MergeStateFields {
                pre_working_root_addr: addr(
                    m.pre_working_root_addr().bytes(),
                    "merge_state.pre_working_root_addr",
                )?,
                from_commit_addr: addr(
                    m.from_commit_addr().bytes(),
                    "merge_state.from_commit_addr",
                )?,
                from_commit_spec_str: m.from_commit_spec_str().unwrap_or(""),
                unmergable_tables: strings(m.unmergable_tables()),
                is_cherry_pick: m.is_cherry_pick(),
                is_revert: m.is_revert(),
                pre_merge_head_commit_addr: m
                    .pre_merge_head_commit_addr()
                    .map(|v| addr(v.bytes(), "merge_state.pre_merge_head_commit_addr"))
                    .transpose()?,
                pending_commit_hashes: strings(m.pending_commit_hashes()),
            }),
        };
        let rebase_state = match w.rebase_state() {
            None => None,
            Some(r) => Some(RebaseStateFields {
                pre_working_root_addr: addr(
                    r.pre_working_root_addr().bytes(),
                    "rebase_state.pre_working_root_addr",
                )?,
                branch: r.branch().bytes(),
                onto_commit_addr: addr(
                    r.onto_commit_addr().bytes(),
                    "rebase_state.onto_commit_addr",
                )?,
                empty_commit_handling: r.empty_commit_handling(),
                commit_becomes_empty_handling: r.commit_becomes_empty_handling(),
                last_attempted_step: r.last_attempted_step(),
                rebasing_started: r.rebasing_started(),
                skip_verification: r.skip_verification(),
            }),
        };
        Ok(WorkingSetFields {
            working_root_addr: addr(w.working_root_addr().bytes(), "working_root_addr")?,
            staged_root_addr: w
                .staged_root_addr()
                .map(|v| addr(v.bytes(), "staged_root_addr"))
                .transpose()?,
            name: w.name().unwrap_or(""),
            email: w.email().unwrap_or(""),
            desc: w.desc().unwrap_or(""),
            timestamp_millis: w.timestamp_millis(),
            merge_state,
            rebase_state,
        })
    }

    /// Encodes the message as Dolt's `workingset_flatbuffer` does.
    pub fn encode(&self) -> Result<Vec<u8>, MessageError> {
        let mut b = Builder::default();
        b.reset();
        let working = b.create_byte_vector(&self.working_root_addr);
        let staged = self
            .staged_root_addr
            .map_or(0, |s| b.create_byte_vector(&s));
        let merge = self
            .merge_state
            .as_ref()
            .map_or(0, |m| merge_state(&mut b, m));
        let rebase = self.rebase_state.as_ref().map_or(0, |r| {
            let pre = b.create_byte_vector(&r.pre_working_root_addr);
            let onto = b.create_byte_vector(&r.onto_commit_addr);
            let branch = b.create_string_bytes(r.branch);
            b.start_object(8);
            b.add_offset(0, pre);
            b.add_offset(1, branch);
            b.add_offset(2, onto);
            b.add_u8(4, r.commit_becomes_empty_handling, 0);
            b.add_u8(3, r.empty_commit_handling, 0);
            b.add_f32(5, r.last_attempted_step, 0.0);
            b.add_bool(6, r.rebasing_started, false);
            b.add_bool(7, r.skip_verification, false);
            b.end_object()
        });
        let name = b.create_string(self.name);
        let email = b.create_string(self.email);
        let desc = b.create_string(self.desc);
        b.start_object(NUM_FIELDS);
        b.add_offset(0, working);
        b.add_offset(1, staged);
        b.add_offset(6, merge);
        b.add_offset(7, rebase);
        b.add_offset(2, name);
        b.add_offset(3, email);
        b.add_offset(4, desc);
        b.add_u64(5, self.timestamp_millis, 0);
        let end = b.end_object();
        Ok(b.finish_message(end, FILE_ID_WORKING_SET)?.to_vec())
    }
}

/// Go `SerializeStringVector`: the strings last to first, then the offsets vector.
fn string_vector(b: &mut Builder, strings: &[&str]) -> u32 {
    let mut offs = vec![0u32; strings.len()];
    for (i, s) in strings.iter().enumerate().rev() {
        offs[i] = b.create_string(s);
    }
    b.create_offset_vector(&offs)
}

fn merge_state(b: &mut Builder, m: &MergeStateFields<'_>) -> u32 {
    let pre = b.create_byte_vector(&m.pre_working_root_addr);
    let from = b.create_byte_vector(&m.from_commit_addr);
    let spec = b.create_string(m.from_commit_spec_str);
    let unmergable = string_vector(b, &m.unmergable_tables);
    let head = m
        .pre_merge_head_commit_addr
        .map_or(0, |h| b.create_byte_vector(&h));
    let pending = if m.pending_commit_hashes.is_empty() {
        0
    } else {
        string_vector(b, &m.pending_commit_hashes)
    };
    b.start_object(8);
    b.add_offset(0, pre);
    b.add_offset(1, from);
    b.add_offset(2, spec);
    b.add_offset(3, unmergable);
    b.add_bool(4, m.is_cherry_pick, false);
    b.add_bool(5, m.is_revert, false);
    b.add_offset(6, head);
    b.add_offset(7, pending);
    b.end_object()
}
