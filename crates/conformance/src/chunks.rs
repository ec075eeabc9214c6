//! Conformance category `chunks`: every chunk of every `maps/*.chunks` file hashes to its
//! recorded address (Dolt profile), verifies, decodes completely, and re-serializes from the
//! decoded parts to the identical bytes.

use std::path::Path;

use prollystore::format::message::{
    BlobWriter, InternalInput, LeafInput, Message, Node, NodeWriter,
};
use prollystore::format::{Address, HashProfile};

use crate::category::Category;
use crate::records::{records, Record};

/// Category `chunks`: one case per chunk record.
pub fn check_chunks(dir: &Path) -> Category {
    let maps = dir.join("maps");
    let mut files: Vec<_> = match std::fs::read_dir(&maps) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("chunks"))
            .collect(),
        Err(_) => return Category::missing("chunks", format!("{} not found", maps.display())),
    };
    if files.is_empty() {
        return Category::missing("chunks", format!("no *.chunks in {}", maps.display()));
    }
    files.sort();
    let mut cat = Category::new("chunks");
    let mut rewriter = Rewriter::default();
    for path in files {
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let data = match std::fs::read(&path) {
            Ok(d) => d,
            Err(e) => {
                cat.fail(format!("{name}: {e}"));
                continue;
            }
        };
        for (index, record) in records(&data).enumerate() {
            let Record { address, chunk } = match record {
                Ok(r) => r,
                Err(e) => {
                    cat.fail(format!("{name}: {e}"));
                    break;
                }
            };
            let case = format!("{name} record {index} ({})", address.to_hex());
            cat.record(
                check_one(&mut rewriter, address, chunk).map_err(|e| format!("{case}: {e}")),
            );
        }
    }
    cat
}

/// Writers reused across chunks.
#[derive(Default)]
struct Rewriter {
    node: NodeWriter,
    blob: BlobWriter,
    key_offsets: Vec<u16>,
    value_offsets: Vec<u16>,
    vao: Vec<u16>,
    counts: Vec<u64>,
    items: Vec<u8>,
    values: Vec<u8>,
}

fn check_one(rw: &mut Rewriter, addr: Address, chunk: &[u8]) -> Result<(), String> {
    let got = HashProfile::Dolt.address_of(chunk);
    if got != addr {
        return Err(format!(
            "SHA-512/20 is {}, record says {}",
            got.to_hex(),
            addr.to_hex()
        ));
    }
    let rewritten: &[u8] = match Message::verify(chunk).map_err(|e| e.to_string())? {
        Message::ProllyTree(n) => rewrite_node(rw, &n)?,
        Message::Blob(b) => {
            if b.is_leaf() {
                rw.blob.write_leaf(b.payload()).map_err(|e| e.to_string())?
            } else {
                rw.counts.clear();
                rw.counts.extend(b.subtree_sizes());
                rw.items.clear();
                for i in 0..b.child_count() {
                    rw.items.extend_from_slice(b.child(i).as_bytes());
                }
                if rw.counts.iter().sum::<u64>() != b.tree_size() {
                    return Err("subtree sizes do not sum to tree_size".into());
                }
                rw.blob
                    .write_internal(&rw.items, &rw.counts, b.level())
                    .map_err(|e| e.to_string())?
            }
        }
        other => return Err(format!("unexpected message kind in a map dump: {other:?}")),
    };
    if rewritten != chunk {
        let at = rewritten.iter().zip(chunk).position(|(a, b)| a != b);
        return Err(format!(
            "re-serialized bytes differ (lengths {} vs {}, first difference at {:?})",
            rewritten.len(),
            chunk.len(),
            at
        ));
    }
    Ok(())
}

/// Decodes every item of `n` into owned parts (item by item, not by copying the raw vectors)
/// and writes the node again.
fn rewrite_node<'w>(rw: &'w mut Rewriter, n: &Node) -> Result<&'w [u8], String> {
    rw.items.clear();
    rw.key_offsets.clear();
    rw.key_offsets.push(0);
    for i in 0..n.count() {
        rw.items.extend_from_slice(n.key(i));
        rw.key_offsets.push(rw.items.len() as u16);
    }
    rw.counts.clear();
    rw.counts.extend(n.subtree_counts());
    if rw.counts.len() != n.count() || rw.counts.iter().sum::<u64>() != n.tree_count() {
        return Err("subtree counts disagree with count/tree_count".into());
    }
    rw.values.clear();
    if n.is_leaf() {
        rw.value_offsets.clear();
        rw.value_offsets.push(0);
        for i in 0..n.count() {
            rw.values.extend_from_slice(n.value(i));
            rw.value_offsets.push(rw.values.len() as u16);
        }
        rw.vao.clear();
        rw.vao.extend(n.value_address_offsets());
        rw.node
            .write_leaf(&LeafInput {
                key_items: &rw.items,
                key_offsets: &rw.key_offsets,
                value_items: &rw.values,
                value_offsets: &rw.value_offsets,
                value_address_offsets: &rw.vao,
            })
            .map_err(|e| e.to_string())
    } else {
        for i in 0..n.count() {
            rw.values.extend_from_slice(n.child(i).as_bytes());
        }
        rw.node
            .write_internal(&InternalInput {
                key_items: &rw.items,
                key_offsets: &rw.key_offsets,
                child_addresses: &rw.values,
                subtree_counts: &rw.counts,
                level: n.level(),
            })
            .map_err(|e| e.to_string())
    }
}
