import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api, L, P } from './support/api';
import { EXAMPLE_PROJECT, ServerProcess, TestServer, startServer } from './support/server';

/**
 * SQL mistakes are caught before they serve: a build plans every runtime model and fails with each problem
 * placed in its file; a start on an earlier build refuses SQL that no longer plans; a model that fails at
 * request time anyway answers 500 model_failed, with the engine's message for administrators only.
 */
describe('SQL checked before it serves', () => {
  let dir: string;
  let t: TestServer;
  let api: Api;
  let admin: string;
  const model = (name: string) => join(dir, 'models', `${name}.sql`);
  const original = (name: string) =>
    readFileSync(join(EXAMPLE_PROJECT, 'models', `${name}.sql`), 'utf8');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'drey-sql-'));
    cpSync(EXAMPLE_PROJECT, dir, { recursive: true });
    t = await startServer({ PROJECT_DIR: dir });
    api = new Api(t.url);
    admin = await api.adminToken();
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the earlier build when the SQL no longer plans, listing each problem cleanly', async () => {
    writeFileSync(
      model('expense_transactions'),
      original('expense_transactions').replace(', amount\n', ', e.amountt\n'),
    );
    writeFileSync(
      model('expenses_by_month'),
      original('expenses_by_month')
        .replace('sum(amout)', 'sum(amout)')
        .replace('sum(amount)', 'sum(amout)'),
    );
    // A broken folder no longer stops the start: the last good build is served, the problems logged.
    const server = await ServerProcess.start({ ...t.env, DATA_DIR: t.env.DATA_DIR });
    try {
      const line = server.logs.find(
        (entry) => entry.msg === 'the project does not check out: serving the last good build',
      );
      const problems = JSON.stringify(line?.problems);
      expect(problems).toContain('models/expense_transactions.sql');
      expect(problems).toContain('Referenced table');
      expect(problems).toContain('models/expenses_by_month.sql');
      expect(problems).toContain('amout');
      // No stack trace, in the log or on stderr.
      expect(server.stderr.join('')).not.toMatch(/\n\s+at /);
      expect(JSON.stringify(server.logs)).not.toContain('"stack"');
    } finally {
      await server.stop('SIGTERM');
    }
  });

  it('fails a first build whose SQL does not plan, saying where; readiness says a build failed', async () => {
    const fresh = await startServer({ PROJECT_DIR: dir }, false);
    try {
      const freshApi = new Api(fresh.url);
      const freshAdmin = await freshApi.adminToken();
      let latest: Record<string, unknown> | undefined;
      for (let i = 0; i < 200 && latest?.status !== 'failed'; i++) {
        [latest] = (await freshApi.get(`${P}/builds`, freshAdmin)).body;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(latest?.status).toBe('failed');
      expect(latest?.error).toContain('models/expense_transactions.sql at line 2, column 54');
      expect(latest?.error).toContain('models/expenses_by_month.sql at line 1, column 19');
      const ready = await freshApi.get('/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.body.checks.environment.detail).toContain('failed');
    } finally {
      await fresh.close();
    }
  });

  it('answers 500 model_failed when a model fails at request time: the reason for administrators only', async () => {
    writeFileSync(model('expense_transactions'), original('expense_transactions'));
    writeFileSync(model('expenses_by_month'), original('expenses_by_month'));
    // Plans (error() is a function like any other) and fails when it runs.
    writeFileSync(
      model('expenses_grouped'),
      original('expenses_grouped').replace(
        'WHERE amount',
        "WHERE CASE WHEN amount > 0 THEN error('the ledger is locked') ELSE true END AND amount",
      ),
    );
    const server = await t.another();
    const other = new Api(server.url);
    const user = await other.userToken(await other.adminToken(), 'reader');
    for (const path of [
      `${P}/datasets/expenses_grouped/results`,
      `${L}/dataset/expenses_grouped`,
    ]) {
      const asUser = await other.get(path, user);
      expect([path, asUser.status]).toEqual([path, 500]);
      const text = JSON.stringify(asUser.body);
      expect(text).toContain('expenses_grouped');
      expect(text).not.toContain('ledger');
      const asAdmin = await other.get(path, admin);
      expect(asAdmin.status).toBe(500);
      expect(JSON.stringify(asAdmin.body)).toContain('the ledger is locked');
    }
    expect((await other.get(`${P}/datasets/expenses_grouped/results`, user)).body.error).toBe(
      'model_failed',
    );
    const logged = server.logs.find((line) => line.msg === 'model failed');
    expect(logged).toMatchObject({
      model: 'expenses_grouped',
      error: expect.stringContaining('the ledger is locked'),
    });
    await server.stop();
  });
});
