import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BuildProgress, BuildResult } from '@/engine/materialize/materialize-environment';
import { Engine } from '@/engine/engine';
import { rowObjects } from '@/engine/sql/query-result';
import type { CallerView, OptionValue, SelectionValues } from '@/core/parameters/selection-value';
import { loadProject } from '@/core/project/project-loader';
import { MONTHLY } from '../../test/support/figures';

const EXAMPLE = join(__dirname, '..', '..', 'examples', 'expenses');
const MANAGER: CallerView = { username: 'alice', isAdmin: false, fields: { role: 'manager' } };

/** The example's group_by options, as the parameters domain hands them over. */
const GROUP_BY: Record<string, OptionValue> = {
  trans: {
    id: 'trans',
    label: 'Transaction',
    fields: {
      columns: 'id, date, category, subcategory, description',
      order_by: 'date DESC, id DESC',
    },
  },
  month: {
    id: 'month',
    label: 'Month',
    fields: { columns: "strftime(date, '%Y-%m') AS month", order_by: 'month DESC' },
  },
  cat: { id: 'cat', label: 'Category', fields: { columns: 'category', order_by: 'category DESC' } },
};

const BY_MONTH_DEFAULTS: SelectionValues = {
  start_date: { widget: 'date', date: '2024-01-01' },
  end_date: { widget: 'date', date: '2024-12-31' },
  min_filter: { widget: 'number', value: '0' },
  max_filter: { widget: 'number', value: '300' },
};

function filters(description = '', category: OptionValue[] = []): SelectionValues {
  return {
    date_range: { widget: 'date_range', start: '2024-01-01', end: '2024-12-31' },
    category: { widget: 'multi_select', selected: category },
    subcategory: { widget: 'multi_select', selected: [] },
    description_filter: { widget: 'text', text: description },
  };
}

function grouped(groupBy: OptionValue, extra: SelectionValues = {}): SelectionValues {
  return {
    ...filters(),
    group_by: { widget: 'single_select', selected: groupBy },
    limit: groupBy.id === 'trans' ? { widget: 'number', value: '1000' } : { widget: 'disabled' },
    between_filter: { widget: 'number_range', lower: '0', upper: '300' },
    ...extra,
  };
}

describe('the example project on the engine', () => {
  const project = loadProject(EXAMPLE);
  let dataDir: string;
  let engine: Engine;
  let build: BuildResult;
  const progress: BuildProgress[] = [];
  const optionRows: Record<string, unknown[]> = {};

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'drey-example-'));
    engine = new Engine(project, { dataDir });
    expect(await engine.open()).toBe(false);
    build = await engine.build('first', {
      onProgress: (event) => progress.push(event),
      beforeSwitch: async (built) => {
        optionRows.start_date = await built.query(
          `SELECT min(date) AS min, max(date) AS max, min(date) AS "default" FROM {{ ref('expenses') }}`,
        );
        optionRows.category = await built.query(
          `SELECT CAST(category_id AS VARCHAR) AS id, category AS label FROM {{ ref('categories') }} ORDER BY category_id`,
        );
      },
    });
  });

  afterAll(async () => {
    await engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('builds the seeds and the build model, with figures and progress per model', () => {
    expect(build.models.map((model) => `${model.model}:${model.kind}:${model.rows}`)).toEqual([
      'categories:seed:5',
      'expenses:seed:1000',
      'subcategories:seed:14',
      'expense_details:build:1000',
    ]);
    expect(build.models.every((model) => model.durationMs >= 0)).toBe(true);
    expect(progress.filter((event) => event.status === 'done')).toHaveLength(4);
    expect(progress[0]).toEqual({
      model: 'categories',
      kind: 'seed',
      step: 1,
      steps: 4,
      status: 'started',
    });
    expect(engine.ready).toBe(true);
  });

  it('runs option and bounds queries on the new environment before switching', () => {
    expect(optionRows.start_date).toEqual([
      { min: '2024-01-01', max: '2024-12-31', default: '2024-01-01' },
    ]);
    expect(optionRows.category).toEqual([
      { id: '0', label: 'Food' },
      { id: '1', label: 'Bills' },
      { id: '2', label: 'Shopping' },
      { id: '3', label: 'Transportation' },
      { id: '4', label: 'Entertainment' },
    ]);
  });

  it('reproduces the monthly totals, newest month first, to the cent', async () => {
    const result = await engine.runDataset(
      engine.compileDataset('expenses_by_month', BY_MONTH_DEFAULTS, MANAGER),
    );
    expect(result.columns).toEqual([
      { name: 'month', type: 'string', databaseType: 'VARCHAR' },
      { name: 'total_amount', type: 'decimal', databaseType: 'DECIMAL(38,2)' },
    ]);
    expect(result.rows).toEqual(MONTHLY);
    expect(result.truncated).toBe(false);
  });

  it('keeps amounts inside the inclusive min and max filters', async () => {
    const result = await engine.runSql(
      'SELECT count(*) AS n, min(amount) AS low, max(amount) AS high FROM expense_details ' +
        'WHERE amount BETWEEN 10 AND 20',
      {},
      MANAGER,
    );
    const [expected] = rowObjects(result);
    const filtered = await engine.runDataset(
      engine.compileDataset(
        'expenses_by_month',
        {
          ...BY_MONTH_DEFAULTS,
          min_filter: { widget: 'number', value: '10' },
          max_filter: { widget: 'number', value: '20' },
        },
        MANAGER,
      ),
    );
    const [sum] = rowObjects(
      await engine.runSql(
        'SELECT sum(amount) AS total FROM expense_details WHERE amount BETWEEN 10 AND 20',
        {},
        MANAGER,
      ),
    );
    const monthly = filtered.rows.reduce(
      (total, row) => total + Math.round((row[1] as number) * 100),
      0,
    );
    expect(expected.n).toBeGreaterThan(0);
    expect(monthly).toBe(Math.round((sum.total as number) * 100));
  });

  it('groups by category with the category totals', async () => {
    const result = await engine.runDataset(
      engine.compileDataset('expenses_grouped', grouped(GROUP_BY.cat), MANAGER),
    );
    expect(result.columns.map((column) => `${column.name}:${column.type}`)).toEqual([
      'category:string',
      'total_amount:decimal',
    ]);
    expect(result.rows).toEqual([
      ['Transportation', 4205.88],
      ['Shopping', 8061.49],
      ['Food', 4622.55],
      ['Entertainment', 6916.87],
      ['Bills', 6419.37],
    ]);
  });

  it('groups by transaction with JSON-ready columns and the limit applied', async () => {
    const result = await engine.runDataset(
      engine.compileDataset(
        'expenses_grouped',
        grouped(GROUP_BY.trans, { limit: { widget: 'number', value: '3' } }),
        MANAGER,
      ),
    );
    expect(result.columns.map((column) => `${column.name}:${column.type}`)).toEqual([
      'id:integer',
      'date:date',
      'category:string',
      'subcategory:string',
      'description:string',
      'total_amount:decimal',
    ]);
    expect(result.rows).toHaveLength(3);
    const [first] = rowObjects(result);
    expect(first.date).toBe('2024-12-31');
    expect(typeof first.id).toBe('number');
    expect(typeof first.total_amount).toBe('number');
  });

  it('groups by month like expenses_by_month', async () => {
    const result = await engine.runDataset(
      engine.compileDataset('expenses_grouped', grouped(GROUP_BY.month), MANAGER),
    );
    expect(result.rows[0]).toEqual(['2024-12', 2124.97]);
    expect(result.rows).toHaveLength(12);
  });

  it('filters descriptions literally and case-insensitively', async () => {
    const vendor = await engine.runDataset(
      engine.compileDataset('expense_transactions', filters('VENDOR a'), MANAGER),
    );
    expect(vendor.rows.length).toBeGreaterThan(0);
    expect(
      rowObjects(vendor).every((row) => (row.description as string).includes('Vendor A')),
    ).toBe(true);
    for (const wildcard of ['%', '_', 'Vendor%A']) {
      const result = await engine.runDataset(
        engine.compileDataset('expense_transactions', filters(wildcard), MANAGER),
      );
      expect(result.rows).toEqual([]);
    }
  });

  it('filters by category; an empty selection filters nothing', async () => {
    const all = await engine.runDataset(
      engine.compileDataset('expense_transactions', filters(), MANAGER),
    );
    expect(all.rows).toHaveLength(1000);
    const food = await engine.runDataset(
      engine.compileDataset(
        'expense_transactions',
        filters('', [{ id: '0', label: 'Food', fields: {} }]),
        MANAGER,
      ),
    );
    expect(new Set(rowObjects(food).map((row) => row.category))).toEqual(new Set(['Food']));
  });

  it('binds a malicious selection as a value', async () => {
    const result = await engine.runDataset(
      engine.compileDataset(
        'expense_transactions',
        filters("'; DROP TABLE expense_details; --"),
        MANAGER,
      ),
    );
    expect(result.rows).toEqual([]);
    const compiled = engine.compileDataset(
      'expense_transactions',
      filters("'; DROP TABLE expense_details; --"),
      MANAGER,
    );
    expect(compiled.sql).not.toContain('DROP');
    expect(compiled.binds).toContainEqual({
      type: 'text',
      value: "'; DROP TABLE expense_details; --",
    });
    const [count] = rowObjects(
      await engine.runSql('SELECT count(*) AS n FROM expense_details', {}, MANAGER),
    );
    expect(count.n).toBe(1000);
  });

  it('runs ad-hoc SQL over built tables and runtime models evaluated with the selections', async () => {
    const result = await engine.runSql(
      'WITH t AS (SELECT * FROM Expenses_Grouped) SELECT count(*) AS n, sum(total_amount) AS total FROM t',
      grouped(GROUP_BY.cat),
      MANAGER,
    );
    expect(rowObjects(result)).toEqual([{ n: 5, total: 30226.16 }]);
  });

  it.each([
    ["COPY expense_details TO '/tmp/drey-leak.csv'"],
    ["ATTACH '/tmp/drey-other.duckdb' AS other"],
    ['INSTALL httpfs'],
    ["SELECT * FROM read_csv('/etc/passwd')"],
    ['CREATE TABLE x AS SELECT 1'],
    ['SET enable_external_access = true'],
    ['SELECT 1; SELECT 2'],
    ['SELEC 1'],
    ['SELECT * FROM no_such_table'],
  ])('refuses %s as invalid_sql', async (sql) => {
    await expect(engine.runSql(sql, {}, MANAGER)).rejects.toMatchObject({ code: 'invalid_sql' });
  });

  it('compiles a dataset with placeholders and the bound values listed apart', () => {
    const compiled = engine.compileDataset('expenses_by_month', BY_MONTH_DEFAULTS, MANAGER);
    expect(compiled.sql).toContain('WHERE date BETWEEN $1 AND $2');
    expect(compiled.sql).toContain('amount >= $3');
    expect(compiled.binds).toEqual([
      { type: 'date', value: '2024-01-01' },
      { type: 'date', value: '2024-12-31' },
      { type: 'decimal', value: '0' },
      { type: 'decimal', value: '300' },
    ]);
  });
});
