//! What reaches the tree: which filters become key ranges and how exactly, that a key-range
//! query reads only the leaves of its range, LIMIT and projections pushed into the scan,
//! partitions that split the work without changing the answer, and errors that name what
//! is wrong.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::{Float64Type, Int64Type};
use datafusion::logical_expr::TableProviderFilterPushDown as P;
use datafusion::prelude::{col, lit, Expr};
use prollystore_dolt::write::CommitMeta;
use prollystore_dolt::{Database, SqlValue, State};
use prollystore_query::{DoltSession, DoltTable};
use prollystore_sql::SqlWriter;

fn sysdb() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sysdb")
}

fn pushdown(db: &Arc<Database>, table: &str, filters: &[Expr]) -> Vec<P> {
    let t = db.table_at("main", State::Working, table).unwrap();
    let refs: Vec<&Expr> = filters.iter().collect();
    DoltTable::new(db.clone(), t).pushdown(&refs)
}

#[test]
fn filters_on_leading_key_columns_become_ranges() {
    let db = Arc::new(Database::open(sysdb()).unwrap());
    // Integer primary key: every comparison is an exact range.
    assert_eq!(
        pushdown(
            &db,
            "t",
            &[
                col("id").eq(lit(2)),
                col("id").gt(lit(1)),
                col("id").in_list(vec![lit(1), lit(4)], false),
                col("id").between(lit(1), lit(3)),
                col("score").gt(lit(1.0)),
            ]
        ),
        [
            P::Exact,
            P::Unsupported,
            P::Unsupported,
            P::Unsupported,
            P::Unsupported
        ]
    );
    // One equality list (the shortest) or one range per key column: the others stay with
    // DataFusion.
    assert_eq!(
        pushdown(&db, "t", &[col("id").in_list(vec![lit(1), lit(4)], false)]),
        [P::Exact]
    );
    assert_eq!(
        pushdown(&db, "t", &[col("id").gt_eq(lit(1)), col("id").lt(lit(9))]),
        [P::Exact, P::Exact]
    );
    // A secondary index narrows the scan, never exactly.
    assert_eq!(
        pushdown(&db, "t", &[col("name").eq(lit("bb"))]),
        [P::Inexact]
    );
    // A case-insensitive key: equality under its collation (exact, as Dolt compares), no
    // ranges (DataFusion orders bytes).
    assert_eq!(
        pushdown(
            &db,
            "u",
            &[col("k").eq(lit("apple")), col("k").gt(lit("b"))]
        ),
        [P::Exact, P::Unsupported]
    );
    // Two-column key: the second column only after an equality on the first.
    assert_eq!(
        pushdown(&db, "pk2", &[col("b").eq(lit("x"))]),
        [P::Unsupported]
    );
    assert_eq!(
        pushdown(&db, "pk2", &[col("a").eq(lit(1)), col("b").eq(lit("x"))]),
        [P::Exact, P::Exact]
    );
    assert_eq!(pushdown(&db, "pk2", &[col("c").eq(lit(10))]), [P::Inexact]);
    // Binary key: equality and ranges narrow the scan.
    assert_eq!(
        pushdown(
            &db,
            "vb",
            &[
                col("k").gt(lit(datafusion::scalar::ScalarValue::Binary(Some(vec![
                    0x61
                ]))))
            ]
        ),
        [P::Inexact]
    );
    // Keyless table: nothing to seek.
    assert_eq!(
        pushdown(&db, "kl", &[col("a").eq(lit(1))]),
        [P::Unsupported]
    );
}

/// A database with table `big` of `rows` rows (id, v = id % 7, s text), made by our writer
/// in a copy of the vectors' database.
fn big_db(tmp: &Path, rows: i64) -> PathBuf {
    let dir = prollystore_test_vectors::writable_copy("dolt-db/vecdb", tmp).unwrap();
    let mut w = prollystore_sql::writer(&dir).unwrap();
    w.create_table_sql("CREATE TABLE big (id BIGINT PRIMARY KEY, v INT, s VARCHAR(20))")
        .unwrap();
    let data: Vec<Vec<SqlValue>> = (0..rows)
        .map(|i| {
            vec![
                SqlValue::Int(i),
                SqlValue::Int(i % 7),
                SqlValue::Text(format!("row {i}")),
            ]
        })
        .collect();
    w.insert("big", &["id", "v", "s"], &data).unwrap();
    w.commit(&CommitMeta::now("Ada", "ada@example.com", "big"))
        .unwrap();
    dir
}

async fn one_i64(session: &DoltSession, sql: &str) -> i64 {
    let batches = session.sql(sql).await.unwrap().collect().await.unwrap();
    batches[0].column(0).as_primitive::<Int64Type>().value(0)
}

async fn plan_text(session: &DoltSession, sql: &str) -> String {
    let batches = session
        .sql(&format!("EXPLAIN {sql}"))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let plans = batches[0].column(1).as_string::<i32>();
    (0..plans.len())
        .map(|i| plans.value(i))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_range_reads_only_its_leaves() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = big_db(tmp.path(), 60_000);
    let db = Arc::new(prollystore_sql::open(&dir).unwrap());
    let session = DoltSession::new(db.clone(), Some("main")).unwrap();
    let q = "SELECT count(*), sum(v) FROM big WHERE id BETWEEN 30000 AND 30099";
    let batches = session.sql(q).await.unwrap().collect().await.unwrap();
    assert_eq!(
        batches[0].column(0).as_primitive::<Int64Type>().value(0),
        100
    );
    let table = db.table_at("main", State::Committed, "big").unwrap();
    let leaves: Vec<_> = table
        .primary_scan_map(&db)
        .leaves()
        .unwrap()
        .map(|l| l.unwrap().0)
        .collect();
    let read = leaves.iter().filter(|a| db.source().is_kept(a)).count();
    assert!(leaves.len() > 100, "{} leaves", leaves.len());
    assert!(
        (1..=3).contains(&read),
        "{read} of {} leaves read for 100 rows",
        leaves.len()
    );
    eprintln!("a 100-row key range read {read} of {} leaves", leaves.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scans_push_down_ranges_limits_and_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = big_db(tmp.path(), 250_000);
    let session = DoltSession::open(&dir, Some("main")).unwrap();
    let plan = plan_text(&session, "SELECT s FROM big WHERE id >= 10 AND id < 20").await;
    assert!(
        plan.contains("DoltScan: table=big, ranges=1, rows=10, columns=[s]"),
        "{plan}"
    );
    assert!(
        !plan.contains("FilterExec"),
        "exact filters are not applied again:\n{plan}"
    );
    let plan = plan_text(&session, "SELECT * FROM big LIMIT 5").await;
    assert!(plan.contains("rows=5"), "{plan}");
    let plan = plan_text(&session, "SELECT * FROM big WHERE id IN (3, 1, 3, 200000)").await;
    assert!(plan.contains("points=3"), "{plan}");
    // An OR of equalities and a range is not one seek: the whole table, filtered.
    let plan = plan_text(
        &session,
        "SELECT * FROM big WHERE id IN (3, 1, 5) OR id > 249990",
    )
    .await;
    assert!(
        plan.contains("FilterExec") && plan.contains("rows=250000"),
        "{plan}"
    );
    // Whole scans are cut into partitions by position; the answer is the same with one.
    let plan = plan_text(&session, "SELECT v, count(*) FROM big GROUP BY v").await;
    assert!(
        plan.contains("ranges=2") || plan.contains("ranges=4"),
        "{plan}"
    );
    let many = session
        .sql("SELECT v, count(*) AS n, sum(id) AS total FROM big GROUP BY v ORDER BY v")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    session
        .sql("SET datafusion.execution.target_partitions = 1")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let one = session
        .sql("SELECT v, count(*) AS n, sum(id) AS total FROM big GROUP BY v ORDER BY v")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(many, one);
    assert_eq!(one_i64(&session, "SELECT count(*) FROM big").await, 250_000);
    // A sum of integers is a DOUBLE, as in Dolt.
    let batches = session
        .sql("SELECT sum(id) FROM big WHERE id < 1000")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let sum = batches[0].column(0).as_primitive::<Float64Type>().value(0);
    assert_eq!(sum, f64::from(999 * 1000 / 2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_queries_say_what_is_wrong() {
    let session = DoltSession::open(sysdb(), None).unwrap();
    let cases = [
        ("SELECT * FROM nosuch", "table \"nosuch\" in state WORKING"),
        ("SELECT nosuch FROM t", "No field named nosuch"),
        ("SELECT * FROM `nosuch`.t", "\"nosuch\" not found"),
        ("SELECT * FROM t AS OF 'HEAD~99'", "HEAD~99"),
        ("SELEC 1", "Expected: an SQL statement"),
        ("SELECT * FROM t AS OF 42", "AS OF takes"),
        ("INSERT INTO t VALUES (7, 'g', 1.0, NULL, NULL)", "t"),
        ("SELECT * FROM t AS OF 'main' AS OF 'feat'", ""),
    ];
    for (sql, says) in cases {
        let result = match session.sql(sql).await {
            Ok(df) => df
                .collect()
                .await
                .map(|_| ())
                .map_err(prollystore_query::Error::from),
            Err(e) => Err(e),
        };
        match result {
            Err(e) => assert!(e.to_string().contains(says), "{sql}: {e}"),
            Ok(()) => panic!("{sql} ran"),
        }
    }
    assert!(DoltSession::open(sysdb(), Some("nosuch")).is_err());
    assert!(DoltSession::open(Path::new("/nonexistent"), None).is_err());
}

/// Random WHERE clauses over the key: the pushed-down scan against DataFusion filtering the
/// same rows held in memory (no pushdown), as the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_key_filters_agree_with_filtering_every_row() {
    use datafusion::datasource::MemTable;
    let tmp = tempfile::tempdir().unwrap();
    let dir = big_db(tmp.path(), 3_000);
    let session = DoltSession::open(&dir, Some("main")).unwrap();
    let all = session
        .sql("SELECT * FROM big")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let model = MemTable::try_new(all[0].schema(), vec![all]).unwrap();
    session
        .context()
        .register_table("model", Arc::new(model))
        .unwrap();
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let clause = |next: &mut dyn FnMut(u64) -> u64| -> String {
        let c = next(3_200) as i64 - 100;
        match next(8) {
            0 => format!("id = {c}"),
            1 => format!("id > {c}"),
            2 => format!("id >= {c}"),
            3 => format!("id < {c}"),
            4 => format!("id <= {c}"),
            5 => format!("id BETWEEN {c} AND {}", c + next(300) as i64),
            6 => format!("id IN ({}, {}, {c})", next(3_000), next(3_000)),
            _ => format!("v = {}", next(7)),
        }
    };
    for case in 0..200 {
        let mut filter = clause(&mut next);
        for _ in 0..next(3) {
            let op = if next(4) == 0 { "OR" } else { "AND" };
            filter = format!("{filter} {op} {}", clause(&mut next));
        }
        let limit = if next(3) == 0 {
            format!(" LIMIT {}", next(50))
        } else {
            String::new()
        };
        let q = |t: &str| format!("SELECT id, v, s FROM {t} WHERE {filter} ORDER BY id{limit}");
        let ours = session
            .sql(&q("big"))
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let model = session
            .sql(&q("model"))
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let rows = |b: &[datafusion::arrow::array::RecordBatch]| {
            datafusion::arrow::util::pretty::pretty_format_batches(b)
                .unwrap()
                .to_string()
        };
        assert_eq!(
            rows(&ours),
            rows(&model),
            "case {case}: WHERE {filter}{limit}"
        );
    }
}

/// `DoltSession::query` reuses its state from one query to the next, yet sees what changed in
/// between: a `SET` it ran, and a change made through `context()`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queries_see_settings_changed_between_them() {
    let session = DoltSession::open(sysdb(), None).unwrap();
    let tables = "SELECT count(*) FROM information_schema.tables";
    for _ in 0..2 {
        assert_eq!(session.query(tables).await.unwrap().batches.len(), 1);
        let rows = session
            .query("SELECT id FROM t WHERE id = 2")
            .await
            .unwrap();
        assert_eq!(rows.batches.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
    }
    session
        .query("SET datafusion.catalog.information_schema = false")
        .await
        .unwrap();
    assert!(session.query(tables).await.is_err());
    session
        .context()
        .sql("SET datafusion.catalog.information_schema = true")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(session.query(tables).await.unwrap().batches.len(), 1);
}
