//! A fixed loop of typed point gets (`TableReader::get`), for instruction counts under
//! callgrind (load-independent): 20,000 random keys among `1..=ROWS` read once, then PASSES
//! more passes.
//!
//! ```text
//! cargo build --release -p prollystore-dolt --example typed_get
//! valgrind --tool=callgrind target/release/examples/typed_get DB 3   # and … DB 1
//! ```
//!
//! Instructions per get = (total with 3 passes − total with 1) / 40,000. `DB` is the database
//! of `scripts/make_dolt_arrow_bench_db.sh` (table `t`, BIGINT keys 1..=1,000,000).

use prollystore_dolt::{Database, SqlValue, State};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let dir = args
        .get(1)
        .ok_or("usage: typed_get DB_DIR PASSES [TABLE] [ROWS]")?;
    let passes: usize = args.get(2).map(|p| p.parse()).transpose()?.unwrap_or(1);
    let name = args.get(3).map(String::as_str).unwrap_or("t");
    let rows: u64 = args
        .get(4)
        .map(|r| r.parse())
        .transpose()?
        .unwrap_or(1_000_000);
    let db = Database::open(std::path::Path::new(dir))?;
    let table = db.table_at("main", State::Committed, name)?;
    let reader = table.reader(&db)?;
    // A fixed sequence of keys (xorshift), the same in every run.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let keys: Vec<i64> = (0..20_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % rows + 1) as i64
        })
        .collect();
    let mut found = 0usize;
    for _ in 0..=passes {
        for &k in &keys {
            found += usize::from(reader.get(&[SqlValue::Int(k)])?.is_some());
        }
    }
    println!("{found} rows found");
    Ok(())
}
