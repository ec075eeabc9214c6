#!/usr/bin/env bash
# Replays scenario 'out' with the dolt CLI (written by dolt_scenario.py from ops.jsonl).
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
# step 1: create_table customers
"$DOLT" sql <<'DOLT_SQL_1'
CREATE TABLE customers (id INT NOT NULL PRIMARY KEY, email VARCHAR(40) NOT NULL, region CHAR(2), UNIQUE KEY uq_email (email));
DOLT_SQL_1
# step 2: create_table products
"$DOLT" sql <<'DOLT_SQL_2'
CREATE TABLE products (id INT NOT NULL PRIMARY KEY, sku VARCHAR(12) NOT NULL, name VARCHAR(30), UNIQUE KEY uq_sku (sku));
DOLT_SQL_2
# step 3: create_table orders
"$DOLT" sql <<'DOLT_SQL_3'
CREATE TABLE orders (id INT NOT NULL PRIMARY KEY, customer_id INT, sku VARCHAR(12), qty INT, note VARCHAR(20));
DOLT_SQL_3
# step 4: create_table staff
"$DOLT" sql <<'DOLT_SQL_4'
CREATE TABLE staff (id INT NOT NULL PRIMARY KEY, boss INT, name VARCHAR(20));
DOLT_SQL_4
# step 5: insert customers
"$DOLT" sql <<'DOLT_SQL_5'
INSERT INTO `customers` (`id`, `email`, `region`) VALUES
(1, 'c1@example.com', 'fr'),
(2, 'c2@example.com', 'es'),
(3, 'c3@example.com', NULL),
(4, 'c4@example.com', 'de'),
(5, 'c5@example.com', 'fr'),
(6, 'c6@example.com', 'es'),
(7, 'c7@example.com', NULL),
(8, 'c8@example.com', 'de'),
(9, 'c9@example.com', 'fr'),
(10, 'c10@example.com', 'es'),
(11, 'c11@example.com', NULL),
(12, 'c12@example.com', 'de'),
(13, 'c13@example.com', 'fr'),
(14, 'c14@example.com', 'es'),
(15, 'c15@example.com', NULL),
(16, 'c16@example.com', 'de'),
(17, 'c17@example.com', 'fr'),
(18, 'c18@example.com', 'es'),
(19, 'c19@example.com', NULL),
(20, 'c20@example.com', 'de');
DOLT_SQL_5
# step 6: insert products
"$DOLT" sql <<'DOLT_SQL_6'
INSERT INTO `products` (`id`, `sku`, `name`) VALUES
(1, 'SKU-001', 'Product 1'),
(2, 'SKU-002', 'Product 2'),
(3, 'SKU-003', 'Product 3'),
(4, 'SKU-004', 'Product 4'),
(5, 'SKU-005', 'Product 5'),
(6, 'SKU-006', 'Product 6'),
(7, 'SKU-007', 'Product 7'),
(8, 'SKU-008', 'Product 8'),
(9, 'SKU-009', 'Product 9'),
(10, 'SKU-010', 'Product 10');
DOLT_SQL_6
# step 7: insert orders
"$DOLT" sql <<'DOLT_SQL_7'
INSERT INTO `orders` (`id`, `customer_id`, `sku`, `qty`, `note`) VALUES
(1, 2, 'SKU-002', 3, 'note 1'),
(2, 3, 'SKU-003', 6, 'note 2'),
(3, 4, 'SKU-004', 9, NULL),
(4, 5, 'SKU-005', 12, 'note 4'),
(5, 6, NULL, 15, 'note 5'),
(6, 7, 'SKU-007', 1, NULL),
(7, NULL, 'SKU-008', 4, 'note 7'),
(8, 9, 'SKU-009', 7, 'note 8'),
(9, 10, 'SKU-010', 10, NULL),
(10, 11, NULL, 13, 'note 10'),
(11, 12, 'SKU-002', 16, 'note 11'),
(12, 13, 'SKU-003', 2, NULL),
(13, 14, 'SKU-004', 5, 'note 13'),
(14, NULL, 'SKU-005', 8, 'note 14'),
(15, 16, NULL, 11, NULL),
(16, 17, 'SKU-007', 14, 'note 16'),
(17, 18, 'SKU-008', 0, 'note 17'),
(18, 19, 'SKU-009', 3, NULL),
(19, 20, 'SKU-010', 6, 'note 19'),
(20, 1, NULL, 9, 'note 20'),
(21, NULL, 'SKU-002', 12, NULL),
(22, 3, 'SKU-003', 15, 'note 22'),
(23, 4, 'SKU-004', 1, 'note 23'),
(24, 5, 'SKU-005', 4, NULL),
(25, 6, NULL, 7, 'note 25'),
(26, 7, 'SKU-007', 10, 'note 26'),
(27, 8, 'SKU-008', 13, NULL),
(28, NULL, 'SKU-009', 16, 'note 28'),
(29, 10, 'SKU-010', 2, 'note 29'),
(30, 11, NULL, 5, NULL),
(31, 12, 'SKU-002', 8, 'note 31'),
(32, 13, 'SKU-003', 11, 'note 32'),
(33, 14, 'SKU-004', 14, NULL),
(34, 15, 'SKU-005', 0, 'note 34'),
(35, NULL, NULL, 3, 'note 35'),
(36, 17, 'SKU-007', 6, NULL),
(37, 18, 'SKU-008', 9, 'note 37'),
(38, 19, 'SKU-009', 12, 'note 38'),
(39, 20, 'SKU-010', 15, NULL),
(40, 1, NULL, 1, 'note 40');
DOLT_SQL_7
# step 8: insert staff
"$DOLT" sql <<'DOLT_SQL_8'
INSERT INTO `staff` (`id`, `boss`, `name`) VALUES
(1, NULL, 'Chief'),
(2, 1, 'Staff 2'),
(3, 1, 'Staff 3'),
(4, 1, 'Staff 4'),
(5, 2, 'Staff 5'),
(6, 2, 'Staff 6'),
(7, 3, 'Staff 7'),
(8, 3, 'Staff 8'),
(9, 4, 'Staff 9'),
(10, 4, 'Staff 10'),
(11, 5, 'Staff 11'),
(12, 5, 'Staff 12');
DOLT_SQL_8
# step 9: commit Customers, products, orders, staff
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-07-02T09:00:00Z DOLT_COMMITTER_DATE=2024-07-02T09:00:00Z "$DOLT" commit -m 'Customers, products, orders, staff' --date 2024-07-02T09:00:00Z --author 'Alice Adams <alice@example.com>'
# step 10: alter_table orders
"$DOLT" sql <<'DOLT_SQL_9'
ALTER TABLE orders ADD FOREIGN KEY (customer_id) REFERENCES customers(id);
DOLT_SQL_9
# step 11: alter_table orders
"$DOLT" sql <<'DOLT_SQL_10'
ALTER TABLE orders ADD CONSTRAINT fk_sku FOREIGN KEY (sku) REFERENCES products(sku) ON DELETE SET NULL;
DOLT_SQL_10
# step 12: alter_table staff
"$DOLT" sql <<'DOLT_SQL_11'
ALTER TABLE staff ADD FOREIGN KEY (boss) REFERENCES staff(id) ON DELETE CASCADE;
DOLT_SQL_11
# step 13: commit Foreign keys added by ALTER TABLE
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-07-03T09:00:00Z DOLT_COMMITTER_DATE=2024-07-03T09:00:00Z "$DOLT" commit -m 'Foreign keys added by ALTER TABLE' --date 2024-07-03T09:00:00Z --author 'Alice Adams <alice@example.com>'
# step 14: alter_table orders
"$DOLT" sql <<'DOLT_SQL_12'
ALTER TABLE orders ADD COLUMN shipped DATE;
DOLT_SQL_12
# step 15: alter_table customers
"$DOLT" sql <<'DOLT_SQL_13'
ALTER TABLE customers ADD COLUMN vip TINYINT NOT NULL DEFAULT 0;
DOLT_SQL_13
# step 16: alter_table orders
"$DOLT" sql <<'DOLT_SQL_14'
ALTER TABLE orders DROP COLUMN note;
DOLT_SQL_14
# step 17: alter_table orders
"$DOLT" sql <<'DOLT_SQL_15'
ALTER TABLE orders RENAME COLUMN customer_id TO cust_id;
DOLT_SQL_15
# step 18: alter_table customers
"$DOLT" sql <<'DOLT_SQL_16'
ALTER TABLE customers RENAME COLUMN id TO cid;
DOLT_SQL_16
# step 19: alter_table orders
"$DOLT" sql <<'DOLT_SQL_17'
ALTER TABLE orders MODIFY COLUMN sku VARCHAR(20);
DOLT_SQL_17
# step 20: alter_table orders
"$DOLT" sql <<'DOLT_SQL_18'
ALTER TABLE orders ADD INDEX idx_qty (qty);
DOLT_SQL_18
# step 21: alter_table staff
"$DOLT" sql <<'DOLT_SQL_19'
ALTER TABLE staff ADD COLUMN title VARCHAR(10) DEFAULT 'staff' AFTER boss;
DOLT_SQL_19
# step 22: commit Columns added, dropped, renamed and widened on tables with foreign keys
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-07-04T09:00:00Z DOLT_COMMITTER_DATE=2024-07-04T09:00:00Z "$DOLT" commit -m 'Columns added, dropped, renamed and widened on tables with foreign keys' --date 2024-07-04T09:00:00Z --author 'Bob Brown <bob@example.org>'
# step 23: delete products
"$DOLT" sql <<'DOLT_SQL_20'
DELETE FROM `products` WHERE `id` = 3;
DOLT_SQL_20
# step 24: delete staff
"$DOLT" sql <<'DOLT_SQL_21'
DELETE FROM `staff` WHERE `id` = 2;
DOLT_SQL_21
# step 25: insert orders
"$DOLT" sql <<'DOLT_SQL_22'
INSERT INTO `orders` (`id`, `cust_id`, `sku`, `qty`, `shipped`) VALUES
(41, 5, 'SKU-004', 2, '2024-07-05'),
(42, NULL, 'SKU-010', 1, NULL);
DOLT_SQL_22
# step 26: commit A product and a manager go (SET NULL, CASCADE); new orders
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-07-05T09:00:00Z DOLT_COMMITTER_DATE=2024-07-05T09:00:00Z "$DOLT" commit -m 'A product and a manager go (SET NULL, CASCADE); new orders' --date 2024-07-05T09:00:00Z --author 'Bob Brown <bob@example.org>'
# step 27: alter_table products
"$DOLT" sql <<'DOLT_SQL_23'
ALTER TABLE products RENAME TO items;
DOLT_SQL_23
# step 28: alter_table orders
"$DOLT" sql <<'DOLT_SQL_24'
RENAME TABLE orders TO purchases;
DOLT_SQL_24
# step 29: commit Parent and child renamed
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-07-06T09:00:00Z DOLT_COMMITTER_DATE=2024-07-06T09:00:00Z "$DOLT" commit -m 'Parent and child renamed' --date 2024-07-06T09:00:00Z --author 'Alice Adams <alice@example.com>'
# step 30: alter_table purchases
"$DOLT" sql <<'DOLT_SQL_25'
ALTER TABLE purchases DROP FOREIGN KEY fk_sku;
DOLT_SQL_25
# step 31: alter_table purchases
"$DOLT" sql <<'DOLT_SQL_26'
ALTER TABLE purchases DROP INDEX fk_sku;
DOLT_SQL_26
# step 32: alter_table purchases
"$DOLT" sql <<'DOLT_SQL_27'
ALTER TABLE purchases ADD CONSTRAINT fk_item FOREIGN KEY (sku) REFERENCES items(sku) ON UPDATE CASCADE;
DOLT_SQL_27
# step 33: alter_table staff
"$DOLT" sql <<'DOLT_SQL_28'
ALTER TABLE staff DROP FOREIGN KEY staff_ibfk_1;
DOLT_SQL_28
# step 34: commit Keys dropped and added again
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-07-07T09:00:00Z DOLT_COMMITTER_DATE=2024-07-07T09:00:00Z "$DOLT" commit -m 'Keys dropped and added again' --date 2024-07-07T09:00:00Z --author 'Alice Adams <alice@example.com>'
# step 35: branch feature
"$DOLT" branch feature main
# step 36: checkout feature
"$DOLT" checkout feature
# step 37: alter_table purchases
"$DOLT" sql <<'DOLT_SQL_29'
ALTER TABLE purchases ADD COLUMN gift TINYINT;
DOLT_SQL_29
# step 38: insert purchases
"$DOLT" sql <<'DOLT_SQL_30'
INSERT INTO `purchases` (`id`, `cust_id`, `sku`, `qty`, `gift`) VALUES
(50, 7, 'SKU-005', 4, 1),
(51, 8, NULL, 5, 0);
DOLT_SQL_30
# step 39: commit feature: gifts
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-07-08T09:00:00Z DOLT_COMMITTER_DATE=2024-07-08T09:00:00Z "$DOLT" commit -m 'feature: gifts' --date 2024-07-08T09:00:00Z --author 'Bob Brown <bob@example.org>'
# step 40: checkout main
"$DOLT" checkout main
# step 41: insert customers
"$DOLT" sql <<'DOLT_SQL_31'
INSERT INTO `customers` (`cid`, `email`, `region`, `vip`) VALUES
(21, 'c21@example.com', 'it', 1);
DOLT_SQL_31
# step 42: update items
"$DOLT" sql <<'DOLT_SQL_32'
UPDATE `items` SET `id` = 1, `name` = 'Renamed 1' WHERE `id` = 1;
DOLT_SQL_32
# step 43: commit main: a customer, a renamed item
"$DOLT" add -A
DOLT_AUTHOR_DATE=2024-07-09T09:00:00Z DOLT_COMMITTER_DATE=2024-07-09T09:00:00Z "$DOLT" commit -m 'main: a customer, a renamed item' --date 2024-07-09T09:00:00Z --author 'Alice Adams <alice@example.com>'
# step 44: merge feature Merge branch 'feature'
DOLT_AUTHOR_DATE=2024-07-10T09:00:00Z DOLT_COMMITTER_DATE=2024-07-10T09:00:00Z "$DOLT" merge -m 'Merge branch '"'"'feature'"'"'' --author 'Alice Adams <alice@example.com>' feature
"$DOLT" sql -r csv -q "select name, hash from dolt_branches order by name"
"$DOLT" sql -r csv -q "select tag_name, tag_hash from dolt_tags order by tag_name"
