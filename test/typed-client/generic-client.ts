/**
 * A client of Drey written against the generic paths only (`{dataset}`, `{dashboard}`, the legacy `{name}`),
 * as a client that serves any project must be: its datasets and parameters come from the catalog, the
 * built-ins and the selections are typed by the document, and nothing is cast. Beside client.ts, which uses
 * the example project's own paths; test/typed-client.e2e-spec.ts type-checks both under `--strict` and runs
 * them against a real server.
 *
 * Usage: node generic-client.js <base url> <admin password>
 */
import createClient from 'openapi-fetch';
import type { paths } from 'drey-openapi';
import { MONTHLY } from '../support/figures';

function check(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Error(`unexpected answer: ${what}`);
}

/**
 * The query as the document states it: `name=value` per parameter, an array as the name repeated, and the
 * `selections` object (style form, explode) spread into its own names. openapi-fetch's form serializer joins
 * an array inside an object with commas, which the current layout reads as one value, not a list.
 */
function formQuery(query: Record<string, unknown>): string {
  const search = new URLSearchParams();
  const add = (name: string, value: unknown): void => {
    if (value === undefined || value === null) return;
    if (Array.isArray(value)) {
      for (const item of value) add(name, item);
    } else if (typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) add(key, item);
    } else {
      search.append(name, String(value));
    }
  };
  for (const [name, value] of Object.entries(query)) add(name, value);
  return search.toString();
}

const CURRENT = '/api/service-v0/project/{project}/{version}';
const LEGACY = '/service-v0/{project}/{version}';

async function main(baseUrl: string, password: string): Promise<void> {
  const project = { project: 'expenses', version: 'v1' };
  const anonymous = createClient<paths, 'application/json'>({
    baseUrl,
    querySerializer: formQuery,
  });
  const login = await anonymous.POST(`${CURRENT}/login`, {
    params: { path: project },
    body: { username: 'admin', password },
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  });
  check(login.data !== undefined, `login answered ${login.response.status}`);
  const client = createClient<paths, 'application/json'>({
    baseUrl,
    querySerializer: formQuery,
    headers: { Authorization: `Bearer ${login.data.access_token}` },
  });

  // Every dataset of the catalog through the generic parameters path: the widgets it lists are its own.
  const catalog = await client.GET(`${CURRENT}/data-catalog`, { params: { path: project } });
  check(catalog.data !== undefined, 'a catalog');
  check(catalog.data.datasets.length >= 3, 'the datasets');
  for (const dataset of catalog.data.datasets) {
    const widgets = await client.GET(`${CURRENT}/datasets/{dataset}/parameters`, {
      params: { path: { ...project, dataset: dataset.name } },
    });
    check(widgets.data !== undefined, `parameters of ${dataset.name}`);
    const names = widgets.data.parameters.map((widget) => widget.name).sort();
    check(
      names.join() === [...dataset.parameters].sort().join(),
      `the parameters of ${dataset.name}, got ${names.join()}`,
    );
  }

  // Results with the paging built-ins and a selection: the monthly totals, a page of them.
  const path = { ...project, dataset: 'expenses_by_month' };
  const page = await anonymous.GET(`${CURRENT}/datasets/{dataset}/results`, {
    params: {
      path,
      query: {
        x_orientation: 'rows',
        x_limit: 5,
        x_offset: 2,
        selections: { start_date: '2024-01-01' },
      },
    },
  });
  check(page.data !== undefined, `a page, got ${page.response.status}`);
  check(page.data.total_num_rows === 12 && page.data.data_details.num_rows === 5, 'row counts');
  check(page.data.data_details.orientation === 'rows', 'the orientation');
  const expected = JSON.stringify(MONTHLY.slice(2, 7));
  check(JSON.stringify(page.data.data) === expected, `rows, got ${JSON.stringify(page.data.data)}`);

  // x_select keeps the columns asked for, in each record.
  const selected = await anonymous.GET(`${CURRENT}/datasets/{dataset}/results`, {
    params: { path, query: { x_select: ['month'], x_limit: 3 } },
  });
  check(selected.data !== undefined && Array.isArray(selected.data.data), 'records');
  check(selected.data.data.length === 3, 'three records');
  for (const record of selected.data.data) {
    check(
      !Array.isArray(record) && Object.keys(record).join() === 'month',
      `only the month, got ${JSON.stringify(record)}`,
    );
  }

  // A multi-select as a string array: on GET the name repeated, the same rows as the POST's JSON array.
  const grouped = { ...project, dataset: 'expenses_grouped' };
  const twoCategories = { group_by: 'subcat', category: ['0', '1'] };
  const byQuery = await client.GET(`${CURRENT}/datasets/{dataset}/results`, {
    params: { path: grouped, query: { x_orientation: 'rows', selections: twoCategories } },
  });
  const byBody = await client.POST(`${CURRENT}/datasets/{dataset}/results`, {
    params: { path: grouped },
    body: { ...twoCategories, x_orientation: 'rows' },
  });
  const oneCategory = await client.GET(`${CURRENT}/datasets/{dataset}/results`, {
    params: { path: grouped, query: { selections: { group_by: 'subcat', category: '0' } } },
  });
  check(byQuery.data !== undefined && byBody.data !== undefined, 'grouped by subcategory');
  check(oneCategory.data !== undefined, 'one category');
  check(
    JSON.stringify(byQuery.data.data) === JSON.stringify(byBody.data.data),
    'GET and POST select the same rows',
  );
  check(
    byQuery.data.total_num_rows > oneCategory.data.total_num_rows &&
      oneCategory.data.total_num_rows > 0,
    `two categories hold more subcategories than one (${byQuery.data.total_num_rows}, ${oneCategory.data.total_num_rows})`,
  );

  // The parameters refreshed by a trigger (interface 4.5), on GET and as JSON.
  const refreshed = await client.GET(`${CURRENT}/datasets/{dataset}/parameters`, {
    params: {
      path: grouped,
      query: { x_parent_param: 'group_by', selections: { group_by: 'month' } },
    },
  });
  check(refreshed.data !== undefined, 'refreshed parameters');
  const groupBy = refreshed.data.parameters.find((widget) => widget.name === 'group_by');
  check(groupBy?.widget_type === 'single_select', 'group_by is a single select');
  check(groupBy.selected_id === 'month', `group_by selected, got ${groupBy.selected_id}`);
  const disabled = refreshed.data.parameters.find((widget) => widget.name === 'limit');
  check(disabled?.widget_type === 'disabled', 'limit is disabled unless grouping by transaction');
  // With a trigger, only it and the parameters that depend on it.
  check(
    refreshed.data.parameters.map((widget) => widget.name).join() === 'group_by,limit',
    'the trigger and its dependents',
  );
  const posted = await client.POST(`${CURRENT}/datasets/{dataset}/parameters`, {
    params: { path: grouped },
    body: { group_by: 'cat', x_parent_param: 'group_by' },
  });
  check(posted.data !== undefined, `refreshed as JSON, got ${posted.response.status}`);
  const postedGroupBy = posted.data.parameters.find((widget) => widget.name === 'group_by');
  check(
    postedGroupBy?.widget_type === 'single_select' && postedGroupBy.selected_id === 'cat',
    'group_by selected from the JSON body',
  );
  check(posted.data.parameters.length === 2, 'the trigger and its dependents, as JSON');

  // A dashboard: its parameters, then its HTML for a selection.
  const report = { ...project, dashboard: 'expenses_report' };
  const dashboardWidgets = await client.GET(`${CURRENT}/dashboards/{dashboard}/parameters`, {
    params: { path: report },
  });
  check(dashboardWidgets.data !== undefined, 'the dashboard parameters');
  const startDate = dashboardWidgets.data.parameters.find((widget) => widget.name === 'start_date');
  check(startDate?.widget_type === 'date', 'start_date is a date');
  const html = await client.GET(`${CURRENT}/dashboards/{dashboard}/results`, {
    params: { path: report, query: { selections: { start_date: startDate.selected_date } } },
    parseAs: 'text',
  });
  check(html.response.headers.get('content-type')?.startsWith('text/html') === true, 'HTML');
  check(html.data !== undefined && html.data.includes('<'), 'the page');

  // A typed 400 on the generic path: a date that is not a date.
  const invalid = await anonymous.GET(`${CURRENT}/datasets/{dataset}/results`, {
    params: { path, query: { selections: { start_date: 'yesterday' } } },
  });
  check(invalid.error !== undefined && invalid.response.status === 400, 'a 400');
  check(
    invalid.error.error === 'invalid_parameter_selection',
    `the code, got ${invalid.error.error}`,
  );

  // The legacy layout's generic result: every row, hyphens for underscores in the name.
  const legacy = await anonymous.GET(`${LEGACY}/dataset/{name}`, {
    params: {
      path: { ...project, name: 'expenses-by-month' },
      query: { selections: { start_date: '2024-01-01' } },
    },
  });
  check(legacy.data !== undefined, `the legacy result, got ${legacy.response.status}`);
  const months = legacy.data.data.map((row) => row.month);
  check(
    JSON.stringify(months) === JSON.stringify(MONTHLY.map(([month]) => month)),
    `every month, got ${JSON.stringify(months)}`,
  );
}

const [baseUrl, password] = process.argv.slice(2);
main(baseUrl, password).then(
  () => console.log('generic typed client: every check passed'),
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
