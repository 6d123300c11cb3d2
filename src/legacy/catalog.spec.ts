import { join } from 'node:path';
import { toLegacyDataCatalog, toProjectListing } from '@/legacy/catalog';
import { legacyPath } from '@/legacy/routes';
import { loadProject } from '@/core/project/project-loader';

const project = loadProject(join(__dirname, '..', '..', 'examples', 'expenses'));
const items = {
  datasets: project.datasets.slice(0, 1),
  dashboards: project.dashboards.slice(0, 1),
};
const [dataset] = items.datasets;
const [dashboard] = items.dashboards;

describe('the legacy catalog', () => {
  it('lists the served project as the 0.4 service did, with legacy paths', () => {
    expect(toProjectListing(project)).toEqual({
      name: 'expenses',
      label: project.label,
      versions: [
        {
          major_version: project.majorVersion,
          minor_versions: [0],
          token_path: '/service-v0/expenses/v1/token',
          data_catalog_path: '/service-v0/expenses/v1/data-catalog',
        },
      ],
    });
  });

  it('gives the legacy catalog items and legacy paths only', () => {
    const catalog = toLegacyDataCatalog(items, legacyPath(project));
    expect(Object.keys(catalog)).toEqual(['datasets', 'dashboards']);
    expect(catalog.datasets).toEqual([
      {
        name: dataset.name,
        label: dataset.label,
        description: dataset.description,
        parameters_path: `/service-v0/expenses/v1/dataset/${dataset.name}/parameters`,
        result_path: `/service-v0/expenses/v1/dataset/${dataset.name}`,
      },
    ]);
    expect(catalog.dashboards).toEqual([
      expect.objectContaining({
        result_format: dashboard.format,
        result_path: `/service-v0/expenses/v1/dashboard/${dashboard.name}`,
      }),
    ]);
  });
});
