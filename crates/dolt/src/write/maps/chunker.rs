//! Dolt's tree editing for address maps and commit closures, step for step as Dolt applies a
//! sorted batch of edits to an existing tree (`store/prolly/tree/mutator.go` `ApplyMutations`,
//! `chunker.go`, `node_cursor.go`).
//!
//! Why not build the tree afresh from its entries: a commit closure's leaf items count one value
//! byte when Dolt adds them but none when its chunker re-reads them from an existing node, so
//! where Dolt's closure nodes end depends on which entries were added together. Reproducing the
//! edit itself — the prefix of the first touched node re-read, the old tree's boundaries re-met,
//! untouched subtrees skipped — gives Dolt's nodes for any history. Address maps (dataset maps,
//! table maps) go through the same path; for them the result is the same as a fresh build.
//!
//! The node boundary test is prollystore's ([`prollystore::tree::Splitter`]), Dolt's
//! `keySplitter`.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use prollystore::tree::Splitter;
use prollystore_format::message::{
    AddressMapNode, AddressMapWriter, CommitClosureNode, CommitClosureWriter,
};
use prollystore_format::{Address, HashProfile, ADDRESS_LEN};

use crate::error::{bad_chunk, DoltError, Result};
use crate::write::storage::chunk_io::ChunkIo;

/// Dolt's `MaxVectorOffset`: a node's keys plus values may not exceed this many bytes.
const MAX_NODE_DATA: usize = u16::MAX as usize;

/// Which message a tree's nodes are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TreeKind {
    /// `AddressMap` (`ADRM`): names to addresses, bytewise name order (dataset and table maps).
    AddressMap,
    /// `CommitClosure` (`CMCL`): `(height, commit)` keys ordered by height, then address.
    CommitClosure,
}

impl TreeKind {
    /// Dolt's key order for this kind of tree.
    pub(crate) fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            TreeKind::AddressMap => a.cmp(b),
            TreeKind::CommitClosure => {
                let height = |k: &[u8]| {
                    let mut h = [0u8; 8];
                    let n = k.len().min(8);
                    h[..n].copy_from_slice(&k[..n]);
                    u64::from_le_bytes(h)
                };
                height(a)
                    .cmp(&height(b))
                    .then_with(|| a.get(8..).unwrap_or(&[]).cmp(b.get(8..).unwrap_or(&[])))
            }
        }
    }

    /// The empty tree (one empty leaf).
    pub(crate) fn empty_root(self) -> Result<Vec<u8>> {
        self.encode(&[], &[], &[], 0)
    }

    fn encode(
        self,
        keys: &[Vec<u8>],
        values: &[Vec<u8>],
        subtrees: &[u64],
        level: u8,
    ) -> Result<Vec<u8>> {
        let err = |e: prollystore_format::message::MessageError| {
            DoltError::Unsupported(format!("{self:?} node: {e}"))
        };
        let key_bytes: Vec<u8> = keys.concat();
        let counts: &[u64] = if level == 0 { &[] } else { subtrees };
        match self {
            TreeKind::AddressMap => {
                let mut offsets = Vec::with_capacity(keys.len() + 1);
                offsets.push(0u16);
                let mut at = 0usize;
                for k in keys {
                    at += k.len();
                    offsets.push(u16::try_from(at).map_err(|_| {
                        DoltError::Unsupported("address map node keys exceed 64 KiB".into())
                    })?);
                }
                let addresses: Vec<u8> = values.concat();
                let mut w = AddressMapWriter::new();
                Ok(w.write(&key_bytes, &offsets, &addresses, counts, level)
                    .map_err(err)?
                    .to_vec())
            }
            TreeKind::CommitClosure => {
                let addresses: Vec<u8> = if level == 0 {
                    Vec::new()
                } else {
                    values.concat()
                };
                let mut w = CommitClosureWriter::new();
                Ok(w.write(&key_bytes, &addresses, counts, level)
                    .map_err(err)?
                    .to_vec())
            }
        }
    }

    /// A node's items as Dolt's chunker sees them: a commit closure leaf's values are empty.
    fn decode(self, address: Address, chunk: &[u8]) -> Result<Node> {
        let bad = |e: prollystore_format::message::MessageError| bad_chunk(address, e.to_string());
        let mut node = Node::default();
        match self {
            TreeKind::AddressMap => {
                let n = AddressMapNode::verify(chunk).map_err(bad)?;
                node.level = n.level();
                for i in 0..n.count() {
                    node.keys.push(n.key(i).to_vec());
                    node.values.push(n.address(i).as_bytes().to_vec());
                }
                node.subtrees = if n.is_leaf() {
                    vec![1; n.count()]
                } else {
                    n.subtree_counts().collect()
                };
            }
            TreeKind::CommitClosure => {
                let n = CommitClosureNode::verify(chunk).map_err(bad)?;
                node.level = n.level();
                for i in 0..n.count() {
                    node.keys.push(n.key(i).to_vec());
                    node.values.push(if n.is_leaf() {
                        Vec::new()
                    } else {
                        n.child(i).as_bytes().to_vec()
                    });
                }
                node.subtrees = if n.is_leaf() {
                    vec![1; n.count()]
                } else {
                    n.subtree_counts().collect()
                };
            }
        }
        if node.subtrees.len() != node.keys.len() {
            return Err(bad_chunk(address, "subtree counts do not match the keys"));
        }
        node.chunk = Arc::from(chunk);
        node.address = address;
        Ok(node)
    }
}

/// One decoded node.
#[derive(Debug, Default)]
struct Node {
    level: u8,
    keys: Vec<Vec<u8>>,
    values: Vec<Vec<u8>>,
    subtrees: Vec<u64>,
    chunk: Arc<[u8]>,
    address: Address,
}

impl Node {
    fn count(&self) -> isize {
        self.keys.len() as isize
    }
}

/// One level of a cursor: a node and a position in it (Dolt's `cursor`, parents by index).
#[derive(Clone, Debug)]
struct Level {
    node: Option<Rc<Node>>,
    idx: isize,
}

/// A cursor from the leaf (index 0) to the root.
type Cursor = Vec<Level>;

/// What an edit does to a key: `Some(value)` puts, `None` deletes.
pub(crate) type Edit = (Vec<u8>, Option<Vec<u8>>);

/// The edited tree's root: its chunk (also put into the store) and address.
#[derive(Debug)]
pub(crate) struct EditedRoot {
    /// The root node's bytes.
    pub chunk: Arc<[u8]>,
    /// Its address.
    pub address: Address,
}

/// A node just written (Dolt's `novelNode`).
struct NewNode {
    address: Address,
    chunk: Arc<[u8]>,
    last_key: Vec<u8>,
    tree_count: u64,
}

/// One level's node being filled (Dolt's `chunker` minus the cursor, which is shared).
struct Builder {
    splitter: Splitter,
    keys: Vec<Vec<u8>>,
    values: Vec<Vec<u8>>,
    subtrees: Vec<u64>,
    size: usize,
}

struct Editor<'a> {
    io: &'a mut dyn ChunkIo,
    kind: TreeKind,
    nodes: HashMap<Address, Rc<Node>>,
    /// The chunker's cursor (levels shared by the level chunkers, as in Dolt).
    cur: Cursor,
    /// Level chunkers, leaf first; a level exists once Dolt would have created it.
    levels: Vec<Builder>,
}

/// Applies `edits` (sorted by `kind`'s order, one per key) to the tree at `root` as Dolt does;
/// every new node is put into `io`.
pub(crate) fn apply_edits(
    io: &mut dyn ChunkIo,
    kind: TreeKind,
    root: &[u8],
    edits: &[Edit],
) -> Result<EditedRoot> {
    let root_address = HashProfile::Dolt.address_of(root);
    let root_node = Rc::new(kind.decode(root_address, root)?);
    if edits.is_empty() {
        return Ok(EditedRoot {
            chunk: root_node.chunk.clone(),
            address: root_address,
        });
    }
    for w in edits.windows(2) {
        if kind.compare(&w[0].0, &w[1].0) != Ordering::Less {
            return Err(DoltError::Unsupported(format!(
                "{kind:?} edits must be sorted with one per key"
            )));
        }
    }
    let mut ed = Editor {
        io,
        kind,
        nodes: HashMap::new(),
        cur: Vec::new(),
        levels: Vec::new(),
    };
    let mut next = ed.cursor_at_key(root_node, &edits[0].0)?;
    ed.cur = next.clone();
    ed.new_level(0)?;
    for (key, value) in edits {
        ed.seek(&mut next, 0, key)?;
        let mut old = None;
        if valid(&next, 0) {
            let current = current_key(&next, 0);
            if kind.compare(key, current) == Ordering::Equal {
                old = Some(current_value(&next, 0).to_vec());
            }
            // Dolt compares values with `bytes.Equal`, for which nil equals empty.
            let same_value = value.as_deref().unwrap_or(&[]) == old.as_deref().unwrap_or(&[]);
            if same_value && key.as_slice() == current {
                continue;
            }
        }
        if old.is_none() && value.is_none() {
            continue;
        }
        ed.advance_to(0, &mut next)?;
        match (old, value) {
            (None, Some(v)) => {
                ed.append(0, key, v, 1)?;
            }
            (Some(_), Some(v)) => {
                ed.advance(0)?;
                ed.append(0, key, v, 1)?;
            }
            (Some(_), None) => ed.advance(0)?,
            (None, None) => {}
        }
    }
    ed.done(0)
}

fn node_of(c: &Cursor, l: usize) -> &Node {
    c[l].node.as_deref().expect("cursor level has a node")
}

fn valid(c: &Cursor, l: usize) -> bool {
    match &c[l].node {
        Some(n) => n.count() != 0 && c[l].idx >= 0 && c[l].idx < n.count(),
        None => false,
    }
}

fn current_key(c: &Cursor, l: usize) -> &[u8] {
    &node_of(c, l).keys[c[l].idx as usize]
}

fn current_value(c: &Cursor, l: usize) -> &[u8] {
    &node_of(c, l).values[c[l].idx as usize]
}

fn current_ref(c: &Cursor, l: usize) -> Result<Address> {
    Address::from_slice(current_value(c, l))
        .ok_or_else(|| DoltError::Unsupported("an internal node item is not an address".into()))
}

fn subtree_size(c: &Cursor, l: usize) -> u64 {
    if l == 0 {
        1
    } else {
        node_of(c, l).subtrees[c[l].idx as usize]
    }
}

fn at_node_end(c: &Cursor, l: usize) -> bool {
    c[l].idx == node_of(c, l).count() - 1
}

fn out_of_bounds(c: &Cursor, l: usize) -> bool {
    c[l].idx < 0 || c[l].idx >= node_of(c, l).count()
}

fn keep_in_bounds(c: &mut Cursor, l: usize) {
    if c[l].idx < 0 {
        c[l].idx = 0;
    }
    let last = node_of(c, l).count() - 1;
    if c[l].idx > last {
        c[l].idx = last;
    }
}

fn invalidate_at_end(c: &mut Cursor, l: usize) {
    c[l].idx = node_of(c, l).count();
}

/// Dolt's `compareCursors`: the difference of the highest level whose positions differ.
fn compare(a: &Cursor, b: &Cursor, from: usize) -> isize {
    let mut diff = 0;
    for l in from..a.len().min(b.len()) {
        let d = a[l].idx - b[l].idx;
        if d != 0 {
            diff = d;
        }
    }
    diff
}

fn copy_from(dst: &mut Cursor, src: &Cursor, from: usize) {
    let n = dst.len();
    dst[from..].clone_from_slice(&src[from..n]);
}

/// Dolt's `searchForKey`: the first item not less than `key`.
fn search(kind: TreeKind, node: &Node, key: &[u8]) -> isize {
    if node.keys.is_empty() {
        return 0;
    }
    node.keys
        .partition_point(|k| kind.compare(key, k) == Ordering::Greater) as isize
}

impl Editor<'_> {
    fn read(&mut self, address: Address) -> Result<Rc<Node>> {
        if let Some(n) = self.nodes.get(&address) {
            return Ok(n.clone());
        }
        let chunk = self.io.chunk(&address)?;
        let node = Rc::new(self.kind.decode(address, &chunk)?);
        self.nodes.insert(address, node.clone());
        Ok(node)
    }

    fn cursor_at_key(&mut self, root: Rc<Node>, key: &[u8]) -> Result<Cursor> {
        let mut levels = Vec::new();
        let mut node = root;
        loop {
            let mut level = Level {
                idx: search(self.kind, &node, key),
                node: Some(node.clone()),
            };
            if node.level == 0 {
                levels.push(level);
                break;
            }
            if node.keys.is_empty() {
                return Err(bad_chunk(node.address, "an empty internal node"));
            }
            level.idx = level.idx.clamp(0, node.count() - 1);
            let child = Address::from_slice(&node.values[level.idx as usize])
                .ok_or_else(|| bad_chunk(node.address, "child is not an address"))?;
            levels.push(level);
            node = self.read(child)?;
            if levels.len() > 64 {
                return Err(bad_chunk(node.address, "tree too deep"));
            }
        }
        levels.reverse();
        Ok(levels)
    }

    /// Dolt's `Seek` on the mutation cursor.
    fn seek(&mut self, c: &mut Cursor, l: usize, key: &[u8]) -> Result<()> {
        let mut in_bounds = true;
        if l + 1 < c.len() {
            let n = node_of(c, l);
            let (first, last) = match (n.keys.first(), n.keys.last()) {
                (Some(f), Some(la)) => (f, la),
                _ => return Err(bad_chunk(n.address, "an empty non-root node")),
            };
            in_bounds = self.kind.compare(key, first) != Ordering::Less
                && self.kind.compare(key, last) != Ordering::Greater;
        }
        if !in_bounds {
            self.seek(c, l + 1, key)?;
            keep_in_bounds(c, l + 1);
            let child = current_ref(c, l + 1)?;
            c[l].node = Some(self.read(child)?);
        }
        c[l].idx = search(self.kind, node_of(c, l), key);
        Ok(())
    }

    /// `cursor.advance` on the chunker's cursor (`next`: the mutation cursor instead).
    fn advance_cursor(&mut self, c: &mut Cursor, l: usize) -> Result<()> {
        if c[l].idx < node_of(c, l).count() - 1 {
            c[l].idx += 1;
            return Ok(());
        }
        if l + 1 >= c.len() {
            invalidate_at_end(c, l);
            return Ok(());
        }
        self.advance_cursor(c, l + 1)?;
        if out_of_bounds(c, l + 1) {
            invalidate_at_end(c, l);
            return Ok(());
        }
        let child = current_ref(c, l + 1)?;
        c[l].node = Some(self.read(child)?);
        c[l].idx = 0;
        Ok(())
    }

    fn advance(&mut self, l: usize) -> Result<()> {
        let mut c = std::mem::take(&mut self.cur);
        let r = self.advance_cursor(&mut c, l);
        self.cur = c;
        r
    }

    fn has_cursor(&self, l: usize) -> bool {
        l < self.cur.len()
    }

    /// Creates the chunker of level `l` (its cursor is the shared cursor's level, if any) and
    /// re-reads the prefix of its node.
    fn new_level(&mut self, l: usize) -> Result<()> {
        debug_assert_eq!(self.levels.len(), l);
        self.levels.push(Builder {
            splitter: Splitter::new(),
            keys: Vec::new(),
            values: Vec::new(),
            subtrees: Vec::new(),
            size: 0,
        });
        if self.has_cursor(l) {
            self.process_prefix(l)?;
        }
        Ok(())
    }

    fn process_prefix(&mut self, l: usize) -> Result<()> {
        if l + 1 < self.cur.len() && self.levels.len() <= l + 1 {
            self.new_level(l + 1)?;
        }
        let idx = self.cur[l].idx;
        self.cur[l].idx = 0;
        while self.cur[l].idx < idx {
            let (k, v, s) = self.current_item(l);
            self.append(l, &k, &v, s)?;
            self.advance(l)?;
        }
        Ok(())
    }

    fn current_item(&self, l: usize) -> (Vec<u8>, Vec<u8>, u64) {
        (
            current_key(&self.cur, l).to_vec(),
            current_value(&self.cur, l).to_vec(),
            subtree_size(&self.cur, l),
        )
    }

    /// Dolt's `chunker.append`: true if a node ended after the item.
    fn append(&mut self, l: usize, key: &[u8], value: &[u8], subtree: u64) -> Result<bool> {
        let b = &self.levels[l];
        let degenerate = l > 0 && b.keys.len() == 1;
        let overflow = b.size + key.len() + value.len() > MAX_NODE_DATA;
        if overflow && degenerate {
            return Err(DoltError::Unsupported(
                "an item too large for a tree node".into(),
            ));
        }
        if overflow {
            self.boundary(l)?;
        }
        let b = &mut self.levels[l];
        b.keys.push(key.to_vec());
        b.values.push(value.to_vec());
        b.subtrees.push(subtree);
        b.size += key.len() + value.len();
        let crossed = b.splitter.append(key, value.len(), l as u8);
        let degenerate = l > 0 && b.keys.len() == 1;
        if crossed && !degenerate {
            self.boundary(l)?;
            return Ok(true);
        }
        Ok(false)
    }

    /// Writes level `l`'s node.
    fn write_node(&mut self, l: usize) -> Result<NewNode> {
        let b = &mut self.levels[l];
        let chunk = self.kind.encode(&b.keys, &b.values, &b.subtrees, l as u8)?;
        let count: u64 = if l == 0 {
            b.keys.len() as u64
        } else {
            b.subtrees.iter().sum()
        };
        let last = b.keys.last().cloned().unwrap_or_default();
        b.keys.clear();
        b.values.clear();
        b.subtrees.clear();
        b.size = 0;
        let address = self.io.put(&chunk)?;
        Ok(NewNode {
            address,
            chunk: Arc::from(chunk),
            last_key: last,
            tree_count: count,
        })
    }

    fn boundary(&mut self, l: usize) -> Result<()> {
        let node = self.write_node(l)?;
        if self.levels.len() <= l + 1 {
            self.new_level(l + 1)?;
        }
        self.append(
            l + 1,
            &node.last_key,
            node.address.as_bytes(),
            node.tree_count,
        )?;
        self.levels[l].splitter.reset();
        Ok(())
    }

    /// Dolt's `chunker.advanceTo`.
    fn advance_to(&mut self, l: usize, next: &mut Cursor) -> Result<()> {
        let cmp = compare(&self.cur, next, l);
        if cmp == 0 {
            return Ok(());
        }
        if cmp > 0 {
            while compare(&self.cur, next, l) > 0 {
                self.advance_cursor(next, l)?;
            }
            return Ok(());
        }
        let (k, v, s) = self.current_item(l);
        let mut split = self.append(l, &k, &v, s)?;
        while !(split && at_node_end(&self.cur, l)) {
            self.advance(l)?;
            if compare(&self.cur, next, l) >= 0 {
                return Ok(());
            }
            let (k, v, s) = self.current_item(l);
            split = self.append(l, &k, &v, s)?;
        }
        if l + 1 >= self.cur.len() || l + 1 >= next.len() {
            copy_from(&mut self.cur, next, l);
            return Ok(());
        }
        if compare(&self.cur, next, l + 1) == 0 {
            copy_from(&mut self.cur, next, l);
            return Ok(());
        }
        self.advance(l + 1)?;
        invalidate_at_end(&mut self.cur, l);
        self.advance_to(l + 1, next)?;
        copy_from(&mut self.cur, next, l);
        self.process_prefix(l)
    }

    fn any_pending(&self, l: usize) -> bool {
        self.levels[l..].iter().any(|b| !b.keys.is_empty())
    }

    fn finalize_cursor(&mut self, l: usize) -> Result<()> {
        while valid(&self.cur, l) {
            let (k, v, s) = self.current_item(l);
            let ok = self.append(l, &k, &v, s)?;
            if ok && at_node_end(&self.cur, l) {
                break;
            }
            self.advance(l)?;
        }
        if l + 1 < self.cur.len() {
            self.advance(l + 1)?;
            self.cur[l].node = None;
        }
        Ok(())
    }

    /// Dolt's `chunker.Done`: the new root.
    fn done(&mut self, l: usize) -> Result<EditedRoot> {
        if self.has_cursor(l) {
            self.finalize_cursor(l)?;
        }
        if self.levels.len() > l + 1 && self.any_pending(l + 1) {
            if !self.levels[l].keys.is_empty() {
                self.boundary(l)?;
            }
            return self.done(l + 1);
        }
        if l == 0 || self.levels[l].keys.len() > 1 {
            let node = self.write_node(l)?;
            return Ok(EditedRoot {
                chunk: node.chunk,
                address: node.address,
            });
        }
        // One item above the leaves: the root is the first node below with more than one.
        let b = &self.levels[l];
        let mut child = match b.values.first().and_then(|v| Address::from_slice(v)) {
            Some(a) => a,
            None => return Err(DoltError::Unsupported("an empty tree level".into())),
        };
        loop {
            let node = self.read(child)?;
            if node.level == 0 || node.keys.len() > 1 {
                return Ok(EditedRoot {
                    chunk: node.chunk.clone(),
                    address: child,
                });
            }
            child = Address::from_slice(&node.values[0])
                .ok_or_else(|| bad_chunk(child, "child is not an address"))?;
        }
    }
}

/// Every `(key, value)` of the tree at `root` (values as stored: a commit closure's are empty),
/// in order.
pub(crate) fn entries(
    io: &dyn ChunkIo,
    kind: TreeKind,
    root: &[u8],
) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut out = Vec::new();
    let root_address = HashProfile::Dolt.address_of(root);
    collect(io, kind, root_address, root, 0, &mut out)?;
    Ok(out)
}

fn collect(
    io: &dyn ChunkIo,
    kind: TreeKind,
    address: Address,
    chunk: &[u8],
    depth: usize,
    out: &mut Vec<(Vec<u8>, Vec<u8>)>,
) -> Result<()> {
    if depth > 64 {
        return Err(bad_chunk(address, "tree too deep"));
    }
    let node = kind.decode(address, chunk)?;
    if node.level == 0 {
        out.extend(node.keys.into_iter().zip(node.values));
        return Ok(());
    }
    for v in &node.values {
        let child = Address::from_slice(v)
            .filter(|_| v.len() == ADDRESS_LEN)
            .ok_or_else(|| bad_chunk(address, "child is not an address"))?;
        let c = io.chunk(&child)?;
        collect(io, kind, child, &c, depth + 1, out)?;
    }
    Ok(())
}
