//! Unit tests of the node view: common key and value widths, and the accessors that use them.

use super::{LeafInput, Node, NodeWriter};

/// A one-field tuple holding `data` (bytes, then the count).
fn tuple(data: &[u8]) -> Vec<u8> {
    let mut t = data.to_vec();
    t.extend_from_slice(&1u16.to_le_bytes());
    t
}

fn leaf(keys: &[Vec<u8>], values: &[Vec<u8>]) -> Vec<u8> {
    let concat = |items: &[Vec<u8>]| -> (Vec<u8>, Vec<u16>) {
        let mut bytes = Vec::new();
        let mut offsets = vec![0u16];
        for i in items {
            bytes.extend_from_slice(i);
            offsets.push(bytes.len() as u16);
        }
        (bytes, offsets)
    };
    let (ki, ko) = concat(keys);
    let (vi, vo) = concat(values);
    let mut w = NodeWriter::new();
    w.write_leaf(&LeafInput {
        key_items: &ki,
        key_offsets: &ko,
        value_items: &vi,
        value_offsets: &vo,
        value_address_offsets: &[],
    })
    .expect("leaf")
    .to_vec()
}

/// Fixed-width items are found as such, and every accessor gives the same items as the
/// offsets do, whatever the widths.
#[test]
fn widths_are_detected_and_accessors_agree() {
    let fixed: Vec<Vec<u8>> = (0u8..9).map(|i| tuple(&[i, i, i])).collect();
    let ragged: Vec<Vec<u8>> = (0u8..9)
        .map(|i| tuple(&vec![i; usize::from(i % 3)]))
        .collect();
    // Same length, different field counts: not uniform.
    let mut counts = fixed.clone();
    // Two fields: data [7], the offset 0 of field 1, the count 2.
    counts[4] = vec![7, 0, 0, 2, 0];
    for (keys, values, kw, vw) in [
        (&fixed, &fixed, Some(5), Some(5)),
        (&fixed, &ragged, Some(5), None),
        (&ragged, &fixed, None, Some(5)),
        (&fixed, &counts, Some(5), None),
    ] {
        let chunk = leaf(keys, values);
        let node = Node::verify(&chunk).expect("verifies");
        assert_eq!((node.key_width(), node.value_width()), (kw, vw));
        // SAFETY: `leaf` wrote `chunk` with this process's `NodeWriter`.
        let trusted = unsafe { Node::from_own_writer(&chunk) }.expect("parses");
        assert_eq!(trusted.layout(), node.layout());
        let pairs: Vec<_> = node.entries().collect();
        assert_eq!(pairs.len(), keys.len());
        let folded = node.entries().fold(Vec::new(), |mut v, p| {
            v.push(p);
            v
        });
        assert_eq!(folded, pairs);
        for (i, (k, v)) in pairs.iter().enumerate() {
            assert_eq!((*k, *v), (&keys[i][..], &values[i][..]));
            assert_eq!((node.key(i), node.value(i)), (*k, *v));
        }
        let mut skipped = node.entries();
        skipped.skip_pairs(3);
        assert_eq!(skipped.len(), keys.len() - 3);
        assert_eq!(skipped.next(), Some(pairs[3]));
        // One side of a range: the keys or values of those pairs, ranges past the end
        // clamped.
        for (start, end) in [(0, 9), (2, 5), (4, 4), (7, 20), (12, 15)] {
            let want: Vec<_> = pairs.iter().take(end).skip(start).collect();
            let keys_in: Vec<_> = node.keys_in(start..end).collect();
            let values_in: Vec<_> = node.values_in(start..end).collect();
            assert_eq!(keys_in, want.iter().map(|p| p.0).collect::<Vec<_>>());
            assert_eq!(values_in, want.iter().map(|p| p.1).collect::<Vec<_>>());
            assert_eq!(node.values_in(start..end).len(), want.len());
        }
    }
}
