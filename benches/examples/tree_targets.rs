//! Issue #3's speed targets against the last `--bench tree` run, as ratios:
//!
//! ```text
//! cargo bench -p prollystore-benches --bench tree
//! cargo run --release -p prollystore-benches --example tree_targets [criterion directory]
//! ```
//!
//! For each measure it prints our figure, the baseline measured in the same run (a `BTreeMap`
//! doing the same work, or our own one-thread build), our figure over the baseline (time over
//! time, or rate over rate), the figure Dolt's Go engine had on this machine (quoted by the
//! issue) and how many times faster we are, the target, and whether the target is met. The machine is noisy, so absolute figures move from run to run; the ratio to
//! the same run's baseline moves much less. Criterion's results are read from
//! `target/criterion` (or the directory given), each as the estimate criterion prints: the
//! slope of its linear fit where it made one, else the mean.

use std::path::{Path, PathBuf};

/// Rows in the benchmark maps (`prollystore_benches::int_pairs::N`).
const ROWS: f64 = prollystore_benches::int_pairs::N as f64;

/// Whether a measure is a time (lower is better) or a rate in rows per second (higher is).
#[derive(Clone, Copy)]
enum Kind {
    Time,
    Rate,
}

/// One line of the table.
struct Measure {
    /// What it measures.
    label: &'static str,
    /// Criterion's id of our benchmark, and of its baseline in the same run.
    ours: &'static str,
    baseline: &'static str,
    kind: Kind,
    /// Dolt's figure (ns for times, rows/s for rates) and the target, from issue #3.
    dolt: f64,
    target: f64,
}

const MEASURES: &[Measure] = &[
    Measure {
        label: "get, 1M rows",
        ours: "tree/get/1M",
        baseline: "tree/btreemap/get/1M",
        kind: Kind::Time,
        dolt: 1_301.0,
        target: 250.0,
    },
    Measure {
        label: "scan, 1M rows",
        ours: "tree/scan/1M",
        baseline: "tree/btreemap/scan/1M",
        kind: Kind::Rate,
        dolt: 79e6,
        target: 320e6,
    },
    Measure {
        label: "build, 1M rows, blake3",
        ours: "tree/build/1M/blake3",
        baseline: "tree/build/1M/blake3/one-thread",
        kind: Kind::Rate,
        dolt: 8.1e6,
        target: 32e6,
    },
    Measure {
        label: "one edit + flush",
        ours: "tree/edit+flush/1",
        baseline: "tree/btreemap/edit+flush/1",
        kind: Kind::Time,
        dolt: 61_700.0,
        target: 10_000.0,
    },
    Measure {
        label: "1,000 edits + flush",
        ours: "tree/edit+flush/1000",
        baseline: "tree/btreemap/edit+flush/1000",
        kind: Kind::Time,
        dolt: 18_300_000.0,
        target: 3_000_000.0,
    },
    Measure {
        label: "diff, 1 row",
        ours: "tree/diff/1",
        baseline: "tree/btreemap/diff/1",
        kind: Kind::Time,
        dolt: 5_800.0,
        target: 600.0,
    },
    Measure {
        label: "diff, 1,000 rows",
        ours: "tree/diff/1000",
        baseline: "tree/btreemap/diff/1000",
        kind: Kind::Time,
        dolt: 2_480_000.0,
        target: 250_000.0,
    },
];

/// Criterion's printed estimate for benchmark `id` in nanoseconds, if it has run.
fn estimate_ns(root: &Path, id: &str) -> Option<f64> {
    // Criterion names a benchmark's directory after its id with `/` inside a group's name
    // replaced by `_` (`tree/get/1M` is `tree/get_1M`).
    let (group, name) = id.split_once('/')?;
    let dir = root.join(group).join(name.replace('/', "_"));
    let text = std::fs::read_to_string(dir.join("new").join("estimates.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    ["slope", "mean"]
        .iter()
        .find_map(|k| json.get(k)?.get("point_estimate")?.as_f64())
}

/// A time in the unit that suits it.
fn time(ns: f64) -> String {
    match ns {
        n if n >= 1e6 => format!("{:.2} ms", n / 1e6),
        n if n >= 1e3 => format!("{:.1} µs", n / 1e3),
        n => format!("{n:.0} ns"),
    }
}

/// A ratio, as a fraction where it is far below one (`1/19400x`).
fn ratio_text(r: f64) -> String {
    if r < 0.1 {
        format!("1/{:.0}x", 1.0 / r)
    } else {
        format!("{r:.2}x")
    }
}

/// A figure as its kind shows it: a time, or a rate in M rows/s (`ns` is for all the rows).
fn shown(kind: Kind, value: f64) -> String {
    match kind {
        Kind::Time => time(value),
        Kind::Rate => format!("{:.1} M rows/s", value / 1e6),
    }
}

fn main() {
    let root = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
                || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"),
                PathBuf::from,
            );
            target.join("criterion")
        });
    println!(
        "{:<22} {:>16} {:>16} {:>10} {:>16} {:>7} {:>16}  met",
        "measure", "ours", "baseline", "ours/base", "Dolt", "faster", "target"
    );
    let mut missing = Vec::new();
    for m in MEASURES {
        let (Some(ours), Some(base)) = (estimate_ns(&root, m.ours), estimate_ns(&root, m.baseline))
        else {
            missing.push(m.ours);
            continue;
        };
        // Rates: rows per second from the time for all rows; a ratio above 1 is faster.
        let (ours_v, base_v, ratio, vs_dolt, met) = match m.kind {
            Kind::Time => (ours, base, ours / base, m.dolt / ours, ours <= m.target),
            Kind::Rate => {
                let (o, b) = (ROWS * 1e9 / ours, ROWS * 1e9 / base);
                (o, b, o / b, o / m.dolt, o >= m.target)
            }
        };
        println!(
            "{:<22} {:>16} {:>16} {:>10} {:>16} {:>6.1}x {:>16}  {}",
            m.label,
            shown(m.kind, ours_v),
            shown(m.kind, base_v),
            ratio_text(ratio),
            shown(m.kind, m.dolt),
            vs_dolt,
            shown(m.kind, m.target),
            if met { "yes" } else { "no" }
        );
    }
    if !missing.is_empty() {
        eprintln!(
            "no results in {} for: {} (run `cargo bench -p prollystore-benches --bench tree` first)",
            root.display(),
            missing.join(", ")
        );
        std::process::exit(1);
    }
}
