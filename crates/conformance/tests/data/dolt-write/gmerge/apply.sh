#!/usr/bin/env bash
# Replays scenario 'gmerge' with the dolt CLI (written by dolt_scenario.py from ops.jsonl).
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
DOLT_AUTHOR_DATE=2024-07-01T00:00:00Z DOLT_COMMITTER_DATE=2024-07-01T00:00:00Z "$DOLT" init --initial-branch main --date 2024-07-01T00:00:00Z
# dolt init stores time.Now() as the committer timestamp even with --date; amending the root commit with the pinned dates makes it deterministic
DOLT_AUTHOR_DATE=2024-07-01T00:00:00Z DOLT_COMMITTER_DATE=2024-07-01T00:00:00Z "$DOLT" commit --amend -m 'Initialize data repository' --date 2024-07-01T00:00:00Z
# step 1: create_table items
"$DOLT" sql <<'DOLT_SQL_1'
CREATE TABLE items (id INT NOT NULL PRIMARY KEY, a INT, b INT, label VARCHAR(20), total INT GENERATED ALWAYS AS (a + b) STORED, tag VARCHAR(30) GENERATED ALWAYS AS (CONCAT(label, '-', a)) VIRTUAL, KEY idx_b (b), KEY idx_tag (tag));
DOLT_SQL_1
# step 2: insert items
"$DOLT" sql <<'DOLT_SQL_2'
INSERT INTO `items` (`id`, `a`, `b`, `label`) VALUES
(1, 1, 10, 'one'),
(2, 2, 20, 'two'),
(3, 3, 30, 'three'),
(4, 4, 40, 'four'),
(5, 5, 50, 'five');
DOLT_SQL_2
# step 3: commit Items
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-07-02T10:00:00Z DOLT_COMMITTER_DATE=2024-07-02T10:00:00Z "$DOLT" commit -m Items --date 2024-07-02T10:00:00Z --author 'Alice Adams <alice@example.com>'
# step 4: branch feature
"$DOLT" branch feature main
# step 5: checkout feature
"$DOLT" checkout feature
# step 6: update items
"$DOLT" sql <<'DOLT_SQL_3'
UPDATE `items` SET `id` = 1, `a` = 100 WHERE `id` = 1;
UPDATE `items` SET `id` = 2, `a` = 200 WHERE `id` = 2;
UPDATE `items` SET `id` = 4, `a` = 400 WHERE `id` = 4;
DOLT_SQL_3
# step 7: update items
"$DOLT" sql <<'DOLT_SQL_4'
UPDATE `items` SET `id` = 3, `label` = 'THREE' WHERE `id` = 3;
DOLT_SQL_4
# step 8: insert items
"$DOLT" sql <<'DOLT_SQL_5'
INSERT INTO `items` (`id`, `a`, `b`, `label`) VALUES
(6, 6, 60, 'six');
DOLT_SQL_5
# step 9: commit feature: a changed
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-07-03T10:00:00Z DOLT_COMMITTER_DATE=2024-07-03T10:00:00Z "$DOLT" commit -m 'feature: a changed' --date 2024-07-03T10:00:00Z --author 'Bob Brown <bob@example.org>'
# step 10: checkout main
"$DOLT" checkout main
# step 11: update items
"$DOLT" sql <<'DOLT_SQL_6'
UPDATE `items` SET `id` = 1, `b` = 1000 WHERE `id` = 1;
UPDATE `items` SET `id` = 3, `b` = 3000 WHERE `id` = 3;
UPDATE `items` SET `id` = 4, `b` = 4000 WHERE `id` = 4;
DOLT_SQL_6
# step 12: update items
"$DOLT" sql <<'DOLT_SQL_7'
UPDATE `items` SET `id` = 2, `label` = 'TWO' WHERE `id` = 2;
DOLT_SQL_7
# step 13: delete items
"$DOLT" sql <<'DOLT_SQL_8'
DELETE FROM `items` WHERE `id` = 5;
DOLT_SQL_8
# step 14: commit main: b changed
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-07-04T10:00:00Z DOLT_COMMITTER_DATE=2024-07-04T10:00:00Z "$DOLT" commit -m 'main: b changed' --date 2024-07-04T10:00:00Z --author 'Alice Adams <alice@example.com>'
# step 15: merge feature Merge branch 'feature'
DOLT_AUTHOR_DATE=2024-07-05T10:00:00Z DOLT_COMMITTER_DATE=2024-07-05T10:00:00Z "$DOLT" merge -m 'Merge branch '"'"'feature'"'"'' --author 'Alice Adams <alice@example.com>' feature
"$DOLT" sql -r csv -q "select name, hash from dolt_branches order by name"
"$DOLT" sql -r csv -q "select tag_name, tag_hash from dolt_tags order by tag_name"
