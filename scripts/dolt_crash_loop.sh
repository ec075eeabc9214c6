#!/usr/bin/env bash
# Crash safety, measured: kills `prolly dolt DB import|commit|merge|alter` with SIGKILL at random
# moments, TRIALS times, and after every kill checks that
#   * the real Dolt opens the database (`dolt log`, `dolt sql -q 'select count(*) from t'`),
#   * our reader opens it (`prolly dolt DB log`, `prolly dolt DB tables`),
#   * every commit whose command returned success (its printed hash) is in `dolt log --all`, and
#     its table holds the rows it held when the command returned (`dolt sql -r csv -q "select *
#     from t as of 'HASH'"`, compared with what Dolt printed then; the three latest and one at
#     random after each trial, all of them at the end),
#   * a killed import left the working set either as it was or as the finished import leaves
#     it (rows compared), never half of it; a killed ALTER TABLE likewise (schema and rows),
#   * `dolt fsck` finds nothing wrong, and `dolt status` reads the working set (fsck walks
#     commits only).
# Each trial kills one step of a cycle (import on main, commit, branch + import + commit on a
# side branch that turns a VARCHAR column of main into TEXT, merge into main, one ALTER TABLE
# + its commit); the killed step is then rerun
# to completion so the next trial starts from a known state. A killed ALTER must leave the
# working set's schema and rows as they were, or as the finished ALTER leaves them. Dolt's reads run between our writes, so Dolt also opens
# (and trues up) what we left, and we then append to what Dolt left.
#
#   scripts/dolt_crash_loop.sh [TRIALS] [WORKDIR]
#
# TRIALS defaults to 300. DOLT names the dolt binary (default /work/dolt-bin/dolt or dolt on
# PATH); PROLLY the prolly binary (default target/release/prolly). Each kill delay is drawn
# from 0 to 5/4 of the latest unkilled duration of the same kind of step (import, commit,
# merge), measured as the database grows, so that some runs finish and most are cut at a
# random point of their own work. Exit status 1 on the first failed check, with the database
# left in WORKDIR.
set -uo pipefail
cd "$(dirname "$0")/.."
trials=${1:-300}
work=${2:-$(mktemp -d)}
dolt=${DOLT:-$(command -v dolt || echo /work/dolt-bin/dolt)}
target_dir=${CARGO_TARGET_DIR:-target}
[[ $target_dir = /* ]] || target_dir=$PWD/$target_dir
prolly=${PROLLY:-$target_dir/release/prolly}
prolly=$(cd "$(dirname "$prolly")" && pwd)/$(basename "$prolly")
mkdir -p "$work"
work=$(cd "$work" && pwd)
export DOLT_ROOT_PATH="$work/home" HOME="$work/home"
mkdir -p "$HOME"
"$dolt" config --global --add user.name crash >/dev/null
"$dolt" config --global --add user.email crash@example.com >/dev/null
db="$work/db"
rm -rf "$db"
mkdir -p "$db"
(cd "$db" && "$dolt" init >/dev/null) || exit 1
committed="$work/committed.txt"
: >"$committed"
acked="$work/acked"
rm -rf "$acked"
mkdir -p "$acked"
declare -A dur_ms=([import]=20 [commit]=20 [merge]=20 [alter]=20)
kills=0 ok_runs=0 errors=0 merges=0 fscks=0 content_checks=0 delays_total_us=0
RANDOM=${SEED:-42}

fail() {
  echo "FAIL (trial $trial, step $step): $*" >&2
  echo "database left in $db" >&2
  exit 1
}

# rows N OFFSET: a CSV of N rows with ids OFFSET.. (values depend on the trial).
rows() {
  awk -v n="$1" -v off="$2" -v t="$trial" 'BEGIN {
    print "id,name,qty,note";
    for (i = 0; i < n; i++) printf "%d,n%d-%d,%d,trial %d\n", off + i, off + i, t, (off + i) * t % 1000, t;
  }' >"$work/rows.csv"
}

# run_killed CMD...: runs a prolly command, kills it after a random delay; records a printed
# commit hash if it returned success. Sets $status (0 = returned success, 137 = killed, other).
run_killed() {
  local max_us=$((dur_ms[$1] * 1250 + 1000))
  local delay_us=$(((RANDOM * 32768 + RANDOM) % (max_us + 1)))
  delays_total_us=$((delays_total_us + delay_us))
  "$prolly" dolt "$db" "$@" >"$work/out.txt" 2>"$work/err.txt" &
  local pid=$!
  sleep "$(printf '%d.%06d' $((delay_us / 1000000)) $((delay_us % 1000000)))"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  status=$?
  if [ "$status" = 0 ]; then
    dur_ms[$1]=$((delay_us / 1000))
    record
    ok_runs=$((ok_runs + 1))
  elif [ "$status" = 137 ]; then
    kills=$((kills + 1))
  else
    errors=$((errors + 1))
    echo "trial $trial: $* failed without a kill: $(head -c 300 "$work/err.txt")" >>"$work/other_failures.txt"
  fi
}

# rows_at REF: the rows of t at REF (a commit hash; WORKING for the working set) as Dolt
# prints them.
rows_at() {
  local q="select * from t order by id"
  [ "$1" = WORKING ] || q="select * from t as of '$1' order by id"
  (cd "$db" && "$dolt" sql -r csv -q "$q") 2>"$work/dolt_err.txt" || fail "dolt sql as of $1: $(cat "$work/dolt_err.txt")"
}

# record: keeps the hash a successful commit or merge printed, and the rows it holds then.
record() {
  local h
  h=$(grep -oE '\b[0-9a-v]{32}\b' "$work/out.txt" | tail -1) || return 0
  [ -n "$h" ] || return 0
  echo "$h" >>"$committed"
  rows_at "$h" >"$acked/$h"
}

# check_acked HASH: the rows of acknowledged commit HASH are still the rows it had.
check_acked() {
  rows_at "$1" >"$work/now.csv"
  cmp -s "$work/now.csv" "$acked/$1" || fail "rows of acknowledged commit $1 changed"
  content_checks=$((content_checks + 1))
}

# run_to_end CMD...: runs a prolly command unkilled, timing it; a commit with nothing to
# commit (the killed run got through) or an up-to-date merge is fine.
run_to_end() {
  local t0 kind=$1
  t0=$(date +%s%N)
  if "$prolly" dolt "$db" "$@" >"$work/out.txt" 2>"$work/err.txt"; then
    [ -n "${dur_ms[$kind]:-}" ] && dur_ms[$kind]=$((($(date +%s%N) - t0) / 1000000))
    record
  elif ! grep -q "nothing to commit\|up to date\|up-to-date" "$work/err.txt"; then
    fail "rerun of '$*' failed: $(cat "$work/err.txt")"
  fi
}

check() {
  (cd "$db" && NO_COLOR=1 "$dolt" log --oneline | sed "s/\x1b\[[0-9;]*m//g" >"$work/dolt_log.txt" 2>"$work/dolt_err.txt") ||
    fail "dolt log: $(cat "$work/dolt_err.txt")"
  (cd "$db" && "$dolt" sql -r csv -q "select count(*) from t" >/dev/null 2>"$work/dolt_err.txt") ||
    fail "dolt sql: $(cat "$work/dolt_err.txt")"
  "$prolly" dolt "$db" log --oneline >"$work/our_log.txt" 2>"$work/err.txt" ||
    fail "prolly log: $(cat "$work/err.txt")"
  "$prolly" dolt "$db" tables >/dev/null 2>"$work/err.txt" || fail "prolly tables: $(cat "$work/err.txt")"
  cut -c1-32 "$work/our_log.txt" | grep -oE '^[0-9a-v]{32}' >"$work/our_hashes.txt"
  grep -oE '[0-9a-v]{32}' "$work/dolt_log.txt" >"$work/dolt_hashes.txt"
  cmp -s "$work/our_hashes.txt" "$work/dolt_hashes.txt" || fail "our log and dolt log differ"
  (cd "$db" && NO_COLOR=1 "$dolt" log --all --oneline | sed "s/\x1b\[[0-9;]*m//g" >"$work/dolt_all.txt" 2>"$work/dolt_err.txt") ||
    fail "dolt log --all: $(cat "$work/dolt_err.txt")"
  while read -r h; do
    grep -q "$h" "$work/dolt_all.txt" || fail "commit $h returned success but is not in dolt log --all"
  done <"$committed"
  (cd "$db" && "$dolt" fsck >"$work/fsck.txt" 2>&1) || fail "dolt fsck: $(head -c 500 "$work/fsck.txt")"
  # `dolt fsck` walks commits, not working sets: `dolt status` reads the working set, its
  # roots and their tables (a working set reaching a chunk never written fails here).
  (cd "$db" && "$dolt" status >/dev/null 2>"$work/dolt_err.txt") ||
    fail "dolt status: $(cat "$work/dolt_err.txt")"
  fscks=$((fscks + 1))
  local n
  n=$(wc -l <"$committed")
  if ((n > 0)); then
    while read -r h; do check_acked "$h"; done < <(tail -3 "$committed")
    check_acked "$(sed -n "$((RANDOM % n + 1))p" "$committed")"
  fi
}

trial=0
step=setup
rows 50 0
"$prolly" dolt "$db" import t "$work/rows.csv" \
  --create 'CREATE TABLE t (id int primary key, name varchar(40) not null, qty int, note text, key qty_idx (qty))' \
  >/dev/null || fail "setup import"
run_to_end commit -m "setup"
check

steps=(import commit side merge alter)
alters=0
for ((trial = 1; trial <= trials; trial++)); do
  step=${steps[$((trial % 5))]}
  case $step in
    import)
      rows 300 $((trial * 7 % 500))
      rows_at WORKING >"$work/before.csv"
      run_killed import t "$work/rows.csv"
      check
      rows_at WORKING >"$work/killed.csv"
      run_to_end import t "$work/rows.csv"
      rows_at WORKING >"$work/after.csv"
      # All or nothing: the killed import left the rows as they were or as the full import.
      if ! cmp -s "$work/killed.csv" "$work/before.csv" && ! cmp -s "$work/killed.csv" "$work/after.csv"; then
        fail "a killed import left the working set neither as it was nor as the import leaves it"
      fi
      ;;
    commit)
      run_killed commit -m "trial $trial"
      check
      if ! (cd "$db" && "$dolt" status | grep -q "nothing to commit"); then
        run_to_end commit -m "trial $trial (rerun)"
      fi
      ;;
    side)
      # Unkilled setup of a side branch, then a killed commit on it. Main gains a VARCHAR
      # column that the side branch turns into TEXT, so the merge that follows is a schema
      # merge Dolt completes with every row rewritten (VARCHAR -> TEXT on their side, rows
      # changed on both).
      run_to_end alter "ALTER TABLE t ADD COLUMN v$trial VARCHAR(30)"
      run_to_end commit -m "v$trial on main"
      run_to_end branch "side$trial"
      run_to_end checkout "side$trial"
      run_to_end alter "ALTER TABLE t MODIFY COLUMN v$trial TEXT"
      rows 40 $((1000 + trial * 40))
      run_to_end import t "$work/rows.csv"
      run_killed commit -m "side $trial"
      check
      if ! (cd "$db" && "$dolt" status | grep -q "nothing to commit"); then
        run_to_end commit -m "side $trial (rerun)"
      fi
      run_to_end checkout main
      rows 20 $((trial * 3 % 500))
      run_to_end import t "$work/rows.csv"
      run_to_end commit -m "main beside side $trial"
      ;;
    alter)
      # One ALTER TABLE, killed, in a cycle: ADD COLUMN with a DEFAULT (every row rewritten),
      # ADD INDEX over it (the index built from the rows), DROP COLUMN of the indexed column
      # (rows rewritten, the index dropped; a composite index would be left over its other
      # column, beside qty_idx, and Dolt then refuses the side branch's schema merge as a
      # conflict), ADD COLUMN at the end (no row rewritten), RENAME COLUMN of that column
      # (schema only). The
      # killed ALTER left the working set as it was or as the finished ALTER leaves it; it
      # is then run to the end if it did not get through, and committed (that commit killed
      # too).
      alters=$((alters + 1))
      case $((alters % 5)) in
        1) sql="ALTER TABLE t ADD COLUMN x$alters INT DEFAULT $alters" ;;
        2) sql="ALTER TABLE t ADD INDEX ix$alters (x$((alters - 1)))" ;;
        3) sql="ALTER TABLE t DROP COLUMN x$((alters - 2))" ;;
        4) sql="ALTER TABLE t ADD COLUMN y$alters VARCHAR(20)" ;;
        0) sql="ALTER TABLE t RENAME COLUMN y$((alters - 1)) TO r$alters" ;;
      esac
      schema_at() { (cd "$db" && "$dolt" schema show t) 2>"$work/dolt_err.txt" || fail "dolt schema show: $(cat "$work/dolt_err.txt")"; }
      schema_at >"$work/before_schema.txt"
      rows_at WORKING >"$work/before.csv"
      run_killed alter "$sql"
      check
      schema_at >"$work/killed_schema.txt"
      rows_at WORKING >"$work/killed.csv"
      if cmp -s "$work/killed_schema.txt" "$work/before_schema.txt"; then
        cmp -s "$work/killed.csv" "$work/before.csv" || fail "a killed ALTER changed the rows but not the schema"
        run_to_end alter "$sql"
        schema_at >"$work/after_schema.txt"
        cmp -s "$work/after_schema.txt" "$work/before_schema.txt" && fail "'$sql' changed nothing"
      else
        # Got through: the rows are the finished ALTER's (checked against Dolt's reading of
        # the same statement's effect on the rows before it: same ids, same leading values).
        cut -d, -f1-3 "$work/killed.csv" | cmp -s - <(cut -d, -f1-3 "$work/before.csv") ||
          fail "a killed ALTER left rows other than the ones before it"
      fi
      run_killed commit -m "alter $alters: $sql"
      check
      if ! (cd "$db" && "$dolt" status | grep -q "nothing to commit"); then
        run_to_end commit -m "alter $alters (rerun)"
      fi
      ;;
    merge)
      merges=$((merges + 1))
      run_killed merge "side$((trial - 1))"
      check
      run_to_end merge "side$((trial - 1))"
      ;;
  esac
  check
  if ((trial % 25 == 0)); then
    echo "trial $trial: $kills killed, $ok_runs returned before the kill, $errors failed otherwise; $(wc -l <"$committed") commits recorded; step times now: import ${dur_ms[import]} ms, commit ${dur_ms[commit]} ms, merge ${dur_ms[merge]} ms, alter ${dur_ms[alter]} ms"
  fi
done
while read -r h; do check_acked "$h"; done <"$committed"
echo "PASS: $trials trials ($kills killed mid-run, $ok_runs returned success first, $errors other failures), $merges merges, $alters ALTERs; mean kill delay $((delays_total_us / trials / 1000)) ms; every one of $(wc -l <"$committed") returned commits is in dolt log --all with its rows ($content_checks row comparisons); $fscks dolt fsck runs clean; no killed import left half its rows; dolt and prolly opened the database after every trial"
