//! JSON order against a real Dolt: `tests/data/json_order/dolt.json` holds the rank Dolt's
//! `DENSE_RANK() OVER (ORDER BY j)` gave each document of `inputs.json` (mixed types, nested
//! arrays and objects, equal numbers written differently, escaped strings; made by
//! `scripts/dolt_json_order.py`, see the README there). Every pair must compare as the ranks do.

use std::path::Path;

use prollystore_format::json_order;
use serde_json::Value;

#[test]
fn json_order_matches_dolt() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/json_order");
    let inputs: Vec<String> =
        serde_json::from_slice(&std::fs::read(dir.join("inputs.json")).unwrap()).unwrap();
    let dolt: Value =
        serde_json::from_slice(&std::fs::read(dir.join("dolt.json")).unwrap()).unwrap();
    let rank: Vec<u64> = dolt["rank"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_u64().unwrap())
        .collect();
    assert_eq!(rank.len(), inputs.len());
    for (i, a) in inputs.iter().enumerate() {
        for (k, b) in inputs.iter().enumerate() {
            let got = json_order::try_compare(a.as_bytes(), b.as_bytes()).unwrap();
            assert_eq!(got, rank[i].cmp(&rank[k]), "{a} vs {b}");
        }
    }
}
