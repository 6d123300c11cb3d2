SELECT month, sum(amount) AS total_amount
FROM {{ ref('expense_details') }}
WHERE date BETWEEN {{ params.start_date }} AND {{ params.end_date }}
  AND amount >= {{ params.min_filter }}
  AND amount <= {{ params.max_filter }}
GROUP BY month
ORDER BY month DESC
