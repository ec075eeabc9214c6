#!/bin/sh
# Rebuilds the `index_forms` test database: secondary indexes that do not hold whole values
# (prefix lengths on text, binary and blob columns; UNIQUE indexes on TEXT/BLOB, which Dolt
# keeps content-hashed as addresses), and what the real Dolt CLI answers for a few lookups.
# Usage: make_index_forms.sh DOLT OUTDIR   (run with a scratch HOME; writes OUTDIR/index_forms
# and OUTDIR/index_forms.expected)
set -e
DOLT=$1
OUT=$2
DB=$OUT/index_forms
EXP=$OUT/index_forms.expected
rm -rf "$DB" "$EXP"
mkdir -p "$DB" "$EXP"
$DOLT config --global --add user.name "Test User" >/dev/null 2>&1 || true
$DOLT config --global --add user.email "test@example.com" >/dev/null 2>&1 || true
cd "$DB"
$DOLT init >/dev/null

# Rows: 200 strings drawn (by a fixed linear congruential sequence) from an alphabet of ASCII
# letters in both cases, accented letters (2 bytes), the euro sign (3 bytes), an emoji
# (4 bytes) and a space, so that prefix cuts fall inside characters.
python3 - >rows.sql <<'PY'
alphabet = ["a", "b", "A", "p", "z", " ", "\u00e1", "\u00c1", "\u00df", "\u20ac", "\U0001F600", "s"]
x = 12345
def rnd(n):
    global x
    x = (x * 1103515245 + 12345) % (1 << 31)
    return x % n
def word():
    return "".join(alphabet[rnd(len(alphabet))] for _ in range(rnd(9)))
def q(s):
    return "'" + s.replace("'", "''") + "'"
rows, seen = [], set()
for i in range(1, 201):
    name, ci, body = word(), word(), word()
    b = bytes(rnd(4) for _ in range(rnd(5)))
    nul = rnd(10) == 0
    uniq = word() + str(i)
    rows.append("(%d,%s,%s,%s,%s,%s,%s,%s)" % (
        i, "NULL" if nul else q(name), q(ci), q(body), "X'" + b.hex() + "'",
        "X'" + b.hex() + "ff'", q(uniq), "X'" + (uniq.encode() * 3).hex() + "'"))
# One value far over the inline limit, so a content-hashed key holds its blob's address.
rows.append("(201,'big','big','big',X'00',X'00',REPEAT('long ', 4000),UNHEX(REPEAT('ab', 30000)))")
print("INSERT INTO p VALUES " + ",\n".join(rows) + ";")
PY
$DOLT sql -q "CREATE TABLE p (
  id INT PRIMARY KEY,
  name VARCHAR(40),
  ci VARCHAR(40) COLLATE utf8mb4_0900_ai_ci,
  body TEXT,
  b VARBINARY(40),
  bl BLOB,
  ut TEXT,
  ub BLOB,
  KEY ix_name (name(3)),
  KEY ix_ci (ci(4)),
  KEY ix_body (body(5)),
  KEY ix_b (b(2)),
  KEY ix_bl (bl(3)),
  KEY ix_multi (name(2), ci(3)),
  UNIQUE KEY ux_ut (ut),
  UNIQUE KEY ux_ub (ub)
);"
$DOLT sql <rows.sql
rm rows.sql
$DOLT add -A >/dev/null
$DOLT commit -m "index forms" >/dev/null

# Dolt's answers, from filters no index can serve (each comparison wrapped in IF(...), which
# keeps the column's collation), so they are SQL's answers, not an index lookup's.
ask() { $DOLT sql -r csv -q "$2" >"$EXP/$1.csv"; }
ask name_ge_ap "select id from p where if(name >= 'ap', 1, 0) = 1 order by id"
ask name_range "select id from p where if(name >= 'a' and name < 'bá', 1, 0) = 1 order by id"
ask ci_eq "select id from p where if(ci = (select ci from p where id = 7), 1, 0) = 1 order by id"
ask ci_range "select id from p where if(ci > 'Ab' and ci <= 'S', 1, 0) = 1 order by id"
ask b_range "select id from p where if(b >= X'0102' and b < X'03', 1, 0) = 1 order by id"
ask ut_big "select id from p where if(ut = repeat('long ', 4000), 1, 0) = 1 order by id"
ask ut_eq "select id from p where if(ut = (select ut from p where id = 50), 1, 0) = 1 order by id"
ask multi "select id from p where if(name = (select name from p where id = 9) and ci >= 'a', 1, 0) = 1 order by id"
