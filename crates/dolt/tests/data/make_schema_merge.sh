#!/bin/sh
# Rebuilds the `schema_merge` test database and what `dolt merge` made of it: for every case
# below, branch CASE_o (ours) and CASE_t (theirs) grow from one base commit of table `t`, and
# `dolt merge -m "merge CASE" CASE_t` on CASE_o (on a scratch copy) gives either the merge
# commit's hash or `conflict`. Dates and the author are pinned, so the hashes repeat.
# Usage: make_schema_merge.sh DOLT OUTDIR   (writes OUTDIR/schema_merge and
# OUTDIR/schema_merge.expected.txt; uses a throwaway HOME under OUTDIR). The committed copy in
# crates/dolt/tests/data was made with the Dolt CLI built from the vectors' source commit
# (2.3.1): make_schema_merge.sh /path/to/dolt crates/dolt/tests/data
set -e
DOLT=$1
OUT=$(cd "$2" && pwd)
DB=$OUT/schema_merge
EXP=$OUT/schema_merge.expected.txt
rm -rf "$DB" "$EXP" "$OUT/home" "$OUT/scratch"
mkdir -p "$DB" "$OUT/home/.dolt"
echo '{"user.name":"Merge Bot","user.email":"merge@example.com","metrics.disabled":"true"}' \
  >"$OUT/home/.dolt/config_global.json"
export HOME=$OUT/home TZ=UTC NO_COLOR=1
export DOLT_AUTHOR_DATE=2024-03-01T00:00:00Z DOLT_COMMITTER_DATE=2024-03-01T00:00:00Z
cd "$DB"
$DOLT init --initial-branch main >/dev/null

BASE="CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(20), c TEXT, KEY ka (a)) COMMENT 'kept?';
INSERT INTO t VALUES (1,1,'one','x'),(2,2,'two','y'),(3,3,'three',NULL),(4,4,'four','w'),(5,5,'five','z');"
# One case has a TEXT value long enough to be stored out of band (and moved back in or out
# when a row is rewritten).
LONG="CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(20), c TEXT, KEY ka (a));
INSERT INTO t VALUES (1,1,'one',REPEAT('x',1000)),(2,2,'two',REPEAT('y',2030)),(3,3,'three',REPEAT('z',3000));"
CASES=""
: >"$OUT/cases.sql"
# case NAME OURS_SQL THEIRS_SQL [BASE_SQL]: appended to one script run in a single session
case_() {
  CASES="$CASES $1"
  cat >>"$OUT/cases.sql" <<SQL
call dolt_checkout('main');
call dolt_checkout('-b', '$1_o');
${4:-$BASE}
call dolt_commit('-Am', 'base');
call dolt_branch('$1_t');
$2
call dolt_commit('-Am', 'ours', '--allow-empty');
call dolt_checkout('$1_t');
$3
call dolt_commit('-Am', 'theirs', '--allow-empty');
SQL
}
ROWS_O="UPDATE t SET a = 10 WHERE id = 1; DELETE FROM t WHERE id = 3; INSERT INTO t (id, a, b) VALUES (6, 6, 'six');"
ROWS_T="UPDATE t SET b = 'TWO' WHERE id = 2; DELETE FROM t WHERE id = 5; INSERT INTO t (id, a, b) VALUES (7, 7, 'seven');"

case_ theirs_add_default "$ROWS_O" "ALTER TABLE t ADD COLUMN d INT DEFAULT 7; $ROWS_T UPDATE t SET d = 9 WHERE id = 4;"
case_ theirs_add_null "$ROWS_O" "ALTER TABLE t ADD COLUMN d VARCHAR(10); UPDATE t SET d = 'dd' WHERE id = 2;"
case_ theirs_add_notnull "$ROWS_O" "ALTER TABLE t ADD COLUMN d INT NOT NULL DEFAULT 0; $ROWS_T"
case_ ours_add_default "ALTER TABLE t ADD COLUMN d INT DEFAULT 7; $ROWS_O" "$ROWS_T"
case_ ours_add_only "ALTER TABLE t ADD COLUMN d VARCHAR(10) DEFAULT 'q';" "$ROWS_T"
case_ theirs_drop "$ROWS_O" "ALTER TABLE t DROP COLUMN b; INSERT INTO t (id, a) VALUES (8, 8);"
case_ theirs_drop_indexed "$ROWS_O" "ALTER TABLE t DROP COLUMN a; UPDATE t SET b = 'TWO' WHERE id = 2; INSERT INTO t (id, b) VALUES (7, 'seven');"
case_ ours_drop "ALTER TABLE t DROP COLUMN b; UPDATE t SET a = 11 WHERE id = 2;" "$ROWS_T UPDATE t SET a = 44 WHERE id = 4;"
case_ theirs_add_index "$ROWS_O" "CREATE INDEX kb ON t (b); $ROWS_T"
case_ theirs_add_unique "$ROWS_O" "CREATE UNIQUE INDEX ub ON t (b, a);"
case_ theirs_drop_index "$ROWS_O" "DROP INDEX ka ON t; $ROWS_T"
case_ ours_add_index "CREATE INDEX kab ON t (a, b); $ROWS_O" "$ROWS_T"
case_ theirs_default "$ROWS_O" "ALTER TABLE t MODIFY COLUMN a INT DEFAULT 5; $ROWS_T"
case_ theirs_comment "$ROWS_O" "ALTER TABLE t MODIFY COLUMN a INT COMMENT 'the a'; $ROWS_T"
case_ both_same_add "ALTER TABLE t ADD COLUMN d INT DEFAULT 7; $ROWS_O" "ALTER TABLE t ADD COLUMN d INT DEFAULT 7; $ROWS_T"
case_ both_same_add_rows "ALTER TABLE t ADD COLUMN d INT DEFAULT 7;" "ALTER TABLE t ADD COLUMN d INT DEFAULT 7;"
case_ both_add_different "ALTER TABLE t ADD COLUMN x INT DEFAULT 1; $ROWS_O UPDATE t SET x = 2 WHERE id = 2;" "ALTER TABLE t ADD COLUMN y VARCHAR(5) DEFAULT 'y'; $ROWS_T UPDATE t SET y = 'w' WHERE id = 1;"
case_ both_index_and_column "CREATE INDEX kb ON t (b); $ROWS_O" "ALTER TABLE t ADD COLUMN d INT DEFAULT 3; $ROWS_T"
case_ theirs_check "$ROWS_O" "ALTER TABLE t ADD CONSTRAINT pos CHECK (a > 0); $ROWS_T"
case_ cell_conflict "UPDATE t SET a = 100 WHERE id = 2;" "ALTER TABLE t ADD COLUMN d INT; UPDATE t SET a = 200 WHERE id = 2;"
case_ dropped_but_changed "UPDATE t SET b = 'changed' WHERE id = 2;" "ALTER TABLE t DROP COLUMN b;"
case_ type_conflict "ALTER TABLE t MODIFY COLUMN b VARCHAR(30);" "ALTER TABLE t MODIFY COLUMN b VARCHAR(40);"
case_ add_conflict "ALTER TABLE t ADD COLUMN d INT;" "ALTER TABLE t ADD COLUMN d VARCHAR(3);"
case_ changed_and_dropped "ALTER TABLE t MODIFY COLUMN b VARCHAR(20) DEFAULT 'n';" "ALTER TABLE t DROP COLUMN b;"
case_ long_text_add "UPDATE t SET a = 10 WHERE id = 1; INSERT INTO t VALUES (4, 4, 'four', REPEAT('w', 2020));" "ALTER TABLE t ADD COLUMN d VARCHAR(20) DEFAULT 'dddddddddddddddd'; UPDATE t SET b = 'TWO' WHERE id = 2;" "$LONG"
case_ ours_drop_clean "ALTER TABLE t DROP COLUMN b; UPDATE t SET a = 11 WHERE id = 2;" "UPDATE t SET a = 44 WHERE id = 4; DELETE FROM t WHERE id = 5; INSERT INTO t (id, a, b) VALUES (7, 7, 'seven');"
case_ theirs_drop_indexed_clean "UPDATE t SET b = 'ONE' WHERE id = 1; INSERT INTO t VALUES (6, 6, 'six', 's');" "ALTER TABLE t DROP COLUMN a; DELETE FROM t WHERE id = 5;"
case_ both_drop_same "ALTER TABLE t DROP COLUMN c; UPDATE t SET a = 10 WHERE id = 1;" "ALTER TABLE t DROP COLUMN c; UPDATE t SET b = 'TWO' WHERE id = 2;"
case_ theirs_add_middle "$ROWS_O" "ALTER TABLE t ADD COLUMN m INT DEFAULT 1 AFTER a; UPDATE t SET m = 5 WHERE id = 4;"
case_ theirs_rename "$ROWS_O" "ALTER TABLE t RENAME COLUMN b TO bb; UPDATE t SET bb = 'TWO' WHERE id = 2;"
case_ theirs_not_null "INSERT INTO t VALUES (6, 6, 'six', 's');" "ALTER TABLE t MODIFY COLUMN a INT NOT NULL; UPDATE t SET a = 22 WHERE id = 2;"
case_ ours_add_theirs_index "ALTER TABLE t ADD COLUMN d INT DEFAULT 4; $ROWS_O" "CREATE INDEX kb ON t (b); $ROWS_T"
case_ only_theirs_schema "" "ALTER TABLE t ADD COLUMN d INT DEFAULT 7; $ROWS_T"
case_ unique_violation "INSERT INTO t VALUES (6, 6, 'two', 's');" "CREATE UNIQUE INDEX ub ON t (b);"
case_ theirs_widen "$ROWS_O" "ALTER TABLE t MODIFY COLUMN b VARCHAR(40); $ROWS_T"
case_ ours_widen "ALTER TABLE t MODIFY COLUMN b VARCHAR(30); $ROWS_O" "$ROWS_T"
case_ theirs_narrow "$ROWS_O" "ALTER TABLE t MODIFY COLUMN b VARCHAR(10); $ROWS_T"
case_ theirs_int_to_bigint "$ROWS_O" "ALTER TABLE t MODIFY COLUMN a BIGINT; $ROWS_T"
case_ theirs_varchar_to_text "$ROWS_O" "ALTER TABLE t MODIFY COLUMN b TEXT; $ROWS_T"
ENUMS="CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(20), e ENUM('x','y'), KEY ka (a));
INSERT INTO t VALUES (1,1,'one','x'),(2,2,'two','y'),(3,3,'three',NULL),(4,4,'four','x'),(5,5,'five','y');"
INDEXED_B="CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(20), c TEXT, KEY ka (a), KEY kb (b));
INSERT INTO t VALUES (1,1,'one','x'),(2,2,'two','y'),(3,3,'Three',NULL),(4,4,'four','w'),(5,5,'five','z');"
case_ theirs_enum_append "$ROWS_O" "ALTER TABLE t MODIFY COLUMN e ENUM('x','y','z'); UPDATE t SET e = 'z' WHERE id = 2; INSERT INTO t (id, a, e) VALUES (7, 7, 'z');" "$ENUMS"
case_ ours_enum_append "ALTER TABLE t MODIFY COLUMN e ENUM('x','y','z'); UPDATE t SET e = 'z' WHERE id = 4;" "$ROWS_T" "$ENUMS"
case_ theirs_collation "$ROWS_O" "ALTER TABLE t MODIFY COLUMN b VARCHAR(20) COLLATE utf8mb4_0900_ai_ci; $ROWS_T"
case_ theirs_collation_indexed "$ROWS_O" "ALTER TABLE t MODIFY COLUMN b VARCHAR(20) COLLATE utf8mb4_0900_ai_ci; $ROWS_T" "$INDEXED_B"
case_ theirs_text_to_varchar "$ROWS_O" "ALTER TABLE t MODIFY COLUMN c VARCHAR(30); $ROWS_T"
# VARCHAR/CHAR -> TEXT and VARBINARY -> BLOB on one side (Dolt rewrites the rows into the
# other storage and counts every row of that side as changed; values equal after conversion
# are not conflicts).
case_ ours_varchar_to_text "ALTER TABLE t MODIFY COLUMN b TEXT; $ROWS_O" "$ROWS_T"
case_ theirs_varchar_to_text_only "" "ALTER TABLE t MODIFY COLUMN b TEXT; $ROWS_T"
case_ theirs_varchar_to_text_norows "$ROWS_O" "ALTER TABLE t MODIFY COLUMN b TEXT;"
case_ ours_varchar_to_text_norows "ALTER TABLE t MODIFY COLUMN b TEXT;" "$ROWS_T"
case_ theirs_varchar_to_text_b_edit "UPDATE t SET b = 'ONE' WHERE id = 1; DELETE FROM t WHERE id = 4;" "ALTER TABLE t MODIFY COLUMN b TEXT; UPDATE t SET b = 'TWO' WHERE id = 2;"
case_ varchar_to_text_cell_conflict "UPDATE t SET b = 'x2' WHERE id = 2;" "ALTER TABLE t MODIFY COLUMN b TEXT; UPDATE t SET b = 'y2' WHERE id = 2;"
case_ varchar_to_text_delete_conflict "DELETE FROM t WHERE id = 2;" "ALTER TABLE t MODIFY COLUMN b TEXT; UPDATE t SET b = 'y2' WHERE id = 2;"
PREFIX_B="CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(20), c TEXT, KEY ka (a), KEY kb (b(3)));
INSERT INTO t VALUES (1,1,'one','x'),(2,2,'two','y'),(3,3,'three',NULL),(4,4,'four','w'),(5,5,'five','z');"
case_ theirs_varchar_to_text_indexed "$ROWS_O UPDATE t SET b = 'fourth' WHERE id = 4;" "ALTER TABLE t MODIFY COLUMN b TEXT; $ROWS_T" "$PREFIX_B"
case_ ours_varchar_to_text_indexed "ALTER TABLE t MODIFY COLUMN b TEXT; $ROWS_O" "$ROWS_T UPDATE t SET b = 'fourth' WHERE id = 4;" "$PREFIX_B"
LONG_B="CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(3000), KEY ka (a));
INSERT INTO t VALUES (1,1,REPEAT('p',2500)),(2,2,'two'),(3,3,REPEAT('q',100)),(4,4,REPEAT('r',2999)),(5,5,'five');"
case_ theirs_varchar_to_mediumtext_long "$ROWS_O UPDATE t SET b = REPEAT('s', 2600) WHERE id = 4;" "ALTER TABLE t MODIFY COLUMN b MEDIUMTEXT; $ROWS_T" "$LONG_B"
BIN="CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARBINARY(20), c CHAR(10), KEY ka (a));
INSERT INTO t VALUES (1,1,'one','x'),(2,2,'two','y'),(3,3,'three',NULL),(4,4,'four','w'),(5,5,'five','z');"
case_ theirs_varbinary_to_blob "$ROWS_O" "ALTER TABLE t MODIFY COLUMN b BLOB; $ROWS_T" "$BIN"
case_ ours_char_to_text "ALTER TABLE t MODIFY COLUMN c TEXT; $ROWS_O" "$ROWS_T UPDATE t SET c = 'cc' WHERE id = 4;" "$BIN"
case_ theirs_varchar_to_tinytext "$ROWS_O" "ALTER TABLE t MODIFY COLUMN b TINYTEXT; $ROWS_T"
case_ theirs_varchar_to_text_ci "$ROWS_O" "ALTER TABLE t MODIFY COLUMN b TEXT COLLATE utf8mb4_0900_ai_ci; $ROWS_T"
case_ keyless_add "INSERT INTO t VALUES (3, 'c');" "ALTER TABLE t ADD COLUMN d INT DEFAULT 1;" "CREATE TABLE t (a INT, b VARCHAR(5)); INSERT INTO t VALUES (1, 'a'), (2, 'b');"
case_ notnull_no_default "$ROWS_O" "ALTER TABLE t ADD COLUMN d INT NOT NULL;"
echo "call dolt_checkout('main');" >>"$OUT/cases.sql"
$DOLT sql <"$OUT/cases.sql" >/dev/null
rm -f "$OUT/cases.sql"
# Archived by `dolt gc` (about 60 KB instead of a journal of 850 KB).
$DOLT gc >/dev/null
rm -rf .dolt/stats .doltcfg .dolt/noms/LOCK .dolt/noms/oldgen/LOCK

for c in $CASES; do
  rm -rf "$OUT/scratch"
  cp -a "$DB" "$OUT/scratch"
  cd "$OUT/scratch"
  $DOLT checkout "${c}_o" >/dev/null
  # The merge commit, or what stopped the merge: a schema conflict, row conflicts, or an error.
  if $DOLT merge -m "merge $c" "${c}_t" >"$OUT/merge.out" 2>&1 && ! grep -q CONFLICT "$OUT/merge.out"; then
    echo "$c $($DOLT log -n 1 | sed -n 's/^commit \([0-9a-v]*\).*/\1/p')" >>"$EXP"
  elif grep -q "CONFLICT (schema)" "$OUT/merge.out"; then
    echo "$c conflict-schema" >>"$EXP"
  elif grep -q "CONFLICT (content)" "$OUT/merge.out"; then
    echo "$c conflict-rows" >>"$EXP"
    # Every conflicting row resolved with one side's, when Dolt can do that here.
    for side in ours theirs; do
      rm -rf "$OUT/scratch2"
      cp -a "$OUT/scratch" "$OUT/scratch2"
      cd "$OUT/scratch2"
      if $DOLT conflicts resolve --$side t >/dev/null 2>&1; then
        $DOLT add -A && $DOLT commit -m "merge $c" >/dev/null
        echo "$c:$side $($DOLT log -n 1 | sed -n 's/^commit \([0-9a-v]*\).*/\1/p')" >>"$EXP"
      fi
      cd "$OUT/scratch"
    done
  else
    echo "$c refused" >>"$EXP"
  fi
  cd "$DB"
done
rm -rf "$OUT/scratch" "$OUT/scratch2" "$OUT/merge.out" "$OUT/home"
