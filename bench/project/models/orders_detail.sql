{# Raw rows in order number order. No ORDER BY: DuckDB keeps the table's insertion order, and a sort would
   hold every row in memory before the first one could be sent; CSV and NDJSON exports stream instead. #}
SELECT *
FROM {{ ref('orders') }}
WHERE order_date BETWEEN {{ params.order_dates.start }} AND {{ params.order_dates.end }}
{%- if params.order_regions.selected | length %}
  AND region IN ({{ params.order_regions }})
{%- endif %}
