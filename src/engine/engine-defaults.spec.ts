import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine } from '@/engine/engine';
import type { ParameterCatalog } from '@/core/parameters/parameter-catalog';
import { parseParameterDefinitions } from '@/core/parameters/parse-definitions';
import { parameterQueries, resolveParameters } from '@/core/parameters/resolve-parameters';
import { emptyParameterRequest } from '@/core/parameters/selection-request';
import type { CallerView } from '@/core/parameters/selection-value';
import { Problems } from '@/core/project-errors';
import { loadProject } from '@/core/project/project-loader';

/**
 * The example end to end, the way the service will run it: the parameters domain reads the example's real
 * parameter definitions, the build runs their queries before switching, and datasets run with the defaults.
 */
const EXAMPLE = join(__dirname, '..', '..', 'examples', 'expenses');
const EMPLOYEE: CallerView = { username: 'eve', isAdmin: false, fields: { role: 'employee' } };
const MANAGER: CallerView = { username: 'max', isAdmin: false, fields: { role: 'manager' } };

describe('the example with its own parameter defaults', () => {
  const project = loadProject(EXAMPLE);
  let dataDir: string;
  let engine: Engine;
  let catalog: ParameterCatalog;

  beforeAll(async () => {
    const problems = new Problems();
    const sink = { file: project.manifestFile, userFields: project.userFields, problems };
    const definitions = parseParameterDefinitions(project.parameterDefinitions, sink);
    problems.throwIfAny();
    dataDir = mkdtempSync(join(tmpdir(), 'drey-defaults-'));
    engine = new Engine(project, { dataDir });
    await engine.build('with-parameters', {
      beforeSwitch: async (built) => {
        const results: Record<string, Record<string, unknown>[]> = {};
        for (const query of parameterQueries(definitions)) {
          results[query.parameter] = await built.query(query.sql);
        }
        catalog = resolveParameters(definitions, results, sink);
        problems.throwIfAny();
      },
    });
  });

  afterAll(async () => {
    await engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const defaults = (dataset: string, caller: CallerView) =>
    catalog.selections(
      project.datasets.find((d) => d.name === dataset)?.parameters ?? [],
      emptyParameterRequest(),
      caller,
    );

  it('gives the README monthly totals for expenses_by_month with the default selections', async () => {
    const result = await engine.runDataset(
      engine.compileDataset('expenses_by_month', defaults('expenses_by_month', EMPLOYEE), EMPLOYEE),
    );
    expect(
      result.rows.map(([month, total]) => `${month as string} ${(total as number).toFixed(2)}`),
    ).toEqual([
      '2024-12 2124.97',
      '2024-11 2664.21',
      '2024-10 2320.80',
      '2024-09 2286.26',
      '2024-08 2546.27',
      '2024-07 2305.00',
      '2024-06 2597.63',
      '2024-05 2799.68',
      '2024-04 2316.73',
      '2024-03 3248.50',
      '2024-02 2531.68',
      '2024-01 2484.43',
    ]);
  });

  it('groups by the first option the caller may see: day for an employee, transaction for a manager', async () => {
    const employee = await engine.runDataset(
      engine.compileDataset('expenses_grouped', defaults('expenses_grouped', EMPLOYEE), EMPLOYEE),
    );
    expect(employee.columns.map((column) => column.name)).toEqual(['date', 'total_amount']);
    expect(employee.rows).toHaveLength(344);
    const manager = await engine.runDataset(
      engine.compileDataset('expenses_grouped', defaults('expenses_grouped', MANAGER), MANAGER),
    );
    expect(manager.columns.map((column) => column.name)).toEqual([
      'id',
      'date',
      'category',
      'subcategory',
      'description',
      'total_amount',
    ]);
    expect(manager.rows).toHaveLength(1000);
  });

  it('lists all 1000 transactions with the default filters', async () => {
    const result = await engine.runDataset(
      engine.compileDataset(
        'expense_transactions',
        defaults('expense_transactions', EMPLOYEE),
        EMPLOYEE,
      ),
    );
    expect(result.rows).toHaveLength(1000);
  });
});
