//! Collated order against a real Dolt: `tests/data/collations/*.json` record, per collation,
//! the key order Dolt stored the inputs in and which inputs it refused as duplicates of which
//! key (see the README there). Every pair of inputs must compare exactly as Dolt's keys do,
//! through `Collation::compare` and through tuple comparison of string and string adaptive
//! key fields.

use std::collections::BTreeSet;
use std::path::Path;

use prollystore_format::tuple::{TupleBuilder, TupleDesc, Type};
use prollystore_format::{Collation, CollationError, Encoding};
use serde_json::Value;

/// Collations with recorded Dolt data whose weights are not implemented yet.
const NOT_YET: &[&str] = &[];

/// The same for the probe strings of the UCA 9.0.0 language tailorings
/// (`tests/data/collations/probes`).
const PROBES_NOT_YET: &[&str] = &["utf8mb4_ja_0900_as_cs", "utf8mb4_ja_0900_as_cs_ks"];

struct Recorded {
    name: String,
    /// Rank of the equal-class of each input in Dolt's key order; `None` = refused by Dolt.
    rank: Vec<Option<usize>>,
}

fn load(dir: &Path, inputs_len: usize) -> Vec<Recorded> {
    let mut out = Vec::new();
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json") && !p.ends_with("inputs.json"))
        .collect();
    paths.sort();
    for path in paths {
        let v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let name = v["collation"].as_str().unwrap().to_owned();
        assert_eq!(v["order_by_pk_agrees"], Value::Bool(true), "{name}");
        let mut rank = vec![None; inputs_len];
        for (pos, i) in v["order"].as_array().unwrap().iter().enumerate() {
            rank[i.as_u64().unwrap() as usize] = Some(pos);
        }
        for (i, rep) in v["equal"].as_object().unwrap() {
            let rep = rank[rep.as_u64().unwrap() as usize];
            assert!(
                rep.is_some(),
                "{name}: input {i} equals an input that is not stored"
            );
            rank[i.parse::<usize>().unwrap()] = rep;
        }
        let refused: BTreeSet<usize> = v["refused"]
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.parse().unwrap())
            .collect();
        for (i, r) in rank.iter().enumerate() {
            assert_eq!(
                r.is_none(),
                refused.contains(&i),
                "{name}: input {i} unaccounted for"
            );
        }
        out.push(Recorded { name, rank });
    }
    out
}

fn one_field(c: Collation, enc: Encoding, s: &str) -> Vec<u8> {
    let desc = TupleDesc::new(vec![Type::not_null(enc)]).with_collations(vec![Some(c)]);
    let mut b = TupleBuilder::new(desc);
    match enc {
        Encoding::String => b.put_string(0, s).unwrap(),
        _ => b.put_adaptive_inline(0, s.as_bytes()).unwrap(),
    }
    b.build().unwrap().as_bytes().to_vec()
}

#[test]
fn order_and_equality_match_dolt() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/collations");
    check_recorded(&dir, 15, NOT_YET);
}

/// Danish (upper case first, `aa`), Vietnamese (tone marks), Japanese and Chinese probe strings.
#[test]
fn tailoring_probes_match_dolt() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/collations/probes");
    check_recorded(&dir, 8, PROBES_NOT_YET);
}

/// Checks every collation recorded in `dir` (at least `min` of them) against Dolt's order;
/// `not_yet` names the recorded ones that are not implemented.
fn check_recorded(dir: &Path, min: usize, not_yet: &[&str]) {
    let inputs: Vec<String> =
        serde_json::from_slice(&std::fs::read(dir.join("inputs.json")).unwrap()).unwrap();
    let recorded = load(dir, inputs.len());
    assert!(recorded.len() >= min, "recorded collations missing");
    let mut skipped = Vec::new();
    for rec in &recorded {
        let c = match Collation::from_name(&rec.name) {
            Ok(c) => c,
            Err(CollationError::NotImplemented { name, .. }) => {
                skipped.push(name);
                continue;
            }
            Err(e) => panic!("{e}"),
        };
        let present: Vec<usize> = (0..inputs.len())
            .filter(|&i| rec.rank[i].is_some())
            .collect();
        for enc in [Encoding::String, Encoding::StringAdaptive] {
            let desc = TupleDesc::new(vec![Type::not_null(enc)]).with_collations(vec![Some(c)]);
            let tuples: Vec<Vec<u8>> = inputs.iter().map(|s| one_field(c, enc, s)).collect();
            for &i in &present {
                for &k in &present {
                    let want = rec.rank[i].cmp(&rec.rank[k]);
                    let (a, b) = (&inputs[i], &inputs[k]);
                    let got = c.compare(a.as_bytes(), b.as_bytes());
                    assert_eq!(got, want, "{}: {a:?} vs {b:?}", rec.name);
                    assert_eq!(
                        desc.compare(&tuples[i], &tuples[k]),
                        want,
                        "{}: tuples {a:?} vs {b:?}",
                        rec.name
                    );
                }
            }
        }
        // Sorting the inputs gives Dolt's key order.
        let mut sorted = present.clone();
        sorted.sort_by(|&i, &k| {
            c.compare(inputs[i].as_bytes(), inputs[k].as_bytes())
                .then(i.cmp(&k))
        });
        let ranks: Vec<_> = sorted.iter().map(|&i| rec.rank[i]).collect();
        assert!(ranks.windows(2).all(|w| w[0] <= w[1]), "{}", rec.name);
    }
    skipped.sort_unstable();
    assert_eq!(skipped, not_yet);
}
