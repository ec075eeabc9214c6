//! Three-way merge: apply the changes `base → right` to `left`, asking a resolver about keys
//! both sides changed differently (Dolt's `ThreeWayDiffer` + patch application, done as a
//! merge-join of two diffs followed by one batch edit of `left`).

use std::cmp::Ordering;

use prollystore_format::Address;

use super::diff::{Diff, DiffEntry};
use super::mutate::{apply_edits, Edit};
use super::schema::TreeSchema;
use crate::error::TreeError;
use crate::store::StoreFastPaths;

/// What a resolver decides for a key changed on both sides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolution {
    /// The merged value (`None` deletes the key).
    Value(Option<Vec<u8>>),
    /// The key stays as in `left` and is reported as a conflict.
    Conflict,
}

/// A key both sides changed that the resolver could not merge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The key.
    pub key: Vec<u8>,
    /// Its value in the base (`None` = absent).
    pub base: Option<Vec<u8>>,
    /// Its value on the left.
    pub left: Option<Vec<u8>>,
    /// Its value on the right.
    pub right: Option<Vec<u8>>,
}

/// The result of a merge.
#[derive(Clone, Debug)]
pub struct MergeOutcome {
    /// Root of the merged tree (stored in the same store).
    pub root: Address,
    /// Keys left as in `left` because the resolver reported a conflict.
    pub conflicts: Vec<Conflict>,
}

fn old_value<'s>(e: &DiffEntry<'s>) -> Option<&'s [u8]> {
    match *e {
        DiffEntry::Added { .. } => None,
        DiffEntry::Removed { from, .. } | DiffEntry::Modified { from, .. } => Some(from),
    }
}

fn new_value<'s>(e: &DiffEntry<'s>) -> Option<&'s [u8]> {
    match *e {
        DiffEntry::Removed { .. } => None,
        DiffEntry::Added { to, .. } | DiffEntry::Modified { to, .. } => Some(to),
    }
}

/// Merges `right`'s changes since `base` into `left`. `resolve(key, base, left, right)` is
/// called for keys both sides changed to different values.
pub fn merge<S, T, R>(
    store: &S,
    schema: &T,
    base: Address,
    left: Address,
    right: Address,
    mut resolve: R,
) -> Result<MergeOutcome, TreeError>
where
    S: StoreFastPaths + ?Sized,
    T: TreeSchema + ?Sized,
    R: FnMut(&[u8], Option<&[u8]>, Option<&[u8]>, Option<&[u8]>) -> Resolution,
{
    let mut ldiff = Diff::new(store, schema, base, left)?;
    let mut rdiff = Diff::new(store, schema, base, right)?;
    let mut l = ldiff.next().transpose()?;
    let mut r = rdiff.next().transpose()?;
    // Owned resolutions live here; plain right-side changes borrow from the store.
    let mut resolved: Vec<(usize, Option<Vec<u8>>)> = Vec::new();
    let mut edits: Vec<Edit<'_>> = Vec::new();
    let mut conflicts = Vec::new();
    while let Some(re) = r {
        let order = match &l {
            Some(le) => schema.compare_keys(le.key(), re.key()),
            None => Ordering::Greater,
        };
        match order {
            Ordering::Less => {
                l = ldiff.next().transpose()?;
            }
            Ordering::Greater => {
                edits.push((re.key(), new_value(&re)));
                r = rdiff.next().transpose()?;
            }
            Ordering::Equal => {
                let Some(le) = l else { break };
                let (lv, rv) = (new_value(&le), new_value(&re));
                if lv != rv {
                    match resolve(re.key(), old_value(&re), lv, rv) {
                        Resolution::Value(v) => {
                            resolved.push((edits.len(), v));
                            edits.push((re.key(), None));
                        }
                        Resolution::Conflict => conflicts.push(Conflict {
                            key: re.key().to_vec(),
                            base: old_value(&re).map(<[u8]>::to_vec),
                            left: lv.map(<[u8]>::to_vec),
                            right: rv.map(<[u8]>::to_vec),
                        }),
                    }
                }
                l = ldiff.next().transpose()?;
                r = rdiff.next().transpose()?;
            }
        }
    }
    for (i, v) in &resolved {
        if let Some(e) = edits.get_mut(*i) {
            e.1 = v.as_deref();
        }
    }
    let root = apply_edits(store, schema, left, &edits)?;
    Ok(MergeOutcome { root, conflicts })
}
