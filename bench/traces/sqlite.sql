-- bench/traces/sqlite.sql -- the workload of the sqlite trace (bench/traces/README.md):
-- an in-memory database of customers, products and orders, generated here (no input
-- files), then indexes, joins, GROUP BY, text functions, updates and deletes.
-- Run as: sqlite3 :memory: < bench/traces/sqlite.sql
PRAGMA cache_size = -32000;
CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, city TEXT, email TEXT, joined INTEGER);
CREATE TABLE product(id INTEGER PRIMARY KEY, title TEXT, category TEXT, price REAL);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER, product INTEGER, qty INTEGER,
                    day INTEGER, note TEXT);

BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50000)
INSERT INTO customer
SELECT i,
       'customer ' || printf('%06d', i) || ' ' || substr('abcdefghijklmnopqrstuvwxyz', 1 + i % 26, 1 + i % 7),
       'city-' || (i * 7919 % 331),
       lower('user' || i || '@' || substr('examplehostnamesdomainsnet', 1 + i % 11, 5 + i % 9) || '.org'),
       20000 + i % 3650
FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
INSERT INTO product
SELECT i,
       'product ' || substr(hex(i * 2654435761 * 40503), 1, 8 + i % 24),
       'cat' || (i % 37),
       round((i * 7907 % 100000) / 100.0, 2)
FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000)
INSERT INTO orders
SELECT i,
       1 + (i * 2654435761) % 50000,
       1 + (i * 40503) % 5000,
       1 + i % 9,
       20000 + (i * 31) % 3650,
       CASE WHEN i % 5 = 0 THEN 'gift: ' || substr(hex(i * 97531 * 2654435761) || hex(i * 40503), 1, 10 + i % 30) ELSE NULL END
FROM n;
COMMIT;

CREATE INDEX orders_customer ON orders(customer);
CREATE INDEX orders_product ON orders(product, day);
CREATE INDEX customer_city ON customer(city);

-- joins and aggregates
SELECT c.city, count(*), sum(o.qty * p.price)
FROM orders o JOIN customer c ON c.id = o.customer JOIN product p ON p.id = o.product
GROUP BY c.city ORDER BY 3 DESC LIMIT 5;

SELECT p.category, count(DISTINCT o.customer), avg(o.qty), max(p.price)
FROM orders o JOIN product p ON p.id = o.product
GROUP BY p.category ORDER BY 2 DESC LIMIT 5;

SELECT count(*) FROM (
  SELECT o.customer, group_concat(p.title, ', ') AS titles
  FROM orders o JOIN product p ON p.id = o.product
  WHERE o.day BETWEEN 21000 AND 21400
  GROUP BY o.customer HAVING length(titles) > 40);

-- text functions over every row
SELECT count(*), sum(length(upper(name) || replace(email, '.', '_'))), max(instr(email, '@'))
FROM customer WHERE name LIKE '%7%';

SELECT substr(email, instr(email, '@') + 1) AS domain, count(*)
FROM customer GROUP BY domain ORDER BY 2 DESC LIMIT 5;

-- a sort that does not fit an index
SELECT id, note FROM orders WHERE note IS NOT NULL ORDER BY note DESC, id LIMIT 3;

-- window function
SELECT customer, day, sum(qty) OVER (PARTITION BY customer ORDER BY day ROWS 3 PRECEDING) AS s
FROM orders WHERE customer < 200 ORDER BY s DESC, customer, day LIMIT 3;

-- updates and deletes: pages and records freed and reused
BEGIN;
UPDATE orders SET note = 'updated ' || id || ' ' || coalesce(note, '') WHERE id % 3 = 0;
DELETE FROM orders WHERE id % 7 = 0;
UPDATE customer SET email = upper(email), city = city || '-x' WHERE id % 4 = 1;
COMMIT;

CREATE TEMP TABLE summary AS
SELECT customer, count(*) AS n, sum(qty) AS q, group_concat(DISTINCT product) AS products
FROM orders GROUP BY customer;
SELECT count(*), sum(n), max(length(products)) FROM summary;

DROP INDEX orders_product;
VACUUM;
SELECT count(*), sum(qty) FROM orders;
