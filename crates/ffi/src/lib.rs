//! C ABI for prollystore. The full API arrives with its own issue; for now it exposes the
//! library version so that the header, the build and the C toolchain are wired up.

use std::ffi::c_char;

/// The library version as a NUL-terminated string with static lifetime. Never NULL.
#[no_mangle]
pub extern "C" fn prolly_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}
