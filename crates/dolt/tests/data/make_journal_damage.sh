#!/bin/sh
# Rebuilds `journal_damage/`: a small Dolt database with a chunk journal (`base/`), the damage
# cases applied to copies of it (`cases.txt`, one `NAME OP ARG...` per line; see
# `journal_damage.py`), and what the real Dolt CLI does with each damaged copy (`dolt.txt`):
#   NAME log OK <head commit> | NAME log ERR <first line of the error>
#   NAME fsck OK | NAME fsck ERR <first error line>
#   NAME write OK <new head commit> | NAME write ERR <first line of the error>
#   NAME after <journal length after the write's open (Dolt truncates a torn tail)>
# Each command runs on a fresh copy (Dolt truncates a torn tail whenever it opens the journal
# for writing, which `dolt log` does too).
# Usage: HOME=/tmp/scratch-home TZ=UTC make_journal_damage.sh DOLT OUTDIR
set -e
# (The writes' commits are made as `w`, by Test User <test@example.com>, 2024-01-05T00:00:00Z,
# after inserting (100, 'w'): the test makes the same commit with the Rust writer.)
DOLT=$1
OUT=$2
HERE=$(cd "$(dirname "$0")" && pwd)
export TZ=UTC
rm -rf "$OUT/base" "$OUT/cases.txt" "$OUT/dolt.txt"
mkdir -p "$OUT/base"
$DOLT config --global --add user.name "Test User" >/dev/null 2>&1 || true
$DOLT config --global --add user.email "test@example.com" >/dev/null 2>&1 || true
commit() {
  DOLT_AUTHOR_DATE=$1 DOLT_COMMITTER_DATE=$1 $DOLT commit -m "$2" --date "$1" >/dev/null
}
(
  cd "$OUT/base"
  $DOLT init --date 2024-01-01T00:00:00Z >/dev/null
  $DOLT sql -q "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))"
  $DOLT add -A && commit 2024-01-02T00:00:00Z one
  $DOLT sql -q "INSERT INTO t VALUES (1,'a'),(2,'b')"
  $DOLT add -A && commit 2024-01-03T00:00:00Z two
  $DOLT sql -q "INSERT INTO t VALUES (3,'c')"
  $DOLT add -A && commit 2024-01-04T00:00:00Z three
  rm -rf .dolt/stats .dolt/noms/LOCK .dolt/sql-server.info .dolt/noms/oldgen
)
python3 "$HERE/journal_damage.py" cases "$OUT/base" >"$OUT/cases.txt"
first_line() { grep -v '^\s*$' | head -n 1 | tr -d '\r' | sed 's/\x1b\[[0-9;]*m//g'; }
# The `msg` of a logrus line, or the line.
message() { sed -e 's/^time=.*msg="\(.*\)"$/\1/' -e 's|[^ ]*/\.dolt/noms/|DB/.dolt/noms/|g'; }
# The line that says what is wrong: Dolt's data-loss error or journal warning, else the first.
problem() {
  t=$(cat)
  l=$(echo "$t" | grep -m 1 'possible data loss' || true)
  if [ -z "$l" ]; then l=$(echo "$t" | grep -m 1 'invalid journal record' || true); fi
  if [ -z "$l" ]; then l=$(echo "$t" | first_line); fi
  echo "$l" | message
}
while read -r name rest; do
  for cmd in log fsck write; do
    W=$(mktemp -d)
    cp -a "$OUT/base/." "$W/"
    python3 "$HERE/journal_damage.py" apply "$W" "$name" <"$OUT/cases.txt"
    J="$W/.dolt/noms/vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv"
    case $cmd in
      log)
        if o=$(cd "$W" && $DOLT log --oneline -n 1 2>"$W.err"); then
          echo "$name log OK $(echo "$o" | first_line | cut -d' ' -f1)"
        else
          echo "$name log ERR $(problem <"$W.err")"
        fi
        if [ -s "$W.err" ]; then echo "$name log-stderr $(first_line <"$W.err" | message)"; fi
        rm -f "$W.err" ;;
      fsck)
        if o=$(cd "$W" && $DOLT fsck 2>&1); then
          echo "$name fsck OK"
        else
          echo "$name fsck ERR $(echo "$o" | problem)"
        fi ;;
      write)
        if o=$(cd "$W" && $DOLT sql -q "INSERT INTO t VALUES (100,'w')" 2>&1 && $DOLT add -A 2>&1 \
            && commit 2024-01-05T00:00:00Z w 2>&1 && $DOLT log --oneline -n 1 2>&1); then
          echo "$name write OK $(echo "$o" | tail -n 1 | first_line | cut -d' ' -f1)"
          if (cd "$W" && $DOLT fsck >/dev/null 2>&1); then echo "$name written-fsck OK"; else echo "$name written-fsck ERR"; fi
        else
          echo "$name write ERR $(echo "$o" | problem)"
        fi ;;
    esac
    rm -rf "$W"
  done
done <"$OUT/cases.txt" >"$OUT/dolt.txt"
