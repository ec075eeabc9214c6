//! Helpers shared by the file-store tests: a toy chunk format (`'N'`, child count, child
//! addresses, payload) whose references the store's `gc_with` can follow, so the store is tested
//! without depending on Dolt messages.
#![allow(dead_code)]

use prollystore::format::Address;
use prollystore::store::StoreError;

/// A toy chunk naming `children`, followed by `payload`.
pub fn node(children: &[Address], payload: &[u8]) -> Vec<u8> {
    let mut v = vec![b'N', children.len() as u8];
    for c in children {
        v.extend_from_slice(c.as_bytes());
    }
    v.extend_from_slice(payload);
    v
}

/// The children and payload of a toy chunk (empty for other bytes).
pub fn parse(chunk: &[u8]) -> (Vec<Address>, &[u8]) {
    if chunk.first() != Some(&b'N') {
        return (Vec::new(), chunk);
    }
    let n = usize::from(chunk.get(1).copied().unwrap_or(0));
    let kids = (0..n)
        .filter_map(|i| {
            chunk
                .get(2 + 20 * i..22 + 20 * i)
                .and_then(Address::from_slice)
        })
        .collect();
    (kids, chunk.get(2 + 20 * n..).unwrap_or(&[]))
}

/// `gc_with`'s reference function for toy chunks.
pub fn children(chunk: &[u8], out: &mut Vec<Address>) -> Result<(), StoreError> {
    out.extend(parse(chunk).0);
    Ok(())
}
