#!/usr/bin/env bash
# Instruction counts (callgrind: the same for the same binary and input whatever the load) of
# the workloads #36 must not slow, for two builds side by side, with their outputs compared:
# a Dolt import, its commit, the CSV export, a one-row import + commit, the Arrow cold and
# warm passes, the CSV export pass in process, Dolt map gets and the tree workloads.
#
#   scripts/callgrind_before_after.sh BEFORE_TARGET AFTER_TARGET [WORKDIR]
#
# Each *_TARGET is a cargo target folder holding the release build of `prolly` and of the
# examples `arrow_vs_csv`, `dolt_get_profile` and `tree_workload`:
#   cargo build --release -p prollystore-cli
#   cargo build --release -p prollystore-benches --example dolt_get_profile --example tree_workload
#   cargo build --release -p prollystore-arrow --example arrow_vs_csv
# The databases are made with the real Dolt (DOLT, default /work/dolt-bin/dolt or dolt on
# PATH): a 20,000-row, 8-column table `fast` (rows from a fixed seed), the 100k-row Arrow
# table of scripts/make_dolt_arrow_bench_db.sh, and ARROW1M (default
# target/dolt-bench/arrow1m, made by that script) for the gets. Prints a Markdown table;
# takes 15-25 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
before=$(cd "$1" && pwd)
after=$(cd "$2" && pwd)
work=${3:-$(mktemp -d)}
mkdir -p "$work"
work=$(cd "$work" && pwd)
dolt=${DOLT:-$(command -v dolt || echo /work/dolt-bin/dolt)}
arrow1m=${ARROW1M:-target/dolt-bench/arrow1m}
arrow1m=$(cd "$arrow1m" && pwd)
export HOME="$work/home" DOLT_ROOT_PATH="$work/home" TZ=UTC
mkdir -p "$HOME"
"$dolt" config --global --add user.name bench >/dev/null
"$dolt" config --global --add user.email bench@example.com >/dev/null

# The databases.
if [[ ! -d "$work/fast/.dolt" ]]; then
  mkdir -p "$work/fast"
  (cd "$work/fast" && "$dolt" init --date 2026-01-01T00:00:00Z >/dev/null &&
    "$dolt" sql -q "CREATE TABLE fast (id BIGINT PRIMARY KEY, a INT, s VARCHAR(40), t TEXT,
      d DECIMAL(12,4), dt DATETIME(6), dd DATE, f DOUBLE, KEY ia (a))" &&
    "$dolt" commit -Am schema --date 2026-01-01T00:00:00Z >/dev/null)
  python3 - "$work" <<'EOF'
import random, sys
r = random.Random(7)
work = sys.argv[1]
with open(f"{work}/fast.csv", "w") as f:
    f.write("id,a,s,t,d,dt,dd,f\n")
    for i in r.sample(range(10**9), 20000):
        f.write(f"{i},{r.randint(-2**31, 2**31 - 1)},s{r.getrandbits(64):x},"
                f"\"text, {r.random()}\",{r.randint(-10**7, 10**7)}.{r.randint(0, 9999):04d},"
                f"20{r.randint(10, 30)}-0{r.randint(1, 9)}-1{r.randint(0, 9)} "
                f"1{r.randint(0, 9)}:2{r.randint(0, 9)}:3{r.randint(0, 9)}.{r.randint(0, 999999):06d},"
                f"19{r.randint(70, 99)}-1{r.randint(0, 2)}-2{r.randint(0, 8)},{r.uniform(-1e6, 1e6)!r}\n")
with open(f"{work}/one.csv", "w") as f:
    f.write("id,a,s,t,d,dt,dd,f\n7,1,one,row,1.5,2026-01-02 03:04:05.000006,2026-01-02,0.25\n")
EOF
fi
[[ -d "$work/arrow100k/.dolt" ]] || scripts/make_dolt_arrow_bench_db.sh "$work/arrow100k" 100000 >/dev/null

total() { grep -E '^(summary|totals):' "$1" | tail -1 | awk '{print $2}'; }
inclusive() { # FILE PATTERN: the largest inclusive count of a function matching PATTERN
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null | grep -E "$2" | head -1 |
    awk '{gsub(",", "", $1); print $1}'
}
cg() { # OUT CMD...: runs CMD under callgrind into OUT
  local out=$1
  shift
  valgrind --tool=callgrind --callgrind-out-file="$out" "$@" 2>/dev/null
}

declare -A count
run_side() { # SIDE TARGET
  local side=$1 t=$2 d="$work/$1" prolly="$2/release/prolly" ex="$2/release/examples"
  rm -rf "$d" && mkdir -p "$d" && cp -r "$work/fast" "$d/db"
  cg "$d/import.cg" "$prolly" -q dolt "$d/db" import fast "$work/fast.csv"
  cg "$d/commit.cg" "$prolly" -q dolt "$d/db" commit -m rows --author 'P <p@example.com>' \
    --date 2026-01-02T00:00:00Z >"$d/commit.txt"
  cg "$d/export.cg" "$prolly" -q dolt "$d/db" export fast >"$d/export.csv"
  cg "$d/one_import.cg" "$prolly" -q dolt "$d/db" import fast "$work/one.csv"
  cg "$d/one_commit.cg" "$prolly" -q dolt "$d/db" commit -m one --author 'P <p@example.com>' \
    --date 2026-01-03T00:00:00Z >"$d/one_commit.txt"
  count[$side.import]=$(total "$d/import.cg")
  count[$side.commit]=$(total "$d/commit.cg")
  count[$side.export]=$(total "$d/export.cg")
  count[$side.one]=$(($(total "$d/one_import.cg") + $(total "$d/one_commit.cg")))
  for mode in cold warm; do
    for n in 1 3; do
      local cold=0
      [[ $mode = cold ]] && cold=1
      env PROLLY_ARROW_TYPED=0 PROLLY_ARROW_THREADS=1 PROLLY_ARROW_COLD=$cold \
        valgrind --tool=callgrind --callgrind-out-file="$d/arrow_${mode}_$n.cg" \
        "$ex/arrow_vs_csv" "$work/arrow100k" t "$n" >/dev/null 2>&1
    done
    local a1 a3
    a1=$(inclusive "$d/arrow_${mode}_1.cg" 'dolt_scan.*Scan.*fill')
    a3=$(inclusive "$d/arrow_${mode}_3.cg" 'dolt_scan.*Scan.*fill')
    count[$side.arrow_$mode]=$(((a3 - a1) / 2))
  done
  local c1 c3
  c1=$(inclusive "$d/arrow_warm_1.cg" 'csv_export.*export_csv')
  c3=$(inclusive "$d/arrow_warm_3.cg" 'csv_export.*export_csv')
  count[$side.csv_pass]=$(((c3 - c1) / 2))
  PROLLY_DOLT_GET_DB="$arrow1m" valgrind --tool=callgrind --callgrind-out-file="$d/get.cg" \
    --toggle-collect='*gets_dolt*' "$ex/dolt_get_profile" dolt 10 >/dev/null 2>&1
  count[$side.get]=$(($(total "$d/get.cg") / 40960))
  for w in "get 20000" "build 1" "scan 3"; do
    set -- $w
    valgrind --tool=callgrind --callgrind-out-file="$d/tree_$1.cg" \
      --toggle-collect='tree_workload::run*' "$ex/tree_workload" "$1" "$2" >/dev/null 2>&1
    count[$side.tree_$1]=$(total "$d/tree_$1.cg")
  done
}

run_side before "$before"
run_side after "$after"

same() { cmp -s "$work/before/$1" "$work/after/$1" && echo same || echo DIFFERENT; }
echo "| workload | before | after | change |"
echo "|---|---:|---:|---:|"
for k in import:"import 20k rows (whole process)" commit:"commit of it" \
  export:"CSV export (whole process)" one:"one-row import + commit" \
  arrow_cold:"Arrow cold pass, 100k rows" arrow_warm:"Arrow warm pass" \
  csv_pass:"CSV export pass in process" get:"Dolt map get, per get" \
  tree_get:"tree get (20k)" tree_build:"tree build" tree_scan:"tree scan (3)"; do
  key=${k%%:*} label=${k#*:}
  b=${count[before.$key]} a=${count[after.$key]}
  printf '| %s | %s | %s | %+.2f%% |\n' "$label" "$b" "$a" "$(echo "($a - $b) * 100 / $b" | bc -l)"
done
echo
echo "outputs: commit $(same commit.txt), export $(same export.csv), one-row commit $(same one_commit.txt)"
