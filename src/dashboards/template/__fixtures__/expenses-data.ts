import type { DatasetCall } from '@/dashboards/template/dataset-passes';
import type { TemplateDataset } from '@/dashboards/template/helper-input';

/** Monthly totals of the example data, newest first (../shared/data/README.md). */
export const MONTHLY_TOTALS: [string, number][] = [
  ['2024-12', 2124.97],
  ['2024-11', 2664.21],
  ['2024-10', 2320.8],
  ['2024-09', 2286.26],
  ['2024-08', 2546.27],
  ['2024-07', 2305.0],
  ['2024-06', 2597.63],
  ['2024-05', 2799.68],
  ['2024-04', 2316.73],
  ['2024-03', 3248.5],
  ['2024-02', 2531.68],
  ['2024-01', 2484.43],
];

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
