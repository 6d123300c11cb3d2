-- Joined once at build time, so that no request pays for the joins.
SELECT
  e.id,
  e.date,
  strftime(e.date, '%Y-%m') AS month,
  c.category_id,
  c.category,
  s.subcategory_id,
  s.subcategory,
  e.description,
  e.amount
FROM {{ ref('expenses') }} AS e
JOIN {{ ref('subcategories') }} AS s ON s.subcategory_id = e.subcategory_id
JOIN {{ ref('categories') }} AS c ON c.category_id = s.category_id
