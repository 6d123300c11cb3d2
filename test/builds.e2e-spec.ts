import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api, P } from './support/api';
import { until } from './support/wait';
import { EXAMPLE_PROJECT, TestServer, startServer } from './support/server';

/**
 * A server on a copy of the example project in a new temporary folder (`prefix`), which the test may change,
 * once it answers ready (within `readyMs`).
 */
async function startOnCopy(prefix: string, readyMs?: number) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cpSync(EXAMPLE_PROJECT, dir, { recursive: true });
  const t = await startServer({ PROJECT_DIR: dir });
  const api = new Api(t.url);
  await until(
    () => api.get('/health/ready'),
    (reply) => reply.status === 200,
    readyMs,
  );
  return { dir, t, api };
}

describe('builds', () => {
  let t: TestServer;
  let api: Api;
  let admin: string;

  beforeAll(async () => {
    t = await startServer();
    api = new Api(t.url);
    admin = await api.adminToken();
  });
  afterAll(async () => {
    await t.close();
  });

  it('builds on first start; readiness waits for it', async () => {
    const ready = await until(
      () => api.get('/health/ready'),
      (reply) => reply.status === 200,
    );
    expect(ready.body.checks.environment).toEqual({
      status: 'up',
      kind: 'duckdb',
      build: expect.any(String),
    });
    const history = await api.get(`${P}/builds`, admin);
    expect(history.body[history.body.length - 1]).toMatchObject({
      status: 'succeeded',
      requested_by: null,
    });
  });

  it('rebuilds on POST P/build, answers 200 with an empty body, and records per-model figures', async () => {
    const reply = await api.request('POST', `${P}/build`, { token: admin });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('');
    const [latest] = (await api.get(`${P}/builds`, admin)).body;
    expect(latest).toMatchObject({ status: 'succeeded', requested_by: 'admin', error: null });
    const rows = Object.fromEntries(
      latest.models.map((m: { model: string; rows: number }) => [m.model, m.rows]),
    );
    expect(rows).toMatchObject({ expenses: 1000, categories: 5, subcategories: 14 });
    expect(latest.models.every((m: { duration_ms: number }) => m.duration_ms >= 0)).toBe(true);
    expect(t.server.logs.some((line) => line.msg === 'build succeeded' && line.models === 4)).toBe(
      true,
    );
  });

  it('is for administrators only', async () => {
    const user = await api.userToken(admin, 'builder');
    expect((await api.request('POST', `${P}/build`, { token: user })).status).toBe(403);
    expect((await api.get(`${P}/builds`, user)).status).toBe(403);
    expect((await api.request('POST', `${P}/build`)).status).toBe(401);
  });

  it('refuses a build while one runs, whichever process the request reaches, then both read the new environment', async () => {
    const second = await t.another();
    const api2 = new Api(second.url);
    // Two build requests at once, to two processes: the builds queue takes exactly one.
    const replies = await Promise.all([
      api.request('POST', `${P}/build`, { token: admin }),
      api2.request('POST', `${P}/build`, { token: admin }),
    ]);
    const statuses = replies.map((reply) => reply.status).sort();
    expect(statuses).toEqual([200, 400]);
    const refused = replies.find((reply) => reply.status === 400);
    expect(refused?.body).toMatchObject({ statusCode: 400, error: 'build_in_progress' });
    const [latest] = (await api.get(`${P}/builds`, admin)).body;
    const figures = await api2.get(`${P}/datasets/expenses_by_month/parameters`);
    expect(figures.status).toBe(200);
    expect(latest.status).toBe('succeeded');
    await second.stop();
  });
});

describe('a failing build', () => {
  let dir: string;
  let t: TestServer;
  let api: Api;

  beforeAll(async () => {
    ({ dir, t, api } = await startOnCopy('drey-broken-'));
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('names the broken model, answers 400 invalid_project, and the previous environment keeps answering', async () => {
    // The project is read at start-up: restart on the same data folder with the model broken.
    expect(await t.server.stop()).toBe(0);
    writeFileSync(join(dir, 'models', 'expense_details.sql'), 'SELECT * FROM no_such_table');
    api = new Api((await t.another()).url);
    const admin = await api.adminToken();
    const reply = await api.request('POST', `${P}/build`, { token: admin });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ statusCode: 400, error: 'invalid_project' });
    expect(reply.body.message).toContain('expense_details');
    const [latest] = (await api.get(`${P}/builds`, admin)).body;
    expect(latest.status).toBe('failed');
    expect(latest.fault).toBe('project');
    expect(latest.error).toContain('expense_details');
    // How far it got: the three seeds built before the model that failed.
    expect(latest.progress).toEqual({ done: 3, total: 4, failed_model: 'expense_details' });
    expect(latest.models.map((m: { model: string }) => m.model).sort()).toEqual([
      'categories',
      'expenses',
      'subcategories',
    ]);
    expect((await api.get('/health/ready')).status).toBe(200);
    expect((await api.get(`${P}/datasets/expenses_by_month/parameters`)).status).toBe(200);
  });
});

describe('a build in progress, and a first build that fails', () => {
  let dir: string;
  let t: TestServer;
  let api: Api;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'drey-first-'));
    cpSync(EXAMPLE_PROJECT, dir, { recursive: true });
    // Plans fine, fails when it runs: the first build fails at its last model.
    writeFileSync(
      join(dir, 'models', 'expense_details.sql'),
      "SELECT error('the data is not there yet') AS id",
    );
    t = await startServer({ PROJECT_DIR: dir }, false);
    api = new Api(t.url);
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('says why it is not ready, and data requests say a build failed, without Retry-After', async () => {
    const ready = await until(
      () => api.get('/health/ready'),
      (reply) => String(reply.body?.checks?.environment?.detail ?? '').includes('failed'),
    );
    expect(ready.status).toBe(503);
    expect(ready.body.checks.environment.detail).toMatch(
      /the build \S+ failed \(model "expense_details"\)/,
    );
    const admin = await api.adminToken();
    const data = await api.get(`${P}/datasets/expense_transactions/results`, admin);
    expect(data.status).toBe(503);
    expect(data.body).toMatchObject({ error: 'not_ready' });
    expect(data.body.message).toContain('failed');
    expect(data.headers.get('retry-after')).toBeNull();
  });

  it('shows the progress of a running build in the history, then serves once a build succeeds', async () => {
    // A slow model, so that the build is seen running.
    writeFileSync(
      join(dir, 'models', 'expense_details.sql'),
      readFileSync(join(EXAMPLE_PROJECT, 'models', 'expense_details.sql'), 'utf8') +
        '\nWHERE (SELECT count(*) FROM range(400000000) r(i) WHERE hash(i) % 7 = 0) > 0',
    );
    await t.server.stop();
    const server = await t.another();
    api = new Api(server.url);
    const admin = await api.adminToken();
    // With no environment yet, the new process starts a build of its own.
    const running = await until(
      () => api.get(`${P}/builds`, admin),
      (reply) =>
        reply.body[0]?.status === 'running' && reply.body[0]?.progress?.current_model !== null,
    );
    expect(running.body[0].progress).toMatchObject({
      total: 4,
      current_model: expect.any(String),
      current_kind: expect.any(String),
      elapsed_ms: expect.any(Number),
    });
    await until(
      () => api.get('/health/ready'),
      (reply) => reply.status === 200,
      60000,
    );
    // The new environment is served a moment before the history records the build's end.
    const [done] = (
      await until(
        () => api.get(`${P}/builds`, admin),
        (reply) => reply.body[0]?.status !== 'running',
      )
    ).body;
    expect(done).toMatchObject({ status: 'succeeded', progress: null });
    expect(done.models).toHaveLength(4);
    expect((await api.get('/health/ready')).status).toBe(200);
    expect((await api.get(`${P}/datasets/expense_transactions/results`, admin)).status).toBe(200);
  });
});

describe('a build reloads the whole project', () => {
  let dir: string;
  let t: TestServer;
  let api: Api;
  let admin: string;
  const file = (...parts: string[]) => join(dir, ...parts);
  const months = async (server: Api) => {
    const reply = await server.get(`${P}/datasets/expenses_by_month/results?x_orientation=rows`);
    expect(reply.status).toBe(200);
    return reply.body as { schema: { fields: { name: string }[] }; data: unknown[][] };
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'drey-reload-'));
    cpSync(EXAMPLE_PROJECT, dir, { recursive: true });
    t = await startServer({ PROJECT_DIR: dir });
    api = new Api(t.url);
    admin = await api.adminToken();
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves an edited model and an edited seed after POST P/build, without a restart, on every process', async () => {
    const second = new Api((await t.another()).url);
    const before = await months(api);
    expect(before.schema.fields.map((field) => field.name)).toEqual(['month', 'total_amount']);
    writeFileSync(
      file('models', 'expenses_by_month.sql'),
      readFileSync(file('models', 'expenses_by_month.sql'), 'utf8').replace(
        'sum(amount) AS total_amount',
        'sum(amount) AS total_amount, count(*) AS expense_count',
      ),
    );
    writeFileSync(
      file('models', 'expenses_by_month.yml'),
      readFileSync(file('models', 'expenses_by_month.yml'), 'utf8') +
        '  - { name: expense_count, type: integer, category: measure, description: Expenses }\n',
    );
    writeFileSync(
      file('seeds', 'expenses.csv'),
      readFileSync(file('seeds', 'expenses.csv'), 'utf8') + '1001,2024-12-31,12,10.00,"Added"\n',
    );
    expect((await api.request('POST', `${P}/build`, { token: admin })).status).toBe(200);
    for (const server of [api, second]) {
      const after = await months(server);
      expect(after.schema.fields.map((field) => field.name)).toEqual([
        'month',
        'total_amount',
        'expense_count',
      ]);
      // December: one more expense, of 10.
      const december = after.data.find((row) => row[0] === '2024-12') as number[];
      const was = before.data.find((row) => row[0] === '2024-12') as number[];
      expect(december[1]).toBeCloseTo(was[1] + 10, 2);
    }
  });

  it('fails a build of an invalid project with its problems (400 invalid_project); the previous project keeps serving', async () => {
    const manifest = readFileSync(file('project.yml'), 'utf8');
    writeFileSync(
      file('project.yml'),
      manifest.replace('model: expenses_by_month', 'model: no_such_model'),
    );
    try {
      const reply = await api.request('POST', `${P}/build`, { token: admin });
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({ statusCode: 400, error: 'invalid_project' });
      expect(reply.body.message).toMatch(
        /^The project is invalid \(1 problem\):\n {2}project\.yml at datasets/,
      );
      expect((await months(api)).schema.fields.map((field) => field.name)).toContain(
        'expense_count',
      );
    } finally {
      writeFileSync(file('project.yml'), manifest);
    }
  });
});

describe('a build a client follows (Prefer: respond-async)', () => {
  let dir: string;
  let t: TestServer;
  let api: Api;
  let admin: string;
  const details = () => join(dir, 'models', 'expense_details.sql');
  const original = readFileSync(join(EXAMPLE_PROJECT, 'models', 'expense_details.sql'), 'utf8');
  // Seconds of work in its last model, so that the build is seen running.
  const slow = `${original}\nWHERE (SELECT count(*) FROM range(300000000) r(i) WHERE hash(i) % 7 = 0) > 0`;

  beforeAll(async () => {
    ({ dir, t, api } = await startOnCopy('drey-async-', 60000));
    admin = await api.adminToken();
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 202 at once with the run and a Location that follows it, progress included, to its end', async () => {
    // Each build reads the project folder again: this one has a slow model.
    writeFileSync(details(), slow);
    const asked = Date.now();
    const reply = await api.request('POST', `${P}/build`, {
      token: admin,
      headers: { Prefer: 'respond-async, wait=100' },
    });
    expect(reply.status).toBe(202);
    expect(Date.now() - asked).toBeLessThan(5000);
    expect(reply.headers.get('preference-applied')).toBe('respond-async');
    const location = reply.headers.get('location') ?? '';
    expect(location).toMatch(new RegExp(`^${P}/builds/[0-9a-f-]{36}$`));
    expect(reply.body).toMatchObject({
      id: location.split('/').pop(),
      status: expect.stringMatching(/^(queued|running)$/),
      trigger: 'request',
      requested_by: 'admin',
      error: null,
      fault: null,
    });
    // Another build meanwhile is refused, whichever way it is asked for.
    for (const headers of [{}, { Prefer: 'respond-async' }] as Record<string, string>[]) {
      const refused = await api.request('POST', `${P}/build`, { token: admin, headers });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ error: 'build_in_progress' });
    }
    const running = await until(
      () => api.get(location, admin),
      (r) => r.body?.status === 'running' && r.body?.progress?.current_model === 'expense_details',
      60000,
    );
    expect(running.status).toBe(200);
    expect(running.body.progress).toMatchObject({
      done: 3,
      total: 4,
      current_model: 'expense_details',
      elapsed_ms: expect.any(Number),
    });
    const done = await until(
      () => api.get(location, admin),
      (r) => r.body?.status !== 'running' && r.body?.status !== 'queued',
      120000,
      250,
    );
    expect(done.body).toMatchObject({ id: reply.body.id, status: 'succeeded', progress: null });
    expect(done.body.models).toHaveLength(4);
    // The run is the history's entry, kept there.
    const [latest] = (await api.get(`${P}/builds`, admin)).body;
    expect(latest).toEqual(done.body);
    const audit = await api.get(`${P}/audit?action=build`, admin);
    expect(audit.body.events[0]).toMatchObject({
      target: reply.body.id,
      details: { respond: 'async' },
    });
  });

  it('stays the synchronous empty 200 without the preference', async () => {
    writeFileSync(details(), original);
    for (const headers of [{}, { Prefer: 'return=minimal' }] as Record<string, string>[]) {
      const reply = await api.request('POST', `${P}/build`, { token: admin, headers });
      expect(reply.status).toBe(200);
      expect(reply.text).toBe('');
      expect(reply.headers.get('preference-applied')).toBeNull();
      expect(reply.headers.get('location')).toBeNull();
    }
  });

  it('answers a run of no build 404, a malformed id 400, and only administrators', async () => {
    const unknown = await api.get(`${P}/builds/1b4e28ba-2fa1-41d2-883f-0016d3cca427`, admin);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ statusCode: 404, error: 'not_found' });
    const malformed = await api.get(`${P}/builds/not-a-build`, admin);
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ statusCode: 400, error: 'invalid_request' });
    const [latest] = (await api.get(`${P}/builds`, admin)).body;
    const user = await api.userToken(admin, 'follower');
    expect((await api.get(`${P}/builds/${latest.id}`, user)).status).toBe(403);
    expect((await api.get(`${P}/builds/${latest.id}`)).status).toBe(401);
  });

  it("a build the project's SQL fails: 400 invalid_project when waited for, `fault: project` when followed", async () => {
    writeFileSync(details(), 'SELECT * FROM no_such_table');
    const waited = await api.request('POST', `${P}/build`, { token: admin });
    expect(waited.status).toBe(400);
    expect(waited.body).toMatchObject({ statusCode: 400, error: 'invalid_project' });
    expect(waited.body.message).toContain('expense_details');
    const reply = await api.request('POST', `${P}/build`, {
      token: admin,
      headers: { Prefer: 'respond-async' },
    });
    expect(reply.status).toBe(202);
    const location = reply.headers.get('location') ?? '';
    const failed = await until(
      () => api.get(location, admin),
      (r) => r.body?.status === 'failed',
      60000,
    );
    expect(failed.body).toMatchObject({
      status: 'failed',
      fault: 'project',
      error: expect.stringContaining('no_such_table'),
      progress: { failed_model: 'expense_details' },
    });
    // The previous build goes on serving.
    expect((await api.get(`${P}/datasets/expense_transactions/results`, admin)).status).toBe(200);
    writeFileSync(details(), original);
  });
});
