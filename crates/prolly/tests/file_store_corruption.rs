//! Bit-flip and truncation sweeps over every store file: opening, reading and verifying a
//! damaged store returns an error naming the damaged file, never a panic and never wrong data.

use std::path::Path;

use prollystore::format::{Address, HashProfile};
use prollystore::store::file::{FileStore, OpenOptions, RootUpdate};

/// A store with three chunk files, two roots, and chunks of varied sizes.
fn build(dir: &Path) -> Vec<(Address, Vec<u8>)> {
    let mut w = FileStore::create(dir, HashProfile::Blake3).unwrap();
    let mut all = Vec::new();
    for round in 0..3u8 {
        for i in 0..6u8 {
            let c: Vec<u8> = (0..(usize::from(i) * 37 + 1))
                .map(|j| j as u8 ^ round ^ i)
                .collect();
            all.push((w.put(&c).unwrap(), c));
        }
        let name = format!("r{}", round % 2);
        let old = w.root(&name);
        w.commit(&[RootUpdate::new(&name, old, Some(all[all.len() - 1].0))])
            .unwrap();
    }
    all
}

/// Opens, reads every known chunk and verifies; returns the first error's text, or None if all
/// of that succeeded. Any chunk returned must be the original bytes.
fn exercise(dir: &Path, opts: &OpenOptions, all: &[(Address, Vec<u8>)]) -> Option<String> {
    let store = match opts.open(dir) {
        Ok(s) => s,
        Err(e) => return Some(e.to_string()),
    };
    for (a, c) in all {
        match store.get(a) {
            Ok(Some(bytes)) => assert_eq!(bytes, &c[..], "wrong data for {a}"),
            Ok(None) => panic!("chunk {a} silently missing"),
            Err(e) => return Some(e.to_string()),
        }
    }
    store.verify().err().map(|e| e.to_string())
}

fn store_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "LOCK")
        .collect();
    names.sort();
    names
}

/// Offsets to damage: every byte of small files, else the first and last 512 and a stride.
fn offsets(len: usize) -> Vec<usize> {
    if len <= 4096 {
        return (0..len).collect();
    }
    let mut v: Vec<usize> = (0..512).chain(len - 512..len).collect();
    v.extend((512..len - 512).step_by(61));
    v
}

#[test]
fn every_flipped_byte_is_detected_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let all = build(dir.path());
    let files = store_files(dir.path());
    assert_eq!(files.len(), 4, "{files:?}");
    let mut cases = 0;
    for name in &files {
        let path = dir.path().join(name);
        let original = std::fs::read(&path).unwrap();
        for at in offsets(original.len()) {
            for bit in [0u8, 6] {
                let mut bad = original.clone();
                bad[at] ^= 1 << bit;
                std::fs::write(&path, &bad).unwrap();
                for opts in [OpenOptions::new(), OpenOptions::new().mmap(false)] {
                    let err = exercise(dir.path(), &opts, &all).unwrap_or_else(|| {
                        panic!("flip of bit {bit} at {name}:{at} went unnoticed")
                    });
                    assert!(
                        err.contains(name.as_str()),
                        "{name}:{at}: error does not name the file: {err}"
                    );
                    cases += 1;
                }
            }
        }
        std::fs::write(&path, &original).unwrap();
        assert_eq!(exercise(dir.path(), &OpenOptions::new(), &all), None);
    }
    println!("{cases} damaged stores, all detected");
}

#[test]
fn every_truncation_is_detected_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let all = build(dir.path());
    for name in store_files(dir.path()) {
        let path = dir.path().join(&name);
        let original = std::fs::read(&path).unwrap();
        for len in offsets(original.len()) {
            std::fs::write(&path, &original[..len]).unwrap();
            for opts in [OpenOptions::new(), OpenOptions::new().mmap(false)] {
                let err = exercise(dir.path(), &opts, &all)
                    .unwrap_or_else(|| panic!("truncation of {name} to {len} went unnoticed"));
                assert!(err.contains(name.as_str()), "{name} to {len}: {err}");
            }
        }
        // Extra bytes at the end are damage too.
        let mut longer = original.clone();
        longer.push(0);
        std::fs::write(&path, &longer).unwrap();
        let err = exercise(dir.path(), &OpenOptions::new(), &all).unwrap();
        assert!(err.contains(name.as_str()), "{err}");
        std::fs::write(&path, &original).unwrap();
    }
    // A missing chunk file is named too.
    let victim = store_files(dir.path())[0].clone();
    std::fs::remove_file(dir.path().join(&victim)).unwrap();
    let err = exercise(dir.path(), &OpenOptions::new(), &all).unwrap();
    assert!(err.contains(&victim), "{err}");
}
