import { join } from 'node:path';
import { toDataCatalog } from '@/catalog/catalog.mapper';
import { currentPath } from '@/http/routes';
import { loadProject } from '@/core/project/project-loader';

const project = loadProject(join(__dirname, '..', '..', 'examples', 'expenses'));
const items = {
  datasets: project.datasets.slice(0, 1),
  dashboards: project.dashboards.slice(0, 1),
};
const [dataset] = items.datasets;

describe('the current catalog', () => {
  it('gives the current catalog schemas, parameters and current paths', () => {
    const catalog = toDataCatalog(
      {
        ...items,
        parameters: [],
        fieldsOf: () => [],
        connections: [],
        models: [],
        lineage: [],
      },
      currentPath(project),
    );
    expect(catalog.datasets).toEqual([
      expect.objectContaining({
        schema: { fields: [] },
        parameters: dataset.parameters,
        result_path: `/api/service-v0/project/expenses/v1/datasets/${dataset.name}/results`,
      }),
    ]);
  });
});
