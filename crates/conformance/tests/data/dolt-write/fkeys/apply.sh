#!/usr/bin/env bash
# Replays scenario 'fkeys' with the dolt CLI (written by dolt_scenario.py from ops.jsonl).
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
DOLT_AUTHOR_DATE=2024-05-01T00:00:00Z DOLT_COMMITTER_DATE=2024-05-01T00:00:00Z "$DOLT" init --initial-branch main --date 2024-05-01T00:00:00Z
# dolt init stores time.Now() as the committer timestamp even with --date; amending the root commit with the pinned dates makes it deterministic
DOLT_AUTHOR_DATE=2024-05-01T00:00:00Z DOLT_COMMITTER_DATE=2024-05-01T00:00:00Z "$DOLT" commit --amend -m 'Initialize data repository' --date 2024-05-01T00:00:00Z
# step 1: create_table authors
"$DOLT" sql <<'DOLT_SQL_1'
CREATE TABLE authors (id INT NOT NULL PRIMARY KEY, name VARCHAR(40) NOT NULL, born YEAR);
DOLT_SQL_1
# step 2: create_table books
"$DOLT" sql <<'DOLT_SQL_2'
CREATE TABLE books (id INT NOT NULL PRIMARY KEY, author_id INT, title VARCHAR(60) NOT NULL, CONSTRAINT fk_author FOREIGN KEY (author_id) REFERENCES authors(id) ON DELETE CASCADE);
DOLT_SQL_2
# step 3: create_table reviews
"$DOLT" sql <<'DOLT_SQL_3'
CREATE TABLE reviews (id INT NOT NULL PRIMARY KEY, book_id INT, stars TINYINT, note VARCHAR(40), FOREIGN KEY (book_id) REFERENCES books(id) ON DELETE SET NULL, CONSTRAINT chk_stars CHECK (stars BETWEEN 1 AND 5));
DOLT_SQL_3
# step 4: create_table regions
"$DOLT" sql <<'DOLT_SQL_4'
CREATE TABLE regions (id INT NOT NULL PRIMARY KEY, country CHAR(2) NOT NULL, code VARCHAR(8) NOT NULL, name VARCHAR(30), UNIQUE KEY uq_cc (country, code));
DOLT_SQL_4
# step 5: create_table shops
"$DOLT" sql <<'DOLT_SQL_5'
CREATE TABLE shops (id INT NOT NULL PRIMARY KEY, country CHAR(2), region VARCHAR(8), name VARCHAR(30), KEY idx_name (name(4)), CONSTRAINT fk_region FOREIGN KEY (country, region) REFERENCES regions (country, code) ON UPDATE CASCADE ON DELETE RESTRICT);
DOLT_SQL_5
# step 6: create_table staff
"$DOLT" sql <<'DOLT_SQL_6'
CREATE TABLE staff (id INT NOT NULL PRIMARY KEY, boss_id INT, name VARCHAR(30), badge INT GENERATED ALWAYS AS ((id * 10)) STORED, FOREIGN KEY (boss_id) REFERENCES staff(id) ON DELETE SET NULL);
DOLT_SQL_6
# step 7: create_table book_tags
"$DOLT" sql <<'DOLT_SQL_7'
CREATE TABLE book_tags (book_id INT, tag VARCHAR(12), FOREIGN KEY (book_id) REFERENCES books(id) ON DELETE CASCADE ON UPDATE NO ACTION);
DOLT_SQL_7
# step 8: insert authors
"$DOLT" sql <<'DOLT_SQL_8'
INSERT INTO `authors` (`id`, `name`, `born`) VALUES
(1, 'Ada', '1950'),
(2, 'Brontë', '1963'),
(3, 'Cervantes', '1976'),
(4, 'Dumas', '1989'),
(5, 'Eco', '2002'),
(6, 'Flaubert', '2015'),
(7, 'Goethe', '2028'),
(8, 'Hugo', '2041');
DOLT_SQL_8
# step 9: insert books
"$DOLT" sql <<'DOLT_SQL_9'
INSERT INTO `books` (`id`, `author_id`, `title`) VALUES
(1, 2, 'Book 1'),
(2, 3, 'Book 2'),
(3, 4, 'Book 3'),
(4, 5, 'Book 4'),
(5, 6, 'Book 5'),
(6, 7, 'Book 6'),
(7, NULL, 'Book 7'),
(8, 1, 'Book 8'),
(9, 2, 'Book 9'),
(10, 3, 'Book 10'),
(11, 4, 'Book 11'),
(12, 5, 'Book 12'),
(13, 6, 'Book 13'),
(14, NULL, 'Book 14'),
(15, 8, 'Book 15'),
(16, 1, 'Book 16'),
(17, 2, 'Book 17'),
(18, 3, 'Book 18'),
(19, 4, 'Book 19'),
(20, 5, 'Book 20'),
(21, NULL, 'Book 21'),
(22, 7, 'Book 22'),
(23, 8, 'Book 23'),
(24, 1, 'Book 24'),
(25, 2, 'Book 25'),
(26, 3, 'Book 26'),
(27, 4, 'Book 27'),
(28, NULL, 'Book 28'),
(29, 6, 'Book 29'),
(30, 7, 'Book 30'),
(31, 8, 'Book 31'),
(32, 1, 'Book 32'),
(33, 2, 'Book 33'),
(34, 3, 'Book 34'),
(35, NULL, 'Book 35'),
(36, 5, 'Book 36'),
(37, 6, 'Book 37'),
(38, 7, 'Book 38'),
(39, 8, 'Book 39'),
(40, 1, 'Book 40');
DOLT_SQL_9
# step 10: insert reviews
"$DOLT" sql <<'DOLT_SQL_10'
INSERT INTO `reviews` (`id`, `book_id`, `stars`, `note`) VALUES
(1, 2, 2, 'note 1'),
(2, 3, 3, 'note 2'),
(3, 4, 4, NULL),
(4, 5, 5, 'note 4'),
(5, 6, 1, 'note 5'),
(6, 7, 2, NULL),
(7, 8, 3, 'note 7'),
(8, 9, 4, 'note 8'),
(9, 10, 5, NULL),
(10, 11, 1, 'note 10'),
(11, 12, 2, 'note 11'),
(12, 13, 3, NULL),
(13, 14, 4, 'note 13'),
(14, 15, 5, 'note 14'),
(15, 16, 1, NULL),
(16, 17, 2, 'note 16'),
(17, 18, 3, 'note 17'),
(18, 19, 4, NULL),
(19, 20, 5, 'note 19'),
(20, 21, 1, 'note 20'),
(21, 22, 2, NULL),
(22, 23, 3, 'note 22'),
(23, 24, 4, 'note 23'),
(24, 25, 5, NULL),
(25, 26, 1, 'note 25'),
(26, 27, 2, 'note 26'),
(27, 28, 3, NULL),
(28, 29, 4, 'note 28'),
(29, 30, 5, 'note 29'),
(30, 31, 1, NULL),
(31, 32, 2, 'note 31'),
(32, 33, 3, 'note 32'),
(33, 34, 4, NULL),
(34, 35, 5, 'note 34'),
(35, 36, 1, 'note 35'),
(36, 37, 2, NULL),
(37, 38, 3, 'note 37'),
(38, 39, 4, 'note 38'),
(39, 40, 5, NULL),
(40, 1, 1, 'note 40'),
(41, 2, 2, 'note 41'),
(42, 3, 3, NULL),
(43, 4, 4, 'note 43'),
(44, 5, 5, 'note 44'),
(45, 6, 1, NULL),
(46, 7, 2, 'note 46'),
(47, 8, 3, 'note 47'),
(48, 9, 4, NULL),
(49, 10, 5, 'note 49'),
(50, 11, 1, 'note 50'),
(51, 12, 2, NULL),
(52, 13, 3, 'note 52'),
(53, 14, 4, 'note 53'),
(54, 15, 5, NULL),
(55, 16, 1, 'note 55'),
(56, 17, 2, 'note 56'),
(57, 18, 3, NULL),
(58, 19, 4, 'note 58'),
(59, 20, 5, 'note 59'),
(60, 21, 1, NULL);
DOLT_SQL_10
# step 11: insert regions
"$DOLT" sql <<'DOLT_SQL_11'
INSERT INTO `regions` (`id`, `country`, `code`, `name`) VALUES
(1, 'de', 'BY', 'de-BY'),
(2, 'de', 'BE', 'de-BE'),
(3, 'fr', 'IDF', 'fr-IDF'),
(4, 'fr', 'PAC', 'fr-PAC'),
(5, 'es', 'MD', 'es-MD'),
(6, 'es', 'CT', 'es-CT'),
(7, 'it', 'LZ', 'Lazio');
DOLT_SQL_11
# step 12: insert shops
"$DOLT" sql <<'DOLT_SQL_12'
INSERT INTO `shops` (`id`, `country`, `region`, `name`) VALUES
(1, 'fr', 'PAC', 'Shop 1'),
(2, 'es', 'MD', 'Shop 2'),
(3, 'de', 'BE', 'Shop 3'),
(4, 'fr', 'IDF', 'Shop 4'),
(5, 'es', 'CT', 'Shop 5'),
(6, 'de', 'BY', 'Shop 6'),
(7, 'fr', 'PAC', 'Shop 7'),
(8, 'es', 'MD', 'Shop 8'),
(9, 'de', 'BE', 'Shop 9'),
(10, 'fr', 'IDF', 'Shop 10'),
(11, 'es', 'CT', 'Shop 11'),
(12, 'de', 'BY', 'Shop 12'),
(13, 'fr', 'PAC', 'Shop 13'),
(14, 'es', 'MD', 'Shop 14'),
(15, 'de', 'BE', 'Shop 15'),
(16, 'fr', 'IDF', 'Shop 16'),
(17, 'es', 'CT', 'Shop 17'),
(18, 'de', 'BY', 'Shop 18'),
(19, 'fr', 'PAC', 'Shop 19'),
(20, 'es', 'MD', 'Shop 20'),
(21, 'de', 'BE', 'Shop 21'),
(22, 'fr', 'IDF', 'Shop 22'),
(23, 'es', 'CT', 'Shop 23'),
(24, 'de', 'BY', 'Shop 24'),
(25, NULL, NULL, 'Nowhere'),
(26, 'de', NULL, 'Half');
DOLT_SQL_12
# step 13: insert staff
"$DOLT" sql <<'DOLT_SQL_13'
INSERT INTO `staff` (`id`, `boss_id`, `name`) VALUES
(1, NULL, 'Chief'),
(2, 1, 'Vice'),
(3, 1, 'Vice two'),
(4, 2, 'Worker 4'),
(5, 3, 'Worker 5'),
(6, 2, 'Worker 6'),
(7, 3, 'Worker 7'),
(8, 2, 'Worker 8'),
(9, 3, 'Worker 9'),
(10, 2, 'Worker 10'),
(11, 3, 'Worker 11'),
(12, 2, 'Worker 12'),
(13, 3, 'Worker 13'),
(14, 2, 'Worker 14'),
(15, 3, 'Worker 15');
DOLT_SQL_13
# step 14: insert book_tags
"$DOLT" sql <<'DOLT_SQL_14'
INSERT INTO `book_tags` (`book_id`, `tag`) VALUES
(1, 'old'),
(2, 'new'),
(3, 'classic'),
(4, 'rare'),
(5, 'old'),
(6, 'new'),
(7, 'classic'),
(8, 'rare'),
(9, 'old'),
(10, 'new'),
(11, 'classic'),
(12, 'rare'),
(13, 'old'),
(14, 'new'),
(15, 'classic'),
(16, 'rare'),
(17, 'old'),
(18, 'new'),
(19, 'classic'),
(20, 'rare'),
(21, 'old'),
(22, 'new'),
(23, 'classic'),
(24, 'rare'),
(25, 'old'),
(26, 'new'),
(27, 'classic'),
(28, 'rare'),
(29, 'old'),
(30, 'new'),
(31, 'classic'),
(32, 'rare'),
(33, 'old'),
(34, 'new'),
(35, 'classic'),
(36, 'rare'),
(37, 'old'),
(38, 'new'),
(39, 'classic'),
(40, 'rare'),
(1, 'old'),
(2, 'new'),
(3, 'classic'),
(4, 'rare'),
(5, 'old'),
(6, 'new'),
(7, 'classic'),
(8, 'rare'),
(9, 'old'),
(10, 'new'),
(1, 'old'),
(1, 'old');
DOLT_SQL_14
# step 15: commit Authors, books, reviews, regions, shops, staff
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-05-02T10:00:00Z DOLT_COMMITTER_DATE=2024-05-02T10:00:00Z "$DOLT" commit -m 'Authors, books, reviews, regions, shops, staff' --date 2024-05-02T10:00:00Z --author 'Alice Adams <alice@example.com>'
# step 16: delete authors
"$DOLT" sql <<'DOLT_SQL_15'
DELETE FROM `authors` WHERE `id` = 3;
DOLT_SQL_15
# step 17: update regions
"$DOLT" sql <<'DOLT_SQL_16'
UPDATE `regions` SET `id` = 1, `code` = 'BAY', `name` = 'Bavaria' WHERE `id` = 1;
UPDATE `regions` SET `id` = 4, `code` = 'PACA', `name` = 'Provence' WHERE `id` = 4;
DOLT_SQL_16
# step 18: delete staff
"$DOLT" sql <<'DOLT_SQL_17'
DELETE FROM `staff` WHERE `id` = 2;
DOLT_SQL_17
# step 19: delete books
"$DOLT" sql <<'DOLT_SQL_18'
DELETE FROM `books` WHERE `id` = 1;
DELETE FROM `books` WHERE `id` = 2;
DOLT_SQL_18
# step 20: update reviews
"$DOLT" sql <<'DOLT_SQL_19'
UPDATE `reviews` SET `id` = 5, `book_id` = NULL, `stars` = 2 WHERE `id` = 5;
UPDATE `reviews` SET `id` = 6, `book_id` = 12, `stars` = 5 WHERE `id` = 6;
DOLT_SQL_19
# step 21: delete book_tags
"$DOLT" sql <<'DOLT_SQL_20'
DELETE FROM `book_tags` WHERE `book_id` <=> 5 AND `tag` <=> 'old' LIMIT 1;
DOLT_SQL_20
# step 22: commit Remove an author, rename regions, a boss leaves
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-05-03T10:00:00Z DOLT_COMMITTER_DATE=2024-05-03T10:00:00Z "$DOLT" commit -m 'Remove an author, rename regions, a boss leaves' --date 2024-05-03T10:00:00Z --author 'Alice Adams <alice@example.com>'
# step 23: branch feature
"$DOLT" branch feature main
# step 24: checkout feature
"$DOLT" checkout feature
# step 25: insert books
"$DOLT" sql <<'DOLT_SQL_21'
INSERT INTO `books` (`id`, `author_id`, `title`) VALUES
(41, 5, 'New book 41'),
(42, 6, 'New book 42'),
(43, 7, 'New book 43'),
(44, 4, 'New book 44'),
(45, 5, 'New book 45'),
(46, 6, 'New book 46');
DOLT_SQL_21
# step 26: insert reviews
"$DOLT" sql <<'DOLT_SQL_22'
INSERT INTO `reviews` (`id`, `book_id`, `stars`, `note`) VALUES
(61, 41, 4, 'feature'),
(62, 42, 4, 'feature'),
(63, 43, 4, 'feature'),
(64, 44, 4, 'feature'),
(65, 45, 4, 'feature');
DOLT_SQL_22
# step 27: update shops
"$DOLT" sql <<'DOLT_SQL_23'
UPDATE `shops` SET `id` = 26, `country` = 'de', `region` = 'BAY' WHERE `id` = 26;
UPDATE `shops` SET `id` = 25, `country` = 'es', `region` = 'MD' WHERE `id` = 25;
DOLT_SQL_23
# step 28: commit feature: new books and reviews
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-05-04T10:00:00Z DOLT_COMMITTER_DATE=2024-05-04T10:00:00Z "$DOLT" commit -m 'feature: new books and reviews' --date 2024-05-04T10:00:00Z --author 'Bob Brown <bob@example.org>'
# step 29: checkout main
"$DOLT" checkout main
# step 30: delete authors
"$DOLT" sql <<'DOLT_SQL_24'
DELETE FROM `authors` WHERE `id` = 8;
DOLT_SQL_24
# step 31: insert staff
"$DOLT" sql <<'DOLT_SQL_25'
INSERT INTO `staff` (`id`, `boss_id`, `name`) VALUES
(16, 3, 'Late hire'),
(17, 16, 'Intern');
DOLT_SQL_25
# step 32: update authors
"$DOLT" sql <<'DOLT_SQL_26'
UPDATE `authors` SET `id` = 1, `name` = 'Ada Lovelace' WHERE `id` = 1;
DOLT_SQL_26
# step 33: commit main: drop an author, hire
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-05-05T10:00:00Z DOLT_COMMITTER_DATE=2024-05-05T10:00:00Z "$DOLT" commit -m 'main: drop an author, hire' --date 2024-05-05T10:00:00Z --author 'Alice Adams <alice@example.com>'
# step 34: merge feature Merge branch 'feature'
DOLT_AUTHOR_DATE=2024-05-06T10:00:00Z DOLT_COMMITTER_DATE=2024-05-06T10:00:00Z "$DOLT" merge -m 'Merge branch '"'"'feature'"'"'' --author 'Alice Adams <alice@example.com>' feature
# step 35: delete regions
"$DOLT" sql <<'DOLT_SQL_27'
DELETE FROM `regions` WHERE `id` = 7;
DOLT_SQL_27
# step 36: commit main: after the merge
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-05-07T10:00:00Z DOLT_COMMITTER_DATE=2024-05-07T10:00:00Z "$DOLT" commit -m 'main: after the merge' --date 2024-05-07T10:00:00Z --author 'Alice Adams <alice@example.com>'
"$DOLT" sql -r csv -q "select name, hash from dolt_branches order by name"
"$DOLT" sql -r csv -q "select tag_name, tag_hash from dolt_tags order by tag_name"
