import { calledDataset, datasetRequest } from '@/dashboards/dashboard-datasets';
import { DatasetCallError } from '@/dashboards/template/dataset-passes';
import type { ParameterRequest } from '@/core/parameters/selection-request';
import type { DashboardSpec, DatasetSpec, Project } from '@/core/project/project';

const dashboard = { name: 'd', parameters: ['date_range', 'category'] } as DashboardSpec;
const grouped = {
  name: 'expenses_grouped',
  parameters: ['group_by', 'date_range', 'category', 'subcategory'],
} as DatasetSpec;

const request: ParameterRequest = {
  forms: 'strict',
  selections: new Map([
    ['date_range', { source: 'query', values: ['2024-01-01', '2024-03-31'] }],
    ['category', { source: 'query', values: ['1'] }],
    // Not a parameter of the dashboard: not passed on, although the dataset takes it.
    ['subcategory', { source: 'query', values: ['3'] }],
  ]),
  verifyParams: true,
  parentParam: 'category',
  builtins: { x_limit: '5' },
};

describe('datasetRequest', () => {
  it('passes the dashboard’s selections the dataset takes, overridden by the fixed ones', () => {
    const own = datasetRequest(dashboard, grouped, request, { group_by: 'month', category: null });
    expect([...own.selections]).toEqual([
      ['group_by', { source: 'body', value: 'month' }],
      ['date_range', { source: 'query', values: ['2024-01-01', '2024-03-31'] }],
    ]);
    expect(own).toMatchObject({
      forms: 'strict',
      verifyParams: false,
      parentParam: null,
      builtins: {},
    });
  });

  it('refuses fixed selections of parameters the dataset does not take', () => {
    expect(() => datasetRequest(dashboard, grouped, request, { start_date: '2024-01-01' })).toThrow(
      new DatasetCallError(
        'dataset("expenses_grouped"): it takes no parameter "start_date" (it takes group_by, date_range, category, subcategory)',
      ),
    );
  });

  it('names an unknown dataset', () => {
    const project = { datasets: [grouped] } as unknown as Project;
    expect(() => calledDataset(project, { key: '', dataset: 'ghost', fixed: {} })).toThrow(
      'dataset("ghost"): no such dataset',
    );
  });
});
