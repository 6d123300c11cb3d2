import { parse } from 'yaml';
import type { ParameterCatalog } from '@/core/parameters/parameter-catalog';
import { parseParameterDefinitions } from '@/core/parameters/parse-definitions';
import { resolveParameters } from '@/core/parameters/resolve-parameters';
import type { CallerView } from '@/core/parameters/selection-value';
import { Problems } from '@/core/project-errors';
import type { UserField } from '@/core/user-fields';

/** The example project's parameters (`examples/expenses`), in the agreed project.yml format. */
/** The example project's parameters, in declared order: exactly those ../shared/spec/project-format.md names. */
export const EXAMPLE_PARAMETER_NAMES = [
  'group_by',
  'limit',
  'start_date',
  'end_date',
  'date_range',
  'category',
  'subcategory',
  'min_filter',
  'max_filter',
  'between_filter',
  'description_filter',
];

export const EXAMPLE_PARAMETERS_YAML = `
parameters:
  - name: group_by
    widget: single_select
    label: Group By
    description: Dimension(s) to aggregate by
    user_group_field: role
    options:
      - id: trans
        label: Transaction
        user_groups: [manager]
        columns: "id, date, category, subcategory, description"
        order_by: "date DESC, id DESC"
      - { id: day, label: Day, columns: date, order_by: date DESC }
      - { id: month, label: Month, columns: month, order_by: month DESC }
      - { id: cat, label: Category, columns: category, order_by: category DESC }
      - { id: subcat, label: Subcategory, columns: "category, subcategory", order_by: "category DESC, subcategory DESC" }
  - name: limit
    widget: number
    label: Max Number of Rows
    description: Maximum number of rows to return
    parent: group_by
    variants:
      - parent_option_ids: [trans]
        min: 0
        max: 1000
        increment: 10
        default: 1000
  - name: start_date
    widget: date
    label: Start Date
    from_query:
      sql: SELECT min(date) AS min, max(date) AS max, min(date) AS default FROM {{ ref('expenses') }}
  - name: end_date
    widget: date
    label: End Date
    min: 2024-01-01
    max: 2024-12-31
    default: 2024-12-31
  - name: date_range
    widget: date_range
    label: Date Range
    min: 2024-01-01
    max: 2024-12-31
    default: [2024-01-01, 2024-12-31]
  - name: category
    widget: multi_select
    label: Category Filter
    options_from:
      sql: SELECT category_id AS id, category AS label FROM {{ ref('categories') }} ORDER BY category_id
  - name: subcategory
    widget: multi_select
    label: Subcategory Filter
    parent: category
    options_from:
      sql: >-
        SELECT subcategory_id AS id, subcategory AS label, category_id AS parent_option_id
        FROM {{ ref('subcategories') }} ORDER BY subcategory_id
  - name: min_filter
    widget: number
    label: Amounts Greater Than
    min: 0
    max: 300
    increment: 10
    default: 0
  - name: max_filter
    widget: number
    label: Amounts Less Than
    min: 0
    max: 300
    increment: 10
    default: 300
  - name: between_filter
    widget: number_range
    label: Amounts Between
    min: 0
    max: 300
    increment: 1
    default: [0, 300]
  - name: description_filter
    widget: text
    label: Description Contains
    default: ''
    input_type: text
`;

export const ROLE: UserField = {
  name: 'role',
  type: 'string',
  required: false,
  enum: ['manager', 'employee'],
  default: 'employee',
  description: '',
};

const SUBCATEGORIES: [number, string, number][] = [
  [0, 'Dining Out', 0],
  [1, 'Groceries', 0],
  [2, 'Utilities', 1],
  [3, 'Electronics', 2],
  [4, 'Ride Sharing', 3],
  [5, 'Mobile', 1],
  [6, 'Home Decor', 2],
  [7, 'Internet', 1],
  [8, 'Theater', 4],
  [9, 'Movies', 4],
  [10, 'Sports', 2],
  [11, 'Public Transit', 3],
  [12, 'Clothing', 2],
  [13, 'Concerts', 4],
];

/** Rows as DuckDB gives them for the seeds: integer ids (BIGINT), dates as text. */
export const EXAMPLE_ROWS: Record<string, Record<string, unknown>[]> = {
  start_date: [{ min: '2024-01-01', max: '2024-12-31', default: '2024-01-01' }],
  category: ['Food', 'Bills', 'Shopping', 'Transportation', 'Entertainment'].map((label, id) => ({
    id: BigInt(id),
    label,
  })),
  subcategory: SUBCATEGORIES.map(([id, label, parent]) => ({
    id: BigInt(id),
    label,
    parent_option_id: BigInt(parent),
  })),
};

export function exampleRaw(): unknown {
  return (parse(EXAMPLE_PARAMETERS_YAML) as { parameters: unknown }).parameters;
}

/** The example's catalog; throws when the fixture itself has a problem. */
export function exampleCatalog(): ParameterCatalog {
  const problems = new Problems();
  const ctx = { file: 'project.yml', userFields: [ROLE], problems };
  const defs = parseParameterDefinitions(exampleRaw(), ctx);
  const catalog = resolveParameters(defs, EXAMPLE_ROWS, ctx);
  problems.throwIfAny();
  return catalog;
}

export const MANAGER: CallerView = { username: 'mia', isAdmin: false, fields: { role: 'manager' } };
export const EMPLOYEE: CallerView = {
  username: 'eli',
  isAdmin: false,
  fields: { role: 'employee' },
};
export const ANONYMOUS: CallerView = { username: null, isAdmin: false, fields: {} };
