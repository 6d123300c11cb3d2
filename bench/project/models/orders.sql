{# Synthetic orders for measuring the service on a table of realistic size. Every column is a function of the
   row number (a multiplicative hash, no random()), so each build with the same ORDERS_ROWS gives the same
   table. The size comes from the server's environment at build time; tests set a small one. #}
WITH numbered AS (
  SELECT
    i,
    (i * 2654435761) % 4294967296 AS h,
    (i * 40503 + 17) % 731 AS day
  FROM range({{ env_var('ORDERS_ROWS', 2000000) }}) AS t(i)
),
priced AS (
  SELECT
    i + 1 AS order_id,
    CAST(DATE '2023-01-01' + CAST(day AS INTEGER) AS DATE) AS order_date,
    CAST(h % 50000 + 1 AS INTEGER) AS customer_id,
    (['North', 'South', 'East', 'West', 'Central'])[CAST(h // 50000 % 5 AS INTEGER) + 1] AS region,
    (['Books', 'Electronics', 'Garden', 'Grocery', 'Health', 'Home', 'Sports', 'Toys'])
      [CAST(h // 250000 % 8 AS INTEGER) + 1] AS category,
    (['placed', 'shipped', 'delivered', 'returned'])[CAST(h // 2000000 % 4 AS INTEGER) + 1] AS status,
    CAST(h % 7 + 1 AS INTEGER) AS quantity,
    CAST((h // 7 % 19900 + 100) / 100 AS DECIMAL(10, 2)) AS unit_price
  FROM numbered
)
SELECT *, CAST(quantity * unit_price AS DECIMAL(12, 2)) AS amount
FROM priced
