import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Api, P } from './support/api';
import { MAIN, REPO_ROOT, ServerProcess, baseEnv, startServer } from './support/server';
import { BASE_DATABASE_URL, tempDir } from './support/services';

async function readyWithin(url: string, ms: number): Promise<Record<string, any>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const response = await fetch(`${url}/health/ready`).catch(() => undefined);
    if (response?.status === 200) return (await response.json()) as Record<string, any>;
    if (Date.now() > deadline) throw new Error(`not ready within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A server process on a database and data folder of its own, ready; killed and cleaned up after `work`. */
async function withReadyServer(
  work: (server: ServerProcess, url: string) => Promise<void>,
): Promise<void> {
  const t = await startServer();
  try {
    await work(t.server, t.url);
  } finally {
    await t.server.stop('SIGKILL');
    await t.close();
  }
}

describe('the server process', () => {
  it('starts on embedded defaults (no DATABASE_URL, no REDIS_URL), is ready within 15 s, and exits 0 on SIGTERM within 5 s', async () => {
    const dir = tempDir();
    const env = baseEnv(dir.path, undefined, {
      REDIS_URL: undefined,
      JWT_SECRET: undefined,
      ADMIN_PASSWORD: undefined,
      NODE_ENV: 'development',
    });
    const started = Date.now();
    const server = ServerProcess.spawn(env);
    try {
      const url = await server.listening(15000);
      const ready = await readyWithin(url, 15000 - (Date.now() - started));
      expect(ready.checks.database).toEqual({ status: 'up', kind: 'embedded' });
      expect(ready.checks.queue).toEqual({ status: 'up', kind: 'in-process' });
      const stopping = Date.now();
      expect(await server.stop('SIGTERM')).toBe(0);
      expect(Date.now() - stopping).toBeLessThan(5000);
    } finally {
      await server.stop('SIGKILL');
      dir.remove();
    }
  });

  it('in development, generates the secrets once, prints the admin password once, and keeps both across restarts', async () => {
    const dir = tempDir();
    const env = baseEnv(dir.path, undefined, {
      REDIS_URL: undefined,
      JWT_SECRET: undefined,
      ADMIN_PASSWORD: undefined,
      NODE_ENV: 'development',
    });
    // Stopped in any case: a server left running by a failed expectation kept Jest from exiting.
    let first: ServerProcess | undefined;
    let second: ServerProcess | undefined;
    try {
      first = ServerProcess.spawn(env);
      const api = new Api(await first.listening(15000));
      const printed = /Admin password, generated[^\n]*\n\s*\n\s+(\S+)/.exec(first.stderr.join(''));
      expect(printed).not.toBeNull();
      const password = printed?.[1] as string;
      // A quiet start at info: what it serves in one line, no route mappings or module initialisations.
      const listening = first.logs.find((line) => line.msg === 'listening');
      expect(listening).toMatchObject({
        project: 'expenses',
        database: expect.stringContaining('embedded'),
        queue: 'in-process',
        docs: expect.stringMatching(/\/docs$/),
      });
      expect(first.logs.filter((line) => line.context !== undefined)).toEqual([]);
      // Besides the start-up's steps (one line each, test/startup.e2e-spec.ts), six lines at most.
      const steps = first.logs.filter((line) => String(line.msg).startsWith('start-up: '));
      expect(steps.length).toBeGreaterThan(0);
      expect(first.logs.length - steps.length).toBeLessThanOrEqual(6);
      const token = await api.login('admin', password);
      expect(JSON.stringify(first.logs)).not.toContain(password);
      expect(await first.stop('SIGTERM')).toBe(0);

      second = ServerProcess.spawn(env);
      const again = new Api(await second.listening(15000));
      expect(second.stderr.join('')).not.toContain('Admin password');
      expect((await again.get(`${P}/me`, token)).status).toBe(200);
      expect(await again.login('admin', password)).toEqual(expect.any(String));
      expect(await second.stop('SIGTERM')).toBe(0);
    } finally {
      await first?.stop('SIGKILL');
      await second?.stop('SIGKILL');
      dir.remove();
    }
  });

  it('drains an in-flight request on SIGTERM before exiting', async () => {
    await withReadyServer(async (server, url) => {
      // Keep-alive connections that are idle must not hold the process open either.
      await fetch(`${url}/health/live`);
      const inFlight = fetch(`${url}/health/ready`);
      await new Promise((resolve) => setTimeout(resolve, 1));
      const exit = server.stop('SIGTERM');
      const response = await inFlight;
      expect(response.status).toBe(200);
      expect(await exit).toBe(0);
      expect(server.logs.map((line) => line.msg)).toEqual(
        expect.arrayContaining(['shutting down', 'stopped']),
      );
    });
  });

  it('on SIGTERM, answers every request it still takes in full, until its connections are closed (never a 503)', async () => {
    await withReadyServer(async (server, url) => {
      const admin = await new Api(url).adminToken();
      // As a load balancer does: requests back to back on kept-alive connections, with a token (Postgres),
      // a dataset (the engine and the results caches) and the catalog.
      const statuses: number[] = [];
      let signalled = false;
      let afterSignal = 0;
      const paths = [`${P}/me`, `${P}/datasets/expenses_by_month/results`, `${P}/data-catalog`];
      const workers = Array.from({ length: 4 }, async (_, worker) => {
        for (let i = worker; ; i += 1) {
          const response = await fetch(`${url}${paths[i % paths.length]}`, {
            headers: { authorization: `Bearer ${admin}` },
          }).catch(() => undefined);
          // A refused or closed connection is what a load balancer retries elsewhere.
          if (!response) return;
          await response.arrayBuffer();
          statuses.push(response.status);
          if (signalled) afterSignal += 1;
        }
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      signalled = true;
      const exit = server.stop('SIGTERM');
      await Promise.all(workers);
      expect(await exit).toBe(0);
      expect(afterSignal).toBeGreaterThan(0);
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
    });
  });

  it.each([
    ['PORT', 'abc', /PORT/],
    ['TOKEN_EXPIRE_MINUTES', '-5', /TOKEN_EXPIRE_MINUTES/],
    ['DATABASE_URL', 'mysql://x', /DATABASE_URL/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL/],
  ])('refuses to start with a bad %s, in one line that names it', (name, value, pattern) => {
    const result = spawnSync(process.execPath, [MAIN], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, DATABASE_URL: BASE_DATABASE_URL, [name]: value },
      encoding: 'utf8',
      timeout: 20000,
    });
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(pattern);
    expect(result.stderr).not.toMatch(/at .*\.js:\d+/);
  });

  it('refuses to start in production without JWT_SECRET and ADMIN_PASSWORD', () => {
    const result = spawnSync(process.execPath, [MAIN], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, NODE_ENV: 'production' },
      encoding: 'utf8',
      timeout: 20000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr.trim()).toBe(
      'Invalid configuration: JWT_SECRET is required when NODE_ENV=production',
    );
  });

  it('refuses to start with an invalid project, naming the file and the problem, without a stack trace', () => {
    const dir = tempDir();
    writeFileSync(`${dir.path}/project.yml`, 'name: Bad Name\nmajor_version: one\n');
    const result = spawnSync(process.execPath, [MAIN], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, PROJECT_DIR: dir.path, DATABASE_URL: BASE_DATABASE_URL },
      encoding: 'utf8',
      timeout: 20000,
    });
    dir.remove();
    // 78 (EX_CONFIG): no earlier build to serve meanwhile; `drey dev` waits for a fix on it.
    expect(result.status).toBe(78);
    expect(result.stderr).toContain('Nothing is served: there is no earlier build of this project');
    expect(result.stderr).toContain('project.yml at name:');
    expect(result.stderr).toContain('project.yml at major_version:');
    expect(result.stderr).not.toMatch(/at .*\.js:\d+/);
  });
});
