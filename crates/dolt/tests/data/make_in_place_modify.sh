#!/bin/sh
# Rebuilds the `in_place_modify` test database: a table whose primary key (j, k) is not in
# column order, with secondary indexes, after ALTERs that change a column in place. Dolt
# 2.3.1 then writes the schema with each index's trailing primary-key columns in column order
# (k, j) while the index rows stay keyed (…, j, k); rows inserted afterwards are keyed that
# way too. Also saves what the real Dolt CLI answers for each index's order.
# Usage: make_in_place_modify.sh DOLT OUTDIR   (run with a scratch HOME; writes
# OUTDIR/in_place_modify/db and OUTDIR/in_place_modify/expected)
set -e
DOLT=$1
OUT=$2/in_place_modify
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
$DOLT add -A
$DOLT commit -m "modified in place, then rows" >/dev/null
cd "$OUT/expected"
q() { (cd "$OUT/db" && $DOLT sql -r csv -q "$1") > "$2"; }
q "select * from t order by j, k" primary.csv
q "select * from t order by v, j, k" iv.csv
q "select * from t order by u, j, k" iu.csv
q "select * from t order by v, k, j" uvk.csv
rm -rf "$OUT/db/.dolt/stats" "$OUT/db/.dolt/noms/LOCK"
