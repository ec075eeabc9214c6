# One query a line: the result format (csv, json or tabular), a space, the query. make.sh
# records Dolt's output of each in expected/NN.FORMAT (NN: its number among the queries);
# tests/dolt_made.rs checks ours is byte for byte the same.
csv select * from t
csv select * from t order by id desc
csv select * from t where id = 2
csv select * from t where id in (5, 1, 99) order by id
csv select id, name from t where id >= 2 and id < 5
csv select * from t where id between 2 and 4
csv select count(*) from t
csv select count(*) from t where id > 1
csv select * from t as of 'main~1'
csv select * from t as of 'feat'
csv select * from t as of 'v1'
csv select * from `sysdb/feat`.t
csv select name, score from t where name = 'bb'
csv select * from u
csv select * from u where k = 'apple'
csv select * from u where k in ('BANANA', 'cherry') order by v
csv select * from u where k = 'eclair'
csv select * from types
csv select id, dec1, dt, e, st from types where id = 1
csv select sum(dec1), count(dt), max(ts) from types
csv select k, n from vb order by k
csv select n from vb where k = 0xff00
csv select * from kl order by a, b
csv select count(*) from kl
csv select a, count(*) from kl group by a order by a
csv select * from pk2
csv select * from pk2 where a = 2
csv select * from pk2 where a = 1 and b = 'y'
csv select * from pk2 where c = 10 order by a, b
csv select * from pk2 where a > 1 and c is null
csv select * from child
csv select t.name, child.id from t join child on t.id = child.tid order by child.id
csv select * from dolt_log
csv select * from dolt_branches
csv select * from dolt_diff_t
csv select * from dolt_diff_u
csv select to_id, diff_type from dolt_diff_t where from_commit = 'WORKING' or to_commit = 'WORKING'
csv select commit_hash, message from dolt_log as of 'feat'
csv select name, sum(score) as total, count(*) from t group by name order by name
csv select 1 > 0, true, 'a,b', '', 'x' as y
csv select * from more order by id
csv select length(big), char_length(big), c from more order by id
csv select id, y from more order by y
csv select max(dec2), min(f), sum(u8), count(b) from more
csv select id from more where id = 18446744073709551615
json select * from t order by id
json select id, j, e from types order by id
json select id from t where id > 100
tabular select * from t order by id
tabular select id, name from t where id > 100
# Aggregates with Dolt's result types: SUM of integers and SUM/AVG of decimals are doubles
# (as doubles in CSV and tables, decimals in JSON), AVG of a decimal rounded, MIN/MAX of a
# DATETIME/TIMESTAMP with the column's fraction digits, window sums in float64.
csv select sum(id), avg(id), sum(dec1), avg(dec1), max(dt), min(ts), sum(f), avg(f) from types
json select sum(id), avg(id), sum(dec1), avg(dec1), max(dt), min(ts), sum(f), avg(f) from types
tabular select sum(dec2), avg(dec2), avg(dec2) * 2, sum(u8) + 1, max(d6), min(ts3), max(dbl), avg(i8) from more
json select sum(dec2), avg(dec2), avg(dec2) * 2, sum(dbl), avg(m), max(d6), min(ts3) from more
csv select id, sum(id) over (order by id) as running, avg(score) over () as mean, max(d) over () as last from t order by id
csv select a, sum(c), avg(c), sum(c) * 1000000 as big, count(*) from pk2 group by a order by a
json select a, sum(c) * 1000000 as big, avg(c) from pk2 group by a order by a
json select id, dbl, f from more order by id
# Division as Dolt divides exact numbers: a decimal with four more fraction digits than the
# dividend, rounded half away from zero; NULL for a zero divisor; decimal literals.
csv select id, id / 3, id * 1.0 / 3, score / 2, 7 / 2, 1.5 * 2, id / 0, -id / 6 from t order by id
json select id / 4, dec1 / 3, dec1 / id, 0.1 + 0.2 from types order by id
csv select count(*) / 3, sum(id) / count(*), sum(dec1) / 2, avg(dec1) / 3 from types
# A decimal literal beside a FLOAT or DOUBLE is a double (as in MySQL), whatever the size.
csv select id, f, f * 1.5, f + 0.25, f between -1e11 and 0.5, f < 0.5 from types order by id
csv select more.id, dbl > 0.5, dbl * 2.5, score * 1.5 from more, t where t.id = 1 order by more.id
# Text in a collation that is not byte order, outside the key (people.name is
# utf8mb4_0900_ai_ci with an index, people.city utf8mb4_general_ci without): compared, sorted,
# grouped (a group shows its first spelling read), ranked, joined, partitioned and matched
# under the collation; DISTINCT and COUNT(DISTINCT) keep every spelling, as Dolt does.
csv select id from people where name = 'ALICE' order by id
csv select id, name from people where name > 'b' and name < 'zz' order by id
csv select id from people where name between 'B' and 'carol' or city = 'PARIS' order by id
csv select id from people where name like 'al%' or city like 'z_rich' order by id
csv select id from people where name not like '%e' order by id
csv select name, count(*) from people group by name order by name
json select city, count(*), min(id) from people group by city order by city
csv select min(name), max(name), min(city), max(city), count(distinct name), count(distinct city) from people
tabular select id, name from people order by name desc, id
csv select k from u order by k
csv select p.id, q.id from people p join people q on p.city = q.city and p.id < q.id order by p.id, q.id
csv select id, row_number() over (partition by city order by name, id) as n from people order by id
csv select name, count(*) from people where tag is not null group by name having name <> 'BOB' order by name
csv select k, v from u where k = 'APPLE'
csv select id, name = 'ALICE', city < 'c' from people order by id
csv select upper(name), count(*) from people group by upper(name) order by 1
# MySQL's functions and operators DataFusion lacks: date and time parts, DATE_FORMAT,
# GROUP_CONCAT, DIV, MOD and a remainder by zero, STD/STDDEV/VARIANCE (the population's), IF,
# HEX, LOCATE, CAST AS SIGNED; two items DataFusion names alike are named by their texts.
csv select year(d), month(d), day(d), dayofmonth(d) from t order by id
json select hour(dt), minute(dt), second(dt), year(ts), quarter(dt), dayofweek(dt), dayofyear(dt) from types order by id
csv select year(d), count(*) from t group by year(d) order by 1
csv select date_format(d, '%Y-%m'), date_format(d, '%W %M %e %j') from t order by id
csv select date_format(dt, '%H:%i:%s.%f %p %T') from types order by id
csv select group_concat(name order by name desc separator ';') from t
csv select a, group_concat(b), group_concat(c) from pk2 group by a order by a
csv select id div 2, 7 div 2, -7 div 2, id div 0, score div 2 from t order by id
csv select id % 0, mod(id, 0), mod(id, 3), -7 % 3, 5.5 % 2 from t order by id
csv select std(score), stddev(score), variance(score) from t
csv select hex(name), hex(id), hex(-1), hex(k), ifnull(score, 0), concat_ws('-', name, id) from t, vb where vb.n = 1 order by id
csv select if(id > 2, 'big', 'small'), if(score > 4, score, id), mod(id, 2), id % 2 from t order by id
csv select left(name, 1), right(name, 1), locate('b', name), instr(name, 'b'), cast('12' as signed) from t order by id
# SHOW TABLES, DESCRIBE (DESC, SHOW COLUMNS FROM) and DATABASE() as Dolt answers them.
csv show tables
tabular describe types
json describe people
csv desc more
csv show columns from pk2
csv select database(), count(*) from t
csv select id, concat(dec1, '|', dt, '|', ts, '|', e, '|', st, '|', f, '|', tm, '|', yr, '|', ti) from types order by id
csv select id, concat(j, '|'), concat_ws('-', dec1, NULL, ti, tm), cast(f as char), cast(dt as char), cast(dec1 as char(3)), concat(id, NULL) from types order by id
csv select id, concat(f, '|', dbl, '|', u8, '|', i8, '|', dec2, '|', b, '|', y, '|', d6, '|', t6, '|', ts3) from more order by id
csv select id, length(bl), length(id), length(dbl), length(f) from more order by id
csv select id, f + 1, f * 2, f / 4, f - dec1 from types order by id
csv select types.id, floor(ti), ceil(yr), round(types.id), round(ti, 1), floor(more.id), ceil(i8), round(m), round(i8, 2) from types, more order by types.id, more.id
csv select id, cast(dec1 as signed), cast(f as signed) from types where id <> 2 order by id
csv select sum(f), avg(f), sum(dbl + 0), sum(i8), avg(m) from more
csv select min(e), max(e), min(st), max(st) from types
csv select id, e, st from types order by st, id
csv select id, e from types order by e desc, id
csv select group_concat(f order by id separator ';'), group_concat(dt order by id) from types
csv select id, j->'$.b', j->>'$.a', json_extract(j, '$.b[1]'), json_length(j), json_type(j), json_unquote('"x\ty"') from types order by id
json select id, j->'$.b', j->'$.a', json_extract('{"k": [1, {"z": 2, "a": "q"}]}', '$.k') from types order by id
csv select id from types where j->'$.b[0]' = 1 order by id
csv select id, coalesce(dt, null), ifnull(ts, ts), if(id > 1, dt, dt), case when id = 1 then dt else null end, nullif(dt, null), greatest(dt, dt) from types order by id
json select id, coalesce(dt, null) as c from types order by c, id
csv select coalesce(dt, null) from types where id = 1 union all select coalesce(dt, null) from types where id = 3 order by 1
csv select id, name, count(*) from t group by id order by id
csv select id, j->'$.b[0]' + 1, j->'$.b[1]' * 2.5, j->>'$.b[0]' - 1 > 0, '3' * 2, '1.5' + f from types order by id
csv select id from types where j->'$.b' is not null and j->'$.b[1]' between 1 and 3 order by id
csv select id, name from t where id in (4, 1, 3)
csv select * from u where k in ('cherry', 'APPLE', 'apple')
csv select hex(k), n from vb where k in (0xff00, 0x00, 0x7f)
csv select id from more where id in (18446744073709551615, 5, 0)
csv select id, length(txt), length(j), length(f), length(dec1), concat_ws('-', id, txt, null) from types order by id
csv select * from u where k in ('banana', 'eclair', 'Cherry', 'apple')
csv select * from t where id in (2147483648, 2)
csv select id, name from t where id = 4294967296
json select id from types where id = 9223372036854775808
json select * from vb where k = 0xff00 or k = 0xc3
json select id, f, dbl from more where id = 0
csv select name, t.id as n from t where id = 4
csv with recursive n as (select 0 as i union all select i + 1 from n where i < 14) select i, json_extract('[null, -3, 2.5, 1, 1.0, \"a\", \"B\", {\"b\": 0}, {\"a\": 1}, {\"a\": 1, \"b\": 2}, [1, 2], [2], [], false, true]', concat('$[', i, ']')) v from n order by v desc, i
csv with recursive n as (select 0 as i union all select i + 1 from n where i < 14) select min(v) lo, max(v) hi, count(distinct v) kinds from (select json_extract('[null, -3, 2.5, 1, 1.0, \"a\", \"B\", {\"b\": 0}, {\"a\": 1}, {\"a\": 1, \"b\": 2}, [1, 2], [2], [], false, true]', concat('$[', i, ']')) v from n) x
csv with recursive n as (select 0 as i union all select i + 1 from n where i < 14) select v, count(*) c, min(i) first from (select json_extract('[null, -3, 2.5, 1, 1.0, \"a\", \"B\", {\"b\": 0}, {\"a\": 1}, {\"a\": 1, \"b\": 2}, [1, 2], [2], [], false, true]', concat('$[', i, ']')) v, i from n) x group by v order by v
csv select id, j, row_number() over (order by j desc) r from types order by j, id
csv select n, hex(coalesce(k, null)), hex(ifnull(null, k)) from vb order by n
csv with recursive n as (select 0 as i union all select i + 1 from n where i < 14) select i, v = 1 eq1, v < 'b' lt_b, v > 2 gt2, v in (2.5, 'a', true) found from (select i, json_extract('[null, -3, 2.5, 1, 1.0, \"a\", \"B\", {\"b\": 0}, {\"a\": 1}, {\"a\": 1, \"b\": 2}, [1, 2], [2], [], false, true]', concat('$[', i, ']')) v from n) x order by i
csv select id, j > 5, j = '[]', (j->'$.b') > j, (j->'$.b') = (j->'$.b') from types order by id
csv select id, dbl, cast(dbl as signed), cast(f as signed), cast(abs(dbl) as unsigned) from more order by id
