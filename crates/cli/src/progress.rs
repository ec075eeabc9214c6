//! The progress bar every long command draws on stderr, in a module of its own so that the
//! `commands` and `dolt` modules, which both draw it, need not use each other.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A progress bar on stderr (hidden when stderr is not a terminal, or with --quiet).
pub(crate) fn progress(quiet: bool, len: Option<u64>, what: &str, bytes: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = match len {
        Some(l) => ProgressBar::new(l),
        None => ProgressBar::new_spinner(),
    };
    let template = match (len.is_some(), bytes) {
        (true, true) => "{msg} [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
        (true, false) => "{msg} [{bar:40}] {pos}/{len} ({per_sec}, {eta})",
        (false, true) => "{spinner} {msg} {bytes} ({bytes_per_sec})",
        (false, false) => "{spinner} {msg} {pos} ({per_sec})",
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_message(what.to_string());
    pb.enable_steady_tick(Duration::from_millis(100));
    pb
}
