//! Dolt's address maps (`AddressMap`: a store root's datasets, a root value's tables) and
//! commit closures (`CommitClosure`) edited and read by the tree crate's editor
//! ([`prollystore::Map`]), as Dolt's `ApplyMutations` edits them.
//!
//! The tree crate reads and writes `ProllyTreeNode`s; these trees are of other node kinds. A
//! [`KindStore`] stands between: it hands the editor each stored node turned into a
//! `ProllyTreeNode` with the same keys, values (a closure leaf's: none), children, counts and
//! level, and turns each node the editor writes back into its own kind before putting it, so
//! the addresses the editor sees are the Dolt addresses of the real nodes. Where nodes end
//! depends only on the items' keys and sizes, which both forms share, so the editor's nodes are
//! Dolt's.
//!
//! Two node-kind rules reach the editor through [`KindSchema`] (a [`TreeSchema`]):
//! [`TreeSchema::foreign_nodes`] (the store gives the addresses: the editor hashes nothing
//! itself) and, for commit closures, [`TreeSchema::leaf_values_kept`] false. A closure's leaf
//! items count one value byte when Dolt adds them (`emptyCommitClosureValue`) but none when its
//! chunker re-reads a leaf, so where the nodes end depends on which entries were added
//! together; the editor then re-chunks exactly as Dolt's chunker does (no shortcut over old
//! leaves, and a rewritten region ends only where an old leaf's own last item ends a node).

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

use elsa::FrozenMap;
use prollystore::store::{ChunkStore, StoreError, StoreFastPaths};
use prollystore::{Map, TreeSchema};
use prollystore_format::message::{
    AddressMapNode, AddressMapWriter, CommitClosureNode, CommitClosureWriter, InternalInput,
    LeafInput, MessageError, Node, NodeWriter,
};
use prollystore_format::{Address, HashProfile, ADDRESS_LEN};

use crate::error::{encode, DoltError, Result};
use crate::write::storage::chunk_io::ChunkIo;

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
        let empty = Parts::new(0);
        self.encode(&empty).map_err(|e| self.encode_error(e))
    }

    fn encode_error(self, e: MessageError) -> DoltError {
        encode(format!("{self:?} node"), e)
    }

    /// This kind's node of `parts` (a closure leaf drops the values).
    fn encode(self, p: &Parts) -> std::result::Result<Vec<u8>, MessageError> {
        let counts: &[u64] = if p.level == 0 { &[] } else { &p.counts };
        match self {
            TreeKind::AddressMap => Ok(AddressMapWriter::new()
                .write(&p.keys, &p.key_offsets, &p.values, counts, p.level)?
                .to_vec()),
            TreeKind::CommitClosure => {
                let addresses: &[u8] = if p.level == 0 { &[] } else { &p.values };
                Ok(CommitClosureWriter::new()
                    .write(&p.keys, addresses, counts, p.level)?
                    .to_vec())
            }
        }
    }

    /// The parts of this kind's node `chunk` (verified here).
    fn decode(self, chunk: &[u8]) -> std::result::Result<Parts, MessageError> {
        let mut p = Parts::new(0);
        match self {
            TreeKind::AddressMap => {
                let n = AddressMapNode::verify(chunk)?;
                p.level = n.level();
                for i in 0..n.count() {
                    p.push_key(n.key(i));
                }
                p.values.extend_from_slice(n.address_array());
                if !n.is_leaf() {
                    p.counts.extend(n.subtree_counts());
                }
            }
            TreeKind::CommitClosure => {
                let n = CommitClosureNode::verify(chunk)?;
                p.level = n.level();
                for i in 0..n.count() {
                    p.push_key(n.key(i));
                }
                if !n.is_leaf() {
                    for i in 0..n.count() {
                        p.values.extend_from_slice(n.child(i).as_bytes());
                    }
                    p.counts.extend(n.subtree_counts());
                }
            }
        }
        p.value_offsets = match (self, p.level) {
            (TreeKind::AddressMap, 0) => {
                (0..=p.count()).map(|i| (i * ADDRESS_LEN) as u16).collect()
            }
            _ => vec![0; p.count() + 1],
        };
        if p.level > 0 && (p.counts.len() != p.count() || p.values.len() != p.count() * ADDRESS_LEN)
        {
            return Err(MessageError::BadInput {
                field: "subtree_counts",
                reason: "one child and one count per key",
            });
        }
        Ok(p)
    }

    /// The `ProllyTreeNode` form of `parts` (what the tree crate's editor reads).
    fn to_prolly(p: &Parts, w: &mut NodeWriter) -> std::result::Result<Vec<u8>, MessageError> {
        let chunk = if p.level == 0 {
            w.write_leaf(&LeafInput {
                key_items: &p.keys,
                key_offsets: &p.key_offsets,
                value_items: &p.values,
                value_offsets: &p.value_offsets,
                value_address_offsets: &[],
            })?
        } else {
            w.write_internal(&InternalInput {
                key_items: &p.keys,
                key_offsets: &p.key_offsets,
                child_addresses: &p.values,
                subtree_counts: &p.counts,
                level: p.level,
            })?
        };
        Ok(chunk.to_vec())
    }

    /// The parts of a `ProllyTreeNode` the editor wrote, as this kind stores them.
    fn parts_of_prolly(self, n: &Node<'_>) -> std::result::Result<Parts, MessageError> {
        let mut p = Parts::new(n.level());
        for i in 0..n.count() {
            p.push_key(n.key(i));
        }
        if n.is_leaf() {
            if self == TreeKind::AddressMap {
                for i in 0..n.count() {
                    let v = n.value(i);
                    if v.len() != ADDRESS_LEN {
                        return Err(MessageError::BadInput {
                            field: "value_items",
                            reason: "an address map's values are 20-byte addresses",
                        });
                    }
                    p.values.extend_from_slice(v);
                }
            }
        } else {
            p.values.extend_from_slice(n.address_array());
            p.counts.extend(n.subtree_counts());
        }
        Ok(p)
    }
}

/// A node's contents in the layout both writers take.
#[derive(Debug)]
struct Parts {
    level: u8,
    keys: Vec<u8>,
    /// n+1 boundaries into `keys`.
    key_offsets: Vec<u16>,
    /// Leaves: values (an address map's addresses; a closure's none); internal nodes: child
    /// addresses.
    values: Vec<u8>,
    /// Leaves: n+1 boundaries into `values`.
    value_offsets: Vec<u16>,
    /// Internal nodes: subtree counts.
    counts: Vec<u64>,
}

impl Parts {
    /// No items yet, at `level`.
    fn new(level: u8) -> Parts {
        Parts {
            level,
            keys: Vec::new(),
            key_offsets: vec![0],
            values: Vec::new(),
            value_offsets: Vec::new(),
            counts: Vec::new(),
        }
    }

    fn count(&self) -> usize {
        self.key_offsets.len().saturating_sub(1)
    }

    fn push_key(&mut self, key: &[u8]) {
        self.keys.extend_from_slice(key);
        // Keys of a verified node or of the editor's nodes end within 64 KiB (u16 offsets).
        self.key_offsets.push(self.keys.len() as u16);
    }
}

/// A tree kind's key order and node rules, for the tree crate's editor.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KindSchema(pub(crate) TreeKind);

impl TreeSchema for KindSchema {
    #[inline]
    fn compare_keys(&self, a: &[u8], b: &[u8]) -> Ordering {
        self.0.compare(a, b)
    }
    fn values_have_addresses(&self) -> bool {
        false
    }
    fn push_value_address_offsets(&self, _: &[u8], _: usize, _: &mut Vec<u16>) {}
    fn foreign_nodes(&self) -> bool {
        true
    }
    fn leaf_values_kept(&self) -> bool {
        self.0 != TreeKind::CommitClosure
    }
}

/// Where a [`KindStore`] reads and puts chunks.
enum Io<'a> {
    Read(&'a dyn ChunkIo),
    Write(RefCell<&'a mut dyn ChunkIo>),
}

/// A tree of one kind's nodes, seen as `ProllyTreeNode`s (see the module).
struct KindStore<'a> {
    kind: TreeKind,
    io: Io<'a>,
    /// The root node's bytes: an address map's root is embedded in its store root or root
    /// value, not stored on its own.
    root: (Address, Arc<[u8]>),
    /// Nodes read or written so far, as `ProllyTreeNode`s, by their Dolt address.
    nodes: FrozenMap<Address, Box<[u8]>>,
    /// This kind's chunks written by this edit, by address.
    written: RefCell<HashMap<Address, Arc<[u8]>>>,
    /// The first error below the store interface, kept with its source for the caller.
    failure: RefCell<Option<DoltError>>,
    writer: RefCell<NodeWriter>,
}

impl<'a> KindStore<'a> {
    /// A store for the tree whose root node is `root`, which the editor finds at `address`.
    fn new(kind: TreeKind, io: Io<'a>, root: &[u8], address: Address) -> KindStore<'a> {
        KindStore {
            kind,
            io,
            root: (address, Arc::from(root)),
            nodes: FrozenMap::new(),
            written: RefCell::new(HashMap::new()),
            failure: RefCell::new(None),
            writer: RefCell::new(NodeWriter::new()),
        }
    }

    /// Keeps `e` for [`KindStore::error`] and returns the store error the tree crate sees.
    fn fail(&self, e: DoltError, seen: StoreError) -> StoreError {
        let mut failure = self.failure.borrow_mut();
        if failure.is_none() {
            *failure = Some(e);
        }
        seen
    }

    /// The error to report for a failed tree operation: the one kept below it, if any.
    fn error(&self, e: prollystore::TreeError) -> DoltError {
        self.failure.borrow_mut().take().unwrap_or_else(|| e.into())
    }

    /// This kind's chunk at `address`.
    fn kind_chunk(&self, address: &Address) -> Result<Arc<[u8]>> {
        if *address == self.root.0 {
            return Ok(self.root.1.clone());
        }
        if let Some(c) = self.written.borrow().get(address) {
            return Ok(c.clone());
        }
        match &self.io {
            Io::Read(io) => io.chunk(address),
            Io::Write(io) => io.borrow().chunk(address),
        }
    }

    /// The `ProllyTreeNode` form of the node at `address`, made on first use.
    fn prolly(&self, address: &Address) -> std::result::Result<&[u8], StoreError> {
        if let Some(n) = self.nodes.get(address) {
            return Ok(n);
        }
        let chunk = self
            .kind_chunk(address)
            .map_err(|e| self.fail(e, StoreError::Missing(*address)))?;
        let bad = |e: MessageError| StoreError::BadMessage {
            address: *address,
            source: e,
        };
        let parts = self.kind.decode(&chunk).map_err(bad)?;
        let node = TreeKind::to_prolly(&parts, &mut self.writer.borrow_mut()).map_err(bad)?;
        Ok(self.nodes.insert(*address, node.into_boxed_slice()))
    }
}

impl ChunkStore for KindStore<'_> {
    fn profile(&self) -> HashProfile {
        HashProfile::Dolt
    }

    fn get(&self, address: &Address) -> std::result::Result<Option<&[u8]>, StoreError> {
        self.prolly(address).map(Some)
    }

    fn get_node(&self, address: &Address) -> std::result::Result<Node<'_>, StoreError> {
        let bytes = self.prolly(address)?;
        // `Node::verify` would refuse these nodes: their keys (names, closure keys) are not
        // tuples. The kind's own node was verified when it was read.
        // SAFETY: every node in `self.nodes` was serialized by `TreeKind::to_prolly` with this
        // process's `NodeWriter` and is kept unchanged in the frozen map.
        unsafe { Node::from_own_writer(bytes) }.map_err(|source| StoreError::BadMessage {
            address: *address,
            source,
        })
    }

    fn has(&self, address: &Address) -> std::result::Result<bool, StoreError> {
        Ok(self.nodes.get(address).is_some() || self.kind_chunk(address).is_ok())
    }

    /// Takes a `ProllyTreeNode` of tuples (the editor's go through
    /// [`StoreFastPaths::put_node`]) and puts it as this kind's node.
    fn put(&self, chunk: &[u8]) -> std::result::Result<Address, StoreError> {
        let node = Node::verify(chunk).map_err(|source| StoreError::BadMessage {
            address: HashProfile::Dolt.address_of(chunk),
            source,
        })?;
        self.put_kind(&node)
    }
}

impl KindStore<'_> {
    /// Puts the editor's node `node` as this kind's node and returns that node's address.
    fn put_kind(&self, node: &Node<'_>) -> std::result::Result<Address, StoreError> {
        let bad = |e: MessageError| StoreError::BadMessage {
            address: HashProfile::Dolt.address_of(node.chunk()),
            source: e,
        };
        let parts = self.kind.parts_of_prolly(node).map_err(bad)?;
        let own = self.kind.encode(&parts).map_err(bad)?;
        let address = match &self.io {
            Io::Write(io) => io
                .borrow_mut()
                .put(&own)
                .map_err(|e| self.fail(e, StoreError::Missing(Address::ZERO)))?,
            Io::Read(_) => {
                let e =
                    DoltError::Unsupported(format!("{:?} edit on a read-only store", self.kind));
                return Err(self.fail(e, StoreError::Missing(Address::ZERO)));
            }
        };
        self.written.borrow_mut().insert(address, Arc::from(own));
        Ok(address)
    }
}

/// The editor's puts: its own nodes, whose keys need not be tuples.
impl StoreFastPaths for KindStore<'_> {
    unsafe fn put_node(&self, chunk: &[u8]) -> std::result::Result<Address, StoreError> {
        // SAFETY: the caller's promise (this method's contract): `chunk` is a node this
        // process's `NodeWriter` serialized, unchanged since.
        let node =
            unsafe { Node::from_own_writer(chunk) }.map_err(|source| StoreError::BadMessage {
                address: HashProfile::Dolt.address_of(chunk),
                source,
            })?;
        self.put_kind(&node)
    }
}

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

/// Applies `edits` (sorted by `kind`'s order, one per key) to the tree at `root` as Dolt does;
/// every new node is put into `io`.
pub(crate) fn apply_edits(
    io: &mut dyn ChunkIo,
    kind: TreeKind,
    root: &[u8],
    edits: &[Edit],
) -> Result<EditedRoot> {
    let address = HashProfile::Dolt.address_of(root);
    let store = KindStore::new(kind, Io::Write(RefCell::new(io)), root, address);
    let map = Map::new(&store, store.root.0, KindSchema(kind));
    let edits: Vec<(&[u8], Option<&[u8]>)> = edits
        .iter()
        .map(|(k, v)| (k.as_slice(), v.as_deref()))
        .collect();
    let address = match map.apply_sorted(&edits) {
        Ok(m) => m.root(),
        Err(prollystore::TreeError::Unsorted { .. }) => {
            return Err(DoltError::Unsupported(format!(
                "{kind:?} edits must be sorted with one per key"
            )))
        }
        Err(e) => return Err(store.error(e)),
    };
    Ok(EditedRoot {
        chunk: store.kind_chunk(&address)?,
        address,
    })
}

/// Every `(key, value)` of the tree at `root` (values as stored: a commit closure's are empty),
/// in order.
pub(crate) fn entries(
    io: &dyn ChunkIo,
    kind: TreeKind,
    root: &[u8],
) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    // A read needs no real address for the root (hashing it costs more than reading a small
    // map): the zero address, which no chunk has, stands for it.
    let store = KindStore::new(kind, Io::Read(io), root, Address::ZERO);
    let map = Map::new(&store, store.root.0, KindSchema(kind));
    let mut out = Vec::new();
    let iter = map.iter().map_err(|e| store.error(e))?;
    for item in iter {
        let (k, v) = item.map_err(|e| store.error(e))?;
        out.push((k.to_vec(), v.to_vec()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    //! The editor against Dolt's `ApplyMutations`: random batches on address maps and long
    //! histories of commit closures (whose node ends depend on which keys were added together)
    //! must give, step by step, the roots and new nodes that `write/maps/chunker.rs` gave — a
    //! step-for-step port of Dolt's chunker (`mutator.go`, `chunker.go`, `node_cursor.go`),
    //! checked against Dolt's own maps and closures of hundreds of nodes, deleted once this
    //! editor replaced it (its last version: commit 5b6b25e). Its results are kept as one
    //! digest per seed (`ADDRESS_MAP_TRAILS`, `CLOSURE_TRAILS`: the Dolt hash of the trail
    //! [`run`] makes), recorded from it while both editors ran side by side in that commit and
    //! agreed on every step.
    //!
    //! Before every step an ordinary tree is edited on the same thread, as the writer edits
    //! tables before their maps: its level builder hashes in batches, and the kind edit after
    //! it must still take the addresses the store gives (it once took its own hash of the
    //! `ProllyTreeNode` form: a missing chunk).
    use std::collections::{BTreeMap, BTreeSet, HashSet};

    use prollystore::{BytesSchema, MemoryStore};

    use super::*;

    /// Per address-map seed 1..=12, the digest of `write/maps/chunker.rs`'s trail.
    const ADDRESS_MAP_TRAILS: [&str; 12] = [
        "2e8g5gim0ieiuq3napsl625c5i4o92b5",
        "sm6hrkrmv0734darb371sviiqf0fp026",
        "c2r8j0eb5tu9dqpi6k82aepjtnnsue2v",
        "glfmvt9lvp9j5o9kmc0hro9mlfc8c6ia",
        "79u2oihlmv1l9qk01rjviu2j3shmfegg",
        "56kgh0e594s50mhu8eu1e64pb2aeqdma",
        "ct0hbc3dk2ec57njlt9g67jha4ubajjn",
        "ilas281no3467b9bfn6io9fr89bp4bpm",
        "hd6lc58k9233gfmh6r4a30qudbrj2t45",
        "2sjr4h8fagmqprieuo7op8nopojr5l26",
        "0k0e2lr11bp481hd9ik2702lri4ftc1a",
        "vv2kgk896rmvpehsiidquclu8s2pfrpk",
    ];

    /// Per closure seed 1..=6, the digest of `write/maps/chunker.rs`'s trail.
    const CLOSURE_TRAILS: [&str; 6] = [
        "5uim5gu9m40quff25tikcgdun77gvp0e",
        "v5g0uj1om4cjrqg2m742472dat8g8pje",
        "h0rdf89ekrnhvso1mocdml4nrt0jatqu",
        "atrfjcti7kj2thp5lmm8fbdc8vor4ego",
        "m6a6mubeucbqe146932n52oi2rkiacsf",
        "pka2q24sbkmhrvkh6njcr3ovdatt6kse",
    ];

    /// Chunks in memory, with the order they were put in.
    #[derive(Default)]
    struct Mem {
        chunks: HashMap<Address, Arc<[u8]>>,
        puts: Vec<Address>,
    }

    impl ChunkIo for Mem {
        fn chunk(&self, address: &Address) -> Result<Arc<[u8]>> {
            self.chunks
                .get(address)
                .cloned()
                .ok_or(DoltError::MissingChunk(*address))
        }
        fn put(&mut self, chunk: &[u8]) -> Result<Address> {
            let a = HashProfile::Dolt.address_of(chunk);
            self.chunks.entry(a).or_insert_with(|| Arc::from(chunk));
            self.puts.push(a);
            Ok(a)
        }
    }

    /// A small deterministic generator (xorshift).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn address(r: &mut Rng) -> Vec<u8> {
        let mut a = Vec::with_capacity(ADDRESS_LEN);
        while a.len() < ADDRESS_LEN {
            a.extend_from_slice(&r.next().to_le_bytes());
        }
        a.truncate(ADDRESS_LEN);
        a
    }

    fn closure_key(height: u64, r: &mut Rng) -> Vec<u8> {
        let mut k = height.to_le_bytes().to_vec();
        k.extend_from_slice(&address(r));
        k
    }

    fn sorted(kind: TreeKind, mut edits: Vec<Edit>) -> Vec<Edit> {
        edits.sort_by(|a, b| kind.compare(&a.0, &b.0));
        edits.dedup_by(|a, b| a.0 == b.0);
        edits
    }

    /// The batches of address-map seed `seed`: 40 rounds of new names, changed and removed
    /// ones (every seventh round up to 400 edits).
    fn address_map_batches(seed: u64) -> Vec<Vec<Edit>> {
        let kind = TreeKind::AddressMap;
        let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut names: Vec<Vec<u8>> = Vec::new();
        let mut batches = Vec::new();
        for round in 0..40 {
            let n = 1 + r.below(if round % 7 == 0 { 400 } else { 12 });
            let mut edits = Vec::new();
            for _ in 0..n {
                let existing = !names.is_empty() && r.below(3) == 0;
                let name = if existing {
                    names[r.below(names.len() as u64) as usize].clone()
                } else {
                    let len = 1 + r.below(40) as usize;
                    let mut s = format!("t{}", r.next()).into_bytes();
                    s.resize(len.max(2), b'a' + (r.below(26) as u8));
                    names.push(s.clone());
                    s
                };
                let value = if existing && r.below(4) == 0 {
                    None
                } else {
                    Some(address(&mut r))
                };
                edits.push((name, value));
            }
            batches.push(sorted(kind, edits));
        }
        batches
    }

    /// The batches of closure seed `seed`: 1,500 commits, one parent key each, with merges
    /// adding batches of keys and re-adding keys already there.
    fn closure_batches(seed: u64) -> Vec<Vec<Edit>> {
        let kind = TreeKind::CommitClosure;
        let added = || Some(vec![0u8]);
        let mut r = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d));
        let mut keys: Vec<Vec<u8>> = Vec::new();
        let mut height = 1u64;
        let mut batches = Vec::new();
        for _ in 0..1500 {
            let mut edits = vec![(closure_key(height, &mut r), added())];
            if r.below(25) == 0 {
                // A merge: the other side's history, some of it known already.
                for _ in 0..r.below(60) {
                    let h = 1 + r.below(height);
                    edits.push((closure_key(h, &mut r), added()));
                }
                for _ in 0..r.below(4) {
                    if !keys.is_empty() {
                        let k = keys[r.below(keys.len() as u64) as usize].clone();
                        edits.push((k, added()));
                    }
                }
            }
            let edits = sorted(kind, edits);
            keys.extend(edits.iter().map(|(k, _)| k.clone()));
            batches.push(edits);
            height += 1 + r.below(2);
        }
        batches
    }

    /// An ordinary tree (`ProllyTreeNode`s in a Dolt-hashed store) edited once per step.
    struct Table {
        store: MemoryStore,
        root: Address,
        next: u32,
    }

    impl Table {
        fn new() -> Table {
            let store = MemoryStore::new(HashProfile::Dolt);
            let keys: Vec<[u8; 4]> = (0..2000u32).map(|i| (2 * i).to_be_bytes()).collect();
            let items = keys.iter().map(|k| (&k[..], &[7u8; 24][..]));
            let root = Map::from_sorted(&store, BytesSchema, items).unwrap().root();
            Table {
                store,
                root,
                next: 1,
            }
        }

        /// Inserts a key (a leaf pass that hashes its nodes in batches).
        fn edit(&mut self) {
            let key = self.next.to_be_bytes();
            self.next = (self.next + 2) % 4000;
            let map = Map::new(&self.store, self.root, BytesSchema);
            self.root = map
                .apply_sorted(&[(&key[..], Some(&[1u8; 24][..]))])
                .unwrap()
                .root();
        }
    }

    /// Applies `batches` in turn to `kind`'s empty tree, an ordinary tree edited before each. Returns the chunks, the last root, and the trail: each step's root
    /// address, then the sorted addresses of the nodes that step put that the store lacked.
    fn run(kind: TreeKind, batches: &[Vec<Edit>]) -> (Mem, Arc<[u8]>, Vec<u8>) {
        let mut io = Mem::default();
        let mut table = Table::new();
        let mut root: Arc<[u8]> = Arc::from(kind.empty_root().unwrap());
        let mut trail = Vec::new();
        for edits in batches {
            table.edit();
            let known: HashSet<Address> = io.chunks.keys().copied().collect();
            let start = io.puts.len();
            let EditedRoot { chunk, address } = apply_edits(&mut io, kind, &root, edits).unwrap();
            assert_eq!(address, HashProfile::Dolt.address_of(&chunk));
            trail.extend_from_slice(address.as_bytes());
            // Dolt's editor also writes again some old nodes it re-reads unchanged: stores
            // and the journal keep one copy.
            let fresh: BTreeSet<Address> = io.puts[start..]
                .iter()
                .filter(|a| !known.contains(a))
                .copied()
                .collect();
            for a in fresh {
                trail.extend_from_slice(a.as_bytes());
            }
            root = chunk;
        }
        (io, root, trail)
    }

    /// What the tree holds after `batches`, by key (a closure's values are stored empty).
    fn model(kind: TreeKind, batches: &[Vec<Edit>]) -> BTreeMap<Vec<u8>, Vec<u8>> {
        let mut m = BTreeMap::new();
        for (k, v) in batches.iter().flatten() {
            match (kind, v) {
                (_, None) => m.remove(k),
                (TreeKind::AddressMap, Some(v)) => m.insert(k.clone(), v.clone()),
                (TreeKind::CommitClosure, Some(_)) => m.insert(k.clone(), Vec::new()),
            };
        }
        m
    }

    /// Runs `batches` (seed `seed`), checks the trail's digest against `want` and the contents
    /// against the model; returns the last root and how many keys the tree holds.
    fn check(kind: TreeKind, seed: u64, batches: &[Vec<Edit>], want: &str) -> (Arc<[u8]>, usize) {
        let (io, root, trail) = run(kind, batches);
        let digest = HashProfile::Dolt.address_of(&trail).to_string();
        assert_eq!(digest, want, "{kind:?} seed {seed}");
        let all: BTreeMap<Vec<u8>, Vec<u8>> =
            entries(&io, kind, &root).unwrap().into_iter().collect();
        assert_eq!(all, model(kind, batches), "{kind:?} seed {seed}");
        (root, all.len())
    }

    #[test]
    fn address_maps_edit_as_dolt_does() {
        for (seed, want) in (1..).zip(ADDRESS_MAP_TRAILS) {
            let batches = address_map_batches(seed);
            let (_, names) = check(TreeKind::AddressMap, seed, &batches, want);
            assert!(names > 100, "seed {seed}: {names} names");
        }
    }

    #[test]
    fn commit_closures_edit_as_dolt_does() {
        for (seed, want) in (1..).zip(CLOSURE_TRAILS) {
            let batches = closure_batches(seed);
            let (root, _) = check(TreeKind::CommitClosure, seed, &batches, want);
            let root_node = CommitClosureNode::verify(&root).unwrap();
            assert!(root_node.level() >= 1, "seed {seed}: a one-leaf closure");
        }
    }
}
