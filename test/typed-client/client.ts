/**
 * A client of Drey written only against the types that openapi-typescript generates from the running
 * service's `/docs-json`: no cast, no `any`, no non-null assertion. If the document describes a response
 * loosely, this file does not compile under `--strict`; if the service answers something else than the
 * document says, a check below fails and the program exits non-zero. test/typed-client.e2e-spec.ts
 * generates the types (the module `drey-openapi`), type-checks this file and runs it.
 *
 * Usage: node client.js <base url> <admin password>
 */
import createClient from 'openapi-fetch';
import type { paths } from 'drey-openapi';
import { MONTHLY } from '../support/figures';

function check(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Error(`unexpected answer: ${what}`);
}

async function main(baseUrl: string, password: string): Promise<void> {
  const path = { project: 'expenses', version: 'v1' };
  const anonymous = createClient<paths, 'application/json'>({ baseUrl });

  // Login: the OAuth2 password form.
  const login = await anonymous.POST('/api/service-v0/project/{project}/{version}/login', {
    params: { path },
    body: { username: 'admin', password, grant_type: 'password' },
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  });
  check(login.data !== undefined, `login answered ${login.response.status}`);
  check(login.data.token_type === 'bearer' && login.data.is_admin, 'an admin bearer token');
  const client = createClient<paths, 'application/json'>({
    baseUrl,
    headers: { Authorization: `Bearer ${login.data.access_token}` },
  });

  // The catalog: each dataset with its schema and parameters.
  const catalog = await client.GET('/api/service-v0/project/{project}/{version}/data-catalog', {
    params: { path },
  });
  check(catalog.data !== undefined, 'a catalog');
  const byMonth = catalog.data.datasets.find((dataset) => dataset.name === 'expenses_by_month');
  check(byMonth !== undefined, 'expenses_by_month in the catalog');
  check(byMonth.parameters.includes('start_date'), 'its parameters');
  check(
    byMonth.schema.fields.map((field) => `${field.name}:${field.type}`).join() ===
      'month:string,total_amount:decimal',
    'its schema',
  );

  // The parameters of a dataset, for a selection: typed widgets.
  const parameters = await client.GET(
    '/api/service-v0/project/expenses/v1/datasets/expenses_grouped/parameters',
    { params: { query: { group_by: 'month', x_parent_param: 'group_by' } } },
  );
  check(parameters.data !== undefined, 'parameters');
  const groupBy = parameters.data.parameters.find((widget) => widget.name === 'group_by');
  check(groupBy?.widget_type === 'single_select', 'group_by is a single select');
  check(groupBy.selected_id === 'month', `group_by selected, got ${groupBy.selected_id}`);
  check(
    groupBy.options.some((option) => option.label === 'Month'),
    'the options of group_by',
  );
  const limit = parameters.data.parameters.find((widget) => widget.name === 'limit');
  check(limit?.widget_type === 'disabled', 'limit is disabled unless grouping by transaction');

  // A result in each orientation: the twelve monthly totals, newest first.
  const expected = JSON.stringify(MONTHLY);
  const results = (orientation: 'records' | 'rows' | 'columns') =>
    anonymous.GET('/api/service-v0/project/expenses/v1/datasets/expenses_by_month/results', {
      params: { query: { start_date: '2024-01-01', x_orientation: orientation } },
    });
  const records = (await results('records')).data;
  check(records !== undefined && Array.isArray(records.data), 'records');
  const fromRecords: [string, number | string | null][] = [];
  for (const record of records.data) {
    check(!Array.isArray(record) && typeof record.month === 'string', 'a record');
    fromRecords.push([record.month, record.total_amount ?? null]);
  }
  check(JSON.stringify(fromRecords) === expected, `records, got ${JSON.stringify(fromRecords)}`);
  check(records.total_num_rows === 12 && records.data_details.num_rows === 12, 'row counts');

  const rows = (await results('rows')).data;
  check(rows !== undefined && Array.isArray(rows.data), 'rows');
  check(
    rows.data.every((row) => Array.isArray(row)),
    'arrays',
  );
  check(JSON.stringify(rows.data) === expected, `rows, got ${JSON.stringify(rows.data)}`);

  const columns = (await results('columns')).data;
  check(columns !== undefined && !Array.isArray(columns.data), 'columns');
  const { month, total_amount } = columns.data;
  check(month !== undefined && total_amount !== undefined, 'both columns');
  const fromColumns = month.map((value, index) => [value, total_amount[index]]);
  check(JSON.stringify(fromColumns) === expected, `columns, got ${JSON.stringify(fromColumns)}`);
  check(columns.data_details.orientation === 'columns', 'the orientation');

  // A named token, then the listing.
  const created = await client.POST('/api/service-v0/project/{project}/{version}/tokens', {
    params: { path },
    body: { title: 'typed client', expiry_minutes: 60 },
  });
  check(created.data !== undefined && created.data.username === 'admin', 'a named token');
  const tokens = await client.GET('/api/service-v0/project/{project}/{version}/tokens', {
    params: { path },
  });
  const listed = tokens.data?.find((token) => token.title === 'typed client');
  check(listed !== undefined && listed.expires_at !== null, 'the token listed with its expiry');
  const withToken = createClient<paths, 'application/json'>({
    baseUrl,
    headers: { Authorization: `Bearer ${created.data.access_token}` },
  });
  const me = await withToken.GET('/api/service-v0/project/{project}/{version}/me', {
    params: { path },
  });
  check(me.data?.username === 'admin' && me.data.is_admin, 'the new token signs in as admin');

  // Selections as a typed JSON body.
  const grouped = await client.POST(
    '/api/service-v0/project/expenses/v1/datasets/expenses_grouped/results',
    { body: { group_by: 'cat', x_select: ['category', 'total_amount'], x_orientation: 'columns' } },
  );
  check(grouped.data !== undefined && !Array.isArray(grouped.data.data), 'grouped columns');
  check(grouped.data.data.category?.length === 5, 'five categories');

  // A typed 400: a date that is not a date.
  const invalid = await anonymous.GET(
    '/api/service-v0/project/expenses/v1/datasets/expenses_by_month/results',
    { params: { query: { start_date: 'yesterday' } } },
  );
  check(invalid.error !== undefined && invalid.response.status === 400, 'a 400');
  check(
    invalid.error.error === 'invalid_parameter_selection',
    `the code, got ${invalid.error.error}`,
  );
  check(invalid.error.message.length > 0, 'a message');

  // A typed error of the legacy layout.
  const legacy = await anonymous.POST('/service-v0/{project}/{version}/token', {
    params: { path },
    body: { username: 'nobody', password: 'not the password' },
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  });
  check(legacy.error?.detail === 'Incorrect username or password', 'the legacy login failure');
}

const [baseUrl, password] = process.argv.slice(2);
main(baseUrl, password).then(
  () => console.log('typed client: every check passed'),
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
