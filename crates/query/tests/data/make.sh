#!/usr/bin/env bash
# Makes the Dolt database the query tests read (sysdb/) and Dolt's own output for each query
# of queries.sql (expected/NN.FORMAT), with the real `dolt` (2.3.1 when these were made):
#
#   DOLT=/path/to/dolt bash crates/query/tests/data/make.sh
#
# Run from anywhere; it writes beside itself. HOME is a scratch directory (Dolt's global
# config holds the committer). The database has history, two branches, a merge, a tag, a
# working change, collated, binary (not UTF-8) and two-column keys, a keyless table, a
# secondary index, a foreign key, most column types and text in collations that are not byte
# order outside the key.
set -euo pipefail
D=${DOLT:-dolt}
here="$(cd "$(dirname "$0")" && pwd)"
export HOME="$(mktemp -d)"
$D config --global --add user.name "Ada Tester" >/dev/null
$D config --global --add user.email ada@example.com >/dev/null
rm -rf "$here/sysdb" "$here/expected"
mkdir -p "$here/sysdb" "$here/expected"
cd "$here/sysdb"
$D init >/dev/null
c() { $D add -A >/dev/null; $D commit --date "$1" -m "$2" >/dev/null; }
$D sql -q "create table t (id int primary key, name varchar(20), score double, d date, key by_name (name))"
$D sql -q "insert into t values (1,'a',1.5,'2020-01-01'),(2,'b',NULL,'2021-02-03'),(3,'c',3.25,NULL)"
$D sql -q "create table u (k varchar(10) collate utf8mb4_0900_ai_ci primary key, v int)"
$D sql -q "insert into u values ('Apple',1),('banana',2),('Cherry',3),('cote',4)"
$D sql -q "create table types (id bigint primary key, dec1 decimal(10,2), dt datetime(3), ts timestamp, e enum('x','y','z'), st set('a','b','c'), j json, f float, tm time, yr year, ti tinyint unsigned, txt text)"
$D sql -q "insert into types values (1, 12.5, '2024-02-29 12:34:56.789', '2024-01-01 00:00:01', 'y', 'a,c', '{\"b\": [1, 2], \"a\": null}', 0.1, '-12:30:00', 2024, 255, 'line1\nline2, \"q\"'), (2, -0.01, NULL, NULL, NULL, '', '[]', -3.5e10, '838:59:59', 1901, 0, ''), (3, NULL, '1999-12-31 23:59:59.000', '2038-01-19 03:14:07', 'x', NULL, NULL, NULL, NULL, NULL, NULL, NULL)"
$D sql -q "create table vb (k varbinary(8) primary key, n int)"
$D sql -q "insert into vb values (0x00, 1), (0xff00, 2), (0x61, 3), (0xc3, 4), (0x6162, 5)"
$D sql -q "create table kl (a int, b varchar(5))"
$D sql -q "insert into kl values (1,'x'),(1,'x'),(2,NULL),(1,'x')"
$D sql -q "create table pk2 (a int, b varchar(10), c int, primary key (a, b), key by_c (c))"
$D sql -q "insert into pk2 values (1,'x',10),(1,'y',20),(2,'x',10),(2,'z',30),(3,'a',NULL)"
$D sql -q "create table child (id int primary key, tid int, foreign key (tid) references t(id))"
$D sql -q "insert into child values (1,1),(2,2)"
$D sql -q "create table more (id bigint unsigned primary key, b bit(8), c char(5), f float, dbl double, d6 datetime(6), t6 time(6), ts3 timestamp(3), y year, bl blob, g geometry, p point, big text, u8 tinyint unsigned, i8 tinyint, m mediumint, dec2 decimal(30,10))"
$D sql -q "insert into more values (18446744073709551615, b'101', 'ab', 3.4e38, -1.7976931348623157e308, '9999-12-31 23:59:59.999999', '-838:59:59.000000', '2001-02-03 04:05:06.789', 2155, 0xDEADBEEF00, ST_GeomFromText('LINESTRING(0 0, 1 1)'), point(1.5, -2), repeat('é', 20000), 255, -128, -8388608, -12345678901234567890.0123456789), (0, NULL, '', 1e-45, 5e-324, NULL, '00:00:00.000001', NULL, 1901, '', NULL, NULL, '', 0, 0, 0, 0), (5, b'0', 'z ', -0.0, 1e21, '1970-01-01 00:00:00', '838:59:59', '2038-01-19 03:14:07.999', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"
c 2024-01-01T10:00:00 "first"
$D sql -q "update t set name='bb' where id=2; delete from t where id=3; insert into t values (4,'d',4.0,'2024-04-04')"
$D sql -q "update u set v = 20 where k = 'banana'"
c 2024-01-02T10:00:00 "second, with a 'quote' and, comma"
$D branch feat
$D checkout feat >/dev/null
$D sql -q "insert into t values (10,'x',0.1,'1999-12-31')"
$D sql -q "alter table t add column extra int"
$D sql -q "update t set extra = id * 100"
c 2024-01-03T10:00:00 "feat row"
$D checkout main >/dev/null
$D sql -q "insert into t values (5,'e',5,'2025-05-05')"
c 2024-01-04T10:00:00 "main row"
$D merge feat -m "merge feat" >/dev/null
$D tag v1 HEAD~1
$D sql -q "update t set score=9 where id=1"
$D sql -q "insert into u values ('Éclair', 5)"
# Text in collations that are not byte order, outside the key (one column with an index):
# compared, sorted, grouped and matched under the collation.
$D sql -q "create table people (id int primary key, name varchar(20) collate utf8mb4_0900_ai_ci, city varchar(20) collate utf8mb4_general_ci, tag varchar(10), key by_name (name))"
$D sql -q "insert into people values (1,'alice','Paris','x'),(2,'Alice','paris','y'),(3,'ÁLICE','Berlin','x'),(4,'bob','berlin',NULL),(5,'Bob','Zürich','z'),(6,NULL,'zurich','x'),(7,'carol','Ärhus','y'),(8,'Zoë','aarhus','y'),(9,'zoe','Aarhus',NULL)"
cd "$here"
n=0
while IFS= read -r line; do
  case "$line" in ''|'#'*) continue ;; esac
  format=${line%% *}
  query=${line#* }
  n=$((n + 1))
  name=$(printf '%02d' "$n")
  (cd sysdb && $D sql -r "$format" -q "$query") > "expected/$name.$format" 2>&1 || {
    echo "query $name failed in Dolt: $query" >&2
    cat "expected/$name.$format" >&2
    exit 1
  }
done < queries.sql
rm -rf "$HOME" sysdb/.dolt/stats
echo "made sysdb and $n expected outputs"
