import { execFile } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Api, L, P } from './support/api';
import { http } from './support/http';
import { ADMIN_PASSWORD, REPO_ROOT, TestServer, startServer } from './support/server';
import { TempDir, tempDir } from './support/services';

/**
 * The OpenAPI document is what typed clients are generated from: test/typed-client/client.ts (the example
 * project's own paths) and generic-client.ts (the generic `{dataset}` and `{dashboard}` paths, as a client
 * serving any project uses them) are written against the types openapi-typescript generates from this
 * server's /docs-json, type-checked with `--strict` and run against the server; and real responses are
 * checked against the document's schemas.
 */

const run = promisify(execFile);
const bin = (path: string) => join(REPO_ROOT, 'node_modules', path);

interface Outcome {
  code: number;
  output: string;
}

/** Runs a Node script; resolves with its exit code and output instead of throwing. */
async function node(args: string[]): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run(process.execPath, args, { cwd: REPO_ROOT });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

type Json = any;

/** The subset of JSON Schema (OpenAPI 3.0) the document uses; returns what does not match. */
function mismatches(document: Json, schema: Json, value: unknown, at = '$'): string[] {
  if (schema.$ref) {
    const name = String(schema.$ref).replace('#/components/schemas/', '');
    const target = document.components.schemas[name];
    if (!target) return [`${at}: unresolved ${schema.$ref}`];
    return mismatches(document, target, value, at);
  }
  if (value === null) return schema.nullable ? [] : [`${at}: null is not allowed`];
  const problems: string[] = [];
  for (const part of schema.allOf ?? []) problems.push(...mismatches(document, part, value, at));
  for (const [key, count] of [
    ['anyOf', (n: number) => n > 0],
    ['oneOf', (n: number) => n === 1],
  ] as const) {
    if (!schema[key]) continue;
    const matching = schema[key].filter(
      (part: Json) => mismatches(document, part, value, at).length === 0,
    ).length;
    if (!count(matching)) problems.push(`${at}: ${matching} of the ${key} schemas match`);
  }
  if (schema.enum && !schema.enum.includes(value)) {
    problems.push(`${at}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  }
  const type = Array.isArray(value) ? 'array' : typeof value;
  if (schema.type === 'integer' ? !Number.isInteger(value) : schema.type && schema.type !== type) {
    return [...problems, `${at}: ${JSON.stringify(value)} is not of type ${schema.type}`];
  }
  if (schema.format === 'date' && !/^"\d{4}-\d{2}-\d{2}"$/.test(JSON.stringify(value))) {
    problems.push(`${at}: ${JSON.stringify(value)} is not a date`);
  }
  if (type === 'array') {
    const items = value as unknown[];
    if (schema.minItems !== undefined && items.length < schema.minItems)
      problems.push(`${at}: short`);
    if (schema.maxItems !== undefined && items.length > schema.maxItems)
      problems.push(`${at}: long`);
    if (schema.items) {
      items.forEach((item, i) =>
        problems.push(...mismatches(document, schema.items, item, `${at}[${i}]`)),
      );
    }
  }
  if (type === 'object' && !Array.isArray(value)) {
    const object = value as Record<string, unknown>;
    for (const key of schema.required ?? []) {
      if (!(key in object)) problems.push(`${at}: ${key} is missing`);
    }
    for (const [key, item] of Object.entries(object)) {
      const property = schema.properties?.[key] ?? schema.additionalProperties;
      if (property === false) problems.push(`${at}: ${key} is not in the schema`);
      else if (property && property !== true) {
        problems.push(...mismatches(document, property, item, `${at}.${key}`));
      }
    }
  }
  return problems;
}

describe('the OpenAPI document and a client generated from it', () => {
  let t: TestServer;
  let api: Api;
  let work: TempDir;
  let document: Json;
  let admin: string;

  beforeAll(async () => {
    t = await startServer();
    api = new Api(t.url);
    work = tempDir('drey-typed-client-');
    document = (await http(`${t.url}/docs-json`)).body;
    admin = await api.adminToken();
  });
  afterAll(async () => {
    await t?.close();
    work?.remove();
  });

  /** Generates the types, then type-checks and compiles both programs; resolves with their folder. */
  async function compileClients(): Promise<string> {
    const schema = join(work.path, 'docs.json');
    const types = join(work.path, 'api.d.ts');
    writeFileSync(schema, JSON.stringify(document));
    const generated = await node([bin('openapi-typescript/bin/cli.js'), schema, '-o', types]);
    expect(generated).toMatchObject({ code: 0 });
    // The program's own tsconfig, with the generated module and an output folder.
    const out = join(work.path, 'out');
    writeFileSync(
      join(work.path, 'tsconfig.json'),
      JSON.stringify({
        extends: join(REPO_ROOT, 'test', 'typed-client', 'tsconfig.json'),
        compilerOptions: {
          noEmit: false,
          outDir: out,
          rootDir: join(REPO_ROOT, 'test'),
          typeRoots: [bin('@types')],
          paths: { 'drey-openapi': [types] },
        },
      }),
    );
    const checked = await node([
      bin('typescript/bin/tsc'),
      '-p',
      join(work.path, 'tsconfig.json'),
      '--strict',
    ]);
    expect(checked.output).toBe('');
    expect(checked.code).toBe(0);
    // openapi-fetch is found through a node_modules beside the output (its CommonJS build).
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(out, 'node_modules'), 'dir');
    return join(out, 'typed-client');
  }

  let clients: string;

  it('generates types from /docs-json that both typed clients type-check against under --strict, and the per-project client runs', async () => {
    clients = await compileClients();
    const outcome = await node([join(clients, 'client.js'), t.url, ADMIN_PASSWORD]);
    expect(outcome.output).toContain('typed client: every check passed');
    expect(outcome.code).toBe(0);
  }, 180000);

  it('runs the generic client: results, parameters and a dashboard through the generic paths', async () => {
    expect(clients).toBeDefined();
    const outcome = await node([join(clients, 'generic-client.js'), t.url, ADMIN_PASSWORD]);
    expect(outcome.output).toContain('generic typed client: every check passed');
    expect(outcome.code).toBe(0);
  }, 60000);

  it('exits non-zero when an answer is not the expected one', async () => {
    expect(clients).toBeDefined();
    for (const client of ['client.js', 'generic-client.js']) {
      const outcome = await node([join(clients, client), t.url, 'not-the-password']);
      expect(outcome.code).not.toBe(0);
      expect(outcome.output).toContain('unexpected answer: login answered 401');
    }
  });

  it('declares on each generic path the built-ins its operation takes, typed and bounded, and the selections as an open map', () => {
    const current = '/api/service-v0/project/{project}/{version}';
    const legacy = '/service-v0/{project}/{version}';
    const results = [
      'x_orientation',
      'x_select',
      'x_limit',
      'x_offset',
      'x_verify_params',
      'x_format',
      'x_csv_formulas',
    ];
    const refresh = ['x_parent_param', 'x_verify_params'];
    const takes: [string, string[]][] = [
      [`${current}/datasets/{dataset}/results`, results],
      [`${current}/datasets/{dataset}/parameters`, refresh],
      [`${current}/dashboards/{dashboard}/results`, ['x_verify_params']],
      [`${current}/dashboards/{dashboard}/parameters`, refresh],
      [`${current}/parameters`, refresh],
      [`${legacy}/dataset/{name}`, ['x_verify_params', 'x_format', 'x_csv_formulas']],
      [`${legacy}/dataset/{name}/parameters`, refresh],
      [`${legacy}/dashboard/{name}`, ['x_verify_params']],
      [`${legacy}/dashboard/{name}/parameters`, refresh],
    ];
    for (const [template, builtIns] of takes) {
      const { get, post } = document.paths[template];
      const query: Json[] = get.parameters.filter((parameter: Json) => parameter.in === 'query');
      expect({ template, query: query.map((parameter): unknown => parameter.name) }).toEqual({
        template,
        query: [...builtIns, 'selections'],
      });
      const selections = query.find((parameter: Json) => parameter.name === 'selections');
      expect(selections).toMatchObject({ style: 'form', explode: true });
      expect(selections.schema.additionalProperties).toEqual({
        anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
      });
      const body = post.requestBody.content['application/json'].schema;
      expect({ template, body: Object.keys(body.properties) }).toEqual({
        template,
        body: builtIns,
      });
      expect(post.requestBody.required).toBe(false);
      // An open map in both layouts: a name that is not one of the endpoint's parameters is ignored
      // whatever its value (decisions.md); the forms a selection takes are in the description.
      expect(body.additionalProperties).toBe(true);
      if (!template.startsWith(legacy)) {
        expect(body.description).toMatch(/a string, a number or an array of those/);
      }
    }
    const byName = (template: string): Record<string, Json> => {
      const parameters: Json[] = document.paths[template].get.parameters;
      return Object.fromEntries(
        parameters.map((parameter): [string, Json] => [String(parameter.name), parameter.schema]),
      );
    };
    const generic = byName(`${current}/datasets/{dataset}/results`);
    expect(generic.x_orientation).toMatchObject({ enum: ['records', 'rows', 'columns'] });
    expect(generic.x_limit).toMatchObject({ type: 'integer', minimum: 0, maximum: 100000 });
    expect(generic.x_offset).toMatchObject({ type: 'integer', minimum: 0 });
    expect(generic.x_select).toMatchObject({ type: 'array', items: { type: 'string' } });
    expect(byName(`${current}/datasets/{dataset}/parameters`).x_parent_param).toMatchObject({
      type: 'string',
      minLength: 1,
    });
    for (const [template, schema] of [
      [`${current}/datasets/{dataset}/parameters`, 'ParametersResponse'],
      [`${current}/dashboards/{dashboard}/parameters`, 'ParametersResponse'],
      [`${legacy}/dataset/{name}/parameters`, 'LegacyParametersResponse'],
    ]) {
      for (const method of ['get', 'post']) {
        expect(
          document.paths[template][method].responses['200'].content['application/json'].schema,
        ).toEqual({ $ref: `#/components/schemas/${schema}` });
      }
    }
  });

  it('gives every response a schema, errors in the shape of their layout', () => {
    const unresolved = JSON.stringify(document).match(/#\/components\/schemas\/[^"]+/g) ?? [];
    for (const reference of unresolved) {
      expect(document.components.schemas).toHaveProperty([reference.split('/').pop()]);
    }
    let operations = 0;
    for (const [path, item] of Object.entries<Json>(document.paths)) {
      // Every path of the API; the root's /docs, /health and /metrics are the operator's.
      if (!path.startsWith('/api/') && !path.startsWith('/service-v0')) continue;
      const legacy = path.startsWith('/service-v0');
      // Only the project listing, outside any project's paths, cannot answer 404.
      const errors = path === '/service-v0' ? ['401', '500', '503'] : ['401', '404', '500', '503'];
      for (const [method, operation] of Object.entries<Json>(item)) {
        operations += 1;
        const where = `${method.toUpperCase()} ${path}`;
        const statuses = Object.keys(operation.responses);
        expect({ where, errors: statuses.filter((s) => s >= '400') }).toEqual({
          where,
          errors: expect.arrayContaining(errors),
        });
        for (const [status, response] of Object.entries<Json>(operation.responses)) {
          if (Number(status) < 400) {
            // Only empty replies (and 304) go without a body schema.
            const content = response.content ?? {};
            for (const media of Object.values<Json>(content)) expect(media.schema).toBeDefined();
            continue;
          }
          // The MCP endpoint: what the protocol refuses is a JSON-RPC error (docs/mcp.md, mcp-paths.ts).
          if (path.endsWith('/mcp')) {
            expect({ where, status, schema: JSON.stringify(response.content) }).toEqual({
              where,
              status,
              schema: expect.stringMatching(/#\/components\/schemas\/(Error|McpError)"/),
            });
            continue;
          }
          const expected = legacy
            ? status === '400'
              ? 'LegacyClientError'
              : 'LegacyError'
            : 'Error';
          expect({ where, status, schema: response.content?.['application/json']?.schema }).toEqual(
            {
              where,
              status,
              schema: { $ref: `#/components/schemas/${expected}` },
            },
          );
        }
      }
    }
    expect(operations).toBeGreaterThan(50);
    expect(document.components.schemas.LoginFormDto.required).toEqual(['username', 'password']);
  });

  /** Asserts that a real reply matches the schema the document gives for it. */
  async function expectDocumented(
    method: 'get' | 'post',
    path: string,
    template: string,
    options: { token?: string; json?: unknown; form?: Record<string, string> } = {},
  ): Promise<Json> {
    const reply = await api.request(method.toUpperCase(), path, options);
    const operation = document.paths[template]?.[method];
    expect({ path, documented: operation !== undefined }).toEqual({ path, documented: true });
    const schema = operation.responses[reply.status]?.content?.['application/json']?.schema;
    expect({ path, status: reply.status, schema: schema !== undefined }).toEqual({
      path,
      status: reply.status,
      schema: true,
    });
    expect({ path, problems: mismatches(document, schema, reply.body) }).toEqual({
      path,
      problems: [],
    });
    return reply.body;
  }

  it('describes real replies of both layouts, errors included', async () => {
    // The checker itself finds what does not match.
    const error = { $ref: '#/components/schemas/Error' };
    expect(mismatches(document, error, { statusCode: 400, error: 'x', message: 'm' })).toHaveLength(
      1,
    );
    expect(mismatches(document, error, { detail: 'm' })).toHaveLength(3);
    const record = { $ref: '#/components/schemas/datasets.expenses_by_month.Record' };
    expect(mismatches(document, record, { month: 1, extra: null })).toEqual([
      '$.month: 1 is not of type string',
      '$: extra is not in the schema',
    ]);
    const current = '/api/service-v0/project/{project}/{version}';
    const legacy = '/service-v0/{project}/{version}';
    const user = await api.userToken(admin, 'typed_user', { role: 'manager' });
    await expectDocumented('get', P, current);
    await expectDocumented('get', `${P}/data-catalog`, `${current}/data-catalog`, { token: user });
    await expectDocumented('get', `${P}/data-catalog`, `${current}/data-catalog`);
    const adminCatalog = await expectDocumented(
      'get',
      `${P}/data-catalog`,
      `${current}/data-catalog`,
      {
        token: admin,
      },
    );
    expect(adminCatalog.models.length).toBeGreaterThan(0);
    expect(adminCatalog.lineage.length).toBeGreaterThan(0);
    await expectDocumented('get', `${P}/me`, `${current}/me`, { token: user });
    await expectDocumented('get', `${P}/users`, `${current}/users`, { token: admin });
    await expectDocumented('get', `${P}/user-fields`, `${current}/user-fields`);
    await expectDocumented('post', `${P}/tokens`, `${current}/tokens`, {
      token: user,
      json: { title: 'checked' },
    });
    await expectDocumented('get', `${P}/tokens`, `${current}/tokens`, { token: user });
    await expectDocumented('get', `${P}/parameters`, `${current}/parameters`, { token: user });
    await expectDocumented(
      'get',
      `${P}/datasets/expenses_grouped/parameters?group_by=trans`,
      `${current}/datasets/{dataset}/parameters`,
      { token: user },
    );
    await expectDocumented(
      'post',
      `${P}/dashboards/expenses_report/parameters`,
      `${current}/dashboards/{dashboard}/parameters`,
      { token: user, json: {} },
    );
    const builds = await expectDocumented('get', `${P}/builds`, `${current}/builds`, {
      token: admin,
    });
    const [latest] = builds as { id: string }[];
    await expectDocumented('get', `${P}/builds/${latest.id}`, `${current}/builds/{build}`, {
      token: admin,
    });
    await expectDocumented('post', `${P}/query-models`, `${current}/query-models`, {
      token: admin,
      json: { sql_query: 'SELECT category, count(*) AS n FROM categories GROUP BY 1' },
    });
    await expectDocumented(
      'get',
      `${P}/query-models?x_sql_query=${encodeURIComponent('SELECT count(*) AS n FROM categories')}`,
      `${current}/query-models`,
      { token: admin },
    );
    for (const dataset of ['expenses_by_month', 'expenses_grouped', 'expense_transactions']) {
      const results = `${P}/datasets/${dataset}/results`;
      const parameters = `${P}/datasets/${dataset}/parameters`;
      await expectDocumented('get', parameters, parameters, { token: user });
      await expectDocumented('post', parameters, parameters, { token: user, json: {} });
      for (const orientation of ['records', 'rows', 'columns']) {
        await expectDocumented('get', `${results}?x_orientation=${orientation}`, results, {
          token: admin,
        });
      }
      await expectDocumented('post', results, results, { token: user, json: { x_limit: 3 } });
      await expectDocumented(
        'get',
        `${P}/datasets/${dataset}/results`,
        `${current}/datasets/{dataset}/results`,
        {
          token: user,
        },
      );
    }
    for (const groupBy of ['trans', 'day', 'month', 'cat', 'subcat']) {
      const results = `${P}/datasets/expenses_grouped/results`;
      await expectDocumented('get', `${results}?group_by=${groupBy}&x_orientation=rows`, results, {
        token: user,
      });
    }
    // Errors of the current layout.
    const byMonth = `${P}/datasets/expenses_by_month/results`;
    const invalid = await expectDocumented('get', `${byMonth}?start_date=soon`, byMonth);
    expect(invalid.error).toBe('invalid_parameter_selection');
    await expectDocumented('get', `${byMonth}?x_orientation=sideways`, byMonth);
    await expectDocumented('get', `${P}/me`, `${current}/me`);
    await expectDocumented('get', `${P}/me`, `${current}/me`, { token: 'not-a-token' });
    const privateResults = `${P}/datasets/expense_transactions/results`;
    const forbidden = await expectDocumented('get', privateResults, privateResults, {
      token: user,
    });
    expect(forbidden.error).toBe('forbidden');
    await expectDocumented('post', `${P}/login`, `${current}/login`, {
      form: { username: 'admin', password: 'wrong' },
    });
    await expectDocumented('post', `${P}/users`, `${current}/users`, {
      token: user,
      json: { username: 'someone', password: 'secret-password' },
    });
    // The legacy layout.
    await expectDocumented('post', `${L}/token`, `${legacy}/token`, {
      form: { username: 'typed_user', password: 'typed_user-password' },
    });
    const failed = await expectDocumented('post', `${L}/token`, `${legacy}/token`, {
      form: { username: 'admin', password: 'wrong' },
    });
    expect(failed).toEqual({ detail: 'Incorrect username or password' });
    await expectDocumented('get', `${L}/data-catalog`, `${legacy}/data-catalog`);
    const listing = await expectDocumented('get', '/service-v0', '/service-v0');
    expect(listing.versions[0].token_path).toBe(`${L}/token`);
    await expectDocumented('get', `${L}/dataset/expenses_by_month`, `${legacy}/dataset/{name}`);
    await expectDocumented(
      'get',
      `${L}/dataset/expenses_grouped/parameters`,
      `${legacy}/dataset/{name}/parameters`,
      { token: user },
    );
    await expectDocumented('get', `${L}/dataset/nothing`, `${legacy}/dataset/{name}`);
    const legacyInvalid = await expectDocumented(
      'get',
      `${L}/dataset/expenses_by_month?start_date=soon`,
      `${legacy}/dataset/{name}`,
    );
    expect(legacyInvalid.message).toBe(legacyInvalid.detail);
    const unsupported = await api.request('POST', byMonth, { form: { min_filter: '10' } });
    expect(unsupported.status).toBe(415);
    const documented415 = document.paths[byMonth]?.post?.responses?.['415'];
    expect(documented415?.content?.['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/Error',
    });
    expect(
      mismatches(document, documented415.content['application/json'].schema, unsupported.body),
    ).toEqual([]);
  });
});
