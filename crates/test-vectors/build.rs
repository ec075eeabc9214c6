//! Only here to give the crate an `OUT_DIR`: a folder inside the target directory, per build
//! profile, where `dir()` unpacks the vectors on first use.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
}
