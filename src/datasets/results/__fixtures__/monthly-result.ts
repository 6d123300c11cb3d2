import { schemaFields } from '@/datasets/results/result-shape';
import type { QueryResult } from '@/engine/sql/query-result';

/** Three months of the example's totals, as the engine returns them: shaped by both layouts' specs. */
export const MONTHLY_RESULT: QueryResult = {
  columns: [
    { name: 'month', type: 'string', databaseType: 'VARCHAR' },
    { name: 'total_amount', type: 'decimal', databaseType: 'DECIMAL(38,2)' },
  ],
  rows: [
    ['2024-12', 2124.97],
    ['2024-11', 2664.21],
    ['2024-10', 2320.8],
  ],
  truncated: false,
};

export const MONTHLY_FIELDS = schemaFields(MONTHLY_RESULT, [
  { name: 'month', description: 'Month', category: 'dimension' },
]);
