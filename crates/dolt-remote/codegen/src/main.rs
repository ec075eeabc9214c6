//! Writes the Rust code of Dolt's remote API into a directory: the messages of
//! `chunkstore.proto` and `credentials.proto` (package `dolt.services.remotesapi.v1alpha1`) and
//! the gRPC client of `ChunkStoreService`, as one file `dolt.services.remotesapi.v1alpha1.rs`.
//!
//! `protox` parses the vendored `.proto` files (with the well-known `google/protobuf` types it
//! ships), so no `protoc` is needed; `tonic-prost-build` turns the descriptors into code. No
//! server code is generated: this project is a client. Run through `scripts/remotesapi.sh`.
//!
//! Usage: `prollystore-dolt-remote-codegen PROTO_DIR OUT_DIR`.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [proto_dir, out_dir] = args.as_slice() else {
        eprintln!("usage: prollystore-dolt-remote-codegen PROTO_DIR OUT_DIR");
        return ExitCode::from(2);
    };
    match generate(PathBuf::from(proto_dir), PathBuf::from(out_dir)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn generate(proto_dir: PathBuf, out_dir: PathBuf) -> Result<(), Box<dyn std::error::Error>> {
    let files = ["chunkstore.proto", "credentials.proto"];
    let fds = protox::compile(files, [&proto_dir])
        .map_err(|e| format!("parsing the .proto files in {}: {e}", proto_dir.display()))?;
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| format!("creating {}: {e}", out_dir.display()))?;
    tonic_prost_build::configure()
        .build_server(false)
        .build_client(true)
        .build_transport(true)
        .emit_rerun_if_changed(false)
        .out_dir(&out_dir)
        .compile_fds(fds)
        .map_err(|e| format!("generating Rust into {}: {e}", out_dir.display()))?;
    Ok(())
}
