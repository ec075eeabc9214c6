//! JSON columns as Dolt fills them: a corpus of tricky documents (spacing, member order,
//! repeated keys, number forms, escapes, invalid UTF-8, a document stored out of band, nesting
//! 10000 deep) written through every writer path — `insert` of [`SqlValue::Json`], text
//! (`apply_text`, the scenario replayer's and the C/Python writers' way in), the streamed file
//! import (`apply_fields`, the CLI's) and `update` — gives the table Dolt makes from
//! `INSERT`s of the same text and from `dolt table import -u` of the same CSV (with
//! `PROLLY_DOLT`: run live; without: the table hash Dolt made, recorded below). Text Dolt
//! refuses as JSON is refused on every path, naming the row and column, with every byte of
//! the database as it was.

use prollystore_sql::FromSql;
use std::borrow::Cow;

use super::api_tests::{differential, dolt, meta, snapshot};
use super::helpers::{copy_db, scenario};
use prollystore_dolt::db::State;
use prollystore_dolt::sql_value::SqlValue;
use prollystore_dolt::write::TableDef;
use prollystore_dolt::write::{DoltWriter, RowMode};
use prollystore_format::HashProfile;

/// The tables the paths fill, all of one schema.
const TABLES: [&str; 4] = ["j", "jt", "jf", "ju"];

/// The address of the row map (clustered index root) Dolt 2.3.1 made for each of [`TABLES`]
/// (printed by `json_as_dolt_stores_it` with `PROLLY_DOLT` set; the same for `dolt table
/// import -u`). Table hashes differ by table, as column tags come from the table's name.
const DOLT_ROWS: &str = "qq6pvhhl348va7nn56jmo9agoum4stre";

fn create(table: &str) -> String {
    format!("CREATE TABLE {table} (id INT PRIMARY KEY, js JSON)")
}

/// The documents, as text a user would give.
fn corpus() -> Vec<String> {
    let mut docs: Vec<String> = [
        r#"{"b": 1,  "a": 2}"#,
        r#"{"a":1,"a":2}"#,
        r#"{"a":{"z":1,"a":[3,2,1]},"a":{"y":null}}"#,
        r#"{"\u0061":1,"a":2,"é":3,"e":4,"Z":5,"":6}"#,
        " \t\r\n[ 1 , 2 ]\n",
        "-0",
        "-0.0",
        "0.0",
        "1.0",
        "1E+2",
        "1e21",
        "1e20",
        "123456789012345678901234567890",
        "12345678901234567890",
        "9007199254740993",
        "0.000001",
        "0.0000001",
        "-1.5e-7",
        "1.7976931348623157e308",
        "5e-324",
        "1e-400",
        "3.14159265358979323846",
        "[0.1,0.2,0.30000000000000004,100,1e100,-2.5E-3]",
        r#""plain""#,
        r#""\u00e9\u4e2d\ud83d\ude00""#,
        r#""\ud800 lone, \udc00 low, \ud83d\u0041 unpaired""#,
        r#""\b\f\n\r\t\u0001\u001f\u007f\/\\\"""#,
        r#""<script>&amp;</script>""#,
        "\"\u{2028}\u{2029}\"",
        "\"tab\\tand\\u0000nul\"",
        "true",
        "false",
        "null",
        "[]",
        "{}",
        r#"[{}, [], [[]], {"": {"": []}}]"#,
        r#"{"k": [true, false, null, "x", 1, {"n": -0}]}"#,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Stored out of band: members written in reverse order, sorted when stored.
    let big: Vec<String> = (0..400)
        .rev()
        .map(|i| format!("\"key{i:03}\": [{i}, \"{}\"]", "v".repeat(i % 7)))
        .collect();
    docs.push(format!("{{{}}}", big.join(", ")));
    // As deep as Dolt takes.
    docs.push("[".repeat(10_000) + "1" + &"]".repeat(10_000));
    docs.push("{\"a\":".repeat(3_000) + "0" + &"}".repeat(3_000));
    docs
}

/// Text Dolt refuses as JSON, each with Dolt's reason.
const BAD: [&str; 12] = [
    "{oops",
    "hello",
    "[1,",
    "nul",
    r#"{"a":1} trailing"#,
    "1e400",
    "-1e309",
    "",
    "01",
    "[1,]",
    "\"a\tb\"",
    "{\"a\" 1}",
];

fn sql_quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''"))
}

fn csv(docs: &[String]) -> String {
    let mut out = String::from("id,js\n");
    for (i, d) in docs.iter().enumerate() {
        out.push_str(&format!("{i},\"{}\"\n", d.replace('"', "\"\"")));
    }
    out
}

/// Dolt's statements: the documents inserted into `j`, `jt` and `jf`; into `ju` as NULL,
/// then set by UPDATE.
fn dolt_sql(docs: &[String]) -> Vec<String> {
    let mut sql: Vec<String> = TABLES.iter().map(|t| create(t)).collect();
    for t in &TABLES[..3] {
        let values: Vec<String> = docs
            .iter()
            .enumerate()
            .map(|(i, d)| format!("({i}, {})", sql_quote(d)))
            .collect();
        sql.push(format!("INSERT INTO {t} VALUES {}", values.join(", ")));
    }
    let nulls: Vec<String> = (0..docs.len()).map(|i| format!("({i}, NULL)")).collect();
    sql.push(format!("INSERT INTO ju VALUES {}", nulls.join(", ")));
    let updates: Vec<String> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| format!("UPDATE ju SET js = {} WHERE id = {i}", sql_quote(d)))
        .collect();
    sql.push(updates.join("; "));
    sql
}

fn id(i: usize) -> Option<SqlValue> {
    Some(SqlValue::Int(i as i64))
}

/// The same documents through our writer's paths.
fn ours(w: &mut DoltWriter, docs: &[String]) {
    for t in TABLES {
        w.create_table(&TableDef::from_sql(&create(t)).unwrap())
            .unwrap();
    }
    let rows: Vec<Vec<Option<SqlValue>>> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| vec![id(i), Some(SqlValue::Json(d.clone()))])
        .collect();
    w.insert("j", &["id", "js"], &rows).unwrap();
    let ids: Vec<String> = (0..docs.len()).map(|i| i.to_string()).collect();
    let text: Vec<Vec<Option<&str>>> = docs
        .iter()
        .zip(&ids)
        .map(|(d, i)| vec![Some(i.as_str()), Some(d.as_str())])
        .collect();
    w.apply_text(RowMode::Insert, "jt", &["id", "js"], &text)
        .unwrap();
    w.apply_fields(RowMode::Upsert, "jf", &["id", "js"], || {
        docs.iter().zip(&ids).map(|(d, i)| {
            vec![
                Some(Cow::Borrowed(i.as_bytes())),
                Some(Cow::Borrowed(d.as_bytes())),
            ]
        })
    })
    .unwrap();
    let nulls: Vec<Vec<Option<SqlValue>>> = (0..docs.len()).map(|i| vec![id(i), None]).collect();
    w.insert("ju", &["id", "js"], &nulls).unwrap();
    let texts: Vec<Vec<Option<SqlValue>>> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| vec![id(i), Some(SqlValue::Text(d.clone()))])
        .collect();
    w.update("ju", &["id", "js"], &texts).unwrap();
}

/// Each table's name and the address of its row map.
fn row_maps(dir: &std::path::Path, state: State) -> Vec<(String, String)> {
    let db = prollystore_sql::open(dir).unwrap();
    let root = db.root_at("main", state).unwrap();
    root.tables
        .iter()
        .map(|(t, _)| {
            let table = db.table(&root, t).unwrap();
            let rows = HashProfile::Dolt.address_of(&table.primary_index);
            (t.clone(), rows.to_string())
        })
        .collect()
}

/// With `PROLLY_DOLT`: our commit is Dolt's, and `dolt table import -u` of the same
/// documents gives the same table.
#[test]
fn json_as_dolt_stores_it() {
    let docs = corpus();
    let sql = dolt_sql(&docs);
    let sql: Vec<&str> = sql.iter().map(String::as_str).collect();
    let Some((tmp, theirs, _ours)) = differential("json", &sql, &|w| ours(w, &docs)) else {
        return;
    };
    let file = tmp.path().join("docs.csv");
    std::fs::write(&file, csv(&docs)).unwrap();
    dolt(&theirs, &["sql", "-q", &create("ji")]).unwrap();
    dolt(
        &theirs,
        &["table", "import", "-u", "ji", file.to_str().unwrap()],
    )
    .unwrap();
    let hashes = row_maps(&theirs, State::Working);
    eprintln!("Dolt's row maps: {hashes:?}");
    for (t, h) in &hashes {
        assert_eq!(h, DOLT_ROWS, "table {t}");
    }
    assert_eq!(hashes.len(), 5);
}

/// Without Dolt: every path gives the table Dolt made.
#[test]
fn json_tables_hash_as_dolts() {
    let docs = corpus();
    let (_tmp, dir) = copy_db(&scenario("basic/before"));
    let mut w = prollystore_sql::writer(&dir).unwrap();
    ours(&mut w, &docs);
    w.commit(&meta("json")).unwrap();
    drop(w);
    let hashes = row_maps(&dir, State::Committed);
    for t in TABLES {
        let h = hashes.iter().find(|(n, _)| n == t).map(|(_, h)| h.as_str());
        assert_eq!(h, Some(DOLT_ROWS), "table {t}");
    }
}

/// What Dolt refuses as JSON is refused on every path, naming the row and the column, and
/// nothing is written.
#[test]
fn text_dolt_refuses_as_json_is_refused_on_every_path() {
    let (_tmp, dir) = copy_db(&scenario("basic/before"));
    {
        let mut w = prollystore_sql::writer(&dir).unwrap();
        w.create_table(&TableDef::from_sql(&create("j")).unwrap())
            .unwrap();
        w.insert("j", &["id", "js"], &[vec![id(0), None]]).unwrap();
        w.commit(&meta("j")).unwrap();
    }
    let before = snapshot(&dir);
    for bad in BAD {
        let mut w = prollystore_sql::writer(&dir).unwrap();
        let named = |e: prollystore_dolt::error::DoltError, row: usize| {
            let e = e.to_string();
            assert!(
                e.contains("\"js\"") && e.contains(&format!("row {row}")),
                "{bad:?}: {e}"
            );
        };
        let good = Some(SqlValue::Json("[1]".into()));
        let rows = [
            vec![id(1), good.clone()],
            vec![id(2), Some(SqlValue::Json(bad.into()))],
        ];
        named(w.insert("j", &["id", "js"], &rows).unwrap_err(), 1);
        named(
            w.apply_text(
                RowMode::Upsert,
                "j",
                &["id", "js"],
                &[vec![Some("1"), Some("[1]")], vec![Some("2"), Some(bad)]],
            )
            .unwrap_err(),
            1,
        );
        named(
            w.apply_fields(RowMode::Upsert, "j", &["id", "js"], || {
                [("3", "{}"), ("4", bad)].into_iter().map(|(i, d)| {
                    vec![
                        Some(Cow::Borrowed(i.as_bytes())),
                        Some(Cow::Borrowed(d.as_bytes())),
                    ]
                })
            })
            .unwrap_err(),
            1,
        );
        named(
            w.update(
                "j",
                &["id", "js"],
                &[vec![id(0), Some(SqlValue::Text(bad.into()))]],
            )
            .unwrap_err(),
            0,
        );
        assert!(w.is_clean().unwrap(), "{bad:?}");
        w.save(("T", "t@example.com"), 1).unwrap();
        drop(w);
        assert!(snapshot(&dir) == before, "{bad:?}: bytes changed");
    }
}
