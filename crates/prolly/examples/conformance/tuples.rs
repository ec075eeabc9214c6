//! Conformance categories `tuples` and `order` (placeholder until the tuple codec lands).

use std::path::Path;

use crate::common::Category;

/// Category `tuples`: every line of `tuples.jsonl` encodes to its bytes and decodes to its fields.
pub fn check_tuples(dir: &Path) -> Category {
    Category::missing("tuples", format!("not implemented yet ({})", dir.display()))
}

/// Category `order`: every line of `tuple_order.jsonl` compares as Dolt compared it.
pub fn check_order(dir: &Path) -> Category {
    Category::missing("order", format!("not implemented yet ({})", dir.display()))
}
