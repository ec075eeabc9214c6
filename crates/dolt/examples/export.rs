//! Exports one table of a Dolt database as CSV on stdout, as `dolt sql -r csv -q
//! "select * from TABLE"` shows it on BRANCH (its working set when it has one, else its head
//! commit). Timing goes to stderr. With `PROLLY_DOLT_VERIFY=0` chunk hashes are not checked
//! (CRC-32C only, as Dolt reads).
//!
//! ```text
//! cargo run --release -p prollystore-dolt --example export -- DBDIR BRANCH TABLE
//! ```

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use prollystore_dolt::{csv_export::export_csv, Database};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, branch, table] = args.as_slice() else {
        eprintln!("usage: export DBDIR BRANCH TABLE");
        std::process::exit(2);
    };
    if let Err(e) = run(Path::new(dir), branch, table) {
        eprintln!("export: {e}");
        std::process::exit(1);
    }
}

fn run(dir: &Path, branch: &str, table: &str) -> prollystore_dolt::Result<()> {
    let start = Instant::now();
    let verify = std::env::var("PROLLY_DOLT_VERIFY").map_or(true, |v| v != "0");
    let db = Database::open(dir)?.with_verify_hashes(verify);
    let root = match db.working_set(branch)? {
        Some(ws) => ws.working_root,
        None => db.commit(db.resolve(branch)?)?.root,
    };
    let root = db.root_value(root)?;
    let t = db.table(&root, table)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let rows = export_csv(&db, &t, &mut out)?;
    out.flush()
        .map_err(|source| prollystore_dolt::DoltError::Io {
            file: "stdout".into(),
            source,
        })?;
    eprintln!("{rows} rows in {:.3} s", start.elapsed().as_secs_f64());
    Ok(())
}
