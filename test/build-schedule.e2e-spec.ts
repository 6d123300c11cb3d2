import { Client } from 'pg';
import { Api, P } from './support/api';
import { ServerProcess, TestServer, startServer } from './support/server';

interface Row {
  id: string;
  trigger: string | null;
  status: string;
  queued_at: Date;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Scheduled builds: BUILD_SCHEDULE (or the project's build.schedule) runs builds by itself, once per time it
 * names across replicas (a BullMQ job scheduler on Redis), timers without Redis; the history says which
 * builds the schedule started.
 */
describe('scheduled builds', () => {
  describe('two replicas on Redis', () => {
    let t: TestServer;
    let other: ServerProcess;
    const sql = async (text: string, values: unknown[] = []): Promise<Row[]> => {
      const client = new Client({ connectionString: t.env.DATABASE_URL });
      await client.connect();
      try {
        return (await client.query(text, values)).rows as Row[];
      } finally {
        await client.end();
      }
    };
    const scheduled = () =>
      sql(
        `SELECT id, trigger, status, queued_at FROM build_runs WHERE trigger = 'schedule' ORDER BY queued_at`,
      );

    beforeAll(async () => {
      // Every five seconds: six fields, seconds first.
      t = await startServer({ BUILD_SCHEDULE: '*/5 * * * * *' });
      other = await t.another();
    });
    afterAll(async () => {
      await t.close();
    });

    it('runs one build each time the schedule names, whichever replica takes it', async () => {
      const before = (await scheduled()).length;
      await sleep(16_000);
      const runs = (await scheduled()).slice(before);
      // Three or four times passed: one build each, not one per replica.
      expect(runs.length).toBeGreaterThanOrEqual(2);
      expect(runs.length).toBeLessThanOrEqual(4);
      for (let i = 1; i < runs.length; i++) {
        expect(runs[i].queued_at.getTime() - runs[i - 1].queued_at.getTime()).toBeGreaterThan(3000);
      }
      expect(runs.every((run) => run.status !== 'queued')).toBe(true);
      // Both replicas set the schedule; it is one scheduler in Redis.
      for (const server of [t.server, other]) {
        expect(server.logs.some((line) => line.msg === 'builds scheduled')).toBe(true);
      }
      // The history says which builds the schedule started, and the first build's trigger.
      const api = new Api(t.url);
      const history = (await api.get(`${P}/builds`, await api.adminToken())).body as {
        id: string;
        trigger: string;
      }[];
      expect(history.filter((build) => build.trigger === 'schedule').length).toBeGreaterThanOrEqual(
        runs.length,
      );
      expect(history.at(-1)?.trigger).toBe('start');
    });

    it('after every replica was down, runs once for the times it missed, not once for each', async () => {
      await Promise.all([t.server.stop(), other.stop()]);
      const down = Date.now();
      // Six times pass while nothing runs.
      await sleep(30_000);
      const restarted = new Date();
      const back = await t.another();
      await sleep(8_000);
      const windowMs = Date.now() - restarted.getTime();
      const after = (await scheduled()).filter((run) => run.queued_at >= restarted);
      // The one that was due, and the schedule's own times since the restart: not the six it missed.
      expect(after.length).toBeGreaterThanOrEqual(1);
      expect(after.length).toBeLessThanOrEqual(1 + Math.ceil(windowMs / 5000));
      const during = (await scheduled()).filter(
        (run) => run.queued_at.getTime() > down + 1000 && run.queued_at < restarted,
      );
      expect(during).toEqual([]);
      await back.stop();
    }, 120_000);
  });

  it('runs on timers without Redis, and refuses a pattern that is not one at start', async () => {
    const t = await startServer({ REDIS_URL: undefined, BUILD_SCHEDULE: '*/3 * * * * *' });
    try {
      const api = new Api(t.url);
      const admin = await api.adminToken();
      const deadline = Date.now() + 15_000;
      let history: { trigger: string; status: string }[] = [];
      while (Date.now() < deadline) {
        history = (await api.get(`${P}/builds`, admin)).body as typeof history;
        if (history.filter((build) => build.trigger === 'schedule').length >= 2) break;
        await sleep(500);
      }
      const ran = history.filter((build) => build.trigger === 'schedule');
      expect(ran.length).toBeGreaterThanOrEqual(2);
      // None failed; the newest may still wait behind the one before it (a build can take longer than the
      // schedule's 3 s on a busy machine).
      expect(
        ran.filter((build) => !['queued', 'running', 'succeeded'].includes(build.status)),
      ).toEqual([]);
      expect(ran.some((build) => build.status !== 'queued')).toBe(true);
    } finally {
      await t.close();
    }
    const bad = ServerProcess.spawn({ ...t.env, BUILD_SCHEDULE: '61 * * * *' });
    expect(await bad.waitExit()).not.toBe(0);
    expect(bad.stderr.join('') + JSON.stringify(bad.logs)).toContain('BUILD_SCHEDULE');
  }, 120_000);
});
