#!/bin/sh
# Rebuilds the `binary_keys` test database: VARBINARY and BINARY primary keys whose bytes are
# not valid UTF-8 (lone continuation bytes, cut-off sequences, 0xFF, NUL, bytes that spell
# "0x.." as text), and a composite key mixing one with an INT, stored in table files (`dolt
# gc` moves the journal's chunks into table files), with what the real Dolt CLI prints for
# each table (`dolt sql -r csv`: binary values as their raw bytes).
# Usage: make_binary_keys.sh DOLT OUTDIR   (run with a scratch HOME; writes
# OUTDIR/binary_keys and OUTDIR/binary_keys.expected)
set -e
DOLT=$1
OUT=$2
DB=$OUT/binary_keys
EXP=$OUT/binary_keys.expected
rm -rf "$DB" "$EXP"
mkdir -p "$DB" "$EXP/main"
$DOLT config --global --add user.name "Test User" >/dev/null 2>&1 || true
$DOLT config --global --add user.email "test@example.com" >/dev/null 2>&1 || true
cd "$DB"
$DOLT init >/dev/null
$DOLT sql -q "CREATE TABLE vb (k VARBINARY(16) PRIMARY KEY, v INT);
CREATE TABLE fb (k BINARY(4) PRIMARY KEY, v VARCHAR(10));
CREATE TABLE cb (k VARBINARY(8), n INT, v INT, PRIMARY KEY (k, n));
INSERT INTO vb VALUES (X'FF',1),(X'C328',2),(X'80',3),(X'00',4),(X'E282',5),(X'F09F98',6),
  (X'616263',7),(X'C3A9',8),(X'FEFF00FF',9),(0x30786666,10),(X'',11),(X'7F80FF',12);
INSERT INTO fb VALUES (X'FF',NULL),(X'C0AF',''),(X'00FF00FF','x'),(X'61',NULL),(X'EDA080','s');
INSERT INTO cb VALUES (X'FF',1,1),(X'FF',2,2),(X'80',1,3),(X'',0,4),(X'C3',7,5),(X'61',1,6);"
$DOLT add -A
$DOLT commit -m "binary keys" --date 2024-01-01T00:00:00 >/dev/null
$DOLT gc >/dev/null
for t in vb fb cb; do
  $DOLT sql -r csv -q "select * from $t" >"$EXP/main/$t.csv"
  $DOLT schema show $t >"$EXP/main/$t.schema.txt"
done
rm -rf .dolt/stats .dolt/noms/LOCK
