{# The columns and the ordering are custom fields of the selected group_by option: identifiers come
    from project.yml, never from the request. #}
{%- set group = params.group_by.selected.fields %}
SELECT {{ group.columns }}, sum(amount) AS total_amount
FROM {{ ref('expense_transactions') }}
WHERE amount BETWEEN {{ params.between_filter.lower }} AND {{ params.between_filter.upper }}
GROUP BY ALL
ORDER BY {{ group.order_by }}
{%- if params.limit.enabled %}
LIMIT {{ params.limit }}
{%- endif %}
