//! The tally of one category of checks: counts, and the first failures to report.

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
