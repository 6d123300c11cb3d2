import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api, P } from './support/api';
import { until } from './support/wait';
import { EXAMPLE_PROJECT, TestServer, startServer } from './support/server';

/** The example plus a build model slow enough (a second or two) to be killed in the middle. */
function slowProject(): string {
  const dir = mkdtempSync(join(tmpdir(), 'drey-slow-'));
  cpSync(EXAMPLE_PROJECT, dir, { recursive: true });
  writeFileSync(
    join(dir, 'models', 'slow_numbers.yml'),
    'kind: build\ndescription: Many numbers, slowly\n',
  );
  writeFileSync(
    join(dir, 'models', 'slow_numbers.sql'),
    // Slow to compute, small to keep: built environments are also published to the database.
    'SELECT count(*) AS n FROM range(0, 300000000) WHERE hash(range) % 7 = 0\n',
  );
  return dir;
}

describe.each([
  ['with Redis (BullMQ)', {}],
  ['without Redis (in-process queue)', { REDIS_URL: undefined }],
])(
  'a server killed with SIGKILL in the middle of a build, %s',
  (_, overrides: Record<string, string | undefined>) => {
    let dir: string;
    let t: TestServer;

    beforeAll(async () => {
      dir = slowProject();
      t = await startServer({ PROJECT_DIR: dir, ...overrides });
    });
    afterAll(async () => {
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('restarts on the previous environment, marks the build failed, and builds again', async () => {
      let api = new Api(t.url);
      const admin = await api.adminToken();
      const before = (await api.get(`${P}/datasets/expenses_by_month/results`)).body;

      void api.request('POST', `${P}/build`, { token: admin }).catch(() => undefined);
      const running = await until(
        () => api.get(`${P}/builds`, admin),
        (reply) => reply.body[0]?.status === 'running' && reply.body[0]?.requested_by === 'admin',
        20000,
        50,
      );
      const killed = running.body[0].id as string;
      expect(await t.server.stop('SIGKILL')).toBeNull();

      api = new Api((await t.another()).url);
      expect((await api.get('/health/ready')).status).toBe(200);
      expect((await api.get(`${P}/datasets/expenses_by_month/results`)).body).toEqual(before);
      const token = await api.adminToken();
      // With Redis, the dead worker's lock must expire first (10 s lock, checked every 5 s).
      const history = await until(
        () => api.get(`${P}/builds`, token),
        (reply) => reply.body.find((run: { id: string }) => run.id === killed)?.status === 'failed',
        40000,
        50,
      );
      expect(history.body.find((run: { id: string }) => run.id === killed)).toMatchObject({
        status: 'failed',
        error: expect.stringContaining('Interrupted'),
      });
      const again = await api.request('POST', `${P}/build`, { token });
      expect(again.status).toBe(200);
      const files = readdirSync(join(t.env.DATA_DIR, 'environments')).filter((file) =>
        file.endsWith('.duckdb'),
      );
      expect(files.some((file) => file.startsWith(killed))).toBe(false);
      expect(existsSync(join(t.env.DATA_DIR, 'environments', 'current'))).toBe(true);
    });
  },
);
