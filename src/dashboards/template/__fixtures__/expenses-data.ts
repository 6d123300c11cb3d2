import type { DatasetCall } from '@/dashboards/template/dataset-passes';
import type { TemplateDataset } from '@/dashboards/template/helper-input';
import { MONTHLY } from '../../../../test/support/figures';

/** Monthly totals of the example data, newest first (../shared/data/README.md). */
export const MONTHLY_TOTALS: [string, number][] = MONTHLY;

const SUBCATEGORIES: [string, string, number][] = [
  ['Transportation', 'Public Transit', 2100.5],
  ['Transportation', 'Fuel', 2105.38],
  ['Shopping', 'Clothing', 4000.49],
  ['Shopping', 'Electronics', 4061],
  ['Food', 'Groceries', 2600.1],
  ['Food', 'Dining Out', 2022.45],
];

/** What the example's datasets answer, as `dataset()` gives them to templates. */
export function exampleDataset(call: DatasetCall): TemplateDataset {
  const months = {
    rows: MONTHLY_TOTALS.map(([month, total_amount]) => ({ month, total_amount })),
    columns: [
      { name: 'month', type: 'string' as const },
      { name: 'total_amount', type: 'decimal' as const },
    ],
    truncated: false,
  };
  if (call.dataset === 'expenses_by_month') return months;
  if (call.fixed.group_by === 'month') return months;
  return {
    rows: SUBCATEGORIES.map(([category, subcategory, total_amount]) => ({
      category,
      subcategory,
      total_amount,
    })),
    columns: [
      { name: 'category', type: 'string' },
      { name: 'subcategory', type: 'string' },
      { name: 'total_amount', type: 'decimal' },
    ],
    truncated: false,
  };
}
