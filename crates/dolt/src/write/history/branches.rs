//! Branches and the current branch, as Dolt records them: a branch is the dataset
//! `refs/heads/NAME` (its head commit) with its working set `workingSets/heads/NAME`; the current
//! branch is `head` in `.dolt/repo_state.json`. Facts from `env/actions/branch.go`,
//! `doltdb/doltdb.go` (`NewBranchAtCommit`), `env/repo_state.go` and `ref/branchname.go`.

use std::path::PathBuf;

use prollystore_format::message::objects::{CommitFields, TagFields, WorkingSetFields};
use prollystore_format::Address;

use super::ancestry::is_ancestor;
use crate::error::{bad_chunk, bad_input, encode, DoltError, Result};
use crate::write::storage::writer::{StoreWriter, WorkingSetMeta};

/// The dataset holding a branch's head.
pub(crate) fn head_ref(branch: &str) -> String {
    format!("refs/heads/{branch}")
}

/// The dataset holding a branch's working set.
pub(crate) fn working_set_ref(branch: &str) -> String {
    format!("workingSets/heads/{branch}")
}

/// Dolt's rule for user branch (and tag) names: git's ref-name rules, and not `HEAD`, `-` or
/// a string that reads as a commit hash.
pub(crate) fn check_ref_name(name: &str, what: &str) -> Result<()> {
    let bad = |why: &str| Err(bad_input(format!("{what} name {name:?}"), why));
    let looks_like_hash = name.len() == 32
        && name
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'v').contains(&b));
    if name.is_empty() || name == "HEAD" || name == "-" || looks_like_hash {
        return bad("reserved or empty");
    }
    if name.starts_with('/') || name.ends_with('/') || name.contains("//") {
        return bad("an empty path component");
    }
    if name.ends_with('.') || name == "@" || name.contains("..") || name.contains("@{") {
        return bad("`..`, `@{`, `@` or a trailing `.`");
    }
    for component in name.split('/') {
        if component.starts_with('.') || component.ends_with(".lock") {
            return bad("a component starting with `.` or ending with `.lock`");
        }
    }
    if let Some(c) = name
        .chars()
        .find(|c| !c.is_ascii() || c.is_ascii_control() || " :?[\\^~*".contains(*c))
    {
        return bad(&format!("character {c:?} is not allowed"));
    }
    Ok(())
}

/// The working and staged roots of a working set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WorkingRoots {
    /// Working root value.
    pub working: Address,
    /// Staged root value.
    pub staged: Address,
    /// True while a merge is in progress in this working set.
    pub merging: bool,
}

impl StoreWriter {
    /// The `.dolt` directory.
    fn dot_dolt(&self) -> PathBuf {
        self.database().dot_dolt().to_path_buf()
    }

    /// The current branch, as `repo_state.json` records it.
    pub(crate) fn current_branch(&self) -> Result<String> {
        self.database()
            .current_branch()
            .ok_or_else(|| DoltError::NotFound("the current branch (repo_state.json head)".into()))
    }

    /// The address a dataset holds now (this session's writes included), if it exists.
    pub(crate) fn dataset(&self, name: &str) -> Result<Option<Address>> {
        Ok(self
            .datasets()?
            .into_iter()
            .find(|(k, _)| k.as_slice() == name.as_bytes())
            .map(|(_, a)| a))
    }

    /// A branch's head commit now.
    pub(crate) fn head_of(&self, branch: &str) -> Result<Address> {
        self.dataset(&head_ref(branch))?
            .ok_or_else(|| DoltError::NotFound(format!("branch {branch:?}")))
    }

    /// A commit's root value.
    pub(crate) fn commit_root(&self, commit: Address) -> Result<Address> {
        let chunk = self.chunk(&commit)?;
        let c = CommitFields::decode(&chunk).map_err(|e| bad_chunk(commit, e.to_string()))?;
        Ok(Address(c.root))
    }

    /// A branch's working and staged roots (its head's root when it has no working set).
    pub(crate) fn working_roots(&self, branch: &str) -> Result<WorkingRoots> {
        match self.dataset(&working_set_ref(branch))? {
            Some(ws) => {
                let chunk = self.chunk(&ws)?;
                let f =
                    WorkingSetFields::decode(&chunk).map_err(|e| bad_chunk(ws, e.to_string()))?;
                let working = Address(f.working_root_addr);
                Ok(WorkingRoots {
                    working,
                    staged: f.staged_root_addr.map(Address).unwrap_or(working),
                    merging: f.merge_state.is_some(),
                })
            }
            None => {
                let root = self.commit_root(self.head_of(branch)?)?;
                Ok(WorkingRoots {
                    working: root,
                    staged: root,
                    merging: false,
                })
            }
        }
    }

    /// Resolves a commit spec as Dolt does: `HEAD`, a branch, a tag, or a commit hash, each
    /// optionally followed by `~N` (N first parents back), `^` or `^N` (the Nth parent).
    pub(crate) fn resolve_commit(&self, spec: &str) -> Result<Address> {
        let cut = spec.find(['~', '^']).unwrap_or(spec.len());
        let (base, mut rest) = spec.split_at(cut);
        let mut at = if base.eq_ignore_ascii_case("HEAD") {
            self.head_of(&self.current_branch()?)?
        } else if let Some(a) = self.dataset(&head_ref(base))? {
            a
        } else if let Some(t) = self.dataset(&format!("refs/tags/{base}"))? {
            let chunk = self.chunk(&t)?;
            Address(
                TagFields::decode(&chunk)
                    .map_err(|e| bad_chunk(t, e.to_string()))?
                    .commit_addr,
            )
        } else {
            match Address::from_base32(base) {
                Ok(a) if self.chunk(&a).is_ok() => a,
                _ => {
                    return Err(DoltError::NotFound(format!(
                        "branch, tag or commit {base:?}"
                    )))
                }
            }
        };
        while let Some(op) = rest.chars().next() {
            rest = &rest[1..];
            let digits = rest.len() - rest.trim_start_matches(|d: char| d.is_ascii_digit()).len();
            let n: usize = if digits == 0 {
                1
            } else {
                rest[..digits]
                    .parse()
                    .map_err(|_| DoltError::NotFound(format!("revision {spec:?}: bad number")))?
            };
            rest = &rest[digits..];
            let parents = |w: &StoreWriter, c: Address| -> Result<Vec<Address>> {
                let chunk = w.chunk(&c)?;
                let f = CommitFields::decode(&chunk).map_err(|e| bad_chunk(c, e.to_string()))?;
                Ok(f.parent_addrs
                    .chunks_exact(20)
                    .filter_map(Address::from_slice)
                    .collect())
            };
            let past = || DoltError::NotFound(format!("revision {spec:?}: no such ancestor"));
            if op == '~' {
                for _ in 0..n {
                    at = *parents(self, at)?.first().ok_or_else(past)?;
                }
            } else if n > 0 {
                at = *parents(self, at)?.get(n - 1).ok_or_else(past)?;
            }
        }
        Ok(at)
    }

    /// `dolt branch NAME FROM`: a new branch at the commit `from_spec` names, with a clean
    /// working set (working = staged = that commit's root) as Dolt writes it, in one root
    /// update. Refused if the branch exists or the name is invalid. Returns the head commit.
    pub(crate) fn create_branch(
        &mut self,
        name: &str,
        from_spec: &str,
        meta: &WorkingSetMeta<'_>,
    ) -> Result<Address> {
        check_ref_name(name, "branch")?;
        if self.dataset(&head_ref(name))?.is_some() {
            return Err(DoltError::Refused(format!(
                "branch {name:?} already exists"
            )));
        }
        let commit = self.resolve_commit(from_spec)?;
        let root = self.commit_root(commit)?;
        let ws = self.put_working_set(root, meta)?;
        self.update_datasets(
            &[
                (&head_ref(name), Some(commit)),
                (&working_set_ref(name), Some(ws)),
            ],
            meta.timestamp_secs,
        )?;
        Ok(commit)
    }

    /// `dolt branch -d NAME` (`-D` with `force`): removes the branch and its working set.
    /// Without `force`, refused unless its head is contained in the current branch's head (Dolt's
    /// check when the branch has no upstream). The current branch cannot be deleted.
    pub(crate) fn delete_branch(
        &mut self,
        name: &str,
        force: bool,
        timestamp_secs: u64,
    ) -> Result<()> {
        let current = self.current_branch()?;
        if current == name {
            return Err(DoltError::Refused(format!(
                "cannot delete the checked out branch {name:?}"
            )));
        }
        let head = self.head_of(name)?;
        if !force && !is_ancestor(self, head, self.head_of(&current)?)? {
            return Err(DoltError::Refused(format!(
                "branch {name:?} is not fully merged into {current:?} (delete it with force)"
            )));
        }
        let ws = working_set_ref(name);
        let mut changes: Vec<(&str, Option<Address>)> = vec![];
        let hr = head_ref(name);
        changes.push((&hr, None));
        if self.dataset(&ws)?.is_some() {
            changes.push((&ws, None));
        }
        self.update_datasets(&changes, timestamp_secs)?;
        Ok(())
    }

    /// `dolt checkout BRANCH`: makes `branch` current in `repo_state.json` (written whole to a
    /// temporary file, fsync'd and renamed over the old one, only `head` changed), giving it a
    /// clean working set first if it has none. Uncommitted changes of the current branch move
    /// to `branch` as Dolt moves them (`checkout_carrying`).
    pub(crate) fn checkout(&mut self, branch: &str, meta: &WorkingSetMeta<'_>) -> Result<()> {
        let head = self.head_of(branch)?;
        let current = self.current_branch()?;
        if current == branch {
            return Ok(());
        }
        if self.head_of(&current).is_ok() {
            let roots = self.working_roots(&current)?;
            let committed = self.commit_root(self.head_of(&current)?)?;
            if roots.merging {
                return Err(DoltError::Refused(format!(
                    "branch {current:?} is in the middle of a merge; commit or abort it before \
                     checking out {branch:?}"
                )));
            }
            if roots.working != committed || roots.staged != committed {
                return self.checkout_carrying(&current, branch, committed, roots, meta);
            }
        }
        if self.dataset(&working_set_ref(branch))?.is_none() {
            let root = self.commit_root(head)?;
            let ws = self.put_working_set(root, meta)?;
            self.update_datasets(&[(&working_set_ref(branch), Some(ws))], meta.timestamp_secs)?;
        }
        write_repo_state_head(&self.dot_dolt(), &head_ref(branch))
    }
}

impl StoreWriter {
    /// [`StoreWriter::checkout`] from branch `current`, whose working set differs from its
    /// head's root `committed`: the changes move to `branch` (see [`super::checkout_carry`]),
    /// whose own uncommitted changes, if any, must be the same ones (Dolt's rule); `current`'s
    /// working set is reset to its head. One root update writes both working sets.
    fn checkout_carrying(
        &mut self,
        current: &str,
        branch: &str,
        committed: Address,
        roots: WorkingRoots,
        meta: &WorkingSetMeta<'_>,
    ) -> Result<()> {
        let target_root = self.commit_root(self.head_of(branch)?)?;
        let target = self.working_roots(branch)?;
        let target_changed = target.working != target_root || target.staged != target_root;
        if target.merging
            || (target_changed
                && (target.working != roots.working || target.staged != roots.staged))
        {
            return Err(DoltError::Refused(format!(
                "checkout would overwrite uncommitted changes on target branch {branch:?}"
            )));
        }
        let (working, staged) = super::checkout_carry::carried_roots(
            self,
            committed,
            target_root,
            roots.working,
            roots.staged,
        )?;
        let moved = self.put_working_set_roots(working, staged, meta)?;
        let reset = self.put_working_set(committed, meta)?;
        self.update_datasets(
            &[
                (&working_set_ref(branch), Some(moved)),
                (&working_set_ref(current), Some(reset)),
            ],
            meta.timestamp_secs,
        )?;
        write_repo_state_head(&self.dot_dolt(), &head_ref(branch))
    }
}

/// Rewrites `repo_state.json` with `head` set to `head_ref`, keeping everything else as Dolt
/// wrote it (Go's `json.MarshalIndent` with two spaces; the other fields are left as they are).
fn write_repo_state_head(dot: &std::path::Path, head_ref: &str) -> Result<()> {
    let path = dot.join("repo_state.json");
    let io = |e: std::io::Error| DoltError::Io {
        file: path.display().to_string(),
        source: e,
    };
    let text = std::fs::read_to_string(&path).map_err(io)?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| DoltError::Corrupt {
        file: path.display().to_string(),
        offset: 0,
        reason: e.to_string(),
    })?;
    let old = value
        .get("head")
        .and_then(|h| h.as_str())
        .ok_or_else(|| DoltError::Corrupt {
            file: path.display().to_string(),
            offset: 0,
            reason: "no \"head\" string".into(),
        })?;
    let quote = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let needle = format!("\"head\": {}", quote(old));
    let new_text = if text.matches(&needle).count() == 1 {
        text.replacen(&needle, &format!("\"head\": {}", quote(head_ref)), 1)
    } else {
        let mut v = value.clone();
        v["head"] = serde_json::Value::String(head_ref.to_string());
        serde_json::to_string_pretty(&v).map_err(|e| encode("repo_state.json", e))?
    };
    let tmp = dot.join(format!("repo_state.json.tmp{}", std::process::id()));
    let perms = std::fs::metadata(&path).map_err(io)?.permissions();
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp).map_err(io)?;
        f.write_all(new_text.as_bytes()).map_err(io)?;
        f.set_permissions(perms).map_err(io)?;
        f.sync_all().map_err(io)?;
    }
    std::fs::rename(&tmp, &path).map_err(io)?;
    if let Ok(d) = std::fs::File::open(dot) {
        let _ = d.sync_all();
    }
    Ok(())
}
