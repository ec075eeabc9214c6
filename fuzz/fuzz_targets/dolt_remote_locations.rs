//! Dolt remote download locations over arbitrary bytes: a `GetDownloadLocsResponse` decoded
//! from the input's first part is checked (`add_locations`), its ranges merged into spans and
//! read from the input's second part (standing for the served file), and every record and
//! dictionary found decoded. Nothing panics; every range lies inside one of its file's spans.
#![no_main]

use std::collections::{BTreeMap, HashSet};

use libfuzzer_sys::fuzz_target;
use prollystore_dolt_remote::locations::{
    add_locations, decode_dictionary, decode_record, merge_ranges, slice,
};
use prollystore_dolt_remote::proto::GetDownloadLocsResponse;
use prollystore_format::Address;
use prost::Message;

fuzz_target!(|data: &[u8]| {
    let Some((head, rest)) = data.split_first_chunk::<2>() else {
        return;
    };
    let n = usize::from(u16::from_le_bytes(*head)).min(rest.len());
    let (message, file) = rest.split_at(n);
    let Ok(response) = GetDownloadLocsResponse::decode(message) else {
        return;
    };
    // Ask for every well-formed hash the response names, so the later checks run.
    let requested: HashSet<Address> = response
        .locs
        .iter()
        .filter_map(|l| match &l.location {
            Some(prollystore_dolt_remote::proto::download_loc::Location::HttpGetRange(r)) => {
                Some(r)
            }
            _ => None,
        })
        .flat_map(|r| r.ranges.iter())
        .filter_map(|c| Address::from_slice(&c.hash))
        .collect();
    let mut plan = BTreeMap::new();
    let mut found = HashSet::new();
    if add_locations(&response, &requested, &mut found, &mut plan).is_err() {
        return;
    }
    for (url, ranges) in &plan {
        let spans = merge_ranges(ranges.iter().map(|r| (r.offset, r.length)).collect());
        for r in ranges {
            assert!(
                spans
                    .iter()
                    .any(|s| s.offset <= r.offset && r.offset + r.length <= s.offset + s.length),
                "range {r:?} in no span of {spans:?}"
            );
        }
        for r in ranges.iter().take(32) {
            let dictionary = r
                .dictionary
                .and_then(|(o, l)| slice(0, file, o, l).ok())
                .and_then(|b| decode_dictionary(b, url, 0).ok());
            if let Ok(record) = slice(0, file, r.offset, r.length) {
                let _ = decode_record(record, dictionary.as_ref(), url, r.offset);
            }
        }
    }
});
