//! Prints the golden vectors' folder (unpacking the repository's copy if needed), for scripts
//! that pass it to programs other than Rust tests; `pack SOURCE` refreshes the repository's
//! copy from a vectors folder.
//!
//! ```text
//! cargo run -q -p prollystore-test-vectors                 # prints the folder
//! cargo run --release -p prollystore-test-vectors -- pack ../shared/vectors
//! ```

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => {
            println!("{}", prollystore_test_vectors::dir().display());
            ExitCode::SUCCESS
        }
        [pack, source] if pack == "pack" => match prollystore_test_vectors::pack(Path::new(source))
        {
            Ok(()) => {
                println!("wrote {}", prollystore_test_vectors::archive().display());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: packing {source}: {e}");
                ExitCode::FAILURE
            }
        },
        _ => {
            eprintln!("usage: prollystore-test-vectors [pack SOURCE]");
            ExitCode::from(2)
        }
    }
}
