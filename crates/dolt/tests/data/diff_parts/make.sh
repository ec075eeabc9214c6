#!/usr/bin/env bash
# Rebuilds this test database with the real Dolt CLI (2.3.1 made the committed one) and records,
# for each line of queries.txt, the line count and SHA-256 of what Dolt's
# `dolt sql -r csv -q "select * from dolt_diff('FROM','TO','TABLE')"` printed (the outputs run
# to hundreds of kilobytes; the test rebuilds the same text from the diff's parts and compares).
#
# Two tables of 24,000 rows each, spanning hundreds of leaves: `cs`, keyed by a VARCHAR in
# utf8mb4_0900_ai_ci (accents and case: its order is not byte order), and `vb`, keyed by a
# VARBINARY whose bytes are not UTF-8. Branches: `spread` (updates, deletes and inserts spread
# over the whole key range), `cluster` (the same, in a few contiguous runs), and a second commit
# on main (a mix of both).
# Usage: make.sh [path/to/dolt]   (works in a scratch directory in /tmp)
set -euo pipefail
DOLT=${1:-/work/dolt-bin/dolt}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d /tmp/diff_parts_data.XXXXXX)
cd "$WORK"
export HOME="$WORK/home" DOLT_ROOT_PATH="$WORK/home"
mkdir -p "$HOME"
$DOLT config --global --add user.name tester >/dev/null
$DOLT config --global --add user.email tester@example.com >/dev/null
$DOLT init >/dev/null
q() { $DOLT sql -q "$1" >/dev/null; }
commit() { $DOLT add -A >/dev/null; $DOLT commit -m "$1" --date "$2" >/dev/null; }
# Numbers 0..99999 (table nums) from five copies of a digit table.
NUMS="create table d (x int primary key); insert into d values (0),(1),(2),(3),(4),(5),(6),(7),(8),(9);
   create table nums (i int primary key);
   insert into nums select a.x + 10*b.x + 100*c.x + 1000*e.x + 10000*f.x from d a, d b, d c, d e, d f;"
q "$NUMS"
# A key for number i: one of eight words (accented and cased alike under ai_ci, so the order
# interleaves them) and the number; `vb`'s key: four scrambled bytes and 0xff.
CS="concat(elt(1 + (i % 8), 'apple', 'Äpfel', 'banana', 'Bänder', 'cafe', 'Café', 'zebra', 'Zoë'), '-', lpad(i, 5, '0'))"
VB="unhex(concat(lpad(hex((i * 2654435761) % 4294967296), 8, '0'), 'ff'))"
q "create table cs (id varchar(40) collate utf8mb4_0900_ai_ci primary key, n int, note varchar(20));
   create table vb (k varbinary(16) primary key, v int, w varchar(10));
   insert into cs select $CS, i, concat('n', i) from nums where i < 48000 and i % 2 = 0;
   insert into vb select $VB, i, concat('w', i) from nums where i < 48000 and i % 2 = 0;
   drop table d; drop table nums;"
commit c1 2024-01-01T00:00:00
edit() { # edit WHERE-for-updates WHERE-for-deletes WHERE-for-inserts (over the numbers i)
  q "$NUMS
     update cs set n = n + 1000000, note = 'upd' where n in (select i from nums where $1);
     delete from cs where n in (select i from nums where $2);
     insert into cs select $CS, i, 'ins' from nums where i < 48000 and i % 2 = 1 and ($3);
     update vb set v = v + 1000000, w = 'upd' where v in (select i from nums where $1);
     delete from vb where v in (select i from nums where $2);
     insert into vb select $VB, i, 'ins' from nums where i < 48000 and i % 2 = 1 and ($3);
     drop table d; drop table nums;"
}
$DOLT branch spread
$DOLT branch cluster
$DOLT checkout spread >/dev/null
edit "i % 194 = 0" "i % 422 = 2" "i % 346 = 1"
commit spread 2024-01-02T00:00:00
$DOLT checkout main >/dev/null
$DOLT checkout cluster >/dev/null
edit "i between 10000 and 11200" "i between 24000 and 24600" "i between 36001 and 36601"
commit cluster 2024-01-03T00:00:00
$DOLT checkout main >/dev/null
edit "i between 2000 and 2400 or i % 1000 = 0" "i % 1202 = 4 or i between 40000 and 40100" "i % 2002 = 1"
commit c2 2024-01-04T00:00:00
$DOLT gc >/dev/null
# Record Dolt's answers.
rm -rf "$HERE/db"
: >"$HERE/expected.txt"
while read -r from to table; do
  [ -z "$from" ] && continue
  $DOLT sql -r csv -q "select * from dolt_diff('$from','$to','$table')" >out.csv
  echo "$from $to $table $(wc -l <out.csv) $(sha256sum out.csv | cut -d' ' -f1)" >>"$HERE/expected.txt"
done <"$HERE/queries.txt"
# Keep only what a reader needs: the manifests and table files (after gc: archives, in noms
# and noms/oldgen), the current branch.
mkdir -p "$HERE/db/.dolt"
cp -r .dolt/noms "$HERE/db/.dolt/"
rm -f "$HERE/db/.dolt/noms/LOCK" "$HERE/db/.dolt/noms/journal.idx" "$HERE/db/.dolt/noms/oldgen/LOCK"
cp .dolt/repo_state.json "$HERE/db/.dolt/"
cd /tmp
rm -rf "$WORK" || true
