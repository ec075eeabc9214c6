//! Spatial columns: tables of every geometry type (with and without an SRID attribute, keyed
//! and keyless, indexed: keys by spatial cell) created and filled by our writer give the tables Dolt makes for the same
//! `CREATE TABLE` and `INSERT … ST_GeomFromText(…)` statements (with `PROLLY_DOLT`: the same
//! commit, and Dolt reads ours; without: the table hashes Dolt made, recorded below), and
//! values a column refuses leave every byte as it was.

use super::api_tests::{differential, meta, snapshot};
use super::helpers::{copy_db, dolt_as, scenario};
use prollystore_dolt::db::State;
use prollystore_dolt::sql_value::SqlValue;
use prollystore_dolt::write::TableDef;
use prollystore_dolt::write::{DoltWriter, RowMode};
use prollystore_sql::FromSql;

const CREATE_G: &str = "CREATE TABLE g (id INT PRIMARY KEY, g GEOMETRY, p POINT SRID 4326, \
    l LINESTRING, poly POLYGON, mp MULTIPOINT, ml MULTILINESTRING, \
    mpoly MULTIPOLYGON SRID 3857, gc GEOMETRYCOLLECTION, note VARCHAR(10), KEY ip (p), \
    KEY ilp (l, note), KEY ipoly (poly))";
const CREATE_K: &str = "CREATE TABLE k (g GEOMETRY SRID 0, n INT, KEY kg (g))";
const CREATE_S: &str = "CREATE TABLE s (id INT PRIMARY KEY, p POINT SRID 4326 NOT NULL, \
    g GEOMETRY NOT NULL, SPATIAL INDEX sp (p), SPATIAL KEY (g))";
/// Rows of `s`: id, `p` (SRID 4326), `g` (SRID 0).
const S_ROWS: [(i64, &str, &str); 4] = [
    (1, "POINT(10 20)", "POINT(0 0)"),
    (2, "POINT(-33.9 151.2)", "LINESTRING(-1 -1,5 7)"),
    (3, "POINT(0 -0)", "POLYGON((0 0,1e6 0,1e6 1e6,0 0))"),
    (4, "POINT(89.5 -179.5)", "MULTIPOINT(1e-300 2,3 4)"),
];

/// Column values of table `g`'s rows as WKT with their SRID (`None`: NULL).
type Row = (i64, [Option<(&'static str, u32)>; 8]);

const ROWS: [Row; 2] = [
    (
        1,
        [
            Some(("POINT(1 2)", 0)),
            Some(("POINT(1 2)", 4326)),
            Some(("LINESTRING(0 0,1 1.5,-2 3)", 0)),
            Some(("POLYGON((0 0,4 0,4 4,0 4,0 0),(1 1,2 1,2 2,1 1))", 0)),
            Some(("MULTIPOINT(1 2,3 4)", 0)),
            Some(("MULTILINESTRING((0 0,1 1),(2 2,3 3))", 0)),
            Some((
                "MULTIPOLYGON(((0 0,1 0,1 1,0 0)),((5 5,6 5,6 6,5 5)))",
                3857,
            )),
            Some((
                "GEOMETRYCOLLECTION(POINT(1 2),LINESTRING(0 0,1 1),GEOMETRYCOLLECTION EMPTY)",
                0,
            )),
        ],
    ),
    (
        2,
        [
            Some(("GEOMETRYCOLLECTION(MULTIPOINT((0 0)))", 4326)),
            Some(("POINT(-45.5 170.25)", 4326)),
            None,
            None,
            Some(("MULTIPOINT((1e3 -2.5e-3))", 0)),
            None,
            None,
            Some(("GEOMETRYCOLLECTION EMPTY", 0)),
        ],
    ),
];

const COLUMNS: [&str; 8] = ["g", "p", "l", "poly", "mp", "ml", "mpoly", "gc"];

/// A closed ring of `n` points: a polygon of about 16·n bytes (out of band when large).
fn big_polygon(n: usize) -> String {
    let mut pts: Vec<String> = (0..n)
        .map(|i| format!("{} {}", i, (i * 7919) % 1000))
        .collect();
    pts.push(pts[0].clone());
    format!("POLYGON(({}))", pts.join(","))
}

/// Big-endian SRID 0 `POINT(1 2)`: Dolt stores it little-endian.
fn big_endian_point() -> Vec<u8> {
    let mut v = vec![0, 0, 0, 0, 0, 0, 0, 0, 1];
    v.extend_from_slice(&1f64.to_be_bytes());
    v.extend_from_slice(&2f64.to_be_bytes());
    v
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

/// The SQL Dolt runs.
fn dolt_sql() -> Vec<String> {
    let mut sql = vec![
        CREATE_G.to_string(),
        CREATE_K.to_string(),
        CREATE_S.to_string(),
    ];
    for (id, p, g) in S_ROWS {
        sql.push(format!(
            "INSERT INTO s VALUES ({id}, ST_GeomFromText('{p}', 4326), ST_GeomFromText('{g}'))"
        ));
    }
    sql.push("UPDATE s SET g = ST_GeomFromText('POINT(7 7)') WHERE id = 1".into());
    sql.push("DELETE FROM s WHERE id = 2".into());
    for (id, values) in &ROWS {
        let v: Vec<String> = values
            .iter()
            .map(|v| match v {
                Some((w, s)) => format!("ST_GeomFromText('{w}', {s})"),
                None => "NULL".into(),
            })
            .collect();
        sql.push(format!(
            "INSERT INTO g VALUES ({id}, {}, 'n{id}')",
            v.join(", ")
        ));
    }
    sql.push(format!(
        "INSERT INTO g (id, poly, g) VALUES (3, ST_GeomFromText('{}'), x'{}')",
        big_polygon(400),
        hex(&big_endian_point())
    ));
    sql.push("INSERT INTO g (id) VALUES (4)".into());
    sql.push(
        "UPDATE g SET l = ST_GeomFromText('LINESTRING(5 5,6 6)'), note = 'u' WHERE id = 2".into(),
    );
    sql.push("DELETE FROM g WHERE id = 4".into());
    sql.push(
        "INSERT INTO k VALUES (ST_GeomFromText('POINT(1 1)'), 1), \
         (ST_GeomFromText('POINT(1 1)'), 1), (NULL, 2), \
         (ST_GeomFromText('LINESTRING(0 0,3 3)'), 3)"
            .into(),
    );
    sql
}

/// The same changes through our writer: WKT as text (`SRID=n;` for a non-zero SRID), the
/// big-endian bytes as a byte value.
fn ours(w: &mut DoltWriter) {
    w.create_table(&TableDef::from_sql(CREATE_G).unwrap())
        .unwrap();
    w.create_table(&TableDef::from_sql(CREATE_K).unwrap())
        .unwrap();
    w.create_table(&TableDef::from_sql(CREATE_S).unwrap())
        .unwrap();
    for (id, p, g) in S_ROWS {
        let (id, p) = (id.to_string(), format!("SRID=4326;{p}"));
        w.apply_text(
            RowMode::Insert,
            "s",
            &["id", "p", "g"],
            &[vec![Some(id.as_str()), Some(p.as_str()), Some(g)]],
        )
        .unwrap();
    }
    w.apply_text(
        RowMode::Update,
        "s",
        &["id", "g"],
        &[vec![Some("1"), Some("POINT(7 7)")]],
    )
    .unwrap();
    w.delete("s", &[vec![SqlValue::Int(2)]]).unwrap();
    let mut cols = vec!["id"];
    cols.extend(COLUMNS);
    cols.push("note");
    let texts: Vec<Vec<Option<String>>> = ROWS
        .iter()
        .map(|(id, values)| {
            let mut row = vec![Some(id.to_string())];
            row.extend(values.iter().map(|v| {
                v.map(|(w, s)| match s {
                    0 => w.to_string(),
                    s => format!("SRID={s};{w}"),
                })
            }));
            row.push(Some(format!("n{id}")));
            row
        })
        .collect();
    let rows: Vec<Vec<Option<&str>>> = texts
        .iter()
        .map(|r| r.iter().map(Option::as_deref).collect())
        .collect();
    w.apply_text(RowMode::Insert, "g", &cols, &rows).unwrap();
    w.insert(
        "g",
        &["id", "poly", "g"],
        &[vec![
            Some(SqlValue::Int(3)),
            Some(SqlValue::Text(big_polygon(400))),
            Some(SqlValue::Bytes(big_endian_point())),
        ]],
    )
    .unwrap();
    w.insert("g", &["id"], &[vec![Some(SqlValue::Int(4))]])
        .unwrap();
    w.apply_text(
        RowMode::Update,
        "g",
        &["id", "l", "note"],
        &[vec![Some("2"), Some("LINESTRING(5 5,6 6)"), Some("u")]],
    )
    .unwrap();
    w.delete("g", &[vec![SqlValue::Int(4)]]).unwrap();
    w.apply_text(
        RowMode::Insert,
        "k",
        &["g", "n"],
        &[
            vec![Some("POINT(1 1)"), Some("1")],
            vec![Some("POINT(1 1)"), Some("1")],
            vec![None, Some("2")],
            vec![Some("LINESTRING(0 0,3 3)"), Some("3")],
        ],
    )
    .unwrap();
}

/// The table hashes Dolt made for `g` and `k` from [`dolt_sql`] (dolt 2.3.1, printed by
/// `geometry_as_dolt_stores_it` with `PROLLY_DOLT` set).
const DOLT_TABLES: [(&str, &str); 3] = [
    ("g", "u3h9pfa0rvehsd2ah57km1heo9uh7456"),
    ("k", "n2ce9mtuiqqe2c1cnkqeelk8d2dugdu2"),
    ("s", "8b5v8g52p74r7gl75s6l139hg4r6supm"),
];

fn table_hashes(dir: &std::path::Path) -> Vec<(String, String)> {
    let db = prollystore_sql::open(dir).unwrap();
    let root = db.root_at("main", State::Committed).unwrap();
    root.tables
        .iter()
        .filter(|(t, _)| ["g", "k", "s"].contains(&t.as_str()))
        .map(|(t, a)| (t.clone(), a.to_string()))
        .collect()
}

/// Every geometry type, SRIDs 0, 4326 (stored longitude first) and 3857, NULLs, a value
/// stored out of band, big-endian input, an update and a delete, a keyless table with
/// duplicate rows: Dolt's commit, and Dolt reads what we wrote as it reads its own.
#[test]
fn geometry_as_dolt_stores_it() {
    let sql = dolt_sql();
    let sql: Vec<&str> = sql.iter().map(String::as_str).collect();
    let Some((_tmp, theirs, ours_db)) = differential("geometry", &sql, &ours) else {
        return;
    };
    let hashes = table_hashes(&theirs);
    eprintln!("Dolt's tables: {hashes:?}");
    assert_eq!(hashes, table_hashes(&ours_db));
    let q = |t: &str| {
        format!(
            "SELECT * FROM {t} ORDER BY {}",
            if t == "k" { "n, g" } else { "id" }
        )
    };
    for t in ["g", "k", "s"] {
        let run = |dir: &std::path::Path, args: &[&str]| dolt_as(dir, args, "T", "t@e").unwrap();
        let a = run(&theirs, &["sql", "-r", "csv", "-q", &q(t)]);
        let b = run(&ours_db, &["sql", "-r", "csv", "-q", &q(t)]);
        assert_eq!(a, b, "{t}");
        let wkt = format!(
            "SELECT {} FROM {t}",
            match t {
                "g" =>
                    "id, ST_AsText(g), ST_AsText(p), ST_SRID(p), ST_AsText(mpoly), ST_AsText(gc)",
                "s" => "id, ST_AsText(p), ST_AsText(g)",
                _ => "ST_AsText(g), n",
            }
        );
        assert_eq!(
            run(&theirs, &["sql", "-r", "csv", "-q", &wkt]),
            run(&ours_db, &["sql", "-r", "csv", "-q", &wkt])
        );
        assert_eq!(
            run(&theirs, &["schema", "show", t]),
            run(&ours_db, &["schema", "show", t])
        );
        // Our reader's CSV export prints what `dolt sql -r csv` prints.
        if t == "g" {
            let db = prollystore_sql::open(&ours_db).unwrap();
            let root = db.root_at("main", State::Committed).unwrap();
            let table = db.table(&root, t).unwrap();
            let mut out = Vec::new();
            prollystore_dolt::csv_export::export_csv(&db, &table, &mut out).unwrap();
            assert_eq!(out, a, "{t}: our CSV export");
        }
    }
    // Dolt keeps enforcing the column's SRID on our table.
    let bin = std::env::var_os("PROLLY_DOLT").unwrap();
    let out = std::process::Command::new(bin)
        .args([
            "sql",
            "-q",
            "INSERT INTO g (id, p) VALUES (9, ST_GeomFromText('POINT(1 2)'))",
        ])
        .current_dir(&ours_db)
        .env("HOME", ours_db.parent().unwrap().join("home"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    // Dolt finds rows of our spatial index.
    let q = "SELECT id FROM s WHERE ST_Intersects(g, ST_GeomFromText('POLYGON((-1 -1,2 -1,2 2,-1 -1))')) ORDER BY id";
    let run =
        |dir: &std::path::Path| dolt_as(dir, &["sql", "-r", "csv", "-q", q], "T", "t@e").unwrap();
    assert_eq!(run(&theirs), run(&ours_db));
}

/// Without Dolt: the same changes on a database `dolt init` made give the tables Dolt made.
#[test]
fn geometry_tables_hash_as_dolts() {
    let (_tmp, dir) = copy_db(&scenario("basic/before"));
    let mut w = prollystore_sql::writer(&dir).unwrap();
    ours(&mut w);
    w.commit(&meta("geometry")).unwrap();
    drop(w);
    let want: Vec<(String, String)> = DOLT_TABLES
        .iter()
        .map(|(t, h)| (t.to_string(), h.to_string()))
        .collect();
    assert_eq!(table_hashes(&dir), want);
}

/// Values a spatial column refuses (another SRID, another geometry type, malformed WKT or
/// bytes, an SRID Dolt does not know) are errors naming the row and column, and the database
/// keeps every byte.
#[test]
fn refused_geometry_leaves_every_byte_as_it_was() {
    let (_tmp, dir) = copy_db(&scenario("basic/before"));
    {
        let mut w = prollystore_sql::writer(&dir).unwrap();
        w.create_table(&TableDef::from_sql(CREATE_G).unwrap())
            .unwrap();
        w.commit(&meta("g")).unwrap();
    }
    let before = snapshot(&dir);
    let mut w = prollystore_sql::writer(&dir).unwrap();
    let cases: [(&str, &str, &[&str]); 7] = [
        ("p", "POINT(1 2)", &["SRID", "4326", "\"p\""]),
        (
            "p",
            "SRID=4326;LINESTRING(1 2,3 4)",
            &["LINESTRING", "POINT"],
        ),
        ("l", "POINT(1 2)", &["POINT", "LINESTRING"]),
        ("g", "POINT(1 2", &["neither WKT"]),
        ("g", "SRID=12345;POINT(1 2)", &["12345"]),
        ("poly", "POLYGON((0 0,1 0,1 1,0 1))", &["neither WKT"]),
        (
            "g",
            "hex:0000000001020000000500000000",
            &["invalid GIS data"],
        ),
    ];
    for (col, value, words) in cases {
        let rows = [vec![Some("1"), None], vec![Some("2"), Some(value)]];
        let e = w
            .apply_text(RowMode::Insert, "g", &["id", col], &rows)
            .unwrap_err()
            .to_string();
        assert!(e.contains("row 1") && e.contains(col), "{value}: {e}");
        for word in words {
            assert!(e.contains(word), "{value}: {e}");
        }
    }
    let e = w
        .insert(
            "g",
            &["id", "g"],
            &[vec![
                Some(SqlValue::Int(1)),
                Some(SqlValue::Bytes(vec![0xe6, 0x10, 0, 0, 1, 1, 0, 0, 0, 1])),
            ]],
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("invalid GIS data"), "{e}");
    drop(w);
    assert!(snapshot(&dir) == before);
}

const CREATE_IMP: &str =
    "CREATE TABLE imp (id INT PRIMARY KEY, g GEOMETRY, p POINT SRID 4326, l LINESTRING)";

/// The import's rows: SRID + WKB bytes as `dolt table import` reads them from CSV (`None`:
/// an empty field, NULL), among them big-endian bytes and a linestring followed by bytes
/// Dolt drops.
fn import_rows() -> Vec<Vec<Option<Vec<u8>>>> {
    let wkb = |w: &str, s: u32| prollystore_dolt::geometry::from_wkt(w, s).unwrap();
    let mut trailing = wkb("LINESTRING(0 0,1 1,2 0)", 0);
    trailing.extend_from_slice(b"xyz");
    vec![
        vec![
            Some(b"1".to_vec()),
            Some(wkb("POINT(1 2)", 0)),
            Some(wkb("POINT(3 4)", 4326)),
            Some(wkb("LINESTRING(0 0,1 1.5)", 0)),
        ],
        vec![
            Some(b"2".to_vec()),
            Some(big_endian_point()),
            None,
            Some(trailing),
        ],
        vec![
            Some(b"3".to_vec()),
            Some(wkb(
                "GEOMETRYCOLLECTION(POLYGON((0 0,1 0,1 1,0 0)),MULTIPOINT(1 1))",
                3857,
            )),
            None,
            None,
        ],
    ]
}

/// The table hash Dolt made for `imp` from [`import_rows`] by `dolt table import -u` (dolt
/// 2.3.1, printed by `geometry_import_as_dolts` with `PROLLY_DOLT` set).
const DOLT_IMP: &str = "km6ms58on88aij5ndjofcvnh5kolfhtg";

/// Our import of `imp` (the CSV path: fields as bytes, streamed into the empty table); its
/// table hash.
fn import_ours(dir: &std::path::Path) -> String {
    let mut w = prollystore_sql::writer(dir).unwrap();
    w.create_table(&TableDef::from_sql(CREATE_IMP).unwrap())
        .unwrap();
    let rows = import_rows();
    let n = w
        .apply_fields(RowMode::Insert, "imp", &["id", "g", "p", "l"], || {
            rows.iter().map(|r| {
                r.iter()
                    .map(|f| f.as_deref().map(std::borrow::Cow::Borrowed))
                    .collect()
            })
        })
        .unwrap();
    assert_eq!(n, 3);
    w.commit(&meta("imp")).unwrap();
    drop(w);
    let db = prollystore_sql::open(dir).unwrap();
    let root = db.root_at("main", State::Committed).unwrap();
    let (_, a) = root.tables.iter().find(|(t, _)| t == "imp").unwrap();
    a.to_string()
}

/// SRID + WKB bytes imported from CSV: the table `dolt table import` makes (with
/// `PROLLY_DOLT`), else the one it made (recorded).
#[test]
fn geometry_import_as_dolts() {
    let (_tmp, dir) = copy_db(&scenario("basic/before"));
    let ours = import_ours(&dir);
    let Some((tmp, a)) = super::api_tests::fresh_dolt_db("geometry import") else {
        assert_eq!(ours, DOLT_IMP);
        return;
    };
    let mut csv = b"id,g,p,l\n".to_vec();
    for r in import_rows() {
        for (i, f) in r.iter().enumerate() {
            if i > 0 {
                csv.push(b',');
            }
            if let Some(f) = f {
                csv.push(b'"');
                for &b in f {
                    if b == b'"' {
                        csv.push(b'"');
                    }
                    csv.push(b);
                }
                csv.push(b'"');
            }
        }
        csv.push(b'\n');
    }
    let file = tmp.path().join("imp.csv");
    std::fs::write(&file, csv).unwrap();
    dolt_as(&a, &["sql", "-q", CREATE_IMP], "T", "t@e").unwrap();
    dolt_as(
        &a,
        &["table", "import", "-u", "imp", file.to_str().unwrap()],
        "T",
        "t@e",
    )
    .unwrap();
    let db = prollystore_sql::open(&a).unwrap();
    let root = db.root_at("main", State::Working).unwrap();
    let (_, theirs) = root.tables.iter().find(|(t, _)| t == "imp").unwrap();
    eprintln!("Dolt's imp: {theirs}");
    assert_eq!(ours, theirs.to_string());
}
