#!/usr/bin/env bash
# Replays scenario 'cschema' with the dolt CLI (written by dolt_scenario.py from ops.jsonl).
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
# step 1: create_table cities
"$DOLT" sql <<'DOLT_SQL_1'
CREATE TABLE cities (id INT NOT NULL PRIMARY KEY, city VARCHAR(30) COLLATE utf8mb4_0900_ai_ci, note VARCHAR(20), KEY idx_city (city));
DOLT_SQL_1
# step 2: create_table names
"$DOLT" sql <<'DOLT_SQL_2'
CREATE TABLE names (name VARCHAR(40) COLLATE utf8mb4_0900_ai_ci NOT NULL PRIMARY KEY, label VARCHAR(20) COLLATE utf8mb4_general_ci, score INT);
DOLT_SQL_2
# step 3: insert cities
"$DOLT" sql <<'DOLT_SQL_3'
INSERT INTO `cities` (`id`, `city`, `note`) VALUES
(1, 'Paris', 'a'),
(2, 'Lima', 'b'),
(3, 'Rome', 'c'),
(4, 'Oslo', 'd'),
(5, 'Bonn', 'e'),
(6, 'Quito', 'f'),
(7, 'Ærø', 'g');
DOLT_SQL_3
# step 4: insert names
"$DOLT" sql <<'DOLT_SQL_4'
INSERT INTO `names` (`name`, `label`, `score`) VALUES
('Straße', 'Red', 1),
('Müller', 'green', 2),
('café', 'BLUE', 3),
('Zoë', 'gray', 4);
DOLT_SQL_4
# step 5: commit Cities and names
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-07-02T10:00:00Z DOLT_COMMITTER_DATE=2024-07-02T10:00:00Z "$DOLT" commit -m 'Cities and names' --date 2024-07-02T10:00:00Z --author 'Alice Adams <alice@example.com>'
# step 6: branch feature
"$DOLT" branch feature main
# step 7: checkout feature
"$DOLT" checkout feature
# step 8: alter_table cities
"$DOLT" sql <<'DOLT_SQL_5'
ALTER TABLE cities ADD COLUMN pop INT;
DOLT_SQL_5
# step 9: alter_table names
"$DOLT" sql <<'DOLT_SQL_6'
ALTER TABLE names ADD COLUMN extra VARCHAR(10) DEFAULT 'x';
DOLT_SQL_6
# step 10: update cities
"$DOLT" sql <<'DOLT_SQL_7'
UPDATE `cities` SET `id` = 1, `city` = 'paris', `pop` = 10 WHERE `id` = 1;
UPDATE `cities` SET `id` = 2, `city` = 'LIMA', `pop` = 20 WHERE `id` = 2;
UPDATE `cities` SET `id` = 4, `city` = 'Bergen', `pop` = 40 WHERE `id` = 4;
UPDATE `cities` SET `id` = 6, `city` = 'quito', `pop` = 60 WHERE `id` = 6;
DOLT_SQL_7
# step 11: update names
"$DOLT" sql <<'DOLT_SQL_8'
UPDATE `names` SET `name` = 'Straße', `label` = 'red' WHERE `name` = 'Straße';
UPDATE `names` SET `name` = 'café', `label` = 'Blue' WHERE `name` = 'café';
DOLT_SQL_8
# step 12: commit feature: new columns, respelled values
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-07-03T10:00:00Z DOLT_COMMITTER_DATE=2024-07-03T10:00:00Z "$DOLT" commit -m 'feature: new columns, respelled values' --date 2024-07-03T10:00:00Z --author 'Alice Adams <alice@example.com>'
# step 13: checkout main
"$DOLT" checkout main
# step 14: update cities
"$DOLT" sql <<'DOLT_SQL_9'
UPDATE `cities` SET `id` = 1, `city` = 'PARIS', `note` = 'a1' WHERE `id` = 1;
UPDATE `cities` SET `id` = 2, `city` = 'lima', `note` = 'b' WHERE `id` = 2;
UPDATE `cities` SET `id` = 3, `city` = 'ROME', `note` = 'c3' WHERE `id` = 3;
UPDATE `cities` SET `id` = 4, `city` = 'OSLO', `note` = 'd' WHERE `id` = 4;
UPDATE `cities` SET `id` = 6, `city` = 'Quito', `note` = 'f6' WHERE `id` = 6;
UPDATE `cities` SET `id` = 7, `city` = 'ærø', `note` = 'g' WHERE `id` = 7;
DOLT_SQL_9
# step 15: update names
"$DOLT" sql <<'DOLT_SQL_10'
UPDATE `names` SET `name` = 'Straße', `label` = 'RED', `score` = 10 WHERE `name` = 'Straße';
UPDATE `names` SET `name` = 'Müller', `label` = 'GREEN', `score` = 2 WHERE `name` = 'Müller';
UPDATE `names` SET `name` = 'café', `label` = 'blue', `score` = 30 WHERE `name` = 'café';
DOLT_SQL_10
# step 16: commit main: respelled values
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-07-04T10:00:00Z DOLT_COMMITTER_DATE=2024-07-04T10:00:00Z "$DOLT" commit -m 'main: respelled values' --date 2024-07-04T10:00:00Z --author 'Alice Adams <alice@example.com>'
# step 17: merge feature Merge branch 'feature'
DOLT_AUTHOR_DATE=2024-07-05T10:00:00Z DOLT_COMMITTER_DATE=2024-07-05T10:00:00Z "$DOLT" merge -m 'Merge branch '"'"'feature'"'"'' --author 'Alice Adams <alice@example.com>' feature
# step 18: branch other
"$DOLT" branch other main
# step 19: alter_table cities
"$DOLT" sql <<'DOLT_SQL_11'
ALTER TABLE cities ADD COLUMN area INT;
DOLT_SQL_11
# step 20: update cities
"$DOLT" sql <<'DOLT_SQL_12'
UPDATE `cities` SET `id` = 3, `city` = 'rome', `area` = 3 WHERE `id` = 3;
UPDATE `cities` SET `id` = 5, `city` = 'BONN', `area` = 5 WHERE `id` = 5;
DOLT_SQL_12
# step 21: commit main: another column, respelled again
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-07-06T10:00:00Z DOLT_COMMITTER_DATE=2024-07-06T10:00:00Z "$DOLT" commit -m 'main: another column, respelled again' --date 2024-07-06T10:00:00Z --author 'Alice Adams <alice@example.com>'
# step 22: checkout other
"$DOLT" checkout other
# step 23: update cities
"$DOLT" sql <<'DOLT_SQL_13'
UPDATE `cities` SET `id` = 3, `city` = 'Rome', `note` = 'c4' WHERE `id` = 3;
UPDATE `cities` SET `id` = 5, `city` = 'Köln', `note` = 'e5' WHERE `id` = 5;
UPDATE `cities` SET `id` = 7, `city` = 'ÆRØ', `note` = 'g7' WHERE `id` = 7;
DOLT_SQL_13
# step 24: commit other: respelled and changed cities
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-07-07T10:00:00Z DOLT_COMMITTER_DATE=2024-07-07T10:00:00Z "$DOLT" commit -m 'other: respelled and changed cities' --date 2024-07-07T10:00:00Z --author 'Alice Adams <alice@example.com>'
# step 25: checkout main
"$DOLT" checkout main
# step 26: merge other Merge branch 'other'
DOLT_AUTHOR_DATE=2024-07-08T10:00:00Z DOLT_COMMITTER_DATE=2024-07-08T10:00:00Z "$DOLT" merge -m 'Merge branch '"'"'other'"'"'' --author 'Alice Adams <alice@example.com>' other
"$DOLT" sql -r csv -q "select name, hash from dolt_branches order by name"
"$DOLT" sql -r csv -q "select tag_name, tag_hash from dolt_tags order by tag_name"
