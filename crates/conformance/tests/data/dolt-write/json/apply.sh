#!/usr/bin/env bash
# Replays scenario 'json' with the dolt CLI (written by dolt_scenario.py from ops.jsonl).
#   apply.sh DBDIR      env DOLT (default `dolt` from PATH); uses a throwaway HOME.
# Prints the branch heads at the end; they must match expected/refs.json.
set -euo pipefail
DOLT=${DOLT:-dolt}
DB=${1:?usage: apply.sh DBDIR}
export TZ=UTC HOME=$(mktemp -d)
for v in $(env | grep -o "^DOLT_[A-Z_]*" || true); do unset "$v"; done
"$DOLT" config --global --add user.name 'Vector Bot' >/dev/null
"$DOLT" config --global --add user.email bot@example.com >/dev/null
"$DOLT" config --global --add metrics.disabled true >/dev/null
mkdir -p "$DB"; cd "$DB"
# step 0: init main Initialize data repository
DOLT_AUTHOR_DATE=2024-08-01T00:00:00Z DOLT_COMMITTER_DATE=2024-08-01T00:00:00Z "$DOLT" init --initial-branch main --date 2024-08-01T00:00:00Z
# dolt init stores time.Now() as the committer timestamp even with --date; amending the root commit with the pinned dates makes it deterministic
DOLT_AUTHOR_DATE=2024-08-01T00:00:00Z DOLT_COMMITTER_DATE=2024-08-01T00:00:00Z "$DOLT" commit --amend -m 'Initialize data repository' --date 2024-08-01T00:00:00Z
# step 1: create_table docs
"$DOLT" sql <<'DOLT_SQL_1'
CREATE TABLE docs (id INT NOT NULL PRIMARY KEY, doc JSON, meta JSON, n INT);
DOLT_SQL_1
# step 2: insert docs
"$DOLT" sql <<'DOLT_SQL_2'
INSERT INTO `docs` (`id`, `doc`, `meta`, `n`) VALUES
(1, '{"a":1,"b":{"x":1,"y":2},"c":[1,2],"zz":1.5}', '{"v":1}', 0),
(2, '{"a":1}', '{"v":1}', 0),
(3, '[1,2]', '{"v":1}', 0),
(4, '{"deep":{"l1":{"l2":{"p":1,"q":2}}},"name":"x"}', '{"v":1}', 0),
(5, '{"s":"é","t":"\\"quoted\\""}', '{"v":1}', 0),
(6, '{"drop":null,"keep":true}', 'null', 0),
(7, '{"a":1,"b":2}', '{"v":1}', 0),
(8, '{"list":[1,2,3],"n":1}', '{"v":1}', 0),
(9, '{"i":9}', NULL, 0),
(10, '{"i":10}', NULL, 0),
(11, '{"i":11}', NULL, 0),
(12, '{"i":12}', NULL, 0),
(13, '{"i":13}', NULL, 0),
(14, '{"i":14}', NULL, 0),
(15, '{"i":15}', NULL, 0),
(16, '{"i":16}', NULL, 0),
(17, '{"i":17}', NULL, 0),
(18, '{"i":18}', NULL, 0),
(19, '{"i":19}', NULL, 0),
(20, '{"i":20}', NULL, 0),
(21, '{"i":21}', NULL, 0),
(22, '{"i":22}', NULL, 0),
(23, '{"i":23}', NULL, 0),
(24, '{"i":24}', NULL, 0),
(25, '{"i":25}', NULL, 0),
(26, '{"i":26}', NULL, 0),
(27, '{"i":27}', NULL, 0),
(28, '{"i":28}', NULL, 0),
(29, '{"i":29}', NULL, 0);
DOLT_SQL_2
# step 3: commit Documents
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-08-02T10:00:00Z DOLT_COMMITTER_DATE=2024-08-02T10:00:00Z "$DOLT" commit -m Documents --date 2024-08-02T10:00:00Z --author 'Alice Adams <alice@example.com>'
# step 4: branch feature
"$DOLT" branch feature main
# step 5: checkout feature
"$DOLT" checkout feature
# step 6: update docs
"$DOLT" sql <<'DOLT_SQL_3'
UPDATE `docs` SET `id` = 1, `doc` = '{"a":1,"b":{"x":1,"y":3},"bb":true,"zz":1.5}', `n` = 1 WHERE `id` = 1;
UPDATE `docs` SET `id` = 2, `doc` = '{"a":1,"aaaa":{"q":1},"b":1}', `n` = 0 WHERE `id` = 2;
UPDATE `docs` SET `id` = 3, `doc` = '[1,2,3]', `n` = 0 WHERE `id` = 3;
UPDATE `docs` SET `id` = 4, `doc` = '{"deep":{"l1":{"l2":{"p":1,"q":3}},"side":[1]},"name":"x"}', `n` = 0 WHERE `id` = 4;
UPDATE `docs` SET `id` = 5, `doc` = '{"s":"é","t":"\\"quoted\\"","u":"ü"}', `n` = 0 WHERE `id` = 5;
UPDATE `docs` SET `id` = 6, `doc` = '{"drop":null,"keep":false}', `n` = 0 WHERE `id` = 6;
UPDATE `docs` SET `id` = 7, `doc` = '{"a":1,"b":2,"c":3}', `n` = 7 WHERE `id` = 7;
UPDATE `docs` SET `id` = 8, `doc` = '{"list":[1,2,3],"n":2}', `n` = 0 WHERE `id` = 8;
DOLT_SQL_3
# step 7: commit feature: document edits
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-08-03T10:00:00Z DOLT_COMMITTER_DATE=2024-08-03T10:00:00Z "$DOLT" commit -m 'feature: document edits' --date 2024-08-03T10:00:00Z --author 'Bob Brown <bob@example.org>'
# step 8: checkout main
"$DOLT" checkout main
# step 9: update docs
"$DOLT" sql <<'DOLT_SQL_4'
UPDATE `docs` SET `id` = 1, `doc` = '{"a":2,"b":{"x":5,"y":2},"c":[1,2],"zz":1.5}', `meta` = '{"v":2}' WHERE `id` = 1;
UPDATE `docs` SET `id` = 2, `doc` = '{"a":1,"ccc":1}', `meta` = '{"v":1}' WHERE `id` = 2;
UPDATE `docs` SET `id` = 3, `doc` = '[1,2,3]', `meta` = '{"v":1}' WHERE `id` = 3;
UPDATE `docs` SET `id` = 4, `doc` = '{"deep":{"l1":{"l2":{"p":0,"q":2}}},"name":"y"}', `meta` = '{"v":1}' WHERE `id` = 4;
UPDATE `docs` SET `id` = 5, `doc` = '{"s":"É","t":"\\"quoted\\""}', `meta` = '{"v":1}' WHERE `id` = 5;
UPDATE `docs` SET `id` = 6, `doc` = '{"drop":null,"keep":true,"more":[null]}', `meta` = 'null' WHERE `id` = 6;
UPDATE `docs` SET `id` = 7, `doc` = '{"a":1}', `meta` = '{"v":7}' WHERE `id` = 7;
UPDATE `docs` SET `id` = 8, `doc` = '{"list":[1,2,3],"m":0,"n":1}', `meta` = '{"v":1}' WHERE `id` = 8;
DOLT_SQL_4
# step 10: commit main: document edits
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-08-04T10:00:00Z DOLT_COMMITTER_DATE=2024-08-04T10:00:00Z "$DOLT" commit -m 'main: document edits' --date 2024-08-04T10:00:00Z --author 'Alice Adams <alice@example.com>'
# step 11: merge feature Merge branch 'feature'
DOLT_AUTHOR_DATE=2024-08-05T10:00:00Z DOLT_COMMITTER_DATE=2024-08-05T10:00:00Z "$DOLT" merge -m 'Merge branch '"'"'feature'"'"'' --author 'Alice Adams <alice@example.com>' feature
"$DOLT" sql -r csv -q "select name, hash from dolt_branches order by name"
"$DOLT" sql -r csv -q "select tag_name, tag_hash from dolt_tags order by tag_name"
