//! Message verification over arbitrary bytes: never panics, and whatever verifies can be read
//! completely and written again into a chunk that verifies with the same content.
//!
//! The first input byte picks a mode: odd = the rest is taken as a whole chunk; even = the rest
//! is a FlatBuffers body that gets a correct 4-byte prefix and a known file identifier (chosen
//! by the byte) so the fuzzer reaches the table checks quickly.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prollystore_format::message::{
    AddressMapNode, BlobNode, BlobWriter, InternalInput, LeafInput, Message, Node, NodeWriter,
};
use prollystore_format::Address;

const IDS: [&[u8; 4]; 4] = [b"TUPM", b"BLOB", b"ADRM", b"CMCL"];

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        let _ = Message::verify(data);
        return;
    };
    if mode & 1 == 1 {
        check(rest);
    } else {
        let mut chunk = Vec::with_capacity(rest.len() + 8);
        let n = rest.len().max(8);
        chunk.extend_from_slice(&[0x1b, (n >> 16) as u8, (n >> 8) as u8, n as u8]);
        chunk.extend_from_slice(rest);
        chunk.resize(n + 4, 0);
        chunk[8..12].copy_from_slice(IDS[usize::from(mode >> 1) % IDS.len()]);
        check(&chunk);
    }
});

fn check(chunk: &[u8]) {
    match Message::verify(chunk) {
        Ok(Message::ProllyTree(n)) => check_node(&n),
        Ok(Message::Blob(b)) => check_blob(&b),
        Ok(Message::AddressMap(m)) => check_address_map(&m),
        Ok(Message::CommitClosure(c)) => {
            let mut acc = 0u64;
            for i in 0..c.count() {
                acc = acc.wrapping_add(c.height(i)) ^ u64::from(c.commit(i).0[0]);
            }
            for i in 0..c.child_count() {
                acc ^= u64::from(c.child(i).0[19]);
            }
            assert_eq!(c.subtree_counts().count(), c.count());
            std::hint::black_box(acc);
        }
        Ok(_) => {}
        Err(e) => {
            std::hint::black_box(e.to_string());
        }
    }
}

fn offsets(bytes: &[u8]) -> Vec<u16> {
    bytes.chunks_exact(2).map(|p| u16::from_le_bytes([p[0], p[1]])).collect()
}

fn check_node(n: &Node) {
    let mut sum = 0usize;
    for i in 0..n.count() {
        sum += n.key(i).len() + n.value(i).len();
        if !n.is_leaf() {
            std::hint::black_box(n.child(i));
        }
    }
    let counts: Vec<u64> = n.subtree_counts().collect();
    assert_eq!(counts.len(), n.count());
    assert_eq!(counts.iter().sum::<u64>(), n.tree_count());
    let vao: Vec<u16> = n.value_address_offsets().collect();
    for &o in &vao {
        assert!(usize::from(o) + 20 <= n.value_items().len());
    }
    // SAFETY: `n` is the verified view of these bytes, which gave the layout.
    let again = unsafe { Node::from_verified(n.chunk(), n.layout()) };
    assert_eq!(again.count(), n.count());
    let _ = n.partition_point(|k| k.len() < 3);
    std::hint::black_box(sum);

    let key_offsets = offsets(n.key_offsets_bytes());
    let mut w = NodeWriter::new();
    let out = if n.is_leaf() {
        let value_offsets = offsets(n.value_offsets_bytes());
        w.write_leaf(&LeafInput {
            key_items: n.key_items(),
            key_offsets: &key_offsets,
            value_items: n.value_items(),
            value_offsets: &value_offsets,
            value_address_offsets: &vao,
        })
    } else {
        w.write_internal(&InternalInput {
            key_items: n.key_items(),
            key_offsets: &key_offsets,
            child_addresses: n.address_array(),
            subtree_counts: &counts,
            level: n.level(),
        })
    }
    .expect("a verified node's parts are valid writer input");
    let re = Node::verify(out).expect("rewritten node verifies");
    assert_eq!(re.count(), n.count());
    assert_eq!(re.tree_count(), n.tree_count());
    for i in 0..n.count() {
        assert_eq!(re.key(i), n.key(i));
        assert_eq!(re.value(i), n.value(i));
    }
    check_replacing(n, &key_offsets, &counts, &vao);
}

/// The in-place writers on the node's last item give what the full writers give for the
/// node's parts with that one change.
fn check_replacing(n: &Node, key_offsets: &[u16], counts: &[u64], vao: &[u16]) {
    let Some(i) = n.count().checked_sub(1) else {
        return;
    };
    let (mut w, mut replacing) = (NodeWriter::new(), NodeWriter::new());
    if n.is_leaf() {
        let value: Vec<u8> = n.value(i).iter().map(|b| !b).collect();
        let got = replacing.write_leaf_replacing(n, i, &value).expect("same length");
        let value_offsets = offsets(n.value_offsets_bytes());
        let start = usize::from(value_offsets[i]);
        let mut value_items = n.value_items().to_vec();
        value_items[start..start + value.len()].copy_from_slice(&value);
        let want = w
            .write_leaf(&LeafInput {
                key_items: n.key_items(),
                key_offsets,
                value_items: &value_items,
                value_offsets: &value_offsets,
                value_address_offsets: vao,
            })
            .expect("changed leaf");
        assert_eq!(got, want);
    } else {
        let child = Address([0xa5; 20]);
        let count = counts[i].saturating_sub(1);
        // The node the full writer makes with `addresses` and `counts` for the children.
        let written = |w: &mut NodeWriter, addresses: &[u8], counts: &[u64]| {
            w.write_internal(&InternalInput {
                key_items: n.key_items(),
                key_offsets,
                child_addresses: addresses,
                subtree_counts: counts,
                level: n.level(),
            })
            .expect("changed node")
            .to_vec()
        };
        let (got, total) = replacing
            .write_internal_replacing(n, i, &child, count)
            .expect("one child replaced");
        let mut addresses = n.address_array().to_vec();
        addresses[20 * i..20 * i + 20].copy_from_slice(&child.0);
        let mut counts = counts.to_vec();
        counts[i] = count;
        assert_eq!(got, written(&mut w, &addresses, &counts));
        assert_eq!(total, counts.iter().sum::<u64>());
        // New addresses for the first and the last child at once, through the writer for
        // several, from the changed counts (so no total can overflow).
        let mut children = vec![(0, Address([0x3c; 20]), counts[0])];
        if i > 0 {
            children.push((i, child, counts[i]));
        }
        let (got, total) = replacing
            .write_internal_replacing_many(n, &children)
            .expect("children replaced");
        for &(j, a, c) in &children {
            addresses[20 * j..20 * j + 20].copy_from_slice(&a.0);
            counts[j] = c;
        }
        assert_eq!(got, written(&mut w, &addresses, &counts));
        assert_eq!(total, counts.iter().sum::<u64>());
    }
}

fn check_blob(b: &BlobNode) {
    let mut w = BlobWriter::new();
    if b.is_leaf() {
        let out = w.write_leaf(b.payload()).expect("leaf");
        assert_eq!(BlobNode::verify(out).expect("rewritten blob").payload(), b.payload());
    } else {
        let sizes: Vec<u64> = b.subtree_sizes().collect();
        assert_eq!(sizes.len(), b.child_count());
        for i in 0..b.child_count() {
            std::hint::black_box(b.child(i));
        }
        let out = w.write_internal(b.address_array(), &sizes, b.level()).expect("internal");
        assert_eq!(BlobNode::verify(out).expect("rewritten blob").tree_size(), b.tree_size());
    }
}

fn check_address_map(m: &AddressMapNode) {
    for i in 0..m.count() {
        let k = m.key(i);
        std::hint::black_box((k, m.address(i)));
    }
    assert_eq!(m.subtree_counts().count(), m.count());
    if m.count() > 0 {
        let _ = m.search(m.key(0));
    }
}
