{# A group-by over every order in the date range: the heavy query of the benchmark. An empty region
   selection filters nothing. #}
SELECT
  region,
  category,
  count(*) AS orders,
  sum(quantity) AS units,
  sum(amount) AS revenue
FROM {{ ref('orders') }}
WHERE order_date BETWEEN {{ params.order_dates.start }} AND {{ params.order_dates.end }}
{%- if params.order_regions.selected | length %}
  AND region IN ({{ params.order_regions }})
{%- endif %}
GROUP BY region, category
ORDER BY region, category
