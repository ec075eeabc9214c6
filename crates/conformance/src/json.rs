//! Reading the vectors' JSON: JSON-lines files, hex fields, and shortened text for messages.

use std::path::Path;

/// Decodes lower-case or upper-case hex; an error names the offending text.
pub fn unhex(text: &str) -> Result<Vec<u8>, String> {
    hex::decode(text).map_err(|e| format!("bad hex {:?}: {e}", truncate(text, 40)))
}

/// Shortens long text for messages.
pub fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        text.to_string()
    } else {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &text[..end])
    }
}

/// Reads a JSON-lines file into values, one per non-empty line.
pub fn read_jsonl(path: &Path) -> Result<Vec<serde_json::Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))
        })
        .collect()
}
