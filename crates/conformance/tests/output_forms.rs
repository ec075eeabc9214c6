//! Dolt's exact output forms, checked against what the real Dolt CLI printed for a small
//! database made for them (`crates/dolt/tests/data/dolt-db/output_forms`, made by
//! `crates/dolt/tests/data/make_output_forms.sh`): dates before year 1000, VIRTUAL generated
//! columns, `dolt schema show` text (defaults, comments, SRIDs, collations), `dolt tag -v` and
//! `dolt log` (multi-line messages, commit times with milliseconds). Every file must match.

use std::path::Path;

use prollystore_conformance::dolt::check_dolt;

#[test]
fn output_forms_match_dolt() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../dolt/tests/data");
    let cat = check_dolt(&dir);
    for f in &cat.failures {
        println!("FAIL {f}");
    }
    assert_eq!(cat.missing, None);
    assert_eq!(cat.failed, 0, "{:#?}", cat.failures);
    // tags.txt, log.txt, log_oneline.txt, and a CSV and a schema file per table.
    assert!(cat.passed >= 34, "only {} files checked", cat.passed);
}
