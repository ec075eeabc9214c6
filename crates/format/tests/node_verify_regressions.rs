//! Replays every input the `node_verify` fuzz target ever failed on (fuzz/regressions/node_verify)
//! through message verification and full access: each must give an error or a readable
//! message, never a panic.

use std::path::Path;

use prollystore_format::message::{Message, Node};

#[test]
fn fuzz_regressions_do_not_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions/node_verify");
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("regression directory {} missing: {e}", dir.display()));
    let mut replayed = 0;
    for entry in entries {
        let path = entry.expect("directory entry").path();
        let data = std::fs::read(&path).expect("readable regression input");
        // The fuzz target's first byte chooses the mode; replay both the raw input and the
        // input without its mode byte, as whole chunks.
        for chunk in [&data[..], data.get(1..).unwrap_or(&[])] {
            if let Ok(Message::ProllyTree(n)) = Message::verify(chunk) {
                touch(&n);
            }
            if let Ok(n) = Node::verify(chunk) {
                touch(&n);
            }
        }
        replayed += 1;
    }
    assert!(replayed > 0, "no regression inputs in {}", dir.display());
}

fn touch(n: &Node) {
    for i in 0..n.count() {
        std::hint::black_box((n.key(i), n.value(i)));
        if !n.is_leaf() {
            std::hint::black_box(n.child(i));
        }
    }
    assert_eq!(n.subtree_counts().count(), n.count());
    std::hint::black_box(n.value_address_offsets().count());
}
