//! Opening a store whose files hold arbitrary bytes: never panics, and any chunk that is
//! returned is exactly the chunk that was stored under that address.
//!
//! The fuzzer starts from a small valid store (two chunk files, two roots, built once) so it
//! gets past the magic numbers and checksums; the input then edits it: replace a file's bytes
//! outright, xor bytes at offsets, truncate, or append. The result is written to a temporary
//! directory and opened mapped and read into memory; every known chunk is read, node views are
//! requested, and the store is verified.
#![no_main]

use std::sync::OnceLock;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use prollystore::format::{Address, HashProfile};
use prollystore::store::file::{FileStore, OpenOptions, RootUpdate};

#[derive(Arbitrary, Debug)]
enum Edit {
    Replace { file: u8, bytes: Vec<u8> },
    Xor { file: u8, offset: u32, value: u8 },
    Truncate { file: u8, len: u32 },
    Append { file: u8, bytes: Vec<u8> },
}

#[derive(Arbitrary, Debug)]
struct Input {
    edits: Vec<Edit>,
}

/// The valid store: (file name, bytes) and every stored chunk.
struct Seed {
    files: Vec<(String, Vec<u8>)>,
    chunks: Vec<(Address, Vec<u8>)>,
}

fn seed() -> &'static Seed {
    static SEED: OnceLock<Seed> = OnceLock::new();
    SEED.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut w = FileStore::create(dir.path(), HashProfile::Blake3).expect("create");
        let mut chunks = Vec::new();
        for round in 0..2u8 {
            for i in 0..4u8 {
                let c: Vec<u8> = (0..usize::from(i) * 9 + 1)
                    .map(|j| j as u8 ^ round)
                    .collect();
                chunks.push((w.put(&c).expect("put"), c));
            }
            let name = if round == 0 { "main" } else { "dev" };
            w.commit(&[RootUpdate::new(
                name,
                None,
                Some(chunks[chunks.len() - 1].0),
            )])
            .expect("commit");
        }
        drop(w);
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.path())
            .expect("read_dir")
            .filter_map(|e| {
                let e = e.ok()?;
                let name = e.file_name().to_string_lossy().into_owned();
                (name != "LOCK").then(|| (name, std::fs::read(e.path()).expect("read")))
            })
            .collect();
        files.sort();
        Seed { files, chunks }
    })
}

fuzz_target!(|input: Input| {
    let seed = seed();
    let mut files = seed.files.clone();
    for edit in input.edits.iter().take(8) {
        let n = files.len();
        let pick = |f: u8| usize::from(f) % n;
        match edit {
            Edit::Replace { file, bytes } => files[pick(*file)].1 = bytes.clone(),
            Edit::Xor {
                file,
                offset,
                value,
            } => {
                let b = &mut files[pick(*file)].1;
                if !b.is_empty() {
                    let at = *offset as usize % b.len();
                    b[at] ^= value;
                }
            }
            Edit::Truncate { file, len } => {
                let b = &mut files[pick(*file)].1;
                let keep = *len as usize % (b.len() + 1);
                b.truncate(keep);
            }
            Edit::Append { file, bytes } => files[pick(*file)].1.extend_from_slice(bytes),
        }
    }
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, bytes) in &files {
        std::fs::write(dir.path().join(name), bytes).expect("write");
    }
    for mmap in [true, false] {
        let Ok(store) = OpenOptions::new().mmap(mmap).open(dir.path()) else {
            continue;
        };
        for (a, c) in &seed.chunks {
            if let Ok(Some(bytes)) = store.get(a) {
                assert_eq!(bytes, &c[..], "wrong bytes for {a}");
            }
            let _ = store.get_node(a);
        }
        for root in store.roots().values() {
            let _ = store.get(root);
        }
        let _ = store.verify();
    }
});
