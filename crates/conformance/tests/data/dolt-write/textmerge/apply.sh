#!/usr/bin/env bash
# Replays scenario 'out2' with the dolt CLI (written by dolt_scenario.py from ops.jsonl).
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
# step 1: create_table notes
"$DOLT" sql <<'DOLT_SQL_1'
CREATE TABLE notes (id INT NOT NULL PRIMARY KEY, title VARCHAR(30), body VARCHAR(200), n INT, KEY idx_n (n));
DOLT_SQL_1
# step 2: create_table tags
"$DOLT" sql <<'DOLT_SQL_2'
CREATE TABLE tags (id INT NOT NULL PRIMARY KEY, label VARCHAR(16) NOT NULL, code VARBINARY(8));
DOLT_SQL_2
# step 3: insert notes
"$DOLT" sql <<'DOLT_SQL_3'
INSERT INTO `notes` (`id`, `title`, `body`, `n`) VALUES
(1, 'Title 1', 'Body of note 1 Body of note 1', 1),
(2, 'Title 2', 'Body of note 2 Body of note 2 Body of note 2', 2),
(3, 'Title 3', 'Body of note 3 Body of note 3 Body of note 3 Body of note 3', 3),
(4, 'Title 4', 'Body of note 4', 4),
(5, 'Title 5', 'Body of note 5 Body of note 5', 5),
(6, 'Title 6', NULL, 6),
(7, 'Title 7', 'Body of note 7 Body of note 7 Body of note 7 Body of note 7', 7),
(8, 'Title 8', 'Body of note 8', 8),
(9, 'Title 9', 'Body of note 9 Body of note 9', 0),
(10, 'Title 10', 'Body of note 10 Body of note 10 Body of note 10', 1),
(11, 'Title 11', 'Body of note 11 Body of note 11 Body of note 11 Body of note 11', 2),
(12, 'Title 12', NULL, 3),
(13, 'Title 13', 'Body of note 13 Body of note 13', 4),
(14, 'Title 14', 'Body of note 14 Body of note 14 Body of note 14', 5),
(15, 'Title 15', 'Body of note 15 Body of note 15 Body of note 15 Body of note 15', 6),
(16, 'Title 16', 'Body of note 16', 7),
(17, 'Title 17', 'Body of note 17 Body of note 17', 8),
(18, 'Title 18', NULL, 0),
(19, 'Title 19', 'Body of note 19 Body of note 19 Body of note 19 Body of note 19', 1),
(20, 'Title 20', 'Body of note 20', 2),
(21, 'Title 21', 'Body of note 21 Body of note 21', 3),
(22, 'Title 22', 'Body of note 22 Body of note 22 Body of note 22', 4),
(23, 'Title 23', 'Body of note 23 Body of note 23 Body of note 23 Body of note 23', 5),
(24, 'Title 24', NULL, 6),
(25, 'Title 25', 'Body of note 25 Body of note 25', 7),
(26, 'Title 26', 'Body of note 26 Body of note 26 Body of note 26', 8),
(27, 'Title 27', 'Body of note 27 Body of note 27 Body of note 27 Body of note 27', 0),
(28, 'Title 28', 'Body of note 28', 1),
(29, 'Title 29', 'Body of note 29 Body of note 29', 2),
(30, 'Title 30', NULL, 3),
(31, 'Title 31', 'Body of note 31 Body of note 31 Body of note 31 Body of note 31', 4),
(32, 'Title 32', 'Body of note 32', 5),
(33, 'Title 33', 'Body of note 33 Body of note 33', 6),
(34, 'Title 34', 'Body of note 34 Body of note 34 Body of note 34', 7),
(35, 'Title 35', 'Body of note 35 Body of note 35 Body of note 35 Body of note 35', 8),
(36, 'Title 36', NULL, 0),
(37, 'Title 37', 'Body of note 37 Body of note 37', 1),
(38, 'Title 38', 'Body of note 38 Body of note 38 Body of note 38', 2),
(39, 'Title 39', 'Body of note 39 Body of note 39 Body of note 39 Body of note 39', 3),
(40, 'Title 40', 'Body of note 40', 4),
(41, 'Title 41', 'Body of note 41 Body of note 41', 5),
(42, 'Title 42', NULL, 6),
(43, 'Title 43', 'Body of note 43 Body of note 43 Body of note 43 Body of note 43', 7),
(44, 'Title 44', 'Body of note 44', 8),
(45, 'Title 45', 'Body of note 45 Body of note 45', 0),
(46, 'Title 46', 'Body of note 46 Body of note 46 Body of note 46', 1),
(47, 'Title 47', 'Body of note 47 Body of note 47 Body of note 47 Body of note 47', 2),
(48, 'Title 48', NULL, 3),
(49, 'Title 49', 'Body of note 49 Body of note 49', 4),
(50, 'Title 50', 'Body of note 50 Body of note 50 Body of note 50', 5),
(51, 'Title 51', 'Body of note 51 Body of note 51 Body of note 51 Body of note 51', 6),
(52, 'Title 52', 'Body of note 52', 7),
(53, 'Title 53', 'Body of note 53 Body of note 53', 8),
(54, 'Title 54', NULL, 0),
(55, 'Title 55', 'Body of note 55 Body of note 55 Body of note 55 Body of note 55', 1),
(56, 'Title 56', 'Body of note 56', 2),
(57, 'Title 57', 'Body of note 57 Body of note 57', 3),
(58, 'Title 58', 'Body of note 58 Body of note 58 Body of note 58', 4),
(59, 'Title 59', 'Body of note 59 Body of note 59 Body of note 59 Body of note 59', 5),
(60, 'Title 60', NULL, 6);
DOLT_SQL_3
# step 4: insert tags
"$DOLT" sql <<'DOLT_SQL_4'
INSERT INTO `tags` (`id`, `label`, `code`) VALUES
(1, 'tag1', X'363331'),
(2, 'tag2', X'363332'),
(3, 'tag3', X'363333'),
(4, 'tag4', X'363334'),
(5, 'tag5', X'363335'),
(6, 'tag6', X'363336'),
(7, 'tag7', X'363337'),
(8, 'tag8', X'363338'),
(9, 'tag9', X'363339'),
(10, 'tag10', X'6310'),
(11, 'tag11', X'6311'),
(12, 'tag12', X'6312'),
(13, 'tag13', X'6313'),
(14, 'tag14', X'6314'),
(15, 'tag15', X'6315'),
(16, 'tag16', X'6316'),
(17, 'tag17', X'6317'),
(18, 'tag18', X'6318'),
(19, 'tag19', X'6319'),
(20, 'tag20', X'6320');
DOLT_SQL_4
# step 5: commit Notes and tags
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-08-02T09:00:00Z DOLT_COMMITTER_DATE=2024-08-02T09:00:00Z "$DOLT" commit -m 'Notes and tags' --date 2024-08-02T09:00:00Z --author 'Alice Adams <alice@example.com>'
# step 6: branch feature
"$DOLT" branch feature main
# step 7: checkout feature
"$DOLT" checkout feature
# step 8: alter_table notes
"$DOLT" sql <<'DOLT_SQL_5'
ALTER TABLE notes MODIFY COLUMN body TEXT;
DOLT_SQL_5
# step 9: insert notes
"$DOLT" sql <<'DOLT_SQL_6'
INSERT INTO `notes` (`id`, `title`, `body`, `n`) VALUES
(61, 'Long', 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', 1),
(62, 'Short', 'y', 2);
DOLT_SQL_6
# step 10: update notes
"$DOLT" sql <<'DOLT_SQL_7'
UPDATE `notes` SET `id` = 5, `body` = 'Edited on feature' WHERE `id` = 5;
DOLT_SQL_7
# step 11: commit feature: body becomes TEXT
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-08-03T09:00:00Z DOLT_COMMITTER_DATE=2024-08-03T09:00:00Z "$DOLT" commit -m 'feature: body becomes TEXT' --date 2024-08-03T09:00:00Z --author 'Bob Brown <bob@example.org>'
# step 12: checkout main
"$DOLT" checkout main
# step 13: alter_table tags
"$DOLT" sql <<'DOLT_SQL_8'
ALTER TABLE tags MODIFY COLUMN label TEXT NOT NULL;
DOLT_SQL_8
# step 14: alter_table tags
"$DOLT" sql <<'DOLT_SQL_9'
ALTER TABLE tags MODIFY COLUMN code BLOB;
DOLT_SQL_9
# step 15: insert notes
"$DOLT" sql <<'DOLT_SQL_10'
INSERT INTO `notes` (`id`, `title`, `body`, `n`) VALUES
(70, 'Main', 'Main body', 3);
DOLT_SQL_10
# step 16: update notes
"$DOLT" sql <<'DOLT_SQL_11'
UPDATE `notes` SET `id` = 7, `title` = 'Retitled on main' WHERE `id` = 7;
DOLT_SQL_11
# step 17: commit main: tags label and code out of line, a note
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-08-04T09:00:00Z DOLT_COMMITTER_DATE=2024-08-04T09:00:00Z "$DOLT" commit -m 'main: tags label and code out of line, a note' --date 2024-08-04T09:00:00Z --author 'Alice Adams <alice@example.com>'
# step 18: branch side
"$DOLT" branch side main
# step 19: checkout side
"$DOLT" checkout side
# step 20: insert tags
"$DOLT" sql <<'DOLT_SQL_12'
INSERT INTO `tags` (`id`, `label`, `code`) VALUES
(30, 'side tag', X'7333');
DOLT_SQL_12
# step 21: update tags
"$DOLT" sql <<'DOLT_SQL_13'
UPDATE `tags` SET `id` = 3, `label` = 'relabelled' WHERE `id` = 3;
DOLT_SQL_13
# step 22: commit side: tags
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-08-05T09:00:00Z DOLT_COMMITTER_DATE=2024-08-05T09:00:00Z "$DOLT" commit -m 'side: tags' --date 2024-08-05T09:00:00Z --author 'Bob Brown <bob@example.org>'
# step 23: checkout main
"$DOLT" checkout main
# step 24: merge feature Merge branch 'feature'
DOLT_AUTHOR_DATE=2024-08-06T09:00:00Z DOLT_COMMITTER_DATE=2024-08-06T09:00:00Z "$DOLT" merge -m 'Merge branch '"'"'feature'"'"'' --author 'Alice Adams <alice@example.com>' feature
# step 25: checkout feature
"$DOLT" checkout feature
# step 26: insert tags
"$DOLT" sql <<'DOLT_SQL_14'
INSERT INTO `tags` (`id`, `label`, `code`) VALUES
(40, 'feature tag', X'6634');
DOLT_SQL_14
# step 27: commit feature: a tag while main moved tags out of line
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-08-07T09:00:00Z DOLT_COMMITTER_DATE=2024-08-07T09:00:00Z "$DOLT" commit -m 'feature: a tag while main moved tags out of line' --date 2024-08-07T09:00:00Z --author 'Bob Brown <bob@example.org>'
# step 28: checkout main
"$DOLT" checkout main
# step 29: merge feature Merge branch 'feature' again
DOLT_AUTHOR_DATE=2024-08-08T09:00:00Z DOLT_COMMITTER_DATE=2024-08-08T09:00:00Z "$DOLT" merge -m 'Merge branch '"'"'feature'"'"' again' --author 'Alice Adams <alice@example.com>' feature
"$DOLT" sql -r csv -q "select name, hash from dolt_branches order by name"
"$DOLT" sql -r csv -q "select tag_name, tag_hash from dolt_tags order by tag_name"
