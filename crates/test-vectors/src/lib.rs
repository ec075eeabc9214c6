//! # prollystore-test-vectors
//!
//! Where the tests find the golden vectors (data produced by running Dolt itself; what each file
//! holds is in `vectors/README.md`): the folder named by `PROLLY_VECTORS` when it is set, else
//! the copy kept in this repository, `vectors/vectors.tar.zst`, unpacked on first use into the
//! target directory. A clean clone therefore passes `cargo test` with nothing beside it, and
//! `PROLLY_VECTORS` checks a newer set without touching the repository.
//!
//! Absent vectors are a failure, never a skip: every function here panics with a message that
//! says what is missing and where it looked.
//!
//! This crate sits below every crate of the workspace and depends on none of them, so any
//! crate's tests can use it without a dependency pointing back up the chain. It is a path
//! dev-dependency only and is never published.

use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{self, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The environment variable naming a vectors folder to use instead of the repository's copy.
pub const ENV: &str = "PROLLY_VECTORS";

/// The Dolt databases under `dolt-db/`, one per way Dolt stores chunks (archives, the chunk
/// journal, classic table files, archives with a zstd dictionary), each beside a
/// `<name>.expected/` folder of what the `dolt` CLI printed for it.
pub const DOLT_DATABASES: [&str; 4] = ["vecdb", "vecdb_journal", "vecdb_tablefiles", "vecdb_zstd"];

/// zstd level of the archive: the slowest to write, the smallest to keep in git.
const PACK_LEVEL: i32 = 19;

/// Window of the archive's long-distance matching (2^27 = 128 MiB, the largest a default zstd
/// decoder accepts): the four Dolt databases and their expected outputs repeat each other across
/// megabytes, which a normal window would not see.
const PACK_WINDOW_LOG: u32 = 27;

/// The folder of the repository's copy: `vectors/` at the workspace root.
pub fn in_repo_folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors")
}

/// The repository's compressed copy of the vectors.
pub fn archive() -> PathBuf {
    in_repo_folder().join("vectors.tar.zst")
}

/// The vectors folder: `$PROLLY_VECTORS` if set, else the repository's copy, unpacked into the
/// target directory the first time any test asks (and again only when the archive changes).
///
/// # Panics
///
/// When `PROLLY_VECTORS` names no folder, or when it is unset and the repository's archive is
/// missing or cannot be unpacked.
pub fn dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| match folder_from_env() {
        Some(dir) => {
            assert!(
                dir.is_dir(),
                "{ENV}={} is not a folder (unset it to use the repository's copy of the vectors)",
                dir.display()
            );
            dir
        }
        None => unpacked().unwrap_or_else(|e| {
            panic!(
                "cannot unpack the repository's golden vectors {}: {e} (or set {ENV} to a vectors folder)",
                archive().display()
            )
        }),
    })
}

/// The folder `PROLLY_VECTORS` names, if it is set and not empty.
fn folder_from_env() -> Option<PathBuf> {
    std::env::var_os(ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// `dir()/relative`, which must exist.
///
/// # Panics
///
/// When it does not, naming the path and where the vectors came from.
pub fn require(relative: &str) -> PathBuf {
    let path = dir().join(relative);
    assert!(
        path.exists(),
        "golden vectors: {} not found (vectors from {})",
        path.display(),
        if folder_from_env().is_some() {
            ENV
        } else {
            "the repository's copy"
        }
    );
    path
}

/// Unpacks the archive into `OUT_DIR/vectors-<hash of the archive>` unless that folder exists.
/// The files are unpacked into a folder of this process's own and renamed into place, so tests
/// running at once in several processes each see either nothing or the whole set.
fn unpacked() -> io::Result<PathBuf> {
    let archive = archive();
    let bytes = std::fs::read(&archive)?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    let out = Path::new(env!("OUT_DIR"));
    let done = out.join(format!("vectors-{:016x}", hasher.finish()));
    if done.is_dir() {
        return Ok(done);
    }
    let partial = out.join(format!(".vectors-unpacking-{}", std::process::id()));
    if partial.exists() {
        std::fs::remove_dir_all(&partial)?;
    }
    let decoder = zstd::stream::read::Decoder::new(&bytes[..])?;
    tar::Archive::new(decoder).unpack(&partial)?;
    match std::fs::rename(&partial, &done) {
        Ok(()) => Ok(done),
        // Another process finished first: its copy is the same.
        Err(_) if done.is_dir() => {
            std::fs::remove_dir_all(&partial)?;
            Ok(done)
        }
        Err(e) => Err(e),
    }
}

/// Writes `source` (a vectors folder, laid out like the public set) as the repository's
/// archive, and copies its `README.md` beside the archive so the set's description can be read
/// without unpacking it.
///
/// The archive is deterministic: entries in name order, files read-only (`0444`) and folders
/// `0755`, owner 0, time 0.
pub fn pack(source: &Path) -> io::Result<()> {
    let folder = in_repo_folder();
    std::fs::create_dir_all(&folder)?;
    let out = BufWriter::new(File::create(archive())?);
    let mut encoder = zstd::stream::write::Encoder::new(out, PACK_LEVEL)?;
    encoder.long_distance_matching(true)?;
    encoder.window_log(PACK_WINDOW_LOG)?;
    let mut builder = tar::Builder::new(encoder);
    append_folder(&mut builder, source, Path::new(""))?;
    let encoder = builder.into_inner()?;
    encoder.finish()?.flush()?;
    // Written, not copied: the source's read-only mode would make the next refresh fail.
    std::fs::write(
        folder.join("README.md"),
        std::fs::read(source.join("README.md"))?,
    )?;
    Ok(())
}

/// Appends the entries of `source/relative`, recursively, in name order.
fn append_folder<W: Write>(
    builder: &mut tar::Builder<W>,
    source: &Path,
    relative: &Path,
) -> io::Result<()> {
    let mut names: Vec<_> = std::fs::read_dir(source.join(relative))?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<io::Result<_>>()?;
    names.sort();
    for name in names {
        let rel = relative.join(&name);
        let path = source.join(&rel);
        let meta = std::fs::metadata(&path)?;
        let mut header = tar::Header::new_gnu();
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        if meta.is_dir() {
            header.set_entry_type(tar::EntryType::Directory);
            header.set_mode(0o755);
            header.set_size(0);
            builder.append_data(&mut header, &rel, io::empty())?;
            append_folder(builder, source, &rel)?;
        } else {
            header.set_entry_type(tar::EntryType::Regular);
            header.set_mode(0o444);
            header.set_size(meta.len());
            builder.append_data(&mut header, &rel, BufReader::new(File::open(&path)?))?;
        }
    }
    Ok(())
}

/// A writable copy of the vectors folder `relative` (say `dolt-db/vecdb`, a Dolt database)
/// made inside `parent` (a temporary directory of the caller's), for tests and examples that
/// write: the vectors themselves are read-only. Returns the copy's path.
pub fn writable_copy(relative: &str, parent: &Path) -> io::Result<PathBuf> {
    fn copy(from: &Path, to: &Path) -> io::Result<()> {
        std::fs::create_dir_all(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            let target = to.join(entry.file_name());
            if entry.file_type()?.is_dir() {
                copy(&entry.path(), &target)?;
            } else {
                // Written rather than copied, so the copy is writable whatever the source's mode.
                std::fs::write(&target, std::fs::read(entry.path())?)?;
            }
        }
        Ok(())
    }
    let source = require(relative);
    let name = source.file_name().unwrap_or(source.as_os_str());
    let to = parent.join(name);
    copy(&source, &to)?;
    Ok(to)
}
