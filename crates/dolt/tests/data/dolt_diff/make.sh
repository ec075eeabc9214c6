#!/usr/bin/env bash
# Rebuilds this test database with the real Dolt CLI and records what Dolt's `dolt_diff` and
# `dolt_diff_summary` table functions return for each line of queries.txt.
# Usage: make.sh [path/to/dolt]   (run from anywhere; works in a scratch directory in /tmp)
set -euo pipefail
DOLT=${1:-/work/dolt-bin/dolt}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d /tmp/dolt_diff_data.XXXXXX)
cd "$WORK"
export DOLT_ROOT_PATH="$WORK/home"
mkdir -p "$DOLT_ROOT_PATH"
$DOLT config --global --add user.name tester >/dev/null
$DOLT config --global --add user.email tester@example.com >/dev/null
$DOLT init >/dev/null
q() { $DOLT sql -q "$1" >/dev/null; }
commit() { $DOLT add -A >/dev/null; $DOLT commit -m "$1" >/dev/null; }
# c1: a keyed table, a keyless table, a composite key, a table of many types.
q "create table t (id int primary key, name varchar(20), score double);
   insert into t values (1,'a',1.5),(2,'b',2.5),(3,'c',NULL);
   create table kl (a int, b varchar(10));
   insert into kl values (1,'x'),(1,'x'),(2,'y');
   create table ck (k1 int, k2 varchar(5), v int, primary key (k1,k2));
   insert into ck values (1,'a',10),(1,'b',20),(2,'a',30);
   create table ty (id int primary key, d decimal(10,3), dt datetime(3), tx text, j json,
     e enum('red','green'), bl blob);
   insert into ty values (1,1.5,'2020-01-02 03:04:05.678','a, \"quoted\"','{\"k\": [1, 2]}','red',x'00ff'),
     (2,NULL,NULL,'',NULL,NULL,NULL);
   create table pk (a int primary key, b int); insert into pk values (1,1),(2,2);"
commit c1
# c2 (tagged v1): updates, deletes, inserts; keyless counts up and down.
q "update t set name='bb' where id=2; delete from t where id=3; insert into t values (4,'d',4.0);
   insert into kl values (1,'x'),(3,'z'); delete from kl where a=2;
   update ck set v=21 where k1=1 and k2='b'; insert into ck values (0,'z',0);
   update ty set d=-2.25, tx='line1\nline2', j='[true, null]', e='green' where id=1;
   insert into ty values (3,0.001,'1999-12-31 23:59:59','x',NULL,'red',x'');"
commit c2
$DOLT tag v1
# c3: schema changes: a column added to t, one dropped from ck, pk's primary key widened; a
# keyless count goes to zero.
q "alter table t add column extra int; update t set extra=7 where id=1; alter table ck drop column v;
   alter table pk drop primary key; alter table pk modify b int not null; alter table pk add primary key (a,b);
   insert into t values (5,'e',5,5); delete from kl where a=1;"
commit c3
# branch feat: a row and a new table.
$DOLT checkout -b feat >/dev/null
q "insert into t values (6,'f',6,6); create table nt (x int primary key); insert into nt values (1);"
commit f1
$DOLT checkout main >/dev/null
# Uncommitted: staged changes to t, then more working changes and a dropped table.
q "update t set score=9 where id=1; insert into t values (7,'g',7,7);"
$DOLT add t >/dev/null
q "delete from t where id=4; drop table kl;"
# Record Dolt's answers.
rm -rf "$HERE/expected" "$HERE/db"
mkdir -p "$HERE/expected"
n=0
while read -r from to table; do
  [ -z "$from" ] && continue
  n=$((n + 1))
  if [ "$table" = "-" ]; then
    $DOLT sql -r csv -q "select * from dolt_diff_summary('$from','$to')" >"$HERE/expected/$n.csv"
  else
    $DOLT sql -r csv -q "select * from dolt_diff('$from','$to','$table')" >"$HERE/expected/$n.csv"
  fi
done <"$HERE/queries.txt"
# Keep only what a reader needs: the manifest, the chunk journal, the current branch.
mkdir -p "$HERE/db/.dolt/noms"
cp .dolt/noms/manifest .dolt/noms/vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv "$HERE/db/.dolt/noms/"
cp .dolt/repo_state.json "$HERE/db/.dolt/"
rm -rf "$WORK"
