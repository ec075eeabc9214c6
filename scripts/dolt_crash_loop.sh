#!/usr/bin/env bash
# Crash safety, measured: kills `prolly dolt DB import|commit|merge` with SIGKILL at random
# moments, TRIALS times, and after every kill checks that
#   * the real Dolt opens the database (`dolt log`, `dolt sql -q 'select count(*) from t'`),
#   * our reader opens it (`prolly dolt DB log`, `prolly dolt DB tables`),
#   * every commit whose command returned success (its printed hash) is in `dolt log` of main.
# Each trial kills one step of a cycle (import on main, commit, branch + import + commit on a
# side branch, merge into main); the killed step is then rerun to completion so the next
# trial starts from a known state. Dolt's reads run between our writes, so Dolt also opens
# (and trues up) what we left, and we then append to what Dolt left.
#
#   scripts/dolt_crash_loop.sh [TRIALS] [WORKDIR]
#
# TRIALS defaults to 300. DOLT names the dolt binary (default /work/dolt-bin/dolt or dolt on
# PATH); PROLLY the prolly binary (default target/release/prolly). Kill delays are drawn from
# 0..MAX_DELAY_MS (default: the step's own unkilled duration, measured first). Exit status 1
# on the first failed check, with the database left in WORKDIR.
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
  local delay_us=$((RANDOM * 32768 + RANDOM))
  delay_us=$((delay_us % (max_delay_ms * 1000 + 1)))
  "$prolly" dolt "$db" "$@" >"$work/out.txt" 2>"$work/err.txt" &
  local pid=$!
  sleep "$(printf '0.%06d' "$delay_us")"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  status=$?
  if [ "$status" = 0 ]; then
    record
    ok_runs=$((ok_runs + 1))
  elif [ "$status" = 137 ]; then
    kills=$((kills + 1))
  else
    errors=$((errors + 1))
    echo "trial $trial: $* failed without a kill: $(head -c 300 "$work/err.txt")" >>"$work/other_failures.txt"
  fi
}

# record: keeps the hash a successful commit or merge printed.
record() {
  grep -oE '\b[0-9a-v]{32}\b' "$work/out.txt" | tail -1 >>"$committed" || true
}

# run_to_end CMD...: runs a prolly command unkilled; a commit with nothing to commit (the
# killed run got through) or an up-to-date merge is fine.
run_to_end() {
  if "$prolly" dolt "$db" "$@" >"$work/out.txt" 2>"$work/err.txt"; then
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
}

trial=0
step=setup
rows 50 0
"$prolly" dolt "$db" import t "$work/rows.csv" \
  --create 'CREATE TABLE t (id int primary key, name varchar(40) not null, qty int, note text, key qty_idx (qty))' \
  >/dev/null || fail "setup import"
run_to_end commit -m "setup"
check

# Each step's unkilled duration bounds its kill delays.
start=$(date +%s%N)
rows 200 100
"$prolly" dolt "$db" import t "$work/rows.csv" >/dev/null || fail "timing import"
"$prolly" dolt "$db" commit -m "timing" >/dev/null || fail "timing commit"
max_delay_ms=${MAX_DELAY_MS:-$((($(date +%s%N) - start) / 2000000 + 2))}
echo "kill delays: 0..$max_delay_ms ms"

kills=0 ok_runs=0 errors=0 merges=0
steps=(import commit side merge)
for ((trial = 1; trial <= trials; trial++)); do
  step=${steps[$((trial % 4))]}
  case $step in
    import)
      rows 300 $((trial * 7 % 500))
      run_killed import t "$work/rows.csv"
      check
      run_to_end import t "$work/rows.csv"
      ;;
    commit)
      run_killed commit -m "trial $trial"
      check
      if ! (cd "$db" && "$dolt" status | grep -q "nothing to commit"); then
        run_to_end commit -m "trial $trial (rerun)"
      fi
      ;;
    side)
      # Unkilled setup of a side branch, then a killed commit on it.
      run_to_end branch "side$trial"
      run_to_end checkout "side$trial"
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
    merge)
      merges=$((merges + 1))
      run_killed merge "side$((trial - 1))"
      check
      run_to_end merge "side$((trial - 1))"
      ;;
  esac
  check
  if ((trial % 25 == 0)); then
    echo "trial $trial: $kills killed, $ok_runs returned before the kill, $errors failed otherwise; $(wc -l <"$committed") commits recorded"
  fi
done
echo "PASS: $trials trials ($kills killed mid-run, $ok_runs returned success first, $errors other failures), $merges merges; every one of $(wc -l <"$committed") returned commits is in dolt log --all; dolt and prolly opened the database after every trial"
