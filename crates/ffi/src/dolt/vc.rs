//! Version control on a Dolt database directory from C: branches, checkout, tags, merges and
//! status (`prollystore_dolt::write::vc`). Each call opens the database for writing (Dolt's
//! writer lock; `PROLLY_RESULT_ERR_LOCKED` while Dolt or another writer has it), does one thing
//! and closes it. A refused operation (existing name, unmerged branch, uncommitted changes)
//! returns `PROLLY_RESULT_ERR_INVALID_ARGUMENT` with the reason in `prolly_last_error_message`
//! and changes no file.

use std::ffi::c_char;
use std::path::Path;

use prollystore_dolt::write::vc::{self, MergeOptions, MergeResult, OnConflict, Signature};

use crate::args::{opt_text, text, Out};
use crate::result::{ffi, prolly_result, Error};
use crate::store::prolly_address;

/// Creates branch `name` at the commit `from` names (a branch, tag, commit hash or `HEAD`, with
/// `~N`/`^N`), like `dolt branch NAME FROM`. Writes its head commit to `out_commit` (NULL to
/// skip).
#[no_mangle]
pub extern "C" fn prolly_dolt_branch_create(
    path: *const c_char,
    name: *const c_char,
    from: *const c_char,
    out_commit: *mut prolly_address,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: NUL-terminated strings or NULL.
        let (path, name, from) = unsafe {
            (
                text(path, "path")?,
                text(name, "name")?,
                text(from, "from")?,
            )
        };
        let commit = vc::create_branch(Path::new(path), name, from)?;
        if !out_commit.is_null() {
            // SAFETY: C caller's contract: writable.
            unsafe { Out::new(out_commit, "out_commit") }?.set(commit.into());
        }
        Ok(())
    })
}

/// Deletes branch `name`, like `dolt branch -d` (`force` nonzero: `-D`): without force,
/// refused unless it is merged into the current branch.
#[no_mangle]
pub extern "C" fn prolly_dolt_branch_delete(
    path: *const c_char,
    name: *const c_char,
    force: bool,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: NUL-terminated strings or NULL.
        let (path, name) = unsafe { (text(path, "path")?, text(name, "name")?) };
        vc::delete_branch(Path::new(path), name, force)?;
        Ok(())
    })
}

/// Makes `branch` the current branch, like `dolt checkout BRANCH` (refused while the current
/// branch has uncommitted changes).
#[no_mangle]
pub extern "C" fn prolly_dolt_checkout(
    path: *const c_char,
    branch: *const c_char,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: NUL-terminated strings or NULL.
        let (path, branch) = unsafe { (text(path, "path")?, text(branch, "branch")?) };
        vc::checkout(Path::new(path), branch)?;
        Ok(())
    })
}

/// Tags the commit `commit_spec` names as `name` with `message` (NULL: empty), tagger
/// `tagger_name <tagger_email>` at `millis` (Unix milliseconds), like `dolt tag -m`. Writes the
/// tag object's address to `out_tag` (NULL to skip).
#[no_mangle]
pub extern "C" fn prolly_dolt_tag_create(
    path: *const c_char,
    name: *const c_char,
    commit_spec: *const c_char,
    message: *const c_char,
    tagger_name: *const c_char,
    tagger_email: *const c_char,
    millis: i64,
    out_tag: *mut prolly_address,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: NUL-terminated strings or NULL.
        let (path, name, spec, message, tn, te) = unsafe {
            (
                text(path, "path")?,
                text(name, "name")?,
                text(commit_spec, "commit_spec")?,
                opt_text(message, "message")?.unwrap_or(""),
                text(tagger_name, "tagger_name")?,
                text(tagger_email, "tagger_email")?,
            )
        };
        let tag = vc::tag(
            Path::new(path),
            name,
            spec,
            message,
            &Signature::new(tn, te, millis),
        )?;
        if !out_tag.is_null() {
            // SAFETY: C caller's contract: writable.
            unsafe { Out::new(out_tag, "out_tag") }?.set(tag.into());
        }
        Ok(())
    })
}

/// What `prolly_dolt_merge` did.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum prolly_dolt_merge_kind {
    /// Already merged; nothing written.
    UpToDate = 0,
    /// The current branch moved to the other head (`commit`); no merge commit.
    FastForward = 1,
    /// A merge commit (`commit`) was written.
    Merged = 2,
    /// Conflicts stopped the merge (`conflicts` of them, each described in
    /// `prolly_last_error_message`); nothing was written.
    Conflicts = 3,
}

/// The outcome of `prolly_dolt_merge`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct prolly_dolt_merge_outcome {
    /// What happened.
    pub kind: prolly_dolt_merge_kind,
    /// The new head (fast-forward) or merge commit; zero otherwise.
    pub commit: prolly_address,
    /// How many conflicts stopped the merge.
    pub conflicts: u64,
}

/// Merges `branch` into the current branch like `dolt merge`: fast-forward when possible, else
/// a merge commit by `author_name <author_email>` at `millis` (author and committer time) with
/// `message` (NULL: `Merge branch 'B' into C`). `on_conflict`: 0 stop (report, write nothing),
/// 1 keep ours, 2 take theirs. On conflicts the outcome says how many and
/// `prolly_last_error_message` lists them (table, key, reason).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn prolly_dolt_merge(
    path: *const c_char,
    branch: *const c_char,
    message: *const c_char,
    author_name: *const c_char,
    author_email: *const c_char,
    millis: i64,
    on_conflict: u32,
    out: *mut prolly_dolt_merge_outcome,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: NUL-terminated strings or NULL; `out` writable.
        let (path, branch, message, an, ae, out) = unsafe {
            (
                text(path, "path")?,
                text(branch, "branch")?,
                opt_text(message, "message")?,
                text(author_name, "author_name")?,
                text(author_email, "author_email")?,
                Out::new(out, "out")?,
            )
        };
        let mut options = MergeOptions::new(Signature::new(an, ae, millis));
        options.message = message.map(str::to_string);
        options.expressions = Some(prollystore_sql::engine());
        options.on_conflict = match on_conflict {
            0 => OnConflict::Stop,
            1 => OnConflict::Ours,
            2 => OnConflict::Theirs,
            n => {
                return Err(Error::new(
                    prolly_result::ErrInvalidArgument,
                    format!("on_conflict {n}: expected 0 (stop), 1 (ours) or 2 (theirs)"),
                ))
            }
        };
        let zero = prolly_address { bytes: [0; 20] };
        let outcome = match vc::merge(Path::new(path), branch, &options)? {
            MergeResult::UpToDate => prolly_dolt_merge_outcome {
                kind: prolly_dolt_merge_kind::UpToDate,
                commit: zero,
                conflicts: 0,
            },
            MergeResult::FastForward(c) => prolly_dolt_merge_outcome {
                kind: prolly_dolt_merge_kind::FastForward,
                commit: c.into(),
                conflicts: 0,
            },
            MergeResult::Merged { commit, .. } => prolly_dolt_merge_outcome {
                kind: prolly_dolt_merge_kind::Merged,
                commit: commit.into(),
                conflicts: 0,
            },
            MergeResult::Conflicts(c) => {
                let list: Vec<String> = c
                    .iter()
                    .map(|c| format!("{} ({}): {}", c.table, c.key.join(", "), c.reason))
                    .collect();
                crate::result::record(&list.join("\n"));
                prolly_dolt_merge_outcome {
                    kind: prolly_dolt_merge_kind::Conflicts,
                    commit: zero,
                    conflicts: c.len() as u64,
                }
            }
        };
        out.set(outcome);
        Ok(())
    })
}

/// Writes what `dolt status` prints (NUL-terminated) into `buf` of `buf_len` bytes and returns
/// the length it needs without the NUL (call again with a larger buffer when that is not less
/// than `buf_len`), or -1 on error (`prolly_last_error_message`).
#[no_mangle]
pub extern "C" fn prolly_dolt_status(path: *const c_char, buf: *mut c_char, buf_len: usize) -> i64 {
    let mut needed = -1i64;
    let _ = ffi!({
        // SAFETY: C caller's contract: NUL-terminated string or NULL.
        let path = unsafe { text(path, "path") }?;
        let s = vc::status(Path::new(path))?;
        let bytes = s.dolt_text().as_bytes();
        if !buf.is_null() && buf_len > 0 {
            let n = bytes.len().min(buf_len - 1);
            // SAFETY: C caller's contract: `buf` is writable for `buf_len` bytes.
            unsafe {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast::<u8>(), n);
                *buf.add(n) = 0;
            }
        }
        needed = bytes.len() as i64;
        Ok(())
    });
    needed
}
