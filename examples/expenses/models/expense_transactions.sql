{# An empty multi-select filters nothing. Option ids are text, hence the casts. #}
SELECT id, date, category, subcategory, description, amount
FROM {{ ref('expense_details') }}
WHERE date BETWEEN {{ params.date_range.start }} AND {{ params.date_range.end }}
{%- if params.category.selected | length %}
  AND CAST(category_id AS VARCHAR) IN ({{ params.category }})
{%- endif %}
{%- if params.subcategory.selected | length %}
  AND CAST(subcategory_id AS VARCHAR) IN ({{ params.subcategory }})
{%- endif %}
  -- contains() matches the text literally: % and _ are not wildcards as they would be in LIKE.
  AND contains(lower(description), lower({{ params.description_filter }}))
ORDER BY date DESC, id DESC
