//! Per-code-point weights against a real Dolt: `tests/data/collations/ranks.txt.zst` records
//! the rank Dolt gave every BMP code point (and a sample of the supplementary ones) under each
//! implemented collation and a few more (`scripts/dolt_collation_ranks.py`; see the README in
//! `tests/data/collations`). Dolt compares strings code point by code point by weight, so two
//! collations that rank every code point alike order every string alike: each implemented
//! collation's weights must give exactly Dolt's ranks.

use std::path::Path;

use prollystore_format::{Collation, CollationError};

/// The code points the recordings cover, in recording order.
fn recorded_code_points() -> Vec<u32> {
    let bmp = (0..0x1_0000u32).filter(|cp| !(0xD800..=0xDFFF).contains(cp));
    let supplementary = (0x1_0000..0x11_0000u32).step_by(0x101);
    bmp.chain(supplementary).chain([0x10_FFFF]).collect()
}

/// Parses a `.ranks` file: runs of `<first code point, hex> <count> <rank> <step>`.
fn parse(text: &str, cps: &[u32], name: &str) -> Vec<u32> {
    let mut ranks = Vec::with_capacity(cps.len());
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [first, count, rank, step] = f[..] else {
            panic!("{name}: bad line {line:?}");
        };
        let first = u32::from_str_radix(first, 16).unwrap();
        let (count, rank, step): (u32, u32, u32) = (
            count.parse().unwrap(),
            rank.parse().unwrap(),
            step.parse().unwrap(),
        );
        assert_eq!(
            cps.get(ranks.len()),
            Some(&first),
            "{name}: run at {line:?}"
        );
        ranks.extend((0..count).map(|k| rank + k * step));
    }
    assert_eq!(ranks.len(), cps.len(), "{name}: code points missing");
    ranks
}

/// Splits the recording into (collation name, its run lines): each collation's part starts
/// with a comment line `# <name>: Dolt's DENSE_RANK() ...`.
fn sections(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if let Some(comment) = line.strip_prefix("# ") {
            if let Some((name, _)) = comment.split_once(": Dolt's DENSE_RANK") {
                out.push((name.to_owned(), String::new()));
            }
        } else if let Some((_, runs)) = out.last_mut() {
            runs.push_str(line);
            runs.push('\n');
        }
    }
    out
}

/// Dense ranks (from 1) of this library's weights over `cps`.
fn our_ranks(c: Collation, cps: &[u32]) -> Vec<u32> {
    let weights: Vec<u32> = cps
        .iter()
        .map(|&cp| c.weight(char::from_u32(cp).unwrap()))
        .collect();
    let mut distinct = weights.clone();
    distinct.sort_unstable();
    distinct.dedup();
    weights
        .iter()
        .map(|w| distinct.binary_search(w).unwrap() as u32 + 1)
        .collect()
}

#[test]
#[cfg_attr(
    miri,
    ignore = "ranks 67,000 code points per collation: hours under Miri"
)]
fn every_code_point_ranks_as_in_dolt() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/collations/ranks.txt.zst");
    let text = zstd::decode_all(std::fs::File::open(path).unwrap()).unwrap();
    let text = String::from_utf8(text).unwrap();
    let cps = recorded_code_points();
    let mut checked = Vec::new();
    let mut wrong = Vec::new();
    for (name, runs) in sections(&text) {
        let c = match Collation::from_name(&name) {
            Ok(c) => c,
            Err(CollationError::NotImplemented { .. }) => continue,
            Err(e) => panic!("{e}"),
        };
        let dolt = parse(&runs, &cps, &name);
        let ours = our_ranks(c, &cps);
        let bad: Vec<String> = (0..cps.len())
            .filter(|&i| dolt[i] != ours[i])
            .take(5)
            .map(|i| format!("U+{:04X}: Dolt {}, here {}", cps[i], dolt[i], ours[i]))
            .collect();
        if !bad.is_empty() {
            wrong.push(format!("{name}: {}", bad.join("; ")));
        }
        checked.push(name);
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Every implemented collation has a recording.
    assert_eq!(checked.len(), Collation::all().count(), "{checked:?}");
}
