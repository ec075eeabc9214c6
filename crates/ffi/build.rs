//! Gives the shared library a versioned SONAME on ELF platforms, so programs linked against
//! one release keep loading a compatible one: `libprollystore_ffi.so.<major>`, or
//! `.so.0.<minor>` before 1.0 (where a minor release may change the ABI). This is the name
//! `scripts/install-c.sh` installs the library under, with the usual symlinks.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let elf = matches!(
        os.as_str(),
        "linux" | "android" | "freebsd" | "netbsd" | "openbsd" | "dragonfly" | "illumos"
    );
    if !elf {
        return;
    }
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
    let minor = std::env::var("CARGO_PKG_VERSION_MINOR").unwrap_or_else(|_| "0".into());
    let soname = if major == "0" {
        format!("libprollystore_ffi.so.0.{minor}")
    } else {
        format!("libprollystore_ffi.so.{major}")
    };
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
}
