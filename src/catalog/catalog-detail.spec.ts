import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { catalogConnections, catalogModels } from '@/catalog/catalog-detail';
import { projectLineage } from '@/catalog/lineage';
import type { Model, Project } from '@/core/project/project';

const column = {
  name: 'amount',
  type: 'decimal',
  description: 'Spent',
  category: 'measure',
} as const;

const MODELS: Model[] = [
  {
    kind: 'seed',
    name: 'expenses',
    description: 'Seed',
    columns: [column],
    csvFile: 'seeds/x.csv',
  },
  {
    kind: 'source',
    name: 'accounts',
    description: 'Source',
    columns: [],
    connection: 'warehouse',
    table: ['public', 'accounts'],
  },
  {
    kind: 'build',
    name: 'details',
    description: 'Build',
    columns: [],
    sql: '',
    sqlFile: 'models/details.sql',
    refs: ['expenses', 'accounts'],
  },
  {
    kind: 'runtime',
    name: 'by_month',
    description: 'Runtime',
    columns: [],
    sql: '',
    sqlFile: 'models/by_month.sql',
    refs: ['details'],
  },
  {
    kind: 'dbview',
    name: 'live',
    description: 'Dbview',
    columns: [],
    sql: '',
    sqlFile: 'models/live.sql',
    refs: [],
    connection: 'warehouse',
  },
];

function project(): Project {
  const dir = mkdtempSync(join(tmpdir(), 'drey-catalog-'));
  writeFileSync(join(dir, 'report.html'), "{% set rows = dataset('by_month') %}{{ rows }}");
  return {
    dir,
    manifestFile: 'project.yml',
    name: 'p',
    label: 'P',
    description: '',
    majorVersion: 1,
    userFields: [],
    connections: [
      { name: 'warehouse', kind: 'postgres', urlEnv: 'WAREHOUSE_URL', description: 'Warehouse' },
    ],
    models: MODELS,
    parameterDefinitions: [],
    parameters: [],
    datasets: [
      {
        name: 'by_month',
        label: 'By month',
        description: '',
        scope: 'public',
        parameters: [],
        model: 'by_month',
      },
    ],
    dashboards: [
      {
        name: 'report',
        label: 'Report',
        description: '',
        scope: 'public',
        format: 'html',
        parameters: [],
        template: 'report.html',
      },
    ],
  };
}

describe('administrators catalog detail (b-era shapes)', () => {
  it('lists connections with name and label, the built environment first', () => {
    expect(catalogConnections(project())).toEqual([
      expect.objectContaining({ name: 'default', label: expect.any(String) }),
      expect.objectContaining({ name: 'warehouse', label: 'Warehouse' }),
    ]);
  });

  it('gives every model its b-era type, a config object and whether query-models reads it', () => {
    const models = catalogModels(project());
    expect(models.map((m) => [m.name, m.model_type, m.is_queryable])).toEqual([
      ['expenses', 'seed', true],
      ['accounts', 'source', true],
      ['details', 'build', true],
      ['by_month', 'federate', true],
      ['live', 'dbview', false],
    ]);
    expect(models[0].config).toMatchObject({
      description: 'Seed',
      columns: [{ name: 'amount', type: 'decimal', description: 'Spent', category: 'measure' }],
    });
    expect(models[1].config).toMatchObject({
      connection: 'warehouse',
      table: 'public.accounts',
      load_to_duckdb: true,
    });
    expect(models[2].config).toMatchObject({
      materialization: 'table',
      depends_on: ['expenses', 'accounts'],
    });
  });

  it('types lineage edges buildtime into build models and runtime everywhere else', () => {
    const model = (name: string) => ({ type: 'model', name });
    expect(projectLineage(project())).toEqual([
      { type: 'buildtime', source: model('expenses'), target: model('details') },
      { type: 'buildtime', source: model('accounts'), target: model('details') },
      { type: 'runtime', source: model('details'), target: model('by_month') },
      { type: 'runtime', source: model('by_month'), target: { type: 'dataset', name: 'by_month' } },
      {
        type: 'runtime',
        source: { type: 'dataset', name: 'by_month' },
        target: { type: 'dashboard', name: 'report' },
      },
    ]);
  });
});
