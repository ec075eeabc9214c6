//! `prolly`: the prollystore command-line tool. See the crate README for usage.

use clap::Parser;
use prollystore_cli::commands::{run, Cli};
use prollystore_cli::Error;

fn main() {
    // A bug must still end as one line, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("error: internal error (a bug): {msg}{at}");
    }));
    let cli = Cli::parse();
    let code = match run(cli) {
        Ok(()) | Err(Error::BrokenPipe) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    };
    std::process::exit(code);
}
