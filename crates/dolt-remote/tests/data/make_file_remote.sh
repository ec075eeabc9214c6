#!/usr/bin/env bash
# Makes tests/data/file-remote/: a small file:// remote written by `dolt push` (Dolt 2.3.1),
# and tests/data/file-remote.expected: the commit hashes and rows Dolt reports for it. The
# tests in tests/recorded_remote.rs read both without a dolt binary (CI cannot build Dolt).
#
#   DOLT=/work/dolt-bin/dolt bash crates/dolt-remote/tests/data/make_file_remote.sh
set -euo pipefail
DOLT="${DOLT:?set DOLT to the dolt binary}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export HOME="$work/home" TZ=UTC NO_COLOR=1
mkdir -p "$HOME/.dolt" "$work/src"
echo '{"user.name":"Recorder","user.email":"rec@example.com","metrics.disabled":"true"}' \
  > "$HOME/.dolt/config_global.json"
cd "$work/src"
"$DOLT" init >/dev/null
"$DOLT" sql -q "create table t (id int primary key, name varchar(40), v int, key by_v (v))"
"$DOLT" sql -q "insert into t select n, concat('name-', n), n % 7 from (with recursive s(n) as (select 0 union all select n + 1 from s where n < 299) select n from s) q"
"$DOLT" add -A >/dev/null
"$DOLT" commit -m first --date 2026-01-01T00:00:00Z >/dev/null
"$DOLT" sql -q "update t set v = v + 100 where id < 20"
"$DOLT" commit -am second --date 2026-01-02T00:00:00Z >/dev/null
"$DOLT" branch feature
rm -rf "$here/file-remote"
"$DOLT" remote add origin "file://$here/file-remote"
"$DOLT" push origin main >/dev/null
"$DOLT" push origin feature >/dev/null
rm -f "$here/file-remote/LOCK"
{
  echo "main $("$DOLT" log -n 1 --oneline main | awk '{print $1}')"
  echo "feature $("$DOLT" log -n 1 --oneline feature | awk '{print $1}')"
  echo "rows"
  "$DOLT" sql -r csv -q "select * from t order by id"
} > "$here/file-remote.expected"
du -sh "$here/file-remote"
