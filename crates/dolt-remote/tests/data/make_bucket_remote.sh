#!/usr/bin/env bash
# Makes tests/data/bucket-remote/: a Dolt database pushed by `dolt push` (Dolt 2.3.1) to a
# file:// remote, the layout Dolt's s3:// remotes write too (manifest, table files, NAME.darc
# archives), and tests/data/bucket-remote.expected: the branch heads and row counts Dolt
# reports. tests/bucket.rs uploads the directory to MinIO and reads it through s3:// without a
# dolt binary (CI cannot build Dolt); python/tests/test_parts_s3.py reads it with Dask.
#
#   DOLT=/work/dolt-bin/dolt bash crates/dolt-remote/tests/data/make_bucket_remote.sh
#
# Three tables: `ints` (int key, 10,000 rows: dozens of leaves), `names` (a utf8mb4_0900_ai_ci
# varchar key: 'Ada7' and 'ada7' are one key), `bins` (a varbinary key of bytes that are not
# UTF-8); branches main, feature (rows updated, deleted, inserted) and other.
#
# The tests run it too, with OUT (where the remote goes), S3_URL (an s3:// remote pushed to as
# well, credentials in the AWS_* environment) and WORK (where the database is built and kept).
set -euo pipefail
DOLT="${DOLT:?set DOLT to the dolt binary}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-$here}"
if [ -n "${WORK:-}" ]; then
  work="$WORK"
else
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi
export HOME="$work/home" TZ=UTC NO_COLOR=1
mkdir -p "$HOME/.dolt" "$work/db"
echo '{"user.name":"Recorder","user.email":"rec@example.com","metrics.disabled":"true"}' \
  > "$HOME/.dolt/config_global.json"
cd "$work/db"
# 0..9999 (a recursive CTE stops at 1,000 levels: two of 0..199 crossed).
seq="with recursive s(n) as (select 0 union all select n + 1 from s where n < 199) select x.n * 200 + y.n as n from s x, s y where x.n < 50"
"$DOLT" init >/dev/null
"$DOLT" sql -q "create table ints (id int primary key, v int)"
"$DOLT" sql -q "create table names (name varchar(40) collate utf8mb4_0900_ai_ci primary key, score int)"
"$DOLT" sql -q "create table bins (k varbinary(24) primary key, n int)"
"$DOLT" sql -q "insert into ints select n, n % 1000 from ($seq) q"
"$DOLT" sql -q "insert ignore into names select concat(elt(n % 6 + 1, 'Ada', 'ada', 'Émile', 'emile', 'Zoë', 'zoe'), n div 2), n from ($seq) q where n < 2000"
"$DOLT" sql -q "insert ignore into bins select unhex(substr(sha2(n, 256), 1, 2 + 2 * (n % 12))), n from ($seq) q where n < 2000"
"$DOLT" add -A >/dev/null
"$DOLT" commit -m rows --date 2026-01-01T00:00:00Z >/dev/null
"$DOLT" branch other
"$DOLT" checkout -b feature >/dev/null
"$DOLT" sql -q "update ints set v = -v where id between 100 and 400; delete from names where score % 5 = 0; insert into bins values (0xff00fe, -1)"
"$DOLT" commit -am feature --date 2026-01-02T00:00:00Z >/dev/null
"$DOLT" checkout main >/dev/null
"$DOLT" sql -q "insert into ints values (-5, 25); delete from bins where n % 7 = 0"
"$DOLT" commit -am "main moves" --date 2026-01-03T00:00:00Z >/dev/null
rm -rf "$out/bucket-remote"
"$DOLT" remote add origin "file://$out/bucket-remote"
"$DOLT" push origin main feature other >/dev/null 2>&1
rm -f "$out/bucket-remote/LOCK"
rmdir "$out/bucket-remote/oldgen" 2>/dev/null || true
if [ -n "${S3_URL:-}" ]; then
  "$DOLT" remote add s3 "$S3_URL"
  "$DOLT" push s3 main feature other >/dev/null 2>&1
fi
{
  for b in main feature other; do
    echo "$b $("$DOLT" log -n 1 --oneline "$b" | awk '{print $1}')"
  done
  for b in main feature other; do
    for t in ints names bins; do
      echo "$b $t $("$DOLT" sql -r csv -q "select count(*) from $t as of '$b'" | tail -n 1)"
    done
  done
} > "$out/bucket-remote.expected"
du -sh "$out/bucket-remote"
