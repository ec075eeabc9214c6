#!/usr/bin/env bash
# Replays scenario 'collated' with the dolt CLI (written by dolt_scenario.py from ops.jsonl).
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
# step 1: create_table people
"$DOLT" sql <<'DOLT_SQL_1'
CREATE TABLE people (name VARCHAR(40) COLLATE utf8mb4_0900_ai_ci NOT NULL PRIMARY KEY, city VARCHAR(30) COLLATE utf8mb4_0900_ai_ci, note VARCHAR(20), score INT, KEY idx_city (city));
DOLT_SQL_1
# step 2: create_table tags
"$DOLT" sql <<'DOLT_SQL_2'
CREATE TABLE tags (id INT NOT NULL PRIMARY KEY, label VARCHAR(20) COLLATE utf8mb4_0900_ai_ci, kind VARCHAR(10) COLLATE utf8mb4_general_ci, UNIQUE KEY uq_label (label));
DOLT_SQL_2
# step 3: insert people
"$DOLT" sql <<'DOLT_SQL_3'
INSERT INTO `people` (`name`, `city`, `note`, `score`) VALUES
('Straße', 'Berlin', 'a', 1),
('Müller', 'Bonn', 'b', 2),
('café', 'Paris', 'c', 3),
('Zoë', 'Rome', 'd', 4),
('Ærø', 'Oslo', 'e', 5),
('x1', 'Lima', 'f', 6),
('Øst', 'Oslo', 'g', 7),
('Ångström', 'Uppsala', 'h', 8),
('naïve', 'Nice', 'i', 9),
('résumé', 'Lyon', 'j', 10),
('person 11', 'Bern', NULL, 11),
('person 12', 'Quito', NULL, 12),
('person 13', 'Perth', NULL, 13),
('person 14', 'Bern', NULL, 14),
('person 15', 'Quito', NULL, 15),
('person 16', 'Perth', NULL, 16),
('person 17', 'Bern', NULL, 17),
('person 18', 'Quito', NULL, 18),
('person 19', 'Perth', NULL, 19),
('person 20', 'Bern', NULL, 20),
('person 21', 'Quito', NULL, 21),
('person 22', 'Perth', NULL, 22),
('person 23', 'Bern', NULL, 23),
('person 24', 'Quito', NULL, 24),
('person 25', 'Perth', NULL, 25),
('person 26', 'Bern', NULL, 26),
('person 27', 'Quito', NULL, 27),
('person 28', 'Perth', NULL, 28),
('person 29', 'Bern', NULL, 29),
('person 30', 'Quito', NULL, 30);
DOLT_SQL_3
# step 4: insert tags
"$DOLT" sql <<'DOLT_SQL_4'
INSERT INTO `tags` (`id`, `label`, `kind`) VALUES
(1, 'Red', 'Color'),
(2, 'green', 'color'),
(3, 'BLUE', 'COLOR'),
(4, 'Größe', 'size'),
(5, 'ångle', 'shape'),
(6, 'Émile', 'name');
DOLT_SQL_4
# step 5: commit People and tags
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-07-02T10:00:00Z DOLT_COMMITTER_DATE=2024-07-02T10:00:00Z "$DOLT" commit -m 'People and tags' --date 2024-07-02T10:00:00Z --author 'Alice Adams <alice@example.com>'
# step 6: branch feature
"$DOLT" branch feature main
# step 7: checkout feature
"$DOLT" checkout feature
# step 8: update people
"$DOLT" sql <<'DOLT_SQL_5'
UPDATE `people` SET `name` = 'straße', `score` = 11 WHERE `name` = 'straße';
UPDATE `people` SET `name` = 'zoë', `score` = 40 WHERE `name` = 'zoë';
UPDATE `people` SET `name` = 'naïve', `score` = 90 WHERE `name` = 'naïve';
DOLT_SQL_5
# step 9: update people
"$DOLT" sql <<'DOLT_SQL_6'
UPDATE `people` SET `name` = 'café', `city` = 'paris', `note` = 'c2' WHERE `name` = 'café';
UPDATE `people` SET `name` = 'ÆRØ', `city` = 'Oslo', `note` = 'E' WHERE `name` = 'ÆRØ';
UPDATE `people` SET `name` = 'x1', `city` = 'lima', `note` = 'm' WHERE `name` = 'x1';
UPDATE `people` SET `name` = 'Øst', `city` = 'Oslo', `note` = 'g' WHERE `name` = 'Øst';
DOLT_SQL_6
# step 10: update people
"$DOLT" sql <<'DOLT_SQL_7'
UPDATE `people` SET `name` = 'Øst', `score` = 70 WHERE `name` = 'Øst';
DOLT_SQL_7
# step 11: update tags
"$DOLT" sql <<'DOLT_SQL_8'
UPDATE `tags` SET `id` = 1, `label` = 'red', `kind` = 'colour' WHERE `id` = 1;
UPDATE `tags` SET `id` = 3, `label` = 'Blue', `kind` = 'color' WHERE `id` = 3;
UPDATE `tags` SET `id` = 4, `label` = 'GRÖSSE', `kind` = 'size' WHERE `id` = 4;
DOLT_SQL_8
# step 12: commit feature: respelled keys and cities
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-07-03T10:00:00Z DOLT_COMMITTER_DATE=2024-07-03T10:00:00Z "$DOLT" commit -m 'feature: respelled keys and cities' --date 2024-07-03T10:00:00Z --author 'Bob Brown <bob@example.org>'
# step 13: checkout main
"$DOLT" checkout main
# step 14: update people
"$DOLT" sql <<'DOLT_SQL_9'
UPDATE `people` SET `name` = 'MÜLLER', `score` = 20 WHERE `name` = 'MÜLLER';
UPDATE `people` SET `name` = 'café', `score` = 30 WHERE `name` = 'café';
DOLT_SQL_9
# step 15: update people
"$DOLT" sql <<'DOLT_SQL_10'
UPDATE `people` SET `name` = 'café', `city` = 'PARIS' WHERE `name` = 'café';
DOLT_SQL_10
# step 16: update people
"$DOLT" sql <<'DOLT_SQL_11'
UPDATE `people` SET `name` = 'ZOË', `note` = 'dd' WHERE `name` = 'ZOË';
UPDATE `people` SET `name` = 'ærø', `note` = 'E' WHERE `name` = 'ærø';
UPDATE `people` SET `name` = 'ÅNGSTRÖM', `note` = 'H' WHERE `name` = 'ÅNGSTRÖM';
DOLT_SQL_11
# step 17: update people
"$DOLT" sql <<'DOLT_SQL_12'
UPDATE `people` SET `name` = 'x1', `city` = 'LIMA', `note` = 'm' WHERE `name` = 'x1';
UPDATE `people` SET `name` = 'Øst', `city` = 'OSLO', `note` = 'gg' WHERE `name` = 'Øst';
UPDATE `people` SET `name` = 'NAÏVE', `city` = 'NICE', `note` = 'ii' WHERE `name` = 'NAÏVE';
DOLT_SQL_12
# step 18: update tags
"$DOLT" sql <<'DOLT_SQL_13'
UPDATE `tags` SET `id` = 2, `label` = 'GREEN', `kind` = 'COLOR' WHERE `id` = 2;
UPDATE `tags` SET `id` = 3, `label` = 'blue', `kind` = 'Color' WHERE `id` = 3;
UPDATE `tags` SET `id` = 5, `label` = 'Ångle', `kind` = 'shape' WHERE `id` = 5;
DOLT_SQL_13
# step 19: commit main: respelled keys and cities
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-07-04T10:00:00Z DOLT_COMMITTER_DATE=2024-07-04T10:00:00Z "$DOLT" commit -m 'main: respelled keys and cities' --date 2024-07-04T10:00:00Z --author 'Alice Adams <alice@example.com>'
# step 20: merge feature Merge branch 'feature'
DOLT_AUTHOR_DATE=2024-07-05T10:00:00Z DOLT_COMMITTER_DATE=2024-07-05T10:00:00Z "$DOLT" merge -m 'Merge branch '"'"'feature'"'"'' --author 'Alice Adams <alice@example.com>' feature
# step 21: checkout feature
"$DOLT" checkout feature
# step 22: update people
"$DOLT" sql <<'DOLT_SQL_14'
UPDATE `people` SET `name` = 'RÉSUMÉ', `note` = 'J' WHERE `name` = 'RÉSUMÉ';
DOLT_SQL_14
# step 23: commit feature: one more respelling
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-07-06T10:00:00Z DOLT_COMMITTER_DATE=2024-07-06T10:00:00Z "$DOLT" commit -m 'feature: one more respelling' --date 2024-07-06T10:00:00Z --author 'Bob Brown <bob@example.org>'
# step 24: checkout main
"$DOLT" checkout main
# step 25: merge feature Merge branch 'feature' again
DOLT_AUTHOR_DATE=2024-07-07T10:00:00Z DOLT_COMMITTER_DATE=2024-07-07T10:00:00Z "$DOLT" merge -m 'Merge branch '"'"'feature'"'"' again' --author 'Alice Adams <alice@example.com>' feature
"$DOLT" sql -r csv -q "select name, hash from dolt_branches order by name"
"$DOLT" sql -r csv -q "select tag_name, tag_hash from dolt_tags order by tag_name"
