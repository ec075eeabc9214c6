#!/bin/sh
# Rebuilds the `schema_forms` test database: schemas whose stored form a reader must not take
# at its word.
# - Table t: its primary key (j, k) is not in column order, it has secondary indexes, and an
#   ALTER changed a column in place. Dolt 2.3.1 then writes the schema with each index's
#   trailing primary-key columns in column order (k, j) while the index rows stay keyed
#   (…, j, k); rows inserted afterwards are keyed that way too.
# - Table bc: a utf8mb4_0900_ai_ci table with utf8mb4_0900_bin columns (their stored type
#   names no collation) as primary key and index, with keys that the two collations order
#   differently.
# Also saves what the real Dolt CLI answers for each index's order and for lookups.
# Usage: make_schema_forms.sh DOLT OUTDIR   (run with a scratch HOME; writes
# OUTDIR/schema_forms/db and OUTDIR/schema_forms/expected)
set -e
DOLT=$1
OUT=$2/schema_forms
rm -rf "$OUT"
mkdir -p "$OUT/db" "$OUT/expected"
$DOLT config --global --add user.name "Test User" >/dev/null 2>&1 || true
$DOLT config --global --add user.email "test@example.com" >/dev/null 2>&1 || true
cd "$OUT/db"
$DOLT init >/dev/null
$DOLT sql -q "CREATE TABLE t (k VARCHAR(5), j INT, v INT, u VARCHAR(20), PRIMARY KEY (j, k),
  KEY iv (v), KEY iu (u, j), UNIQUE KEY uvk (v, k));
INSERT INTO t VALUES ('a',1,1,'x'),('bb',1,2,'Y'),('c',0,3,'y'),('a',0,4,'x'),('zz',2,NULL,NULL);"
$DOLT add -A
$DOLT commit -m "a key out of column order" >/dev/null
$DOLT sql -q "ALTER TABLE t MODIFY COLUMN u VARCHAR(40) COMMENT 'in place'"
$DOLT sql -q "INSERT INTO t VALUES ('b',0,5,'x'),('a',2,6,'w'),('ab',1,7,NULL)"
$DOLT sql -q "CREATE TABLE bc (k VARCHAR(10) COLLATE utf8mb4_0900_bin PRIMARY KEY,
  c VARCHAR(10) COLLATE utf8mb4_0900_bin, t VARCHAR(10), KEY ic (c), KEY it (t))
  COLLATE utf8mb4_0900_ai_ci;
INSERT INTO bc VALUES ('b','x','b'),('B','X','B2'),('a','a','A'),('Z','z','z'),('ä','Ä','ä'),('_','_','_');"
$DOLT add -A
$DOLT commit -m "modified in place, then rows" >/dev/null
cd "$OUT/expected"
q() { (cd "$OUT/db" && $DOLT sql -r csv -q "$1") > "$2"; }
q "select * from t order by j, k" primary.csv
q "select * from t order by v, j, k" iv.csv
q "select * from t order by u, j, k" iu.csv
q "select * from t order by v, k, j" uvk.csv
q "select * from bc order by k" bc_primary.csv
q "select * from bc order by c, k" bc_ic.csv
q "select * from bc order by t, k" bc_it.csv
q "select * from bc where k = 'B'" bc_k_B.csv
q "select * from bc where c = 'X'" bc_c_X.csv
q "select * from bc where t = 'b2'" bc_t_b2.csv
rm -rf "$OUT/db/.dolt/stats" "$OUT/db/.dolt/noms/LOCK"
