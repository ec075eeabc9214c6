//! Shared pieces of the conformance runner: per-category tallies and file helpers.

use std::path::Path;

/// Failures kept per category for the report; the count is always exact.
const MAX_REPORTED_FAILURES: usize = 20;

/// The outcome of one category of checks (for example `tuples` or `chunks`).
#[derive(Debug, Default)]
pub struct Category {
    /// Category name, as printed.
    pub name: String,
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed.
    pub failed: usize,
    /// The first failures, each saying which case and what differed.
    pub failures: Vec<String>,
    /// Set when the category's input is absent from the directory.
    pub missing: Option<String>,
}

impl Category {
    /// An empty tally.
    pub fn new(name: &str) -> Category {
        Category {
            name: name.to_string(),
            ..Category::default()
        }
    }

    /// Records a passing case.
    pub fn pass(&mut self) {
        self.passed += 1;
    }

    /// Records a failing case with a message naming the case.
    pub fn fail(&mut self, message: String) {
        self.failed += 1;
        if self.failures.len() < MAX_REPORTED_FAILURES {
            self.failures.push(message);
        }
    }

    /// Records the result of one case.
    pub fn record(&mut self, result: Result<(), String>) {
        match result {
            Ok(()) => self.pass(),
            Err(message) => self.fail(message),
        }
    }

    /// Marks the category as having no input in this directory.
    pub fn missing(name: &str, what: String) -> Category {
        Category {
            missing: Some(what),
            ..Category::new(name)
        }
    }
}

/// Decodes lower-case or upper-case hex; an error names the offending text.
#[allow(dead_code)]
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
#[allow(dead_code)]
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
